// ClaheGpu's kernels for deep planes (16-bit words, 10 to 16 bits, up to
// 2^16 levels; clahe_kernels.h), bit-identical to ClaheCpu and so, on 16-bit
// planes, to OpenCV's CLAHE on CV_16UC1 (65536 bins per tile).
//
// The 8-bit kernels (clahe_kernels_8bit.cu) keep per-warp histograms and builds each
// tile's 256-entry LUT in one block; a 2^16-bin tile histogram fits in
// shared memory only as packed 16-bit counters (128 KB), so a chunk of a
// tile counts at most 65535 samples. Two ways to the LUTs:
//   - tile per cluster (where a tile needs at most a cluster's worth of
//     chunks, e.g. 8x8 tiles up to 8K): one launch. The blocks of a
//     thread-block cluster count one chunk each into their own shared
//     memory, then split the tile's bins between them, reading each other's
//     counters through distributed shared memory, and build the LUT. Where
//     SMs are spare a tile gets twice the blocks its chunks need, since
//     building a 65536-entry LUT in one block is what takes the time;
//   - otherwise (e.g. one tile of a 1080p frame), three kernels: counting
//     chunks into global memory; per run of 2048 bins the counts, the blend
//     with the past when smoothing, and what clipping removes and keeps;
//     per run again the redistribution (closed form from the runs' sums), a
//     scan and the LUT entries.
// Then the mapping: every pixel blends the four nearest tiles' LUT entries,
// gathered from L2 (each LUT is 128 KB) rather than shared memory.
#include "clahe_kernels.h"
#include "deep_samples.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cooperative_groups.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace cudafilters {
namespace clahe {

namespace {

using namespace kernels;

constexpr int kThreads = kDeepThreads;

__device__ __forceinline__ const uint16_t *words_row(const uint8_t *base, size_t pitch, int y) {
  return reinterpret_cast<const uint16_t *>(base + static_cast<size_t>(y) * pitch);
}

// Where chunk `chunk` of tile `tile` lies in the frame extended by
// reflection: its first column and row, and how many rows it has (none
// where the tile has fewer chunks).
struct Chunk {
  int x0, y0, rows;
};

__device__ __forceinline__ Chunk chunk_of(const DeepGrid &g, int tile, int chunk) {
  const int tx = tile % g.tiles_x, ty = tile / g.tiles_x;
  const int x0 = tx * g.tile_width;
  const int y0 = ty * g.tile_height + chunk * g.chunk_rows;
  return Chunk{x0, y0, min(g.chunk_rows, (ty + 1) * g.tile_height - y0)};
}

// Counts chunk `chunk` of tile `tile` of the frame extended by reflection
// into packed counters: a warp per row, its lanes along the row. kSliced:
// only the levels [first, first + span), from packed[0]; the slice that
// starts at level 0 stashes the samples.
template <bool kSliced = false>
__device__ void count_chunk(const Source &src, const DeepGrid &g, int tile, int chunk,
                            unsigned int *packed, uint32_t first = 0, uint32_t span = 0) {
  const Chunk c = chunk_of(g, tile, chunk);
  const int x0 = c.x0, y0 = c.y0, rows = c.rows;
  const uint32_t max_level = g.levels - 1;
  const int lane = threadIdx.x % 32;
  for (int r = threadIdx.x / 32; r < rows; r += blockDim.x / 32) {
    const int y = y0 + r;
    const uint16_t *row = words_row(src.data, src.pitch, reflect101(y, g.height));
    // Each frame sample lies in exactly one tile: whoever counts it in
    // place (not a reflection of it) stashes it.
    uint16_t *stash = src.stash && y < g.height && first == 0
                          ? reinterpret_cast<uint16_t *>(src.stash + static_cast<size_t>(y) *
                                                                         src.stash_pitch)
                          : nullptr;
    // kBatch loads in flight per lane before their counts: one latency per
    // kBatch samples instead of one per sample.
    constexpr int kBatch = 8;
    const int x_end = x0 + g.tile_width;
    for (int xb = x0 + lane; xb < x_end; xb += 32 * kBatch) {
      uint32_t word[kBatch];
#pragma unroll
      for (int k = 0; k < kBatch; ++k) {
        const int x = xb + 32 * k;
        const bool inside = x < g.width;
        word[k] = x < x_end ? row[inside ? x : reflect101(x, g.width)] : 0xFFFFFFFFu;
        if (stash && inside && x < x_end) stash[x] = static_cast<uint16_t>(word[k]);
      }
#pragma unroll
      for (int k = 0; k < kBatch; ++k) {
        if (word[k] == 0xFFFFFFFFu) break;
        const uint32_t level = sample_level(word[k], g.shift, max_level) - first;
        if (!kSliced || level < span) count_packed(packed, level);
      }
    }
  }
}

// One block per chunk of a tile and slice of its levels (blockIdx.y of
// gridDim.y equal slices): its histogram, stored as 16-bit counts
// (partials[(tile * chunks + chunk) * levels + level]).
__global__ void __launch_bounds__(kThreads)
    deep_clahe_count_kernel(Source src, DeepGrid g, uint32_t *__restrict__ partials) {
  extern __shared__ unsigned int packed[];
  const int tile = blockIdx.x / g.chunks, chunk = blockIdx.x % g.chunks;
  const uint32_t words = max(g.levels / 2, 1u);
  const uint32_t slice = words / gridDim.y, first = blockIdx.y * slice;
  for (uint32_t w = threadIdx.x; w < slice; w += kThreads) packed[w] = 0;
  __syncthreads();
  if (gridDim.y == 1)
    count_chunk(src, g, tile, chunk, packed);
  else
    count_chunk<true>(src, g, tile, chunk, packed, 2 * first, 2 * slice);
  __syncthreads();
  uint32_t *out = partials + static_cast<size_t>(blockIdx.x) * words + first;
  for (uint32_t w = threadIdx.x; w < slice; w += kThreads) out[w] = packed[w];
}

struct RunSumsAdd {
  __device__ RunSums operator()(const RunSums &a, const RunSums &b) const {
    return RunSums{a.excess + b.excess, a.kept + b.kept};
  }
};

// This thread's run of bins: the first, and how many (0 past the levels).
struct Run {
  uint32_t first, count;
};

__device__ __forceinline__ Run thread_run(const DeepGrid &g, int run) {
  const uint32_t first = run * kBlockBins + threadIdx.x * kRun;
  return Run{first, first < g.levels ? min(kRun, g.levels - first) : 0u};
}

// The counts of a run's bins: its chunks' 16-bit counts added up. Levels
// and runs are multiples of 8 from 1024 levels on; below that a run is
// read bin by bin.
__device__ void run_counts(const DeepGrid &g, const uint32_t *partials, int tile, Run r,
                           uint32_t (&n)[kRun]) {
#pragma unroll
  for (int k = 0; k < kRun; ++k) n[k] = 0;
  const uint16_t *p = reinterpret_cast<const uint16_t *>(partials) +
                      static_cast<size_t>(tile) * g.chunks * g.levels + r.first;
#pragma unroll 4
  for (int c = 0; c < g.chunks; ++c, p += g.levels) {
    if (r.count == kRun) {
      // Written out rather than add_halves (deep_samples.cuh): that call,
      // the same arithmetic, changed the code nvcc makes of the runs kernel.
      const uint4 q = *reinterpret_cast<const uint4 *>(p);
      const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        n[2 * k] += w[k] & 0xFFFFu;
        n[2 * k + 1] += w[k] >> 16;
      }
    } else {
      for (uint32_t k = 0; k < r.count; ++k) n[k] += p[k];
    }
  }
}

// Step 2: per run, the values (counts, or with smoothing the blend with the
// past, stored as the next history) and what clipping removes and keeps.
template <bool kSmooth>
__global__ void __launch_bounds__(kLutThreads)
    deep_clahe_runs_kernel(DeepGrid g, History h, DeepLuts d) {
  using Reduce = cub::BlockReduce<RunSums, kLutThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const int runs = runs_per_tile(g.levels);
  const int tile = blockIdx.x / runs, run = blockIdx.x % runs;
  const Run r = thread_run(g, run);
  const int frac = kSmooth ? kHistoryFracBits : 0;
  const unsigned long long limit = static_cast<unsigned long long>(g.clip) << frac;
  RunSums mine{0, 0};
  if (r.count) {
    uint32_t n[kRun];
    run_counts(g, d.partials, tile, r, n);
    unsigned long long *past = h.bins + static_cast<size_t>(tile) * g.levels + r.first;
#pragma unroll
    for (int k = 0; k < kRun; ++k) {
      if (k >= r.count) break;
      unsigned long long v = n[k];
      if constexpr (kSmooth) {
        v = next_history_bin(h.mode, h.mode == HistoryMode::kBlend ? past[k] : 0, n[k], h.weight);
        past[k] = v;
      }
      const unsigned long long e = clahe_excess(v, limit);
      mine.excess += e;
      mine.kept += v - e;
    }
  }
  const RunSums all = Reduce(tmp).Reduce(mine, RunSumsAdd{});
  if (threadIdx.x == 0) d.runs[blockIdx.x] = all;
}

// How the whole pixels clipped from a tile are spread: `batch` to every
// bin, and one more to each of the first `residual` multiples of `step`
// (residual_share).
struct Redistribution {
  uint32_t batch, residual, step;

  // Of `whole` pixels clipped from a tile of `levels` bins.
  __device__ static Redistribution of(unsigned long long whole, uint32_t levels) {
    Redistribution s;
    s.batch = static_cast<uint32_t>(whole / levels);
    s.residual = static_cast<uint32_t>(whole % levels);
    s.step = s.residual ? max(levels / s.residual, 1u) : 1u;
    return s;
  }

  __device__ uint32_t residual_bins_below(uint32_t b) const {
    return residual ? min((b + step - 1) / step, residual) : 0u;
  }
  // What bins [first, first + count) receive in all, in whole pixels.
  __device__ unsigned long long shares(uint32_t first, uint32_t count) const {
    return static_cast<unsigned long long>(batch) * count + residual_bins_below(first + count) -
           residual_bins_below(first);
  }
  // The first bin from b on that receives a residual pixel (or none: ~0).
  __device__ uint32_t next_residual_bin(uint32_t b) const {
    const uint32_t m = (b + step - 1) / step;
    return residual && m < residual ? m * step : 0xFFFFFFFFu;
  }
};

// Step 3: per run, the tile's redistribution and the sum of the runs before
// this one (from step 2's sums), a scan of the run's clipped bins, and its
// LUT entries.
template <bool kSmooth>
__global__ void __launch_bounds__(kLutThreads)
    deep_clahe_lut_kernel(DeepGrid g, History h, DeepLuts d) {
  using Scan = cub::BlockScan<unsigned long long, kLutThreads>;
  __shared__ typename Scan::TempStorage tmp;
  __shared__ Redistribution spread;
  __shared__ unsigned long long before;
  const int runs = runs_per_tile(g.levels);
  const int tile = blockIdx.x / runs, run = blockIdx.x % runs;
  const int frac = kSmooth ? kHistoryFracBits : 0;
  const unsigned long long limit = static_cast<unsigned long long>(g.clip) << frac;
  // The first warp: lane j holds run j's sums (a tile has at most 32 runs).
  if (threadIdx.x < 32) {
    const int j = threadIdx.x;
    const RunSums sums = j < runs ? d.runs[static_cast<size_t>(tile) * runs + j] : RunSums{0, 0};
    const unsigned long long excess = warp_sum(sums.excess);
    const unsigned long long whole = limit ? excess >> frac : 0;
    const Redistribution s = Redistribution::of(whole, g.levels);
    const uint32_t first = j * kBlockBins;
    const unsigned long long b = warp_sum(
        j < run ? sums.kept + (s.shares(first, min(kBlockBins, g.levels - first)) << frac) : 0);
    if (j == 0) {
      spread = s;
      before = b;
    }
  }
  __syncthreads();

  const Run r = thread_run(g, run);
  unsigned long long v[kRun];
  unsigned long long total = 0;
  if (r.count) {
    if constexpr (kSmooth) {
      const unsigned long long *past = h.bins + static_cast<size_t>(tile) * g.levels + r.first;
#pragma unroll
      for (int k = 0; k < kRun; ++k) v[k] = k < r.count ? past[k] : 0;
    } else {
      uint32_t n[kRun];
      run_counts(g, d.partials, tile, r, n);
#pragma unroll
      for (int k = 0; k < kRun; ++k) v[k] = n[k];
    }
    const Redistribution s = spread;
    uint32_t next = s.next_residual_bin(r.first);
#pragma unroll
    for (int k = 0; k < kRun; ++k) {
      if (limit && k < r.count) {
        uint32_t share = s.batch;
        if (r.first + k == next) {
          ++share;
          next += s.step;
          if (next >= s.residual * s.step) next = 0xFFFFFFFFu;
        }
        v[k] = (v[k] > limit ? limit : v[k]) + (static_cast<unsigned long long>(share) << frac);
      }
      total += v[k];
    }
  }
  unsigned long long cdf = 0;
  Scan(tmp).ExclusiveSum(total, cdf);
  cdf += before;
  if (!r.count) return;
  const float unit = kSmooth ? kHistoryUnit : 1.f;
  uint32_t out[kRun];
#pragma unroll
  for (int k = 0; k < kRun; ++k) {
    cdf += v[k];
    out[k] = clahe_lut_value(cdf, unit, g.lut_scale, g.levels - 1);
  }
  uint16_t *lut = d.luts + static_cast<size_t>(tile) * g.levels + r.first;
  if (r.count == kRun) {
    *reinterpret_cast<uint4 *>(lut) = pack_halves(out);
  } else {
    for (uint32_t k = 0; k < r.count; ++k) lut[k] = static_cast<uint16_t>(out[k]);
  }
}

// ---------------------------------------------------------------------------
// One tile per thread-block cluster: where a tile is small enough for a few
// chunks (8x8 tiles up to 4K), the blocks of a cluster count one chunk each
// into their own shared memory and then build the tile's LUT together,
// reading each other's counters through distributed shared memory. Neither
// the chunks' histograms nor the runs' sums pass through global memory, and
// steps 1 to 3 are one launch. Before compute capability 9.0 a cluster is
// a single block.

// Counts chunk `chunk` of tile `tile` 16-byte vectors at a time, the chunk's
// vectors spread over the whole block with kBatch loads in flight per
// thread. Needs rows that start 16-byte aligned, tiles a multiple of 8
// samples wide and no stash; a vector past the frame's right edge is read
// sample by sample, by reflection.
__device__ void count_chunk_vectors(const Source &src, const DeepGrid &g, int tile, int chunk,
                                    unsigned int *packed) {
  const Chunk c = chunk_of(g, tile, chunk);
  const int x0 = c.x0, y0 = c.y0, rows = c.rows;
  if (rows <= 0) return;
  const int per_row = g.tile_width / kGroup;
  const int items = rows * per_row;
  const uint32_t max_level = g.levels - 1;
  constexpr int kBatch = 8;
  const int threads = blockDim.x;
  for (int base = threadIdx.x; base < items; base += threads * kBatch) {
    uint4 q[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int i = base + k * threads;
      if (i >= items) break;
      const int y = reflect101(y0 + i / per_row, g.height);
      const int x = x0 + (i % per_row) * kGroup;
      const uint16_t *row = words_row(src.data, src.pitch, y);
      if (x + kGroup <= g.width) {
        q[k] = *reinterpret_cast<const uint4 *>(row + x);
      } else {
        uint32_t w[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
          w[j] = row[reflect101(x + 2 * j, g.width)] |
                 row[reflect101(x + 2 * j + 1, g.width)] << 16;
        q[k] = make_uint4(w[0], w[1], w[2], w[3]);
      }
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      if (base + k * threads >= items) break;
      for_each_sample(q[k], [&](uint32_t sample) {
        count_packed(packed, sample_level(sample, g.shift, max_level));
      });
    }
  }
}

// The counts of bins [8 group, 8 group + 8) of the tile: the 16-bit counters
// of the cluster's blocks added up.
__device__ __forceinline__ void cluster_counts(const unsigned int *packed, unsigned blocks,
                                               uint32_t group, uint32_t (&n)[kRun]) {
#pragma unroll
  for (int k = 0; k < kRun; ++k) n[k] = 0;
  for (unsigned b = 0; b < blocks; ++b)
    add_halves(reinterpret_cast<const uint4 *>(BlockCluster::of(packed, b))[group], n);
}

// The counts of bins [8 group, 8 group + 8) in this block's own counters.
__device__ __forceinline__ void own_counts(const unsigned int *packed, uint32_t group,
                                           uint32_t (&n)[kRun]) {
  unpack_halves(reinterpret_cast<const uint4 *>(packed)[group], n);
}

// A cluster's tile: counting, the clip, and the LUT of the slice of bins
// this block owns (the groups of 8 bins [first, last)), in blocks of
// tile_threads<kSmooth>() threads.
template <bool kSmooth>
__global__ void __launch_bounds__(tile_threads<kSmooth>(), 1)
    deep_clahe_tile_kernel(Source src, DeepGrid g, History h,
                           uint16_t *__restrict__ luts) {
  constexpr int kBlock = tile_threads<kSmooth>();
  extern __shared__ uint4 shared_vectors[];
  unsigned int *packed = reinterpret_cast<unsigned int *>(shared_vectors);
  using Reduce = cub::BlockReduce<RunSums, kBlock>;
  using Count = std::conditional_t<kSmooth, unsigned long long, uint32_t>;
  using Scan = cub::BlockScan<Count, kBlock>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } tmp;
  __shared__ RunSums slice_sums;
  __shared__ Redistribution spread;
  __shared__ Count before;

  const unsigned blocks = BlockCluster::size(), me = BlockCluster::rank();
  const int tile = blockIdx.x / blocks;
  const uint32_t words = g.levels / 2;
  for (uint32_t w = threadIdx.x; w < words; w += kBlock) packed[w] = 0;
  __syncthreads();
  if (g.vector_count)
    count_chunk_vectors(src, g, tile, me, packed);
  else
    count_chunk(src, g, tile, me, packed);
  BlockCluster::sync();

  const uint32_t groups = g.levels / kRun;
  const uint32_t first = me * groups / blocks, last = (me + 1) * groups / blocks;
  const int frac = kSmooth ? kHistoryFracBits : 0;
  const Count limit = static_cast<Count>(g.clip) << frac;
  unsigned long long *past = kSmooth ? h.bins + static_cast<size_t>(tile) * g.levels : nullptr;

  // Where clipped counts fit the 16-bit counters, the slice's counts are
  // gathered from the cluster once, here, and stored clipped in this block's
  // own counters (which no other block reads from now on), so that the LUT
  // pass reads only local shared memory. Clipping twice changes nothing.
  const bool gather_once = !kSmooth && blocks > 1 && limit != 0 && limit <= 0xFFFFu;
  // What clipping removes from and keeps of this block's slice (with
  // smoothing, of the blend, stored as the next history).
  RunSums mine{0, 0};
  for (uint32_t group = first + threadIdx.x; group < last; group += kBlock) {
    uint32_t n[kRun];
    cluster_counts(packed, blocks, group, n);
#pragma unroll
    for (int k = 0; k < kRun; ++k) {
      Count v = n[k];
      if constexpr (kSmooth) {
        unsigned long long &p = past[group * kRun + k];
        v = next_history_bin(h.mode, h.mode == HistoryMode::kBlend ? p : 0, n[k], h.weight);
        p = v;
      }
      const Count e = clahe_excess(v, limit);
      mine.excess += e;
      mine.kept += v - e;
      n[k] = static_cast<uint32_t>(v - e);
    }
    if (gather_once)
      reinterpret_cast<uint4 *>(packed)[group] = pack_halves(n);
  }
  const RunSums sums = Reduce(tmp.reduce).Reduce(mine, RunSumsAdd{});
  if (threadIdx.x == 0) slice_sums = sums;
  BlockCluster::sync();

  // The tile's redistribution and what the slices before this one hold.
  if (threadIdx.x < 32) {
    const unsigned j = threadIdx.x;
    const RunSums s_j = j < blocks ? *BlockCluster::of(&slice_sums, j) : RunSums{0, 0};
    const unsigned long long excess = warp_sum(s_j.excess);
    const unsigned long long whole = limit ? excess >> frac : 0;
    const Redistribution s = Redistribution::of(whole, g.levels);
    const uint32_t j_first = j * groups / blocks * kRun;
    const uint32_t j_last = (j + 1) * groups / blocks * kRun;
    const unsigned long long b =
        warp_sum(j < me ? s_j.kept + (s.shares(j_first, j_last - j_first) << frac) : 0);
    if (j == 0) {
      spread = s;
      before = static_cast<Count>(b);
    }
  }
  __syncthreads();

  // The slice's LUT entries, a round of kBlock groups at a time.
  const Redistribution s = spread;
  Count running = before;
  for (uint32_t base = first; base < last; base += kBlock) {
    const uint32_t group = base + threadIdx.x;
    const bool active = group < last;
    Count v[kRun];
    Count total = 0;
    if (active) {
      if constexpr (kSmooth) {
#pragma unroll
        for (int k = 0; k < kRun; ++k) v[k] = past[group * kRun + k];
      } else {
        uint32_t n[kRun];
        if (gather_once)
          own_counts(packed, group, n);
        else
          cluster_counts(packed, blocks, group, n);
#pragma unroll
        for (int k = 0; k < kRun; ++k) v[k] = n[k];
      }
      const uint32_t bin0 = group * kRun;
      uint32_t next = s.next_residual_bin(bin0);
#pragma unroll
      for (int k = 0; k < kRun; ++k) {
        if (limit) {
          uint32_t share = s.batch;
          if (bin0 + k == next) {
            ++share;
            next += s.step;
            if (next >= s.residual * s.step) next = 0xFFFFFFFFu;
          }
          v[k] = (v[k] > limit ? limit : v[k]) + (static_cast<Count>(share) << frac);
        }
        total += v[k];
      }
    }
    Count cdf = 0, round_total = 0;
    Scan(tmp.scan).ExclusiveSum(total, cdf, round_total);
    cdf += running;
    running += round_total;
    if (active) {
      uint32_t out[kRun];
#pragma unroll
      for (int k = 0; k < kRun; ++k) {
        cdf += v[k];
        if constexpr (kSmooth)
          out[k] = clahe_lut_value(cdf, kHistoryUnit, g.lut_scale, g.levels - 1);
        else
          out[k] = clahe_lut_value(cdf, g.lut_scale, g.levels - 1);
      }
      reinterpret_cast<uint4 *>(luts + static_cast<size_t>(tile) * g.levels)[group] =
          pack_halves(out);
    }
    __syncthreads();
  }
  // The other blocks may still read this block's counters.
  BlockCluster::sync();
}

__device__ __forceinline__ uint32_t blend_sample(const DeepGrid &g, const uint16_t *top,
                                                 const uint16_t *bottom, const TileBlend &by,
                                                 int x, uint32_t word) {
  const uint32_t max_level = g.levels - 1;
  const uint32_t v = sample_level(word, g.shift, max_level);
  const TileBlend bx = tile_blend(x, g.inv_tile_width, g.tiles_x);
  const size_t lo = static_cast<size_t>(bx.lo) * g.levels + v;
  const size_t hi = static_cast<size_t>(bx.hi) * g.levels + v;
  return clahe_blend_value(__ldg(top + lo), __ldg(top + hi), __ldg(bottom + lo),
                           __ldg(bottom + hi), bx.w_lo, bx.w_hi, by.w_lo, by.w_hi, max_level)
         << g.shift;
}

// One thread per group of kGroup samples of a row: the blend of the four
// nearest tiles' LUT entries.
__global__ void __launch_bounds__(kThreads)
    deep_clahe_map_kernel(DeepMap m, DeepGrid g, const uint16_t *__restrict__ luts,
                          CopyJobs carried) {
  copy_planes(carried);
  const int regions_x = (m.groups_per_row + kRegionGroups - 1) / kRegionGroups;
  const int regions = regions_x * ((g.height + kRegionRows - 1) / kRegionRows);
  const size_t tile_row = static_cast<size_t>(g.tiles_x) * g.levels;
  for (int region = blockIdx.x; region < regions; region += gridDim.x) {
    const int group = (region % regions_x) * kRegionGroups + threadIdx.x % kRegionGroups;
    const int y = (region / regions_x) * kRegionRows + threadIdx.x / kRegionGroups;
    if (group >= m.groups_per_row || y >= g.height) continue;
    const int x0 = group * kGroup;
    const TileBlend by = tile_blend(y, g.inv_tile_height, g.tiles_y);
    const uint16_t *top = luts + by.lo * tile_row;
    const uint16_t *bottom = luts + by.hi * tile_row;
    const uint16_t *in = words_row(m.src, m.src_pitch, y);
    uint16_t *out = reinterpret_cast<uint16_t *>(m.dst + static_cast<size_t>(y) * m.dst_pitch);
    if (m.vec && x0 + kGroup <= g.width) {
      *reinterpret_cast<uint4 *>(out + x0) = transform_samples(
          *reinterpret_cast<const uint4 *>(in + x0),
          [&](uint32_t sample, int i) { return blend_sample(g, top, bottom, by, x0 + i, sample); });
      continue;
    }
    for (int x = x0; x < min(x0 + kGroup, g.width); ++x)
      out[x] = static_cast<uint16_t>(blend_sample(g, top, bottom, by, x, in[x]));
  }
}

template <bool kSmooth>
void launch_tiles(const Source &source, const DeepGrid &g, const History &history,
                  uint16_t *luts, int tiles, int cluster, bool clusters, size_t shared,
                  cudaStream_t stream) {
  cudaLaunchAttribute dims = cluster_attribute(cluster);
  cudaLaunchConfig_t config = launch_config(tiles * cluster, tile_threads<kSmooth>(), stream,
                                            clusters ? &dims : nullptr, shared);
  CUDAFILTERS_CHECK(
      cudaLaunchKernelEx(&config, deep_clahe_tile_kernel<kSmooth>, source, g, history, luts));
}

}  // namespace

DeepKernels deep_kernel_addresses() {
  return DeepKernels{reinterpret_cast<const void *>(deep_clahe_count_kernel),
                     reinterpret_cast<const void *>(deep_clahe_tile_kernel<false>),
                     reinterpret_cast<const void *>(deep_clahe_tile_kernel<true>)};
}

void launch_deep_tiles(const Source &source, const DeepGrid &g, const History &history,
                       uint16_t *luts, int tiles, int cluster, bool clusters, size_t shared,
                       cudaStream_t stream) {
  if (history.mode == HistoryMode::kOff)
    launch_tiles<false>(source, g, history, luts, tiles, cluster, clusters, shared, stream);
  else
    launch_tiles<true>(source, g, history, luts, tiles, cluster, clusters, shared, stream);
}

void launch_deep_chunks(const Source &source, const DeepGrid &g, const History &history,
                        uint32_t *partials, const DeepLuts &luts, int chunk_blocks, int slices,
                        int run_blocks, size_t shared, cudaStream_t stream) {
  deep_clahe_count_kernel<<<dim3(chunk_blocks, slices), kThreads, shared, stream>>>(source, g,
                                                                                    partials);
  check_launch("deep_clahe_count_kernel");
  if (history.mode == HistoryMode::kOff) {
    deep_clahe_runs_kernel<false><<<run_blocks, kLutThreads, 0, stream>>>(g, history, luts);
    check_launch("deep_clahe_runs_kernel");
    deep_clahe_lut_kernel<false><<<run_blocks, kLutThreads, 0, stream>>>(g, history, luts);
  } else {
    deep_clahe_runs_kernel<true><<<run_blocks, kLutThreads, 0, stream>>>(g, history, luts);
    check_launch("deep_clahe_runs_kernel");
    deep_clahe_lut_kernel<true><<<run_blocks, kLutThreads, 0, stream>>>(g, history, luts);
  }
  check_launch("deep_clahe_lut_kernel");
}

void launch_deep_map(int blocks, cudaStream_t stream, const DeepMap &m, const DeepGrid &g,
                     const uint16_t *luts, const CopyJobs &carried) {
  deep_clahe_map_kernel<<<blocks, kThreads, 0, stream>>>(m, g, luts, carried);
  check_launch("deep_clahe_map_kernel");
}

}  // namespace clahe
}  // namespace cudafilters

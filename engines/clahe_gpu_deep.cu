// ClaheGpu on deep planes (16-bit words, up to 2^16 levels), bit-identical to
// ClaheCpu and so, on 16-bit planes, to OpenCV's CLAHE on CV_16UC1 (65536
// bins per tile).
//
// The 8-bit path (clahe_gpu.cu) keeps per-warp histograms and builds each
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
#include <cudafilters/clahe_gpu.h>

#include "plane_kernels.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cooperative_groups.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace cudafilters {

namespace {

using namespace kernels;

constexpr int kThreads = 1024;
// Samples of one chunk: no packed 16-bit counter can overflow.
constexpr int kMaxChunkSamples = 65535;
// Samples per work item of the mapping: one 16-byte vector.
constexpr int kGroup = 8;

struct DeepGrid {
  int width, height;
  int tiles_x, tiles_y;
  int tile_width, tile_height;
  uint32_t levels;
  int shift;
  int clip;
  float lut_scale;
  float inv_tile_width, inv_tile_height;
  int chunks;         // counting blocks per tile
  int chunk_rows;     // rows each counts
  bool vector_count;  // rows may be read as 16-byte vectors (count_chunk_vectors)
};

struct DeepHistoryRef {
  HistoryMode mode;
  uint32_t weight;
  unsigned long long *bins;  // tiles x levels: read, then overwritten
};

// The source as the counting kernel reads it; with a stash it is host memory
// read over the bus, and every frame sample is also written to the stash,
// which the mapping then reads instead.
struct DeepSource {
  const uint8_t *data;
  size_t pitch;
  uint8_t *stash;
  size_t stash_pitch;
};

__device__ __forceinline__ const uint16_t *words_row(const uint8_t *base, size_t pitch, int y) {
  return reinterpret_cast<const uint16_t *>(base + static_cast<size_t>(y) * pitch);
}

// Counts chunk `chunk` of tile `tile` of the frame extended by reflection
// into packed counters: a warp per row, its lanes along the row.
__device__ void count_chunk(const DeepSource &src, const DeepGrid &g, int tile, int chunk,
                            unsigned int *packed) {
  const int tx = tile % g.tiles_x, ty = tile / g.tiles_x;
  const int x0 = tx * g.tile_width;
  const int y0 = ty * g.tile_height + chunk * g.chunk_rows;
  const int rows = min(g.chunk_rows, (ty + 1) * g.tile_height - y0);
  const uint32_t max_level = g.levels - 1;
  const int lane = threadIdx.x % 32;
  for (int r = threadIdx.x / 32; r < rows; r += blockDim.x / 32) {
    const int y = y0 + r;
    const uint16_t *row = words_row(src.data, src.pitch, reflect101(y, g.height));
    // Each frame sample lies in exactly one tile: whoever counts it in
    // place (not a reflection of it) stashes it.
    uint16_t *stash = src.stash && y < g.height
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
        const uint32_t level = sample_level(word[k], g.shift, max_level);
        atomicAdd(&packed[level >> 1], 1u << ((level & 1u) * 16));
      }
    }
  }
}

// One block per chunk of a tile: its histogram, stored as 16-bit counts
// (partials[(tile * chunks + chunk) * levels + level]).
__global__ void __launch_bounds__(kThreads)
    deep_clahe_count_kernel(DeepSource src, DeepGrid g, uint32_t *__restrict__ partials) {
  extern __shared__ unsigned int packed[];
  const int tile = blockIdx.x / g.chunks, chunk = blockIdx.x % g.chunks;
  const uint32_t words = max(g.levels / 2, 1u);
  for (uint32_t w = threadIdx.x; w < words; w += kThreads) packed[w] = 0;
  __syncthreads();
  count_chunk(src, g, tile, chunk, packed);
  __syncthreads();
  uint32_t *out = partials + static_cast<size_t>(blockIdx.x) * words;
  for (uint32_t w = threadIdx.x; w < words; w += kThreads) out[w] = packed[w];
}

// Threads, bins per thread and bins per block of the LUT kernels: small
// blocks keep their 64-bit sums in registers.
constexpr int kLutThreads = 256;
constexpr uint32_t kRun = 8;
constexpr uint32_t kBlockBins = kRun * kLutThreads;

__host__ __device__ inline int runs_per_tile(uint32_t levels) {
  return static_cast<int>((levels + kBlockBins - 1) / kBlockBins);
}

// What clipping removes from (excess) and keeps of one run of a tile.
struct RunSums {
  unsigned long long excess, kept;
};

struct RunSumsAdd {
  __device__ RunSums operator()(const RunSums &a, const RunSums &b) const {
    return RunSums{a.excess + b.excess, a.kept + b.kept};
  }
};

// The LUT kernels' view of a frame.
struct DeepLuts {
  const uint32_t *partials;  // count kernel's output, 16-bit counts
  RunSums *runs;             // tiles x runs_per_tile
  uint16_t *luts;            // tiles x levels
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
    deep_clahe_runs_kernel(DeepGrid g, DeepHistoryRef h, DeepLuts d) {
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

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
}

// Step 3: per run, the tile's redistribution and the sum of the runs before
// this one (from step 2's sums), a scan of the run's clipped bins, and its
// LUT entries.
template <bool kSmooth>
__global__ void __launch_bounds__(kLutThreads)
    deep_clahe_lut_kernel(DeepGrid g, DeepHistoryRef h, DeepLuts d) {
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
    Redistribution s;
    s.batch = static_cast<uint32_t>(whole / g.levels);
    s.residual = static_cast<uint32_t>(whole % g.levels);
    s.step = s.residual ? max(g.levels / s.residual, 1u) : 1u;
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
    *reinterpret_cast<uint4 *>(lut) = make_uint4(out[0] | out[1] << 16, out[2] | out[3] << 16,
                                                 out[4] | out[5] << 16, out[6] | out[7] << 16);
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
__device__ void count_chunk_vectors(const DeepSource &src, const DeepGrid &g, int tile, int chunk,
                                    unsigned int *packed) {
  const int tx = tile % g.tiles_x, ty = tile / g.tiles_x;
  const int x0 = tx * g.tile_width;
  const int y0 = ty * g.tile_height + chunk * g.chunk_rows;
  const int rows = min(g.chunk_rows, (ty + 1) * g.tile_height - y0);
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
      const uint32_t w[4] = {q[k].x, q[k].y, q[k].z, q[k].w};
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const uint32_t level = sample_level((w[j / 2] >> (16 * (j % 2))) & 0xFFFFu, g.shift,
                                            max_level);
        atomicAdd(&packed[level >> 1], 1u << ((level & 1u) * 16));
      }
    }
  }
}

// The counts of bins [8 group, 8 group + 8) of the tile: the 16-bit counters
// of the cluster's blocks added up.
__device__ __forceinline__ void cluster_counts(const unsigned int *packed, unsigned blocks,
                                               uint32_t group, uint32_t (&n)[kRun]) {
#pragma unroll
  for (int k = 0; k < kRun; ++k) n[k] = 0;
  for (unsigned b = 0; b < blocks; ++b) {
    const uint4 q = reinterpret_cast<const uint4 *>(BlockCluster::of(packed, b))[group];
    const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      n[2 * k] += w[k] & 0xFFFFu;
      n[2 * k + 1] += w[k] >> 16;
    }
  }
}

// The counts of bins [8 group, 8 group + 8) in this block's own counters.
__device__ __forceinline__ void own_counts(const unsigned int *packed, uint32_t group,
                                           uint32_t (&n)[kRun]) {
  const uint4 q = reinterpret_cast<const uint4 *>(packed)[group];
  const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    n[2 * k] = w[k] & 0xFFFFu;
    n[2 * k + 1] = w[k] >> 16;
  }
}

// A cluster's tile: counting, the clip, and the LUT of the slice of bins
// this block owns (the groups of 8 bins [first, last)). Without smoothing
// the bins and their sums are whole counts below 2^32 and are kept in 32
// bits, which nearly halves the LUT's instructions; with smoothing they are
// 48.16 fixed point in 64 bits, in half-size blocks that leave room for
// them in registers.
template <bool kSmooth>
constexpr int tile_threads() {
  return kSmooth ? kThreads / 2 : kThreads;
}

template <bool kSmooth>
__global__ void __launch_bounds__(tile_threads<kSmooth>(), 1)
    deep_clahe_tile_kernel(DeepSource src, DeepGrid g, DeepHistoryRef h,
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
      reinterpret_cast<uint4 *>(packed)[group] =
          make_uint4(n[0] | n[1] << 16, n[2] | n[3] << 16, n[4] | n[5] << 16, n[6] | n[7] << 16);
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
    Redistribution s;
    s.batch = static_cast<uint32_t>(whole / g.levels);
    s.residual = static_cast<uint32_t>(whole % g.levels);
    s.step = s.residual ? max(g.levels / s.residual, 1u) : 1u;
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
          make_uint4(out[0] | out[1] << 16, out[2] | out[3] << 16, out[4] | out[5] << 16,
                     out[6] | out[7] << 16);
    }
    __syncthreads();
  }
  // The other blocks may still read this block's counters.
  BlockCluster::sync();
}

struct DeepMap {
  const uint8_t *src;  // the source, or the stash when streaming
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  int groups_per_row;
  bool vec;
};

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

// Regions of the frame a block maps at a time: kRegionGroups groups across
// and kThreads / kRegionGroups rows down, so that a block's pixels blend few
// tiles and their levels stay close, and its LUT gathers hit L1 more often
// than along whole rows.
constexpr int kRegionGroups = 8;
constexpr int kRegionRows = kThreads / kRegionGroups;

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
      const uint4 q = *reinterpret_cast<const uint4 *>(in + x0);
      uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int x = x0 + 2 * k;
        w[k] = blend_sample(g, top, bottom, by, x, w[k] & 0xFFFFu) |
               (blend_sample(g, top, bottom, by, x + 1, w[k] >> 16) << 16);
      }
      *reinterpret_cast<uint4 *>(out + x0) = make_uint4(w[0], w[1], w[2], w[3]);
      continue;
    }
    for (int x = x0; x < min(x0 + kGroup, g.width); ++x)
      out[x] = static_cast<uint16_t>(blend_sample(g, top, bottom, by, x, in[x]));
  }
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

template <bool kSmooth>
void launch_deep_tiles(const DeepSource &source, const DeepGrid &g, const DeepHistoryRef &history,
                       uint16_t *luts, int tiles, int cluster, bool clusters, size_t shared,
                       cudaStream_t stream) {
  cudaLaunchAttribute dims = cluster_attribute(cluster);
  cudaLaunchConfig_t config = launch_config(tiles * cluster, tile_threads<kSmooth>(), stream,
                                            clusters ? &dims : nullptr, shared);
  CUDAFILTERS_CHECK(
      cudaLaunchKernelEx(&config, deep_clahe_tile_kernel<kSmooth>, source, g, history, luts));
}

// Steps 1 to 3 as three kernels: chunks counted into global memory, the
// runs' sums, and the LUTs.
void launch_deep_chunks(const DeepSource &source, const DeepGrid &g, const DeepHistoryRef &history,
                        uint32_t *partials, const DeepLuts &luts, int chunk_blocks,
                        int run_blocks, size_t shared, cudaStream_t stream) {
  deep_clahe_count_kernel<<<chunk_blocks, kThreads, shared, stream>>>(source, g, partials);
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

}  // namespace

void ClaheGpu::prepare_deep_kernels() {
  const int counters = (1 << 15) * static_cast<int>(sizeof(unsigned int));
  CUDAFILTERS_CHECK(cudaFuncSetAttribute(deep_clahe_count_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, counters));
  CUDAFILTERS_CHECK(cudaFuncSetAttribute(deep_clahe_tile_kernel<false>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, counters));
  CUDAFILTERS_CHECK(cudaFuncSetAttribute(deep_clahe_tile_kernel<true>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, counters));
  // The largest cluster of 16-bit tile blocks the device can hold at once;
  // 1 (no clusters) before compute capability 9.0.
  max_tile_cluster_ = 1;
  if (device_has_dependent_launch()) {
    for (int c : {8, 4, 2}) {
      cudaLaunchAttribute dims = cluster_attribute(c);
      cudaLaunchConfig_t config = launch_config(c, tile_threads<true>(), nullptr, &dims, counters);
      int clusters = 0;
      CUDAFILTERS_CHECK(
          cudaOccupancyMaxActiveClusters(&clusters, deep_clahe_tile_kernel<true>, &config));
      if (clusters > 0) {
        max_tile_cluster_ = c;
        break;
      }
    }
    use_clusters_ = true;
  }
  deep_kernels_ready_ = true;
}

// Blocks per tile for the tile-per-cluster kernel: enough chunks that no
// counter overflows, doubled while every block still has an SM of its own;
// 0 where a tile needs more chunks than a cluster holds.
int ClaheGpu::tile_cluster_blocks(int tiles, int chunks) const {
  if (chunks > max_tile_cluster_) return 0;
  int blocks = chunks;
  while (2 * blocks <= max_tile_cluster_ && 2 * blocks * tiles <= sm_count_) blocks *= 2;
  return blocks;
}

void ClaheGpu::enqueue_deep(ConstPlane src, const Plane *stash, Plane dst,
                            const CarriedPlanes &carried, cudaStream_t stream) {
  const SampleLayout layout = src.samples;
  if (!layout.valid() || layout != dst.samples)
    throw std::invalid_argument("source and output planes differ in layout");
  check_plane_bytes(static_cast<int64_t>(src.row_bytes()), src.height);
  const ClaheGeometry geom = clahe_geometry(src.width, src.height, params_, layout.levels());
  if (geom.tile_width > kMaxChunkSamples)
    throw std::invalid_argument("deep CLAHE tiles must be at most 65535 samples wide");

  const size_t shared = std::max<size_t>(layout.levels() / 2, 1) * sizeof(unsigned int);
  if (!deep_kernels_ready_) prepare_deep_kernels();

  DeepGrid g{};
  g.width = geom.width;
  g.height = geom.height;
  g.tiles_x = geom.tiles_x;
  g.tiles_y = geom.tiles_y;
  g.tile_width = geom.tile_width;
  g.tile_height = geom.tile_height;
  g.levels = geom.levels;
  g.shift = layout.shift;
  g.clip = geom.clip;
  g.lut_scale = geom.lut_scale;
  g.inv_tile_width = geom.inv_tile_width;
  g.inv_tile_height = geom.inv_tile_height;
  g.chunk_rows = std::min(geom.tile_height, std::max(1, kMaxChunkSamples / geom.tile_width));
  g.chunks = ceil_div(geom.tile_height, g.chunk_rows);
  const int cluster = tile_cluster_blocks(geom.tiles(), g.chunks);
  if (cluster) {
    // Fewer rows per chunk never overflow a counter.
    g.chunks = cluster;
    g.chunk_rows = ceil_div(geom.tile_height, cluster);
  }
  g.vector_count = !stash && geom.tile_width % kGroup == 0 && aligned16(src.data, src.stride);

  const size_t tile_bins = static_cast<size_t>(geom.tiles()) * geom.levels;
  const int run_blocks = geom.tiles() * runs_per_tile(geom.levels);
  if (deep_luts_.size() < tile_bins) deep_luts_ = DeviceArray<uint16_t>(tile_bins);
  if (!cluster && deep_partials_.size() < tile_bins * g.chunks)
    deep_partials_ = DeviceArray<uint16_t>(tile_bins * g.chunks);
  if (!cluster && deep_runs_.size() < 2 * static_cast<size_t>(run_blocks))
    deep_runs_ = DeviceArray<unsigned long long>(2 * static_cast<size_t>(run_blocks));

  HistoryShape shape;
  shape.width = geom.width;
  shape.height = geom.height;
  shape.tiles_x = geom.tiles_x;
  shape.tiles_y = geom.tiles_y;
  shape.levels = geom.levels;
  if (deep_state_dirty_) temporal_.restart();
  if (temporal_.weight() != 0 && deep_history_.size() < tile_bins) {
    deep_history_ = DeviceArray<unsigned long long>(tile_bins);
    temporal_.restart();
  }
  const DeepHistoryRef history{temporal_.next_frame(shape), temporal_.weight(),
                               deep_history_.get()};
  const DeepSource source{src.data, src.stride, stash ? stash->data : nullptr,
                          stash ? stash->stride : 0};
  const DeepLuts luts{reinterpret_cast<const uint32_t *>(deep_partials_.get()),
                      reinterpret_cast<RunSums *>(deep_runs_.get()), deep_luts_.get()};

  // Until every launch is queued the history may be left half-advanced.
  deep_state_dirty_ = true;
  if (cluster) {
    if (history.mode == HistoryMode::kOff)
      launch_deep_tiles<false>(source, g, history, deep_luts_.get(), geom.tiles(), cluster,
                               use_clusters_, shared, stream);
    else
      launch_deep_tiles<true>(source, g, history, deep_luts_.get(), geom.tiles(), cluster,
                              use_clusters_, shared, stream);
  } else {
    launch_deep_chunks(source, g, history, reinterpret_cast<uint32_t *>(deep_partials_.get()), luts,
                       geom.tiles() * g.chunks, run_blocks, shared, stream);
  }

  const uint8_t *map_src = stash ? stash->data : src.data;
  const size_t map_pitch = stash ? stash->stride : src.stride;
  DeepMap m{map_src, map_pitch, dst.data, dst.stride, ceil_div(src.width, kGroup),
            aligned16(map_src, map_pitch) && aligned16(dst.data, dst.stride)};
  // Groups of the plane (fewer than 2^31, see deep_plane in
  // histeq_gpu_deep.cu) and work items of the carried planes (up to 2^31).
  int64_t items = static_cast<int64_t>(src.height) * m.groups_per_row;
  const CopyJobs jobs = carried_jobs(carried, items);
  const int regions =
      ceil_div(m.groups_per_row, kRegionGroups) * ceil_div(src.height, kRegionRows);
  const int item_blocks =
      static_cast<int>(std::min<int64_t>((items + kThreads - 1) / kThreads, 8 * sm_count_));
  const int blocks = std::max({1, std::min(regions, 8 * sm_count_), item_blocks});
  deep_clahe_map_kernel<<<blocks, kThreads, 0, stream>>>(m, g, deep_luts_.get(), jobs);
  check_launch("deep_clahe_map_kernel");
  deep_state_dirty_ = false;
  copy_planes(carried, kMaxCarried, stream);
}

}  // namespace cudafilters

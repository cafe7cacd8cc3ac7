// HistEqGpu's kernel for deep planes (16-bit words) of up to 2^16 levels
// (histeq_kernels.h), the planes of up to 4096 levels included where the
// device refuses the 12-bit kernel's cooperative grid (MPS, green
// contexts): one cooperative kernel on the caller's stream whose steps are
// separated by grid barriers (or, without cooperative launch, one launch
// per step):
// partial histograms, one per thread-block cluster (or block) so that
// every SM counts; the frame's histogram summed from them by one block per
// tile of 512 levels, with the tile's sum and first occupied level, and
// without smoothing the tile's LUT in the same step; with smoothing, the
// blend with the past, then the LUT, one thread per level, from the tile
// sums and a scan of its tile; the mapping, from a copy of the LUT in
// shared memory. The 8-bit kernels (histeq_kernels_8bit.cu) keep a
// histogram per warp and build the LUT in every block; 2^16 levels fit
// neither, so here each block counts into packed 16-bit counters in shared
// memory (128 KB at 16 bits).
//
// The partial histograms are stored whole rather than added into one with
// atomics: on noisy 16-bit frames a block occupies about as many levels as
// it counts samples, so an atomic merge costs about one global atomic per
// sample (measured on an H100: 22 us of a 1080p frame's 46), while storing
// and summing 66 partials of 128 KB (1080p on an H100, in clusters of two
// blocks) moves 8.7 MB through L2, in 16-byte vectors. Counting every
// sample into a cluster's distributed shared memory measured slower still
// (60-75 us): its remote atomics are slower than the L2's; reading whole
// counters remotely, as the clusters here do once per partial, is not.
#include "histeq_deep_kernels.cuh"
#include "histeq_kernels.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/atomic>
#include <cuda/functional>

#include <cstddef>
#include <cstdint>

namespace cudafilters {
namespace histeq {

namespace {

using namespace kernels;

constexpr int kThreads = kDeepThreads;

struct DeepShared {
  using SumReduce = cub::BlockReduce<unsigned long long, kThreads>;
  using MinReduce = cub::BlockReduce<uint32_t, kThreads>;
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  // Whole counts (no smoothing): a frame has fewer than 2^32 samples.
  using CountReduce = cub::BlockReduce<uint32_t, kThreads>;
  using CountScan = cub::BlockScan<uint32_t, kThreads>;
  union {
    typename SumReduce::TempStorage sum;
    typename MinReduce::TempStorage min;
    typename Scan::TempStorage scan;
    typename CountReduce::TempStorage count_sum;
    typename CountScan::TempStorage count_scan;
  } tmp;
  unsigned long long total, before, first_count;
  uint32_t first;
};

__device__ __forceinline__ bool smoothing(const Frame16Bit &f) {
  return f.history.mode != HistoryMode::kOff;
}

// The block's tile: its sum and first occupied bin (l.levels if none), as
// thread 0 sees them. Count: uint32_t for whole counts, unsigned long long
// for smoothed bins.
template <typename Count>
__device__ __forceinline__ void reduce_tile(DeepShared &sh, Count v, uint32_t bin,
                                            uint32_t levels, Count &sum, uint32_t &first) {
  if constexpr (sizeof(Count) == 4)
    sum = DeepShared::CountReduce(sh.tmp.count_sum).Sum(v);
  else
    sum = DeepShared::SumReduce(sh.tmp.sum).Sum(v);
  __syncthreads();
  first = DeepShared::MinReduce(sh.tmp.min).Reduce(v != 0 ? bin : levels, cuda::minimum<>{});
  __syncthreads();
}

// Clears `words` counters, 16 bytes at a time where `vec`.
__device__ __forceinline__ void clear_counters(unsigned int *packed, uint32_t words, bool vec) {
  if (vec) {
    for (uint32_t w = threadIdx.x; w < words / 4; w += blockDim.x)
      reinterpret_cast<uint4 *>(packed)[w] = make_uint4(0, 0, 0, 0);
  } else {
    for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) packed[w] = 0;
  }
}

// Stores partial `out`: the sum of every copy of the counters of every
// block of the cluster. Each block stores its share of the words, reading
// the other blocks' counters through distributed shared memory. The cluster
// counts at most 65535 samples, so the packed sums cannot carry from one
// half into the other.
__device__ void store_partial(const unsigned int *packed, uint32_t words, uint32_t copies,
                              bool vec, unsigned int *out) {
  const unsigned rank = BlockCluster::rank(), blocks = BlockCluster::size();
  if (vec) {
    const uint32_t vectors = words / 4;
    const uint32_t end = vectors * (rank + 1) / blocks;
    for (uint32_t w = vectors * rank / blocks + threadIdx.x; w < end; w += blockDim.x) {
      uint4 v = make_uint4(0, 0, 0, 0);
      for (unsigned k = 0; k < blocks; ++k) {
        // Starting at its own rank, each block reads a different block first.
        const unsigned int *from = BlockCluster::of(packed, (rank + k) % blocks);
        for (uint32_t c = 0; c < copies; ++c) {
          const uint4 q = reinterpret_cast<const uint4 *>(from + c * words)[w];
          v = make_uint4(v.x + q.x, v.y + q.y, v.z + q.z, v.w + q.w);
        }
      }
      reinterpret_cast<uint4 *>(out)[w] = v;
    }
  } else if (rank == 0) {
    for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) {
      unsigned int v = 0;
      for (unsigned b = 0; b < blocks; ++b)
        for (uint32_t c = 0; c < copies; ++c) v += BlockCluster::of(packed, b)[c * words + w];
      out[w] = v;
    }
  }
}

// Counts partial histograms into packed 16-bit counters in shared memory
// and stores them. A partial is counted by a thread-block cluster, each
// block into its own counters, and stored as their sum: clusters make fewer
// partials for the sums to read while every SM still counts. kSliced: the
// levels are counted in f.slices equal slices, one after another over the
// same samples, where a block's shared memory cannot hold all the counters
// (64 and 99 KB devices at 16 bits); the first slice stashes the samples.
template <bool kSliced>
__device__ void count_step(const Frame16Bit &f, unsigned int *packed) {
  copy_planes(f.carried);
  const uint32_t levels = f.l.levels;
  const uint32_t slices = kSliced ? f.slices : 1;
  const uint32_t words = deep_words(levels) / slices;
  const uint32_t copies = f.copies;
  unsigned int *mine = packed + (threadIdx.x / 32) % copies * words;
  const uint32_t max_level = levels - 1;
  const int items = f.count_src.height * f.count_src.groups_per_row;
  const unsigned rank = BlockCluster::rank(), blocks = BlockCluster::size();
  // Counters are cleared and stored 16 bytes at a time (words is a multiple
  // of 4 from 8 levels on).
  const bool vec = words % 4 == 0;
  for (int p = blockIdx.x / blocks; p < f.partial_count; p += gridDim.x / blocks) {
    for (uint32_t slice = 0; slice < slices; ++slice) {
      clear_counters(packed, words * copies, vec);
      __syncthreads();
      const uint32_t first = 2 * words * slice;
      const int end = min(items, (p + 1) * f.groups_per_partial);
      const int begin =
          p * f.groups_per_partial + static_cast<int>(rank * blockDim.x + threadIdx.x);
      visit_groups<kBatch>(f.count_src, begin, end, static_cast<int>(blocks * blockDim.x),
                           slice == 0 ? f.stash : nullptr, f.stash_pitch, [&](uint32_t word) {
                             const uint32_t level =
                                 sample_level(word, f.l.shift, max_level) - first;
                             if (!kSliced || level < 2 * words) count_packed(mine, level);
                             return word;
                           });
      // Every block's counters are complete before any block reads them,
      // and none is cleared again while another block may still read it.
      BlockCluster::sync();
      store_partial(packed, words, copies, vec,
                    f.partials + static_cast<size_t>(p) * deep_words(levels) + slice * words);
      BlockCluster::sync();
    }
  }
}

// What the LUT reads and writes.
struct DeepLutStep {
  const unsigned long long *tile_sum;
  const uint32_t *tile_first;
  const unsigned int *hist;            // the counts, without smoothing
  const unsigned long long *smoothed;  // the blended bins, with smoothing (else null)
  uint16_t *lut;
  uint32_t levels;
  int shift;
};

// At most 2^16 levels: a thread per tile where a block reduces the tile
// sums.
static_assert((1u << 16) / kTileLevels <= kThreads, "more tiles than a block has threads");

// This thread's level in tile `tile`; `levels` (none) for the threads past
// the tile.
__device__ __forceinline__ uint32_t level_in_tile(uint32_t tile, uint32_t levels) {
  return threadIdx.x < kTileLevels ? tile * kTileLevels + threadIdx.x : levels;
}

// The LUT of tile `tile` from smoothed bins, one thread per level, `v` the
// level's bin: the frame's total, first occupied bin and the sum before
// the tile from the tile sums (thread t holds tile t's sum `s` and first
// occupied bin), then a scan of the tile. Not inlined, and given only what
// it uses: its 64-bit block scans and reductions need the most registers
// of all steps, and inlined they made the whole kernel spill, counting and
// mapping included. What other blocks wrote in this launch is loaded past
// L1.
__device__ __noinline__ void smoothed_tile_lut(const DeepLutStep f, DeepShared &sh,
                                               uint32_t tile, unsigned long long v,
                                               unsigned long long s, uint32_t tile_first) {
  const uint32_t levels = f.levels;
  const uint32_t t = threadIdx.x;
  const unsigned long long all = DeepShared::SumReduce(sh.tmp.sum).Sum(s);
  __syncthreads();
  const unsigned long long pre = DeepShared::SumReduce(sh.tmp.sum).Sum(t < tile ? s : 0ull);
  __syncthreads();
  const uint32_t lowest = DeepShared::MinReduce(sh.tmp.min).Reduce(tile_first, cuda::minimum<>{});
  if (t == 0) {
    sh.total = all;
    sh.before = pre;
    sh.first = lowest < levels ? lowest : levels - 1;
    sh.first_count = __ldcg(f.smoothed + sh.first);
  }
  __syncthreads();

  unsigned long long cdf = 0;
  DeepShared::Scan(sh.tmp.scan).InclusiveSum(v, cdf);
  const uint32_t bin = level_in_tile(tile, levels);
  if (bin < levels)
    f.lut[bin] = static_cast<uint16_t>(
        equalized_level_of(static_cast<int>(bin), static_cast<int>(sh.first), sh.first_count,
                           sh.total, sh.before + cdf, kHistoryUnit, levels - 1)
        << f.shift);
  __syncthreads();
}

// The same for whole counts, in 32 bits: the frame's total, the sum before
// the tile and the first occupied bin come from one warp's reductions over
// the stored tile sums (at most 64), then one 32-bit block scan. Not
// inlined, as smoothed_tile_lut.
__device__ __noinline__ void tile_lut(const DeepLutStep f, DeepShared &sh, uint32_t tile,
                                      uint32_t v) {
  const uint32_t levels = f.levels;
  const uint32_t tiles = (levels + kTileLevels - 1) / kTileLevels;
  if (threadIdx.x < 32) {
    const auto warp = cooperative_groups::tiled_partition<32>(cooperative_groups::this_thread_block());
    uint32_t all = 0, pre = 0, lowest = levels;
    for (uint32_t t = threadIdx.x; t < tiles; t += 32) {
      const uint32_t sum = static_cast<uint32_t>(__ldcg(f.tile_sum + t));
      all += sum;
      if (t < tile) pre += sum;
      lowest = min(lowest, __ldcg(f.tile_first + t));
    }
    all = cooperative_groups::reduce(warp, all, cooperative_groups::plus<uint32_t>());
    pre = cooperative_groups::reduce(warp, pre, cooperative_groups::plus<uint32_t>());
    lowest = cooperative_groups::reduce(warp, lowest, cooperative_groups::less<uint32_t>());
    if (threadIdx.x == 0) {
      sh.total = all;
      sh.before = pre;
      sh.first = lowest < levels ? lowest : levels - 1;
      sh.first_count = __ldcg(f.hist + sh.first);
    }
  }
  __syncthreads();

  uint32_t cdf = 0;
  DeepShared::CountScan(sh.tmp.count_scan).InclusiveSum(v, cdf);
  const uint32_t bin = level_in_tile(tile, levels);
  if (bin < levels)
    f.lut[bin] = static_cast<uint16_t>(
        equalized_level_of(static_cast<int>(bin), static_cast<int>(sh.first), sh.first_count,
                           sh.total, sh.before + cdf, 1.f, levels - 1)
        << f.shift);
  __syncthreads();
}

// The LUT step: a tile LUT for each tile, from the stored bins and tile sums.
__device__ void lut_step(const DeepLutStep f, DeepShared &sh) {
  const uint32_t levels = f.levels;
  const uint32_t tiles = (levels + kTileLevels - 1) / kTileLevels;
  const uint32_t t = threadIdx.x;
  if (!f.smoothed) {
    for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const uint32_t bin = level_in_tile(tile, levels);
      tile_lut(f, sh, tile, bin < levels ? __ldcg(f.hist + bin) : 0u);
    }
    return;
  }
  const unsigned long long s = t < tiles ? __ldcg(f.tile_sum + t) : 0;
  const uint32_t first = t < tiles ? __ldcg(f.tile_first + t) : levels;
  for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const uint32_t bin = level_in_tile(tile, levels);
    smoothed_tile_lut(f, sh, tile, bin < levels ? __ldcg(f.smoothed + bin) : 0ull, s, first);
  }
}

__device__ DeepLutStep lut_step_of(const Frame16Bit &f) {
  return DeepLutStep{f.tile_sum, f.tile_first, f.hist, smoothing(f) ? f.history.next : nullptr,
                     f.lut, f.l.levels, f.l.shift};
}

// Where the LUT follows the sums in one step (whole counts): publishes this
// block's tile sum and first bin (thread 0 holds them) to the other blocks,
// waits until every tile is published for this frame, then writes the
// tile's LUT. After a block barrier, thread 0 sets the tile's flag to the
// frame's epoch with a release, which publishes the stores of every thread
// of the block, as a grid barrier does: one fence per block, not one per
// thread. A thread per tile then waits for that tile's flag, so that the
// waits overlap.
__device__ void publish_and_lut(const DeepLutStep f, DeepShared &sh, uint32_t *tile_flag,
                                uint32_t epoch, uint32_t tile, uint32_t sum, uint32_t first,
                                uint32_t v) {
  if (threadIdx.x == 0) {
    const_cast<unsigned long long *>(f.tile_sum)[tile] = sum;
    const_cast<uint32_t *>(f.tile_first)[tile] = first;
  }
  __syncthreads();
  if (threadIdx.x == 0)
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(tile_flag[tile])
        .store(epoch, cuda::memory_order_release);
  const uint32_t tiles = (f.levels + kTileLevels - 1) / kTileLevels;
  if (threadIdx.x < tiles) {
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device> flag(tile_flag[threadIdx.x]);
    while (flag.load(cuda::memory_order_relaxed) != epoch) __nanosleep(32);
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  }
  __syncthreads();
  tile_lut(f, sh, tile, v);
}

// One block per tile of kTileLevels levels: the tile's counts summed over
// all partials, 16-byte vectors at a time, the slices' sums added up in
// shared memory (`scratch`, kSumSlices x kTileLevels words) and stored in
// `hist`. Without smoothing the tile's sum and first occupied bin are
// stored too. A block owns its tile, so no atomics are needed. Where
// `f.fuse_lut` (every tile has a block of its own, all resident), each
// block then waits for every tile's sum and writes its tile's LUT, with no
// grid barrier and no step of its own for the LUT.
__device__ void sum_step(const Frame16Bit &f, DeepShared &sh, unsigned int *scratch) {
  const uint32_t levels = f.l.levels;
  const uint32_t tiles = (levels + kTileLevels - 1) / kTileLevels;
  const uint32_t words = deep_words(levels);
  const int slice = threadIdx.x / (kTileLevels / kGroup);
  const uint32_t group = threadIdx.x % (kTileLevels / kGroup);
  for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const uint32_t first_bin = tile * kTileLevels + group * kGroup;
    uint32_t n[kGroup] = {};
    if (first_bin + kGroup <= levels) {
      const uint4 *at = reinterpret_cast<const uint4 *>(f.partials + first_bin / 2);
      const size_t stride = words / 4;
#pragma unroll 4
      for (int p = slice; p < f.partial_count; p += kSumSlices) add_halves(at[p * stride], n);
    } else if (slice == 0) {
      // Fewer than 8 levels in all (a plane of 1 or 2 significant bits).
      // Unrolled, so that n stays in registers.
      const uint16_t *counts = reinterpret_cast<const uint16_t *>(f.partials);
#pragma unroll
      for (uint32_t k = 0; k < kGroup; ++k)
        if (first_bin + k < levels)
          for (int p = 0; p < f.partial_count; ++p)
            n[k] += counts[p * 2 * size_t(words) + first_bin + k];
    }
    uint4 *out = reinterpret_cast<uint4 *>(scratch + slice * kTileLevels + group * kGroup);
    out[0] = make_uint4(n[0], n[1], n[2], n[3]);
    out[1] = make_uint4(n[4], n[5], n[6], n[7]);
    __syncthreads();
    const uint32_t bin = level_in_tile(tile, levels);
    uint32_t count = 0;
    if (bin < levels) {
#pragma unroll
      for (int s = 0; s < kSumSlices; ++s) count += scratch[s * kTileLevels + threadIdx.x];
    }
    if (bin < levels) f.hist[bin] = count;
    if (!smoothing(f)) {
      uint32_t sum, first;
      reduce_tile(sh, bin < levels ? count : 0u, bin, levels, sum, first);
      if (f.fuse_lut) {
        publish_and_lut(lut_step_of(f), sh, f.tile_flag, f.epoch, tile, sum, first,
                        bin < levels ? count : 0u);
      } else if (threadIdx.x == 0) {
        f.tile_sum[tile] = sum;
        f.tile_first[tile] = first;
      }
    }
    __syncthreads();
  }
}

// Smoothing only, one thread per level: the blend of the frame's counts with
// the past, stored as the next history; the tile sums and first bins.
__device__ void blend_step(const Frame16Bit &f, DeepShared &sh) {
  const uint32_t levels = f.l.levels;
  const uint32_t tiles = (levels + kTileLevels - 1) / kTileLevels;
  for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const uint32_t bin = level_in_tile(tile, levels);
    unsigned long long v = 0;
    if (bin < levels) {
      const unsigned long long past =
          f.history.mode == HistoryMode::kBlend ? f.history.past[bin] : 0;
      v = next_history_bin(f.history.mode, past, f.hist[bin], f.history.weight);
      f.history.next[bin] = v;
    }
    unsigned long long sum;
    uint32_t first;
    reduce_tile(sh, v, bin, levels, sum, first);
    if (threadIdx.x == 0) {
      f.tile_sum[tile] = sum;
      f.tile_first[tile] = first;
    }
  }
}

// The mapping, its gathers from a copy of the LUT in shared memory (`lut`,
// room for the levels): from L2, a 16-bit frame's gathers into a 128 KB LUT
// took 0.7 TB/s at 4K.
__device__ void map_step(const Frame16Bit &f, uint16_t *lut) {
  if (!f.lut_in_shared) {
    map_with_lut<true>(f.map_src, f.stash != nullptr, f.dst, f.dst_pitch, f.l, f.lut);
    return;
  }
  const uint32_t levels = f.l.levels;
  const uint32_t vectors = levels * sizeof(uint16_t) / sizeof(uint4);
  for (uint32_t i = threadIdx.x; i < vectors; i += blockDim.x)
    reinterpret_cast<uint4 *>(lut)[i] = reinterpret_cast<const uint4 *>(f.lut)[i];
  for (uint32_t i = vectors * (sizeof(uint4) / sizeof(uint16_t)) + threadIdx.x; i < levels;
       i += blockDim.x)
    lut[i] = f.lut[i];
  __syncthreads();
  map_with_lut(f.map_src, f.stash != nullptr, f.dst, f.dst_pitch, f.l, lut);
}

// Runs the steps in `steps` (a bit per Step16Bit) in order, with a grid
// barrier between two steps: more than one step only in a cooperative
// launch. What a step reads from another block it loads through the
// barrier's fence, never through the read-only cache.
__global__ void __launch_bounds__(kThreads) equalize_16bit_kernel(Frame16Bit f, uint32_t steps) {
  extern __shared__ unsigned int packed[];
  __shared__ DeepShared sh;
  bool first = true;
  for (uint32_t step = 0; step < kSteps; ++step) {
    if (!(steps & (1u << step))) continue;
    if (!first) cooperative_groups::this_grid().sync();
    first = false;
    switch (step) {
      case kCount:
        if (f.slices == 1)
          count_step<false>(f, packed);
        else
          count_step<true>(f, packed);
        break;
      case kSum: sum_step(f, sh, packed); break;
      case kBlend: blend_step(f, sh); break;
      case kLut: lut_step(lut_step_of(f), sh); break;
      case kMap: map_step(f, reinterpret_cast<uint16_t *>(packed)); break;
    }
  }
}

}  // namespace

const void *equalize_16bit_kernel_address() {
  return reinterpret_cast<const void *>(equalize_16bit_kernel);
}

cudaError_t launch_equalize_16bit(const cudaLaunchConfig_t &config, bool cooperative,
                                  const Frame16Bit &f, uint32_t steps) {
  if (cooperative) return launch_cooperative(config, equalize_16bit_kernel, f, steps);
  return cudaLaunchKernelEx(&config, equalize_16bit_kernel, f, steps);
}

}  // namespace histeq
}  // namespace cudafilters

// HistEqGpu's kernel for deep planes of up to kMaxLevels12Bit (4096) levels,
// 10 and 12 bits (histeq_kernels.h). Such planes take the structure of the
// 8-bit kernel, with one grid barrier: every block counts into 32-bit
// counters in shared memory and adds them into the frame's histogram with
// global atomics, then, past the barrier, builds the whole LUT from it itself
// and maps. At 4096 levels and fewer the merge is a few atomics per level
// and block, and the LUT a few levels per thread: cheaper than the partials,
// sums and second barrier of the 16-bit kernel (histeq_kernels_16bit.cu),
// which exist for 2^16 levels.
#include "histeq_deep_kernels.cuh"
#include "histeq_kernels.h"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/functional>

#include <cstddef>
#include <cstdint>

namespace cudafilters {
namespace histeq {

namespace {

using namespace kernels;

constexpr int kThreads = kDeepThreads;
constexpr uint32_t kLevelsPerThread = kMaxLevels12Bit / kThreads;
static_assert(kMaxLevels12Bit % kThreads == 0, "a thread's run of levels must be whole");

struct Shared12Bit {
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  using MinReduce = cub::BlockReduce<uint32_t, kThreads>;
  union {
    typename Scan::TempStorage scan;
    typename MinReduce::TempStorage min;
  } tmp;
  uint32_t first;
  unsigned long long first_count;
};

// Counts this block's share of the plane (a grid-stride, as the mapping's)
// and adds it into the frame's histogram.
__device__ void count_12bit(const Frame12Bit &f, unsigned int *counters) {
  const uint32_t levels = f.l.levels;
  const uint32_t copies = f.copies;
  for (uint32_t i = threadIdx.x; i < copies * levels; i += blockDim.x) counters[i] = 0;
  __syncthreads();
  unsigned int *mine = counters + (threadIdx.x / 32) % copies * levels;
  const uint32_t max_level = levels - 1;
  const int items = f.count_src.height * f.count_src.groups_per_row;
  visit_groups<kBatch>(f.count_src, blockIdx.x * blockDim.x + threadIdx.x, items,
                       gridDim.x * blockDim.x, f.stash, f.stash_pitch, [&](uint32_t word) {
                         atomicAdd(&mine[sample_level(word, f.l.shift, max_level)], 1u);
                         return word;
                       });
  __syncthreads();
  for (uint32_t level = threadIdx.x; level < levels; level += blockDim.x) {
    unsigned int n = 0;
    for (uint32_t c = 0; c < copies; ++c) n += counters[c * levels + level];
    if (n != 0) atomicAdd(&f.hist[level], n);
  }
}

// The whole LUT, in `lut` (shared memory), from the frame's histogram (and
// with smoothing the past, the blend stored as the next history by block
// 0): each thread a run of up to kLevelsPerThread levels, a block scan
// of the runs' sums. Not inlined, for the registers of its 64-bit scan, as
// the 16-bit kernel's tile LUTs.
__device__ __noinline__ void lut_12bit(const unsigned int *hist, const History history,
                                       DeepLevels l, Shared12Bit &sh, uint16_t *lut) {
  const uint32_t levels = l.levels;
  const uint32_t per = (levels + kThreads - 1) / kThreads;
  const uint32_t first_level = threadIdx.x * per;
  const bool smoothed = history.mode != HistoryMode::kOff;
  unsigned long long v[kLevelsPerThread];
  unsigned long long run = 0;
  uint32_t lowest = levels;
#pragma unroll
  for (uint32_t k = 0; k < kLevelsPerThread; ++k) {
    const uint32_t level = first_level + k;
    v[k] = 0;
    if (k >= per || level >= levels) continue;
    // Other blocks' atomics landed in L2: read past L1.
    const unsigned int h = __ldcg(hist + level);
    v[k] = h;
    if (smoothed) {
      const unsigned long long past =
          history.mode == HistoryMode::kBlend ? __ldcg(history.past + level) : 0;
      v[k] = next_history_bin(history.mode, past, h, history.weight);
      if (blockIdx.x == 0) history.next[level] = v[k];
    }
    run += v[k];
    if (v[k] != 0 && lowest == levels) lowest = level;
  }
  const uint32_t first = Shared12Bit::MinReduce(sh.tmp.min).Reduce(lowest, cuda::minimum<>{});
  if (threadIdx.x == 0) sh.first = first < levels ? first : levels - 1;
  __syncthreads();
  unsigned long long before = 0, total = 0;
  Shared12Bit::Scan(sh.tmp.scan).ExclusiveSum(run, before, total);
  if (sh.first >= first_level && sh.first < first_level + per) sh.first_count = v[sh.first - first_level];
  __syncthreads();
  const float unit = smoothed ? kHistoryUnit : 1.f;
  unsigned long long cdf = before;
#pragma unroll
  for (uint32_t k = 0; k < kLevelsPerThread; ++k) {
    const uint32_t level = first_level + k;
    if (k >= per || level >= levels) continue;
    cdf += v[k];
    lut[level] = static_cast<uint16_t>(
        equalized_level_of(static_cast<int>(level), static_cast<int>(sh.first), sh.first_count,
                           total, cdf, unit, levels - 1)
        << l.shift);
  }
}

__global__ void __launch_bounds__(kThreads) equalize_12bit_kernel(Frame12Bit f) {
  extern __shared__ unsigned int counters[];
  __shared__ Shared12Bit sh;
  if (blockIdx.x == 0)
    for (uint32_t i = threadIdx.x; i < f.l.levels; i += blockDim.x) f.next_hist[i] = 0;
  count_12bit(f, counters);
  copy_planes(f.carried);
  // The barrier orders every block's merge before any block's read.
  cooperative_groups::this_grid().sync();
  uint16_t *lut = reinterpret_cast<uint16_t *>(counters);
  lut_12bit(f.hist, f.history, f.l, sh, lut);
  __syncthreads();
  map_with_lut(f.map_src, f.stash != nullptr, f.dst, f.dst_pitch, f.l, lut);
}

}  // namespace

const void *equalize_12bit_kernel_address() {
  return reinterpret_cast<const void *>(equalize_12bit_kernel);
}

bool launch_equalize_12bit(const Frame12Bit &f, int grid, size_t shared, cudaStream_t stream) {
  cudaLaunchAttribute cooperative{};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  const cudaLaunchConfig_t config = launch_config(grid, kThreads, stream, &cooperative, shared);
  return cooperative_launched(launch_cooperative(config, equalize_12bit_kernel, f),
                              "equalize_12bit_kernel");
}

}  // namespace histeq
}  // namespace cudafilters

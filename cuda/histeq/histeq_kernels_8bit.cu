// HistEqGpu's kernels for planes of 8-bit samples (histeq_kernels.h): a
// histogram per warp in shared memory, the 256-entry LUT built by one block
// (two passes) or by every block after a grid barrier (one cooperative
// pass), and the mapping through a copy of the LUT in shared memory.
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
using Source = Source8Bit;

constexpr int kThreads = kThreads8Bit;
constexpr int kWarps = kThreads / 32;

// OpenCV's equalization rule for this thread's bin (one thread per bin),
// from the frame's count `h` or, with smoothing, from the blended histogram
// (which the writer block stores for the next frame): the prefix sum with
// CUB, then equalized_level. Every thread of the block must call it.
__device__ uint8_t block_equalized_level(unsigned int h, const History &history, bool writer) {
  using Reduce = cub::BlockReduce<int, kThreads>;
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } tmp;
  __shared__ int first;
  __shared__ unsigned long long first_count;

  const int bin = threadIdx.x;
  unsigned long long v = h;
  if (history.mode != HistoryMode::kOff) {
    // The past was written by an earlier launch or another block: read it
    // through L2 (not at all for a fresh history).
    const unsigned long long past =
        history.mode == HistoryMode::kBlend ? __ldcg(&history.past[bin]) : 0;
    v = next_history_bin(history.mode, past, h, history.weight);
    if (writer) history.next[bin] = v;
  }
  const int lowest = Reduce(tmp.reduce).Reduce(v != 0 ? bin : kHistBins, cuda::minimum<>{});
  if (bin == 0) first = lowest;
  __syncthreads();
  if (bin == first) first_count = v;
  unsigned long long cdf = 0, total = 0;
  Scan(tmp.scan).InclusiveSum(v, cdf, total);
  __syncthreads();
  return equalized_level(bin, first, first_count, total, cdf,
                         history.mode == HistoryMode::kOff ? 1.f : kHistoryUnit);
}

// Runs in the last block to finish: the LUT from the finished histogram,
// which it then clears for the next frame.
__device__ void build_lut_and_reset(State8Bit *state, const History &history, uint8_t *lut) {
  const int bin = threadIdx.x;
  // Other blocks' atomics landed in L2; read past L1.
  lut[bin] = block_equalized_level(__ldcg(&state->hist[bin]), history, true);
  state->hist[bin] = 0;
  if (bin == 0) state->blocks_done = 0;
}

// Counts the plane into a per-warp shared histogram; returns, for this
// thread's bin, the block's count.
__device__ __forceinline__ unsigned int count_block(const Source src, const Split &s) {
  // One sub-histogram per warp keeps shared-memory atomics from colliding
  // across warps on images dominated by a few levels.
  __shared__ unsigned int sub[kWarps][kHistBins];
  for (int i = threadIdx.x; i < kWarps * kHistBins; i += blockDim.x) (&sub[0][0])[i] = 0;
  __syncthreads();

  unsigned int *mine = sub[threadIdx.x / 32];
  for_each_pixel_group(
      s,
      [&](int y, int x) {
        const uint4 v = __ldg(reinterpret_cast<const uint4 *>(src.data + y * src.pitch) + x);
        if (src.stash) reinterpret_cast<uint4 *>(src.stash + y * src.stash_pitch)[x] = v;
        count_word(mine, v.x);
        count_word(mine, v.y);
        count_word(mine, v.z);
        count_word(mine, v.w);
      },
      [&](int y, int x) {
        const uint8_t v = src.data[y * src.pitch + x];
        if (src.stash) src.stash[y * src.stash_pitch + x] = v;
        count_byte(mine, v);
      });
  __syncthreads();

  unsigned int count = 0;
  for (int w = 0; w < kWarps; ++w) count += sub[w][threadIdx.x];
  return count;
}

__device__ __forceinline__ unsigned int map_word(const uint8_t *t, unsigned int w) {
  return t[w & 0xFFu] | (t[(w >> 8) & 0xFFu] << 8) | (t[(w >> 16) & 0xFFu] << 16) |
         (static_cast<unsigned int>(t[w >> 24]) << 24);
}

// kWrittenThisGrid: the source was written by other blocks of the running
// grid, so it is read through L2 rather than the read-only path, which is
// only defined for data that stays constant for the whole kernel.
template <bool kWrittenThisGrid = false>
__device__ __forceinline__ void map_plane(const uint8_t *__restrict__ src, size_t src_pitch,
                                          uint8_t *__restrict__ dst, size_t dst_pitch,
                                          const Split &s, const uint8_t *table) {
  for_each_pixel_group(
      s,
      [&](int y, int x) {
        const uint4 *p = reinterpret_cast<const uint4 *>(src + y * src_pitch) + x;
        const uint4 v = kWrittenThisGrid ? __ldcg(p) : __ldg(p);
        uint4 o;
        o.x = map_word(table, v.x);
        o.y = map_word(table, v.y);
        o.z = map_word(table, v.z);
        o.w = map_word(table, v.w);
        reinterpret_cast<uint4 *>(dst + y * dst_pitch)[x] = o;
      },
      [&](int y, int x) {
        const uint8_t *p = src + y * src_pitch + x;
        dst[y * dst_pitch + x] = table[kWrittenThisGrid ? __ldcg(p) : *p];
      });
}

__global__ void __launch_bounds__(kThreads)
    histogram_lut_kernel(Source src, Split s, State8Bit *__restrict__ state, History history,
                         uint8_t *__restrict__ lut) {
  allow_dependent_launch();
  const unsigned int count = count_block(src, s);
  if (count != 0) atomicAdd(&state->hist[threadIdx.x], count);

  // Last block to finish builds the LUT (no second launch, no host trip).
  // Every thread's merge must be visible device-wide (fence) and finished
  // (barrier) before the block counts itself done; otherwise the last block
  // can read a histogram that still misses some of another block's bins.
  __threadfence();
  __syncthreads();
  __shared__ bool is_last;
  if (threadIdx.x == 0) is_last = atomicAdd(&state->blocks_done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (is_last) build_lut_and_reset(state, history, lut);
}

__global__ void __launch_bounds__(kThreads)
    apply_lut_kernel(const uint8_t *__restrict__ src, size_t src_pitch, uint8_t *__restrict__ dst,
                     size_t dst_pitch, Split s, const uint8_t *lut, CopyJobs carried) {
  // Carried planes do not need the LUT: they are copied while the histogram
  // kernel may still be running.
  copy_planes(carried);

  wait_for_prerequisite_grid();
  __shared__ uint8_t table[kHistBins];
  // The LUT may have been written during this grid's lifetime: read it
  // through L2 so no stale line in L1 can serve it.
  table[threadIdx.x] = __ldcg(lut + threadIdx.x);
  __syncthreads();
  map_plane(src, src_pitch, dst, dst_pitch, s, table);
}

// The whole frame in one cooperative launch: every block counts its share,
// merges it into the frame's histogram, copies its share of the carried
// planes, waits at the grid barrier, builds the LUT itself (256 bins: cheaper
// than a second barrier) and maps its share. No launch gap and no tail of a
// lone LUT block between counting and mapping.
__global__ void __launch_bounds__(kThreads)
    equalize_single_pass_kernel(Source src, uint8_t *__restrict__ dst, size_t dst_pitch,
                                Split count_split, Split map_split,
                                State8Bit *__restrict__ state, int parity, History history,
                                CopyJobs carried) {
  unsigned int *hist = state->pass_hist[parity];
  if (blockIdx.x == 0) state->pass_hist[parity ^ 1][threadIdx.x] = 0;
  const unsigned int count = count_block(src, count_split);
  if (count != 0) atomicAdd(&hist[threadIdx.x], count);
  copy_planes(carried);

  // The barrier orders every block's merge before any block's read.
  cooperative_groups::this_grid().sync();
  __shared__ uint8_t table[kHistBins];
  table[threadIdx.x] = block_equalized_level(__ldcg(&hist[threadIdx.x]), history, blockIdx.x == 0);
  __syncthreads();
  if (src.stash)
    map_plane<true>(src.stash, src.stash_pitch, dst, dst_pitch, map_split, table);
  else
    map_plane(src.data, src.pitch, dst, dst_pitch, map_split, table);
}

}  // namespace

Kernels8Bit kernel_addresses_8bit() {
  return Kernels8Bit{reinterpret_cast<const void *>(histogram_lut_kernel),
                     reinterpret_cast<const void *>(apply_lut_kernel),
                     reinterpret_cast<const void *>(equalize_single_pass_kernel)};
}

cudaError_t launch_single_pass_8bit(const cudaLaunchConfig_t &config, const Source8Bit &src,
                                    uint8_t *dst, size_t dst_pitch, const Split &count_split,
                                    const Split &map_split, State8Bit *state, int parity,
                                    const History &history, const CopyJobs &carried) {
  return launch_cooperative(config, equalize_single_pass_kernel, src, dst, dst_pitch, count_split,
                            map_split, state, parity, history, carried);
}

void launch_histogram_lut_8bit(int blocks, cudaStream_t stream, const Source8Bit &src,
                               const Split &split, State8Bit *state, const History &history,
                               uint8_t *lut) {
  histogram_lut_kernel<<<blocks, kThreads, 0, stream>>>(src, split, state, history, lut);
  check_launch("histogram_lut_kernel");
}

cudaError_t launch_apply_lut_8bit(const cudaLaunchConfig_t &config, const uint8_t *src,
                                  size_t src_pitch, uint8_t *dst, size_t dst_pitch,
                                  const Split &split, const uint8_t *lut,
                                  const CopyJobs &carried) {
  return cudaLaunchKernelEx(&config, apply_lut_kernel, src, src_pitch, dst, dst_pitch, split, lut,
                            carried);
}

}  // namespace histeq
}  // namespace cudafilters

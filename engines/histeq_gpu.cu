#include <cudafilters/histeq_gpu.h>

#include <cudafilters/detail/equalize_math.h>
#include "plane_kernels.cuh"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/functional>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace cudafilters {

struct HistEqState {
  // Two-pass: hist is counted by the histogram kernel and cleared by the
  // last block, after it built the LUT.
  unsigned int hist[kHistBins];
  unsigned int blocks_done;
  // Single pass: frames alternate between two histograms; each frame clears
  // the one the next frame counts into, which nobody reads meanwhile.
  unsigned int pass_hist[2][kHistBins];
  // Temporal smoothing: the blended histogram, fixed point. A frame reads
  // one and writes the other, so blocks that still read the past never see
  // it overwritten.
  unsigned long long history[2][kHistBins];
};

// How a frame's histogram meets the history of earlier frames.
struct HistEqHistory {
  HistoryMode mode;
  uint32_t weight;  // on the past, 1/65536 units
  const unsigned long long *past;
  unsigned long long *next;
};

namespace {

using namespace kernels;
using History = HistEqHistory;

// One thread per bin when a block builds the LUT.
constexpr int kThreads = kHistBins;
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
__device__ void build_lut_and_reset(HistEqState *state, const History &history, uint8_t *lut) {
  const int bin = threadIdx.x;
  // Other blocks' atomics landed in L2; read past L1.
  lut[bin] = block_equalized_level(__ldcg(&state->hist[bin]), history, true);
  state->hist[bin] = 0;
  if (bin == 0) state->blocks_done = 0;
}

// The source plane as the counting pass reads it. With a stash, the source
// is host memory read over the bus, and the pass keeps a device copy of every
// pixel it reads, so that mapping reads device memory instead of the bus.
struct Source {
  const uint8_t *data;
  size_t pitch;
  uint8_t *stash;  // null: mapping reads data again
  size_t stash_pitch;
};

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
    histogram_lut_kernel(Source src, Split s, HistEqState *__restrict__ state, History history,
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
                                HistEqState *__restrict__ state, int parity, History history,
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

// Blocks of kThreads for `items` work items (up to 2^31, work_items), from
// one to `cap`.
int blocks_for(int64_t items, int cap) {
  const int64_t needed = (items + kThreads - 1) / kThreads;
  return needed < 1 ? 1 : needed < cap ? static_cast<int>(needed) : cap;
}

// Bytes read per block of the single-pass kernel.
constexpr size_t kSinglePassBlockBytes = 48 * 1024;

// The single-pass grid for `bytes` to read (`items` work items): about one
// block per kSinglePassBlockBytes, in steps of half a block per SM, from one
// to `max_per_sm` blocks per SM. Every block clears, sums and merges its own
// sub-histograms and builds its own LUT, so small frames run fastest on few
// blocks; large ones need more loads in flight. On the H100 (132 SMs), 8-bit
// frames back to back: 1080p 8.9 us on 132 blocks against 10.0 us on 264,
// 4K 14.6 us on 198 against 15.9 us on 132, 8K 52.0 us on 528 against
// 57.5 us on 264 (docs/cudahisteq.md, "Grid by frame size").
int single_pass_grid(size_t bytes, int64_t items, int sm_count, int max_per_sm) {
  const size_t half_sm_bytes = kSinglePassBlockBytes * static_cast<size_t>(sm_count) / 2;
  const size_t halves = (bytes + half_sm_bytes / 2) / half_sm_bytes;
  const size_t per_half = std::clamp<size_t>(halves, 2, 2 * static_cast<size_t>(max_per_sm));
  return blocks_for(items, static_cast<int>(per_half * sm_count / 2));
}

// Bytes of the plane and of the carried planes that the kernel copies.
size_t kernel_bytes(ConstPlane src, const CarriedPlanes &carried) {
  size_t bytes = size_t(src.width) * src.height;
  for (size_t i = 0; i < carried.size() && i < kMaxCarried; ++i)
    bytes += size_t(carried[i].src.width) * carried[i].src.height;
  return bytes;
}

}  // namespace

HistEqGpu::HistEqGpu(Launch launch) : state_(1), lut_(kHistBins) {
  cudaFuncAttributes attr{};
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, histogram_lut_kernel));
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, apply_lut_kernel));
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, equalize_single_pass_kernel));
  int device = 0, cooperative = 0, resident = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  CUDAFILTERS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &resident, equalize_single_pass_kernel, kThreads, 0));
  // A cooperative grid must fit on the GPU at once. Four blocks per SM keep
  // enough loads in flight for an 8K frame; more only add merges.
  single_pass_blocks_per_sm_ = std::min(resident, 4);
  single_pass_ = launch == Launch::kSinglePass && cooperative != 0 && single_pass_blocks_per_sm_ > 0;
  dependent_launch_ = launch != Launch::kTwoPassSerial && device_has_dependent_launch();
}

HistEqHistory HistEqGpu::next_history(ConstPlane src) {
  HistoryShape shape;
  shape.width = src.width;
  shape.height = src.height;
  History h{temporal_.next_frame(shape), temporal_.weight(), nullptr, nullptr};
  if (h.mode == HistoryMode::kOff) return h;
  // Device addresses, computed without dereferencing the device pointer.
  auto *histories = reinterpret_cast<unsigned long long *>(
      reinterpret_cast<char *>(state_.get()) + offsetof(HistEqState, history));
  h.past = histories + history_parity_ * kHistBins;
  h.next = histories + (history_parity_ ^ 1) * kHistBins;
  history_parity_ ^= 1;
  return h;
}

void HistEqGpu::enqueue_frame(ConstPlane src, const Plane *stash, Plane dst,
                              const CarriedPlanes &carried, cudaStream_t stream) {
  if (src.samples.deep()) {
    enqueue_deep(src, stash, dst, carried, stream);
    return;
  }
  if (with_significant_bits(src.samples, significant_bits_).bits != 8)
    throw std::invalid_argument("significant bits do not fit the plane's samples");
  if (state_dirty_) {
    CUDAFILTERS_CHECK(cudaMemsetAsync(state_.get(), 0, sizeof(HistEqState), stream));
    parity_ = 0;
    history_parity_ = 0;
    temporal_.restart();
    state_dirty_ = false;
  }
  // Until the launches are queued the histograms may be left half-counted.
  state_dirty_ = true;

  // Counting vectorizes when the source (and the stash it fills) allow;
  // mapping, when what it reads (source or stash) and the output allow.
  const Source source{src.data, src.stride, stash ? stash->data : nullptr,
                      stash ? stash->stride : 0};
  const ConstPlane map_src = stash ? ConstPlane(stash->data, stash->stride, src.width, src.height)
                                   : src;
  const Split count_split = make_split(
      src.width, src.height,
      aligned16(src.data, src.stride) && (!stash || aligned16(stash->data, stash->stride)));
  const Split map_split = split_for(map_src, dst);
  int64_t items = work_items(map_split);
  const CopyJobs jobs = carried_jobs(carried, items);
  const History history = next_history(src);

  bool single_pass = false;
  if (single_pass_ && !single_pass_refused_) {
    cudaLaunchAttribute cooperative{};
    cooperative.id = cudaLaunchAttributeCooperative;
    cooperative.val.cooperative = 1;
    const cudaLaunchConfig_t config =
        launch_config(single_pass_grid(kernel_bytes(src, carried), items, sm_count_,
                                       single_pass_blocks_per_sm_),
                      kThreads, stream, &cooperative);
    single_pass = cooperative_launched(
        launch_cooperative(config, equalize_single_pass_kernel, source, dst.data, dst.stride,
                           count_split, map_split, state_.get(), parity_, history, jobs),
        "equalize_single_pass_kernel");
    // Refused, the grid is more than the device holds at once (MPS, a green
    // context): this frame and every later one take the two passes. They
    // count into `hist`, which the single pass never touches, and meet the
    // same history; the single pass's histograms are left as they are.
    if (single_pass)
      parity_ ^= 1;
    else
      single_pass_refused_ = true;
  }
  if (!single_pass) {
    // Two blocks per SM: enough loads in flight, few global merges of the
    // per-block histograms.
    histogram_lut_kernel<<<blocks_for(work_items(count_split), 2 * sm_count_), kThreads, 0,
                           stream>>>(source, count_split, state_.get(), history, lut_.get());
    check_launch("histogram_lut_kernel");

    cudaLaunchAttribute overlap = dependent_launch_attribute();
    const cudaLaunchConfig_t config = launch_config(blocks_for(items, 8 * sm_count_), kThreads,
                                                    stream, dependent_launch_ ? &overlap : nullptr);
    CUDAFILTERS_CHECK(cudaLaunchKernelEx(&config, apply_lut_kernel, map_src.data, map_src.stride,
                                         dst.data, dst.stride, map_split,
                                         static_cast<const uint8_t *>(lut_.get()), jobs));
  }
  state_dirty_ = false;

  copy_planes(carried, kMaxCarried, stream);
}

}  // namespace cudafilters

// HistEqGpu on deep planes (16-bit words, up to 2^16 levels): a histogram
// kernel whose last block builds the LUT, then a mapping kernel. The 8-bit
// path (histeq_gpu.cu) keeps a per-warp histogram per block; 2^16 bins do
// not fit that, so each block counts into one histogram of packed 16-bit
// counters in shared memory (128 KB at 16 bits) and merges its non-zero
// bins into the frame's.
#include <cudafilters/histeq_gpu.h>

#include <cudafilters/detail/equalize_math.h>
#include "plane_kernels.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/functional>

#include <algorithm>
#include <stdexcept>

namespace cudafilters {

namespace {

using namespace kernels;

constexpr int kThreads = 1024;
// Samples per work item: one 16-byte vector.
constexpr int kGroup = 8;
// A block counts at most this many samples, so that no packed 16-bit
// counter can carry into its neighbour.
constexpr int kMaxBlockSamples = 65535;
constexpr int kMaxGroupsPerBlock = kMaxBlockSamples / kGroup;

// A deep plane as the kernels walk it: rows of groups of kGroup samples,
// read as one vector where rows are 16-byte aligned.
struct DeepPlane {
  const uint8_t *data;
  size_t pitch;
  int width, height;
  int groups_per_row;
  bool vec;
};

struct DeepLevels {
  int shift;
  uint32_t levels;
};

// How a frame's histogram meets the history of earlier frames.
struct DeepHistory {
  HistoryMode mode;
  uint32_t weight;
  const unsigned long long *past;
  unsigned long long *next;
};

DeepPlane deep_plane(ConstPlane p, bool vec) {
  return DeepPlane{p.data, p.stride, p.width, p.height, (p.width + kGroup - 1) / kGroup, vec};
}

// Calls f(x, word) for each sample of group `item`, and stores what f
// returns at the same place in `out` (when not null).
template <typename F>
__device__ __forceinline__ void visit_group(const DeepPlane &p, int item, uint8_t *out,
                                            size_t out_pitch, F f) {
  const int y = item / p.groups_per_row;
  const int x0 = (item - y * p.groups_per_row) * kGroup;
  const uint16_t *in = reinterpret_cast<const uint16_t *>(p.data + y * p.pitch);
  uint16_t *o = out ? reinterpret_cast<uint16_t *>(out + y * out_pitch) : nullptr;
  if (p.vec && x0 + kGroup <= p.width) {
    const uint4 *at = reinterpret_cast<const uint4 *>(in + x0);
    const uint4 v = __ldg(at);
    uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t lo = f(w[k] & 0xFFFFu), hi = f(w[k] >> 16);
      w[k] = lo | (hi << 16);
    }
    if (o) *reinterpret_cast<uint4 *>(o + x0) = make_uint4(w[0], w[1], w[2], w[3]);
    return;
  }
  const int x1 = min(x0 + kGroup, p.width);
  for (int x = x0; x < x1; ++x) {
    const uint16_t r = static_cast<uint16_t>(f(__ldg(in + x)));
    if (o) o[x] = r;
  }
}

// The LUT over `levels` bins, in the last block to finish counting: each
// thread takes a run of consecutive bins, the block finds the first
// occupied one and scans the run sums, then each thread writes its run's
// LUT entries and clears its bins for the next frame.
__device__ void build_deep_lut(unsigned int *hist, DeepLevels l, const DeepHistory &history,
                               uint16_t *lut) {
  using Reduce = cub::BlockReduce<uint32_t, kThreads>;
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } tmp;
  __shared__ uint32_t first;
  __shared__ unsigned long long first_count;

  const uint32_t per = (l.levels + kThreads - 1) / kThreads;
  const uint32_t b0 = min(threadIdx.x * per, l.levels), b1 = min(b0 + per, l.levels);
  const bool smoothing = history.mode != HistoryMode::kOff;
  // The bin as equalization sees it: the count, or the blended history
  // (stored for the next frame on the first pass, read back on the second).
  auto bin_value = [&](uint32_t b, bool first_pass) -> unsigned long long {
    const unsigned int c = __ldcg(&hist[b]);
    if (!smoothing) return c;
    if (!first_pass) return history.next[b];
    const unsigned long long past =
        history.mode == HistoryMode::kBlend ? __ldcg(&history.past[b]) : 0;
    const unsigned long long v = next_history_bin(history.mode, past, c, history.weight);
    history.next[b] = v;
    return v;
  };

  unsigned long long run = 0;
  uint32_t lowest = l.levels;
  for (uint32_t b = b0; b < b1; ++b) {
    const unsigned long long v = bin_value(b, true);
    if (v != 0 && lowest == l.levels) lowest = b;
    run += v;
  }
  const uint32_t found = Reduce(tmp.reduce).Reduce(lowest, cuda::minimum<>{});
  if (threadIdx.x == 0) first = found < l.levels ? found : l.levels - 1;
  __syncthreads();
  if (first >= b0 && first < b1) first_count = bin_value(first, false);
  unsigned long long cdf = 0, total = 0;
  Scan(tmp.scan).ExclusiveSum(run, cdf, total);
  __syncthreads();

  const float unit = smoothing ? kHistoryUnit : 1.f;
  for (uint32_t b = b0; b < b1; ++b) {
    cdf += bin_value(b, false);
    lut[b] = static_cast<uint16_t>(
        equalized_level_of(static_cast<int>(b), static_cast<int>(first), first_count, total, cdf,
                           unit, l.levels - 1)
        << l.shift);
    hist[b] = 0;
  }
}

// hist holds l.levels counts and then the number of blocks done; all zero
// between frames.
__global__ void __launch_bounds__(kThreads)
    deep_histogram_kernel(DeepPlane src, uint8_t *stash, size_t stash_pitch, int groups_per_block,
                          DeepLevels l, unsigned int *hist, DeepHistory history, uint16_t *lut) {
  extern __shared__ unsigned int packed[];
  const uint32_t words = max(l.levels / 2, 1u);
  for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) packed[w] = 0;
  __syncthreads();

  const uint32_t max_level = l.levels - 1;
  const int items = src.height * src.groups_per_row;
  const int end = min(items, (blockIdx.x + 1) * groups_per_block);
  for (int i = blockIdx.x * groups_per_block + threadIdx.x; i < end; i += blockDim.x)
    visit_group(src, i, stash, stash_pitch, [&](uint32_t word) {
      const uint32_t level = sample_level(word, l.shift, max_level);
      atomicAdd(&packed[level >> 1], 1u << ((level & 1u) * 16));
      return word;
    });
  __syncthreads();

  for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) {
    const unsigned int v = packed[w];
    if (v & 0xFFFFu) atomicAdd(&hist[2 * w], v & 0xFFFFu);
    if (v >> 16) atomicAdd(&hist[2 * w + 1], v >> 16);
  }

  // The last block to finish builds the LUT: every merge must be visible
  // device-wide (fence) and done (barrier) before the block counts itself.
  __threadfence();
  __syncthreads();
  __shared__ bool is_last;
  unsigned int *blocks_done = hist + l.levels;
  if (threadIdx.x == 0) is_last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!is_last) return;
  build_deep_lut(hist, l, history, lut);
  if (threadIdx.x == 0) *blocks_done = 0;
}

__global__ void __launch_bounds__(kThreads)
    deep_map_kernel(DeepPlane src, uint8_t *dst, size_t dst_pitch,
                    DeepLevels l, const uint16_t *__restrict__ lut, CopyJobs carried) {
  copy_planes(carried);
  const uint32_t max_level = l.levels - 1;
  const int items = src.height * src.groups_per_row;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < items; i += gridDim.x * blockDim.x)
    visit_group(src, i, dst, dst_pitch, [&](uint32_t word) {
      return static_cast<uint32_t>(__ldg(&lut[sample_level(word, l.shift, max_level)]));
    });
}

}  // namespace

void HistEqGpu::reserve_deep(uint32_t levels, bool with_history) {
  if (deep_levels_ < levels) {
    deep_hist_ = DeviceArray<uint32_t>(levels + 1);
    deep_lut_ = DeviceArray<uint16_t>(levels);
    deep_levels_ = levels;
    deep_state_dirty_ = true;
    deep_history_levels_ = 0;
  }
  if (with_history && deep_history_levels_ < levels) {
    deep_history_ = DeviceArray<unsigned long long>(2 * static_cast<size_t>(levels));
    deep_history_levels_ = levels;
  }
}

void HistEqGpu::enqueue_deep(ConstPlane src, const Plane *stash, Plane dst,
                             const CarriedPlanes &carried, cudaStream_t stream) {
  const SampleLayout layout = with_significant_bits(src.samples, significant_bits_);
  if (!layout.valid())
    throw std::invalid_argument("significant bits do not fit the plane's samples");
  const DeepLevels l{layout.shift, layout.levels()};

  reserve_deep(l.levels, temporal_.weight() != 0);
  if (deep_state_dirty_) {
    CUDAFILTERS_CHECK(
        cudaMemsetAsync(deep_hist_.get(), 0, (deep_levels_ + 1) * sizeof(uint32_t), stream));
    deep_history_parity_ = 0;
    temporal_.restart();
  }
  HistoryShape shape;
  shape.width = src.width;
  shape.height = src.height;
  shape.levels = l.levels;
  DeepHistory history{temporal_.next_frame(shape), temporal_.weight(), nullptr, nullptr};
  if (history.mode != HistoryMode::kOff) {
    history.past = deep_history_.get() + deep_history_parity_ * static_cast<size_t>(l.levels);
    history.next = deep_history_.get() + (deep_history_parity_ ^ 1) * static_cast<size_t>(l.levels);
    deep_history_parity_ ^= 1;
  }
  // Until both launches are queued the counters may be left half-used.
  deep_state_dirty_ = true;

  const bool src_vec = aligned16(src.data, src.stride) &&
                       (!stash || aligned16(stash->data, stash->stride));
  const DeepPlane count_src = deep_plane(src, src_vec);
  const ConstPlane map_from =
      stash ? ConstPlane(stash->data, stash->stride, src.width, src.height, src.samples) : src;
  const DeepPlane map_src =
      deep_plane(map_from, aligned16(map_from.data, map_from.stride) &&
                               aligned16(dst.data, dst.stride));

  const size_t shared = std::max<uint32_t>(l.levels / 2, 1u) * sizeof(unsigned int);
  if (shared != deep_shared_bytes_) {
    CUDAFILTERS_CHECK(cudaFuncSetAttribute(deep_histogram_kernel,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(shared)));
    int resident = 0;
    CUDAFILTERS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &resident, deep_histogram_kernel, kThreads, shared));
    if (resident < 1)
      throw CudaError("deep histogram: no block fits in shared memory", cudaErrorInvalidConfiguration);
    deep_resident_blocks_ = resident * sm_count_;
    deep_shared_bytes_ = shared;
  }
  const int items = count_src.height * count_src.groups_per_row;
  // One wave of resident blocks, or more where a block would count more
  // samples than its packed counters hold.
  const int per_block = std::max(
      1, std::min(kMaxGroupsPerBlock, (items + deep_resident_blocks_ - 1) / deep_resident_blocks_));
  const int count_blocks = (items + per_block - 1) / per_block;
  deep_histogram_kernel<<<count_blocks, kThreads, shared, stream>>>(
      count_src, stash ? stash->data : nullptr, stash ? stash->stride : 0, per_block, l,
      deep_hist_.get(), history, deep_lut_.get());
  check_launch("deep_histogram_kernel");

  int map_items = map_src.height * map_src.groups_per_row;
  const CopyJobs jobs = carried_jobs(carried, map_items);
  const int map_blocks = std::max(1, std::min((map_items + kThreads - 1) / kThreads, 4 * sm_count_));
  deep_map_kernel<<<map_blocks, kThreads, 0, stream>>>(map_src, dst.data, dst.stride, l,
                                                        deep_lut_.get(), jobs);
  check_launch("deep_map_kernel");
  deep_state_dirty_ = false;
  copy_planes(carried, kMaxCarried, stream);
}

}  // namespace cudafilters

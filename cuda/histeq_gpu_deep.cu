// HistEqGpu on deep planes (16-bit words, up to 2^16 levels), four kernels
// on the caller's stream: the histogram; per tile of 1024 bins, their sum
// and first occupied bin (and the blend with the past, when smoothing); the
// LUT, one thread per bin, from the tile sums and a scan of its tile; the
// mapping. The 8-bit path (histeq_gpu.cu) keeps a histogram per warp and
// builds its LUT in one block; 2^16 bins fit neither, so here each block
// counts into packed 16-bit counters in shared memory (128 KB at 16 bits)
// and the LUT is built by 64 blocks at once.
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

// Sub-histograms per block: as many copies of the packed counters as fit
// in 64 KB (up to one per warp), so warps counting the same levels collide
// less; 2^15 and 2^16 levels get one copy (64 and 128 KB).
__host__ __device__ inline uint32_t deep_copies(uint32_t levels) {
  const uint32_t words = levels / 2 > 1 ? levels / 2 : 1;
  const uint32_t fit = 16384 / words;
  return fit < 1 ? 1 : fit > kThreads / 32 ? kThreads / 32 : fit;
}

// Counts the block's share of the plane into packed 16-bit counters in
// shared memory, merges them into `hist` (zero at the start of the frame)
// and clears `next_hist`, which the next frame counts into.
__global__ void __launch_bounds__(kThreads)
    deep_histogram_kernel(DeepPlane src, uint8_t *stash, size_t stash_pitch, int groups_per_block,
                          DeepLevels l, unsigned int *hist, unsigned int *next_hist) {
  extern __shared__ unsigned int packed[];
  const uint32_t words = max(l.levels / 2, 1u);
  const uint32_t copies = deep_copies(l.levels);
  for (uint32_t w = threadIdx.x; w < words * copies; w += blockDim.x) packed[w] = 0;
  for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < l.levels;
       b += gridDim.x * blockDim.x)
    next_hist[b] = 0;
  __syncthreads();

  unsigned int *mine = packed + (threadIdx.x / 32) % copies * words;
  const uint32_t max_level = l.levels - 1;
  const int items = src.height * src.groups_per_row;
  const int end = min(items, (blockIdx.x + 1) * groups_per_block);
  for (int i = blockIdx.x * groups_per_block + threadIdx.x; i < end; i += blockDim.x)
    visit_group(src, i, stash, stash_pitch, [&](uint32_t word) {
      const uint32_t level = sample_level(word, l.shift, max_level);
      atomicAdd(&mine[level >> 1], 1u << ((level & 1u) * 16));
      return word;
    });
  __syncthreads();

  // A block counts at most 65535 samples, so the packed sums of its copies
  // cannot carry from one half into the other.
  for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) {
    unsigned int v = 0;
    for (uint32_t c = 0; c < copies; ++c) v += packed[c * words + w];
    if (v & 0xFFFFu) atomicAdd(&hist[2 * w], v & 0xFFFFu);
    if (v >> 16) atomicAdd(&hist[2 * w + 1], v >> 16);
  }
}

// Per tile of kThreads bins: the bins as equalization sees them (counts, or
// with smoothing the blend with the past, stored as the next history), their
// sum and the first occupied bin (l.levels if none).
__global__ void __launch_bounds__(kThreads)
    deep_tiles_kernel(const unsigned int *hist, DeepLevels l, DeepHistory history,
                      unsigned long long *tile_sum, uint32_t *tile_first) {
  using SumReduce = cub::BlockReduce<unsigned long long, kThreads>;
  using MinReduce = cub::BlockReduce<uint32_t, kThreads>;
  __shared__ union {
    typename SumReduce::TempStorage sum;
    typename MinReduce::TempStorage min;
  } tmp;
  const uint32_t bin = blockIdx.x * kThreads + threadIdx.x;
  unsigned long long v = 0;
  if (bin < l.levels) {
    v = hist[bin];
    if (history.mode != HistoryMode::kOff) {
      const unsigned long long past = history.mode == HistoryMode::kBlend ? history.past[bin] : 0;
      v = next_history_bin(history.mode, past, static_cast<uint32_t>(v), history.weight);
      history.next[bin] = v;
    }
  }
  const unsigned long long sum = SumReduce(tmp.sum).Sum(v);
  __syncthreads();
  const uint32_t first = MinReduce(tmp.min).Reduce(v != 0 ? bin : l.levels, cuda::minimum<>{});
  if (threadIdx.x == 0) {
    tile_sum[blockIdx.x] = sum;
    tile_first[blockIdx.x] = first;
  }
}

// The LUT, one thread per bin: the frame's total, first occupied bin and
// the sum before this tile from the tile sums, then a scan of the tile.
__global__ void __launch_bounds__(kThreads)
    deep_lut_kernel(const unsigned int *hist, DeepLevels l, DeepHistory history,
                    const unsigned long long *tile_sum, const uint32_t *tile_first,
                    uint16_t *lut) {
  using SumReduce = cub::BlockReduce<unsigned long long, kThreads>;
  using MinReduce = cub::BlockReduce<uint32_t, kThreads>;
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  __shared__ union {
    typename SumReduce::TempStorage sum;
    typename MinReduce::TempStorage min;
    typename Scan::TempStorage scan;
  } tmp;
  __shared__ unsigned long long total, before, first_count;
  __shared__ uint32_t first;

  const bool smoothing = history.mode != HistoryMode::kOff;
  auto value = [&](uint32_t b) -> unsigned long long {
    return smoothing ? history.next[b] : hist[b];
  };
  const uint32_t tiles = gridDim.x;
  const uint32_t t = threadIdx.x;
  const unsigned long long s = t < tiles ? tile_sum[t] : 0;
  const unsigned long long all = SumReduce(tmp.sum).Sum(s);
  __syncthreads();
  const unsigned long long pre = SumReduce(tmp.sum).Sum(t < blockIdx.x ? s : 0ull);
  __syncthreads();
  const uint32_t lowest =
      MinReduce(tmp.min).Reduce(t < tiles ? tile_first[t] : l.levels, cuda::minimum<>{});
  if (t == 0) {
    total = all;
    before = pre;
    first = lowest < l.levels ? lowest : l.levels - 1;
    first_count = value(first);
  }
  __syncthreads();

  const uint32_t bin = blockIdx.x * kThreads + t;
  const unsigned long long v = bin < l.levels ? value(bin) : 0;
  unsigned long long cdf = 0;
  Scan(tmp.scan).InclusiveSum(v, cdf);
  if (bin < l.levels)
    lut[bin] = static_cast<uint16_t>(
        equalized_level_of(static_cast<int>(bin), static_cast<int>(first), first_count, total,
                           before + cdf, smoothing ? kHistoryUnit : 1.f, l.levels - 1)
        << l.shift);
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
    deep_hist_ = DeviceArray<uint32_t>(2 * static_cast<size_t>(levels));
    deep_lut_ = DeviceArray<uint16_t>(levels);
    const size_t tiles = (levels + kThreads - 1) / kThreads;
    deep_tile_sum_ = DeviceArray<unsigned long long>(tiles);
    deep_tile_first_ = DeviceArray<uint32_t>(tiles);
    deep_levels_ = levels;
    deep_history_levels_ = 0;
    deep_state_dirty_ = true;
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
  // The histograms lie at offsets that depend on the level count: a frame
  // of another count finds stale counts where it reads.
  if (l.levels != deep_frame_levels_) deep_state_dirty_ = true;
  deep_frame_levels_ = l.levels;
  if (deep_state_dirty_) {
    CUDAFILTERS_CHECK(
        cudaMemsetAsync(deep_hist_.get(), 0, 2 * deep_levels_ * sizeof(uint32_t), stream));
    deep_parity_ = 0;
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
  // Until every launch is queued the histograms may be left half-used.
  deep_state_dirty_ = true;

  const bool src_vec = aligned16(src.data, src.stride) &&
                       (!stash || aligned16(stash->data, stash->stride));
  const DeepPlane count_src = deep_plane(src, src_vec);
  const ConstPlane map_from =
      stash ? ConstPlane(stash->data, stash->stride, src.width, src.height, src.samples) : src;
  const DeepPlane map_src =
      deep_plane(map_from, aligned16(map_from.data, map_from.stride) &&
                               aligned16(dst.data, dst.stride));

  const size_t shared =
      std::max<uint32_t>(l.levels / 2, 1u) * deep_copies(l.levels) * sizeof(unsigned int);
  if (shared != deep_shared_bytes_) {
    CUDAFILTERS_CHECK(cudaFuncSetAttribute(deep_histogram_kernel,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(shared)));
    int resident = 0;
    CUDAFILTERS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &resident, deep_histogram_kernel, kThreads, shared));
    if (resident < 1)
      throw CudaError("deep histogram: no block fits in shared memory",
                      cudaErrorInvalidConfiguration);
    deep_resident_blocks_ = resident * sm_count_;
    deep_shared_bytes_ = shared;
  }
  unsigned int *hist = deep_hist_.get() + deep_parity_ * static_cast<size_t>(l.levels);
  unsigned int *next_hist = deep_hist_.get() + (deep_parity_ ^ 1) * static_cast<size_t>(l.levels);
  deep_parity_ ^= 1;

  const int items = count_src.height * count_src.groups_per_row;
  // One wave of resident blocks, or more where a block would count more
  // samples than its packed counters hold.
  const int per_block = std::max(
      1, std::min(kMaxGroupsPerBlock, (items + deep_resident_blocks_ - 1) / deep_resident_blocks_));
  const int count_blocks = (items + per_block - 1) / per_block;
  deep_histogram_kernel<<<count_blocks, kThreads, shared, stream>>>(
      count_src, stash ? stash->data : nullptr, stash ? stash->stride : 0, per_block, l, hist,
      next_hist);
  check_launch("deep_histogram_kernel");

  const int tiles = static_cast<int>((l.levels + kThreads - 1) / kThreads);
  deep_tiles_kernel<<<tiles, kThreads, 0, stream>>>(hist, l, history, deep_tile_sum_.get(),
                                                    deep_tile_first_.get());
  check_launch("deep_tiles_kernel");
  deep_lut_kernel<<<tiles, kThreads, 0, stream>>>(hist, l, history, deep_tile_sum_.get(),
                                                  deep_tile_first_.get(), deep_lut_.get());
  check_launch("deep_lut_kernel");

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

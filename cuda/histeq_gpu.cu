#include "histeq_gpu.h"

#include "histeq_cpu.h"

#include <cooperative_groups.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/functional>

#include <algorithm>
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
};

namespace {

// One thread per bin when the last block builds the LUT.
constexpr int kThreads = kHistBins;
constexpr int kWarps = kThreads / 32;
constexpr int kVecBytes = 16;

// How a plane splits into 16-byte vectors (only when every row start is
// 16-byte aligned) and the scalar columns left at the end of each row.
struct Split {
  int width;
  int height;
  int vecs_per_row;
  int tail_start;  // first column handled byte by byte
};

bool aligned16(const void *p, size_t stride) {
  return reinterpret_cast<uintptr_t>(p) % kVecBytes == 0 && stride % kVecBytes == 0;
}

Split make_split(int width, int height, bool vectorize) {
  const int vecs = vectorize ? width / kVecBytes : 0;
  return Split{width, height, vecs, vecs * kVecBytes};
}

// Visits a plane in a grid-stride loop: vec(y, x) for each 16-byte vector x
// of row y, then scalar(y, x) for each column of the unaligned tail.
template <typename Vec, typename Scalar>
__device__ __forceinline__ void for_each_pixel_group(const Split &s, Vec vec, Scalar scalar) {
  const int stride = gridDim.x * blockDim.x;
  const int start = blockIdx.x * blockDim.x + threadIdx.x;
  const int vec_items = s.height * s.vecs_per_row;
  for (int i = start; i < vec_items; i += stride) {
    const int y = i / s.vecs_per_row;
    vec(y, i - y * s.vecs_per_row);
  }
  const int tail_width = s.width - s.tail_start;
  const int tail_items = s.height * tail_width;
  for (int i = start; i < tail_items; i += stride) {
    const int y = i / tail_width;
    scalar(y, s.tail_start + (i - y * tail_width));
  }
}

__device__ __forceinline__ void count_word(unsigned int *hist, unsigned int w) {
  atomicAdd(&hist[w & 0xFFu], 1u);
  atomicAdd(&hist[(w >> 8) & 0xFFu], 1u);
  atomicAdd(&hist[(w >> 16) & 0xFFu], 1u);
  atomicAdd(&hist[w >> 24], 1u);
}

// Programmatic dependent launch (compute capability 9.0+): the histogram
// kernel lets the apply kernel be scheduled before it ends, and the apply
// kernel waits for the histogram kernel's completion and memory before it
// reads the LUT. Both are no-ops for a grid not launched that way, and are
// compiled out for older architectures.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_prerequisite_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// A plane copied unchanged by the apply kernel (the chroma of a YUV frame).
constexpr int kMaxCarried = 2;

struct CopyJob {
  const uint8_t *src;
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  Split s;
};

struct CopyJobs {
  CopyJob job[kMaxCarried];
  int count;
};

__device__ __forceinline__ void copy_plane(const CopyJob &j) {
  for_each_pixel_group(
      j.s,
      [&](int y, int x) {
        reinterpret_cast<uint4 *>(j.dst + y * j.dst_pitch)[x] =
            __ldg(reinterpret_cast<const uint4 *>(j.src + y * j.src_pitch) + x);
      },
      [&](int y, int x) { j.dst[y * j.dst_pitch + x] = j.src[y * j.src_pitch + x]; });
}

// OpenCV's equalization rule for this thread's bin (one thread per bin):
// prefix sum of the histogram with CUB, then the scaled, rounded CDF. Every
// thread of the block must call it.
__device__ uint8_t equalized_level(unsigned int h, unsigned int total) {
  using Reduce = cub::BlockReduce<int, kThreads>;
  using Scan = cub::BlockScan<unsigned int, kThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } tmp;
  __shared__ int first;
  __shared__ unsigned int first_count;

  const int bin = threadIdx.x;
  const int lowest = Reduce(tmp.reduce).Reduce(h != 0 ? bin : kHistBins, cuda::minimum<>{});
  if (bin == 0) first = lowest;
  __syncthreads();
  if (bin == first) first_count = h;
  unsigned int cdf = 0;
  Scan(tmp.scan).InclusiveSum(h, cdf);
  __syncthreads();

  if (first_count == total) return static_cast<uint8_t>(bin);  // one level: output = input
  if (bin <= first) return 0;
  const float scale = __fdiv_rn(255.f, __uint2float_rn(total - first_count));
  const int v = __float2int_rn(__fmul_rn(__uint2float_rn(cdf - first_count), scale));
  return static_cast<uint8_t>(min(max(v, 0), 255));
}

// Runs in the last block to finish: the LUT from the finished histogram,
// which it then clears for the next frame.
__device__ void build_lut_and_reset(HistEqState *state, unsigned int total, uint8_t *lut) {
  const int bin = threadIdx.x;
  // Other blocks' atomics landed in L2; read past L1.
  lut[bin] = equalized_level(__ldcg(&state->hist[bin]), total);
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
        atomicAdd(&mine[v], 1u);
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
    histogram_lut_kernel(Source src, Split s, HistEqState *__restrict__ state,
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
  if (is_last) build_lut_and_reset(state, static_cast<unsigned int>(s.width) * s.height, lut);
}

__global__ void __launch_bounds__(kThreads)
    apply_lut_kernel(const uint8_t *__restrict__ src, size_t src_pitch, uint8_t *__restrict__ dst,
                     size_t dst_pitch, Split s, const uint8_t *lut, CopyJobs carried) {
  // Carried planes do not need the LUT: they are copied while the histogram
  // kernel may still be running.
  for (int j = 0; j < carried.count; ++j) copy_plane(carried.job[j]);

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
                                HistEqState *__restrict__ state, int parity, CopyJobs carried) {
  unsigned int *hist = state->pass_hist[parity];
  if (blockIdx.x == 0) state->pass_hist[parity ^ 1][threadIdx.x] = 0;
  const unsigned int count = count_block(src, count_split);
  if (count != 0) atomicAdd(&hist[threadIdx.x], count);
  for (int j = 0; j < carried.count; ++j) copy_plane(carried.job[j]);

  // The barrier orders every block's merge before any block's read.
  cooperative_groups::this_grid().sync();
  __shared__ uint8_t table[kHistBins];
  const unsigned int total = static_cast<unsigned int>(map_split.width) * map_split.height;
  table[threadIdx.x] = equalized_level(__ldcg(&hist[threadIdx.x]), total);
  __syncthreads();
  if (src.stash)
    map_plane<true>(src.stash, src.stash_pitch, dst, dst_pitch, map_split, table);
  else
    map_plane(src.data, src.pitch, dst, dst_pitch, map_split, table);
}

int blocks_for(int items, int cap) {
  const int needed = (items + kThreads - 1) / kThreads;
  return needed < 1 ? 1 : needed < cap ? needed : cap;
}

int work_items(const Split &s) {
  const int vec = s.height * s.vecs_per_row;
  const int tail = s.height * (s.width - s.tail_start);
  return vec > tail ? vec : tail;
}

Split split_for(ConstPlane src, Plane dst) {
  return make_split(src.width, src.height,
                    aligned16(src.data, src.stride) && aligned16(dst.data, dst.stride));
}

}  // namespace

HistEqGpu::HistEqGpu(Launch launch) : state_(1), lut_(kHistBins) {
  cudaFuncAttributes attr{};
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, histogram_lut_kernel));
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, apply_lut_kernel));
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, equalize_single_pass_kernel));
  int device = 0, major = 0, cooperative = 0, resident = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  CUDAFILTERS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &resident, equalize_single_pass_kernel, kThreads, 0));
  // A cooperative grid must fit on the GPU at once. Two blocks per SM keep
  // enough loads in flight; more would only add histogram merges.
  single_pass_blocks_ = std::min(resident, 2) * sm_count_;
  single_pass_ = launch == Launch::kSinglePass && cooperative != 0 && single_pass_blocks_ > 0;
  dependent_launch_ = launch != Launch::kTwoPassSerial && major >= 9;
}

void HistEqGpu::enqueue(ConstPlane src, Plane dst, cudaStream_t stream) {
  enqueue_carrying(src, dst, {}, stream);
}

namespace {

// Up to kMaxCarried planes for the kernel to copy, and how many work items
// (16-byte vectors or tail bytes per grid thread) the largest plane needs.
CopyJobs carried_jobs(const CarriedPlanes &carried, int &items) {
  CopyJobs jobs{};
  for (size_t i = 0; i < carried.size() && i < kMaxCarried; ++i) {
    const CarriedPlane &p = carried[i];
    const Split s = split_for(p.src, p.dst);
    jobs.job[jobs.count++] = CopyJob{p.src.data, p.src.stride, p.dst.data, p.dst.stride, s};
    items = std::max(items, work_items(s));
  }
  return jobs;
}

// A launch of kThreads-thread blocks with at most one launch attribute.
// cudaLaunchKernelEx returns launch errors itself: no check_launch after it.
cudaLaunchConfig_t launch_config(int blocks, cudaStream_t stream, cudaLaunchAttribute *attr) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kThreads);
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = attr ? 1 : 0;
  return config;
}

}  // namespace

void HistEqGpu::enqueue_carrying(ConstPlane src, Plane dst, const CarriedPlanes &carried,
                                 cudaStream_t stream) {
  enqueue_frame(src, nullptr, dst, carried, stream);
}

void HistEqGpu::enqueue_streaming(ConstPlane src, Plane dst, Plane stash, cudaStream_t stream) {
  if (stash.width < src.width || stash.height < src.height)
    throw std::invalid_argument("HistEqGpu: stash smaller than the source plane");
  enqueue_frame(src, &stash, dst, {}, stream);
}

void HistEqGpu::enqueue_frame(ConstPlane src, const Plane *stash, Plane dst,
                              const CarriedPlanes &carried, cudaStream_t stream) {
  if (state_dirty_) {
    CUDAFILTERS_CHECK(cudaMemsetAsync(state_.get(), 0, sizeof(HistEqState), stream));
    parity_ = 0;
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
  int items = work_items(map_split);
  const CopyJobs jobs = carried_jobs(carried, items);

  if (single_pass_) {
    cudaLaunchAttribute cooperative{};
    cooperative.id = cudaLaunchAttributeCooperative;
    cooperative.val.cooperative = 1;
    const cudaLaunchConfig_t config =
        launch_config(blocks_for(items, single_pass_blocks_), stream, &cooperative);
    CUDAFILTERS_CHECK(cudaLaunchKernelEx(&config, equalize_single_pass_kernel, source, dst.data,
                                         dst.stride, count_split, map_split, state_.get(),
                                         parity_, jobs));
    parity_ ^= 1;
  } else {
    // Two blocks per SM: enough loads in flight, few global merges of the
    // per-block histograms.
    histogram_lut_kernel<<<blocks_for(work_items(count_split), 2 * sm_count_), kThreads, 0,
                           stream>>>(source, count_split, state_.get(), lut_.get());
    check_launch("histogram_lut_kernel");

    cudaLaunchAttribute overlap{};
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = 1;
    const cudaLaunchConfig_t config = launch_config(blocks_for(items, 8 * sm_count_), stream,
                                                    dependent_launch_ ? &overlap : nullptr);
    CUDAFILTERS_CHECK(cudaLaunchKernelEx(&config, apply_lut_kernel, map_src.data, map_src.stride,
                                         dst.data, dst.stride, map_split,
                                         static_cast<const uint8_t *>(lut_.get()), jobs));
  }
  state_dirty_ = false;

  copy_planes(carried, kMaxCarried, stream);
}

}  // namespace cudafilters

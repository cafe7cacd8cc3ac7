// Device-side building blocks shared by the engines' kernels: how a plane
// splits into 16-byte vectors and scalar tails, grid- and block-strided
// visits of its pixels, programmatic dependent launch, and the copies of
// carried planes (chroma) folded into a filter's own kernels. Included by
// .cu files only.
#pragma once

#include <cudafilters/cuda_check.h>
#include <cudafilters/gpu_plane_filter.h>
#include <cudafilters/plane.h>

#include "device_limits.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

namespace cudafilters {
namespace kernels {

constexpr int kVecBytes = 16;

// The largest planes the kernels take: rows of 2^16 bytes and 2^31 bytes in
// all, as a 32768 x 32768 plane of 16-bit words (the luma of a GRAY16_LE
// frame of 2^30 pixels, or a chroma plane of Y444_16LE) has. Its work items
// (16-byte vectors, or bytes where rows are not aligned) number at most
// 2^31, which the grid-stride loops count in 32-bit unsigned integers
// (for_each_pixel_group), and no grid over it has 2^31 threads.
constexpr int64_t kMaxRowBytes = int64_t(1) << 16;
constexpr int64_t kMaxPlaneBytes = int64_t(1) << 31;

// Refuses a plane of `height` rows of `row_bytes` beyond those limits.
inline void check_plane_bytes(int64_t row_bytes, int height) {
  if (row_bytes > kMaxRowBytes || row_bytes * height > kMaxPlaneBytes)
    throw std::invalid_argument("plane too large: more than 2^16 bytes a row or 2^31 in all");
}

// How a plane splits into 16-byte vectors (only when every row start is
// 16-byte aligned) and the scalar columns left at the end of each row. All
// in bytes.
struct Split {
  int width;
  int height;
  int vecs_per_row;
  int tail_start;  // first column handled byte by byte
};

inline bool aligned16(const void *p, size_t stride) {
  return reinterpret_cast<uintptr_t>(p) % kVecBytes == 0 && stride % kVecBytes == 0;
}

inline Split make_split(int width, int height, bool vectorize) {
  check_plane_bytes(width, height);
  const int vecs = vectorize ? width / kVecBytes : 0;
  return Split{width, height, vecs, vecs * kVecBytes};
}

// Vectors only when both sides allow them.
inline Split split_for(ConstPlane src, ConstPlane dst) {
  return make_split(src.width, src.height,
                    aligned16(src.data, src.stride) && aligned16(dst.data, dst.stride));
}

// Work items (vectors or tail bytes) of the larger of a plane's two passes:
// up to 2^31 (a plane of kMaxPlaneBytes without aligned rows), one more
// than an int holds.
inline int64_t work_items(const Split &s) {
  const int64_t vec = int64_t(s.height) * s.vecs_per_row;
  const int64_t tail = int64_t(s.height) * (s.width - s.tail_start);
  return vec > tail ? vec : tail;
}

// Visits a plane with threads start, start + stride, ...: vec(y, x) for each
// 16-byte vector x of row y, then scalar(y, x) for each column of the
// unaligned tail. Index: unsigned 32-bit for a whole plane, which has at most
// 2^31 items (kMaxPlaneBytes), while a grid has fewer than 2^31 threads, so
// i + stride stays below 2^32 and never wraps; int for a band of rows that
// one block visits alone (far fewer items), where the kernels measured
// faster with it (cudaclahe's mapping, 1080p NV12 on the H100: 16.0 us with
// int, 16.6 us with unsigned).
template <typename Index, typename Vec, typename Scalar>
__device__ __forceinline__ void for_each_pixel_group(const Split &s, Index start, Index stride,
                                                     Vec vec, Scalar scalar) {
  const Index vecs_per_row = static_cast<Index>(s.vecs_per_row);
  const Index vec_items = static_cast<Index>(s.height) * vecs_per_row;
  for (Index i = start; i < vec_items; i += stride) {
    const Index y = i / vecs_per_row;
    vec(static_cast<int>(y), static_cast<int>(i - y * vecs_per_row));
  }
  const Index tail_width = static_cast<Index>(s.width - s.tail_start);
  const Index tail_items = static_cast<Index>(s.height) * tail_width;
  for (Index i = start; i < tail_items; i += stride) {
    const Index y = i / tail_width;
    scalar(static_cast<int>(y), s.tail_start + static_cast<int>(i - y * tail_width));
  }
}

// The same over the whole grid.
template <typename Vec, typename Scalar>
__device__ __forceinline__ void for_each_pixel_group(const Split &s, Vec vec, Scalar scalar) {
  for_each_pixel_group(s, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x, vec,
                       scalar);
}

// Counts one level, and the four levels of a 32-bit word, into a histogram
// in shared memory.
__device__ __forceinline__ void count_byte(unsigned int *hist, unsigned int v) {
  atomicAdd(&hist[v], 1u);
}

__device__ __forceinline__ void count_word(unsigned int *hist, unsigned int w) {
  count_byte(hist, w & 0xFFu);
  count_byte(hist, (w >> 8) & 0xFFu);
  count_byte(hist, (w >> 16) & 0xFFu);
  count_byte(hist, w >> 24);
}

// Programmatic dependent launch (compute capability 9.0+): a kernel lets the
// next one on its stream be scheduled before it ends, and the next one waits
// for its completion and memory before reading what it wrote. Both are
// no-ops for a grid not launched that way, and are compiled out for older
// architectures.
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

// Planes copied unchanged by a filter's kernel (the chroma of a YUV frame):
// every supported YUV layout has at most two.
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

// Copies the share of a carried plane of the thread numbered `start` among
// `stride` threads.
__device__ __forceinline__ void copy_plane(const CopyJob &j, unsigned start, unsigned stride) {
  for_each_pixel_group(
      j.s, start, stride,
      [&](int y, int x) {
        reinterpret_cast<uint4 *>(j.dst + y * j.dst_pitch)[x] =
            __ldg(reinterpret_cast<const uint4 *>(j.src + y * j.src_pitch) + x);
      },
      [&](int y, int x) { j.dst[y * j.dst_pitch + x] = j.src[y * j.src_pitch + x]; });
}

__device__ __forceinline__ void copy_planes(const CopyJobs &jobs, unsigned start,
                                            unsigned stride) {
  for (int j = 0; j < jobs.count; ++j) copy_plane(jobs.job[j], start, stride);
}

// The same over a one-dimensional grid.
__device__ __forceinline__ void copy_planes(const CopyJobs &jobs) {
  copy_planes(jobs, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x);
}

// Up to kMaxCarried planes for a kernel to copy; raises `items` to the work
// items the largest of them needs. The rest go by GpuPlaneFilter::copy_planes
// from index kMaxCarried.
inline CopyJobs carried_jobs(const CarriedPlanes &carried, int64_t &items) {
  CopyJobs jobs{};
  for (size_t i = 0; i < carried.size() && i < kMaxCarried; ++i) {
    const CarriedPlane &p = carried[i];
    const Split s = split_for(p.src, p.dst);
    jobs.job[jobs.count++] = CopyJob{p.src.data, p.src.stride, p.dst.data, p.dst.stride, s};
    items = std::max(items, work_items(s));
  }
  return jobs;
}

// A launch of `threads`-thread blocks with `attr_count` launch attributes and
// `shared` bytes of dynamic shared memory. cudaLaunchKernelEx returns launch
// errors itself: no check_launch after it.
inline cudaLaunchConfig_t launch_config(int blocks, int threads, cudaStream_t stream,
                                        cudaLaunchAttribute *attr, size_t shared = 0,
                                        unsigned attr_count = 1) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = attr ? attr_count : 0;
  return config;
}

// A grid of more blocks than any device holds at once.
constexpr unsigned kRefusedGrid = 1u << 30;

// A cooperative launch of `kernel` (config carries
// cudaLaunchAttributeCooperative), as cudaLaunchKernelEx makes it. A grid
// larger than the tests allow (cooperative_grid_cap) goes to the device as
// a plain cooperative grid (no clusters) of kRefusedGrid blocks, so that the
// runtime itself refuses it as it refuses a grid too large for what MPS or
// a green context leaves: cudaErrorCooperativeLaunchTooLarge, also kept as
// the thread's last error.
template <typename... Params, typename... Args>
cudaError_t launch_cooperative(cudaLaunchConfig_t config, void (*kernel)(Params...),
                               Args... args) {
  const int cap = cooperative_grid_cap();
  cudaLaunchAttribute cooperative_only{};
  if (cap >= 0 && config.gridDim.x > static_cast<unsigned>(cap)) {
    cooperative_only.id = cudaLaunchAttributeCooperative;
    cooperative_only.val.cooperative = 1;
    config.attrs = &cooperative_only;
    config.numAttrs = 1;
    config.gridDim.x = kRefusedGrid;
  }
  return cudaLaunchKernelEx(&config, kernel, args...);
}

// Whether a cooperative launch (launch_cooperative's result) runs: false
// where the device refused its grid, an error that leaves the context
// usable and that is consumed here (the runtime also keeps it as the last
// error, which the next check_launch would report); the caller then takes
// launches without a grid barrier. Any other error throws CudaError.
inline bool cooperative_launched(cudaError_t e, const char *kernel) {
  if (e == cudaErrorCooperativeLaunchTooLarge) {
    (void)cudaGetLastError();
    count_cooperative_refusal();
    return false;
  }
  check_cuda(e, kernel);
  return true;
}

// The attribute that lets a kernel start while its predecessor on the stream
// finishes (see allow_dependent_launch).
inline cudaLaunchAttribute dependent_launch_attribute() {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  a.val.programmaticStreamSerializationAllowed = 1;
  return a;
}

// The blocks of this block's thread-block cluster (9.0+; before that, and
// in a launch without clusters, a cluster of one block).
struct BlockCluster {
  __device__ static unsigned rank() {
#if __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().block_rank();
#else
    return 0;
#endif
  }
  __device__ static unsigned size() {
#if __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().num_blocks();
#else
    return 1;
#endif
  }
  __device__ static void sync() {
#if __CUDA_ARCH__ >= 900
    cooperative_groups::this_cluster().sync();
#else
    __syncthreads();
#endif
  }
  // Block `rank`'s copy of this block's shared variable `p`.
  template <typename T>
  __device__ static T *of(T *p, unsigned rank) {
#if __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().map_shared_rank(p, rank);
#else
    (void)rank;
    return p;
#endif
  }
};

// The attribute that groups blocks into thread-block clusters of `blocks`
// along x (9.0+).
inline cudaLaunchAttribute cluster_attribute(int blocks) {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim.x = blocks;
  a.val.clusterDim.y = 1;
  a.val.clusterDim.z = 1;
  return a;
}

// How many thread-block clusters of `blocks` blocks of `threads` threads,
// each with `shared` bytes of dynamic shared memory, the device holds at
// once running `kernel` (9.0+), in `clusters` (0 where the query fails).
// Returns the query's error, which the caller reports or consumes.
inline cudaError_t resident_clusters(const void *kernel, int blocks, int threads, size_t shared,
                                     cudaStream_t stream, int *clusters) {
  cudaLaunchAttribute dims = cluster_attribute(blocks);
  const cudaLaunchConfig_t config = launch_config(blocks, threads, stream, &dims, shared);
  const cudaError_t e = cudaOccupancyMaxActiveClusters(clusters, kernel, &config);
  if (e != cudaSuccess) *clusters = 0;
  return e;
}

// The sum of v over the warp, in every lane (all 32 lanes call it).
__device__ __forceinline__ uint32_t warp_sum(uint32_t v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xFFFFFFFFu, v);
#else
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
#endif
}
__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
}

// Whether a block of `kernel` with `bytes` of dynamic shared memory fits
// what a block may use on this device (shared_memory_per_block).
inline bool fits_shared_memory(const void *kernel, size_t bytes) {
  cudaFuncAttributes attr{};
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, kernel));
  return attr.sharedSizeBytes + bytes <= shared_memory_per_block();
}

// Raises the dynamic shared memory a launch of `kernel` may ask for to
// `bytes`, never lowering it. The limit is the kernel's, for every engine
// instance in the process: one that set it to what its own frames need
// (fewer levels, less memory) would make another's larger launches fail.
// Where the device has too little shared memory, throws an error that says
// so, naming `what` needs it.
inline void raise_dynamic_shared_limit(const void *kernel, size_t bytes, const char *what) {
  static std::mutex m;
  const std::lock_guard<std::mutex> lock(m);
  cudaFuncAttributes attr{};
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, kernel));
  const size_t need = attr.sharedSizeBytes + bytes, have = shared_memory_per_block();
  if (need > have)
    throw std::runtime_error(std::string(what) + " needs " + std::to_string(need) +
                             " bytes of shared memory per block; this GPU allows " +
                             std::to_string(have));
  if (static_cast<size_t>(attr.maxDynamicSharedSizeBytes) < bytes)
    CUDAFILTERS_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(bytes)));
}

// Whether the current device runs programmatic dependent launch (9.0+).
inline bool device_has_dependent_launch() {
  int device = 0, major = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

}  // namespace kernels
}  // namespace cudafilters

#include "device_copy.h"

#include <cudafilters/cuda_check.h>

#include "plane_kernels.cuh"

#include <algorithm>

namespace cudafilters {

namespace {

using namespace kernels;

constexpr int kMaxPlanes = 3;
constexpr int kThreads = 256;
// Enough blocks to fill an H200 several times over; the grid-stride loop
// takes the rest.
constexpr int64_t kMaxBlocks = 4096;

struct Copies {
  CopyJob job[kMaxPlanes];
  int count;
};

__global__ void __launch_bounds__(kThreads) copy_planes_kernel(const Copies c) {
  const unsigned start = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
  for (int i = 0; i < c.count; ++i) copy_plane(c.job[i], start, stride);
}

}  // namespace

void enqueue_device_copy(const ConstPlane *src, const Plane *dst, int count, cudaStream_t stream) {
  if (count < 0 || count > kMaxPlanes) throw std::invalid_argument("at most 3 planes to copy");
  Copies c{};
  int64_t items = 0;
  for (int i = 0; i < count; ++i) {
    if (src[i].width <= 0 || src[i].height <= 0) continue;
    const Split s = split_for(src[i], dst[i]);
    c.job[c.count++] = CopyJob{src[i].data, src[i].stride, dst[i].data, dst[i].stride, s};
    items = std::max(items, work_items(s));
  }
  if (items == 0) return;
  const int blocks = static_cast<int>(std::min((items + kThreads - 1) / kThreads, kMaxBlocks));
  copy_planes_kernel<<<blocks, kThreads, 0, stream>>>(c);
  check_launch("copy_planes_kernel");
}

}  // namespace cudafilters

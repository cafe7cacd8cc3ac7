#include "poison.h"

#include <cudafilters/cuda_check.h>

#include "frame_store.h"

#include <cstring>

namespace cudafilters {

void poison_host_plane(Plane p) {
  for (int y = 0; y < p.height; ++y)
    std::memset(p.data + static_cast<size_t>(y) * p.stride, kPoisonByte, p.row_bytes());
}

void poison_host_frame(const FramePlanesOut &f) {
  const FrameBytes bytes(f.as_const());
  for (int i = 0; i < bytes.count; ++i) poison_host_plane(writable(bytes.planes[i]));
}

void poison_device_plane(Plane p, cudaStream_t stream) {
  CUDAFILTERS_CHECK(
      cudaMemset2DAsync(p.data, p.stride, kPoisonByte, p.row_bytes(), p.height, stream));
}

}  // namespace cudafilters

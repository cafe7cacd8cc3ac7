// The interface between the frame plumbing (GpuFrameRunner) and an algorithm:
// a filter enqueues its kernels for one device plane on a stream the caller
// owns, and never synchronises; the caller waits once per frame.
#pragma once

#include "plane.h"

#include <cuda_runtime.h>

namespace cudafilters {

class GpuPlaneFilter {
 public:
  virtual ~GpuPlaneFilter() = default;
  // src and dst are device planes of equal size; they do not overlap.
  virtual void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) = 0;
};

}  // namespace cudafilters

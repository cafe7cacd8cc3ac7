// Histogram equalization on the GPU: two launches per frame on the caller's
// stream, no host round trip. Output is bit-identical to equalize_hist_cpu.
#pragma once

#include "cuda_memory.h"
#include "gpu_plane_filter.h"

namespace cudafilters {

struct HistEqState;

class HistEqGpu final : public GpuPlaneFilter {
 public:
  // Allocates the per-instance histogram and LUT in the current context and
  // verifies that this build carries code the current device can run.
  // overlap_launches: on GPUs with programmatic dependent launch (compute
  // capability 9.0+), let the apply kernel start, and copy carried planes,
  // while the histogram kernel finishes. Off only to measure what it gains.
  explicit HistEqGpu(bool overlap_launches = true);

  void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) override;
  // Up to two carried planes (every supported YUV layout) are copied by the
  // apply kernel; any beyond that by separate copies.
  void enqueue_carrying(ConstPlane src, Plane dst, const CarriedPlanes &carried,
                        cudaStream_t stream) override;

 private:
  DeviceArray<HistEqState> state_;
  DeviceArray<uint8_t> lut_;
  int sm_count_ = 1;
  bool dependent_launch_ = false;
  // The histogram is cleared by the kernel that consumes it; a fresh instance,
  // or one whose last frame failed half-way, clears it before the next frame.
  bool state_dirty_ = true;
};

}  // namespace cudafilters

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
  HistEqGpu();

  void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) override;

 private:
  DeviceArray<HistEqState> state_;
  DeviceArray<uint8_t> lut_;
  int sm_count_ = 1;
  // The histogram is cleared by the kernel that consumes it; a fresh instance,
  // or one whose last frame failed half-way, clears it before the next frame.
  bool state_dirty_ = true;
};

}  // namespace cudafilters

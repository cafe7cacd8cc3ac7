// Histogram equalization on the GPU: one cooperative launch per frame (two
// where that is not available, four or five for deep planes of up to 2^16
// levels) on the caller's stream, no host round trip. Output is
// bit-identical to HistEqCpu.
#pragma once

#include "gpu_plane_filter.h"
#include "histeq_params.h"

#include <memory>

namespace cudafilters {

class HistEqGpu final : public StreamingPlaneFilter {
 public:
  // Allocates the per-instance histograms and LUT in the current context and
  // verifies that this build carries code the current device can run
  // (throws CudaError otherwise).
  HistEqGpu();
  ~HistEqGpu() override;
  HistEqGpu(HistEqGpu &&) noexcept;
  HistEqGpu &operator=(HistEqGpu &&) noexcept;

  // Throws std::invalid_argument with histeq_params_error(p)'s reason
  // when it is not empty, keeping the parameters it had. Takes effect from the
  // next frame; with temporal smoothing the LUT comes from the histogram
  // blended with those of earlier frames, as HistEqCpu computes it.
  void set_params(const HistEqParams &p);
  void reset_history() override;

 protected:
  // Up to two carried planes (every supported YUV layout) are copied by the
  // kernels; any beyond that by separate copies.
  void enqueue_frame(ConstPlane src, const Plane *stash, Plane dst, const CarriedPlanes &carried,
                     cudaStream_t stream) override;

 private:
  friend struct HistEqGpuAccess;  // the library's own access to the state
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

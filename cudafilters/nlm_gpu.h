// Non-local means on the GPU: one launch per frame and channel group on the
// caller's stream, 8- or 16-bit samples, one frame or a temporal window of
// them, luma and chroma. The patch distances run on the tensor cores in
// f16 with f32 sums (docs/cudanlm.md): output is within one level of
// NlmCpu on 8-bit frames; docs/cudanlm.md gives the measured difference on
// deeper ones.
#pragma once

#include "frame_planes.h"
#include "gpu_plane_filter.h"
#include "gpu_window_filter.h"
#include "nlm_params.h"

#include <memory>

namespace cudafilters {

class NlmGpu final : public GpuPlaneFilter, public GpuWindowFilter {
 public:
  // Prepares the kernels for the current device; throws CudaError if this
  // build has no code for it.
  NlmGpu();
  ~NlmGpu() override;
  NlmGpu(NlmGpu &&) noexcept;
  NlmGpu &operator=(NlmGpu &&) noexcept;

  // Throws std::invalid_argument with nlm_params_error(p)'s reason
  // when it is not empty, keeping the parameters it had. Takes effect from the
  // next enqueue.
  void set_params(const NlmParams &p);
  // With auto_strength, the next frame's noise estimate starts afresh.
  void reset_history() override;

  // One frame's luma (or gray) plane; device planes of equal size.
  void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) override;

  // Whole frames, as NlmCpu::process_window: denoises window[center] into
  // dst, searching every frame of window[0, count), 1 <= count <= 2 *
  // kNlmMaxTemporalRadius + 1. Luma always; chroma (both channels together)
  // where the frames have it and the parameters denoise it, else copied.
  // Device planes; dst must not overlap the window.
  void enqueue_window(const FramePlanes *window, int count, int center, const FramePlanesOut &dst,
                      cudaStream_t stream) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

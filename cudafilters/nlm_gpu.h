// Non-local means on the GPU: one launch per frame and channel group on the
// caller's stream, 8- or 16-bit samples, one frame or a temporal window of
// them, luma and chroma. The patch distances run on the tensor cores in
// f16 with f32 sums (docs/cudanlm.md): output is within one level of
// nlm_cpu on 8-bit frames; docs/cudanlm.md gives the measured difference on
// deeper ones.
#pragma once

#include "cuda_memory.h"
#include "frame_planes.h"
#include "gpu_plane_filter.h"
#include "gpu_window_filter.h"
#include "nlm_params.h"

namespace cudafilters {

class NlmGpu final : public GpuPlaneFilter, public GpuWindowFilter {
 public:
  // Prepares the kernels for the current device; throws CudaError if this
  // build has no code for it.
  NlmGpu();

  // Takes effect from the next enqueue; p must be valid.
  void set_params(const NlmParams &p) { params_ = p; }

  // One frame's luma (or gray) plane; device planes of equal size.
  void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) override;

  // Whole frames, as nlm_cpu_frames: denoises window[center] into dst,
  // searching every frame of window[0, count), 1 <= count <= 2 *
  // kNlmMaxTemporalRadius + 1. Luma always; chroma (both channels together)
  // where the frames have it and the parameters denoise it, else copied.
  // Device planes; dst must not overlap the window.
  void enqueue_window(const FramePlanes *window, int count, int center, const FramePlanesOut &dst,
                      cudaStream_t stream) override;

 private:
  // frames[f][c]: channel c of frame f; dst[c] likewise.
  void enqueue_channels(const ConstPlane *const *frames, int count, int center, const Plane *dst,
                        int channels, int step, cudaStream_t stream);
  static void copy_chroma(const FramePlanes &src, const FramePlanesOut &dst, cudaStream_t stream);

  NlmParams params_;
  size_t max_shared_ = 0;
  // Chroma runs beside luma on a stream of its own, so that its blocks fill
  // the multiprocessors luma's last wave leaves idle; events fork it from
  // the caller's stream and join it back.
  Stream chroma_stream_;
  Event fork_{cudaEventDisableTiming};
  Event join_{cudaEventDisableTiming};
};

}  // namespace cudafilters

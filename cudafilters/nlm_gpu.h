// Non-local means on the GPU: one launch per frame on the caller's stream,
// 8- or 16-bit samples. Output on 8-bit frames is within one level of
// nlm_cpu (same arithmetic; only the exp2 implementations differ by an ulp
// or two); on deeper ones, whose patch distances are no longer exact in
// float, see docs/cudanlm.md for the measured difference.
#pragma once

#include "gpu_plane_filter.h"
#include "nlm_params.h"

namespace cudafilters {

class NlmGpu final : public GpuPlaneFilter {
 public:
  // Prepares the kernels for the current device; throws CudaError if this
  // build has no code for it.
  NlmGpu();

  // Takes effect from the next enqueue; p must be valid.
  void set_params(const NlmParams &p) { params_ = p; }

  void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) override;

 private:
  NlmParams params_;
  size_t max_shared_ = 0;
};

}  // namespace cudafilters

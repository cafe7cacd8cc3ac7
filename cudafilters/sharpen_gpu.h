// Sharpening on the GPU, bit-identical to SharpenCpu (and so to OpenCV, see
// sharpen_params.h) on 8- to 16-bit planes: one kernel per frame on the
// caller's stream. Each block stages a tile of the source and its halo in
// shared memory, blurs it separably in exact integers and applies the
// unsharp formula (or the 3x3 kernel); the same launch copies the carried
// planes.
#pragma once

#include "gpu_plane_filter.h"
#include "sharpen_params.h"

#include <memory>

namespace cudafilters {

class SharpenGpu final : public GpuPlaneFilter {
 public:
  // Prepares the kernels for the current device; throws CudaError if this
  // build has no code for it.
  SharpenGpu();
  ~SharpenGpu() override;
  SharpenGpu(SharpenGpu &&) noexcept;
  SharpenGpu &operator=(SharpenGpu &&) noexcept;

  // Throws std::invalid_argument with sharpen_params_error(p)'s reason
  // when it is not empty, keeping the parameters it had. Takes effect from the
  // next enqueue.
  void set_params(const SharpenParams &p);

  void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) override;
  // Up to two carried planes are copied by the filter's own kernel.
  void enqueue_carrying(ConstPlane src, Plane dst, const CarriedPlanes &carried,
                        cudaStream_t stream) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

// Sharpening on the CPU, bit-identical to OpenCV (sharpen_params.h) and to
// SharpenGpu on 8- to 16-bit planes: a separable integer Gaussian and the
// unsharp formula in one pass over bands of rows, or the 3x3 Laplacian
// kernel, spread over the shared thread pool.
#pragma once

#include "cpu_plane_filter.h"
#include "plane.h"
#include "sharpen_params.h"

#include <memory>

namespace cudafilters {

class SharpenCpu final : public CpuPlaneFilter {
 public:
  SharpenCpu();
  ~SharpenCpu() override;
  SharpenCpu(SharpenCpu &&) noexcept;
  SharpenCpu &operator=(SharpenCpu &&) noexcept;

  // Throws std::invalid_argument with sharpen_params_error(p)'s reason
  // when it is not empty, keeping the parameters it had. Takes effect from the
  // next frame.
  void set_params(const SharpenParams &p);

  // src and dst are host planes of equal size and sample layout, 8- or
  // 16-bit, that do not overlap.
  void process(ConstPlane src, Plane dst) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

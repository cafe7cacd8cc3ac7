// Sharpening on the CPU, bit-identical to OpenCV (sharpen_params.h) and to
// SharpenGpu on 8- to 16-bit planes: a separable integer Gaussian and the
// unsharp formula in one pass over bands of rows, or the 3x3 Laplacian
// kernel, spread over the shared thread pool.
#pragma once

#include "plane.h"
#include "sharpen_params.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace cudafilters {

class SharpenCpu {
 public:
  // p must be valid (sharpen_params_error(p) empty). Takes effect from the
  // next frame.
  void set_params(const SharpenParams &p);

  // src and dst are host planes of equal size and sample layout, 8- or
  // 16-bit, that do not overlap.
  void process(ConstPlane src, Plane dst) const;

  // For tests and benchmarks: process with one of sharpen_cpu_instruction_sets().
  void process_with(ConstPlane src, Plane dst, std::string_view isa) const;

 private:
  SharpenParams params_;
  std::vector<uint32_t> taps_ = sharpen_gaussian_taps(params_.radius);
  std::vector<uint32_t> deep_taps_ = sharpen_gaussian_taps(params_.radius, true);
};

// The instruction set SharpenCpu runs with on this CPU ("avx512", "avx2" or
// "baseline"), and all those it can run with. All give identical output.
std::string_view sharpen_cpu_instruction_set();
std::vector<std::string_view> sharpen_cpu_instruction_sets();

}  // namespace cudafilters

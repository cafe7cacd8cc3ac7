// Histogram equalization on the CPU, bit-identical to OpenCV's
// cv::equalizeHist on 8-bit planes, to the same rule over 2^b levels on
// deeper planes, and to HistEqGpu. Used by the elements' CPU backend.
#pragma once

#include "cpu_plane_filter.h"
#include "histeq_params.h"
#include "plane.h"

#include <memory>

namespace cudafilters {

// src and dst are host planes of equal size and layout. The LUT follows
// OpenCV's rule: the first occupied level maps to 0, later levels to
// round((2^b - 1) * cdf' / (N - h0)), where cdf' excludes that first level
// and b is the plane's bits (8 for 8-bit planes); a one-level frame maps to
// itself.
void equalize_hist_cpu(ConstPlane src, Plane dst);

// equalize_hist_cpu with the parameters of HistEqParams: temporal smoothing
// and, for deep planes, a number of significant bits.
class HistEqCpu final : public CpuPlaneFilter {
 public:
  HistEqCpu();
  ~HistEqCpu() override;
  HistEqCpu(HistEqCpu &&) noexcept;
  HistEqCpu &operator=(HistEqCpu &&) noexcept;

  // Throws std::invalid_argument with histeq_params_error(p)'s reason
  // when it is not empty, keeping the parameters it had. Takes effect from the
  // next frame.
  void set_params(const HistEqParams &p);
  // The next frame starts a new history (after a seek, a gap, new caps).
  void reset_history() override;

  // src and dst are host planes of equal size and layout. Throws
  // std::invalid_argument when the significant bits do not fit the plane.
  void process(ConstPlane src, Plane dst) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

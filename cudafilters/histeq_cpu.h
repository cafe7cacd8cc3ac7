// Histogram equalization on the CPU, bit-identical to OpenCV's
// cv::equalizeHist and to HistEqGpu. Used by the elements' CPU backend.
#pragma once

#include "detail/equalize_math.h"
#include "plane.h"

#include <cstdint>

namespace cudafilters {

// src and dst are host planes of equal size. The LUT follows OpenCV's rule
// (equalized_level): the first occupied level maps to 0, later levels to
// round(255 * cdf' / (N - h0)), where cdf' excludes that first level; a
// one-level frame maps to itself.
void equalize_hist_cpu(ConstPlane src, Plane dst);

// equalize_hist_cpu with optional temporal smoothing: the LUT then comes
// from the histogram blended with those of earlier frames (equalize_math.h).
class HistEqCpu {
 public:
  // The weight on the past, 0 (off: every frame on its own) to 1.
  void set_temporal_smoothing(double smoothing) { temporal_.set_smoothing(smoothing); }
  // The next frame starts a new history (after a seek, a gap, new caps).
  void reset_history() { temporal_.restart(); }

  // src and dst are host planes of equal size.
  void process(ConstPlane src, Plane dst);

 private:
  TemporalHistory temporal_;
  uint64_t history_[kHistBins] = {};
};

}  // namespace cudafilters

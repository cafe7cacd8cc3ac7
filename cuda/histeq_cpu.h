// Histogram equalization on the CPU, bit-identical to OpenCV's
// cv::equalizeHist and to HistEqGpu. Used by the elements' CPU backend.
#pragma once

#include "equalize_math.h"
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
  void set_temporal_smoothing(double smoothing) { weight_ = history_weight(smoothing); }
  // The next frame starts a new history (after a seek, a gap, new caps).
  void reset_history() { history_fresh_ = true; }

  // src and dst are host planes of equal size.
  void process(ConstPlane src, Plane dst);

 private:
  uint32_t weight_ = 0;
  uint64_t history_[kHistBins] = {};
  uint64_t history_pixels_ = 0;  // frame size the history was counted at
  bool history_fresh_ = true;
};

}  // namespace cudafilters

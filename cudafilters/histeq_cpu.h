// Histogram equalization on the CPU, bit-identical to OpenCV's
// cv::equalizeHist on 8-bit planes, to the same rule over 2^b levels on
// deeper planes, and to HistEqGpu. Used by the elements' CPU backend.
#pragma once

#include "detail/equalize_math.h"
#include "plane.h"

#include <cstdint>
#include <vector>

namespace cudafilters {

// src and dst are host planes of equal size and layout. The LUT follows
// OpenCV's rule (equalized_level_of): the first occupied level maps to 0,
// later levels to round((2^b - 1) * cdf' / (N - h0)), where cdf' excludes
// that first level and b is the plane's bits (8 for 8-bit planes); a
// one-level frame maps to itself.
void equalize_hist_cpu(ConstPlane src, Plane dst);

// equalize_hist_cpu with optional temporal smoothing: the LUT then comes
// from the histogram blended with those of earlier frames (equalize_math.h);
// and, for deep planes, a number of significant bits.
class HistEqCpu {
 public:
  // The weight on the past, 0 (off: every frame on its own) to 1.
  void set_temporal_smoothing(double smoothing) { temporal_.set_smoothing(smoothing); }
  // The levels of deep planes have this many bits (0: the plane's own);
  // see with_significant_bits. From the next frame.
  void set_significant_bits(int bits) { significant_bits_ = bits; }
  // The next frame starts a new history (after a seek, a gap, new caps).
  void reset_history() { temporal_.restart(); }

  // src and dst are host planes of equal size and layout. Throws
  // std::invalid_argument when the significant bits do not fit the plane.
  void process(ConstPlane src, Plane dst);

 private:
  TemporalHistory temporal_;
  int significant_bits_ = 0;
  std::vector<uint64_t> history_;
  std::vector<uint32_t> hist_, scratch_;
  std::vector<uint16_t> lut16_;
};

}  // namespace cudafilters

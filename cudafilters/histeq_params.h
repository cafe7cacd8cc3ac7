// Parameters of histogram equalization, set the same way on the CPU and GPU
// engines (HistEqCpu, HistEqGpu) so that both compute the same function:
// that of OpenCV's cv::equalizeHist on 8-bit planes, the same rule over 2^b
// levels on deeper ones (docs/cudahisteq.md).
#pragma once

#include <string>

namespace cudafilters {

struct HistEqParams {
  // The weight on the past, 0 (off: every frame on its own) to 1: the LUT
  // then comes from the histogram blended with those of earlier frames.
  double temporal_smoothing = 0.0;
  // The levels of 10- to 16-bit planes have this many bits, 0 to 16 (0:
  // the plane's own); see with_significant_bits. A frame whose plane it does
  // not fit is refused with std::invalid_argument.
  int significant_bits = 0;
};

// Empty when the parameters are valid, otherwise what is wrong with them.
std::string histeq_params_error(const HistEqParams &p);

}  // namespace cudafilters

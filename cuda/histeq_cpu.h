// Histogram equalization on the CPU, bit-identical to OpenCV's
// cv::equalizeHist. Used by the elements' CPU backend.
#pragma once

#include "plane.h"

#include <cstdint>

namespace cudafilters {

constexpr int kHistBins = 256;

// The equalization LUT for a histogram of `total` pixels (OpenCV's rule: the
// first occupied level maps to 0, later levels to round(255 * cdf' / (N - h0)),
// where cdf' excludes that first level; a one-level frame maps to itself).
void build_equalize_lut(const uint32_t hist[kHistBins], uint64_t total, uint8_t lut[kHistBins]);

// src and dst are host planes of equal size.
void equalize_hist_cpu(ConstPlane src, Plane dst);

}  // namespace cudafilters

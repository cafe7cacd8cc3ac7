// A plane's noise: a robust estimate of its standard deviation, in 8-bit
// units (a level of a b-bit plane counts 2^(8-b)), for the filters that set
// their own strength from it.
//
// Immerkaer's fast noise variance estimate (J. Immerkaer, "Fast noise
// variance estimation", CVIU 64(2), 1996): sigma = sqrt(pi/2) / 6 times the
// mean of |L|, L the plane filtered with [1 -2 1; -2 4 -2; 1 -2 1]. Texture
// reads as noise there, so the mean is taken over the flat pixels only:
// those whose Sobel gradient |Gx| + |Gy| is at most 9.55 sigma, the 90th
// percentile of that gradient on pure noise, with sigma the estimate itself,
// iterated to its fixed point. L's mask is orthogonal to both Sobel masks,
// so on white noise the selection leaves L's distribution alone.
// docs/noise-estimation.md chose it against six other estimators on real
// photos ("flat-lap-q90"; bench/noise_estimation.py is its reference).
//
// One pass over the plane fills a table, the pixel count and the sum of |L|
// per gradient bin (1024 bins, one 8-bit level each, the last taking every
// larger gradient), in integers of the plane's own levels; the estimate is
// read from the table alone. A GPU pass fills the same table with the same
// integers, so both give the same estimate.
#pragma once

#include <cudafilters/plane.h>

#include <array>
#include <cstdint>

namespace cudafilters {

class NoiseTable {
 public:
  static constexpr int kBins = 1024;

  // Adds the interior pixels of `plane` (host memory, any layout): every
  // pixel with a whole 3x3 neighbourhood. Planes of different depths do not
  // mix (std::invalid_argument).
  void add(ConstPlane plane);
  void clear();

  // The estimate in 8-bit units; 0 without interior pixels.
  double sigma() const;

  uint64_t pixels() const { return pixels_; }

 private:
  std::array<uint64_t, kBins> count_{};
  std::array<uint64_t, kBins> abs_laplacian_{};  // in the plane's levels
  uint64_t pixels_ = 0;
  int bits_ = 0;  // of the planes added; 0 before the first
};

// The estimate of one plane (a NoiseTable of it alone).
double estimate_noise_sigma(ConstPlane plane);

}  // namespace cudafilters

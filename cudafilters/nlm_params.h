// Parameters of non-local means, shared by the CPU and GPU implementations so
// both compute the same function.
#pragma once

#include "plane.h"

#include <array>
#include <cmath>
#include <string>

namespace cudafilters {

constexpr int kNlmMaxPatchSize = 15;
constexpr int kNlmMaxSearchSize = 35;

struct NlmParams {
  float h = 10.f;          // filtering strength, in 8-bit intensity units
  int patch_size = 7;      // odd, 1..kNlmMaxPatchSize, at most search_size
  int search_size = 21;    // odd, 1..kNlmMaxSearchSize
  float noise_sigma = 0.f; // distances below 2 sigma^2 count as identical
  bool gaussian = false;   // Gaussian-weighted patch distance instead of box
};

// Empty when the parameters are valid, otherwise what is wrong with them.
std::string nlm_params_error(const NlmParams &p);

// The weight of a patch pair is exp2(min(S * a + b, 0)) where S is the
// patch distance as the implementations accumulate it (a sum of squared
// differences for box patches, a normalised weighted sum for Gaussian ones).
// This folds exp(-max(d2 - 2 sigma^2, 0) / h^2) into one FMA and one exp2.
struct NlmWeightCoeffs {
  float a;
  float b;
};
NlmWeightCoeffs nlm_weight_coeffs(const NlmParams &p);

// 1-D Gaussian for patch weighting (standard deviation patch_size / 4),
// normalised to sum 1, centred at index patch_size / 2; unused entries 0.
std::array<float, kNlmMaxPatchSize> nlm_gaussian_taps(int patch_size);

// Levels of deeper samples enter the arithmetic in 8-bit units, level
// / 2^(b-8): strength and noise-sigma then mean the same at every depth.
// Scaling by a power of two is exact, so 8-bit frames are unchanged.
inline float nlm_level_unit(SampleLayout l) { return std::ldexp(1.f, 8 - l.bits); }

}  // namespace cudafilters

// How both implementations of non-local means weight a pair of patches: the
// coefficients of the weight formula and the taps of Gaussian patches, from
// the parameters. Private to the engine library and its tests.
#pragma once

#include <cudafilters/nlm_params.h>

#include "hd_math.h"

#include <array>

namespace cudafilters {

// The weight of a patch pair is exp2(min(S * a + b, 0)) where S is the
// patch distance as the implementations accumulate it (a sum of squared
// differences for box patches, a normalised weighted sum for Gaussian ones).
// This folds exp(-max(d2 - 2 sigma^2, 0) / h^2) into one FMA and one exp2.
struct NlmWeightCoeffs {
  float a;
  float b;
};
NlmWeightCoeffs nlm_weight_coeffs(const NlmParams &p);

// The same for chroma, whose S sums over both channels: the mean runs over
// the patch and the two channels, and h is the chroma strength. The noise
// allowance scales with the strength (sigma * chroma_h / h), so the chroma
// weight is the luma weight function with h replaced by chroma_h.
NlmWeightCoeffs nlm_chroma_weight_coeffs(const NlmParams &p);

// The search window is a disk: the offsets (dx, dy) with dx^2 + dy^2 <=
// rs^2, rs = search_size / 2 (317 of the 21x21 square's 441 at search 21).
// Its corners searched too cost 28% more weights and gained nothing: over
// 45 gray and 48 camera cases the disk was +0.06 and +0.02 dB better on
// average, and never more than 0.03 dB worse
// (studies/nlm-fewer-weights). For column dx, dy runs over
// -rows .. rows with rows = nlm_search_rows(rs, dx).
CUDAFILTERS_HD int nlm_search_rows(int rs, int dx) {
  int rows = 0;
  while ((rows + 1) * (rows + 1) + dx * dx <= rs * rs) ++rows;
  return rows;
}

// 1-D Gaussian for patch weighting (standard deviation patch_size / 4),
// normalised to sum 1, centred at index patch_size / 2; unused entries 0.
std::array<float, kNlmMaxPatchSize> nlm_gaussian_taps(int patch_size);

}  // namespace cudafilters

#include <cudafilters/nlm_params.h>

#include "nlm_auto.h"
#include "nlm_weights.h"

#include <cmath>
#include <sstream>

namespace cudafilters {

namespace {

// A strength as a user writes it: 0.1, 255, 12.5.
std::string bound(float v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

std::string nlm_params_error(const NlmParams &p) {
  if (p.patch_size < 1 || p.patch_size > kNlmMaxPatchSize || p.patch_size % 2 == 0)
    return "patch-size must be odd, between 1 and " + std::to_string(kNlmMaxPatchSize) +
           " (got " + std::to_string(p.patch_size) + ")";
  if (p.search_size < 1 || p.search_size > kNlmMaxSearchSize || p.search_size % 2 == 0)
    return "search-size must be odd, between 1 and " + std::to_string(kNlmMaxSearchSize) +
           " (got " + std::to_string(p.search_size) + ")";
  if (p.patch_size > p.search_size)
    return "patch-size (" + std::to_string(p.patch_size) + ") must not exceed search-size (" +
           std::to_string(p.search_size) + ")";
  if (!(p.h >= kNlmMinStrength && p.h <= kNlmMaxStrength))
    return "strength must be " + bound(kNlmMinStrength) + " to " + bound(kNlmMaxStrength) +
           " (got " + bound(p.h) + ")";
  if (!(p.noise_sigma >= 0.f)) return "noise-sigma must not be negative";
  if (!(p.chroma_h == -1.f || p.chroma_h == 0.f ||
        (p.chroma_h >= kNlmMinStrength && p.chroma_h <= kNlmMaxStrength)))
    return "chroma-strength must be -1 (as strength), 0 (off) or " + bound(kNlmMinStrength) +
           " to " + bound(kNlmMaxStrength) + " (got " + bound(p.chroma_h) + ")";
  if (p.temporal_radius < 0 || p.temporal_radius > kNlmMaxTemporalRadius)
    return "temporal-radius must be between 0 and " + std::to_string(kNlmMaxTemporalRadius) +
           " (got " + std::to_string(p.temporal_radius) + ")";
  if (!(p.auto_scale >= kNlmMinAutoScale && p.auto_scale <= kNlmMaxAutoScale))
    return "auto-strength-scale must be " + bound(kNlmMinAutoScale) + " to " +
           bound(kNlmMaxAutoScale) + " (got " + bound(p.auto_scale) + ")";
  if (!(p.noise_smoothing >= 0.f && p.noise_smoothing <= kNlmMaxNoiseSmoothing))
    return "noise-smoothing must be 0 to " + bound(kNlmMaxNoiseSmoothing) + " (got " +
           bound(p.noise_smoothing) + ")";
  return {};
}

NlmWeightCoeffs nlm_weight_coeffs(const NlmParams &p) {
  return nlm_coeffs_of(p.h, p.noise_sigma, double(p.h), 1.0, p.gaussian, p.patch_size);
}

NlmWeightCoeffs nlm_chroma_weight_coeffs(const NlmParams &p) {
  return nlm_coeffs_of(p.h, p.noise_sigma, double(nlm_chroma_strength(p)), 2.0, p.gaussian,
                       p.patch_size);
}

NlmParams nlm_auto_params(const NlmParams &p, double luma_sigma, double chroma_sigma,
                          double luma_correlated, double still) {
  const NlmStrengths s = nlm_auto_strengths(luma_sigma, chroma_sigma, p.auto_scale,
                                            p.temporal_radius, p.chroma_h != 0.f, luma_correlated,
                                            still);
  NlmParams out = p;
  out.h = s.h;
  out.noise_sigma = s.noise_sigma;
  out.chroma_h = s.chroma_h;
  return out;
}

std::array<float, kNlmMaxPatchSize> nlm_gaussian_taps(int patch_size) {
  std::array<float, kNlmMaxPatchSize> taps{};
  const int r = patch_size / 2;
  const double sd = patch_size / 4.0;
  double sum = 0;
  for (int k = -r; k <= r; ++k) sum += std::exp(-(k * k) / (2 * sd * sd));
  for (int k = -r; k <= r; ++k) taps[k + r] = float(std::exp(-(k * k) / (2 * sd * sd)) / sum);
  return taps;
}

}  // namespace cudafilters

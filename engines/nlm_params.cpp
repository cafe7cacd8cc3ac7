#include <cudafilters/nlm_params.h>

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
  return {};
}

namespace {

// exp(-max(S / (norm * h^2) - 2 sigma^2 / h_luma^2, 0)) as exp2(min(S * a + b, 0)),
// for S summed over `channels` channels. With one channel and h the luma
// strength, the same operations in the same order as ever.
NlmWeightCoeffs weight_coeffs(const NlmParams &p, double h, double channels) {
  const double log2e = 1.4426950408889634;
  const double k = log2e / (h * h);
  const double luma_k = log2e / (double(p.h) * p.h);
  // Box: S is a sum over patch_size^2 pixels; Gaussian: S is already a mean.
  const double inv_norm = p.gaussian ? 1.0 : 1.0 / (double(p.patch_size) * p.patch_size);
  return NlmWeightCoeffs{float(-k * inv_norm / channels),
                         float(2.0 * double(p.noise_sigma) * p.noise_sigma * luma_k)};
}

}  // namespace

NlmWeightCoeffs nlm_weight_coeffs(const NlmParams &p) { return weight_coeffs(p, double(p.h), 1.0); }

NlmWeightCoeffs nlm_chroma_weight_coeffs(const NlmParams &p) {
  return weight_coeffs(p, double(nlm_chroma_strength(p)), 2.0);
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

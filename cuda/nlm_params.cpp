#include <cudafilters/nlm_params.h>

#include <cmath>

namespace cudafilters {

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
  if (!(p.h > 0.f)) return "strength must be positive";
  if (!(p.noise_sigma >= 0.f)) return "noise-sigma must not be negative";
  return {};
}

NlmWeightCoeffs nlm_weight_coeffs(const NlmParams &p) {
  const double log2e = 1.4426950408889634;
  const double k = log2e / (double(p.h) * p.h);
  // Box: S is a sum over patch_size^2 pixels; Gaussian: S is already a mean.
  const double inv_norm = p.gaussian ? 1.0 : 1.0 / (double(p.patch_size) * p.patch_size);
  return NlmWeightCoeffs{float(-k * inv_norm),
                         float(2.0 * double(p.noise_sigma) * p.noise_sigma * k)};
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

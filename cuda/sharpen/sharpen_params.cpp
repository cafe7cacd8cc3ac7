#include <cudafilters/sharpen_params.h>

#include "sharpen_taps.h"

#include <cmath>
#include <sstream>

namespace cudafilters {

std::string sharpen_params_error(const SharpenParams &p) {
  std::ostringstream why;
  if (p.kernel != SharpenKernel::kUnsharp && p.kernel != SharpenKernel::kLaplacian3x3)
    why << "unknown kernel " << static_cast<int>(p.kernel);
  else if (!(p.amount >= 0 && p.amount <= kSharpenMaxAmount))
    why << "amount " << p.amount << " is outside 0.." << kSharpenMaxAmount;
  else if (!(p.radius >= kSharpenMinRadius && p.radius <= kSharpenMaxRadius))
    why << "radius " << p.radius << " is outside " << kSharpenMinRadius << ".."
        << kSharpenMaxRadius;
  else if (p.threshold < 0 || p.threshold > kSharpenMaxThreshold)
    why << "threshold " << p.threshold << " is outside 0.." << kSharpenMaxThreshold;
  return why.str();
}

std::vector<uint32_t> sharpen_gaussian_taps(double sigma, bool deep) {
  // cvRound rounds halves to even, as nearbyint does in the default mode.
  const int n = static_cast<int>(std::nearbyint(sigma * (deep ? 4 : 3) * 2 + 1)) | 1;
  const double one = double(1u << sharpen_tap_bits(deep));
  const int half = n / 2;

  // The kernel in double, as getGaussianKernelBitExact computes it: x runs
  // over twice the distance from the centre, hence -1/8 instead of -1/2.
  const double scale = -0.125 / (sigma * sigma);
  std::vector<double> side(half);
  double sum = 0;
  for (int i = 0; i < half; ++i) {
    const int x = 1 - n + 2 * i;
    side[i] = std::exp(static_cast<double>(x * x) * scale);
    sum += side[i];
  }
  sum = sum * 2 + 1;
  const double norm = 1 / sum;

  std::vector<uint32_t> taps(n);
  double err = 0;
  int64_t total = 0;
  for (int i = 0; i < half; ++i) {
    const double adjusted = side[i] * norm * one + err;
    const int64_t v = static_cast<int64_t>(std::nearbyint(adjusted));
    err = adjusted - static_cast<double>(v);
    taps[i] = taps[n - 1 - i] = static_cast<uint32_t>(v);
    total += v;
  }
  taps[half] = static_cast<uint32_t>(int64_t(one) - 2 * total);
  return taps;
}

UnsharpWeights unsharp_weights(double amount) {
  return {static_cast<float>(1 + amount), static_cast<float>(-amount)};
}

}  // namespace cudafilters

#include "noise_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace cudafilters {

namespace {

// E|L| = 6 sigma sqrt(2 / pi) for L = Immerkaer's mask on white noise.
const double kImmerkaerScale = std::sqrt(M_PI / 2) / 6;
// The 90th percentile of |Gx| + |Gy| on white noise of sigma 1: 2.75605... times
// the standard deviation of Gx, sqrt(12) (computed in bench/noise_estimation.py).
constexpr double kFlatGradient = 9.547238325837455;
// The flat selection keeps at least 2% of the pixels.
constexpr double kMinKept = 0.02;

// Levels of row y of `plane`, clamped as the filters read them.
template <typename Word>
void levels_of_row(ConstPlane plane, int y, std::vector<int32_t> &out) {
  const Word *row = reinterpret_cast<const Word *>(plane.data + static_cast<size_t>(y) * plane.stride);
  const SampleLevels levels = sample_levels(plane.samples);
  out.resize(plane.width);
  for (int x = 0; x < plane.width; ++x) out[x] = static_cast<int32_t>(levels.of(row[x]));
}

void levels_of_row(ConstPlane plane, int y, std::vector<int32_t> &out) {
  if (plane.samples.deep())
    levels_of_row<uint16_t>(plane, y, out);
  else
    levels_of_row<uint8_t>(plane, y, out);
}

}  // namespace

void NoiseTable::clear() {
  count_.fill(0);
  abs_laplacian_.fill(0);
  pixels_ = 0;
  bits_ = 0;
}

void NoiseTable::add(ConstPlane plane) {
  if (!plane.samples.valid()) throw std::invalid_argument("noise estimate: invalid sample layout");
  if (bits_ != 0 && bits_ != plane.samples.bits)
    throw std::invalid_argument("noise estimate: planes of different depths in one table");
  bits_ = plane.samples.bits;
  if (plane.width < 3 || plane.height < 3) return;
  // A gradient of G levels falls in bin G / 2^(bits - 8): one 8-bit level.
  const int down = std::max(bits_ - 8, 0), up = std::max(8 - bits_, 0);
  std::vector<int32_t> rows[3];
  levels_of_row(plane, 0, rows[0]);
  levels_of_row(plane, 1, rows[1]);
  for (int y = 1; y + 1 < plane.height; ++y) {
    levels_of_row(plane, y + 1, rows[(y + 1) % 3]);
    const int32_t *a = rows[(y - 1) % 3].data(), *b = rows[y % 3].data(), *c = rows[(y + 1) % 3].data();
    for (int x = 1; x + 1 < plane.width; ++x) {
      const int32_t lap = (a[x - 1] - 2 * a[x] + a[x + 1]) - 2 * (b[x - 1] - 2 * b[x] + b[x + 1]) +
                          (c[x - 1] - 2 * c[x] + c[x + 1]);
      const int32_t gx = (a[x + 1] - a[x - 1]) + 2 * (b[x + 1] - b[x - 1]) + (c[x + 1] - c[x - 1]);
      const int32_t gy = (c[x - 1] - a[x - 1]) + 2 * (c[x] - a[x]) + (c[x + 1] - a[x + 1]);
      const uint32_t g = static_cast<uint32_t>(std::abs(gx) + std::abs(gy));
      const uint32_t bin = std::min<uint32_t>((g >> down) << up, kBins - 1);
      count_[bin] += 1;
      abs_laplacian_[bin] += static_cast<uint32_t>(std::abs(lap));
    }
  }
  pixels_ += static_cast<uint64_t>(plane.width - 2) * (plane.height - 2);
}

double NoiseTable::sigma() const {
  if (pixels_ == 0) return 0.0;
  // Sums of |L| in 8-bit units.
  const double unit = std::ldexp(1.0, 8 - bits_);
  // below_n[j], below_s[j]: pixels and sum of |L| in the bins before bin j.
  std::array<double, kBins + 1> below_n{}, below_s{};
  for (int j = 0; j < kBins; ++j) {
    below_n[j + 1] = below_n[j] + static_cast<double>(count_[j]);
    below_s[j + 1] = below_s[j] + static_cast<double>(abs_laplacian_[j]) * unit;
  }
  const double all = static_cast<double>(pixels_);
  const double min_kept = std::max(std::floor(kMinKept * all), 1.0);
  // The sum of |L| over the n pixels of lowest gradient (the bin that holds
  // the n-th counted in proportion).
  auto sum_of_lowest = [&](double n) {
    int j = static_cast<int>(std::lower_bound(below_n.begin(), below_n.end(), n) - below_n.begin()) - 1;
    j = std::clamp(j, 0, kBins - 1);
    const double f = count_[j] ? (n - below_n[j]) / static_cast<double>(count_[j]) : 0.0;
    return below_s[j] + f * static_cast<double>(abs_laplacian_[j]) * unit;
  };
  // The estimate over the pixels of gradient at most t (8-bit units).
  auto below = [&](double t) {
    const int j = std::min(static_cast<int>(t), kBins - 1);
    const double f = std::min(t - j, 1.0);
    const double n = below_n[j] + f * static_cast<double>(count_[j]);
    if (n < min_kept) return kImmerkaerScale * sum_of_lowest(min_kept) / min_kept;
    return kImmerkaerScale * (below_s[j] + f * static_cast<double>(abs_laplacian_[j]) * unit) / n;
  };
  // From the 90% of lowest gradient, to the fixed point.
  double sigma = kImmerkaerScale * sum_of_lowest(0.9 * all) / (0.9 * all);
  for (int i = 0; i < 50; ++i) {
    const double next = below(kFlatGradient * sigma);
    if (std::abs(next - sigma) <= 1e-4 * std::max(sigma, 1e-6)) return next;
    sigma = next;
  }
  return sigma;
}

double estimate_noise_sigma(ConstPlane plane) {
  NoiseTable table;
  table.add(plane);
  return table.sigma();
}

}  // namespace cudafilters

#include "noise_estimate.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace cudafilters {

namespace {

// Levels of row y of `plane` (every step-th sample), clamped as the filters
// read them.
template <typename Word>
void levels_of_row(ConstPlane plane, int step, int y, std::vector<int32_t> &out) {
  const Word *row = reinterpret_cast<const Word *>(plane.data + static_cast<size_t>(y) * plane.stride);
  const SampleLevels levels = sample_levels(plane.samples);
  out.resize(plane.width);
  for (int x = 0; x < plane.width; ++x) out[x] = static_cast<int32_t>(levels.of(row[size_t(x) * step]));
}

void levels_of_row(ConstPlane plane, int step, int y, std::vector<int32_t> &out) {
  if (plane.samples.deep())
    levels_of_row<uint16_t>(plane, step, y, out);
  else
    levels_of_row<uint8_t>(plane, step, y, out);
}

// Calls pixel(bin, |L|, sum of the 3x3 neighbourhood) for every interior
// pixel of `plane` in the rows noise_row_step samples, in the planes'
// levels; returns how many. The depth is checked by the caller.
template <typename Pixel>
uint64_t for_each_noise_pixel(ConstPlane plane, int step, int bits, const Pixel &pixel) {
  if (plane.width < 3 || plane.height < 3) return 0;
  // A gradient of G levels falls in bin G / 2^(bits - 8): one 8-bit level.
  const int down = std::max(bits - 8, 0), up = std::max(8 - bits, 0);
  const int row_step = noise_row_step(plane.width, plane.height);
  const int sampled = noise_rows_sampled(plane.height, row_step);
  // rows[k] holds plane row held[k]: rows read one after the other (a step
  // of 1) reuse two of the three, so each row is converted once.
  std::vector<int32_t> rows[3];
  int held[3] = {-1, -1, -1};
  auto row = [&](int y) -> const int32_t * {
    for (int k = 0; k < 3; ++k)
      if (held[k] == y) return rows[k].data();
    int oldest = 0;
    for (int k = 1; k < 3; ++k)
      if (held[k] < held[oldest]) oldest = k;
    levels_of_row(plane, step, y, rows[oldest]);
    held[oldest] = y;
    return rows[oldest].data();
  };
  for (int j = 0; j < sampled; ++j) {
    const int y = j * row_step;
    const int32_t *a = row(y), *b = row(y + 1), *c = row(y + 2);
    for (int x = 1; x + 1 < plane.width; ++x) {
      const int32_t lap = (a[x - 1] - 2 * a[x] + a[x + 1]) - 2 * (b[x - 1] - 2 * b[x] + b[x + 1]) +
                          (c[x - 1] - 2 * c[x] + c[x + 1]);
      const int32_t gx = (a[x + 1] - a[x - 1]) + 2 * (b[x + 1] - b[x - 1]) + (c[x + 1] - c[x - 1]);
      const int32_t gy = (c[x - 1] - a[x - 1]) + 2 * (c[x] - a[x]) + (c[x + 1] - a[x + 1]);
      const uint32_t g = static_cast<uint32_t>(std::abs(gx) + std::abs(gy));
      const uint32_t sum9 = static_cast<uint32_t>(a[x - 1] + a[x] + a[x + 1] + b[x - 1] + b[x] +
                                                  b[x + 1] + c[x - 1] + c[x] + c[x + 1]);
      pixel(std::min<uint32_t>((g >> down) << up, kNoiseBins - 1),
            static_cast<uint32_t>(std::abs(lap)), sum9);
    }
  }
  return static_cast<uint64_t>(plane.width - 2) * sampled;
}

// Checks a plane and its step for a table of depth `bits` (0: none yet).
void check_noise_plane(ConstPlane plane, int step, int bits) {
  if (!plane.samples.valid()) throw std::invalid_argument("noise estimate: invalid sample layout");
  if (step < 1) throw std::invalid_argument("noise estimate: step must be at least 1");
  if (bits != 0 && bits != plane.samples.bits)
    throw std::invalid_argument("noise estimate: planes of different depths in one table");
}

// The estimate of one table, from its bins.
double sigma_of_bins(const uint64_t *count, const uint64_t *abs_laplacian, int bits) {
  std::array<uint64_t, kNoiseBins + 1> below_n{}, below_l{};
  for (int j = 0; j < kNoiseBins; ++j) {
    below_n[j + 1] = below_n[j] + count[j];
    below_l[j + 1] = below_l[j] + abs_laplacian[j];
  }
  return noise_sigma_of_prefix(below_n.data(), below_l.data(), bits);
}

}  // namespace

void NoiseTable::clear() {
  count_.fill(0);
  abs_laplacian_.fill(0);
  pixels_ = 0;
  bits_ = 0;
}

void NoiseTable::add(ConstPlane plane, int step) {
  check_noise_plane(plane, step, bits_);
  bits_ = plane.samples.bits;
  pixels_ += for_each_noise_pixel(plane, step, bits_, [&](uint32_t bin, uint32_t abs_lap, uint32_t) {
    count_[bin] += 1;
    abs_laplacian_[bin] += abs_lap;
  });
}

double NoiseTable::sigma() const { return sigma_of_bins(count_.data(), abs_laplacian_.data(), bits_); }

double estimate_noise_sigma(ConstPlane plane, int step) {
  NoiseTable table;
  table.add(plane, step);
  return table.sigma();
}

void NoiseCurveTable::add(ConstPlane plane, int step) {
  check_noise_plane(plane, step, bits_);
  bits_ = plane.samples.bits;
  for_each_noise_pixel(plane, step, bits_, [&](uint32_t bin, uint32_t abs_lap, uint32_t sum9) {
    const size_t at = size_t(noise_band(sum9, bits_)) * kBins + bin;
    count_[at] += 1;
    abs_laplacian_[at] += abs_lap;
  });
}

uint64_t NoiseCurveTable::pixels(int band) const {
  if (band < 0 || band >= kNoiseBands) throw std::out_of_range("noise curve: no such band");
  const auto first = count_.begin() + static_cast<std::ptrdiff_t>(band) * kBins;
  uint64_t n = 0;
  for (auto c = first; c != first + kBins; ++c) n += *c;
  return n;
}

double NoiseCurveTable::plane_sigma() const {
  std::array<uint64_t, kBins> count{}, abs_laplacian{};
  for (size_t b = 0; b < size_t(kNoiseBands); ++b)
    for (size_t j = 0; j < size_t(kBins); ++j) {
      count[j] += count_[b * kBins + j];
      abs_laplacian[j] += abs_laplacian_[b * kBins + j];
    }
  return sigma_of_bins(count.data(), abs_laplacian.data(), bits_);
}

std::array<double, kNoiseBands> NoiseCurveTable::sigmas() const {
  std::array<double, kNoiseBands> s{};
  for (int b = 0; b < kNoiseBands; ++b)
    s[b] = pixels(b) < kNoiseBandMinPixels
               ? -1.0
               : sigma_of_bins(&count_[size_t(b) * kBins], &abs_laplacian_[size_t(b) * kBins],
                               bits_);
  return s;
}

}  // namespace cudafilters

#include "noise_estimate.h"
#include "frame_difference.h"

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

// The plane's rows as levels, converted once each: a pixel reads rows up to
// kNoiseCoarseSpacing above and below its own, and the rows read move down
// the plane.
class RowLevels {
 public:
  explicit RowLevels(ConstPlane plane, int step) : plane_(plane), step_(step) {}

  const int32_t *row(int y) {
    for (int k = 0; k < kHeld; ++k)
      if (held_[k] == y) return rows_[k].data();
    int oldest = 0;
    for (int k = 1; k < kHeld; ++k)
      if (held_[k] < held_[oldest]) oldest = k;
    levels_of_row(plane_, step_, y, rows_[oldest]);
    held_[oldest] = y;
    return rows_[oldest].data();
  }

 private:
  static constexpr int kHeld = 2 * kNoiseCoarseSpacing + 1;
  ConstPlane plane_;
  int step_;
  std::vector<int32_t> rows_[kHeld];
  int held_[kHeld] = {-1, -1, -1, -1, -1, -1, -1};
};

// What one pixel adds: its bin and |L| at each scale (coarse_bin ~0u where
// the plane has no coarse samples for it), and the sum of its 3x3
// neighbourhood.
struct NoiseSample {
  uint32_t fine_bin, fine_lap, coarse_bin, coarse_lap, sum9;
};

// Calls pixel(NoiseSample) for every interior pixel of `plane` in the rows
// noise_row_step samples, in the planes' levels. The depth is checked by
// the caller.
template <typename Pixel>
void for_each_noise_pixel(ConstPlane plane, int step, int bits, const Pixel &pixel) {
  if (plane.width < 3 || plane.height < 3) return;
  const int down = std::max(bits - 8, 0), up = std::max(8 - bits, 0);
  const int row_step = noise_row_step(plane.width, plane.height);
  const int sampled = noise_rows_sampled(plane.height, row_step);
  constexpr int s = kNoiseCoarseSpacing;
  RowLevels rows(plane, step);
  for (int j = 0; j < sampled; ++j) {
    const int y = j * row_step + 1;
    const int32_t *a = rows.row(y - 1), *b = rows.row(y), *c = rows.row(y + 1);
    const bool coarse_rows = y >= s && y + s < plane.height;
    const int32_t *ca = coarse_rows ? rows.row(y - s) : nullptr;
    const int32_t *cc = coarse_rows ? rows.row(y + s) : nullptr;
    for (int x = 1; x + 1 < plane.width; ++x) {
      const NoiseMasks fine = noise_masks({a[x - 1], a[x], a[x + 1]}, {b[x - 1], b[x], b[x + 1]},
                                          {c[x - 1], c[x], c[x + 1]});
      NoiseSample p{noise_bin(fine.grad, down, up), fine.abs_lap, ~0u, 0,
                    uint32_t(a[x - 1] + a[x] + a[x + 1] + b[x - 1] + b[x] + b[x + 1] + c[x - 1] +
                             c[x] + c[x + 1])};
      if (coarse_rows && noise_coarse_inside(x, y, plane.width, plane.height)) {
        const NoiseMasks coarse = noise_masks({ca[x - s], ca[x], ca[x + s]},
                                              {b[x - s], b[x], b[x + s]},
                                              {cc[x - s], cc[x], cc[x + s]});
        p.coarse_bin = noise_bin(noise_coarse_gradient(coarse.grad, fine.grad), down, up);
        p.coarse_lap = coarse.abs_lap;
      }
      pixel(p);
    }
  }
}

void add_sample(NoiseBins *scales, const NoiseSample &p) {
  scales[0].count[p.fine_bin] += 1;
  scales[0].abs_laplacian[p.fine_bin] += p.fine_lap;
  if (p.coarse_bin != ~0u) {
    scales[1].count[p.coarse_bin] += 1;
    scales[1].abs_laplacian[p.coarse_bin] += p.coarse_lap;
  }
}

// Checks a plane and its step for a table of depth `bits` (0: none yet).
void check_noise_plane(ConstPlane plane, int step, int bits) {
  if (!plane.samples.valid()) throw std::invalid_argument("noise estimate: invalid sample layout");
  if (step < 1) throw std::invalid_argument("noise estimate: step must be at least 1");
  if (bits != 0 && bits != plane.samples.bits)
    throw std::invalid_argument("noise estimate: planes of different depths in one table");
}

}  // namespace

NoiseReading NoiseBins::reading(int bits) const {
  std::array<uint64_t, kNoiseBins + 1> below_n{}, below_l{};
  for (int j = 0; j < kNoiseBins; ++j) {
    below_n[j + 1] = below_n[j] + count[j];
    below_l[j + 1] = below_l[j] + abs_laplacian[j];
  }
  return noise_reading_of_prefix(below_n.data(), below_l.data(), bits);
}

uint64_t NoiseBins::pixels() const {
  uint64_t n = 0;
  for (uint64_t c : count) n += c;
  return n;
}

namespace {

NoiseReadings readings_of(const NoiseBins *scales, int bits) {
  return NoiseReadings{scales[0].reading(bits), scales[1].reading(bits), scales[0].pixels()};
}

}  // namespace

void NoiseTable::clear() {
  for (NoiseBins &b : scales_) b = NoiseBins{};
  bits_ = 0;
}

void NoiseTable::add(ConstPlane plane, int step) {
  check_noise_plane(plane, step, bits_);
  bits_ = plane.samples.bits;
  for_each_noise_pixel(plane, step, bits_, [&](const NoiseSample &p) { add_sample(scales_, p); });
}

NoiseReadings NoiseTable::readings() const { return readings_of(scales_, bits_); }

FrameNoise frame_noise(const NoiseTable &luma, const NoiseTable *chroma) {
  return frame_noise_of(luma.readings(), chroma != nullptr,
                        chroma ? chroma->readings() : NoiseReadings{});
}

double estimate_noise_sigma(ConstPlane plane, int step) {
  NoiseTable table;
  table.add(plane, step);
  return frame_noise(table, nullptr).luma.sigma;
}

void NoiseCurveTable::add(ConstPlane plane, int step) {
  check_noise_plane(plane, step, bits_);
  bits_ = plane.samples.bits;
  for_each_noise_pixel(plane, step, bits_, [&](const NoiseSample &p) {
    add_sample(&bins_[size_t(noise_band(p.sum9, bits_)) * kNoiseScales], p);
  });
}

uint64_t NoiseCurveTable::pixels(int band) const {
  if (band < 0 || band >= kNoiseBands) throw std::out_of_range("noise curve: no such band");
  return bins_[size_t(band) * kNoiseScales].pixels();
}

NoiseReadings NoiseCurveTable::readings() const {
  NoiseBins all[kNoiseScales];
  for (size_t b = 0; b < size_t(kNoiseBands); ++b)
    for (size_t s = 0; s < size_t(kNoiseScales); ++s)
      for (size_t j = 0; j < size_t(kNoiseBins); ++j) {
        all[s].count[j] += bins_[b * kNoiseScales + s].count[j];
        all[s].abs_laplacian[j] += bins_[b * kNoiseScales + s].abs_laplacian[j];
      }
  return readings_of(all, bits_);
}

std::array<double, kNoiseBands> NoiseCurveTable::sigmas(double correlated) const {
  std::array<double, kNoiseBands> s{};
  for (int b = 0; b < kNoiseBands; ++b) {
    const NoiseReadings r = readings_of(&bins_[size_t(b) * kNoiseScales], bits_);
    s[b] = r.pixels < kNoiseBandMinPixels ? -1.0 : noise_estimate_with(r, correlated).sigma;
  }
  return s;
}

uint64_t difference_medians(ConstPlane frame, ConstPlane other, double *medians) {
  if (frame.width != other.width || frame.height != other.height || frame.samples != other.samples)
    throw std::invalid_argument("frame_difference: the planes differ in size or layout");
  const DifferenceGrid g = difference_grid(frame.width, frame.height);
  if (g.blocks() == 0) return 0;
  constexpr int R = kDifferenceShiftRadius, B = kDifferenceBlock;
  std::vector<uint32_t> table(size_t(kDifferenceShifts) * kDifferenceBins);
  // A row of blocks: its rows of `frame`, and of `other` with R more above
  // and below, as levels.
  std::vector<std::vector<int32_t>> mine(B), theirs(B + 2 * R);
  for (int row = 0; row < g.rows; ++row) {
    const int y = g.y(row);
    for (int j = 0; j < B; ++j) levels_of_row(frame, 1, y + j, mine[j]);
    for (int j = 0; j < B + 2 * R; ++j) levels_of_row(other, 1, y - R + j, theirs[j]);
    for (int bx = 0; bx < g.blocks_x; ++bx) {
      const int x = g.x(bx);
      for (int s = 0; s < kDifferenceShifts; ++s) {
        const int dx = difference_dx(s), dy = difference_dy(s);
        int64_t sum = 0;
        uint64_t squares = 0;
        for (int j = 0; j < B; ++j) {
          const int32_t *a = mine[j].data() + x;
          const int32_t *b = theirs[j + R + dy].data() + x + dx;
          for (int i = 0; i < B; ++i) {
            const int64_t d = a[i] - b[i];
            sum += d;
            squares += uint64_t(d * d);
          }
        }
        ++table[size_t(s) * kDifferenceBins +
                difference_bin(difference_spread(sum, squares), frame.samples.bits)];
      }
    }
  }
  const uint64_t total = uint64_t(g.blocks());
  for (int s = 0; s < kDifferenceShifts; ++s) {
    const uint32_t *t = table.data() + size_t(s) * kDifferenceBins;
    uint64_t below = 0;
    for (int j = 0; j < kDifferenceBins; ++j) {
      if (2 * (below + t[j]) >= total) {
        medians[s] = difference_median(total, j, below, t[j]);
        break;
      }
      below += t[j];
    }
  }
  return total;
}

FrameDifference frame_difference(ConstPlane frame, ConstPlane other) {
  double medians[kDifferenceShifts];
  const uint64_t blocks = difference_medians(frame, other, medians);
  return blocks ? frame_difference_of(medians, blocks) : FrameDifference{};
}

}  // namespace cudafilters

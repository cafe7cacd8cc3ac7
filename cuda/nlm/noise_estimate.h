// A plane's noise: a robust estimate of its standard deviation, in 8-bit
// units (a level of a b-bit plane counts 2^(8-b)), for the filters that set
// their own strength from it and for the statistics messages.
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
// photos ("flat-lap-q90"; studies/noise_estimation.py is its reference).
//
// A camera's noise is not white: demosaicing mixes each pixel's noise into
// its neighbours' (their correlation is about 0.4), and a 3x3 Laplacian sees
// a third to a half of it. NLM's patch distances see all of it (two noisy
// copies of a patch differ by 2 sigma^2 a pixel however the noise is
// correlated). So the estimate is read at two scales: the fine one above,
// and a coarse one whose Laplacian and Sobel masks take samples 3 pixels
// apart, where a camera's noise is no longer correlated (its pixels also
// flat at the fine scale, |G| at most 12 sigma). Texture grows from the fine
// to the coarse scale too, as much on grass as a camera's noise does, so a
// frame's luma takes its coarse reading only as far as its chroma, which
// carries little texture, confirms the noise is correlated (frame_noise_of;
// docs/noise-estimation.md "A camera's noise").
//
// One pass over the plane fills a table per scale, the pixel count and the
// sum of |L| per gradient bin (1024 bins, one 8-bit level each, the last
// taking every larger gradient), in integers of the plane's own levels; the
// estimate is read from the tables' prefix sums alone
// (noise_reading_of_prefix, frame_noise_of), which the CPU and the GPU both
// run. The GPU fills the same tables with the same integers, so both give
// the same estimate, bit for bit.
#pragma once

#include <cudafilters/plane.h>
#include <cudafilters/plane_levels.h>

#include "hd_math.h"

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace cudafilters {

constexpr int kNoiseBins = 1024;
// The fine scale (3x3) and the coarse one (samples kNoiseCoarseSpacing apart).
constexpr int kNoiseScales = 2;
constexpr int kNoiseCoarseSpacing = 3;

// Planes of more than this many interior pixels are read every k-th row,
// k the smallest that keeps the rows read at most this many pixels: the
// sampling spread of the estimate at 2^17 pixels (about 0.4%) is fifty
// times below what the noise bar allows, and a 1080p or 4K plane then costs
// what a 360x360 one does (the two scales' pass reads 17 samples a pixel).
constexpr uint64_t kNoiseSamplePixels = uint64_t(1) << 17;

// The row step for a plane of width x height samples: the pixels of rows 1,
// 1 + k, 1 + 2k, ... above the last row are read (each with its two
// neighbours at the fine scale, and with the rows kNoiseCoarseSpacing above
// and below at the coarse one where the plane has them).
CUDAFILTERS_HD int noise_row_step(int width, int height) {
  if (width < 3 || height < 3) return 1;
  const uint64_t interior = uint64_t(width - 2) * uint64_t(height - 2);
  const uint64_t k = (interior + kNoiseSamplePixels - 1) / kNoiseSamplePixels;
  return int(k < 1 ? 1 : k);
}

// How many rows a plane of `height` rows reads at that step.
CUDAFILTERS_HD int noise_rows_sampled(int height, int row_step) {
  return height < 3 ? 0 : (height - 3) / row_step + 1;
}

// Whether the pixel at (x, y) of a width x height plane has the coarse
// scale's samples.
CUDAFILTERS_HD bool noise_coarse_inside(int x, int y, int width, int height) {
  return x >= kNoiseCoarseSpacing && y >= kNoiseCoarseSpacing && x + kNoiseCoarseSpacing < width &&
         y + kNoiseCoarseSpacing < height;
}

// |L| and the Sobel gradient |Gx| + |Gy| of nine samples, rows a, b, c
// from the top, each from the left.
struct NoiseMasks {
  uint32_t abs_lap;
  uint32_t grad;
};

CUDAFILTERS_HD NoiseMasks noise_masks(const int32_t (&a)[3], const int32_t (&b)[3],
                                      const int32_t (&c)[3]) {
  const int32_t lap = (a[0] - 2 * a[1] + a[2]) - 2 * (b[0] - 2 * b[1] + b[2]) + (c[0] - 2 * c[1] + c[2]);
  const int32_t gx = (a[2] - a[0]) + 2 * (b[2] - b[0]) + (c[2] - c[0]);
  const int32_t gy = (c[0] - a[0]) + 2 * (c[1] - a[1]) + (c[2] - a[2]);
  return NoiseMasks{uint32_t(lap < 0 ? -lap : lap),
                    uint32_t((gx < 0 ? -gx : gx) + (gy < 0 ? -gy : gy))};
}

// The bin of a gradient of g levels of a b-bit plane: one 8-bit level each
// (down = b - 8 or up = 8 - b), the last open.
CUDAFILTERS_HD uint32_t noise_bin(uint32_t g, int down, int up) {
  const uint32_t bin = (g >> down) << up;
  return bin < uint32_t(kNoiseBins - 1) ? bin : uint32_t(kNoiseBins - 1);
}

// The coarse scale's selection: its own gradient, and the fine gradient at
// most 12 sigma (g1 - g1 / 5 is 0.8 g1, which the threshold of 9.55 sigma
// holds to 11.9 sigma).
CUDAFILTERS_HD uint32_t noise_coarse_gradient(uint32_t coarse_grad, uint32_t fine_grad) {
  const uint32_t f = fine_grad - fine_grad / 5;
  return coarse_grad > f ? coarse_grad : f;
}

namespace noise_detail {

// E|L| = 6 sigma sqrt(2 / pi) for L = Immerkaer's mask on white noise:
// sigma = sqrt(pi / 2) / 6 x mean |L|.
constexpr double kImmerkaerScale = 0.20888568955258335;
// The 90th percentile of |Gx| + |Gy| on white noise of sigma 1: 2.75605... times
// the standard deviation of Gx, sqrt(12) (computed in studies/noise_estimation.py).
constexpr double kFlatGradient = 9.547238325837455;
// The flat selection keeps at least 2% of the pixels.
constexpr double kMinKept = 0.02;

CUDAFILTERS_HD double floor_d(double v) {
#ifdef __CUDA_ARCH__
  return floor(v);
#else
  return std::floor(v);
#endif
}

CUDAFILTERS_HD double max_d(double a, double b) { return a > b ? a : b; }
CUDAFILTERS_HD double min_d(double a, double b) { return a < b ? a : b; }

// 2^(8 - bits), exactly.
CUDAFILTERS_HD double level_unit(int bits) {
  return bits >= 8 ? 1.0 / double(1u << (bits - 8)) : double(1u << (8 - bits));
}

}  // namespace noise_detail

// How much of a plane's coarse reading the estimate takes, by its ratio to
// the fine one: none up to `white` (luma: texture on white noise reads at
// most about 1.47 times coarser than finer, hubble_deep_field at sigma 3;
// chroma: 1.35), all of it from `correlated` (a camera's luma noise reads
// 1.7 to 6 times coarser, H.264 taking the most of its fine part; its
// chroma 1.45 to 1.8 times, and more through a codec) up to
// kCorrelatedMaxRatio, none again from kTextureRatio on (a pattern at the
// coarse scale's own period, such as stripes 6 pixels wide, reads 10 times
// and more); in proportion between. A coarse reading from fewer than
// kMinCoarseKept of its pixels is texture too. docs/noise-estimation.md
// "A camera's noise" measured them on the calibration photos.
struct NoiseRatios {
  double white;
  double correlated;
};

CUDAFILTERS_HD NoiseRatios luma_noise_ratios() { return NoiseRatios{1.5, 1.7}; }
CUDAFILTERS_HD NoiseRatios chroma_noise_ratios() { return NoiseRatios{1.35, 1.45}; }

constexpr double kCorrelatedMaxRatio = 6.0;
constexpr double kTextureRatio = 10.0;
constexpr double kMinCoarseKept = 0.05;

// One scale's reading: the estimate, and the share of the table's pixels
// its flat selection kept.
struct NoiseReading {
  double sigma = 0.0;
  double kept = 0.0;
};

// One scale's reading in 8-bit units from its table's prefix sums: below_n[j]
// and below_l[j] are the pixel count and the sum of |L| (in the plane's
// levels) of bins 0..j-1, for j = 0..kNoiseBins; `bits` the planes' depth.
// 0 for an empty table. Every double operation is rounded on its own, so
// the CPU and the GPU compute the same value. The counts are 32-bit where
// the GPU reads them (a table counts fewer than 2^32 pixels: the pass
// samples about 2^17 a plane), so that two tables' prefix sums fit the
// shared memory of every device (64 KB on compute capability 7.5).
template <typename Count>
CUDAFILTERS_HD NoiseReading noise_reading_of_prefix(const Count *below_n, const uint64_t *below_l,
                                                    int bits) {
  using namespace noise_detail;
  const uint64_t pixels = below_n[kNoiseBins];
  if (pixels == 0) return NoiseReading{};
  const double unit = level_unit(bits);
  const double all = to_double(pixels);
  const double min_kept = max_d(floor_d(dmul_rn(kMinKept, all)), 1.0);
  auto count = [&](int j) { return to_double(below_n[j + 1] - below_n[j]); };
  auto lsum = [&](int j) { return dmul_rn(to_double(below_l[j + 1] - below_l[j]), unit); };
  auto lsum_below = [&](int j) { return dmul_rn(to_double(below_l[j]), unit); };
  // The sum of |L| over the n pixels of lowest gradient (the bin that holds
  // the n-th counted in proportion).
  auto sum_of_lowest = [&](double n) {
    // The first j with below_n[j] >= n, less one.
    int lo = 0, hi = kNoiseBins + 1;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (to_double(below_n[mid]) < n)
        lo = mid + 1;
      else
        hi = mid;
    }
    int j = lo - 1;
    j = j < 0 ? 0 : j > kNoiseBins - 1 ? kNoiseBins - 1 : j;
    const double c = count(j);
    const double f = c != 0.0 ? ddiv_rn(dsub_rn(n, to_double(below_n[j])), c) : 0.0;
    return dadd_rn(lsum_below(j), dmul_rn(f, lsum(j)));
  };
  // The reading over the pixels of gradient at most t (8-bit units).
  auto below = [&](double t) {
    const int j = t < double(kNoiseBins - 1) ? int(t) : kNoiseBins - 1;
    const double f = min_d(dsub_rn(t, double(j)), 1.0);
    const double n = dadd_rn(to_double(below_n[j]), dmul_rn(f, count(j)));
    if (n < min_kept)
      return NoiseReading{ddiv_rn(dmul_rn(kImmerkaerScale, sum_of_lowest(min_kept)), min_kept),
                          ddiv_rn(min_kept, all)};
    return NoiseReading{
        ddiv_rn(dmul_rn(kImmerkaerScale, dadd_rn(lsum_below(j), dmul_rn(f, lsum(j)))), n),
        ddiv_rn(n, all)};
  };
  // From the 90% of lowest gradient, to the fixed point.
  const double start = dmul_rn(0.9, all);
  NoiseReading r{ddiv_rn(dmul_rn(kImmerkaerScale, sum_of_lowest(start)), start), 0.9};
  for (int i = 0; i < 50; ++i) {
    const NoiseReading next = below(dmul_rn(kFlatGradient, r.sigma));
    const double moved = next.sigma > r.sigma ? dsub_rn(next.sigma, r.sigma)
                                              : dsub_rn(r.sigma, next.sigma);
    r = next;
    if (moved <= dmul_rn(1e-4, max_d(r.sigma, 1e-6))) break;
  }
  return r;
}

// Both scales' readings of one set of planes (a table), and how many pixels
// the fine one counted.
struct NoiseReadings {
  NoiseReading fine, coarse;
  uint64_t pixels = 0;
};

// The share of the coarse reading by the ratio rule above; `texture_cut`
// takes none from kTextureRatio on.
CUDAFILTERS_HD double noise_coarse_share(NoiseReadings r, NoiseRatios ratios, bool texture_cut) {
  if (r.fine.sigma <= 0.0 || r.coarse.sigma <= 0.0 || r.coarse.kept < kMinCoarseKept) return 0.0;
  const double ratio = ddiv_rn(r.coarse.sigma, r.fine.sigma);
  if (ratio <= ratios.white) return 0.0;
  if (ratio < ratios.correlated)
    return ddiv_rn(dsub_rn(ratio, ratios.white), dsub_rn(ratios.correlated, ratios.white));
  if (!texture_cut || ratio <= kCorrelatedMaxRatio) return 1.0;
  if (ratio >= kTextureRatio) return 0.0;
  return ddiv_rn(dsub_rn(kTextureRatio, ratio), dsub_rn(kTextureRatio, kCorrelatedMaxRatio));
}

// An estimate, and how much of it is the coarse reading: 0 for noise read
// as white, 1 for noise read as correlated (a camera's). NLM weighs
// correlated noise with factors of its own (nlm_auto.h).
struct NoiseEstimate {
  double sigma = 0.0;
  double correlated = 0.0;
};

CUDAFILTERS_HD NoiseEstimate noise_estimate_with(NoiseReadings r, double share) {
  return NoiseEstimate{
      share > 0.0 ? dadd_rn(r.fine.sigma, dmul_rn(share, dsub_rn(r.coarse.sigma, r.fine.sigma)))
                  : r.fine.sigma,
      share};
}

// A frame's noise: luma's and chroma's estimates.
struct FrameNoise {
  NoiseEstimate luma, chroma;
};

// The estimates of a frame from its luma readings and, where it has chroma
// (has_chroma), its chroma's (U and V together). Texture grows from the
// fine to the coarse scale as a camera's noise does, and a textured luma
// (grass) can read as much coarser as a camera's: luma takes its coarse
// reading only as far as the frame's chroma, which carries little texture,
// confirms that the noise is correlated. A frame without chroma gives no
// such sign: its luma is read at the fine scale. Chroma takes its own.
CUDAFILTERS_HD FrameNoise frame_noise_of(NoiseReadings luma, bool has_chroma,
                                         NoiseReadings chroma) {
  FrameNoise f;
  double share = 0.0;
  if (has_chroma) {
    const double luma_share = noise_coarse_share(luma, luma_noise_ratios(), true);
    const double confirmed = noise_coarse_share(chroma, chroma_noise_ratios(), false);
    share = luma_share < confirmed ? luma_share : confirmed;
    f.chroma = noise_estimate_with(chroma, noise_coarse_share(chroma, chroma_noise_ratios(), true));
  }
  f.luma = noise_estimate_with(luma, share);
  return f;
}

// The noise level function: the same estimate in kNoiseBands bands of
// brightness, a pixel's band the mean of its 3x3 neighbourhood (the
// samples the estimate reads anyway), in eighths of the plane's range.
// Camera noise grows with the light and a transfer curve reshapes it, so
// one sigma for the frame is wrong somewhere (docs/noise-estimation.md).
constexpr int kNoiseBands = kNoiseCurveBands;
// A band with fewer pixels than this gives no estimate (-1).
constexpr uint64_t kNoiseBandMinPixels = 1024;

// The band of a pixel whose 3x3 neighbourhood sums to sum9 levels of a
// b-bit plane.
CUDAFILTERS_HD int noise_band(uint32_t sum9, int bits) {
  const uint64_t band = uint64_t(sum9) * kNoiseBands / (uint64_t(9) << bits);
  return band < uint64_t(kNoiseBands) ? int(band) : kNoiseBands - 1;
}

// The estimate followed over a stream: m(n) = s m(n-1) + (1 - s) e(n), s the
// weight of the past, started afresh (m = e) at the first frame and after a
// restart (a seek, a gap, new caps: the rules of temporal-smoothing).
struct NoiseAverage {
  double mean = 0.0;
  int started = 0;
};

CUDAFILTERS_HD double follow_noise(NoiseAverage &avg, double estimate, double past_weight) {
  avg.mean = avg.started ? dadd_rn(dmul_rn(past_weight, avg.mean),
                                   dmul_rn(dsub_rn(1.0, past_weight), estimate))
                         : estimate;
  avg.started = 1;
  return avg.mean;
}

#ifndef __CUDACC__

// One scale's bins: pixel count and sum of |L| (in the plane's levels) per
// gradient bin.
struct NoiseBins {
  std::array<uint64_t, kNoiseBins> count{};
  std::array<uint64_t, kNoiseBins> abs_laplacian{};

  NoiseReading reading(int bits) const;
  uint64_t pixels() const;
};

class NoiseTable {
 public:
  // Adds the interior pixels of `plane` (host memory, any layout): every
  // pixel with a whole 3x3 neighbourhood, in the rows noise_row_step
  // samples, pixels `step` samples apart (2 for one channel of interleaved
  // chroma), to the fine scale's bins, and those with the coarse scale's
  // samples (noise_coarse_inside) to its bins too. Planes of different
  // depths do not mix (std::invalid_argument).
  void add(ConstPlane plane, int step = 1);
  void clear();

  NoiseReadings readings() const;
  uint64_t pixels() const { return scales_[0].pixels(); }

 private:
  NoiseBins scales_[kNoiseScales];  // fine, coarse
  int bits_ = 0;  // of the planes added; 0 before the first
};

// A frame's noise from the tables of its luma and its chroma (null: a frame
// without chroma), as frame_noise_of reads them.
FrameNoise frame_noise(const NoiseTable &luma, const NoiseTable *chroma);

// The estimate of one plane, a frame's luma without chroma (read at the
// fine scale: see frame_noise_of), in 8-bit units; 0 without interior
// pixels.
double estimate_noise_sigma(ConstPlane plane, int step = 1);

// Both scales' bins per band of brightness (kNoiseBands), filled from the
// same pixels as NoiseTable: the noise level function of the luma planes
// added.
class NoiseCurveTable {
 public:
  // As NoiseTable::add.
  void add(ConstPlane plane, int step = 1);

  // The estimate of each band in 8-bit units with `correlated` of its
  // coarse reading (the frame's luma share, FrameNoise), bands of fewer
  // than kNoiseBandMinPixels pixels -1.
  std::array<double, kNoiseBands> sigmas(double correlated) const;
  // The bands together: NoiseTable's readings of the same planes, exactly.
  NoiseReadings readings() const;
  uint64_t pixels(int band) const;

 private:
  // Band b's scale s at bins_[b * kNoiseScales + s] (256 KB together: on
  // the heap, not on a streaming thread's stack).
  std::vector<NoiseBins> bins_ = std::vector<NoiseBins>(size_t(kNoiseBands) * kNoiseScales);
  int bits_ = 0;
};

#endif

struct NoiseTableGpu;

// The same estimate on the GPU, for a frame's luma (table 0) and chroma
// (table 1, the two channels together): add() names a device plane,
// estimate() reads the planes added (in one pass: up to four per launch)
// and the tables into sigmas() (device doubles: luma's, confirmed by
// chroma's where there is a table 1, as frame_noise_of reads them; then
// chroma's) and correlated() (a device double: luma's share of its coarse
// reading), and clears the tables for the next frame. Everything runs on the stream given to
// estimate() (add() takes the same one, for the rare frame of more than
// four planes); nothing waits for the host. The planes must stay valid
// until then.
class NoiseEstimatorGpu {
 public:
  static constexpr int kMaxTables = 2;

  // Allocates in the current context.
  NoiseEstimatorGpu();
  ~NoiseEstimatorGpu();
  NoiseEstimatorGpu(NoiseEstimatorGpu &&) noexcept;
  NoiseEstimatorGpu &operator=(NoiseEstimatorGpu &&) noexcept;

  // Planes of one table share a depth (std::invalid_argument otherwise).
  void add(int table, ConstPlane plane, int step, cudaStream_t stream);
  // Estimates luma (tables 1) or luma and chroma (tables 2); a table
  // nothing was added to reads 0.
  void estimate(int tables, cudaStream_t stream);
  const double *sigmas() const;
  const double *correlated() const;

  // Instead of estimate(): queues the pass over the planes added and hands
  // the tables to a kernel of the caller's, next on the stream, which must
  // read every table it was given with read_noise_tables (noise_table.cuh),
  // and so clear it.
  struct Tables {
    NoiseTableGpu *tables;
    int bits[kMaxTables];
  };
  Tables fill(cudaStream_t stream);

 private:
  void launch_pass(cudaStream_t stream);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The noise level function of one device plane on the GPU, the same as
// NoiseCurveTable's bit for bit: estimate() queues the pass and the reading
// on `stream`, after which sigmas() holds kNoiseBands device doubles (-1 for
// bands of fewer than kNoiseBandMinPixels pixels). Nothing waits for the
// host; the plane must stay valid until the stream has run it.
class NoiseCurveGpu {
 public:
  // Allocates in the current context. A band's tables take 24 KB of shared
  // memory: all eight bands are counted in one pass where a block may have
  // 192 KB, else four or two a pass; `bands_per_pass` (8, 4 or 2) chooses,
  // for tests.
  explicit NoiseCurveGpu(int bands_per_pass = 0);
  ~NoiseCurveGpu();
  NoiseCurveGpu(NoiseCurveGpu &&) noexcept;
  NoiseCurveGpu &operator=(NoiseCurveGpu &&) noexcept;

  // `step` as NoiseTable::add (2 for one channel of interleaved chroma);
  // the bands take `correlated` (a device double, NoiseEstimatorGpu's; null
  // for none) of their coarse readings.
  void estimate(ConstPlane plane, int step, cudaStream_t stream,
                const double *correlated = nullptr);
  const double *sigmas() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

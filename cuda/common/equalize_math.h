// The arithmetic of histogram equalization shared by the CPU paths and the
// kernels: OpenCV's rules for the equalization LUT (cv::equalizeHist) and
// for CLAHE's clipped tile LUTs and their bilinear blend (cv::CLAHE), and
// the fixed-point histograms that temporal smoothing blends over frames.
// docs/cudahisteq.md and docs/cudaclahe.md state the same rules in words.
// Private to the engine library and its tests.
#pragma once

#include <cudafilters/plane.h>

#include "clahe_geometry.h"
#include "hd_math.h"

#include <cstdint>

namespace cudafilters {

// ---------------------------------------------------------------------------
// Deep samples (SampleLayout): the level a 16-bit word holds, (word >> shift)
// clamped to max_level = 2^bits - 1, and its bin among 256 coarse bins (the
// top 8 of `bits` bits) for statistics.

CUDAFILTERS_HD uint32_t sample_level(uint32_t word, int shift, uint32_t max_level) {
  const uint32_t v = word >> shift;
  return v > max_level ? max_level : v;
}

CUDAFILTERS_HD uint32_t coarse_bin(uint32_t level, int bits) {
  return bits >= 8 ? level >> (bits - 8) : level << (8 - bits);
}

// ---------------------------------------------------------------------------
// Temporal smoothing. A smoothed histogram holds each bin in units of
// 2^-16 pixel (48.16 fixed point), so blending is exact integer arithmetic:
// CPU and GPU agree bit for bit, and a histogram of whole counts (a fresh
// history) gives exactly the single-frame result.

constexpr int kHistoryFracBits = 16;
constexpr uint32_t kHistoryOne = 1u << kHistoryFracBits;
// Converts a fixed-point quantity to pixels, exactly (a power of two).
constexpr float kHistoryUnit = 1.f / kHistoryOne;

// The weight on the past, temporal-smoothing in [0, 1], in 1/65536 units.
inline uint32_t history_weight(double smoothing) {
  const double w = smoothing * kHistoryOne + 0.5;
  return w <= 0 ? 0u : w >= kHistoryOne ? kHistoryOne : static_cast<uint32_t>(w);
}

// One bin of the exponential moving average: w/65536 of the past, the rest
// from this frame's count, rounded to the nearest unit (halves up). Stays
// below 2^62 for counts up to 2^30.
CUDAFILTERS_HD uint64_t smoothed_bin(uint64_t past, uint32_t count, uint32_t weight) {
  const uint64_t now = static_cast<uint64_t>(count) << kHistoryFracBits;
  return (weight * past + (kHistoryOne - weight) * now + (kHistoryOne >> 1)) >> kHistoryFracBits;
}

// A bin as the next frame's history starts it.
CUDAFILTERS_HD uint64_t fresh_bin(uint32_t count) {
  return static_cast<uint64_t>(count) << kHistoryFracBits;
}

// How a frame's histograms meet the history of earlier frames.
enum class HistoryMode : int {
  kOff,    // smoothing off: the frame on its own
  kFresh,  // a new history starts at this frame's counts
  kBlend,  // blended with the past
};

// The histograms a history holds: a new shape (frame size or tile grid)
// starts a new history.
struct HistoryShape {
  int width = 0, height = 0, tiles_x = 1, tiles_y = 1;
  uint32_t levels = kHistBins;
  bool operator==(const HistoryShape &o) const {
    return width == o.width && height == o.height && tiles_x == o.tiles_x &&
           tiles_y == o.tiles_y && levels == o.levels;
  }

  // One histogram of `levels` bins over a width x height frame (global
  // equalization).
  static HistoryShape frame(int width, int height, uint32_t levels) {
    HistoryShape s;
    s.width = width;
    s.height = height;
    s.levels = levels;
    return s;
  }
  // The tile histograms of a CLAHE frame cut as g.
  static HistoryShape tiles(const ClaheGeometry &g) {
    HistoryShape s = frame(g.width, g.height, g.levels);
    s.tiles_x = g.tiles_x;
    s.tiles_y = g.tiles_y;
    return s;
  }
};

// When a history carries over from frame to frame, for every engine (CPU
// and GPU) that smooths: off while the weight is 0; restarted on request
// (new caps, a seek, a gap, a failed frame), on a new shape, and when
// smoothing is turned on again.
class TemporalHistory {
 public:
  // temporal-smoothing, 0 (off) to 1; from the next frame.
  void set_smoothing(double smoothing) { weight_ = history_weight(smoothing); }
  uint32_t weight() const { return weight_; }
  void restart() { fresh_ = true; }

  // How the next frame, of histograms of `shape`, uses the history.
  HistoryMode next_frame(const HistoryShape &shape) {
    if (weight_ == 0) {
      fresh_ = true;
      return HistoryMode::kOff;
    }
    const bool fresh = fresh_ || !(shape == shape_);
    fresh_ = false;
    shape_ = shape;
    return fresh ? HistoryMode::kFresh : HistoryMode::kBlend;
  }

 private:
  uint32_t weight_ = 0;
  bool fresh_ = true;
  HistoryShape shape_;
};

// One bin of the next history: this frame's count blended with the past as
// `mode` says (not kOff).
CUDAFILTERS_HD uint64_t next_history_bin(HistoryMode mode, uint64_t past, uint32_t count,
                                         uint32_t weight) {
  return mode == HistoryMode::kFresh ? fresh_bin(count) : smoothed_bin(past, count, weight);
}

// ---------------------------------------------------------------------------
// Global equalization (cv::equalizeHist), on counts of any fixed point.
// `first` is the first occupied bin, `first_count` its count, `total` the
// histogram's sum, `cdf` the inclusive running sum at `bin`; all in the same
// unit, `unit` the size of one pixel in floats (1 for plain counts).

CUDAFILTERS_HD uint32_t equalized_level_of(int bin, int first, uint64_t first_count,
                                           uint64_t total, uint64_t cdf, float unit,
                                           uint32_t max_level) {
  // A one-level frame maps to itself.
  if (first_count == total) return static_cast<uint32_t>(bin);
  if (bin <= first) return 0;
  // OpenCV: scale = 255.f / (float)(N - h0); lut = round(sum * scale), sum
  // excluding the first level; 2^b - 1 in place of 255 for b-bit levels.
  // Scaling by a power of two (unit) commutes with the rounding of each
  // conversion.
  const float scale =
      div_rn(static_cast<float>(max_level), mul_rn(to_float_rn(total - first_count), unit));
  const int level = round_even(mul_rn(mul_rn(to_float_rn(cdf - first_count), unit), scale));
  return level < 0 ? 0u : static_cast<uint32_t>(level) > max_level ? max_level
                                                                    : static_cast<uint32_t>(level);
}

CUDAFILTERS_HD uint8_t equalized_level(int bin, int first, uint64_t first_count, uint64_t total,
                                       uint64_t cdf, float unit) {
  return static_cast<uint8_t>(equalized_level_of(bin, first, first_count, total, cdf, unit, 255));
}

// ---------------------------------------------------------------------------
// CLAHE (cv::createCLAHE(clip, grid)->apply()).

// After clipping, `residual` (fewer than `levels`) left-over pixels go one
// each to bins 0, step, 2 step, ... with step = max(levels / residual, 1).
CUDAFILTERS_HD uint32_t residual_share(uint32_t bin, uint32_t residual,
                                       uint32_t levels = kHistBins) {
  if (residual == 0) return 0;
  const uint32_t step = levels / residual > 1 ? levels / residual : 1;
  return (bin % step == 0 && bin / step < residual) ? 1u : 0u;
}

// Clipping a tile histogram held in fixed point with `frac_bits` fraction
// bits (0 for plain counts). `limit` is OpenCV's per-tile clip value in the
// same unit (0: no clipping). Counts above it are cut, and the whole pixels
// cut from the tile (`excess`, summed over its bins by clahe_excess) are
// spread evenly, the remainder stepped across the bins (residual_share); a
// fraction of a pixel left over is dropped.
template <typename Count>
CUDAFILTERS_HD Count clahe_excess(Count count, Count limit) {
  return limit != 0 && count > limit ? count - limit : 0;
}

CUDAFILTERS_HD uint64_t clahe_clipped_bin(uint64_t count, uint32_t bin, uint64_t limit,
                                          uint64_t excess, int frac_bits,
                                          uint32_t levels = kHistBins) {
  if (limit == 0) return count;
  const uint64_t kept = count > limit ? limit : count;
  const uint64_t whole = excess >> frac_bits;
  const uint64_t share =
      whole / levels + residual_share(bin, static_cast<uint32_t>(whole % levels), levels);
  return kept + (share << frac_bits);
}

// A tile's LUT entry from the running sum of its clipped histogram (in
// pixels times `unit`): round(sum * (levels - 1) / tile area), saturated to
// max_level as OpenCV's saturate_cast saturates to its type.
CUDAFILTERS_HD uint32_t clahe_lut_value(uint64_t cdf, float unit, float lut_scale,
                                        uint32_t max_level) {
  const int v = round_even(mul_rn(mul_rn(to_float_rn(cdf), unit), lut_scale));
  return v < 0 ? 0u : static_cast<uint32_t>(v) > max_level ? max_level : static_cast<uint32_t>(v);
}

// The same for whole counts below 2^32 (a tile without smoothing): one
// pixel is 1, and a 32-bit conversion gives the same float.
CUDAFILTERS_HD uint32_t clahe_lut_value(uint32_t cdf, float lut_scale, uint32_t max_level) {
  const int v = round_even(mul_rn(to_float_rn(cdf), lut_scale));
  return v < 0 ? 0u : static_cast<uint32_t>(v) > max_level ? max_level : static_cast<uint32_t>(v);
}

CUDAFILTERS_HD uint8_t clahe_lut_level(uint64_t cdf, float unit, float lut_scale) {
  return static_cast<uint8_t>(clahe_lut_value(cdf, unit, lut_scale, 255));
}

// Where pixel coordinate `x` falls between tile centres: the two tiles to
// blend (clamped to the grid) and the weight of the second. OpenCV's float
// arithmetic: t = x * (1 / tile) - 0.5, lower tile floor(t), weight t - floor.
struct TileBlend {
  int lo, hi;
  float w_hi, w_lo;  // w_lo = 1 - w_hi
};

CUDAFILTERS_HD TileBlend tile_blend(int x, float inv_tile, int tiles) {
  const float t = sub_rn(mul_rn(static_cast<float>(x), inv_tile), 0.5f);
  const int lo = floor_to_int(t);
  TileBlend b;
  b.w_hi = sub_rn(t, static_cast<float>(lo));
  b.w_lo = sub_rn(1.f, b.w_hi);
  b.lo = lo < 0 ? 0 : lo;
  b.hi = lo + 1 > tiles - 1 ? tiles - 1 : lo + 1;
  return b;
}

// The bilinear blend of the four tile LUT entries, in OpenCV's order:
// (a * x_lo + b * x_hi) * y_lo + (c * x_lo + d * x_hi) * y_hi, each operation
// rounded to float, then rounded to the nearest level and saturated to
// max_level. The weights are TileBlend's w_lo and w_hi across (x) and down (y).
CUDAFILTERS_HD uint32_t clahe_blend_value(uint32_t top_lo, uint32_t top_hi, uint32_t bottom_lo,
                                          uint32_t bottom_hi, float x_lo, float x_hi,
                                          float y_lo, float y_hi, uint32_t max_level) {
  const float top = add_rn(mul_rn(static_cast<float>(top_lo), x_lo),
                           mul_rn(static_cast<float>(top_hi), x_hi));
  const float bottom = add_rn(mul_rn(static_cast<float>(bottom_lo), x_lo),
                              mul_rn(static_cast<float>(bottom_hi), x_hi));
  const int v = round_even(add_rn(mul_rn(top, y_lo), mul_rn(bottom, y_hi)));
  return v < 0 ? 0u : static_cast<uint32_t>(v) > max_level ? max_level : static_cast<uint32_t>(v);
}

CUDAFILTERS_HD uint8_t clahe_blend(uint8_t top_lo, uint8_t top_hi, uint8_t bottom_lo,
                                   uint8_t bottom_hi, float x_lo, float x_hi, float y_lo,
                                   float y_hi) {
  return static_cast<uint8_t>(
      clahe_blend_value(top_lo, top_hi, bottom_lo, bottom_hi, x_lo, x_hi, y_lo, y_hi, 255));
}

}  // namespace cudafilters

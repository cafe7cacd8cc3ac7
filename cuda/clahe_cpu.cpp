#include "clahe_cpu.h"

#include "thread_pool.h"

#include <algorithm>

namespace cudafilters {

namespace {

// Below this many pixels a frame is not worth splitting across threads.
constexpr int64_t kParallelPixels = 64 * 1024;
// Rows per interpolation task: enough work to amortise the hand-off.
constexpr int kRowsPerTask = 32;

void count_tile(ConstPlane src, const ClaheGeometry &g, int tx, int ty, uint32_t hist[kHistBins]) {
  std::fill(hist, hist + kHistBins, 0u);
  const int x0 = tx * g.tile_width, x1 = x0 + g.tile_width;
  const int y0 = ty * g.tile_height, y1 = y0 + g.tile_height;
  const int inside = std::min(x1, g.width);
  for (int y = y0; y < y1; ++y) {
    const uint8_t *row = src.data + static_cast<size_t>(reflect101(y, g.height)) * src.stride;
    for (int x = x0; x < inside; ++x) ++hist[row[x]];
    for (int x = std::max(x0, g.width); x < x1; ++x) ++hist[row[reflect101(x, g.width)]];
  }
}

// Clips `bins` (fixed point with frac_bits fraction bits), redistributes and
// writes the LUT.
void clipped_lut(const uint64_t bins[kHistBins], const ClaheGeometry &g, int frac_bits,
                 uint8_t lut[kHistBins]) {
  const uint64_t limit = static_cast<uint64_t>(g.clip) << frac_bits;
  uint64_t excess = 0;
  for (int b = 0; b < kHistBins; ++b) excess += clahe_excess(bins[b], limit);
  const float unit = frac_bits ? kHistoryUnit : 1.f;
  uint64_t cdf = 0;
  for (int b = 0; b < kHistBins; ++b) {
    cdf += clahe_clipped_bin(bins[b], b, limit, excess, frac_bits);
    lut[b] = clahe_lut_level(cdf, unit, g.lut_scale);
  }
}

}  // namespace

void ClaheCpu::prepare(int width, int height) {
  const ClaheGeometry g = clahe_geometry(width, height, params_);
  if (g.width != geom_.width || g.height != geom_.height || g.tiles_x != geom_.tiles_x ||
      g.tiles_y != geom_.tiles_y) {
    // Other tiles: the history no longer describes them.
    history_fresh_ = true;
    columns_.resize(static_cast<size_t>(width));
    for (int x = 0; x < width; ++x) columns_[x] = tile_blend(x, g.inv_tile_width, g.tiles_x);
  }
  geom_ = g;
  luts_.resize(static_cast<size_t>(g.tiles()) * kHistBins);
  smoothing_now_ = weight_ != 0;
  if (smoothing_now_) history_.resize(static_cast<size_t>(g.tiles()) * kHistBins);
}

void ClaheCpu::build_tile_lut(ConstPlane src, int tile) {
  const ClaheGeometry &g = geom_;
  uint32_t hist[kHistBins];
  count_tile(src, g, tile % g.tiles_x, tile / g.tiles_x, hist);
  uint8_t *lut = &luts_[static_cast<size_t>(tile) * kHistBins];
  uint64_t bins[kHistBins];
  if (!smoothing_now_) {
    for (int b = 0; b < kHistBins; ++b) bins[b] = hist[b];
    clipped_lut(bins, g, 0, lut);
    return;
  }
  uint64_t *past = &history_[static_cast<size_t>(tile) * kHistBins];
  for (int b = 0; b < kHistBins; ++b)
    past[b] = history_fresh_ ? fresh_bin(hist[b]) : smoothed_bin(past[b], hist[b], weight_);
  clipped_lut(past, g, kHistoryFracBits, lut);
}

void ClaheCpu::map_rows(ConstPlane src, Plane dst, int y0, int y1) const {
  const ClaheGeometry &g = geom_;
  const size_t tile_row = static_cast<size_t>(g.tiles_x) * kHistBins;
  for (int y = y0; y < y1; ++y) {
    const TileBlend by = tile_blend(y, g.inv_tile_height, g.tiles_y);
    const uint8_t *top = &luts_[by.lo * tile_row];
    const uint8_t *bottom = &luts_[by.hi * tile_row];
    const uint8_t *in = src.data + static_cast<size_t>(y) * src.stride;
    uint8_t *out = dst.data + static_cast<size_t>(y) * dst.stride;
    for (int x = 0; x < g.width; ++x) {
      const TileBlend &bx = columns_[x];
      const int v = in[x];
      const size_t lo = static_cast<size_t>(bx.lo) * kHistBins + v;
      const size_t hi = static_cast<size_t>(bx.hi) * kHistBins + v;
      out[x] = clahe_blend(top[lo], top[hi], bottom[lo], bottom[hi], bx, by);
    }
  }
}

void ClaheCpu::process(ConstPlane src, Plane dst) {
  prepare(src.width, src.height);
  const bool split = static_cast<int64_t>(src.width) * src.height >= kParallelPixels;

  const int tiles = geom_.tiles();
  if (split) {
    parallel_for(tiles, [&](int t) { build_tile_lut(src, t); });
  } else {
    for (int t = 0; t < tiles; ++t) build_tile_lut(src, t);
  }
  // Off, the history restarts whenever smoothing is turned on again.
  history_fresh_ = !smoothing_now_;

  const int tasks = split ? (src.height + kRowsPerTask - 1) / kRowsPerTask : 1;
  const int rows = split ? kRowsPerTask : src.height;
  parallel_for(tasks, [&](int i) {
    map_rows(src, dst, i * rows, std::min(src.height, (i + 1) * rows));
  });
}

}  // namespace cudafilters

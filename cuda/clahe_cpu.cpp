#include <cudafilters/clahe_cpu.h>

#include "cpu_histogram.h"
#include "thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CUDAFILTERS_HAVE_AVX2_PATH 1
#endif

namespace cudafilters {

namespace {

// Rows per interpolation task: enough work to amortise the hand-off.
constexpr int kRowsPerTask = 32;

void count_tile(ConstPlane src, const ClaheGeometry &g, int tx, int ty, uint32_t hist[kHistBins]) {
  uint32_t sub[4][kHistBins] = {};
  const int x0 = tx * g.tile_width, x1 = x0 + g.tile_width;
  const int y0 = ty * g.tile_height, y1 = y0 + g.tile_height;
  const int inside = std::min(x1, g.width);
  for (int y = y0; y < y1; ++y) {
    const uint8_t *row = src.data + static_cast<size_t>(reflect101(y, g.height)) * src.stride;
    if (inside > x0) count_span(row + x0, inside - x0, sub);
    for (int x = std::max(x0, g.width); x < x1; ++x) ++sub[0][row[reflect101(x, g.width)]];
  }
  for (int b = 0; b < kHistBins; ++b) hist[b] = sub[0][b] + sub[1][b] + sub[2][b] + sub[3][b];
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

// One row of the blend: out[x] from the LUT rows `top` and `bottom` of the
// tile rows above and below, the tile columns' LUT offsets and weights per
// column, and the row's weights.
struct BlendRow {
  const uint8_t *in;
  uint8_t *out;
  int width;
  const int *lo, *hi;
  const float *w_lo, *w_hi;
  const uint8_t *top, *bottom;
  float y_lo, y_hi;
};

void blend_pixels(const BlendRow &r, int from) {
  for (int x = from; x < r.width; ++x) {
    const int v = r.in[x];
    const int l = r.lo[x] + v, h = r.hi[x] + v;
    r.out[x] = clahe_blend(r.top[l], r.top[h], r.bottom[l], r.bottom[h], r.w_lo[x], r.w_hi[x],
                           r.y_lo, r.y_hi);
  }
}

#ifdef CUDAFILTERS_HAVE_AVX2_PATH
// Eight pixels at a time: the four LUT entries by gathers (32-bit loads at
// byte offsets, masked to the byte: the LUTs carry 3 bytes of padding), then
// clahe_blend's float operations in the same order, rounded to nearest even
// explicitly. The rest of the row goes pixel by pixel.
__attribute__((target("avx2"))) inline __m256 lut_entries(const int *lut, __m256i at) {
  return _mm256_cvtepi32_ps(
      _mm256_and_si256(_mm256_i32gather_epi32(lut, at, 1), _mm256_set1_epi32(0xFF)));
}

__attribute__((target("avx2"))) void blend_row_avx2(const BlendRow &r) {
  const __m256 y_lo = _mm256_set1_ps(r.y_lo), y_hi = _mm256_set1_ps(r.y_hi);
  const int *top = reinterpret_cast<const int *>(r.top);
  const int *bottom = reinterpret_cast<const int *>(r.bottom);
  int x = 0;
  for (; x + 8 <= r.width; x += 8) {
    const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(r.in + x)));
    const __m256i l = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(r.lo + x)), v);
    const __m256i h = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(r.hi + x)), v);
    const __m256 x_lo = _mm256_loadu_ps(r.w_lo + x), x_hi = _mm256_loadu_ps(r.w_hi + x);
    const __m256 up = _mm256_add_ps(_mm256_mul_ps(lut_entries(top, l), x_lo),
                                    _mm256_mul_ps(lut_entries(top, h), x_hi));
    const __m256 down = _mm256_add_ps(_mm256_mul_ps(lut_entries(bottom, l), x_lo),
                                      _mm256_mul_ps(lut_entries(bottom, h), x_hi));
    const __m256 res = _mm256_add_ps(_mm256_mul_ps(up, y_lo), _mm256_mul_ps(down, y_hi));
    const __m256i level = _mm256_cvttps_epi32(
        _mm256_round_ps(res, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(level),
                                           _mm256_extracti128_si256(level, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i *>(r.out + x), _mm_packus_epi16(words, words));
  }
  blend_pixels(r, x);
}

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

void blend_row(const BlendRow &r) {
#ifdef CUDAFILTERS_HAVE_AVX2_PATH
  if (cpu_has_avx2()) {
    blend_row_avx2(r);
    return;
  }
#endif
  blend_pixels(r, 0);
}

}  // namespace

void ClaheCpu::prepare(int width, int height) {
  const ClaheGeometry g = clahe_geometry(width, height, params_);
  if (g.width != geom_.width || g.height != geom_.height || g.tiles_x != geom_.tiles_x ||
      g.tiles_y != geom_.tiles_y) {
    column_lo_.resize(static_cast<size_t>(width));
    column_hi_.resize(static_cast<size_t>(width));
    column_w_lo_.resize(static_cast<size_t>(width));
    column_w_hi_.resize(static_cast<size_t>(width));
    for (int x = 0; x < width; ++x) {
      const TileBlend b = tile_blend(x, g.inv_tile_width, g.tiles_x);
      column_lo_[x] = b.lo * kHistBins;
      column_hi_[x] = b.hi * kHistBins;
      column_w_lo_[x] = b.w_lo;
      column_w_hi_[x] = b.w_hi;
    }
  }
  geom_ = g;
  // 3 bytes of padding: the vector path reads 4 bytes at each entry.
  luts_.resize(static_cast<size_t>(g.tiles()) * kHistBins + 3);
  HistoryShape shape;
  shape.width = width;
  shape.height = height;
  shape.tiles_x = g.tiles_x;
  shape.tiles_y = g.tiles_y;
  history_mode_ = temporal_.next_frame(shape);
  if (history_mode_ != HistoryMode::kOff)
    history_.resize(static_cast<size_t>(g.tiles()) * kHistBins);
}

void ClaheCpu::build_tile_lut(ConstPlane src, int tile) {
  const ClaheGeometry &g = geom_;
  uint32_t hist[kHistBins];
  count_tile(src, g, tile % g.tiles_x, tile / g.tiles_x, hist);
  uint8_t *lut = &luts_[static_cast<size_t>(tile) * kHistBins];
  uint64_t bins[kHistBins];
  if (history_mode_ == HistoryMode::kOff) {
    for (int b = 0; b < kHistBins; ++b) bins[b] = hist[b];
    clipped_lut(bins, g, 0, lut);
    return;
  }
  uint64_t *past = &history_[static_cast<size_t>(tile) * kHistBins];
  for (int b = 0; b < kHistBins; ++b)
    past[b] = next_history_bin(history_mode_, past[b], hist[b], temporal_.weight());
  clipped_lut(past, g, kHistoryFracBits, lut);
}

void ClaheCpu::map_rows(ConstPlane src, Plane dst, int y0, int y1) const {
  const ClaheGeometry &g = geom_;
  const size_t tile_row = static_cast<size_t>(g.tiles_x) * kHistBins;
  for (int y = y0; y < y1; ++y) {
    const TileBlend by = tile_blend(y, g.inv_tile_height, g.tiles_y);
    blend_row(BlendRow{src.data + static_cast<size_t>(y) * src.stride,
                       dst.data + static_cast<size_t>(y) * dst.stride, g.width, column_lo_.data(),
                       column_hi_.data(), column_w_lo_.data(), column_w_hi_.data(),
                       &luts_[by.lo * tile_row], &luts_[by.hi * tile_row], by.w_lo, by.w_hi});
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

  const int tasks = split ? (src.height + kRowsPerTask - 1) / kRowsPerTask : 1;
  const int rows = split ? kRowsPerTask : src.height;
  parallel_for(tasks, [&](int i) {
    map_rows(src, dst, i * rows, std::min(src.height, (i + 1) * rows));
  });
}

}  // namespace cudafilters

#include <cudafilters/clahe_cpu.h>

#include "cpu_histogram.h"
#include "thread_pool.h"

#include <algorithm>
#include <stdexcept>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CUDAFILTERS_HAVE_AVX2_PATH 1
#endif

namespace cudafilters {

namespace {

// Rows per interpolation task: enough work to amortise the hand-off.
constexpr int kRowsPerTask = 32;

using Levels = SampleLevels;

Levels levels_of(SampleLayout l) { return sample_levels(l); }

template <typename Sample>
const Sample *row_of(ConstPlane p, int y) {
  return reinterpret_cast<const Sample *>(p.data + static_cast<size_t>(y) * p.stride);
}

// hist (g.levels bins, zeroed) = the histogram of tile (tx, ty) of the
// frame extended by reflection (ClaheGeometry).
template <typename Sample>
void count_tile(ConstPlane src, const ClaheGeometry &g, Levels lv, int tx, int ty,
                uint32_t *hist) {
  const int x0 = tx * g.tile_width, x1 = x0 + g.tile_width;
  const int y0 = ty * g.tile_height, y1 = y0 + g.tile_height;
  const int inside = std::min(x1, g.width);
  if constexpr (sizeof(Sample) == 1) {
    uint32_t sub[4][kHistBins] = {};
    for (int y = y0; y < y1; ++y) {
      const uint8_t *row = row_of<uint8_t>(src, reflect101(y, g.height));
      if (inside > x0) count_span(row + x0, inside - x0, sub);
      for (int x = std::max(x0, g.width); x < x1; ++x) ++sub[0][row[reflect101(x, g.width)]];
    }
    for (int b = 0; b < kHistBins; ++b) hist[b] = sub[0][b] + sub[1][b] + sub[2][b] + sub[3][b];
  } else {
    // 2^16 bins spread a tile's increments thinly: one histogram suffices.
    for (int y = y0; y < y1; ++y) {
      const uint16_t *row = row_of<uint16_t>(src, reflect101(y, g.height));
      for (int x = x0; x < inside; ++x) ++hist[lv.of(row[x])];
      for (int x = std::max(x0, g.width); x < x1; ++x) ++hist[lv.of(row[reflect101(x, g.width)])];
    }
  }
}

// Clips `bins` (fixed point with frac_bits fraction bits), redistributes and
// writes the LUT of levels: clahe_clipped_bin and clahe_lut_value bin by
// bin, with the redistribution's divisions taken out of the loop. The bins
// that take one more pixel (residual_share) are stepped to, as OpenCV does,
// rather than found by a division per bin: at 2^16 bins that division was
// most of the CPU's time on 16-bit frames.
template <typename Sample, typename Bin>
void clipped_lut(const Bin *bins, const ClaheGeometry &g, int frac_bits, Sample *lut) {
  const uint32_t levels = g.levels, max_level = levels - 1;
  const uint64_t limit = static_cast<uint64_t>(g.clip) << frac_bits;
  const float unit = frac_bits ? kHistoryUnit : 1.f;
  uint64_t cdf = 0;
  if (limit == 0) {
    for (uint32_t b = 0; b < levels; ++b) {
      cdf += bins[b];
      lut[b] = static_cast<Sample>(clahe_lut_value(cdf, unit, g.lut_scale, max_level));
    }
    return;
  }
  uint64_t excess = 0;
  if constexpr (sizeof(Bin) == 4) {
    // Plain counts: one tile's excess fits 32 bits, and a 32-bit sum
    // vectorises (clahe_excess bin by bin in 64 bits did not).
    const uint32_t lim = static_cast<uint32_t>(limit);
    uint32_t sum = 0;
    for (uint32_t b = 0; b < levels; ++b) sum += std::max(bins[b], lim) - lim;
    excess = sum;
  } else {
    for (uint32_t b = 0; b < levels; ++b) excess += clahe_excess(bins[b], limit);
  }
  const uint64_t whole = excess >> frac_bits;
  const uint64_t even = (whole / levels) << frac_bits;
  const uint32_t residual = static_cast<uint32_t>(whole % levels);
  const uint32_t step = residual ? std::max(levels / residual, 1u) : 0;
  uint32_t next = residual ? 0 : levels;  // the next bin to take a residual pixel
  uint32_t given = 0;
  for (uint32_t b = 0; b < levels; ++b) {
    const uint64_t count = bins[b];
    uint64_t clipped = (count > limit ? limit : count) + even;
    if (b == next) {
      clipped += uint64_t(1) << frac_bits;
      next = ++given < residual ? next + step : levels;
    }
    cdf += clipped;
    lut[b] = static_cast<Sample>(clahe_lut_value(cdf, unit, g.lut_scale, max_level));
  }
}

// One row of the blend: out[x] from the LUT rows `top` and `bottom` of the
// tile rows above and below, the tile columns' LUT offsets and weights per
// column, and the row's weights.
template <typename Sample>
struct BlendRow {
  const Sample *in;
  Sample *out;
  int width;
  const int *lo, *hi;
  const float *w_lo, *w_hi;
  const Sample *top, *bottom;
  float y_lo, y_hi;
  Levels lv;
};

template <typename Sample>
void blend_pixels(const BlendRow<Sample> &r, int from) {
  for (int x = from; x < r.width; ++x) {
    const uint32_t v = r.lv.of(r.in[x]);
    const int l = r.lo[x] + v, h = r.hi[x] + v;
    r.out[x] = static_cast<Sample>(clahe_blend_value(r.top[l], r.top[h], r.bottom[l], r.bottom[h],
                                                     r.w_lo[x], r.w_hi[x], r.y_lo, r.y_hi,
                                                     r.lv.max_level)
                                   << r.lv.shift);
  }
}

#ifdef CUDAFILTERS_HAVE_AVX2_PATH
// Eight pixels at a time: the four LUT entries by gathers (32-bit loads at
// the entries' byte offsets, masked to the entry: the LUTs carry padding
// after their last entry), then clahe_blend_value's float operations in the
// same order, rounded to nearest even explicitly. The rest of the row goes
// pixel by pixel.
template <typename Sample>
__attribute__((target("avx2"))) inline __m256 lut_entries(const int *lut, __m256i at) {
  constexpr int kMask = sizeof(Sample) == 1 ? 0xFF : 0xFFFF;
  return _mm256_cvtepi32_ps(_mm256_and_si256(
      _mm256_i32gather_epi32(lut, at, static_cast<int>(sizeof(Sample))), _mm256_set1_epi32(kMask)));
}

__attribute__((target("avx2"))) inline __m256i load_levels(const uint8_t *in, Levels) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(in)));
}

__attribute__((target("avx2"))) inline __m256i load_levels(const uint16_t *in, Levels lv) {
  const __m256i words =
      _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(in)));
  return _mm256_min_epi32(_mm256_srl_epi32(words, _mm_cvtsi32_si128(lv.shift)),
                          _mm256_set1_epi32(static_cast<int>(lv.max_level)));
}

__attribute__((target("avx2"))) inline void store_levels(uint8_t *out, __m256i level, Levels) {
  const __m128i words =
      _mm_packus_epi32(_mm256_castsi256_si128(level), _mm256_extracti128_si256(level, 1));
  _mm_storel_epi64(reinterpret_cast<__m128i *>(out), _mm_packus_epi16(words, words));
}

__attribute__((target("avx2"))) inline void store_levels(uint16_t *out, __m256i level, Levels lv) {
  const __m256i clamped = _mm256_sll_epi32(
      _mm256_min_epi32(_mm256_max_epi32(level, _mm256_setzero_si256()),
                       _mm256_set1_epi32(static_cast<int>(lv.max_level))),
      _mm_cvtsi32_si128(lv.shift));
  _mm_storeu_si128(reinterpret_cast<__m128i *>(out),
                   _mm_packus_epi32(_mm256_castsi256_si128(clamped),
                                    _mm256_extracti128_si256(clamped, 1)));
}

template <typename Sample>
__attribute__((target("avx2"))) void blend_row_avx2(const BlendRow<Sample> &r) {
  const __m256 y_lo = _mm256_set1_ps(r.y_lo), y_hi = _mm256_set1_ps(r.y_hi);
  const int *top = reinterpret_cast<const int *>(r.top);
  const int *bottom = reinterpret_cast<const int *>(r.bottom);
  int x = 0;
  for (; x + 8 <= r.width; x += 8) {
    const __m256i v = load_levels(r.in + x, r.lv);
    const __m256i l = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(r.lo + x)), v);
    const __m256i h = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(r.hi + x)), v);
    const __m256 x_lo = _mm256_loadu_ps(r.w_lo + x), x_hi = _mm256_loadu_ps(r.w_hi + x);
    const __m256 up = _mm256_add_ps(_mm256_mul_ps(lut_entries<Sample>(top, l), x_lo),
                                    _mm256_mul_ps(lut_entries<Sample>(top, h), x_hi));
    const __m256 down = _mm256_add_ps(_mm256_mul_ps(lut_entries<Sample>(bottom, l), x_lo),
                                      _mm256_mul_ps(lut_entries<Sample>(bottom, h), x_hi));
    const __m256 res = _mm256_add_ps(_mm256_mul_ps(up, y_lo), _mm256_mul_ps(down, y_hi));
    store_levels(r.out + x,
                 _mm256_cvttps_epi32(_mm256_round_ps(res, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)),
                 r.lv);
  }
  blend_pixels(r, x);
}

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

template <typename Sample>
void blend_row(const BlendRow<Sample> &r) {
#ifdef CUDAFILTERS_HAVE_AVX2_PATH
  if (cpu_has_avx2()) {
    blend_row_avx2(r);
    return;
  }
#endif
  blend_pixels(r, 0);
}

// Entries of padding after the last LUT: the vector path reads 4 bytes at
// each entry.
template <typename Sample>
constexpr size_t kLutPadding = 4 / sizeof(Sample) - 1;

}  // namespace

void ClaheCpu::prepare(int width, int height, SampleLayout samples) {
  const ClaheGeometry g =
      clahe_geometry(width, height, params_, samples.deep() ? samples.levels() : kHistBins);
  if (g.width != geom_.width || g.height != geom_.height || g.tiles_x != geom_.tiles_x ||
      g.tiles_y != geom_.tiles_y || g.levels != geom_.levels) {
    column_lo_.resize(static_cast<size_t>(width));
    column_hi_.resize(static_cast<size_t>(width));
    column_w_lo_.resize(static_cast<size_t>(width));
    column_w_hi_.resize(static_cast<size_t>(width));
    for (int x = 0; x < width; ++x) {
      const TileBlend b = tile_blend(x, g.inv_tile_width, g.tiles_x);
      column_lo_[x] = b.lo * static_cast<int>(g.levels);
      column_hi_[x] = b.hi * static_cast<int>(g.levels);
      column_w_lo_[x] = b.w_lo;
      column_w_hi_[x] = b.w_hi;
    }
  }
  geom_ = g;
  samples_ = samples;
  const size_t entries = static_cast<size_t>(g.tiles()) * g.levels;
  if (samples.deep())
    luts16_.resize(entries + kLutPadding<uint16_t>);
  else
    luts_.resize(entries + kLutPadding<uint8_t>);
  HistoryShape shape;
  shape.width = width;
  shape.height = height;
  shape.tiles_x = g.tiles_x;
  shape.tiles_y = g.tiles_y;
  shape.levels = g.levels;
  history_mode_ = temporal_.next_frame(shape);
  if (history_mode_ != HistoryMode::kOff) history_.resize(entries);
}

template <typename Sample>
void ClaheCpu::build_tile_lut(ConstPlane src, int tile) {
  const ClaheGeometry &g = geom_;
  const size_t first = static_cast<size_t>(tile) * g.levels;
  // One histogram per thread, reused from tile to tile: 256 KB at 16 bits.
  thread_local std::vector<uint32_t> hist;
  hist.assign(g.levels, 0);
  count_tile<Sample>(src, g, levels_of(samples_), tile % g.tiles_x, tile / g.tiles_x,
                     hist.data());
  Sample *lut = luts_of<Sample>().data() + first;
  if (history_mode_ == HistoryMode::kOff) {
    clipped_lut(hist.data(), g, 0, lut);
    return;
  }
  uint64_t *past = &history_[first];
  for (uint32_t b = 0; b < g.levels; ++b)
    past[b] = next_history_bin(history_mode_, past[b], hist[b], temporal_.weight());
  clipped_lut(past, g, kHistoryFracBits, lut);
}

template <typename Sample>
void ClaheCpu::map_rows(ConstPlane src, Plane dst, int y0, int y1) const {
  const ClaheGeometry &g = geom_;
  const size_t tile_row = static_cast<size_t>(g.tiles_x) * g.levels;
  const Sample *luts = luts_of<Sample>().data();
  for (int y = y0; y < y1; ++y) {
    const TileBlend by = tile_blend(y, g.inv_tile_height, g.tiles_y);
    blend_row(BlendRow<Sample>{
        row_of<Sample>(src, y),
        reinterpret_cast<Sample *>(dst.data + static_cast<size_t>(y) * dst.stride), g.width,
        column_lo_.data(), column_hi_.data(), column_w_lo_.data(), column_w_hi_.data(),
        luts + by.lo * tile_row, luts + by.hi * tile_row, by.w_lo, by.w_hi, levels_of(samples_)});
  }
}

template <typename Sample>
void ClaheCpu::run(ConstPlane src, Plane dst) {
  const bool split = static_cast<int64_t>(src.width) * src.height >= kParallelPixels;
  const int tiles = geom_.tiles();
  if (split) {
    parallel_for(tiles, [&](int t) { build_tile_lut<Sample>(src, t); });
  } else {
    for (int t = 0; t < tiles; ++t) build_tile_lut<Sample>(src, t);
  }

  const int tasks = split ? (src.height + kRowsPerTask - 1) / kRowsPerTask : 1;
  const int rows = split ? kRowsPerTask : src.height;
  parallel_for(tasks, [&](int i) {
    map_rows<Sample>(src, dst, i * rows, std::min(src.height, (i + 1) * rows));
  });
}

void ClaheCpu::process(ConstPlane src, Plane dst) {
  if (src.samples != dst.samples || src.width != dst.width || src.height != dst.height)
    throw std::invalid_argument("source and output planes differ in size or layout");
  if (!src.samples.valid()) throw std::invalid_argument("invalid sample layout");
  prepare(src.width, src.height, src.samples);
  if (src.samples.deep())
    run<uint16_t>(src, dst);
  else
    run<uint8_t>(src, dst);
}

}  // namespace cudafilters

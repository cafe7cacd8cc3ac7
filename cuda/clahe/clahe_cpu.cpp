#include <cudafilters/clahe_cpu.h>

#include "cpu_histogram.h"
#include "equalize_math.h"
#include "input_checks.h"
#include "thread_pool.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

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

#ifdef CUDAFILTERS_HAVE_AVX2_PATH
bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

template <typename Sample>
const Sample *row_of(ConstPlane p, int y) {
  return reinterpret_cast<const Sample *>(p.data + static_cast<size_t>(y) * p.stride);
}

// A tile's rows are short runs far apart, which the hardware prefetchers
// did not follow: counting 16-bit tiles waited on memory, and asking for the
// row this many rows ahead took a sixth off the whole 1080p frame.
constexpr int kPrefetchRows = 2;

// Asks for the cache lines of n words at p.
inline void prefetch_span(const uint16_t *p, int n) {
  const char *first = reinterpret_cast<const char *>(p);
  const char *end = reinterpret_cast<const char *>(p + n);
  for (const char *line = first; line < end; line += 64) __builtin_prefetch(line);
  __builtin_prefetch(end - 1);
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
      if (y + kPrefetchRows < y1 && inside > x0)
        prefetch_span(row_of<uint16_t>(src, reflect101(y + kPrefetchRows, g.height)) + x0,
                      inside - x0);
      for (int x = x0; x < inside; ++x) ++hist[lv.of(row[x])];
      for (int x = std::max(x0, g.width); x < x1; ++x) ++hist[lv.of(row[reflect101(x, g.width)])];
    }
  }
}

// How a tile's clipped histogram is spread back (clahe_clipped_bin): each
// bin keeps at most `limit` and gains `even`, and bins 0, step, 2 step, ...
// take one more pixel each, `residual` of them. All in the bins' unit.
struct Redistribution {
  uint64_t limit = ~uint64_t(0);  // no clipping: every count is kept
  uint64_t even = 0;
  uint32_t residual = 0, step = 1;
};

// The pixels of plain counts above lim. One tile's excess fits 32 bits, and
// a 32-bit sum vectorises (clahe_excess bin by bin in 64 bits did not).
inline uint32_t summed_excess(const uint32_t *bins, uint32_t levels, uint32_t lim) {
  uint32_t sum = 0;
  for (uint32_t b = 0; b < levels; ++b) sum += std::max(bins[b], lim) - lim;
  return sum;
}

#ifdef CUDAFILTERS_HAVE_AVX2_PATH
// The same sum in 256-bit vectors: the build targets x86-64 without AVX2.
__attribute__((target("avx2"))) uint32_t summed_excess_avx2(const uint32_t *bins,
                                                            uint32_t levels, uint32_t lim) {
  return summed_excess(bins, levels, lim);
}
#endif

uint32_t excess_over(const uint32_t *bins, uint32_t levels, uint32_t lim) {
#ifdef CUDAFILTERS_HAVE_AVX2_PATH
  if (cpu_has_avx2()) return summed_excess_avx2(bins, levels, lim);
#endif
  return summed_excess(bins, levels, lim);
}

// The redistribution of `bins` (fixed point with frac_bits fraction bits)
// under the clip limit of g, with the divisions of clahe_clipped_bin taken
// out of the per-bin work.
template <typename Bin>
Redistribution redistribution_of(const Bin *bins, const ClaheGeometry &g, int frac_bits) {
  Redistribution r;
  const uint32_t levels = g.levels;
  const uint64_t limit = static_cast<uint64_t>(g.clip) << frac_bits;
  if (limit == 0) return r;
  r.limit = limit;
  uint64_t excess = 0;
  if constexpr (sizeof(Bin) == 4) {
    excess = excess_over(bins, levels, static_cast<uint32_t>(limit));
  } else {
    for (uint32_t b = 0; b < levels; ++b) excess += clahe_excess(bins[b], limit);
  }
  const uint64_t whole = excess >> frac_bits;
  r.even = (whole / levels) << frac_bits;
  r.residual = static_cast<uint32_t>(whole % levels);
  r.step = r.residual ? std::max(levels / r.residual, 1u) : 1;
  return r;
}

// Writes the LUT of `bins` redistributed by r: clahe_clipped_bin and
// clahe_lut_value bin by bin. The bins that take one more pixel are
// stepped to, as OpenCV does, rather than found by a division per bin.
template <typename Sample, typename Bin>
void clipped_lut_scalar(const Bin *bins, const ClaheGeometry &g, int frac_bits,
                        const Redistribution &r, Sample *lut) {
  const uint32_t levels = g.levels, max_level = levels - 1;
  const float unit = frac_bits ? kHistoryUnit : 1.f;
  uint32_t next = r.residual ? 0 : levels;  // the next bin to take a residual pixel
  uint32_t given = 0;
  uint64_t cdf = 0;
  for (uint32_t b = 0; b < levels; ++b) {
    const uint64_t count = bins[b];
    uint64_t clipped = (count > r.limit ? r.limit : count) + r.even;
    if (b == next) {
      clipped += uint64_t(1) << frac_bits;
      next = ++given < r.residual ? next + r.step : levels;
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
// The LUT entries of eight pixels in the tiles above and below, at indices
// l and h, as floats.
struct Corners {
  __m256 top_lo, top_hi, bottom_lo, bottom_hi;
};

// 8-bit LUTs: by gathers, 32-bit loads at the entries' byte offsets masked
// to the entry (the LUTs carry padding after their last entry).
__attribute__((target("avx2"))) inline __m256 gathered_entries(const uint8_t *lut, __m256i at) {
  return _mm256_cvtepi32_ps(_mm256_and_si256(
      _mm256_i32gather_epi32(reinterpret_cast<const int *>(lut), at, 1), _mm256_set1_epi32(0xFF)));
}

__attribute__((target("avx2"))) inline Corners corners(const uint8_t *top, const uint8_t *bottom,
                                                       __m256i l, __m256i h) {
  return {gathered_entries(top, l), gathered_entries(top, h), gathered_entries(bottom, l),
          gathered_entries(bottom, h)};
}

// 16-bit LUTs: by plain loads. On the AMD EPYC measured, where a gather is
// microcoded, they took 5-10% off the whole 16-bit frame (and nothing off
// the 8-bit one).
__attribute__((target("avx2"))) inline __m256 loaded_entries(const uint16_t *lut, const int *at) {
  return _mm256_cvtepi32_ps(_mm256_setr_epi32(lut[at[0]], lut[at[1]], lut[at[2]], lut[at[3]],
                                              lut[at[4]], lut[at[5]], lut[at[6]], lut[at[7]]));
}

__attribute__((target("avx2"))) inline Corners corners(const uint16_t *top, const uint16_t *bottom,
                                                       __m256i l, __m256i h) {
  alignas(32) int lo[8], hi[8];
  _mm256_store_si256(reinterpret_cast<__m256i *>(lo), l);
  _mm256_store_si256(reinterpret_cast<__m256i *>(hi), h);
  return {loaded_entries(top, lo), loaded_entries(top, hi), loaded_entries(bottom, lo),
          loaded_entries(bottom, hi)};
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

// Eight pixels at a time: the four LUT entries of each pixel (corners),
// then clahe_blend_value's float operations in the same order, rounded to
// nearest even explicitly. The rest of the row goes pixel by pixel.
template <typename Sample>
__attribute__((target("avx2"))) void blend_row_avx2(const BlendRow<Sample> &r) {
  const __m256 y_lo = _mm256_set1_ps(r.y_lo), y_hi = _mm256_set1_ps(r.y_hi);
  int x = 0;
  for (; x + 8 <= r.width; x += 8) {
    const __m256i v = load_levels(r.in + x, r.lv);
    const __m256i l =
        _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(r.lo + x)), v);
    const __m256i h =
        _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(r.hi + x)), v);
    const __m256 x_lo = _mm256_loadu_ps(r.w_lo + x), x_hi = _mm256_loadu_ps(r.w_hi + x);
    const Corners c = corners(r.top, r.bottom, l, h);
    const __m256 up = _mm256_add_ps(_mm256_mul_ps(c.top_lo, x_lo), _mm256_mul_ps(c.top_hi, x_hi));
    const __m256 down =
        _mm256_add_ps(_mm256_mul_ps(c.bottom_lo, x_lo), _mm256_mul_ps(c.bottom_hi, x_hi));
    const __m256 res = _mm256_add_ps(_mm256_mul_ps(up, y_lo), _mm256_mul_ps(down, y_hi));
    const __m256 rounded = _mm256_round_ps(res, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    store_levels(r.out + x, _mm256_cvttps_epi32(rounded), r.lv);
  }
  blend_pixels(r, x);
}

// The inclusive prefix sums of eight 32-bit lanes.
__attribute__((target("avx2"))) inline __m256i prefix_sums(__m256i v) {
  v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));
  v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
  // Each 128-bit half now holds its own sums: the low half's total carries up.
  return _mm256_add_epi32(v, _mm256_permute2x128_si256(_mm256_shuffle_epi32(v, 0xFF), v, 0x08));
}

// Eight lanes of clahe_lut_value for plain counts: the same float
// operations (a pixel is 1, so the multiplication by the unit is exact and
// left out), rounded by the same 1.5 * 2^23 shift, then saturated.
__attribute__((target("avx2"))) inline void store_lut_values(uint16_t *lut, __m256i cdf,
                                                             __m256 scale, Levels lv) {
  const __m256 shift = _mm256_set1_ps(12582912.0f);
  const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(cdf), scale);
  store_levels(lut, _mm256_cvttps_epi32(_mm256_sub_ps(_mm256_add_ps(v, shift), shift)), lv);
}

// clipped_lut_scalar on plain counts, eight bins at a time (levels a
// multiple of 8). The cdf at bin b is the running sum of the kept counts
// and `even`, plus the residual pixels given up to b, min(b / step + 1,
// residual); each lane keeps its b / step as a quotient and remainder. A
// tile's cdf never exceeds its area, below 2^31, so the signed conversion
// gives the float clahe_lut_value converts.
__attribute__((target("avx2"))) void clipped_lut_avx2(const uint32_t *bins,
                                                      const ClaheGeometry &g,
                                                      const Redistribution &r, uint16_t *lut) {
  const __m256i limit =
      _mm256_set1_epi32(static_cast<int>(std::min<uint64_t>(r.limit, UINT32_MAX)));
  const __m256i even = _mm256_set1_epi32(static_cast<int>(r.even));
  const __m256i step = _mm256_set1_epi32(static_cast<int>(r.step));
  const __m256i residual = _mm256_set1_epi32(static_cast<int>(r.residual));
  const __m256i one = _mm256_set1_epi32(1), last = _mm256_set1_epi32(7);
  // Eight bins on: the quotient grows by 8 / step, the remainder by 8 % step
  // and wraps at most once.
  const __m256i quotient_step = _mm256_set1_epi32(static_cast<int>(8 / r.step));
  const __m256i remainder_step = _mm256_set1_epi32(static_cast<int>(8 % r.step));
  int first[2][8];
  for (int i = 0; i < 8; ++i) {
    first[0][i] = static_cast<int>(i / r.step);
    first[1][i] = static_cast<int>(i % r.step);
  }
  __m256i quotient = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(first[0]));
  __m256i remainder = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(first[1]));
  const __m256 scale = _mm256_set1_ps(g.lut_scale);
  const Levels lv{0, g.levels - 1};
  __m256i before = _mm256_setzero_si256();  // kept counts and `even` of the bins before
  for (uint32_t b = 0; b < g.levels; b += 8) {
    const __m256i kept = _mm256_add_epi32(
        _mm256_min_epu32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(bins + b)), limit),
        even);
    const __m256i sums = prefix_sums(kept);
    const __m256i cdf = _mm256_add_epi32(sums, before);
    // Only this add carries from block to block.
    before = _mm256_add_epi32(before, _mm256_permutevar8x32_epi32(sums, last));
    const __m256i given = _mm256_min_epu32(_mm256_add_epi32(quotient, one), residual);
    store_lut_values(lut + b, _mm256_add_epi32(cdf, given), scale, lv);
    quotient = _mm256_add_epi32(quotient, quotient_step);
    remainder = _mm256_add_epi32(remainder, remainder_step);
    const __m256i wrap = _mm256_cmpgt_epi32(remainder, _mm256_sub_epi32(step, one));
    remainder = _mm256_sub_epi32(remainder, _mm256_and_si256(wrap, step));
    quotient = _mm256_sub_epi32(quotient, wrap);
  }
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

// Clips `bins` (fixed point with frac_bits fraction bits), redistributes
// and writes the LUT of levels.
template <typename Sample, typename Bin>
void clipped_lut(const Bin *bins, const ClaheGeometry &g, int frac_bits, Sample *lut) {
  const Redistribution r = redistribution_of(bins, g, frac_bits);
#ifdef CUDAFILTERS_HAVE_AVX2_PATH
  // 2^16 bins per tile at 16 bits: one conversion after another was most of
  // the CPU's time.
  if constexpr (sizeof(Sample) == 2 && sizeof(Bin) == 4) {
    if (cpu_has_avx2() && g.levels % 8 == 0) {
      clipped_lut_avx2(bins, g, r, lut);
      return;
    }
  }
#endif
  clipped_lut_scalar(bins, g, frac_bits, r, lut);
}

// Entries of padding after the last LUT: the 8-bit vector path reads 4
// bytes at each entry.
template <typename Sample>
constexpr size_t kLutPadding = sizeof(Sample) == 1 ? 3 : 0;

}  // namespace

struct ClaheCpu::Impl {
  void process(ConstPlane src, Plane dst);
  void prepare(int width, int height, SampleLayout samples);
  template <typename Sample> void build_tile_lut(ConstPlane src, int tile);
  template <typename Sample> void map_rows(ConstPlane src, Plane dst, int y0, int y1) const;
  template <typename Sample> void run(ConstPlane src, Plane dst);
  // The LUTs of a sample type: luts_ or luts16_.
  template <typename Sample> std::vector<Sample> &luts_of() {
    if constexpr (sizeof(Sample) == 1) return luts_; else return luts16_;
  }
  template <typename Sample> const std::vector<Sample> &luts_of() const {
    if constexpr (sizeof(Sample) == 1) return luts_; else return luts16_;
  }

  ClaheParams params_;
  ClaheGeometry geom_;
  SampleLayout samples_;
  std::vector<uint8_t> luts_;        // tiles x 256 (8-bit planes)
  std::vector<uint16_t> luts16_;     // tiles x levels (deep planes)
  // Per column of the frame, as OpenCV keeps them: where the two tiles'
  // LUTs blended across start, and their weights.
  std::vector<int> column_lo_, column_hi_;
  std::vector<float> column_w_lo_, column_w_hi_;
  std::vector<uint64_t> history_;    // tiles x levels, fixed point
  TemporalHistory temporal_;
  HistoryMode history_mode_ = HistoryMode::kOff;  // this frame's
};

ClaheCpu::ClaheCpu() : impl_(std::make_unique<Impl>()) {}
ClaheCpu::~ClaheCpu() = default;
ClaheCpu::ClaheCpu(ClaheCpu &&) noexcept = default;
ClaheCpu &ClaheCpu::operator=(ClaheCpu &&) noexcept = default;

void ClaheCpu::set_params(const ClaheParams &p) {
  check_params(clahe_params_error(p));
  impl_->params_ = p;
  impl_->temporal_.set_smoothing(p.temporal_smoothing);
}

void ClaheCpu::reset_history() { impl_->temporal_.restart(); }

void ClaheCpu::process(ConstPlane src, Plane dst) { impl_->process(src, dst); }

void ClaheCpu::Impl::prepare(int width, int height, SampleLayout samples) {
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
  history_mode_ = temporal_.next_frame(HistoryShape::tiles(g));
  if (history_mode_ != HistoryMode::kOff) history_.resize(entries);
}

template <typename Sample>
void ClaheCpu::Impl::build_tile_lut(ConstPlane src, int tile) {
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
void ClaheCpu::Impl::map_rows(ConstPlane src, Plane dst, int y0, int y1) const {
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
void ClaheCpu::Impl::run(ConstPlane src, Plane dst) {
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

void ClaheCpu::Impl::process(ConstPlane src, Plane dst) {
  check_planes_apart(src, dst);
  prepare(src.width, src.height, src.samples);
  if (src.samples.deep())
    run<uint16_t>(src, dst);
  else
    run<uint8_t>(src, dst);
}

}  // namespace cudafilters

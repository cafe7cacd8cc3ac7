#include "cpu_histogram.h"

#include "thread_pool.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CUDAFILTERS_HAVE_VBMI_PATH 1
#endif

namespace cudafilters {

namespace {

// Partial histograms live on the caller's stack: at most this many.
constexpr int kMaxBands = 64;
// A band is worth handing to another thread from about this many pixels on.
constexpr int64_t kPixelsPerBand = 32 * 1024;

// How many bands of rows to split a plane into: one for small planes, a few
// per thread otherwise (so a thread held up elsewhere does not hold up the
// frame), never more than one per row.
int band_count(ConstPlane p) {
  const int64_t pixels = static_cast<int64_t>(p.width) * p.height;
  if (pixels < kParallelPixels) return 1;
  const int64_t by_size = pixels / kPixelsPerBand;
  const int64_t by_threads = 4 * static_cast<int64_t>(parallel_threads());
  return static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>({by_size, by_threads, kMaxBands, p.height})));
}

int band_row(int band, int bands, int height) {
  return static_cast<int>(static_cast<int64_t>(height) * band / bands);
}

void count_rows(ConstPlane src, int y0, int y1, uint32_t hist[kHistBins]) {
  uint32_t sub[4][kHistBins] = {};
  for (int y = y0; y < y1; ++y)
    count_span(src.data + static_cast<size_t>(y) * src.stride, src.width, sub);
  for (int b = 0; b < kHistBins; ++b) hist[b] = sub[0][b] + sub[1][b] + sub[2][b] + sub[3][b];
}

// Eight pixels per step through 64-bit words: one load and one store
// instead of eight each, leaving the load ports to the table look-ups.
void map_span(const uint8_t *in, uint8_t *out, int n, const uint8_t *lut) {
  int x = 0;
  for (; x + 8 <= n; x += 8) {
    uint64_t v;
    std::memcpy(&v, in + x, 8);
    uint64_t r = 0;
    for (int k = 0; k < 8; ++k) r |= static_cast<uint64_t>(lut[(v >> (8 * k)) & 0xff]) << (8 * k);
    std::memcpy(out + x, &r, 8);
  }
  for (; x < n; ++x) out[x] = lut[in[x]];
}

#ifdef CUDAFILTERS_HAVE_VBMI_PATH
// 64 pixels per step: the 256-entry table sits in four registers, two-table
// byte permutes look up the lower and upper halves by the low 7 bits, and
// bit 7 picks between them. The row's tail goes through map_span.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void map_span_vbmi(const uint8_t *in,
                                                                         uint8_t *out, int n,
                                                                         const uint8_t *lut) {
  const __m512i t0 = _mm512_loadu_si512(lut), t1 = _mm512_loadu_si512(lut + 64);
  const __m512i t2 = _mm512_loadu_si512(lut + 128), t3 = _mm512_loadu_si512(lut + 192);
  int x = 0;
  for (; x + 64 <= n; x += 64) {
    const __m512i idx = _mm512_loadu_si512(in + x);
    const __m512i lower = _mm512_permutex2var_epi8(t0, idx, t1);
    const __m512i upper = _mm512_permutex2var_epi8(t2, idx, t3);
    _mm512_storeu_si512(out + x, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lower, upper));
  }
  map_span(in + x, out + x, n - x, lut);
}

bool cpu_has_vbmi() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vbmi");
  return has;
}
#endif

void map_rows(ConstPlane src, Plane dst, int y0, int y1, const uint8_t *lut) {
  auto span = map_span;
#ifdef CUDAFILTERS_HAVE_VBMI_PATH
  if (cpu_has_vbmi()) span = map_span_vbmi;
#endif
  for (int y = y0; y < y1; ++y)
    span(src.data + static_cast<size_t>(y) * src.stride,
         dst.data + static_cast<size_t>(y) * dst.stride, src.width, lut);
}

}  // namespace

void count_span(const uint8_t *p, int n, uint32_t sub[4][kHistBins]) {
  int x = 0;
  for (; x + 4 <= n; x += 4) {
    ++sub[0][p[x]];
    ++sub[1][p[x + 1]];
    ++sub[2][p[x + 2]];
    ++sub[3][p[x + 3]];
  }
  for (; x < n; ++x) ++sub[0][p[x]];
}

void count_plane(ConstPlane src, uint32_t hist[kHistBins]) {
  const int bands = band_count(src);
  if (bands == 1) {
    count_rows(src, 0, src.height, hist);
    return;
  }
  uint32_t partial[kMaxBands][kHistBins];
  parallel_for(bands, [&](int i) {
    count_rows(src, band_row(i, bands, src.height), band_row(i + 1, bands, src.height), partial[i]);
  });
  for (int b = 0; b < kHistBins; ++b) {
    uint32_t sum = 0;
    for (int i = 0; i < bands; ++i) sum += partial[i][b];
    hist[b] = sum;
  }
}

void map_plane(ConstPlane src, Plane dst, const uint8_t lut[kHistBins]) {
  const int bands = band_count(src);
  parallel_for(bands, [&](int i) {
    map_rows(src, dst, band_row(i, bands, src.height), band_row(i + 1, bands, src.height), lut);
  });
}

// ---------------------------------------------------------------------------
// Deep planes.

namespace {

// Bands for deep counting: each keeps a partial histogram of up to 2^16
// bins, so fewer bands than for 8-bit planes (one per thread).
int deep_band_count(ConstPlane p) {
  const int64_t pixels = static_cast<int64_t>(p.width) * p.height;
  if (pixels < kParallelPixels) return 1;
  return static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>({pixels / (4 * kPixelsPerBand), parallel_threads(), p.height})));
}

void count_deep_rows(ConstPlane src, SampleLayout l, int y0, int y1, uint32_t *hist) {
  const uint32_t max_level = l.max_level();
  const int shift = l.shift;
  for (int y = y0; y < y1; ++y) {
    const uint16_t *row = row16(src, y);
    for (int x = 0; x < src.width; ++x) ++hist[sample_level(row[x], shift, max_level)];
  }
}

}  // namespace

void count_plane_deep(ConstPlane src, SampleLayout l, std::vector<uint32_t> &scratch,
                      uint32_t *hist) {
  const size_t levels = l.levels();
  const int bands = deep_band_count(src);
  if (bands == 1) {
    std::fill(hist, hist + levels, 0u);
    count_deep_rows(src, l, 0, src.height, hist);
    return;
  }
  // Each band clears its own partial (256 KB at 16 bits) on its thread,
  // rather than the caller clearing them all.
  scratch.resize(static_cast<size_t>(bands) * levels);
  parallel_for(bands, [&](int i) {
    uint32_t *part = &scratch[static_cast<size_t>(i) * levels];
    std::fill(part, part + levels, 0u);
    count_deep_rows(src, l, band_row(i, bands, src.height), band_row(i + 1, bands, src.height), part);
  });
  // Merged in slices of bins, spread over the pool too; the first band's
  // counts are copied, so `hist` needs no clearing either.
  constexpr size_t kSlice = 4096;
  const int slices = static_cast<int>((levels + kSlice - 1) / kSlice);
  parallel_for(slices, [&](int s) {
    const size_t b0 = s * kSlice, b1 = std::min(levels, b0 + kSlice);
    std::copy(scratch.begin() + b0, scratch.begin() + b1, hist + b0);
    for (int i = 1; i < bands; ++i) {
      const uint32_t *part = &scratch[static_cast<size_t>(i) * levels];
      for (size_t b = b0; b < b1; ++b) hist[b] += part[b];
    }
  });
}

void map_plane_deep(ConstPlane src, Plane dst, SampleLayout l, const uint16_t *lut) {
  const uint32_t max_level = l.max_level();
  const int shift = l.shift;
  const int bands = band_count(src);
  parallel_for(bands, [&](int i) {
    for (int y = band_row(i, bands, src.height); y < band_row(i + 1, bands, src.height); ++y) {
      const uint16_t *in = row16(src, y);
      uint16_t *out = row16(dst, y);
      for (int x = 0; x < src.width; ++x) out[x] = lut[sample_level(in[x], shift, max_level)];
    }
  });
}

}  // namespace cudafilters

#include <cudafilters/sharpen_cpu.h>

#include <cudafilters/detail/hd_math.h>

#include "cpu_isa.h"
#include "thread_pool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace cudafilters {
namespace {

// Rows per task: enough to amortise the Gaussian's halo rows, small enough
// that a 1080p frame gives every core several tasks.
constexpr int kBandRows = 32;

struct Scratch {
  std::vector<uint8_t> padded;   // one source row with reflected ends
  std::vector<uint16_t> rows;    // horizontally blurred rows of a band
  std::vector<uint32_t> column;  // vertical sums of one output row
};

Scratch &thread_scratch() {
  thread_local Scratch s;
  return s;
}

template <typename T>
T *grown(std::vector<T> &v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// Copies source row y into `out` with `r` reflected pixels on each side.
__attribute__((always_inline)) inline void pad_row(ConstPlane src, int y, int r, uint8_t *out) {
  const uint8_t *row = src.data + static_cast<size_t>(y) * src.stride;
  for (int i = 0; i < r; ++i) {
    out[i] = row[reflect101(i - r, src.width)];
    out[r + src.width + i] = row[reflect101(src.width + i, src.width)];
  }
  std::memcpy(out + r, row, static_cast<size_t>(src.width));
}


struct UnsharpArgs {
  ConstPlane src;
  Plane dst;
  const uint16_t *taps;
  int n;  // taps (odd)
  UnsharpWeights w;
  int threshold;
};

// 1.5 * 2^23: adding and subtracting it rounds a float of magnitude below
// 2^22 to the nearest integer, halves to even, as cvRound does.
constexpr float kRoundMagic = 12582912.f;

// The band functions are one source compiled for several instruction sets
// (below); they do the same integer and IEEE float operations, with an
// explicit fused multiply-add, so they agree bit for bit. Without hardware
// FMA the library's fma is exact too, only slower.
template <bool kHardwareFma>
__attribute__((always_inline)) inline void unsharp_band(const UnsharpArgs &a, int y0, int y1) {
  const int w = a.src.width;
  const int r = a.n / 2;
  Scratch &s = thread_scratch();
  uint8_t *padded = grown(s.padded, static_cast<size_t>(w + 2 * r));
  const int band = y1 - y0 + 2 * r;
  uint16_t *rows = grown(s.rows, static_cast<size_t>(band) * w);
  uint32_t *column = grown(s.column, static_cast<size_t>(w));

  // Horizontal pass: exact sums in 1/256 units (at most 256 * 255).
  for (int i = 0; i < band; ++i) {
    pad_row(a.src, reflect101(y0 - r + i, a.src.height), r, padded);
    uint16_t *out = rows + static_cast<size_t>(i) * w;
    for (int x = 0; x < w; ++x) out[x] = 0;
    for (int k = 0; k < a.n; ++k) {
      const uint16_t tap = a.taps[k];
      const uint8_t *in = padded + k;
      for (int x = 0; x < w; ++x) out[x] = static_cast<uint16_t>(out[x] + tap * in[x]);
    }
  }

  for (int y = y0; y < y1; ++y) {
    // Vertical pass: exact sums in 1/65536 units.
    const uint16_t *first = rows + static_cast<size_t>(y - y0) * w;
    for (int x = 0; x < w; ++x) column[x] = 0;
    for (int k = 0; k < a.n; ++k) {
      const uint32_t tap = a.taps[k];
      const uint16_t *in = first + static_cast<size_t>(k) * w;
      for (int x = 0; x < w; ++x) column[x] += tap * in[x];
    }

    const uint8_t *src = a.src.data + static_cast<size_t>(y) * a.src.stride;
    uint8_t *dst = a.dst.data + static_cast<size_t>(y) * a.dst.stride;
    for (int x = 0; x < w; ++x) {
      const int blur = static_cast<int>((column[x] + 32768u) >> 16);
      const int level = src[x];
      const float sharp = kHardwareFma
                              ? __builtin_fmaf(static_cast<float>(level), a.w.source,
                                               static_cast<float>(blur) * a.w.blur)
                              : std::fma(static_cast<float>(level), a.w.source,
                                         static_cast<float>(blur) * a.w.blur);
      const float rounded = (sharp + kRoundMagic) - kRoundMagic;
      const int out = std::min(std::max(static_cast<int>(rounded), 0), 255);
      const int diff = level > blur ? level - blur : blur - level;
      dst[x] = static_cast<uint8_t>(diff < a.threshold ? level : out);
    }
  }
}

// dst = saturate(5 c - n - s - w - e), reflect-101 at the borders.
__attribute__((always_inline)) inline void laplacian_band(ConstPlane src, Plane dst, int y0, int y1) {
  const int w = src.width;
  Scratch &s = thread_scratch();
  uint8_t *above = grown(s.padded, static_cast<size_t>(3 * (w + 2)));
  uint8_t *centre = above + (w + 2);
  uint8_t *below = centre + (w + 2);
  for (int y = y0; y < y1; ++y) {
    pad_row(src, reflect101(y - 1, src.height), 1, above);
    pad_row(src, y, 1, centre);
    pad_row(src, reflect101(y + 1, src.height), 1, below);
    uint8_t *out = dst.data + static_cast<size_t>(y) * dst.stride;
    for (int x = 0; x < w; ++x) {
      const int v = 5 * centre[x + 1] - centre[x] - centre[x + 2] - above[x + 1] - below[x + 1];
      out[x] = static_cast<uint8_t>(std::min(std::max(v, 0), 255));
    }
  }
}

using UnsharpFn = void (*)(const UnsharpArgs &, int, int);
using LaplacianFn = void (*)(ConstPlane, Plane, int, int);

struct Variant {
  UnsharpFn unsharp;
  LaplacianFn laplacian;
};

#ifdef FP_FAST_FMAF
constexpr bool kBaselineFma = true;
#else
constexpr bool kBaselineFma = false;
#endif

void unsharp_baseline(const UnsharpArgs &a, int y0, int y1) {
  unsharp_band<kBaselineFma>(a, y0, y1);
}
void laplacian_baseline(ConstPlane s, Plane d, int y0, int y1) {
  laplacian_band(s, d, y0, y1);
}

#ifdef CUDAFILTERS_X86_VARIANTS
__attribute__((target("avx2,fma"))) void unsharp_avx2(const UnsharpArgs &a, int y0, int y1) {
  unsharp_band<true>(a, y0, y1);
}
__attribute__((target("avx2,fma"))) void laplacian_avx2(ConstPlane s, Plane d, int y0, int y1) {
  laplacian_band(s, d, y0, y1);
}
#define CUDAFILTERS_AVX512 "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,prefer-vector-width=512"
__attribute__((target(CUDAFILTERS_AVX512))) void unsharp_avx512(const UnsharpArgs &a, int y0,
                                                                 int y1) {
  unsharp_band<true>(a, y0, y1);
}
__attribute__((target(CUDAFILTERS_AVX512))) void laplacian_avx512(ConstPlane s, Plane d, int y0,
                                                                   int y1) {
  laplacian_band(s, d, y0, y1);
}
#undef CUDAFILTERS_AVX512
#endif

Variant variant(std::string_view isa) {
#ifdef CUDAFILTERS_X86_VARIANTS
  if (isa == "avx512") return {unsharp_avx512, laplacian_avx512};
  if (isa == "avx2") return {unsharp_avx2, laplacian_avx2};
#endif
  if (isa == "baseline") return {unsharp_baseline, laplacian_baseline};
  throw std::invalid_argument("unknown instruction set " + std::string(isa));
}

}  // namespace

void SharpenCpu::set_params(const SharpenParams &p) {
  if (p.radius != params_.radius) taps_ = sharpen_gaussian_taps(p.radius);
  params_ = p;
}

void SharpenCpu::process(ConstPlane src, Plane dst) const {
  process_with(src, dst, sharpen_cpu_instruction_set());
}

void SharpenCpu::process_with(ConstPlane src, Plane dst, std::string_view isa) const {
  const Variant v = variant(isa);
  const int bands = (src.height + kBandRows - 1) / kBandRows;
  if (params_.kernel == SharpenKernel::kLaplacian3x3) {
    parallel_for(bands, [&](int b) {
      v.laplacian(src, dst, b * kBandRows, std::min(src.height, (b + 1) * kBandRows));
    });
    return;
  }
  UnsharpArgs args{src, dst, taps_.data(), static_cast<int>(taps_.size()),
                   unsharp_weights(params_.amount), params_.threshold};
  parallel_for(bands, [&](int b) {
    v.unsharp(args, b * kBandRows, std::min(src.height, (b + 1) * kBandRows));
  });
}

std::string_view sharpen_cpu_instruction_set() { return cpu_instruction_set(); }

std::vector<std::string_view> sharpen_cpu_instruction_sets() { return cpu_instruction_sets(); }

}  // namespace cudafilters

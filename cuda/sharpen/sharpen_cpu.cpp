#include <cudafilters/sharpen_cpu.h>

#include "cpu_isa.h"
#include "hd_math.h"
#include "input_checks.h"
#include "sharpen_state.h"
#include "thread_pool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cudafilters {
namespace {

// Rows per task: enough to amortise the Gaussian's halo rows, small enough
// that a 1080p frame gives every core several tasks.
constexpr int kBandRows = 32;

// Working memory of one thread, kept from frame to frame; typed per depth
// by the users (bytes from operator new are aligned for any of the types).
struct Scratch {
  std::vector<unsigned char> padded;  // source rows with reflected ends, as levels
  std::vector<unsigned char> rows;    // horizontally blurred rows of a band
  std::vector<unsigned char> column;  // vertical sums of one output row
};

Scratch &thread_scratch() {
  thread_local Scratch s;
  return s;
}

template <typename T>
T *grown(std::vector<unsigned char> &v, size_t n) {
  if (v.size() < n * sizeof(T)) v.resize(n * sizeof(T));
  return reinterpret_cast<T *>(v.data());
}

// The integer types of each depth: source samples, horizontal sums (exact:
// at most 2^frac x the largest level) and vertical sums (exact: 2^(2 frac)
// x the largest level).
template <typename Sample>
struct Depth;
template <>
struct Depth<uint8_t> {
  using HSum = uint16_t;
  using VSum = uint32_t;
};
template <>
struct Depth<uint16_t> {
  using HSum = uint32_t;
  using VSum = uint64_t;
};

// The level of a sample (the identity on 8-bit planes). The layout comes as
// plain values, so that the loops around it vectorise.
template <typename Sample>
__attribute__((always_inline)) inline Sample level_of(Sample w, SampleLevels l) {
  if constexpr (sizeof(Sample) == 1)
    return w;
  else
    return static_cast<Sample>(l.of(w));
}

template <typename Sample>
const Sample *row_of(ConstPlane p, int y) {
  return reinterpret_cast<const Sample *>(p.data + static_cast<size_t>(y) * p.stride);
}
template <typename Sample>
Sample *row_of(Plane p, int y) {
  return reinterpret_cast<Sample *>(p.data + static_cast<size_t>(y) * p.stride);
}

// The levels of source row y into `out` with `r` reflected pixels on each
// side.
template <typename Sample>
__attribute__((always_inline)) inline void pad_row(ConstPlane src, int y, int r, Sample *out) {
  const Sample *row = row_of<Sample>(src, y);
  const SampleLevels l = sample_levels(src.samples);
  for (int i = 0; i < r; ++i) {
    out[i] = level_of(row[reflect101(i - r, src.width)], l);
    out[r + src.width + i] = level_of(row[reflect101(src.width + i, src.width)], l);
  }
  if constexpr (sizeof(Sample) == 1)
    std::memcpy(out + r, row, static_cast<size_t>(src.width));
  else
    for (int x = 0; x < src.width; ++x) out[r + x] = level_of(row[x], l);
}

struct UnsharpArgs {
  ConstPlane src;
  Plane dst;
  const uint32_t *taps;
  int n;  // taps (odd)
  UnsharpWeights w;
  int threshold;  // in levels of the plane
};

// 1.5 * 2^23: adding and subtracting it rounds a float of magnitude below
// 2^22 to the nearest integer, halves to even, as cvRound does. The largest
// magnitude, (1 + 20) x 65535, is far below.
constexpr float kRoundMagic = 12582912.f;

// The band functions are one source compiled for several instruction sets
// (below); they do the same integer and IEEE float operations, with an
// explicit fused multiply-add, so they agree bit for bit. Without hardware
// FMA the library's fma is exact too, only slower.
template <bool kHardwareFma, typename Sample>
__attribute__((always_inline)) inline void unsharp_band(const UnsharpArgs &a, int y0, int y1) {
  using HSum = typename Depth<Sample>::HSum;
  using VSum = typename Depth<Sample>::VSum;
  constexpr int kFrac = sharpen_tap_bits(sizeof(Sample) == 2);
  const int w = a.src.width;
  const int r = a.n / 2;
  const int top = int(a.dst.samples.max_level()), shift = a.dst.samples.shift;
  const SampleLevels levels = sample_levels(a.src.samples);
  Scratch &s = thread_scratch();
  Sample *padded = grown<Sample>(s.padded, static_cast<size_t>(w + 2 * r));
  const int band = y1 - y0 + 2 * r;
  HSum *rows = grown<HSum>(s.rows, static_cast<size_t>(band) * w);
  VSum *column = grown<VSum>(s.column, static_cast<size_t>(w));

  // Horizontal pass: exact sums in 1/2^frac units.
  for (int i = 0; i < band; ++i) {
    pad_row(a.src, reflect101(y0 - r + i, a.src.height), r, padded);
    HSum *out = rows + static_cast<size_t>(i) * w;
    for (int x = 0; x < w; ++x) out[x] = 0;
    for (int k = 0; k < a.n; ++k) {
      const HSum tap = static_cast<HSum>(a.taps[k]);
      const Sample *in = padded + k;
      for (int x = 0; x < w; ++x) out[x] = static_cast<HSum>(out[x] + tap * in[x]);
    }
  }

  for (int y = y0; y < y1; ++y) {
    // Vertical pass: exact sums in 1/2^(2 frac) units, rounded half up once.
    const HSum *first = rows + static_cast<size_t>(y - y0) * w;
    for (int x = 0; x < w; ++x) column[x] = 0;
    for (int k = 0; k < a.n; ++k) {
      const VSum tap = a.taps[k];
      const HSum *in = first + static_cast<size_t>(k) * w;
      for (int x = 0; x < w; ++x) column[x] += tap * in[x];
    }

    const Sample *src = row_of<Sample>(a.src, y);
    Sample *dst = row_of<Sample>(a.dst, y);
    for (int x = 0; x < w; ++x) {
      const int blur = static_cast<int>((column[x] + (VSum(1) << (2 * kFrac - 1))) >> (2 * kFrac));
      const int level = level_of(src[x], levels);
      const float sharp = kHardwareFma
                              ? __builtin_fmaf(static_cast<float>(level), a.w.source,
                                               static_cast<float>(blur) * a.w.blur)
                              : std::fma(static_cast<float>(level), a.w.source,
                                         static_cast<float>(blur) * a.w.blur);
      const float rounded = (sharp + kRoundMagic) - kRoundMagic;
      const int out = std::min(std::max(static_cast<int>(rounded), 0), top);
      const int diff = level > blur ? level - blur : blur - level;
      dst[x] = static_cast<Sample>((diff < a.threshold ? level : out) << shift);
    }
  }
}

// dst = saturate(5 c - n - s - w - e), reflect-101 at the borders.
template <typename Sample>
__attribute__((always_inline)) inline void laplacian_band(ConstPlane src, Plane dst, int y0, int y1) {
  const int w = src.width;
  const int top = int(dst.samples.max_level()), shift = dst.samples.shift;
  Scratch &s = thread_scratch();
  Sample *above = grown<Sample>(s.padded, static_cast<size_t>(3 * (w + 2)));
  Sample *centre = above + (w + 2);
  Sample *below = centre + (w + 2);
  for (int y = y0; y < y1; ++y) {
    pad_row(src, reflect101(y - 1, src.height), 1, above);
    pad_row(src, y, 1, centre);
    pad_row(src, reflect101(y + 1, src.height), 1, below);
    Sample *out = row_of<Sample>(dst, y);
    for (int x = 0; x < w; ++x) {
      const int v = 5 * centre[x + 1] - centre[x] - centre[x + 2] - above[x + 1] - below[x + 1];
      out[x] = static_cast<Sample>(std::min(std::max(v, 0), top) << shift);
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

// Each variant takes 8- and 16-bit planes: one branch per band.
#define CUDAFILTERS_SHARPEN_VARIANT(ATTR, NAME, FMA)                                   \
  ATTR void unsharp_##NAME(const UnsharpArgs &a, int y0, int y1) {                    \
    if (a.src.samples.deep())                                                          \
      unsharp_band<FMA, uint16_t>(a, y0, y1);                                          \
    else                                                                               \
      unsharp_band<FMA, uint8_t>(a, y0, y1);                                           \
  }                                                                                    \
  ATTR void laplacian_##NAME(ConstPlane s, Plane d, int y0, int y1) {                  \
    if (s.samples.deep())                                                              \
      laplacian_band<uint16_t>(s, d, y0, y1);                                          \
    else                                                                               \
      laplacian_band<uint8_t>(s, d, y0, y1);                                           \
  }

CUDAFILTERS_SHARPEN_VARIANT(, baseline, kBaselineFma)
#ifdef CUDAFILTERS_X86_VARIANTS
CUDAFILTERS_SHARPEN_VARIANT(__attribute__((target("avx2,fma"))), avx2, true)
CUDAFILTERS_SHARPEN_VARIANT(
    __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,prefer-vector-width=512"))),
    avx512, true)
#endif
#undef CUDAFILTERS_SHARPEN_VARIANT

Variant variant(std::string_view isa) {
#ifdef CUDAFILTERS_X86_VARIANTS
  if (isa == "avx512") return {unsharp_avx512, laplacian_avx512};
  if (isa == "avx2") return {unsharp_avx2, laplacian_avx2};
#endif
  if (isa == "baseline") return {unsharp_baseline, laplacian_baseline};
  throw std::invalid_argument("unknown instruction set " + std::string(isa));
}

// The engine's state and work: SharpenCpu's, and sharpen_cpu_with's with
// an instruction set of the caller's.
struct Sharpener {
  void process_with(ConstPlane src, Plane dst, std::string_view isa) const;

  SharpenState state;
};

void Sharpener::process_with(ConstPlane src, Plane dst, std::string_view isa) const {
  check_planes_apart(src, dst);
  const Variant v = variant(isa);
  const int bands = (src.height + kBandRows - 1) / kBandRows;
  const SharpenParams &params = state.params;
  if (params.kernel == SharpenKernel::kLaplacian3x3) {
    parallel_for(bands, [&](int b) {
      v.laplacian(src, dst, b * kBandRows, std::min(src.height, (b + 1) * kBandRows));
    });
    return;
  }
  const std::vector<uint32_t> &taps = state.taps_for(src.samples);
  UnsharpArgs args{src, dst, taps.data(), static_cast<int>(taps.size()),
                   unsharp_weights(params.amount),
                   sharpen_threshold_levels(params.threshold, src.samples)};
  parallel_for(bands, [&](int b) {
    v.unsharp(args, b * kBandRows, std::min(src.height, (b + 1) * kBandRows));
  });
}

}  // namespace

struct SharpenCpu::Impl : Sharpener {};

SharpenCpu::SharpenCpu() : impl_(std::make_unique<Impl>()) {}
SharpenCpu::~SharpenCpu() = default;
SharpenCpu::SharpenCpu(SharpenCpu &&) noexcept = default;
SharpenCpu &SharpenCpu::operator=(SharpenCpu &&) noexcept = default;

void SharpenCpu::set_params(const SharpenParams &p) {
  check_params(sharpen_params_error(p));
  impl_->state.set(p);
}

void SharpenCpu::process(ConstPlane src, Plane dst) {
  impl_->process_with(src, dst, cpu_instruction_set());
}

void sharpen_cpu_with(const SharpenParams &p, ConstPlane src, Plane dst, std::string_view isa) {
  Sharpener s;
  s.state.set(p);
  s.process_with(src, dst, isa);
}

}  // namespace cudafilters

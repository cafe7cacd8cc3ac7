#include <cudafilters/nlm_cpu.h>

#include <cudafilters/detail/hd_math.h>

#include "cpu_isa.h"
#include "thread_pool.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

namespace cudafilters {

namespace {

// A tile is the unit of work handed to a thread. Its accumulators, source
// window and row buffers stay in the core's L1 and L2 caches while all the
// search offsets sweep over it; its height amortises the patch rows that
// every tile recomputes above and below itself.
constexpr int kTileRows = 16;
constexpr int kTileCols = 128;

// Working memory of one thread, kept from frame to frame: after the first
// frames of a size nothing on this path allocates.
struct Scratch {
  std::vector<float> window;  // tile plus R = search + patch radius on every side
  std::vector<float> acc_w, acc_v;
  std::vector<float> columns;  // per-column vertical patch sums of one row
  std::vector<float> rows;     // Gaussian patches: the last 2 rp + 1 rows of distances
};

Scratch &thread_scratch() {
  thread_local Scratch s;
  return s;
}

float *grown(std::vector<float> &v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

struct Tile {
  int x0, y0, width, height;
};

struct TileArgs {
  const float *window;  // (height + 2R) x (width + 2R), row stride `stride`
  int stride;
  int rs;
  Tile tile;
  NlmWeightCoeffs c;
  const float *taps;
  float *acc_w, *acc_v;  // height x width
  float *columns;        // width + 2 rp
  float *rows;           // (2 rp + 1) x (width + 2 rp), Gaussian patches only
};

#define CF_INLINE __attribute__((always_inline)) inline

// a * b + c, fused (one rounding, as the GPU does) where the instruction set
// has FMA; otherwise rounded twice, since a library fmaf per pixel and
// offset would be far slower than the whole filter.
template <bool FUSED>
CF_INLINE float madd(float a, float b, float c) {
  if constexpr (FUSED)
    return __builtin_fmaf(a, b, c);
  else
    return a * b + c;
}

// 2^x for x <= 0, the GPU's ex2.approx.ftz to within an ulp or two: results
// below 2^-126 flush to 0. Round-to-nearest splits x = n + f with |f| <= 1/2;
// 2^f is its degree-7 Taylor polynomial (truncation below 1e-8), 2^n goes
// straight into the exponent bits. Only adds, multiplies, FMAs and integer
// operations, so every loop around it vectorises.
template <bool FUSED>
CF_INLINE float exp2_nonpositive(float x) {
  const float magic = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer
  const float xc = x > -126.f ? x : -126.f;
  const float shifted = xc + magic;
  const float f = xc - (shifted - magic);
  float p = 1.525273380405984e-05f;
  p = madd<FUSED>(p, f, 1.5403530393381608e-04f);
  p = madd<FUSED>(p, f, 1.3333558146428443e-03f);
  p = madd<FUSED>(p, f, 9.618129107628477e-03f);
  p = madd<FUSED>(p, f, 5.550410866482158e-02f);
  p = madd<FUSED>(p, f, 2.402265069591007e-01f);
  p = madd<FUSED>(p, f, 6.931471805599453e-01f);
  p = madd<FUSED>(p, f, 1.f);
  int32_t shifted_bits, magic_bits;
  std::memcpy(&shifted_bits, &shifted, 4);
  std::memcpy(&magic_bits, &magic, 4);
  const int32_t scale_bits = (shifted_bits - magic_bits + 127) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, 4);
  return x >= -126.f ? p * scale : 0.f;
}

CF_INLINE float squared_diff(float a, float b) {
  const float d = a - b;
  return d * d;
}

// out[k] = squared difference between ref[k] and the pixel `shift` away.
CF_INLINE void distance_row(const float *__restrict ref, int shift, int n, float *__restrict out) {
  for (int k = 0; k < n; ++k) out[k] = squared_diff(ref[k], ref[k + shift]);
}

// Weights of one output row from its patch distances, accumulated in the
// order the GPU kernel uses.
template <bool FUSED>
CF_INLINE void accumulate_row(const float *__restrict dist_of_columns, int rp, bool gaussian,
                              const float *__restrict taps, const float *__restrict pixels,
                              float *__restrict acc_w, float *__restrict acc_v, int width,
                              NlmWeightCoeffs c) {
  const bool clamp = c.b > 0.f;
  for (int x = 0; x < width; ++x) {
    const float *col = dist_of_columns + x;
    float s;
    if (gaussian) {
      s = taps[0] * col[0];
      for (int t = 1; t <= 2 * rp; ++t) s = madd<FUSED>(taps[t], col[t], s);
    } else {
      s = 0.f;
      for (int t = 0; t <= 2 * rp; ++t) s += col[t];
    }
    float arg;
    if (clamp) {
      arg = madd<FUSED>(s, c.a, c.b);
      arg = arg < 0.f ? arg : 0.f;
    } else {
      arg = s * c.a;  // noise-sigma 0: never positive
    }
    const float w = exp2_nonpositive<FUSED>(arg);
    acc_w[x] += w;
    acc_v[x] = madd<FUSED>(w, pixels[x], acc_v[x]);
  }
}

// Every search offset over one tile. Patch distances are separable: first
// down each column (a running sum for box patches, exact on 8-bit frames
// because every term is an integer below 2^24; a ring of the last rows for
// Gaussian ones), then along the row. Offsets run dx-major like the GPU
// kernel.
template <int RP, bool GAUSS, bool FUSED>
CF_INLINE void filter_tile(const TileArgs &a) {
  const int R = a.rs + RP, S = a.stride;
  const int w = a.tile.width, h = a.tile.height, cw = w + 2 * RP;
  const float *taps = a.taps;
  // Pixel (x, y) of the tile, x from -R: origin + y * S + x.
  const float *origin = a.window + R * S + R;
  // Distances of row r cover columns -RP .. w + RP - 1: they start here.
  const float *row0 = origin - RP;

  for (int i = 0; i < w * h; ++i) a.acc_w[i] = a.acc_v[i] = 0.f;

  for (int dx = -a.rs; dx <= a.rs; ++dx) {
    for (int dy = -a.rs; dy <= a.rs; ++dy) {
      const int shift = dy * S + dx;
      float *__restrict cols = a.columns;
      if constexpr (!GAUSS) {
        for (int k = 0; k < cw; ++k) cols[k] = 0.f;
        for (int r = -RP; r <= RP; ++r) {
          const float *ref = row0 + r * S;
          for (int k = 0; k < cw; ++k) cols[k] += squared_diff(ref[k], ref[k + shift]);
        }
      } else {
        for (int r = -RP; r < RP; ++r)
          distance_row(row0 + r * S, shift, cw, a.rows + (r + RP) * cw);
      }
      for (int y = 0; y < h; ++y) {
        if constexpr (!GAUSS) {
          if (y > 0) {
            const float *add = row0 + (y + RP) * S, *sub = row0 + (y - RP - 1) * S;
            for (int k = 0; k < cw; ++k)
              cols[k] = cols[k] + squared_diff(add[k], add[k + shift]) -
                        squared_diff(sub[k], sub[k + shift]);
          }
        } else {
          constexpr int kRing = 2 * RP + 1;
          distance_row(row0 + (y + RP) * S, shift, cw, a.rows + ((y + 2 * RP) % kRing) * cw);
          const float *ring[kRing];
          for (int t = 0; t < kRing; ++t) ring[t] = a.rows + ((y + t) % kRing) * cw;
          for (int k = 0; k < cw; ++k) {
            float v = taps[0] * ring[0][k];
            for (int t = 1; t < kRing; ++t) v = madd<FUSED>(taps[t], ring[t][k], v);
            cols[k] = v;
          }
        }
        accumulate_row<FUSED>(cols, RP, GAUSS, taps, origin + (y + dy) * S + dx,
                              a.acc_w + y * w, a.acc_v + y * w, w, a.c);
      }
    }
  }
}

using TileFn = void (*)(const TileArgs &);

// The same source compiled for several instruction sets, chosen at run time
// by what the CPU has. The variants with FMA do the same IEEE operations in
// the same order (explicit FMAs, no contraction), so they agree bit for bit.
#ifdef FP_FAST_FMAF
constexpr bool kBaselineFma = true;
#else
constexpr bool kBaselineFma = false;
#endif
template <int RP, bool GAUSS>
void filter_tile_baseline(const TileArgs &a) {
  filter_tile<RP, GAUSS, kBaselineFma>(a);
}

#ifdef CUDAFILTERS_X86_VARIANTS
template <int RP, bool GAUSS>
__attribute__((target("avx2,fma"))) void filter_tile_avx2(const TileArgs &a) {
  filter_tile<RP, GAUSS, true>(a);
}
template <int RP, bool GAUSS>
__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,prefer-vector-width=512"))) void
filter_tile_avx512(const TileArgs &a) {
  filter_tile<RP, GAUSS, true>(a);
}
#endif

constexpr int kMaxRp = kNlmMaxPatchSize / 2;

template <template <int, bool> class Variant, int... RP>
TileFn pick(int rp, bool gaussian, std::integer_sequence<int, RP...>) {
  static constexpr TileFn box[] = {Variant<RP, false>::fn...};
  static constexpr TileFn gauss[] = {Variant<RP, true>::fn...};
  return gaussian ? gauss[rp] : box[rp];
}

template <int RP, bool G>
struct Baseline {
  static constexpr TileFn fn = filter_tile_baseline<RP, G>;
};
#ifdef CUDAFILTERS_X86_VARIANTS
template <int RP, bool G>
struct Avx2 {
  static constexpr TileFn fn = filter_tile_avx2<RP, G>;
};
template <int RP, bool G>
struct Avx512 {
  static constexpr TileFn fn = filter_tile_avx512<RP, G>;
};
#endif

TileFn select_tile_fn(int rp, bool gaussian, std::string_view isa) {
  const auto all = std::make_integer_sequence<int, kMaxRp + 1>{};
#ifdef CUDAFILTERS_X86_VARIANTS
  if (isa == "avx512") return pick<Avx512>(rp, gaussian, all);
  if (isa == "avx2") return pick<Avx2>(rp, gaussian, all);
#endif
  return pick<Baseline>(rp, gaussian, all);
}

// The tile and R pixels around it as floats in 8-bit units, borders
// mirrored (reflect-101).
template <typename Word>
void load_window(ConstPlane src, const Tile &t, int R, float *window, int stride) {
  const float unit = nlm_level_unit(src.samples);
  const SampleLevels levels = sample_levels(src.samples);
  for (int r = 0; r < t.height + 2 * R; ++r) {
    const int y = reflect101(t.y0 - R + r, src.height);
    const Word *row = reinterpret_cast<const Word *>(src.data + static_cast<size_t>(y) * src.stride);
    float *out = window + static_cast<size_t>(r) * stride;
    for (int c = 0; c < stride; ++c) {
      const int x = t.x0 - R + c;
      out[c] = float(levels.of(row[x >= 0 && x < src.width ? x : reflect101(x, src.width)])) * unit;
    }
  }
}

// The weighted means back in levels, rounded and clamped to the layout.
template <typename Word>
void store_tile(const Tile &t, const float *acc_w, const float *acc_v, Plane dst) {
  const float levels_per_unit = 1.f / nlm_level_unit(dst.samples);
  const long top = long(dst.samples.max_level());
  for (int y = 0; y < t.height; ++y) {
    Word *out = reinterpret_cast<Word *>(dst.data + static_cast<size_t>(t.y0 + y) * dst.stride) + t.x0;
    for (int x = 0; x < t.width; ++x) {
      const int i = y * t.width + x;
      const long v = std::lrintf((acc_v[i] / acc_w[i]) * levels_per_unit);
      out[x] = static_cast<Word>((v < 0 ? 0 : v > top ? top : v) << dst.samples.shift);
    }
  }
}

void denoise_tile(ConstPlane src, Plane dst, const NlmParams &p, const Tile &t, TileFn fn,
                  const std::array<float, kNlmMaxPatchSize> &taps, NlmWeightCoeffs c) {
  const int rp = p.patch_size / 2, rs = p.search_size / 2, R = rs + rp;
  const int stride = t.width + 2 * R, cw = t.width + 2 * rp;
  Scratch &s = thread_scratch();
  TileArgs a;
  a.window = grown(s.window, static_cast<size_t>(stride) * (t.height + 2 * R));
  a.stride = stride;
  a.rs = rs;
  a.tile = t;
  a.c = c;
  a.taps = taps.data();
  a.acc_w = grown(s.acc_w, static_cast<size_t>(t.width) * t.height);
  a.acc_v = grown(s.acc_v, static_cast<size_t>(t.width) * t.height);
  a.columns = grown(s.columns, static_cast<size_t>(cw));
  a.rows = grown(s.rows, static_cast<size_t>(cw) * (2 * rp + 1));
  if (src.samples.deep()) {
    load_window<uint16_t>(src, t, R, s.window.data(), stride);
    fn(a);
    store_tile<uint16_t>(t, a.acc_w, a.acc_v, dst);
  } else {
    load_window<uint8_t>(src, t, R, s.window.data(), stride);
    fn(a);
    store_tile<uint8_t>(t, a.acc_w, a.acc_v, dst);
  }
}

}  // namespace

std::string_view nlm_cpu_instruction_set() { return cpu_instruction_set(); }

std::vector<std::string_view> nlm_cpu_instruction_sets() { return cpu_instruction_sets(); }

void nlm_cpu(ConstPlane src, Plane dst, const NlmParams &p) {
  nlm_cpu_with(src, dst, p, nlm_cpu_instruction_set());
}

void nlm_cpu_with(ConstPlane src, Plane dst, const NlmParams &p, std::string_view isa) {
  const TileFn fn = select_tile_fn(p.patch_size / 2, p.gaussian, isa);
  const auto taps = nlm_gaussian_taps(p.patch_size);
  const NlmWeightCoeffs c = nlm_weight_coeffs(p);
  const int tiles_x = (src.width + kTileCols - 1) / kTileCols;
  const int tiles_y = (src.height + kTileRows - 1) / kTileRows;
  parallel_for(tiles_x * tiles_y, [&](int i) {
    Tile t;
    t.x0 = (i % tiles_x) * kTileCols;
    t.y0 = (i / tiles_x) * kTileRows;
    t.width = std::min(kTileCols, src.width - t.x0);
    t.height = std::min(kTileRows, src.height - t.y0);
    denoise_tile(src, dst, p, t, fn, taps, c);
  });
}

}  // namespace cudafilters

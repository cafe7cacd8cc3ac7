#include <cudafilters/nlm_cpu.h>

#include "cpu_isa.h"
#include "frame_store.h"
#include "hd_math.h"
#include "input_checks.h"
#include "nlm_auto.h"
#include "nlm_weights.h"
#include "noise_estimate.h"
#include "thread_pool.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
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
  // Tile plus R = search + patch radius on every side, one per frame of the
  // temporal window and channel: frame f, channel c at (f * channels + c).
  std::vector<float> windows;
  std::vector<float> acc_w, acc_v;  // acc_v: one tile per channel
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

// One frame of the search against the frame denoised: `ref` holds that
// frame's windows, `other` the searched frame's (the same when they are one
// frame), a window per channel.
template <int CH>
struct TileArgs {
  const float *ref[CH];    // (height + 2R) x (width + 2R), row stride `stride`
  const float *other[CH];
  int stride;
  int rs;
  Tile tile;
  NlmWeightCoeffs c;
  const float *taps;
  float *acc_w;            // height x width
  float *acc_v[CH];
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

// The squared difference at k between the frame denoised and the searched
// frame, `shift` away, summed over the channels.
template <int CH>
CF_INLINE float channel_distance(const float *const *ref, const float *const *other, int k,
                                 int shift) {
  float d = squared_diff(ref[0][k], other[0][k + shift]);
  if constexpr (CH == 2) d = d + squared_diff(ref[1][k], other[1][k + shift]);
  return d;
}

// out[k] = channel_distance at k, for the n positions from `offset` on.
template <int CH>
CF_INLINE void distance_row(const float *const *ref, const float *const *other, ptrdiff_t offset,
                            int shift, int n, float *__restrict out) {
  const float *r[CH], *o[CH];
  for (int c = 0; c < CH; ++c) {
    r[c] = ref[c] + offset;
    o[c] = other[c] + offset;
  }
  for (int k = 0; k < n; ++k) out[k] = channel_distance<CH>(r, o, k, shift);
}

// Weights of one output row from its patch distances, accumulated in the
// order the GPU kernel uses.
template <bool FUSED, int CH>
CF_INLINE void accumulate_row(const float *__restrict dist_of_columns, int rp, bool gaussian,
                              const float *__restrict taps, const float *const *pixels,
                              float *__restrict acc_w, float *const *acc_v, int width,
                              NlmWeightCoeffs c) {
  const float *__restrict pix0 = pixels[0];
  const float *__restrict pix1 = pixels[CH - 1];
  float *__restrict acc0 = acc_v[0];
  float *__restrict acc1 = acc_v[CH - 1];
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
    acc0[x] = madd<FUSED>(w, pix0[x], acc0[x]);
    if constexpr (CH == 2) acc1[x] = madd<FUSED>(w, pix1[x], acc1[x]);
  }
}

// Every search offset over one tile, for one searched frame; the weights
// add to what earlier frames of the temporal window left in the
// accumulators. Patch distances are separable: first down each column (a
// running sum for box patches, exact on 8-bit frames because every term is
// an integer below 2^24; a ring of the last rows for Gaussian ones), then
// along the row. Offsets run dx-major like the GPU kernel.
template <int RP, bool GAUSS, bool FUSED, int CH>
CF_INLINE void filter_tile(const TileArgs<CH> &a) {
  const int R = a.rs + RP, S = a.stride;
  const int w = a.tile.width, h = a.tile.height, cw = w + 2 * RP;
  const float *taps = a.taps;
  // Pixel (x, y) of the tile, x from -R: R * S + R + y * S + x. Distances
  // of row r cover columns -RP .. w + RP - 1: they start at row0 + r * S.
  const ptrdiff_t origin = ptrdiff_t(R) * S + R;
  const ptrdiff_t row0 = origin - RP;

  for (int dx = -a.rs; dx <= a.rs; ++dx) {
    const int rows = nlm_search_rows(a.rs, dx);
    for (int dy = -rows; dy <= rows; ++dy) {
      const int shift = dy * S + dx;
      float *__restrict cols = a.columns;
      if constexpr (!GAUSS) {
        for (int k = 0; k < cw; ++k) cols[k] = 0.f;
        for (int r = -RP; r <= RP; ++r) {
          const float *ref[CH], *oth[CH];
          for (int c = 0; c < CH; ++c) {
            ref[c] = a.ref[c] + row0 + r * S;
            oth[c] = a.other[c] + row0 + r * S;
          }
          for (int k = 0; k < cw; ++k) cols[k] += channel_distance<CH>(ref, oth, k, shift);
        }
      } else {
        for (int r = -RP; r < RP; ++r)
          distance_row<CH>(a.ref, a.other, row0 + r * S, shift, cw, a.rows + (r + RP) * cw);
      }
      for (int y = 0; y < h; ++y) {
        if constexpr (!GAUSS) {
          if (y > 0) {
            const float *add_r[CH], *add_o[CH], *sub_r[CH], *sub_o[CH];
            for (int c = 0; c < CH; ++c) {
              add_r[c] = a.ref[c] + row0 + (y + RP) * S;
              add_o[c] = a.other[c] + row0 + (y + RP) * S;
              sub_r[c] = a.ref[c] + row0 + (y - RP - 1) * S;
              sub_o[c] = a.other[c] + row0 + (y - RP - 1) * S;
            }
            for (int k = 0; k < cw; ++k)
              cols[k] = cols[k] + channel_distance<CH>(add_r, add_o, k, shift) -
                        channel_distance<CH>(sub_r, sub_o, k, shift);
          }
        } else {
          constexpr int kRing = 2 * RP + 1;
          distance_row<CH>(a.ref, a.other, row0 + (y + RP) * S, shift, cw,
                           a.rows + ((y + 2 * RP) % kRing) * cw);
          const float *ring[kRing];
          for (int t = 0; t < kRing; ++t) ring[t] = a.rows + ((y + t) % kRing) * cw;
          for (int k = 0; k < cw; ++k) {
            float v = taps[0] * ring[0][k];
            for (int t = 1; t < kRing; ++t) v = madd<FUSED>(taps[t], ring[t][k], v);
            cols[k] = v;
          }
        }
        const float *pixels[CH];
        float *acc_v[CH];
        for (int c = 0; c < CH; ++c) {
          pixels[c] = a.other[c] + origin + (y + dy) * S + dx;
          acc_v[c] = a.acc_v[c] + y * w;
        }
        accumulate_row<FUSED, CH>(cols, RP, GAUSS, taps, pixels, a.acc_w + y * w, acc_v, w, a.c);
      }
    }
  }
}

template <int CH>
using TileFn = void (*)(const TileArgs<CH> &);

// The same source compiled for several instruction sets, chosen at run time
// by what the CPU has. The variants with FMA do the same IEEE operations in
// the same order (explicit FMAs, no contraction), so they agree bit for bit.
#ifdef FP_FAST_FMAF
constexpr bool kBaselineFma = true;
#else
constexpr bool kBaselineFma = false;
#endif
template <int RP, bool GAUSS, int CH>
void filter_tile_baseline(const TileArgs<CH> &a) {
  filter_tile<RP, GAUSS, kBaselineFma, CH>(a);
}

#ifdef CUDAFILTERS_X86_VARIANTS
template <int RP, bool GAUSS, int CH>
__attribute__((target("avx2,fma"))) void filter_tile_avx2(const TileArgs<CH> &a) {
  filter_tile<RP, GAUSS, true, CH>(a);
}
template <int RP, bool GAUSS, int CH>
__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma,prefer-vector-width=512"))) void
filter_tile_avx512(const TileArgs<CH> &a) {
  filter_tile<RP, GAUSS, true, CH>(a);
}
#endif

constexpr int kMaxRp = kNlmMaxPatchSize / 2;

template <int CH, template <int, bool, int> class Variant, int... RP>
TileFn<CH> pick(int rp, bool gaussian, std::integer_sequence<int, RP...>) {
  static constexpr TileFn<CH> box[] = {Variant<RP, false, CH>::fn...};
  static constexpr TileFn<CH> gauss[] = {Variant<RP, true, CH>::fn...};
  return gaussian ? gauss[rp] : box[rp];
}

template <int RP, bool G, int CH>
struct Baseline {
  static constexpr TileFn<CH> fn = filter_tile_baseline<RP, G, CH>;
};
#ifdef CUDAFILTERS_X86_VARIANTS
template <int RP, bool G, int CH>
struct Avx2 {
  static constexpr TileFn<CH> fn = filter_tile_avx2<RP, G, CH>;
};
template <int RP, bool G, int CH>
struct Avx512 {
  static constexpr TileFn<CH> fn = filter_tile_avx512<RP, G, CH>;
};
#endif

template <int CH>
TileFn<CH> select_tile_fn(int rp, bool gaussian, std::string_view isa) {
  const auto all = std::make_integer_sequence<int, kMaxRp + 1>{};
#ifdef CUDAFILTERS_X86_VARIANTS
  if (isa == "avx512") return pick<CH, Avx512>(rp, gaussian, all);
  if (isa == "avx2") return pick<CH, Avx2>(rp, gaussian, all);
#endif
  return pick<CH, Baseline>(rp, gaussian, all);
}

// The tile and R pixels around it as floats in 8-bit units, borders
// mirrored (reflect-101). Samples lie `step` samples apart in a row.
template <typename Word>
void load_window(ConstPlane src, int step, const Tile &t, int R, float *window, int stride) {
  const float unit = nlm_level_unit(src.samples);
  const SampleLevels levels = sample_levels(src.samples);
  for (int r = 0; r < t.height + 2 * R; ++r) {
    const int y = reflect101(t.y0 - R + r, src.height);
    const Word *row = reinterpret_cast<const Word *>(src.data + static_cast<size_t>(y) * src.stride);
    float *out = window + static_cast<size_t>(r) * stride;
    for (int c = 0; c < stride; ++c) {
      const int x = t.x0 - R + c;
      const int sx = x >= 0 && x < src.width ? x : reflect101(x, src.width);
      out[c] = float(levels.of(row[sx * step])) * unit;
    }
  }
}

// The weighted means back in levels, rounded and clamped to the layout.
template <typename Word>
void store_tile(const Tile &t, const float *acc_w, const float *acc_v, Plane dst, int step) {
  const float levels_per_unit = 1.f / nlm_level_unit(dst.samples);
  const long top = long(dst.samples.max_level());
  for (int y = 0; y < t.height; ++y) {
    Word *out = reinterpret_cast<Word *>(dst.data + static_cast<size_t>(t.y0 + y) * dst.stride) +
                size_t(t.x0) * step;
    for (int x = 0; x < t.width; ++x) {
      const int i = y * t.width + x;
      const long v = std::lrintf((acc_v[i] / acc_w[i]) * levels_per_unit);
      out[x * step] = static_cast<Word>((v < 0 ? 0 : v > top ? top : v) << dst.samples.shift);
    }
  }
}

// What one denoising of CH channels needs: `frames` source channels (frame
// f, channel c at f * CH + c), in time order, and the frame denoised.
template <int CH>
struct ChannelJob {
  const ConstPlane *src;
  int frames;
  int center;
  int step;
  const Plane *dst;
  NlmWeightCoeffs c;
};

template <int CH>
void denoise_tile(const ChannelJob<CH> &job, const NlmParams &p, const Tile &t, TileFn<CH> fn,
                  const std::array<float, kNlmMaxPatchSize> &taps) {
  const int rp = p.patch_size / 2, rs = p.search_size / 2, R = rs + rp;
  const int stride = t.width + 2 * R, cw = t.width + 2 * rp;
  const size_t window_size = static_cast<size_t>(stride) * (t.height + 2 * R);
  const size_t tile_size = static_cast<size_t>(t.width) * t.height;
  Scratch &s = thread_scratch();
  float *windows = grown(s.windows, window_size * job.frames * CH);
  float *acc_w = grown(s.acc_w, tile_size);
  float *acc_v = grown(s.acc_v, tile_size * CH);
  const bool deep = job.src[0].samples.deep();
  for (int i = 0; i < job.frames * CH; ++i) {
    if (deep)
      load_window<uint16_t>(job.src[i], job.step, t, R, windows + i * window_size, stride);
    else
      load_window<uint8_t>(job.src[i], job.step, t, R, windows + i * window_size, stride);
  }
  for (size_t i = 0; i < tile_size; ++i) acc_w[i] = 0.f;
  for (size_t i = 0; i < tile_size * CH; ++i) acc_v[i] = 0.f;

  TileArgs<CH> a;
  a.stride = stride;
  a.rs = rs;
  a.tile = t;
  a.c = job.c;
  a.taps = taps.data();
  a.acc_w = acc_w;
  a.columns = grown(s.columns, static_cast<size_t>(cw));
  a.rows = grown(s.rows, static_cast<size_t>(cw) * (2 * rp + 1));
  for (int c = 0; c < CH; ++c) {
    a.ref[c] = windows + (job.center * CH + c) * window_size;
    a.acc_v[c] = acc_v + c * tile_size;
  }
  // The frame denoised first, then the others in time order: with one frame
  // this is the single-frame filter, operation for operation.
  for (int k = 0; k < job.frames; ++k) {
    const int f = k == 0 ? job.center : (k <= job.center ? k - 1 : k);
    for (int c = 0; c < CH; ++c) a.other[c] = windows + (f * CH + c) * window_size;
    fn(a);
  }
  for (int c = 0; c < CH; ++c) {
    if (deep)
      store_tile<uint16_t>(t, acc_w, a.acc_v[c], job.dst[c], job.step);
    else
      store_tile<uint8_t>(t, acc_w, a.acc_v[c], job.dst[c], job.step);
  }
}

template <int CH>
void denoise_channels(const ChannelJob<CH> &job, const NlmParams &p, std::string_view isa) {
  const TileFn<CH> fn = select_tile_fn<CH>(p.patch_size / 2, p.gaussian, isa);
  const auto taps = nlm_gaussian_taps(p.patch_size);
  const int width = job.dst[0].width, height = job.dst[0].height;
  const int tiles_x = (width + kTileCols - 1) / kTileCols;
  const int tiles_y = (height + kTileRows - 1) / kTileRows;
  parallel_for(tiles_x * tiles_y, [&](int i) {
    Tile t;
    t.x0 = (i % tiles_x) * kTileCols;
    t.y0 = (i / tiles_x) * kTileRows;
    t.width = std::min(kTileCols, width - t.x0);
    t.height = std::min(kTileRows, height - t.y0);
    denoise_tile<CH>(job, p, t, fn, taps);
  });
}

// Chroma left as it is: the chroma planes' rows, as bytes (U and V
// together where they interleave).
void copy_chroma(const FramePlanes &src, const FramePlanesOut &dst) {
  const FrameBytes from(src), to(dst.as_const());
  for (int i = 1; i < from.count; ++i)
    for (int y = 0; y < from.planes[i].height; ++y)
      std::memcpy(writable(to.planes[i]).data + size_t(y) * to.planes[i].stride,
                  from.planes[i].data + size_t(y) * from.planes[i].stride,
                  size_t(from.planes[i].width));
}

constexpr int kMaxWindow = 2 * kNlmMaxTemporalRadius + 1;

}  // namespace

void nlm_cpu_with(ConstPlane src, Plane dst, const NlmParams &p, std::string_view isa) {
  const ChannelJob<1> job{&src, 1, 0, 1, &dst, nlm_weight_coeffs(p)};
  denoise_channels<1>(job, p, isa);
}

struct NlmCpu::Impl {
  // The one place a frame's strength is decided (as NlmGpu's
  // resolve_strength): the settings of the frame about to be filtered,
  // params as given, or with the strengths from its noise (auto_strength).
  // A window of more than one frame reads its luma noise from the
  // difference of the frame denoised and its neighbour (frame_difference.h).
  NlmParams resolve_strength(const FramePlanes *window, int count, int center, bool chroma);

  NlmParams params;
  NoiseAverage luma_noise, chroma_noise, luma_correlated, still;
};

NlmParams NlmCpu::Impl::resolve_strength(const FramePlanes *window, int count, int center,
                                         bool chroma) {
  if (!params.auto_strength) return params;
  const FramePlanes &frame = window[center];
  const double past = params.noise_smoothing;
  // Chroma is read whether it is denoised or carried: it says whether the
  // luma's noise is a camera's (frame_noise_of).
  NoiseTable luma_table, chroma_table;
  luma_table.add(frame.luma);
  if (frame.has_chroma()) {
    chroma_table.add(frame.u, frame.chroma_step);
    chroma_table.add(frame.v, frame.chroma_step);
  }
  const FrameNoise f = frame_noise(luma_table, frame.has_chroma() ? &chroma_table : nullptr);
  const bool from_frames = window_reads_difference(params.temporal_radius, count,
                                                   frame.luma.width, frame.luma.height);
  const LumaNoise n = luma_noise_of(
      f.luma, from_frames,
      from_frames ? frame_difference(frame.luma, window[neighbour_of(count, center)].luma)
                  : FrameDifference{});
  const double luma = follow_noise(luma_noise, n.sigma, past);
  const double correlated = follow_noise(luma_correlated, f.luma.correlated, past);
  const double scene_still = follow_noise(still, n.still, past);
  double chroma_sigma = 0.0;
  if (chroma) chroma_sigma = follow_noise(chroma_noise, f.chroma.sigma, past);
  return nlm_auto_params(params, luma, chroma_sigma, correlated, scene_still);
}

NlmCpu::NlmCpu() : impl_(std::make_unique<Impl>()) {}
NlmCpu::~NlmCpu() = default;
NlmCpu::NlmCpu(NlmCpu &&) noexcept = default;
NlmCpu &NlmCpu::operator=(NlmCpu &&) noexcept = default;

void NlmCpu::set_params(const NlmParams &p) {
  check_params(nlm_params_error(p));
  impl_->params = p;
}

void NlmCpu::reset_history() {
  impl_->luma_noise = NoiseAverage{};
  impl_->chroma_noise = NoiseAverage{};
  impl_->luma_correlated = NoiseAverage{};
  impl_->still = NoiseAverage{};
}

void NlmCpu::process(ConstPlane src, Plane dst) {
  FramePlanes frame;
  frame.luma = src;
  FramePlanesOut out;
  out.luma = dst;
  check_window(&frame, 1, 0, out, kMaxWindow, "NlmCpu");
  nlm_cpu_with(src, dst, impl_->resolve_strength(&frame, 1, 0, false), cpu_instruction_set());
}

void NlmCpu::process_window(const FramePlanes *window, int count, int center,
                            const FramePlanesOut &dst) {
  check_window(window, count, center, dst, kMaxWindow, "NlmCpu");
  const bool chroma = dst.has_chroma() && impl_->params.chroma_h != 0.f;
  const NlmParams p = impl_->resolve_strength(window, count, center, chroma);
  const std::string_view isa = cpu_instruction_set();
  std::array<ConstPlane, 2 * kMaxWindow> src;  // per frame: luma, or U and V
  for (int f = 0; f < count; ++f) src[f] = window[f].luma;
  denoise_channels<1>(ChannelJob<1>{src.data(), count, center, 1, &dst.luma, nlm_weight_coeffs(p)},
                      p, isa);
  if (!dst.has_chroma()) return;
  const FramePlanes &mid = window[center];
  if (!nlm_denoises_chroma(p)) {
    copy_chroma(mid, dst);
    return;
  }
  for (int f = 0; f < count; ++f) {
    src[2 * f] = window[f].u;
    src[2 * f + 1] = window[f].v;
  }
  const Plane chroma_dst[2] = {dst.u, dst.v};
  denoise_channels<2>(ChannelJob<2>{src.data(), count, center, dst.chroma_step, chroma_dst,
                                    nlm_chroma_weight_coeffs(p)},
                      p, isa);
}

}  // namespace cudafilters

#include <cudafilters/nlm_gpu.h>

#include <cudafilters/cuda_check.h>
#include <cudafilters/cuda_memory.h>

#include "device_copy.h"
#include "frame_difference.h"
#include "frame_store.h"
#include "hd_math.h"
#include "input_checks.h"
#include "nlm_auto.h"
#include "nlm_weights.h"
#include "noise_estimate.h"
#include "noise_table.cuh"
#include "plane_kernels.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace cudafilters {

namespace {

// Non-local means with the patch distances on the tensor cores.
//
// For a search offset d the distance of every pixel is a separable filter
// of the squared differences E(y, x) = (I(y, x) - I'(y + dy, x + dx))^2,
// I the frame denoised and I' the frame searched: down the columns, then
// along the rows. On a 16-row band both are small matrix products with
// constant band matrices of the patch taps (ones for box patches):
//   V = Bv * E   (16 x k) . (k x 8): column sums of 8 columns,
//   D = V * Bh   (16 x 16|24) . (16|24 x 8): the distances of 16 x 8 pixels.
// mma.sync computes both with f16 inputs, V with f16 sums and D with f32
// sums. The layouts line up: the f16 accumulator fragment of a 16 x 8 V
// block is half of the A fragment the row product takes, so V never leaves
// registers and needs no conversion.
//
// A warp owns 16 x 32 output pixels (four 16 x 8 blocks) and runs through
// every offset alone, reading the block's tile in shared memory: there is no
// barrier per offset. Per offset and warp it computes the differences for
// 5 (6) column blocks of 8, squares them in packed f16 (HSUB2, HMUL2), and
// issues 5 (6) column products and 4 row products; then each thread turns
// its 16 distances into weights (one FFMA and one MUFU.EX2 each) and
// accumulates them and the weighted pixels in f32.
//
// Numbers: samples enter in 8-bit units (as on the CPU) and are stored /4 in
// f16, so that a squared difference is at most 64^2 (two channels: 2 * 64^2)
// and the column sums, scaled by 1/4 in Bv, stay below f16's 65504. On 8-bit
// frames the samples and their differences are exact, squares above 2048
// (differences above 45) round to 11 bits, and the column sums round to
// f16 after each of their two k-steps (by at most 2^-12 each time): the
// distances stay within about 0.05% of the CPU's exact integers. The
// weighted pixels are the f32 samples, exact at every depth.
constexpr int kWarpRows = 16;
constexpr int kWarpCols = 32;
constexpr int kOutBlocks = kWarpCols / 8;
constexpr int kMaxFrames = 2 * kNlmMaxTemporalRadius + 1;
// Samples are stored in f16 scaled by this; the column taps by kColumnScale.
constexpr float kSampleScale = 0.25f;
constexpr float kColumnScale = 0.25f;

// Patch radius up to 4 (patch 9) or 7 (patch 15): how many rows of
// differences 16 output rows take (a k16 and a k8 step, or two k16 steps),
// and how many 8-column blocks of column sums 32 output columns take.
constexpr int kSmallMaxRp = 4;
template <bool LARGE>
struct Shape {
  static constexpr int kDiffRows = LARGE ? 32 : 24;
  static constexpr int kDiffRegs = kDiffRows / 8;  // half2 pairs per column block and thread
  static constexpr int kColBlocks = kOutBlocks + (LARGE ? 2 : 1);
};

struct KernelArgs {
  // Frame f, channel c (c = 1 only with two channels), in time order.
  const uint8_t *src[kMaxFrames][2];
  size_t src_pitch[kMaxFrames];
  uint8_t *dst[2];
  size_t dst_pitch;
  int frames;
  int center;
  int width;  // samples of each channel
  int height;
  int step;   // samples from one pixel to the next in a row
  int rs;     // search radius
  int rp;     // patch radius
  int deep_layout;  // bits << 8 | shift for 16-bit words; 0 for bytes
  int warp_cols;    // warps per block row; block = warp_rows x warp_cols warps
  // Shared tile: rows x cols, row strides in words (see tile_geometry).
  int tile_rows;
  int tile_cols;
  int f_stride;
  int p_stride;
  // weight = exp2(min(D, 0)), D = S * a + b the tensor-core distance: the
  // row taps carry a (times the scales of the samples and column sums), the
  // row product's accumulator starts at b. coeffs[0] is that row_scale and
  // coeffs[1] b, for this channel group and frame, in device memory: written
  // before the launch on the same stream, from the strength given or from
  // the frame's noise (NlmGpu::Impl::resolve_strength).
  const float *coeffs;
  float taps[kNlmMaxPatchSize];  // patch taps, centred at rp (ones for box)
};

// A sample as a float in 8-bit units, clamped to its layout's levels.
__device__ __forceinline__ float sample_at(const uint8_t *row, int x, int step, int deep_layout) {
  if (deep_layout == 0) return float(row[x * step]);
  const int bits = deep_layout >> 8, shift = deep_layout & 0xFF;
  const uint32_t word = reinterpret_cast<const uint16_t *>(row)[x * step];
  const uint32_t top = (1u << bits) - 1;
  return float(min(word >> shift, top)) * ldexpf(1.f, 8 - bits);
}

__device__ __forceinline__ void store_sample(uint8_t *row, int x, int step, int deep_layout,
                                             float mean) {
  if (deep_layout == 0) {
    row[x * step] = static_cast<uint8_t>(min(max(__float2int_rn(mean), 0), 255));
    return;
  }
  const int bits = deep_layout >> 8, shift = deep_layout & 0xFF;
  const int top = (1 << bits) - 1;
  const int level = __float2int_rn(mean * ldexpf(1.f, bits - 8));
  reinterpret_cast<uint16_t *>(row)[x * step] =
      static_cast<uint16_t>(min(max(level, 0), top) << shift);
}

__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t *>(&h);
}

__device__ __forceinline__ __half2 as_half2(uint32_t v) {
  return *reinterpret_cast<const __half2 *>(&v);
}

__device__ __forceinline__ uint32_t as_u32(__half2 v) {
  return *reinterpret_cast<const uint32_t *>(&v);
}

// c += A (16 x 8) * B (8 x 8), f16 in, f32 accumulate.
__device__ __forceinline__ void mma_k8(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t b0) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a0), "r"(a1), "r"(b0));
}

// c = A (16 x 8) * B (8 x 8), from a zero accumulator that the hardware
// reads from its zero register (no instructions to clear c).
__device__ __forceinline__ void mma_k8_zero(float (&c)[4], uint32_t a0, uint32_t a1, uint32_t b0) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%7,%7,%7,%7};\n"
      : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
      : "r"(a0), "r"(a1), "r"(b0), "f"(0.f));
}

// Column sums V = Bv * E with f16 accumulators: the products come out
// packed as the row product's A fragment (d0: row g, d1: row g + 8), with no
// conversions (10 a warp and offset with f32 sums packed afterwards).
__device__ __forceinline__ void mma_k8_f16(uint32_t (&d)[2], uint32_t a0, uint32_t a1,
                                           uint32_t b0) {
  asm("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%0,%1};\n"
      : "+r"(d[0]), "+r"(d[1])
      : "r"(a0), "r"(a1), "r"(b0));
}

// d = A (16 x 16) * B (16 x 8) from a zero accumulator that the hardware
// reads from its zero register, as mma_k8_zero.
__device__ __forceinline__ void mma_k16_f16_zero(uint32_t (&d)[2], uint32_t a0, uint32_t a1,
                                                 uint32_t a2, uint32_t a3, uint32_t b0,
                                                 uint32_t b1) {
#if __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
      "{%8,%8};\n"
      : "=r"(d[0]), "=r"(d[1])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0u));
#else
  d[0] = d[1] = 0u;
  mma_k8_f16(d, a0, a1, b0);
  mma_k8_f16(d, a2, a3, b1);
#endif
}

// d += A (16 x 16) * B (16 x 8); two k8 steps where m16n8k16 is missing.
__device__ __forceinline__ void mma_k16_f16(uint32_t (&d)[2], uint32_t a0, uint32_t a1,
                                            uint32_t a2, uint32_t a3, uint32_t b0,
                                            uint32_t b1) {
#if __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
      "{%0,%1};\n"
      : "+r"(d[0]), "+r"(d[1])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
  mma_k8_f16(d, a0, a1, b0);
  mma_k8_f16(d, a2, a3, b1);
#endif
}

// exp2 of a non-positive argument as one MUFU instruction. The accurate
// exp2f adds range handling only for results below 2^-126: weights that make
// no difference to a sum that always holds the centre's weight of 1.
__device__ __forceinline__ float exp2_nonpositive(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float tap(const KernelArgs &k, int i) {
  return i >= 0 && i <= 2 * k.rp ? k.taps[i] : 0.f;
}

// The f16 band matrices, as this thread's fragments (g = lane / 4, t =
// lane % 4). Column product, A operand: Bv(m, kk) = tap(kk - m) * scale for
// kk in the first 16 rows of differences (a, four registers) and the rest
// (a_hi: two registers for a k8 step, four for a k16 step). Row product, B
// operand: Bh(kk, n) = tap(kk - n) * row_scale for V columns kk = 0..15 (b)
// and 16..23 (b_hi, patches past 9 only). row_scale folds the weight's
// scale into the product; rounded to f16 it is the strength within 0.03%
// (less precise only in f16's subnormal range, box patches with h above
// about 176).
template <bool LARGE>
struct BandFragments {
  uint32_t a[4];
  uint32_t a_hi[LARGE ? 4 : 2];
  uint32_t b[2];
  uint32_t b_hi;

  __device__ BandFragments(const KernelArgs &k, float row_scale, int g, int t) {
    auto bv = [&](int m, int kk) { return tap(k, kk - m) * kColumnScale; };
    a[0] = pack_half2(bv(g, 2 * t), bv(g, 2 * t + 1));
    a[1] = pack_half2(bv(g + 8, 2 * t), bv(g + 8, 2 * t + 1));
    a[2] = pack_half2(bv(g, 2 * t + 8), bv(g, 2 * t + 9));
    a[3] = pack_half2(bv(g + 8, 2 * t + 8), bv(g + 8, 2 * t + 9));
    a_hi[0] = pack_half2(bv(g, 16 + 2 * t), bv(g, 17 + 2 * t));
    a_hi[1] = pack_half2(bv(g + 8, 16 + 2 * t), bv(g + 8, 17 + 2 * t));
    if constexpr (LARGE) {
      a_hi[2] = pack_half2(bv(g, 24 + 2 * t), bv(g, 25 + 2 * t));
      a_hi[3] = pack_half2(bv(g + 8, 24 + 2 * t), bv(g + 8, 25 + 2 * t));
    }
    auto bh = [&](int kk, int n) { return tap(k, kk - n) * row_scale; };
    b[0] = pack_half2(bh(2 * t, g), bh(2 * t + 1, g));
    b[1] = pack_half2(bh(2 * t + 8, g), bh(2 * t + 9, g));
    b_hi = pack_half2(bh(16 + 2 * t, g), bh(17 + 2 * t, g));
  }
};

// Row i of F starts one word later when bit 2 of i is set. A warp's pixel
// loads read rows g and g + 8 (g = 0..7) at columns 2t (t = 0..3): with a
// row stride of 8 mod 32 banks, rows g and g + 4 would meet in the same
// banks, and every load take two passes. The one-word shift gives them
// banks of opposite parity, for any vertical offset.
__device__ __forceinline__ int f_row_start(int i, int f_stride) { return i * f_stride + ((i >> 2) & 1); }

// Loads frame f's tile into shared memory: F holds the samples as f32 in
// 8-bit units, P pairs of vertically neighbouring samples, scaled, as
// half2 (P(i, c) = (F(i, c), F(i + 1, c)) * kSampleScale). Tile row i, col
// c is the frame's (y0 - R + i, x0 - R + c), mirrored at the borders.
template <int CH>
__device__ void load_tile(const KernelArgs &k, int f, int y0, int x0, float *const (&F)[CH],
                          uint32_t *const (&P)[CH]) {
  const int R = k.rs + k.rp;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int i = warp; i < k.tile_rows + 1; i += warps) {
    const int y = reflect101(y0 - R + i, k.height);
    for (int c = 0; c < CH; ++c) {
      const uint8_t *row = k.src[f][c] + size_t(y) * k.src_pitch[f];
      float *out = F[c] + f_row_start(i, k.f_stride);
      for (int col = lane; col < k.tile_cols; col += 32) {
        int x = x0 - R + col;
        if (x < 0 || x >= k.width) x = reflect101(x, k.width);
        out[col] = sample_at(row, x, k.step, k.deep_layout);
      }
    }
  }
  __syncthreads();
  for (int i = warp; i < k.tile_rows; i += warps)
    for (int c = 0; c < CH; ++c)
      for (int col = lane; col < k.tile_cols; col += 32)
        P[c][i * k.p_stride + col] =
            pack_half2(F[c][f_row_start(i, k.f_stride) + col] * kSampleScale,
                       F[c][f_row_start(i + 1, k.f_stride) + col] * kSampleScale);
  __syncthreads();
}

// CLAMP: noise-sigma > 0, weights exp2(min(D, 0)); otherwise D is never
// positive and goes to exp2 as it is.
template <bool LARGE, int CH, bool CLAMP>
__global__ void __launch_bounds__(256, CH == 1 ? 2 : 1) nlm_kernel(const __grid_constant__ KernelArgs k) {
  using Sh = Shape<LARGE>;
  extern __shared__ float4 smem[];
  float *F[CH];
  uint32_t *P[CH];
  {
    float *base = reinterpret_cast<float *>(smem);
    const int f_words = (k.tile_rows + 1) * k.f_stride, p_words = k.tile_rows * k.p_stride;
    for (int c = 0; c < CH; ++c) {
      F[c] = base + c * (f_words + p_words);
      P[c] = reinterpret_cast<uint32_t *>(F[c] + f_words);
    }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int warp_rows = (blockDim.x >> 5) / k.warp_cols;
  const int wy = (warp / k.warp_cols) * kWarpRows, wx = (warp % k.warp_cols) * kWarpCols;
  const int y0 = blockIdx.y * warp_rows * kWarpRows, x0 = blockIdx.x * k.warp_cols * kWarpCols;
  const int rs = k.rs, R = k.rs + k.rp;

  // A luma kernel launched after nlm_auto_kernel (enqueue_channels) loads
  // its tile while that kernel sets the coefficients. Chroma's never follow
  // it directly (they run on a stream of their own) and read them first:
  // their code is slower in the other order.
  if constexpr (CH == 1) load_tile<CH>(k, k.center, y0, x0, F, P);
  kernels::wait_for_prerequisite_grid();
  const float row_scale = k.coeffs[0];
  const BandFragments<LARGE> band(k, row_scale, g, t);
  const float bias = k.coeffs[1];

  // Where this thread's fragments start: the differences of column block j,
  // register q lie in P at + q * 8 rows + 8 j columns (+ the offset); the
  // pixels of output block b, element e in F at + (e / 2) * 8 rows + 8 b +
  // e % 2 columns.
  const int f_row = wy + g + R;  // F row of element 0 with no offset
  int p_base[CH], f_base[CH];
  for (int c = 0; c < CH; ++c) {
    p_base[c] = (wy + 2 * t + rs) * k.p_stride + wx + g + rs;
    f_base[c] = f_row * k.f_stride + wx + 2 * t + R;
  }
  const int p_row8 = 8 * k.p_stride, f_row8 = 8 * k.f_stride;

  if constexpr (CH == 2) load_tile<CH>(k, k.center, y0, x0, F, P);
  uint32_t ref[CH][Sh::kColBlocks][Sh::kDiffRegs];
#pragma unroll
  for (int c = 0; c < CH; ++c)
#pragma unroll
    for (int j = 0; j < Sh::kColBlocks; ++j)
#pragma unroll
      for (int q = 0; q < Sh::kDiffRegs; ++q) ref[c][j][q] = P[c][p_base[c] + q * p_row8 + 8 * j];

  float acc_w[kOutBlocks][4], acc_v[CH][kOutBlocks][4];
#pragma unroll
  for (int b = 0; b < kOutBlocks; ++b)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      acc_w[b][e] = 0.f;
#pragma unroll
      for (int c = 0; c < CH; ++c) acc_v[c][b][e] = 0.f;
    }

  // The frame denoised first, then the others in time order (as the CPU).
  for (int fi = 0; fi < k.frames; ++fi) {
    if (fi > 0) {
      __syncthreads();  // every warp is done with the previous frame's tile
      load_tile<CH>(k, fi <= k.center ? fi - 1 : fi, y0, x0, F, P);
    }
    for (int dx = -rs; dx <= rs; ++dx) {
      // The disk's column dx (nlm_search_rows). Pointers walk down the rows
      // with dy: no index arithmetic per offset beyond a step and F's row
      // shift.
      const int rows = nlm_search_rows(rs, dx);
      const uint32_t *pq[CH][Sh::kDiffRegs];
      const float *fp[CH];
#pragma unroll
      for (int c = 0; c < CH; ++c) {
#pragma unroll
        for (int q = 0; q < Sh::kDiffRegs; ++q)
          pq[c][q] = P[c] + p_base[c] + q * p_row8 - rows * k.p_stride + dx;
        fp[c] = F[c] + f_base[c] - rows * k.f_stride + dx;
      }
      for (int dy = -rows, row = f_row - rows; dy <= rows; ++dy, ++row) {
        // Column sums of 16 rows x 8 columns per block, packed as the
        // row product's A fragments.
        uint32_t vh[Sh::kColBlocks][2];
#pragma unroll
        for (int j = 0; j < Sh::kColBlocks; ++j) {
          uint32_t e[Sh::kDiffRegs];
#pragma unroll
          for (int q = 0; q < Sh::kDiffRegs; ++q) {
            const __half2 d0 = __hsub2(as_half2(ref[0][j][q]), as_half2(pq[0][q][8 * j]));
            __half2 sq = __hmul2(d0, d0);
            if constexpr (CH == 2) {
              const __half2 d1 = __hsub2(as_half2(ref[1][j][q]), as_half2(pq[1][q][8 * j]));
              sq = __hfma2(d1, d1, sq);
            }
            e[q] = as_u32(sq);
          }
          mma_k16_f16_zero(vh[j], band.a[0], band.a[1], band.a[2], band.a[3], e[0], e[1]);
          if constexpr (LARGE)
            mma_k16_f16(vh[j], band.a_hi[0], band.a_hi[1], band.a_hi[2], band.a_hi[3], e[2], e[3]);
          else
            mma_k8_f16(vh[j], band.a_hi[0], band.a_hi[1], e[2]);
        }
        // Rows f_row + dy and f_row + dy + 8 share their shift (f_row_start).
        const int shift = (row >> 2) & 1;
#pragma unroll
        for (int b = 0; b < kOutBlocks; ++b) {
          // The row product in k8 steps, one column block each: a block's
          // fragment is then a whole A operand, not half of two.
          float dist[4];
          if constexpr (CLAMP) {
            dist[0] = dist[1] = dist[2] = dist[3] = bias;
            mma_k8(dist, vh[b][0], vh[b][1], band.b[0]);
          } else {
            mma_k8_zero(dist, vh[b][0], vh[b][1], band.b[0]);
          }
          mma_k8(dist, vh[b + 1][0], vh[b + 1][1], band.b[1]);
          if constexpr (LARGE) mma_k8(dist, vh[b + 2][0], vh[b + 2][1], band.b_hi);
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float w = exp2_nonpositive(CLAMP ? fminf(dist[e], 0.f) : dist[e]);
            acc_w[b][e] += w;
            const int at = shift + ((e >> 1) ? f_row8 : 0) + 8 * b + (e & 1);
#pragma unroll
            for (int c = 0; c < CH; ++c)
              acc_v[c][b][e] = fmaf(w, fp[c][at], acc_v[c][b][e]);
          }
        }
#pragma unroll
        for (int c = 0; c < CH; ++c) {
#pragma unroll
          for (int q = 0; q < Sh::kDiffRegs; ++q) pq[c][q] += k.p_stride;
          fp[c] += k.f_stride;
        }
      }
    }
  }

#pragma unroll
  for (int b = 0; b < kOutBlocks; ++b)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int y = y0 + wy + g + (e >> 1) * 8, x = x0 + wx + 8 * b + 2 * t + (e & 1);
      if (y >= k.height || x >= k.width) continue;
#pragma unroll
      for (int c = 0; c < CH; ++c)
        store_sample(k.dst[c] + size_t(y) * k.dst_pitch, x, k.step, k.deep_layout,
                     acc_v[c][b][e] / acc_w[b][e]);
    }
}

using KernelFn = void (*)(KernelArgs);

template <int CH, bool CLAMP>
KernelFn kernel_for(bool large) {
  return large ? nlm_kernel<true, CH, CLAMP> : nlm_kernel<false, CH, CLAMP>;
}

KernelFn kernel_for(bool large, int channels, bool clamp) {
  if (channels == 2) return clamp ? kernel_for<2, true>(large) : kernel_for<2, false>(large);
  return clamp ? kernel_for<1, true>(large) : kernel_for<1, false>(large);
}

// Row strides (in 4-byte words) that keep the fragment loads free of bank
// conflicts: a warp reads P at rows 2t (t = 0..3) and columns g (0..7), so
// a stride of 4 mod 32 puts its 32 words in 32 banks; F at rows g and
// column pairs 2t, where 8 mod 32 spreads each half-warp over all banks.
int stride_for(int cols, int mod32) { return (cols - mod32 + 31) / 32 * 32 + mod32; }

struct Launch {
  int warp_rows;
  int warp_cols;
  int tile_rows;
  int tile_cols;
  int f_stride;
  int p_stride;
  size_t shared_bytes;
};

Launch launch_for(int warp_rows, int warp_cols, int rs, bool large, int channels) {
  const int diff_rows = large ? Shape<true>::kDiffRows : Shape<false>::kDiffRows;
  const int col_blocks = large ? Shape<true>::kColBlocks : Shape<false>::kColBlocks;
  Launch l{warp_rows, warp_cols, 0, 0, 0, 0, 0};
  // Rows: the block's, the search halo and the rows of differences past a
  // warp's 16 (which cover the patch halo); columns likewise.
  l.tile_rows = warp_rows * kWarpRows + 2 * rs + (diff_rows - kWarpRows);
  l.tile_cols = warp_cols * kWarpCols + 2 * rs + (8 * col_blocks - kWarpCols);
  l.f_stride = stride_for(l.tile_cols + 1, 8);  // + 1: f_row_start's shift
  l.p_stride = stride_for(l.tile_cols, 4);
  const size_t words = size_t(l.tile_rows + 1) * l.f_stride + size_t(l.tile_rows) * l.p_stride;
  l.shared_bytes = 4 * words * channels;
  return l;
}

// The largest block that fits twice on a multiprocessor (so that one
// block's tile loads overlap another's search), else once.
Launch choose_launch(int rs, bool large, int channels, size_t max_shared) {
  static const int kShapes[][2] = {{4, 2}, {2, 2}, {1, 2}, {1, 1}};
  const int first = channels == 2 ? 1 : 0;  // two channels: tiles of half the size
  for (size_t per_sm : {max_shared / 2, max_shared})
    for (int i = first; i < 4; ++i) {
      const Launch l = launch_for(kShapes[i][0], kShapes[i][1], rs, large, channels);
      if (l.shared_bytes <= per_sm) return l;
    }
  throw std::runtime_error("search-size " + std::to_string(2 * rs + 1) + " needs " +
                           std::to_string(launch_for(1, 1, rs, large, channels).shared_bytes) +
                           " bytes of shared memory per block; this GPU has " +
                           std::to_string(max_shared));
}

int deep_layout_of(SampleLayout l) { return l.deep() ? (l.bits << 8 | l.shift) : 0; }

// The weight coefficients the NLM kernels read (KernelArgs::coeffs): luma's
// row_scale and b, then chroma's.
struct WeightCoeffs {
  float v[4];
};

// The products give S * kSampleScale^2 * kColumnScale * row_scale.
constexpr float kProductScale = kSampleScale * kSampleScale * kColumnScale;

// A given strength's coefficients; chroma's 0 where chroma is not denoised.
WeightCoeffs given_coeffs(const NlmParams &p, bool chroma) {
  const NlmWeightCoeffs l = nlm_weight_coeffs(p);
  WeightCoeffs c{{l.a / kProductScale, l.b, 0.f, 0.f}};
  if (chroma) {
    const NlmWeightCoeffs ch = nlm_chroma_weight_coeffs(p);
    c.v[2] = ch.a / kProductScale;
    c.v[3] = ch.b;
  }
  return c;
}

// Writes a given strength's coefficients where the NLM kernels read them.
__global__ void nlm_set_coeffs_kernel(float *coeffs, WeightCoeffs c) {
  for (int i = 0; i < 4; ++i) coeffs[i] = c.v[i];
}

// Automatic strength: the frame's noise, followed over the stream, sets the
// weight coefficients on the device for the NLM kernels that follow on the
// same stream.
struct AutoState {
  NoiseAverage luma;
  NoiseAverage chroma;
  NoiseAverage luma_correlated;
  NoiseAverage still;
};

struct AutoArgs {
  NoiseEstimatorGpu::Tables tables;  // this frame's: luma, chroma
  DifferenceTables difference;       // a window's luma (counts null: none)
  AutoState *state;
  float *coeffs;  // as WeightCoeffs
  double past_weight;
  float scale;
  int temporal_radius;
  int patch_size;
  bool gaussian;
  bool has_chroma;  // table 1 holds the frame's chroma
  bool chroma;      // chroma is denoised
  bool restart;
};

// One block of kNoiseReadThreads: the frame's estimates from their tables,
// then one thread follows them and sets the coefficients.
__global__ void __launch_bounds__(kNoiseReadThreads) nlm_auto_kernel(AutoArgs a) {
  // The tables come from the kernel before. Once that is done, so is all
  // work queued earlier, and the NLM kernel after this one may load its
  // tiles while this one sets the coefficients it waits for.
  kernels::wait_for_prerequisite_grid();
  kernels::allow_dependent_launch();
  __shared__ NoiseReadings r[kMaxNoiseTablesRead];
  NoiseTableGpu *const tables[kMaxNoiseTablesRead] = {a.tables.tables, a.tables.tables + 1};
  read_noise_tables(tables, a.tables.bits, a.has_chroma ? 2 : 1, r);
  const bool from_frames = a.difference.counts != nullptr;
  __shared__ double medians[kDifferenceShifts];
  if (from_frames) read_difference_tables(a.difference, medians);
  if (threadIdx.x != 0) return;
  const FrameNoise f = frame_noise_of(r[0], a.has_chroma, a.has_chroma ? r[1] : NoiseReadings{});
  AutoState &s = *a.state;
  if (a.restart) *a.state = AutoState{};
  const LumaNoise n = luma_noise_of(
      f.luma, from_frames,
      from_frames ? frame_difference_of(medians, a.difference.blocks) : FrameDifference{});
  const double luma = follow_noise(s.luma, n.sigma, a.past_weight);
  const double correlated = follow_noise(s.luma_correlated, f.luma.correlated, a.past_weight);
  const double still = follow_noise(s.still, n.still, a.past_weight);
  const double chroma = a.chroma ? follow_noise(s.chroma, f.chroma.sigma, a.past_weight) : 0.0;
  const NlmStrengths st = nlm_auto_strengths(luma, chroma, a.scale, a.temporal_radius, a.chroma,
                                             correlated, still);
  const NlmWeightCoeffs l =
      nlm_coeffs_of(st.h, st.noise_sigma, double(st.h), 1.0, a.gaussian, a.patch_size);
  a.coeffs[0] = __fdiv_rn(l.a, kProductScale);
  a.coeffs[1] = l.b;
  if (a.chroma) {
    const NlmWeightCoeffs c =
        nlm_coeffs_of(st.h, st.noise_sigma, double(st.chroma_h), 2.0, a.gaussian, a.patch_size);
    a.coeffs[2] = __fdiv_rn(c.a, kProductScale);
    a.coeffs[3] = c.b;
  }
}

}  // namespace

struct NlmGpu::Impl {
  // How a frame's patches are weighted, as resolve_strength decided it. The
  // kernels read the coefficients from coeffs_ either way; the host picks
  // the kernel variant.
  struct FrameStrength {
    bool automatic;
    WeightCoeffs given;  // with a given strength, what coeffs_ holds
    // The clamping kernel where b may be positive: always with automatic
    // strength (its noise allowance is known on the device only), else
    // where the given b is.
    bool clamp(int channels) const {
      return automatic || given.v[channels == 2 ? 3 : 1] > 0.f;
    }
  };

  // The one place a frame's strength is decided: automatic (auto_strength)
  // or given. Queues on `stream` what sets coeffs_ for the frame's kernels:
  // the noise estimate and nlm_auto_kernel, or the given strength's
  // coefficients where they differ from what coeffs_ holds.
  FrameStrength resolve_strength(const FramePlanes *window, int count, int center, bool chroma,
                                 cudaStream_t stream);
  // frames[f][c]: channel c of frame f; dst[c] likewise.
  // `after_auto`: the kernel follows nlm_auto_kernel on `stream` directly,
  // and may start while it runs.
  void enqueue_channels(const ConstPlane *const *frames, int count, int center, const Plane *dst,
                        int channels, int step, bool clamp, bool after_auto, cudaStream_t stream);
  // With auto_strength: estimates the noise of window[center] (its luma's
  // from the difference with its neighbour where the window has one, as
  // NlmCpu) and sets the weight coefficients in coeffs_, on `stream`.
  void enqueue_auto(const FramePlanes *window, int count, int center, bool chroma,
                    cudaStream_t stream);
  static void copy_chroma(const FramePlanes &src, const FramePlanesOut &dst, cudaStream_t stream);

  NlmParams params_;
  size_t max_shared_ = 0;
  // Whether the device runs programmatic dependent launch (9.0+), by which
  // automatic strength's kernels overlap.
  bool dependent_launch_ = false;
  // Chroma runs beside luma on a stream of its own, so that its blocks fill
  // the multiprocessors luma's last wave leaves idle; events fork it from
  // the caller's stream and join it back.
  Stream chroma_stream_;
  Event fork_{cudaEventDisableTiming};
  Event join_{cudaEventDisableTiming};
  // The weight coefficients the kernels read (WeightCoeffs). Like the
  // noise history, ordered by the stream of the frames (one at a time).
  DeviceArray<float> coeffs_{4};
  // A given strength's coefficients as last written to coeffs_; empty
  // before the first and once nlm_auto_kernel may have written since.
  std::optional<WeightCoeffs> written_;
  // Automatic strength, allocated with its first frame.
  std::unique_ptr<NoiseEstimatorGpu> estimator_;
  DeviceArray<AutoState> auto_state_;
  // A temporal window's luma estimate, allocated with its first window.
  std::unique_ptr<FrameDifferenceGpu> difference_;
  bool restart_ = true;
};

NlmGpu::NlmGpu() : impl_(std::make_unique<Impl>()) {
  const size_t optin = shared_memory_per_block();
  impl_->max_shared_ = optin;
  impl_->dependent_launch_ = kernels::device_has_dependent_launch();
  kernels::raise_dynamic_shared_limit(reinterpret_cast<const void *>(nlm_auto_kernel),
                                      noise_read_shared(kMaxNoiseTablesRead),
                                      "automatic strength");
  for (bool large : {false, true})
    for (int channels : {1, 2})
      for (bool clamp : {false, true}) {
        const KernelFn fn = kernel_for(large, channels, clamp);
        cudaFuncAttributes attr{};
        CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, fn));
        CUDAFILTERS_CHECK(
            cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(optin)));
        // Blocks per SM are bounded by shared memory: ask for all of it.
        CUDAFILTERS_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                               cudaSharedmemCarveoutMaxShared));
      }
}

NlmGpu::~NlmGpu() = default;
NlmGpu::NlmGpu(NlmGpu &&) noexcept = default;
NlmGpu &NlmGpu::operator=(NlmGpu &&) noexcept = default;

void NlmGpu::set_params(const NlmParams &p) {
  check_params(nlm_params_error(p));
  impl_->params_ = p;
}

void NlmGpu::reset_history() { impl_->restart_ = true; }

void NlmGpu::Impl::enqueue_auto(const FramePlanes *window, int count, int center, bool chroma,
                                cudaStream_t stream) {
  const FramePlanes &frame = window[center];
  if (!estimator_) {
    auto estimator = std::make_unique<NoiseEstimatorGpu>();
    DeviceArray<AutoState> state(1);
    estimator_ = std::move(estimator);
    auto_state_ = std::move(state);
  }
  // Chroma is read whether it is denoised or carried: it says whether the
  // luma's noise is a camera's (frame_noise_of).
  const bool has_chroma = frame.has_chroma();
  estimator_->add(0, frame.luma, 1, stream);
  if (has_chroma) {
    estimator_->add(1, frame.u, frame.chroma_step, stream);
    estimator_->add(1, frame.v, frame.chroma_step, stream);
  }
  const NlmParams &p = params_;
  DifferenceTables difference;
  if (window_reads_difference(p.temporal_radius, count, frame.luma.width, frame.luma.height)) {
    if (!difference_) difference_ = std::make_unique<FrameDifferenceGpu>();
    difference = difference_->fill(frame.luma, window[neighbour_of(count, center)].luma, stream);
  }
  const AutoArgs a{estimator_->fill(stream), difference, auto_state_.get(), coeffs_.get(),
                   double(p.noise_smoothing), p.auto_scale, p.temporal_radius, p.patch_size,
                   p.gaussian, has_chroma, chroma, restart_};
  cudaLaunchAttribute overlap = kernels::dependent_launch_attribute();
  const cudaLaunchConfig_t config =
      kernels::launch_config(1, kNoiseReadThreads, stream, dependent_launch_ ? &overlap : nullptr,
                             noise_read_shared(has_chroma ? 2 : 1));
  CUDAFILTERS_CHECK(cudaLaunchKernelEx(&config, nlm_auto_kernel, a));
  restart_ = false;
}

NlmGpu::Impl::FrameStrength NlmGpu::Impl::resolve_strength(const FramePlanes *window, int count,
                                                            int center, bool chroma,
                                                            cudaStream_t stream) {
  FrameStrength s{params_.auto_strength, {}};
  if (s.automatic) {
    written_.reset();
    enqueue_auto(window, count, center, chroma, stream);
    return s;
  }
  s.given = given_coeffs(params_, chroma);
  // Compared bit for bit: the kernels must read exactly these floats.
  if (!written_ || std::memcmp(written_->v, s.given.v, sizeof s.given.v) != 0) {
    nlm_set_coeffs_kernel<<<1, 1, 0, stream>>>(coeffs_.get(), s.given);
    check_launch("nlm_set_coeffs_kernel");
    written_ = s.given;
  }
  return s;
}

void NlmGpu::enqueue(ConstPlane src, Plane dst, cudaStream_t stream) {
  FramePlanes frame;
  frame.luma = src;
  FramePlanesOut out;
  out.luma = dst;
  enqueue_window(&frame, 1, 0, out, stream);
}

void NlmGpu::Impl::enqueue_channels(const ConstPlane *const *frames, int count, int center,
                                    const Plane *dst, int channels, int step, bool clamp,
                                    bool after_auto, cudaStream_t stream) {
  const NlmParams &p = params_;
  const int rp = p.patch_size / 2, rs = p.search_size / 2;
  const bool large = rp > kSmallMaxRp;
  const Launch l = choose_launch(rs, large, channels, max_shared_);

  KernelArgs k{};
  for (int f = 0; f < count; ++f) {
    for (int c = 0; c < channels; ++c) k.src[f][c] = frames[f][c].data;
    k.src_pitch[f] = frames[f][0].stride;
  }
  for (int c = 0; c < channels; ++c) k.dst[c] = dst[c].data;
  k.dst_pitch = dst[0].stride;
  k.frames = count;
  k.center = center;
  k.width = dst[0].width;
  k.height = dst[0].height;
  k.step = step;
  k.rs = rs;
  k.rp = rp;
  k.deep_layout = deep_layout_of(dst[0].samples);
  k.warp_cols = l.warp_cols;
  k.tile_rows = l.tile_rows;
  k.tile_cols = l.tile_cols;
  k.f_stride = l.f_stride;
  k.p_stride = l.p_stride;
  k.coeffs = coeffs_.get() + (channels == 2 ? 2 : 0);
  const auto gauss = nlm_gaussian_taps(p.patch_size);
  for (int i = 0; i < kNlmMaxPatchSize; ++i) k.taps[i] = p.gaussian ? gauss[i] : (i <= 2 * rp ? 1.f : 0.f);

  const int block_w = l.warp_cols * kWarpCols, block_h = l.warp_rows * kWarpRows;
  const dim3 grid((k.width + block_w - 1) / block_w, (k.height + block_h - 1) / block_h);
  cudaLaunchAttribute overlap = kernels::dependent_launch_attribute();
  cudaLaunchConfig_t config =
      kernels::launch_config(0, 32 * l.warp_rows * l.warp_cols, stream,
                             after_auto && dependent_launch_ ? &overlap : nullptr, l.shared_bytes);
  config.gridDim = grid;
  CUDAFILTERS_CHECK(cudaLaunchKernelEx(&config, kernel_for(large, channels, clamp), k));
}

void NlmGpu::enqueue_window(const FramePlanes *window, int count, int center,
                            const FramePlanesOut &dst, cudaStream_t stream) {
  check_window(window, count, center, dst, kMaxFrames, "NlmGpu");
  Impl &m = *impl_;
  ConstPlane luma[kMaxFrames][1], chroma[kMaxFrames][2];
  const ConstPlane *luma_frames[kMaxFrames], *chroma_frames[kMaxFrames];
  for (int f = 0; f < count; ++f) {
    const FramePlanes &w = window[f];
    luma[f][0] = w.luma;
    chroma[f][0] = w.u;
    chroma[f][1] = w.v;
    luma_frames[f] = luma[f];
    chroma_frames[f] = chroma[f];
  }
  const bool denoise_chroma = dst.has_chroma() && nlm_denoises_chroma(m.params_);
  const Impl::FrameStrength strength = m.resolve_strength(window, count, center, denoise_chroma, stream);
  if (!denoise_chroma) {
    m.enqueue_channels(luma_frames, count, center, &dst.luma, 1, 1, strength.clamp(1),
                       strength.automatic, stream);
    if (dst.has_chroma()) Impl::copy_chroma(window[center], dst, stream);
    return;
  }
  CUDAFILTERS_CHECK(cudaEventRecord(m.fork_.get(), stream));
  CUDAFILTERS_CHECK(cudaStreamWaitEvent(m.chroma_stream_.get(), m.fork_.get(), 0));
  m.enqueue_channels(luma_frames, count, center, &dst.luma, 1, 1, strength.clamp(1),
                     strength.automatic, stream);
  const Plane chroma_dst[2] = {dst.u, dst.v};
  m.enqueue_channels(chroma_frames, count, center, chroma_dst, 2, dst.chroma_step,
                     strength.clamp(2), false, m.chroma_stream_.get());
  CUDAFILTERS_CHECK(cudaEventRecord(m.join_.get(), m.chroma_stream_.get()));
  CUDAFILTERS_CHECK(cudaStreamWaitEvent(stream, m.join_.get(), 0));
}

void NlmGpu::Impl::copy_chroma(const FramePlanes &src, const FramePlanesOut &dst,
                               cudaStream_t stream) {
  // The chroma planes' rows as bytes (U and V together where they
  // interleave).
  const FrameBytes from(src), to(dst.as_const());
  Plane out[2];
  for (int i = 1; i < from.count; ++i) out[i - 1] = writable(to.planes[i]);
  enqueue_device_copy(from.planes + 1, out, from.count - 1, stream);
}

}  // namespace cudafilters

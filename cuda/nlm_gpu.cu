#include "nlm_gpu.h"

#include "cuda_check.h"

#include <string>
#include <utility>

namespace cudafilters {

namespace {

// A block filters a kTileW x kTileH tile. Stage 1: each thread takes kSeg-wide
// row segments and computes squared differences and horizontal patch sums.
// Stage 2: each thread owns one column, slides the vertical patch sum down it,
// and accumulates weights and weighted pixels in registers.
#ifndef NLM_TILE_H
#define NLM_TILE_H 16
#endif
#ifndef NLM_SEG
#define NLM_SEG 8
#endif
#ifndef NLM_FAST_EXP2
#define NLM_FAST_EXP2 1
#endif
#ifndef NLM_MIN_BLOCKS
#define NLM_MIN_BLOCKS 3
#endif
#ifndef NLM_CARVEOUT
#define NLM_CARVEOUT 1
#endif
constexpr int kTileW = 128;
constexpr int kTileH = NLM_TILE_H;
constexpr int kSeg = NLM_SEG;
constexpr int kSegsPerRow = kTileW / kSeg;
constexpr int kMaxRp = kNlmMaxPatchSize / 2;

// One padding float every 8: the kSeg-wide segments of a warp's threads then
// fall in different shared-memory banks.
__host__ __device__ constexpr int skew(int c) { return c + (c >> 3); }
constexpr int kHStride = skew(kTileW - 1) + 1;

struct KernelArgs {
  const uint8_t *src;
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  int width;
  int height;
  int rs;        // search radius
  int img_w;     // shared image tile width in pixels (kTileW + 2R)
  int img_h;
  int img_stride;
  float a, b;    // weight = exp2(min(S * a + b, 0))
  float taps[kNlmMaxPatchSize];
};

__device__ __forceinline__ int reflect101_dev(int i, int len) {
  if (len == 1) return 0;
  while (i < 0 || i >= len) i = i < 0 ? -i : 2 * len - 2 - i;
  return i;
}

int img_stride_for(int img_w) { return skew(img_w - 1) + 1; }

// exp2 of a non-positive argument as one MUFU instruction. The accurate
// exp2f adds range handling only for results below 2^-126, weights that
// make no difference to a sum that always holds the centre's weight of 1.
__device__ __forceinline__ float exp2_nonpositive(float x) {
#if NLM_FAST_EXP2
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return exp2f(x);
#endif
}

template <int RP, bool GAUSS>
__global__ void __launch_bounds__(kTileW, NLM_MIN_BLOCKS) nlm_kernel(const KernelArgs k) {
  constexpr int kHR = kTileH + 2 * RP;  // rows of horizontal sums a tile needs
  constexpr int kItems = (kHR * kSegsPerRow + kTileW - 1) / kTileW;
  constexpr int kWin = kSeg + 2 * RP;
  // Keeping the reference windows in registers saves shared loads, as long as
  // it leaves room for the rest.
#ifndef NLM_CACHE_REF
#define NLM_CACHE_REF 1
#endif
  constexpr bool kCacheRef = NLM_CACHE_REF && kItems * kWin <= 48;

  extern __shared__ float smem[];
  float *img = smem;
  float *hbuf = smem + k.img_h * k.img_stride;

  const int tid = threadIdx.x;
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  const int R = k.rs + RP;

  for (int i = tid; i < k.img_w * k.img_h; i += kTileW) {
    const int ty = i / k.img_w, tx = i - ty * k.img_w;
    const int gy = reflect101_dev(y0 - R + ty, k.height);
    const int gx = reflect101_dev(x0 - R + tx, k.width);
    img[ty * k.img_stride + skew(tx)] = k.src[gy * k.src_pitch + gx];
  }
  __syncthreads();

  // Stage-1 items: H row r = tid / kSegsPerRow + j * (kTileW / kSegsPerRow),
  // segment s = tid % kSegsPerRow, the same for every j.
  const int seg_x = (tid % kSegsPerRow) * kSeg;
  int item_row[kItems];
#pragma unroll
  for (int j = 0; j < kItems; ++j) item_row[j] = tid / kSegsPerRow + j * (kTileW / kSegsPerRow);

  auto img_at = [&](int row, int col) -> float { return img[row * k.img_stride + skew(col)]; };

  float ref[kCacheRef ? kItems : 1][kCacheRef ? kWin : 1];
  if constexpr (kCacheRef) {
#pragma unroll
    for (int j = 0; j < kItems; ++j)
#pragma unroll
      for (int m = 0; m < kWin; ++m)
        ref[j][m] = item_row[j] < kHR ? img_at(item_row[j] + k.rs, seg_x + k.rs + m) : 0.f;
  }

  float acc_w[kTileH], acc_v[kTileH];
#pragma unroll
  for (int y = 0; y < kTileH; ++y) acc_w[y] = acc_v[y] = 0.f;

  const int col = tid;
  int buf = 0;
  float win[kItems][kWin];

  for (int dy = -k.rs; dy <= k.rs; ++dy) {
    for (int dx = -k.rs; dx <= k.rs; ++dx) {
      // Shifted windows slide right by one pixel per dx step: one new load.
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if (item_row[j] >= kHR) continue;
        const int row = item_row[j] + k.rs + dy;
        const int c0 = seg_x + k.rs + dx;
        if (dx == -k.rs) {
#pragma unroll
          for (int m = 0; m < kWin; ++m) win[j][m] = img_at(row, c0 + m);
        } else {
#pragma unroll
          for (int m = 0; m < kWin - 1; ++m) win[j][m] = win[j][m + 1];
          win[j][kWin - 1] = img_at(row, c0 + kWin - 1);
        }
      }

      // Stage 1: squared differences and horizontal patch sums.
      float *hs = hbuf + buf * kHR * kHStride;
#pragma unroll
      for (int j = 0; j < kItems; ++j) {
        if (item_row[j] >= kHR) continue;
        float d[kWin];
#pragma unroll
        for (int m = 0; m < kWin; ++m) {
          const float r = kCacheRef ? ref[kCacheRef ? j : 0][kCacheRef ? m : 0]
                                    : img_at(item_row[j] + k.rs, seg_x + k.rs + m);
          const float diff = r - win[j][m];
          d[m] = diff * diff;
        }
        float *out = hs + item_row[j] * kHStride + skew(seg_x);
        if constexpr (GAUSS) {
#pragma unroll
          for (int o = 0; o < kSeg; ++o) {
            float s = k.taps[0] * d[o];
#pragma unroll
            for (int t = 1; t <= 2 * RP; ++t) s = fmaf(k.taps[t], d[o + t], s);
            out[o] = s;
          }
        } else {
          float s = 0.f;
#pragma unroll
          for (int t = 0; t <= 2 * RP; ++t) s += d[t];
          out[0] = s;
#pragma unroll
          for (int o = 1; o < kSeg; ++o) {
            s = s + d[o + 2 * RP] - d[o - 1];
            out[o] = s;
          }
        }
      }
      __syncthreads();

      // Stage 2: vertical patch sums down this thread's column, weights,
      // accumulation. hbuf is double-buffered, so one barrier per offset.
      float hcol[kHR];
#pragma unroll
      for (int r = 0; r < kHR; ++r) hcol[r] = hs[r * kHStride + skew(col)];
      const int src_row = k.rs + RP + dy, src_col = col + k.rs + RP + dx;
      // Patch distance of output row y. Box: two independent sliding chains
      // (rows 0.. and kTileH/2..) so their adds overlap.
      auto distance = [&](int y, float prev) -> float {
        if constexpr (GAUSS) {
          float v = k.taps[0] * hcol[y];
#pragma unroll
          for (int t = 1; t <= 2 * RP; ++t) v = fmaf(k.taps[t], hcol[y + t], v);
          return v;
        } else {
          if (y == 0 || y == kTileH / 2) {
            float v = 0.f;
#pragma unroll
            for (int t = 0; t <= 2 * RP; ++t) v += hcol[y + t];
            return v;
          }
          return prev + hcol[y + 2 * RP] - hcol[y - 1];
        }
      };
      auto accumulate = [&](int y, float w) {
        acc_w[y] += w;
        acc_v[y] = fmaf(w, img_at(src_row + y, src_col), acc_v[y]);
      };
      float v_lo = 0.f, v_hi = 0.f;
      if (k.b > 0.f) {
#pragma unroll
        for (int y = 0; y < kTileH / 2; ++y) {
          v_lo = distance(y, v_lo);
          v_hi = distance(y + kTileH / 2, v_hi);
          accumulate(y, exp2_nonpositive(fminf(fmaf(v_lo, k.a, k.b), 0.f)));
          accumulate(y + kTileH / 2, exp2_nonpositive(fminf(fmaf(v_hi, k.a, k.b), 0.f)));
        }
      } else {
        // noise-sigma 0: S * a is never positive, no clamp needed.
#pragma unroll
        for (int y = 0; y < kTileH / 2; ++y) {
          v_lo = distance(y, v_lo);
          v_hi = distance(y + kTileH / 2, v_hi);
          accumulate(y, exp2_nonpositive(v_lo * k.a));
          accumulate(y + kTileH / 2, exp2_nonpositive(v_hi * k.a));
        }
      }
      buf ^= 1;
    }
  }

  const int x = x0 + col;
  if (x < k.width) {
#pragma unroll
    for (int y = 0; y < kTileH; ++y) {
      if (y0 + y < k.height) {
        const int v = __float2int_rn(acc_v[y] / acc_w[y]);
        k.dst[(y0 + y) * k.dst_pitch + x] = static_cast<uint8_t>(min(max(v, 0), 255));
      }
    }
  }
}

using KernelFn = void (*)(KernelArgs);

template <int... RP>
constexpr std::pair<KernelFn, KernelFn> kernel_for(int rp, std::integer_sequence<int, RP...>) {
  KernelFn box[] = {nlm_kernel<RP, false>...};
  KernelFn gauss[] = {nlm_kernel<RP, true>...};
  return {box[rp], gauss[rp]};
}

KernelFn select_kernel(int rp, bool gaussian) {
  auto fns = kernel_for(rp, std::make_integer_sequence<int, kMaxRp + 1>{});
  return gaussian ? fns.second : fns.first;
}

}  // namespace

size_t NlmGpu::shared_bytes(const NlmParams &p) {
  const int R = p.search_size / 2 + p.patch_size / 2;
  const int img_w = kTileW + 2 * R, img_h = kTileH + 2 * R;
  const int hr = kTileH + 2 * (p.patch_size / 2);
  return sizeof(float) * (size_t(img_h) * img_stride_for(img_w) + 2 * size_t(hr) * kHStride);
}

NlmGpu::NlmGpu() {
  int device = 0, optin = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  max_shared_ = size_t(optin);
  for (int rp = 0; rp <= kMaxRp; ++rp) {
    for (bool gaussian : {false, true}) {
      const KernelFn fn = select_kernel(rp, gaussian);
      cudaFuncAttributes attr{};
      CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, fn));
      CUDAFILTERS_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
#if NLM_CARVEOUT
      // Blocks per SM are bounded by shared memory: ask for all of it.
      CUDAFILTERS_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                             cudaSharedmemCarveoutMaxShared));
#endif
    }
  }
}

void NlmGpu::enqueue(ConstPlane src, Plane dst, cudaStream_t stream) {
  const NlmParams &p = params_;
  const size_t smem = shared_bytes(p);
  if (smem > max_shared_)
    throw std::runtime_error("search-size " + std::to_string(p.search_size) + " with patch-size " +
                             std::to_string(p.patch_size) + " needs " + std::to_string(smem) +
                             " bytes of shared memory per block; this GPU has " +
                             std::to_string(max_shared_));

  KernelArgs k{};
  k.src = src.data;
  k.src_pitch = src.stride;
  k.dst = dst.data;
  k.dst_pitch = dst.stride;
  k.width = src.width;
  k.height = src.height;
  k.rs = p.search_size / 2;
  const int R = k.rs + p.patch_size / 2;
  k.img_w = kTileW + 2 * R;
  k.img_h = kTileH + 2 * R;
  k.img_stride = img_stride_for(k.img_w);
  const NlmWeightCoeffs c = nlm_weight_coeffs(p);
  k.a = c.a;
  k.b = c.b;
  const auto taps = nlm_gaussian_taps(p.patch_size);
  for (int i = 0; i < kNlmMaxPatchSize; ++i) k.taps[i] = taps[i];

  const dim3 grid((src.width + kTileW - 1) / kTileW, (src.height + kTileH - 1) / kTileH);
  select_kernel(p.patch_size / 2, p.gaussian)<<<grid, kTileW, smem, stream>>>(k);
  check_launch("nlm_kernel");
}

}  // namespace cudafilters

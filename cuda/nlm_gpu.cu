#include <cudafilters/nlm_gpu.h>

#include <cudafilters/detail/hd_math.h>

#include <cudafilters/cuda_check.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace cudafilters {

namespace {

// A block of kThreads threads filters a tile of out_w(RP) x kTileH pixels,
// looping over every search offset with one barrier per offset:
//  stage 1: thread c owns column c of the tile plus the patch halo; it takes
//    squared differences down the column and vertical sliding sums (each
//    difference computed once). The dy loop is innermost, so the shifted
//    column slides down one pixel per step: one shared load.
//  stage 2: threads own 8-pixel row segments; horizontal sliding sums of the
//    column sums give the patch distances; weights and weighted pixels
//    accumulate in registers.
// Patch distances cost O(1) per pixel and offset whatever the patch size
// (box); shared memory holds the tile and one row of sums per tile row, so
// memory is bounded for any frame size.
constexpr int kThreads = 128;
constexpr int kTileH = 16;
constexpr int kSeg = 8;
constexpr int kMaxRp = kNlmMaxPatchSize / 2;

// Blocks per SM the register allocation must allow. Measured on an H100:
// small patches run fastest with the registers for 3 blocks, large ones
// (longer columns in registers) with 4.
constexpr int min_blocks(int rp) { return rp <= 4 ? 3 : 4; }

constexpr int out_w(int rp) { return ((kThreads - 2 * rp) / kSeg) * kSeg; }

// Row strides of 1 modulo 32 banks: consecutive threads read consecutive
// banks in stage 1, and in stage 2 (see segment_of) a warp's 16 rows x 2
// segments 16 pixels apart fall in 32 different banks.
constexpr int bank_stride(int width) { return ((width + 30) / 32) * 32 + 1; }
constexpr int kSumStride = bank_stride(kThreads);

// Stage-2 work: item i covers row i % 16 of segment segment_of(i / 16, n).
// Within each complete group of 4 segments the order is 0, 2, 1, 3, so the
// two segments that share a warp are 16 pixels (16 banks) apart. A permutation
// of [0, n) for every n.
__host__ __device__ constexpr int segment_of(int pair_index, int n) {
  const int group = pair_index / 4, k = pair_index % 4;
  if (4 * group + 4 > n) return pair_index;
  return 4 * group + (k == 0 ? 0 : k == 1 ? 2 : k == 2 ? 1 : 3);
}

template <int n, int i = 0>
constexpr bool is_permutation() {
  if constexpr (i == n) {
    return true;
  } else {
    bool seen = false;
    for (int p = 0; p < n; ++p) seen = seen || segment_of(p, n) == i;
    return seen && is_permutation<n, i + 1>();
  }
}
static_assert(is_permutation<14>() && is_permutation<15>() && is_permutation<16>(),
              "every segment is covered once");

template <int RP>
struct Shape {
  static constexpr int kOutW = out_w(RP);
  static constexpr int kCols = kOutW + 2 * RP;  // stage-1 columns
  static constexpr int kRows = kTileH + 2 * RP; // differences per column
  static constexpr int kSegs = kOutW / kSeg;
  static constexpr int kItems = (kTileH * kSegs + kThreads - 1) / kThreads;
  static_assert(kCols <= kThreads, "one stage-1 column per thread");
};

struct KernelArgs {
  const uint8_t *src;
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  int width;
  int height;
  int rs;         // search radius
  int img_w;      // shared image tile: out_w + 2R columns, kTileH + 2R rows
  int img_h;
  int img_stride;
  float a, b;     // weight = exp2(min(S * a + b, 0))
  float taps[kNlmMaxPatchSize];
  // Deep planes: bits << 8 | shift. One int keeps the argument at 128
  // bytes, and the 8-bit kernels' machine code byte for byte what it was
  // before deep frames (compared on sm_90); 16 more bytes changed it.
  int deep_layout;
};

static_assert(sizeof(KernelArgs) == 128, "see deep_layout");

// What the kernel needs of a deep plane's layout, from deep_layout.
struct DeepLevels {
  int shift;
  uint32_t max_level;
  float unit;             // a level in 8-bit units, 2^(8 - bits) (nlm_level_unit)
  float levels_per_unit;  // 2^(bits - 8)

  __device__ explicit DeepLevels(int packed)
      : shift(packed & 0xFF),
        max_level((1u << (packed >> 8)) - 1),
        unit(ldexpf(1.f, 8 - (packed >> 8))),
        levels_per_unit(ldexpf(1.f, (packed >> 8) - 8)) {}
};

// exp2 of a non-positive argument as one MUFU instruction. The accurate
// exp2f adds range handling only for results below 2^-126: weights that make
// no difference to a sum that always holds the centre's weight of 1.
__device__ __forceinline__ float exp2_nonpositive(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// A deep source sample's level in 8-bit units, and a weighted mean (in 8-bit
// units) stored as a deep sample. DEEP is a template parameter: the 8-bit
// kernels keep their own loads and stores, untouched.
__device__ __forceinline__ float load_level(const uint8_t *row, int x, const DeepLevels &d) {
  const uint32_t word = reinterpret_cast<const uint16_t *>(row)[x];
  return float(min(word >> d.shift, d.max_level)) * d.unit;
}

__device__ __forceinline__ void store_level(uint8_t *row, int x, const DeepLevels &d, float mean) {
  const int level = __float2int_rn(mean * d.levels_per_unit);
  reinterpret_cast<uint16_t *>(row)[x] =
      static_cast<uint16_t>(min(max(level, 0), int(d.max_level)) << d.shift);
}

template <int RP, bool GAUSS, bool DEEP>
__global__ void __launch_bounds__(kThreads, min_blocks(RP)) nlm_kernel(const KernelArgs k) {
  using S = Shape<RP>;
  extern __shared__ float smem[];
  float *img = smem;
  float *sums = smem + k.img_h * k.img_stride;

  const int tid = threadIdx.x;
  const int x0 = blockIdx.x * S::kOutW, y0 = blockIdx.y * kTileH;
  const int R = k.rs + RP;

  for (int i = tid; i < k.img_w * k.img_h; i += kThreads) {
    const int ty = i / k.img_w, tx = i - ty * k.img_w;
    const int gy = reflect101(y0 - R + ty, k.height);
    const int gx = reflect101(x0 - R + tx, k.width);
    if constexpr (DEEP)
      img[ty * k.img_stride + tx] = load_level(k.src + gy * k.src_pitch, gx, DeepLevels(k.deep_layout));
    else
      img[ty * k.img_stride + tx] = k.src[gy * k.src_pitch + gx];
  }
  __syncthreads();

  // Stage 1: column tid is tile column tid - RP, shared column tid + rs.
  const bool has_col = tid < S::kCols;
  float ref[S::kRows];
#pragma unroll
  for (int r = 0; r < S::kRows; ++r)
    ref[r] = has_col ? img[(r + k.rs) * k.img_stride + tid + k.rs] : 0.f;

  int item_y[S::kItems], item_x[S::kItems];
  bool item_ok[S::kItems];
#pragma unroll
  for (int j = 0; j < S::kItems; ++j) {
    const int item = tid + j * kThreads;
    item_ok[j] = item < kTileH * S::kSegs;
    item_y[j] = item % kTileH;
    item_x[j] = item_ok[j] ? segment_of(item / kTileH, S::kSegs) * kSeg : 0;
  }
  float acc_w[S::kItems][kSeg], acc_v[S::kItems][kSeg];
#pragma unroll
  for (int j = 0; j < S::kItems; ++j)
#pragma unroll
    for (int o = 0; o < kSeg; ++o) acc_w[j][o] = acc_v[j][o] = 0.f;

  const bool clamp = k.b > 0.f;
  int buf = 0;
  float win[S::kRows];
  for (int dx = -k.rs; dx <= k.rs; ++dx) {
    for (int dy = -k.rs; dy <= k.rs; ++dy) {
      float *vs = sums + buf * kTileH * kSumStride;
      if (has_col) {
        const float *column = img + tid + k.rs + dx;
        if (dy == -k.rs) {
#pragma unroll
          for (int r = 0; r < S::kRows; ++r) win[r] = column[(r + k.rs + dy) * k.img_stride];
        } else {
#pragma unroll
          for (int r = 0; r < S::kRows - 1; ++r) win[r] = win[r + 1];
          win[S::kRows - 1] = column[(S::kRows - 1 + k.rs + dy) * k.img_stride];
        }
        float d[S::kRows];
#pragma unroll
        for (int r = 0; r < S::kRows; ++r) {
          const float diff = ref[r] - win[r];
          d[r] = diff * diff;
        }
        // The column pass and the row pass below are written out rather than
        // shared through a helper: the shared version needed the kernel
        // argument addressable (__grid_constant__) and ran 4% slower.
        if constexpr (GAUSS) {
#pragma unroll
          for (int y = 0; y < kTileH; ++y) {
            float v = k.taps[0] * d[y];
#pragma unroll
            for (int t = 1; t <= 2 * RP; ++t) v = fmaf(k.taps[t], d[y + t], v);
            vs[y * kSumStride + tid] = v;
          }
        } else {
          float v = 0.f;
#pragma unroll
          for (int t = 0; t <= 2 * RP; ++t) v += d[t];
          vs[tid] = v;
#pragma unroll
          for (int y = 1; y < kTileH; ++y) {
            v = v + d[y + 2 * RP] - d[y - 1];
            vs[y * kSumStride + tid] = v;
          }
        }
      }
      // Sums are double-buffered: one barrier per offset is enough.
      __syncthreads();

#pragma unroll
      for (int j = 0; j < S::kItems; ++j) {
        if (!item_ok[j]) continue;
        const float *vrow = vs + item_y[j] * kSumStride + item_x[j];
        float dist[kSeg];
        if constexpr (GAUSS) {
#pragma unroll
          for (int o = 0; o < kSeg; ++o) {
            float v = k.taps[0] * vrow[o];
#pragma unroll
            for (int t = 1; t <= 2 * RP; ++t) v = fmaf(k.taps[t], vrow[o + t], v);
            dist[o] = v;
          }
        } else {
          float v = 0.f;
#pragma unroll
          for (int t = 0; t <= 2 * RP; ++t) v += vrow[t];
          dist[0] = v;
#pragma unroll
          for (int o = 1; o < kSeg; ++o) {
            v = v + vrow[o + 2 * RP] - vrow[o - 1];
            dist[o] = v;
          }
        }
        const float *pix = img + (item_y[j] + R + dy) * k.img_stride + item_x[j] + R + dx;
#pragma unroll
        for (int o = 0; o < kSeg; ++o) {
          // noise-sigma 0: S * a is never positive, no clamp needed.
          const float arg = clamp ? fminf(fmaf(dist[o], k.a, k.b), 0.f) : dist[o] * k.a;
          const float w = exp2_nonpositive(arg);
          acc_w[j][o] += w;
          acc_v[j][o] = fmaf(w, pix[o], acc_v[j][o]);
        }
      }
      buf ^= 1;
    }
  }

#pragma unroll
  for (int j = 0; j < S::kItems; ++j) {
    const int y = y0 + item_y[j];
    if (!item_ok[j] || y >= k.height) continue;
#pragma unroll
    for (int o = 0; o < kSeg; ++o) {
      const int x = x0 + item_x[j] + o;
      if (x < k.width) {
        if constexpr (DEEP) {
          store_level(k.dst + y * k.dst_pitch, x, DeepLevels(k.deep_layout), acc_v[j][o] / acc_w[j][o]);
        } else {
          const int v = __float2int_rn(acc_v[j][o] / acc_w[j][o]);
          k.dst[y * k.dst_pitch + x] = static_cast<uint8_t>(min(max(v, 0), 255));
        }
      }
    }
  }
}

using KernelFn = void (*)(KernelArgs);

template <int... RP>
KernelFn kernel_for(int rp, bool gaussian, bool deep, std::integer_sequence<int, RP...>) {
  static constexpr KernelFn box[] = {nlm_kernel<RP, false, false>...};
  static constexpr KernelFn gauss[] = {nlm_kernel<RP, true, false>...};
  static constexpr KernelFn box_deep[] = {nlm_kernel<RP, false, true>...};
  static constexpr KernelFn gauss_deep[] = {nlm_kernel<RP, true, true>...};
  if (deep) return gaussian ? gauss_deep[rp] : box_deep[rp];
  return gaussian ? gauss[rp] : box[rp];
}

KernelFn select_kernel(int rp, bool gaussian, bool deep) {
  return kernel_for(rp, gaussian, deep, std::make_integer_sequence<int, kMaxRp + 1>{});
}

struct Geometry {
  int out_w, img_w, img_h, img_stride;
  size_t shared_bytes;
};

Geometry geometry(const NlmParams &p) {
  const int rp = p.patch_size / 2, R = p.search_size / 2 + rp;
  Geometry g{};
  g.out_w = out_w(rp);
  g.img_w = g.out_w + 2 * R;
  g.img_h = kTileH + 2 * R;
  g.img_stride = bank_stride(g.img_w);
  g.shared_bytes = sizeof(float) * (size_t(g.img_h) * g.img_stride + 2 * size_t(kTileH) * kSumStride);
  return g;
}

}  // namespace

NlmGpu::NlmGpu() {
  int device = 0, optin = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  max_shared_ = size_t(optin);
  for (int rp = 0; rp <= kMaxRp; ++rp) {
    for (int variant = 0; variant < 4; ++variant) {
      const KernelFn fn = select_kernel(rp, variant & 1, variant & 2);
      cudaFuncAttributes attr{};
      CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, fn));
      CUDAFILTERS_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
      // Blocks per SM are bounded by shared memory: ask for all of it.
      CUDAFILTERS_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                             cudaSharedmemCarveoutMaxShared));
    }
  }
}

void NlmGpu::enqueue(ConstPlane src, Plane dst, cudaStream_t stream) {
  const NlmParams &p = params_;
  const Geometry g = geometry(p);
  if (g.shared_bytes > max_shared_)
    throw std::runtime_error("search-size " + std::to_string(p.search_size) + " with patch-size " +
                             std::to_string(p.patch_size) + " needs " + std::to_string(g.shared_bytes) +
                             " bytes of shared memory per block; this GPU has " +
                             std::to_string(max_shared_));

  KernelArgs k{};
  k.src = src.data;
  k.src_pitch = src.stride;
  k.dst = dst.data;
  k.dst_pitch = dst.stride;
  k.width = src.width;
  k.height = src.height;
  k.deep_layout = src.samples.bits << 8 | src.samples.shift;
  k.rs = p.search_size / 2;
  k.img_w = g.img_w;
  k.img_h = g.img_h;
  k.img_stride = g.img_stride;
  const NlmWeightCoeffs c = nlm_weight_coeffs(p);
  k.a = c.a;
  k.b = c.b;
  const auto taps = nlm_gaussian_taps(p.patch_size);
  for (int i = 0; i < kNlmMaxPatchSize; ++i) k.taps[i] = taps[i];

  const dim3 grid((src.width + g.out_w - 1) / g.out_w, (src.height + kTileH - 1) / kTileH);
  select_kernel(p.patch_size / 2, p.gaussian, src.samples.deep())<<<grid, kThreads, g.shared_bytes, stream>>>(k);
  check_launch("nlm_kernel");
}

}  // namespace cudafilters

#include <cudafilters/sharpen_gpu.h>

#include <cudafilters/cuda_check.h>
#include <cudafilters/detail/hd_math.h>

#include "plane_kernels.cuh"

#include <algorithm>

namespace cudafilters {
namespace {

// A block makes a tile of kTileW x kTileH output pixels with 32 x 8
// threads; each thread makes 4 adjacent columns (one 32-bit word) of 2 rows.
constexpr int kThreadsX = 32;
constexpr int kThreadsY = 8;
constexpr int kThreads = kThreadsX * kThreadsY;
constexpr int kCols = 4;
constexpr int kRows = 2;
constexpr int kTileW = kThreadsX * kCols;  // 128
constexpr int kTileH = kThreadsY * kRows;  // 16

struct SharpenArgs {
  const uint8_t *src;
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  int width;
  int height;
  bool src_words;  // src rows start on 4-byte boundaries: 32-bit loads
  bool dst_words;  // the same for dst: 32-bit stores
  int taps;        // odd; 3 for the Laplacian
  float w_source;
  float w_blur;
  int threshold;
  uint16_t tap[kSharpenMaxTaps];
  kernels::CopyJobs carried;
};

enum class Mode { kUnsharp, kLaplacian };

// Shared memory of a block: the source tile with a halo of `pad` columns
// (the radius rounded up to whole words, so that the tile's own columns
// stay word-aligned) and `radius` rows on each side; then, for unsharp, the
// horizontally blurred rows, 16-bit.
struct TileLayout {
  int radius, pad;
  int in_w, in_h;  // bytes per staged row, staged rows
  int in_bytes;    // rounded up to keep the 16-bit rows 8-byte aligned
  size_t bytes;
};

__host__ __device__ inline TileLayout tile_layout(int taps, Mode mode) {
  TileLayout t;
  t.radius = taps / 2;
  t.pad = (t.radius + 3) & ~3;
  t.in_w = kTileW + 2 * t.pad;
  t.in_h = kTileH + 2 * t.radius;
  t.in_bytes = (t.in_w * t.in_h + 7) & ~7;
  t.bytes = t.in_bytes + (mode == Mode::kUnsharp ? size_t(kTileW) * t.in_h * 2 : 0);
  return t;
}

__device__ __forceinline__ uint32_t saturate_u8(int v) { return uint32_t(min(max(v, 0), 255)); }

// Stages rows y0 - radius ... and columns x0 - pad ... of the source; rows
// and columns outside the plane come from their reflect-101 mirror images.
__device__ __forceinline__ void stage_tile(const SharpenArgs &a, const TileLayout &t, int x0, int y0,
                                           uint8_t *in) {
  const int words = t.in_w / 4;
  for (int row = threadIdx.y; row < t.in_h; row += kThreadsY) {
    const int sy = reflect101(y0 - t.radius + row, a.height);
    const uint8_t *src = a.src + size_t(sy) * a.src_pitch;
    uint32_t *out = reinterpret_cast<uint32_t *>(in + row * t.in_w);
    for (int w = threadIdx.x; w < words; w += kThreadsX) {
      const int x = x0 - t.pad + 4 * w;
      uint32_t v;
      if (a.src_words && x >= 0 && x + 3 < a.width) {
        v = __ldg(reinterpret_cast<const uint32_t *>(src + x));
      } else {
        v = 0;
        for (int b = 0; b < 4; ++b) v |= uint32_t(__ldg(src + reflect101(x + b, a.width))) << (8 * b);
      }
      out[w] = v;
    }
  }
}

// This block's share of a grid-strided copy of the carried planes (the grid
// is two-dimensional).
__device__ __forceinline__ void copy_carried(const kernels::CopyJobs &carried) {
  const int block = blockIdx.y * gridDim.x + blockIdx.x;
  const int thread = threadIdx.y * kThreadsX + threadIdx.x;
  kernels::copy_planes(carried, block * kThreads + thread, gridDim.x * gridDim.y * kThreads);
}

// Writes four output pixels (packed in a word) of row y from column x.
__device__ __forceinline__ void store_word(const SharpenArgs &a, int x, int y, uint32_t v) {
  if (y >= a.height || x >= a.width) return;
  uint8_t *dst = a.dst + size_t(y) * a.dst_pitch + x;
  if (a.dst_words && x + 3 < a.width) {
    *reinterpret_cast<uint32_t *>(dst) = v;
  } else {
    for (int b = 0; b < 4 && x + b < a.width; ++b) dst[b] = uint8_t(v >> (8 * b));
  }
}

__device__ __forceinline__ uint32_t unsharp_pixel(const SharpenArgs &a, int level, uint32_t sum) {
  const int blur = int((sum + 32768u) >> 16);
  if (abs(level - blur) < a.threshold) return uint32_t(level);
  const float sharp = __fmaf_rn(float(level), a.w_source, __fmul_rn(float(blur), a.w_blur));
  return saturate_u8(__float2int_rn(sharp));
}

// kTaps > 0: the number of taps, known at compile time (loops unrolled);
// 0: a.taps at run time. Must match the layout the launch sized.
template <Mode kMode, int kTaps>
__global__ void __launch_bounds__(kThreads) sharpen_kernel(const SharpenArgs a) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int n = kTaps > 0 ? kTaps : a.taps;
  const TileLayout t = tile_layout(n, kMode);
  const int x0 = blockIdx.x * kTileW;
  const int y0 = blockIdx.y * kTileH;
  uint8_t *in = smem;

  stage_tile(a, t, x0, y0, in);
  copy_carried(a.carried);
  __syncthreads();

  const int col = threadIdx.x * kCols;   // first of this thread's columns
  const int row0 = threadIdx.y * kRows;  // first of its rows
  // The source pixels of this thread's outputs, one word per row.
  auto source_word = [&](int r) {
    return *reinterpret_cast<const uint32_t *>(in + (row0 + r + t.radius) * t.in_w + t.pad + col);
  };

  if (kMode == Mode::kLaplacian) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const uint8_t *c = in + (row0 + r + 1) * t.in_w + t.pad + col;
      uint32_t out = 0;
#pragma unroll
      for (int b = 0; b < kCols; ++b) {
        const int v = 5 * c[b] - c[b - 1] - c[b + 1] - c[b - t.in_w] - c[b + t.in_w];
        out |= saturate_u8(v) << (8 * b);
      }
      store_word(a, x0 + col, y0 + row0 + r, out);
    }
    return;
  }

  // Horizontal pass over every staged row, four columns per thread: exact
  // sums in 1/256 units (at most 256 x 255).
  uint16_t *h = reinterpret_cast<uint16_t *>(smem + t.in_bytes);
  for (int row = threadIdx.y; row < t.in_h; row += kThreadsY) {
    const uint8_t *p = in + row * t.in_w + t.pad - t.radius + col;
    uint32_t sum[kCols] = {0, 0, 0, 0};
#pragma unroll(kTaps > 0 ? kTaps + kCols - 1 : 4)
    for (int k = 0; k < n + kCols - 1; ++k) {
      const uint32_t v = p[k];
#pragma unroll
      for (int c = 0; c < kCols; ++c)
        if (k - c >= 0 && k - c < n) sum[c] += uint32_t(a.tap[k - c]) * v;
    }
    uint2 packed;
    packed.x = sum[0] | (sum[1] << 16);
    packed.y = sum[2] | (sum[3] << 16);
    *reinterpret_cast<uint2 *>(h + row * kTileW + col) = packed;
  }
  __syncthreads();

  // Vertical pass, kRows rows per thread sliding down the window (1/65536
  // units, rounded half up once), then the unsharp formula.
  uint32_t sum[kRows][kCols] = {};
#pragma unroll(kTaps > 0 ? kTaps + kRows - 1 : 4)
  for (int j = 0; j < n + kRows - 1; ++j) {
    const uint2 packed = *reinterpret_cast<const uint2 *>(h + (row0 + j) * kTileW + col);
    const uint32_t v[kCols] = {packed.x & 0xFFFFu, packed.x >> 16, packed.y & 0xFFFFu, packed.y >> 16};
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (j - r >= 0 && j - r < n) {
        const uint32_t tap = a.tap[j - r];
#pragma unroll
        for (int c = 0; c < kCols; ++c) sum[r][c] += tap * v[c];
      }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const uint32_t src = source_word(r);
    uint32_t out = 0;
#pragma unroll
    for (int c = 0; c < kCols; ++c) out |= unsharp_pixel(a, int((src >> (8 * c)) & 0xFFu), sum[r][c]) << (8 * c);
    store_word(a, x0 + col, y0 + row0 + r, out);
  }
}

using KernelFn = void (*)(SharpenArgs);

// Unrolled kernels for the narrow blurs sharpening mostly uses (radius up to
// about 2); wider ones take the run-time loop.
KernelFn unsharp_kernel(int taps) {
  switch (taps) {
    case 3: return sharpen_kernel<Mode::kUnsharp, 3>;
    case 5: return sharpen_kernel<Mode::kUnsharp, 5>;
    case 7: return sharpen_kernel<Mode::kUnsharp, 7>;
    case 9: return sharpen_kernel<Mode::kUnsharp, 9>;
    case 11: return sharpen_kernel<Mode::kUnsharp, 11>;
    case 13: return sharpen_kernel<Mode::kUnsharp, 13>;
    default: return sharpen_kernel<Mode::kUnsharp, 0>;
  }
}

void prepare_kernel(KernelFn fn, size_t shared) {
  cudaFuncAttributes attr{};
  // Fails when this build has no code for the current device.
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, fn));
  CUDAFILTERS_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
}

bool word_aligned(const void *p, size_t pitch) {
  return reinterpret_cast<uintptr_t>(p) % 4 == 0 && pitch % 4 == 0;
}

}  // namespace

SharpenGpu::SharpenGpu() : taps_(sharpen_gaussian_taps(params_.radius)) {
  const size_t widest = tile_layout(kSharpenMaxTaps, Mode::kUnsharp).bytes;
  for (int taps : {3, 5, 7, 9, 11, 13}) prepare_kernel(unsharp_kernel(taps), widest);
  prepare_kernel(unsharp_kernel(0), widest);
  prepare_kernel(sharpen_kernel<Mode::kLaplacian, 3>, tile_layout(3, Mode::kLaplacian).bytes);
}

void SharpenGpu::set_params(const SharpenParams &p) {
  if (p.radius != params_.radius) taps_ = sharpen_gaussian_taps(p.radius);
  params_ = p;
}

void SharpenGpu::enqueue(ConstPlane src, Plane dst, cudaStream_t stream) {
  enqueue_carrying(src, dst, {}, stream);
}

void SharpenGpu::enqueue_carrying(ConstPlane src, Plane dst, const CarriedPlanes &carried,
                                  cudaStream_t stream) {
  const bool laplacian = params_.kernel == SharpenKernel::kLaplacian3x3;
  SharpenArgs a{};
  a.src = src.data;
  a.src_pitch = src.stride;
  a.dst = dst.data;
  a.dst_pitch = dst.stride;
  a.width = src.width;
  a.height = src.height;
  a.src_words = word_aligned(src.data, src.stride);
  a.dst_words = word_aligned(dst.data, dst.stride);
  a.taps = laplacian ? 3 : int(taps_.size());
  const UnsharpWeights w = unsharp_weights(params_.amount);
  a.w_source = w.source;
  a.w_blur = w.blur;
  a.threshold = params_.threshold;
  std::copy(taps_.begin(), taps_.end(), a.tap);
  int copy_items = 0;
  a.carried = kernels::carried_jobs(carried, copy_items);

  const dim3 grid((src.width + kTileW - 1) / kTileW, (src.height + kTileH - 1) / kTileH);
  const dim3 block(kThreadsX, kThreadsY);
  const Mode mode = laplacian ? Mode::kLaplacian : Mode::kUnsharp;
  const KernelFn fn = laplacian ? sharpen_kernel<Mode::kLaplacian, 3> : unsharp_kernel(a.taps);
  fn<<<grid, block, tile_layout(a.taps, mode).bytes, stream>>>(a);
  check_launch("sharpen_kernel");
  copy_planes(carried, kernels::kMaxCarried, stream);
}

}  // namespace cudafilters

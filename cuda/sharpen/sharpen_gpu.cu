#include <cudafilters/sharpen_gpu.h>

#include <cudafilters/cuda_check.h>

#include "hd_math.h"
#include "input_checks.h"
#include "plane_kernels.cuh"
#include "sharpen_state.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

namespace cudafilters {
namespace {

// A block makes a tile of kTileW x kTileH output pixels with 32 x 8
// threads; each thread makes the samples of one 32-bit word (4 on 8-bit
// planes, 2 on 16-bit ones) in each of 2 rows.
constexpr int kThreadsX = 32;
constexpr int kThreadsY = 8;
constexpr int kThreads = kThreadsX * kThreadsY;
constexpr int kRows = 2;
constexpr int kTileH = kThreadsY * kRows;  // 16

// The integer types of each depth: samples, levels staged in shared memory,
// horizontal sums (exact: at most 2^frac x the largest level), vertical sums
// (exact: 2^(2 frac) x the largest level); the horizontal sums of a thread's
// columns fill one 8-byte word.
struct Bytes {
  using Sample = uint8_t;
  using HSum = uint16_t;
  using VSum = uint32_t;
  static constexpr bool kDeep = false;
};
struct Words {
  using Sample = uint16_t;
  using HSum = uint32_t;
  using VSum = uint64_t;
  static constexpr bool kDeep = true;
};

template <typename D>
struct Tile {
  static constexpr int kCols = 4 / int(sizeof(typename D::Sample));
  static constexpr int kW = kThreadsX * kCols;  // 128 or 64
  static constexpr int kFrac = sharpen_tap_bits(D::kDeep);
  static_assert(kCols * sizeof(typename D::HSum) == 8, "a thread's sums fill 8 bytes");
};

struct SharpenArgs {
  const uint8_t *src;
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  int width;
  int height;
  SampleLayout samples;
  bool src_words;  // src rows start on 4-byte boundaries: 32-bit loads
  bool dst_words;  // the same for dst: 32-bit stores
  int taps;        // odd; 3 for the Laplacian
  float w_source;
  float w_blur;
  int threshold;   // in levels of the plane
  uint32_t tap[kSharpenMaxTapsDeep];
  kernels::CopyJobs carried;
};

enum class Mode { kUnsharp, kLaplacian };

// Shared memory of a block: the source tile's levels with a halo of `pad`
// columns (the radius rounded up to whole words, so that the tile's own
// columns stay word-aligned) and `radius` rows on each side; then, for
// unsharp, the horizontally blurred rows.
struct TileLayout {
  int radius, pad;
  int in_w, in_h;  // samples per staged row, staged rows
  int in_bytes;    // rounded up to keep the sums' rows 8-byte aligned
  size_t bytes;
};

template <typename D>
__host__ __device__ inline TileLayout tile_layout(int taps, Mode mode) {
  constexpr int kCols = Tile<D>::kCols;
  TileLayout t;
  t.radius = taps / 2;
  t.pad = (t.radius + kCols - 1) / kCols * kCols;
  t.in_w = Tile<D>::kW + 2 * t.pad;
  t.in_h = kTileH + 2 * t.radius;
  t.in_bytes = (t.in_w * t.in_h * int(sizeof(typename D::Sample)) + 7) & ~7;
  t.bytes = t.in_bytes + (mode == Mode::kUnsharp
                              ? size_t(Tile<D>::kW) * t.in_h * sizeof(typename D::HSum)
                              : 0);
  return t;
}

// The level of a sample (the identity on 8-bit planes).
template <typename D>
__device__ __forceinline__ uint32_t level_of(uint32_t sample, const SampleLayout &l) {
  if constexpr (!D::kDeep) return sample;
  else return min(sample >> l.shift, l.max_level());
}

// Stages rows y0 - radius ... and columns x0 - pad ... of the source as
// levels; rows and columns outside the plane come from their reflect-101
// mirror images.
template <typename D>
__device__ __forceinline__ void stage_tile(const SharpenArgs &a, const TileLayout &t, int x0, int y0,
                                           typename D::Sample *in) {
  using Sample = typename D::Sample;
  constexpr int kCols = Tile<D>::kCols, kBits = 8 * int(sizeof(Sample));
  const int words = t.in_w / kCols;
  for (int row = threadIdx.y; row < t.in_h; row += kThreadsY) {
    const int sy = reflect101(y0 - t.radius + row, a.height);
    const Sample *src = reinterpret_cast<const Sample *>(a.src + size_t(sy) * a.src_pitch);
    uint32_t *out = reinterpret_cast<uint32_t *>(in + row * t.in_w);
    for (int w = threadIdx.x; w < words; w += kThreadsX) {
      const int x = x0 - t.pad + kCols * w;
      uint32_t v = 0;
      if (a.src_words && x >= 0 && x + kCols - 1 < a.width) {
        const uint32_t raw = __ldg(reinterpret_cast<const uint32_t *>(src + x));
        if constexpr (D::kDeep)
          v = level_of<D>(raw & 0xFFFFu, a.samples) | (level_of<D>(raw >> 16, a.samples) << 16);
        else
          v = raw;
      } else {
        for (int b = 0; b < kCols; ++b)
          v |= level_of<D>(__ldg(src + reflect101(x + b, a.width)), a.samples) << (kBits * b);
      }
      out[w] = v;
    }
  }
}

// This block's share of a grid-strided copy of the carried planes (the grid
// is two-dimensional; a plane of kMaxPlaneBytes gives it at most about 2^28
// threads).
__device__ __forceinline__ void copy_carried(const kernels::CopyJobs &carried) {
  const unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
  const unsigned thread = threadIdx.y * kThreadsX + threadIdx.x;
  kernels::copy_planes(carried, block * kThreads + thread, gridDim.x * gridDim.y * kThreads);
}

// Writes the levels of one word of output (packed, lowest sample first) at
// column x of row y, shifted to the plane's layout.
template <typename D>
__device__ __forceinline__ void store_word(const SharpenArgs &a, int x, int y, uint32_t levels) {
  using Sample = typename D::Sample;
  constexpr int kCols = Tile<D>::kCols, kBits = 8 * int(sizeof(Sample));
  if (y >= a.height || x >= a.width) return;
  Sample *dst = reinterpret_cast<Sample *>(a.dst + size_t(y) * a.dst_pitch) + x;
  if constexpr (D::kDeep) {
    const uint32_t lo = (levels & 0xFFFFu) << a.samples.shift, hi = (levels >> 16) << a.samples.shift;
    levels = (lo & 0xFFFFu) | (hi << 16);
  }
  if (a.dst_words && x + kCols - 1 < a.width) {
    *reinterpret_cast<uint32_t *>(dst) = levels;
  } else {
    for (int b = 0; b < kCols && x + b < a.width; ++b) dst[b] = Sample(levels >> (kBits * b));
  }
}

// A thread's horizontal sums in one 8-byte word, lowest column first.
template <typename D>
__device__ __forceinline__ uint2 pack_sums(const typename D::HSum (&s)[Tile<D>::kCols]) {
  if constexpr (D::kDeep) return make_uint2(s[0], s[1]);
  else return make_uint2(uint32_t(s[0]) | (uint32_t(s[1]) << 16), uint32_t(s[2]) | (uint32_t(s[3]) << 16));
}

template <typename D>
__device__ __forceinline__ void unpack_sums(uint2 w, typename D::HSum (&s)[Tile<D>::kCols]) {
  if constexpr (D::kDeep) {
    s[0] = w.x;
    s[1] = w.y;
  } else {
    s[0] = uint16_t(w.x & 0xFFFFu);
    s[1] = uint16_t(w.x >> 16);
    s[2] = uint16_t(w.y & 0xFFFFu);
    s[3] = uint16_t(w.y >> 16);
  }
}

__device__ __forceinline__ uint32_t saturate(int v, int top) { return uint32_t(min(max(v, 0), top)); }

template <typename D>
__device__ __forceinline__ uint32_t unsharp_pixel(const SharpenArgs &a, int level, typename D::VSum sum) {
  constexpr int kShift = 2 * Tile<D>::kFrac;
  const int blur = int((sum + (typename D::VSum(1) << (kShift - 1))) >> kShift);
  if (abs(level - blur) < a.threshold) return uint32_t(level);
  const float sharp = __fmaf_rn(float(level), a.w_source, __fmul_rn(float(blur), a.w_blur));
  return saturate(__float2int_rn(sharp), int(a.samples.max_level()));
}

// kTaps > 0: the number of taps, known at compile time (loops unrolled);
// 0: a.taps at run time. Must match the layout the launch sized.
template <typename D, Mode kMode, int kTaps>
__global__ void __launch_bounds__(kThreads) sharpen_kernel(const SharpenArgs a) {
  using Sample = typename D::Sample;
  using HSum = typename D::HSum;
  using VSum = typename D::VSum;
  constexpr int kCols = Tile<D>::kCols, kBits = 8 * int(sizeof(Sample));
  constexpr uint32_t kMask = (1u << kBits) - 1;
  extern __shared__ __align__(16) uint8_t smem[];
  const int n = kTaps > 0 ? kTaps : a.taps;
  const TileLayout t = tile_layout<D>(n, kMode);
  const int x0 = blockIdx.x * Tile<D>::kW;
  const int y0 = blockIdx.y * kTileH;
  Sample *in = reinterpret_cast<Sample *>(smem);

  stage_tile<D>(a, t, x0, y0, in);
  copy_carried(a.carried);
  __syncthreads();

  const int col = threadIdx.x * kCols;   // first of this thread's columns
  const int row0 = threadIdx.y * kRows;  // first of its rows
  const int top = int(a.samples.max_level());

  if (kMode == Mode::kLaplacian) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const Sample *c = in + (row0 + r + 1) * t.in_w + t.pad + col;
      uint32_t out = 0;
#pragma unroll
      for (int b = 0; b < kCols; ++b) {
        const int v = 5 * c[b] - c[b - 1] - c[b + 1] - c[b - t.in_w] - c[b + t.in_w];
        out |= saturate(v, top) << (kBits * b);
      }
      store_word<D>(a, x0 + col, y0 + row0 + r, out);
    }
    return;
  }

  // Horizontal pass over every staged row, kCols columns per thread: exact
  // sums in 1/2^frac units.
  HSum *h = reinterpret_cast<HSum *>(smem + t.in_bytes);
  for (int row = threadIdx.y; row < t.in_h; row += kThreadsY) {
    const Sample *p = in + row * t.in_w + t.pad - t.radius + col;
    HSum sum[kCols] = {};
#pragma unroll(kTaps > 0 ? kTaps + kCols - 1 : 4)
    for (int k = 0; k < n + kCols - 1; ++k) {
      const uint32_t v = p[k];
#pragma unroll
      for (int c = 0; c < kCols; ++c)
        if (k - c >= 0 && k - c < n) sum[c] = HSum(sum[c] + a.tap[k - c] * v);
    }
    *reinterpret_cast<uint2 *>(h + row * Tile<D>::kW + col) = pack_sums<D>(sum);
  }
  __syncthreads();

  // Vertical pass, kRows rows per thread sliding down the window (1/2^(2
  // frac) units, rounded half up once), then the unsharp formula.
  VSum sum[kRows][kCols] = {};
#pragma unroll(kTaps > 0 ? kTaps + kRows - 1 : 4)
  for (int j = 0; j < n + kRows - 1; ++j) {
    HSum v[kCols];
    unpack_sums<D>(*reinterpret_cast<const uint2 *>(h + (row0 + j) * Tile<D>::kW + col), v);
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (j - r >= 0 && j - r < n) {
        const VSum tap = a.tap[j - r];
#pragma unroll
        for (int c = 0; c < kCols; ++c) sum[r][c] += tap * v[c];
      }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const uint32_t src =
        *reinterpret_cast<const uint32_t *>(in + (row0 + r + t.radius) * t.in_w + t.pad + col);
    uint32_t out = 0;
#pragma unroll
    for (int c = 0; c < kCols; ++c)
      out |= unsharp_pixel<D>(a, int((src >> (kBits * c)) & kMask), sum[r][c]) << (kBits * c);
    store_word<D>(a, x0 + col, y0 + row0 + r, out);
  }
}

using KernelFn = void (*)(SharpenArgs);

// Unrolled kernels for the narrow blurs sharpening mostly uses (radius up to
// about 2 on 8-bit planes, 1.5 on deeper ones); wider ones take the run-time
// loop.
template <typename D>
KernelFn unsharp_kernel(int taps) {
  switch (taps) {
    case 3: return sharpen_kernel<D, Mode::kUnsharp, 3>;
    case 5: return sharpen_kernel<D, Mode::kUnsharp, 5>;
    case 7: return sharpen_kernel<D, Mode::kUnsharp, 7>;
    case 9: return sharpen_kernel<D, Mode::kUnsharp, 9>;
    case 11: return sharpen_kernel<D, Mode::kUnsharp, 11>;
    case 13: return sharpen_kernel<D, Mode::kUnsharp, 13>;
    default: return sharpen_kernel<D, Mode::kUnsharp, 0>;
  }
}

void prepare_kernel(KernelFn fn, size_t shared) {
  cudaFuncAttributes attr{};
  // Fails when this build has no code for the current device.
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, fn));
  CUDAFILTERS_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
}

// Allows the widest blur where the device has the shared memory for it; a
// launch that needs more than the device has is refused in enqueue.
template <typename D>
void prepare_kernels(int widest_taps, size_t max_shared) {
  const size_t widest = std::min(tile_layout<D>(widest_taps, Mode::kUnsharp).bytes, max_shared);
  for (int taps : {3, 5, 7, 9, 11, 13}) prepare_kernel(unsharp_kernel<D>(taps), widest);
  prepare_kernel(unsharp_kernel<D>(0), widest);
  prepare_kernel(sharpen_kernel<D, Mode::kLaplacian, 3>, tile_layout<D>(3, Mode::kLaplacian).bytes);
}

template <typename D>
void launch(const SharpenArgs &a, bool laplacian, size_t max_shared, cudaStream_t stream) {
  const dim3 grid((a.width + Tile<D>::kW - 1) / Tile<D>::kW, (a.height + kTileH - 1) / kTileH);
  const dim3 block(kThreadsX, kThreadsY);
  const Mode mode = laplacian ? Mode::kLaplacian : Mode::kUnsharp;
  const size_t shared = tile_layout<D>(a.taps, mode).bytes;
  if (shared > max_shared)
    throw std::runtime_error("a blur of " + std::to_string(a.taps) + " taps needs " +
                             std::to_string(shared) + " bytes of shared memory per block; this GPU has " +
                             std::to_string(max_shared));
  const KernelFn fn = laplacian ? sharpen_kernel<D, Mode::kLaplacian, 3> : unsharp_kernel<D>(a.taps);
  fn<<<grid, block, shared, stream>>>(a);
  check_launch("sharpen_kernel");
}

bool word_aligned(const void *p, size_t pitch) {
  return reinterpret_cast<uintptr_t>(p) % 4 == 0 && pitch % 4 == 0;
}

}  // namespace

struct SharpenGpu::Impl {
  SharpenState state;
  size_t max_shared = 0;  // per block, opted in
};

SharpenGpu::SharpenGpu() : impl_(std::make_unique<Impl>()) {
  impl_->max_shared = shared_memory_per_block();
  prepare_kernels<Bytes>(kSharpenMaxTaps, impl_->max_shared);
  prepare_kernels<Words>(kSharpenMaxTapsDeep, impl_->max_shared);
}

SharpenGpu::~SharpenGpu() = default;
SharpenGpu::SharpenGpu(SharpenGpu &&) noexcept = default;
SharpenGpu &SharpenGpu::operator=(SharpenGpu &&) noexcept = default;

void SharpenGpu::set_params(const SharpenParams &p) {
  check_params(sharpen_params_error(p));
  impl_->state.set(p);
}

void SharpenGpu::enqueue(ConstPlane src, Plane dst, cudaStream_t stream) {
  enqueue_carrying(src, dst, {}, stream);
}

void SharpenGpu::enqueue_carrying(ConstPlane src, Plane dst, const CarriedPlanes &carried,
                                  cudaStream_t stream) {
  const SharpenParams &params = impl_->state.params;
  const bool laplacian = params.kernel == SharpenKernel::kLaplacian3x3;
  const bool deep = src.samples.deep();
  check_planes_apart(src, dst);
  kernels::check_plane_bytes(static_cast<int64_t>(src.row_bytes()), src.height);
  const std::vector<uint32_t> &taps = impl_->state.taps_for(src.samples);
  SharpenArgs a{};
  a.src = src.data;
  a.src_pitch = src.stride;
  a.dst = dst.data;
  a.dst_pitch = dst.stride;
  a.width = src.width;
  a.height = src.height;
  a.samples = src.samples;
  a.src_words = word_aligned(src.data, src.stride);
  a.dst_words = word_aligned(dst.data, dst.stride);
  a.taps = laplacian ? 3 : int(taps.size());
  const UnsharpWeights w = unsharp_weights(params.amount);
  a.w_source = w.source;
  a.w_blur = w.blur;
  a.threshold = sharpen_threshold_levels(params.threshold, src.samples);
  std::copy(taps.begin(), taps.end(), a.tap);
  int64_t copy_items = 0;
  a.carried = kernels::carried_jobs(carried, copy_items);

  if (deep)
    launch<Words>(a, laplacian, impl_->max_shared, stream);
  else
    launch<Bytes>(a, laplacian, impl_->max_shared, stream);
  copy_planes(carried, kernels::kMaxCarried, stream);
}

}  // namespace cudafilters

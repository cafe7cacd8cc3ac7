#include <cudafilters/sharpen_gpu.h>

#include <cudafilters/cuda_check.h>
#include <cudafilters/detail/hd_math.h>

#include "plane_kernels.cuh"

#include <algorithm>

namespace cudafilters {
namespace {

// Output tile of one block. Its threads stride over the tile row by row, so
// that a warp reads and writes consecutive bytes.
constexpr int kTileW = 64;
constexpr int kTileH = 16;
constexpr int kThreads = 256;

struct SharpenArgs {
  const uint8_t *src;
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  int width;
  int height;
  int radius;  // half the taps (1 for the Laplacian)
  float w_source;
  float w_blur;
  int threshold;
  uint16_t taps[kSharpenMaxTaps];
  kernels::CopyJobs carried;
};

enum class Mode { kUnsharp, kLaplacian };

// Shared memory of a block: the source tile with its halo (bytes), then, for
// unsharp, the horizontally blurred rows (16-bit).
struct TileLayout {
  int in_w, in_h;      // source tile with halo
  int in_bytes;        // rounded up to keep the 16-bit rows aligned
  size_t bytes;
};

__host__ __device__ inline TileLayout tile_layout(int radius, Mode mode) {
  TileLayout t;
  t.in_w = kTileW + 2 * radius;
  t.in_h = kTileH + 2 * radius;
  t.in_bytes = (t.in_w * t.in_h + 15) & ~15;
  t.bytes = t.in_bytes + (mode == Mode::kUnsharp ? size_t(kTileW) * t.in_h * 2 : 0);
  return t;
}

__device__ __forceinline__ uint8_t saturate_u8(int v) { return uint8_t(min(max(v, 0), 255)); }

template <Mode kMode>
__global__ void __launch_bounds__(kThreads) sharpen_kernel(const SharpenArgs a) {
  extern __shared__ __align__(16) uint8_t smem[];
  const int r = a.radius;
  const TileLayout t = tile_layout(r, kMode);
  uint8_t *in = smem;
  const int x0 = blockIdx.x * kTileW;
  const int y0 = blockIdx.y * kTileH;
  const int tid = threadIdx.x;

  // Stage the tile and its halo; rows and columns outside the plane come
  // from their reflect-101 mirror images.
  for (int i = tid; i < t.in_w * t.in_h; i += kThreads) {
    const int row = i / t.in_w;
    const int col = i - row * t.in_w;
    const int sy = reflect101(y0 - r + row, a.height);
    const int sx = reflect101(x0 - r + col, a.width);
    in[i] = __ldg(a.src + size_t(sy) * a.src_pitch + sx);
  }

  // The carried planes: this block's share of a grid-strided copy.
  const int block = blockIdx.y * gridDim.x + blockIdx.x;
  const int blocks = gridDim.x * gridDim.y;
  for (int j = 0; j < a.carried.count; ++j) {
    const kernels::CopyJob &job = a.carried.job[j];
    kernels::for_each_pixel_group(
        job.s, block * kThreads + tid, blocks * kThreads,
        [&](int y, int x) {
          reinterpret_cast<uint4 *>(job.dst + y * job.dst_pitch)[x] =
              __ldg(reinterpret_cast<const uint4 *>(job.src + y * job.src_pitch) + x);
        },
        [&](int y, int x) { job.dst[y * job.dst_pitch + x] = job.src[y * job.src_pitch + x]; });
  }
  __syncthreads();

  const int out_w = min(kTileW, a.width - x0);
  const int out_h = min(kTileH, a.height - y0);

  if (kMode == Mode::kLaplacian) {
    for (int i = tid; i < kTileW * kTileH; i += kThreads) {
      const int row = i / kTileW;
      const int col = i - row * kTileW;
      if (row >= out_h || col >= out_w) continue;
      const uint8_t *c = in + (row + 1) * t.in_w + col + 1;
      const int v = 5 * c[0] - c[-1] - c[1] - c[-t.in_w] - c[t.in_w];
      a.dst[size_t(y0 + row) * a.dst_pitch + x0 + col] = saturate_u8(v);
    }
    return;
  }

  // Horizontal pass over every staged row: exact sums in 1/256 units.
  uint16_t *h = reinterpret_cast<uint16_t *>(smem + t.in_bytes);
  const int n = 2 * r + 1;
  for (int i = tid; i < kTileW * t.in_h; i += kThreads) {
    const int row = i / kTileW;
    const int col = i - row * kTileW;
    const uint8_t *p = in + row * t.in_w + col;
    uint32_t sum = 0;
    for (int k = 0; k < n; ++k) sum += uint32_t(a.taps[k]) * p[k];
    h[i] = uint16_t(sum);
  }
  __syncthreads();

  // Vertical pass (1/65536 units, rounded half up once) and the unsharp
  // formula, as SharpenCpu computes it.
  for (int i = tid; i < kTileW * kTileH; i += kThreads) {
    const int row = i / kTileW;
    const int col = i - row * kTileW;
    if (row >= out_h || col >= out_w) continue;
    uint32_t sum = 0;
    for (int k = 0; k < n; ++k) sum += uint32_t(a.taps[k]) * h[(row + k) * kTileW + col];
    const int blur = int((sum + 32768u) >> 16);
    const int level = in[(row + r) * t.in_w + col + r];
    const float sharp = __fmaf_rn(float(level), a.w_source, __fmul_rn(float(blur), a.w_blur));
    const int out = abs(level - blur) < a.threshold ? level : saturate_u8(__float2int_rn(sharp));
    a.dst[size_t(y0 + row) * a.dst_pitch + x0 + col] = uint8_t(out);
  }
}

template <Mode kMode>
void prepare_kernel() {
  cudaFuncAttributes attr{};
  // Fails when this build has no code for the current device.
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, sharpen_kernel<kMode>));
  const size_t most = tile_layout(kMode == Mode::kUnsharp ? kSharpenMaxTaps / 2 : 1, kMode).bytes;
  CUDAFILTERS_CHECK(cudaFuncSetAttribute(sharpen_kernel<kMode>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, int(most)));
}

}  // namespace

SharpenGpu::SharpenGpu() : taps_(sharpen_gaussian_taps(params_.radius)) {
  prepare_kernel<Mode::kUnsharp>();
  prepare_kernel<Mode::kLaplacian>();
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
  a.radius = laplacian ? 1 : int(taps_.size() / 2);
  const UnsharpWeights w = unsharp_weights(params_.amount);
  a.w_source = w.source;
  a.w_blur = w.blur;
  a.threshold = params_.threshold;
  std::copy(taps_.begin(), taps_.end(), a.taps);
  int copy_items = 0;
  a.carried = kernels::carried_jobs(carried, copy_items);

  const dim3 grid((src.width + kTileW - 1) / kTileW, (src.height + kTileH - 1) / kTileH);
  if (laplacian) {
    const size_t shared = tile_layout(1, Mode::kLaplacian).bytes;
    sharpen_kernel<Mode::kLaplacian><<<grid, kThreads, shared, stream>>>(a);
  } else {
    const size_t shared = tile_layout(a.radius, Mode::kUnsharp).bytes;
    sharpen_kernel<Mode::kUnsharp><<<grid, kThreads, shared, stream>>>(a);
  }
  check_launch("sharpen_kernel");
  copy_planes(carried, kernels::kMaxCarried, stream);
}

}  // namespace cudafilters

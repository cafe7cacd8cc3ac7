#include <cudafilters/plane_levels.h>

#include <cudafilters/cuda_memory.h>

#include "noise_estimate.h"

#include "equalize_math.h"
#include "plane_kernels.cuh"

namespace cudafilters {

namespace {

using namespace kernels;

constexpr int kThreads = kHistBins;

__device__ __forceinline__ void count_plane(const uint8_t *data, size_t pitch, const Split &s,
                                            unsigned int *hist) {
  for_each_pixel_group(
      s,
      [&](int y, int x) {
        const uint4 q = __ldg(reinterpret_cast<const uint4 *>(data + y * pitch) + x);
        count_word(hist, q.x);
        count_word(hist, q.y);
        count_word(hist, q.z);
        count_word(hist, q.w);
      },
      [&](int y, int x) { count_byte(hist, data[y * pitch + x]); });
}

// A deep plane's coarse histogram (equalize_math.h), one thread per sample.
__device__ __forceinline__ void count_deep_plane(const uint8_t *data, size_t pitch, int width,
                                                 int height, SampleLayout l, unsigned int *hist) {
  const uint32_t max_level = l.max_level();
  for (int y = blockIdx.x; y < height; y += gridDim.x) {
    const uint16_t *row = reinterpret_cast<const uint16_t *>(data + y * pitch);
    for (int x = threadIdx.x; x < width; x += blockDim.x)
      atomicAdd(&hist[coarse_bin(sample_level(row[x], l.shift, max_level), l.bits)], 1u);
  }
}

__global__ void __launch_bounds__(kThreads)
    count_deep_levels_kernel(ConstPlane in, ConstPlane out, unsigned int *counts) {
  __shared__ unsigned int hist[2][kHistBins];
  hist[0][threadIdx.x] = hist[1][threadIdx.x] = 0;
  __syncthreads();
  count_deep_plane(in.data, in.stride, in.width, in.height, in.samples, hist[0]);
  count_deep_plane(out.data, out.stride, out.width, out.height, out.samples, hist[1]);
  __syncthreads();
  for (int p = 0; p < 2; ++p)
    if (hist[p][threadIdx.x]) atomicAdd(&counts[p * kHistBins + threadIdx.x], hist[p][threadIdx.x]);
}

// Both planes' histograms: per-block counts in shared memory, merged into
// `counts` (input bins, then output bins), which start at zero.
__global__ void __launch_bounds__(kThreads)
    count_levels_kernel(const uint8_t *in, size_t in_pitch, Split in_split, const uint8_t *out,
                        size_t out_pitch, Split out_split, unsigned int *counts) {
  __shared__ unsigned int hist[2][kHistBins];
  hist[0][threadIdx.x] = hist[1][threadIdx.x] = 0;
  __syncthreads();
  count_plane(in, in_pitch, in_split, hist[0]);
  count_plane(out, out_pitch, out_split, hist[1]);
  __syncthreads();
  for (int p = 0; p < 2; ++p)
    if (hist[p][threadIdx.x]) atomicAdd(&counts[p * kHistBins + threadIdx.x], hist[p][threadIdx.x]);
}

Split own_split(ConstPlane p) {
  return make_split(p.width, p.height, aligned16(p.data, p.stride));
}

}  // namespace

struct LevelCounterGpu::Impl {
  Impl();

  DeviceArray<FrameLevels> levels_;
  std::unique_ptr<NoiseEstimatorGpu> noise_;
  NoiseCurveGpu curve_;
  PinnedBuffer host_;
  int sm_count_ = 1;
  bool chroma_ = false;
};

LevelCounterGpu::Impl::Impl() : levels_(1), noise_(std::make_unique<NoiseEstimatorGpu>()) {
  host_.reserve(sizeof(FrameLevels));
  int device = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
}

LevelCounterGpu::LevelCounterGpu() : impl_(std::make_unique<Impl>()) {}

LevelCounterGpu::~LevelCounterGpu() = default;
LevelCounterGpu::LevelCounterGpu(LevelCounterGpu &&) noexcept = default;
LevelCounterGpu &LevelCounterGpu::operator=(LevelCounterGpu &&) noexcept = default;

FrameLevels LevelCounterGpu::result() const {
  FrameLevels l = *reinterpret_cast<const FrameLevels *>(impl_->host_.data());
  if (!impl_->chroma_) l.noise_sigma_chroma = -1.0;
  return l;
}

void LevelCounterGpu::enqueue(ConstPlane in, ConstPlane out, cudaStream_t stream,
                              const FramePlanes *in_frame) {
  Impl &m = *impl_;
  unsigned int *counts = m.levels_.get()->input;
  CUDAFILTERS_CHECK(cudaMemsetAsync(m.levels_.get(), 0, sizeof(FrameLevels), stream));
  if (in.samples.deep()) {
    // Statistics only: a simple kernel, one thread per sample.
    const int blocks = std::max(1, std::min(in.height, 2 * m.sm_count_));
    count_deep_levels_kernel<<<blocks, kThreads, 0, stream>>>(in, out, counts);
    check_launch("count_deep_levels_kernel");
  } else {
    const Split si = own_split(in), so = own_split(out);
    const int64_t items = std::max(work_items(si), work_items(so));
    const int blocks = static_cast<int>(std::max<int64_t>(
        1, std::min<int64_t>((items + kThreads - 1) / kThreads, 2 * m.sm_count_)));
    count_levels_kernel<<<blocks, kThreads, 0, stream>>>(in.data, in.stride, si, out.data,
                                                          out.stride, so, counts);
    check_launch("count_levels_kernel");
  }
  m.chroma_ = in_frame != nullptr && in_frame->has_chroma();
  m.noise_->add(0, in, 1, stream);
  if (m.chroma_) {
    m.noise_->add(1, in_frame->u, in_frame->chroma_step, stream);
    m.noise_->add(1, in_frame->v, in_frame->chroma_step, stream);
  }
  m.noise_->estimate(m.chroma_ ? 2 : 1, stream);
  CUDAFILTERS_CHECK(cudaMemcpyAsync(&m.levels_.get()->noise_sigma, m.noise_->sigmas(),
                                    (m.chroma_ ? 2 : 1) * sizeof(double),
                                    cudaMemcpyDeviceToDevice, stream));
  m.curve_.estimate(in, 1, stream, m.noise_->correlated());
  CUDAFILTERS_CHECK(cudaMemcpyAsync(m.levels_.get()->noise_curve, m.curve_.sigmas(),
                                    sizeof(FrameLevels::noise_curve), cudaMemcpyDeviceToDevice,
                                    stream));
  CUDAFILTERS_CHECK(cudaMemcpyAsync(m.host_.data(), m.levels_.get(), sizeof(FrameLevels),
                                    cudaMemcpyDeviceToHost, stream));
}

}  // namespace cudafilters

#include "frame_difference.h"

#include <cudafilters/cuda_check.h>

#include <stdexcept>

namespace cudafilters {

namespace {

constexpr int kDifferenceThreads = 256;

struct DifferenceArgs {
  const uint8_t *frame;
  const uint8_t *other;
  size_t frame_stride;
  size_t other_stride;
  DifferenceGrid grid;
  SampleLevels levels;
  int bits;
  uint32_t *counts;
};

template <typename Word>
__device__ __forceinline__ int32_t level_at(const uint8_t *plane, size_t stride, SampleLevels l,
                                            int x, int y) {
  return int32_t(l.of(__ldg(reinterpret_cast<const Word *>(plane + size_t(y) * stride) + x)));
}

// A thread a block of the grid at one shift (blockIdx.y): its squared
// differences counted in the thread block's table, which is then added to
// the device's (non-zero bins only: a frame's blocks fall in few bins). A
// thread for each block and shift, not one for all shifts of a block: the
// loads of one thread are what the kernel waits on (27 us at 1080p on an
// H200 with all nine shifts a thread).
template <typename Word>
__global__ void __launch_bounds__(kDifferenceThreads) frame_difference_kernel(DifferenceArgs a) {
  __shared__ uint32_t t[kDifferenceBins];
  for (int i = int(threadIdx.x); i < kDifferenceBins; i += kDifferenceThreads) t[i] = 0;
  __syncthreads();
  const int b = int(blockIdx.x) * kDifferenceThreads + int(threadIdx.x);
  const int s = int(blockIdx.y);
  if (b < a.grid.blocks()) {
    const int x = a.grid.x(b % a.grid.blocks_x), y = a.grid.y(b / a.grid.blocks_x);
    const int dx = difference_dx(s), dy = difference_dy(s);
    uint64_t sum = 0;
    for (int j = 0; j < kDifferenceBlock; ++j)
      for (int i = 0; i < kDifferenceBlock; ++i) {
        const int64_t d = level_at<Word>(a.frame, a.frame_stride, a.levels, x + i, y + j) -
                          level_at<Word>(a.other, a.other_stride, a.levels, x + i + dx, y + j + dy);
        sum += uint64_t(d * d);
      }
    atomicAdd(&t[difference_bin(sum, a.bits)], 1u);
  }
  __syncthreads();
  uint32_t *counts = a.counts + size_t(s) * kDifferenceBins;
  for (int i = int(threadIdx.x); i < kDifferenceBins; i += kDifferenceThreads)
    if (t[i]) atomicAdd(&counts[i], t[i]);
}

}  // namespace

FrameDifferenceGpu::FrameDifferenceGpu() : counts_(size_t(kDifferenceShifts) * kDifferenceBins) {}

DifferenceTables FrameDifferenceGpu::fill(ConstPlane frame, ConstPlane other, cudaStream_t stream) {
  if (frame.width != other.width || frame.height != other.height || frame.samples != other.samples)
    throw std::invalid_argument("FrameDifferenceGpu: the planes differ in size or layout");
  const DifferenceGrid g = difference_grid(frame.width, frame.height);
  if (g.blocks() == 0) return DifferenceTables{};
  // Cleared once, on the stream of its first use; the reading clears after.
  if (!cleared_) {
    CUDAFILTERS_CHECK(cudaMemsetAsync(counts_.get(), 0, counts_.size() * sizeof(uint32_t), stream));
    cleared_ = true;
  }
  const DifferenceArgs a{frame.data, other.data, frame.stride, other.stride, g,
                         sample_levels(frame.samples), frame.samples.bits, counts_.get()};
  const dim3 blocks((g.blocks() + kDifferenceThreads - 1) / kDifferenceThreads, kDifferenceShifts);
  if (frame.samples.deep())
    frame_difference_kernel<uint16_t><<<blocks, kDifferenceThreads, 0, stream>>>(a);
  else
    frame_difference_kernel<uint8_t><<<blocks, kDifferenceThreads, 0, stream>>>(a);
  check_launch("frame_difference_kernel");
  return DifferenceTables{counts_.get(), uint32_t(g.blocks())};
}

}  // namespace cudafilters

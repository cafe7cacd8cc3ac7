#include "frame_difference.h"

#include <cudafilters/cuda_check.h>

#include <stdexcept>

namespace cudafilters {

namespace {

// A strip of kDifferenceThreads columns of one row of blocks: a thread a
// column, a block 8 adjacent lanes.
constexpr int kDifferenceThreads = 256;
constexpr int kStripBlocks = kDifferenceThreads / kDifferenceBlock;
constexpr int R = kDifferenceShiftRadius;
// A thread block counts at most kStripBlocks blocks a shift, so its tables
// hold two bins a word, 16 bits each: 36 KB of static shared memory, which
// every architecture the plugin builds for gives without opting in.
constexpr int kPackedWords = kDifferenceShifts * kDifferenceBins / 2;
static_assert(kStripBlocks < (1 << 16), "a packed bin's count fits 16 bits");

struct DifferenceArgs {
  const uint8_t *frame;
  const uint8_t *other;
  size_t frame_stride;
  size_t other_stride;
  DifferenceGrid grid;
  int strips_x;  // strips a row of blocks
  SampleLevels levels;
  int bits;
  uint32_t *counts;
};

template <typename Word>
__device__ __forceinline__ int32_t level_at(const uint8_t *plane, size_t stride, SampleLevels l,
                                            int x, int y) {
  return int32_t(l.of(__ldg(reinterpret_cast<const Word *>(plane + size_t(y) * stride) + x)));
}

// Each thread sums its column of a block at every shift (the differences
// and their squares, difference_spread), from its 8 samples
// and the other frame's 3 columns of 10 (neighbouring lanes read the same
// rows, so a warp's loads are whole sectors); 8 lanes add up a block, whose
// sums are counted in the thread block's tables, which are added to the
// device's at the end (non-zero bins only: a frame's blocks fall in few
// bins). On an H200 (nlm_bench, "frame difference's tables alone") the pass
// takes 11 us at 1080p and 9.5 us at 4K, with kDifferenceSampleBlocks
// blocks; over all 32400 blocks of a 1080p frame it took 23 us, as a thread
// a block at every shift (27 us) and a thread a block and shift (22 us)
// did: the blocks sampled, not the loads' shape, set its time.
template <typename Word, typename Sum>
__global__ void __launch_bounds__(kDifferenceThreads) frame_difference_kernel(DifferenceArgs a) {
  // Bin i of shift s in the half (i % 2) of word (s * kDifferenceBins + i) / 2.
  __shared__ uint32_t t[kPackedWords];
  for (int i = int(threadIdx.x); i < kPackedWords; i += kDifferenceThreads) t[i] = 0;
  __syncthreads();
  const int lane = int(threadIdx.x) % 32;
  {
    const int strip = int(blockIdx.x);
    const int row = strip / a.strips_x;
    const int bx = strip % a.strips_x * kStripBlocks + int(threadIdx.x) / kDifferenceBlock;
    const bool inside = bx < a.grid.blocks_x;
    int32_t sums[kDifferenceShifts] = {};
    Sum squares[kDifferenceShifts] = {};
    if (inside) {
      const int x = a.grid.x(bx) + int(threadIdx.x) % kDifferenceBlock, y = a.grid.y(row);
      int32_t mine[kDifferenceBlock];
#pragma unroll
      for (int j = 0; j < kDifferenceBlock; ++j)
        mine[j] = level_at<Word>(a.frame, a.frame_stride, a.levels, x, y + j);
#pragma unroll
      for (int r = 0; r < kDifferenceBlock + 2 * R; ++r) {
        int32_t theirs[2 * R + 1];
#pragma unroll
        for (int k = 0; k <= 2 * R; ++k)
          theirs[k] = level_at<Word>(a.other, a.other_stride, a.levels, x - R + k, y - R + r);
#pragma unroll
        for (int dy = -R; dy <= R; ++dy) {
          const int j = r - R - dy;  // the row of mine this row of theirs meets at dy
          if (j < 0 || j >= kDifferenceBlock) continue;
#pragma unroll
          for (int dx = -R; dx <= R; ++dx) {
            const int32_t d = mine[j] - theirs[dx + R];
            const int s = (dy + R) * kDifferenceShiftSide + dx + R;
            sums[s] += d;
            squares[s] += Sum(int64_t(d) * d);
          }
        }
      }
    }
#pragma unroll
    for (int s = 0; s < kDifferenceShifts; ++s) {
      int32_t sum = sums[s];
      Sum sq = squares[s];
      for (int o = 1; o < kDifferenceBlock; o *= 2) {
        sum += __shfl_xor_sync(0xFFFFFFFFu, sum, o);
        sq += __shfl_xor_sync(0xFFFFFFFFu, sq, o);
      }
      if (inside && lane % kDifferenceBlock == 0) {
        const int i = s * kDifferenceBins + int(difference_bin(difference_spread(sum, sq), a.bits));
        atomicAdd(&t[i / 2], 1u << (16 * (i % 2)));
      }
    }
  }
  __syncthreads();
  for (int w = int(threadIdx.x); w < kPackedWords; w += kDifferenceThreads) {
    const uint32_t both = t[w];
    if (both & 0xFFFFu) atomicAdd(&a.counts[2 * w], both & 0xFFFFu);
    if (both >> 16) atomicAdd(&a.counts[2 * w + 1], both >> 16);
  }
}

// 8-bit sums fit 32 bits (64 x 255^2); deeper ones do not.
auto kernel_for(bool deep) {
  return deep ? frame_difference_kernel<uint16_t, unsigned long long>
              : frame_difference_kernel<uint8_t, uint32_t>;
}

}  // namespace

FrameDifferenceGpu::FrameDifferenceGpu() : counts_(size_t(kDifferenceShifts) * kDifferenceBins) {}

DifferenceTables FrameDifferenceGpu::fill(ConstPlane frame, ConstPlane other, cudaStream_t stream) {
  if (frame.width != other.width || frame.height != other.height || frame.samples != other.samples)
    throw std::invalid_argument("FrameDifferenceGpu: the planes differ in size or layout");
  const DifferenceGrid g = difference_grid(frame.width, frame.height);
  if (g.blocks() == 0) return DifferenceTables{};
  clear_.on(stream, counts_);
  const int strips_x = (g.blocks_x + kStripBlocks - 1) / kStripBlocks;
  const DifferenceArgs a{frame.data, other.data, frame.stride, other.stride, g, strips_x,
                         sample_levels(frame.samples), frame.samples.bits, counts_.get()};
  // A thread block a strip: kDifferenceSampleBlocks keeps them few.
  kernel_for(frame.samples.deep())<<<g.rows * strips_x, kDifferenceThreads, 0, stream>>>(a);
  check_launch("frame_difference_kernel");
  return DifferenceTables{counts_.get(), uint32_t(g.blocks())};
}

}  // namespace cudafilters

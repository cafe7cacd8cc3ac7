// The noise of a still scene read from two of its frames, for temporal
// windows (cudanlm temporal-radius, cudalowlight), which hold them anyway.
//
// Two frames of a still scene differ by their noise alone: per pixel the
// difference has variance 2 sigma^2, however a camera's demosaicing has
// correlated the noise in space, and texture cancels, which a one-frame
// estimate (noise_estimate.h) has to tell apart from noise. The estimate is
// the median over 8x8 blocks of the variance of the blocks' differences
// (their mean taken out, so that a change of brightness does not count),
// sigma = sqrt(median / 2) times kDifferenceScale. The frame before is compared at
// every integer shift up to kDifferenceShiftRadius pixels, and the smallest
// of the shifts' medians is taken: on a still scene that is the unshifted
// one, which texture does not raise, and a slow pan is followed.
// studies/temporal-noise measured it on the camera set: within 20% of the
// true noise in more held-out cases than the one-frame estimate.
//
// A shift that reads clearly less than none says the scene moves. On a
// still scene the unshifted median is the smallest, or above it only as far
// as the medians of N blocks spread (about 1/sqrt(N)): the camera set's
// still scenes (900 blocks) stayed within 0.55%, a smooth photo panning 2
// pixels a frame (3300 blocks) read 0.55 to 1.1% above. So the scene reads
// still up to kStillSpread / sqrt(N) above, moving from kMovingSpread /
// sqrt(N), in proportion between. A scene moving further than the shifts
// reach still shows it where it has texture, and the difference then reads
// texture too: automatic strength keeps the one-frame estimate and the
// factors of moving windows for a moving scene (nlm_auto.h).
//
// Each block adds one count to its shift's table, in the bin of its sigma
// in 32nds of an 8-bit level (integers of the plane's levels: both backends
// fill the same tables), and the estimate is read from the tables alone by
// frame_difference_of, which the CPU and the GPU both run.
#pragma once

#include "clear_on_first_use.h"
#include "hd_math.h"

#include <cudafilters/cuda_memory.h>
#include <cudafilters/plane.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#include "plane_kernels.cuh"
#endif

namespace cudafilters {

constexpr int kDifferenceBlock = 8;
constexpr int kDifferenceShiftRadius = 1;
constexpr int kDifferenceShiftSide = 2 * kDifferenceShiftRadius + 1;
constexpr int kDifferenceShifts = kDifferenceShiftSide * kDifferenceShiftSide;
constexpr int kDifferenceBinsPerLevel = 32;
constexpr int kDifferenceBins = 2048;  // the last open
// The median of true / raw over the camera set's calibration photos' still
// cases (studies/temporal-noise/engine/calibrate.py).
constexpr double kDifferenceScale = 1.129;
// The unshifted median over the smallest (sigma units) is 1 + spread /
// sqrt(blocks): still up to the first spread, moving from the second.
constexpr double kStillSpread = 0.2;
constexpr double kMovingSpread = 0.4;
// Frames of more blocks than this read every k-th row of blocks, k the
// smallest that keeps the blocks read at most this many (1080p every
// fourth, 4K every sixteenth): the camera set's crops, 900 blocks, already
// read within 20% (studies/temporal-noise), and the still test's
// thresholds follow the count.
constexpr int kDifferenceSampleBlocks = 1 << 13;

// The blocks a width x height plane is read in: blocks_x across, `rows`
// rows of them, row r at y = kDifferenceShiftRadius + r * row_step *
// kDifferenceBlock, the first at x = kDifferenceShiftRadius (so that every
// shift of every block lies inside the plane).
struct DifferenceGrid {
  int blocks_x = 0;
  int rows = 0;
  int row_step = 1;

  CUDAFILTERS_HD int blocks() const { return blocks_x * rows; }
  CUDAFILTERS_HD int x(int bx) const { return kDifferenceShiftRadius + bx * kDifferenceBlock; }
  CUDAFILTERS_HD int y(int row) const {
    return kDifferenceShiftRadius + row * row_step * kDifferenceBlock;
  }
};

CUDAFILTERS_HD DifferenceGrid difference_grid(int width, int height) {
  DifferenceGrid g;
  const int across = (width - 2 * kDifferenceShiftRadius) / kDifferenceBlock;
  const int down = (height - 2 * kDifferenceShiftRadius) / kDifferenceBlock;
  if (across <= 0 || down <= 0) return g;
  const int64_t all = int64_t(across) * down;
  g.row_step = int((all + kDifferenceSampleBlocks - 1) / kDifferenceSampleBlocks);
  g.blocks_x = across;
  g.rows = (down - 1) / g.row_step + 1;
  return g;
}

// Whether automatic strength reads a window's luma noise from the
// difference of the frame denoised and its neighbour: a temporal window of
// more than one frame whose luma holds at least one block. NlmCpu and NlmGpu
// both decide by it.
CUDAFILTERS_HD bool window_reads_difference(int temporal_radius, int count, int width,
                                            int height) {
  return temporal_radius > 0 && count > 1 && difference_grid(width, height).blocks() > 0;
}

// A block's differences d (levels of a b-bit plane) about their own mean:
// 64 sum(d^2) - (sum d)^2, which is 64^2 times their variance. The mean is
// taken out so that a change of brightness between the frames (a camera's
// gain control, flicker, a fade) does not read as noise.
CUDAFILTERS_HD uint64_t difference_spread(int64_t sum, uint64_t sum_squares) {
  constexpr int64_t n = kDifferenceBlock * kDifferenceBlock;
  return uint64_t(n) * sum_squares - uint64_t(sum * sum);
}

// The bin of a block of that spread v: floor(32 sigma) of sigma^2 =
// v / (2 * 64^2) in 8-bit units, the integer square root of v / 8 scaled to
// 8 bits (floor(sqrt(floor(x))) = floor(sqrt(x)), and floors of divisions
// compose, so deeper planes' shift loses nothing).
CUDAFILTERS_HD uint32_t difference_bin(uint64_t spread, int bits) {
  static_assert(kDifferenceBinsPerLevel * kDifferenceBinsPerLevel * 8 ==
                    2 * kDifferenceBlock * kDifferenceBlock * kDifferenceBlock * kDifferenceBlock,
                "the bin is isqrt(v / 8)");
  uint64_t v = bits >= 8 ? spread >> (2 * (bits - 8)) : spread << (2 * (8 - bits));
  v >>= 3;
#ifdef __CUDA_ARCH__
  uint64_t r = uint64_t(sqrt(double(v)));
#else
  uint64_t r = uint64_t(std::sqrt(double(v)));
#endif
  while (r * r > v) --r;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r < uint64_t(kDifferenceBins - 1) ? uint32_t(r) : uint32_t(kDifferenceBins - 1);
}

// The median of one shift's table, in 8-bit units, from its total and the
// bin that holds the middle block (`bin`, with `below` blocks in the bins
// under it and `count` in it): the middle counted in proportion across the
// bin. Every double operation is rounded on its own, so both backends give
// the same value.
CUDAFILTERS_HD double difference_median(uint64_t total, int bin, uint64_t below, uint64_t count) {
  const double half = dmul_rn(0.5, to_double(total));
  const double f = count ? ddiv_rn(dsub_rn(half, to_double(below)), to_double(count)) : 0.0;
  return ddiv_rn(dadd_rn(double(bin), f), double(kDifferenceBinsPerLevel));
}

// The estimate from the shifts' medians over `blocks` blocks each: sigma,
// the smallest scaled, and how still the scene reads (1 still, 0 moving).
struct FrameDifference {
  double sigma = 0.0;
  double still = 1.0;
};

CUDAFILTERS_HD FrameDifference frame_difference_of(const double *medians, uint64_t blocks) {
  double m = medians[0];
  for (int s = 1; s < kDifferenceShifts; ++s) m = medians[s] < m ? medians[s] : m;
  const double unshifted = medians[kDifferenceShifts / 2];
#ifdef __CUDA_ARCH__
  const double root = __dsqrt_rn(to_double(blocks));
#else
  const double root = std::sqrt(to_double(blocks));
#endif
  const double still_at = dmul_rn(dadd_rn(1.0, ddiv_rn(kStillSpread, root)), m);
  const double moving_at = dmul_rn(dadd_rn(1.0, ddiv_rn(kMovingSpread, root)), m);
  double still;
  if (m <= 0.0 || unshifted <= still_at)
    still = 1.0;
  else if (unshifted >= moving_at)
    still = 0.0;
  else
    still = ddiv_rn(dsub_rn(moving_at, unshifted), dsub_rn(moving_at, still_at));
  return FrameDifference{dmul_rn(m, kDifferenceScale), still};
}

// The frame a window's frame `center` is compared with: the one before, or
// after where it is the first.
CUDAFILTERS_HD int neighbour_of(int count, int center) {
  return center > 0 ? center - 1 : (count > 1 ? 1 : 0);
}

// The shift of table s: (dx, dy), each -kDifferenceShiftRadius .. radius.
CUDAFILTERS_HD int difference_dx(int s) { return s % kDifferenceShiftSide - kDifferenceShiftRadius; }
CUDAFILTERS_HD int difference_dy(int s) { return s / kDifferenceShiftSide - kDifferenceShiftRadius; }

#ifndef __CUDACC__
// The estimate of two frames' luma planes, host memory, of one size and
// layout (sigma 0 and still 1 for planes too small for a block;
// std::invalid_argument for planes that differ).
FrameDifference frame_difference(ConstPlane frame, ConstPlane other);
// Its shifts' medians (kDifferenceShifts, in 8-bit units, unscaled), and
// how many blocks each read (0: none, medians not written).
uint64_t difference_medians(ConstPlane frame, ConstPlane other, double *medians);
#endif

// The shifts' tables on the device, as FrameDifferenceGpu::fill leaves them
// for a kernel that reads them (read_difference_tables).
struct DifferenceTables {
  uint32_t *counts = nullptr;  // kDifferenceShifts x kDifferenceBins; null: none
  uint32_t blocks = 0;         // each shift's total
};

// The tables of two device planes, filled on a stream; a kernel later on the
// same stream reads them with read_difference_tables, which clears them for
// the next frame. Private to the engine library.
class FrameDifferenceGpu {
 public:
  // Allocates in the current context.
  FrameDifferenceGpu();

  // Queues the count of frame's blocks against other's (one size and
  // layout, else std::invalid_argument). Planes too small for a block give
  // tables with counts null. The planes must stay valid until the stream has
  // run it.
  DifferenceTables fill(ConstPlane frame, ConstPlane other, cudaStream_t stream);

 private:
  DeviceArray<uint32_t> counts_;
  ClearOnFirstUse clear_;  // the reading clears after
};

#ifdef __CUDACC__
// Called by every thread of a block of whole warps, at most 256 threads
// (its registers): each shift's median of
// t (cleared on the way) into medians[shift] (shared memory, valid in every
// thread on return). A warp reads a shift in chunks of 32 bins, a bin a
// lane: the chunks' sums, then the bins of the chunk that holds the middle
// block. (A lane reading 64 adjacent bins of its own, one after another,
// took tens of microseconds.)
__device__ __forceinline__ void read_difference_tables(DifferenceTables t, double *medians) {
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  const int warps = int(blockDim.x) / 32;
  constexpr int kChunks = kDifferenceBins / 32;
  constexpr int kChunksPerLane = kChunks / 32;  // lane l holds chunks l, l + 32, ...
  const unsigned all = 0xFFFFFFFFu;
  for (int s = warp; s < kDifferenceShifts; s += warps) {
    uint32_t *bins = t.counts + s * kDifferenceBins;
    uint32_t chunk[kChunksPerLane] = {};
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const uint32_t sum = kernels::warp_sum(uint32_t(bins[c * 32 + lane]));
      if (lane == c % 32) chunk[c / 32] = sum;
    }
    // The first chunk whose count so far reaches half the total.
    uint32_t before = 0;  // the blocks in the chunks before this lane's group
    int found = -1;
    uint32_t found_below = 0;
#pragma unroll
    for (int g = 0; g < kChunksPerLane; ++g) {
      uint32_t inclusive = chunk[g];
      for (int o = 1; o < 32; o *= 2) {
        const uint32_t up = __shfl_up_sync(all, inclusive, o);
        if (lane >= o) inclusive += up;
      }
      const unsigned reached = __ballot_sync(all, 2 * uint64_t(before + inclusive) >= t.blocks);
      if (found < 0 && reached) {
        const int l = __ffs(reached) - 1;
        found = g * 32 + l;
        found_below = before + __shfl_sync(all, inclusive - chunk[g], l);
      }
      before += __shfl_sync(all, inclusive, 31);
    }
    // Tables that do not hold t.blocks (only after an earlier error left
    // them unread) give a wrong median, never a read outside them.
    if (found < 0) found = kChunks - 1;
    const uint32_t v = bins[found * 32 + lane];
    uint32_t inclusive = v;
    for (int o = 1; o < 32; o *= 2) {
      const uint32_t up = __shfl_up_sync(all, inclusive, o);
      if (lane >= o) inclusive += up;
    }
    const unsigned reached =
        __ballot_sync(all, 2 * uint64_t(found_below + inclusive) >= t.blocks) | 0x80000000u;
    if (lane == __ffs(reached) - 1)
      medians[s] = difference_median(t.blocks, found * 32 + lane, found_below + inclusive - v, v);
    __syncwarp();
#pragma unroll
    for (int c = 0; c < kChunks; ++c) bins[c * 32 + lane] = 0;
  }
  __syncthreads();
}
#endif

}  // namespace cudafilters

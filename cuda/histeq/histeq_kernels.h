// What HistEqGpu's host side (histeq_gpu.cu: state, launch planning) and its
// kernels share: the state and frame descriptions the kernels take, and the
// functions that launch them, each defined beside its kernel (no
// relocatable device code):
//   - histeq_kernels_8bit.cu: planes of 8-bit samples;
//   - histeq_kernels_12bit.cu: deep planes (16-bit words) of up to 4096
//     levels, 10 and 12 bits: one cooperative kernel with one grid barrier;
//   - histeq_kernels_16bit.cu: deep planes of up to 2^16 levels: one
//     cooperative kernel of steps with grid barriers between them, or a
//     launch per step; also the planes of up to 4096 levels where the
//     device refuses the 12-bit kernel's cooperative grid.
// Included by .cu files only.
#pragma once

#include <cudafilters/plane.h>

#include "equalize_math.h"
#include "plane_kernels.cuh"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cudafilters {
namespace histeq {

using kernels::CopyJobs;
using kernels::Split;

// How a frame's histogram meets the history of earlier frames (every depth):
// the blend of `past` with this frame's counts goes to `next`.
struct History {
  HistoryMode mode;
  uint32_t weight;  // on the past, 1/65536 units
  const unsigned long long *past;
  unsigned long long *next;
};

// ---------------------------------------------------------------------------
// 8-bit planes (histeq_kernels_8bit.cu).

// Threads of the 8-bit kernels' blocks: one per bin when a block builds the
// LUT.
constexpr int kThreads8Bit = kHistBins;

struct State8Bit {
  // Two-pass: hist is counted by the histogram kernel and cleared by the
  // last block, after it built the LUT.
  unsigned int hist[kHistBins];
  unsigned int blocks_done;
  // Single pass: frames alternate between two histograms; each frame clears
  // the one the next frame counts into, which nobody reads meanwhile.
  unsigned int pass_hist[2][kHistBins];
  // Temporal smoothing: the blended histogram, fixed point. A frame reads
  // one and writes the other, so blocks that still read the past never see
  // it overwritten.
  unsigned long long history[2][kHistBins];
};

// The source plane as the counting pass reads it. With a stash, the source
// is host memory read over the bus, and the pass keeps a device copy of every
// pixel it reads, so that mapping reads device memory instead of the bus.
struct Source8Bit {
  const uint8_t *data;
  size_t pitch;
  uint8_t *stash;  // null: mapping reads data again
  size_t stash_pitch;
};

// The 8-bit kernels, for the runtime's queries (cudaFuncGetAttributes:
// whether this build has code for the device; occupancy).
struct Kernels8Bit {
  const void *histogram_lut;
  const void *apply_lut;
  const void *single_pass;
};
Kernels8Bit kernel_addresses_8bit();

// The whole frame in one cooperative launch (config asks for a cooperative
// grid): counting, a grid barrier, the LUT in every block, the mapping.
// Returns the launch's error, as launch_cooperative.
cudaError_t launch_single_pass_8bit(const cudaLaunchConfig_t &config, const Source8Bit &src,
                                    uint8_t *dst, size_t dst_pitch, const Split &count_split,
                                    const Split &map_split, State8Bit *state, int parity,
                                    const History &history, const CopyJobs &carried);
// Two passes: a histogram kernel of `blocks` blocks whose last block builds
// the LUT (throws CudaError if the launch fails) ...
void launch_histogram_lut_8bit(int blocks, cudaStream_t stream, const Source8Bit &src,
                               const Split &split, State8Bit *state, const History &history,
                               uint8_t *lut);
// ... then the mapping, which may start while the histogram kernel
// finishes where config allows it (programmatic dependent launch).
cudaError_t launch_apply_lut_8bit(const cudaLaunchConfig_t &config, const uint8_t *src,
                                  size_t src_pitch, uint8_t *dst, size_t dst_pitch,
                                  const Split &split, const uint8_t *lut,
                                  const CopyJobs &carried);

// ---------------------------------------------------------------------------
// Deep planes (16-bit words): the 12-bit and 16-bit kernels.

// Threads of the deep kernels' blocks.
constexpr int kDeepThreads = 1024;
// Samples per work item: one 16-byte vector.
constexpr int kGroup = 8;
// A block counts at most this many samples, so that no packed 16-bit
// counter can carry into its neighbour.
constexpr int kMaxBlockSamples = 65535;
constexpr int kMaxGroupsPerBlock = kMaxBlockSamples / kGroup;

// A deep plane as the kernels walk it: rows of groups of kGroup samples,
// read as one vector where rows are 16-byte aligned.
struct DeepPlane {
  const uint8_t *data;
  size_t pitch;
  int width, height;
  int groups_per_row;
  bool vec;
};

struct DeepLevels {
  int shift;
  uint32_t levels;
};

// A plane has at most kMaxPlaneBytes (2^30 samples), and so at most 2^30
// groups (one per sample where rows are 1 to 8 samples wide, 2^27 for a
// 32768 x 32768 plane): group indices fit int, with the strides of a
// resident grid's threads (visit_groups) added.
inline DeepPlane deep_plane(ConstPlane p, bool vec) {
  kernels::check_plane_bytes(static_cast<int64_t>(p.row_bytes()), p.height);
  return DeepPlane{p.data, p.stride, p.width, p.height, (p.width + kGroup - 1) / kGroup, vec};
}

// What a frame's kernel reads and writes, whichever kernel runs it: the
// planes, the levels and the history.
struct DeepFrameIo {
  DeepPlane count_src;
  uint8_t *stash;
  size_t stash_pitch;
  DeepPlane map_src;
  uint8_t *dst;
  size_t dst_pitch;
  DeepLevels l;
  History history;
  CopyJobs carried;
};

// Copies of a block's counters of `words` words each: as many as fit in
// `room` words, up to one per warp, so that warps counting the same levels
// collide less. The room is kCounterRoomWords (64 KB), or less where the
// device's shared memory is smaller (HistEqGpu).
constexpr uint32_t kCounterRoomWords = 16384;
// The most slices of the levels the 16-bit kernel counts in (Frame16Bit).
constexpr uint32_t kMaxLevelSlices = 8;
__host__ __device__ inline uint32_t counter_copies(uint32_t words, uint32_t room) {
  const uint32_t fit = room / words;
  return fit < 1 ? 1 : fit > kDeepThreads / 32 ? kDeepThreads / 32 : fit;
}

// ---------------------------------------------------------------------------
// Deep planes of up to 4096 levels (histeq_kernels_12bit.cu).

constexpr uint32_t kMaxLevels12Bit = 4096;

struct Frame12Bit : DeepFrameIo {
  // Copies of the block's counters of `levels` words (counter_copies).
  uint32_t copies;
  // This frame's histogram, cleared by the frame before; the next frame's,
  // cleared by this one (nobody reads it meanwhile).
  unsigned int *hist;
  unsigned int *next_hist;
};

// The kernel, for the runtime's queries (occupancy, shared memory limit).
const void *equalize_12bit_kernel_address();
// Launches it cooperatively on `grid` blocks with `shared` bytes of dynamic
// shared memory; whether the device took the launch (cooperative_launched).
bool launch_equalize_12bit(const Frame12Bit &f, int grid, size_t shared, cudaStream_t stream);

// ---------------------------------------------------------------------------
// Deep planes of up to 2^16 levels (histeq_kernels_16bit.cu).

// Words of packed counters in one partial histogram: two levels per word.
__host__ __device__ inline uint32_t deep_words(uint32_t levels) {
  return levels > 1 ? levels / 2 : 1;
}

// The steps of a frame, in order. The cooperative launch runs them all with
// a grid barrier between steps; otherwise each is a launch of its own.
enum Step16Bit : uint32_t {
  kCount,  // partial histograms (and the carried planes' copies)
  kSum,    // the frame's histogram from the partials; tile sums unless smoothing
  kBlend,  // smoothing only: the blend with the past; tile sums
  kLut,
  kMap,
  kSteps
};

// Levels per tile of the sums and the LUT, one per thread of the first half
// of a block: 128 tiles at 16 bits, so that the sums keep nearly every SM
// busy (64 tiles of 1024 left half of them waiting).
constexpr uint32_t kTileLevels = kDeepThreads / 2;
// Partials are summed a vector of 8 levels at a time, by this many slices
// of the block's threads, each over every kSumSlices-th partial.
constexpr int kSumSlices = kDeepThreads / (kTileLevels / kGroup);

struct Frame16Bit : DeepFrameIo {
  // Copies of the block's packed counters (counter_copies of deep_words
  // over slices), and in how many slices of the levels they are counted.
  uint32_t copies;
  uint32_t slices;
  // Whether the mapping copies the LUT into shared memory first.
  bool lut_in_shared;
  // Partial histograms: 16-bit counts at partials[p * 2 * words + level].
  unsigned int *partials;
  int partial_count;
  int groups_per_partial;
  unsigned int *hist;
  unsigned long long *tile_sum;
  uint32_t *tile_first;
  // Set to `epoch` once a tile's sum and first bin are stored (fuse_lut).
  uint32_t *tile_flag;
  uint32_t epoch;
  bool fuse_lut;
  uint16_t *lut;
};

// The kernel, for the runtime's queries (occupancy, clusters, shared memory
// limit).
const void *equalize_16bit_kernel_address();
// Runs the steps in `steps` (a bit per Step16Bit) of frame f with `config`:
// where config asks for a cooperative grid (`cooperative`) through
// launch_cooperative, which the tests may refuse, otherwise as one plain
// launch. Returns the launch's error.
cudaError_t launch_equalize_16bit(const cudaLaunchConfig_t &config, bool cooperative,
                                  const Frame16Bit &f, uint32_t steps);

}  // namespace histeq
}  // namespace cudafilters

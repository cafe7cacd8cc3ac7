// What ClaheGpu's host side (clahe_gpu.cu: state, launch planning) and its
// kernels share: the frame descriptions the kernels take, and the functions
// that launch them, each defined beside its kernel (no relocatable device
// code):
//   - clahe_kernels_8bit.cu: planes of 8-bit samples, 256 bins a tile;
//   - clahe_kernels_16bit.cu: deep planes (16-bit words, 10 to 16 bits),
//     2^b bins a tile, up to 2^16.
// Included by .cu files only.
#pragma once

#include "equalize_math.h"
#include "plane_kernels.cuh"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cudafilters {
namespace clahe {

using kernels::CopyJobs;
using kernels::Split;

// How this frame's tile histograms meet their past (every depth).
struct History {
  HistoryMode mode;
  uint32_t weight;           // on the past, 1/65536 units
  unsigned long long *bins;  // tiles x levels: read, then overwritten
};

// The source plane as the counting kernels read it. With a stash, it is
// host memory read over the bus, and the counting keeps a device copy of
// every sample of the frame, which the mapping then reads instead.
struct Source {
  const uint8_t *data;
  size_t pitch;
  uint8_t *stash;
  size_t stash_pitch;
};

// ---------------------------------------------------------------------------
// 8-bit planes (clahe_kernels_8bit.cu).

// One thread per bin when a block builds a tile's LUT.
constexpr int kThreads8Bit = kHistBins;
// The mapping kernel holds the LUTs of at most three rows of tiles: a band
// of at most one tile's height lies between two tile centres, plus one.
constexpr int kMaxLutRows = 3;

// The tile grid as the kernels see it (ClaheGeometry, plus how the work is
// cut into blocks).
struct Grid {
  int width, height;
  int tiles_x, tiles_y;
  int tile_width, tile_height;
  int clip;
  float lut_scale;
  float inv_tile_width, inv_tile_height;
  int bands;        // counting blocks per tile
  int band_rows;    // rows each counting block counts
  int row_lanes;    // threads that share a row while counting (power of 2)
  bool vectorize;   // counting may read 16-byte vectors
};

// Where the counting blocks take their work from: a band of a tile at a
// time, in the frame's order (tile rows from the top, bands, tiles across).
// The last block to run out resets the queue for the next frame.
struct WorkQueue {
  unsigned int *next;
  unsigned int *finished;  // blocks that found no more work
};

// Rows [y0, y1) of the mapping, in blocks of map_rows rows: the LUTs of the
// tile rows they blend are copied into shared memory first.
struct MapJob {
  const uint8_t *src;  // the source, or the stash when streaming
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  Split split;         // of one block's rows
  int map_rows;
  bool src_from_counting;  // the stash, written while this kernel runs
};

// The 8-bit kernels, for the runtime's queries and attributes.
struct Kernels8Bit {
  const void *histogram;
  const void *map;
};
Kernels8Bit kernel_addresses_8bit();

// The counting kernel on `blocks` blocks: bands of tiles, each tile's LUT
// built by its last band and flagged in `ready` with the frame's number.
// Throws CudaError if the launch fails.
void launch_histogram_8bit(int blocks, cudaStream_t stream, const Source &src, const Grid &g,
                           unsigned int *tile_hist, unsigned int *tile_done,
                           const History &history, uint8_t *luts, unsigned int *ready,
                           unsigned int frame, const WorkQueue &queue);
// The mapping kernel, which may start while the counting finishes where
// config allows it (programmatic dependent launch). Returns the launch's
// error.
cudaError_t launch_map_8bit(const cudaLaunchConfig_t &config, const MapJob &job, const Grid &g,
                            const uint8_t *luts, const CopyJobs &carried,
                            const unsigned int *ready, unsigned int frame);

// ---------------------------------------------------------------------------
// Deep planes (clahe_kernels_16bit.cu).

constexpr int kDeepThreads = 1024;
// Samples of one chunk: no packed 16-bit counter can overflow.
constexpr int kMaxChunkSamples = 65535;
// Samples per work item of the mapping: one 16-byte vector.
constexpr int kGroup = 8;

struct DeepGrid {
  int width, height;
  int tiles_x, tiles_y;
  int tile_width, tile_height;
  uint32_t levels;
  int shift;
  int clip;
  float lut_scale;
  float inv_tile_width, inv_tile_height;
  int chunks;         // counting blocks per tile
  int chunk_rows;     // rows each counts
  bool vector_count;  // rows may be read as 16-byte vectors (count_chunk_vectors)
};

// Threads, bins per thread and bins per block of the LUT kernels: small
// blocks keep their 64-bit sums in registers.
constexpr int kLutThreads = 256;
constexpr uint32_t kRun = 8;
constexpr uint32_t kBlockBins = kRun * kLutThreads;

__host__ __device__ inline int runs_per_tile(uint32_t levels) {
  return static_cast<int>((levels + kBlockBins - 1) / kBlockBins);
}

// What clipping removes from (excess) and keeps of one run of a tile.
struct RunSums {
  unsigned long long excess, kept;
};

// The LUT kernels' view of a frame.
struct DeepLuts {
  const uint32_t *partials;  // count kernel's output, 16-bit counts
  RunSums *runs;             // tiles x runs_per_tile
  uint16_t *luts;            // tiles x levels
};

// Threads of a block of the tile-per-cluster kernel. Without smoothing the
// bins and their sums are whole counts below 2^32 and are kept in 32 bits,
// which nearly halves the LUT's instructions; with smoothing they are 48.16
// fixed point in 64 bits, in half-size blocks that leave room for them in
// registers.
template <bool kSmooth>
constexpr int tile_threads() {
  return kSmooth ? kDeepThreads / 2 : kDeepThreads;
}

struct DeepMap {
  const uint8_t *src;  // the source, or the stash when streaming
  size_t src_pitch;
  uint8_t *dst;
  size_t dst_pitch;
  int groups_per_row;
  bool vec;
};

// Regions of the frame a block maps at a time: kRegionGroups groups across
// and kDeepThreads / kRegionGroups rows down, so that a block's pixels
// blend few tiles and their levels stay close, and its LUT gathers hit L1
// more often than along whole rows.
constexpr int kRegionGroups = 8;
constexpr int kRegionRows = kDeepThreads / kRegionGroups;

// The deep kernels whose shared memory and clusters the host sets up: the
// chunk counting, and the tile-per-cluster kernel without and with
// smoothing.
struct DeepKernels {
  const void *count;
  const void *tile;
  const void *tile_smoothed;
};
DeepKernels deep_kernel_addresses();

// Steps 1 to 3 (counting, clipping, the LUTs) of `tiles` tiles, one per
// thread-block cluster of `cluster` blocks (blocks that are no cluster
// without `clusters`), each with `shared` bytes of counters.
void launch_deep_tiles(const Source &source, const DeepGrid &g, const History &history,
                       uint16_t *luts, int tiles, int cluster, bool clusters, size_t shared,
                       cudaStream_t stream);
// Steps 1 to 3 as three kernels: chunks counted into global memory
// (`chunk_blocks` blocks for each of `slices` equal slices of the levels,
// each block with `shared` bytes of counters: the slices let a device with
// less shared memory than a chunk's counters take 2^16 levels), the runs'
// sums and the LUTs (`run_blocks` each).
constexpr int kMaxLevelSlices = 8;
void launch_deep_chunks(const Source &source, const DeepGrid &g, const History &history,
                        uint32_t *partials, const DeepLuts &luts, int chunk_blocks, int slices,
                        int run_blocks, size_t shared, cudaStream_t stream);
// The mapping, on `blocks` blocks; it copies the carried planes too.
void launch_deep_map(int blocks, cudaStream_t stream, const DeepMap &m, const DeepGrid &g,
                     const uint16_t *luts, const CopyJobs &carried);

}  // namespace clahe
}  // namespace cudafilters

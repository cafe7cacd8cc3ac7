// ClaheGpu's kernels for planes of 8-bit samples (clahe_kernels.h): the
// counting kernel takes bands of tiles from a work queue, counts them into
// per-warp histograms, and in each tile's last band builds the tile's
// 256-entry LUT and flags it; the mapping kernel blends the four nearest
// tile LUTs for every pixel, each band of rows as soon as the tiles it
// blends are flagged.
#include "clahe_kernels.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/atomic>

#include <cstddef>
#include <cstdint>

namespace cudafilters {
namespace clahe {

namespace {

using namespace kernels;

constexpr int kThreads = kThreads8Bit;
constexpr int kWarps = kThreads / 32;

// Counts row `r` of the extended frame, columns [x0, x1), into `hist`, with
// `lanes` threads (lane `lane`). Columns and rows beyond the frame are its
// reflection (OpenCV's BORDER_REFLECT_101).
__device__ __forceinline__ void count_row(const Source &src, const Grid &g, int r, int x0, int x1,
                                          int lane, int lanes, unsigned int *hist) {
  const int sy = reflect101(r, g.height);
  const uint8_t *row = src.data + sy * src.pitch;
  // Each frame pixel lies in exactly one tile: the stash row is written by
  // whoever counts the frame row itself, never by a reflected one.
  uint8_t *stash = src.stash && r < g.height ? src.stash + r * src.stash_pitch : nullptr;
  const int inside = min(x1, g.width);
  int x = x0;
  if (g.vectorize && inside > x) {
    const int head = min((kVecBytes - static_cast<int>(reinterpret_cast<uintptr_t>(row + x) &
                                                        (kVecBytes - 1))) & (kVecBytes - 1),
                         inside - x);
    for (int i = lane; i < head; i += lanes) {
      const uint8_t v = row[x + i];
      if (stash) stash[x + i] = v;
      count_byte(hist, v);
    }
    x += head;
    const int vecs = (inside - x) / kVecBytes;
    const uint4 *in = reinterpret_cast<const uint4 *>(row + x);
    for (int i = lane; i < vecs; i += lanes) {
      const uint4 q = __ldg(in + i);
      if (stash) reinterpret_cast<uint4 *>(stash + x)[i] = q;
      count_word(hist, q.x);
      count_word(hist, q.y);
      count_word(hist, q.z);
      count_word(hist, q.w);
    }
    x += vecs * kVecBytes;
  }
  for (int i = x + lane; i < inside; i += lanes) {
    const uint8_t v = row[i];
    if (stash) stash[i] = v;
    count_byte(hist, v);
  }
  for (int i = max(x0, g.width) + lane; i < x1; i += lanes)
    count_byte(hist, row[reflect101(i, g.width)]);
}

// Turns a tile's histogram (this thread's bin: `count`) into its LUT: blend
// with the past, clip, redistribute, prefix sum, scale. Every thread of the
// block must call it.
__device__ void build_tile_lut(unsigned int count, int tile, const Grid &g, const History &history,
                               uint8_t *__restrict__ luts) {
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } tmp;
  __shared__ unsigned long long excess;

  const int bin = threadIdx.x;
  unsigned long long v = count;
  int frac_bits = 0;
  if (history.mode != HistoryMode::kOff) {
    unsigned long long *past = history.bins + static_cast<size_t>(tile) * kHistBins + bin;
    v = next_history_bin(history.mode, history.mode == HistoryMode::kBlend ? *past : 0, count,
                         history.weight);
    *past = v;
    frac_bits = kHistoryFracBits;
  }
  const unsigned long long limit = static_cast<unsigned long long>(g.clip) << frac_bits;
  const unsigned long long total_excess = Reduce(tmp.reduce).Sum(clahe_excess(v, limit));
  if (bin == 0) excess = total_excess;
  __syncthreads();
  unsigned long long cdf = 0;
  Scan(tmp.scan).InclusiveSum(clahe_clipped_bin(v, bin, limit, excess, frac_bits), cdf);
  luts[static_cast<size_t>(tile) * kHistBins + bin] =
      clahe_lut_level(cdf, frac_bits ? kHistoryUnit : 1.f, g.lut_scale);
}

// One block per band of rows of one tile: counts the band (per-warp
// histograms in shared memory), merges it into the tile's histogram, and
// the tile's last block to finish builds the tile's LUT and clears the
// histogram for the next frame.
// Publishes a finished tile LUT (and, through the order of the counting
// blocks' merges, the tile's stash rows): the tile's flag takes the frame's
// number.
__device__ __forceinline__ void publish_tile(unsigned int *ready, int tile, unsigned int frame) {
  // Every thread's writes precede the barrier; the fence makes them visible
  // device-wide before the flag.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device>(ready[tile])
        .store(frame, cuda::memory_order_release);
  }
}

// Counts one band of rows of one tile into `sub` (per-warp histograms,
// which start at zero) and returns this thread's bin of the band's count.
__device__ unsigned int count_band(const Source &src, const Grid &g, int tile, int band,
                                   unsigned int (*sub)[kHistBins]) {
  const int tx = tile % g.tiles_x, ty = tile / g.tiles_x;
  const int x0 = tx * g.tile_width, x1 = x0 + g.tile_width;
  const int y0 = ty * g.tile_height + band * g.band_rows;
  const int y1 = min(y0 + g.band_rows, (ty + 1) * g.tile_height);
  const int lane = threadIdx.x & (g.row_lanes - 1);
  const int groups = kThreads / g.row_lanes;
  for (int r = y0 + threadIdx.x / g.row_lanes; r < y1; r += groups)
    count_row(src, g, r, x0, x1, lane, g.row_lanes, sub[threadIdx.x / 32]);
  __syncthreads();
  unsigned int count = 0;
  for (int w = 0; w < kWarps; ++w) count += sub[w][threadIdx.x];
  return count;
}

// A grid of blocks that take bands of tiles from the queue until none are
// left: counting each band (per-warp histograms in shared memory), merging
// it into its tile's histogram, and in the tile's last band to finish,
// building the tile's LUT, clearing its histogram and flagging it done.
// With fewer blocks than bands (host frames), the bands finish roughly from
// the top of the frame down, so the mapping can follow close behind.
__global__ void __launch_bounds__(kThreads)
    clahe_histogram_kernel(Source src, Grid g, unsigned int *__restrict__ tile_hist,
                           unsigned int *__restrict__ tile_done, History history,
                           uint8_t *__restrict__ luts, unsigned int *ready, unsigned int frame,
                           WorkQueue queue) {
  allow_dependent_launch();
  // One sub-histogram per warp keeps shared-memory atomics from colliding
  // across warps on tiles dominated by a few levels.
  __shared__ unsigned int sub[kWarps][kHistBins];
  __shared__ unsigned int item;
  __shared__ bool is_last;
  const unsigned int items = static_cast<unsigned int>(g.tiles_x * g.tiles_y * g.bands);
  for (;;) {
    for (int i = threadIdx.x; i < kWarps * kHistBins; i += kThreads) (&sub[0][0])[i] = 0;
    if (threadIdx.x == 0) item = atomicAdd(queue.next, 1u);
    __syncthreads();
    if (item >= items) break;
    const int per_tile_row = g.bands * g.tiles_x;
    const int ty = item / per_tile_row;
    const int band = (item % per_tile_row) / g.tiles_x;
    const int tile = ty * g.tiles_x + item % g.tiles_x;
    unsigned int count = count_band(src, g, tile, band, sub);

    if (g.bands > 1) {
      unsigned int *hist = tile_hist + static_cast<size_t>(tile) * kHistBins;
      if (count != 0) atomicAdd(&hist[threadIdx.x], count);
      // Every thread's merge must be visible device-wide (fence) and
      // finished (barrier) before the block counts its band done.
      __threadfence();
      __syncthreads();
      if (threadIdx.x == 0) is_last = atomicAdd(&tile_done[tile], 1u) == unsigned(g.bands) - 1;
      __syncthreads();
      if (!is_last) continue;
      // Other blocks' atomics landed in L2; read past L1.
      count = __ldcg(&hist[threadIdx.x]);
      hist[threadIdx.x] = 0;
      if (threadIdx.x == 0) tile_done[tile] = 0;
    }
    build_tile_lut(count, tile, g, history, luts);
    publish_tile(ready, tile, frame);
  }
  if (threadIdx.x == 0 && atomicAdd(queue.finished, 1u) == gridDim.x - 1) {
    *queue.next = 0;
    *queue.finished = 0;
  }
}

// Waits until every tile of tile rows [first, last] holds this frame's LUT.
// On GPUs with programmatic dependent launch the mapping starts while the
// counting still runs: the top of the frame is mapped (and, for host
// frames, written over the bus) while the bottom is still being read.
__device__ void wait_for_tile_rows(const unsigned int *ready, int first, int last, int tiles_x,
                                   unsigned int frame) {
  const int tiles = (last - first + 1) * tiles_x;
  for (int i = threadIdx.x; i < tiles; i += blockDim.x) {
    cuda::atomic_ref<const unsigned int, cuda::thread_scope_device> flag(
        ready[first * tiles_x + i]);
    while (flag.load(cuda::memory_order_acquire) != frame) __nanosleep(256);
  }
  __threadfence();
  __syncthreads();
}

__device__ __forceinline__ uint8_t blend_pixel(const uint8_t *top, const uint8_t *bottom, int x,
                                               unsigned int v, const Grid &g, const TileBlend &by) {
  const TileBlend bx = tile_blend(x, g.inv_tile_width, g.tiles_x);
  const int lo = bx.lo * kHistBins + v, hi = bx.hi * kHistBins + v;
  return clahe_blend(top[lo], top[hi], bottom[lo], bottom[hi], bx.w_lo, bx.w_hi, by.w_lo, by.w_hi);
}

__device__ __forceinline__ unsigned int blend_word(const uint8_t *top, const uint8_t *bottom, int x,
                                                   unsigned int w, const Grid &g,
                                                   const TileBlend &by) {
  unsigned int out = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k)
    out |= static_cast<unsigned int>(blend_pixel(top, bottom, x + k, (w >> (8 * k)) & 0xFFu, g, by))
           << (8 * k);
  return out;
}

__global__ void __launch_bounds__(kThreads)
    clahe_map_kernel(MapJob job, Grid g, const uint8_t *luts, CopyJobs carried,
                     const unsigned int *ready, unsigned int frame) {
  // Carried planes do not need the LUTs: they are copied while the counting
  // kernel may still be running.
  copy_planes(carried);

  const int y0 = blockIdx.x * job.map_rows;
  const int rows = min(job.map_rows, g.height - y0);
  const int first_tile_row = tile_blend(y0, g.inv_tile_height, g.tiles_y).lo;
  const int last_tile_row = tile_blend(y0 + rows - 1, g.inv_tile_height, g.tiles_y).hi;
  const int row_bytes = g.tiles_x * kHistBins;

  wait_for_tile_rows(ready, first_tile_row, last_tile_row, g.tiles_x, frame);
  extern __shared__ uint4 lut_rows[];
  // The LUTs were written while this grid may have been running: read them
  // through L2 so no stale line in L1 can serve them.
  const uint4 *from = reinterpret_cast<const uint4 *>(luts + first_tile_row * row_bytes);
  const int vecs = (last_tile_row - first_tile_row + 1) * row_bytes / kVecBytes;
  for (int i = threadIdx.x; i < vecs; i += kThreads) lut_rows[i] = __ldcg(from + i);
  __syncthreads();
  const uint8_t *shared_luts = reinterpret_cast<const uint8_t *>(lut_rows);

  Split s = job.split;
  s.height = rows;
  for_each_pixel_group<int>(
      s, threadIdx.x, kThreads,
      [&](int yy, int v) {
        const int y = y0 + yy;
        const TileBlend by = tile_blend(y, g.inv_tile_height, g.tiles_y);
        const uint8_t *top = shared_luts + (by.lo - first_tile_row) * row_bytes;
        const uint8_t *bottom = shared_luts + (by.hi - first_tile_row) * row_bytes;
        const uint4 *p = reinterpret_cast<const uint4 *>(job.src + y * job.src_pitch) + v;
        const uint4 q = job.src_from_counting ? __ldcg(p) : __ldg(p);
        const int x = v * kVecBytes;
        uint4 o;
        o.x = blend_word(top, bottom, x, q.x, g, by);
        o.y = blend_word(top, bottom, x + 4, q.y, g, by);
        o.z = blend_word(top, bottom, x + 8, q.z, g, by);
        o.w = blend_word(top, bottom, x + 12, q.w, g, by);
        reinterpret_cast<uint4 *>(job.dst + y * job.dst_pitch)[v] = o;
      },
      [&](int yy, int x) {
        const int y = y0 + yy;
        const TileBlend by = tile_blend(y, g.inv_tile_height, g.tiles_y);
        const uint8_t *top = shared_luts + (by.lo - first_tile_row) * row_bytes;
        const uint8_t *bottom = shared_luts + (by.hi - first_tile_row) * row_bytes;
        const uint8_t *p = job.src + y * job.src_pitch + x;
        job.dst[y * job.dst_pitch + x] =
            blend_pixel(top, bottom, x, job.src_from_counting ? __ldcg(p) : *p, g, by);
      });
  // Complete only after the counting grid, whose last block resets the work
  // queue: the next frame's counting must find it reset.
  wait_for_prerequisite_grid();
}

}  // namespace

Kernels8Bit kernel_addresses_8bit() {
  return Kernels8Bit{reinterpret_cast<const void *>(clahe_histogram_kernel),
                     reinterpret_cast<const void *>(clahe_map_kernel)};
}

void launch_histogram_8bit(int blocks, cudaStream_t stream, const Source &src, const Grid &g,
                           unsigned int *tile_hist, unsigned int *tile_done,
                           const History &history, uint8_t *luts, unsigned int *ready,
                           unsigned int frame, const WorkQueue &queue) {
  clahe_histogram_kernel<<<blocks, kThreads, 0, stream>>>(src, g, tile_hist, tile_done, history,
                                                          luts, ready, frame, queue);
  check_launch("clahe_histogram_kernel");
}

cudaError_t launch_map_8bit(const cudaLaunchConfig_t &config, const MapJob &job, const Grid &g,
                            const uint8_t *luts, const CopyJobs &carried,
                            const unsigned int *ready, unsigned int frame) {
  return cudaLaunchKernelEx(&config, clahe_map_kernel, job, g, luts, carried, ready, frame);
}

}  // namespace clahe
}  // namespace cudafilters

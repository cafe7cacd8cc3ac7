#include <cudafilters/clahe_gpu.h>

#include "plane_kernels.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/atomic>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace cudafilters {

namespace {

using namespace kernels;

// One thread per bin when a block builds a tile's LUT.
constexpr int kThreads = kHistBins;
constexpr int kWarps = kThreads / 32;
// The mapping kernel holds the LUTs of at most three rows of tiles: a band
// of at most one tile's height lies between two tile centres, plus one.
constexpr int kMaxLutRows = 3;
// Bytes of a band of a tile counted at a time from host memory.
constexpr int kStreamBandBytes = 2048;

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

// How this frame's tile histograms meet their past.
struct History {
  HistoryMode mode;
  uint32_t weight;               // on the past, 1/65536 units
  unsigned long long *bins;      // tiles x 256: read, then overwritten
};

// The source plane as the counting kernel reads it. With a stash, it is
// host memory read over the bus, and the counting keeps a device copy of
// every pixel of the frame, which the mapping then reads instead.
struct Source {
  const uint8_t *data;
  size_t pitch;
  uint8_t *stash;
  size_t stash_pitch;
};

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

// Where the counting blocks take their work from: a band of a tile at a
// time, in the frame's order (tile rows from the top, bands, tiles across).
// The last block to run out resets the queue for the next frame.
struct WorkQueue {
  unsigned int *next;
  unsigned int *finished;  // blocks that found no more work
};

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

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Threads that share a row while counting: about one 16-byte vector each.
int row_lanes_for(int tile_width) {
  int lanes = 4;
  while (lanes < 32 && lanes * kVecBytes < tile_width) lanes *= 2;
  return lanes;
}

}  // namespace

ClaheGpu::ClaheGpu() : queue_(2) {
  cudaFuncAttributes attr{};
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, clahe_histogram_kernel));
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, clahe_map_kernel));
  const int max_lut_bytes = kMaxLutRows * kClaheMaxTiles * kHistBins;
  CUDAFILTERS_CHECK(cudaFuncSetAttribute(clahe_map_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         max_lut_bytes));
  int device = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
  dependent_launch_ = device_has_dependent_launch();
}

void ClaheGpu::reserve_tiles(int tiles, bool with_history) {
  if (tiles > tile_capacity_) {
    // All or nothing: a failed allocation must not leave new, uncleared
    // counters behind the old capacity (a later frame would skip clearing
    // them and could wait for flags that never come).
    const size_t bins = static_cast<size_t>(tiles) * kHistBins;
    DeviceArray<uint32_t> hist(bins), done(static_cast<size_t>(tiles)),
        ready(static_cast<size_t>(tiles));
    DeviceArray<uint8_t> luts(bins);
    tile_hist_ = std::move(hist);
    tile_done_ = std::move(done);
    tile_ready_ = std::move(ready);
    luts_ = std::move(luts);
    tile_capacity_ = tiles;
    state_dirty_ = true;
  }
  if (with_history && tiles > history_capacity_) {
    history_ = DeviceArray<unsigned long long>(static_cast<size_t>(tiles) * kHistBins);
    history_capacity_ = tiles;
    temporal_.restart();
  }
}

void ClaheGpu::enqueue_frame(ConstPlane src, const Plane *stash, Plane dst,
                             const CarriedPlanes &carried, cudaStream_t stream) {
  if (src.samples.deep()) {
    enqueue_deep(src, stash, dst, carried, stream);
    return;
  }
  const ClaheGeometry geom = clahe_geometry(src.width, src.height, params_);
  reserve_tiles(geom.tiles(), temporal_.weight() != 0);
  if (state_dirty_) {
    const size_t bins = static_cast<size_t>(tile_capacity_) * kHistBins;
    CUDAFILTERS_CHECK(cudaMemsetAsync(tile_hist_.get(), 0, bins * sizeof(uint32_t), stream));
    CUDAFILTERS_CHECK(cudaMemsetAsync(tile_done_.get(), 0, tile_capacity_ * sizeof(uint32_t),
                                      stream));
    CUDAFILTERS_CHECK(cudaMemsetAsync(tile_ready_.get(), 0, tile_capacity_ * sizeof(uint32_t),
                                      stream));
    CUDAFILTERS_CHECK(cudaMemsetAsync(queue_.get(), 0, 2 * sizeof(uint32_t), stream));
    temporal_.restart();
    state_dirty_ = false;
  }

  HistoryShape shape;
  shape.width = geom.width;
  shape.height = geom.height;
  shape.tiles_x = geom.tiles_x;
  shape.tiles_y = geom.tiles_y;
  const History history{temporal_.next_frame(shape), temporal_.weight(), history_.get()};

  // Counting, device frames: about two bands per SM in all, each counted by
  // a block of its own, all at once. Host frames read over the bus: small
  // bands (about kStreamBandBytes) taken in the frame's order by one block
  // per SM, enough in flight to keep the bus busy, few enough that the top
  // of the frame is finished (and mapped) while the bottom is still read.
  Grid g{geom.width, geom.height, geom.tiles_x, geom.tiles_y, geom.tile_width, geom.tile_height,
         geom.clip, geom.lut_scale, geom.inv_tile_width, geom.inv_tile_height, 1, 0, 0, false};
  g.band_rows = stash ? std::max(1, kStreamBandBytes / geom.tile_width)
                      : ceil_div(geom.tile_height,
                                 std::max(1, ceil_div(2 * sm_count_, geom.tiles())));
  g.band_rows = std::min(g.band_rows, geom.tile_height);
  g.bands = ceil_div(geom.tile_height, g.band_rows);
  const int bands = geom.tiles() * g.bands;
  const int counting_blocks = stash ? std::min(bands, sm_count_) : bands;
  g.row_lanes = row_lanes_for(geom.tile_width);
  g.vectorize = aligned16(src.data, src.stride) && (!stash || aligned16(stash->data, stash->stride));
  const Source source{src.data, src.stride, stash ? stash->data : nullptr,
                      stash ? stash->stride : 0};

  // Frames are numbered from 1; tile flags start at 0.
  if (++frame_ == 0) {
    frame_ = 1;
    CUDAFILTERS_CHECK(cudaMemsetAsync(tile_ready_.get(), 0, tile_capacity_ * sizeof(uint32_t),
                                      stream));
  }
  // Until both launches are queued the counters may be left half-counted.
  state_dirty_ = true;
  clahe_histogram_kernel<<<counting_blocks, kThreads, 0, stream>>>(
      source, g, tile_hist_.get(), tile_done_.get(), history, luts_.get(), tile_ready_.get(),
      frame_, WorkQueue{queue_.get(), queue_.get() + 1});
  check_launch("clahe_histogram_kernel");

  // Mapping: bands of rows no taller than a tile, about two blocks per SM.
  const ConstPlane map_src =
      stash ? ConstPlane(stash->data, stash->stride, src.width, src.height) : src;
  MapJob job{map_src.data, map_src.stride, dst.data, dst.stride, split_for(map_src, dst), 0,
             stash != nullptr};
  job.map_rows =
      std::max(1, std::min(geom.tile_height, ceil_div(src.height, 2 * sm_count_)));
  int64_t items = 0;
  const CopyJobs jobs = carried_jobs(carried, items);
  const int blocks = ceil_div(src.height, job.map_rows);
  const size_t shared = static_cast<size_t>(kMaxLutRows) * geom.tiles_x * kHistBins;
  cudaLaunchAttribute overlap = dependent_launch_attribute();
  const cudaLaunchConfig_t config =
      launch_config(blocks, kThreads, stream, dependent_launch_ ? &overlap : nullptr, shared);
  CUDAFILTERS_CHECK(cudaLaunchKernelEx(&config, clahe_map_kernel, job, g,
                                       static_cast<const uint8_t *>(luts_.get()), jobs,
                                       static_cast<const unsigned int *>(tile_ready_.get()),
                                       frame_));
  state_dirty_ = false;

  copy_planes(carried, kMaxCarried, stream);
}

}  // namespace cudafilters

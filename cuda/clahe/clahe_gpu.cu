// ClaheGpu's host side: its device state, and the launch planning of both
// depths (bands and tiles per block, clusters, shared memory); the kernels
// lie in clahe_kernels_8bit.cu and clahe_kernels_16bit.cu
// (clahe_kernels.h).
#include <cudafilters/clahe_gpu.h>

#include <cudafilters/cuda_memory.h>

#include "clahe_kernels.h"
#include "equalize_math.h"
#include "input_checks.h"
#include "plane_kernels.cuh"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace cudafilters {

using namespace clahe;
using namespace kernels;

namespace {

// Bytes of a band of a tile counted at a time from host memory.
constexpr int kStreamBandBytes = 2048;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Threads that share a row while counting: about one 16-byte vector each.
int row_lanes_for(int tile_width) {
  int lanes = 4;
  while (lanes < 32 && lanes * kVecBytes < tile_width) lanes *= 2;
  return lanes;
}

}  // namespace

struct ClaheGpu::Impl {
  Impl();

  void enqueue_frame(ConstPlane src, const Plane *stash, Plane dst, const CarriedPlanes &carried,
                     cudaStream_t stream);
  // Grows the per-tile buffers for `tiles` tiles.
  void reserve_tiles(int tiles, bool with_history);
  // Deep planes.
  void enqueue_deep(ConstPlane src, const Plane *stash, Plane dst, const CarriedPlanes &carried,
                    cudaStream_t stream);
  void prepare_deep_kernels();
  // For a tile's counters of `shared` bytes: whether a block holds them
  // (the tile-per-cluster kernel), and else in how many slices of the
  // levels the chunks are counted.
  void prepare_deep_shared(size_t shared);
  int tile_cluster_blocks(int tiles, int chunks) const;

  ClaheParams params_;
  int sm_count_ = 1;
  bool dependent_launch_ = false;

  // Per tile: histogram (zero between frames), blocks done counting (zero
  // between frames), the number of the frame whose LUT it holds, LUT and
  // smoothed histogram. Grown, never shrunk.
  DeviceArray<uint32_t> tile_hist_;
  DeviceArray<uint32_t> tile_done_;
  DeviceArray<uint32_t> tile_ready_;
  // The counting kernel's work queue: next band, blocks finished.
  DeviceArray<uint32_t> queue_;
  DeviceArray<uint8_t> luts_;
  DeviceArray<unsigned long long> history_;
  int tile_capacity_ = 0;
  int history_capacity_ = 0;
  // The counters are cleared by the kernels that consume them; a fresh
  // instance, or one whose last frame failed half-way, clears them first.
  bool state_dirty_ = true;
  uint32_t frame_ = 0;
  TemporalHistory temporal_;

  // Deep planes: the histograms of the tiles' chunks, the sums of the LUT
  // kernels' runs of bins, the LUTs (tiles x levels output levels) and the
  // smoothed histograms; grown, never shrunk. The history's layout depends
  // on the level count: a frame of another count starts a new one.
  DeviceArray<uint16_t> deep_partials_;
  DeviceArray<unsigned long long> deep_runs_;
  DeviceArray<uint16_t> deep_luts_;
  DeviceArray<unsigned long long> deep_history_;
  bool deep_state_dirty_ = false;
  bool deep_kernels_ready_ = false;
  // Thread-block clusters (9.0 and later), and the most blocks one holds.
  bool use_clusters_ = false;
  int max_tile_cluster_ = 1;
  size_t deep_shared_ = 0;
  bool deep_tile_fits_ = false;
  int deep_slices_ = 1;
};

ClaheGpu::ClaheGpu() : impl_(std::make_unique<Impl>()) {}
ClaheGpu::~ClaheGpu() = default;
ClaheGpu::ClaheGpu(ClaheGpu &&) noexcept = default;
ClaheGpu &ClaheGpu::operator=(ClaheGpu &&) noexcept = default;

void ClaheGpu::set_params(const ClaheParams &p) {
  check_params(clahe_params_error(p));
  impl_->params_ = p;
  impl_->temporal_.set_smoothing(p.temporal_smoothing);
}

void ClaheGpu::reset_history() { impl_->temporal_.restart(); }

void ClaheGpu::enqueue_frame(ConstPlane src, const Plane *stash, Plane dst,
                             const CarriedPlanes &carried, cudaStream_t stream) {
  check_planes_apart(src, dst);
  impl_->enqueue_frame(src, stash, dst, carried, stream);
}

ClaheGpu::Impl::Impl() : queue_(2) {
  const Kernels8Bit k = kernel_addresses_8bit();
  cudaFuncAttributes attr{};
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, k.histogram));
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, k.map));
  raise_dynamic_shared_limit(k.map, size_t(kMaxLutRows) * kClaheMaxTiles * kHistBins, "CLAHE");
  int device = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
  dependent_launch_ = device_has_dependent_launch();
}

void ClaheGpu::Impl::reserve_tiles(int tiles, bool with_history) {
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

void ClaheGpu::Impl::enqueue_frame(ConstPlane src, const Plane *stash, Plane dst,
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

  const History history{temporal_.next_frame(HistoryShape::tiles(geom)), temporal_.weight(),
                        history_.get()};

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
  launch_histogram_8bit(counting_blocks, stream, source, g, tile_hist_.get(), tile_done_.get(),
                       history, luts_.get(), tile_ready_.get(), frame_,
                       WorkQueue{queue_.get(), queue_.get() + 1});

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
      launch_config(blocks, kThreads8Bit, stream, dependent_launch_ ? &overlap : nullptr, shared);
  CUDAFILTERS_CHECK(launch_map_8bit(config, job, g, static_cast<const uint8_t *>(luts_.get()),
                                    jobs, static_cast<const unsigned int *>(tile_ready_.get()),
                                    frame_));
  state_dirty_ = false;

  GpuPlaneFilter::copy_planes(carried, kMaxCarried, stream);
}


void ClaheGpu::Impl::prepare_deep_kernels() {
  // The counters of 2^16 levels, packed two to a word.
  const size_t counters = (size_t(1) << 15) * sizeof(unsigned int);
  const DeepKernels k = deep_kernel_addresses();
  // The largest cluster of 16-bit tile blocks the device can hold at once;
  // 1 (no clusters) before compute capability 9.0, or where a block cannot
  // hold a 16-bit tile's counters.
  max_tile_cluster_ = 1;
  if (device_has_dependent_launch() && fits_shared_memory(k.tile, counters) &&
      fits_shared_memory(k.tile_smoothed, counters)) {
    raise_dynamic_shared_limit(k.tile, counters, "CLAHE of deep planes");
    raise_dynamic_shared_limit(k.tile_smoothed, counters, "CLAHE of deep planes");
    for (int c : {8, 4, 2}) {
      int clusters = 0;
      CUDAFILTERS_CHECK(
          resident_clusters(k.tile_smoothed, c, tile_threads<true>(), counters, nullptr, &clusters));
      if (clusters > 0) {
        max_tile_cluster_ = c;
        break;
      }
    }
    use_clusters_ = true;
  }
  deep_kernels_ready_ = true;
}

void ClaheGpu::Impl::prepare_deep_shared(size_t shared) {
  const DeepKernels k = deep_kernel_addresses();
  deep_tile_fits_ = fits_shared_memory(k.tile, shared) && fits_shared_memory(k.tile_smoothed, shared);
  deep_slices_ = 1;
  if (deep_tile_fits_) {
    raise_dynamic_shared_limit(k.tile, shared, "CLAHE of deep planes");
    raise_dynamic_shared_limit(k.tile_smoothed, shared, "CLAHE of deep planes");
  }
  while (!fits_shared_memory(k.count, shared / deep_slices_) && deep_slices_ < kMaxLevelSlices)
    deep_slices_ *= 2;
  raise_dynamic_shared_limit(k.count, shared / deep_slices_, "CLAHE of deep planes");
  deep_shared_ = shared;
}

// Blocks per tile for the tile-per-cluster kernel: enough chunks that no
// counter overflows, doubled while every block still has an SM of its own;
// 0 where a tile needs more chunks than a cluster holds.
int ClaheGpu::Impl::tile_cluster_blocks(int tiles, int chunks) const {
  if (chunks > max_tile_cluster_) return 0;
  int blocks = chunks;
  while (2 * blocks <= max_tile_cluster_ && 2 * blocks * tiles <= sm_count_) blocks *= 2;
  return blocks;
}

void ClaheGpu::Impl::enqueue_deep(ConstPlane src, const Plane *stash, Plane dst,
                                  const CarriedPlanes &carried, cudaStream_t stream) {
  const SampleLayout layout = src.samples;
  if (!layout.valid() || layout != dst.samples)
    throw std::invalid_argument("source and output planes differ in layout");
  check_plane_bytes(static_cast<int64_t>(src.row_bytes()), src.height);
  const ClaheGeometry geom = clahe_geometry(src.width, src.height, params_, layout.levels());
  if (geom.tile_width > kMaxChunkSamples)
    throw std::invalid_argument("deep CLAHE tiles must be at most 65535 samples wide");

  const size_t shared = std::max<size_t>(layout.levels() / 2, 1) * sizeof(unsigned int);
  if (!deep_kernels_ready_) prepare_deep_kernels();

  DeepGrid g{};
  g.width = geom.width;
  g.height = geom.height;
  g.tiles_x = geom.tiles_x;
  g.tiles_y = geom.tiles_y;
  g.tile_width = geom.tile_width;
  g.tile_height = geom.tile_height;
  g.levels = geom.levels;
  g.shift = layout.shift;
  g.clip = geom.clip;
  g.lut_scale = geom.lut_scale;
  g.inv_tile_width = geom.inv_tile_width;
  g.inv_tile_height = geom.inv_tile_height;
  g.chunk_rows = std::min(geom.tile_height, std::max(1, kMaxChunkSamples / geom.tile_width));
  g.chunks = ceil_div(geom.tile_height, g.chunk_rows);
  if (shared != deep_shared_) prepare_deep_shared(shared);
  const int cluster = deep_tile_fits_ ? tile_cluster_blocks(geom.tiles(), g.chunks) : 0;
  if (cluster) {
    // Fewer rows per chunk never overflow a counter.
    g.chunks = cluster;
    g.chunk_rows = ceil_div(geom.tile_height, cluster);
  }
  g.vector_count = !stash && geom.tile_width % kGroup == 0 && aligned16(src.data, src.stride);

  const size_t tile_bins = static_cast<size_t>(geom.tiles()) * geom.levels;
  const int run_blocks = geom.tiles() * runs_per_tile(geom.levels);
  if (deep_luts_.size() < tile_bins) deep_luts_ = DeviceArray<uint16_t>(tile_bins);
  if (!cluster && deep_partials_.size() < tile_bins * g.chunks)
    deep_partials_ = DeviceArray<uint16_t>(tile_bins * g.chunks);
  if (!cluster && deep_runs_.size() < 2 * static_cast<size_t>(run_blocks))
    deep_runs_ = DeviceArray<unsigned long long>(2 * static_cast<size_t>(run_blocks));

  if (deep_state_dirty_) temporal_.restart();
  if (temporal_.weight() != 0 && deep_history_.size() < tile_bins) {
    deep_history_ = DeviceArray<unsigned long long>(tile_bins);
    temporal_.restart();
  }
  const History history{temporal_.next_frame(HistoryShape::tiles(geom)), temporal_.weight(),
                        deep_history_.get()};
  const Source source{src.data, src.stride, stash ? stash->data : nullptr,
                      stash ? stash->stride : 0};
  const DeepLuts luts{reinterpret_cast<const uint32_t *>(deep_partials_.get()),
                      reinterpret_cast<RunSums *>(deep_runs_.get()), deep_luts_.get()};

  // Until every launch is queued the history may be left half-advanced.
  deep_state_dirty_ = true;
  if (cluster) {
    launch_deep_tiles(source, g, history, deep_luts_.get(), geom.tiles(), cluster, use_clusters_,
                      shared, stream);
  } else {
    launch_deep_chunks(source, g, history, reinterpret_cast<uint32_t *>(deep_partials_.get()), luts,
                       geom.tiles() * g.chunks, deep_slices_, run_blocks, shared / deep_slices_,
                       stream);
  }

  const uint8_t *map_src = stash ? stash->data : src.data;
  const size_t map_pitch = stash ? stash->stride : src.stride;
  DeepMap m{map_src, map_pitch, dst.data, dst.stride, ceil_div(src.width, kGroup),
            aligned16(map_src, map_pitch) && aligned16(dst.data, dst.stride)};
  // Groups of the plane (fewer than 2^31, see histeq::deep_plane in
  // histeq_kernels.h) and work items of the carried planes (up to 2^31).
  int64_t items = static_cast<int64_t>(src.height) * m.groups_per_row;
  const CopyJobs jobs = carried_jobs(carried, items);
  const int regions =
      ceil_div(m.groups_per_row, kRegionGroups) * ceil_div(src.height, kRegionRows);
  const int item_blocks =
      static_cast<int>(std::min<int64_t>((items + kDeepThreads - 1) / kDeepThreads,
                                         8 * sm_count_));
  const int blocks = std::max({1, std::min(regions, 8 * sm_count_), item_blocks});
  launch_deep_map(blocks, stream, m, g, deep_luts_.get(), jobs);
  deep_state_dirty_ = false;
  GpuPlaneFilter::copy_planes(carried, kMaxCarried, stream);
}

}  // namespace cudafilters

// HistEqGpu's host side: its device state, and the launch planning of every
// depth (grids, shared memory, cooperative launches and their fall-backs);
// the kernels lie in histeq_kernels_8bit.cu, histeq_kernels_12bit.cu and
// histeq_kernels_16bit.cu (histeq_kernels.h).
#include <cudafilters/histeq_gpu.h>

#include <cudafilters/cuda_memory.h>

#include "equalize_math.h"
#include "histeq_gpu_launch.h"
#include "histeq_kernels.h"
#include "input_checks.h"
#include "plane_kernels.cuh"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace cudafilters {

using namespace histeq;
using namespace kernels;

namespace {

// Blocks of kThreads8Bit for `items` work items (up to 2^31, work_items), from
// one to `cap`.
int blocks_for(int64_t items, int cap) {
  const int64_t needed = (items + kThreads8Bit - 1) / kThreads8Bit;
  return needed < 1 ? 1 : needed < cap ? static_cast<int>(needed) : cap;
}

// Bytes read per block of the single-pass kernel.
constexpr size_t kSinglePassBlockBytes = 48 * 1024;

// The single-pass grid for `bytes` to read (`items` work items): about one
// block per kSinglePassBlockBytes, in steps of half a block per SM, from one
// to `max_per_sm` blocks per SM. Every block clears, sums and merges its own
// sub-histograms and builds its own LUT, so small frames run fastest on few
// blocks; large ones need more loads in flight. On the H100 (132 SMs), 8-bit
// frames back to back: 1080p 8.9 us on 132 blocks against 10.0 us on 264,
// 4K 14.6 us on 198 against 15.9 us on 132, 8K 52.0 us on 528 against
// 57.5 us on 264 (docs/cudahisteq.md, "Grid by frame size").
int single_pass_grid(size_t bytes, int64_t items, int sm_count, int max_per_sm) {
  const size_t half_sm_bytes = kSinglePassBlockBytes * static_cast<size_t>(sm_count) / 2;
  const size_t halves = (bytes + half_sm_bytes / 2) / half_sm_bytes;
  const size_t per_half = std::clamp<size_t>(halves, 2, 2 * static_cast<size_t>(max_per_sm));
  return blocks_for(items, static_cast<int>(per_half * sm_count / 2));
}

// Bytes of the plane and of the carried planes that the kernel copies.
size_t kernel_bytes(ConstPlane src, const CarriedPlanes &carried) {
  size_t bytes = size_t(src.width) * src.height;
  for (size_t i = 0; i < carried.size() && i < kMaxCarried; ++i)
    bytes += size_t(carried[i].src.width) * carried[i].src.height;
  return bytes;
}

// The words of dynamic shared memory a block of `kernel` may have: what
// the device leaves beside the kernel's own.
uint32_t free_words(const void *kernel) {
  cudaFuncAttributes attr{};
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, kernel));
  const size_t have = shared_memory_per_block();
  return static_cast<uint32_t>(have > attr.sharedSizeBytes ? (have - attr.sharedSizeBytes) / 4 : 0);
}

}  // namespace

struct HistEqGpu::Impl {
  Impl();
  // The launch path of the frames from now on.
  void set_launch(HistEqLaunch launch);

  void enqueue_frame(ConstPlane src, const Plane *stash, Plane dst, const CarriedPlanes &carried,
                     cudaStream_t stream);
  // How the next 8-bit frame uses the history; advances it.
  History next_history(ConstPlane src);
  // Deep planes.
  void enqueue_deep(ConstPlane src, const Plane *stash, Plane dst, const CarriedPlanes &carried,
                    cudaStream_t stream);
  void reserve_deep(uint32_t levels, bool with_history);
  // For a shared-memory size: the blocks of the 16-bit kernel that fit at
  // once, alone and in thread-block clusters.
  void prepare_deep_launch(size_t shared, cudaStream_t stream);
  // Blocks per cluster that count a plane of `items` groups of samples.
  int deep_cluster_blocks(int items) const;
  // Partial histograms of a plane of `items` groups, counted by clusters of
  // `cluster` blocks.
  int deep_partial_count(int items, int cluster) const;
  // Planes of up to 4096 levels: this frame's histogram and the next
  // frame's (which this frame clears), alternating.
  std::pair<uint32_t *, uint32_t *> next_histograms_12bit(cudaStream_t stream);
  // The grid of the 12-bit kernel for a shared-memory size and a plane of
  // `items` groups of samples.
  int grid_12bit(size_t shared, int items);

  DeviceArray<State8Bit> state_;
  DeviceArray<uint8_t> lut_;
  int sm_count_ = 1;
  // Words of dynamic shared memory a block of the 12-bit and of the 16-bit
  // kernel may have on this device.
  uint32_t free_12bit_ = 0;
  uint32_t free_deep_ = 0;
  // Most blocks per SM of the single-pass kernel (0: it cannot run).
  int single_pass_blocks_per_sm_ = 0;
  // Whether the device launches cooperatively, and launches dependent
  // kernels early (programmatic dependent launch).
  bool device_cooperative_ = false;
  bool device_dependent_launch_ = false;
  bool single_pass_ = false;
  // Cooperative launches the device refused for this instance, its grid
  // more than it holds at once (under MPS with an active-thread percentage,
  // in a green context): the 8-bit single pass, the 12-bit kernel (planes of
  // up to 4096 levels), the 16-bit kernel. Frames from then on take the
  // launches without a grid barrier, with the same output.
  bool single_pass_refused_ = false;
  bool refused_12bit_ = false;
  bool deep_refused_ = false;
  bool dependent_launch_ = false;
  // Which of the two single-pass histograms the next frame counts into.
  int parity_ = 0;
  // The histograms are cleared by the kernels that consume them; a fresh
  // instance, or one whose last frame failed half-way, clears them before the
  // next frame.
  bool state_dirty_ = true;
  TemporalHistory temporal_;
  // Which of the two history buffers holds the past.
  int history_parity_ = 0;

  int significant_bits_ = 0;
  // Deep planes: the partial histograms of the counting blocks, the frame's
  // histogram, per-tile sums and first occupied bins, the LUT of output
  // words, and two smoothed histograms; grown, never shrunk.
  DeviceArray<uint32_t> deep_partials_;
  DeviceArray<uint32_t> deep_hist_;
  DeviceArray<unsigned long long> deep_tile_sum_;
  DeviceArray<uint32_t> deep_tile_first_;
  // A tile's flag holds the epoch of the last frame whose tile sum is
  // stored; the epoch advances every frame, never to 0.
  DeviceArray<uint32_t> deep_tile_flag_;
  bool deep_flags_cleared_ = false;
  uint32_t deep_epoch_ = 0;
  DeviceArray<uint16_t> deep_lut_;
  DeviceArray<unsigned long long> deep_history_;
  uint32_t deep_levels_ = 0;        // allocated
  uint32_t deep_frame_levels_ = 0;  // of the last frame
  uint32_t deep_history_levels_ = 0;
  int deep_history_parity_ = 0;
  bool deep_state_dirty_ = true;
  size_t deep_shared_bytes_ = 0;
  int deep_resident_blocks_ = 1;
  // Blocks resident at once in clusters of 2^i blocks (0 where none fit or
  // a cooperative launch cannot use clusters).
  std::array<int, 4> deep_cluster_resident_{};
  // Planes of up to 4096 levels: two histograms, the next frame's cleared by
  // the frame before.
  DeviceArray<uint32_t> hist_12bit_;
  int parity_12bit_ = 0;
  bool hist_12bit_cleared_ = false;
  size_t shared_bytes_12bit_ = 0;
  int resident_blocks_12bit_ = 0;
};

HistEqGpu::HistEqGpu() : impl_(std::make_unique<Impl>()) {}

void HistEqGpuAccess::set_launch(HistEqGpu &eq, HistEqLaunch launch) {
  eq.impl_->set_launch(launch);
}

HistEqGpu::~HistEqGpu() = default;
HistEqGpu::HistEqGpu(HistEqGpu &&) noexcept = default;
HistEqGpu &HistEqGpu::operator=(HistEqGpu &&) noexcept = default;

void HistEqGpu::set_params(const HistEqParams &p) {
  check_params(histeq_params_error(p));
  impl_->temporal_.set_smoothing(p.temporal_smoothing);
  impl_->significant_bits_ = p.significant_bits;
}

void HistEqGpu::reset_history() { impl_->temporal_.restart(); }

void HistEqGpu::enqueue_frame(ConstPlane src, const Plane *stash, Plane dst,
                              const CarriedPlanes &carried, cudaStream_t stream) {
  check_pointwise_planes(src, dst);
  impl_->enqueue_frame(src, stash, dst, carried, stream);
}

HistEqGpu::Impl::Impl() : state_(1), lut_(kHistBins) {
  const Kernels8Bit k = kernel_addresses_8bit();
  cudaFuncAttributes attr{};
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, k.histogram_lut));
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, k.apply_lut));
  CUDAFILTERS_CHECK(cudaFuncGetAttributes(&attr, k.single_pass));
  int device = 0, cooperative = 0, resident = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  CUDAFILTERS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &resident, k.single_pass, kThreads8Bit, 0));
  // A cooperative grid must fit on the GPU at once. Four blocks per SM keep
  // enough loads in flight for an 8K frame; more only add merges.
  single_pass_blocks_per_sm_ = std::min(resident, 4);
  device_cooperative_ = cooperative != 0;
  device_dependent_launch_ = device_has_dependent_launch();
  free_12bit_ = free_words(equalize_12bit_kernel_address());
  free_deep_ = free_words(equalize_16bit_kernel_address());
  set_launch(HistEqLaunch::kSinglePass);
}

void HistEqGpu::Impl::set_launch(HistEqLaunch launch) {
  single_pass_ =
      launch == HistEqLaunch::kSinglePass && device_cooperative_ && single_pass_blocks_per_sm_ > 0;
  dependent_launch_ = launch != HistEqLaunch::kTwoPassSerial && device_dependent_launch_;
}

History HistEqGpu::Impl::next_history(ConstPlane src) {
  const HistoryShape shape = HistoryShape::frame(src.width, src.height, kHistBins);
  History h{temporal_.next_frame(shape), temporal_.weight(), nullptr, nullptr};
  if (h.mode == HistoryMode::kOff) return h;
  // Device addresses, computed without dereferencing the device pointer.
  auto *histories = reinterpret_cast<unsigned long long *>(
      reinterpret_cast<char *>(state_.get()) + offsetof(State8Bit, history));
  h.past = histories + history_parity_ * kHistBins;
  h.next = histories + (history_parity_ ^ 1) * kHistBins;
  history_parity_ ^= 1;
  return h;
}

void HistEqGpu::Impl::enqueue_frame(ConstPlane src, const Plane *stash, Plane dst,
                                    const CarriedPlanes &carried, cudaStream_t stream) {
  if (src.samples.deep()) {
    enqueue_deep(src, stash, dst, carried, stream);
    return;
  }
  if (with_significant_bits(src.samples, significant_bits_).bits != 8)
    throw std::invalid_argument("significant bits do not fit the plane's samples");
  if (state_dirty_) {
    CUDAFILTERS_CHECK(cudaMemsetAsync(state_.get(), 0, sizeof(State8Bit), stream));
    parity_ = 0;
    history_parity_ = 0;
    temporal_.restart();
    state_dirty_ = false;
  }
  // Until the launches are queued the histograms may be left half-counted.
  state_dirty_ = true;

  // Counting vectorizes when the source (and the stash it fills) allow;
  // mapping, when what it reads (source or stash) and the output allow.
  const Source8Bit source{src.data, src.stride, stash ? stash->data : nullptr,
                          stash ? stash->stride : 0};
  const ConstPlane map_src = stash ? ConstPlane(stash->data, stash->stride, src.width, src.height)
                                   : src;
  const Split count_split = make_split(
      src.width, src.height,
      aligned16(src.data, src.stride) && (!stash || aligned16(stash->data, stash->stride)));
  const Split map_split = split_for(map_src, dst);
  int64_t items = work_items(map_split);
  const CopyJobs jobs = carried_jobs(carried, items);
  const History history = next_history(src);

  bool single_pass = false;
  if (single_pass_ && !single_pass_refused_) {
    cudaLaunchAttribute cooperative{};
    cooperative.id = cudaLaunchAttributeCooperative;
    cooperative.val.cooperative = 1;
    const cudaLaunchConfig_t config =
        launch_config(single_pass_grid(kernel_bytes(src, carried), items, sm_count_,
                                       single_pass_blocks_per_sm_),
                      kThreads8Bit, stream, &cooperative);
    single_pass = cooperative_launched(
        launch_single_pass_8bit(config, source, dst.data, dst.stride, count_split, map_split,
                                state_.get(), parity_, history, jobs),
        "equalize_single_pass_kernel");
    // Refused, the grid is more than the device holds at once (MPS, a green
    // context): this frame and every later one take the two passes. They
    // count into `hist`, which the single pass never touches, and meet the
    // same history; the single pass's histograms are left as they are.
    if (single_pass)
      parity_ ^= 1;
    else
      single_pass_refused_ = true;
  }
  if (!single_pass) {
    // Two blocks per SM: enough loads in flight, few global merges of the
    // per-block histograms.
    launch_histogram_lut_8bit(blocks_for(work_items(count_split), 2 * sm_count_), stream, source,
                              count_split, state_.get(), history, lut_.get());

    cudaLaunchAttribute overlap = dependent_launch_attribute();
    const cudaLaunchConfig_t config = launch_config(blocks_for(items, 8 * sm_count_), kThreads8Bit,
                                                    stream, dependent_launch_ ? &overlap : nullptr);
    CUDAFILTERS_CHECK(launch_apply_lut_8bit(config, map_src.data, map_src.stride, dst.data,
                                            dst.stride, map_split,
                                            static_cast<const uint8_t *>(lut_.get()), jobs));
  }
  state_dirty_ = false;

  GpuPlaneFilter::copy_planes(carried, kMaxCarried, stream);
}

void HistEqGpu::Impl::prepare_deep_launch(size_t shared, cudaStream_t stream) {
  const void *kernel = equalize_16bit_kernel_address();
  raise_dynamic_shared_limit(kernel, shared, "histogram equalization of deep planes");
  int resident = 0;
  CUDAFILTERS_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kDeepThreads, shared));
  if (resident < 1)
    throw CudaError("deep histogram: no block fits in shared memory", cudaErrorInvalidConfiguration);
  deep_resident_blocks_ = resident * sm_count_;
  deep_shared_bytes_ = shared;
  deep_cluster_resident_ = {deep_resident_blocks_, 0, 0, 0};
  if (!device_has_dependent_launch()) return;
  for (int i = 1; i < static_cast<int>(deep_cluster_resident_.size()); ++i) {
    const int blocks = 1 << i;
    int clusters = 0;
    if (resident_clusters(kernel, blocks, kDeepThreads, shared, stream, &clusters) != cudaSuccess)
      (void)cudaGetLastError();
    if (clusters < 1) continue;
    if (single_pass_ && !deep_refused_) {
      // A cooperative launch in clusters, of no steps: where the two do not
      // combine, counting keeps to single blocks.
      cudaLaunchAttribute attrs[2] = {cluster_attribute(blocks), {}};
      attrs[1].id = cudaLaunchAttributeCooperative;
      attrs[1].val.cooperative = 1;
      const cudaLaunchConfig_t config =
          launch_config(clusters * blocks, kDeepThreads, stream, attrs, shared, 2);
      if (launch_equalize_16bit(config, true, Frame16Bit{}, 0u) != cudaSuccess) {
        (void)cudaGetLastError();
        continue;
      }
    }
    deep_cluster_resident_[i] = clusters * blocks;
  }
}

int HistEqGpu::Impl::deep_cluster_blocks(int items) const {
  // The largest cluster that keeps nearly every resident block counting
  // and still has a partial per cluster, never one that counts more
  // samples than its packed counters hold.
  const int needed = (items + kMaxGroupsPerBlock - 1) / kMaxGroupsPerBlock;
  int best = 1;
  for (int i = 1; i < static_cast<int>(deep_cluster_resident_.size()); ++i) {
    const int resident = deep_cluster_resident_[i];
    if (resident >= deep_resident_blocks_ - deep_resident_blocks_ / 16 && resident >> i >= needed)
      best = 1 << i;
  }
  return best;
}

int HistEqGpu::Impl::deep_partial_count(int items, int cluster) const {
  // Enough partials that none counts more samples than its packed counters
  // hold, and at least one per resident cluster, so that every SM counts.
  // The sums then read them all (17 MB for 132 partials of 2^16 levels);
  // clusters divide that by their size.
  const int needed = (items + kMaxGroupsPerBlock - 1) / kMaxGroupsPerBlock;
  int log2 = 0;
  while ((1 << log2) < cluster) ++log2;
  const int clusters = std::max(deep_cluster_resident_[log2] / cluster, 1);
  return std::max({1, needed, std::min(clusters, items)});
}

std::pair<uint32_t *, uint32_t *> HistEqGpu::Impl::next_histograms_12bit(cudaStream_t stream) {
  if (hist_12bit_.size() == 0) hist_12bit_ = DeviceArray<uint32_t>(2 * kMaxLevels12Bit);
  if (!hist_12bit_cleared_) {
    CUDAFILTERS_CHECK(
        cudaMemsetAsync(hist_12bit_.get(), 0, hist_12bit_.size() * sizeof(uint32_t), stream));
    hist_12bit_cleared_ = true;
    parity_12bit_ = 0;
  }
  uint32_t *now = hist_12bit_.get() + parity_12bit_ * kMaxLevels12Bit;
  parity_12bit_ ^= 1;
  return {now, hist_12bit_.get() + parity_12bit_ * kMaxLevels12Bit};
}

int HistEqGpu::Impl::grid_12bit(size_t shared, int items) {
  if (shared != shared_bytes_12bit_) {
    const void *kernel = equalize_12bit_kernel_address();
    raise_dynamic_shared_limit(kernel, shared, "histogram equalization of up to 4096 levels");
    int resident = 0;
    CUDAFILTERS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel,
                                                                    kDeepThreads, shared));
    if (resident < 1)
      throw CudaError("12-bit histogram: no block fits", cudaErrorInvalidConfiguration);
    resident_blocks_12bit_ = resident * sm_count_;
    shared_bytes_12bit_ = shared;
  }
  // Every resident block: at 1080p 10-bit on the H100, 132 blocks took 11.8
  // us a frame, 99 blocks 12.7 us and 66 blocks 13.1 us.
  return std::min(resident_blocks_12bit_, std::max(1, (items + kDeepThreads - 1) / kDeepThreads));
}

void HistEqGpu::Impl::reserve_deep(uint32_t levels, bool with_history) {
  if (deep_levels_ < levels) {
    deep_hist_ = DeviceArray<uint32_t>(levels);
    deep_lut_ = DeviceArray<uint16_t>(levels);
    const size_t tiles = (levels + kTileLevels - 1) / kTileLevels;
    deep_tile_sum_ = DeviceArray<unsigned long long>(tiles);
    deep_tile_first_ = DeviceArray<uint32_t>(tiles);
    deep_tile_flag_ = DeviceArray<uint32_t>(tiles);
    deep_flags_cleared_ = false;
    deep_levels_ = levels;
    deep_history_levels_ = 0;
    deep_state_dirty_ = true;
  }
  if (with_history && deep_history_levels_ < levels) {
    deep_history_ = DeviceArray<unsigned long long>(2 * static_cast<size_t>(levels));
    deep_history_levels_ = levels;
  }
}

void HistEqGpu::Impl::enqueue_deep(ConstPlane src, const Plane *stash, Plane dst,
                                   const CarriedPlanes &carried, cudaStream_t stream) {
  const SampleLayout layout = with_significant_bits(src.samples, significant_bits_);
  if (!layout.valid())
    throw std::invalid_argument("significant bits do not fit the plane's samples");
  const DeepLevels l{layout.shift, layout.levels()};

  reserve_deep(l.levels, temporal_.weight() != 0);
  // The history is laid out by level count: a frame of another count
  // starts a new one.
  if (l.levels != deep_frame_levels_) deep_state_dirty_ = true;
  deep_frame_levels_ = l.levels;
  if (deep_state_dirty_) {
    deep_history_parity_ = 0;
    temporal_.restart();
    hist_12bit_cleared_ = false;
  }
  const HistoryShape shape = HistoryShape::frame(src.width, src.height, l.levels);
  History history{temporal_.next_frame(shape), temporal_.weight(), nullptr, nullptr};
  if (history.mode != HistoryMode::kOff) {
    history.past = deep_history_.get() + deep_history_parity_ * static_cast<size_t>(l.levels);
    history.next = deep_history_.get() + (deep_history_parity_ ^ 1) * static_cast<size_t>(l.levels);
    deep_history_parity_ ^= 1;
  }
  // Until every launch is queued the history may be left half-advanced.
  deep_state_dirty_ = true;

  const bool src_vec = aligned16(src.data, src.stride) &&
                       (!stash || aligned16(stash->data, stash->stride));
  const DeepPlane count_src = deep_plane(src, src_vec);
  const ConstPlane map_from =
      stash ? ConstPlane(stash->data, stash->stride, src.width, src.height, src.samples) : src;
  const DeepPlane map_src =
      deep_plane(map_from, aligned16(map_from.data, map_from.stride) &&
                               aligned16(dst.data, dst.stride));

  DeepFrameIo io{};
  io.count_src = count_src;
  io.stash = stash ? stash->data : nullptr;
  io.stash_pitch = stash ? stash->stride : 0;
  io.map_src = map_src;
  io.dst = dst.data;
  io.dst_pitch = dst.stride;
  io.l = l;
  io.history = history;
  int64_t map_items = static_cast<int64_t>(map_src.height) * map_src.groups_per_row;
  io.carried = carried_jobs(carried, map_items);
  const int items = count_src.height * count_src.groups_per_row;

  if (single_pass_ && !refused_12bit_ && l.levels <= kMaxLevels12Bit && l.levels <= free_12bit_) {
    Frame12Bit m{};
    static_cast<DeepFrameIo &>(m) = io;
    m.copies = counter_copies(l.levels, std::min(free_12bit_, kCounterRoomWords));
    const std::pair<uint32_t *, uint32_t *> hists = next_histograms_12bit(stream);
    m.hist = hists.first;
    m.next_hist = hists.second;
    const size_t shared = m.copies * l.levels * sizeof(unsigned int);
    if (launch_equalize_12bit(m, grid_12bit(shared, items), shared, stream)) {
      deep_state_dirty_ = false;
      GpuPlaneFilter::copy_planes(carried, kMaxCarried, stream);
      return;
    }
    // Refused (more blocks than the device holds at once: MPS, a green
    // context): this frame and every later one go by the deep kernel below,
    // which meets the same history. The histogram this launch would have
    // cleared is left as it was: cleared again before any further use.
    refused_12bit_ = true;
    hist_12bit_cleared_ = false;
  }

  const size_t words = deep_words(l.levels);
  // Counted in slices of the levels, and mapped through the LUT in L2,
  // where a block's shared memory holds fewer counters than the levels (64
  // and 99 KB devices at 16 bits).
  uint32_t slices = 1;
  while (words / slices > free_deep_ && slices < kMaxLevelSlices) slices *= 2;
  const uint32_t copies =
      counter_copies(static_cast<uint32_t>(words / slices), std::min(free_deep_, kCounterRoomWords));
  const bool lut_in_shared = words <= free_deep_;
  // The counters, no less than the sums' scratch (a few significant bits
  // have small counters), and the LUT where it is copied.
  const size_t shared =
      std::max({words / slices * copies * sizeof(unsigned int),
                kSumSlices * kTileLevels * sizeof(unsigned int),
                lut_in_shared ? words * sizeof(unsigned int) : size_t(0)});
  if (shared != deep_shared_bytes_) prepare_deep_launch(shared, stream);
  if (!deep_flags_cleared_) {
    CUDAFILTERS_CHECK(cudaMemsetAsync(deep_tile_flag_.get(), 0,
                                      deep_tile_flag_.size() * sizeof(uint32_t), stream));
    deep_flags_cleared_ = true;
  }
  if (++deep_epoch_ == 0) deep_epoch_ = 1;

  Frame16Bit f{};
  static_cast<DeepFrameIo &>(f) = io;
  f.copies = copies;
  f.slices = slices;
  f.lut_in_shared = lut_in_shared;
  f.tile_flag = deep_tile_flag_.get();
  f.epoch = deep_epoch_;
  // Clusters only where a partial is large (one copy of the counters, 2^15
  // levels and more): merging many copies through distributed shared memory
  // cost more than it saved (10-bit 1080p, 23.8 to 27.1 us).
  const int cluster = copies == 1 ? deep_cluster_blocks(items) : 1;
  f.partial_count = deep_partial_count(items, cluster);
  f.groups_per_partial = (items + f.partial_count - 1) / f.partial_count;
  const size_t partial_words = static_cast<size_t>(f.partial_count) * words;
  if (deep_partials_.size() < partial_words) deep_partials_ = DeviceArray<uint32_t>(partial_words);
  f.partials = deep_partials_.get();
  f.hist = deep_hist_.get();
  f.tile_sum = deep_tile_sum_.get();
  f.tile_first = deep_tile_first_.get();
  f.lut = deep_lut_.get();

  const int tiles = static_cast<int>((l.levels + kTileLevels - 1) / kTileLevels);
  uint32_t steps = 1u << kCount | 1u << kSum | 1u << kLut | 1u << kMap;
  if (history.mode != HistoryMode::kOff) steps |= 1u << kBlend;
  // Counting runs in clusters where they pay; the attributes name them only
  // then, as devices before compute capability 9.0 have none.
  const cudaLaunchAttribute cluster_attr = cluster_attribute(cluster);
  const unsigned cluster_attrs = cluster > 1 ? 1 : 0;
  bool cooperative = false;
  if (single_pass_ && !deep_refused_) {
    cudaLaunchAttribute attrs[2] = {cluster_attr, {}};
    attrs[cluster_attrs].id = cudaLaunchAttributeCooperative;
    attrs[cluster_attrs].val.cooperative = 1;
    const int log2 = __builtin_ctz(static_cast<unsigned>(cluster));
    const int grid = cluster > 1 ? deep_cluster_resident_[log2] : deep_resident_blocks_;
    // Every tile has a resident block of its own: the LUT follows the sums
    // in the same step. Its blocks wait for each other's tile sums, which
    // only a cooperative launch guarantees to end.
    f.fuse_lut = history.mode == HistoryMode::kOff && tiles <= grid;
    const cudaLaunchConfig_t config =
        launch_config(grid, kDeepThreads, stream, attrs, shared, cluster_attrs + 1);
    cooperative = cooperative_launched(
        launch_equalize_16bit(config, true, f,
                           f.fuse_lut ? steps & ~(1u << kLut) : steps),
        "equalize_16bit_kernel");
    // Refused (more blocks than the device holds at once: MPS, a green
    // context): this frame and every later one take a launch per step, the
    // LUT a step of its own. The steps keep the same state between frames.
    if (!cooperative) {
      deep_refused_ = true;
      f.fuse_lut = false;
    }
  }
  if (!cooperative) {
    cudaLaunchAttribute attrs[1] = {cluster_attr};
    for (uint32_t step = 0; step < kSteps; ++step) {
      if (!(steps & (1u << step))) continue;
      int blocks = tiles;
      if (step == kCount) blocks = f.partial_count * cluster;
      // Every block of the mapping loads the LUT: no more than fit at once.
      if (step == kMap)
        blocks = static_cast<int>(std::min<int64_t>(
            (map_items + kDeepThreads - 1) / kDeepThreads, deep_resident_blocks_));
      // Counting, the sums and the mapping use the shared memory.
      const bool uses_shared = step == kCount || step == kSum || step == kMap;
      const cudaLaunchConfig_t config =
          launch_config(std::max(blocks, 1), kDeepThreads, stream, attrs,
                        uses_shared ? shared : 0, step == kCount ? cluster_attrs : 0);
      CUDAFILTERS_CHECK(launch_equalize_16bit(config, false, f, 1u << step));
    }
  }
  deep_state_dirty_ = false;
  GpuPlaneFilter::copy_planes(carried, kMaxCarried, stream);
}


}  // namespace cudafilters

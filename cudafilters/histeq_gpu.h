// Histogram equalization on the GPU: one cooperative launch per frame (two
// where that is not available, four or five for deep planes of up to 2^16
// levels) on the caller's stream, no host round trip. Output is
// bit-identical to HistEqCpu.
#pragma once

#include "cuda_memory.h"
#include "detail/equalize_math.h"
#include "gpu_plane_filter.h"
#include "histeq_params.h"

#include <array>
#include <utility>

namespace cudafilters {

struct HistEqState;
struct HistEqHistory;

class HistEqGpu final : public StreamingPlaneFilter {
 public:
  enum class Launch {
    // One cooperative launch: histogram, grid barrier, LUT and mapping in the
    // same kernel. Falls back to kTwoPass where the GPU cannot launch
    // cooperatively, and from the first frame whose cooperative grid the
    // device refuses as larger than it holds at once (MPS, green contexts).
    kSinglePass,
    // A histogram kernel whose last block builds the LUT, then a mapping
    // kernel; on compute capability 9.0+ the second may start (and copy
    // carried planes) while the first finishes (programmatic dependent launch).
    kTwoPass,
    // kTwoPass without the overlap, as it runs on GPUs before compute
    // capability 9.0: lets the tests cover that path on newer GPUs.
    // Deep planes take one launch per step in both two-pass modes.
    kTwoPassSerial,
  };

  // Allocates the per-instance histograms and LUT in the current context and
  // verifies that this build carries code the current device can run.
  explicit HistEqGpu(Launch launch = Launch::kSinglePass);

  // p must be valid (histeq_params_error(p) empty). Takes effect from the
  // next frame; with temporal smoothing the LUT comes from the histogram
  // blended with those of earlier frames, as HistEqCpu computes it.
  void set_params(const HistEqParams &p) {
    temporal_.set_smoothing(p.temporal_smoothing);
    significant_bits_ = p.significant_bits;
  }
  void reset_history() override { temporal_.restart(); }

 protected:
  // Up to two carried planes (every supported YUV layout) are copied by the
  // kernels; any beyond that by separate copies.
  void enqueue_frame(ConstPlane src, const Plane *stash, Plane dst, const CarriedPlanes &carried,
                     cudaStream_t stream) override;

 private:
  // How the next frame uses the history; advances it.
  HistEqHistory next_history(ConstPlane src);
  // Deep planes (histeq_gpu_deep.cu).
  void enqueue_deep(ConstPlane src, const Plane *stash, Plane dst, const CarriedPlanes &carried,
                    cudaStream_t stream);
  void reserve_deep(uint32_t levels, bool with_history);
  // For a shared-memory size: the blocks that fit at once, alone and in
  // thread-block clusters.
  void prepare_deep_launch(size_t shared, cudaStream_t stream);
  // Blocks per cluster that count a plane of `items` groups of samples.
  int deep_cluster_blocks(int items) const;
  // Partial histograms of a plane of `items` groups, counted by clusters of
  // `cluster` blocks.
  int deep_partial_count(int items, int cluster) const;
  // Planes of up to 4096 levels: this frame's histogram and the next
  // frame's (which this frame clears), alternating.
  std::pair<uint32_t *, uint32_t *> next_mid_histograms(cudaStream_t stream);
  // The grid of the mid-depth kernel for a shared-memory size and a plane of
  // `items` groups of samples.
  int mid_grid(size_t shared, int items);

  DeviceArray<HistEqState> state_;
  DeviceArray<uint8_t> lut_;
  int sm_count_ = 1;
  // Most blocks per SM of the single-pass kernel (0: it cannot run).
  int single_pass_blocks_per_sm_ = 0;
  bool single_pass_ = false;
  // Cooperative launches the device refused for this instance, its grid
  // more than it holds at once (under MPS with an active-thread percentage,
  // in a green context): the 8-bit single pass, the kernel of planes of up
  // to 4096 levels, the deep kernel. Frames from then on take the launches
  // without a grid barrier, with the same output.
  bool single_pass_refused_ = false;
  bool mid_refused_ = false;
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
  DeviceArray<uint32_t> mid_hist_;
  int mid_parity_ = 0;
  bool mid_hist_cleared_ = false;
  size_t mid_shared_bytes_ = 0;
  int mid_resident_blocks_ = 0;
};

}  // namespace cudafilters

// CLAHE on the GPU, bit-identical to ClaheCpu (and so to OpenCV's
// cv::CLAHE): two kernels per frame on the caller's stream, no host round
// trip. The first counts tile histograms and, in the last block to finish a
// tile, clips it, builds its LUT and flags the tile done; the second blends
// the four nearest tile LUTs for every pixel. On GPUs with programmatic
// dependent launch the second starts while the first runs: it copies
// carried planes, and maps each band of rows as soon as the tiles it blends
// are flagged. Deep planes (up to 2^16 levels, clahe_gpu_deep.cu) take two
// kernels where a tile fits a thread-block cluster (its counting and LUT in
// one, then the mapping), four otherwise.
#pragma once

#include "clahe_params.h"
#include "cuda_memory.h"
#include "detail/equalize_math.h"
#include "gpu_plane_filter.h"

namespace cudafilters {

class ClaheGpu final : public StreamingPlaneFilter {
 public:
  // Prepares the kernels for the current device; throws CudaError if this
  // build has no code for it.
  ClaheGpu();

  // p must be valid (clahe_params_error(p) empty). Takes effect from the
  // next frame; a new grid starts a new history. With temporal smoothing
  // each tile's LUT comes from its histogram blended with those of earlier
  // frames, as ClaheCpu computes it.
  void set_params(const ClaheParams &p) {
    params_ = p;
    temporal_.set_smoothing(p.temporal_smoothing);
  }
  void reset_history() override { temporal_.restart(); }

 protected:
  // Up to two carried planes are copied by the mapping kernel; any beyond
  // that by separate copies.
  void enqueue_frame(ConstPlane src, const Plane *stash, Plane dst, const CarriedPlanes &carried,
                     cudaStream_t stream) override;

 private:
  // Grows the per-tile buffers for `tiles` tiles.
  void reserve_tiles(int tiles, bool with_history);
  // Deep planes (clahe_gpu_deep.cu).
  void enqueue_deep(ConstPlane src, const Plane *stash, Plane dst, const CarriedPlanes &carried,
                    cudaStream_t stream);
  void prepare_deep_kernels();
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
};

}  // namespace cudafilters

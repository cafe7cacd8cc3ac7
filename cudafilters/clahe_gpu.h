// CLAHE on the GPU, bit-identical to ClaheCpu (and so to OpenCV's
// cv::CLAHE): two kernels per frame on the caller's stream, no host round
// trip. The first counts tile histograms and, in the last block to finish a
// tile, clips it, builds its LUT and flags the tile done; the second blends
// the four nearest tile LUTs for every pixel. On GPUs with programmatic
// dependent launch the second starts while the first runs: it copies
// carried planes, and maps each band of rows as soon as the tiles it blends
// are flagged. Deep planes (10 to 16 bits, up to 2^16 levels) take two
// kernels where a tile fits a thread-block cluster (its counting and LUT in
// one, then the mapping), four otherwise.
#pragma once

#include "clahe_params.h"
#include "gpu_plane_filter.h"

#include <memory>

namespace cudafilters {

class ClaheGpu final : public StreamingPlaneFilter {
 public:
  // Prepares the kernels for the current device; throws CudaError if this
  // build has no code for it.
  ClaheGpu();
  ~ClaheGpu() override;
  ClaheGpu(ClaheGpu &&) noexcept;
  ClaheGpu &operator=(ClaheGpu &&) noexcept;

  // Throws std::invalid_argument with clahe_params_error(p)'s reason
  // when it is not empty, keeping the parameters it had. Takes effect from the
  // next frame; a new grid starts a new history. With temporal smoothing
  // each tile's LUT comes from its histogram blended with those of earlier
  // frames, as ClaheCpu computes it.
  void set_params(const ClaheParams &p);
  void reset_history() override;

 protected:
  // Up to two carried planes are copied by the mapping kernel; any beyond
  // that by separate copies.
  void enqueue_frame(ConstPlane src, const Plane *stash, Plane dst, const CarriedPlanes &carried,
                     cudaStream_t stream) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

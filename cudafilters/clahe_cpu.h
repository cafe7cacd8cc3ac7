// CLAHE on the CPU, bit-identical to OpenCV's cv::CLAHE on 8- and 16-bit
// planes, to the same rule over 2^b bins on planes of b-bit levels, and to
// ClaheGpu: tile histograms, clipping and LUTs, then the bilinear blend of
// the four nearest tile LUTs. Tiles and bands of rows are spread over the
// shared thread pool. Optional temporal smoothing blends each tile's
// histogram with its past.
#pragma once

#include "clahe_params.h"
#include "cpu_plane_filter.h"
#include "plane.h"

#include <memory>

namespace cudafilters {

class ClaheCpu final : public CpuPlaneFilter {
 public:
  ClaheCpu();
  ~ClaheCpu() override;
  ClaheCpu(ClaheCpu &&) noexcept;
  ClaheCpu &operator=(ClaheCpu &&) noexcept;

  // Throws std::invalid_argument with clahe_params_error(p)'s reason
  // when it is not empty, keeping the parameters it had. Takes effect from the
  // next frame; a new grid starts a new history.
  void set_params(const ClaheParams &p);
  // The next frame starts a new history (after a seek, a gap, new caps).
  void reset_history() override;

  // src and dst are host planes of equal size and layout; deep planes
  // have 2^bits levels (word >> shift, clamped), and their output levels
  // are shifted back into place. Throws std::invalid_argument otherwise.
  void process(ConstPlane src, Plane dst) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

// CLAHE on the CPU, bit-identical to OpenCV's cv::CLAHE on 8- and 16-bit
// planes, to the same rule over 2^b bins on planes of b-bit levels, and to
// ClaheGpu: tile histograms, clipping and LUTs, then the bilinear blend of
// the four nearest tile LUTs. Tiles and bands of rows are spread over the
// shared thread pool. Optional temporal smoothing blends each tile's
// histogram with its past (equalize_math.h).
#pragma once

#include "clahe_params.h"
#include "detail/equalize_math.h"
#include "plane.h"

#include <cstdint>
#include <vector>

namespace cudafilters {

class ClaheCpu {
 public:
  // p must be valid (clahe_params_error(p) empty). Takes effect from the
  // next frame; a new grid starts a new history.
  void set_params(const ClaheParams &p) { params_ = p; }
  // The weight on the past, 0 (off: every frame on its own) to 1.
  void set_temporal_smoothing(double smoothing) { temporal_.set_smoothing(smoothing); }
  // The next frame starts a new history (after a seek, a gap, new caps).
  void reset_history() { temporal_.restart(); }

  // src and dst are host planes of equal size and layout; deep planes
  // have 2^bits levels (word >> shift, clamped), and their output levels
  // are shifted back into place. Throws std::invalid_argument otherwise.
  void process(ConstPlane src, Plane dst);

 private:
  void prepare(int width, int height, SampleLayout samples);
  template <typename Sample> void build_tile_lut(ConstPlane src, int tile);
  template <typename Sample> void map_rows(ConstPlane src, Plane dst, int y0, int y1) const;
  template <typename Sample> void run(ConstPlane src, Plane dst);
  // The LUTs of a sample type: luts_ or luts16_.
  template <typename Sample> std::vector<Sample> &luts_of() {
    if constexpr (sizeof(Sample) == 1) return luts_; else return luts16_;
  }
  template <typename Sample> const std::vector<Sample> &luts_of() const {
    if constexpr (sizeof(Sample) == 1) return luts_; else return luts16_;
  }

  ClaheParams params_;
  ClaheGeometry geom_;
  SampleLayout samples_;
  std::vector<uint8_t> luts_;        // tiles x 256 (8-bit planes)
  std::vector<uint16_t> luts16_;     // tiles x levels (deep planes)
  // Per column of the frame, as OpenCV keeps them: where the two tiles'
  // LUTs blended across start, and their weights.
  std::vector<int> column_lo_, column_hi_;
  std::vector<float> column_w_lo_, column_w_hi_;
  std::vector<uint64_t> history_;    // tiles x levels, fixed point
  TemporalHistory temporal_;
  HistoryMode history_mode_ = HistoryMode::kOff;  // this frame's
};

}  // namespace cudafilters

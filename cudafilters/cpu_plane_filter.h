// The interface between the frame plumbing (CpuFrameRunner) and an
// algorithm on the CPU, the counterpart of GpuPlaneFilter: a filter of one
// host plane.
#pragma once

#include "plane.h"

namespace cudafilters {

class CpuPlaneFilter {
 public:
  virtual ~CpuPlaneFilter() = default;

  // src and dst are host planes of equal size and layout; they do not
  // overlap. Returns once dst is written; throws std::invalid_argument for
  // planes the filter does not take.
  virtual void process(ConstPlane src, Plane dst) = 0;

  // The planes a frame's statistics describe, asked once the frame is
  // filtered (or queued): src and dst themselves, unless the filter filters
  // planes derived from them (the luma of packed pixels), which it then
  // gives instead, valid until its next frame.
  virtual void statistics_planes(ConstPlane & /*src*/, ConstPlane & /*dst*/) const {}

  // Filters that carry state from frame to frame (temporal smoothing) start
  // afresh with the next frame: after a seek, a gap or new caps.
  virtual void reset_history() {}
};

}  // namespace cudafilters

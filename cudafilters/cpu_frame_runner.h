// Runs a CpuPlaneFilter on frames in host memory, as GpuFrameRunner runs a
// GpuPlaneFilter: the output is filled with a poison byte first where the
// test suites ask for it (CUDAFILTERS_POISON_OUTPUT), and the levels of the
// input and output are counted where the caller asks for them.
#pragma once

#include "cpu_plane_filter.h"
#include "plane.h"
#include "plane_levels.h"

namespace cudafilters {

class CpuFrameRunner {
 public:
  CpuFrameRunner();

  // src and dst are host planes of equal size and layout (see
  // CpuPlaneFilter::process). With `levels`, the histograms of src and dst
  // are counted once dst is written.
  void process(CpuPlaneFilter &filter, ConstPlane src, Plane dst, FrameLevels *levels = nullptr);

 private:
  bool poison_outputs_ = false;
};

}  // namespace cudafilters

// Runs a CpuPlaneFilter on frames in host memory, as GpuFrameRunner runs a
// GpuPlaneFilter: the levels of the input and output are counted where the
// caller asks for them.
#pragma once

#include "cpu_plane_filter.h"
#include "plane.h"
#include "plane_levels.h"
#include "runner_options.h"

#include <memory>

namespace cudafilters {

class CpuFrameRunner {
 public:
  explicit CpuFrameRunner(const RunnerOptions &options = {});
  ~CpuFrameRunner();
  CpuFrameRunner(CpuFrameRunner &&) noexcept;
  CpuFrameRunner &operator=(CpuFrameRunner &&) noexcept;

  // src and dst are host planes of equal size and layout (see
  // CpuPlaneFilter::process). With `levels`, the histograms of src and dst
  // are counted once dst is written.
  void process(CpuPlaneFilter &filter, ConstPlane src, Plane dst, FrameLevels *levels = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

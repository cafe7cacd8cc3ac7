#include <cudafilters/cpu_frame_runner.h>

#include "input_checks.h"
#include "poison.h"

namespace cudafilters {

struct CpuFrameRunner::Impl {
  RunnerOptions options_;
};

CpuFrameRunner::CpuFrameRunner(const RunnerOptions &options)
    : impl_(std::make_unique<Impl>(Impl{options})) {}
CpuFrameRunner::~CpuFrameRunner() = default;
CpuFrameRunner::CpuFrameRunner(CpuFrameRunner &&) noexcept = default;
CpuFrameRunner &CpuFrameRunner::operator=(CpuFrameRunner &&) noexcept = default;

void CpuFrameRunner::process(CpuPlaneFilter &filter, ConstPlane src, Plane dst,
                             FrameLevels *levels) {
  check_plane_pair(src, dst);
  // An output over its source is the filter's to take or refuse, never
  // poisoned: that would overwrite the frame filtered.
  if (impl_->options_.poison_outputs && !planes_overlap(src, dst)) poison_host_plane(dst);
  filter.process(src, dst);
  if (levels) {
    ConstPlane in = src, out = dst;
    filter.statistics_planes(in, out);
    measure_levels_cpu(in, out, *levels);
  }
}

}  // namespace cudafilters

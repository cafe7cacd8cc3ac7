#include <cudafilters/cpu_frame_runner.h>

#include "poison.h"

namespace cudafilters {

struct CpuFrameRunner::Impl {
  // Outputs are poisoned first (poison.h).
  bool poison_outputs_ = poison_requested();
};

CpuFrameRunner::CpuFrameRunner() : impl_(std::make_unique<Impl>()) {}
CpuFrameRunner::~CpuFrameRunner() = default;
CpuFrameRunner::CpuFrameRunner(CpuFrameRunner &&) noexcept = default;
CpuFrameRunner &CpuFrameRunner::operator=(CpuFrameRunner &&) noexcept = default;

void CpuFrameRunner::process(CpuPlaneFilter &filter, ConstPlane src, Plane dst,
                             FrameLevels *levels) {
  if (impl_->poison_outputs_) poison_host_plane(dst);
  filter.process(src, dst);
  if (levels) {
    ConstPlane in = src, out = dst;
    filter.statistics_planes(in, out);
    measure_levels_cpu(in, out, *levels);
  }
}

}  // namespace cudafilters

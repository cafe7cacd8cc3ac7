#include <cudafilters/cpu_frame_runner.h>

#include "poison.h"

namespace cudafilters {

CpuFrameRunner::CpuFrameRunner() : poison_outputs_(poison_requested()) {}

void CpuFrameRunner::process(CpuPlaneFilter &filter, ConstPlane src, Plane dst,
                             FrameLevels *levels) {
  if (poison_outputs_) poison_host_plane(dst);
  filter.process(src, dst);
  if (levels) {
    ConstPlane in = src, out = dst;
    filter.statistics_planes(in, out);
    measure_levels_cpu(in, out, *levels);
  }
}

}  // namespace cudafilters

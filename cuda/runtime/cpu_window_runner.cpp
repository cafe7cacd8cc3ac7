#include <cudafilters/cpu_window_runner.h>

#include "poison.h"

namespace cudafilters {

CpuWindowRunner::CpuWindowRunner() : poison_outputs_(poison_requested()) {}

void CpuWindowRunner::push(const FramePlanes &src) {
  const int slot = window_.push();
  try {
    frames_.store(slot, src);
  } catch (...) {
    // A frame not copied whole is no neighbour of later frames.
    window_.drop_newest();
    throw;
  }
}

void CpuWindowRunner::output(CpuWindowFilter &filter, const FramePlanesOut &dst,
                             FrameLevels *levels) {
  const FrameWindow::Window w = window_.next();
  FramePlanes views[2 * FrameWindow::kMaxRadius + 1];
  for (int i = 0; i < w.count; ++i) views[i] = frames_.view(w.slots[i]);
  if (poison_outputs_) poison_host_frame(dst);
  try {
    filter.process_window(views, w.count, w.center, dst);
    if (levels) {
      FramePlanes in = views[w.center];
      ConstPlane out = dst.luma;
      filter.statistics_frame(in, out);
      measure_levels_cpu(in.luma, out, *levels, &in);
    }
  } catch (...) {
    window_.pop();
    throw;
  }
  window_.pop();
}

}  // namespace cudafilters

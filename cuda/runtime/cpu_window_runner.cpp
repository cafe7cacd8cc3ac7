#include <cudafilters/cpu_window_runner.h>

#include "frame_store.h"
#include "frame_window.h"
#include "poison.h"

namespace cudafilters {

struct CpuWindowRunner::Impl {
  FrameWindow window_;
  HostFrameStore frames_;
  RunnerOptions options_;
};

CpuWindowRunner::CpuWindowRunner(const RunnerOptions &options) : impl_(std::make_unique<Impl>()) {
  impl_->options_ = options;
}
CpuWindowRunner::~CpuWindowRunner() = default;
CpuWindowRunner::CpuWindowRunner(CpuWindowRunner &&) noexcept = default;
CpuWindowRunner &CpuWindowRunner::operator=(CpuWindowRunner &&) noexcept = default;

void CpuWindowRunner::reset(int radius) { impl_->window_.reset(radius); }
bool CpuWindowRunner::waiting() const { return impl_->window_.waiting(); }
bool CpuWindowRunner::ready(bool draining) const { return impl_->window_.ready(draining); }
void CpuWindowRunner::drop_next() { impl_->window_.pop(); }

void CpuWindowRunner::push(const FramePlanes &src) {
  FrameWindow &window = impl_->window_;
  const int slot = window.push();
  try {
    impl_->frames_.store(slot, src);
  } catch (...) {
    // A frame not copied whole is no neighbour of later frames.
    window.drop_newest();
    throw;
  }
}

namespace {

void filter_window(CpuWindowFilter &filter, const FramePlanes *views, int count, int center,
                   const FramePlanesOut &dst, FrameLevels *levels, bool poison) {
  if (poison) poison_host_frame(dst);
  filter.process_window(views, count, center, dst);
  if (levels) {
    FramePlanes in = views[center];
    ConstPlane out = dst.luma;
    filter.statistics_frame(in, out);
    measure_levels_cpu(in.luma, out, *levels, &in);
  }
}

}  // namespace

void CpuWindowRunner::filter_frame(CpuWindowFilter &filter, const FramePlanes &src,
                                   const FramePlanesOut &dst, FrameLevels *levels) {
  filter_window(filter, &src, 1, 0, dst, levels, impl_->options_.poison_outputs);
}

void CpuWindowRunner::output(CpuWindowFilter &filter, const FramePlanesOut &dst,
                             FrameLevels *levels) {
  FrameWindow &window = impl_->window_;
  const FrameWindow::Window w = window.next();
  FramePlanes views[2 * FrameWindow::kMaxRadius + 1];
  for (int i = 0; i < w.count; ++i) views[i] = impl_->frames_.view(w.slots[i]);
  try {
    filter_window(filter, views, w.count, w.center, dst, levels, impl_->options_.poison_outputs);
  } catch (...) {
    window.pop();
    throw;
  }
  window.pop();
}

}  // namespace cudafilters

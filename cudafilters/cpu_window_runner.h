// Runs a CpuWindowFilter over a stream of host frames (temporal filters), as
// GpuWindowRunner runs a GpuWindowFilter: keeps the frames its windows need
// in 2 r + 1 slots of host memory reused from frame to frame, and decides
// when each frame is filtered (gpu_window_runner.h says when).
#pragma once

#include "cpu_window_filter.h"
#include "frame_planes.h"
#include "plane_levels.h"
#include "runner_options.h"

#include <memory>

namespace cudafilters {

class CpuWindowRunner {
 public:
  explicit CpuWindowRunner(const RunnerOptions &options = {});
  ~CpuWindowRunner();
  CpuWindowRunner(CpuWindowRunner &&) noexcept;
  CpuWindowRunner &operator=(CpuWindowRunner &&) noexcept;

  // Forgets the frames held; windows of 2 radius + 1 frames from now on,
  // radius 0 to 3 (std::invalid_argument otherwise). Until the first
  // reset, windows of one frame, as after reset(0).
  void reset(int radius);
  // Whether a frame waits to be filtered, and whether one can be filtered
  // now (draining: no more frames will come before a reset).
  bool waiting() const;
  bool ready(bool draining) const;
  // Moves past the next frame without filtering it (its output could not
  // be written): as after filtering it, frames no later window needs are
  // released. std::logic_error when no frame waits.
  void drop_next();

  // Copies a frame of host planes into the history; the planes may be
  // reused once this returns. A frame whose copy fails is not held: the
  // window is as it was.
  void push(const FramePlanes &src);

  // Filters the next frame (ready(...) must hold; std::logic_error when no
  // frame waits) into host planes.
  // With `levels`, the histograms of the frame's input and output luma are
  // counted too. The window moves on to the next frame also when the filter
  // throws.
  void output(CpuWindowFilter &filter, const FramePlanesOut &dst, FrameLevels *levels = nullptr);

  // A window of one frame (radius 0), read where it lies: filters src into
  // dst with no copy and without touching the frames held. `levels` as in
  // output.
  void filter_frame(CpuWindowFilter &filter, const FramePlanes &src, const FramePlanesOut &dst,
                    FrameLevels *levels = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

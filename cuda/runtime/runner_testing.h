// What the tests and benchmarks ask of the runners beyond their public API:
// a GpuFrameRunner that always copies frames in host memory in and out (the
// comparison point for the path that streams them), and whether its last
// frame was streamed. Private to the engine library, its tests and
// benchmarks:
//
//   GpuFrameRunner copying;
//   set_host_path(copying, HostPath::kCopies);
//   copying.process_host(filter, src, dst);
//   assert(!last_frame_streamed(copying));
#pragma once

#include <cudafilters/gpu_frame_runner.h>

namespace cudafilters {

// How a GpuFrameRunner moves frames in host memory.
enum class HostPath {
  // Frames in page-locked host memory that the device can address go
  // straight to a filter that streams host memory (no copies) while no
  // other frame in host memory is in flight in the process; all other
  // frames are copied in and out. What every runner starts with.
  kAuto,
  // Always copy in and out.
  kCopies,
};

// Reaches the state behind GpuFrameRunner's pointer (gpu_frame_runner.cpp).
struct GpuFrameRunnerAccess {
  static void set_host_path(GpuFrameRunner &runner, HostPath path);
  static bool last_frame_streamed(const GpuFrameRunner &runner);
  static void count_host_frame(int delta);
};

// While one lives, runners see another frame in host memory in flight.
class OtherHostFrame {
 public:
  OtherHostFrame() { GpuFrameRunnerAccess::count_host_frame(1); }
  ~OtherHostFrame() { GpuFrameRunnerAccess::count_host_frame(-1); }
  OtherHostFrame(const OtherHostFrame &) = delete;
  OtherHostFrame &operator=(const OtherHostFrame &) = delete;
};

// The path `runner` takes for the frames in host memory from its next one.
inline void set_host_path(GpuFrameRunner &runner, HostPath path) {
  GpuFrameRunnerAccess::set_host_path(runner, path);
}

// Whether the last process_host of `runner` streamed host memory.
inline bool last_frame_streamed(const GpuFrameRunner &runner) {
  return GpuFrameRunnerAccess::last_frame_streamed(runner);
}

}  // namespace cudafilters

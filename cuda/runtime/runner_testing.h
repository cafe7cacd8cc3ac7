// What the tests and benchmarks ask of the runners beyond their public API:
// whether a GpuFrameRunner's last frame was streamed. Private to the engine
// library, its tests and benchmarks:
//
//   GpuFrameRunner runner;
//   runner.process_host(filter, src, dst, nullptr, kCopiesOnly);
//   assert(!last_frame_streamed(runner));
#pragma once

#include <cudafilters/gpu_frame_runner.h>

namespace cudafilters {

// Reaches the state behind GpuFrameRunner's pointer (gpu_frame_runner.cpp).
struct GpuFrameRunnerAccess {
  static bool last_frame_streamed(const GpuFrameRunner &runner);
};

// The route of a frame that is copied in and out, and whose carried planes
// are copied on the host: a frame beside others.
inline constexpr HostRoute kCopiesOnly{false, false};

// Whether the last process_host of `runner` streamed host memory.
inline bool last_frame_streamed(const GpuFrameRunner &runner) {
  return GpuFrameRunnerAccess::last_frame_streamed(runner);
}

}  // namespace cudafilters

// Outputs filled with a known byte before every frame where the caller asks
// for it (RunnerOptions::poison_outputs), so that samples a filter fails to
// write show instead of stale data. The runners (CpuFrameRunner,
// CpuWindowRunner, GpuFrameRunner, GpuWindowRunner) do it for every output
// they are given. Private to the engine library and its tests.
#pragma once

#include <cudafilters/frame_planes.h>
#include <cudafilters/plane.h>
#include <cudafilters/runner_options.h>

#include <cuda_runtime.h>

namespace cudafilters {

// What the engine tests give their runners.
inline constexpr RunnerOptions kPoisoned{true, HostWait::paced};

// Fills a host plane's samples (row_bytes() of each row) with kPoisonByte.
void poison_host_plane(Plane p);
// The same for every plane of a host frame.
void poison_host_frame(const FramePlanesOut &f);
// The same for a device plane, on `stream`.
void poison_device_plane(Plane p, cudaStream_t stream);

}  // namespace cudafilters

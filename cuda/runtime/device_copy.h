// A frame's planes copied between device planes by one kernel. Each
// cudaMemcpy2DAsync costs the calling thread about 10 us, a launch about
// 5 us (studies/element-cpu), and a frame is copied whole on every push
// into a temporal window: one launch for its two or three planes. Private
// to the engine library.
#pragma once

#include <cudafilters/plane.h>

#include <cuda_runtime.h>

namespace cudafilters {

// Queues on `stream` the copy of src[i] into dst[i] for i < count (at most
// 3), rows of src[i].width bytes; all planes in memory the current device
// reads directly.
void enqueue_device_copy(const ConstPlane *src, const Plane *dst, int count, cudaStream_t stream);

}  // namespace cudafilters

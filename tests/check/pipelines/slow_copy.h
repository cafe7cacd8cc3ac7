/* A reader that takes its time: what a slow downstream element does to a
 * buffer on the buffer's CUDA stream. */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace test {

/* Queues on @stream (of the current context) a kernel that waits @ns
 * nanoseconds of GPU time, then copies @bytes from @src to @dst (device
 * memory). */
void queue_slow_copy (const void * src, void * dst, size_t bytes,
    uint64_t ns, cudaStream_t stream);

}  // namespace test

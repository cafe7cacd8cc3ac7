#include "slow_copy.h"

#include <cudafilters/cuda_check.h>

namespace test {

namespace {

__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One block: thread 0 waits, then the block copies.
__global__ void slow_copy_kernel(const uint8_t *src, uint8_t *dst, size_t bytes, uint64_t ns) {
  if (threadIdx.x == 0) {
    const uint64_t start = global_ns();
    while (global_ns() - start < ns) {
    }
  }
  __syncthreads();
  for (size_t i = threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
}

}  // namespace

void queue_slow_copy(const void *src, void *dst, size_t bytes, uint64_t ns, cudaStream_t stream) {
  slow_copy_kernel<<<1, 256, 0, stream>>>(static_cast<const uint8_t *>(src),
                                          static_cast<uint8_t *>(dst), bytes, ns);
  cudafilters::check_launch("slow_copy_kernel");
}

}  // namespace test

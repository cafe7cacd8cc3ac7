// gpu-load: keeps a GPU busy from a process of its own, as other work on a
// shared GPU would, for the concurrency test and for benchmarks under load.
//
//   gpu-load SECONDS [DEVICE]
//
// Every SM is filled with blocks that spin for 2 ms each, in grids of two
// waves so the next blocks are always waiting, with two grids in flight. It
// prints "busy" once the first grid has run, then keeps loading the GPU
// until SECONDS have passed or it is terminated.
#include <cudafilters/cuda_check.h>
#include <cudafilters/cuda_memory.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

namespace {

constexpr int kThreads = 1024;
constexpr long long kSpinNs = 2'000'000;

__device__ long long global_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Holds its SM's threads (and the shared memory asked for at launch) until
// `ns` have passed; `sink` keeps the loop from being optimised away.
__global__ void __launch_bounds__(kThreads) spin_kernel(long long ns, int *sink) {
  extern __shared__ int scratch[];
  const long long start = global_ns();
  int x = threadIdx.x;
  while (global_ns() - start < ns) x = x * 1664525 + 1013904223;
  scratch[threadIdx.x % 32] = x;
  if (x == 42) *sink = scratch[0];
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s SECONDS [DEVICE]\n", argv[0]);
    return 2;
  }
  const double seconds = std::atof(argv[1]);
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  try {
    CUDAFILTERS_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop{};
    CUDAFILTERS_CHECK(cudaGetDeviceProperties(&prop, device));
    // Half an SM's shared memory per block: two blocks fill an SM's threads
    // and its shared memory alike.
    const int shared = int(prop.sharedMemPerMultiprocessor / 2 - prop.reservedSharedMemPerBlock);
    CUDAFILTERS_CHECK(cudaFuncSetAttribute(spin_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           shared));
    int per_sm = 0;
    CUDAFILTERS_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spin_kernel, kThreads, shared));
    const int blocks = 2 * per_sm * prop.multiProcessorCount;
    cudafilters::DeviceArray<int> sink(1);
    cudafilters::Stream stream;
    cudafilters::Event done[2];
    const auto start = std::chrono::steady_clock::now();
    long long grids = 0;
    for (;; ++grids) {
      cudafilters::Event &slot = done[grids % 2];
      if (grids >= 2) CUDAFILTERS_CHECK(cudaEventSynchronize(slot.get()));
      if (grids == 2) std::printf("busy: %d blocks of %d threads per grid on %s\n", blocks, kThreads,
                                  prop.name);
      std::fflush(stdout);
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (elapsed >= seconds) break;
      spin_kernel<<<blocks, kThreads, shared, stream.get()>>>(kSpinNs, sink.get());
      cudafilters::check_launch("spin_kernel");
      CUDAFILTERS_CHECK(cudaEventRecord(slot.get(), stream.get()));
    }
    stream.synchronize();
    std::printf("done: %lld grids\n", grids);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "gpu-load: %s\n", e.what());
    return 1;
  }
  return 0;
}

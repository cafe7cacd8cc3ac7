#include "frame_difference_read.h"

#include <cudafilters/cuda_check.h>
#include <cudafilters/cuda_memory.h>

namespace test {

namespace {

// As nlm_auto_kernel reads the tables: a block of whole warps (the reader
// must not depend on how many).
__global__ void read_difference_kernel(cudafilters::DifferenceTables t, DifferenceRead *out) {
  __shared__ double medians[cudafilters::kDifferenceShifts];
  cudafilters::read_difference_tables(t, medians);
  if (threadIdx.x != 0) return;
  out->estimate = cudafilters::frame_difference_of(medians, t.blocks);
  for (int s = 0; s < cudafilters::kDifferenceShifts; ++s) out->medians[s] = medians[s];
}

}  // namespace

DifferenceRead read_difference(const cudafilters::DifferenceTables &t, int threads,
                               cudaStream_t stream) {
  cudafilters::DeviceArray<DifferenceRead> got(1);
  CUDAFILTERS_CHECK(cudaMemsetAsync(got.get(), 0xFF, sizeof(DifferenceRead), stream));
  read_difference_kernel<<<1, threads, 0, stream>>>(t, got.get());
  cudafilters::check_launch("read_difference_kernel");
  DifferenceRead out;
  CUDAFILTERS_CHECK(cudaMemcpyAsync(&out, got.get(), sizeof out, cudaMemcpyDeviceToHost, stream));
  CUDAFILTERS_CHECK(cudaStreamSynchronize(stream));
  return out;
}

}  // namespace test

// Reads FrameDifferenceGpu's tables into the estimate on the device, as
// cudanlm's automatic strength does, for the tests that compare it with
// the CPU's.
#pragma once

#include "frame_difference.h"

#include <cuda_runtime.h>

namespace test {

struct DifferenceRead {
  cudafilters::FrameDifference estimate;
  double medians[cudafilters::kDifferenceShifts];
};

// The estimate of `t` and its shifts' medians, read by one block of
// `threads` threads (whole warps), which clears the tables; waits for
// `stream`.
DifferenceRead read_difference(const cudafilters::DifferenceTables &t, int threads,
                               cudaStream_t stream);

}  // namespace test

// The GPU noise estimate's table, and reading it from a kernel: for a caller
// that reads the estimate in a kernel of its own (cudanlm's automatic
// strength), one launch fewer on the frame's stream. Private to the engine
// library.
#pragma once

#include "noise_estimate.h"

#include <cub/block/block_scan.cuh>

namespace cudafilters {

// Pixel counts and sums of |L| per gradient bin, in the plane's levels, of
// each scale (fine, coarse).
struct NoiseTableGpu {
  unsigned long long count[kNoiseScales][kNoiseBins];
  unsigned long long abs_laplacian[kNoiseScales][kNoiseBins];
};

// Blocks that read a table have this many threads, one per bin.
constexpr int kNoiseReadThreads = kNoiseBins;

// Called by every thread of a block of kNoiseReadThreads: the prefix sums of
// `t` (exact, in integers), then thread 0 reads both scales from them as the
// CPU does and returns them (the other threads return empty readings). The
// table is cleared for the next frame on the way.
__device__ __forceinline__ NoiseReadings read_noise_table(NoiseTableGpu &t, int bits) {
  using Scan = cub::BlockScan<unsigned long long, kNoiseReadThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ uint64_t below_n[kNoiseScales][kNoiseBins + 1], below_l[kNoiseScales][kNoiseBins + 1];
  const int b = threadIdx.x;
  for (int s = 0; s < kNoiseScales; ++s) {
    const unsigned long long n = t.count[s][b], l = t.abs_laplacian[s][b];
    t.count[s][b] = 0;
    t.abs_laplacian[s][b] = 0;
    unsigned long long pn, pl;
    Scan(scan).ExclusiveSum(n, pn);
    __syncthreads();
    Scan(scan).ExclusiveSum(l, pl);
    __syncthreads();
    below_n[s][b] = pn;
    below_l[s][b] = pl;
    if (b == kNoiseBins - 1) {
      below_n[s][kNoiseBins] = pn + n;
      below_l[s][kNoiseBins] = pl + l;
    }
  }
  __syncthreads();
  const NoiseReadings r =
      b != 0 ? NoiseReadings{}
             : noise_readings_of_prefix({below_n[0], below_l[0]}, {below_n[1], below_l[1]}, bits);
  // The shared arrays are reused by the next call.
  __syncthreads();
  return r;
}

}  // namespace cudafilters

// The GPU noise estimate's table, and reading it from a kernel: for a caller
// that reads the estimate in a kernel of its own (cudanlm's automatic
// strength), one launch fewer on the frame's stream. Private to the engine
// library.
#pragma once

#include "noise_estimate.h"

#include <cstddef>

namespace cudafilters {

// Pixel counts and sums of |L| per gradient bin, in the plane's levels, of
// each scale (fine, coarse).
struct NoiseTableGpu {
  unsigned long long count[kNoiseScales][kNoiseBins];
  unsigned long long abs_laplacian[kNoiseScales][kNoiseBins];
};

// The prefix sums of one table, in shared memory.
struct NoisePrefixes {
  uint64_t below_n[kNoiseScales][kNoiseBins + 1];
  uint64_t below_l[kNoiseScales][kNoiseBins + 1];
};
constexpr int kMaxNoiseTablesRead = NoiseEstimatorGpu::kMaxTables;
// Blocks that read tables have this many threads: a warp for each column
// (count and sum of |L| at either scale) of each table.
constexpr int kNoiseReadThreads = 32 * 2 * kNoiseScales * kMaxNoiseTablesRead;
// The dynamic shared memory of a block that reads `tables` tables.
constexpr size_t noise_read_shared(int tables) { return size_t(tables) * sizeof(NoisePrefixes); }

// Called by every thread of a block of kNoiseReadThreads launched with
// noise_read_shared(count) bytes of dynamic shared memory: the prefix sums
// of tables[0 .. count - 1] (exact, in integers), then their readings as the
// CPU computes them, into `readings` (shared memory, valid in every thread
// on return). The table is cleared for the next frame on the way.
//
// The tables are copied to shared memory by the whole block, then each of
// a table's four columns (count and sum of |L| at either scale) is scanned
// by a warp of its own, 32 bins at a time, and each table and scale is read
// by a warp of its own: eight block-wide scans one after another, and the
// four readings one after another on one thread, were most of the block's
// time.
__device__ __forceinline__ void read_noise_tables(NoiseTableGpu *const *tables, const int *bits,
                                                  int count, NoiseReadings *readings) {
  extern __shared__ __align__(16) unsigned char noise_prefix_bytes[];
  NoisePrefixes *prefix = reinterpret_cast<NoisePrefixes *>(noise_prefix_bytes);
  constexpr int kColumns = 2 * kNoiseScales;
  // Column c of table i: count (c even) or sum of |L| (c odd) at scale c / 2.
  auto column_in = [&](int i, int c) {
    return c % 2 ? tables[i]->abs_laplacian[c / 2] : tables[i]->count[c / 2];
  };
  auto column_out = [&](int i, int c) {
    return c % 2 ? prefix[i].below_l[c / 2] : prefix[i].below_n[c / 2];
  };
  for (int e = int(threadIdx.x); e < count * kColumns * kNoiseBins; e += int(blockDim.x)) {
    const int i = e / (kColumns * kNoiseBins), c = e / kNoiseBins % kColumns, j = e % kNoiseBins;
    unsigned long long *in = column_in(i, c);
    column_out(i, c)[j] = in[j];
    in[j] = 0;
  }
  __syncthreads();
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  if (warp < count * kColumns) {
    uint64_t *col = column_out(warp / kColumns, warp % kColumns);
    unsigned long long carry = 0;
    for (int j = lane; j < kNoiseBins; j += 32) {
      const unsigned long long v = col[j];
      unsigned long long inclusive = v;
      for (int o = 1; o < 32; o *= 2) {
        const unsigned long long t = __shfl_up_sync(0xFFFFFFFFu, inclusive, o);
        if (lane >= o) inclusive += t;
      }
      col[j] = carry + inclusive - v;
      carry += __shfl_sync(0xFFFFFFFFu, inclusive, 31);
    }
    if (lane == 0) col[kNoiseBins] = carry;
  }
  __syncthreads();
  if (lane == 0 && warp < count * kNoiseScales) {
    const int i = warp / kNoiseScales, s = warp % kNoiseScales;
    const NoisePrefixes &p = prefix[i];
    const NoiseReading r = noise_reading_of_prefix(p.below_n[s], p.below_l[s], bits[i]);
    if (s == 0) {
      readings[i].fine = r;
      readings[i].pixels = p.below_n[0][kNoiseBins];
    } else {
      readings[i].coarse = r;
    }
  }
  __syncthreads();
}

}  // namespace cudafilters

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

// The prefix sums of one table, in shared memory; the counts in 32 bits
// (noise_reading_of_prefix), so that kMaxNoiseTablesRead tables take 48 KB.
struct NoisePrefixes {
  uint32_t below_n[kNoiseScales][kNoiseBins + 1];
  uint64_t below_l[kNoiseScales][kNoiseBins + 1];
};
static_assert(2 * (kNoiseSamplePixels + (1 << 16)) < (uint64_t(1) << 32),
              "a table's pixel count fits 32 bits");
constexpr int kMaxNoiseTablesRead = NoiseEstimatorGpu::kMaxTables;
// Blocks that read tables have this many threads: a warp for each column
// (count and sum of |L| at either scale) of each table.
constexpr int kNoiseReadThreads = 32 * 2 * kNoiseScales * kMaxNoiseTablesRead;
// The dynamic shared memory of a block that reads `tables` tables.
constexpr size_t noise_read_shared(int tables) { return size_t(tables) * sizeof(NoisePrefixes); }

// The exclusive prefix sums of col[0 .. kNoiseBins - 1], in place, and
// their total in col[kNoiseBins]: by one warp, 32 bins at a time.
template <typename T>
__device__ __forceinline__ void scan_noise_column(T *col, int lane) {
  unsigned long long carry = 0;
  for (int j = lane; j < kNoiseBins; j += 32) {
    const unsigned long long v = col[j];
    unsigned long long inclusive = v;
    for (int o = 1; o < 32; o *= 2) {
      const unsigned long long t = __shfl_up_sync(0xFFFFFFFFu, inclusive, o);
      if (lane >= o) inclusive += t;
    }
    col[j] = T(carry + inclusive - v);
    carry += __shfl_sync(0xFFFFFFFFu, inclusive, 31);
  }
  if (lane == 0) col[kNoiseBins] = T(carry);
}

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
  // A thread copies a bin's count and sum of |L| at a time, kBatch bins'
  // loads in flight before their stores.
  constexpr int kBatch = 4;
  const int bins = count * kNoiseScales * kNoiseBins, stride = int(blockDim.x);
  for (int base = int(threadIdx.x); base < bins; base += kBatch * stride) {
    unsigned long long n[kBatch], l[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int e = base + k * stride;
      if (e >= bins) break;
      const int i = e / (kNoiseScales * kNoiseBins), s = e / kNoiseBins % kNoiseScales;
      n[k] = tables[i]->count[s][e % kNoiseBins];
      l[k] = tables[i]->abs_laplacian[s][e % kNoiseBins];
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int e = base + k * stride;
      if (e >= bins) break;
      const int i = e / (kNoiseScales * kNoiseBins), s = e / kNoiseBins % kNoiseScales;
      const int j = e % kNoiseBins;
      prefix[i].below_n[s][j] = uint32_t(n[k]);
      prefix[i].below_l[s][j] = l[k];
      tables[i]->count[s][j] = 0;
      tables[i]->abs_laplacian[s][j] = 0;
    }
  }
  __syncthreads();
  // Column c of table i: the count (c even) or the sum of |L| (c odd) at
  // scale c / 2.
  constexpr int kColumns = 2 * kNoiseScales;
  const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
  if (warp < count * kColumns) {
    const int i = warp / kColumns, c = warp % kColumns;
    if (c % 2)
      scan_noise_column(prefix[i].below_l[c / 2], lane);
    else
      scan_noise_column(prefix[i].below_n[c / 2], lane);
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

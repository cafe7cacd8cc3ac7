// The samples of deep planes (16-bit words) as the kernels of HistEqGpu and
// ClaheGpu handle them: eight to a 16-byte vector, and counted into packed
// 16-bit counters, two levels to a 32-bit word of shared memory (2^16
// levels fit in 128 KB only so). A packed counter holds at most 65535: its
// users count at most that many samples into one. Included by .cu files
// only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace cudafilters {
namespace kernels {

// Counts one sample of `level` into packed counters.
__device__ __forceinline__ void count_packed(unsigned int *packed, uint32_t level) {
  atomicAdd(&packed[level >> 1], 1u << ((level & 1u) * 16));
}

// The eight 16-bit counters (or samples) of a vector, in order: n[i] is
// the i-th.
__device__ __forceinline__ void unpack_halves(uint4 q, uint32_t (&n)[8]) {
  const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    n[2 * k] = w[k] & 0xFFFFu;
    n[2 * k + 1] = w[k] >> 16;
  }
}

// Adds the eight 16-bit counters of a vector to n.
__device__ __forceinline__ void add_halves(uint4 q, uint32_t (&n)[8]) {
  const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    n[2 * k] += w[k] & 0xFFFFu;
    n[2 * k + 1] += w[k] >> 16;
  }
}

// The vector of eight 16-bit values (each below 2^16), in order.
__device__ __forceinline__ uint4 pack_halves(const uint32_t (&v)[8]) {
  return make_uint4(v[0] | v[1] << 16, v[2] | v[3] << 16, v[4] | v[5] << 16, v[6] | v[7] << 16);
}

// f(sample) for each of the eight samples of a vector, in order.
template <typename F>
__device__ __forceinline__ void for_each_sample(uint4 v, F f) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int j = 0; j < 8; ++j) f((w[j / 2] >> (16 * (j % 2))) & 0xFFFFu);
}

// The vector with each of its eight samples replaced by what f returns for
// it (below 2^16): f(sample), or f(sample, i) for the i-th sample.
template <typename F>
__device__ __forceinline__ uint4 transform_samples(uint4 v, F f) {
  uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    uint32_t lo, hi;
    if constexpr (std::is_invocable_v<F, uint32_t, int>) {
      lo = f(w[k] & 0xFFFFu, 2 * k);
      hi = f(w[k] >> 16, 2 * k + 1);
    } else {
      lo = f(w[k] & 0xFFFFu);
      hi = f(w[k] >> 16);
    }
    w[k] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

}  // namespace kernels
}  // namespace cudafilters

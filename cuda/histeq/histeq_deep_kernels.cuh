// Device code that HistEqGpu's kernels of deep planes (16-bit words) share:
// histeq_kernels_12bit.cu and histeq_kernels_16bit.cu walk a plane in groups
// of kGroup samples, one 16-byte vector where rows allow, with loads batched
// so that their latencies overlap, and map it through a LUT in shared
// memory. Included by those two files only.
#pragma once

#include "deep_samples.cuh"
#include "histeq_kernels.h"

#include <cstddef>
#include <cstdint>

namespace cudafilters {
namespace histeq {

namespace {

using kernels::transform_samples;

// Vectors a thread loads before it uses the first (visit_groups).
constexpr int kBatch = 2;

// A load of a plane: through the read-only cache, or, for a plane that other
// blocks of the running grid wrote (kWrittenThisGrid), through L2, as the
// read-only cache is only defined for data constant over the whole kernel.
template <bool kWrittenThisGrid, typename T>
__device__ __forceinline__ T load_plane(const T *p) {
  if constexpr (kWrittenThisGrid)
    return __ldcg(p);
  else
    return __ldg(p);
}

// Calls f(word) for each sample of group `item`, and stores what f
// returns at the same place in `out` (when not null).
template <bool kWrittenThisGrid, typename F>
__device__ __forceinline__ void visit_group(const DeepPlane &p, int item, uint8_t *out,
                                            size_t out_pitch, F f) {
  const int y = item / p.groups_per_row;
  const int x0 = (item - y * p.groups_per_row) * kGroup;
  const uint16_t *in = reinterpret_cast<const uint16_t *>(p.data + y * p.pitch);
  uint16_t *o = out ? reinterpret_cast<uint16_t *>(out + y * out_pitch) : nullptr;
  if (p.vec && x0 + kGroup <= p.width) {
    const uint4 v =
        transform_samples(load_plane<kWrittenThisGrid>(reinterpret_cast<const uint4 *>(in + x0)), f);
    if (o) *reinterpret_cast<uint4 *>(o + x0) = v;
    return;
  }
  const int x1 = min(x0 + kGroup, p.width);
  for (int x = x0; x < x1; ++x) {
    const uint16_t r = static_cast<uint16_t>(f(load_plane<kWrittenThisGrid>(in + x)));
    if (o) o[x] = r;
  }
}

// visit_group for items begin, begin + stride, ... below end, the loads of
// kBatch whole vectors issued before any is used: a thread visits only a
// few items of a frame (two at 1080p), so their memory latencies overlap
// rather than add up.
template <int kBatch, bool kWrittenThisGrid = false, typename F>
__device__ __forceinline__ void visit_groups(const DeepPlane &p, int begin, int end, int stride,
                                             uint8_t *out, size_t out_pitch, F f) {
  for (int first = begin; first < end; first += kBatch * stride) {
    uint4 v[kBatch];
    int y[kBatch], x0[kBatch];
    bool whole[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int item = first + k * stride;
      y[k] = item / p.groups_per_row;
      x0[k] = (item - y[k] * p.groups_per_row) * kGroup;
      whole[k] = item < end && p.vec && x0[k] + kGroup <= p.width;
      if (whole[k])
        v[k] = load_plane<kWrittenThisGrid>(reinterpret_cast<const uint4 *>(p.data + y[k] * p.pitch) +
                                            x0[k] / kGroup);
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const int item = first + k * stride;
      if (whole[k]) {
        const uint4 r = transform_samples(v[k], f);
        if (out) reinterpret_cast<uint4 *>(out + y[k] * out_pitch)[x0[k] / kGroup] = r;
      } else if (item < end) {
        visit_group<kWrittenThisGrid>(p, item, out, out_pitch, f);
      }
    }
  }
}

// Maps `src` into `dst` through `lut` (shared memory, or with kGlobalLut a
// LUT this grid wrote, read through L2), a grid-stride over its groups. A
// stash (`stashed`) was written by this grid.
template <bool kGlobalLut = false>
__device__ __forceinline__ void map_with_lut(const DeepPlane &src, bool stashed, uint8_t *dst,
                                             size_t dst_pitch, DeepLevels l, const uint16_t *lut) {
  const uint32_t max_level = l.levels - 1;
  const int items = src.height * src.groups_per_row;
  const auto map = [&](uint32_t word) {
    const uint16_t *entry = lut + sample_level(word, l.shift, max_level);
    return static_cast<uint32_t>(kGlobalLut ? __ldcg(entry) : *entry);
  };
  const int begin = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
  if (stashed)
    visit_groups<kBatch, true>(src, begin, items, stride, dst, dst_pitch, map);
  else
    visit_groups<kBatch>(src, begin, items, stride, dst, dst_pitch, map);
}

}  // namespace

}  // namespace histeq
}  // namespace cudafilters

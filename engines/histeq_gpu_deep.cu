// HistEqGpu on deep planes (16-bit words, up to 2^16 levels): one
// cooperative kernel on the caller's stream whose steps are separated by
// grid barriers (or, without cooperative launch, one launch per step):
// partial histograms, one per thread-block cluster (or block) so that
// every SM counts; the frame's histogram summed from them by one block per
// tile of 512 levels, with the tile's sum and first occupied level, and
// without smoothing the tile's LUT in the same step; with smoothing, the
// blend with the past, then the LUT, one thread per level, from the tile
// sums and a scan of its tile; the mapping, from a copy of the LUT in
// shared memory. The 8-bit
// path (histeq_gpu.cu) keeps a histogram per warp and builds its LUT in
// every block; 2^16 levels fit neither, so here each block counts into
// packed 16-bit counters in shared memory (128 KB at 16 bits).
//
// The partial histograms are stored whole rather than added into one with
// atomics: on noisy 16-bit frames a block occupies about as many levels as
// it counts samples, so an atomic merge costs about one global atomic per
// sample (measured on an H100: 22 us of a 1080p frame's 46), while storing
// and summing 66 partials of 128 KB (1080p on an H100, in clusters of two
// blocks) moves 8.7 MB through L2, in 16-byte vectors. Counting every
// sample into a cluster's distributed shared memory measured slower still
// (60-75 us): its remote atomics are slower than the L2's; reading whole
// counters remotely, as the clusters here do once per partial, is not.
#include <cudafilters/histeq_gpu.h>

#include <cudafilters/detail/equalize_math.h>
#include "plane_kernels.cuh"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/atomic>
#include <cuda/functional>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace cudafilters {

namespace {

using namespace kernels;

constexpr int kThreads = 1024;
// Samples per work item: one 16-byte vector.
constexpr int kGroup = 8;
// A block counts at most this many samples, so that no packed 16-bit
// counter can carry into its neighbour.
constexpr int kMaxBlockSamples = 65535;
constexpr int kMaxGroupsPerBlock = kMaxBlockSamples / kGroup;
// Vectors a thread loads before it uses the first (visit_groups).
constexpr int kBatch = 2;

// A deep plane as the kernels walk it: rows of groups of kGroup samples,
// read as one vector where rows are 16-byte aligned.
struct DeepPlane {
  const uint8_t *data;
  size_t pitch;
  int width, height;
  int groups_per_row;
  bool vec;
};

struct DeepLevels {
  int shift;
  uint32_t levels;
};

// How a frame's histogram meets the history of earlier frames.
struct DeepHistory {
  HistoryMode mode;
  uint32_t weight;
  const unsigned long long *past;
  unsigned long long *next;
};

// A plane has at most kMaxPlaneBytes (2^30 samples), and so at most 2^30
// groups (one per sample where rows are 1 to 8 samples wide, 2^27 for a
// 32768 x 32768 plane): group indices fit int, with the strides of a
// resident grid's threads (visit_groups) added.
DeepPlane deep_plane(ConstPlane p, bool vec) {
  check_plane_bytes(static_cast<int64_t>(p.row_bytes()), p.height);
  return DeepPlane{p.data, p.stride, p.width, p.height, (p.width + kGroup - 1) / kGroup, vec};
}

// f applied to each of the 8 samples of a vector, in place.
template <typename F>
__device__ __forceinline__ uint4 transform_vector(uint4 v, F f) {
  uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint32_t lo = f(w[k] & 0xFFFFu), hi = f(w[k] >> 16);
    w[k] = lo | (hi << 16);
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

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
        transform_vector(load_plane<kWrittenThisGrid>(reinterpret_cast<const uint4 *>(in + x0)), f);
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
        const uint4 r = transform_vector(v[k], f);
        if (out) reinterpret_cast<uint4 *>(out + y[k] * out_pitch)[x0[k] / kGroup] = r;
      } else if (item < end) {
        visit_group<kWrittenThisGrid>(p, item, out, out_pitch, f);
      }
    }
  }
}

// Sub-histograms per block: as many copies of the packed counters as fit
// in 64 KB (up to one per warp), so warps counting the same levels collide
// less; 2^15 and 2^16 levels get one copy (64 and 128 KB).
__host__ __device__ inline uint32_t deep_copies(uint32_t levels) {
  const uint32_t words = levels / 2 > 1 ? levels / 2 : 1;
  const uint32_t fit = 16384 / words;
  return fit < 1 ? 1 : fit > kThreads / 32 ? kThreads / 32 : fit;
}

// Words of packed counters in one partial histogram: two levels per word.
__host__ __device__ inline uint32_t deep_words(uint32_t levels) { return levels > 1 ? levels / 2 : 1; }

// The steps of a frame, in order. The cooperative launch runs them all with
// a grid barrier between steps; otherwise each is a launch of its own.
enum DeepStep : uint32_t {
  kCount,  // partial histograms (and the carried planes' copies)
  kSum,    // the frame's histogram from the partials; tile sums unless smoothing
  kBlend,  // smoothing only: the blend with the past; tile sums
  kLut,
  kMap,
  kSteps
};

// Everything the steps of one frame read and write.
// What a frame's kernel reads and writes, whichever kernel runs it: the
// planes, the levels and the history.
struct DeepFrameIo {
  DeepPlane count_src;
  uint8_t *stash;
  size_t stash_pitch;
  DeepPlane map_src;
  uint8_t *dst;
  size_t dst_pitch;
  DeepLevels l;
  DeepHistory history;
  CopyJobs carried;
};

struct DeepFrame : DeepFrameIo {
  // Partial histograms: 16-bit counts at partials[p * 2 * words + level].
  unsigned int *partials;
  int partial_count;
  int groups_per_partial;
  unsigned int *hist;
  unsigned long long *tile_sum;
  uint32_t *tile_first;
  // Set to `epoch` once a tile's sum and first bin are stored (fuse_lut).
  uint32_t *tile_flag;
  uint32_t epoch;
  bool fuse_lut;
  uint16_t *lut;
};

struct DeepShared {
  using SumReduce = cub::BlockReduce<unsigned long long, kThreads>;
  using MinReduce = cub::BlockReduce<uint32_t, kThreads>;
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  // Whole counts (no smoothing): a frame has fewer than 2^32 samples.
  using CountReduce = cub::BlockReduce<uint32_t, kThreads>;
  using CountScan = cub::BlockScan<uint32_t, kThreads>;
  union {
    typename SumReduce::TempStorage sum;
    typename MinReduce::TempStorage min;
    typename Scan::TempStorage scan;
    typename CountReduce::TempStorage count_sum;
    typename CountScan::TempStorage count_scan;
  } tmp;
  unsigned long long total, before, first_count;
  uint32_t first;
};

__device__ __forceinline__ bool smoothing(const DeepFrame &f) {
  return f.history.mode != HistoryMode::kOff;
}

// The block's tile: its sum and first occupied bin (l.levels if none), as
// thread 0 sees them. Count: uint32_t for whole counts, unsigned long long
// for smoothed bins.
template <typename Count>
__device__ __forceinline__ void reduce_tile(DeepShared &sh, Count v, uint32_t bin,
                                            uint32_t levels, Count &sum, uint32_t &first) {
  if constexpr (sizeof(Count) == 4)
    sum = DeepShared::CountReduce(sh.tmp.count_sum).Sum(v);
  else
    sum = DeepShared::SumReduce(sh.tmp.sum).Sum(v);
  __syncthreads();
  first = DeepShared::MinReduce(sh.tmp.min).Reduce(v != 0 ? bin : levels, cuda::minimum<>{});
  __syncthreads();
}

// Clears `words` counters, 16 bytes at a time where `vec`.
__device__ __forceinline__ void clear_counters(unsigned int *packed, uint32_t words, bool vec) {
  if (vec) {
    for (uint32_t w = threadIdx.x; w < words / 4; w += blockDim.x)
      reinterpret_cast<uint4 *>(packed)[w] = make_uint4(0, 0, 0, 0);
  } else {
    for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) packed[w] = 0;
  }
}

// Stores partial `out`: the sum of every copy of the counters of every
// block of the cluster. Each block stores its share of the words, reading
// the other blocks' counters through distributed shared memory. The cluster
// counts at most 65535 samples, so the packed sums cannot carry from one
// half into the other.
__device__ void store_partial(const unsigned int *packed, uint32_t words, uint32_t copies,
                              bool vec, unsigned int *out) {
  const unsigned rank = BlockCluster::rank(), blocks = BlockCluster::size();
  if (vec) {
    const uint32_t vectors = words / 4;
    const uint32_t end = vectors * (rank + 1) / blocks;
    for (uint32_t w = vectors * rank / blocks + threadIdx.x; w < end; w += blockDim.x) {
      uint4 v = make_uint4(0, 0, 0, 0);
      for (unsigned k = 0; k < blocks; ++k) {
        // Starting at its own rank, each block reads a different block first.
        const unsigned int *from = BlockCluster::of(packed, (rank + k) % blocks);
        for (uint32_t c = 0; c < copies; ++c) {
          const uint4 q = reinterpret_cast<const uint4 *>(from + c * words)[w];
          v = make_uint4(v.x + q.x, v.y + q.y, v.z + q.z, v.w + q.w);
        }
      }
      reinterpret_cast<uint4 *>(out)[w] = v;
    }
  } else if (rank == 0) {
    for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) {
      unsigned int v = 0;
      for (unsigned b = 0; b < blocks; ++b)
        for (uint32_t c = 0; c < copies; ++c) v += BlockCluster::of(packed, b)[c * words + w];
      out[w] = v;
    }
  }
}

// Counts partial histograms into packed 16-bit counters in shared memory
// and stores them. A partial is counted by a thread-block cluster, each
// block into its own counters, and stored as their sum: clusters make fewer
// partials for the sums to read while every SM still counts.
__device__ void count_step(const DeepFrame &f, unsigned int *packed) {
  copy_planes(f.carried);
  const uint32_t levels = f.l.levels;
  const uint32_t words = deep_words(levels);
  const uint32_t copies = deep_copies(levels);
  unsigned int *mine = packed + (threadIdx.x / 32) % copies * words;
  const uint32_t max_level = levels - 1;
  const int items = f.count_src.height * f.count_src.groups_per_row;
  const unsigned rank = BlockCluster::rank(), blocks = BlockCluster::size();
  // Counters are cleared and stored 16 bytes at a time (words is a multiple
  // of 4 from 8 levels on).
  const bool vec = words % 4 == 0;
  for (int p = blockIdx.x / blocks; p < f.partial_count; p += gridDim.x / blocks) {
    clear_counters(packed, words * copies, vec);
    __syncthreads();
    const int end = min(items, (p + 1) * f.groups_per_partial);
    const int begin = p * f.groups_per_partial + static_cast<int>(rank * blockDim.x + threadIdx.x);
    visit_groups<kBatch>(f.count_src, begin, end, static_cast<int>(blocks * blockDim.x), f.stash,
                         f.stash_pitch, [&](uint32_t word) {
                           const uint32_t level = sample_level(word, f.l.shift, max_level);
                           atomicAdd(&mine[level >> 1], 1u << ((level & 1u) * 16));
                           return word;
                         });
    // Every block's counters are complete before any block reads them, and
    // none is cleared again while another block may still read it.
    BlockCluster::sync();
    store_partial(packed, words, copies, vec, f.partials + static_cast<size_t>(p) * words);
    BlockCluster::sync();
  }
}

// Levels per tile of the sums and the LUT, one per thread of the first half
// of a block: 128 tiles at 16 bits, so that the sums keep nearly every SM
// busy (64 tiles of 1024 left half of them waiting).
constexpr uint32_t kTileLevels = kThreads / 2;
// Partials are summed a vector of 8 levels at a time, by this many slices
// of the block's threads, each over every kSumSlices-th partial.
constexpr int kSumSlices = kThreads / (kTileLevels / kGroup);

// What the LUT reads and writes.
struct DeepLutStep {
  const unsigned long long *tile_sum;
  const uint32_t *tile_first;
  const unsigned int *hist;            // the counts, without smoothing
  const unsigned long long *smoothed;  // the blended bins, with smoothing (else null)
  uint16_t *lut;
  uint32_t levels;
  int shift;
};

// At most 2^16 levels: a thread per tile where a block reduces the tile
// sums.
static_assert((1u << 16) / kTileLevels <= kThreads, "more tiles than a block has threads");

// This thread's level in tile `tile`; `levels` (none) for the threads past
// the tile.
__device__ __forceinline__ uint32_t level_in_tile(uint32_t tile, uint32_t levels) {
  return threadIdx.x < kTileLevels ? tile * kTileLevels + threadIdx.x : levels;
}

// The LUT of tile `tile` from smoothed bins, one thread per level, `v` the
// level's bin: the frame's total, first occupied bin and the sum before
// the tile from the tile sums (thread t holds tile t's sum `s` and first
// occupied bin), then a scan of the tile. Not inlined, and given only what
// it uses: its 64-bit block scans and reductions need the most registers
// of all steps, and inlined they made the whole kernel spill, counting and
// mapping included. What other blocks wrote in this launch is loaded past
// L1.
__device__ __noinline__ void smoothed_tile_lut(const DeepLutStep f, DeepShared &sh,
                                               uint32_t tile, unsigned long long v,
                                               unsigned long long s, uint32_t tile_first) {
  const uint32_t levels = f.levels;
  const uint32_t t = threadIdx.x;
  const unsigned long long all = DeepShared::SumReduce(sh.tmp.sum).Sum(s);
  __syncthreads();
  const unsigned long long pre = DeepShared::SumReduce(sh.tmp.sum).Sum(t < tile ? s : 0ull);
  __syncthreads();
  const uint32_t lowest = DeepShared::MinReduce(sh.tmp.min).Reduce(tile_first, cuda::minimum<>{});
  if (t == 0) {
    sh.total = all;
    sh.before = pre;
    sh.first = lowest < levels ? lowest : levels - 1;
    sh.first_count = __ldcg(f.smoothed + sh.first);
  }
  __syncthreads();

  unsigned long long cdf = 0;
  DeepShared::Scan(sh.tmp.scan).InclusiveSum(v, cdf);
  const uint32_t bin = level_in_tile(tile, levels);
  if (bin < levels)
    f.lut[bin] = static_cast<uint16_t>(
        equalized_level_of(static_cast<int>(bin), static_cast<int>(sh.first), sh.first_count,
                           sh.total, sh.before + cdf, kHistoryUnit, levels - 1)
        << f.shift);
  __syncthreads();
}

// The same for whole counts, in 32 bits: the frame's total, the sum before
// the tile and the first occupied bin come from one warp's reductions over
// the stored tile sums (at most 64), then one 32-bit block scan. Not
// inlined, as smoothed_tile_lut.
__device__ __noinline__ void tile_lut(const DeepLutStep f, DeepShared &sh, uint32_t tile,
                                      uint32_t v) {
  const uint32_t levels = f.levels;
  const uint32_t tiles = (levels + kTileLevels - 1) / kTileLevels;
  if (threadIdx.x < 32) {
    const auto warp = cooperative_groups::tiled_partition<32>(cooperative_groups::this_thread_block());
    uint32_t all = 0, pre = 0, lowest = levels;
    for (uint32_t t = threadIdx.x; t < tiles; t += 32) {
      const uint32_t sum = static_cast<uint32_t>(__ldcg(f.tile_sum + t));
      all += sum;
      if (t < tile) pre += sum;
      lowest = min(lowest, __ldcg(f.tile_first + t));
    }
    all = cooperative_groups::reduce(warp, all, cooperative_groups::plus<uint32_t>());
    pre = cooperative_groups::reduce(warp, pre, cooperative_groups::plus<uint32_t>());
    lowest = cooperative_groups::reduce(warp, lowest, cooperative_groups::less<uint32_t>());
    if (threadIdx.x == 0) {
      sh.total = all;
      sh.before = pre;
      sh.first = lowest < levels ? lowest : levels - 1;
      sh.first_count = __ldcg(f.hist + sh.first);
    }
  }
  __syncthreads();

  uint32_t cdf = 0;
  DeepShared::CountScan(sh.tmp.count_scan).InclusiveSum(v, cdf);
  const uint32_t bin = level_in_tile(tile, levels);
  if (bin < levels)
    f.lut[bin] = static_cast<uint16_t>(
        equalized_level_of(static_cast<int>(bin), static_cast<int>(sh.first), sh.first_count,
                           sh.total, sh.before + cdf, 1.f, levels - 1)
        << f.shift);
  __syncthreads();
}

// The LUT step: a tile LUT for each tile, from the stored bins and tile sums.
__device__ void lut_step(const DeepLutStep f, DeepShared &sh) {
  const uint32_t levels = f.levels;
  const uint32_t tiles = (levels + kTileLevels - 1) / kTileLevels;
  const uint32_t t = threadIdx.x;
  if (!f.smoothed) {
    for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const uint32_t bin = level_in_tile(tile, levels);
      tile_lut(f, sh, tile, bin < levels ? __ldcg(f.hist + bin) : 0u);
    }
    return;
  }
  const unsigned long long s = t < tiles ? __ldcg(f.tile_sum + t) : 0;
  const uint32_t first = t < tiles ? __ldcg(f.tile_first + t) : levels;
  for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const uint32_t bin = level_in_tile(tile, levels);
    smoothed_tile_lut(f, sh, tile, bin < levels ? __ldcg(f.smoothed + bin) : 0ull, s, first);
  }
}

__device__ DeepLutStep lut_step_of(const DeepFrame &f) {
  return DeepLutStep{f.tile_sum, f.tile_first, f.hist, smoothing(f) ? f.history.next : nullptr,
                     f.lut, f.l.levels, f.l.shift};
}

// Where the LUT follows the sums in one step (whole counts): publishes this
// block's tile sum and first bin (thread 0 holds them) to the other blocks,
// waits until every tile is published for this frame, then writes the
// tile's LUT. After a block barrier, thread 0 sets the tile's flag to the
// frame's epoch with a release, which publishes the stores of every thread
// of the block, as a grid barrier does: one fence per block, not one per
// thread. A thread per tile then waits for that tile's flag, so that the
// waits overlap.
__device__ void publish_and_lut(const DeepLutStep f, DeepShared &sh, uint32_t *tile_flag,
                                uint32_t epoch, uint32_t tile, uint32_t sum, uint32_t first,
                                uint32_t v) {
  if (threadIdx.x == 0) {
    const_cast<unsigned long long *>(f.tile_sum)[tile] = sum;
    const_cast<uint32_t *>(f.tile_first)[tile] = first;
  }
  __syncthreads();
  if (threadIdx.x == 0)
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(tile_flag[tile])
        .store(epoch, cuda::memory_order_release);
  const uint32_t tiles = (f.levels + kTileLevels - 1) / kTileLevels;
  if (threadIdx.x < tiles) {
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device> flag(tile_flag[threadIdx.x]);
    while (flag.load(cuda::memory_order_relaxed) != epoch) __nanosleep(32);
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  }
  __syncthreads();
  tile_lut(f, sh, tile, v);
}

// One block per tile of kTileLevels levels: the tile's counts summed over
// all partials, 16-byte vectors at a time, the slices' sums added up in
// shared memory (`scratch`, kSumSlices x kTileLevels words) and stored in
// `hist`. Without smoothing the tile's sum and first occupied bin are
// stored too. A block owns its tile, so no atomics are needed. Where
// `f.fuse_lut` (every tile has a block of its own, all resident), each
// block then waits for every tile's sum and writes its tile's LUT, with no
// grid barrier and no step of its own for the LUT.
__device__ void sum_step(const DeepFrame &f, DeepShared &sh, unsigned int *scratch) {
  const uint32_t levels = f.l.levels;
  const uint32_t tiles = (levels + kTileLevels - 1) / kTileLevels;
  const uint32_t words = deep_words(levels);
  const int slice = threadIdx.x / (kTileLevels / kGroup);
  const uint32_t group = threadIdx.x % (kTileLevels / kGroup);
  for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const uint32_t first_bin = tile * kTileLevels + group * kGroup;
    uint32_t n[kGroup] = {};
    if (first_bin + kGroup <= levels) {
      const uint4 *at = reinterpret_cast<const uint4 *>(f.partials + first_bin / 2);
      const size_t stride = words / 4;
#pragma unroll 4
      for (int p = slice; p < f.partial_count; p += kSumSlices) {
        const uint4 q = at[p * stride];
        const uint32_t w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          n[2 * k] += w[k] & 0xFFFFu;
          n[2 * k + 1] += w[k] >> 16;
        }
      }
    } else if (slice == 0) {
      // Fewer than 8 levels in all (a plane of 1 or 2 significant bits).
      // Unrolled, so that n stays in registers.
      const uint16_t *counts = reinterpret_cast<const uint16_t *>(f.partials);
#pragma unroll
      for (uint32_t k = 0; k < kGroup; ++k)
        if (first_bin + k < levels)
          for (int p = 0; p < f.partial_count; ++p)
            n[k] += counts[p * 2 * size_t(words) + first_bin + k];
    }
    uint4 *out = reinterpret_cast<uint4 *>(scratch + slice * kTileLevels + group * kGroup);
    out[0] = make_uint4(n[0], n[1], n[2], n[3]);
    out[1] = make_uint4(n[4], n[5], n[6], n[7]);
    __syncthreads();
    const uint32_t bin = level_in_tile(tile, levels);
    uint32_t count = 0;
    if (bin < levels) {
#pragma unroll
      for (int s = 0; s < kSumSlices; ++s) count += scratch[s * kTileLevels + threadIdx.x];
    }
    if (bin < levels) f.hist[bin] = count;
    if (!smoothing(f)) {
      uint32_t sum, first;
      reduce_tile(sh, bin < levels ? count : 0u, bin, levels, sum, first);
      if (f.fuse_lut) {
        publish_and_lut(lut_step_of(f), sh, f.tile_flag, f.epoch, tile, sum, first,
                        bin < levels ? count : 0u);
      } else if (threadIdx.x == 0) {
        f.tile_sum[tile] = sum;
        f.tile_first[tile] = first;
      }
    }
    __syncthreads();
  }
}

// Smoothing only, one thread per level: the blend of the frame's counts with
// the past, stored as the next history; the tile sums and first bins.
__device__ void blend_step(const DeepFrame &f, DeepShared &sh) {
  const uint32_t levels = f.l.levels;
  const uint32_t tiles = (levels + kTileLevels - 1) / kTileLevels;
  for (uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const uint32_t bin = level_in_tile(tile, levels);
    unsigned long long v = 0;
    if (bin < levels) {
      const unsigned long long past =
          f.history.mode == HistoryMode::kBlend ? f.history.past[bin] : 0;
      v = next_history_bin(f.history.mode, past, f.hist[bin], f.history.weight);
      f.history.next[bin] = v;
    }
    unsigned long long sum;
    uint32_t first;
    reduce_tile(sh, v, bin, levels, sum, first);
    if (threadIdx.x == 0) {
      f.tile_sum[tile] = sum;
      f.tile_first[tile] = first;
    }
  }
}

// Maps `src` into `dst` through `lut` (shared memory), a grid-stride over
// its groups. A stash (`stashed`) was written by this grid.
__device__ __forceinline__ void map_with_lut(const DeepPlane &src, bool stashed, uint8_t *dst,
                                             size_t dst_pitch, DeepLevels l, const uint16_t *lut) {
  const uint32_t max_level = l.levels - 1;
  const int items = src.height * src.groups_per_row;
  const auto map = [&](uint32_t word) {
    return static_cast<uint32_t>(lut[sample_level(word, l.shift, max_level)]);
  };
  const int begin = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
  if (stashed)
    visit_groups<kBatch, true>(src, begin, items, stride, dst, dst_pitch, map);
  else
    visit_groups<kBatch>(src, begin, items, stride, dst, dst_pitch, map);
}

// The mapping, its gathers from a copy of the LUT in shared memory (`lut`,
// room for the levels): from L2, a 16-bit frame's gathers into a 128 KB LUT
// took 0.7 TB/s at 4K.
__device__ void map_step(const DeepFrame &f, uint16_t *lut) {
  const uint32_t levels = f.l.levels;
  const uint32_t vectors = levels * sizeof(uint16_t) / sizeof(uint4);
  for (uint32_t i = threadIdx.x; i < vectors; i += blockDim.x)
    reinterpret_cast<uint4 *>(lut)[i] = reinterpret_cast<const uint4 *>(f.lut)[i];
  for (uint32_t i = vectors * (sizeof(uint4) / sizeof(uint16_t)) + threadIdx.x; i < levels;
       i += blockDim.x)
    lut[i] = f.lut[i];
  __syncthreads();
  map_with_lut(f.map_src, f.stash != nullptr, f.dst, f.dst_pitch, f.l, lut);
}

// Runs the steps in `steps` (a bit per DeepStep) in order, with a grid
// barrier between two steps: more than one step only in a cooperative
// launch. What a step reads from another block it loads through the
// barrier's fence, never through the read-only cache.
__global__ void __launch_bounds__(kThreads) deep_equalize_kernel(DeepFrame f, uint32_t steps) {
  extern __shared__ unsigned int packed[];
  __shared__ DeepShared sh;
  bool first = true;
  for (uint32_t step = 0; step < kSteps; ++step) {
    if (!(steps & (1u << step))) continue;
    if (!first) cooperative_groups::this_grid().sync();
    first = false;
    switch (step) {
      case kCount: count_step(f, packed); break;
      case kSum: sum_step(f, sh, packed); break;
      case kBlend: blend_step(f, sh); break;
      case kLut: lut_step(lut_step_of(f), sh); break;
      case kMap: map_step(f, reinterpret_cast<uint16_t *>(packed)); break;
    }
  }
}

// Planes of up to kMidLevels levels (10 and 12 bits) take the structure of
// the 8-bit kernel instead, with one grid barrier: every block counts into
// 32-bit counters in shared memory and adds them into the frame's histogram
// with global atomics, then, past the barrier, builds the whole LUT from it
// itself and maps. At 4096 levels and fewer the merge is a few atomics per
// level and block, and the LUT a few levels per thread: cheaper than the
// partials, sums and second barrier of deep_equalize_kernel, which exist for
// 2^16 levels.
constexpr uint32_t kMidLevels = 4096;
constexpr uint32_t kMidLevelsPerThread = kMidLevels / kThreads;
static_assert(kMidLevels % kThreads == 0, "a thread's run of levels must be whole");

// Copies of a block's counters: as many as fit in 64 KB, up to one per warp,
// so that warps counting the same levels collide less.
__host__ __device__ inline uint32_t mid_copies(uint32_t levels) {
  const uint32_t fit = 16384 / levels;
  return fit < 1 ? 1 : fit > kThreads / 32 ? kThreads / 32 : fit;
}

struct MidFrame : DeepFrameIo {
  // This frame's histogram, cleared by the frame before; the next frame's,
  // cleared by this one (nobody reads it meanwhile).
  unsigned int *hist;
  unsigned int *next_hist;
};

struct MidShared {
  using Scan = cub::BlockScan<unsigned long long, kThreads>;
  using MinReduce = cub::BlockReduce<uint32_t, kThreads>;
  union {
    typename Scan::TempStorage scan;
    typename MinReduce::TempStorage min;
  } tmp;
  uint32_t first;
  unsigned long long first_count;
};

// Counts this block's share of the plane (a grid-stride, as the mapping's)
// and adds it into the frame's histogram.
__device__ void mid_count(const MidFrame &f, unsigned int *counters) {
  const uint32_t levels = f.l.levels;
  const uint32_t copies = mid_copies(levels);
  for (uint32_t i = threadIdx.x; i < copies * levels; i += blockDim.x) counters[i] = 0;
  __syncthreads();
  unsigned int *mine = counters + (threadIdx.x / 32) % copies * levels;
  const uint32_t max_level = levels - 1;
  const int items = f.count_src.height * f.count_src.groups_per_row;
  visit_groups<kBatch>(f.count_src, blockIdx.x * blockDim.x + threadIdx.x, items,
                       gridDim.x * blockDim.x, f.stash, f.stash_pitch, [&](uint32_t word) {
                         atomicAdd(&mine[sample_level(word, f.l.shift, max_level)], 1u);
                         return word;
                       });
  __syncthreads();
  for (uint32_t level = threadIdx.x; level < levels; level += blockDim.x) {
    unsigned int n = 0;
    for (uint32_t c = 0; c < copies; ++c) n += counters[c * levels + level];
    if (n != 0) atomicAdd(&f.hist[level], n);
  }
}

// The whole LUT, in `lut` (shared memory), from the frame's histogram (and
// with smoothing the past, the blend stored as the next history by block
// 0): each thread a run of up to kMidLevelsPerThread levels, a block scan
// of the runs' sums. Not inlined, for the registers of its 64-bit scan, as
// the deep kernel's tile LUTs.
__device__ __noinline__ void mid_lut(const unsigned int *hist, const DeepHistory history,
                                     DeepLevels l, MidShared &sh, uint16_t *lut) {
  const uint32_t levels = l.levels;
  const uint32_t per = (levels + kThreads - 1) / kThreads;
  const uint32_t first_level = threadIdx.x * per;
  const bool smoothed = history.mode != HistoryMode::kOff;
  unsigned long long v[kMidLevelsPerThread];
  unsigned long long run = 0;
  uint32_t lowest = levels;
#pragma unroll
  for (uint32_t k = 0; k < kMidLevelsPerThread; ++k) {
    const uint32_t level = first_level + k;
    v[k] = 0;
    if (k >= per || level >= levels) continue;
    // Other blocks' atomics landed in L2: read past L1.
    const unsigned int h = __ldcg(hist + level);
    v[k] = h;
    if (smoothed) {
      const unsigned long long past =
          history.mode == HistoryMode::kBlend ? __ldcg(history.past + level) : 0;
      v[k] = next_history_bin(history.mode, past, h, history.weight);
      if (blockIdx.x == 0) history.next[level] = v[k];
    }
    run += v[k];
    if (v[k] != 0 && lowest == levels) lowest = level;
  }
  const uint32_t first = MidShared::MinReduce(sh.tmp.min).Reduce(lowest, cuda::minimum<>{});
  if (threadIdx.x == 0) sh.first = first < levels ? first : levels - 1;
  __syncthreads();
  unsigned long long before = 0, total = 0;
  MidShared::Scan(sh.tmp.scan).ExclusiveSum(run, before, total);
  if (sh.first >= first_level && sh.first < first_level + per) sh.first_count = v[sh.first - first_level];
  __syncthreads();
  const float unit = smoothed ? kHistoryUnit : 1.f;
  unsigned long long cdf = before;
#pragma unroll
  for (uint32_t k = 0; k < kMidLevelsPerThread; ++k) {
    const uint32_t level = first_level + k;
    if (k >= per || level >= levels) continue;
    cdf += v[k];
    lut[level] = static_cast<uint16_t>(
        equalized_level_of(static_cast<int>(level), static_cast<int>(sh.first), sh.first_count,
                           total, cdf, unit, levels - 1)
        << l.shift);
  }
}

__global__ void __launch_bounds__(kThreads) mid_equalize_kernel(MidFrame f) {
  extern __shared__ unsigned int counters[];
  __shared__ MidShared sh;
  if (blockIdx.x == 0)
    for (uint32_t i = threadIdx.x; i < f.l.levels; i += blockDim.x) f.next_hist[i] = 0;
  mid_count(f, counters);
  copy_planes(f.carried);
  // The barrier orders every block's merge before any block's read.
  cooperative_groups::this_grid().sync();
  uint16_t *lut = reinterpret_cast<uint16_t *>(counters);
  mid_lut(f.hist, f.history, f.l, sh, lut);
  __syncthreads();
  map_with_lut(f.map_src, f.stash != nullptr, f.dst, f.dst_pitch, f.l, lut);
}

// Whether the device took the launch (cooperative_launched).
bool launch_mid_kernel(const MidFrame &m, int grid, size_t shared, cudaStream_t stream) {
  cudaLaunchAttribute cooperative{};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  const cudaLaunchConfig_t config = launch_config(grid, kThreads, stream, &cooperative, shared);
  return cooperative_launched(launch_cooperative(config, mid_equalize_kernel, m),
                              "mid_equalize_kernel");
}

}  // namespace

void HistEqGpu::prepare_deep_launch(size_t shared, cudaStream_t stream) {
  raise_dynamic_shared_limit(reinterpret_cast<const void *>(deep_equalize_kernel), shared);
  int resident = 0;
  CUDAFILTERS_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, deep_equalize_kernel, kThreads, shared));
  if (resident < 1)
    throw CudaError("deep histogram: no block fits in shared memory", cudaErrorInvalidConfiguration);
  deep_resident_blocks_ = resident * sm_count_;
  deep_shared_bytes_ = shared;
  deep_cluster_resident_ = {deep_resident_blocks_, 0, 0, 0};
  if (!device_has_dependent_launch()) return;
  for (int i = 1; i < static_cast<int>(deep_cluster_resident_.size()); ++i) {
    const int blocks = 1 << i;
    cudaLaunchAttribute attrs[2] = {cluster_attribute(blocks), {}};
    attrs[1].id = cudaLaunchAttributeCooperative;
    attrs[1].val.cooperative = 1;
    cudaLaunchConfig_t config = launch_config(blocks, kThreads, stream, attrs, shared, 1);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, deep_equalize_kernel, &config) != cudaSuccess) {
      (void)cudaGetLastError();
      clusters = 0;
    }
    if (clusters < 1) continue;
    if (single_pass_ && !deep_refused_) {
      // A cooperative launch in clusters, of no steps: where the two do not
      // combine, counting keeps to single blocks.
      config = launch_config(clusters * blocks, kThreads, stream, attrs, shared, 2);
      if (launch_cooperative(config, deep_equalize_kernel, DeepFrame{}, 0u) != cudaSuccess) {
        (void)cudaGetLastError();
        continue;
      }
    }
    deep_cluster_resident_[i] = clusters * blocks;
  }
}

int HistEqGpu::deep_cluster_blocks(int items) const {
  // The largest cluster that keeps nearly every resident block counting
  // and still has a partial per cluster, never one that counts more
  // samples than its packed counters hold.
  const int needed = (items + kMaxGroupsPerBlock - 1) / kMaxGroupsPerBlock;
  int best = 1;
  for (int i = 1; i < static_cast<int>(deep_cluster_resident_.size()); ++i) {
    const int resident = deep_cluster_resident_[i];
    if (resident >= deep_resident_blocks_ - deep_resident_blocks_ / 16 && resident >> i >= needed)
      best = 1 << i;
  }
  return best;
}

int HistEqGpu::deep_partial_count(int items, int cluster) const {
  // Enough partials that none counts more samples than its packed counters
  // hold, and at least one per resident cluster, so that every SM counts.
  // The sums then read them all (17 MB for 132 partials of 2^16 levels);
  // clusters divide that by their size.
  const int needed = (items + kMaxGroupsPerBlock - 1) / kMaxGroupsPerBlock;
  int log2 = 0;
  while ((1 << log2) < cluster) ++log2;
  const int clusters = std::max(deep_cluster_resident_[log2] / cluster, 1);
  return std::max({1, needed, std::min(clusters, items)});
}

std::pair<uint32_t *, uint32_t *> HistEqGpu::next_mid_histograms(cudaStream_t stream) {
  if (mid_hist_.size() == 0) mid_hist_ = DeviceArray<uint32_t>(2 * kMidLevels);
  if (!mid_hist_cleared_) {
    CUDAFILTERS_CHECK(
        cudaMemsetAsync(mid_hist_.get(), 0, mid_hist_.size() * sizeof(uint32_t), stream));
    mid_hist_cleared_ = true;
    mid_parity_ = 0;
  }
  uint32_t *now = mid_hist_.get() + mid_parity_ * kMidLevels;
  mid_parity_ ^= 1;
  return {now, mid_hist_.get() + mid_parity_ * kMidLevels};
}

int HistEqGpu::mid_grid(size_t shared, int items) {
  if (shared != mid_shared_bytes_) {
    raise_dynamic_shared_limit(reinterpret_cast<const void *>(mid_equalize_kernel), shared);
    int resident = 0;
    CUDAFILTERS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, mid_equalize_kernel,
                                                                    kThreads, shared));
    if (resident < 1)
      throw CudaError("mid-depth histogram: no block fits", cudaErrorInvalidConfiguration);
    mid_resident_blocks_ = resident * sm_count_;
    mid_shared_bytes_ = shared;
  }
  // Every resident block: at 1080p 10-bit on the H100, 132 blocks took 11.8
  // us a frame, 99 blocks 12.7 us and 66 blocks 13.1 us.
  return std::min(mid_resident_blocks_, std::max(1, (items + kThreads - 1) / kThreads));
}

void HistEqGpu::reserve_deep(uint32_t levels, bool with_history) {
  if (deep_levels_ < levels) {
    deep_hist_ = DeviceArray<uint32_t>(levels);
    deep_lut_ = DeviceArray<uint16_t>(levels);
    const size_t tiles = (levels + kTileLevels - 1) / kTileLevels;
    deep_tile_sum_ = DeviceArray<unsigned long long>(tiles);
    deep_tile_first_ = DeviceArray<uint32_t>(tiles);
    deep_tile_flag_ = DeviceArray<uint32_t>(tiles);
    deep_flags_cleared_ = false;
    deep_levels_ = levels;
    deep_history_levels_ = 0;
    deep_state_dirty_ = true;
  }
  if (with_history && deep_history_levels_ < levels) {
    deep_history_ = DeviceArray<unsigned long long>(2 * static_cast<size_t>(levels));
    deep_history_levels_ = levels;
  }
}

void HistEqGpu::enqueue_deep(ConstPlane src, const Plane *stash, Plane dst,
                             const CarriedPlanes &carried, cudaStream_t stream) {
  const SampleLayout layout = with_significant_bits(src.samples, significant_bits_);
  if (!layout.valid())
    throw std::invalid_argument("significant bits do not fit the plane's samples");
  const DeepLevels l{layout.shift, layout.levels()};

  reserve_deep(l.levels, temporal_.weight() != 0);
  // The history is laid out by level count: a frame of another count
  // starts a new one.
  if (l.levels != deep_frame_levels_) deep_state_dirty_ = true;
  deep_frame_levels_ = l.levels;
  if (deep_state_dirty_) {
    deep_history_parity_ = 0;
    temporal_.restart();
    mid_hist_cleared_ = false;
  }
  HistoryShape shape;
  shape.width = src.width;
  shape.height = src.height;
  shape.levels = l.levels;
  DeepHistory history{temporal_.next_frame(shape), temporal_.weight(), nullptr, nullptr};
  if (history.mode != HistoryMode::kOff) {
    history.past = deep_history_.get() + deep_history_parity_ * static_cast<size_t>(l.levels);
    history.next = deep_history_.get() + (deep_history_parity_ ^ 1) * static_cast<size_t>(l.levels);
    deep_history_parity_ ^= 1;
  }
  // Until every launch is queued the history may be left half-advanced.
  deep_state_dirty_ = true;

  const bool src_vec = aligned16(src.data, src.stride) &&
                       (!stash || aligned16(stash->data, stash->stride));
  const DeepPlane count_src = deep_plane(src, src_vec);
  const ConstPlane map_from =
      stash ? ConstPlane(stash->data, stash->stride, src.width, src.height, src.samples) : src;
  const DeepPlane map_src =
      deep_plane(map_from, aligned16(map_from.data, map_from.stride) &&
                               aligned16(dst.data, dst.stride));

  DeepFrameIo io{};
  io.count_src = count_src;
  io.stash = stash ? stash->data : nullptr;
  io.stash_pitch = stash ? stash->stride : 0;
  io.map_src = map_src;
  io.dst = dst.data;
  io.dst_pitch = dst.stride;
  io.l = l;
  io.history = history;
  int64_t map_items = static_cast<int64_t>(map_src.height) * map_src.groups_per_row;
  io.carried = carried_jobs(carried, map_items);
  const int items = count_src.height * count_src.groups_per_row;

  if (single_pass_ && !mid_refused_ && l.levels <= kMidLevels) {
    MidFrame m{};
    static_cast<DeepFrameIo &>(m) = io;
    const std::pair<uint32_t *, uint32_t *> hists = next_mid_histograms(stream);
    m.hist = hists.first;
    m.next_hist = hists.second;
    const size_t shared = mid_copies(l.levels) * l.levels * sizeof(unsigned int);
    if (launch_mid_kernel(m, mid_grid(shared, items), shared, stream)) {
      deep_state_dirty_ = false;
      copy_planes(carried, kMaxCarried, stream);
      return;
    }
    // Refused (more blocks than the device holds at once: MPS, a green
    // context): this frame and every later one go by the deep kernel below,
    // which meets the same history. The histogram this launch would have
    // cleared is left as it was: cleared again before any further use.
    mid_refused_ = true;
    mid_hist_cleared_ = false;
  }

  const size_t words = deep_words(l.levels);
  // The counters, and no less than the sums' scratch (a few significant
  // bits have small counters).
  const size_t shared = std::max(words * deep_copies(l.levels) * sizeof(unsigned int),
                                 kSumSlices * kTileLevels * sizeof(unsigned int));
  if (shared != deep_shared_bytes_) prepare_deep_launch(shared, stream);
  if (!deep_flags_cleared_) {
    CUDAFILTERS_CHECK(cudaMemsetAsync(deep_tile_flag_.get(), 0,
                                      deep_tile_flag_.size() * sizeof(uint32_t), stream));
    deep_flags_cleared_ = true;
  }
  if (++deep_epoch_ == 0) deep_epoch_ = 1;

  DeepFrame f{};
  static_cast<DeepFrameIo &>(f) = io;
  f.tile_flag = deep_tile_flag_.get();
  f.epoch = deep_epoch_;
  // Clusters only where a partial is large (one copy of the counters, 2^15
  // levels and more): merging many copies through distributed shared memory
  // cost more than it saved (10-bit 1080p, 23.8 to 27.1 us).
  const int cluster = deep_copies(l.levels) == 1 ? deep_cluster_blocks(items) : 1;
  f.partial_count = deep_partial_count(items, cluster);
  f.groups_per_partial = (items + f.partial_count - 1) / f.partial_count;
  const size_t partial_words = static_cast<size_t>(f.partial_count) * words;
  if (deep_partials_.size() < partial_words) deep_partials_ = DeviceArray<uint32_t>(partial_words);
  f.partials = deep_partials_.get();
  f.hist = deep_hist_.get();
  f.tile_sum = deep_tile_sum_.get();
  f.tile_first = deep_tile_first_.get();
  f.lut = deep_lut_.get();

  const int tiles = static_cast<int>((l.levels + kTileLevels - 1) / kTileLevels);
  uint32_t steps = 1u << kCount | 1u << kSum | 1u << kLut | 1u << kMap;
  if (history.mode != HistoryMode::kOff) steps |= 1u << kBlend;
  // Counting runs in clusters where they pay; the attributes name them only
  // then, as devices before compute capability 9.0 have none.
  const cudaLaunchAttribute cluster_attr = cluster_attribute(cluster);
  const unsigned cluster_attrs = cluster > 1 ? 1 : 0;
  bool cooperative = false;
  if (single_pass_ && !deep_refused_) {
    cudaLaunchAttribute attrs[2] = {cluster_attr, {}};
    attrs[cluster_attrs].id = cudaLaunchAttributeCooperative;
    attrs[cluster_attrs].val.cooperative = 1;
    const int log2 = __builtin_ctz(static_cast<unsigned>(cluster));
    const int grid = cluster > 1 ? deep_cluster_resident_[log2] : deep_resident_blocks_;
    // Every tile has a resident block of its own: the LUT follows the sums
    // in the same step. Its blocks wait for each other's tile sums, which
    // only a cooperative launch guarantees to end.
    f.fuse_lut = history.mode == HistoryMode::kOff && tiles <= grid;
    const cudaLaunchConfig_t config =
        launch_config(grid, kThreads, stream, attrs, shared, cluster_attrs + 1);
    cooperative = cooperative_launched(
        launch_cooperative(config, deep_equalize_kernel, f,
                           f.fuse_lut ? steps & ~(1u << kLut) : steps),
        "deep_equalize_kernel");
    // Refused (more blocks than the device holds at once: MPS, a green
    // context): this frame and every later one take a launch per step, the
    // LUT a step of its own. The steps keep the same state between frames.
    if (!cooperative) {
      deep_refused_ = true;
      f.fuse_lut = false;
    }
  }
  if (!cooperative) {
    cudaLaunchAttribute attrs[1] = {cluster_attr};
    for (uint32_t step = 0; step < kSteps; ++step) {
      if (!(steps & (1u << step))) continue;
      int blocks = tiles;
      if (step == kCount) blocks = f.partial_count * cluster;
      // Every block of the mapping loads the LUT: no more than fit at once.
      if (step == kMap)
        blocks = static_cast<int>(std::min<int64_t>((map_items + kThreads - 1) / kThreads,
                                                    deep_resident_blocks_));
      // Counting, the sums and the mapping use the shared memory.
      const bool uses_shared = step == kCount || step == kSum || step == kMap;
      const cudaLaunchConfig_t config =
          launch_config(std::max(blocks, 1), kThreads, stream, attrs, uses_shared ? shared : 0,
                        step == kCount ? cluster_attrs : 0);
      CUDAFILTERS_CHECK(cudaLaunchKernelEx(&config, deep_equalize_kernel, f, 1u << step));
    }
  }
  deep_state_dirty_ = false;
  copy_planes(carried, kMaxCarried, stream);
}

}  // namespace cudafilters

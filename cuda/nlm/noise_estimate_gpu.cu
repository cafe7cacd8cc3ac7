#include "noise_estimate.h"
#include "noise_table.cuh"

#include <cudafilters/cuda_check.h>
#include <cudafilters/cuda_memory.h>

#include <stdexcept>

namespace cudafilters {

namespace {

// A block covers kTableColumns columns and kGroupRows x kRowGroups sampled
// rows: each group of threads walks its rows down the columns. The table
// pass is bound by the shared atomics (two per pixel at 8 bits): the shape
// matters little (on the H100, 1080p I420: 25.6 to 30 us over seven shapes
// from 256 to 1024 threads and 8 to 32 rows per thread; docs/cudanlm.md).
constexpr int kTableColumns = 256;
constexpr int kGroupRows = 16;
constexpr int kRowGroups = 2;
constexpr int kTableThreads = kTableColumns * kRowGroups;
constexpr int kTableRows = kGroupRows * kRowGroups;
using Table = NoiseTableGpu;

struct PlaneArgs {
  const uint8_t *data;
  size_t stride;
  int width;
  int height;
  int step;
  int row_step;  // the rows sampled: 1, 1 + row_step, ...
  int rows;      // how many
  SampleLevels levels;
  int down;  // a gradient's bin: (G >> down) << up
  int up;
  int table;
  int deep;
  int blocks_x;
  int first_block;  // of the launch's blocks, the first that reads this plane
};

constexpr int kMaxPlanes = 4;

// The arguments that read `plane` into `table`, with the launch's blocks
// from `first_block` on; *blocks is set to how many it takes.
PlaneArgs plane_args(ConstPlane plane, int step, int table, int first_block, int *blocks) {
  const int bits = plane.samples.bits;
  const int blocks_x = (plane.width - 2 + kTableColumns - 1) / kTableColumns;
  const int row_step = noise_row_step(plane.width, plane.height);
  const int rows = noise_rows_sampled(plane.height, row_step);
  *blocks = blocks_x * ((rows + kTableRows - 1) / kTableRows);
  return PlaneArgs{plane.data, plane.stride, plane.width, plane.height, step, row_step, rows,
                   sample_levels(plane.samples), bits > 8 ? bits - 8 : 0, bits < 8 ? 8 - bits : 0,
                   table, plane.samples.deep() ? 1 : 0, blocks_x, first_block};
}

// Clears device arrays once, on the stream of their first use: a cudaMemset
// on the legacy default stream, which the callers' non-blocking streams do
// not wait for, could come after that use.
class ClearOnFirstUse {
 public:
  template <typename... T>
  void on(cudaStream_t stream, const DeviceArray<T> &...arrays) {
    if (done_) return;
    (CUDAFILTERS_CHECK(cudaMemsetAsync(arrays.get(), 0, arrays.size() * sizeof(T), stream)), ...);
    done_ = true;
  }

 private:
  bool done_ = false;
};

// The planes of one launch: every plane of a frame in one pass.
struct PassArgs {
  PlaneArgs planes[kMaxPlanes];
  int count;
  Table *tables;
};

template <typename Word>
__device__ __forceinline__ int level_at(const uint8_t *row, const PlaneArgs &p, int x) {
  return int(p.levels.of(__ldg(reinterpret_cast<const Word *>(row) + x * p.step)));
}

__device__ __forceinline__ uint32_t warp_sum(uint32_t v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xFFFFFFFFu, v);
#else
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
#endif
}

// The block's table in shared memory: 32-bit counts and sums of |L|. An
// 8-bit plane's |L| (at most 4080) sums in one word over the block's
// pixels; deeper planes' in two, its low 8 bits and the rest. 64-bit
// atomics on shared memory are loops of compare-and-swap, two to three times
// slower here.
template <int BINS>
struct BlockTableOf {
  uint32_t count[BINS];
  uint32_t sum_lo[BINS];
  uint32_t sum_hi[BINS];

  template <bool DEEP>
  __device__ void add(uint32_t bin, uint32_t n, uint32_t abs_lap) {
    atomicAdd(&count[bin], n);
    if (!DEEP) {
      atomicAdd(&sum_lo[bin], abs_lap);
      return;
    }
    atomicAdd(&sum_lo[bin], abs_lap & 0xFFu);
    if (abs_lap >> 8) atomicAdd(&sum_hi[bin], abs_lap >> 8);
  }
  __device__ unsigned long long sum(int bin) const {
    return ((unsigned long long)sum_hi[bin] << 8) + sum_lo[bin];
  }
};
using BlockTable = BlockTableOf<kNoiseBins>;
// The noise level function's: a table per band of brightness for BANDS
// bands, band first + b's bins at b * kNoiseBins (12 KB a band, in dynamic
// shared memory): all eight bands in one pass where a block may have 96 KB,
// else four in each of two passes (48 KB, which every GPU gives a block).
template <int BANDS>
using BlockCurve = BlockTableOf<kNoiseBins * BANDS>;

// Adds one pixel to the block's table. A warp whose pixels all fall in one
// bin (flat areas: a black border, a clear sky) adds once; otherwise each
// lane adds its own (grouping equal bins with __match_any_sync made the pass
// three times slower). bin ~0u: no pixel (past the plane's right edge).
template <bool DEEP, typename BlockTableT>
__device__ __forceinline__ void add_pixel(BlockTableT &t, uint32_t bin, uint32_t abs_lap) {
  const uint32_t first = __shfl_sync(0xFFFFFFFFu, bin, 0);
  if (__all_sync(0xFFFFFFFFu, bin == first)) {
    // |L| <= 16 (2^16 - 1) at 16 bits: 32 lanes sum below 2^26.
    const uint32_t lanes_sum = warp_sum(abs_lap);
    if (first != 0xFFFFFFFFu && (threadIdx.x & 31) == 0) t.template add<DEEP>(first, 32u, lanes_sum);
  } else if (bin != 0xFFFFFFFFu) {
    t.template add<DEEP>(bin, 1u, abs_lap);
  }
}

// One pass over the sampled rows: each thread takes one column of its
// group's rows and adds each pixel to its gradient bin in the block's
// table. The rows of several pixels are loaded together (coalesced across
// the warp), so that a thread waits for memory once per chunk of rows, not
// once per row. Exact: integers throughout, so the table is the CPU's.
constexpr int kChunk = 8;

// L, the gradient bin and the sum of the 3x3 neighbourhood of the pixel
// whose rows are a, b, c.
__device__ __forceinline__ void laplacian_and_bin(const PlaneArgs &p, const int (&a)[3],
                                                  const int (&b)[3], const int (&c)[3],
                                                  uint32_t &bin, uint32_t &abs_lap,
                                                  uint32_t &sum9) {
  const int lap = (a[0] - 2 * a[1] + a[2]) - 2 * (b[0] - 2 * b[1] + b[2]) + (c[0] - 2 * c[1] + c[2]);
  const int gx = (a[2] - a[0]) + 2 * (b[2] - b[0]) + (c[2] - c[0]);
  const int gy = (c[0] - a[0]) + 2 * (c[1] - a[1]) + (c[2] - a[2]);
  const uint32_t g = uint32_t(abs(gx) + abs(gy));
  bin = min((g >> p.down) << p.up, uint32_t(kNoiseBins - 1));
  abs_lap = uint32_t(abs(lap));
  sum9 = uint32_t(a[0] + a[1] + a[2] + b[0] + b[1] + b[2] + c[0] + c[1] + c[2]);
}

// Where a pixel of gradient bin `bin` and 3x3 sum `sum9` is counted: the
// plane's estimate counts it by its bin alone.
struct ByGradient {
  __device__ uint32_t operator()(uint32_t bin, uint32_t) const { return bin; }
};

// Rows read one after the other (planes of at most kNoiseSamplePixels): the
// 3x3 neighbourhood slides down the column, three new samples a pixel.
template <typename Word, typename BlockTableT, typename Slot>
__device__ void add_rows(const PlaneArgs &p, int x, bool column, int i0, int i1, BlockTableT &t,
                         Slot slot) {
  auto load = [&](int y, int(&v)[3]) {
    const uint8_t *row = p.data + size_t(y) * p.stride;
    v[0] = level_at<Word>(row, p, x - 1);
    v[1] = level_at<Word>(row, p, x);
    v[2] = level_at<Word>(row, p, x + 1);
  };
  int a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
  if (column && i0 < i1) {
    load(i0, a);
    load(i0 + 1, b);
  }
  for (int i = i0; i < i1; i += kChunk) {
    int c[kChunk][3];
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      c[k][0] = c[k][1] = c[k][2] = 0;
      if (column && i + k < i1) load(i + k + 2, c[k]);
    }
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      if (i + k >= i1) break;
      uint32_t bin = 0xFFFFFFFFu, abs_lap = 0, sum9 = 0;
      if (column) {
        laplacian_and_bin(p, a, b, c[k], bin, abs_lap, sum9);
        bin = slot(bin, sum9);
      }
      add_pixel<sizeof(Word) == 2>(t, bin, abs_lap);
#pragma unroll
      for (int r = 0; r < 3; ++r) {
        a[r] = b[r];
        b[r] = c[k][r];
      }
    }
  }
}

// Rows read every row_step (larger planes): each with its two neighbours.
template <typename Word, typename BlockTableT, typename Slot>
__device__ void add_sampled_rows(const PlaneArgs &p, int x, bool column, int i0, int i1,
                                 BlockTableT &t, Slot slot) {
  constexpr int kSampleChunk = kChunk / 2;
  for (int i = i0; i < i1; i += kSampleChunk) {
    int v[kSampleChunk][3][3];
#pragma unroll
    for (int k = 0; k < kSampleChunk; ++k)
#pragma unroll
      for (int r = 0; r < 3; ++r) {
        v[k][r][0] = v[k][r][1] = v[k][r][2] = 0;
        if (column && i + k < i1) {
          const uint8_t *row = p.data + size_t((i + k) * p.row_step + r) * p.stride;
          v[k][r][0] = level_at<Word>(row, p, x - 1);
          v[k][r][1] = level_at<Word>(row, p, x);
          v[k][r][2] = level_at<Word>(row, p, x + 1);
        }
      }
#pragma unroll
    for (int k = 0; k < kSampleChunk; ++k) {
      if (i + k >= i1) break;
      uint32_t bin = 0xFFFFFFFFu, abs_lap = 0, sum9 = 0;
      if (column) {
        laplacian_and_bin(p, v[k][0], v[k][1], v[k][2], bin, abs_lap, sum9);
        bin = slot(bin, sum9);
      }
      add_pixel<sizeof(Word) == 2>(t, bin, abs_lap);
    }
  }
}

template <typename Word, typename BlockTableT, typename Slot = ByGradient>
__device__ void add_band(const PlaneArgs &p, int block, BlockTableT &t, Slot slot = {}) {
  const int x = 1 + (block % p.blocks_x) * kTableColumns + int(threadIdx.x) % kTableColumns;
  const bool column = x + 1 < p.width;
  // Sampled rows [i0, i1) of this thread's group; the same for the warp.
  const int i0 = (block / p.blocks_x) * kTableRows + int(threadIdx.x) / kTableColumns * kGroupRows;
  const int i1 = min(i0 + kGroupRows, p.rows);
  if (p.row_step == 1)
    add_rows<Word>(p, x, column, i0, i1, t, slot);
  else
    add_sampled_rows<Word>(p, x, column, i0, i1, t, slot);
}

__global__ void __launch_bounds__(kTableThreads) noise_table_kernel(PassArgs a) {
  __shared__ BlockTable t;
  for (int b = threadIdx.x; b < kNoiseBins; b += blockDim.x) {
    t.count[b] = 0;
    t.sum_lo[b] = 0;
    t.sum_hi[b] = 0;
  }
  __syncthreads();
  int i = 0;
  while (i + 1 < a.count && int(blockIdx.x) >= a.planes[i + 1].first_block) ++i;
  const PlaneArgs &p = a.planes[i];
  const int block = int(blockIdx.x) - p.first_block;
  if (p.deep)
    add_band<uint16_t>(p, block, t);
  else
    add_band<uint8_t>(p, block, t);
  __syncthreads();
  Table &out = a.tables[p.table];
  for (int b = threadIdx.x; b < kNoiseBins; b += blockDim.x)
    if (t.count[b]) {
      atomicAdd(&out.count[b], (unsigned long long)t.count[b]);
      atomicAdd(&out.abs_laplacian[b], t.sum(b));
    }
}

// The noise level function of one plane: its pixels counted in the table
// of their band (noise_band), the bands first .. first + BANDS - 1 in one
// pass.
struct CurveArgs {
  PlaneArgs plane;
  int bits;
  int first;
  Table *tables;  // kNoiseBands
};

// A pixel's slot in a pass's tables, or "no pixel" for a band of another
// pass.
template <int BANDS>
struct ByBand {
  int bits;
  int first;
  __device__ uint32_t operator()(uint32_t bin, uint32_t sum9) const {
    const int band = noise_band(sum9, bits) - first;
    return band >= 0 && band < BANDS ? uint32_t(band) * kNoiseBins + bin : 0xFFFFFFFFu;
  }
};

template <int BANDS>
__global__ void __launch_bounds__(kTableThreads) noise_curve_kernel(CurveArgs a) {
  extern __shared__ uint32_t curve_words[];
  BlockCurve<BANDS> &t = *reinterpret_cast<BlockCurve<BANDS> *>(curve_words);
  constexpr int kSlots = kNoiseBins * BANDS;
  for (int b = threadIdx.x; b < kSlots; b += blockDim.x) {
    t.count[b] = 0;
    t.sum_lo[b] = 0;
    t.sum_hi[b] = 0;
  }
  __syncthreads();
  const ByBand<BANDS> slot{a.bits, a.first};
  if (a.plane.deep)
    add_band<uint16_t>(a.plane, int(blockIdx.x), t, slot);
  else
    add_band<uint8_t>(a.plane, int(blockIdx.x), t, slot);
  __syncthreads();
  for (int b = threadIdx.x; b < kSlots; b += blockDim.x)
    if (t.count[b]) {
      Table &out = a.tables[a.first + b / kNoiseBins];
      atomicAdd(&out.count[b % kNoiseBins], (unsigned long long)t.count[b]);
      atomicAdd(&out.abs_laplacian[b % kNoiseBins], t.sum(b));
    }
}

// One block per band.
__global__ void __launch_bounds__(kNoiseReadThreads)
    noise_curve_tail_kernel(Table *tables, int bits, double *sigmas) {
  const double sigma = read_noise_table(tables[blockIdx.x], bits, kNoiseBandMinPixels);
  if (threadIdx.x == 0) sigmas[blockIdx.x] = sigma;
}

struct TailArgs {
  Table *tables;
  int bits[NoiseEstimatorGpu::kMaxTables];
  double *sigmas;
};

// One block per table.
__global__ void __launch_bounds__(kNoiseReadThreads) noise_tail_kernel(TailArgs a) {
  const double sigma = read_noise_table(a.tables[blockIdx.x], a.bits[blockIdx.x]);
  if (threadIdx.x == 0) a.sigmas[blockIdx.x] = sigma;
}

}  // namespace

struct NoiseEstimatorGpu::Impl {
  DeviceArray<Table> tables{kMaxTables};
  DeviceArray<double> sigmas{kMaxTables};
  int bits[kMaxTables] = {};
  // The planes added since the last estimate, read in one launch.
  PassArgs pass{};
  int blocks = 0;
  // The tables and sigmas start cleared, on the stream of the first pass.
  ClearOnFirstUse clear;
};

NoiseEstimatorGpu::NoiseEstimatorGpu() : impl_(std::make_unique<Impl>()) {}

NoiseEstimatorGpu::~NoiseEstimatorGpu() = default;
NoiseEstimatorGpu::NoiseEstimatorGpu(NoiseEstimatorGpu &&) noexcept = default;
NoiseEstimatorGpu &NoiseEstimatorGpu::operator=(NoiseEstimatorGpu &&) noexcept = default;

void NoiseEstimatorGpu::add(int table, ConstPlane plane, int step, cudaStream_t stream) {
  if (table < 0 || table >= kMaxTables) throw std::invalid_argument("noise estimate: no such table");
  if (!plane.samples.valid() || step < 1)
    throw std::invalid_argument("noise estimate: invalid sample layout or step");
  Impl &m = *impl_;
  int &bits = m.bits[table];
  if (bits != 0 && bits != plane.samples.bits)
    throw std::invalid_argument("noise estimate: planes of different depths in one table");
  bits = plane.samples.bits;
  if (plane.width < 3 || plane.height < 3) return;
  if (m.pass.count == kMaxPlanes) launch_pass(stream);
  int blocks = 0;
  m.pass.planes[m.pass.count++] = plane_args(plane, step, table, m.blocks, &blocks);
  m.blocks += blocks;
}

void NoiseEstimatorGpu::launch_pass(cudaStream_t stream) {
  Impl &m = *impl_;
  m.clear.on(stream, m.tables, m.sigmas);
  if (m.pass.count == 0) return;
  m.pass.tables = m.tables.get();
  noise_table_kernel<<<m.blocks, kTableThreads, 0, stream>>>(m.pass);
  check_launch("noise_table_kernel");
  m.pass.count = 0;
  m.blocks = 0;
}

NoiseEstimatorGpu::Tables NoiseEstimatorGpu::fill(cudaStream_t stream) {
  launch_pass(stream);
  Tables t{impl_->tables.get(), {}};
  for (int i = 0; i < kMaxTables; ++i) t.bits[i] = impl_->bits[i] ? impl_->bits[i] : 8;
  for (int &b : impl_->bits) b = 0;
  return t;
}

void NoiseEstimatorGpu::estimate(int tables, cudaStream_t stream) {
  if (tables < 1 || tables > kMaxTables) throw std::invalid_argument("noise estimate: no such table");
  const Tables t = fill(stream);
  TailArgs a{t.tables, {}, impl_->sigmas.get()};
  for (int i = 0; i < kMaxTables; ++i) a.bits[i] = t.bits[i];
  noise_tail_kernel<<<tables, kNoiseReadThreads, 0, stream>>>(a);
  check_launch("noise_tail_kernel");
}

const double *NoiseEstimatorGpu::sigmas() const { return impl_->sigmas.get(); }

struct NoiseCurveGpu::Impl {
  DeviceArray<Table> tables{kNoiseBands};
  DeviceArray<double> sigmas{kNoiseBands};
  int bands_per_pass = kNoiseBands;
  // The tables start cleared, on the first frame's stream.
  ClearOnFirstUse clear;
};

NoiseCurveGpu::NoiseCurveGpu(int bands_per_pass) : impl_(std::make_unique<Impl>()) {
  if (bands_per_pass != 0 && bands_per_pass != kNoiseBands && bands_per_pass != kNoiseBands / 2)
    throw std::invalid_argument("noise curve: 8 or 4 bands a pass");
  int device = 0, optin = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  Impl &m = *impl_;
  m.bands_per_pass = bands_per_pass != 0 ? bands_per_pass
                     : size_t(optin) >= sizeof(BlockCurve<kNoiseBands>) ? kNoiseBands
                                                                        : kNoiseBands / 2;
  if (m.bands_per_pass == kNoiseBands)
    CUDAFILTERS_CHECK(cudaFuncSetAttribute(noise_curve_kernel<kNoiseBands>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(sizeof(BlockCurve<kNoiseBands>))));
}

NoiseCurveGpu::~NoiseCurveGpu() = default;
NoiseCurveGpu::NoiseCurveGpu(NoiseCurveGpu &&) noexcept = default;
NoiseCurveGpu &NoiseCurveGpu::operator=(NoiseCurveGpu &&) noexcept = default;

void NoiseCurveGpu::estimate(ConstPlane plane, int step, cudaStream_t stream) {
  if (!plane.samples.valid() || step < 1)
    throw std::invalid_argument("noise estimate: invalid sample layout or step");
  Impl &m = *impl_;
  m.clear.on(stream, m.tables);
  const int bits = plane.samples.bits;
  if (plane.width >= 3 && plane.height >= 3) {
    int blocks = 0;
    CurveArgs a{plane_args(plane, step, 0, 0, &blocks), bits, 0, m.tables.get()};
    for (a.first = 0; a.first < kNoiseBands; a.first += m.bands_per_pass) {
      if (m.bands_per_pass == kNoiseBands)
        noise_curve_kernel<kNoiseBands>
            <<<blocks, kTableThreads, sizeof(BlockCurve<kNoiseBands>), stream>>>(a);
      else
        noise_curve_kernel<kNoiseBands / 2>
            <<<blocks, kTableThreads, sizeof(BlockCurve<kNoiseBands / 2>), stream>>>(a);
      check_launch("noise_curve_kernel");
    }
  }
  noise_curve_tail_kernel<<<kNoiseBands, kNoiseReadThreads, 0, stream>>>(m.tables.get(), bits,
                                                                          m.sigmas.get());
  check_launch("noise_curve_tail_kernel");
}

const double *NoiseCurveGpu::sigmas() const { return impl_->sigmas.get(); }

}  // namespace cudafilters

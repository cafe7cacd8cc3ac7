#include "noise_estimate.h"
#include "clear_on_first_use.h"
#include "noise_table.cuh"
#include "plane_kernels.cuh"

#include <cudafilters/cuda_check.h>
#include <cudafilters/cuda_memory.h>

#include <stdexcept>

namespace cudafilters {

namespace {

// A block covers kTableColumns columns and kGroupRows x kRowGroups sampled
// rows: each group of threads walks its rows down the columns. At the
// sampling budget (kNoiseSamplePixels a plane) a 1080p I420 frame has few
// sampled rows, and 16 rows a thread made 64 blocks, half a wave on an H200
// (132 SMs): 8 rows a thread take the pass from 14 to 16 us down to 9 us,
// the same as 4 rows or other block widths (studies/noise-table-shapes).
constexpr int kTableColumns = 256;
constexpr int kGroupRows = 8;
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


// A block's tables in shared memory: 32-bit counts and sums of |L| per slot
// (a slot: a band's scale's bin). An 8-bit plane's |L| (at most 4080) sums
// in one word over the block's pixels; deeper planes' in two, its low 8
// bits and the rest. 64-bit atomics on shared memory are loops of
// compare-and-swap, two to three times slower here.
template <int SLOTS>
struct BlockTableOf {
  uint32_t count[SLOTS];
  uint32_t sum_lo[SLOTS];
  uint32_t sum_hi[SLOTS];

  template <bool DEEP>
  __device__ void add(uint32_t slot, uint32_t n, uint32_t abs_lap) {
    atomicAdd(&count[slot], n);
    if (!DEEP) {
      atomicAdd(&sum_lo[slot], abs_lap);
      return;
    }
    atomicAdd(&sum_lo[slot], abs_lap & 0xFFu);
    if (abs_lap >> 8) atomicAdd(&sum_hi[slot], abs_lap >> 8);
  }
  __device__ unsigned long long sum(int slot) const {
    return ((unsigned long long)sum_hi[slot] << 8) + sum_lo[slot];
  }
  __device__ void clear() {
    for (int b = threadIdx.x; b < SLOTS; b += blockDim.x) count[b] = sum_lo[b] = sum_hi[b] = 0;
  }
};
constexpr int kScaleSlots = kNoiseScales * kNoiseBins;
using BlockTable = BlockTableOf<kScaleSlots>;
// The noise level function's: both scales' bins per band of brightness for
// BANDS bands, band first + b's scale s at (b * kNoiseScales + s) *
// kNoiseBins (24 KB a band, in dynamic shared memory): eight bands a pass
// where a block may have 192 KB, else four or two.
template <int BANDS>
using BlockCurve = BlockTableOf<kScaleSlots * BANDS>;

// Adds one pixel to a slot of the block's tables. A warp whose pixels all
// fall in one slot (flat areas: a black border, a clear sky) adds once;
// otherwise each lane adds its own (grouping equal slots with
// __match_any_sync made the pass three times slower). ~0u: no pixel.
template <bool DEEP, typename BlockTableT>
__device__ __forceinline__ void add_pixel(BlockTableT &t, uint32_t slot, uint32_t abs_lap) {
  const uint32_t first = __shfl_sync(0xFFFFFFFFu, slot, 0);
  if (__all_sync(0xFFFFFFFFu, slot == first)) {
    // |L| <= 16 (2^16 - 1) at 16 bits: 32 lanes sum below 2^26.
    const uint32_t lanes_sum = kernels::warp_sum(abs_lap);
    if (first != 0xFFFFFFFFu && (threadIdx.x & 31) == 0) t.template add<DEEP>(first, 32u, lanes_sum);
  } else if (slot != 0xFFFFFFFFu) {
    t.template add<DEEP>(slot, 1u, abs_lap);
  }
}

// The samples one pixel reads: its 3x3 neighbourhood, and the coarse
// scale's eight more (kNoiseCoarseSpacing away; the centre is shared).
struct PixelSamples {
  int32_t fine[3][3];
  int32_t coarse[3][3];
  bool has_coarse;
};

template <typename Word>
__device__ __forceinline__ void load_pixel(const PlaneArgs &p, int x, int y, PixelSamples &v) {
  constexpr int s = kNoiseCoarseSpacing;
#pragma unroll
  for (int r = 0; r < 3; ++r) {
    const uint8_t *row = p.data + size_t(y - 1 + r) * p.stride;
#pragma unroll
    for (int c = 0; c < 3; ++c) v.fine[r][c] = level_at<Word>(row, p, x - 1 + c);
  }
  v.has_coarse = noise_coarse_inside(x, y, p.width, p.height);
  if (!v.has_coarse) return;
#pragma unroll
  for (int r = 0; r < 3; ++r) {
    const uint8_t *row = p.data + size_t(y + (r - 1) * s) * p.stride;
#pragma unroll
    for (int c = 0; c < 3; ++c)
      v.coarse[r][c] = r == 1 && c == 1 ? v.fine[1][1] : level_at<Word>(row, p, x + (c - 1) * s);
  }
}

// Where a pixel's scale-s bin goes in the block's tables: the plane's
// estimate counts it by scale and bin alone.
struct ByGradient {
  __device__ uint32_t operator()(int scale, uint32_t bin, uint32_t) const {
    return uint32_t(scale) * kNoiseBins + bin;
  }
};

// One pass over the sampled rows: each thread takes one column of its
// group's rows and adds each pixel to its bins in the block's tables. The
// samples of several pixels are loaded together, so that a thread waits
// for memory once per chunk of rows, not once per row. Exact: integers
// throughout, so the tables are the CPU's.
constexpr int kChunk = 4;

template <typename Word, typename BlockTableT, typename Slot>
__device__ void add_band(const PlaneArgs &p, int block, BlockTableT &t, Slot slot = {}) {
  const int x = 1 + (block % p.blocks_x) * kTableColumns + int(threadIdx.x) % kTableColumns;
  const bool column = x + 1 < p.width;
  // Sampled rows [i0, i1) of this thread's group; the same for the warp.
  const int i0 = (block / p.blocks_x) * kTableRows + int(threadIdx.x) / kTableColumns * kGroupRows;
  const int i1 = min(i0 + kGroupRows, p.rows);
  constexpr bool kDeep = sizeof(Word) == 2;
  for (int i = i0; i < i1; i += kChunk) {
    PixelSamples v[kChunk];
#pragma unroll
    for (int k = 0; k < kChunk; ++k)
      if (column && i + k < i1) load_pixel<Word>(p, x, (i + k) * p.row_step + 1, v[k]);
#pragma unroll
    for (int k = 0; k < kChunk; ++k) {
      if (i + k >= i1) break;
      uint32_t fine_slot = ~0u, fine_lap = 0, coarse_slot = ~0u, coarse_lap = 0;
      if (column) {
        const NoiseMasks fine = noise_masks(v[k].fine[0], v[k].fine[1], v[k].fine[2]);
        const int32_t(&f)[3][3] = v[k].fine;
        const uint32_t sum9 = uint32_t(f[0][0] + f[0][1] + f[0][2] + f[1][0] + f[1][1] + f[1][2] +
                                       f[2][0] + f[2][1] + f[2][2]);
        fine_slot = slot(0, noise_bin(fine.grad, p.down, p.up), sum9);
        fine_lap = fine.abs_lap;
        if (v[k].has_coarse) {
          const NoiseMasks coarse = noise_masks(v[k].coarse[0], v[k].coarse[1], v[k].coarse[2]);
          coarse_slot = slot(1, noise_bin(noise_coarse_gradient(coarse.grad, fine.grad), p.down, p.up),
                             sum9);
          coarse_lap = coarse.abs_lap;
        }
      }
      add_pixel<kDeep>(t, fine_slot, fine_lap);
      add_pixel<kDeep>(t, coarse_slot, coarse_lap);
    }
  }
}

__global__ void __launch_bounds__(kTableThreads) noise_table_kernel(PassArgs a) {
  // The kernel reading the tables may be scheduled now: it waits for them.
  kernels::allow_dependent_launch();
  __shared__ BlockTable t;
  t.clear();
  __syncthreads();
  int i = 0;
  while (i + 1 < a.count && int(blockIdx.x) >= a.planes[i + 1].first_block) ++i;
  const PlaneArgs &p = a.planes[i];
  const int block = int(blockIdx.x) - p.first_block;
  if (p.deep)
    add_band<uint16_t>(p, block, t, ByGradient{});
  else
    add_band<uint8_t>(p, block, t, ByGradient{});
  __syncthreads();
  Table &out = a.tables[p.table];
  for (int b = threadIdx.x; b < kScaleSlots; b += blockDim.x)
    if (t.count[b]) {
      atomicAdd(&out.count[b / kNoiseBins][b % kNoiseBins], (unsigned long long)t.count[b]);
      atomicAdd(&out.abs_laplacian[b / kNoiseBins][b % kNoiseBins], t.sum(b));
    }
}

// The noise level function of one plane: its pixels counted in the tables
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
  __device__ uint32_t operator()(int scale, uint32_t bin, uint32_t sum9) const {
    const int band = noise_band(sum9, bits) - first;
    return band >= 0 && band < BANDS ? uint32_t(band * kNoiseScales + scale) * kNoiseBins + bin
                                     : 0xFFFFFFFFu;
  }
};

template <int BANDS>
__global__ void __launch_bounds__(kTableThreads) noise_curve_kernel(CurveArgs a) {
  extern __shared__ uint32_t curve_words[];
  BlockCurve<BANDS> &t = *reinterpret_cast<BlockCurve<BANDS> *>(curve_words);
  constexpr int kSlots = kScaleSlots * BANDS;
  t.clear();
  __syncthreads();
  const ByBand<BANDS> slot{a.bits, a.first};
  if (a.plane.deep)
    add_band<uint16_t>(a.plane, int(blockIdx.x), t, slot);
  else
    add_band<uint8_t>(a.plane, int(blockIdx.x), t, slot);
  __syncthreads();
  for (int b = threadIdx.x; b < kSlots; b += blockDim.x)
    if (t.count[b]) {
      Table &out = a.tables[a.first + b / kScaleSlots];
      const int scale = (b / kNoiseBins) % kNoiseScales, bin = b % kNoiseBins;
      atomicAdd(&out.count[scale][bin], (unsigned long long)t.count[b]);
      atomicAdd(&out.abs_laplacian[scale][bin], t.sum(b));
    }
}

// One block per band; each band takes the frame's share of its coarse
// reading (none where `correlated` is null).
__global__ void __launch_bounds__(kNoiseReadThreads)
    noise_curve_tail_kernel(Table *tables, int bits, const double *correlated, double *sigmas) {
  __shared__ NoiseReadings readings[1];
  Table *const table[1] = {tables + blockIdx.x};
  read_noise_tables(table, &bits, 1, readings);
  const NoiseReadings &r = readings[0];
  if (threadIdx.x == 0)
    sigmas[blockIdx.x] = r.pixels < kNoiseBandMinPixels
                             ? -1.0
                             : noise_estimate_with(r, correlated ? *correlated : 0.0).sigma;
}

struct TailArgs {
  Table *tables;
  int bits[NoiseEstimatorGpu::kMaxTables];
  int chroma;  // whether table 1 is read
  double *sigmas;
  double *correlated;
};

// One block: luma's table and chroma's, as frame_noise_of reads them.
__global__ void __launch_bounds__(kNoiseReadThreads) noise_tail_kernel(TailArgs a) {
  __shared__ NoiseReadings r[kMaxNoiseTablesRead];
  Table *const tables[kMaxNoiseTablesRead] = {a.tables, a.tables + 1};
  read_noise_tables(tables, a.bits, a.chroma ? 2 : 1, r);
  if (threadIdx.x != 0) return;
  const FrameNoise f = frame_noise_of(r[0], a.chroma != 0, a.chroma ? r[1] : NoiseReadings{});
  a.sigmas[0] = f.luma.sigma;
  a.sigmas[1] = f.chroma.sigma;
  *a.correlated = f.luma.correlated;
}

}  // namespace

struct NoiseEstimatorGpu::Impl {
  DeviceArray<Table> tables{kMaxTables};
  DeviceArray<double> sigmas{kMaxTables};
  DeviceArray<double> correlated{1};
  int bits[kMaxTables] = {};
  // The planes added since the last estimate, read in one launch.
  PassArgs pass{};
  int blocks = 0;
  // The tables and sigmas start cleared, on the stream of the first pass.
  ClearOnFirstUse clear;
};

NoiseEstimatorGpu::NoiseEstimatorGpu() : impl_(std::make_unique<Impl>()) {
  kernels::raise_dynamic_shared_limit(reinterpret_cast<const void *>(noise_tail_kernel),
                                      noise_read_shared(kMaxNoiseTablesRead), "the noise estimate");
}

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
  m.clear.on(stream, m.tables, m.sigmas, m.correlated);
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
  TailArgs a{t.tables, {}, tables == 2 ? 1 : 0, impl_->sigmas.get(), impl_->correlated.get()};
  for (int i = 0; i < kMaxTables; ++i) a.bits[i] = t.bits[i];
  noise_tail_kernel<<<1, kNoiseReadThreads, noise_read_shared(tables), stream>>>(a);
  check_launch("noise_tail_kernel");
}

const double *NoiseEstimatorGpu::sigmas() const { return impl_->sigmas.get(); }
const double *NoiseEstimatorGpu::correlated() const { return impl_->correlated.get(); }

struct NoiseCurveGpu::Impl {
  DeviceArray<Table> tables{kNoiseBands};
  DeviceArray<double> sigmas{kNoiseBands};
  int bands_per_pass = kNoiseBands;
  // The tables start cleared, on the first frame's stream.
  ClearOnFirstUse clear;
};

namespace {

// The curve pass of `bands` bands, with the shared memory it needs.
struct CurvePass {
  void (*kernel)(CurveArgs);
  size_t shared;
};

CurvePass curve_pass(int bands) {
  switch (bands) {
    case 8:
      return {noise_curve_kernel<8>, sizeof(BlockCurve<8>)};
    case 4:
      return {noise_curve_kernel<4>, sizeof(BlockCurve<4>)};
    default:
      return {noise_curve_kernel<2>, sizeof(BlockCurve<2>)};
  }
}

}  // namespace

NoiseCurveGpu::NoiseCurveGpu(int bands_per_pass) : impl_(std::make_unique<Impl>()) {
  if (bands_per_pass != 0 && bands_per_pass != 8 && bands_per_pass != 4 && bands_per_pass != 2)
    throw std::invalid_argument("noise curve: 8, 4 or 2 bands a pass");
  static_assert(kNoiseBands == 8, "the curve passes split eight bands");
  Impl &m = *impl_;
  m.bands_per_pass = bands_per_pass;
  if (m.bands_per_pass == 0)
    for (int bands : {8, 4, 2})
      if (kernels::fits_shared_memory(reinterpret_cast<const void *>(curve_pass(bands).kernel),
                                      curve_pass(bands).shared) ||
          bands == 2) {
        m.bands_per_pass = bands;
        break;
      }
  const CurvePass pass = curve_pass(m.bands_per_pass);
  kernels::raise_dynamic_shared_limit(reinterpret_cast<const void *>(pass.kernel), pass.shared,
                                      "the noise curve");
}

NoiseCurveGpu::~NoiseCurveGpu() = default;
NoiseCurveGpu::NoiseCurveGpu(NoiseCurveGpu &&) noexcept = default;
NoiseCurveGpu &NoiseCurveGpu::operator=(NoiseCurveGpu &&) noexcept = default;

void NoiseCurveGpu::estimate(ConstPlane plane, int step, cudaStream_t stream,
                             const double *correlated) {
  if (!plane.samples.valid() || step < 1)
    throw std::invalid_argument("noise estimate: invalid sample layout or step");
  Impl &m = *impl_;
  m.clear.on(stream, m.tables);
  const int bits = plane.samples.bits;
  if (plane.width >= 3 && plane.height >= 3) {
    int blocks = 0;
    CurveArgs a{plane_args(plane, step, 0, 0, &blocks), bits, 0, m.tables.get()};
    const CurvePass pass = curve_pass(m.bands_per_pass);
    for (a.first = 0; a.first < kNoiseBands; a.first += m.bands_per_pass) {
      pass.kernel<<<blocks, kTableThreads, pass.shared, stream>>>(a);
      check_launch("noise_curve_kernel");
    }
  }
  noise_curve_tail_kernel<<<kNoiseBands, kNoiseReadThreads, noise_read_shared(1), stream>>>(
      m.tables.get(), bits, correlated, m.sigmas.get());
  check_launch("noise_curve_tail_kernel");
}

const double *NoiseCurveGpu::sigmas() const { return impl_->sigmas.get(); }

}  // namespace cudafilters

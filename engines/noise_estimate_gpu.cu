#include "noise_estimate.h"

#include <cudafilters/cuda_check.h>
#include <cudafilters/cuda_memory.h>

#include <cub/block/block_scan.cuh>

#include <stdexcept>

namespace cudafilters {

namespace {

constexpr int kTableThreads = 256;
// Rows each block walks down; its threads own one column each.
constexpr int kTableRows = 32;
constexpr int kTailThreads = kNoiseBins;

struct Table {
  unsigned long long count[kNoiseBins];
  unsigned long long abs_laplacian[kNoiseBins];
};

struct PlaneArgs {
  const uint8_t *data;
  size_t stride;
  int width;
  int height;
  int step;
  SampleLevels levels;
  int down;  // a gradient's bin: (G >> down) << up
  int up;
};

template <typename Word>
__device__ __forceinline__ int level_at(const PlaneArgs &p, int x, int y) {
  const Word *row = reinterpret_cast<const Word *>(p.data + size_t(y) * p.stride);
  return int(p.levels.of(__ldg(row + size_t(x) * p.step)));
}

// One pass over the interior pixels: each thread walks down one column of
// its block's band of rows with the 3x3 neighbourhood in registers (three
// loads per pixel, coalesced across the warp), and adds the pixel's count
// and |L| to its gradient bin in the block's table in shared memory. Lanes
// of a warp that fall in one bin add once together (flat frames put nearly
// every pixel in a few bins, where one atomic per pixel would serialise).
// Exact: integers throughout, so the table is the CPU's.
template <typename Word>
__global__ void __launch_bounds__(kTableThreads) noise_table_kernel(PlaneArgs p, Table *table) {
  __shared__ uint32_t count[kNoiseBins];
  __shared__ unsigned long long sum[kNoiseBins];
  for (int b = threadIdx.x; b < kNoiseBins; b += blockDim.x) {
    count[b] = 0;
    sum[b] = 0;
  }
  __syncthreads();

  const int x = 1 + blockIdx.x * blockDim.x + threadIdx.x;
  const bool column = x + 1 < p.width;
  const int y0 = 1 + blockIdx.y * kTableRows;
  const int y1 = min(y0 + kTableRows, p.height - 1);
  int a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0;
  if (column) {
    a0 = level_at<Word>(p, x - 1, y0 - 1), a1 = level_at<Word>(p, x, y0 - 1), a2 = level_at<Word>(p, x + 1, y0 - 1);
    b0 = level_at<Word>(p, x - 1, y0), b1 = level_at<Word>(p, x, y0), b2 = level_at<Word>(p, x + 1, y0);
  }
  for (int y = y0; y < y1; ++y) {
    uint32_t bin = 0xFFFFFFFFu, abs_lap = 0;
    int c0 = 0, c1 = 0, c2 = 0;
    if (column) {
      c0 = level_at<Word>(p, x - 1, y + 1), c1 = level_at<Word>(p, x, y + 1), c2 = level_at<Word>(p, x + 1, y + 1);
      const int lap = (a0 - 2 * a1 + a2) - 2 * (b0 - 2 * b1 + b2) + (c0 - 2 * c1 + c2);
      const int gx = (a2 - a0) + 2 * (b2 - b0) + (c2 - c0);
      const int gy = (c0 - a0) + 2 * (c1 - a1) + (c2 - a2);
      const uint32_t g = uint32_t(abs(gx) + abs(gy));
      bin = min((g >> p.down) << p.up, uint32_t(kNoiseBins - 1));
      abs_lap = uint32_t(abs(lap));
    }
#if __CUDA_ARCH__ >= 800
    // |L| <= 16 (2^16 - 1) at 16 bits: 32 lanes sum below 2^26.
    const uint32_t same = __match_any_sync(0xFFFFFFFFu, bin);
    const uint32_t lanes_sum = __reduce_add_sync(same, abs_lap);
    if (bin != 0xFFFFFFFFu && (threadIdx.x & 31) == __ffs(same) - 1) {
      atomicAdd(&count[bin], uint32_t(__popc(same)));
      atomicAdd(&sum[bin], (unsigned long long)lanes_sum);
    }
#else
    if (bin != 0xFFFFFFFFu) {
      atomicAdd(&count[bin], 1u);
      atomicAdd(&sum[bin], (unsigned long long)abs_lap);
    }
#endif
    a0 = b0, a1 = b1, a2 = b2;
    b0 = c0, b1 = c1, b2 = c2;
  }
  __syncthreads();
  for (int b = threadIdx.x; b < kNoiseBins; b += blockDim.x)
    if (count[b]) {
      atomicAdd(&table->count[b], (unsigned long long)count[b]);
      atomicAdd(&table->abs_laplacian[b], sum[b]);
    }
}

struct TailArgs {
  Table *tables;
  int bits[NoiseEstimatorGpu::kMaxTables];
  double *sigmas;
};

// One block per table, a thread per bin: the prefix sums (exact, in
// integers), then one thread reads the estimate from them as the CPU does.
// The table is cleared for the next frame on the way.
__global__ void __launch_bounds__(kTailThreads) noise_tail_kernel(TailArgs a) {
  using Scan = cub::BlockScan<unsigned long long, kTailThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ uint64_t below_n[kNoiseBins + 1], below_l[kNoiseBins + 1];
  Table &t = a.tables[blockIdx.x];
  const int b = threadIdx.x;
  const unsigned long long n = t.count[b], l = t.abs_laplacian[b];
  t.count[b] = 0;
  t.abs_laplacian[b] = 0;
  unsigned long long pn, pl;
  Scan(scan).ExclusiveSum(n, pn);
  __syncthreads();
  Scan(scan).ExclusiveSum(l, pl);
  below_n[b] = pn;
  below_l[b] = pl;
  if (b == kNoiseBins - 1) {
    below_n[kNoiseBins] = pn + n;
    below_l[kNoiseBins] = pl + l;
  }
  __syncthreads();
  if (b == 0) a.sigmas[blockIdx.x] = noise_sigma_of_prefix(below_n, below_l, a.bits[blockIdx.x]);
}

}  // namespace

struct NoiseEstimatorGpu::Impl {
  DeviceArray<Table> tables{kMaxTables};
  DeviceArray<double> sigmas{kMaxTables};
  int bits[kMaxTables] = {};
};

NoiseEstimatorGpu::NoiseEstimatorGpu() : impl_(std::make_unique<Impl>()) {
  CUDAFILTERS_CHECK(cudaMemset(impl_->tables.get(), 0, kMaxTables * sizeof(Table)));
  CUDAFILTERS_CHECK(cudaMemset(impl_->sigmas.get(), 0, kMaxTables * sizeof(double)));
}

NoiseEstimatorGpu::~NoiseEstimatorGpu() = default;
NoiseEstimatorGpu::NoiseEstimatorGpu(NoiseEstimatorGpu &&) noexcept = default;
NoiseEstimatorGpu &NoiseEstimatorGpu::operator=(NoiseEstimatorGpu &&) noexcept = default;

void NoiseEstimatorGpu::add(int table, ConstPlane plane, int step, cudaStream_t stream) {
  if (table < 0 || table >= kMaxTables) throw std::invalid_argument("noise estimate: no such table");
  if (!plane.samples.valid() || step < 1)
    throw std::invalid_argument("noise estimate: invalid sample layout or step");
  int &bits = impl_->bits[table];
  if (bits != 0 && bits != plane.samples.bits)
    throw std::invalid_argument("noise estimate: planes of different depths in one table");
  bits = plane.samples.bits;
  if (plane.width < 3 || plane.height < 3) return;
  PlaneArgs p{plane.data, plane.stride, plane.width, plane.height, step,
              sample_levels(plane.samples), bits > 8 ? bits - 8 : 0, bits < 8 ? 8 - bits : 0};
  const dim3 grid((plane.width - 2 + kTableThreads - 1) / kTableThreads,
                  (plane.height - 2 + kTableRows - 1) / kTableRows);
  Table *t = impl_->tables.get() + table;
  if (plane.samples.deep())
    noise_table_kernel<uint16_t><<<grid, kTableThreads, 0, stream>>>(p, t);
  else
    noise_table_kernel<uint8_t><<<grid, kTableThreads, 0, stream>>>(p, t);
  check_launch("noise_table_kernel");
}

void NoiseEstimatorGpu::estimate(int tables, cudaStream_t stream) {
  if (tables < 1 || tables > kMaxTables) throw std::invalid_argument("noise estimate: no such table");
  TailArgs a{impl_->tables.get(), {}, impl_->sigmas.get()};
  for (int i = 0; i < kMaxTables; ++i) a.bits[i] = impl_->bits[i] ? impl_->bits[i] : 8;
  noise_tail_kernel<<<tables, kTailThreads, 0, stream>>>(a);
  check_launch("noise_tail_kernel");
  for (int &b : impl_->bits) b = 0;
}

const double *NoiseEstimatorGpu::sigmas() const { return impl_->sigmas.get(); }

}  // namespace cudafilters

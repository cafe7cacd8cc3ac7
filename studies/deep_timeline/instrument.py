#!/usr/bin/env python3
# A copy of cuda/histeq/histeq_kernels_16bit.cu (the kernel of deep planes of up
# to 2^16 levels) with %globaltimer marks at the step boundaries of the
# cooperative kernel, for timeline.cpp (see build.sh).
# -DDIAG_NO_REMOTE leaves out the counters of the cluster's other blocks when
# a partial is stored, -DDIAG_NO_STORE its global stores, and -DDIAG_HALF_STORE
# stores half its bytes: wrong results, to time what each costs.
#
#   instrument.py cuda/histeq/histeq_kernels_16bit.cu OUT.cu
import sys
src, dst = sys.argv[1], sys.argv[2]
s=open(src).read()
def rep(a,b,cnt=1):
    global s
    assert s.count(a)==cnt, (a[:90], s.count(a))
    s=s.replace(a,b)
rep("""namespace cudafilters {
namespace histeq {

namespace {
""","""namespace cudafilters {
__device__ unsigned long long g_tl[256 * 16];
#define TL(k) do { if (threadIdx.x == 0) { unsigned long long t_; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t_)); g_tl[blockIdx.x * 16 + (k)] = t_; } } while (0)
void deep_timeline_read(unsigned long long *out) {
  CUDAFILTERS_CHECK(cudaMemcpyFromSymbol(out, g_tl, sizeof(g_tl)));
}
void deep_timeline_clear() {
  static unsigned long long z[256 * 16] = {};
  CUDAFILTERS_CHECK(cudaMemcpyToSymbol(g_tl, z, sizeof(z)));
}
namespace histeq {

namespace {
""")
rep("""    clear_counters(packed, words * copies, vec);
    __syncthreads();
""","""    clear_counters(packed, words * copies, vec);
    __syncthreads();
    TL(1);
""")
rep("""    BlockCluster::sync();
    store_partial(packed, words, copies, vec, f.partials + static_cast<size_t>(p) * words);
    BlockCluster::sync();""","""    BlockCluster::sync();
    TL(2);
    store_partial(packed, words, copies, vec, f.partials + static_cast<size_t>(p) * words);
    TL(15);
    BlockCluster::sync();
    TL(3);""")
rep("""    switch (step) {""","""    if (step != kBlend && step != kLut) TL(4 + step);
    switch (step) {""")
rep("""  bool first = true;
  for (uint32_t step""","""  bool first = true;
  TL(0);
  for (uint32_t step""")
rep("""    out[1] = make_uint4(n[4], n[5], n[6], n[7]);
    __syncthreads();""","""    out[1] = make_uint4(n[4], n[5], n[6], n[7]);
    __syncthreads();
    TL(9);""")
rep("""    if (bin < levels) f.hist[bin] = count;
    if (!smoothing(f)) {
      uint32_t sum, first;
      reduce_tile(sh, bin < levels ? count : 0u, bin, levels, sum, first);""","""    if (bin < levels) f.hist[bin] = count;
    TL(6);
    if (!smoothing(f)) {
      uint32_t sum, first;
      reduce_tile(sh, bin < levels ? count : 0u, bin, levels, sum, first);
      TL(7);""")
rep("""  if (threadIdx.x == 0)
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(tile_flag[tile])
        .store(epoch, cuda::memory_order_release);""","""  if (threadIdx.x == 0)
    cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(tile_flag[tile])
        .store(epoch, cuda::memory_order_release);
  TL(14);""")
rep("""    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  }
  __syncthreads();
  tile_lut(f, sh, tile, v);""","""    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  }
  __syncthreads();
  TL(10);
  tile_lut(f, sh, tile, v);
  TL(11);""")
rep("""    lut[i] = f.lut[i];
  __syncthreads();""","""    lut[i] = f.lut[i];
  __syncthreads();
  TL(12);""")
rep("""  map_with_lut(f.map_src, f.stash != nullptr, f.dst, f.dst_pitch, f.l, lut);
}""","""  map_with_lut(f.map_src, f.stash != nullptr, f.dst, f.dst_pitch, f.l, lut);
  __syncthreads();
  TL(13);
}""")
rep("""      for (unsigned k = 0; k < blocks; ++k) {
        // Starting at its own rank, each block reads a different block first.""","""#ifdef DIAG_NO_REMOTE
      for (unsigned k = 0; k < 1; ++k) {
#else
      for (unsigned k = 0; k < blocks; ++k) {
#endif
        // Starting at its own rank, each block reads a different block first.""")
rep("""      reinterpret_cast<uint4 *>(out)[w] = v;
    }
  } else if (rank == 0) {""","""#if defined(DIAG_NO_STORE)
      if (v.x == 0x12345678u) reinterpret_cast<uint4 *>(out)[w] = v;
#elif defined(DIAG_HALF_STORE)
      reinterpret_cast<uint2 *>(out)[w] = make_uint2(v.x + v.z, v.y + v.w);
#else
      reinterpret_cast<uint4 *>(out)[w] = v;
#endif
    }
  } else if (rank == 0) {""")
open(dst,'w').write(s)

#include "device_limits.h"

#include <cudafilters/cuda_check.h>

#include <atomic>

namespace cudafilters {

namespace {

std::atomic<int> cap{-1};
std::atomic<unsigned> refusals{0};
std::atomic<size_t> shared_cap{0};

}  // namespace

int cooperative_grid_cap() { return cap.load(std::memory_order_relaxed); }

void set_cooperative_grid_cap(int blocks) { cap.store(blocks, std::memory_order_relaxed); }

unsigned cooperative_refusals() { return refusals.load(std::memory_order_relaxed); }

void count_cooperative_refusal() { refusals.fetch_add(1, std::memory_order_relaxed); }

size_t shared_memory_per_block() {
  int device = 0, optin = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  CUDAFILTERS_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const size_t c = shared_cap.load(std::memory_order_relaxed);
  return c != 0 && c < size_t(optin) ? c : size_t(optin);
}

size_t shared_memory_cap() { return shared_cap.load(std::memory_order_relaxed); }

void set_shared_memory_cap(size_t bytes) { shared_cap.store(bytes, std::memory_order_relaxed); }

}  // namespace cudafilters

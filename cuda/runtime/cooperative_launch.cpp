#include "cooperative_launch.h"

#include <atomic>

namespace cudafilters {

namespace {

std::atomic<int> cap{-1};
std::atomic<unsigned> refusals{0};

}  // namespace

int cooperative_grid_cap() { return cap.load(std::memory_order_relaxed); }

void set_cooperative_grid_cap(int blocks) { cap.store(blocks, std::memory_order_relaxed); }

unsigned cooperative_refusals() { return refusals.load(std::memory_order_relaxed); }

void count_cooperative_refusal() { refusals.fetch_add(1, std::memory_order_relaxed); }

}  // namespace cudafilters

#include "cooperative_launch.h"

#include <atomic>
#include <climits>
#include <cstdlib>

namespace cudafilters {

namespace {

int cap_from_environment() {
  const char *v = std::getenv("CUDAFILTERS_TEST_COOPERATIVE_GRID_CAP");
  if (v == nullptr || *v == '\0') return -1;
  char *end = nullptr;
  const long blocks = std::strtol(v, &end, 10);
  return *end == '\0' && blocks >= 0 && blocks <= INT_MAX ? static_cast<int>(blocks) : -1;
}

std::atomic<int> &cap() {
  static std::atomic<int> blocks{cap_from_environment()};
  return blocks;
}

std::atomic<unsigned> refusals{0};

}  // namespace

int cooperative_grid_cap() { return cap().load(std::memory_order_relaxed); }

void set_cooperative_grid_cap(int blocks) { cap().store(blocks, std::memory_order_relaxed); }

unsigned cooperative_refusals() { return refusals.load(std::memory_order_relaxed); }

void count_cooperative_refusal() { refusals.fetch_add(1, std::memory_order_relaxed); }

}  // namespace cudafilters

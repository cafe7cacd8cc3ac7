// What a caller may choose about how a runner (CpuFrameRunner,
// CpuWindowRunner, GpuFrameRunner, GpuWindowRunner) moves its frames. The
// defaults are what a video pipeline wants; the engine library reads no
// environment, so a caller decides these itself.
#pragma once

namespace cudafilters {

// How the host waits for a frame on the GPU.
enum class HostWait {
  // Short waits poll; waits that take long are mostly slept through, and
  // those that stray far from what they are expected to take end blocked
  // until the driver's interrupt (docs/deployment.md).
  paced,
  // Every wait polls from its start: a CPU core per stream for the lowest
  // latency.
  poll,
  // Every wait after a place's first three ends blocked: the least CPU
  // time, for a wake-up's latency.
  block,
};

struct RunnerOptions {
  // Fill every output with kPoisonByte (0xA5) before the filter runs, so
  // that samples a filter fails to write show instead of stale data: for
  // tests and for checking a filter of one's own. Costs a write of each
  // output; an output filtered in place is not poisoned.
  bool poison_outputs = false;
  // GPU runners only.
  HostWait host_wait = HostWait::paced;
};

// The byte poison_outputs writes.
constexpr int kPoisonByte = 0xA5;

}  // namespace cudafilters

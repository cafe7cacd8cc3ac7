// One pool of worker threads per process, shared by every CPU path and every
// element instance: eight pipelines filtering at once share the machine's
// cores instead of starting eight pools.
#pragma once

#include <string>

namespace cudafilters {

// Runs body(context, i) for every i in [0, count), spread over the shared
// pool and the calling thread, and returns when all calls have returned.
// Calls from several threads at once share the workers. If a body throws,
// the indices not yet started are left out, and the first exception is
// rethrown here once every call under way has returned. With
// `caller_first`, index 0 runs on the calling thread (before any other it
// takes), whichever workers are free.
void parallel_for_indices(int count, void (*body)(const void *context, int i),
                          const void *context, bool caller_first = false);

// The same for any callable body(i), without wrapping it in a
// std::function (which would allocate for every call on the hot path).
template <typename Body>
void parallel_for(int count, const Body &body) {
  parallel_for_indices(
      count, [](const void *context, int i) { (*static_cast<const Body *>(context))(i); },
      &body);
}

// The same, index 0 on the calling thread: for a call whose caller has a
// part of its own to play (the host transfers' caller alone calls CUDA),
// which workers already spinning must not take from it.
template <typename Body>
void parallel_for_with_caller(int count, const Body &body) {
  parallel_for_indices(
      count, [](const void *context, int i) { (*static_cast<const Body *>(context))(i); },
      &body, true);
}

// The number of threads parallel_for uses (the workers and the caller). The
// pool is made by the first call into it: one thread per CPU the calling
// thread may run on (its affinity mask, as taskset and container cpusets
// set it), no more than its cgroup's CPU quota allows, and fewer where the
// system refused to start more threads.
int parallel_threads();

namespace detail {

// The CPUs the calling thread may run on; 0 if unknown.
int affinity_cpus();

// The CPU quota of the cgroups a process is in and their ancestors, in
// whole CPUs rounded up (cgroup v2 cpu.max, v1 cpu.cfs_quota_us over
// cpu.cfs_period_us; the smallest that applies); 0 where none applies.
// Reads the cgroup filesystem as `mountinfo` and `proc_cgroup`, the text
// of /proc/self/mountinfo and /proc/self/cgroup, describe it.
int cgroup_cpu_limit(const std::string &mountinfo, const std::string &proc_cgroup);

}  // namespace detail

}  // namespace cudafilters

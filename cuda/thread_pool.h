// One pool of worker threads per process, shared by every CPU path and every
// element instance: eight pipelines filtering at once share the machine's
// cores instead of starting eight pools.
#pragma once

#include <functional>

namespace cudafilters {

// Runs body(i) for every i in [0, count), spread over the shared pool and
// the calling thread, and returns when all calls have returned. Calls from
// several threads at once share the workers. body must not throw.
void parallel_for(int count, const std::function<void(int)> &body);

// The number of threads parallel_for uses (the workers and the caller).
int parallel_threads();

}  // namespace cudafilters

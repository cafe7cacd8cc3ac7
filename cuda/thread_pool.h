// One pool of worker threads per process, shared by every CPU path and every
// element instance: eight pipelines filtering at once share the machine's
// cores instead of starting eight pools.
#pragma once

namespace cudafilters {

// Runs body(context, i) for every i in [0, count), spread over the shared
// pool and the calling thread, and returns when all calls have returned.
// Calls from several threads at once share the workers. If a body throws,
// the indices not yet started are left out, and the first exception is
// rethrown here once every call under way has returned.
void parallel_for_indices(int count, void (*body)(const void *context, int i),
                          const void *context);

// The same for any callable body(i), without wrapping it in a
// std::function (which would allocate for every call on the hot path).
template <typename Body>
void parallel_for(int count, const Body &body) {
  parallel_for_indices(
      count, [](const void *context, int i) { (*static_cast<const Body *>(context))(i); },
      &body);
}

// The number of threads parallel_for uses (the workers and the caller):
// fewer than the machine's cores where the system refused to start more.
int parallel_threads();

}  // namespace cudafilters

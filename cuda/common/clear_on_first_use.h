// Clearing device arrays once, on the stream of their first use. Private to
// the engine library.
#pragma once

#include <cudafilters/cuda_check.h>
#include <cudafilters/cuda_memory.h>

#include <cuda_runtime.h>

namespace cudafilters {

// A cudaMemset on the legacy default stream, which the callers'
// non-blocking streams do not wait for, could come after that use.
class ClearOnFirstUse {
 public:
  template <typename... T>
  void on(cudaStream_t stream, const DeviceArray<T> &...arrays) {
    if (done_) return;
    (CUDAFILTERS_CHECK(cudaMemsetAsync(arrays.get(), 0, arrays.size() * sizeof(T), stream)), ...);
    done_ = true;
  }

 private:
  bool done_ = false;
};

}  // namespace cudafilters

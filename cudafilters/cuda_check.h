// CUDA error handling: every runtime call and launch goes through
// CUDAFILTERS_CHECK, which throws CudaError naming the operation and CUDA's own
// text for the error. Callers at the GStreamer boundary turn it into an element
// error; nothing below that boundary logs or aborts.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace cudafilters {

class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string &operation, cudaError_t code)
      : std::runtime_error(operation + " failed: " + cudaGetErrorName(code) + " (" +
                           cudaGetErrorString(code) + ")"),
        code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// A failed call also leaves its error as the thread's "last error"; it is
// consumed here so that the next launch check does not report it again (an
// allocation that failed once would otherwise fail every later launch).
inline void check_cuda(cudaError_t code, const char *operation) {
  if (code != cudaSuccess) {
    (void)cudaGetLastError();
    throw CudaError(operation, code);
  }
}

// A launch reports configuration errors through cudaGetLastError and faults
// inside the kernel at the next synchronisation; both end up in CudaError.
inline void check_launch(const char *kernel) { check_cuda(cudaGetLastError(), kernel); }

// Throws CudaError if work queued on `stream` has already failed (a kernel
// fault, which is sticky: it also fails every later call in the context),
// and returns at once whether that work is done or still running.
inline void check_queued_work(cudaStream_t stream) {
  const cudaError_t state = cudaStreamQuery(stream);
  if (state == cudaErrorNotReady) {
    (void)cudaGetLastError();  // "not ready" is no error
    return;
  }
  check_cuda(state, "work queued earlier on the stream");
}

}  // namespace cudafilters

#define CUDAFILTERS_CHECK(call) ::cudafilters::check_cuda((call), #call)

// RAII owners for CUDA resources. Each is created and destroyed with the CUDA
// context it belongs to current on the calling thread (the element pushes its
// GstCudaContext around every call into the engines).
#pragma once

#include "cuda_check.h"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace cudafilters {

namespace detail {
inline cudaError_t &release_error() {
  static thread_local cudaError_t error = cudaSuccess;
  return error;
}
}  // namespace detail

// The first error of a free that failed on the calling thread since the
// last call (cudaSuccess: none), which it clears. Destructors cannot throw,
// so the owners below record a failed free here; an owner of many (the
// element's GPU state) asks after destroying them.
inline cudaError_t take_release_error() {
  return std::exchange(detail::release_error(), cudaSuccess);
}

// Base for move-only handles: a resource plus the function that frees it.
template <typename T, cudaError_t (*Release)(T)>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(T h) : handle_(h) {}
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle &&o) noexcept : handle_(std::exchange(o.handle_, T{})) {}
  UniqueHandle &operator=(UniqueHandle &&o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, T{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle &) = delete;
  UniqueHandle &operator=(const UniqueHandle &) = delete;

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != T{}; }
  void reset() {
    if (handle_ != T{}) {
      const cudaError_t err = Release(handle_);
      if (err != cudaSuccess && detail::release_error() == cudaSuccess) detail::release_error() = err;
    }
    handle_ = T{};
  }

 private:
  T handle_{};
};

inline cudaError_t free_device(void *p) { return cudaFree(p); }
inline cudaError_t free_host(void *p) { return cudaFreeHost(p); }

class Stream {
 public:
  Stream() {
    cudaStream_t s = nullptr;
    CUDAFILTERS_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    handle_ = UniqueHandle<cudaStream_t, cudaStreamDestroy>(s);
  }
  cudaStream_t get() const { return handle_.get(); }
  void synchronize() const { CUDAFILTERS_CHECK(cudaStreamSynchronize(handle_.get())); }

 private:
  UniqueHandle<cudaStream_t, cudaStreamDestroy> handle_;
};

class Event {
 public:
  explicit Event(unsigned flags = cudaEventDefault) {
    cudaEvent_t e = nullptr;
    CUDAFILTERS_CHECK(cudaEventCreateWithFlags(&e, flags));
    handle_ = UniqueHandle<cudaEvent_t, cudaEventDestroy>(e);
  }
  cudaEvent_t get() const { return handle_.get(); }

 private:
  UniqueHandle<cudaEvent_t, cudaEventDestroy> handle_;
};

// Linear device memory of a fixed element count.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(size_t count) {
    void *p = nullptr;
    CUDAFILTERS_CHECK(cudaMalloc(&p, count * sizeof(T)));
    mem_ = UniqueHandle<void *, free_device>(p);
    count_ = count;
  }
  T *get() const { return static_cast<T *>(mem_.get()); }
  size_t size() const { return count_; }

 private:
  UniqueHandle<void *, free_device> mem_;
  size_t count_ = 0;
};

// A pitched device plane that only ever grows, so a stream whose frames
// change size does not reallocate on every change.
class DevicePlane {
 public:
  // width in bytes. Strongly exception-safe: if the allocation fails, the
  // plane keeps its memory and capacity (the new plane is allocated before
  // the old one is freed).
  void reserve(int width, int height) {
    if (width <= cap_width_ && height <= cap_height_) return;
    const int w = width > cap_width_ ? width : cap_width_;
    const int h = height > cap_height_ ? height : cap_height_;
    void *p = nullptr;
    size_t pitch = 0;
    CUDAFILTERS_CHECK(cudaMallocPitch(&p, &pitch, static_cast<size_t>(w), static_cast<size_t>(h)));
    mem_ = UniqueHandle<void *, free_device>(p);
    pitch_ = pitch;
    cap_width_ = w;
    cap_height_ = h;
  }
  uint8_t *data() const { return static_cast<uint8_t *>(mem_.get()); }
  size_t pitch() const { return pitch_; }

 private:
  UniqueHandle<void *, free_device> mem_;
  size_t pitch_ = 0;
  int cap_width_ = 0;
  int cap_height_ = 0;
};

// Page-locked host memory that only ever grows: staging for copies between
// pageable frames and the device at full PCIe speed.
class PinnedBuffer {
 public:
  // Strongly exception-safe, as DevicePlane::reserve.
  void reserve(size_t bytes) {
    if (bytes <= size_) return;
    void *p = nullptr;
    CUDAFILTERS_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocPortable));
    mem_ = UniqueHandle<void *, free_host>(p);
    size_ = bytes;
  }
  uint8_t *data() const { return static_cast<uint8_t *>(mem_.get()); }

 private:
  UniqueHandle<void *, free_host> mem_;
  size_t size_ = 0;
};

// Host memory that the caller owns and keeps alive, page-locked and mapped
// for the device while this lives: copies from and to it need no staging,
// and kernels may read it in place. Registering costs far more than one
// copy: it pays for memory that comes back frame after frame.
inline cudaError_t unregister_host(void *p) { return cudaHostUnregister(p); }

class HostRegistration {
 public:
  HostRegistration() = default;
  // Throws CudaError where the driver refuses: part of the range is
  // registered or page-locked already, or it cannot be locked.
  HostRegistration(void *data, size_t bytes) {
    CUDAFILTERS_CHECK(
        cudaHostRegister(data, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped));
    range_ = UniqueHandle<void *, unregister_host>(data);
  }
  explicit operator bool() const { return bool(range_); }
  // Unregisters now (the context it was registered in, or any other where
  // it was registered portable, current).
  void reset() { range_.reset(); }

 private:
  UniqueHandle<void *, unregister_host> range_;
};

}  // namespace cudafilters

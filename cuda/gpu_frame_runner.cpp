#include "gpu_frame_runner.h"

#include <cstdlib>
#include <cstring>

namespace cudafilters {

namespace {

// Poisoning the device output before every frame makes pixels that a kernel
// failed to write show up in tests as 0xA5 instead of stale data from the
// previous frame. Enabled by the test suites through the environment.
bool poison_requested() {
  const char *v = std::getenv("CUDAFILTERS_POISON_OUTPUT");
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

constexpr int kPoisonByte = 0xA5;

bool is_page_locked_address(const void *p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // not a CUDA pointer: clear the non-sticky error
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

void copy_rows(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
               int width, int height) {
  if (src_stride == dst_stride && src_stride == static_cast<size_t>(width)) {
    std::memcpy(dst, src, static_cast<size_t>(width) * height);
    return;
  }
  for (int y = 0; y < height; ++y)
    std::memcpy(dst + y * dst_stride, src + y * src_stride, static_cast<size_t>(width));
}

}  // namespace

bool is_page_locked(ConstPlane plane) {
  const uint8_t *last = plane.data + (plane.height - 1) * plane.stride + plane.width - 1;
  return is_page_locked_address(plane.data) && is_page_locked_address(last);
}

GpuFrameRunner::GpuFrameRunner() : poison_outputs_(poison_requested()) {}

void GpuFrameRunner::reserve(int width, int height) {
  dev_in_.reserve(width, height);
  dev_out_.reserve(width, height);
  const size_t bytes = static_cast<size_t>(width) * height;
  stage_in_.reserve(bytes);
  stage_out_.reserve(bytes);
}

void GpuFrameRunner::upload(ConstPlane src) {
  const size_t w = static_cast<size_t>(src.width);
  if (is_page_locked(src)) {
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev_in_.data(), dev_in_.pitch(), src.data, src.stride, w,
                                        src.height, cudaMemcpyHostToDevice, stream_.get()));
    return;
  }
  copy_rows(src.data, src.stride, stage_in_.data(), w, src.width, src.height);
  CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev_in_.data(), dev_in_.pitch(), stage_in_.data(), w, w,
                                      src.height, cudaMemcpyHostToDevice, stream_.get()));
}

void GpuFrameRunner::download(Plane dst) {
  const size_t w = static_cast<size_t>(dst.width);
  if (is_page_locked(dst)) {
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dst.data, dst.stride, dev_out_.data(), dev_out_.pitch(), w,
                                        dst.height, cudaMemcpyDeviceToHost, stream_.get()));
    stream_.synchronize();
    return;
  }
  CUDAFILTERS_CHECK(cudaMemcpy2DAsync(stage_out_.data(), w, dev_out_.data(), dev_out_.pitch(), w,
                                      dst.height, cudaMemcpyDeviceToHost, stream_.get()));
  stream_.synchronize();
  copy_rows(stage_out_.data(), w, dst.data, dst.stride, dst.width, dst.height);
}

void GpuFrameRunner::process_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst) {
  reserve(src.width, src.height);
  upload(src);
  if (poison_outputs_)
    CUDAFILTERS_CHECK(cudaMemset2DAsync(dev_out_.data(), dev_out_.pitch(), kPoisonByte,
                                        static_cast<size_t>(dst.width), dst.height, stream_.get()));
  filter.enqueue(ConstPlane(dev_in_.data(), dev_in_.pitch(), src.width, src.height),
                 Plane{dev_out_.data(), dev_out_.pitch(), dst.width, dst.height}, stream_.get());
  download(dst);
}

}  // namespace cudafilters

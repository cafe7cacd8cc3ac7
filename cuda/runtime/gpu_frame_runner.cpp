#include <cudafilters/gpu_frame_runner.h>

#include "host_transfer.h"
#include "poison.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace cudafilters {

namespace {

// Kernels reach bus bandwidth on host memory only with wide accesses.
bool rows_aligned16(ConstPlane plane) {
  return reinterpret_cast<uintptr_t>(plane.data) % 16 == 0 && plane.stride % 16 == 0;
}

}  // namespace

bool is_page_locked(ConstPlane plane) { return locate(plane).page_locked; }

GpuFrameRunner::GpuFrameRunner(HostPath host_path)
    : transfer_(std::make_unique<HostTransfer>()), host_path_(host_path),
      poison_outputs_(poison_requested()) {}

GpuFrameRunner::~GpuFrameRunner() = default;

void GpuFrameRunner::reserve(int width, int height, int bytes_per_sample) {
  const int row = width * bytes_per_sample;
  dev_in_.reserve(row, height);
  dev_out_.reserve(row, height);
  transfer_->reserve(static_cast<size_t>(row) * height);
}

void GpuFrameRunner::upload(ConstPlane src, bool page_locked) {
  transfer_->upload(src, page_locked, dev_in_.data(), dev_in_.pitch(), stream_.get());
}

void GpuFrameRunner::download(Plane dst, bool page_locked) {
  transfer_->download(dev_out_.data(), dev_out_.pitch(), dst, page_locked, stream_.get());
}

void GpuFrameRunner::count_levels(const GpuPlaneFilter &filter, ConstPlane src, ConstPlane dst) {
  if (!levels_) levels_ = std::make_unique<LevelCounterGpu>();
  filter.statistics_planes(src, dst);
  levels_->enqueue(src, dst, stream_.get());
}

void GpuFrameRunner::switch_to(cudaStream_t stream) {
  if (last_stream_ != nullptr && last_stream_ != stream) wait_for_stream(last_stream_);
  last_stream_ = stream;
}

void GpuFrameRunner::wait_for_stream(cudaStream_t stream) {
  CUDAFILTERS_CHECK(cudaEventRecord(stream_done_.get(), stream));
  wait_for(stream_done_.get());
}

void GpuFrameRunner::order_after(cudaStream_t first, cudaStream_t then) {
  CUDAFILTERS_CHECK(cudaEventRecord(link_.get(), first));
  CUDAFILTERS_CHECK(cudaStreamWaitEvent(then, link_.get(), 0));
}

void GpuFrameRunner::check_queued_work() {
  cudafilters::check_queued_work(last_stream_ != nullptr ? last_stream_ : stream_.get());
}

void GpuFrameRunner::synchronize() {
  if (last_stream_ != nullptr) wait_for_stream(last_stream_);
  last_stream_ = nullptr;
}

void GpuFrameRunner::poison_device(Plane dst, const CarriedPlanes &carried,
                                   cudaStream_t stream) {
  if (!poison_outputs_) return;
  poison_device_plane(dst, stream);
  for (const CarriedPlane &p : carried) poison_device_plane(p.dst, stream);
}

void GpuFrameRunner::process_device(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                                    const CarriedPlanes &carried, FrameLevels *levels,
                                    cudaStream_t dst_users) {
  switch_to(stream_.get());
  if (dst_users != nullptr) order_after(dst_users, stream_.get());
  poison_device(dst, carried, stream_.get());
  filter.enqueue_carrying(src, dst, carried, stream_.get());
  if (levels) count_levels(filter, src, dst);
  synchronize();
  if (levels) *levels = levels_->result();
}

void GpuFrameRunner::enqueue_device(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                                    const CarriedPlanes &carried, cudaStream_t stream) {
  if (stream == nullptr) stream = stream_.get();
  switch_to(stream);
  poison_device(dst, carried, stream);
  filter.enqueue_carrying(src, dst, carried, stream);
}

void GpuFrameRunner::stream_frame(GpuPlaneFilter &filter, ConstPlane src, Plane dst) {
  switch_to(stream_.get());
  poison_device(dst, {}, stream_.get());
  filter.enqueue_streaming(
      src, dst, Plane{dev_in_.data(), dev_in_.pitch(), src.width, src.height, src.samples},
      stream_.get());
  synchronize();
}

void GpuFrameRunner::process_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                                  FrameLevels *levels) {
  if (src.samples != dst.samples || src.width != dst.width || src.height != dst.height)
    throw std::invalid_argument("source and output planes differ in size or layout");
  if (poison_outputs_) poison_host_plane(dst);
  reserve(src.width, src.height, src.samples.bytes);
  switch_to(stream_.get());
  const HostResidence in = locate(src), out = locate(dst);
  last_streamed_ = host_path_ == HostPath::kAuto && !levels && filter.streams_host_memory() &&
                   in.device != nullptr && out.device != nullptr && rows_aligned16(src) &&
                   rows_aligned16(dst);
  if (last_streamed_) {
    stream_frame(filter, ConstPlane(in.device, src.stride, src.width, src.height, src.samples),
                 Plane{const_cast<uint8_t *>(out.device), dst.stride, dst.width, dst.height,
                       dst.samples});
    return;
  }
  upload(src, in.page_locked);
  const ConstPlane dev_src(dev_in_.data(), dev_in_.pitch(), src.width, src.height, src.samples);
  const Plane dev_dst{dev_out_.data(), dev_out_.pitch(), dst.width, dst.height, dst.samples};
  poison_device(dev_dst, {}, stream_.get());
  filter.enqueue(dev_src, dev_dst, stream_.get());
  if (levels) count_levels(filter, dev_src, dev_dst);
  download(dst, out.page_locked);
  if (levels) *levels = levels_->result();
}

}  // namespace cudafilters

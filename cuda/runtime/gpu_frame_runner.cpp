#include <cudafilters/gpu_frame_runner.h>

#include <cudafilters/cuda_memory.h>

#include "host_transfer.h"
#include "input_checks.h"
#include "poison.h"
#include "runner_testing.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

namespace cudafilters {

namespace {

// Kernels reach bus bandwidth on host memory only with wide accesses.
bool rows_aligned16(ConstPlane plane) {
  return reinterpret_cast<uintptr_t>(plane.data) % 16 == 0 && plane.stride % 16 == 0;
}

}  // namespace

bool is_page_locked(ConstPlane plane) { return locate(plane).page_locked; }

struct GpuFrameRunner::Impl {
  explicit Impl(const RunnerOptions &options);

  // src and dst: device addresses of mapped page-locked host planes; queues
  // the frame without waiting for it.
  void queue_streamed(GpuPlaneFilter &filter, ConstPlane src, Plane dst);
  // Queues on carry_stream the DMAs of the carried planes that are
  // page-locked on both sides, through device memory (the copy engines do
  // not copy host to host), where `by_dma`; returns whether it queued any.
  // If it throws, nothing it queued is still running.
  bool queue_carried_dma(const CarriedPlanes &carried, bool by_dma);
  // Copies on the calling thread the carried planes that queue_carried_dma
  // left.
  void copy_carried_on_host(const CarriedPlanes &carried) const;
  void upload(ConstPlane src, bool page_locked);
  // Queues the level counts of the planes the filter's statistics describe
  // (src and dst, device planes, unless it says otherwise).
  void count_levels(const GpuPlaneFilter &filter, ConstPlane src, ConstPlane dst);
  // Filters one host frame of process_host, carried planes left by
  // queue_carried_dma copied on the host meanwhile, and waits for it, and
  // for the carried planes' DMAs where `carried_by_dma`. Streams it only
  // where `may_stream` (the route allows it, not in place).
  void filter_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst, const CarriedPlanes &carried,
                   FrameLevels *levels, bool may_stream, bool carried_by_dma);
  // Has `stream` wait, after the work queued on it so far, for the carried
  // planes' DMAs: the frame's one paced wait then covers them too. (Waited
  // for on their own after it, they were polled for: 114 us of CPU time a
  // frame for eight processes under MPS, docs/deployment.md.)
  void join_carried(cudaStream_t stream);
  // The filter's device state is ordered by the stream its frames run on:
  // before a frame goes to another stream than the last one, the last one's
  // frames finish.
  void switch_to(cudaStream_t stream);
  // Waits on the host for the work queued on `stream` so far, through
  // `pace` where given (see wait_for and PacedWait).
  void wait_for_stream(cudaStream_t stream, PacedWait *pace = nullptr);
  void order_after(cudaStream_t first, cudaStream_t then);
  void synchronize();
  // An output over its source is not poisoned: that would overwrite the
  // frame filtered (the filter takes or refuses such an output).
  void poison_device(ConstPlane src, Plane dst, const CarriedPlanes &carried,
                     cudaStream_t stream);

  Stream stream_;
  // The stream the last frame was queued on; null when none is pending.
  cudaStream_t last_stream_ = nullptr;
  DevicePlane dev_in_;
  DevicePlane dev_out_;
  std::unique_ptr<HostTransfer> transfer_;
  // Recorded on a stream to wait for it from the host.
  Event stream_done_{cudaEventDisableTiming};
  // The wait at the end of a frame.
  PacedWait frame_done_;
  // Reused by order_after: a wait binds to the event's state when queued.
  Event link_{cudaEventDisableTiming};
  // Created on the first frame that asks for levels.
  std::unique_ptr<LevelCounterGpu> levels_;
  // Carried planes' copies between page-locked planes: created on the first
  // such frame, beside the filter's stream so that they overlap it.
  std::unique_ptr<Stream> carry_stream_;
  std::vector<DevicePlane> carry_dev_;
  // Whether each carried plane of the frame goes by DMA.
  std::vector<bool> carry_by_dma_;
  Event carry_done_{kHostWaitEventFlags};
  RunnerOptions options_;
  // Whether the last process_host streamed host memory.
  bool last_streamed_ = false;
};

GpuFrameRunner::Impl::Impl(const RunnerOptions &options)
    : transfer_(std::make_unique<HostTransfer>(options.host_wait)), frame_done_(options.host_wait),
      options_(options) {}

GpuFrameRunner::GpuFrameRunner(const RunnerOptions &options)
    : impl_(std::make_unique<Impl>(options)) {}

GpuFrameRunner::~GpuFrameRunner() = default;

bool GpuFrameRunnerAccess::last_frame_streamed(const GpuFrameRunner &runner) {
  return runner.impl_->last_streamed_;
}

void GpuFrameRunner::reserve(int width, int height, int bytes_per_sample) {
  const int row = width * bytes_per_sample;
  impl_->dev_in_.reserve(row, height);
  impl_->dev_out_.reserve(row, height);
  impl_->transfer_->reserve(static_cast<size_t>(row) * height);
}

void GpuFrameRunner::Impl::upload(ConstPlane src, bool page_locked) {
  transfer_->upload(src, page_locked, dev_in_.data(), dev_in_.pitch(), stream_.get());
}

void GpuFrameRunner::Impl::count_levels(const GpuPlaneFilter &filter, ConstPlane src,
                                        ConstPlane dst) {
  if (!levels_) levels_ = std::make_unique<LevelCounterGpu>();
  filter.statistics_planes(src, dst);
  levels_->enqueue(src, dst, stream_.get());
}

void GpuFrameRunner::Impl::switch_to(cudaStream_t stream) {
  if (last_stream_ != nullptr && last_stream_ != stream) wait_for_stream(last_stream_);
  last_stream_ = stream;
}

void GpuFrameRunner::Impl::wait_for_stream(cudaStream_t stream, PacedWait *pace) {
  CUDAFILTERS_CHECK(cudaEventRecord(stream_done_.get(), stream));
  if (pace) {
    pace->wait(stream_done_.get(), stream);
  } else {
    wait_for(stream_done_.get());
  }
}

void GpuFrameRunner::Impl::order_after(cudaStream_t first, cudaStream_t then) {
  CUDAFILTERS_CHECK(cudaEventRecord(link_.get(), first));
  CUDAFILTERS_CHECK(cudaStreamWaitEvent(then, link_.get(), 0));
}

void GpuFrameRunner::order_after(cudaStream_t first, cudaStream_t then) {
  impl_->order_after(first, then);
}

void GpuFrameRunner::check_queued_work() {
  cudafilters::check_queued_work(impl_->last_stream_ != nullptr ? impl_->last_stream_
                                                                : impl_->stream_.get());
}

void GpuFrameRunner::Impl::synchronize() {
  if (last_stream_ != nullptr) wait_for_stream(last_stream_, &frame_done_);
  last_stream_ = nullptr;
}

void GpuFrameRunner::synchronize() { impl_->synchronize(); }

void GpuFrameRunner::Impl::poison_device(ConstPlane src, Plane dst, const CarriedPlanes &carried,
                                         cudaStream_t stream) {
  if (!options_.poison_outputs) return;
  if (!planes_overlap(src, dst)) poison_device_plane(dst, stream);
  for (const CarriedPlane &p : carried)
    if (!planes_overlap(p.src, p.dst)) poison_device_plane(p.dst, stream);
}

void GpuFrameRunner::process_device(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                                    const CarriedPlanes &carried, FrameLevels *levels,
                                    cudaStream_t dst_users) {
  check_plane_pair(src, dst);
  Impl &m = *impl_;
  m.switch_to(m.stream_.get());
  if (dst_users != nullptr) m.order_after(dst_users, m.stream_.get());
  m.poison_device(src, dst, carried, m.stream_.get());
  filter.enqueue_carrying(src, dst, carried, m.stream_.get());
  if (levels) m.count_levels(filter, src, dst);
  m.synchronize();
  if (levels) *levels = m.levels_->result();
}

void GpuFrameRunner::enqueue_device(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                                    const CarriedPlanes &carried, cudaStream_t stream) {
  check_plane_pair(src, dst);
  Impl &m = *impl_;
  if (stream == nullptr) stream = m.stream_.get();
  m.switch_to(stream);
  m.poison_device(src, dst, carried, stream);
  filter.enqueue_carrying(src, dst, carried, stream);
}

void GpuFrameRunner::Impl::queue_streamed(GpuPlaneFilter &filter, ConstPlane src, Plane dst) {
  poison_device(src, dst, {}, stream_.get());
  filter.enqueue_streaming(
      src, dst, Plane{dev_in_.data(), dev_in_.pitch(), src.width, src.height, src.samples},
      stream_.get());
}

bool GpuFrameRunner::Impl::queue_carried_dma(const CarriedPlanes &carried, bool by_dma) {
  carry_by_dma_.assign(carried.size(), false);
  bool any = false;
  for (size_t i = 0; by_dma && i < carried.size(); ++i)
    carry_by_dma_[i] = locate(carried[i].src).page_locked && locate(carried[i].dst).page_locked;
  for (bool dma : carry_by_dma_) any = any || dma;
  if (!any) return false;
  if (!carry_stream_) carry_stream_ = std::make_unique<Stream>();
  if (carry_dev_.size() < carried.size()) carry_dev_.resize(carried.size());
  const cudaStream_t on = carry_stream_->get();
  try {
    for (size_t i = 0; i < carried.size(); ++i) {
      if (!carry_by_dma_[i]) continue;
      const ConstPlane &in = carried[i].src;
      const Plane &out = carried[i].dst;
      const size_t w = in.row_bytes();
      carry_dev_[i].reserve(static_cast<int>(w), in.height);
      CUDAFILTERS_CHECK(cudaMemcpy2DAsync(carry_dev_[i].data(), carry_dev_[i].pitch(), in.data,
                                          in.stride, w, in.height, cudaMemcpyHostToDevice, on));
      CUDAFILTERS_CHECK(cudaMemcpy2DAsync(out.data, out.stride, carry_dev_[i].data(),
                                          carry_dev_[i].pitch(), w, in.height,
                                          cudaMemcpyDeviceToHost, on));
    }
    CUDAFILTERS_CHECK(cudaEventRecord(carry_done_.get(), on));
  } catch (...) {
    // No copy may write the caller's planes once it has them back.
    settle(on);
    throw;
  }
  return true;
}

void GpuFrameRunner::Impl::copy_carried_on_host(const CarriedPlanes &carried) const {
  for (size_t i = 0; i < carried.size(); ++i) {
    // A plane carried onto itself is where it belongs.
    if (carry_by_dma_[i] || carried[i].src.data == carried[i].dst.data) continue;
    const ConstPlane &in = carried[i].src;
    copy_rows(in.data, in.stride, carried[i].dst.data, carried[i].dst.stride, in.row_bytes(),
              static_cast<size_t>(in.height));
  }
}

void GpuFrameRunner::process_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                                  FrameLevels *levels, HostRoute route) {
  process_host(filter, src, dst, {}, levels, route);
}

void GpuFrameRunner::process_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                                  const CarriedPlanes &carried, FrameLevels *levels,
                                  HostRoute route) {
  check_plane_pair(src, dst);
  for (const CarriedPlane &c : carried)
    if (c.src.row_bytes() != c.dst.row_bytes() || c.src.height != c.dst.height)
      throw std::invalid_argument("carried source and output planes differ in size");
  Impl &m = *impl_;
  // A frame filtered in place is its own source: it is copied to the
  // device before anything writes it, never streamed.
  const bool in_place = planes_overlap(src, dst);
  if (m.options_.poison_outputs) {
    if (!in_place) poison_host_plane(dst);
    for (const CarriedPlane &c : carried)
      if (!planes_overlap(c.src, c.dst)) poison_host_plane(c.dst);
  }
  reserve(src.width, src.height, src.samples.bytes);
  m.switch_to(m.stream_.get());
  // The carried planes' DMAs are queued first, on a stream of their own: if
  // this throws, the filter's stream has nothing of this frame.
  const bool carried_by_dma = m.queue_carried_dma(carried, route.carried_by_dma);
  try {
    m.filter_host(filter, src, dst, carried, levels, route.stream && !in_place, carried_by_dma);
  } catch (...) {
    // Nothing queued for this frame may read or write the caller's planes
    // once the caller has them back: kernels streaming them, their copies.
    settle(m.stream_.get());
    if (carried_by_dma) settle(m.carry_stream_->get());
    throw;
  }
  // With no luma to download, no download's event covers the carried
  // planes' DMAs: they are waited for themselves.
  if (carried_by_dma && (dst.width <= 0 || dst.height <= 0)) wait_for(m.carry_done_.get());
  if (levels) *levels = m.levels_->result();
}

void GpuFrameRunner::Impl::join_carried(cudaStream_t stream) {
  CUDAFILTERS_CHECK(cudaStreamWaitEvent(stream, carry_done_.get(), 0));
}

void GpuFrameRunner::Impl::filter_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                                       const CarriedPlanes &carried, FrameLevels *levels,
                                       bool may_stream, bool carried_by_dma) {
  const HostResidence in = locate(src), out = locate(dst);
  last_streamed_ = may_stream && !levels &&
                   filter.streams_host_memory() && in.device != nullptr &&
                   out.device != nullptr && rows_aligned16(src) && rows_aligned16(dst);
  // The carried planes left to the host are copied while the GPU works; a
  // copy cannot fail, so nothing queued is left behind by a throw between.
  if (last_streamed_) {
    queue_streamed(filter, ConstPlane(in.device, src.stride, src.width, src.height, src.samples),
                   Plane{const_cast<uint8_t *>(out.device), dst.stride, dst.width, dst.height,
                         dst.samples});
    copy_carried_on_host(carried);
    if (carried_by_dma) join_carried(stream_.get());
    synchronize();
    return;
  }
  upload(src, in.page_locked);
  const ConstPlane dev_src(dev_in_.data(), dev_in_.pitch(), src.width, src.height, src.samples);
  const Plane dev_dst{dev_out_.data(), dev_out_.pitch(), dst.width, dst.height, dst.samples};
  poison_device(dev_src, dev_dst, {}, stream_.get());
  filter.enqueue(dev_src, dev_dst, stream_.get());
  if (levels) count_levels(filter, dev_src, dev_dst);
  // The download's events are what the host waits for: they come after the
  // join.
  if (carried_by_dma) join_carried(stream_.get());
  transfer_->queue_download(dev_out_.data(), dev_out_.pitch(), dst, out.page_locked,
                            stream_.get());
  copy_carried_on_host(carried);
  transfer_->finish_downloads();
}

}  // namespace cudafilters

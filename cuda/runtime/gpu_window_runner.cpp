#include <cudafilters/gpu_window_runner.h>

#include <cudafilters/cuda_memory.h>

#include "device_copy.h"
#include "frame_store.h"
#include "frame_window.h"
#include "host_transfer.h"
#include "poison.h"

#include <stdexcept>

namespace cudafilters {

namespace {

size_t frame_bytes(const FrameBytes &b) {
  size_t n = 0;
  for (int i = 0; i < b.count; ++i) n += size_t(b.planes[i].width) * b.planes[i].height;
  return n;
}

}  // namespace

struct GpuWindowRunner::Impl {
  explicit Impl(const RunnerOptions &options);

  // Takes the frame into the next slot with copy(planes, count); a frame
  // whose copy fails leaves the window as it was.
  template <typename Copy>
  void push(const FramePlanes &src, const Copy &copy);
  void filter_next(GpuWindowFilter &filter, const FramePlanesOut &dst, FrameLevels *levels);
  // Filters the window `views` (count frames, the one at center filtered)
  // into dst on the runner's stream, counting levels where asked.
  void filter_window(GpuWindowFilter &filter, const FramePlanes *views, int count, int center,
                     const FramePlanesOut &dst, FrameLevels *levels);
  void order_after(cudaStream_t first, cudaStream_t then);
  // Waits on the host for the runner's stream, through `pace` where given.
  void synchronize(PacedWait *pace = nullptr);
  // Queues the upload of host planes into the next slot; returns whether a
  // plane is page-locked, read by the copy itself (the caller waits for it
  // before the memory is reused).
  bool upload(const FramePlanes &src);
  void poison(const FramePlanesOut &dst);

  Stream stream_;
  FrameWindow window_;
  DeviceFrameStore frames_;
  // The output on the device for host frames.
  DeviceFrameStore out_;
  std::unique_ptr<HostTransfer> transfer_;
  std::unique_ptr<LevelCounterGpu> levels_;
  Event link_{cudaEventDisableTiming};
  Event done_{cudaEventDisableTiming};
  // The host's waits, one for each place: a frame's upload from page-locked
  // memory, its copy from device memory on the runner's stream, and a frame
  // filtered into device memory.
  PacedWait upload_done_, device_copy_done_, frame_done_;
  // A push_device_unsettled copy that no host wait has covered yet.
  bool push_unsettled_ = false;
  RunnerOptions options_;
};

GpuWindowRunner::Impl::Impl(const RunnerOptions &options)
    : transfer_(std::make_unique<HostTransfer>(options.host_wait)),
      upload_done_(options.host_wait), device_copy_done_(options.host_wait),
      frame_done_(options.host_wait), options_(options) {}

GpuWindowRunner::GpuWindowRunner(const RunnerOptions &options)
    : impl_(std::make_unique<Impl>(options)) {}

GpuWindowRunner::~GpuWindowRunner() = default;

void GpuWindowRunner::reset(int radius) {
  impl_->synchronize();
  impl_->window_.reset(radius);
}

bool GpuWindowRunner::waiting() const { return impl_->window_.waiting(); }
bool GpuWindowRunner::ready(bool draining) const { return impl_->window_.ready(draining); }
void GpuWindowRunner::drop_next() { impl_->window_.pop(); }

void GpuWindowRunner::check_queued_work() {
  cudafilters::check_queued_work(impl_->stream_.get());
}

void GpuWindowRunner::synchronize() { impl_->synchronize(); }

void GpuWindowRunner::Impl::order_after(cudaStream_t first, cudaStream_t then) {
  CUDAFILTERS_CHECK(cudaEventRecord(link_.get(), first));
  CUDAFILTERS_CHECK(cudaStreamWaitEvent(then, link_.get(), 0));
}

void GpuWindowRunner::Impl::synchronize(PacedWait *pace) {
  CUDAFILTERS_CHECK(cudaEventRecord(done_.get(), stream_.get()));
  if (pace) {
    pace->wait(done_.get(), stream_.get());
  } else {
    wait_for(done_.get());
  }
  push_unsettled_ = false;
}

template <typename Copy>
void GpuWindowRunner::Impl::push(const FramePlanes &src, const Copy &copy) {
  const int slot = window_.push();
  try {
    Plane planes[3];
    int count = 0;
    frames_.prepare(slot, src, planes, &count);
    copy(planes, count);
  } catch (...) {
    // A frame not copied whole is no neighbour of later frames.
    window_.drop_newest();
    throw;
  }
}

bool GpuWindowRunner::Impl::upload(const FramePlanes &src) {
  const FrameBytes bytes(src);
  transfer_->reserve(frame_bytes(bytes));
  bool page_locked = false;
  push(src, [&](const Plane (&planes)[3], int count) {
    size_t stage_at = 0;
    for (int i = 0; i < count; ++i) {
      const bool locked = locate(bytes.planes[i]).page_locked;
      try {
        transfer_->upload(bytes.planes[i], locked, planes[i].data, planes[i].stride,
                          stream_.get(), stage_at);
      } catch (...) {
        // Earlier planes' copies may still read the caller's memory.
        if (page_locked) settle(stream_.get());
        throw;
      }
      page_locked = page_locked || locked;
      stage_at += size_t(bytes.planes[i].width) * bytes.planes[i].height;
    }
  });
  return page_locked;
}

void GpuWindowRunner::push_host(const FramePlanes &src) {
  Impl &m = *impl_;
  // A page-locked plane is read by the copy itself: it must be done before
  // the caller reuses the memory.
  if (m.upload(src)) m.synchronize(&m.upload_done_);
}

void GpuWindowRunner::filter_host(GpuWindowFilter &filter, const FramePlanes &src,
                                  const FramePlanesOut &dst, FrameLevels *levels) {
  Impl &m = *impl_;
  if (m.window_.radius() != 0 || m.window_.waiting())
    throw std::logic_error("filter_host filters a window of one frame, with none held");
  const bool page_locked = m.upload(src);
  try {
    // The output's wait comes after the upload on the same stream: it is
    // the upload's wait too, where there is an output to wait for.
    output_host(filter, dst, levels);
    if (page_locked && frame_bytes(FrameBytes(dst.as_const())) == 0) m.synchronize();
  } catch (...) {
    // The upload may still read the caller's memory, and a frame that
    // failed before it was filtered is not held for the next call.
    if (page_locked) settle(m.stream_.get());
    if (m.window_.waiting()) m.window_.drop_newest();
    throw;
  }
}

void GpuWindowRunner::push_device(const FramePlanes &src, cudaStream_t stream) {
  Impl &m = *impl_;
  const FrameBytes bytes(src);
  m.push(src, [&](const Plane (&planes)[3], int count) {
    if (stream) {
      // The slot was last read by the runner's earlier kernels.
      m.order_after(m.stream_.get(), stream);
      enqueue_device_copy(bytes.planes, planes, count, stream);
      m.order_after(stream, m.stream_.get());
      return;
    }
    // Possibly another device's memory: the runtime's copies cross devices.
    for (int i = 0; i < count; ++i)
      CUDAFILTERS_CHECK(cudaMemcpy2DAsync(planes[i].data, planes[i].stride, bytes.planes[i].data,
                                          bytes.planes[i].stride, size_t(bytes.planes[i].width),
                                          bytes.planes[i].height, cudaMemcpyDefault,
                                          m.stream_.get()));
    m.synchronize(&m.device_copy_done_);
  });
}

void GpuWindowRunner::push_device_unsettled(const FramePlanes &src) {
  Impl &m = *impl_;
  const FrameBytes bytes(src);
  m.push(src, [&](const Plane (&planes)[3], int count) {
    enqueue_device_copy(bytes.planes, planes, count, m.stream_.get());
    m.push_unsettled_ = true;
  });
}

void GpuWindowRunner::settle_push() {
  if (impl_->push_unsettled_) impl_->synchronize(&impl_->device_copy_done_);
}

bool GpuWindowRunner::push_settled() const { return !impl_->push_unsettled_; }

void GpuWindowRunner::Impl::poison(const FramePlanesOut &dst) {
  if (!options_.poison_outputs) return;
  const FrameBytes bytes(dst.as_const());
  for (int i = 0; i < bytes.count; ++i) poison_device_plane(writable(bytes.planes[i]), stream_.get());
}

void GpuWindowRunner::Impl::filter_window(GpuWindowFilter &filter, const FramePlanes *views,
                                          int count, int center, const FramePlanesOut &dst,
                                          FrameLevels *levels) {
  poison(dst);
  filter.enqueue_window(views, count, center, dst, stream_.get());
  if (levels) {
    if (!levels_) levels_ = std::make_unique<LevelCounterGpu>();
    FramePlanes in = views[center];
    ConstPlane out = dst.luma;
    filter.statistics_frame(in, out);
    levels_->enqueue(in.luma, out, stream_.get(), &in);
  }
}

void GpuWindowRunner::Impl::filter_next(GpuWindowFilter &filter, const FramePlanesOut &dst,
                                        FrameLevels *levels) {
  const FrameWindow::Window w = window_.next();
  FramePlanes views[2 * FrameWindow::kMaxRadius + 1];
  for (int i = 0; i < w.count; ++i) views[i] = frames_.view(w.slots[i]);
  try {
    filter_window(filter, views, w.count, w.center, dst, levels);
  } catch (...) {
    // As CpuWindowRunner: the window moves on, or its slot stays taken.
    window_.pop();
    throw;
  }
  window_.pop();
}

void GpuWindowRunner::output_host(GpuWindowFilter &filter, const FramePlanesOut &dst,
                                  FrameLevels *levels) {
  Impl &m = *impl_;
  if (m.options_.poison_outputs) poison_host_frame(dst);
  const FrameBytes host(dst.as_const());
  // The frames may have come from the device (push_device), which stages
  // nothing.
  m.transfer_->reserve(frame_bytes(host));
  Plane dev[3];
  int count = 0;
  m.out_.prepare(0, dst.as_const(), dev, &count);
  m.filter_next(filter, relocate_out(dst.as_const(), dev), levels);
  size_t stage_at = 0;
  for (int i = 0; i < count; ++i) {
    const ConstPlane &p = host.planes[i];
    m.transfer_->queue_download(dev[i].data, dev[i].stride, writable(p), locate(p).page_locked,
                                m.stream_.get(), stage_at);
    stage_at += size_t(p.width) * p.height;
  }
  m.transfer_->finish_downloads();
  if (levels) *levels = m.levels_->result();
}

void GpuWindowRunner::output_device(GpuWindowFilter &filter, const FramePlanesOut &dst,
                                    cudaStream_t dst_users, bool queue, FrameLevels *levels) {
  if (queue && (dst_users == nullptr || levels != nullptr))
    throw std::invalid_argument("queued output needs the output's stream and no levels");
  Impl &m = *impl_;
  if (dst_users != nullptr) m.order_after(dst_users, m.stream_.get());
  m.filter_next(filter, dst, levels);
  if (queue) {
    m.order_after(m.stream_.get(), dst_users);
    return;
  }
  m.synchronize(&m.frame_done_);
  if (levels) *levels = m.levels_->result();
}

void GpuWindowRunner::filter_device(GpuWindowFilter &filter, const FramePlanes &src,
                                    cudaStream_t src_stream, const FramePlanesOut &dst,
                                    cudaStream_t dst_users, bool queue, FrameLevels *levels) {
  if (queue && (dst_users == nullptr || levels != nullptr))
    throw std::invalid_argument("queued output needs the output's stream and no levels");
  Impl &m = *impl_;
  // The filter's own state (noise history, strength) is ordered by the
  // runner's stream, whichever streams the frames come on.
  if (src_stream != nullptr) m.order_after(src_stream, m.stream_.get());
  if (dst_users != nullptr && dst_users != src_stream) m.order_after(dst_users, m.stream_.get());
  m.filter_window(filter, &src, 1, 0, dst, levels);
  if (queue) {
    m.order_after(m.stream_.get(), dst_users);
    // The producer's next writes into src come after these reads.
    if (src_stream != nullptr && src_stream != dst_users) m.order_after(m.stream_.get(), src_stream);
    return;
  }
  m.synchronize(&m.frame_done_);
  if (levels) *levels = m.levels_->result();
}

}  // namespace cudafilters

#include <cudafilters/gpu_frame_runner.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace cudafilters {

namespace {

// A host wait polls its event for up to kPollBeforeSleep: a frame of the
// short filters through system memory (upload, kernel, download) is done
// within it at sizes up to 4K, and its latency then has no wake-up in it. A
// longer wait (cudanlm's kernel takes about a millisecond at 1080p, and a
// frame may queue behind other streams' on a busy GPU) then checks every
// kSleepStep and sleeps in between, so that many streams waiting on one GPU
// do not each keep a CPU core spinning, as CUDA's default scheduling would.
// Waiting on a blocking-sync event instead was slower on the H100 host: one
// cudanlm stream through system memory ran at 628 fps against 690-765
// (docs/results/host-waits).
constexpr std::chrono::microseconds kPollBeforeSleep{500};
constexpr std::chrono::microseconds kSleepStep{50};

// True once the work before `event` is done.
bool event_done(cudaEvent_t event) {
  const cudaError_t state = cudaEventQuery(event);
  if (state == cudaSuccess) return true;
  if (state != cudaErrorNotReady) check_cuda(state, "cudaEventQuery");
  // "Not ready" is no error: it must not linger as the thread's last error.
  (void)cudaGetLastError();
  return false;
}

// Returns once the work before `event` is done.
void wait_for(cudaEvent_t event) {
  const auto sleep_after = std::chrono::steady_clock::now() + kPollBeforeSleep;
  while (!event_done(event))
    if (std::chrono::steady_clock::now() >= sleep_after) std::this_thread::sleep_for(kSleepStep);
}

// Poisoning the device output before every frame makes pixels that a kernel
// failed to write show up in tests as 0xA5 instead of stale data from the
// previous frame. Enabled by the test suites through the environment.
bool poison_requested() {
  const char *v = std::getenv("CUDAFILTERS_POISON_OUTPUT");
  return v != nullptr && v[0] != '\0' && v[0] != '0';
}

constexpr int kPoisonByte = 0xA5;

// The attributes of a page-locked host address; false for any other address.
bool page_locked_attributes(const void *p, cudaPointerAttributes *attr) {
  if (cudaPointerGetAttributes(attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // not a CUDA pointer: clear the non-sticky error
    return false;
  }
  return attr->type == cudaMemoryTypeHost;
}

const uint8_t *last_byte(ConstPlane plane) {
  return plane.data + (plane.height - 1) * plane.stride + plane.row_bytes() - 1;
}

void copy_rows(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
               size_t width_bytes, int height) {
  if (src_stride == dst_stride && src_stride == width_bytes) {
    std::memcpy(dst, src, width_bytes * height);
    return;
  }
  for (int y = 0; y < height; ++y)
    std::memcpy(dst + y * dst_stride, src + y * src_stride, width_bytes);
}

// Where a host plane lives: looked up once per plane and frame, for both the
// choice to stream and the way to copy.
struct HostResidence {
  bool page_locked = false;
  // The plane's address for kernels, when the whole plane lies in one
  // allocation mapped for the current device; null otherwise.
  const uint8_t *device = nullptr;
};

HostResidence locate(ConstPlane plane) {
  HostResidence where;
  cudaPointerAttributes first{}, last{};
  if (!page_locked_attributes(plane.data, &first) ||
      !page_locked_attributes(last_byte(plane), &last))
    return where;
  where.page_locked = true;
  const auto *first_dev = static_cast<const uint8_t *>(first.devicePointer);
  const auto *last_dev = static_cast<const uint8_t *>(last.devicePointer);
  if (first_dev != nullptr && last_dev != nullptr &&
      last_dev - first_dev == last_byte(plane) - plane.data)
    where.device = first_dev;
  return where;
}

// Kernels reach bus bandwidth on host memory only with wide accesses.
bool rows_aligned16(ConstPlane plane) {
  return reinterpret_cast<uintptr_t>(plane.data) % 16 == 0 && plane.stride % 16 == 0;
}

}  // namespace

bool is_page_locked(ConstPlane plane) { return locate(plane).page_locked; }

GpuFrameRunner::GpuFrameRunner(HostPath host_path)
    : host_path_(host_path), poison_outputs_(poison_requested()) {}

void GpuFrameRunner::reserve(int width, int height, int bytes_per_sample) {
  const int row = width * bytes_per_sample;
  dev_in_.reserve(row, height);
  dev_out_.reserve(row, height);
  const size_t bytes = static_cast<size_t>(row) * height;
  stage_in_.reserve(bytes);
  stage_out_.reserve(bytes);
}

// Rows per staging chunk: about 512 KB, enough for the DMA engine to run at
// full speed, small enough for host copies and transfers to overlap.
static int rows_per_chunk(size_t row_bytes) {
  constexpr size_t kChunkBytes = 512 * 1024;
  const size_t rows = kChunkBytes / row_bytes;
  return rows < 1 ? 1 : static_cast<int>(rows);
}

void GpuFrameRunner::upload(ConstPlane src, bool page_locked) {
  const size_t w = src.row_bytes();
  if (page_locked) {
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev_in_.data(), dev_in_.pitch(), src.data, src.stride, w,
                                        src.height, cudaMemcpyHostToDevice, stream_.get()));
    return;
  }
  const int chunk = rows_per_chunk(w);
  for (int y = 0; y < src.height; y += chunk) {
    const int rows = std::min(chunk, src.height - y);
    uint8_t *stage = stage_in_.data() + y * w;
    copy_rows(src.data + y * src.stride, src.stride, stage, w, w, rows);
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev_in_.data() + y * dev_in_.pitch(), dev_in_.pitch(),
                                        stage, w, w, rows, cudaMemcpyHostToDevice, stream_.get()));
  }
}

void GpuFrameRunner::download(Plane dst, bool page_locked) {
  const size_t w = dst.row_bytes();
  if (page_locked) {
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dst.data, dst.stride, dev_out_.data(), dev_out_.pitch(), w,
                                        dst.height, cudaMemcpyDeviceToHost, stream_.get()));
    wait_for_stream(stream_.get());
    return;
  }
  const int chunk = rows_per_chunk(w);
  const size_t chunks = static_cast<size_t>((dst.height + chunk - 1) / chunk);
  while (chunk_done_.size() < chunks) chunk_done_.emplace_back(kHostWaitEventFlags);
  for (size_t c = 0; c < chunks; ++c) {
    const int y = static_cast<int>(c) * chunk;
    const int rows = std::min(chunk, dst.height - y);
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(stage_out_.data() + y * w, w,
                                        dev_out_.data() + y * dev_out_.pitch(), dev_out_.pitch(),
                                        w, rows, cudaMemcpyDeviceToHost, stream_.get()));
    CUDAFILTERS_CHECK(cudaEventRecord(chunk_done_[c].get(), stream_.get()));
  }
  // Waiting on the last chunk's event also covers every kernel before it.
  for (size_t c = 0; c < chunks; ++c) {
    const int y = static_cast<int>(c) * chunk;
    const int rows = std::min(chunk, dst.height - y);
    wait_for(chunk_done_[c].get());
    copy_rows(stage_out_.data() + y * w, w, dst.data + y * dst.stride, dst.stride, w, rows);
  }
}

void GpuFrameRunner::count_levels(ConstPlane src, ConstPlane dst) {
  if (!levels_) levels_ = std::make_unique<LevelCounterGpu>();
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

void GpuFrameRunner::synchronize() {
  if (last_stream_ != nullptr) wait_for_stream(last_stream_);
  last_stream_ = nullptr;
}

void GpuFrameRunner::poison_device(Plane dst, const CarriedPlanes &carried,
                                   cudaStream_t stream) {
  if (!poison_outputs_) return;
  CUDAFILTERS_CHECK(cudaMemset2DAsync(dst.data, dst.stride, kPoisonByte, dst.row_bytes(),
                                      dst.height, stream));
  for (const CarriedPlane &p : carried)
    CUDAFILTERS_CHECK(cudaMemset2DAsync(p.dst.data, p.dst.stride, kPoisonByte,
                                        static_cast<size_t>(p.dst.width), p.dst.height, stream));
}

void GpuFrameRunner::process_device(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                                    const CarriedPlanes &carried, FrameLevels *levels) {
  switch_to(stream_.get());
  poison_device(dst, carried, stream_.get());
  filter.enqueue_carrying(src, dst, carried, stream_.get());
  if (levels) count_levels(src, dst);
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
  if (poison_outputs_)
    CUDAFILTERS_CHECK(cudaMemset2DAsync(dst.data, dst.stride, kPoisonByte, dst.row_bytes(),
                                        dst.height, stream_.get()));
  filter.enqueue_streaming(
      src, dst, Plane{dev_in_.data(), dev_in_.pitch(), src.width, src.height, src.samples},
      stream_.get());
  synchronize();
}

void GpuFrameRunner::process_host(GpuPlaneFilter &filter, ConstPlane src, Plane dst,
                                  FrameLevels *levels) {
  if (src.samples != dst.samples || src.width != dst.width || src.height != dst.height)
    throw std::invalid_argument("source and output planes differ in size or layout");
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
  if (poison_outputs_)
    CUDAFILTERS_CHECK(cudaMemset2DAsync(dev_out_.data(), dev_out_.pitch(), kPoisonByte,
                                        dst.row_bytes(), dst.height, stream_.get()));
  const ConstPlane dev_src(dev_in_.data(), dev_in_.pitch(), src.width, src.height, src.samples);
  const Plane dev_dst{dev_out_.data(), dev_out_.pitch(), dst.width, dst.height, dst.samples};
  filter.enqueue(dev_src, dev_dst, stream_.get());
  if (levels) count_levels(dev_src, dev_dst);
  download(dst, out.page_locked);
  if (levels) *levels = levels_->result();
}

}  // namespace cudafilters

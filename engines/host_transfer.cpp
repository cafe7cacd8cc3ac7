#include "host_transfer.h"

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
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

// Polls `event` until the work before it is done, then sleeping between
// polls; returns cudaSuccess then, or the error the event reports.
cudaError_t wait_event(cudaEvent_t event) {
  const auto sleep_after = std::chrono::steady_clock::now() + kPollBeforeSleep;
  for (;;) {
    const cudaError_t state = cudaEventQuery(event);
    if (state != cudaErrorNotReady) return state;
    // "Not ready" is no error: it must not linger as the thread's last error.
    (void)cudaGetLastError();
    if (std::chrono::steady_clock::now() >= sleep_after) std::this_thread::sleep_for(kSleepStep);
  }
}

// Waits for the work queued on `stream` so far, on a path that is already
// failing: errors are dropped (a sticky one ends that work anyway).
void settle(cudaStream_t stream) noexcept {
  if (cudaStreamSynchronize(stream) != cudaSuccess) (void)cudaGetLastError();
}

// The attributes of a page-locked host address; false for any other address.
bool page_locked_attributes(const void *p, cudaPointerAttributes *attr) {
  if (cudaPointerGetAttributes(attr, p) != cudaSuccess) {
    (void)cudaGetLastError();  // not a CUDA pointer: clear the non-sticky error
    return false;
  }
  return attr->type == cudaMemoryTypeHost;
}

// The driver's cuPointerGetAttribute, reached through the runtime (the
// library does not link the driver); null where the driver lacks it.
using PointerGetAttribute = CUresult (*)(void *, CUpointer_attribute, CUdeviceptr);
PointerGetAttribute driver_pointer_get_attribute() {
  static const PointerGetAttribute get = [] {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", &fn, 12000,
                                                           cudaEnableDefault, &found);
#else
    const cudaError_t e =
        cudaGetDriverEntryPoint("cuPointerGetAttribute", &fn, cudaEnableDefault, &found);
#endif
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e == cudaSuccess && found == cudaDriverEntryPointSuccess
               ? reinterpret_cast<PointerGetAttribute>(fn)
               : nullptr;
  }();
  return get;
}

// Whether two page-locked bytes lie in one allocation: 1 yes, 0 no (two
// allocations, whatever lies between them), -1 where the driver cannot
// tell.
int same_allocation(const void *a, const void *b) {
  const PointerGetAttribute get = driver_pointer_get_attribute();
  if (get == nullptr) return -1;
  unsigned long long id_a = 0, id_b = 0;
  if (get(&id_a, CU_POINTER_ATTRIBUTE_BUFFER_ID, reinterpret_cast<CUdeviceptr>(a)) != CUDA_SUCCESS ||
      get(&id_b, CU_POINTER_ATTRIBUTE_BUFFER_ID, reinterpret_cast<CUdeviceptr>(b)) != CUDA_SUCCESS)
    return -1;
  return id_a == id_b ? 1 : 0;
}

bool empty(ConstPlane plane) { return plane.width <= 0 || plane.height <= 0; }

// The last byte of a plane that is not empty.
const uint8_t *last_byte(ConstPlane plane) {
  return plane.data + static_cast<size_t>(plane.height - 1) * plane.stride + plane.row_bytes() - 1;
}

void copy_rows(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
               size_t width_bytes, size_t height) {
  if (src_stride == dst_stride && src_stride == width_bytes) {
    std::memcpy(dst, src, width_bytes * height);
    return;
  }
  for (size_t y = 0; y < height; ++y)
    std::memcpy(dst + y * dst_stride, src + y * src_stride, width_bytes);
}

}  // namespace

HostResidence locate(ConstPlane plane) {
  HostResidence where;
  if (plane.data == nullptr || empty(plane)) return where;
  cudaPointerAttributes first{}, last{};
  if (!page_locked_attributes(plane.data, &first) ||
      !page_locked_attributes(last_byte(plane), &last))
    return where;
  // The first and last bytes say nothing of those between when they lie in
  // two allocations: copied and mapped as one, such a plane could have the
  // GPU read pageable memory between them through an unmapped address.
  if (last_byte(plane) != plane.data && same_allocation(plane.data, last_byte(plane)) == 0)
    return where;
  where.page_locked = true;
  const auto *first_dev = static_cast<const uint8_t *>(first.devicePointer);
  const auto *last_dev = static_cast<const uint8_t *>(last.devicePointer);
  if (first_dev != nullptr && last_dev != nullptr &&
      last_dev - first_dev == last_byte(plane) - plane.data)
    where.device = first_dev;
  return where;
}

void wait_for(cudaEvent_t event) { check_cuda(wait_event(event), "cudaEventQuery"); }

namespace {

// Rows per staging chunk: about 512 KB, enough for the DMA engine to run at
// full speed, small enough for host copies and transfers to overlap.
size_t rows_per_chunk(size_t row_bytes) {
  constexpr size_t kChunkBytes = 512 * 1024;
  return row_bytes >= kChunkBytes ? 1 : kChunkBytes / row_bytes;
}

}  // namespace

HostTransfer::~HostTransfer() {
  if (staged_lo_ < staged_hi_ && wait_event(staged_read_.get()) != cudaSuccess)
    (void)cudaGetLastError();
}

void HostTransfer::staging_read() {
  if (staged_lo_ < staged_hi_) wait_for(staged_read_.get());
  staged_lo_ = staged_hi_ = 0;
}

void HostTransfer::reserve(size_t bytes) {
  if (bytes <= reserved_) return;
  // Growing frees the staging: no copy may still read it. (Downloads are
  // never left in flight.)
  staging_read();
  // A buffer whose growth fails keeps its memory (PinnedBuffer::reserve), so
  // reserved_ stays what both hold.
  stage_in_.reserve(bytes);
  stage_out_.reserve(bytes);
  reserved_ = bytes;
}

void HostTransfer::upload(ConstPlane src, bool page_locked, uint8_t *dst, size_t pitch,
                          cudaStream_t stream, size_t stage_at) {
  if (empty(src)) return;
  const size_t w = src.row_bytes(), height = static_cast<size_t>(src.height);
  if (page_locked) {
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dst, pitch, src.data, src.stride, w, height,
                                        cudaMemcpyHostToDevice, stream));
    return;
  }
  // Copies queued earlier (by this frame's other planes, an earlier frame,
  // or a frame that failed before its downloads) may still read this part
  // of the staging, or read it on another stream.
  const size_t lo = stage_at, hi = stage_at + w * height;
  if (hi > reserved_) throw std::invalid_argument("upload: plane past the end of the staging");
  if (staged_lo_ < staged_hi_ &&
      ((lo < staged_hi_ && staged_lo_ < hi) || stream != staged_stream_))
    staging_read();
  staged_lo_ = staged_lo_ < staged_hi_ ? std::min(staged_lo_, lo) : lo;
  staged_hi_ = std::max(staged_hi_, hi);
  staged_stream_ = stream;
  try {
    const size_t chunk = rows_per_chunk(w);
    for (size_t y = 0; y < height; y += chunk) {
      const size_t rows = std::min(chunk, height - y);
      uint8_t *stage = stage_in_.data() + stage_at + y * w;
      copy_rows(src.data + y * src.stride, src.stride, stage, w, w, rows);
      CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dst + y * pitch, pitch, stage, w, w, rows,
                                          cudaMemcpyHostToDevice, stream));
    }
    CUDAFILTERS_CHECK(cudaEventRecord(staged_read_.get(), stream));
  } catch (...) {
    // The chunks queued before the failure still read the staging.
    if (cudaEventRecord(staged_read_.get(), stream) != cudaSuccess) {
      (void)cudaGetLastError();
      settle(stream);
      staged_lo_ = staged_hi_ = 0;
    }
    throw;
  }
}

void HostTransfer::download(const uint8_t *src, size_t pitch, Plane dst, bool page_locked,
                            cudaStream_t stream, size_t stage_at) {
  queue_download(src, pitch, dst, page_locked, stream, stage_at);
  finish_downloads();
}

void HostTransfer::drop_downloads(cudaStream_t also) noexcept {
  settle(also);
  for (const QueuedDownload &q : queued_)
    if (q.stream != also) settle(q.stream);
  queued_.clear();
  events_used_ = 0;
}

void HostTransfer::queue_download(const uint8_t *src, size_t pitch, Plane dst, bool page_locked,
                                  cudaStream_t stream, size_t stage_at) {
  try {
    queue_plane(src, pitch, dst, page_locked, stream, stage_at);
  } catch (...) {
    // A frame that fails half-queued is not finished: its planes are
    // dropped, once the copies already queued for them have run, so that
    // none writes a host plane after the caller has it back.
    drop_downloads(stream);
    throw;
  }
}

void HostTransfer::queue_plane(const uint8_t *src, size_t pitch, Plane dst, bool page_locked,
                               cudaStream_t stream, size_t stage_at) {
  if (empty(dst)) return;
  const size_t w = dst.row_bytes(), height = static_cast<size_t>(dst.height);
  QueuedDownload q{dst, nullptr, height, events_used_, 1, stream};
  if (page_locked) {
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dst.data, dst.stride, src, pitch, w, height,
                                        cudaMemcpyDeviceToHost, stream));
  } else {
    if (stage_at + w * height > reserved_)
      throw std::invalid_argument("download: plane past the end of the staging");
    q.stage = stage_out_.data() + stage_at;
    q.chunk_rows = rows_per_chunk(w);
    q.events = (height + q.chunk_rows - 1) / q.chunk_rows;
  }
  while (chunk_done_.size() < events_used_ + q.events) chunk_done_.emplace_back(kHostWaitEventFlags);
  for (size_t c = 0; c < q.events; ++c) {
    if (q.stage) {
      const size_t y = c * q.chunk_rows, rows = std::min(q.chunk_rows, height - y);
      CUDAFILTERS_CHECK(cudaMemcpy2DAsync(q.stage + y * w, w, src + y * pitch, pitch, w, rows,
                                          cudaMemcpyDeviceToHost, stream));
    }
    CUDAFILTERS_CHECK(cudaEventRecord(chunk_done_[q.first_event + c].get(), stream));
  }
  events_used_ += q.events;
  queued_.push_back(q);
}

void HostTransfer::finish_downloads() {
  try {
    // Waiting on a chunk's event also covers every kernel before it.
    for (const QueuedDownload &q : queued_) {
      const size_t w = q.dst.row_bytes(), height = static_cast<size_t>(q.dst.height);
      for (size_t c = 0; c < q.events; ++c) {
        wait_for(chunk_done_[q.first_event + c].get());
        if (!q.stage) continue;
        const size_t y = c * q.chunk_rows, rows = std::min(q.chunk_rows, height - y);
        copy_rows(q.stage + y * w, w, q.dst.data + y * q.dst.stride, q.dst.stride, w, rows);
      }
    }
  } catch (...) {
    drop_downloads(queued_.front().stream);
    throw;
  }
  // The next frame starts with nothing queued (and the list keeps its
  // storage).
  queued_.clear();
  events_used_ = 0;
}

}  // namespace cudafilters

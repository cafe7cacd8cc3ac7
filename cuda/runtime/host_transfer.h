// Copies between host planes and device memory, and host waits for the
// GPU: what GpuFrameRunner and GpuWindowRunner share. Private to the
// engine library.
#pragma once

#include <cudafilters/cuda_memory.h>
#include <cudafilters/plane.h>
#include <cudafilters/runner_options.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace cudafilters {

// Copies `height` rows of `width_bytes` between host planes, in one call
// where both are contiguous.
void copy_rows(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
               size_t width_bytes, size_t height);

// Returns once the work before `event` is done, without keeping a CPU core
// spinning on long waits (see host_transfer.cpp).
void wait_for(cudaEvent_t event);

// Waits for the work queued on `stream` so far, on a path that is already
// failing: errors are dropped (a sticky one ends that work anyway).
void settle(cudaStream_t stream) noexcept;

// Events the host waits on (wait_for polls them).
constexpr unsigned kHostWaitEventFlags = cudaEventDisableTiming;

// A host wait at a place that recurs once a frame, such as the end of a
// runner's frame. Where such waits have taken long, it sleeps through most
// of the next one before it polls as wait_for does, so a frame that keeps
// the GPU busy for milliseconds costs the host no more CPU time than a short
// one. Short waits poll from the start, as wait_for does, and lose no
// latency to a wake-up. Long waits that stray far from what they are
// expected to take (frames queued behind other streams' on a shared GPU)
// end blocked until the driver's interrupt instead of checking every few
// microseconds. One per place: what it learns is how long that place waits.
class PacedWait {
 public:
  explicit PacedWait(HostWait mode) : mode_(mode) {}
  // Returns once the work before `event`, recorded on `stream`, is done.
  // Where it blocks, it records an event of its own on `stream` (with
  // cudaEventBlockingSync) and waits for that: it covers the work queued
  // there so far, after `event` too.
  void wait(cudaEvent_t event, cudaStream_t stream);
  // What the next wait expects to take (for tests and logs).
  std::chrono::microseconds expected() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(expected_);
  }
  // Whether the next wait, should it outlast its sleep, ends blocked (where
  // it was marked).
  bool blocks_next() const;
  // How many waits ended blocked so far (for tests and logs).
  long blocked_waits() const { return blocked_waits_; }

 private:
  HostWait mode_;
  std::chrono::nanoseconds expected_{0};
  // The mean deviation of waits from expected_.
  std::chrono::nanoseconds deviation_{0};
  // Waits so far, up to 3.
  int waits_ = 0;
  // Recorded by mark() where the next wait blocks (cudaEventBlockingSync),
  // made at the first such mark: the flag costs every recording an
  // interrupt, which the events of waits that poll do without.
  std::optional<Event> blocking_;
  long blocked_waits_ = 0;

  // Records blocking_ on `stream` where the wait is to block; whether it
  // did. Never throws: a wait whose mark failed polls.
  bool mark(cudaStream_t stream) noexcept;
};

// Where a host plane lives: looked up once per plane and frame, for both the
// choice to stream and the way to copy. A plane is page-locked when its
// first and last bytes are and, where the driver can tell, they lie in one
// allocation: a plane across two (with pageable memory between, perhaps) is
// copied through staging like a pageable one. Empty planes are pageable.
struct HostResidence {
  bool page_locked = false;
  // The plane's address for kernels, when the whole plane lies in one
  // allocation mapped for the current device; null otherwise.
  const uint8_t *device = nullptr;
};
HostResidence locate(ConstPlane plane);

// How a pageable plane is cut up on its way through the staging: host
// copies of `copy_bytes` (rounded to whole rows), spread over at most
// `threads` threads of the shared thread pool (0: all of them) and at most
// one thread per `thread_bytes` of the plane (at least kFewestThreads; 0:
// no such limit), and DMAs (and, for downloads, events) of `dma_bytes`,
// rounded to whole host copies; 0 for an eighth of the plane, from 256 KB
// to 1 MB. A few threads copy as fast as the DMA runs; the others would
// only spin through the frame (docs/benchmarks.md, "Pageable input"). The
// defaults were chosen by measurement; benchmarks and tests set others.
struct TransferBands {
  size_t copy_bytes = 16 * 1024;
  size_t dma_bytes = 0;
  int threads = 0;
  size_t thread_bytes = 128 * 1024;
  static constexpr int kFewestThreads = 4;
};

// Copies host planes to and from device memory on a stream: page-locked
// planes directly, pageable ones band by band through page-locked staging.
// The host copies of a plane run on the shared thread pool, and each band's
// DMA is queued as soon as the bands before it are staged, so that the host
// copies of later bands overlap it; a download copies each band out, on the
// pool, once it has arrived, while later bands are still in flight. Planes of
// one frame use disjoint parts of the staging, from `stage_at` bytes on.
// Empty planes copy nothing. Only the calling thread calls CUDA: the pool's
// threads copy host memory and nothing else, whatever context the caller
// has current.
class HostTransfer {
 public:
  explicit HostTransfer(HostWait wait, TransferBands bands = {});
  // Waits for any copy still reading the staging (after a frame that
  // failed), which is then freed.
  ~HostTransfer();
  HostTransfer(const HostTransfer &) = delete;
  HostTransfer &operator=(const HostTransfer &) = delete;

  // Staging for `bytes` in each direction. Growing it first waits for the
  // copies still reading it.
  void reserve(size_t bytes);

  // Queues the copy of src to `dst` (device, row pitch `pitch`). A pageable
  // source is read before this returns; a page-locked one is read by the
  // copy, and must stay until the stream has run it. The staging an upload
  // fills is only written again once the copies queued from it have run,
  // whatever happened in between (a frame that failed after its uploads,
  // or during them).
  void upload(ConstPlane src, bool page_locked, uint8_t *dst, size_t pitch, cudaStream_t stream,
              size_t stage_at = 0);
  // Copies `src` (device, row pitch `pitch`) to the host plane dst after the
  // work queued on the stream so far, and returns once it is there.
  void download(const uint8_t *src, size_t pitch, Plane dst, bool page_locked,
                cudaStream_t stream, size_t stage_at = 0);
  // The same in two halves, so that the planes of a frame are all in flight
  // before the host waits for the first: queues the copy (planes of one
  // frame at disjoint `stage_at`) ...
  void queue_download(const uint8_t *src, size_t pitch, Plane dst, bool page_locked,
                      cudaStream_t stream, size_t stage_at = 0);
  // ... and returns once every queued copy is in its host plane. If either
  // half throws, the frame's planes are dropped, but only once no copy
  // queued for them can still write a host plane or the staging.
  void finish_downloads();

 private:
  void queue_plane(const uint8_t *src, size_t pitch, Plane dst, bool page_locked,
                   cudaStream_t stream, size_t stage_at);
  // Stages the pageable plane src at `stage` on the pool and queues the
  // DMA of each band to dst once it is staged.
  void stage_and_queue(ConstPlane src, uint8_t *stage, uint8_t *dst, size_t pitch,
                       cudaStream_t stream);
  // Waits for the copies reading stage_in_, and forgets them.
  void staging_read();
  // Waits, without throwing, for every download queued, and drops them.
  void drop_downloads(cudaStream_t also) noexcept;

  TransferBands bands_;
  // One flag per host copy of the plane being uploaded: set by whichever
  // thread staged it, read by the caller, which queues the DMAs.
  std::unique_ptr<std::atomic<bool>[]> staged_;
  size_t staged_flags_ = 0;

  PinnedBuffer stage_in_;
  PinnedBuffer stage_out_;
  size_t reserved_ = 0;

  // The bytes of stage_in_ that copies queued on `staged_stream_` may still
  // read (none when lo == hi), and an event recorded after the last of
  // them.
  size_t staged_lo_ = 0, staged_hi_ = 0;
  cudaStream_t staged_stream_ = nullptr;
  Event staged_read_{kHostWaitEventFlags};

  // A plane queued for download: straight into `dst` where page-locked,
  // else in bands of `chunk_rows` rows through `stage`, an event after each,
  // copied out `copy_rows` rows at a time (a band is whole copies).
  struct QueuedDownload {
    Plane dst;
    uint8_t *stage;
    size_t chunk_rows, copy_rows;
    size_t first_event, events;
    cudaStream_t stream;
  };
  // Copies a staged download out to q.dst on the pool, each part once its
  // band has arrived, and returns once all of it is there.
  void copy_out(const QueuedDownload &q);
  // The threads of the pool a plane of `bytes` in `copies` host copies
  // uses.
  int threads_for(size_t copies, size_t bytes) const;
  // Rows per DMA of a plane of `height` rows of `row_bytes`, host copies
  // of `copy_rows` rows.
  size_t dma_rows(size_t row_bytes, size_t height, size_t copy_rows) const;
  // One per download band (or page-locked plane) in flight, so the host
  // copies a band out while the next ones are still in flight.
  std::vector<Event> chunk_done_;
  std::vector<QueuedDownload> queued_;
  size_t events_used_ = 0;
  // The wait for a frame's first download, which covers its kernels.
  PacedWait frame_done_;
};

}  // namespace cudafilters

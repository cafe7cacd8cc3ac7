#include "host_transfer.h"

#include "input_checks.h"

#include "thread_pool.h"

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#ifdef __linux__
#include <sys/prctl.h>
#endif

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
// (studies/host-waits). The wait at the end of each frame is paced
// besides (PacedWait): it sleeps through most of a wait as long as the
// last ones before it polls, so that a long frame does not cost a core
// for the 500 us of polling (docs/deployment.md).
constexpr std::chrono::microseconds kPollBeforeSleep{500};
constexpr std::chrono::microseconds kSleepStep{50};

// Polls `event` until the work before it is done, for up to `poll_for`,
// then checking every `step` and sleeping in between; returns cudaSuccess
// then, or the error the event reports. Sets *at_once to whether the first
// poll found it done.
cudaError_t wait_event(cudaEvent_t event, std::chrono::nanoseconds poll_for = kPollBeforeSleep,
                       std::chrono::nanoseconds step = kSleepStep, bool *at_once = nullptr) {
  const auto sleep_after = std::chrono::steady_clock::now() + poll_for;
  for (bool first = true;; first = false) {
    const cudaError_t state = cudaEventQuery(event);
    if (state != cudaErrorNotReady) {
      if (at_once) *at_once = first;
      return state;
    }
    // "Not ready" is no error: it must not linger as the thread's last error.
    (void)cudaGetLastError();
    if (std::chrono::steady_clock::now() >= sleep_after) std::this_thread::sleep_for(step);
  }
}

// A paced wait sleeps first only where that sleep would be at least
// kShortestSleep. It wakes before the wait is expected to end by a margin:
// kWakeEarly plus how far waits have strayed from the expected (their mean
// deviation), so that a steady stream polls briefly and an irregular one
// (many streams sharing the GPU) wakes in time for most of its frames. It
// then polls for twice the margin, kLongestPoll at most; a wait longer
// still checks again every quarter of the margin (from 10 to 200 us), as
// polling for long is what pacing saves. Waits of 1.28 ms and more do not
// poll: they check every 128th of the wait (200 us at most). It sleeps with a timer slack of
// 1 us (PreciseSleeps), so that a sleep ends within a few microseconds of
// its time rather than Linux's default 50 us later.
constexpr std::chrono::microseconds kShortestSleep{50};
constexpr std::chrono::microseconds kWakeEarly{30};
constexpr std::chrono::microseconds kLongestPoll{100};
constexpr std::chrono::microseconds kShortestStep{10};
constexpr std::chrono::microseconds kLongestStep{200};

// A paced wait of kBlockFrom or more whose waits stray by kBlockAbove or
// more on average (a GPU shared with other streams, frames queued behind
// theirs) ends blocked until the driver's interrupt, rather than in checks
// every 128th of the wait: the wake-up's latency is within how far such
// waits stray anyway, and the checks cost CPU time for each such stream.
// Shorter waits poll: there a blocking wait's wake-up costs throughput
// (eight 1080p streams of cudahisteq: 9% fewer frames, docs/deployment.md).
constexpr std::chrono::microseconds kBlockFrom{1280};
constexpr std::chrono::microseconds kBlockAbove{50};

// Sets the calling thread's timer slack to 1 us while it lives, then gives
// the thread its own back (the thread is the application's).
class PreciseSleeps {
 public:
  PreciseSleeps() {
#ifdef __linux__
    slack_ = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    set_ = slack_ > 1000 && prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0) == 0;
#endif
  }
  ~PreciseSleeps() {
#ifdef __linux__
    if (set_) (void)prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(slack_), 0, 0, 0);
#endif
  }
  PreciseSleeps(const PreciseSleeps &) = delete;
  PreciseSleeps &operator=(const PreciseSleeps &) = delete;

 private:
  int slack_ = 0;
  bool set_ = false;
};

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

}  // namespace

void copy_rows(const uint8_t *src, size_t src_stride, uint8_t *dst, size_t dst_stride,
               size_t width_bytes, size_t height) {
  if (src_stride == dst_stride && src_stride == width_bytes) {
    std::memcpy(dst, src, width_bytes * height);
    return;
  }
  for (size_t y = 0; y < height; ++y)
    std::memcpy(dst + y * dst_stride, src + y * src_stride, width_bytes);
}

HostResidence locate(ConstPlane plane) {
  HostResidence where;
  if (plane.data == nullptr || plane_is_empty(plane)) return where;
  cudaPointerAttributes first{}, last{};
  if (!page_locked_attributes(plane.data, &first) ||
      !page_locked_attributes(plane_last_byte(plane), &last))
    return where;
  // The first and last bytes say nothing of those between when they lie in
  // two allocations: copied and mapped as one, such a plane could have the
  // GPU read pageable memory between them through an unmapped address.
  if (plane_last_byte(plane) != plane.data && same_allocation(plane.data, plane_last_byte(plane)) == 0)
    return where;
  where.page_locked = true;
  const auto *first_dev = static_cast<const uint8_t *>(first.devicePointer);
  const auto *last_dev = static_cast<const uint8_t *>(last.devicePointer);
  if (first_dev != nullptr && last_dev != nullptr &&
      last_dev - first_dev == plane_last_byte(plane) - plane.data)
    where.device = first_dev;
  return where;
}

void wait_for(cudaEvent_t event) { check_cuda(wait_event(event), "cudaEventQuery"); }

void settle(cudaStream_t stream) noexcept {
  if (cudaStreamSynchronize(stream) != cudaSuccess) (void)cudaGetLastError();
}

bool PacedWait::blocks_next() const {
  return waits_ >= 3 &&
         (mode_ == HostWait::block ||
          (mode_ == HostWait::paced && expected_ >= kBlockFrom && deviation_ >= kBlockAbove));
}

bool PacedWait::mark(cudaStream_t stream) noexcept {
  if (!blocks_next()) return false;
  try {
    if (!blocking_) blocking_.emplace(cudaEventDisableTiming | cudaEventBlockingSync);
  } catch (...) {
    (void)cudaGetLastError();
    return false;
  }
  if (cudaEventRecord(blocking_->get(), stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return true;
}

void PacedWait::wait(cudaEvent_t event, cudaStream_t stream) {
  using std::chrono::nanoseconds;
  const bool block = mark(stream);
  const auto start = std::chrono::steady_clock::now();
  const nanoseconds margin = kWakeEarly + deviation_;
  const nanoseconds sleep = expected_ - margin;
  bool slept = false, at_once = false;
  if (mode_ != HostWait::poll && (block || sleep >= kShortestSleep)) {
    // Work that is done already (the host took long between queueing and
    // waiting) is not slept for.
    const cudaError_t state = cudaEventQuery(event);
    if (state != cudaErrorNotReady) {
      check_cuda(state, "cudaEventQuery");
      at_once = true;
    } else {
      (void)cudaGetLastError();
      if (sleep >= kShortestSleep) {
        slept = true;
        const PreciseSleeps precise;
        std::this_thread::sleep_for(sleep);
      }
      if (block) {
        cudaError_t woke = cudaErrorNotReady;
        if (slept) {
          woke = cudaEventQuery(event);
          if (woke == cudaErrorNotReady) (void)cudaGetLastError();
        }
        if (woke != cudaErrorNotReady) {
          check_cuda(woke, "cudaEventQuery");
          at_once = true;
        } else {
          // The thread sleeps until the driver's interrupt.
          check_cuda(cudaEventSynchronize(blocking_->get()), "cudaEventSynchronize");
          ++blocked_waits_;
        }
      } else {
        // A long wait checks every 128th of its length without polling:
        // that is late by under 1% of it, and costs far less CPU time than
        // polling for the margin. A short one polls, then checks every
        // quarter margin.
        const bool long_wait = expected_ / 128 >= kShortestStep;
        const nanoseconds poll =
            long_wait ? nanoseconds(0) : std::min<nanoseconds>(2 * margin, kLongestPoll);
        const nanoseconds step =
            long_wait ? std::min<nanoseconds>(expected_ / 128, kLongestStep)
                      : std::clamp<nanoseconds>(margin / 4, kShortestStep, kLongestStep);
        check_cuda(wait_event(event, poll, step, &at_once), "cudaEventQuery");
      }
    }
  } else {
    check_cuda(wait_event(event, kPollBeforeSleep, kSleepStep, &at_once), "cudaEventQuery");
  }
  nanoseconds took = std::chrono::steady_clock::now() - start;
  // The first wait of a place covers the first launch of its kernels
  // (modules are loaded then) and is not learned from; the less of the next
  // two is what is first expected, as a kernel may first launch a frame
  // later.
  if (waits_ < 3) {
    if (waits_ == 1) expected_ = took;
    if (waits_ == 2) expected_ = std::min(expected_, took);
    ++waits_;
    return;
  }
  if (slept && at_once) {
    // Woke after the end: the wait took `took` at most. Either the frames
    // have become shorter, which lowering the expected wait at once covers,
    // or they vary more than the margin allowed for.
    expected_ = std::min(expected_ - expected_ / 8, took);
    deviation_ += deviation_ / 4 + std::chrono::microseconds(2);
  } else {
    // A wait that was polled for to its end measures itself. The averages
    // follow shorter waits within a few frames, longer ones by a quarter
    // at most a frame: one stall far longer than the waits before it (a
    // GPU busy with other work) counts as twice the expected wait at most,
    // so that it does not make the next frames sleep past their end. (Too
    // short an expectation costs polling, not lateness.)
    if (expected_ > nanoseconds(0)) took = std::min(took, 2 * expected_ + margin);
    const nanoseconds error = took > expected_ ? took - expected_ : expected_ - took;
    expected_ += (took - expected_) / 4;
    deviation_ += (error - deviation_) / 4;
  }
  // A quarter of the wait at most is spent awake.
  deviation_ = std::min(deviation_, expected_ / 4);
}

namespace {

// Whole rows of `row_bytes` in about `bytes`, at least one.
size_t rows_in(size_t bytes, size_t row_bytes) {
  return row_bytes >= bytes ? 1 : bytes / row_bytes;
}

// Host copies of at least `rows` rows each, and no more than kMaxCopies of
// them for a plane: the pool takes an int count, and a plane of a billion
// narrow rows needs no more parallelism than one of a million.
constexpr size_t kMaxCopies = size_t(1) << 20;
size_t copy_rows_for(size_t rows, size_t height) {
  return std::max(rows, (height + kMaxCopies - 1) / kMaxCopies);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Whether the work before `event` is done; throws the error it reports.
bool arrived(cudaEvent_t event) {
  const cudaError_t state = cudaEventQuery(event);
  if (state == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  check_cuda(state, "cudaEventQuery");
  return true;
}

}  // namespace

HostTransfer::HostTransfer(HostWait wait, TransferBands bands) : bands_(bands), frame_done_(wait) {
  bands_.copy_bytes = std::max<size_t>(bands_.copy_bytes, 1);
}

size_t HostTransfer::dma_rows(size_t row_bytes, size_t height, size_t copy_rows) const {
  // Fewer, larger DMAs cost the calling thread fewer calls, smaller ones
  // start sooner and leave less to wait for at the end: on the H100 host
  // 256 KB did best at 1080p and 1 MB at 4K (docs/benchmarks.md).
  constexpr size_t kMinDma = 256 * 1024, kMaxDma = 1024 * 1024;
  const size_t bytes = bands_.dma_bytes > 0
                           ? bands_.dma_bytes
                           : std::clamp(row_bytes * height / 8, kMinDma, kMaxDma);
  return std::max<size_t>(1, rows_in(bytes, row_bytes) / copy_rows) * copy_rows;
}

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
  if (plane_is_empty(src)) return;
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
    stage_and_queue(src, stage_in_.data() + stage_at, dst, pitch, stream);
    CUDAFILTERS_CHECK(cudaEventRecord(staged_read_.get(), stream));
  } catch (...) {
    // The bands queued before the failure still read the staging.
    if (cudaEventRecord(staged_read_.get(), stream) != cudaSuccess) {
      (void)cudaGetLastError();
      settle(stream);
      staged_lo_ = staged_hi_ = 0;
    }
    throw;
  }
}

void HostTransfer::stage_and_queue(ConstPlane src, uint8_t *stage, uint8_t *dst, size_t pitch,
                                   cudaStream_t stream) {
  const size_t w = src.row_bytes(), height = static_cast<size_t>(src.height);
  const size_t copy_rows_each = copy_rows_for(rows_in(bands_.copy_bytes, w), height);
  const size_t copies = (height + copy_rows_each - 1) / copy_rows_each;
  // A DMA takes whole host copies, at least one.
  const size_t band_rows = dma_rows(w, height, copy_rows_each);
  if (staged_flags_ < copies) {
    staged_.reset(new std::atomic<bool>[copies]);
    staged_flags_ = copies;
  }
  for (size_t i = 0; i < copies; ++i) staged_[i].store(false, std::memory_order_relaxed);

  // Host copies are taken in order by whichever thread is free; the calling
  // thread alone queues the DMAs (CUDA calls from the pool's threads would
  // need the caller's context made current there), each as soon as the
  // copies before its end are staged. It copies too, but only while no other
  // thread is copying: then there is nothing staged to queue, and a pool
  // busy with other calls (or none at all) still makes progress.
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  size_t staged_prefix = 0, queued_rows = 0;  // the calling thread's

  auto stage_one = [&](size_t i) {
    const size_t y = i * copy_rows_each, rows = std::min(copy_rows_each, height - y);
    copy_rows(src.data + y * src.stride, src.stride, stage + y * w, w, w, rows);
    staged_[i].store(true, std::memory_order_release);
  };
  // Queues the DMA of the rows staged and not yet queued, once they make a
  // band (or end the plane).
  auto queue_staged = [&] {
    while (staged_prefix < copies && staged_[staged_prefix].load(std::memory_order_acquire))
      ++staged_prefix;
    const size_t rows = std::min(staged_prefix * copy_rows_each, height);
    if (rows == queued_rows || (rows - queued_rows < band_rows && rows < height)) return;
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dst + queued_rows * pitch, pitch, stage + queued_rows * w,
                                        w, w, rows - queued_rows, cudaMemcpyHostToDevice, stream));
    queued_rows = rows;
  };
  auto queue_all = [&] {
    try {
      while (queued_rows < height) {
        queue_staged();
        if (queued_rows == height) break;
        const size_t taken = std::min(next.load(std::memory_order_relaxed), copies);
        if (staged_prefix == taken && taken < copies) {
          const size_t i = next.fetch_add(1, std::memory_order_relaxed);
          if (i < copies) stage_one(i);
        } else {
          cpu_relax();
        }
      }
    } catch (...) {
      // The other threads stop at their next copy: nothing more is queued.
      stop.store(true, std::memory_order_relaxed);
      throw;
    }
  };
  // Index 0 is the calling thread's: workers spinning already would
  // otherwise take every index of a call of a few threads, and the DMAs
  // would only be queued once the whole plane was staged. It returns once
  // every band is queued.
  parallel_for_with_caller(threads_for(copies, w * height), [&](int index) {
    if (index == 0) {
      queue_all();
      return;
    }
    for (size_t i = next.fetch_add(1, std::memory_order_relaxed);
         i < copies && !stop.load(std::memory_order_relaxed);
         i = next.fetch_add(1, std::memory_order_relaxed))
      stage_one(i);
  });
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
  if (plane_is_empty(dst)) return;
  const size_t w = dst.row_bytes(), height = static_cast<size_t>(dst.height);
  QueuedDownload q{dst, nullptr, height, height, events_used_, 1, stream};
  if (page_locked) {
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dst.data, dst.stride, src, pitch, w, height,
                                        cudaMemcpyDeviceToHost, stream));
  } else {
    if (stage_at + w * height > reserved_)
      throw std::invalid_argument("download: plane past the end of the staging");
    q.stage = stage_out_.data() + stage_at;
    q.copy_rows = copy_rows_for(rows_in(bands_.copy_bytes, w), height);
    q.chunk_rows = dma_rows(w, height, q.copy_rows);
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

int HostTransfer::threads_for(size_t copies, size_t bytes) const {
  int threads = parallel_threads();
  if (bands_.threads > 0) threads = std::min(threads, bands_.threads);
  if (bands_.thread_bytes > 0) {
    const size_t by_bytes = std::max<size_t>(TransferBands::kFewestThreads,
                                             bytes / bands_.thread_bytes);
    threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads), by_bytes));
  }
  return static_cast<int>(std::min<size_t>(copies, static_cast<size_t>(threads)));
}

void HostTransfer::copy_out(const QueuedDownload &q) {
  const size_t w = q.dst.row_bytes(), height = static_cast<size_t>(q.dst.height);
  const size_t each = q.copy_rows, copies = (height + each - 1) / each;
  const size_t per_band = q.chunk_rows / each;
  const Event *band_done = &chunk_done_[q.first_event];
  // The copies whose rows lie in the first `bands` bands.
  auto copies_in = [&](size_t bands) { return bands >= q.events ? copies : bands * per_band; };
  auto copy_one = [&](size_t i) {
    const size_t y = i * each, rows = std::min(each, height - y);
    copy_rows(q.stage + y * w, w, q.dst.data + y * q.dst.stride, q.dst.stride, w, rows);
  };
  // The first band waits on the host's usual terms (polling, then sleeping),
  // as the kernels before it may take long; the pool is only called once it
  // is there, and the rest arrive at the speed of the DMA.
  wait_for(band_done[0].get());
  size_t arrived_bands = 1;  // the calling thread's

  // Only the calling thread asks CUDA which bands have arrived, and
  // publishes how many copies they hold; every thread takes the next copy
  // once it is among them. The calling thread runs index 0 of the call, so
  // it is always there to publish, and returns only once every copy is
  // taken (or it failed, and stops the others).
  const int threads = threads_for(copies, w * height);
  std::atomic<size_t> ready{copies_in(1)}, next{0};
  std::atomic<bool> stop{false};
  auto take = [&](size_t i) { return next.compare_exchange_strong(i, i + 1); };
  parallel_for_with_caller(threads, [&](int index) {
    if (index == 0) {
      try {
        for (;;) {
          while (arrived_bands < q.events && arrived(band_done[arrived_bands].get()))
            ready.store(copies_in(++arrived_bands));
          const size_t i = next.load();
          if (i >= copies) return;
          if (i < ready.load()) {
            if (take(i)) copy_one(i);
          } else {
            cpu_relax();
          }
        }
      } catch (...) {
        stop.store(true);
        throw;
      }
    }
    while (!stop.load()) {
      const size_t i = next.load();
      if (i >= copies) return;
      if (i < ready.load()) {
        if (take(i)) copy_one(i);
      } else {
        cpu_relax();
      }
    }
  });
}

void HostTransfer::finish_downloads() {
  try {
    // Waiting on a band's event also covers every kernel before it: the
    // first wait is the frame's, and is paced where the plane is copied
    // directly; those after it are for copies, and wait as wait_for does.
    // So does a staged frame throughout: its host copies cost far more CPU
    // time than a wait, and a late wake-up would hold up the pool that
    // copies it out.
    for (const QueuedDownload &q : queued_) {
      if (q.stage)
        copy_out(q);
      else if (&q == &queued_.front()) {
        // Where it blocks, it waits for the frame's later planes too: they
        // are waited for next anyway.
        frame_done_.wait(chunk_done_[q.first_event].get(), q.stream);
      }
      else
        wait_for(chunk_done_[q.first_event].get());
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

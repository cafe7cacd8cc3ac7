// Frames in pageable host memory through the GPU path (no GStreamer): the
// copies through page-locked staging alone (cuda/runtime/host_transfer.cpp) and
// histogram equalization through GpuFrameRunner, with pageable frames
// (malloc'd), with page-locked ones, and on the CPU; with the floors beside
// them (pinned transfers, host copy bandwidth) and, for comparison, the
// copies as they were made before they were banded over the thread pool
// (512 KB chunks, one thread).
//
//   transfer_bench [--frames N] [--json FILE] [--size 720p|1080p|4K] [--sweep]
//
// Without --size: 1080p and 4K. --sweep adds the round trip for a grid of
// host copy and DMA sizes (TransferBands), the measurement the defaults
// were chosen by.
#include <cudafilters/cuda_memory.h>
#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/histeq_cpu.h>
#include <cudafilters/histeq_gpu.h>
#include "bench_util.h"
#include "host_transfer.h"
#include "runner_testing.h"
#include "thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace cudafilters;
using namespace bench;

namespace {

constexpr int kRotation = 4;

// The copies as HostTransfer made them before: 512 KB chunks, the host
// copies on the calling thread, each chunk's DMA queued after its copy;
// downloads waited for chunk by chunk and copied out one after the other.
class SequentialTransfer {
 public:
  explicit SequentialTransfer(size_t bytes) {
    in_.reserve(bytes);
    out_.reserve(bytes);
  }
  void round_trip(ConstPlane src, uint8_t *dev, size_t pitch, Plane dst, cudaStream_t stream) {
    const size_t w = src.row_bytes(), h = size_t(src.height);
    const size_t chunk = std::max<size_t>(1, (512 * 1024) / w);
    for (size_t y = 0; y < h; y += chunk) {
      const size_t rows = std::min(chunk, h - y);
      for (size_t r = 0; r < rows; ++r)
        std::memcpy(in_.data() + (y + r) * w, src.data + (y + r) * src.stride, w);
      CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev + y * pitch, pitch, in_.data() + y * w, w, w, rows,
                                          cudaMemcpyHostToDevice, stream));
    }
    const size_t chunks = (h + chunk - 1) / chunk;
    while (events_.size() < chunks) events_.emplace_back(kHostWaitEventFlags);
    for (size_t c = 0; c < chunks; ++c) {
      const size_t y = c * chunk, rows = std::min(chunk, h - y);
      CUDAFILTERS_CHECK(cudaMemcpy2DAsync(out_.data() + y * w, w, dev + y * pitch, pitch, w, rows,
                                          cudaMemcpyDeviceToHost, stream));
      CUDAFILTERS_CHECK(cudaEventRecord(events_[c].get(), stream));
    }
    for (size_t c = 0; c < chunks; ++c) {
      wait_for(events_[c].get());
      const size_t y = c * chunk, rows = std::min(chunk, h - y);
      for (size_t r = 0; r < rows; ++r)
        std::memcpy(dst.data + (y + r) * dst.stride, out_.data() + (y + r) * w, w);
    }
  }

 private:
  PinnedBuffer in_, out_;
  std::vector<Event> events_;
};

std::string kb(size_t bytes) { return std::to_string(bytes / 1024) + " KB"; }

}  // namespace

int main(int argc, char **argv) {
  bool sweep = false;
  for (int i = 1; i < argc; ++i) sweep = sweep || !std::strcmp(argv[i], "--sweep");
  const Options opt = parse_options(argc, argv, 400);
  const int iters = opt.frames;
  Reporter rep("transfer", opt.json);
  try {
    rep.device_info();
    std::printf("CPU: %s, %d threads in the pool\n", cpu_model().c_str(), parallel_threads());
    Stream stream;
    for (const Size &sz : kSizes) {
      if (opt.size ? !opt.wants(sz) : !std::strcmp(sz.name, "720p")) continue;
      const size_t n = size_t(sz.width) * sz.height;
      const int w = sz.width, h = sz.height;
      auto pl = [&](const uint8_t *p) { return ConstPlane(p, size_t(w), w, h); };
      auto out_pl = [&](uint8_t *p) { return Plane{p, size_t(w), w, h}; };

      std::vector<std::vector<uint8_t>> host(kRotation);
      std::vector<PinnedBuffer> pinned(kRotation);
      for (int k = 0; k < kRotation; ++k) {
        host[k] = make_frame(w, h, 11 + k);
        pinned[k].reserve(n);
        std::memcpy(pinned[k].data(), host[k].data(), n);
      }
      std::vector<uint8_t> out(n, 0);
      PinnedBuffer pin_out;
      pin_out.reserve(n);
      DevicePlane dev;
      dev.reserve(w, h);

      // Floors. The two transfers from and to page-locked memory, one host
      // wait: what any path pays at least.
      Stats dma = time_host(iters, [&](int i) {
        CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev.data(), dev.pitch(), pinned[i % kRotation].data(), w,
                                            w, h, cudaMemcpyHostToDevice, stream.get()));
        CUDAFILTERS_CHECK(cudaMemcpy2DAsync(pin_out.data(), w, dev.data(), dev.pitch(), w, h,
                                            cudaMemcpyDeviceToHost, stream.get()));
        stream.synchronize();
      });
      rep.row("floor: pinned h2d + d2h, host wall time", sz, dma, 2.0 * n);
      // The host copies a pageable frame needs (in to staging, out of it),
      // on the whole pool, without transfers.
      const size_t rows_each = std::max<size_t>(1, (32 * 1024) / size_t(w));
      const int copies = int((size_t(h) + rows_each - 1) / rows_each);
      auto pool_copy = [&](const uint8_t *from, uint8_t *to) {
        parallel_for(copies, [&](int c) {
          const size_t y = size_t(c) * rows_each, rows = std::min(rows_each, size_t(h) - y);
          std::memcpy(to + y * w, from + y * w, rows * w);
        });
      };
      Stats copies_pool = time_host(iters, [&](int i) {
        pool_copy(host[i % kRotation].data(), pinned[0].data());
        pool_copy(pin_out.data(), out.data());
      });
      rep.row("floor: host copies in + out, thread pool", sz, copies_pool, 2.0 * n);
      Stats copies_one = time_host(iters, [&](int i) {
        std::memcpy(pinned[0].data(), host[i % kRotation].data(), n);
        std::memcpy(out.data(), pin_out.data(), n);
      });
      rep.row("host copies in + out, one thread", sz, copies_one, 2.0 * n);
      // Where the time of a banded round trip goes: the two transfers cut
      // into bands of 256 KB (the default at 1080p; 4K's is 1 MB), an event
      // after each download band,
      // and whole, with the pool's host copies of another frame running
      // at once (memory bandwidth taken from the DMAs).
      std::vector<Event> band_events;
      Stats dma_bands = time_host(iters, [&](int i) {
        const size_t rows = std::max<size_t>(1, (256u << 10) / size_t(w));
        size_t band = 0;
        for (size_t y = 0; y < size_t(h); y += rows)
          CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev.data() + y * dev.pitch(), dev.pitch(),
                                              pinned[i % kRotation].data() + y * w, w, w,
                                              std::min(rows, size_t(h) - y),
                                              cudaMemcpyHostToDevice, stream.get()));
        for (size_t y = 0; y < size_t(h); y += rows, ++band) {
          CUDAFILTERS_CHECK(cudaMemcpy2DAsync(pin_out.data() + y * w, w, dev.data() + y * dev.pitch(),
                                              dev.pitch(), w, std::min(rows, size_t(h) - y),
                                              cudaMemcpyDeviceToHost, stream.get()));
          if (band_events.size() <= band) band_events.emplace_back(kHostWaitEventFlags);
          CUDAFILTERS_CHECK(cudaEventRecord(band_events[band].get(), stream.get()));
        }
        stream.synchronize();
      });
      rep.row("floor: pinned h2d + d2h in 256 KB bands, events", sz, dma_bands, 2.0 * n);
      std::vector<uint8_t> other(n, 1), other_out(n);
      Stats dma_busy = time_host(iters, [&](int i) {
        CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev.data(), dev.pitch(), pinned[i % kRotation].data(), w,
                                            w, h, cudaMemcpyHostToDevice, stream.get()));
        CUDAFILTERS_CHECK(cudaMemcpy2DAsync(pin_out.data(), w, dev.data(), dev.pitch(), w, h,
                                            cudaMemcpyDeviceToHost, stream.get()));
        pool_copy(host[i % kRotation].data(), other.data());
        pool_copy(other.data(), other_out.data());
        stream.synchronize();
      });
      rep.row("pinned h2d + d2h, pool copies in + out at once", sz, dma_busy, 2.0 * n);
      // What a call into the pool costs with nothing to do.
      Stats empty_call = time_host(iters, [&](int) {
        parallel_for(parallel_threads(), [](int) {});
      });
      rep.row("parallel_for, an empty index per thread", sz, empty_call, 0);
      // The same once the workers have gone to sleep (after their spin):
      // what the first call after a pause costs.
      std::vector<double> after_idle;
      for (int i = 0; i < std::max(20, iters / 10); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const auto t0 = std::chrono::steady_clock::now();
        parallel_for(parallel_threads(), [](int) {});
        after_idle.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count());
      }
      rep.row("parallel_for, after 1 ms idle", sz, summarize(after_idle), 0);
      for (int k = 0; k < kRotation; ++k) std::memcpy(pinned[k].data(), host[k].data(), n);

      // The round trip of a pageable frame, no filter.
      SequentialTransfer seq(n);
      Stats old = time_host(iters, [&](int i) {
        seq.round_trip(pl(host[i % kRotation].data()), dev.data(), dev.pitch(), out_pl(out.data()),
                       stream.get());
      });
      rep.row("pageable round trip, 512 KB chunks, 1 thread", sz, old, 2.0 * n);
      auto banded = [&](TransferBands bands) {
        HostTransfer t(HostWait::paced, bands);
        t.reserve(n);
        return time_host(iters, [&](int i) {
          t.upload(pl(host[i % kRotation].data()), false, dev.data(), dev.pitch(), stream.get());
          t.download(dev.data(), dev.pitch(), out_pl(out.data()), false, stream.get());
        });
      };
      rep.row("pageable round trip, banded (defaults)", sz, banded(TransferBands{}), 2.0 * n);
      if (out != host[(iters - 1) % kRotation]) throw std::runtime_error("round trip: frame differs");
      {
        // Each way alone, one host wait each.
        HostTransfer t(HostWait::paced);
        t.reserve(n);
        Stats up = time_host(iters, [&](int i) {
          t.upload(pl(host[i % kRotation].data()), false, dev.data(), dev.pitch(), stream.get());
          stream.synchronize();
        });
        rep.row("pageable upload alone, banded (defaults)", sz, up, double(n));
        Stats down = time_host(iters, [&](int) {
          t.download(dev.data(), dev.pitch(), out_pl(out.data()), false, stream.get());
        });
        rep.row("pageable download alone, banded (defaults)", sz, down, double(n));
      }
      if (sweep) {
        for (int threads : {4, 8, 12})
          for (size_t copy : {16u << 10, 32u << 10, 64u << 10}) {
            const std::string what =
                "  banded, " + std::to_string(threads) + " threads, copies " + kb(copy);
            rep.row(what.c_str(), sz, banded(TransferBands{copy, 256u << 10, threads}), 2.0 * n);
          }
        for (size_t copy : {8u << 10, 16u << 10, 32u << 10, 64u << 10})
          for (size_t dma : {128u << 10, 256u << 10, 512u << 10, 1024u << 10}) {
            const std::string what = "  banded, copies " + kb(copy) + ", DMAs " + kb(dma);
            rep.row(what.c_str(), sz, banded(TransferBands{copy, dma}), 2.0 * n);
          }
      }

      // Histogram equalization, as the element runs it on system memory.
      HistEqGpu eq;
      GpuFrameRunner runner;
      runner.reserve(w, h);
      Stats pageable = time_host(iters, [&](int i) {
        runner.process_host(eq, pl(host[i % kRotation].data()), out_pl(out.data()));
      });
      rep.row("histeq: pageable frames (GPU)", sz, pageable, 2.0 * n);
      Stats locked = time_host(iters, [&](int i) {
        runner.process_host(eq, pl(pinned[i % kRotation].data()), out_pl(pin_out.data()));
      });
      if (!last_frame_streamed(runner)) throw std::runtime_error("pinned frames not streamed");
      rep.row("histeq: pinned frames (GPU, streamed)", sz, locked, 2.0 * n);
      GpuFrameRunner copying;
      copying.reserve(w, h);
      Stats locked_copies = time_host(iters, [&](int i) {
        copying.process_host(eq, pl(pinned[i % kRotation].data()), out_pl(pin_out.data()), nullptr,
                             kCopiesOnly);
      });
      rep.row("histeq: pinned frames (GPU, by copies)", sz, locked_copies, 2.0 * n);
      Stats cpu = time_host(std::max(20, iters / 4), [&](int i) {
        equalize_hist_cpu(pl(host[i % kRotation].data()), out_pl(out.data()));
      });
      rep.row("histeq: CPU implementation (all threads)", sz, cpu, 2.0 * n);
      std::vector<uint8_t> ref(n);
      equalize_hist_cpu(pl(host[1].data()), out_pl(ref.data()));
      runner.process_host(eq, pl(host[1].data()), out_pl(out.data()));
      if (out != ref) throw std::runtime_error("histeq: the GPU's frame differs from the CPU's");
      std::printf("  pageable / pinned %.2f, pageable / CPU %.2f\n",
                  pageable.median_us / locked.median_us, pageable.median_us / cpu.median_us);

      // Registering a frame's memory instead (a recurring buffer): what one
      // registration and its release cost.
      Stats reg = time_host(std::max(10, iters / 10), [&](int i) {
        void *p = host[i % kRotation].data();
        CUDAFILTERS_CHECK(cudaHostRegister(p, n, cudaHostRegisterDefault));
        CUDAFILTERS_CHECK(cudaHostUnregister(p));
      });
      rep.row("cudaHostRegister + cudaHostUnregister", sz, reg, 0);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (opt.json) std::fclose(opt.json);
  return 0;
}

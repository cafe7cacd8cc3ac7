// Engine-level benchmark of histogram equalization (no GStreamer): GPU time
// of the kernels alone, the host-memory round trip through GpuFrameRunner
// with pageable and with page-locked frames, the CPU implementation, and the
// floors (pinned copies each way, device memory bandwidth).
//
//   histeq_bench [--frames N] [--json FILE] [--size 720p|1080p|4K]
//
// Frames are synthetic but not constant (gradients, texture and noise), and
// several distinct frames are rotated so no cache holds a single input.
#include <cudafilters/cuda_memory.h>
#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/histeq_cpu.h>
#include <cudafilters/histeq_gpu.h>
#include "bench_util.h"
#include "histeq_gpu_launch.h"
#include "runner_testing.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace cudafilters;

using namespace bench;

namespace {
constexpr int kRotation = 4;

// Deep frames of `bits` bits at `shift`: the kernels on a device plane,
// with a P010-like chroma plane carried, and the CPU implementation; the
// GPU result checked once against the CPU's.
void bench_deep(Reporter &rep, const Size &sz, int iters, cudaStream_t stream, int bits, int shift,
                const std::string &what) {
  const size_t n = size_t(sz.width) * sz.height;
  const DeepFrames f(sz.width, sz.height, bits, shift, kRotation);
  auto in = [&](int i) { return f.in(i); };
  const Plane out_plane = f.out();
  const CarriedPlanes chroma = f.chroma();

  HistEqGpu eq;
  Stats kern = time_gpu(stream, iters, [&](int i) { eq.enqueue(in(i), out_plane, stream); });
  rep.row((what + " kernels only (GPU time)").c_str(), sz, kern, 4.0 * n);
  // As on GPUs without cooperative launch: a launch per step.
  HistEqGpu eq_steps = make_histeq_gpu(HistEqLaunch::kTwoPass);
  Stats steps = time_gpu(stream, iters, [&](int i) { eq_steps.enqueue(in(i), out_plane, stream); });
  rep.row((what + " kernels only, a launch per step").c_str(), sz, steps, 4.0 * n);
  Stats with_chroma = time_gpu(stream, iters, [&](int i) {
    eq.enqueue_carrying(in(i), out_plane, chroma, stream);
  });
  rep.row((what + " 4:2:0 on the GPU (chroma carried)").c_str(), sz, with_chroma, 6.0 * n);
  Stats b2b = time_gpu_back_to_back(stream, iters / 10 + 1, [&](int i) {
    eq.enqueue_carrying(in(i), out_plane, chroma, stream);
  });
  rep.row((what + " 4:2:0, frames back to back").c_str(), sz, b2b, 6.0 * n);

  std::vector<uint8_t> from_gpu(2 * n), from_cpu(2 * n);
  eq.enqueue(in(1), out_plane, stream);
  f.download(from_gpu, stream);
  HistEqCpu cpu_eq;
  auto host_in = [&](int i) { return f.host_in(i); };
  const Plane host_out(from_cpu.data(), 2 * size_t(sz.width), sz.width, sz.height, f.layout);
  cpu_eq.process(host_in(1), host_out);
  if (from_gpu != from_cpu) throw std::runtime_error("deep GPU result differs from the CPU's");
  Stats cpu = time_host(std::max(10, iters / 20), [&](int i) { cpu_eq.process(host_in(i), host_out); });
  rep.row((what + " CPU implementation (all threads)").c_str(), sz, cpu, 4.0 * n);
}

// Many streams at once: `threads` host threads, each with a runner and an
// engine of its own, pass page-locked frames back to back, streamed by the
// kernels (HostRoute's default) or copied in and out. Returns the aggregate frames
// per second, from the moment all start to the moment the last is done.
double pinned_streams_fps(const Size &sz, const std::vector<std::vector<uint8_t>> &host,
                          int threads, int frames, bool copies) {
  const size_t n = size_t(sz.width) * sz.height;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      try {
        HistEqGpu eq;
        GpuFrameRunner runner;
        const HostRoute route = copies ? kCopiesOnly : HostRoute();
        runner.reserve(sz.width, sz.height);
        PinnedBuffer in, out;
        in.reserve(n);
        out.reserve(n);
        std::memcpy(in.data(), host[size_t(t) % host.size()].data(), n);
        const ConstPlane src(in.data(), sz.width, sz.width, sz.height);
        const Plane dst{out.data(), size_t(sz.width), sz.width, sz.height};
        runner.process_host(eq, src, dst, nullptr, route);  // warm
        ++ready;
        while (!go.load()) std::this_thread::yield();
        for (int i = 0; i < frames; ++i) runner.process_host(eq, src, dst, nullptr, route);
      } catch (...) {
        errors[size_t(t)] = std::current_exception();
        ++ready;
      }
    });
  while (ready.load() < threads) std::this_thread::yield();
  const auto t0 = std::chrono::steady_clock::now();
  go = true;
  for (std::thread &th : pool) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const std::exception_ptr &e : errors)
    if (e) std::rethrow_exception(e);
  return double(threads) * frames / s;
}
}  // namespace

int main(int argc, char **argv) {
  const Options opt = parse_options(argc, argv, 1000);
  const int iters = opt.frames;
  FILE *json = opt.json;

  Reporter rep("histeq", json);
  try {
    rep.device_info();

    Stream stream;
    rep.device_copy_row(stream.get());

    for (const Size &sz : kSizes) {
      if (!opt.wants(sz)) continue;
      const size_t n = size_t(sz.width) * sz.height;
      const ByteFrames frames(sz.width, sz.height, kRotation);
      const std::vector<std::vector<uint8_t>> &host = frames.host;
      const DevicePlane &dev_out = frames.dev_out;
      // The launch modes side by side in the same run, so what each gains is
      // measured on the same machine.
      HistEqGpu eq;
      HistEqGpu eq_two = make_histeq_gpu(HistEqLaunch::kTwoPass);
      auto luma_in = [&](int i) { return frames.in(i); };
      const Plane luma_out = frames.out();
      Stats kern = time_gpu(stream.get(), iters,
                            [&](int i) { eq.enqueue(luma_in(i), luma_out, stream.get()); });
      rep.row("kernels only (GPU time)", sz, kern, 3.0 * n);
      Stats kern_two = time_gpu(stream.get(), iters,
                                [&](int i) { eq_two.enqueue(luma_in(i), luma_out, stream.get()); });
      rep.row("kernels only, two launches", sz, kern_two, 3.0 * n);

      // An NV12 frame in device memory, as the element handles CUDA memory:
      // luma through the kernels, the interleaved chroma plane carried.
      const CarriedPlanes chroma = frames.chroma();
      Stats nv12 = time_gpu(stream.get(), iters, [&](int i) {
        eq.enqueue_carrying(luma_in(i), luma_out, chroma, stream.get());
      });
      rep.row("NV12 on the GPU (chroma in the kernel)", sz, nv12, 4.0 * n);
      Stats nv12_stream = time_gpu_back_to_back(stream.get(), iters / 10 + 1, [&](int i) {
        eq.enqueue_carrying(luma_in(i), luma_out, chroma, stream.get());
      });
      rep.row("NV12 on the GPU, frames back to back", sz, nv12_stream, 4.0 * n);
      Stats nv12_two = time_gpu(stream.get(), iters, [&](int i) {
        eq_two.enqueue_carrying(luma_in(i), luma_out, chroma, stream.get());
      });
      rep.row("NV12 on the GPU, two launches", sz, nv12_two, 4.0 * n);
      Stats nv12_copy = time_gpu(stream.get(), iters, [&](int i) {
        eq.GpuPlaneFilter::enqueue_carrying(luma_in(i), luma_out, chroma, stream.get());
      });
      rep.row("NV12 on the GPU, chroma by cudaMemcpy2D", sz, nv12_copy, 4.0 * n);

      // Floors: one frame each way over PCIe from pinned memory.
      PinnedBuffer pin_in, pin_out;
      pin_in.reserve(n);
      pin_out.reserve(n);
      std::memcpy(pin_in.data(), host[0].data(), n);
      Stats h2d = time_gpu(stream.get(), iters, [&](int) {
        CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev_out.data(), dev_out.pitch(), pin_in.data(), sz.width,
                                            sz.width, sz.height, cudaMemcpyHostToDevice, stream.get()));
      });
      rep.row("pinned h2d copy", sz, h2d, double(n));
      Stats d2h = time_gpu(stream.get(), iters, [&](int) {
        CUDAFILTERS_CHECK(cudaMemcpy2DAsync(pin_out.data(), sz.width, dev_out.data(), dev_out.pitch(),
                                            sz.width, sz.height, cudaMemcpyDeviceToHost, stream.get()));
      });
      rep.row("pinned d2h copy", sz, d2h, double(n));
      // The same two copies timed as the round trips below are: host wall
      // time, one synchronisation. This is what a host round trip costs with
      // no filter at all.
      Stats h2d_d2h_wall = time_host(iters / 2, [&](int) {
        CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev_out.data(), dev_out.pitch(), pin_in.data(), sz.width,
                                            sz.width, sz.height, cudaMemcpyHostToDevice, stream.get()));
        CUDAFILTERS_CHECK(cudaMemcpy2DAsync(pin_out.data(), sz.width, dev_out.data(), dev_out.pitch(),
                                            sz.width, sz.height, cudaMemcpyDeviceToHost, stream.get()));
        stream.synchronize();
      });
      rep.row("pinned h2d + d2h, host wall time", sz, h2d_d2h_wall, 2.0 * n);
      // The kernels reading and writing pinned host memory themselves (what
      // the round trip below does with pinned frames), GPU time.
      Stats streamed = time_gpu(stream.get(), iters, [&](int) {
        eq.enqueue_streaming(ConstPlane(pin_in.data(), sz.width, sz.width, sz.height),
                             Plane{pin_out.data(), size_t(sz.width), sz.width, sz.height},
                             Plane{dev_out.data(), dev_out.pitch(), sz.width, sz.height},
                             stream.get());
      });
      rep.row("kernels streaming pinned memory (GPU time)", sz, streamed, 2.0 * n);

      // Whole host round trip, as the element does it for system memory.
      GpuFrameRunner runner;
      runner.reserve(sz.width, sz.height);
      std::vector<uint8_t> out(n);
      Stats pageable = time_host(iters / 2, [&](int i) {
        runner.process_host(eq, ConstPlane(host[i % kRotation].data(), sz.width, sz.width, sz.height),
                            Plane{out.data(), size_t(sz.width), sz.width, sz.height});
      });
      rep.row("host round trip, pageable frames", sz, pageable, 2.0 * n);

      std::vector<PinnedBuffer> pinned(kRotation);
      for (int k = 0; k < kRotation; ++k) {
        pinned[k].reserve(n);
        std::memcpy(pinned[k].data(), host[k].data(), n);
      }
      Stats locked = time_host(iters / 2, [&](int i) {
        runner.process_host(eq, ConstPlane(pinned[i % kRotation].data(), sz.width, sz.width, sz.height),
                            Plane{pin_out.data(), size_t(sz.width), sz.width, sz.height});
      });
      rep.row("host round trip, pinned frames", sz, locked, 2.0 * n);
      if (!last_frame_streamed(runner)) {
        std::fprintf(stderr, "pinned frames were not streamed at %s\n", sz.name);
        return 1;
      }
      GpuFrameRunner copying;
      copying.reserve(sz.width, sz.height);
      Stats locked_copies = time_host(iters / 2, [&](int i) {
        copying.process_host(eq, ConstPlane(pinned[i % kRotation].data(), sz.width, sz.width, sz.height),
                             Plane{pin_out.data(), size_t(sz.width), sz.width, sz.height}, nullptr,
                             kCopiesOnly);
      });
      rep.row("host round trip, pinned frames, by copies", sz, locked_copies, 2.0 * n);
      for (int threads : {1, 8})
        for (bool copies : {false, true})
          std::printf("  %-48s %-6s %9.0f frames/s aggregate\n",
                      ("pinned frames, " + std::to_string(threads) + " streams at once, " +
                       (copies ? "always copied" : "default path"))
                          .c_str(),
                      sz.name,
                      pinned_streams_fps(sz, host, threads, std::max(50, iters / 2), copies));
      Stats locked_two = time_host(iters / 2, [&](int i) {
        runner.process_host(eq_two,
                            ConstPlane(pinned[i % kRotation].data(), sz.width, sz.width, sz.height),
                            Plane{pin_out.data(), size_t(sz.width), sz.width, sz.height});
      });
      rep.row("host round trip, pinned, two launches", sz, locked_two, 2.0 * n);

      // Check the GPU result once against the CPU implementation.
      std::vector<uint8_t> ref(n);
      equalize_hist_cpu(ConstPlane(host[1].data(), sz.width, sz.width, sz.height),
                        Plane{ref.data(), size_t(sz.width), sz.width, sz.height});
      runner.process_host(eq, ConstPlane(host[1].data(), sz.width, sz.width, sz.height),
                          Plane{out.data(), size_t(sz.width), sz.width, sz.height});
      if (out != ref) {
        std::fprintf(stderr, "MISMATCH between GPU and CPU at %s\n", sz.name);
        return 1;
      }

      Stats cpu = time_host(std::max(10, iters / 20), [&](int i) {
        equalize_hist_cpu(ConstPlane(host[i % kRotation].data(), sz.width, sz.width, sz.height),
                          Plane{out.data(), size_t(sz.width), sz.width, sz.height});
      });
      rep.row("CPU implementation (all threads)", sz, cpu, 2.0 * n);

      bench_deep(rep, sz, iters, stream.get(), 16, 0, "16-bit (GRAY16_LE)");
      bench_deep(rep, sz, iters, stream.get(), 10, 6, "10-bit (P010_10LE)");
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (json) std::fclose(json);
  return 0;
}

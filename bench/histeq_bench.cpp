// Engine-level benchmark of histogram equalization (no GStreamer): GPU time
// of the kernels alone, the host-memory round trip through GpuFrameRunner
// with pageable and with page-locked frames, the CPU implementation, and the
// floors (pinned copies each way, device memory bandwidth).
//
//   histeq_bench [--frames N] [--json FILE]
//
// Frames are synthetic but not constant (gradients, texture and noise), and
// several distinct frames are rotated so no cache holds a single input.
#include "cuda_memory.h"
#include "gpu_frame_runner.h"
#include "histeq_cpu.h"
#include "histeq_gpu.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace cudafilters;

namespace {

constexpr int kRotation = 4;

struct Size {
  const char *name;
  int width, height;
};

struct Stats {
  double median_us, p10_us, p90_us;
};

Stats summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, size_t(q * us.size()))]; };
  return {at(0.5), at(0.1), at(0.9)};
}

std::vector<uint8_t> make_frame(int w, int h, int seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 6.f);
  std::vector<uint8_t> f(size_t(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float v = 60.f + 60.f * x / w + 30.f * y / h + 20.f * ((x / 37 + y / 23 + seed) % 3) + noise(rng);
      f[size_t(y) * w + x] = uint8_t(std::clamp(v, 0.f, 255.f));
    }
  return f;
}

// GPU time of `enqueue` per call, from events around each call.
Stats time_gpu(cudaStream_t s, int iters, const std::function<void(int)> &enqueue) {
  for (int i = 0; i < 20; ++i) enqueue(i);
  Event start, stop;
  std::vector<double> us;
  for (int i = 0; i < iters; ++i) {
    CUDAFILTERS_CHECK(cudaEventRecord(start.get(), s));
    enqueue(i);
    CUDAFILTERS_CHECK(cudaEventRecord(stop.get(), s));
    CUDAFILTERS_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDAFILTERS_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    us.push_back(ms * 1000.0);
  }
  return summarize(us);
}

// Wall time per call of a synchronous function.
Stats time_host(int iters, const std::function<void(int)> &fn) {
  for (int i = 0; i < 5; ++i) fn(i);
  std::vector<double> us;
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn(i);
    auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return summarize(us);
}

FILE *json = nullptr;

void report(const char *what, const Size &sz, const Stats &st, double bytes) {
  const double gbs = bytes / (st.median_us * 1e3);
  std::printf("  %-34s %-6s median %9.1f us  (p10 %9.1f, p90 %9.1f)  %7.1f GB/s\n", what, sz.name,
              st.median_us, st.p10_us, st.p90_us, gbs);
  if (json)
    std::fprintf(json,
                 "{\"bench\":\"histeq\",\"what\":\"%s\",\"size\":\"%s\",\"width\":%d,\"height\":%d,"
                 "\"median_us\":%.3f,\"p10_us\":%.3f,\"p90_us\":%.3f,\"bytes\":%.0f}\n",
                 what, sz.name, sz.width, sz.height, st.median_us, st.p10_us, st.p90_us, bytes);
}

}  // namespace

int main(int argc, char **argv) {
  int iters = 500;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--frames") && i + 1 < argc) iters = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = std::fopen(argv[++i], "w");
  }

  try {
    int dev = 0;
    cudaDeviceProp prop{};
    CUDAFILTERS_CHECK(cudaGetDevice(&dev));
    CUDAFILTERS_CHECK(cudaGetDeviceProperties(&prop, dev));
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    std::printf("GPU: %s, %d SMs, driver API %d, runtime %d\n", prop.name, prop.multiProcessorCount,
                driver, runtime);
    if (json)
      std::fprintf(json, "{\"gpu\":\"%s\",\"sms\":%d,\"driver\":%d,\"runtime\":%d}\n", prop.name,
                   prop.multiProcessorCount, driver, runtime);

    Stream stream;
    {
      // Device memory bandwidth: a large device-to-device copy, bytes read + written.
      const size_t bytes = size_t(512) << 20;
      DeviceArray<uint8_t> a(bytes), b(bytes);
      CUDAFILTERS_CHECK(cudaMemset(a.get(), 1, bytes));
      Size big{"512MB", 0, 0};
      Stats st = time_gpu(stream.get(), 20, [&](int) {
        CUDAFILTERS_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream.get()));
      });
      report("d2d copy (read+write)", big, st, 2.0 * bytes);
    }

    const Size sizes[] = {{"720p", 1280, 720}, {"1080p", 1920, 1080}, {"4K", 3840, 2160}};
    for (const Size &sz : sizes) {
      const size_t n = size_t(sz.width) * sz.height;
      std::vector<std::vector<uint8_t>> host(kRotation);
      for (int k = 0; k < kRotation; ++k) host[k] = make_frame(sz.width, sz.height, k);

      // Device-resident inputs, rotated.
      std::vector<DevicePlane> dev_in(kRotation);
      DevicePlane dev_out;
      dev_out.reserve(sz.width, sz.height);
      for (int k = 0; k < kRotation; ++k) {
        dev_in[k].reserve(sz.width, sz.height);
        CUDAFILTERS_CHECK(cudaMemcpy2D(dev_in[k].data(), dev_in[k].pitch(), host[k].data(), sz.width,
                                       sz.width, sz.height, cudaMemcpyHostToDevice));
      }
      HistEqGpu eq;
      Stats kern = time_gpu(stream.get(), iters, [&](int i) {
        const DevicePlane &in = dev_in[i % kRotation];
        eq.enqueue(ConstPlane(in.data(), in.pitch(), sz.width, sz.height),
                   Plane{dev_out.data(), dev_out.pitch(), sz.width, sz.height}, stream.get());
      });
      report("kernels only (GPU time)", sz, kern, 3.0 * n);

      // Floors: one frame each way over PCIe from pinned memory.
      PinnedBuffer pin_in, pin_out;
      pin_in.reserve(n);
      pin_out.reserve(n);
      std::memcpy(pin_in.data(), host[0].data(), n);
      Stats h2d = time_gpu(stream.get(), iters, [&](int) {
        CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev_out.data(), dev_out.pitch(), pin_in.data(), sz.width,
                                            sz.width, sz.height, cudaMemcpyHostToDevice, stream.get()));
      });
      report("pinned h2d copy", sz, h2d, double(n));
      Stats d2h = time_gpu(stream.get(), iters, [&](int) {
        CUDAFILTERS_CHECK(cudaMemcpy2DAsync(pin_out.data(), sz.width, dev_out.data(), dev_out.pitch(),
                                            sz.width, sz.height, cudaMemcpyDeviceToHost, stream.get()));
      });
      report("pinned d2h copy", sz, d2h, double(n));

      // Whole host round trip, as the element does it for system memory.
      GpuFrameRunner runner;
      runner.reserve(sz.width, sz.height);
      std::vector<uint8_t> out(n);
      Stats pageable = time_host(iters / 2, [&](int i) {
        runner.process_host(eq, ConstPlane(host[i % kRotation].data(), sz.width, sz.width, sz.height),
                            Plane{out.data(), size_t(sz.width), sz.width, sz.height});
      });
      report("host round trip, pageable frames", sz, pageable, 2.0 * n);

      std::vector<PinnedBuffer> pinned(kRotation);
      for (int k = 0; k < kRotation; ++k) {
        pinned[k].reserve(n);
        std::memcpy(pinned[k].data(), host[k].data(), n);
      }
      Stats locked = time_host(iters / 2, [&](int i) {
        runner.process_host(eq, ConstPlane(pinned[i % kRotation].data(), sz.width, sz.width, sz.height),
                            Plane{pin_out.data(), size_t(sz.width), sz.width, sz.height});
      });
      report("host round trip, pinned frames", sz, locked, 2.0 * n);

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
      report("CPU implementation (1 thread)", sz, cpu, 2.0 * n);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (json) std::fclose(json);
  return 0;
}

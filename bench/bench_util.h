// Timing and reporting shared by the engine benchmarks.
#pragma once

#include <cudafilters/cuda_memory.h>
#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/gpu_window_filter.h>
#include <cudafilters/gpu_plane_filter.h>
#include "frame_store.h"

#include "../tests/check/common/thermal_scene.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace bench {

struct Size {
  const char *name;
  int width, height;
};

// The sizes every benchmark reports.
constexpr Size kSizes[] = {{"720p", 1280, 720}, {"1080p", 1920, 1080}, {"4K", 3840, 2160}};

// `--frames N` (measurements per row), `--json FILE` (JSON lines) and
// `--size NAME` (one of kSizes' names: only that size).
struct Options {
  int frames;
  FILE *json = nullptr;
  const char *size = nullptr;

  bool wants(const Size &sz) const { return !size || !std::strcmp(size, sz.name); }
};

inline Options parse_options(int argc, char **argv, int default_frames) {
  Options o{default_frames};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--frames") && i + 1 < argc) o.frames = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) o.json = std::fopen(argv[++i], "w");
    else if (!std::strcmp(argv[i], "--size") && i + 1 < argc) o.size = argv[++i];
  }
  return o;
}

struct Stats {
  double median_us, p10_us, p90_us;
};

inline Stats summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[std::min(us.size() - 1, size_t(q * us.size()))]; };
  return {at(0.5), at(0.1), at(0.9)};
}

// Smooth gradients, blocky texture and noise: content like a real frame,
// different for each seed.
inline std::vector<uint8_t> make_frame(int w, int h, int seed) {
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

// The same content at `bits` bits, stored as 16-bit words (little-endian
// bytes) with the levels `shift` bits up: the 8-bit frame's levels with
// finer noise filling the bits below.
inline std::vector<uint8_t> make_frame16(int w, int h, int seed, int bits, int shift = 0) {
  const std::vector<uint8_t> coarse = make_frame(w, h, seed);
  std::mt19937 rng(seed + 1000);
  std::uniform_int_distribution<int> fine(0, (1 << (bits - 8)) - 1);
  std::vector<uint8_t> f(coarse.size() * 2);
  for (size_t k = 0; k < coarse.size(); ++k) {
    const uint16_t v = uint16_t(((coarse[k] << (bits - 8)) | fine(rng)) << shift);
    std::memcpy(&f[2 * k], &v, 2);
  }
  return f;
}

// What a deep benchmark frame shows.
enum class DeepContent {
  kScene,    // make_frame16: a camera-like scene with noise in the low bits
  kThermal,  // a 14-bit thermal scene (make_thermal16), in 16-bit words
  kNoise,    // every sample random over all 2^bits levels: the worst case
};

inline const char *content_name(DeepContent c) {
  switch (c) {
    case DeepContent::kThermal: return "thermal";
    case DeepContent::kNoise: return "noise";
    default: return "scene";
  }
}

// A thermal camera's 14-bit frame in 16-bit words: a smooth background at a
// third of the range, one hot object, sensor noise of 20 levels.
inline std::vector<uint8_t> make_thermal16(int w, int h, int seed) {
  const double top = (1 << 14) - 1;
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, top / 800.0);
  std::vector<uint8_t> f(size_t(w) * h * 2);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double v = thermal_scene_level(x, y, w, h, top, 40 * seed) + noise(rng);
      const uint16_t s = uint16_t(std::clamp(v, 0.0, top));
      std::memcpy(&f[2 * (size_t(y) * w + x)], &s, 2);
    }
  return f;
}

// Every sample at a random level of 2^bits, `shift` bits up.
inline std::vector<uint8_t> make_noise16(int w, int h, int seed, int bits, int shift) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> level(0, (1 << bits) - 1);
  std::vector<uint8_t> f(size_t(w) * h * 2);
  for (size_t k = 0; k < f.size() / 2; ++k) {
    const uint16_t s = uint16_t(level(rng) << shift);
    std::memcpy(&f[2 * k], &s, 2);
  }
  return f;
}

// Deep frames of `bits` bits at `shift` for the deep benchmarks: kRotation
// distinct frames on the host and on the device, an output plane, and a
// P010-like chroma plane to carry.
struct DeepFrames {
  cudafilters::SampleLayout layout;
  int width, height;
  std::vector<std::vector<uint8_t>> host;
  std::vector<cudafilters::DevicePlane> dev_in;
  cudafilters::DevicePlane dev_out, chroma_in, chroma_out;

  DeepFrames(int w, int h, int bits, int shift, int rotation,
             DeepContent content = DeepContent::kScene)
      : layout{2, bits, shift}, width(w), height(h), host(rotation), dev_in(rotation) {
    for (int k = 0; k < rotation; ++k) {
      if (content == DeepContent::kThermal)
        host[k] = make_thermal16(w, h, k);
      else if (content == DeepContent::kNoise)
        host[k] = make_noise16(w, h, k, bits, shift);
      else
        host[k] = make_frame16(w, h, k, bits, shift);
      dev_in[k].reserve(2 * w, h);
      CUDAFILTERS_CHECK(cudaMemcpy2D(dev_in[k].data(), dev_in[k].pitch(), host[k].data(), 2 * w,
                                     2 * w, h, cudaMemcpyHostToDevice));
    }
    dev_out.reserve(2 * w, h);
    chroma_in.reserve(2 * w, h / 2);
    chroma_out.reserve(2 * w, h / 2);
    CUDAFILTERS_CHECK(cudaMemset2D(chroma_in.data(), chroma_in.pitch(), 0x80, 2 * w, h / 2));
  }
  // Device frame i (rotating), the device output, host frame i.
  cudafilters::ConstPlane in(int i) const {
    const cudafilters::DevicePlane &p = dev_in[i % dev_in.size()];
    return cudafilters::ConstPlane(p.data(), p.pitch(), width, height, layout);
  }
  cudafilters::Plane out() const {
    return cudafilters::Plane(dev_out.data(), dev_out.pitch(), width, height, layout);
  }
  cudafilters::ConstPlane host_in(int i) const {
    return cudafilters::ConstPlane(host[i % host.size()].data(), 2 * size_t(width), width, height,
                                   layout);
  }
  cudafilters::CarriedPlanes chroma() const {
    return {{cudafilters::ConstPlane(chroma_in.data(), chroma_in.pitch(), 2 * width, height / 2),
             cudafilters::Plane(chroma_out.data(), chroma_out.pitch(), 2 * width, height / 2)}};
  }
  // The device output copied to `to` (2 * width * height bytes).
  void download(std::vector<uint8_t> &to, cudaStream_t s) const {
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(to.data(), 2 * width, dev_out.data(), dev_out.pitch(),
                                        2 * width, height, cudaMemcpyDeviceToHost, s));
    CUDAFILTERS_CHECK(cudaStreamSynchronize(s));
  }
};

// 8-bit frames for the benchmarks: `rotation` distinct frames (make_frame)
// on the host and on the device, an output plane, and an NV12 chroma plane
// to carry.
struct ByteFrames {
  int width, height;
  std::vector<std::vector<uint8_t>> host;
  std::vector<cudafilters::DevicePlane> dev_in;
  cudafilters::DevicePlane dev_out, chroma_in, chroma_out;

  ByteFrames(int w, int h, int rotation) : width(w), height(h), host(rotation), dev_in(rotation) {
    for (int k = 0; k < rotation; ++k) {
      host[k] = make_frame(w, h, k);
      dev_in[k].reserve(w, h);
      CUDAFILTERS_CHECK(cudaMemcpy2D(dev_in[k].data(), dev_in[k].pitch(), host[k].data(), w, w, h,
                                     cudaMemcpyHostToDevice));
    }
    dev_out.reserve(w, h);
    chroma_in.reserve(w, h / 2);
    chroma_out.reserve(w, h / 2);
    CUDAFILTERS_CHECK(cudaMemset2D(chroma_in.data(), chroma_in.pitch(), 128, w, h / 2));
  }
  // Device frame i (rotating), the device output.
  cudafilters::ConstPlane in(int i) const {
    const cudafilters::DevicePlane &p = dev_in[i % dev_in.size()];
    return cudafilters::ConstPlane(p.data(), p.pitch(), width, height);
  }
  cudafilters::Plane out() const { return cudafilters::Plane{dev_out.data(), dev_out.pitch(), width, height}; }
  cudafilters::CarriedPlanes chroma() const {
    return {{cudafilters::ConstPlane(chroma_in.data(), chroma_in.pitch(), width, height / 2),
             cudafilters::Plane{chroma_out.data(), chroma_out.pitch(), width, height / 2}}};
  }
};

// GPU time per frame with frames queued back to back, as a busy stream runs
// them: events around `batch` enqueues, divided by `batch`. Unlike time_gpu,
// the host's submission latency of a single launch is hidden.
inline Stats time_gpu_back_to_back(cudaStream_t s, int iters, const std::function<void(int)> &enqueue,
                                   int batch = 50, int warmup = 20) {
  for (int i = 0; i < warmup; ++i) enqueue(i);
  cudafilters::Event start, stop;
  std::vector<double> us;
  for (int i = 0; i < iters; ++i) {
    CUDAFILTERS_CHECK(cudaEventRecord(start.get(), s));
    for (int b = 0; b < batch; ++b) enqueue(i * batch + b);
    CUDAFILTERS_CHECK(cudaEventRecord(stop.get(), s));
    CUDAFILTERS_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDAFILTERS_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    us.push_back(ms * 1000.0 / batch);
  }
  return summarize(us);
}

// GPU time of one enqueue between two events (the GPU also waits for the
// host to submit it).
inline Stats time_gpu(cudaStream_t s, int iters, const std::function<void(int)> &enqueue,
                      int warmup = 20) {
  return time_gpu_back_to_back(s, iters, enqueue, 1, warmup);
}

// Wall time per call of a synchronous function.
inline Stats time_host(int iters, const std::function<void(int)> &fn, int warmup = 5) {
  for (int i = 0; i < warmup; ++i) fn(i);
  std::vector<double> us;
  for (int i = 0; i < iters; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn(i);
    auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return summarize(us);
}

// An NV12 frame in device memory (synthetic luma and chroma) and an output
// frame laid out alike.
struct DeviceNv12 {
  int w, h;
  cudafilters::DevicePlane in, out;

  explicit DeviceNv12(const Size &sz) : w(sz.width), h(sz.height) {
    in.reserve(w, h + h / 2);
    out.reserve(w, h + h / 2);
    const std::vector<uint8_t> luma = make_frame(w, h, 7), uv = make_frame(w, h / 2, 8);
    CUDAFILTERS_CHECK(cudaMemcpy2D(in.data(), in.pitch(), luma.data(), w, w, h, cudaMemcpyHostToDevice));
    CUDAFILTERS_CHECK(cudaMemcpy2D(in.data() + h * in.pitch(), in.pitch(), uv.data(), w, w, h / 2,
                                   cudaMemcpyHostToDevice));
  }
  cudafilters::FramePlanes src() const { return planes_at(in.data(), in.pitch()).as_const(); }
  cudafilters::FramePlanesOut dst() const { return planes_at(out.data(), out.pitch()); }

 private:
  cudafilters::FramePlanesOut planes_at(uint8_t *base, size_t pitch) const {
    cudafilters::FramePlanesOut f;
    f.luma = cudafilters::Plane(base, pitch, w, h);
    f.u = cudafilters::Plane(base + h * pitch, pitch, w / 2, h / 2);
    f.v = cudafilters::Plane(base + h * pitch + 1, pitch, w / 2, h / 2);
    f.chroma_step = 2;
    return f;
  }
};

// GPU time per frame of what an element queues for an NV12 frame in CUDA
// memory: `filter` on luma, chroma carried.
inline Stats element_gpu_time(cudafilters::GpuPlaneFilter &filter, const Size &sz, int iters) {
  const DeviceNv12 frame(sz);
  const cudafilters::FramePlanes src = frame.src();
  const cudafilters::FramePlanesOut dst = frame.dst();
  // NV12's chroma as one plane of bytes, U and V interleaved.
  const cudafilters::ConstPlane uv = cudafilters::FrameBytes(src).planes[1];
  const cudafilters::Plane uv_out = cudafilters::writable(cudafilters::FrameBytes(dst.as_const()).planes[1]);
  const cudafilters::CarriedPlanes chroma = {{uv, uv_out}};
  cudafilters::GpuFrameRunner runner;
  cudafilters::Stream stream;
  return time_gpu_back_to_back(stream.get(), iters, [&](int) {
    runner.enqueue_device(filter, src.luma, dst.luma, chroma, stream.get());
  }, 10, 5);
}

// The same for a whole-frame filter (cudanlm: luma and chroma) on an NV12
// frame: the GPU work its element queues per frame, frames back to back.
inline Stats window_gpu_time(cudafilters::GpuWindowFilter &filter, const Size &sz, int iters) {
  const DeviceNv12 frame(sz);
  const cudafilters::FramePlanes src = frame.src();
  const cudafilters::FramePlanesOut dst = frame.dst();
  cudafilters::Stream stream;
  return time_gpu_back_to_back(stream.get(), iters, [&](int) {
    filter.enqueue_window(&src, 1, 0, dst, stream.get());
  }, 10, 5);
}

// The CPU's model name, from /proc/cpuinfo.
inline std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

// Prints one row and, with --json, appends one JSON line.
class Reporter {
 public:
  Reporter(const char *bench, FILE *json) : bench_(bench), json_(json) {}
  void device_info() {
    int dev = 0, driver = 0, runtime = 0;
    cudaDeviceProp prop{};
    CUDAFILTERS_CHECK(cudaGetDevice(&dev));
    CUDAFILTERS_CHECK(cudaGetDeviceProperties(&prop, dev));
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    std::printf("GPU: %s, %d SMs, driver API %d, runtime %d\n", prop.name, prop.multiProcessorCount,
                driver, runtime);
    if (json_)
      std::fprintf(json_, "{\"bench\":\"%s\",\"gpu\":\"%s\",\"sms\":%d,\"driver\":%d,\"runtime\":%d}\n",
                   bench_, prop.name, prop.multiProcessorCount, driver, runtime);
  }
  // bytes: the fewest bytes the operation must move, for a GB/s column.
  void row(const char *what, const Size &sz, const Stats &st, double bytes) {
    std::printf("  %-40s %-6s median %9.1f us  (p10 %9.1f, p90 %9.1f)", what, sz.name, st.median_us,
                st.p10_us, st.p90_us);
    if (bytes > 0) std::printf("  %7.1f GB/s", bytes / (st.median_us * 1e3));
    std::printf("\n");
    if (json_)
      std::fprintf(json_,
                   "{\"bench\":\"%s\",\"what\":\"%s\",\"size\":\"%s\",\"width\":%d,\"height\":%d,"
                   "\"median_us\":%.3f,\"p10_us\":%.3f,\"p90_us\":%.3f,\"bytes\":%.0f}\n",
                   bench_, what, sz.name, sz.width, sz.height, st.median_us, st.p10_us, st.p90_us, bytes);
  }

  // The floor of kernels that stream device memory: a 512 MB
  // device-to-device copy, bytes read + written.
  void device_copy_row(cudaStream_t stream) {
    const size_t bytes = size_t(512) << 20;
    cudafilters::DeviceArray<uint8_t> a(bytes), b(bytes);
    CUDAFILTERS_CHECK(cudaMemset(a.get(), 1, bytes));
    const Size big{"512MB", 0, 0};
    row("d2d copy (read+write)", big, time_gpu(stream, 20, [&](int) {
          CUDAFILTERS_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream));
        }),
        2.0 * bytes);
  }

 private:
  const char *bench_;
  FILE *json_;
};

// The items of a comma-separated list, empty ones left out.
inline std::vector<std::string> split(const std::string &list) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

}  // namespace bench

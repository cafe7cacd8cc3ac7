// HistEqGpu on one or more CUDA streams at once, each stream with an engine
// of its own and frames queued back to back (as busy elements run them): GPU
// time per frame over all streams, at any frame size and depth. Every
// stream's last output is checked against HistEqCpu.
//
//   histeq_streams_bench [--streams S] [--frames N] [--bits 8|10|12|16] [--size WxH]
//
// Frames are in device memory: 8-bit planes of the synthetic scene, or deep
// planes of it (16-bit words) with random low bits (nearly every level
// occupied). Each
// stream is fed by a host thread of its own; the time runs from the moment
// all threads start queueing to the moment the last stream is done, and is
// divided by every frame queued. Seven rounds; min, median and max. With one
// stream it also times one frame at a time between two events.
#include <cudafilters/cuda_memory.h>
#include <cudafilters/histeq_cpu.h>
#include <cudafilters/histeq_gpu.h>
#include "bench_util.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace cudafilters;
using namespace bench;

namespace {

struct StreamsOptions {
  int streams = 1;
  int frames = 300;
  int bits = 8;
  int width = 1920, height = 1080;
};

StreamsOptions parse(int argc, char **argv) {
  StreamsOptions o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char *v = argv[i + 1];
    if (key == "--streams") o.streams = std::atoi(v);
    else if (key == "--frames") o.frames = std::atoi(v);
    else if (key == "--bits") o.bits = std::atoi(v);
    else if (key == "--size" && std::sscanf(v, "%dx%d", &o.width, &o.height) == 2) continue;
    else throw std::invalid_argument("usage: histeq_streams_bench [--streams S] [--frames N] "
                                     "[--bits 8|10|12|16] [--size WxH]");
  }
  const bool bits_ok = o.bits == 8 || o.bits == 10 || o.bits == 12 || o.bits == 16;
  if (o.streams < 1 || o.frames < 1 || !bits_ok || o.width < 1 || o.height < 1)
    throw std::invalid_argument("streams, frames and size must be positive, bits 8, 10, 12 or 16");
  return o;
}

// One stream's engine, frames and CUDA stream.
struct Lane {
  HistEqGpu eq;
  Stream stream;
  std::unique_ptr<DeepFrames> deep;  // 10 to 16 bits
  std::vector<uint8_t> host;         // 8-bit
  DevicePlane in, out;

  Lane(const StreamsOptions &o, int seed) {
    if (o.bits > 8) {
      deep = std::make_unique<DeepFrames>(o.width, o.height, o.bits, 0, 1);
      return;
    }
    host = make_frame(o.width, o.height, seed);
    in.reserve(o.width, o.height);
    out.reserve(o.width, o.height);
    CUDAFILTERS_CHECK(cudaMemcpy2D(in.data(), in.pitch(), host.data(), o.width, o.width, o.height,
                                   cudaMemcpyHostToDevice));
  }
  void enqueue(const StreamsOptions &o) {
    if (deep) {
      eq.enqueue(deep->in(0), deep->out(), stream.get());
      return;
    }
    eq.enqueue(ConstPlane(in.data(), in.pitch(), o.width, o.height),
               Plane(out.data(), out.pitch(), o.width, o.height), stream.get());
  }
  bool matches_cpu(const StreamsOptions &o) {
    HistEqCpu cpu;
    if (deep) {
      const size_t row = 2 * size_t(o.width);
      std::vector<uint8_t> gpu(row * o.height), ref(row * o.height);
      deep->download(gpu, stream.get());
      cpu.process(deep->host_in(0), Plane(ref.data(), row, o.width, o.height, deep->layout));
      return gpu == ref;
    }
    std::vector<uint8_t> gpu(size_t(o.width) * o.height), ref(gpu.size());
    stream.synchronize();
    CUDAFILTERS_CHECK(cudaMemcpy2D(gpu.data(), o.width, out.data(), out.pitch(), o.width, o.height,
                                   cudaMemcpyDeviceToHost));
    cpu.process(ConstPlane(host.data(), o.width, o.width, o.height),
                Plane(ref.data(), o.width, o.width, o.height));
    return gpu == ref;
  }
};

// Microseconds per frame with every lane queueing `frames` frames at once.
double run_round(std::vector<std::unique_ptr<Lane>> &lanes, const StreamsOptions &o) {
  int device = 0;
  CUDAFILTERS_CHECK(cudaGetDevice(&device));
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (auto &lane : lanes)
    threads.emplace_back([&, l = lane.get()] {
      CUDAFILTERS_CHECK(cudaSetDevice(device));
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < o.frames; ++i) l->enqueue(o);
      l->stream.synchronize();
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto t0 = std::chrono::steady_clock::now();
  go = true;
  for (auto &t : threads) t.join();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() /
         (double(lanes.size()) * o.frames);
}

}  // namespace

int main(int argc, char **argv) {
  try {
    const StreamsOptions o = parse(argc, argv);
    std::vector<std::unique_ptr<Lane>> lanes;
    for (int s = 0; s < o.streams; ++s) lanes.push_back(std::make_unique<Lane>(o, 7 + s));
    for (auto &lane : lanes)
      for (int i = 0; i < 20; ++i) lane->enqueue(o);
    CUDAFILTERS_CHECK(cudaDeviceSynchronize());

    std::vector<double> per_frame;
    for (int round = 0; round < 7; ++round) per_frame.push_back(run_round(lanes, o));
    std::sort(per_frame.begin(), per_frame.end());
    std::printf("%d-bit %dx%d, %d stream(s), frames back to back: %.2f us per frame "
                "(min %.2f, max %.2f)",
                o.bits, o.width, o.height, o.streams, per_frame[per_frame.size() / 2],
                per_frame.front(), per_frame.back());
    if (o.streams == 1) {
      Lane &lane = *lanes.front();
      const Stats one = time_gpu(lane.stream.get(), o.frames, [&](int) { lane.enqueue(o); });
      std::printf("; one frame at a time %.2f us", one.median_us);
    }
    std::printf("\n");
    for (auto &lane : lanes)
      if (!lane->matches_cpu(o)) {
        std::fprintf(stderr, "a stream's output differs from HistEqCpu's\n");
        return 1;
      }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "histeq_streams_bench: %s\n", e.what());
    return 1;
  }
}

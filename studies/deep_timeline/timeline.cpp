// Where a deep (16-bit) frame's time goes inside the cooperative histogram
// equalization kernel: built against a copy of
// cuda/histeq/histeq_kernels_16bit.cu that instrument.py has marked with
// %globaltimer stamps (thread 0 of every block, after the block's barrier at
// each step boundary). For each mark it prints
// the median, over 40 frames, of the first and the last block to reach it,
// from the first block's start. Also the GPU time per frame (events around
// one frame, as histeq_bench) and back to back, next to the 8-bit kernel,
// and a check against the CPU path.
//
//   timeline [frames per timing] [720p|1080p|4K] [scene|thermal|noise]
//
// The content (bench_util.h, DeepContent) sets how many pages of levels a
// block's samples occupy: half on the scene, a few on the thermal frame,
// all of them on noise.
#include <cudafilters/cuda_memory.h>
#include <cudafilters/histeq_cpu.h>
#include <cudafilters/histeq_gpu.h>
#include "../../bench/bench_util.h"

#include <string>

using namespace cudafilters;
using namespace bench;

namespace cudafilters {
void deep_timeline_read(unsigned long long *out);
void deep_timeline_clear();
}  // namespace cudafilters

namespace {
constexpr int kMarks = 16, kBlocks = 256;
const char *const kMark[kMarks] = {
    "start",      "cleared",       "counted",  "stored",        "count step",    "sum step",
    "hist stored", "tile reduced", "map step", "sum loads",     "all tile sums", "tile lut",
    "lut copied", "mapped",        "flag released", "partial stored"};

void timeline(HistEqGpu &eq, const DeepFrames &f, cudaStream_t s, int frames) {
  std::vector<std::vector<double>> first(kMarks), last(kMarks);
  std::vector<unsigned long long> tl(kBlocks * kMarks);
  for (int i = 0; i < frames; ++i) {
    deep_timeline_clear();
    eq.enqueue(f.in(i), f.out(), s);
    CUDAFILTERS_CHECK(cudaStreamSynchronize(s));
    deep_timeline_read(tl.data());
    unsigned long long t0 = ~0ull;
    for (int b = 0; b < kBlocks; ++b)
      if (tl[b * kMarks]) t0 = std::min(t0, tl[b * kMarks]);
    for (int k = 0; k < kMarks; ++k) {
      double lo = 1e30, hi = -1;
      for (int b = 0; b < kBlocks; ++b) {
        const unsigned long long v = tl[b * kMarks + k];
        if (!v) continue;
        lo = std::min(lo, (v - t0) / 1000.0);
        hi = std::max(hi, (v - t0) / 1000.0);
      }
      if (hi >= 0) {
        first[k].push_back(lo);
        last[k].push_back(hi);
      }
    }
  }
  for (int k = 0; k < kMarks; ++k)
    if (!first[k].empty())
      std::printf("    %-14s first %6.2f  last %6.2f us\n", kMark[k], summarize(first[k]).median_us,
                  summarize(last[k]).median_us);
}
}  // namespace

int main(int argc, char **argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 300;
  Stream stream;
  const cudaStream_t s = stream.get();
  const Size sizes[] = {{"720p", 1280, 720}, {"1080p", 1920, 1080}, {"4K", 3840, 2160}};
  DeepContent content = DeepContent::kScene;
  for (DeepContent c : {DeepContent::kThermal, DeepContent::kNoise})
    if (argc > 3 && std::string(argv[3]) == content_name(c)) content = c;
  for (const Size &sz : sizes) {
    if (argc > 2 && std::string(argv[2]) != sz.name) continue;
    std::vector<DevicePlane> in8(4);
    DevicePlane out8;
    out8.reserve(sz.width, sz.height);
    for (int k = 0; k < 4; ++k) {
      const std::vector<uint8_t> h = make_frame(sz.width, sz.height, k);
      in8[k].reserve(sz.width, sz.height);
      CUDAFILTERS_CHECK(cudaMemcpy2D(in8[k].data(), in8[k].pitch(), h.data(), sz.width, sz.width,
                                     sz.height, cudaMemcpyHostToDevice));
    }
    const DeepFrames f(sz.width, sz.height, 16, 0, 4, content);
    HistEqGpu eq8, eq16;
    auto frame8 = [&](int i) {
      eq8.enqueue(ConstPlane(in8[i % 4].data(), in8[i % 4].pitch(), sz.width, sz.height),
                  Plane{out8.data(), out8.pitch(), sz.width, sz.height}, s);
    };
    auto frame16 = [&](int i) { eq16.enqueue(f.in(i), f.out(), s); };
    std::vector<double> t8, t16, b2b8, b2b16;
    // Interleaved, so that both depths see the same state of the machine.
    for (int round = 0; round < 5; ++round) {
      t8.push_back(time_gpu(s, iters, frame8).median_us);
      t16.push_back(time_gpu(s, iters, frame16).median_us);
      b2b8.push_back(time_gpu_back_to_back(s, iters / 10 + 1, frame8).median_us);
      b2b16.push_back(time_gpu_back_to_back(s, iters / 10 + 1, frame16).median_us);
    }
    std::printf("%s, 16-bit %s (medians of %d frames, 5 rounds)\n", sz.name, content_name(content),
                iters);
    auto row = [](const char *what, const std::vector<double> &v) {
      std::printf("  %-26s", what);
      for (double x : v) std::printf(" %6.1f", x);
      std::printf(" us\n");
    };
    row("8-bit, per frame", t8);
    row("16-bit, per frame", t16);
    row("8-bit, back to back", b2b8);
    row("16-bit, back to back", b2b16);

    std::vector<uint8_t> gpu(2 * size_t(sz.width) * sz.height), cpu(gpu.size());
    HistEqCpu cpu_eq;
    const Plane cpu_out(cpu.data(), 2 * size_t(sz.width), sz.width, sz.height, f.layout);
    bool same = true;
    for (int i = 0; i < 4 && same; ++i) {
      CUDAFILTERS_CHECK(
          cudaMemset2D(f.dev_out.data(), f.dev_out.pitch(), 0xA5, 2 * sz.width, sz.height));
      frame16(i);
      f.download(gpu, s);
      cpu_eq.process(f.host_in(i), cpu_out);
      same = gpu == cpu;
    }
    std::printf("  16-bit GPU result %s the CPU's\n", same ? "equals" : "DIFFERS FROM");
    std::printf("  timeline of a 16-bit frame (median of 40 frames; first and last block)\n");
    timeline(eq16, f, s, 40);
  }
  return 0;
}

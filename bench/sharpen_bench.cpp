// Engine-level benchmark of sharpening (no GStreamer): GPU time of the
// kernel on luma alone and on NV12 frames in device memory (chroma copied by
// the kernel, or by cudaMemcpy2D), for unsharp masking at several radii and
// the 3x3 kernel; the device memory bandwidth that bounds them; and the CPU
// implementation on the same frames. Checks the GPU against the CPU once per
// size.
//
//   sharpen_bench [--frames N] [--json FILE] [--size 720p|1080p|4K]
#include <cudafilters/cuda_memory.h>
#include <cudafilters/sharpen_cpu.h>
#include <cudafilters/sharpen_gpu.h>
#include "bench_util.h"
#include "sharpen_taps.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace cudafilters;
using namespace bench;

namespace {

constexpr int kRotation = 4;

struct Setting {
  const char *name;
  SharpenParams params;
};

SharpenParams unsharp(double amount, double radius) {
  SharpenParams p;
  p.amount = amount;
  p.radius = radius;
  return p;
}

SharpenParams laplacian() {
  SharpenParams p;
  p.kernel = SharpenKernel::kLaplacian3x3;
  return p;
}

}  // namespace

int main(int argc, char **argv) {
  const Options opt = parse_options(argc, argv, 1000);
  Reporter rep("sharpen", opt.json);
  const Setting settings[] = {{"unsharp radius 1 (7 taps)", unsharp(1.0, 1.0)},
                              {"unsharp radius 3 (19 taps)", unsharp(1.0, 3.0)},
                              {"unsharp radius 8 (49 taps)", unsharp(1.0, 8.0)},
                              {"laplacian-3x3", laplacian()}};
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
      auto luma_in = [&](int i) { return frames.in(i); };
      const Plane luma_out = frames.out();
      const CarriedPlanes chroma = frames.chroma();

      // 16-bit frames (GRAY16_LE): GPU time, bytes moved twice those of 8-bit.
      {
        const DeepFrames deep(sz.width, sz.height, 16, 0, kRotation);
        for (const Setting &s : settings) {
          SharpenGpu gpu;
          gpu.set_params(s.params);
          // The wider CV_16U Gaussian: name the 16-bit tap count.
          std::string name(s.name);
          name = name.substr(0, name.find(" ("));
          if (s.params.kernel == SharpenKernel::kUnsharp)
            name += " (" + std::to_string(sharpen_gaussian_taps(s.params.radius, true).size()) + " taps)";
          rep.row((name + ", 16-bit luma (GPU time)").c_str(), sz,
                  time_gpu(stream.get(), opt.frames,
                           [&](int i) { gpu.enqueue(deep.in(i), deep.out(), stream.get()); }),
                  4.0 * n);
        }
      }

      for (const Setting &s : settings) {
        SharpenGpu gpu;
        gpu.set_params(s.params);
        const std::string name(s.name);
        rep.row((name + ", luma (GPU time)").c_str(), sz, time_gpu(stream.get(), opt.frames, [&](int i) {
                  gpu.enqueue(luma_in(i), luma_out, stream.get());
                }),
                2.0 * n);
        rep.row((name + ", NV12 (GPU time)").c_str(), sz, time_gpu(stream.get(), opt.frames, [&](int i) {
                  gpu.enqueue_carrying(luma_in(i), luma_out, chroma, stream.get());
                }),
                3.0 * n);
        rep.row((name + ", NV12 back to back").c_str(), sz,
                time_gpu_back_to_back(stream.get(), opt.frames / 10 + 1, [&](int i) {
                  gpu.enqueue_carrying(luma_in(i), luma_out, chroma, stream.get());
                }),
                3.0 * n);
        rep.row((name + ", NV12, chroma by cudaMemcpy2D").c_str(), sz,
                time_gpu(stream.get(), opt.frames, [&](int i) {
                  gpu.GpuPlaneFilter::enqueue_carrying(luma_in(i), luma_out, chroma, stream.get());
                }),
                3.0 * n);

        // The GPU against the CPU implementation, once per size and setting.
        SharpenCpu cpu;
        cpu.set_params(s.params);
        std::vector<uint8_t> want(n), got(n);
        cpu.process(ConstPlane(host[1].data(), sz.width, sz.width, sz.height),
                    Plane{want.data(), size_t(sz.width), sz.width, sz.height});
        gpu.enqueue(luma_in(1), luma_out, stream.get());
        stream.synchronize();
        CUDAFILTERS_CHECK(cudaMemcpy2D(got.data(), sz.width, dev_out.data(), dev_out.pitch(), sz.width,
                                       sz.height, cudaMemcpyDeviceToHost));
        if (got != want) {
          std::fprintf(stderr, "MISMATCH between GPU and CPU: %s at %s\n", s.name, sz.name);
          return 1;
        }
        rep.row(("CPU implementation (all threads), " + name).c_str(), sz,
                time_host(std::max(10, opt.frames / 20), [&](int i) {
                  cpu.process(ConstPlane(host[i % kRotation].data(), sz.width, sz.width, sz.height),
                              Plane{got.data(), size_t(sz.width), sz.width, sz.height});
                }),
                2.0 * n);
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "sharpen_bench: %s\n", e.what());
    return 1;
  }
  if (opt.json) std::fclose(opt.json);
  return 0;
}

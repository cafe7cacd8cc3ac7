// Engine-level benchmark of CLAHE (no GStreamer): GPU time of the kernels on
// device frames (NV12 with its chroma carried, several grids, temporal
// smoothing), the host-memory round trip through GpuFrameRunner (streamed
// and copied pinned frames, pageable frames) next to its floor (the pinned
// copies each way), the CPU implementation on the shared thread pool, and
// 16- and 10-bit frames (GRAY16_LE, P010_10LE) for every grid.
//
//   clahe_bench [--frames N] [--json FILE] [--size 720p|1080p|4K]
//
// Frames are synthetic but not constant (gradients, texture and noise), and
// several distinct frames are rotated so no cache holds a single input. The
// GPU result is checked once against the CPU implementation per size.
#include "bench_util.h"
#include <cudafilters/clahe_cpu.h>
#include <cudafilters/clahe_gpu.h>
#include <cudafilters/cuda_memory.h>
#include <cudafilters/gpu_frame_runner.h>
#include "runner_testing.h"
#include "thread_pool.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using namespace cudafilters;
using namespace bench;

namespace {

constexpr int kRotation = 4;

struct Grid {
  const char *label;
  ClaheParams params;
};

// OpenCV's default grid with clip 2 (the figures the targets name), one
// tile (plateau equalization), the largest grid, and temporal smoothing.
const Grid kGrids[] = {
    {"clip 2, 8x8 tiles", {2.0, 8, 8, 0.0}},
    {"clip 2, 1x1 tile", {2.0, 1, 1, 0.0}},
    {"clip 2, 64x64 tiles", {2.0, 64, 64, 0.0}},
    {"clip 2, 8x8 tiles, temporal-smoothing 0.9", {2.0, 8, 8, 0.9}},
};

// Deep frames of `bits` bits at `shift` (the low bits noisy, as a sensor's
// are): the kernels on a device plane for each grid, with a P010-like
// chroma plane carried, and the CPU implementation; the GPU result checked
// once per grid against the CPU's.
void bench_deep(Reporter &rep, const Size &sz, int iters, cudaStream_t stream, int bits, int shift,
                const std::string &what) {
  const size_t n = size_t(sz.width) * sz.height;
  const DeepFrames f(sz.width, sz.height, bits, shift, kRotation);
  auto in = [&](int i) { return f.in(i); };
  auto host_in = [&](int i) { return f.host_in(i); };
  const Plane out_plane = f.out();
  const CarriedPlanes chroma = f.chroma();
  std::vector<uint8_t> from_gpu(2 * n), from_cpu(2 * n);
  const Plane host_out(from_cpu.data(), 2 * size_t(sz.width), sz.width, sz.height, f.layout);

  for (const Grid &g : kGrids) {
    ClaheGpu clahe;
    clahe.set_params(g.params);
    const std::string label = what + ", " + g.label;
    rep.row((label + ": kernels only (GPU time)").c_str(), sz,
            time_gpu(stream, iters, [&](int i) { clahe.enqueue(in(i), out_plane, stream); }),
            4.0 * n);
    rep.row((label + ": 4:2:0, frames back to back").c_str(), sz,
            time_gpu_back_to_back(stream, iters / 10 + 1, [&](int i) {
              clahe.enqueue_carrying(in(i), out_plane, chroma, stream);
            }),
            6.0 * n);
    if (g.params.temporal_smoothing != 0) continue;
    ClaheGpu fresh;
    fresh.set_params(g.params);
    fresh.enqueue(in(1), out_plane, stream);
    f.download(from_gpu, stream);
    ClaheCpu cpu;
    cpu.set_params(g.params);
    cpu.process(host_in(1), host_out);
    if (from_gpu != from_cpu) throw std::runtime_error("deep GPU result differs from the CPU's");
    const std::string cpu_what =
        label + ": CPU implementation (" + std::to_string(parallel_threads()) + " threads)";
    rep.row(cpu_what.c_str(), sz, time_host(std::max(5, iters / 30), [&](int i) {
              cpu.process(host_in(i), host_out);
            }), 4.0 * n);
  }
}

}  // namespace

int main(int argc, char **argv) {
  const Options opt = parse_options(argc, argv, 300);
  const int iters = opt.frames;
  FILE *json = opt.json;

  Reporter rep("clahe", json);
  try {
    rep.device_info();
    Stream stream;
    for (const Size &sz : kSizes) {
      if (!opt.wants(sz)) continue;
      const size_t n = size_t(sz.width) * sz.height;
      const ByteFrames frames(sz.width, sz.height, kRotation);
      const std::vector<std::vector<uint8_t>> &host = frames.host;
      const DevicePlane &dev_out = frames.dev_out;
      auto luma_in = [&](int i) { return frames.in(i); };
      const Plane luma_out = frames.out();
      const CarriedPlanes chroma = frames.chroma();

      // An NV12 frame in device memory, as the element handles CUDA memory.
      for (const Grid &g : kGrids) {
        ClaheGpu clahe;
        clahe.set_params(g.params);
        const std::string what = std::string("NV12 on the GPU, frames back to back, ") + g.label;
        rep.row(what.c_str(), sz, time_gpu_back_to_back(stream.get(), iters / 10 + 1, [&](int i) {
                  clahe.enqueue_carrying(luma_in(i), luma_out, chroma, stream.get());
                }), 4.0 * n);
      }
      ClaheGpu clahe;
      rep.row("NV12 on the GPU, one frame between events", sz,
              time_gpu(stream.get(), iters, [&](int i) {
                clahe.enqueue_carrying(luma_in(i), luma_out, chroma, stream.get());
              }), 4.0 * n);
      rep.row("GRAY8 on the GPU, frames back to back", sz,
              time_gpu_back_to_back(stream.get(), iters / 10 + 1,
                                    [&](int i) { clahe.enqueue(luma_in(i), luma_out, stream.get()); }),
              3.0 * n);

      // Floors of a host frame: one pinned copy each way.
      PinnedBuffer pin_out;
      pin_out.reserve(n);
      std::vector<PinnedBuffer> pinned(kRotation);
      for (int k = 0; k < kRotation; ++k) {
        pinned[k].reserve(n);
        std::memcpy(pinned[k].data(), host[k].data(), n);
      }
      auto pinned_in = [&](int i) {
        return ConstPlane(pinned[i % kRotation].data(), sz.width, sz.width, sz.height);
      };
      const Plane pinned_dst{pin_out.data(), size_t(sz.width), sz.width, sz.height};
      rep.row("pinned h2d copy", sz, time_gpu(stream.get(), iters, [&](int i) {
                CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dev_out.data(), dev_out.pitch(), pinned_in(i).data,
                                                    sz.width, sz.width, sz.height,
                                                    cudaMemcpyHostToDevice, stream.get()));
              }), double(n));
      rep.row("pinned d2h copy", sz, time_gpu(stream.get(), iters, [&](int) {
                CUDAFILTERS_CHECK(cudaMemcpy2DAsync(pin_out.data(), sz.width, dev_out.data(),
                                                    dev_out.pitch(), sz.width, sz.height,
                                                    cudaMemcpyDeviceToHost, stream.get()));
              }), double(n));
      rep.row("kernels streaming pinned memory (GPU time)", sz, time_gpu(stream.get(), iters, [&](int i) {
                clahe.enqueue_streaming(pinned_in(i), pinned_dst, luma_out, stream.get());
              }), 2.0 * n);

      // Whole host round trips, as the element does them for system memory.
      GpuFrameRunner runner, copying;
      runner.reserve(sz.width, sz.height);
      copying.reserve(sz.width, sz.height);
      rep.row("host round trip, pinned frames (streamed)", sz, time_host(iters / 2, [&](int i) {
                runner.process_host(clahe, pinned_in(i), pinned_dst);
              }), 2.0 * n);
      if (!last_frame_streamed(runner)) {
        std::fprintf(stderr, "pinned frames were not streamed at %s\n", sz.name);
        return 1;
      }
      rep.row("host round trip, pinned frames, by copies", sz, time_host(iters / 2, [&](int i) {
                copying.process_host(clahe, pinned_in(i), pinned_dst, nullptr, kCopiesOnly);
              }), 2.0 * n);
      std::vector<uint8_t> out(n);
      const Plane pageable_dst{out.data(), size_t(sz.width), sz.width, sz.height};
      rep.row("host round trip, pageable frames", sz, time_host(iters / 2, [&](int i) {
                runner.process_host(clahe,
                                    ConstPlane(host[i % kRotation].data(), sz.width, sz.width, sz.height),
                                    pageable_dst);
              }), 2.0 * n);

      bench_deep(rep, sz, iters, stream.get(), 16, 0, "16-bit (GRAY16_LE)");
      bench_deep(rep, sz, iters, stream.get(), 10, 6, "10-bit (P010_10LE)");

      // The CPU implementation, and the GPU checked against it.
      ClaheCpu cpu;
      std::vector<uint8_t> ref(n);
      cpu.process(ConstPlane(host[1].data(), sz.width, sz.width, sz.height),
                  Plane{ref.data(), size_t(sz.width), sz.width, sz.height});
      runner.process_host(clahe, ConstPlane(host[1].data(), sz.width, sz.width, sz.height), pageable_dst);
      if (out != ref) {
        std::fprintf(stderr, "MISMATCH between GPU and CPU at %s\n", sz.name);
        return 1;
      }
      const std::string cpu_what =
          "CPU implementation (" + std::to_string(parallel_threads()) + " threads)";
      rep.row(cpu_what.c_str(), sz, time_host(std::max(10, iters / 10), [&](int i) {
                cpu.process(ConstPlane(host[i % kRotation].data(), sz.width, sz.width, sz.height),
                            pageable_dst);
              }), 2.0 * n);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (json) std::fclose(json);
  return 0;
}

// Engine-level benchmark of non-local means (no GStreamer): GPU time of the
// kernel for frames already on the GPU, at several sizes and parameters; the
// host round trip; the CPU implementation on all cores. Prints the work in
// pixel-offsets so the time can be set against the floor (docs/cudanlm.md).
//
//   nlm_bench [--frames N] [--json FILE] [--size 720p|1080p|4K]
#include "bench_util.h"
#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/nlm_cpu.h>
#include <cudafilters/nlm_gpu.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

using namespace bench;
using namespace cudafilters;

namespace {

constexpr int kRotation = 4;

struct Frames {
  Size size;
  std::vector<std::vector<uint8_t>> host;
  std::vector<DevicePlane> dev;
  DevicePlane out;

  explicit Frames(Size s) : size(s), host(kRotation), dev(kRotation) {
    out.reserve(s.width, s.height);
    for (int k = 0; k < kRotation; ++k) {
      host[k] = make_frame(s.width, s.height, 10 + k);
      dev[k].reserve(s.width, s.height);
      CUDAFILTERS_CHECK(cudaMemcpy2D(dev[k].data(), dev[k].pitch(), host[k].data(), s.width, s.width,
                                     s.height, cudaMemcpyHostToDevice));
    }
  }
  ConstPlane in(int i) const {
    const DevicePlane &d = dev[i % kRotation];
    return ConstPlane(d.data(), d.pitch(), size.width, size.height);
  }
  Plane dst() const { return Plane{out.data(), out.pitch(), size.width, size.height}; }
};

// The default parameters on deep frames of `bits` bits at `shift` in
// 16-bit words: only the loads and stores differ from 8-bit frames.
void bench_deep(Reporter &rep, const Size &sz, int iters, cudaStream_t stream, NlmGpu &nlm,
                int bits, int shift, const char *what) {
  const DeepFrames f(sz.width, sz.height, bits, shift, kRotation);
  nlm.set_params(NlmParams{});
  rep.row(what, sz, time_gpu(stream, iters, [&](int i) { nlm.enqueue(f.in(i), f.out(), stream); }, 3),
          0);
}

std::string label(const NlmParams &p) {
  return "kernel p" + std::to_string(p.patch_size) + " s" + std::to_string(p.search_size) +
         (p.gaussian ? " gaussian" : " box") +
         (p.noise_sigma > 0 ? " sigma" + std::to_string(int(p.noise_sigma)) : "");
}

}  // namespace

int main(int argc, char **argv) {
  const Options opt = parse_options(argc, argv, 50);
  const int iters = opt.frames;
  FILE *json = opt.json;
  Reporter rep("nlm", json);
  try {
    rep.device_info();
    Stream stream;
    NlmGpu nlm;

    for (const Size &sz : kSizes) {
      if (!opt.wants(sz)) continue;
      Frames f(sz);
      NlmParams p;  // defaults: h 10, patch 7, search 21, box
      nlm.set_params(p);
      Stats st = time_gpu(stream.get(), iters, [&](int i) { nlm.enqueue(f.in(i), f.dst(), stream.get()); }, 3);
      rep.row(label(p).c_str(), sz, st, 0);
      std::printf("    %.2f G pixel-offsets/s\n",
                  double(sz.width) * sz.height * p.search_size * p.search_size / (st.median_us * 1e3));
      bench_deep(rep, sz, iters, stream.get(), nlm, 16, 0, "kernel p7 s21 box, 16-bit (GRAY16_LE)");
      bench_deep(rep, sz, iters, stream.get(), nlm, 10, 6, "kernel p7 s21 box, 10-bit (P010_10LE)");

      if (std::string(sz.name) == "1080p") {
        // Patch size should barely matter (box); search area should scale.
        for (int patch : {1, 3, 5, 9, 15}) {
          NlmParams q;
          q.patch_size = patch;
          nlm.set_params(q);
          rep.row(label(q).c_str(), sz,
                  time_gpu(stream.get(), iters, [&](int i) { nlm.enqueue(f.in(i), f.dst(), stream.get()); }, 3), 0);
        }
        for (int search : {11, 35}) {
          NlmParams q;
          q.search_size = search;
          nlm.set_params(q);
          rep.row(label(q).c_str(), sz,
                  time_gpu(stream.get(), iters, [&](int i) { nlm.enqueue(f.in(i), f.dst(), stream.get()); }, 3), 0);
        }
        {
          NlmParams q;
          q.noise_sigma = 10;
          nlm.set_params(q);
          rep.row(label(q).c_str(), sz,
                  time_gpu(stream.get(), iters, [&](int i) { nlm.enqueue(f.in(i), f.dst(), stream.get()); }, 3), 0);
        }
        for (int patch : {3, 7}) {
          NlmParams q;
          q.patch_size = patch;
          q.gaussian = true;
          nlm.set_params(q);
          rep.row(label(q).c_str(), sz,
                  time_gpu(stream.get(), iters, [&](int i) { nlm.enqueue(f.in(i), f.dst(), stream.get()); }, 3), 0);
        }
        nlm.set_params(NlmParams{});

        GpuFrameRunner runner;
        runner.reserve(sz.width, sz.height);
        PinnedBuffer in, out;
        const size_t n = size_t(sz.width) * sz.height;
        in.reserve(n);
        out.reserve(n);
        std::memcpy(in.data(), f.host[0].data(), n);
        rep.row("host round trip, pinned frames", sz, time_host(iters, [&](int) {
                  runner.process_host(nlm, ConstPlane(in.data(), sz.width, sz.width, sz.height),
                                      Plane{out.data(), size_t(sz.width), sz.width, sz.height});
                }), 0);

        std::vector<uint8_t> cpu(n);
        const std::string what = "CPU implementation (" + std::to_string(std::thread::hardware_concurrency()) + " threads)";
        rep.row(what.c_str(), sz, time_host(3, [&](int i) {
                  nlm_cpu(ConstPlane(f.host[i % kRotation].data(), sz.width, sz.width, sz.height),
                          Plane{cpu.data(), size_t(sz.width), sz.width, sz.height}, NlmParams{});
                }, 1), 0);
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (json) std::fclose(json);
  return 0;
}

// Engine-level benchmark of non-local means (no GStreamer): GPU time of the
// kernel for frames already on the GPU, at several sizes and parameters; the
// host round trip; the CPU implementation on all cores. Prints the work in
// pixel-offsets so the time can be set against the floor (docs/cudanlm.md).
//
//   nlm_bench [--frames N] [--json FILE] [--size 720p|1080p|4K]
#include "bench_util.h"
#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/gpu_window_runner.h>
#include <cudafilters/nlm_cpu.h>
#include <cudafilters/nlm_gpu.h>

#include "frame_difference.h"
#include "noise_estimate.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

using namespace bench;
using namespace cudafilters;

namespace {

constexpr int kRotation = 4;

// The defaults at the strength they give (h 10, no noise allowance), which
// the kernel rows measure; the engine's own default is automatic strength.
NlmParams given_strength() {
  NlmParams p;
  p.auto_strength = false;
  return p;
}

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
  nlm.set_params(given_strength());
  rep.row(what, sz, time_gpu(stream, iters, [&](int i) { nlm.enqueue(f.in(i), f.out(), stream); }, 3),
          0);
}

// kRotation distinct YUV 4:2:0 frames on the device, planar (I420) or with
// U and V interleaved (NV12), and an output frame: the frame-level engine
// entry point with chroma and temporal windows.
struct VideoFrames {
  Size size;
  bool interleaved;
  std::vector<DevicePlane> luma, u, v;
  DevicePlane out_luma, out_u, out_v;

  VideoFrames(Size s, bool nv12) : size(s), interleaved(nv12), luma(kRotation), u(kRotation), v(kRotation) {
    const int cw = (s.width + 1) / 2, ch = (s.height + 1) / 2;
    out_luma.reserve(s.width, s.height);
    out_u.reserve(nv12 ? 2 * cw : cw, ch);
    out_v.reserve(cw, ch);
    for (int k = 0; k < kRotation; ++k) {
      upload(luma[k], make_frame(s.width, s.height, 20 + k), s.width, s.height);
      const std::vector<uint8_t> cu = make_frame(cw, ch, 30 + k), cv = make_frame(cw, ch, 40 + k);
      if (nv12) {
        std::vector<uint8_t> uv(size_t(2) * cw * ch);
        for (size_t i = 0; i < cu.size(); ++i) {
          uv[2 * i] = cu[i];
          uv[2 * i + 1] = cv[i];
        }
        upload(u[k], uv, 2 * cw, ch);
      } else {
        upload(u[k], cu, cw, ch);
        upload(v[k], cv, cw, ch);
      }
    }
  }
  static void upload(DevicePlane &d, const std::vector<uint8_t> &host, int w, int h) {
    d.reserve(w, h);
    CUDAFILTERS_CHECK(cudaMemcpy2D(d.data(), d.pitch(), host.data(), w, w, h, cudaMemcpyHostToDevice));
  }
  FramePlanes in(int i) const {
    const int k = i % kRotation, cw = (size.width + 1) / 2, ch = (size.height + 1) / 2;
    FramePlanes f;
    f.luma = ConstPlane(luma[k].data(), luma[k].pitch(), size.width, size.height);
    f.u = ConstPlane(u[k].data(), u[k].pitch(), cw, ch);
    f.v = interleaved ? ConstPlane(u[k].data() + 1, u[k].pitch(), cw, ch)
                      : ConstPlane(v[k].data(), v[k].pitch(), cw, ch);
    f.chroma_step = interleaved ? 2 : 1;
    return f;
  }
  FramePlanesOut out() const {
    const int cw = (size.width + 1) / 2, ch = (size.height + 1) / 2;
    FramePlanesOut f;
    f.luma = Plane(out_luma.data(), out_luma.pitch(), size.width, size.height);
    f.u = Plane(out_u.data(), out_u.pitch(), cw, ch);
    f.v = interleaved ? Plane(out_u.data() + 1, out_u.pitch(), cw, ch)
                      : Plane(out_v.data(), out_v.pitch(), cw, ch);
    f.chroma_step = interleaved ? 2 : 1;
    return f;
  }
};

// Whole frames through NlmGpu::enqueue_window: luma alone (gray), luma with
// chroma, and temporal windows of 2 r + 1 frames, each output frame the
// middle of a window of rotating frames.
void bench_frames(Reporter &rep, const Size &sz, int iters, cudaStream_t stream, NlmGpu &nlm) {
  for (bool nv12 : {false, true}) {
    const VideoFrames f(sz, nv12);
    for (int radius : {0, 1}) {
      for (float chroma : {0.f, -1.f}) {
        NlmParams p = given_strength();
        p.chroma_h = chroma;
        p.temporal_radius = radius;
        nlm.set_params(p);
        const int count = 2 * radius + 1;
        const std::string what = std::string(nv12 ? "frames NV12" : "frames I420") +
                                 (chroma == 0.f ? ", luma (chroma copied)" : ", luma + chroma") +
                                 ", radius " + std::to_string(radius);
        rep.row(what.c_str(), sz, time_gpu(stream, iters, [&](int i) {
                  FramePlanes window[3];
                  for (int k = 0; k < count; ++k) window[k] = f.in(i + k);
                  nlm.enqueue_window(window, count, radius, f.out(), stream);
                }, 3), 0);
      }
    }
  }
  nlm.set_params(given_strength());
}

// A temporal stream of 8K NV12 frames with chroma, radius 1: the GPU time
// per frame, and the device memory the runner (its ring of 2r + 1 frames)
// and the engine take, from cudaMemGetInfo around them (the benchmark's own
// input frames are allocated before).
void bench_8k_window(Reporter &rep, int iters, cudaStream_t stream) {
  const Size sz{"8K", 7680, 4320};
  const VideoFrames f(sz, true);
  CUDAFILTERS_CHECK(cudaDeviceSynchronize());
  size_t free_before = 0, total = 0, free_after = 0;
  CUDAFILTERS_CHECK(cudaMemGetInfo(&free_before, &total));
  {
    NlmGpu nlm;
    NlmParams p = given_strength();
    p.temporal_radius = 1;
    nlm.set_params(p);
    GpuWindowRunner runner;
    runner.reset(p.temporal_radius);
    int out = 0;
    for (int i = 0; i < 6; ++i) {
      runner.push_device(f.in(i), nullptr);
      if (runner.ready(false)) {
        runner.output_device(nlm, f.out(), nullptr, false);
        ++out;
      }
    }
    CUDAFILTERS_CHECK(cudaMemGetInfo(&free_after, &total));
    std::printf("  8K NV12 stream, radius 1, through GpuWindowRunner: %d frames out, device memory "
                "%.1f MB (frames of %.1f MB)\n",
                out, (free_before - free_after) / 1e6, 1.5 * sz.width * sz.height / 1e6);
    rep.row("frames NV12, luma + chroma, radius 1", sz, time_gpu(stream, iters, [&](int i) {
              FramePlanes window[3] = {f.in(i), f.in(i + 1), f.in(i + 2)};
              nlm.enqueue_window(window, 3, 1, f.out(), stream);
            }, 1), 0);
  }
}

// Automatic strength against the same frames at fixed strength, and the
// noise estimate on its own: what the estimate adds to a frame.
void bench_auto(Reporter &rep, const Size &sz, int iters, cudaStream_t stream, NlmGpu &nlm) {
  const VideoFrames f(sz, false);
  // Fixed strength with and without a noise allowance (which takes the
  // clamping kernel, as automatic strength always does).
  struct Mode {
    bool automatic;
    float noise_sigma;
    const char *what;
  };
  const Mode modes[] = {{false, 0.f, ", strength 10"},
                        {false, 10.f, ", strength 10 noise-sigma 10"},
                        {true, 0.f, ", automatic strength"}};
  // Temporal windows of radius 1 read the luma's noise from the frame
  // difference as well.
  for (int radius : {0, 1})
    for (float chroma : {0.f, -1.f})
      for (const Mode &m : modes) {
        NlmParams p;
        p.chroma_h = chroma;
        p.auto_strength = m.automatic;
        p.noise_sigma = m.noise_sigma;
        p.temporal_radius = radius;
        nlm.set_params(p);
        const std::string what = std::string("frames I420, ") +
                                 (chroma == 0.f ? "luma (chroma copied)" : "luma + chroma") +
                                 (radius ? ", radius 1" : "") + m.what;
        rep.row(what.c_str(), sz, time_gpu_back_to_back(stream, iters, [&](int i) {
                  FramePlanes window[3];
                  for (int k = 0; k < 2 * radius + 1; ++k) window[k] = f.in(i + k);
                  nlm.enqueue_window(window, 2 * radius + 1, radius, f.out(), stream);
                }, 10, 3), 0);
      }
  nlm.set_params(given_strength());
  NoiseEstimatorGpu estimator;
  for (bool chroma : {false, true})
    rep.row(chroma ? "noise estimate alone, luma + chroma" : "noise estimate alone, luma", sz,
            time_gpu_back_to_back(stream, iters, [&](int i) {
              const FramePlanes frame = f.in(i);
              estimator.add(0, frame.luma, 1, stream);
              if (chroma) {
                estimator.add(1, frame.u, frame.chroma_step, stream);
                estimator.add(1, frame.v, frame.chroma_step, stream);
              }
              estimator.estimate(chroma ? 2 : 1, stream);
            }, 50, 3), 0);
  FrameDifferenceGpu difference;
  rep.row("frame difference's tables alone, luma", sz,
          time_gpu_back_to_back(stream, iters, [&](int i) {
            difference.fill(f.in(i).luma, f.in(i + 1).luma, stream);
          }, 50, 3), 0);
  rep.row("noise estimate, reading the table alone", sz,
          time_gpu_back_to_back(stream, iters, [&](int) { estimator.estimate(1, stream); }, 50, 3), 0);
  NoiseCurveGpu curve;
  rep.row("noise level function (8 bands), luma", sz,
          time_gpu_back_to_back(stream, iters, [&](int i) {
            curve.estimate(f.in(i).luma, 1, stream);
          }, 50, 3), 0);
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
      NlmParams p = given_strength();  // h 10, patch 7, search 21, box
      nlm.set_params(p);
      Stats st = time_gpu(stream.get(), iters, [&](int i) { nlm.enqueue(f.in(i), f.dst(), stream.get()); }, 3);
      rep.row(label(p).c_str(), sz, st, 0);
      std::printf("    %.2f G pixel-offsets/s\n",
                  double(sz.width) * sz.height * p.search_size * p.search_size / (st.median_us * 1e3));
      bench_deep(rep, sz, iters, stream.get(), nlm, 16, 0, "kernel p7 s21 box, 16-bit (GRAY16_LE)");
      bench_deep(rep, sz, iters, stream.get(), nlm, 10, 6, "kernel p7 s21 box, 10-bit (P010_10LE)");
      bench_frames(rep, sz, iters, stream.get(), nlm);
      bench_auto(rep, sz, iters, stream.get(), nlm);

      if (std::string(sz.name) == "1080p") {
        // Patch size should barely matter (box); search area should scale.
        for (int patch : {1, 3, 5, 9, 15}) {
          NlmParams q = given_strength();
          q.patch_size = patch;
          nlm.set_params(q);
          rep.row(label(q).c_str(), sz,
                  time_gpu(stream.get(), iters, [&](int i) { nlm.enqueue(f.in(i), f.dst(), stream.get()); }, 3), 0);
        }
        for (int search : {11, 35}) {
          NlmParams q = given_strength();
          q.search_size = search;
          nlm.set_params(q);
          rep.row(label(q).c_str(), sz,
                  time_gpu(stream.get(), iters, [&](int i) { nlm.enqueue(f.in(i), f.dst(), stream.get()); }, 3), 0);
        }
        {
          NlmParams q = given_strength();
          q.noise_sigma = 10;
          nlm.set_params(q);
          rep.row(label(q).c_str(), sz,
                  time_gpu(stream.get(), iters, [&](int i) { nlm.enqueue(f.in(i), f.dst(), stream.get()); }, 3), 0);
        }
        for (int patch : {3, 7}) {
          NlmParams q = given_strength();
          q.patch_size = patch;
          q.gaussian = true;
          nlm.set_params(q);
          rep.row(label(q).c_str(), sz,
                  time_gpu(stream.get(), iters, [&](int i) { nlm.enqueue(f.in(i), f.dst(), stream.get()); }, 3), 0);
        }
        nlm.set_params(given_strength());

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
        NlmCpu nlm_cpu;
        nlm_cpu.set_params(given_strength());
        const std::string what = "CPU implementation (" + std::to_string(std::thread::hardware_concurrency()) + " threads)";
        rep.row(what.c_str(), sz, time_host(3, [&](int i) {
                  nlm_cpu.process(ConstPlane(f.host[i % kRotation].data(), sz.width, sz.width, sz.height),
                                  Plane{cpu.data(), size_t(sz.width), sz.width, sz.height});
                }, 1), 0);
      }
    }
    if (opt.wants(Size{"8K", 7680, 4320})) bench_8k_window(rep, std::max(3, iters / 5), stream.get());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (json) std::fclose(json);
  return 0;
}

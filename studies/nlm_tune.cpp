// A C entry point to the non-local means engines for studies/nlm_auto_strength.py
// (through ctypes): whole 8-bit frames, gray or I420, in host memory, through
// NlmGpu (on a stream of its own, frames copied in and out) or NlmCpu, with
// any parameters, automatic strength included; and the noise estimate of a
// plane on either side. Not installed.
#include <cudafilters/cuda_check.h>
#include <cudafilters/cuda_memory.h>
#include <cudafilters/nlm_cpu.h>
#include <cudafilters/nlm_gpu.h>

#include "frame_difference.h"
#include "noise_estimate.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace cudafilters;

namespace {

std::string g_error;

struct DeviceFrame {
  DeviceArray<uint8_t> luma, u, v;
  int width = 0, height = 0;

  void reserve(int w, int h, bool chroma) {
    if (w == width && h == height && (!chroma || u.get())) return;
    const int cw = (w + 1) / 2, ch = (h + 1) / 2;
    luma = DeviceArray<uint8_t>(size_t(w) * h);
    if (chroma) {
      u = DeviceArray<uint8_t>(size_t(cw) * ch);
      v = DeviceArray<uint8_t>(size_t(cw) * ch);
    }
    width = w;
    height = h;
  }
};

struct GpuEngines {
  Stream stream;
  NlmGpu nlm;
  std::vector<DeviceFrame> frames{2 * kNlmMaxTemporalRadius + 1};
  DeviceFrame out;
  NoiseEstimatorGpu estimator;
};

struct Engines {
  NlmCpu cpu;
  std::unique_ptr<GpuEngines> gpu;  // with nt_open(1)
};

std::unique_ptr<Engines> g_engines;

GpuEngines &gpu_engines() {
  if (!g_engines || !g_engines->gpu) throw std::runtime_error("opened without the GPU");
  return *g_engines->gpu;
}

template <typename F>
int guarded(F f) {
  try {
    f();
    return 0;
  } catch (const std::exception &e) {
    g_error = e.what();
    return -1;
  }
}

}  // namespace

extern "C" {

struct NtParams {
  float h, noise_sigma, chroma_h;
  int patch_size, search_size, temporal_radius;
  int auto_strength;
  float auto_scale, noise_smoothing;
};

__attribute__((visibility("default"))) const char *nt_error() { return g_error.c_str(); }

__attribute__((visibility("default"))) int nt_open(int use_gpu) {
  return guarded([use_gpu] {
    auto e = std::make_unique<Engines>();
    if (use_gpu) e->gpu = std::make_unique<GpuEngines>();
    g_engines = std::move(e);
  });
}

// Restarts the engines' histories (the noise followed by automatic strength).
__attribute__((visibility("default"))) int nt_reset() {
  return guarded([] {
    if (g_engines->gpu) g_engines->gpu->nlm.reset_history();
    g_engines->cpu.reset_history();
  });
}

// Denoises frame `center` of `count` frames (y[i], and u[i], v[i] unless u is
// null: I420, tightly packed) into oy (, ou, ov).
__attribute__((visibility("default"))) int nt_denoise(int use_gpu, const NtParams *np,
                                                      const uint8_t *const *y,
                                                      const uint8_t *const *u,
                                                      const uint8_t *const *v, int count,
                                                      int center, int width, int height,
                                                      uint8_t *oy, uint8_t *ou, uint8_t *ov) {
  return guarded([&] {
    NlmParams p;
    p.h = np->h;
    p.noise_sigma = np->noise_sigma;
    p.chroma_h = np->chroma_h;
    p.patch_size = np->patch_size;
    p.search_size = np->search_size;
    p.temporal_radius = np->temporal_radius;
    p.auto_strength = np->auto_strength != 0;
    p.auto_scale = np->auto_scale;
    p.noise_smoothing = np->noise_smoothing;
    const std::string err = nlm_params_error(p);
    if (!err.empty()) throw std::invalid_argument(err);
    const bool chroma = u != nullptr;
    const int cw = (width + 1) / 2, ch = (height + 1) / 2;
    auto planes = [&](const uint8_t *yy, const uint8_t *uu, const uint8_t *vv) {
      FramePlanes f;
      f.luma = ConstPlane(yy, size_t(width), width, height);
      if (chroma) {
        f.u = ConstPlane(uu, size_t(cw), cw, ch);
        f.v = ConstPlane(vv, size_t(cw), cw, ch);
      }
      return f;
    };
    auto out_planes = [&](uint8_t *yy, uint8_t *uu, uint8_t *vv) {
      FramePlanesOut f;
      f.luma = Plane(yy, size_t(width), width, height);
      if (chroma) {
        f.u = Plane(uu, size_t(cw), cw, ch);
        f.v = Plane(vv, size_t(cw), cw, ch);
      }
      return f;
    };
    FramePlanes window[2 * kNlmMaxTemporalRadius + 1];
    if (!use_gpu) {
      for (int i = 0; i < count; ++i) window[i] = planes(y[i], chroma ? u[i] : nullptr, chroma ? v[i] : nullptr);
      g_engines->cpu.set_params(p);
      g_engines->cpu.process_window(window, count, center, out_planes(oy, ou, ov));
      return;
    }
    GpuEngines &e = gpu_engines();
    cudaStream_t s = e.stream.get();
    const size_t luma_bytes = size_t(width) * height, chroma_bytes = size_t(cw) * ch;
    for (int i = 0; i < count; ++i) {
      DeviceFrame &d = e.frames[i];
      d.reserve(width, height, chroma);
      CUDAFILTERS_CHECK(cudaMemcpyAsync(d.luma.get(), y[i], luma_bytes, cudaMemcpyHostToDevice, s));
      if (chroma) {
        CUDAFILTERS_CHECK(cudaMemcpyAsync(d.u.get(), u[i], chroma_bytes, cudaMemcpyHostToDevice, s));
        CUDAFILTERS_CHECK(cudaMemcpyAsync(d.v.get(), v[i], chroma_bytes, cudaMemcpyHostToDevice, s));
      }
      window[i] = planes(d.luma.get(), d.u.get(), d.v.get());
    }
    e.out.reserve(width, height, chroma);
    e.nlm.set_params(p);
    e.nlm.enqueue_window(window, count, center, out_planes(e.out.luma.get(), e.out.u.get(), e.out.v.get()), s);
    CUDAFILTERS_CHECK(cudaMemcpyAsync(oy, e.out.luma.get(), luma_bytes, cudaMemcpyDeviceToHost, s));
    if (chroma) {
      CUDAFILTERS_CHECK(cudaMemcpyAsync(ou, e.out.u.get(), chroma_bytes, cudaMemcpyDeviceToHost, s));
      CUDAFILTERS_CHECK(cudaMemcpyAsync(ov, e.out.v.get(), chroma_bytes, cudaMemcpyDeviceToHost, s));
    }
    e.stream.synchronize();
  });
}

// The noise estimates of a frame as the engines make them (frame_noise_of),
// on the CPU or the GPU: a tightly packed 8-bit luma plane of width x
// height and, unless u is null, its chroma planes (cw x ch each, U and V
// together); out[0] luma's, out[1] chroma's (0 without chroma).
__attribute__((visibility("default"))) int nt_estimate(int use_gpu, const uint8_t *y, int width,
                                                       int height, const uint8_t *u,
                                                       const uint8_t *v, int cw, int ch,
                                                       double *out) {
  return guarded([&] {
    const bool chroma = u != nullptr;
    if (!use_gpu) {
      NoiseTable luma, uv;
      luma.add(ConstPlane(y, size_t(width), width, height));
      if (chroma) {
        uv.add(ConstPlane(u, size_t(cw), cw, ch));
        uv.add(ConstPlane(v, size_t(cw), cw, ch));
      }
      const FrameNoise f = frame_noise(luma, chroma ? &uv : nullptr);
      out[0] = f.luma.sigma;
      out[1] = f.chroma.sigma;
      return;
    }
    GpuEngines &e = gpu_engines();
    cudaStream_t s = e.stream.get();
    const size_t luma_bytes = size_t(width) * height, chroma_bytes = size_t(cw) * ch;
    DeviceArray<uint8_t> dy(luma_bytes), du(chroma ? chroma_bytes : 1), dv(chroma ? chroma_bytes : 1);
    CUDAFILTERS_CHECK(cudaMemcpyAsync(dy.get(), y, luma_bytes, cudaMemcpyHostToDevice, s));
    e.estimator.add(0, ConstPlane(dy.get(), size_t(width), width, height), 1, s);
    if (chroma) {
      CUDAFILTERS_CHECK(cudaMemcpyAsync(du.get(), u, chroma_bytes, cudaMemcpyHostToDevice, s));
      CUDAFILTERS_CHECK(cudaMemcpyAsync(dv.get(), v, chroma_bytes, cudaMemcpyHostToDevice, s));
      e.estimator.add(1, ConstPlane(du.get(), size_t(cw), cw, ch), 1, s);
      e.estimator.add(1, ConstPlane(dv.get(), size_t(cw), cw, ch), 1, s);
    }
    e.estimator.estimate(chroma ? 2 : 1, s);
    CUDAFILTERS_CHECK(cudaMemcpyAsync(out, e.estimator.sigmas(), (chroma ? 2 : 1) * sizeof(double),
                                      cudaMemcpyDeviceToHost, s));
    e.stream.synchronize();
    if (!chroma) out[1] = 0;
  });
}

// The two scales' readings of one table of a plane (and of a second plane
// of its size unless null), on the CPU: out[0..3] = fine sigma, fine share
// kept, coarse sigma, coarse share kept (noise_estimate.h), for the study
// of docs/noise-estimation.md.
__attribute__((visibility("default"))) int nt_estimate_scales(const uint8_t *plane,
                                                              const uint8_t *second, int width,
                                                              int height, double *out) {
  return guarded([&] {
    NoiseTable t;
    t.add(ConstPlane(plane, size_t(width), width, height));
    if (second) t.add(ConstPlane(second, size_t(width), width, height));
    const NoiseReadings r = t.readings();
    out[0] = r.fine.sigma;
    out[1] = r.fine.kept;
    out[2] = r.coarse.sigma;
    out[3] = r.coarse.kept;
  });
}

// The frame difference's estimate of two 8-bit luma planes (CPU, bit for
// bit the GPU's): out[0] sigma, out[1] how still, out[2 ..] the shifts'
// medians (unscaled; all 0 for planes too small for a block).
__attribute__((visibility("default"))) int nt_frame_difference(const uint8_t *a, const uint8_t *b,
                                                               int width, int height, double *out) {
  return guarded([&] {
    const ConstPlane pa(a, size_t(width), width, height), pb(b, size_t(width), width, height);
    double medians[kDifferenceShifts] = {};
    const uint64_t blocks = difference_medians(pa, pb, medians);
    const FrameDifference d = blocks ? frame_difference_of(medians, blocks) : FrameDifference{};
    out[0] = d.sigma;
    out[1] = d.still;
    for (int s = 0; s < kDifferenceShifts; ++s) out[2 + s] = medians[s];
  });
}

}  // extern "C"

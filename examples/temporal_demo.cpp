// Temporal, colour non-local means with the engines, without GStreamer: a
// short NV12 clip of a moving disc with noise is denoised frame by frame,
// each frame from a window of the frames around it (the runner decides
// which frames are kept and when each can be filtered). On the CPU
// CpuWindowRunner keeps the frames in host memory and NlmCpu denoises them;
// on the GPU (where there is one) GpuWindowRunner keeps them on the device
// and NlmGpu denoises them, checked against the CPU: the same loop, with the
// engine and runner of each side. Prints the PSNR against the
// clean clip for the noisy frames and for temporal radius 0 and 1.
// The strength follows each frame's own noise (automatic strength, the
// engines' default) unless --strength gives one.
//
//   temporal_demo [--frames N] [--width W] [--height H] [--strength H] [--cpu]
//
// Builds against the installed library: c++ -std=c++17 temporal_demo.cpp $(pkg-config --cflags --libs cudafilters)
#include <cudafilters/cudafilters.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// One NV12 frame in host memory: luma, then interleaved U and V.
struct Frame {
  int width = 0, height = 0;
  std::vector<uint8_t> bytes;

  Frame(int w, int h) : width(w), height(h), bytes(size_t(w) * h * 3 / 2) {}
  uint8_t *luma() { return bytes.data(); }
  uint8_t *chroma() { return bytes.data() + size_t(width) * height; }
  const uint8_t *luma() const { return bytes.data(); }
  const uint8_t *chroma() const { return bytes.data() + size_t(width) * height; }

  cudafilters::FramePlanes in() const {
    cudafilters::FramePlanes f;
    f.luma = cudafilters::ConstPlane(luma(), size_t(width), width, height);
    f.u = cudafilters::ConstPlane(chroma(), size_t(width), width / 2, height / 2);
    f.v = cudafilters::ConstPlane(chroma() + 1, size_t(width), width / 2, height / 2);
    f.chroma_step = 2;
    return f;
  }
  cudafilters::FramePlanesOut out() { return cudafilters::writable(in()); }
};
using Clip = std::vector<Frame>;

uint8_t clamp_level(float v) { return uint8_t(std::min(std::max(std::lround(v), 0L), 255L)); }

// A disc crossing a gradient, two pixels a frame, in two colours.
Clip clean_clip(int frames, int width, int height) {
  Clip clip;
  for (int n = 0; n < frames; ++n) {
    Frame f(width, height);
    const float cx = width / 4.f + 2.f * n, cy = height / 2.f, r = height / 4.f;
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        const bool disc = std::hypot(x - cx, y - cy) < r;
        f.luma()[size_t(y) * width + x] = clamp_level(60.f + 80.f * x / width + (disc ? 70.f : 0.f));
      }
    for (int y = 0; y < height / 2; ++y)
      for (int x = 0; x < width / 2; ++x) {
        const bool disc = std::hypot(2 * x - cx, 2 * y - cy) < r;
        f.chroma()[size_t(y) * width + 2 * x] = disc ? 90 : 128;
        f.chroma()[size_t(y) * width + 2 * x + 1] = disc ? 170 : 128;
      }
    clip.push_back(std::move(f));
  }
  return clip;
}

Clip add_noise(const Clip &clean, float sigma) {
  std::mt19937 rng(11);
  std::normal_distribution<float> noise(0.f, sigma);
  Clip noisy = clean;
  for (Frame &f : noisy)
    for (uint8_t &v : f.bytes) v = clamp_level(v + noise(rng));
  return noisy;
}

// Automatic strength (the defaults), or a strength given (strength > 0),
// which takes auto_strength = false: with automatic strength h is not used.
cudafilters::NlmParams denoise_params(int radius, float strength) {
  cudafilters::NlmParams p;
  if (strength > 0.f) {
    p.auto_strength = false;
    p.h = strength;
  }
  p.patch_size = 5;
  p.search_size = 11;
  p.temporal_radius = radius;
  return p;
}

// The frame-by-frame loop of a temporal filter: each input frame is taken
// in, and every frame whose window is complete is filtered; at the end of
// the clip the last `radius` frames are filtered from clipped windows.
template <typename Runner, typename Take, typename Filter>
Clip run_clip(const Clip &noisy, const Runner &runner, Take take, Filter filter) {
  Clip out;
  auto emit_ready = [&](bool draining) {
    while (runner.ready(draining)) {
      out.emplace_back(noisy[0].width, noisy[0].height);
      filter(out.back().out());
    }
  };
  for (const Frame &f : noisy) {
    take(f.in());
    emit_ready(false);
  }
  emit_ready(true);
  if (out.size() != noisy.size()) throw std::logic_error("frames lost in the window");
  return out;
}

Clip denoise_on_cpu(const Clip &noisy, int radius, float strength) {
  cudafilters::NlmCpu denoise;
  denoise.set_params(denoise_params(radius, strength));
  cudafilters::CpuWindowRunner runner;
  runner.reset(radius);
  return run_clip(
      noisy, runner, [&](const cudafilters::FramePlanes &f) { runner.push(f); },
      [&](const cudafilters::FramePlanesOut &dst) { runner.output(denoise, dst); });
}

Clip denoise_on_gpu(const Clip &noisy, int radius, float strength) {
  cudafilters::NlmGpu denoise;
  denoise.set_params(denoise_params(radius, strength));
  cudafilters::GpuWindowRunner runner;
  runner.reset(radius);
  return run_clip(
      noisy, runner, [&](const cudafilters::FramePlanes &f) { runner.push_host(f); },
      [&](const cudafilters::FramePlanesOut &dst) { runner.output_host(denoise, dst); });
}

double psnr(const Clip &a, const Clip &b) {
  double sum = 0;
  size_t n = 0;
  for (size_t k = 0; k < a.size(); ++k)
    for (size_t i = 0; i < a[k].bytes.size(); ++i, ++n) {
      const double d = double(a[k].bytes[i]) - b[k].bytes[i];
      sum += d * d;
    }
  return 10.0 * std::log10(255.0 * 255.0 / std::max(sum / n, 1e-12));
}

int max_difference(const Clip &a, const Clip &b) {
  int worst = 0;
  for (size_t k = 0; k < a.size(); ++k)
    for (size_t i = 0; i < a[k].bytes.size(); ++i)
      worst = std::max(worst, std::abs(int(a[k].bytes[i]) - int(b[k].bytes[i])));
  return worst;
}

bool gpu_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

int int_arg(const char *value, const char *name, long lo, long hi) {
  char *end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (end == value || *end || v < lo || v > hi)
    throw std::invalid_argument(std::string(name) + " takes a whole number from " +
                                std::to_string(lo) + " to " + std::to_string(hi));
  return int(v);
}

constexpr char kUsage[] =
    "usage: temporal_demo [--frames N] [--width W] [--height H] [--strength H] [--cpu]\n";

float strength_arg(const char *value) {
  char *end = nullptr;
  const float v = std::strtof(value, &end);
  if (*end || !(v >= cudafilters::kNlmMinStrength && v <= cudafilters::kNlmMaxStrength))
    throw std::invalid_argument("--strength: not a strength (0.1 to 255)");
  return v;
}

}  // namespace

int main(int argc, char **argv) {
  int frames = 8, width = 160, height = 120;
  float strength = 0.f;  // automatic
  bool force_cpu = false;
  try {
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--cpu")) force_cpu = true;
      else if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
        std::fputs(kUsage, stdout);
        return 0;
      }
      else if (i + 1 < argc && !std::strcmp(argv[i], "--frames")) frames = int_arg(argv[++i], "--frames", 3, 1000);
      else if (i + 1 < argc && !std::strcmp(argv[i], "--width")) width = int_arg(argv[++i], "--width", 16, 4096) & ~1;
      else if (i + 1 < argc && !std::strcmp(argv[i], "--height")) height = int_arg(argv[++i], "--height", 16, 4096) & ~1;
      else if (i + 1 < argc && !std::strcmp(argv[i], "--strength")) strength = strength_arg(argv[++i]);
      else {
        std::fprintf(stderr, "temporal_demo: unknown argument %s\n%s", argv[i], kUsage);
        return 2;
      }
    }
    const Clip clean = clean_clip(frames, width, height);
    const Clip noisy = add_noise(clean, 12.f);
    const bool on_gpu = !force_cpu && gpu_present();
    std::printf("%d NV12 frames of %dx%d, noise sigma 12, on the %s, ", frames, width, height,
                on_gpu ? "GPU" : "CPU");
    if (strength > 0.f) std::printf("strength %g\n", strength);
    else std::printf("automatic strength\n");
    std::printf("PSNR of luma and chroma against the clean clip\nnoisy:              PSNR %.2f dB\n", psnr(noisy, clean));
    double gain[2];
    for (int radius : {0, 1}) {
      const Clip cpu = denoise_on_cpu(noisy, radius, strength);
      const Clip out = on_gpu ? denoise_on_gpu(noisy, radius, strength) : cpu;
      gain[radius] = psnr(out, clean);
      std::printf("temporal radius %d: PSNR %.2f dB\n", radius, gain[radius]);
      if (on_gpu) {
        // The GPU's patch distances run in f16 on the tensor cores: an
        // output moves by at most one level.
        const int diff = max_difference(out, cpu);
        std::printf("  GPU vs CPU: largest difference %d level(s)\n", diff);
        if (diff > 1) throw std::runtime_error("the GPU and CPU results differ by more than a level");
      }
    }
    // The demo's own check, at the automatic strength it is made for: a
    // strength given by hand may be too weak or too strong to gain.
    if (strength == 0.f && (!(gain[0] > psnr(noisy, clean)) || !(gain[1] > gain[0])))
      throw std::runtime_error("denoising did not raise the PSNR as expected");
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "temporal_demo: %s\n", e.what());
    return 1;
  }
}

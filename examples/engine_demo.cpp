// The engines without GStreamer: equalize, then denoise an 8-bit image held
// in memory, on the GPU when there is one (the image is uploaded once, both
// filters run on one stream, the result comes back once) and on the CPU
// otherwise. The CPU computes the same function, so where there is a GPU
// the demo also checks the GPU's result against it.
//
//   engine_demo [IN.pgm [OUT.pgm]] [--cpu] [--size WxH] [--strength H]
//
// Without IN.pgm it makes a dim, noisy test picture, 640x480 unless --size
// says otherwise. The denoiser sets its strength from the picture's own
// noise (automatic strength, the default) unless --strength gives one.
// Builds against the
// installed library: c++ -std=c++17 engine_demo.cpp $(pkg-config --cflags --libs cudafilters)
#include <cudafilters/cudafilters.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;

  cudafilters::ConstPlane view() const {
    return {pixels.data(), size_t(width), width, height};
  }
  cudafilters::Plane view() {
    return {pixels.data(), size_t(width), width, height};
  }
};

// The next header field of a PGM, past whitespace and # comments.
std::istream &pgm_field(std::istream &f, std::string &field) {
  while (f >> std::ws && f.peek() == '#') f.ignore(1 << 20, '\n');
  return f >> field;
}

Image read_pgm(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f.is_open()) throw std::runtime_error("cannot open " + path);
  std::string magic, w, h, max;
  Image img;
  pgm_field(f, magic);
  pgm_field(f, w);
  pgm_field(f, h);
  pgm_field(f, max);
  f.get();
  const int maxval = std::atoi(max.c_str());
  img.width = std::atoi(w.c_str());
  img.height = std::atoi(h.c_str());
  if (!f || magic != "P5" || maxval != 255 || img.width <= 0 || img.height <= 0)
    throw std::runtime_error(path + ": not an 8-bit binary PGM (P5)");
  img.pixels.resize(size_t(img.width) * img.height);
  f.read(reinterpret_cast<char *>(img.pixels.data()), std::streamsize(img.pixels.size()));
  if (!f) throw std::runtime_error(path + ": truncated");
  return img;
}

void write_pgm(const std::string &path, const Image &img) {
  std::ofstream f(path, std::ios::binary);
  f << "P5\n" << img.width << " " << img.height << "\n255\n";
  f.write(reinterpret_cast<const char *>(img.pixels.data()), std::streamsize(img.pixels.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

// Dim and low in contrast (levels 40 to 110), with Gaussian noise.
Image test_picture(int width, int height) {
  Image img{width, height, std::vector<uint8_t>(size_t(width) * height)};
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.f, 6.f);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const float disc = std::hypot(x - width / 2.f, y - height / 2.f) < height / 4.f ? 30.f : 0.f;
      const float v = 45.f + 30.f * x / width + disc + noise(rng);
      img.pixels[size_t(y) * width + x] = uint8_t(std::min(std::max(v, 0.f), 255.f));
    }
  return img;
}

bool gpu_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// The denoiser's parameters: the defaults, whose automatic strength follows
// the noise of each frame, or a strength given (strength > 0), which takes
// auto_strength = false: with automatic strength h is not used.
cudafilters::NlmParams denoise_params(float strength) {
  cudafilters::NlmParams p;
  if (strength > 0.f) {
    p.auto_strength = false;
    p.h = strength;
  }
  return p;
}

Image filter_on_cpu(const Image &in, float strength) {
  Image equalized = in, out = in;
  cudafilters::HistEqCpu equalize;
  cudafilters::NlmCpu denoise;
  denoise.set_params(denoise_params(strength));
  equalize.process(in.view(), equalized.view());
  denoise.process(equalized.view(), out.view());
  return out;
}

// One upload, both engines on one stream, one download.
Image filter_on_gpu(const Image &in, float strength) {
  cudafilters::Stream stream;
  cudafilters::DevicePlane src, equalized, out;
  for (cudafilters::DevicePlane *p : {&src, &equalized, &out}) p->reserve(in.width, in.height);
  auto device = [&](const cudafilters::DevicePlane &p) {
    return cudafilters::Plane{p.data(), p.pitch(), in.width, in.height};
  };

  cudafilters::HistEqGpu equalize;
  cudafilters::NlmGpu denoise;
  denoise.set_params(denoise_params(strength));

  Image result{in.width, in.height, std::vector<uint8_t>(in.pixels.size())};
  CUDAFILTERS_CHECK(cudaMemcpy2DAsync(src.data(), src.pitch(), in.pixels.data(), size_t(in.width),
                                      size_t(in.width), in.height, cudaMemcpyHostToDevice,
                                      stream.get()));
  equalize.enqueue(device(src), device(equalized), stream.get());
  denoise.enqueue(device(equalized), device(out), stream.get());
  CUDAFILTERS_CHECK(cudaMemcpy2DAsync(result.pixels.data(), size_t(in.width), out.data(),
                                      out.pitch(), size_t(in.width), in.height,
                                      cudaMemcpyDeviceToHost, stream.get()));
  stream.synchronize();
  return result;
}

// The largest difference between two images of one size, in levels.
int max_difference(const Image &a, const Image &b) {
  int worst = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i)
    worst = std::max(worst, std::abs(int(a.pixels[i]) - int(b.pixels[i])));
  return worst;
}

void print_range(const char *what, const Image &img) {
  int lo = 255, hi = 0;
  for (uint8_t v : img.pixels) {
    lo = std::min(lo, int(v));
    hi = std::max(hi, int(v));
  }
  std::printf("%s: %dx%d, levels %d to %d\n", what, img.width, img.height, lo, hi);
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::string> files;
  bool force_cpu = false;
  int width = 640, height = 480;
  float strength = 0.f;  // automatic
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--cpu")) {
      force_cpu = true;
    } else if (!std::strcmp(argv[i], "--size")) {
      char tail = 0;
      if (i + 1 >= argc || std::sscanf(argv[++i], "%dx%d%c", &width, &height, &tail) != 2 ||
          width < 16 || height < 16 || width > 16384 || height > 16384) {
        std::fprintf(stderr, "engine_demo: --size takes WxH, each from 16 to 16384\n");
        return 2;
      }
    } else if (!std::strcmp(argv[i], "--strength")) {
      char *end = nullptr;
      strength = i + 1 < argc ? std::strtof(argv[++i], &end) : 0.f;
      if (!end || *end || !(strength >= cudafilters::kNlmMinStrength &&
                            strength <= cudafilters::kNlmMaxStrength)) {
        std::fprintf(stderr, "engine_demo: --strength takes a number from %g to %g\n",
                     cudafilters::kNlmMinStrength, cudafilters::kNlmMaxStrength);
        return 2;
      }
    } else if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
      std::printf("usage: engine_demo [IN.pgm [OUT.pgm]] [--cpu] [--size WxH] [--strength H]\n");
      return 0;
    } else if (argv[i][0] == '-' || files.size() == 2) {
      std::fprintf(stderr, "engine_demo: unknown argument %s (usage: engine_demo [IN.pgm "
                           "[OUT.pgm]] [--cpu] [--size WxH] [--strength H])\n", argv[i]);
      return 2;
    } else {
      files.push_back(argv[i]);
    }
  }
  try {
    const Image in = files.empty() ? test_picture(width, height) : read_pgm(files[0]);
    print_range("input", in);

    const bool on_gpu = !force_cpu && gpu_present();
    const auto t0 = std::chrono::steady_clock::now();
    const Image out = on_gpu ? filter_on_gpu(in, strength) : filter_on_cpu(in, strength);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("equalized and denoised on the %s in %.2f ms, ", on_gpu ? "GPU" : "CPU", ms);
    if (strength > 0.f) std::printf("strength %g\n", strength);
    else std::printf("automatic strength\n");
    print_range("output", out);

    if (on_gpu) {
      // Equalization is bit-exact; the denoiser's exp2 may differ by an ulp,
      // which moves an output by at most one level.
      const int diff = max_difference(out, filter_on_cpu(in, strength));
      std::printf("GPU vs CPU: largest difference %d level(s)\n", diff);
      if (diff > 1) throw std::runtime_error("the GPU and CPU results differ by more than a level");
    }
    if (files.size() > 1) write_pgm(files[1], out);
    else write_pgm("engine_demo_out.pgm", out);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "engine_demo: %s\n", e.what());
    return 1;
  }
}

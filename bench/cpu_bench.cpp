// Engine-level benchmark of the CPU paths (no GStreamer, no GPU): the time
// per frame of histogram equalization, CLAHE, sharpening and non-local means on the
// shared thread pool, and the machine's memory bandwidth with the same
// threads, the floor of the equalization paths.
//
//   cpu_bench [--frames N] [--json FILE] [--size 720p|1080p|4K] [--dump-frames DIR]
//
// Four distinct synthetic frames are rotated per size. --dump-frames writes
// them (NAME-WxH-K.gray) so bench/peers.py times OpenCV on the same frames.
#include "bench_util.h"
#include <cudafilters/clahe_cpu.h>
#include <cudafilters/histeq_cpu.h>
#include <cudafilters/nlm_cpu.h>
#include <cudafilters/sharpen_cpu.h>
#include "cpu_isa.h"
#include "thread_pool.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace cudafilters;
using namespace bench;

namespace {

constexpr int kRotation = 4;
constexpr Size kNlmSizes[] = {{"VGA", 640, 480}, {"1080p", 1920, 1080}};

struct Frames {
  std::vector<std::vector<uint8_t>> in;
  std::vector<uint8_t> out;
  Size size;

  explicit Frames(const Size &sz) : out(size_t(sz.width) * sz.height), size(sz) {
    for (int k = 0; k < kRotation; ++k) in.push_back(make_frame(sz.width, sz.height, 100 + k));
  }
  ConstPlane src(int i) const {
    return ConstPlane(in[i % kRotation].data(), size.width, size.width, size.height);
  }
  Plane dst() { return Plane{out.data(), size_t(size.width), size.width, size.height}; }

  // The same frames as 16-bit words (level x 257, GRAY16_LE), as
  // bench/peers.py makes them for OpenCV's CV_16U paths.
  std::vector<std::vector<uint16_t>> in16;
  std::vector<uint16_t> out16;
  static constexpr SampleLayout kWords{2, 16, 0};
  void make_deep() {
    out16.resize(out.size());
    for (const auto &f : in) {
      in16.emplace_back(f.size());
      for (size_t k = 0; k < f.size(); ++k) in16.back()[k] = uint16_t(f[k] * 257);
    }
  }
  ConstPlane src16(int i) const {
    return ConstPlane(reinterpret_cast<const uint8_t *>(in16[i % kRotation].data()), 2 * size_t(size.width),
                      size.width, size.height, kWords);
  }
  Plane dst16() {
    return Plane(reinterpret_cast<uint8_t *>(out16.data()), 2 * size_t(size.width), size.width, size.height,
                 kWords);
  }

  void dump(const char *dir) const {
    if (!dir) return;
    for (int k = 0; k < kRotation; ++k) {
      const std::string path = std::string(dir) + "/" + size.name + "-" + std::to_string(size.width) + "x" +
                               std::to_string(size.height) + "-" + std::to_string(k) + ".gray";
      FILE *f = std::fopen(path.c_str(), "wb");
      if (!f) continue;
      std::fwrite(in[k].data(), 1, in[k].size(), f);
      std::fclose(f);
    }
  }
};

// Bandwidth of DRAM with every pool thread: read-only (a sum) and copy, over
// a buffer far larger than any cache. Bytes counted: read, plus written for
// the copy.
void measure_memory(Reporter &rep, int iters) {
  const size_t bytes = size_t(1) << 30;
  std::vector<uint8_t> a(bytes, 1), b(bytes, 0);
  const int chunks = 256;
  const size_t chunk = bytes / chunks;
  std::atomic<uint64_t> sink{0};
  const Size whole{"1 GiB", 0, 0};
  const Stats read = time_host(std::max(3, iters / 20), [&](int) {
    parallel_for(chunks, [&](int i) {
      const uint64_t *p = reinterpret_cast<const uint64_t *>(a.data() + i * chunk);
      uint64_t s = 0;
      for (size_t k = 0; k < chunk / 8; ++k) s += p[k];
      sink += s;
    });
  }, 1);
  rep.row("memory read (all threads)", whole, read, double(bytes));
  const Stats copy = time_host(std::max(3, iters / 20), [&](int) {
    parallel_for(chunks, [&](int i) { std::memcpy(b.data() + i * chunk, a.data() + i * chunk, chunk); });
  }, 1);
  rep.row("memory copy (all threads, read + write)", whole, copy, 2.0 * bytes);
}

}  // namespace

int main(int argc, char **argv) {
  const Options opt = parse_options(argc, argv, 300);
  const char *dump = nullptr;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--dump-frames")) dump = argv[i + 1];

  Reporter rep("cpu", opt.json);
  const int threads = parallel_threads();
  const std::string model = cpu_model(), isa(cpu_instruction_set());
  std::printf("CPU: %s, %u hardware threads, pool of %d threads, NLM instruction set %s\n", model.c_str(),
              std::thread::hardware_concurrency(), threads, isa.c_str());
  if (opt.json)
    std::fprintf(opt.json, "{\"bench\":\"cpu\",\"machine\":true,\"cpu\":\"%s\",\"hardware_threads\":%u,"
                 "\"threads\":%d,\"nlm_isa\":\"%s\"}\n", model.c_str(), std::thread::hardware_concurrency(),
                 threads, isa.c_str());

  measure_memory(rep, opt.frames);

  for (const Size &sz : kSizes) {
    if (!opt.wants(sz)) continue;
    Frames f(sz);
    f.dump(dump);
    const double px = double(sz.width) * sz.height;
    rep.row("equalize_hist_cpu", sz, time_host(opt.frames, [&](int i) { equalize_hist_cpu(f.src(i), f.dst()); }),
            3 * px);
    ClaheCpu clahe;
    clahe.set_params(ClaheParams{2.0, 8, 8});
    rep.row("ClaheCpu (clip 2, 8x8 tiles)", sz,
            time_host(opt.frames, [&](int i) { clahe.process(f.src(i), f.dst()); }), 3 * px);
    SharpenCpu unsharp;
    rep.row("SharpenCpu unsharp (amount 1, radius 1)", sz,
            time_host(opt.frames, [&](int i) { unsharp.process(f.src(i), f.dst()); }), 2 * px);
    SharpenCpu laplacian;
    SharpenParams lp;
    lp.kernel = SharpenKernel::kLaplacian3x3;
    laplacian.set_params(lp);
    rep.row("SharpenCpu laplacian-3x3", sz,
            time_host(opt.frames, [&](int i) { laplacian.process(f.src(i), f.dst()); }), 2 * px);

    f.make_deep();
    HistEqCpu histeq16;
    rep.row("HistEqCpu 16-bit", sz, time_host(opt.frames, [&](int i) { histeq16.process(f.src16(i), f.dst16()); }),
            6 * px);
    rep.row("ClaheCpu 16-bit (clip 2, 8x8 tiles)", sz,
            time_host(opt.frames, [&](int i) { clahe.process(f.src16(i), f.dst16()); }), 6 * px);
    rep.row("SharpenCpu 16-bit unsharp (amount 1, radius 1)", sz,
            time_host(opt.frames, [&](int i) { unsharp.process(f.src16(i), f.dst16()); }), 4 * px);
  }
  for (const Size &sz : kNlmSizes) {
    Frames f(sz);
    f.dump(dump);
    NlmParams given;  // h 10, patch 7, search 21, box
    given.auto_strength = false;
    NlmCpu nlm;
    nlm.set_params(given);
    const int iters = std::max(3, opt.frames / (sz.width > 1000 ? 30 : 10));
    rep.row("nlm_cpu (h 10, patch 7, search 21)", sz,
            time_host(iters, [&](int i) { nlm.process(f.src(i), f.dst()); }, 2), 0);
    f.make_deep();
    rep.row("nlm_cpu 16-bit (h 10, patch 7, search 21)", sz,
            time_host(iters, [&](int i) { nlm.process(f.src16(i), f.dst16()); }, 2), 0);
  }
  // Each instruction set this CPU can run, box and Gaussian, at 640x480.
  Frames vga(kNlmSizes[0]);
  for (bool gaussian : {false, true})
    for (std::string_view isa : cpu_instruction_sets()) {
      NlmParams p;
      p.auto_strength = false;
      p.gaussian = gaussian;
      const std::string what = std::string("nlm_cpu ") + (gaussian ? "Gaussian" : "box") +
                               " patch 7, search 21, instruction set " + std::string(isa);
      rep.row(what.c_str(), vga.size,
              time_host(std::max(3, opt.frames / 30), [&](int i) { nlm_cpu_with(vga.src(i), vga.dst(), p, isa); }, 1),
              0);
    }
  if (opt.json) std::fclose(opt.json);
  return 0;
}

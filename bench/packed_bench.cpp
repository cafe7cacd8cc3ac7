// Engine-level benchmark of packed frames (no GStreamer): GPU time of each
// filter on 8-bit frames in device memory as NV12 (the planar reference),
// RGBA and BGR (through OpenCV's YCrCb) and YUY2 (as Y42B), the conversions
// alone, and the device copy bandwidth that bounds them. Checks the GPU
// against the CPU path on every packed layout once per size.
//
//   packed_bench [--frames N] [--json FILE] [--size 720p|1080p|4K]
#include <cudafilters/clahe_cpu.h>
#include <cudafilters/clahe_gpu.h>
#include <cudafilters/cuda_memory.h>
#include <cudafilters/histeq_cpu.h>
#include <cudafilters/histeq_gpu.h>
#include <cudafilters/nlm_cpu.h>
#include <cudafilters/nlm_gpu.h>
#include <cudafilters/packed_filters.h>
#include <cudafilters/sharpen_cpu.h>
#include <cudafilters/sharpen_gpu.h>

#include "bench_util.h"
#include "packed_convert.h"

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace cudafilters;
using namespace bench;

namespace {

constexpr int kRotation = 4;

PackedPixels rgba(int w) {
  PackedPixels p;
  p.kind = PackedPixels::Kind::kRgb;
  p.unit_bytes = 4;
  p.r = 0, p.g = 1, p.b = 2;
  p.width = w;
  return p;
}

PackedPixels bgr(int w) {
  PackedPixels p = rgba(w);
  p.unit_bytes = 3;
  p.r = 2, p.b = 0;
  return p;
}

PackedPixels yuy2(int w) {
  PackedPixels p;
  p.kind = PackedPixels::Kind::kYuv422;
  p.unit_bytes = 4;
  p.y0 = 0, p.u = 1, p.y1 = 2, p.v = 3;
  p.width = w;
  return p;
}

// kRotation packed frames of one layout on the host and the device: each
// byte of a pixel a scene level (make_frame) of its own seed, so that
// channels differ; alpha random.
struct PackedFrames {
  PackedPixels pixels;
  int height;
  size_t row;
  std::vector<std::vector<uint8_t>> host;
  std::vector<DevicePlane> dev;
  DevicePlane out;

  PackedFrames(const PackedPixels &p, int h) : pixels(p), height(h), row(packed_row_bytes(p)) {
    for (int k = 0; k < kRotation; ++k) {
      std::vector<uint8_t> f(row * h);
      const int lanes = p.unit_bytes;
      const int lane_width = static_cast<int>(row / lanes);
      for (int c = 0; c < lanes; ++c) {
        const std::vector<uint8_t> scene = make_frame(lane_width, h, 10 * k + c);
        for (size_t i = 0; i < scene.size(); ++i) f[i * lanes + c] = scene[i];
      }
      host.push_back(std::move(f));
      dev.emplace_back();
      dev.back().reserve(static_cast<int>(row), h);
      CUDAFILTERS_CHECK(cudaMemcpy2D(dev.back().data(), dev.back().pitch(), host.back().data(), row,
                                     row, h, cudaMemcpyHostToDevice));
    }
    out.reserve(static_cast<int>(row), h);
  }
  ConstPlane in(int i) const {
    const DevicePlane &d = dev[i % kRotation];
    return ConstPlane(d.data(), d.pitch(), static_cast<int>(row), height);
  }
  Plane dst() const { return Plane(out.data(), out.pitch(), static_cast<int>(row), height); }
  ConstPlane host_in(int i) const {
    return ConstPlane(host[i % kRotation].data(), row, static_cast<int>(row), height);
  }
  std::vector<uint8_t> download() const {
    std::vector<uint8_t> got(row * height);
    CUDAFILTERS_CHECK(cudaMemcpy2D(got.data(), row, out.data(), out.pitch(), row, height,
                                   cudaMemcpyDeviceToHost));
    return got;
  }
};

// NV12 frames on the device for whole-frame filters: luma and interleaved
// chroma, and an output.
struct Nv12Frames {
  int w, h;
  std::vector<DevicePlane> luma, uv;
  DevicePlane out_luma, out_uv;
  Nv12Frames(int w_, int h_) : w(w_), h(h_), luma(kRotation), uv(kRotation) {
    for (int k = 0; k < kRotation; ++k) {
      const std::vector<uint8_t> y = make_frame(w, h, k), c = make_frame(w, (h + 1) / 2, k + 7);
      luma[k].reserve(w, h);
      uv[k].reserve(w, (h + 1) / 2);
      CUDAFILTERS_CHECK(cudaMemcpy2D(luma[k].data(), luma[k].pitch(), y.data(), w, w, h, cudaMemcpyHostToDevice));
      CUDAFILTERS_CHECK(cudaMemcpy2D(uv[k].data(), uv[k].pitch(), c.data(), w, w, (h + 1) / 2,
                                     cudaMemcpyHostToDevice));
    }
    out_luma.reserve(w, h);
    out_uv.reserve(w, (h + 1) / 2);
  }
  FramePlanes in(int i) const {
    const int k = i % kRotation, cw = (w + 1) / 2, ch = (h + 1) / 2;
    FramePlanes f;
    f.luma = ConstPlane(luma[k].data(), luma[k].pitch(), w, h);
    f.u = ConstPlane(uv[k].data(), uv[k].pitch(), cw, ch);
    f.v = ConstPlane(uv[k].data() + 1, uv[k].pitch(), cw, ch);
    f.chroma_step = 2;
    return f;
  }
  FramePlanesOut out() const {
    const int cw = (w + 1) / 2, ch = (h + 1) / 2;
    FramePlanesOut f;
    f.luma = Plane(out_luma.data(), out_luma.pitch(), w, h);
    f.u = Plane(out_uv.data(), out_uv.pitch(), cw, ch);
    f.v = Plane(out_uv.data() + 1, out_uv.pitch(), cw, ch);
    f.chroma_step = 2;
    return f;
  }
  CarriedPlanes chroma() const {
    return {{ConstPlane(uv[0].data(), uv[0].pitch(), w, (h + 1) / 2),
             Plane(out_uv.data(), out_uv.pitch(), w, (h + 1) / 2)}};
  }
};

// A plane filter that does nothing: the conversions alone.
class CopyLuma final : public GpuPlaneFilter {
 public:
  void enqueue(ConstPlane src, Plane dst, cudaStream_t stream) override {
    CUDAFILTERS_CHECK(cudaMemcpy2DAsync(dst.data, dst.stride, src.data, src.stride, src.width,
                                        src.height, cudaMemcpyDeviceToDevice, stream));
  }
};

struct PlaneCase {
  const char *name;
  std::function<std::unique_ptr<GpuPlaneFilter>()> gpu;
  std::function<std::unique_ptr<CpuPlaneFilter>()> cpu;
};

template <typename Gpu, typename Cpu, typename Params>
PlaneCase plane_case(const char *name, Params p) {
  return PlaneCase{name,
                   [p] {
                     auto f = std::make_unique<Gpu>();
                     f->set_params(p);
                     return std::unique_ptr<GpuPlaneFilter>(std::move(f));
                   },
                   [p] {
                     auto f = std::make_unique<Cpu>();
                     f->set_params(p);
                     return std::unique_ptr<CpuPlaneFilter>(std::move(f));
                   }};
}

struct Layout {
  const char *name;
  PackedPixels (*make)(int);
};

constexpr Layout kLayouts[] = {{"RGBA", rgba}, {"BGR", bgr}, {"YUY2", yuy2}};

}  // namespace

int main(int argc, char **argv) {
  const Options opt = parse_options(argc, argv, 200);
  Reporter rep("packed", opt.json);
  const PlaneCase cases[] = {
      plane_case<HistEqGpu, HistEqCpu>("cudahisteq", HistEqParams{}),
      plane_case<ClaheGpu, ClaheCpu>("cudaclahe", ClaheParams{}),
      plane_case<SharpenGpu, SharpenCpu>("cudasharpen", SharpenParams{}),
  };
  int mismatches = 0;
  try {
    rep.device_info();
    Stream stream;
    rep.device_copy_row(stream.get());
    for (const Size &sz : kSizes) {
      if (!opt.wants(sz)) continue;
      const double n = double(sz.width) * sz.height;
      const ByteFrames nv12(sz.width, sz.height, kRotation);
      const CarriedPlanes chroma = nv12.chroma();

      for (const Layout &l : kLayouts) {
        const PackedFrames f(l.make(sz.width), sz.height);
        const double bytes = 2.0 * f.row * sz.height;
        CopyLuma copy;
        GpuPackedPlaneFilter convert(copy);
        convert.set_pixels(f.pixels);
        rep.row((std::string(l.name) + " to planes and back, nothing filtered (GPU time)").c_str(),
                sz, time_gpu(stream.get(), opt.frames, [&](int i) {
                  convert.enqueue(f.in(i), f.dst(), stream.get());
                }),
                bytes);
      }

      for (const PlaneCase &c : cases) {
        std::unique_ptr<GpuPlaneFilter> gpu = c.gpu();
        rep.row((std::string(c.name) + ", NV12 (GPU time)").c_str(), sz,
                time_gpu(stream.get(), opt.frames, [&](int i) {
                  gpu->enqueue_carrying(nv12.in(i), nv12.out(), chroma, stream.get());
                }),
                3.0 * n);
        rep.row((std::string(c.name) + ", NV12 back to back").c_str(), sz,
                time_gpu_back_to_back(stream.get(), opt.frames / 10 + 1, [&](int i) {
                  gpu->enqueue_carrying(nv12.in(i), nv12.out(), chroma, stream.get());
                }),
                3.0 * n);
        for (const Layout &l : kLayouts) {
          const PackedFrames f(l.make(sz.width), sz.height);
          GpuPackedPlaneFilter packed(*gpu);
          packed.set_pixels(f.pixels);
          rep.row((std::string(c.name) + ", " + l.name + " (GPU time)").c_str(), sz,
                  time_gpu(stream.get(), opt.frames, [&](int i) {
                    packed.enqueue(f.in(i), f.dst(), stream.get());
                  }),
                  2.0 * f.row * sz.height);
          rep.row((std::string(c.name) + ", " + l.name + " back to back").c_str(), sz,
                  time_gpu_back_to_back(stream.get(), opt.frames / 10 + 1, [&](int i) {
                    packed.enqueue(f.in(i), f.dst(), stream.get());
                  }),
                  2.0 * f.row * sz.height);
          // The GPU against the CPU path on one frame.
          std::unique_ptr<CpuPlaneFilter> cpu = c.cpu();
          CpuPackedPlaneFilter cpu_packed(*cpu);
          cpu_packed.set_pixels(f.pixels);
          std::vector<uint8_t> want(f.row * sz.height);
          cpu_packed.process(f.host_in(1), Plane(want.data(), f.row, int(f.row), sz.height));
          gpu->reset_history();
          packed.enqueue(f.in(1), f.dst(), stream.get());
          stream.synchronize();
          if (f.download() != want) {
            std::fprintf(stderr, "MISMATCH between GPU and CPU: %s %s at %s\n", c.name, l.name, sz.name);
            ++mismatches;
          }
        }
      }

      // cudanlm, fixed strength, luma and chroma, no temporal window.
      NlmParams p;
      p.auto_strength = false;
      p.h = 10.f;
      p.noise_sigma = 5.f;
      p.chroma_h = 10.f;
      NlmGpu nlm;
      nlm.set_params(p);
      const Nv12Frames frames(sz.width, sz.height);
      rep.row("cudanlm, NV12, luma + chroma (GPU time)", sz,
              time_gpu(stream.get(), std::max(10, opt.frames / 10), [&](int i) {
                const FramePlanes in = frames.in(i);
                nlm.enqueue_window(&in, 1, 0, frames.out(), stream.get());
              }),
              3.0 * n);
      // The planes an RGB frame becomes: Y, Cr, Cb at full resolution.
      {
        DevicePlane y444[3], y444_out[3];
        FramePlanes in;
        FramePlanesOut out;
        ConstPlane *ins[3] = {&in.luma, &in.u, &in.v};
        Plane *outs[3] = {&out.luma, &out.u, &out.v};
        for (int c = 0; c < 3; ++c) {
          y444[c].reserve(sz.width, sz.height);
          y444_out[c].reserve(sz.width, sz.height);
          const std::vector<uint8_t> host = make_frame(sz.width, sz.height, 20 + c);
          CUDAFILTERS_CHECK(cudaMemcpy2D(y444[c].data(), y444[c].pitch(), host.data(), sz.width,
                                         sz.width, sz.height, cudaMemcpyHostToDevice));
          *ins[c] = ConstPlane(y444[c].data(), y444[c].pitch(), sz.width, sz.height);
          *outs[c] = Plane(y444_out[c].data(), y444_out[c].pitch(), sz.width, sz.height);
        }
        rep.row("cudanlm, Y444 planes, luma + chroma (GPU time)", sz,
                time_gpu(stream.get(), std::max(10, opt.frames / 10), [&](int) {
                  nlm.enqueue_window(&in, 1, 0, out, stream.get());
                }),
                6.0 * n);
      }
      for (const Layout &l : kLayouts) {
        const PackedFrames f(l.make(sz.width), sz.height);
        GpuPackedWindowFilter packed(nlm);
        packed.set_pixels(f.pixels);
        rep.row((std::string("cudanlm, ") + l.name + ", luma + chroma (GPU time)").c_str(), sz,
                time_gpu(stream.get(), std::max(10, opt.frames / 10), [&](int i) {
                  FramePlanes in;
                  in.luma = f.in(i);
                  FramePlanesOut out;
                  out.luma = f.dst();
                  packed.enqueue_window(&in, 1, 0, out, stream.get());
                }),
                2.0 * f.row * sz.height);
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "packed_bench: %s\n", e.what());
    return 1;
  }
  if (opt.json) std::fclose(opt.json);
  return mismatches ? 1 : 0;
}

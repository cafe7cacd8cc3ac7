// The elements as a GStreamer application sees them: per-frame time of
// cudahisteq, cudaclahe, cudanlm and cudasharpen at 720p, 1080p and 4K, and pipeline
// throughput.
//
//   element_bench [--backend cuda|cpu] [--frames N] [--json FILE]
//                 [--dump-frames DIR] [--only histeq|clahe|nlm|sharpen]
//   element_bench --chain [--frames N] [--json FILE] [--only histeq|nlm]
//   element_bench --cross-device [--frames N] [--json FILE]
//   element_bench --system-memory [--backend cuda|cpu] [--frames N] [--json FILE]
//                 [--only histeq|clahe|nlm|sharpen]
//   element_bench --pageable [--backend cuda|cpu] [--frames N] [--json FILE]
//                 [--only histeq|clahe|nlm|sharpen] [--size 1080p|4K]
//                 [--formats GRAY8,NV12,RGBA] [--rounds N]
//
// Rows, for each element and size:
//   - system memory (GRAY8), pageable frames pushed through a GstHarness;
//   - system memory, frames in the buffers the element proposes upstream
//     (page-locked on the GPU backend);
//   - CUDA memory (NV12), frames already on the GPU (cuda backend);
//   - pipeline throughput, appsrc ! element ! fakesink, as time per frame,
//     next to the same pipeline with identity;
//   - GStreamer's cvequalizehist on the same frames, where it is installed.
//
// --chain times appsrc ! <element> x K ! fakesink on NV12 frames in CUDA
// memory at 1080p and 4K for K = 0, 1, 2, 4 and 8, for cudahisteq and
// cudanlm, to the end of the GPU work of the last frame. The frames carry a
// stream of their own, as a decoder's do (GStreamer 1.24 on). Each chain
// runs once as built (frames pushed without a host wait where the memory
// carries a stream) and once with CUDAFILTERS_HOST_SYNC=1 (every element
// waits for every frame, as with GStreamer 1.22). The time each element
// adds is (t(K) - t(0)) / K, next to the GPU time of the work the element
// queues per frame (its engine on the same NV12 frame, chroma carried by
// cudahisteq and denoised by cudanlm; frames back to back).
//
// --cross-device (two GPUs) times NV12 frames in CUDA memory of device 0
// at 1080p and 4K through cudahisteq and cudanlm on device 0 and on device
// 1, which copies each frame to its own device first, and through a chain
// of four elements on device 0 against the same chain alternating between
// the devices (four crossings). Next to them, the copy alone: a frame from
// device 0 to device 1 with cudaMemcpy2D, as the element makes it.
//
// --system-memory: the rows of frames in system memory alone (pageable
// frames, the proposed pool, the GRAY8 pipeline).
//
// --pageable [--formats GRAY8,NV12,RGBA] [--size S]: appsrc ! <element> !
// fakesink on frames from a source that costs nothing: it cycles N buffers
// of a pool of pageable system memory (N = 4 and 32, as a camera's or a
// decoder's pool does), cycles 4 with a reference kept until the next frame
// (a buffer the element may not write, as behind a tee: never filtered in
// place), hands over memory allocated for every frame (never
// written by the source: the element's first touch of it is part of what a
// fresh frame costs), or cycles 4 buffers of the pool the element proposes
// (page-locked). Per row, at 720p, 1080p and 4K: the interval between
// frames reaching the sink (median, p90, p99) and the process CPU time per
// frame (user + sys), from PLAYING to EOS after preroll, leaving out two
// rounds through a pool (a buffer is staged at its first sight and pinned
// at its second), whose mean interval and CPU time are printed beside;
// `identity` in the element's place gives what the pipeline costs alone. Run with --backend
// cpu for the CPU backend's figures beside them. --rounds N (default 1)
// runs the sources of a row N times in turn (4 cycled, 32 cycled, 4 shared,
// fresh, proposed, then again) and reports each source over all its rounds, so
// that a state of the machine that lasts one run (frequency, which cores
// the threads landed on) weighs on every source alike.
//
// Kernel-only GPU times and the copy and bandwidth floors come from
// histeq_bench, clahe_bench and nlm_bench. Four distinct frames are rotated; --dump-frames
// writes them (raw GRAY8) so other tools can run on the same input.
#include "bench_util.h"

#include <gst/app/gstappsrc.h>
#include <gst/check/gstharness.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <cudafilters/cuda_memory.h>
#include <cudafilters/gpu_frame_runner.h>
#include <cudafilters/histeq_gpu.h>
#include <cudafilters/nlm_gpu.h>
#include <gst/video/video.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace bench;

namespace {

constexpr int kRotation = 4;

struct ElementOptions {
  std::string backend = "cuda";
  int frames = 300;
  std::string json;
  std::string dump_dir;
  std::string only;
  std::string formats = "GRAY8,NV12,RGBA";  // --pageable
  bool chain = false;
  bool cross_device = false;
  bool system_memory = false;
  bool pageable = false;
  int rounds = 1;  // --pageable
  std::string size;
};

std::string caps_string(const char *format, const Size &sz, bool cuda) {
  return std::string("video/x-raw") + (cuda ? "(memory:CUDAMemory)" : "") + ",format=" + format +
         ",width=" + std::to_string(sz.width) + ",height=" + std::to_string(sz.height) +
         ",framerate=30/1";
}

// Writes the luma of `frame` into every plane-0 row of `buf` and leaves
// chroma mid-grey; works for host and CUDA memory (mapped to host).
void fill_buffer(GstBuffer *buf, const GstVideoInfo &info, const std::vector<uint8_t> &luma) {
  GstVideoFrame f;
  if (!gst_video_frame_map(&f, &info, buf, GST_MAP_WRITE)) throw std::runtime_error("map for write failed");
  const int w = GST_VIDEO_INFO_WIDTH(&info), h = GST_VIDEO_INFO_HEIGHT(&info);
  for (int y = 0; y < h; ++y)
    std::memcpy(static_cast<uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&f, 0)) +
                    size_t(y) * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0),
                &luma[size_t(y) * w], w);
  for (guint p = 1; p < GST_VIDEO_FRAME_N_PLANES(&f); ++p) {
    const int rows = GST_VIDEO_FRAME_COMP_HEIGHT(&f, p);
    for (int y = 0; y < rows; ++y)
      std::memset(static_cast<uint8_t *>(GST_VIDEO_FRAME_PLANE_DATA(&f, p)) +
                      size_t(y) * GST_VIDEO_FRAME_PLANE_STRIDE(&f, p),
                  128, GST_VIDEO_FRAME_PLANE_STRIDE(&f, p));
  }
  gst_video_frame_unmap(&f);
}

std::vector<GstBuffer *> host_frames(const char *format, const Size &sz,
                                     const std::vector<std::vector<uint8_t>> &lumas) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, gst_video_format_from_string(format), sz.width, sz.height);
  std::vector<GstBuffer *> bufs;
  for (const auto &l : lumas) {
    GstBuffer *b = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
    fill_buffer(b, info, l);
    bufs.push_back(b);
  }
  return bufs;
}

// Frames in CUDA memory of `ctx`, from a GstCudaBufferPool.
struct CudaFrames {
  GstBufferPool *pool = nullptr;
  std::vector<GstBuffer *> bufs;

  // With `with_stream` (GStreamer 1.24 on), the memory carries a stream of
  // its own, as a decoder's output does.
  CudaFrames(GstCudaContext *ctx, const char *format, const Size &sz,
             const std::vector<std::vector<uint8_t>> &lumas, bool with_stream = false) {
    GstCaps *caps = gst_caps_from_string(caps_string(format, sz, true).c_str());
    GstVideoInfo info;
    gst_video_info_from_caps(&info, caps);
    pool = gst_cuda_buffer_pool_new(ctx);
    GstStructure *config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, GST_VIDEO_INFO_SIZE(&info), kRotation, kRotation);
    gst_caps_unref(caps);
#if GST_CHECK_VERSION(1, 24, 0)
    if (with_stream) {
      GstCudaStream *stream = gst_cuda_stream_new(ctx);
      gst_buffer_pool_config_set_cuda_stream(config, stream);
      gst_clear_cuda_stream(&stream);
    }
#else
    (void)with_stream;
#endif
    // A pool that adjusts the configuration (GStreamer 1.22 pads the size)
    // says so by refusing it; the adjusted one is then taken.
    if (!gst_buffer_pool_set_config(pool, config) &&
        !gst_buffer_pool_set_config(pool, gst_buffer_pool_get_config(pool)))
      throw std::runtime_error("cannot configure a CUDA buffer pool");
    if (!gst_buffer_pool_set_active(pool, TRUE))
      throw std::runtime_error("cannot set up a CUDA buffer pool");
    for (const auto &l : lumas) {
      GstBuffer *b = nullptr;
      if (gst_buffer_pool_acquire_buffer(pool, &b, nullptr) != GST_FLOW_OK)
        throw std::runtime_error("cannot get a CUDA buffer");
      fill_buffer(b, info, l);
      bufs.push_back(b);
    }
  }
  ~CudaFrames() {
    for (GstBuffer *b : bufs) gst_buffer_unref(b);
    gst_buffer_pool_set_active(pool, FALSE);
    gst_object_unref(pool);
  }
};

// Enough warm-up to reach steady state (pools filled, caches warm) without
// doubling the run for the slow cases.
int warmup_for(int iters) { return std::max(2, std::min(20, iters / 10)); }

void share_context(GstElement *element, GstCudaContext *ctx) {
  if (!ctx) return;
  GstContext *c = gst_context_new_cuda_context(ctx);
  gst_element_set_context(element, c);
  gst_context_unref(c);
}

// Per-frame wall time of push-and-pull through a harness of `launch`.
Stats time_harness(const std::string &launch, const std::string &caps, GstCudaContext *ctx,
                   const std::vector<GstBuffer *> &inputs, int iters) {
  GstHarness *h = gst_harness_new_parse(launch.c_str());
  share_context(h->element, ctx);
  gst_harness_set_src_caps_str(h, caps.c_str());
  gst_harness_set_sink_caps_str(h, caps.c_str());
  Stats st = time_host(iters, [&](int i) {
    GstBuffer *out = gst_harness_push_and_pull(h, gst_buffer_ref(inputs[i % inputs.size()]));
    if (!out) throw std::runtime_error(launch + ": no output");
    gst_buffer_unref(out);
  }, warmup_for(iters));
  gst_harness_teardown(h);
  return st;
}

// The same, with inputs in buffers the element proposed upstream.
Stats time_harness_proposed(const std::string &launch, const char *format, const Size &sz,
                            const std::vector<std::vector<uint8_t>> &lumas, int iters) {
  GstHarness *h = gst_harness_new_parse(launch.c_str());
  const std::string caps = caps_string(format, sz, false);
  gst_harness_set_src_caps_str(h, caps.c_str());
  GstVideoInfo info;
  gst_video_info_set_format(&info, gst_video_format_from_string(format), sz.width, sz.height);
  std::vector<GstBuffer *> inputs;
  for (const auto &l : lumas) {
    GstBuffer *b = gst_harness_create_buffer(h, GST_VIDEO_INFO_SIZE(&info));
    fill_buffer(b, info, l);
    inputs.push_back(b);
  }
  Stats st = time_host(iters, [&](int i) {
    GstBuffer *out = gst_harness_push_and_pull(h, gst_buffer_ref(inputs[i % inputs.size()]));
    if (!out) throw std::runtime_error(launch + ": no output");
    gst_buffer_unref(out);
  }, warmup_for(iters));
  for (GstBuffer *b : inputs) gst_buffer_unref(b);
  gst_harness_teardown(h);
  return st;
}

// appsrc name=src ! <middle> ! fakesink <sink_props>, sharing `ctx`: made,
// prerolled (start-up is not throughput), played to EOS, and torn down.
class AppsrcPipeline {
 public:
  AppsrcPipeline(const std::string &caps, const std::string &middle, GstCudaContext *ctx,
                 const std::string &sink_props = "")
      : launch_("appsrc name=src format=time caps=\"" + caps + "\" ! " + middle +
                " ! fakesink name=sink sync=false" + sink_props) {
    GError *err = nullptr;
    pipeline_ = gst_parse_launch(launch_.c_str(), &err);
    if (!pipeline_ || err) throw std::runtime_error(launch_ + ": " + (err ? err->message : ""));
    share_context(pipeline_, ctx);
    bus_ = gst_element_get_bus(pipeline_);
  }
  ~AppsrcPipeline() {
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    gst_bus_set_flushing(bus_, TRUE);
    gst_object_unref(bus_);
    gst_object_unref(pipeline_);
  }
  AppsrcPipeline(const AppsrcPipeline &) = delete;
  AppsrcPipeline &operator=(const AppsrcPipeline &) = delete;

  // The named element (a reference the caller drops).
  GstElement *get(const char *name) const { return gst_bin_get_by_name(GST_BIN(pipeline_), name); }
  void preroll() {
    gst_element_set_state(pipeline_, GST_STATE_PAUSED);
    if (gst_element_get_state(pipeline_, nullptr, nullptr, 60 * GST_SECOND) ==
        GST_STATE_CHANGE_FAILURE)
      throw std::runtime_error(launch_ + ": did not preroll");
  }
  // PLAYING until EOS or an error; the stop is left to the destructor.
  void play_to_eos(GstClockTime timeout) {
    gst_element_set_state(pipeline_, GST_STATE_PLAYING);
    GstMessage *m = gst_bus_timed_pop_filtered(
        bus_, timeout, GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    const bool ok = m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS;
    if (m) gst_message_unref(m);
    if (!ok) throw std::runtime_error(launch_ + ": did not reach EOS");
  }

 private:
  const std::string launch_;
  GstElement *pipeline_ = nullptr;
  GstBus *bus_ = nullptr;
};

// Time per frame of appsrc ! <middle> ! fakesink over `frames` frames, from
// PLAYING to EOS; one sample per repetition. With `finish`, to the end of
// the work queued in `ctx` by then.
Stats time_pipeline(const std::string &middle, const std::string &caps, GstCudaContext *ctx,
                    const std::vector<GstBuffer *> &inputs, int frames, int reps,
                    bool finish = false, GstCudaContext *finish_also = nullptr) {
  std::vector<double> per_frame;
  for (int r = 0; r < reps; ++r) {
    AppsrcPipeline pipeline(caps, middle, ctx);
    GstElement *src = pipeline.get("src");
    g_object_set(src, "max-bytes", guint64(0), "block", FALSE, nullptr);
    for (int i = 0; i < frames; ++i) {
      GstBuffer *b = gst_buffer_copy(inputs[i % inputs.size()]);  // metadata only
      GST_BUFFER_PTS(b) = GstClockTime(i) * GST_SECOND / 30;
      GST_BUFFER_DURATION(b) = GST_SECOND / 30;
      gst_app_src_push_buffer(GST_APP_SRC(src), b);
    }
    gst_app_src_end_of_stream(GST_APP_SRC(src));
    gst_object_unref(src);

    pipeline.preroll();
    const auto t0 = std::chrono::steady_clock::now();
    pipeline.play_to_eos(300 * GST_SECOND);
    if (finish && gst_cuda_context_push(ctx)) {
      CUDAFILTERS_CHECK(cudaDeviceSynchronize());
      gst_cuda_context_pop(nullptr);
    }
    if (finish && finish_also && gst_cuda_context_push(finish_also)) {
      CUDAFILTERS_CHECK(cudaDeviceSynchronize());
      gst_cuda_context_pop(nullptr);
    }
    const auto t1 = std::chrono::steady_clock::now();
    per_frame.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() /
                        std::max(1, frames - 1));
  }
  return summarize(per_frame);
}

// The chains of --chain, for each element and size.
void run_chains(Reporter &rep, const ElementOptions &opt, GstCudaContext *ctx) {
  struct Chained {
    const char *name;
    const char *props;
    int frames_divisor;
    // The GPU time of the work one element queues per NV12 frame.
    std::function<Stats(const Size &, int)> gpu_time;
  };
  const Chained elements[] = {
      {"cudahisteq", "", 1,
       [](const Size &sz, int iters) {
         cudafilters::HistEqGpu engine;
         return element_gpu_time(engine, sz, iters);
       }},
      // cudanlm denoises the chroma too (chroma-strength -1 by default), and
      // like the engine at its defaults at automatic strength.
      {"cudanlm", " patch-size=7 search-size=21", 4, [](const Size &sz, int iters) {
         cudafilters::NlmGpu engine;
         return window_gpu_time(engine, sz, iters);
       }}};
  const int ks[] = {0, 1, 2, 4, 8};
  for (const Size &sz : kSizes) {
    if (sz.height < 1080) continue;
    std::vector<std::vector<uint8_t>> lumas;
    for (int k = 0; k < kRotation; ++k) lumas.push_back(make_frame(sz.width, sz.height, 100 + k));
    CudaFrames frames_on_gpu(ctx, "NV12", sz, lumas, true);
    const std::string caps = caps_string("NV12", sz, true);
    for (const Chained &e : elements) {
      if (!opt.only.empty() && std::string(e.name).find(opt.only) == std::string::npos) continue;
      const int frames = std::max(10, opt.frames / e.frames_divisor);
      {
        if (!gst_cuda_context_push(ctx)) throw std::runtime_error("cannot push the CUDA context");
        const Stats gpu = e.gpu_time(sz, std::max(10, frames / 10));
        gst_cuda_context_pop(nullptr);
        rep.row((std::string(e.name) + ": GPU time of one element").c_str(), sz, gpu, 0);
      }
      for (const bool host_sync : {false, true}) {
        // Read by each element instance when it is created.
        g_setenv("CUDAFILTERS_HOST_SYNC", host_sync ? "1" : "0", TRUE);
        const char *mode = host_sync ? "host wait per element" : "as built";
        double t0 = 0;
        for (const int k : ks) {
          std::string middle = "identity";
          for (int i = 0; i < k; ++i) middle += std::string(" ! ") + e.name + " backend=cuda" + e.props;
          const Stats st = time_pipeline(middle, caps, ctx, frames_on_gpu.bufs, frames, 3, true);
          const std::string what = std::string(e.name) + " x" + std::to_string(k) + ", " + mode;
          rep.row(what.c_str(), sz, st, 0);
          if (k == 0) t0 = st.median_us;
          else
            std::printf("    added per element: %.1f us\n", (st.median_us - t0) / k);
        }
      }
      g_unsetenv("CUDAFILTERS_HOST_SYNC");
    }
  }
}

// The rows of --cross-device: frames of device 0 (ctx) through elements on
// either device.
void run_cross_device(Reporter &rep, const ElementOptions &opt, GstCudaContext *ctx) {
  int count = 0;
  CUDAFILTERS_CHECK(cudaGetDeviceCount(&count));
  if (count < 2) throw std::runtime_error("--cross-device needs two GPUs");
  GstCudaContext *other = gst_cuda_context_new(1);
  if (!other) throw std::runtime_error("cannot open device 1");
  std::printf("  device 1 %s access device 0's memory directly (peer access)\n",
              gst_cuda_context_can_access_peer(other, ctx) ? "can" : "cannot");
  const char *histeq = "cudahisteq backend=cuda";
  const char *nlm = "cudanlm backend=cuda patch-size=7 search-size=21";
  auto on = [](const char *element, int device) {
    return std::string(element) + " cuda-device-id=" + std::to_string(device);
  };
  auto chain = [&](int a, int b) {
    return "identity ! " + on("cudahisteq backend=cuda", a) + " ! " + on("cudasharpen backend=cuda", b) +
           " ! " + on("cudaclahe backend=cuda", a) + " ! " + on(nlm, b);
  };
  for (const Size &sz : kSizes) {
    if (sz.height < 1080) continue;
    std::vector<std::vector<uint8_t>> lumas;
    for (int k = 0; k < kRotation; ++k) lumas.push_back(make_frame(sz.width, sz.height, 100 + k));
    CudaFrames frames_on_0(ctx, "NV12", sz, lumas, true);
    const std::string caps = caps_string("NV12", sz, true);
    const double bytes = 1.5 * sz.width * sz.height;
    {
      // The copy alone, into a pitched allocation of device 1.
      GstVideoFrame f;
      GstVideoInfo info;
      GstCaps *c = gst_caps_from_string(caps.c_str());
      gst_video_info_from_caps(&info, c);
      gst_caps_unref(c);
      if (!gst_video_frame_map(&f, &info, frames_on_0.bufs[0],
                               GstMapFlags(GST_MAP_READ | GST_MAP_CUDA)))
        throw std::runtime_error("cannot map a CUDA frame");
      if (!gst_cuda_context_push(other)) throw std::runtime_error("cannot push device 1");
      cudafilters::DevicePlane luma, chroma;
      luma.reserve(sz.width, sz.height);
      chroma.reserve(sz.width, sz.height / 2);
      const Stats st = time_host(std::max(20, opt.frames), [&](int) {
        CUDAFILTERS_CHECK(cudaMemcpy2D(luma.data(), luma.pitch(), GST_VIDEO_FRAME_PLANE_DATA(&f, 0),
                                       GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0), sz.width, sz.height,
                                       cudaMemcpyDefault));
        CUDAFILTERS_CHECK(cudaMemcpy2D(chroma.data(), chroma.pitch(), GST_VIDEO_FRAME_PLANE_DATA(&f, 1),
                                       GST_VIDEO_FRAME_PLANE_STRIDE(&f, 1), sz.width, sz.height / 2,
                                       cudaMemcpyDefault));
        CUDAFILTERS_CHECK(cudaStreamSynchronize(nullptr));
      });
      gst_cuda_context_pop(nullptr);
      gst_video_frame_unmap(&f);
      rep.row("NV12 frame copied from device 0 to device 1", sz, st, bytes);
    }
    const int frames = opt.frames;
    struct Case {
      std::string what, middle;
      int divisor;
    };
    const Case cases[] = {
        {"cudahisteq on device 0, frames on device 0", "identity ! " + on(histeq, 0), 1},
        {"cudahisteq on device 1, frames on device 0", "identity ! " + on(histeq, 1), 1},
        {"cudanlm on device 0, frames on device 0", "identity ! " + on(nlm, 0), 4},
        {"cudanlm on device 1, frames on device 0", "identity ! " + on(nlm, 1), 4},
        {"four elements on device 0", chain(0, 0), 4},
        {"four elements alternating, 1 0 1 0", chain(1, 0), 4},
    };
    for (const bool host_sync : {false, true}) {
      // Read by each element instance when it is created.
      g_setenv("CUDAFILTERS_HOST_SYNC", host_sync ? "1" : "0", TRUE);
      for (const Case &c : cases) {
        const std::string what = c.what + (host_sync ? ", host wait per element" : ", as built");
        rep.row(what.c_str(), sz,
                time_pipeline(c.middle, caps, ctx, frames_on_0.bufs, std::max(10, frames / c.divisor), 3,
                              true, other),
                0);
      }
    }
    g_unsetenv("CUDAFILTERS_HOST_SYNC");
  }
  gst_object_unref(other);
}

// Machine description: one JSON line and one printed line.
void describe_machine(FILE *json, const std::string &backend) {
  std::string gpu = "none";
  int driver = 0, runtime = 0;
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) gpu = prop.name;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
  } else {
    (void)cudaGetLastError();
  }
  const unsigned cpus = std::thread::hardware_concurrency();
  std::printf("machine: GPU %s (driver API %d, runtime %d), CPU %s x %u, GStreamer %s, backend %s\n",
              gpu.c_str(), driver, runtime, cpu_model().c_str(), cpus, gst_version_string(),
              backend.c_str());
  if (json)
    std::fprintf(json,
                 "{\"bench\":\"element\",\"machine\":true,\"gpu\":\"%s\",\"driver\":%d,\"runtime\":%d,"
                 "\"cpu\":\"%s\",\"cpus\":%u,\"gstreamer\":\"%s\",\"backend\":\"%s\"}\n",
                 gpu.c_str(), driver, runtime, cpu_model().c_str(), cpus, gst_version_string(),
                 backend.c_str());
}

void dump_frames(const std::string &dir, const Size &sz, const std::vector<std::vector<uint8_t>> &lumas) {
  for (size_t k = 0; k < lumas.size(); ++k) {
    const std::string path = dir + "/" + sz.name + "-" + std::to_string(sz.width) + "x" +
                             std::to_string(sz.height) + "-" + std::to_string(k) + ".gray";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(lumas[k].data()),
                                                std::streamsize(lumas[k].size()));
  }
}

// The rows of the default mode, for each size and element.
void run_rows(Reporter &rep, const ElementOptions &opt, GstCudaContext *ctx) {
  const bool on_gpu = ctx != nullptr;
  const std::string label = on_gpu ? "" : " [CPU backend]";
  struct Element {
    const char *name;
    const char *props;
    int frames_divisor;  // cudanlm on the CPU is slow: fewer frames
  };
  const Element elements[] = {{"cudahisteq", "", 1},
                              {"cudaclahe", " clip-limit=2 tiles-x=8 tiles-y=8", 1},
                              {"cudanlm", " patch-size=7 search-size=21", on_gpu ? 4 : 100},
                              {"cudasharpen", " amount=1 radius=1", 1}};

  for (const Size &sz : kSizes) {
    std::vector<std::vector<uint8_t>> lumas;
    for (int k = 0; k < kRotation; ++k) lumas.push_back(make_frame(sz.width, sz.height, 100 + k));
    if (!opt.dump_dir.empty()) dump_frames(opt.dump_dir, sz, lumas);
    std::vector<GstBuffer *> gray = host_frames("GRAY8", sz, lumas);
    const double n = double(sz.width) * sz.height;

    for (const Element &e : elements) {
      if (!opt.only.empty() && std::string(e.name).find(opt.only) == std::string::npos) continue;
      const int iters = std::max(3, opt.frames / e.frames_divisor);
      const std::string launch = std::string(e.name) + " backend=" + opt.backend + e.props;
      auto what = [&](const char *kind) { return std::string(e.name) + ": " + kind + label; };

      rep.row(what("GRAY8 system memory, pageable frames").c_str(), sz,
              time_harness(launch, caps_string("GRAY8", sz, false), nullptr, gray, iters), 2 * n);
      if (on_gpu) {
        // The page-locked pool the GPU path proposes upstream.
        rep.row(what("GRAY8 system memory, frames in the proposed pool").c_str(), sz,
                time_harness_proposed(launch, "GRAY8", sz, lumas, iters), 2 * n);
        // GRAY8 has no CUDA-memory layout in GStreamer: NV12 only.
        for (const char *format : {"NV12"}) {
          if (opt.system_memory) break;
          CudaFrames cuda(ctx, format, sz, lumas);
          rep.row(what((std::string(format) + " CUDA memory").c_str()).c_str(), sz,
                  time_harness(launch, caps_string(format, sz, true), ctx, cuda.bufs, iters), 2 * n);
        }
      }
      const int reps = on_gpu || e.frames_divisor == 1 ? 5 : 1;
      rep.row(what("pipeline, GRAY8 system memory").c_str(), sz,
              time_pipeline(launch, caps_string("GRAY8", sz, false), nullptr, gray, iters, reps), 2 * n);
      if (on_gpu && !opt.system_memory) {
        CudaFrames cuda(ctx, "NV12", sz, lumas);
        rep.row(what("pipeline, NV12 CUDA memory").c_str(), sz,
                time_pipeline(launch, caps_string("NV12", sz, true), ctx, cuda.bufs, iters, reps), 2 * n);
      }
    }
    if (opt.only.empty() || opt.only == "histeq") {
      rep.row("identity: pipeline, GRAY8 system memory", sz,
              time_pipeline("identity", caps_string("GRAY8", sz, false), nullptr, gray, opt.frames, 5), 0);
      if (GstElementFactory *f = gst_element_factory_find("cvequalizehist")) {
        gst_object_unref(f);
        rep.row("cvequalizehist (GStreamer opencv plugin)", sz,
                time_harness("cvequalizehist", caps_string("GRAY8", sz, false), nullptr, gray,
                             std::max(5, opt.frames / 4)),
                2 * n);
      } else {
        std::printf("  cvequalizehist: not installed\n");
      }
    }
    for (GstBuffer *b : gray) gst_buffer_unref(b);
  }
}

// --pageable: one pipeline run of `frames` frames, from one of the sources
// below.
struct PageableRun {
  std::vector<double> intervals_us;  // between frames at the sink
  double cpu_us_per_frame = 0;
  size_t timed_frames = 0;  // the frames cpu_us_per_frame is over
  // The first rounds through a pool, before the timed frames: the element
  // stages a buffer's first frame and pins the buffer at its second.
  int warmup_frames = 0;
  double warmup_mean_us = 0, warmup_cpu_us_per_frame = 0;
};

double process_cpu_us() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto us = [](const timeval &t) { return double(t.tv_sec) * 1e6 + double(t.tv_usec); };
  return us(u.ru_utime) + us(u.ru_stime);
}

// What appsrc hands over: buffers cycled from a pool of system memory, the
// same with a reference kept by the source until its next frame (as a tee's
// other branch would: the element may not write the buffer, so it never
// filters in place), fresh memory every frame, or buffers of the pool the
// element proposes.
enum class Source { kCycled, kCycledShared, kFresh, kProposed };

struct PageableSource {
  Source kind = Source::kCycled;
  int pool_size = 0;
  std::string caps;
  GstBufferPool *pool = nullptr;
  gsize size = 0;
  int pushed = 0;
  int frames = 0;
  GstBuffer *held = nullptr;  // kCycledShared: the last frame pushed
  ~PageableSource() {
    if (held) gst_buffer_unref(held);
    if (!pool) return;
    gst_buffer_pool_set_active(pool, FALSE);
    gst_object_unref(pool);
  }

  // The pool the element proposes, asked for once caps are set (after the
  // first frame, which prerolls).
  void take_proposed_pool(GstAppSrc *src) {
    GstPad *pad = gst_element_get_static_pad(GST_ELEMENT(src), "src");
    GstCaps *c = gst_caps_from_string(caps.c_str());
    GstQuery *q = gst_query_new_allocation(c, TRUE);
    gst_caps_unref(c);
    const bool answered = gst_pad_peer_query(pad, q);
    gst_object_unref(pad);
    if (answered && gst_query_get_n_allocation_pools(q) > 0)
      gst_query_parse_nth_allocation_pool(q, 0, &pool, nullptr, nullptr, nullptr);
    gst_query_unref(q);
    if (!pool) throw std::runtime_error("the element proposed no pool");
    GstStructure *config = gst_buffer_pool_get_config(pool);
    GstCaps *pc = gst_caps_from_string(caps.c_str());
    gst_buffer_pool_config_set_params(config, pc, guint(size), 4, 4);
    gst_caps_unref(pc);
    if (!gst_buffer_pool_set_config(pool, config) || !gst_buffer_pool_set_active(pool, TRUE))
      throw std::runtime_error("the proposed pool refused 4 buffers");
  }
};

void pageable_need_data(GstAppSrc *src, guint, gpointer data) {
  auto *s = static_cast<PageableSource *>(data);
  if (s->held) {
    gst_buffer_unref(s->held);
    s->held = nullptr;
  }
  if (s->pushed == s->frames) {
    gst_app_src_end_of_stream(src);
    return;
  }
  if (s->kind == Source::kProposed && !s->pool && s->pushed > 0) s->take_proposed_pool(src);
  GstBuffer *b = nullptr;
  if (s->pool) {
    if (gst_buffer_pool_acquire_buffer(s->pool, &b, nullptr) != GST_FLOW_OK) {
      gst_app_src_end_of_stream(src);
      return;
    }
  } else {
    b = gst_buffer_new_allocate(nullptr, s->size, nullptr);
  }
  GST_BUFFER_PTS(b) = GstClockTime(s->pushed) * GST_SECOND / 30;
  GST_BUFFER_DURATION(b) = GST_SECOND / 30;
  ++s->pushed;
  if (s->kind == Source::kCycledShared) s->held = gst_buffer_ref(b);
  gst_app_src_push_buffer(src, b);
}

// Frames reaching the sink, and the process CPU time when the warm-up
// ends (the frame at `mark`).
struct Arrivals {
  std::vector<std::chrono::steady_clock::time_point> at;
  size_t mark = 0;
  double cpu_at_mark = 0;
};

void pageable_handoff(GstElement *, GstBuffer *, GstPad *, gpointer data) {
  auto *a = static_cast<Arrivals *>(data);
  a->at.push_back(std::chrono::steady_clock::now());
  if (a->at.size() == a->mark) a->cpu_at_mark = process_cpu_us();
}

PageableRun run_pageable_pipeline(const std::string &middle, const char *format, const Size &sz,
                                  GstCudaContext *ctx, Source kind, int pool_size, int frames) {
  // The source first: the pipeline, torn down before it, holds its buffers.
  PageableSource source;
  source.kind = kind;
  source.caps = caps_string(format, sz, false);
  GstVideoInfo info;
  gst_video_info_set_format(&info, gst_video_format_from_string(format), sz.width, sz.height);
  source.size = GST_VIDEO_INFO_SIZE(&info);
  // Two rounds through the pool before the timed frames.
  const bool cycled = kind == Source::kCycled || kind == Source::kCycledShared;
  const int warmup = kind == Source::kFresh ? 0 : 2 * (cycled ? pool_size : 4);
  source.frames = frames + warmup;
  if (cycled) {
    source.pool = gst_buffer_pool_new();
    GstStructure *config = gst_buffer_pool_get_config(source.pool);
    GstCaps *c = gst_caps_from_string(source.caps.c_str());
    gst_buffer_pool_config_set_params(config, c, guint(source.size), pool_size, pool_size);
    gst_caps_unref(c);
    if (!gst_buffer_pool_set_config(source.pool, config) ||
        !gst_buffer_pool_set_active(source.pool, TRUE))
      throw std::runtime_error("no pool of " + std::to_string(pool_size) + " buffers");
    // Written once, as a camera's buffers are before they come back.
    std::vector<GstBuffer *> all;
    for (int i = 0; i < pool_size; ++i) {
      GstBuffer *b = nullptr;
      if (gst_buffer_pool_acquire_buffer(source.pool, &b, nullptr) != GST_FLOW_OK)
        throw std::runtime_error("pool: no buffer");
      gst_buffer_memset(b, 0, guint8(40 + 5 * i), source.size);
      all.push_back(b);
    }
    for (GstBuffer *b : all) gst_buffer_unref(b);
  }
  Arrivals arrivals;
  arrivals.at.reserve(size_t(source.frames) + 1);

  AppsrcPipeline pipeline(source.caps, middle, ctx, " signal-handoffs=true");
  GstElement *src = pipeline.get("src");
  GstAppSrcCallbacks cb{};
  cb.need_data = pageable_need_data;
  gst_app_src_set_callbacks(GST_APP_SRC(src), &cb, &source, nullptr);
  g_object_set(src, "max-buffers", guint64(2), nullptr);
  gst_object_unref(src);
  GstElement *sink = pipeline.get("sink");
  g_signal_connect(sink, "handoff", G_CALLBACK(pageable_handoff), &arrivals);
  gst_object_unref(sink);

  pipeline.preroll();
  const size_t before = arrivals.at.size();
  arrivals.mark = before + size_t(warmup);
  const double cpu0 = process_cpu_us();
  pipeline.play_to_eos(600 * GST_SECOND);
  const double cpu1 = process_cpu_us();
  const std::vector<std::chrono::steady_clock::time_point> &at = arrivals.at;
  if (warmup == 0 || at.size() < arrivals.mark) arrivals.cpu_at_mark = cpu0;
  auto us = [](auto d) { return std::chrono::duration<double, std::micro>(d).count(); };

  PageableRun run;
  const size_t first = std::max<size_t>(arrivals.mark, 1);
  for (size_t i = first; i < at.size(); ++i) run.intervals_us.push_back(us(at[i] - at[i - 1]));
  const size_t timed = at.size() > arrivals.mark ? at.size() - arrivals.mark : 0;
  run.cpu_us_per_frame = timed ? (cpu1 - arrivals.cpu_at_mark) / double(timed) : 0;
  run.timed_frames = timed;
  if (warmup > 0 && arrivals.mark > before && at.size() >= arrivals.mark) {
    run.warmup_frames = warmup;
    run.warmup_mean_us =
        us(at[arrivals.mark - 1] - at[std::max<size_t>(before, 1) - 1]) / double(warmup);
    run.warmup_cpu_us_per_frame = (arrivals.cpu_at_mark - cpu0) / double(warmup);
  }
  if (run.intervals_us.empty()) throw std::runtime_error(middle + ": no frames timed");
  return run;
}

void run_pageable(const ElementOptions &opt, GstCudaContext *ctx, FILE *json) {
  struct Element {
    const char *name;
    const char *props;
    int frames_divisor;  // cudanlm on the CPU is slow: fewer frames
  };
  const bool on_gpu = opt.backend == "cuda";
  // identity: what the pipeline costs without filtering (its own rows,
  // once, with the GPU backend's run).
  const Element elements[] = {{"identity", nullptr, 1},
                              {"cudahisteq", "", 1},
                              {"cudaclahe", " clip-limit=2 tiles-x=8 tiles-y=8", 1},
                              {"cudanlm", " patch-size=7 search-size=21", on_gpu ? 4 : 100},
                              {"cudasharpen", " amount=1 radius=1", 1}};
  const struct {
    const char *what;
    Source kind;
    int pool_size;
  } sources[] = {{"4 buffers cycled", Source::kCycled, 4},
                 {"32 buffers cycled", Source::kCycled, 32},
                 {"4 cycled, shared", Source::kCycledShared, 4},
                 {"fresh memory", Source::kFresh, 0},
                 {"proposed pool", Source::kProposed, 0}};
  const std::vector<std::string> formats = split(opt.formats);
  for (const Size &sz : kSizes) {
    if (!opt.size.empty() && opt.size != sz.name) continue;
    for (const std::string &format : formats)
      for (const Element &e : elements) {
        const bool identity = e.props == nullptr;
        if (identity && !on_gpu) continue;
        if (!identity && !opt.only.empty() &&
            std::string(e.name).find(opt.only) == std::string::npos)
          continue;
        const int frames = std::max(40, opt.frames / e.frames_divisor);
        const std::string launch =
            identity ? std::string("identity")
                     : std::string(e.name) + " backend=" + opt.backend + e.props;
        // Each source's runs, pooled over the rounds.
        constexpr size_t kSources = sizeof(sources) / sizeof(sources[0]);
        PageableRun pooled[kSources];
        double cpu_us[kSources] = {};
        size_t timed_frames[kSources] = {};
        for (int round = 0; round < opt.rounds; ++round)
          for (size_t k = 0; k < kSources; ++k) {
            const auto &source = sources[k];
            // Only the element proposes a pool; the CPU backend's is its own.
            if (source.kind == Source::kProposed && (identity || !on_gpu)) continue;
            PageableRun run = run_pageable_pipeline(launch, format.c_str(), sz, ctx, source.kind,
                                                    source.pool_size, frames);
            const size_t n = run.timed_frames;
            cpu_us[k] += run.cpu_us_per_frame * double(n);
            timed_frames[k] += n;
            if (round == 0) {
              pooled[k] = run;
            } else {
              pooled[k].intervals_us.insert(pooled[k].intervals_us.end(),
                                            run.intervals_us.begin(), run.intervals_us.end());
            }
          }
        for (size_t k = 0; k < kSources; ++k) {
          const auto &source = sources[k];
          if (timed_frames[k] == 0) continue;
          PageableRun &run = pooled[k];
          // The first round's warm-up (printed as "first N"); the CPU time
          // over every round.
          run.cpu_us_per_frame = cpu_us[k] / double(timed_frames[k]);
          std::vector<double> &v = run.intervals_us;
          std::sort(v.begin(), v.end());
          auto at = [&](double q) { return v[std::min(v.size() - 1, size_t(q * v.size()))]; };
          const std::string what = std::string(e.name) + (identity ? "" : " " + opt.backend) +
                                   ", " + format + ", " + source.what;
          std::printf("  %-48s %-6s median %8.1f us  p90 %8.1f  p99 %8.1f  CPU %8.1f us/frame",
                      what.c_str(), sz.name, at(0.5), at(0.9), at(0.99), run.cpu_us_per_frame);
          if (opt.rounds > 1) std::printf("  (%d rounds)", opt.rounds);
          if (run.warmup_frames)
            std::printf("  (first %d%s: mean %.1f us, CPU %.1f us/frame)", run.warmup_frames,
                        opt.rounds > 1 ? " of round 1" : "", run.warmup_mean_us,
                        run.warmup_cpu_us_per_frame);
          std::printf("\n");
          if (json)
            std::fprintf(json,
                         "{\"bench\":\"element\",\"row\":\"%s\",\"size\":\"%s\",\"median_us\":%.3f,"
                         "\"p90_us\":%.3f,\"p99_us\":%.3f,\"cpu_us_per_frame\":%.3f,\"frames\":%zu,"
                         "\"warmup_frames\":%d,\"warmup_mean_us\":%.3f,\"warmup_cpu_us_per_frame\":%.3f}\n",
                         what.c_str(), sz.name, at(0.5), at(0.9), at(0.99), run.cpu_us_per_frame,
                         timed_frames[k], run.warmup_frames, run.warmup_mean_us,
                         run.warmup_cpu_us_per_frame);
        }
      }
  }
}

}  // namespace

int main(int argc, char **argv) {
  // The plugin of this build tree, unless the caller names another.
  g_setenv("GST_PLUGIN_PATH_1_0", CUDAFILTERS_BUILD_PLUGIN_DIR, FALSE);
  gst_init(&argc, &argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  ElementOptions opt;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (!std::strcmp(argv[i], "--backend")) opt.backend = next();
    else if (!std::strcmp(argv[i], "--frames")) opt.frames = std::atoi(next().c_str());
    else if (!std::strcmp(argv[i], "--json")) opt.json = next();
    else if (!std::strcmp(argv[i], "--dump-frames")) opt.dump_dir = next();
    else if (!std::strcmp(argv[i], "--only")) opt.only = next();
    else if (!std::strcmp(argv[i], "--chain")) opt.chain = true;
    else if (!std::strcmp(argv[i], "--cross-device")) opt.cross_device = true;
    else if (!std::strcmp(argv[i], "--system-memory")) opt.system_memory = true;
    else if (!std::strcmp(argv[i], "--pageable")) opt.pageable = true;
    else if (!std::strcmp(argv[i], "--formats")) opt.formats = next();
    else if (!std::strcmp(argv[i], "--size")) opt.size = next();
    else if (!std::strcmp(argv[i], "--rounds")) opt.rounds = std::max(1, std::atoi(next().c_str()));
  }
  FILE *json = opt.json.empty() ? nullptr : std::fopen(opt.json.c_str(), "w");
  const bool on_gpu = opt.backend == "cuda";

  GstCudaContext *ctx = nullptr;
  if (on_gpu) {
    if (!gst_cuda_load_library() || !(ctx = gst_cuda_context_new(0))) {
      std::fprintf(stderr, "no usable CUDA device; run with --backend cpu\n");
      return 1;
    }
    // Registers GStreamer's CUDA allocator, which the frames' pools need
    // before any element has done so.
    gst_cuda_memory_init_once();
  }
  if ((opt.chain || opt.cross_device) && !ctx) {
    std::fprintf(stderr, "--chain and --cross-device need the cuda backend\n");
    return 1;
  }
  describe_machine(json, opt.backend);
  Reporter rep("element", json);

  try {
    if (opt.chain)
      run_chains(rep, opt, ctx);
    else if (opt.cross_device)
      run_cross_device(rep, opt, ctx);
    else if (opt.pageable)
      run_pageable(opt, ctx, json);
    else
      run_rows(rep, opt, ctx);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (ctx) gst_object_unref(ctx);
  if (json) std::fclose(json);
  return 0;
}

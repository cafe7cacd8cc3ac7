// Many pipelines at once on one or more GPUs: aggregate frames per second of
// N concurrent 1080p streams, each an element of its own, in two pipelines:
//
//   cuda:   filesrc ! qtdemux ! h264parse ! nvh264dec ! <element> ! fakesink
//           (frames decoded by NVDEC into CUDA memory; "decode" is the
//           decoder alone, the ceiling NVDEC sets; "identity" the decoder
//           and GStreamer's identity, what a stream costs unfiltered);
//   system: appsrc ! <element> ! fakesink, NV12 frames in (pageable) system
//           memory, uploaded and downloaded by the element.
//
//   multistream_bench --clip FILE [--streams 1,4,16,32] [--memory cuda,system]
//                     [--only decode,identity,histeq,clahe,nlm,sharpen,lowlight]
//                     [--devices 0[,1..]] [--contexts shared|own] [--loops L]
//                     [--frames N] [--cuda-wait blocking,keep] [--queue]
//                     [--json FILE]
//
// --cuda-wait runs every row once per value of the elements' cuda-wait
// property (default: blocking, the elements' default): keep leaves the
// shared context's scheduling as GStreamer made it; unset leaves the
// property alone (a plugin that has none). --queue puts a queue before the
// element, as a pipeline with a thread per stage has.
//
// bench/make_clip.sh makes the clip (1080p H.264, 300 frames); each decoded
// stream plays it L times (default 4) without a gap, and each system-memory
// stream is N frames long (default 1200). Stream i runs on device
// devices[i % count] (nvh264dec, nvh264device1dec, ... and the element's
// cuda-device-id). With --contexts shared (the default) the pipelines of a
// device share one GstCudaContext, as an application that hands its context
// to every pipeline does; with own, each pipeline makes its own, as separate
// gst-launch processes do.
//
// Each row also gives the time from a buffer entering the element to its
// leaving it (p50 and p99 over every buffer of every stream, warm-up left
// out): with GStreamer 1.22 the element pushes a frame in CUDA memory once
// its GPU work is done, so that time includes it.
//
// The rate counts the frames that reach every fakesink while all N
// pipelines are running: from the moment the last one has passed its
// warm-up frames to the moment the first one has finished. Beside it: the
// CPU the process used (cores), and the ceilings measured here on device 0:
// the element's GPU time per NV12 frame (its engine, frames back to back)
// and, for system memory, the copy engines' rate for one upload and one
// download per frame.
#include "bench_util.h"

#include <gst/app/gstappsrc.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/video/video.h>
#include <cudafilters/clahe_gpu.h>
#include <cudafilters/histeq_gpu.h>
#include <cudafilters/nlm_gpu.h>
#include <cudafilters/sharpen_gpu.h>
#include <dirent.h>
#include <sys/resource.h>

#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>
#include <cctype>
#include <cstring>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace bench;

namespace {

constexpr Size k1080p{"1080p", 1920, 1080};
constexpr int kRotation = 4;

struct Element {
  const char *name;
  const char *factory;  // nullptr: the decoder alone
  std::function<std::unique_ptr<cudafilters::GpuPlaneFilter>()> engine;
  // One of ours, with the backend, device and cuda-wait properties.
  bool ours() const { return factory != nullptr && std::strcmp(factory, "identity") != 0; }
};

// Each engine at its defaults, which are its element's (NlmGpu: automatic
// strength, as cudanlm).
const Element kElements[] = {
    {"decode", nullptr, nullptr},
    // The decoder and an element that costs nothing: what a stream costs
    // without filtering, threads included (with --queue, the queue's too).
    {"identity", "identity", nullptr},
    {"histeq", "cudahisteq", [] { return std::make_unique<cudafilters::HistEqGpu>(); }},
    {"clahe", "cudaclahe", [] { return std::make_unique<cudafilters::ClaheGpu>(); }},
    {"nlm", "cudanlm", [] { return std::make_unique<cudafilters::NlmGpu>(); }},
    {"sharpen", "cudasharpen", [] { return std::make_unique<cudafilters::SharpenGpu>(); }},
    {"lowlight", "cudalowlight", nullptr},
};

struct MultiOptions {
  std::string clip;
  std::vector<int> streams = {1, 4, 16, 32};
  std::vector<std::string> memory = {"cuda", "system"};
  std::vector<std::string> only;
  std::vector<int> devices = {0};
  bool shared_contexts = true;
  int frames = 1200;  // per system-memory stream
  int loops = 4;      // passes over the clip per decoded stream
  std::vector<std::string> cuda_waits = {"blocking"};
  bool queue = false;
  FILE *json = nullptr;
};

std::vector<int> split_ints(const std::string &list) {
  std::vector<int> out;
  for (const std::string &s : split(list)) out.push_back(std::atoi(s.c_str()));
  return out;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// CPU seconds each thread of this process has run, by thread id, with its
// name (/proc/self/task/*/schedstat, nanoseconds; stat's ticks where
// schedstat is absent).
struct ThreadTime {
  std::string name;
  double seconds = 0;
};
std::map<long, ThreadTime> thread_times() {
  std::map<long, ThreadTime> out;
  DIR *dir = opendir("/proc/self/task");
  if (!dir) return out;
  static const double tick = 1.0 / double(sysconf(_SC_CLK_TCK));
  while (dirent *d = readdir(dir)) {
    if (d->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + d->d_name;
    ThreadTime t;
    std::ifstream comm(base + "/comm");
    std::getline(comm, t.name);
    unsigned long long ns = 0;
    if (std::ifstream(base + "/schedstat") >> ns) {
      t.seconds = double(ns) * 1e-9;
    } else {
      std::ifstream stat(base + "/stat");
      std::string line;
      std::getline(stat, line);
      const size_t close = line.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream rest(line.substr(close + 2));
      std::string field;
      unsigned long long utime = 0, stime = 0;
      for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14) utime = std::stoull(field);
        if (i == 15) stime = std::stoull(field);
      }
      t.seconds = double(utime + stime) * tick;
    }
    out[std::atol(d->d_name)] = t;
  }
  closedir(dir);
  return out;
}

// CPU seconds by thread name between two readings (threads started in
// between count from zero), largest first; digits at the end of a name are
// dropped, so that numbered threads of one kind form one group.
std::vector<std::pair<std::string, double>> cpu_by_thread_name(
    const std::map<long, ThreadTime> &before, const std::map<long, ThreadTime> &after) {
  std::map<std::string, double> groups;
  for (const auto &[tid, t] : after) {
    const auto was = before.find(tid);
    const double used = t.seconds - (was != before.end() ? was->second.seconds : 0.0);
    std::string name = t.name;
    while (!name.empty() && std::isdigit(static_cast<unsigned char>(name.back()))) name.pop_back();
    if (name.rfind("cuda0", 0) == 0) name = "cuda (driver)";
    groups[name] += used;
  }
  std::vector<std::pair<std::string, double>> out(groups.begin(), groups.end());
  std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
  return out;
}

std::string decoder_for(int device) {
  return device == 0 ? "nvh264dec" : "nvh264device" + std::to_string(device) + "dec";
}

std::string nv12_caps(bool cuda) {
  return std::string("video/x-raw") + (cuda ? "(memory:CUDAMemory)" : "") +
         ",format=NV12,width=1920,height=1080,framerate=30/1";
}

// One pipeline, and when each frame reached its fakesink.
class Pipeline {
 public:
  Pipeline(const std::string &launch, GstCudaContext *shared) : launch_(launch) {
    GError *err = nullptr;
    pipeline_ = gst_parse_launch(launch.c_str(), &err);
    if (!pipeline_ || err) throw std::runtime_error(launch + ": " + (err ? err->message : ""));
    if (shared) {
      GstContext *c = gst_context_new_cuda_context(shared);
      gst_element_set_context(pipeline_, c);
      gst_context_unref(c);
    }
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline_), "sink");
    GstPad *pad = gst_element_get_static_pad(sink, "sink");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, &Pipeline::on_buffer, this, nullptr);
    gst_object_unref(pad);
    gst_object_unref(sink);
    if (GstElement *filter = gst_bin_get_by_name(GST_BIN(pipeline_), "filter")) {
      GstPad *in = gst_element_get_static_pad(filter, "sink");
      GstPad *out = gst_element_get_static_pad(filter, "src");
      gst_pad_add_probe(in, GST_PAD_PROBE_TYPE_BUFFER, &Pipeline::on_filter_in, this, nullptr);
      gst_pad_add_probe(out, GST_PAD_PROBE_TYPE_BUFFER, &Pipeline::on_filter_out, this, nullptr);
      gst_object_unref(in);
      gst_object_unref(out);
      gst_object_unref(filter);
    }
    stamps_.reserve(16384);
    latencies_.reserve(16384);
  }
  ~Pipeline() {
    if (watcher_.joinable()) watcher_.join();
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    gst_object_unref(pipeline_);
  }
  Pipeline(const Pipeline &) = delete;
  Pipeline &operator=(const Pipeline &) = delete;

  GstElement *element() const { return pipeline_; }
  // Prerolls (the element has its first frame), set to play the stream
  // `loops` times without a gap: segment seeks, as a looping player does.
  // A source that cannot seek plays once.
  void prepare(int loops) {
    loops_left_ = loops;
    gst_element_set_state(pipeline_, GST_STATE_PAUSED);
    if (gst_element_get_state(pipeline_, nullptr, nullptr, 60 * GST_SECOND) == GST_STATE_CHANGE_FAILURE)
      throw std::runtime_error(launch_ + ": did not preroll");
    if (loops > 1 && !seek(GstSeekFlags(GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_SEGMENT)))
      throw std::runtime_error(launch_ + ": cannot loop");
  }
  // Plays, watching the bus from a thread of its own.
  void play() {
    if (gst_element_set_state(pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
      throw std::runtime_error(launch_ + ": cannot play");
    watcher_ = std::thread([this] { watch(); });
  }
  // Waits for EOS; the stamps are complete afterwards.
  void finish() {
    watcher_.join();
    if (!problem_.empty()) throw std::runtime_error(launch_ + ": " + problem_);
  }
  const std::vector<double> &stamps() const { return stamps_; }
  // Seconds from a buffer entering the filter to its leaving it, in order.
  const std::vector<double> &latencies() const { return latencies_; }

 private:
  bool seek(GstSeekFlags flags) {
    return gst_element_seek(pipeline_, 1.0, GST_FORMAT_TIME, flags, GST_SEEK_TYPE_SET, 0,
                            GST_SEEK_TYPE_NONE, GST_CLOCK_TIME_NONE);
  }
  // Until EOS or an error: at the end of each pass, the next one (the last
  // without the segment flag, so that it ends in EOS).
  void watch() {
    GstBus *bus = gst_element_get_bus(pipeline_);
    const auto types = GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_SEGMENT_DONE);
    for (;;) {
      GstMessage *m = gst_bus_timed_pop_filtered(bus, 600 * GST_SECOND, types);
      if (!m) {
        problem_ = "no EOS within 10 minutes";
        break;
      }
      const GstMessageType type = GST_MESSAGE_TYPE(m);
      if (type == GST_MESSAGE_ERROR) {
        GError *e = nullptr;
        gst_message_parse_error(m, &e, nullptr);
        problem_ = e->message;
        g_error_free(e);
      } else if (type == GST_MESSAGE_SEGMENT_DONE) {
        --loops_left_;
        if (!seek(loops_left_ > 1 ? GST_SEEK_FLAG_SEGMENT : GST_SEEK_FLAG_NONE))
          problem_ = "cannot seek to loop";
      }
      gst_message_unref(m);
      if (type != GST_MESSAGE_SEGMENT_DONE || !problem_.empty()) break;
    }
    gst_bus_set_flushing(bus, TRUE);
    gst_object_unref(bus);
  }
  static GstPadProbeReturn on_buffer(GstPad *, GstPadProbeInfo *, gpointer self) {
    static_cast<Pipeline *>(self)->stamps_.push_back(now_s());
    return GST_PAD_PROBE_OK;
  }
  // The filter's streaming thread enters a buffer and pushes it on before
  // it takes the next (the same thread): one entry time at a time.
  static GstPadProbeReturn on_filter_in(GstPad *, GstPadProbeInfo *, gpointer self) {
    static_cast<Pipeline *>(self)->entered_ = now_s();
    return GST_PAD_PROBE_OK;
  }
  static GstPadProbeReturn on_filter_out(GstPad *, GstPadProbeInfo *, gpointer self) {
    auto *p = static_cast<Pipeline *>(self);
    if (p->entered_ > 0) p->latencies_.push_back(now_s() - p->entered_);
    return GST_PAD_PROBE_OK;
  }
  std::string launch_;
  GstElement *pipeline_ = nullptr;
  std::vector<double> stamps_;  // written by the streaming thread only
  std::vector<double> latencies_;  // written by the filter's streaming thread
  double entered_ = 0;
  std::thread watcher_;
  int loops_left_ = 1;
  std::string problem_;
};

struct Throughput {
  double fps = 0, slowest_fps = 0, window_s = 0, cpu_cores = 0;
  bool overlapped = true;
  // CPU time per frame over the whole run (every frame of every stream),
  // in all and by thread name.
  double cpu_us_per_frame = 0;
  std::vector<std::pair<std::string, double>> cpu_us_by_thread;
  // Buffer in to buffer out through the filter, microseconds.
  double latency_p50_us = 0, latency_p99_us = 0;
};

// Frames per second while all pipelines ran at once (see the top comment).
Throughput measure(const std::vector<std::unique_ptr<Pipeline>> &pipes, double cpu_cores) {
  Throughput t;
  t.cpu_cores = cpu_cores;
  double start = 0, end = 1e300;
  for (const auto &p : pipes) {
    const auto &s = p->stamps();
    if (s.size() < 10) throw std::runtime_error("a pipeline gave fewer than 10 frames");
    const size_t warm = std::min<size_t>(30, s.size() / 5);
    start = std::max(start, s[warm]);
    end = std::min(end, s.back());
  }
  if (end <= start) {
    // The pipelines did not all run at once: the whole span instead.
    t.overlapped = false;
    start = 1e300;
    end = 0;
    for (const auto &p : pipes) {
      start = std::min(start, p->stamps().front());
      end = std::max(end, p->stamps().back());
    }
  }
  size_t frames = 0;
  t.slowest_fps = 1e300;
  for (const auto &p : pipes) {
    size_t mine = 0;
    for (double s : p->stamps()) mine += s > start && s <= end;
    frames += mine;
    t.slowest_fps = std::min(t.slowest_fps, mine / (end - start));
  }
  t.window_s = end - start;
  t.fps = frames / t.window_s;
  return t;
}

// NV12 1080p frames in pageable system memory, chroma mid-grey.
std::vector<GstBuffer *> system_frames() {
  std::vector<GstBuffer *> bufs;
  const size_t luma = size_t(k1080p.width) * k1080p.height;
  for (int k = 0; k < kRotation; ++k) {
    const std::vector<uint8_t> y = make_frame(k1080p.width, k1080p.height, 100 + k);
    GstBuffer *b = gst_buffer_new_allocate(nullptr, luma * 3 / 2, nullptr);
    gst_buffer_fill(b, 0, y.data(), luma);
    gst_buffer_memset(b, luma, 128, luma / 2);
    bufs.push_back(b);
  }
  return bufs;
}

std::string launch_for(const std::string &memory, const Element &e, int device,
                       const std::string &clip, const std::string &cuda_wait, bool queue) {
  std::string filter = queue ? "queue ! " : "";
  if (e.ours())
    filter += std::string(e.factory) + " name=filter backend=cuda cuda-device-id=" +
              std::to_string(device) + (cuda_wait != "unset" ? " cuda-wait=" + cuda_wait : "") +
              " ! ";
  else if (e.factory)
    filter += std::string(e.factory) + " name=filter ! ";
  if (memory == "cuda")
    return "filesrc location=\"" + clip + "\" ! qtdemux ! h264parse ! " + decoder_for(device) +
           " ! video/x-raw(memory:CUDAMemory) ! " + filter + "fakesink name=sink sync=false";
  return "appsrc name=src format=time caps=\"" + nv12_caps(false) + "\" ! " + filter +
         "fakesink name=sink sync=false";
}

// Queues `frames` frames (metadata copies of the rotation) and EOS.
void feed(Pipeline &p, const std::vector<GstBuffer *> &frames_in, int frames) {
  GstElement *src = gst_bin_get_by_name(GST_BIN(p.element()), "src");
  g_object_set(src, "max-bytes", guint64(0), "block", FALSE, nullptr);
  for (int i = 0; i < frames; ++i) {
    GstBuffer *b = gst_buffer_copy(frames_in[i % frames_in.size()]);
    GST_BUFFER_PTS(b) = GstClockTime(i) * GST_SECOND / 30;
    GST_BUFFER_DURATION(b) = GST_SECOND / 30;
    gst_app_src_push_buffer(GST_APP_SRC(src), b);
  }
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  gst_object_unref(src);
}

Throughput run_streams(const MultiOptions &opt, const std::string &memory, const Element &e,
                       int n, const std::vector<GstCudaContext *> &contexts,
                       const std::vector<GstBuffer *> &frames_in, const std::string &cuda_wait) {
  std::vector<std::unique_ptr<Pipeline>> pipes;
  for (int i = 0; i < n; ++i) {
    const size_t d = size_t(i) % opt.devices.size();
    pipes.push_back(std::make_unique<Pipeline>(
        launch_for(memory, e, opt.devices[d], opt.clip, cuda_wait, opt.queue),
        opt.shared_contexts ? contexts[d] : nullptr));
    if (memory == "system") feed(*pipes.back(), frames_in, opt.frames);
  }
  // All start together, once each has its decoder and engine set up.
  for (auto &p : pipes) p->prepare(memory == "cuda" ? opt.loops : 1);
  const auto threads0 = thread_times();
  const double cpu0 = cpu_seconds(), t0 = now_s();
  for (auto &p : pipes) p->play();
  for (auto &p : pipes) p->finish();
  const double cpu = cpu_seconds() - cpu0;
  const auto by_thread = cpu_by_thread_name(threads0, thread_times());
  Throughput t = measure(pipes, cpu / (now_s() - t0));
  size_t frames = 0;
  for (const auto &p : pipes) frames += p->stamps().size();
  if (frames > 0) {
    t.cpu_us_per_frame = 1e6 * cpu / double(frames);
    for (const auto &[name, seconds] : by_thread)
      t.cpu_us_by_thread.emplace_back(name, 1e6 * seconds / double(frames));
  }
  std::vector<double> lat;
  for (const auto &p : pipes) {
    const auto &l = p->latencies();
    lat.insert(lat.end(), l.begin() + std::min<size_t>(30, l.size() / 5), l.end());
  }
  if (!lat.empty()) {
    std::sort(lat.begin(), lat.end());
    t.latency_p50_us = 1e6 * lat[lat.size() / 2];
    t.latency_p99_us = 1e6 * lat[std::min(lat.size() - 1, lat.size() * 99 / 100)];
  }
  return t;
}

// Copy engines: one NV12 1080p upload and one download per frame, both
// directions at once, between page-locked host memory and the device.
double copy_ceiling_fps() {
  const size_t bytes = size_t(k1080p.width) * k1080p.height * 3 / 2;
  const int frames = 64;
  cudafilters::DeviceArray<uint8_t> up(bytes * frames), down(bytes * frames);
  cudafilters::PinnedBuffer host_up, host_down;
  host_up.reserve(bytes * frames);
  host_down.reserve(bytes * frames);
  cudafilters::Stream s_up, s_down;
  auto copy_all = [&] {
    for (int i = 0; i < frames; ++i) {
      CUDAFILTERS_CHECK(cudaMemcpyAsync(up.get() + i * bytes, host_up.data() + i * bytes, bytes,
                                        cudaMemcpyHostToDevice, s_up.get()));
      CUDAFILTERS_CHECK(cudaMemcpyAsync(host_down.data() + i * bytes, down.get() + i * bytes, bytes,
                                        cudaMemcpyDeviceToHost, s_down.get()));
    }
    s_up.synchronize();
    s_down.synchronize();
  };
  const Stats st = time_host(5, [&](int) { copy_all(); }, 1);
  return frames / (st.median_us * 1e-6);
}

struct Ceiling {
  double gpu_us = 0;  // element's GPU time per frame; 0 for the decoder alone
};

Ceiling ceiling_for(const Element &e) {
  Ceiling c;
  if (!e.engine) return c;
  auto engine = e.engine();
  c.gpu_us = element_gpu_time(*engine, k1080p, 20).median_us;
  return c;
}

void describe(const MultiOptions &opt) {
  std::printf("machine: CPU %s x %u, GStreamer %s, devices:", cpu_model().c_str(),
              std::thread::hardware_concurrency(), gst_version_string());
  for (int d : opt.devices) {
    cudaDeviceProp prop{};
    CUDAFILTERS_CHECK(cudaGetDeviceProperties(&prop, d));
    std::printf(" %d=%s", d, prop.name);
  }
  std::printf("\nclip: %s; contexts: %s\n", opt.clip.c_str(), opt.shared_contexts ? "shared" : "own");
}

bool wanted(const MultiOptions &opt, const Element &e) {
  return opt.only.empty() || std::find(opt.only.begin(), opt.only.end(), e.name) != opt.only.end();
}

void run_all(const MultiOptions &opt) {
  describe(opt);
  std::vector<GstCudaContext *> contexts;
  for (int d : opt.devices) {
    GstCudaContext *ctx = gst_cuda_context_new(d);
    if (!ctx) throw std::runtime_error("cannot open CUDA device " + std::to_string(d));
    contexts.push_back(ctx);
  }
  const double copy = copy_ceiling_fps();
  std::printf("copy engines, one upload and one download of NV12 1080p per frame (page-locked): "
              "%.0f fps\n", copy);
  if (opt.json)
    std::fprintf(opt.json, "{\"bench\":\"multistream\",\"copy_fps\":%.1f,\"cpus\":%u,"
                 "\"gstreamer\":\"%s\"}\n", copy, std::thread::hardware_concurrency(),
                 gst_version_string());
  const std::vector<GstBuffer *> frames_in = system_frames();
  for (const Element &e : kElements) {
    if (!wanted(opt, e)) continue;
    const Ceiling c = ceiling_for(e);
    if (c.gpu_us > 0)
      std::printf("%s: GPU time %.1f us per NV12 1080p frame, ceiling %.0f fps per GPU\n", e.name,
                  c.gpu_us, 1e6 / c.gpu_us);
    for (const std::string &memory : opt.memory) {
      if (memory == "system" && !e.ours()) continue;
      for (int n : opt.streams)
        for (const std::string &wait : opt.cuda_waits) {
        if (!e.ours() && wait != opt.cuda_waits.front()) continue;  // no element of ours, no wait
        const Throughput t = run_streams(opt, memory, e, n, contexts, frames_in, wait);
        std::printf("  %-6s %-8s N=%-3d GPUs=%zu %-8s %8.1f fps  (%6.1f per stream, slowest %6.1f)"
                    "  CPU %5.2f cores  window %5.2f s%s\n",
                    memory.c_str(), e.name, n, opt.devices.size(), e.ours() ? wait.c_str() : "-",
                    t.fps, t.fps / n, t.slowest_fps, t.cpu_cores, t.window_s,
                    t.overlapped ? "" : "  (pipelines did not overlap)");
        std::printf("         CPU %.1f us per frame; by thread:", t.cpu_us_per_frame);
        for (const auto &[name, us] : t.cpu_us_by_thread)
          if (us >= 0.5) std::printf("  %s %.1f", name.c_str(), us);
        if (t.latency_p50_us > 0)
          std::printf("\n         in to out: p50 %.0f us, p99 %.0f us", t.latency_p50_us,
                      t.latency_p99_us);
        std::printf("\n");
        if (opt.json)
          std::fprintf(opt.json,
                       "{\"bench\":\"multistream\",\"memory\":\"%s\",\"element\":\"%s\",\"streams\":%d,"
                       "\"gpus\":%zu,\"contexts\":\"%s\",\"cuda_wait\":\"%s\",\"queue\":%s,"
                       "\"fps\":%.1f,\"slowest_fps\":%.2f,"
                       "\"cpu_cores\":%.2f,\"cpu_us_per_frame\":%.2f,\"window_s\":%.3f,\"overlapped\":%s,"
                       "\"gpu_us\":%.2f,\"latency_p50_us\":%.1f,\"latency_p99_us\":%.1f}\n",
                       memory.c_str(), e.name, n, opt.devices.size(),
                       opt.shared_contexts ? "shared" : "own", e.ours() ? wait.c_str() : "",
                       opt.queue ? "true" : "false", t.fps, t.slowest_fps, t.cpu_cores,
                       t.cpu_us_per_frame, t.window_s, t.overlapped ? "true" : "false", c.gpu_us,
                       t.latency_p50_us, t.latency_p99_us);
      }
    }
  }
  for (GstBuffer *b : frames_in) gst_buffer_unref(b);
  for (GstCudaContext *ctx : contexts) gst_object_unref(ctx);
}

}  // namespace

int main(int argc, char **argv) {
  gst_init(&argc, &argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  MultiOptions opt;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (!std::strcmp(argv[i], "--clip")) opt.clip = next();
    else if (!std::strcmp(argv[i], "--streams")) opt.streams = split_ints(next());
    else if (!std::strcmp(argv[i], "--memory")) opt.memory = split(next());
    else if (!std::strcmp(argv[i], "--only")) opt.only = split(next());
    else if (!std::strcmp(argv[i], "--devices")) opt.devices = split_ints(next());
    else if (!std::strcmp(argv[i], "--contexts")) opt.shared_contexts = next() != "own";
    else if (!std::strcmp(argv[i], "--frames")) opt.frames = std::atoi(next().c_str());
    else if (!std::strcmp(argv[i], "--loops")) opt.loops = std::max(1, std::atoi(next().c_str()));
    else if (!std::strcmp(argv[i], "--cuda-wait")) opt.cuda_waits = split(next());
    else if (!std::strcmp(argv[i], "--queue")) opt.queue = true;
    else if (!std::strcmp(argv[i], "--json")) opt.json = std::fopen(next().c_str(), "w");
  }
  const bool needs_clip =
      std::find(opt.memory.begin(), opt.memory.end(), "cuda") != opt.memory.end();
  if (needs_clip && !g_file_test(opt.clip.c_str(), G_FILE_TEST_EXISTS)) {
    std::fprintf(stderr, "--clip FILE (1080p H.264 in MP4, from bench/make_clip.sh) is needed\n");
    return 2;
  }
  if (!gst_cuda_load_library()) {
    std::fprintf(stderr, "no usable CUDA device\n");
    return 1;
  }
  try {
    run_all(opt);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  if (opt.json) std::fclose(opt.json);
  return 0;
}

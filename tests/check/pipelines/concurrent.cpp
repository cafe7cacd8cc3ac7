/* Many instances and pipelines at once. Built twice from this file:
 *   concurrent      (cpu suite) every element in eight threads at once,
 *                   each its own instance, and eight pipelines filtering
 *                   at once on the CPU path's shared thread pool;
 *   concurrent-gpu  (gpu suite) the same instances on the CUDA backend, and
 *                   sixteen pipelines on one GPU at once with another
 *                   process loading it: the cooperative single-pass kernel
 *                   of cudahisteq (all its blocks resident at once, one
 *                   grid barrier) must neither stall nor deadlock when
 *                   other kernels hold the SMs, and every frame must come
 *                   out as it does when the pipeline runs alone. Exits 77
 *                   (skipped) where no GPU is usable. */
#include "elements.h"
#include "thread_pool.h"

#include <dirent.h>

#include <thread>

#if TEST_GPU && defined (HAVE_GST_CUDA)
#include <gio/gio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>

#include <memory>
#endif

using namespace test;

/* Instances in parallel threads, each with its own harness, give exactly
 * what one instance gives for the same frames. On the GPU half the threads'
 * elements share one CUDA context and the others make their own. */
GST_START_TEST (test_parallel_instances_match_one)
{
  /* Under the memory checkers four threads and smaller frames. */
  const int kThreads = quick ()? 4 : 8, kFrames = quick ()? 3 : 6;
  const int w = quick ()? 64 : 160, h = quick ()? 48 : 120;
  std::mt19937 rng (27);
  for (const ElementCase & e : kElements) {
    std::vector < PlanarFrame > inputs;
    for (int i = 0; i < kFrames; ++i)
      inputs.push_back (frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
              noisy_step_image (rng, w, h, 8.0 + i)));
    const std::string launch = launch_of (e);

    auto run_all = [&](std::vector < Image > &lumas, bool & ok,
        Context context) {
      ok = true;
      GstHarness *hh = new_harness (launch, context);
      gst_harness_set_src_caps_str (hh, video_caps (GST_VIDEO_FORMAT_NV12, w,
              h).c_str ());
      for (const PlanarFrame & in : inputs) {
        GstBuffer *out = gst_harness_push_and_pull (hh, buffer_from_frame (in));
        if (!out) {
          ok = false;
          break;
        }
        lumas.push_back (frame_from_buffer (out, in.info).planes[0]);
        gst_buffer_unref (out);
      }
      gst_harness_teardown (hh);
    };

    std::vector < Image > alone;
    bool alone_ok = false;
    run_all (alone, alone_ok, Context::kShared);
    fail_unless (alone_ok);

    std::vector < std::vector < Image >> results (kThreads);
    std::vector < char >oks (kThreads, 0);
    std::vector < std::thread > threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back ([&, t] {
            bool ok = false;
            run_all (results[t], ok, t % 2 ? Context::kShared : Context::kOwn);
            oks[t] = ok;
          });
    for (auto & th : threads)
      th.join ();
    for (int t = 0; t < kThreads; ++t) {
      fail_unless (oks[t], "%s: thread %d got no output", e.factory, t);
      fail_unless_equals_int (results[t].size (), alone.size ());
      for (size_t i = 0; i < alone.size (); ++i)
        assert_images_equal (results[t][i], alone[i], e.factory);
    }
  }
}
GST_END_TEST;

#if !TEST_GPU
namespace {

int
thread_count ()
{
  int n = 0;
  if (DIR * d = opendir ("/proc/self/task")) {
    while (struct dirent * e = readdir (d))
      n += e->d_name[0] != '.';
    closedir (d);
  }
  return n;
}

struct Stream {
  std::string launch;
  int width, height, frames;
};

/* One harness through all of a stream's frames. */
std::vector<Image>
run_stream (const Stream & s, const std::vector<Image> & input)
{
  GstHarness *h = harness_for (s.launch.c_str (), s.width, s.height);
  std::vector<Image> out;
  for (const Image & img : input) {
    GstBuffer *buf = gst_harness_push_and_pull (h, buffer_from_image (img));
    if (!buf)
      break;
    out.push_back (image_from_buffer (buf, s.width, s.height));
    gst_buffer_unref (buf);
  }
  gst_harness_teardown (h);
  return out;
}

}  // namespace

/* Eight pipelines at once on the CPU path, as eight streams in one process
 * run them: the outputs equal those of each pipeline run alone, and the
 * process gains no more threads than one shared pool. */
GST_START_TEST (test_eight_pipelines_at_once)
{
  Stream streams[8] = {
    {"cudahisteq backend=cpu", 1280, 720, 12},
    {"cudahisteq backend=cpu temporal-smoothing=0.8", 1920, 1080, 12},
    {"cudaclahe backend=cpu", 1280, 720, 12},
    {"cudaclahe backend=cpu tiles-x=4 tiles-y=3 clip-limit=3", 1920, 1080, 8},
    {"cudanlm backend=cpu patch-size=5 search-size=11", 320, 240, 4},
    {"cudanlm backend=cpu patch-weighting=gaussian search-size=9", 352, 288, 4},
    {"cudahisteq backend=cpu ! cudaclahe backend=cpu", 640, 480, 12},
    {"cudanlm backend=cpu patch-size=3 search-size=7 ! cudahisteq backend=cpu",
          640, 360, 4},
  };
  if (quick ())
    for (Stream & s : streams) {
      s.width /= 4;
      s.height /= 4;
      s.frames = 2;
    }
  std::vector<std::vector<Image>> inputs, alone;
  std::mt19937 rng (8);
  for (const Stream & s : streams) {
    std::vector<Image> frames;
    for (int i = 0; i < s.frames; ++i)
      frames.push_back (i % 2 ? natural_image (s.width, s.height) :
          noisy_step_image (rng, s.width, s.height, 10.0 + i));
    inputs.push_back (frames);
    alone.push_back (run_stream (s, frames));
  }

  const int threads_before = thread_count ();
  std::vector<std::vector<Image>> together (8);
  std::vector<std::thread> pipelines;
  for (int i = 0; i < 8; ++i)
    pipelines.emplace_back ([&, i] {
          together[i] = run_stream (streams[i], inputs[i]);
        });
  for (auto & t : pipelines)
    t.join ();
  const int threads_after = thread_count ();

  for (int i = 0; i < 8; ++i) {
    fail_unless_equals_int (together[i].size (), alone[i].size ());
    fail_unless_equals_int (together[i].size (), streams[i].frames);
    for (size_t f = 0; f < alone[i].size (); ++f)
      assert_images_equal (together[i][f], alone[i][f], streams[i].launch.c_str ());
  }
  /* The pool started with the single runs; eight more would be 8 x nproc. */
  fail_unless (threads_after <= threads_before + 2,
      "%d threads after eight pipelines, %d before (pool of %d)",
      threads_after, threads_before, cudafilters::parallel_threads ());
}
GST_END_TEST;
#endif

#if TEST_GPU && defined (HAVE_GST_CUDA)
/* Sixteen pipelines: cudahisteq alone in system memory, chained in CUDA
 * memory (no host waits from GStreamer 1.24 on), and beside the long
 * kernels of cudanlm and cudaclahe, which compete for the SMs in the same
 * CUDA context. */
static const char *kChains[] = {
  "cudahisteq backend=cuda",
  "cudahisteq backend=cuda",
  "cudahisteq backend=cuda",
  "cudahisteq backend=cuda",
  "cudahisteq backend=cuda",
  "cudahisteq backend=cuda",
  "cudaupload ! cudahisteq backend=cuda ! cudahisteq backend=cuda ! cudadownload",
  "cudaupload ! cudahisteq backend=cuda ! cudahisteq backend=cuda ! cudadownload",
  "cudaupload ! cudahisteq backend=cuda ! cudahisteq backend=cuda ! cudadownload",
  "cudaupload ! cudahisteq backend=cuda ! cudahisteq backend=cuda ! cudadownload",
  "cudanlm auto-strength=false backend=cuda strength=12 patch-size=7 search-size=21 ! cudahisteq backend=cuda",
  "cudanlm auto-strength=false backend=cuda strength=12 patch-size=7 search-size=21 ! cudahisteq backend=cuda",
  "cudanlm auto-strength=false backend=cuda strength=12 patch-size=7 search-size=21 ! cudahisteq backend=cuda",
  "cudaupload ! cudaclahe backend=cuda ! cudahisteq backend=cuda ! cudadownload",
  "cudaupload ! cudaclahe backend=cuda ! cudahisteq backend=cuda ! cudadownload",
  "cudaupload ! cudaclahe backend=cuda ! cudahisteq backend=cuda ! cudadownload",
};

/* appsrc ! @chain ! appsink with @frames queued, in @ctx, playing. */
class RunningPipeline
{
public:
  RunningPipeline (const std::string & chain,
      const std::vector<PlanarFrame> & frames, GstCudaContext * ctx)
  : launch_ ("appsrc name=src format=time caps=\"" +
      video_caps (GST_VIDEO_INFO_FORMAT (&frames[0].info),
          GST_VIDEO_INFO_WIDTH (&frames[0].info),
          GST_VIDEO_INFO_HEIGHT (&frames[0].info)) + "\" ! " + chain +
      " ! appsink name=out sync=false"), expected_ (frames.size ()) {
    GError *err = NULL;
    pipeline_ = gst_parse_launch (launch_.c_str (), &err);
    fail_unless (pipeline_ != NULL && err == NULL, "%s: %s", launch_.c_str (),
        err ? err->message : "");
    share_cuda_context (pipeline_, ctx);
    GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline_), "src");
    g_object_set (src, "max-bytes", (guint64) 0, "block", FALSE, NULL);
    for (size_t i = 0; i < frames.size (); ++i) {
      GstBuffer *b = buffer_from_frame (frames[i]);
      GST_BUFFER_PTS (b) = i * GST_SECOND / 30;
      GST_BUFFER_DURATION (b) = GST_SECOND / 30;
      fail_unless (gst_app_src_push_buffer (GST_APP_SRC (src), b) ==
          GST_FLOW_OK);
    }
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    gst_object_unref (src);
    fail_unless (gst_element_set_state (pipeline_, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE, "%s: cannot play", launch_.c_str ());
  }
  ~RunningPipeline () {
    gst_element_set_state (pipeline_, GST_STATE_NULL);
    gst_object_unref (pipeline_);
  }
  RunningPipeline (const RunningPipeline &) = delete;
  RunningPipeline & operator= (const RunningPipeline &) = delete;

  /* Every output frame, each within a minute of the one before (a stalled
   * GPU fails here instead of hanging the test). */
  std::vector<PlanarFrame> collect () {
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline_), "out");
    std::vector<PlanarFrame> got;
    while (got.size () < expected_) {
      GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
          60 * GST_SECOND);
      if (!s)
        break;
      GstVideoInfo info;
      fail_unless (gst_video_info_from_caps (&info, gst_sample_get_caps (s)));
      got.push_back (frame_from_buffer (gst_sample_get_buffer (s), info));
      gst_sample_unref (s);
    }
    gst_object_unref (sink);
    GstBus *bus = gst_element_get_bus (pipeline_);
    GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    release_bus (bus);
    if (msg) {
      GError *e = NULL;
      gst_message_parse_error (msg, &e, NULL);
      const std::string problem = e->message;
      g_error_free (e);
      gst_message_unref (msg);
      fail ("%s: %s", launch_.c_str (), problem.c_str ());
    }
    fail_unless (got.size () == expected_, "%s: %zu of %zu frames came out "
        "within a minute of each other", launch_.c_str (), got.size (),
        expected_);
    return got;
  }

private:
  std::string launch_;
  size_t expected_;
  GstElement *pipeline_;
};

/* gpu-load (gpu_load.cu), built beside this test, in a process of
 * its own; returns once it has filled the GPU. */
static GSubprocess *
start_gpu_load (int seconds)
{
  gchar *self = g_file_read_link ("/proc/self/exe", NULL);
  fail_unless (self != NULL);
  gchar *dir = g_path_get_dirname (self);
  gchar *path = g_build_filename (dir, "gpu-load", NULL);
  const std::string duration = std::to_string (seconds);
  GError *err = NULL;
  GSubprocess *load = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &err,
      path, duration.c_str (), NULL);
  fail_unless (load != NULL, "cannot start %s: %s", path,
      err ? err->message : "");
  g_free (path);
  g_free (dir);
  g_free (self);
  GDataInputStream *out =
      g_data_input_stream_new (g_subprocess_get_stdout_pipe (load));
  gchar *line = g_data_input_stream_read_line (out, NULL, NULL, NULL);
  fail_unless (line != NULL && g_str_has_prefix (line, "busy"),
      "gpu-load did not start loading the GPU");
  g_print ("gpu-load: %s\n", line);
  g_free (line);
  g_object_unref (out);
  return load;
}

GST_START_TEST (test_pipelines_share_the_gpu_under_load)
{
  fail_unless (gst_cuda_load_library ());
  GstCudaContext *ctx = gst_cuda_context_new (0);
  fail_unless (ctx != NULL);
  const int w = quick ()? 320 : 1280, h = quick ()? 240 : 720;
  const int n_frames = quick ()? 4 : 16;
  std::mt19937 rng (3);
  std::vector<std::vector<PlanarFrame>> inputs;
  std::vector<std::vector<PlanarFrame>> alone;
  for (const char *chain : kChains) {
    std::vector<PlanarFrame> frames;
    for (int i = 0; i < n_frames; ++i)
      frames.push_back (frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
              i % 2 ? natural_image (w, h) : noisy_step_image (rng, w, h,
                  4.0 + i)));
    inputs.push_back (frames);
    alone.push_back (RunningPipeline (chain, frames, ctx).collect ());
  }

  GSubprocess *load = start_gpu_load (300);
  std::vector<std::unique_ptr<RunningPipeline>> running;
  for (size_t p = 0; p < G_N_ELEMENTS (kChains); ++p)
    running.push_back (std::make_unique<RunningPipeline> (kChains[p],
            inputs[p], ctx));
  for (size_t p = 0; p < running.size (); ++p) {
    const std::vector<PlanarFrame> got = running[p]->collect ();
    for (size_t i = 0; i < got.size (); ++i)
      for (size_t k = 0; k < got[i].planes.size (); ++k) {
        const std::string what = std::string (kChains[p]) + ", pipeline " +
            std::to_string (p) + ", frame " + std::to_string (i);
        assert_images_equal (got[i].planes[k], alone[p][i].planes[k],
            what.c_str ());
      }
  }
  running.clear ();
  g_subprocess_force_exit (load);
  g_subprocess_wait (load, NULL, NULL);
  /* Stopped here, so it loaded the GPU the whole time (on its own it runs
   * for 300 s). */
  fail_unless (g_subprocess_get_if_signaled (load),
      "gpu-load stopped before the pipelines finished");
  g_object_unref (load);
  gst_object_unref (ctx);
}
GST_END_TEST;

#endif

static Suite *
concurrent_suite (void)
{
  Suite *s = suite_create (TEST_SUITE_NAME ("concurrent"));
  TCase *tc = tcase_create ("concurrent");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_parallel_instances_match_one);
#if !TEST_GPU
  tcase_add_test (tc, test_eight_pipelines_at_once);
#endif
#if TEST_GPU && defined (HAVE_GST_CUDA)
  tcase_add_test (tc, test_pipelines_share_the_gpu_under_load);
#endif
  return s;
}

int
main (int argc, char **argv)
{
  return run_suite (argc, argv, concurrent_suite,
      TEST_SUITE_NAME ("concurrent"));
}

/* Every element on frames in CUDA memory: cudaupload ! X ! cudadownload for
 * every format cudaupload takes, and a decode through nvh264dec, each
 * compared with the system-memory path; chains of elements on CUDA memory
 * pushed without host waits (GStreamer 1.24 on) compared with the same
 * chains waiting for every frame. Exits 77 (skipped) where no GPU is
 * usable. */
#include "deep_frames.h"
#include "nlm_video.h"
#include "slow_copy.h"

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#include <gst/cuda/cuda-gst.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

using namespace test;

/* CUDA memory that carries its stream came with GStreamer 1.24. */
#if GST_CHECK_VERSION (1, 24, 0)
#define HAVE_CUDA_MEMORY_STREAMS 1
#endif

/* GRAY8 is not among the formats 1.22's cudaupload accepts. */
static const GstVideoFormat kCudaFormats[] = {
  GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YV12, GST_VIDEO_FORMAT_NV12,
  GST_VIDEO_FORMAT_NV21, GST_VIDEO_FORMAT_Y42B, GST_VIDEO_FORMAT_Y444,
};

/* Deeper formats GStreamer's CUDA allocator lays out (the elements' CUDA
 * caps), and the elements that take them. */
static const GstVideoFormat kDeepCudaFormats[] = {
  GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_P016_LE,
  GST_VIDEO_FORMAT_I420_10LE, GST_VIDEO_FORMAT_Y444_16LE,
};

static const char *kDeepFilters[] = {
  "cudahisteq backend=cuda",
  "cudahisteq backend=cuda significant-bits=9",
  "cudaclahe backend=cuda clip-limit=3 tiles-x=6 tiles-y=5",
  "cudaclahe backend=cuda clip-limit=2 tiles-x=1 tiles-y=1",
  "cudanlm auto-strength=false backend=cuda strength=12 patch-size=5 search-size=11 chroma-strength=0",
  "cudasharpen backend=cuda amount=1.5 radius=1.2 threshold=2",
  "cudasharpen backend=cuda kernel=laplacian-3x3",
};

static const char *kFilters[] = {
  "cudahisteq backend=cuda",
  "cudanlm auto-strength=false backend=cuda strength=12 patch-size=5 search-size=11 chroma-strength=0",
  "cudaclahe backend=cuda clip-limit=3 tiles-x=6 tiles-y=5",
  "cudasharpen backend=cuda amount=1.5 radius=2 threshold=3",
  "cudasharpen backend=cuda kernel=laplacian-3x3",
};

/* Runs `in` through upload ! filter ! download and asserts the filter's
 * sink negotiated CUDA memory. */
static PlanarFrame
through_cuda_memory (const char *filter, const PlanarFrame & in)
{
  std::string launch = std::string ("cudaupload ! ") + filter +
      " ! cudadownload";
  GstHarness *h = new_harness (launch);
  const GstVideoFormat fmt = GST_VIDEO_INFO_FORMAT (&in.info);
  const int w = GST_VIDEO_INFO_WIDTH (&in.info), hgt = GST_VIDEO_INFO_HEIGHT (&in.info);
  gst_harness_set_src_caps_str (h, video_caps (fmt, w, hgt).c_str ());
  gst_harness_set_sink_caps_str (h, video_caps (fmt, w, hgt).c_str ());
  GstBuffer *out = gst_harness_push_and_pull (h, buffer_from_frame (in));
  fail_unless (out != NULL, "%s: no output", filter);

  /* gst_harness_find_element matches factory names. */
  const std::string factory (filter, strcspn (filter, " "));
  GstElement *f = gst_harness_find_element (h, factory.c_str ());
  fail_unless (f != NULL, "no %s in the harness", factory.c_str ());
  GstPad *pad = gst_element_get_static_pad (f, "sink");
  GstCaps *caps = gst_pad_get_current_caps (pad);
  gchar *negotiated = gst_caps_to_string (caps);
  fail_unless (gst_caps_features_contains (gst_caps_get_features (caps, 0),
          GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY), "%s did not get CUDA memory: %s",
      filter, negotiated);
  g_free (negotiated);
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_object_unref (f);

  PlanarFrame result = frame_from_buffer (out, in.info);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  return result;
}

GST_START_TEST (test_cuda_memory_matches_system_memory)
{
  std::mt19937 rng (12);
  const int sizes[][2] = { {320, 240}, {333, 119}, {1920, 1080} };
  guint major, minor, micro, nano;
  gst_version (&major, &minor, &micro, &nano);
  for (const char *filter : kFilters)
    for (GstVideoFormat fmt : kCudaFormats)
      for (const auto & sz : sizes) {
        /* From 1.24 on GStreamer's CUDA allocator has no room for an
         * odd-height NV21 frame's last chroma row: cudaupload fails, and the
         * elements refuse such caps (test_odd_height_nv21_in_cuda_memory in
         * cudafiltersbase). */
        if (fmt == GST_VIDEO_FORMAT_NV21 && sz[1] % 2 == 1 &&
            (major > 1 || minor >= 24))
          continue;
        PlanarFrame in = frame_with_luma (rng, fmt,
            noisy_step_image (rng, sz[0], sz[1], 12.0));
        PlanarFrame on_gpu = through_cuda_memory (filter, in);
        PlanarFrame in_sysmem = push_pull_frame (filter, in);
        const std::string what = std::string (filter) + " " +
            gst_video_format_to_string (fmt);
        assert_images_equal (on_gpu.planes[0], in_sysmem.planes[0],
            what.c_str ());
        assert_chroma_carried (on_gpu, in);
      }
}
GST_END_TEST;

/* Deep frames in CUDA memory: the same as in system memory, bit for bit. */
GST_START_TEST (test_deep_cuda_memory_matches_system_memory)
{
  std::mt19937 rng (13);
  const int sizes[][2] = { {320, 240}, {333, 119}, {1920, 1080} };
  for (const char *filter : kDeepFilters)
    for (GstVideoFormat fmt : kDeepCudaFormats)
      for (const auto & sz : sizes) {
        const DeepLayout l = deep_layout (fmt);
        PlanarFrame in = deep_frame (rng, fmt, random_deep_image (rng, sz[0],
                sz[1], l, 0, (1 << l.bits) - 1));
        PlanarFrame on_gpu = through_cuda_memory (filter, in);
        PlanarFrame in_sysmem = push_pull_frame (filter, in);
        const std::string what = std::string (filter) + " " +
            gst_video_format_to_string (fmt);
        for (size_t p = 0; p < in.planes.size (); ++p)
          assert_images_equal (on_gpu.planes[p], in_sysmem.planes[p],
              what.c_str ());
        assert_chroma_carried (on_gpu, in);
      }
}
GST_END_TEST;

/* Runs a pipeline until EOS (an error or 60 s without EOS fails the test)
 * and returns the frames appsink "out" received, if it has one. appsink posts
 * EOS only once its queue is drained, so frames are pulled while waiting. */
static std::vector<PlanarFrame>
run_to_eos (const std::string & launch)
{
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (launch.c_str (), &err);
  fail_unless (pipeline != NULL && err == NULL, "%s: %s", launch.c_str (),
      err ? err->message : "");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "out");
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE, "%s: cannot play", launch.c_str ());

  GstBus *bus = gst_element_get_bus (pipeline);
  std::vector<PlanarFrame> frames;
  std::string problem = "no EOS within 60 s";
  const gint64 deadline = g_get_monotonic_time () + 60 * G_TIME_SPAN_SECOND;
  while (g_get_monotonic_time () < deadline) {
    if (sink) {
      while (GstSample * s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
              0)) {
        GstVideoInfo info;
        fail_unless (gst_video_info_from_caps (&info, gst_sample_get_caps (s)));
        frames.push_back (frame_from_buffer (gst_sample_get_buffer (s), info));
        gst_sample_unref (s);
      }
    }
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 20 * GST_MSECOND,
        (GstMessageType) (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    if (!msg)
      continue;
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      GError *e = NULL;
      gst_message_parse_error (msg, &e, NULL);
      problem = e->message;
      g_error_free (e);
    } else {
      problem.clear ();
    }
    gst_message_unref (msg);
    break;
  }

  if (sink)
    gst_object_unref (sink);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  release_bus (bus);
  fail_unless (problem.empty (), "%s: %s", launch.c_str (), problem.c_str ());
  return frames;
}

/* What appsink "out" of a pipeline received: the frames, and for each
 * whether its CUDA memory still had queued work on its stream when it
 * arrived (GST_CUDA_MEMORY_TRANSFER_NEED_SYNC; never before 1.24). */
struct Received
{
  std::vector<PlanarFrame> frames;
  std::vector<bool> pending;
};

static bool
work_pending (GstBuffer * buf)
{
#ifdef HAVE_CUDA_MEMORY_STREAMS
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);
  return gst_is_cuda_memory (mem) &&
      gst_cuda_memory_get_stream (GST_CUDA_MEMORY_CAST (mem)) != NULL &&
      GST_MEMORY_FLAG_IS_SET (mem, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC);
#else
  (void) buf;
  return false;
#endif
}

/* Frames in CUDA memory of @ctx whose memory carries a stream of its own
 * (from 1.24 on), as a decoder's output does. */
class CudaFramePool
{
public:
  CudaFramePool (GstCudaContext * ctx, const GstVideoInfo & info)
      : pool_ (gst_cuda_buffer_pool_new (ctx)) {
    GstCaps *caps = gst_video_info_to_caps (&info);
    gst_caps_set_features_simple (caps,
        gst_caps_features_new_single (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY));
    GstStructure *config = gst_buffer_pool_get_config (pool_);
    gst_buffer_pool_config_set_params (config, caps,
        GST_VIDEO_INFO_SIZE (&info), 0, 0);
    gst_caps_unref (caps);
#ifdef HAVE_CUDA_MEMORY_STREAMS
    GstCudaStream *stream = gst_cuda_stream_new (ctx);
    fail_unless (stream != NULL);
    gst_buffer_pool_config_set_cuda_stream (config, stream);
    gst_cuda_stream_unref (stream);
#endif
    fail_unless (gst_buffer_pool_set_config (pool_, config));
    fail_unless (gst_buffer_pool_set_active (pool_, TRUE));
  }
  ~CudaFramePool () {
    gst_buffer_pool_set_active (pool_, FALSE);
    gst_object_unref (pool_);
  }
  CudaFramePool (const CudaFramePool &) = delete;
  CudaFramePool & operator= (const CudaFramePool &) = delete;

  GstBuffer *frame (const PlanarFrame & f) {
    GstBuffer *buf = NULL;
    fail_unless (gst_buffer_pool_acquire_buffer (pool_, &buf, NULL) ==
        GST_FLOW_OK);
    write_frame (buf, f);
    return buf;
  }

private:
  GstBufferPool *pool_;
};

/* Pushes @frames through appsrc ! @middle ! appsink name=out, all queued
 * before the pipeline plays so that several are in flight, and collects
 * the output (mapped on the CPU) until EOS. @host_sync sets
 * CUDAFILTERS_HOST_SYNC for the elements created here. With @ctx, the
 * frames are pushed in CUDA memory of that context (see CudaFramePool),
 * which the pipeline shares. */
static Received
run_frames (const std::string & middle, const std::vector<PlanarFrame> & frames,
    bool host_sync, GstCudaContext * ctx = NULL)
{
  const GstVideoInfo & info = frames[0].info;
  const std::string launch = "appsrc name=src format=time caps=\"" +
      video_caps (GST_VIDEO_INFO_FORMAT (&info), GST_VIDEO_INFO_WIDTH (&info),
      GST_VIDEO_INFO_HEIGHT (&info), ctx ? "memory:CUDAMemory" : NULL) +
      "\" ! " + middle + " ! appsink name=out sync=false";
  g_setenv ("CUDAFILTERS_HOST_SYNC", host_sync ? "1" : "0", TRUE);
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (launch.c_str (), &err);
  g_unsetenv ("CUDAFILTERS_HOST_SYNC");
  fail_unless (pipeline != NULL && err == NULL, "%s: %s", launch.c_str (),
      err ? err->message : "");
  std::unique_ptr<CudaFramePool> pool;
  if (ctx) {
    share_cuda_context (pipeline, ctx);
    pool = std::make_unique<CudaFramePool> (ctx, info);
  }
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "out");
  g_object_set (src, "max-bytes", (guint64) 0, "block", FALSE, NULL);
  for (size_t i = 0; i < frames.size (); ++i) {
    GstBuffer *b = pool ? pool->frame (frames[i]) : buffer_from_frame (frames[i]);
    GST_BUFFER_PTS (b) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION (b) = GST_SECOND / 30;
    fail_unless (gst_app_src_push_buffer (GST_APP_SRC (src), b) == GST_FLOW_OK);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE, "%s: cannot play", launch.c_str ());

  Received got;
  while (got.frames.size () < frames.size ()) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        60 * GST_SECOND);
    if (!s)
      break;
    GstBuffer *buf = gst_sample_get_buffer (s);
    got.pending.push_back (work_pending (buf));
    GstVideoInfo out_info;
    fail_unless (gst_video_info_from_caps (&out_info, gst_sample_get_caps (s)));
    got.frames.push_back (frame_from_buffer (buf, out_info));
    gst_sample_unref (s);
  }
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  std::string problem;
  if (msg) {
    GError *e = NULL;
    gst_message_parse_error (msg, &e, NULL);
    problem = e->message;
    g_error_free (e);
    gst_message_unref (msg);
  }
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  release_bus (bus);
  fail_unless (problem.empty (), "%s: %s", launch.c_str (), problem.c_str ());
  fail_unless_equals_int ((int) got.frames.size (), (int) frames.size ());
  return got;
}

/* The elements' messages that they set staging and device memory aside
 * for frames from system memory. A static count: a failed assertion leaves
 * the test without removing the log function. */
static std::atomic<int> host_reservations{0};

static void
count_host_reservations (GstDebugCategory * category, GstDebugLevel,
    const gchar *, const gchar *, gint, GObject *, GstDebugMessage * message,
    gpointer)
{
  if (g_strcmp0 (gst_debug_category_get_name (category), "cudafiltersbase") != 0)
    return;
  const gchar *text = gst_debug_message_get (message);
  if (text && strstr (text, "frames from system memory"))
    ++host_reservations;
}

/* Frames in CUDA memory are filtered where they lie: the elements set no
 * staging (page-locked host memory) and no device frames aside for host
 * frames, which would cost each stream four frames' worth of both. The
 * same element in system memory does. */
GST_START_TEST (test_cuda_memory_reserves_no_host_staging)
{
  std::mt19937 rng (5);
  std::vector<PlanarFrame> frames;
  for (int i = 0; i < 3; ++i)
    frames.push_back (frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
            noisy_step_image (rng, 640, 360, 6.0 + i)));
  const char *kFilters[] = {
    "cudahisteq backend=cuda",
    "cudanlm backend=cuda temporal-radius=1",
    "cudalowlight backend=cuda",
  };
  gst_debug_set_threshold_for_name ("cudafiltersbase", GST_LEVEL_DEBUG);
  gst_debug_add_log_function (count_host_reservations, NULL, NULL);
  host_reservations = 0;
  for (const char *filter : kFilters) {
    run_frames (std::string ("cudaupload ! video/x-raw(memory:CUDAMemory) ! ") +
        filter + " ! cudadownload", frames, false);
    fail_unless (host_reservations == 0, "%s reserved host staging for "
        "frames in CUDA memory", filter);
  }
  run_frames ("cudahisteq backend=cuda", frames, false);
  gst_debug_remove_log_function (count_host_reservations);
  gst_debug_unset_threshold_for_name ("cudafiltersbase");
  fail_unless (host_reservations > 0, "no staging for frames in system memory");
}
GST_END_TEST;

/* Chains of elements on CUDA memory give, frame for frame and bit for bit,
 * what the same chains give when every element waits for every frame:
 * downloaded by cudadownload, and mapped on the CPU by an appsink that
 * takes CUDA memory. From GStreamer 1.24 on the frames reach that appsink
 * with their work still queued, which shows that no element waited. */
GST_START_TEST (test_chains_without_host_waits)
{
  fail_unless (gst_cuda_load_library ());
  GstCudaContext *ctx = gst_cuda_context_new (0);
  fail_unless (ctx != NULL);
  std::mt19937 rng (21);
  std::vector<PlanarFrame> frames;
  for (int i = 0; i < 24; ++i)
    frames.push_back (frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
            i % 2 ? natural_image (1280, 720) : noisy_step_image (rng, 1280,
                720, 4.0 + i)));
  const char *kChains[] = {
    "cudahisteq backend=cuda ! cudahisteq backend=cuda ! "
        "cudahisteq backend=cuda ! cudahisteq backend=cuda",
    "cudanlm auto-strength=false backend=cuda strength=12 patch-size=5 search-size=11 ! "
        "cudanlm auto-strength=false backend=cuda strength=8 patch-size=7 search-size=21",
    "cudahisteq backend=cuda ! cudanlm auto-strength=false backend=cuda strength=12 "
        "patch-size=5 search-size=11 ! cudaclahe backend=cuda clip-limit=3 "
        "! cudasharpen backend=cuda amount=1.5 radius=2",
    "cudanlm auto-strength=false backend=cuda strength=12 patch-size=5 search-size=11 "
        "chroma-strength=6 temporal-radius=1 ! cudahisteq backend=cuda",
  };
  for (const char *chain : kChains) {
    const std::string upload =
        std::string ("cudaupload ! video/x-raw(memory:CUDAMemory) ! ") + chain;
    const Received want = run_frames (upload + " ! cudadownload", frames,
        true);
    const Received downloaded = run_frames (upload + " ! cudadownload",
        frames, false);
    const Received mapped = run_frames (upload +
        " ! video/x-raw(memory:CUDAMemory)", frames, false);
    const Received mapped_sync = run_frames (upload +
        " ! video/x-raw(memory:CUDAMemory)", frames, true);
    /* Frames that arrive on a stream of their own: the first element
     * queues on it and links it to the chain's by events. */
    const Received from_stream = run_frames (std::string (chain) +
        " ! video/x-raw(memory:CUDAMemory)", frames, false, ctx);
    size_t queued = 0;
    for (size_t i = 0; i < frames.size (); ++i) {
      const std::string what = std::string (chain) + ", frame " +
          std::to_string (i);
      for (size_t p = 0; p < want.frames[i].planes.size (); ++p) {
        assert_images_equal (downloaded.frames[i].planes[p],
            want.frames[i].planes[p], (what + ", cudadownload").c_str ());
        assert_images_equal (mapped.frames[i].planes[p],
            want.frames[i].planes[p], (what + ", appsink").c_str ());
        assert_images_equal (mapped_sync.frames[i].planes[p],
            want.frames[i].planes[p], (what + ", appsink, waited").c_str ());
        assert_images_equal (from_stream.frames[i].planes[p],
            want.frames[i].planes[p], (what + ", own stream").c_str ());
      }
      fail_if (mapped_sync.pending[i], "%s: waited-for frame has work queued",
          what.c_str ());
      queued += mapped.pending[i] && from_stream.pending[i];
    }
#ifdef HAVE_CUDA_MEMORY_STREAMS
    fail_unless (queued == frames.size (), "%s: %zu of %zu frames were "
        "waited for on the host", chain, frames.size () - queued,
        frames.size ());
#else
    fail_unless (queued == 0);
#endif
  }
  gst_object_unref (ctx);
}
GST_END_TEST;

/* nvh264dec gives NV12 in CUDA memory (tests/media, made by
 * scripts/make-test-clip.sh): filtering it there must equal filtering the
 * downloaded frames. */
GST_START_TEST (test_decode_through_nvh264dec)
{
  const std::string decode = std::string ("filesrc location=")
      + CUDAFILTERS_TEST_MEDIA "/ball-h264.mp4 ! qtdemux ! h264parse ! "
      "nvh264dec ! ";
  /* Each element, and all chained as in a decode-filter-display pipeline. */
  const std::string chain = std::string (kFilters[2]) + " ! " + kFilters[0] +
      " ! " + kFilters[1];
  for (const char *filter : {kFilters[0], kFilters[1], kFilters[2],
          chain.c_str ()}) {
    auto on_gpu = run_to_eos (decode + filter + " ! cudadownload ! "
        "video/x-raw,format=NV12 ! appsink name=out sync=false");
    auto in_sysmem = run_to_eos (decode + "cudadownload ! "
        "video/x-raw,format=NV12 ! " + filter + " ! appsink name=out sync=false");
    fail_unless_equals_int (on_gpu.size (), 12);
    fail_unless_equals_int (in_sysmem.size (), 12);
    for (size_t i = 0; i < on_gpu.size (); ++i)
      for (size_t p = 0; p < on_gpu[i].planes.size (); ++p)
        assert_images_equal (on_gpu[i].planes[p], in_sysmem[i].planes[p],
            filter);
  }
}
GST_END_TEST;

/* A real 10-bit path: nvh265dec decodes HEVC Main10 (tests/media, made by
 * scripts/make-test-clip.sh) to P010_10LE in CUDA memory. Each element, and
 * all of them chained, filtering there must equal filtering the downloaded
 * frames, at full depth. */
GST_START_TEST (test_decode_10bit_through_nvh265dec)
{
  const std::string decode = std::string ("filesrc location=")
      + CUDAFILTERS_TEST_MEDIA "/smpte-10bit.mp4 ! qtdemux ! h265parse "
      "! nvh265dec ! ";
  const char *filters[] = { "cudahisteq backend=cuda",
    "cudaclahe backend=cuda clip-limit=3 tiles-x=4 tiles-y=3",
    "cudanlm auto-strength=false backend=cuda strength=12 patch-size=5 search-size=11",
    "cudasharpen backend=cuda amount=1.5 radius=1.2 threshold=2",
    "cudanlm auto-strength=false backend=cuda strength=8 patch-size=3 search-size=7 ! "
        "cudaclahe backend=cuda ! cudasharpen backend=cuda",
  };
  for (const char *filter : filters) {
    auto on_gpu = run_to_eos (decode + filter + " ! cudadownload ! "
        "video/x-raw,format=P010_10LE ! appsink name=out sync=false");
    auto in_sysmem = run_to_eos (decode + "cudadownload ! "
        "video/x-raw,format=P010_10LE ! " + filter +
        " ! appsink name=out sync=false");
    auto decoded = run_to_eos (decode + "cudadownload ! "
        "video/x-raw,format=P010_10LE ! appsink name=out sync=false");
    fail_unless_equals_int (on_gpu.size (), 12);
    fail_unless_equals_int (in_sysmem.size (), 12);
    fail_unless_equals_int (decoded.size (), 12);
    for (size_t i = 0; i < on_gpu.size (); ++i) {
      fail_unless_equals_int (GST_VIDEO_INFO_FORMAT (&on_gpu[i].info),
          GST_VIDEO_FORMAT_P010_10LE);
      for (size_t p = 0; p < on_gpu[i].planes.size (); ++p)
        assert_images_equal (on_gpu[i].planes[p], in_sysmem[i].planes[p],
            filter);
      /* The filter did something to luma, and kept the low 6 bits zero. */
      const Image16 luma = words_of (on_gpu[i].planes[0]);
      fail_unless (luma.pixels != words_of (decoded[i].planes[0]).pixels,
          "%s: frame %zu unchanged", filter, i);
      for (uint16_t w : luma.pixels)
        fail_unless ((w & 0x3F) == 0, "%s: word %u is not P010", filter, w);
    }
  }
}
GST_END_TEST;


/* The caps cudanlm's sink negotiated in `launch` (a harness fed `f`). */
static bool
nlm_takes_cuda_memory (const std::string & launch, const PlanarFrame & f)
{
  GstHarness *h = new_harness (launch);
  set_caps_of (h, f);
  fail_unless_equals_int (gst_harness_push (h, buffer_from_frame (f)),
      GST_FLOW_OK);
  GstElement *nlm = gst_harness_find_element (h, "cudanlm");
  GstPad *pad = gst_element_get_static_pad (nlm, "sink");
  GstCaps *caps = gst_pad_get_current_caps (pad);
  const bool cuda = caps && gst_caps_features_contains (gst_caps_get_features
      (caps, 0), GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
  gst_clear_caps (&caps);
  gst_object_unref (pad);
  gst_object_unref (nlm);
  gst_harness_teardown (h);
  return cuda;
}

/* cudanlm with chroma and temporal windows on frames in CUDA memory: the
 * same frames, at the same moments, with the same metadata as in system
 * memory, bit for bit; through a flush, a DISCONT buffer and a caps change,
 * and at 4K. */
GST_START_TEST (test_nlm_sequences_in_cuda_memory)
{
  std::mt19937 rng (5153);
  struct Case {
    Sequence seq;
    NlmSettings s;
  };
  std::vector<Case> cases;
  for (int radius : {0, 1, 3})
    cases.push_back ({make_sequence (rng, GST_VIDEO_FORMAT_NV12, 320, 180, 7),
            NlmSettings {12, 5, 11, 0, false, 6, radius}});
  for (Break kind : {Break::kFlush, Break::kDiscont, Break::kCaps})
    cases.push_back ({make_sequence (rng, GST_VIDEO_FORMAT_I420, 160, 90, 6,
                kind, 3, 120, 72), NlmSettings {12, 5, 11, 0, false, -1, 1}});
  if (!skip_large ())
    cases.push_back ({make_sequence (rng, GST_VIDEO_FORMAT_NV12, 3840, 2160,
                3), NlmSettings {10, 5, 9, 0, false, 5, 1}});
  for (const Case & c : cases) {
    const std::string nlm = c.s.launch ("cuda");
    const std::string on_device = "cudaupload ! " + nlm + " ! cudadownload";
    fail_unless (nlm_takes_cuda_memory (on_device, c.seq.frames[0]),
        "%s: not in CUDA memory", on_device.c_str ());
    SequenceOutput device, host;
    run_sequence (on_device, c.seq, device);
    run_sequence (nlm, c.seq, host);
    assert_sequence_shape (device, c.seq, c.s, on_device);
    assert_sequence_shape (host, c.seq, c.s, nlm);
    for (size_t k = 0; k < host.frames.size (); ++k)
      for (size_t p = 0; p < host.frames[k].planes.size (); ++p)
        assert_images_equal (device.frames[k].planes[p],
            host.frames[k].planes[p], on_device.c_str ());
  }
}
GST_END_TEST;

/* One element in a harness, in CUDA memory of @ctx, which it shares (set
 * as its GstContext before it starts). */
static GstHarness *
harness_in_context (const std::string & launch, GstCudaContext * ctx,
    const GstVideoInfo & info)
{
  GError *err = NULL;
  GstElement *el = gst_parse_launch (launch.c_str (), &err);
  fail_unless (el != NULL && err == NULL, "%s", launch.c_str ());
  share_cuda_context (el, ctx);
  GstHarness *h = gst_harness_new_with_element (el, "sink", "src");
  gst_object_unref (el);
  const std::string caps = video_caps (GST_VIDEO_INFO_FORMAT (&info),
      GST_VIDEO_INFO_WIDTH (&info), GST_VIDEO_INFO_HEIGHT (&info),
      "memory:CUDAMemory");
  gst_harness_set_src_caps_str (h, caps.c_str ());
  gst_harness_set_sink_caps_str (h, caps.c_str ());
  return h;
}

/* A driver call, through the runtime (the tests do not link the driver). */
template < typename Fn > static Fn
driver_call (const char *name, unsigned version)
{
  void *p = NULL;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const cudaError_t err = cudaGetDriverEntryPointByVersion (name, &p, version,
      cudaEnableDefault, &found);
#else
  (void) version;
  const cudaError_t err = cudaGetDriverEntryPoint (name, &p, cudaEnableDefault, &found);
#endif
  fail_unless (err == cudaSuccess && found == cudaDriverEntryPointSuccess && p != NULL,
      "no driver entry point %s", name);
  return reinterpret_cast < Fn > (p);
}

/* The flags of `ctx` (cuCtxGetFlags), or sets them (cuCtxSetFlags). */
static unsigned int
context_flags (GstCudaContext * ctx)
{
  static auto get = driver_call < PFN_cuCtxGetFlags_v7000 > ("cuCtxGetFlags", 7000);
  unsigned int flags = 0;
  fail_unless (gst_cuda_context_push (ctx));
  fail_unless (get (&flags) == CUDA_SUCCESS);
  gst_cuda_context_pop (NULL);
  return flags;
}

static void
set_context_flags (GstCudaContext * ctx, unsigned int flags)
{
  static auto set = driver_call < PFN_cuCtxSetFlags_v12010 > ("cuCtxSetFlags", 12010);
  fail_unless (gst_cuda_context_push (ctx));
  fail_unless (set (flags) == CUDA_SUCCESS);
  gst_cuda_context_pop (NULL);
}

/* cuda-wait: the context the elements run in (the application's, shared
 * with them) schedules blocking synchronisation while one of them runs,
 * and has its own flags back once the last has stopped; cuda-wait=keep
 * leaves them alone. A context the application made spin spins again
 * after. */
GST_START_TEST (test_cuda_wait_blocks_while_elements_run)
{
  std::mt19937 rng (63);
  const int w = 64, hgt = 48;
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, w, hgt);
  GstCudaContext *ctx = gst_cuda_context_new (0);
  fail_unless (ctx != NULL);
  const unsigned int before = context_flags (ctx);
  auto scheduling = [&]() { return context_flags (ctx) & CU_CTX_SCHED_MASK; };
  fail_unless ((before & CU_CTX_SCHED_MASK) != CU_CTX_SCHED_BLOCKING_SYNC,
      "a new context blocks already (flags 0x%x)", before);
  auto run = [&](GstHarness * h) {
    CudaFramePool pool (ctx, info);
    GstBuffer *out = gst_harness_push_and_pull (h, pool.frame (frame_with_luma (rng,
                GST_VIDEO_FORMAT_NV12, random_image (rng, w, hgt))));
    fail_unless (out != NULL);
    gst_buffer_unref (out);
  };

  GstHarness *a = harness_in_context ("cudahisteq backend=cuda", ctx, info);
  run (a);
  fail_unless (scheduling () == CU_CTX_SCHED_BLOCKING_SYNC,
      "running, the element left the context's flags at 0x%x", context_flags (ctx));
  GstHarness *b = harness_in_context ("cudasharpen backend=cuda", ctx, info);
  run (b);
  gst_harness_teardown (a);
  fail_unless (scheduling () == CU_CTX_SCHED_BLOCKING_SYNC,
      "one element stopped, the other runs: flags 0x%x", context_flags (ctx));
  gst_harness_teardown (b);
  fail_unless (context_flags (ctx) == before, "both stopped: flags 0x%x, before 0x%x",
      context_flags (ctx), before);

  GstHarness *k = harness_in_context ("cudahisteq backend=cuda cuda-wait=keep", ctx, info);
  run (k);
  fail_unless (context_flags (ctx) == before, "cuda-wait=keep changed the flags to 0x%x",
      context_flags (ctx));
  gst_harness_teardown (k);

  const unsigned int spinning = (before & ~unsigned (CU_CTX_SCHED_MASK)) | CU_CTX_SCHED_SPIN;
  set_context_flags (ctx, spinning);
  a = harness_in_context ("cudanlm backend=cuda patch-size=3 search-size=5", ctx, info);
  run (a);
  fail_unless (scheduling () == CU_CTX_SCHED_BLOCKING_SYNC);
  gst_harness_teardown (a);
  fail_unless (context_flags (ctx) == spinning, "the application's spinning context "
      "came back with flags 0x%x", context_flags (ctx));
  set_context_flags (ctx, before);
  gst_object_unref (ctx);
}
GST_END_TEST;

#ifdef HAVE_CUDA_MEMORY_STREAMS
static const char *kPlaneFiltersAndNlm[] = {
  "cudahisteq backend=cuda",
  "cudaclahe backend=cuda clip-limit=3 tiles-x=4 tiles-y=3",
  "cudasharpen backend=cuda amount=1.5 radius=1.2",
  "cudanlm auto-strength=false backend=cuda strength=12 patch-size=3 search-size=5",
};

/* An element that writes an output buffer of its pool on a stream of its own
 * (here: a statistics message is due for every frame, so it waits for each
 * frame) must first wait, on the GPU, for the work still queued on the
 * buffer's stream: a slow downstream reader of the buffer's earlier
 * contents. The reader must see those contents, not the next frame. */
GST_START_TEST (test_output_writes_wait_for_readers)
{
  std::mt19937 rng (5154);
  const int w = 320, hgt = 240;
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, w, hgt);
  for (const char *filter : kPlaneFiltersAndNlm) {
    GstCudaContext *ctx = gst_cuda_context_new (0);
    fail_unless (ctx != NULL);
    GstHarness *h = harness_in_context (std::string (filter) +
        " post-messages=true message-interval=0", ctx, info);
    CudaFramePool pool (ctx, info);
    auto frame = [&]() {
      return pool.frame (frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
              random_image (rng, w, hgt, 20, 200)));
    };
    GstBuffer *x = gst_harness_push_and_pull (h, frame ());
    GstBuffer *y = gst_harness_push_and_pull (h, frame ());
    fail_unless (x != NULL && y != NULL, "%s: no output", filter);

    /* x's contents now, and a reader that copies them after 200 ms of GPU
     * time, queued on x's stream. */
    GstMemory *mem = gst_buffer_peek_memory (x, 0);
    GstCudaStream *stream = gst_cuda_memory_get_stream (GST_CUDA_MEMORY_CAST
        (mem));
    fail_unless (stream != NULL, "%s: its output pool carries no stream",
        filter);
    GstMapInfo map;
    fail_unless (gst_memory_map (mem, &map, (GstMapFlags) (GST_MAP_READ |
                GST_MAP_CUDA)));
    fail_unless (gst_cuda_context_push (ctx));
    std::vector<uint8_t> before (map.size), seen (map.size);
    fail_unless_equals_int (cudaMemcpy (before.data (), map.data, map.size,
            cudaMemcpyDeviceToHost), cudaSuccess);
    void *copy = NULL;
    fail_unless_equals_int (cudaMalloc (&copy, map.size), cudaSuccess);
    const CUdeviceptr x_memory = (CUdeviceptr) map.data;
    cudaStream_t handle = (cudaStream_t) gst_cuda_stream_get_handle (stream);
    test::queue_slow_copy (map.data, copy, map.size, 200000000ull, handle);
    gst_cuda_context_pop (NULL);
    gst_memory_unmap (mem, &map);
    gst_buffer_unref (x);

    /* The only free buffer of the element's pool is x's: the next frame is
     * written into it. */
    GstBuffer *z = gst_harness_push_and_pull (h, frame ());
    fail_unless (z != NULL, "%s: no output", filter);
    GstMemory *zmem = gst_buffer_peek_memory (z, 0);
    fail_unless (gst_memory_map (zmem, &map, (GstMapFlags) (GST_MAP_READ |
                GST_MAP_CUDA)));
    const bool reused = (CUdeviceptr) map.data == x_memory;
    gst_memory_unmap (zmem, &map);
    fail_unless (reused, "%s: the pool did not hand out x's memory again",
        filter);

    fail_unless (gst_cuda_context_push (ctx));
    fail_unless_equals_int (cudaStreamSynchronize (handle), cudaSuccess);
    fail_unless_equals_int (cudaMemcpy (seen.data (), copy, seen.size (),
            cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree (copy);
    gst_cuda_context_pop (NULL);
    fail_unless (seen == before, "%s: the reader of the earlier frame saw "
        "the next one: the element wrote before the reads queued on the "
        "buffer's stream had run", filter);

    gst_buffer_unref (y);
    gst_buffer_unref (z);
    gst_harness_teardown (h);
    gst_object_unref (ctx);
  }
}
GST_END_TEST;
#endif

/* CUDA memory of another device than the one cuda-device-id names is
 * copied to the element's device before it is filtered: its context is not
 * adopted and its pointers never reach the element's kernels. With one GPU,
 * CUDAFILTERS_TEST_OTHER_DEVICE makes upstream's context (another one on the
 * same device) count as another device's. Output equals the same frames
 * through one context, bit for bit. */
GST_START_TEST (test_memory_of_another_device_is_copied)
{
  std::mt19937 rng (5155);
  const int w = 320, hgt = 180;
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, w, hgt);
  const char *filters[] = {
    "cudahisteq backend=cuda cuda-device-id=0",
    "cudaclahe backend=cuda cuda-device-id=0 clip-limit=3 tiles-x=4 tiles-y=3",
    "cudasharpen backend=cuda cuda-device-id=0 amount=1.5 radius=1.2",
    "cudanlm auto-strength=false backend=cuda cuda-device-id=0 strength=12 patch-size=3 "
        "search-size=5 chroma-strength=6",
    "cudanlm auto-strength=false backend=cuda cuda-device-id=0 strength=12 patch-size=3 "
        "search-size=5 temporal-radius=1",
  };
  for (const char *filter : filters) {
    GstCudaContext *theirs = gst_cuda_context_new (0);
    GstCudaContext *ours = gst_cuda_context_new (0);
    fail_unless (theirs != NULL && ours != NULL);
    g_setenv ("CUDAFILTERS_TEST_OTHER_DEVICE", "1", TRUE);
    GstHarness *h = harness_in_context (filter, ours, info);
    g_unsetenv ("CUDAFILTERS_TEST_OTHER_DEVICE");
    CudaFramePool pool (theirs, info);

    std::vector<PlanarFrame> in;
    for (int i = 0; i < 4; ++i)
      in.push_back (frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
              noisy_step_image (rng, w, hgt, 12.0)));
    std::vector<PlanarFrame> got;
    for (const PlanarFrame & f : in) {
      fail_unless_equals_int (gst_harness_push (h, pool.frame (f)),
          GST_FLOW_OK);
      while (GstBuffer * out = gst_harness_try_pull (h)) {
        got.push_back (frame_from_buffer (out, info));
        gst_buffer_unref (out);
      }
    }
    fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
    while (GstBuffer * out = gst_harness_try_pull (h)) {
      got.push_back (frame_from_buffer (out, info));
      gst_buffer_unref (out);
    }

    /* Still in its own context: it answers the context query with it. */
    GstQuery *q = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
    fail_unless (gst_element_query (h->element, q));
    GstContext *answer = NULL;
    gst_query_parse_context (q, &answer);
    GstCudaContext *kept = NULL;
    fail_unless (answer && gst_structure_get (gst_context_get_structure
            (answer), GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &kept,
            NULL));
    fail_unless (kept == ours, "%s adopted the other device's context",
        filter);
    gst_object_unref (kept);
    gst_query_unref (q);
    gst_harness_teardown (h);

    /* The same frames in system memory. */
    GstHarness *ref = new_harness (filter);
    gst_harness_set_src_caps_str (ref, video_caps (GST_VIDEO_FORMAT_NV12, w,
            hgt).c_str ());
    std::vector<PlanarFrame> want;
    for (const PlanarFrame & f : in) {
      fail_unless_equals_int (gst_harness_push (ref, buffer_from_frame (f)),
          GST_FLOW_OK);
      while (GstBuffer * out = gst_harness_try_pull (ref)) {
        want.push_back (frame_from_buffer (out, info));
        gst_buffer_unref (out);
      }
    }
    fail_unless (gst_harness_push_event (ref, gst_event_new_eos ()));
    while (GstBuffer * out = gst_harness_try_pull (ref)) {
      want.push_back (frame_from_buffer (out, info));
      gst_buffer_unref (out);
    }
    gst_harness_teardown (ref);

    fail_unless_equals_int ((int) got.size (), (int) in.size ());
    fail_unless_equals_int ((int) want.size (), (int) in.size ());
    for (size_t k = 0; k < want.size (); ++k)
      for (size_t p = 0; p < want[k].planes.size (); ++p)
        assert_images_equal (got[k].planes[p], want[k].planes[p], filter);
    gst_object_unref (theirs);
    gst_object_unref (ours);
  }
}
GST_END_TEST;

/* Holds a context query inside gst_cuda_handle_context_query, at its first
 * log line, until released: the element has handed over its context by
 * then, and the query is about to take its own reference to it. */
struct HeldContextQuery
{
  std::mutex lock;
  std::condition_variable changed;
  GThread *thread = NULL;
  bool inside = false;
  bool released = false;

  static void log (GstDebugCategory *, GstDebugLevel, const gchar *,
      const gchar * function, gint, GObject *, GstDebugMessage *,
      gpointer data) {
    HeldContextQuery *self = static_cast<HeldContextQuery *> (data);
    if (g_strcmp0 (function, "gst_cuda_handle_context_query") != 0)
      return;
    std::unique_lock<std::mutex> l (self->lock);
    if (g_thread_self () != self->thread || self->inside)
      return;
    self->inside = true;
    self->changed.notify_all ();
    self->changed.wait (l, [self] { return self->released; });
  }
};

static void
note_freed (gpointer data, GObject *)
{
  *static_cast<bool *> (data) = true;
}

/* A context query answered from another thread while the streaming thread
 * moves the element into upstream's context: the context the query was
 * answered with stays alive until the query is done with it, whatever the
 * element drops meanwhile. */
GST_START_TEST (test_context_query_keeps_context_during_adoption)
{
  std::mt19937 rng (5157);
  const int w = 160, hgt = 120;
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, w, hgt);
  GstCudaContext *ours = gst_cuda_context_new (0);
  GstCudaContext *first = gst_cuda_context_new (0);
  GstCudaContext *second = gst_cuda_context_new (0);
  fail_unless (ours && first && second);
  GstHarness *h = harness_in_context ("cudahisteq backend=cuda", ours, info);
  auto push_in = [&](GstCudaContext * ctx) {
    CudaFramePool pool (ctx, info);
    GstBuffer *out = gst_harness_push_and_pull (h,
        pool.frame (frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
                random_image (rng, w, hgt))));
    fail_unless (out != NULL);
    gst_buffer_unref (out);
  };

  /* The element moves into `first`, and holds the last reference to it. */
  push_in (first);
  bool first_freed = false;
  g_object_weak_ref (G_OBJECT (first), note_freed, &first_freed);
  gst_object_unref (first);
  fail_if (first_freed, "the element did not keep the context it adopted");

  HeldContextQuery held;
  gst_debug_set_threshold_for_name ("GST_CONTEXT", GST_LEVEL_LOG);
  gst_debug_add_log_function (HeldContextQuery::log, &held, NULL);
  GstQuery *q = gst_query_new_context (GST_CUDA_CONTEXT_TYPE);
  GstPad *srcpad = gst_element_get_static_pad (h->element, "src");
  gboolean answered = FALSE;
  std::thread asker ([&] {
    {
      std::lock_guard<std::mutex> l (held.lock);
      held.thread = g_thread_self ();
    }
    answered = gst_pad_query (srcpad, q);
  });
  {
    std::unique_lock<std::mutex> l (held.lock);
    held.changed.wait (l, [&] { return held.inside; });
  }

  /* Meanwhile the element moves on into `second`, and every frame and
   * pool of `first` is gone. */
  push_in (second);
  push_in (second);
  const bool freed_under_query = first_freed;

  {
    std::lock_guard<std::mutex> l (held.lock);
    held.released = true;
    held.changed.notify_all ();
  }
  /* A context freed under the query is used by it now: a failed test
   * rather than a crash where that still goes unnoticed. */
  fail_if (freed_under_query, "the element freed its context while a "
      "context query was answering with it");
  asker.join ();
  gst_debug_remove_log_function (HeldContextQuery::log);
  gst_debug_unset_threshold_for_name ("GST_CONTEXT");
  fail_unless (answered);

  GstContext *answer = NULL;
  gst_query_parse_context (q, &answer);
  GstCudaContext *given = NULL;
  fail_unless (answer && gst_structure_get (gst_context_get_structure (answer),
          GST_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &given, NULL));
  fail_unless (given == first, "the query was not answered with the "
      "context the element held when it was asked");
  gst_object_unref (given);
  gst_query_unref (q);
  fail_unless (first_freed, "the context the query held was leaked");

  gst_object_unref (srcpad);
  gst_harness_teardown (h);
  gst_object_unref (second);
  gst_object_unref (ours);
}
GST_END_TEST;

#ifdef HAVE_CUDA_MEMORY_STREAMS
/* A frame whose kernels fault after it was pushed with its work queued
 * (here: its input memory is not the device's) is an element error at the
 * latest at the next frame or at EOS, and no frame is pushed after it. The
 * fault leaves the context lost: this test runs last. */
GST_START_TEST (test_fault_in_queued_frame_is_an_error)
{
  std::mt19937 rng (5156);
  const int w = 320, hgt = 240;
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_NV12, w, hgt);
  GstCudaContext *ctx = gst_cuda_context_new (0);
  fail_unless (ctx != NULL);
  BusHarness c ("cudahisteq backend=cuda");
  play_in_cuda_context (c.h, ctx);
  const std::string caps = video_caps (GST_VIDEO_FORMAT_NV12, w, hgt,
      "memory:CUDAMemory");
  gst_harness_set_src_caps_str (c.h, caps.c_str ());
  gst_harness_set_sink_caps_str (c.h, caps.c_str ());
  CudaFramePool pool (ctx, info);
  for (int i = 0; i < 3; ++i) {
    GstBuffer *out = gst_harness_push_and_pull (c.h,
        pool.frame (frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
                random_image (rng, w, hgt))));
    fail_unless (out != NULL);
    fail_unless (work_pending (out), "the frame was waited for: the test "
        "needs frames pushed with their work queued");
    gst_buffer_unref (out);
  }

  /* CUDA memory at an address where nothing is mapped, on a stream. */
  GstCudaStream *stream = gst_cuda_stream_new (ctx);
  GstCudaAllocator *alloc = (GstCudaAllocator *)
      gst_allocator_find (GST_CUDA_MEMORY_TYPE_NAME);
  GstMemory *bogus = gst_cuda_allocator_alloc_wrapped (alloc, ctx, stream,
      &info, (CUdeviceptr) 0x1000, NULL, NULL);
  gst_object_unref (alloc);
  gst_cuda_stream_unref (stream);
  fail_unless (bogus != NULL);
  GstBuffer *bad = gst_buffer_new ();
  gst_buffer_append_memory (bad, bogus);
  gst_buffer_add_video_meta_full (bad, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_FORMAT_NV12, w, hgt, GST_VIDEO_INFO_N_PLANES (&info),
      info.offset, info.stride);
  const GstFlowReturn ret = gst_harness_push (c.h, bad);
  /* Queued: the fault comes later. */
  if (ret == GST_FLOW_OK) {
    GstBuffer *out = gst_harness_pull (c.h);
    if (out)
      gst_buffer_unref (out);
  }
  const guint pushed = gst_harness_buffers_received (c.h);
  gst_harness_push_event (c.h, gst_event_new_eos ());
  const std::string error = c.first_error ();
  fail_unless (error.find ("CUDA") != std::string::npos, "no CUDA error by "
      "EOS: '%s'", error.c_str ());
  fail_unless_equals_int (gst_harness_buffers_received (c.h), pushed);
  gst_element_set_state (c.h->element, GST_STATE_NULL);
  gst_object_unref (ctx);
}
GST_END_TEST;
#endif

static Suite *
cuda_memory_gpu_suite (void)
{
  Suite *s = suite_create ("cuda-memory-gpu");
  TCase *tc = tcase_create ("gpu");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_cuda_memory_matches_system_memory);
  tcase_add_test (tc, test_deep_cuda_memory_matches_system_memory);
  tcase_add_test (tc, test_chains_without_host_waits);
  tcase_add_test (tc, test_cuda_memory_reserves_no_host_staging);
  tcase_add_test (tc, test_decode_through_nvh264dec);
  tcase_add_test (tc, test_decode_10bit_through_nvh265dec);
  tcase_add_test (tc, test_nlm_sequences_in_cuda_memory);
  tcase_add_test (tc, test_memory_of_another_device_is_copied);
  tcase_add_test (tc, test_context_query_keeps_context_during_adoption);
  tcase_add_test (tc, test_cuda_wait_blocks_while_elements_run);
#ifdef HAVE_CUDA_MEMORY_STREAMS
  tcase_add_test (tc, test_output_writes_wait_for_readers);
  /* Last: the fault leaves a context lost. */
  tcase_add_test (tc, test_fault_in_queued_frame_is_an_error);
#endif
  return s;
}

int
main (int argc, char **argv)
{
  return test::run_gpu_suite (argc, argv, cuda_memory_gpu_suite,
      "cuda-memory-gpu");
}

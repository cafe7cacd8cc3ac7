/* Helpers shared by the element tests: frames with padded strides, harness
 * wrappers, a GPU probe and an independent reference of cv::equalizeHist. */
#pragma once

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#ifdef HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#else
#include <cuda_runtime.h>
#endif
#include <gst/video/video.h>

#include "stack_dump.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace test {

/* A GRAY8 image stored tightly (stride == width). */
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;

  Image () = default;
  Image (int w, int h) : width (w), height (h), pixels (size_t (w) * h) {}
  uint8_t & at (int x, int y) { return pixels[size_t (y) * width + x]; }
  uint8_t at (int x, int y) const { return pixels[size_t (y) * width + x]; }
};

inline Image
random_image (std::mt19937 & rng, int w, int h, int lo = 0, int hi = 255)
{
  Image img (w, h);
  std::uniform_int_distribution<int> d (lo, hi);
  for (auto & p : img.pixels)
    p = uint8_t (d (rng));
  return img;
}

/* Few distinct levels, unevenly used: exercises empty bins and the
 * first-occupied-bin rule. */
inline Image
few_levels_image (std::mt19937 & rng, int w, int h, std::vector<uint8_t> levels)
{
  Image img (w, h);
  std::discrete_distribution<int> d (levels.size (), 0.0, 1.0,
      [&](double x) { return 1.0 + 3.0 * x; });
  for (auto & p : img.pixels)
    p = levels[size_t (d (rng))];
  return img;
}

inline Image
constant_image (int w, int h, uint8_t v)
{
  Image img (w, h);
  std::fill (img.pixels.begin (), img.pixels.end (), v);
  return img;
}

/* Smooth content, as in real frames: a gradient with a bright disc. */
inline Image
natural_image (int w, int h)
{
  Image img (w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int v = 90 + (40 * x) / w + (20 * y) / h;
      const int dx = x - w / 2, dy = y - h / 3;
      if (int64_t (dx) * dx + int64_t (dy) * dy < int64_t (w) * w / 25)
        v += 50;
      img.at (x, y) = uint8_t (v);
    }
  return img;
}

/* Under compute-sanitizer (CUDAFILTERS_TEST_SKIP_LARGE) frames above 1080p
 * take minutes each and are left out. */
inline bool
skip_large ()
{
  const char *v = g_getenv ("CUDAFILTERS_TEST_SKIP_LARGE");
  return v && *v && *v != '0';
}

/* Transcription of OpenCV's cv::equalizeHist (imgproc, histogram.cpp), kept
 * apart from the plugin's own code so the tests check it independently. */
inline Image
reference_equalize (const Image & src)
{
  int hist[256] = { 0 };
  for (uint8_t p : src.pixels)
    hist[p]++;
  int i = 0;
  while (!hist[i])
    ++i;
  const int total = src.width * src.height;
  Image dst (src.width, src.height);
  if (hist[i] == total) {
    std::fill (dst.pixels.begin (), dst.pixels.end (), uint8_t (i));
    return dst;
  }
  const float scale = (256 - 1.f) / (total - hist[i]);
  int sum = 0;
  uint8_t lut[256] = { 0 };
  for (lut[i++] = 0; i < 256; ++i) {
    sum += hist[i];
    const int r = int (std::nearbyint (sum * scale));
    lut[i] = uint8_t (r < 0 ? 0 : r > 255 ? 255 : r);
  }
  for (size_t k = 0; k < src.pixels.size (); ++k)
    dst.pixels[k] = lut[src.pixels[k]];
  return dst;
}

inline std::string
gray_caps (int w, int h)
{
  return "video/x-raw,format=GRAY8,width=" + std::to_string (w) + ",height=" +
      std::to_string (h) + ",framerate=30/1";
}

/* A buffer laid out as GStreamer's default GRAY8 video info (rows padded to 4
 * bytes); padding bytes are filled with 0xEE so that reading them shows. */
inline GstBuffer *
buffer_from_image (const Image & img)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY8, img.width,
      img.height);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info),
      NULL);
  GstMapInfo map;
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_WRITE));
  memset (map.data, 0xEE, map.size);
  const int stride = GST_VIDEO_INFO_PLANE_STRIDE (&info, 0);
  for (int y = 0; y < img.height; ++y)
    memcpy (map.data + size_t (y) * stride, &img.pixels[size_t (y) * img.width],
        img.width);
  gst_buffer_unmap (buf, &map);
  return buf;
}

inline Image
image_from_buffer (GstBuffer * buf, int w, int h)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_GRAY8, w, h);
  GstVideoFrame frame;
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_READ));
  Image img (w, h);
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
  const uint8_t *data = (const uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
  for (int y = 0; y < h; ++y)
    memcpy (&img.pixels[size_t (y) * w], data + size_t (y) * stride, w);
  gst_video_frame_unmap (&frame);
  return img;
}

/* Pushes one frame through a harness whose caps are already set. */
inline Image
push_pull (GstHarness * h, const Image & img)
{
  GstBuffer *out = gst_harness_push_and_pull (h, buffer_from_image (img));
  fail_unless (out != NULL, "no output buffer for a %dx%d frame", img.width,
      img.height);
  Image result = image_from_buffer (out, img.width, img.height);
  gst_buffer_unref (out);
  return result;
}

/* CUDAFILTERS_TEST_QUICK=1 is for runs under valgrind, AddressSanitizer or
 * compute-sanitizer: tests that honour it use smaller frames and fewer of
 * them, for the same cases. */
inline bool
quick ()
{
  const char *v = g_getenv ("CUDAFILTERS_TEST_QUICK");
  return v && *v && *v != '0';
}

/* True when a CUDA device can be opened (through GStreamer's CUDA library
 * where the plugin uses it). */
inline bool
gpu_available ()
{
#ifdef HAVE_GST_CUDA
  if (!gst_cuda_load_library ())
    return false;
  GstCudaContext *ctx = gst_cuda_context_new (0);
  if (!ctx)
    return false;
  gst_object_unref (ctx);
  return true;
#else
  int count = 0;
  const bool ok = cudaGetDeviceCount (&count) == cudaSuccess && count > 0;
  (void) cudaGetLastError ();
  return ok;
#endif
}

/* Tests built twice from one source: without TEST_GPU (the cpu suite) the
 * elements run with backend=cpu; with TEST_GPU=1 (the gpu suite, the test's
 * name ending in -gpu) with backend=cuda, and the test exits 77 (skipped)
 * without a usable GPU. */
#ifndef TEST_GPU
#define TEST_GPU 0
#endif

static const char *const kBackend = TEST_GPU ? "cuda" : "cpu";

/* The name of such a test's suite: "name" or "name-gpu". */
#define TEST_SUITE_NAME(name) (TEST_GPU ? name "-gpu" : name)

#ifdef HAVE_GST_CUDA
/* Offers `ctx` to `element` (every element of a bin) as the application's
 * CUDA context. */
inline void
share_cuda_context (GstElement * element, GstCudaContext * ctx)
{
  GstContext *shared = gst_context_new_cuda_context (ctx);
  gst_element_set_context (element, shared);
  gst_context_unref (shared);
}

/* A harness starts its element at once, and the element takes its context
 * when it starts: stopped, given `ctx`, and started again. */
inline void
play_in_cuda_context (GstHarness * h, GstCudaContext * ctx)
{
  fail_unless (gst_element_set_state (h->element, GST_STATE_NULL) ==
      GST_STATE_CHANGE_SUCCESS);
  share_cuda_context (h->element, ctx);
  gst_harness_play (h);
}
#endif

#ifdef HAVE_GST_CUDA
/* The CUDA context the gpu suite's elements share, made once per process.
 * An element that finds none makes its own when it starts: about 0.2 s on
 * an H100, and seconds while other test processes make theirs. Made per
 * harness, that was most of the gpu suite's time (docs/tests.md). Cases
 * about an element's own context, a context lost to a fault or memory of
 * another context make theirs (Context::kOwn, play_in_cuda_context). */
inline GstCudaContext *&
shared_test_context_slot ()
{
  static GstCudaContext *ctx = nullptr;
  return ctx;
}

inline GstCudaContext *
shared_test_context ()
{
  GstCudaContext *&ctx = shared_test_context_slot ();
  if (!ctx && gst_cuda_load_library ())
    ctx = gst_cuda_context_new (0);
  return ctx;
}
#endif

/* Drops the shared context once every element is gone (GStreamer's leaks
 * tracer, which the soak test runs, reports objects alive at exit). */
inline void
release_shared_test_context ()
{
#ifdef HAVE_GST_CUDA
  gst_clear_object (&shared_test_context_slot ());
#endif
}

/* Whether new_harness gives its elements shared_test_context (): in the gpu
 * suite. */
enum class Context { kShared, kOwn };

/* Gives `element` (every element of a bin) the test's shared CUDA context
 * where this build runs the CUDA backend and `context` asks for it. */
inline void
share_test_context (GstElement * element, Context context)
{
#ifdef HAVE_GST_CUDA
  if (!TEST_GPU || context == Context::kOwn)
    return;
  GstCudaContext *ctx = shared_test_context ();
  fail_unless (ctx != nullptr, "no CUDA context for the tests");
  share_cuda_context (element, ctx);
#else
  (void) element;
  (void) context;
#endif
}

/* A harness of `launch`, as gst_harness_new_parse makes it (the elements in
 * a bin whose unlinked pads become the harness's), whose elements share the
 * test's CUDA context in the gpu suite. */
inline GstHarness *
new_harness (const std::string & launch, Context context = Context::kShared)
{
  GError *err = nullptr;
  GstElement *e = gst_parse_bin_from_description_full (launch.c_str (), TRUE,
      nullptr, GST_PARSE_FLAG_NONE, &err);
  fail_unless (e != nullptr && err == nullptr, "%s: %s", launch.c_str (),
      err ? err->message : "");
  share_test_context (e, context);
  GstHarness *h = gst_harness_new_with_element (e, "sink", "src");
  gst_object_unref (e);
  return h;
}

/* Stops and restarts the element of `h`, offering it the test's context
 * again, as a bin does at each start (it answers the element's
 * need-context message). */
inline void
restart_harness (GstHarness * h)
{
  fail_unless (gst_element_set_state (h->element, GST_STATE_NULL) ==
      GST_STATE_CHANGE_SUCCESS);
  share_test_context (h->element, Context::kShared);
  gst_harness_play (h);
}

/* -------------------------------------------- everyday and full sweeps */

/* The gpu suite samples the cross products of its sweeps (sizes x
 * settings x formats); CUDAFILTERS_TEST_FULL=1 (the gpu-full suite) runs
 * them whole. Every element, format, memory kind and path is in both:
 * what a sample leaves out is repetition. The cpu suite, whose sweeps are
 * smaller, runs them whole, but for its runs under the memory checkers
 * (CUDAFILTERS_TEST_QUICK), which sample them too. */
inline bool
full ()
{
  const char *v = g_getenv ("CUDAFILTERS_TEST_FULL");
  return (v && *v && *v != '0') || (!TEST_GPU && !quick ());
}

/* The seed of the samples: fixed, so a run can be replayed, or
 * CUDAFILTERS_TEST_SEED. Printed once per process. */
inline uint32_t
sample_seed ()
{
  static const uint32_t seed = [] {
    const char *v = g_getenv ("CUDAFILTERS_TEST_SEED");
    const uint32_t s = v && *v ? uint32_t (g_ascii_strtoull (v, nullptr, 10))
        : 20261128u;
    g_print ("cross products %s (CUDAFILTERS_TEST_SEED=%u; "
        "CUDAFILTERS_TEST_FULL=1 runs them whole)\n", full ()? "run whole" :
        "sampled", s);
    return s;
  }();
  return seed;
}

/* A number for `what` under the seed (FNV-1a, then mixed): the same on every
 * machine, whatever order the cases come in. */
inline uint32_t
sample_hash (const std::string & what)
{
  uint32_t h = sample_seed () ^ 2166136261u;
  for (unsigned char c : what)
    h = (h ^ c) * 16777619u;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return h;
}

/* Whether the case named `what` of a cross product is in the sample: about
 * `fraction` of the cases; every case under CUDAFILTERS_TEST_FULL. */
inline bool
sampled (const std::string & what, double fraction)
{
  return full () || sample_hash (what) % 10000u < uint32_t (fraction * 10000);
}

/* `k` of the `n` indices [0, n), in order: all under
 * CUDAFILTERS_TEST_FULL or where k >= n; the first and the last always. */
inline std::vector<int>
sample_indices (int n, int k, const std::string & what)
{
  std::vector<int> all (n);
  for (int i = 0; i < n; ++i)
    all[i] = i;
  if (full () || k >= n)
    return all;
  std::mt19937 rng (sample_hash (what));
  std::vector<int> middle (all.begin () + 1, all.end () - 1);
  std::shuffle (middle.begin (), middle.end (), rng);
  std::vector<int> keep = {0, n - 1};
  keep.insert (keep.end (), middle.begin (), middle.begin () + std::max (0, k - 2));
  std::sort (keep.begin (), keep.end ());
  return keep;
}

/* Whether cell (row, col) of a cross product is in the sample: the columns
 * col with (row + col + seed) % stride == 0, so each row keeps one column
 * in `stride` and each column is kept on one row in `stride` (on some row
 * wherever there are `stride` rows or more). Every cell under
 * CUDAFILTERS_TEST_FULL. */
inline bool
in_grid_sample (int row, int col, int stride)
{
  return full () || (uint32_t (row) + uint32_t (col) + sample_seed ()) %
      uint32_t (stride) == 0;
}

/* Frames of 720p and up cost the most on the CPU (frame, reference, CPU
 * backend): the everyday suite keeps one cell in `stride` of a sweep's
 * large frames (in_grid_sample) and every small one. */
inline bool
size_in_sample (int w, int h, int row, int col, int stride = 4)
{
  return double (w) * h < 1280.0 * 720 || in_grid_sample (row, col, stride);
}

inline GstHarness *
harness_for (const char *launch, int w, int h)
{
  GstHarness *harness = new_harness (launch);
  gst_harness_set_src_caps_str (harness, gray_caps (w, h).c_str ());
  return harness;
}

/* One frame through a fresh harness of `launch`. */
inline Image
push_pull_image (const std::string & launch, const Image & img)
{
  GstHarness *h = harness_for (launch.c_str (), img.width, img.height);
  Image out = push_pull (h, img);
  gst_harness_teardown (h);
  return out;
}

/* Formats whose first plane the elements filter; the rest is carried. */
static const GstVideoFormat kFormats[] = {
  GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YV12,
  GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_NV21, GST_VIDEO_FORMAT_Y42B,
  GST_VIDEO_FORMAT_Y444,
};

inline std::string
video_caps (GstVideoFormat fmt, int w, int h, const char *features = nullptr)
{
  return std::string ("video/x-raw") + (features ? std::string ("(") +
      features + ")" : "") + ",format=" + gst_video_format_to_string (fmt) +
      ",width=" + std::to_string (w) + ",height=" + std::to_string (h) +
      ",framerate=30/1";
}

/* A frame as one tight Image per plane (bytes per row x rows). */
struct PlanarFrame {
  GstVideoInfo info;
  std::vector<Image> planes;
};

inline Image
plane_shape (const GstVideoInfo & info, guint p)
{
  gint comps[GST_VIDEO_MAX_COMPONENTS];
  gst_video_format_info_component (info.finfo, p, comps);
  return Image (GST_VIDEO_INFO_COMP_WIDTH (&info, comps[0]) *
      GST_VIDEO_INFO_COMP_PSTRIDE (&info, comps[0]),
      GST_VIDEO_INFO_COMP_HEIGHT (&info, comps[0]));
}

/* Luma (plane 0) from `luma`; the other planes random. */
inline PlanarFrame
frame_with_luma (std::mt19937 & rng, GstVideoFormat fmt, const Image & luma)
{
  PlanarFrame f;
  gst_video_info_set_format (&f.info, fmt, luma.width, luma.height);
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&f.info); ++p) {
    Image img = plane_shape (f.info, p);
    img = p == 0 ? luma : random_image (rng, img.width, img.height);
    f.planes.push_back (img);
  }
  return f;
}

/* Writes @f into @buf (mapped on the CPU, in @f's layout). */
inline void
write_frame (GstBuffer * buf, const PlanarFrame & f)
{
  GstVideoInfo info = f.info;
  GstVideoFrame frame;
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
  for (guint p = 0; p < f.planes.size (); ++p)
    for (int y = 0; y < f.planes[p].height; ++y)
      memcpy ((uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&frame, p) +
          size_t (y) * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p),
          &f.planes[p].pixels[size_t (y) * f.planes[p].width],
          f.planes[p].width);
  gst_video_frame_unmap (&frame);
}

/* A buffer in GStreamer's default layout; padding bytes set to 0xEE. */
inline GstBuffer *
buffer_from_frame (const PlanarFrame & f)
{
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&f.info),
      NULL);
  gst_buffer_memset (buf, 0, 0xEE, GST_VIDEO_INFO_SIZE (&f.info));
  write_frame (buf, f);
  return buf;
}

inline PlanarFrame
frame_from_buffer (GstBuffer * buf, const GstVideoInfo & info)
{
  PlanarFrame f;
  f.info = info;
  GstVideoFrame frame;
  fail_unless (gst_video_frame_map (&frame, &f.info, buf, GST_MAP_READ));
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&info); ++p) {
    Image img = plane_shape (info, p);
    for (int y = 0; y < img.height; ++y)
      memcpy (&img.pixels[size_t (y) * img.width],
          (const uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&frame, p) +
          size_t (y) * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p), img.width);
    f.planes.push_back (img);
  }
  gst_video_frame_unmap (&frame);
  return f;
}

/* One frame through a fresh harness of `launch`. */
inline PlanarFrame
push_pull_frame (const char *launch, const PlanarFrame & in)
{
  GstHarness *h = new_harness (launch);
  gst_harness_set_src_caps_str (h, video_caps (GST_VIDEO_INFO_FORMAT (&in.info),
          GST_VIDEO_INFO_WIDTH (&in.info), GST_VIDEO_INFO_HEIGHT (&in.info)).c_str ());
  GstBuffer *out = gst_harness_push_and_pull (h, buffer_from_frame (in));
  fail_unless (out != NULL);
  PlanarFrame result = frame_from_buffer (out, in.info);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  return result;
}

/* Reports the first differing pixel, so a failure says where. */
inline void
assert_images_equal (const Image & got, const Image & want, const char *what)
{
  fail_unless_equals_int (got.width, want.width);
  fail_unless_equals_int (got.height, want.height);
  for (int y = 0; y < want.height; ++y)
    for (int x = 0; x < want.width; ++x)
      if (got.at (x, y) != want.at (x, y))
        fail ("%s (%dx%d): pixel (%d,%d) is %d, expected %d", what, want.width,
            want.height, x, y, got.at (x, y), want.at (x, y));
}

/* Reflect-101 index into [0, n) for any distance outside it (OpenCV's
 * BORDER_REFLECT_101, reflected again while still outside). */
inline int
mirror (int i, int n)
{
  if (n == 1)
    return 0;
  while (i < 0 || i >= n)
    i = i < 0 ? -i : 2 * n - 2 - i;
  return i;
}

/* main() of a gpu-suite test: exit 77 (skipped) without a usable GPU. */
inline int
run_gpu_suite (int argc, char **argv, Suite * (*make_suite) (void),
    const char *name)
{
  gst_check_init (&argc, &argv);
  install_stack_dumps ();
  if (!gpu_available ()) {
    g_print ("no usable CUDA device: skipping %s\n", name);
    return 77;
  }
  const int failed = gst_check_run_suite (make_suite (), name, __FILE__);
  release_shared_test_context ();
  return failed;
}

/* The GLib warnings logged while it lives (a property refused, with why),
 * kept instead of failing the test. */
struct CapturedWarnings {
  std::vector < std::string > texts;
  guint handler = 0;
  CapturedWarnings () {
    handler = g_log_set_handler (NULL, G_LOG_LEVEL_WARNING,
        [](const gchar *, GLogLevelFlags, const gchar * message, gpointer data) {
          static_cast < CapturedWarnings * >(data)->texts.push_back (message);
        }, this);
  }
  ~CapturedWarnings () {
    g_log_remove_handler (NULL, handler);
  }
  /* The one warning logged since the last take. */
  std::string take () {
    fail_unless_equals_int (texts.size (), 1);
    std::string t = texts[0];
    texts.clear ();
    return t;
  }
};

/* A launch line of `factory` on this build's backend, then `props`
 * (" name=value ..."). */
inline std::string
on_backend (const std::string & factory, const std::string & props = "")
{
  return factory + " backend=" + kBackend + props;
}

/* main() of a test built twice: its suite (named with TEST_SUITE_NAME) on
 * the CPU backend, or on the CUDA backend where a GPU is usable (77
 * otherwise). */
inline int
run_suite (int argc, char **argv, Suite * (*make_suite) (void),
    const char *name)
{
  if (TEST_GPU)
    return run_gpu_suite (argc, argv, make_suite, name);
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (make_suite (), name, __FILE__);
}

/* Frames through one element of `launch` (of this build's backend),
 * renegotiated from frame to frame: each equals `reference (img)` where
 * `has_reference (img)` (every frame without it), and on the GPU also what a
 * fresh element of `cpu_launch`, the CPU backend, makes of it, pixel for
 * pixel. On the CPU a frame without a reference is left out. */
inline void
check_frames_through (const std::string & launch,
    const std::string & cpu_launch, const std::vector<Image> & frames,
    const std::function<Image (const Image &)> & reference, const char *what,
    const std::function<bool (const Image &)> & has_reference = nullptr)
{
  GstHarness *h = new_harness (launch);
  for (const Image & img : frames) {
    const bool checked = !has_reference || has_reference (img);
    if (!TEST_GPU && !checked)
      continue;
    gst_harness_set_src_caps_str (h, gray_caps (img.width,
            img.height).c_str ());
    const Image got = push_pull (h, img);
    if (TEST_GPU) {
      GstHarness *cpu = harness_for (cpu_launch.c_str (), img.width,
          img.height);
      assert_images_equal (got, push_pull (cpu, img), what);
      gst_harness_teardown (cpu);
    }
    if (checked)
      assert_images_equal (got, reference (img), what);
  }
  gst_harness_teardown (h);
}

/* One element of `launch` through a stream whose frame size changes at each
 * of `sizes`: every caps change reconfigures it, and both frames of each
 * size (random in [20, 90], then [20, second_hi]) must equal `reference`. */
inline void
check_renegotiation_mid_stream (const std::string & launch,
    const std::vector<std::pair<int, int>> & sizes,
    const std::function<Image (const Image &)> & reference, int second_hi)
{
  std::mt19937 rng (5);
  GstHarness *h = harness_for (launch.c_str (), 64, 48);
  for (const auto & sz : sizes) {
    gst_harness_set_src_caps_str (h, gray_caps (sz.first,
            sz.second).c_str ());
    for (int i = 0; i < 2; ++i) {
      Image img = random_image (rng, sz.first, sz.second, 20,
          i == 0 ? 90 : second_hi);
      assert_images_equal (push_pull (h, img), reference (img),
          "after renegotiation");
    }
  }
  gst_harness_teardown (h);
}

/* Chroma planes must come out byte-identical. */
inline void
assert_chroma_carried (const PlanarFrame & got, const PlanarFrame & in)
{
  fail_unless_equals_int (got.planes.size (), in.planes.size ());
  for (size_t p = 1; p < in.planes.size (); ++p)
    assert_images_equal (got.planes[p], in.planes[p], "chroma plane");
}

/* Each of `names` is a documented property of `e` that may change while
 * playing, and with `controllable` one a GstController may drive. */
inline void
assert_live_properties (GstElement * e,
    std::initializer_list<const char *> names, bool controllable)
{
  for (const char *name : names) {
    GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        name);
    fail_unless (pspec != NULL, "no property %s", name);
    fail_unless (g_param_spec_get_blurb (pspec) != NULL);
    fail_unless (pspec->flags & GST_PARAM_MUTABLE_PLAYING, "%s not live", name);
    if (controllable)
      fail_unless (pspec->flags & GST_PARAM_CONTROLLABLE,
          "%s not controllable", name);
  }
}

inline void
assert_hardware_filter_klass (GstElement * e)
{
  const gchar *klass = gst_element_class_get_metadata (GST_ELEMENT_GET_CLASS (e),
      GST_ELEMENT_METADATA_KLASS);
  fail_unless_equals_string (klass, "Filter/Effect/Video/Hardware");
}

/* Releases a bus once the elements posting to it are released. Messages
 * still queued hold references to their sources, and an element holds its
 * bus: flushing breaks that cycle. */
inline void
release_bus (GstBus * bus)
{
  gst_bus_set_flushing (bus, TRUE);
  gst_object_unref (bus);
}

/* One element (a launch line such as "cudahisteq backend=cpu") alone in a
 * harness, with a bus of its own so its errors and warnings can be read. */
struct BusHarness {
  GstHarness *h = nullptr;
  GstBus *bus = nullptr;

  explicit BusHarness (const std::string & launch,
      Context context = Context::kShared) {
    GError *err = nullptr;
    GstElement *e = gst_parse_launch (launch.c_str (), &err);
    fail_unless (e != nullptr && err == nullptr, "%s: %s", launch.c_str (),
        err ? err->message : "");
    share_test_context (e, context);
    bus = gst_bus_new ();
    gst_element_set_bus (e, bus);
    h = gst_harness_new_with_element (e, "sink", "src");
    gst_object_unref (e);
  }
  ~BusHarness () {
    gst_harness_teardown (h);
    release_bus (bus);
  }
  int count (GstMessageType type) {
    int n = 0;
    while (GstMessage * m = gst_bus_pop_filtered (bus, type)) {
      ++n;
      gst_message_unref (m);
    }
    return n;
  }
  /* The text and details of the first error on the bus, or "" if none. */
  std::string first_error () {
    std::string text;
    if (GstMessage * m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR)) {
      GError *e = nullptr;
      gchar *debug = nullptr;
      gst_message_parse_error (m, &e, &debug);
      text = std::string (e->message) + " | " + (debug ? debug : "");
      g_error_free (e);
      g_free (debug);
      gst_message_unref (m);
    }
    return text;
  }
};

/* The pool the element behind harness `h` proposes for `caps`, configured
 * with video meta (so it may pad strides) and active, as an upstream that
 * takes it would use it. */
inline GstBufferPool *
take_proposed_pool (GstHarness * h, GstCaps * caps)
{
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  fail_unless (gst_pad_peer_query (h->srcpad, query));
  fail_unless (gst_query_get_n_allocation_pools (query) > 0,
      "no pool proposed on the GPU path");
  GstBufferPool *pool = NULL;
  gst_query_parse_nth_allocation_pool (query, 0, &pool, NULL, NULL, NULL);
  fail_unless (pool != NULL);
  fail_unless (gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE,
          NULL));
  gst_query_unref (query);

  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  return pool;
}

/* Upstream that takes the pool the element proposes writes into pinned
 * memory; frames must come out the same, with padded strides from the video
 * meta, and pool buffers may outlive the element. A width that is a multiple
 * of 16 has 16-byte aligned rows, which the engine streams (its kernels read
 * and write the pinned frames directly); 1283 has 4-byte aligned rows, which
 * go through copies. */
inline void
check_proposed_pinned_pool (const char *launch, int w, int hgt,
    Image (*reference) (const Image &))
{
  std::mt19937 rng (21);
  GstHarness *gpu = harness_for (launch, w, hgt);

  GstCaps *caps = gst_caps_from_string (gray_caps (w, hgt).c_str ());
  GstBufferPool *pool = take_proposed_pool (gpu, caps);

  GstVideoInfo info;
  gst_video_info_from_caps (&info, caps);
  GstBuffer *kept = NULL;
  for (int i = 0; i < 6; ++i) {
    Image img = random_image (rng, w, hgt, 10 * i, 100 + 20 * i);
    GstBuffer *buf = NULL;
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf, NULL),
        GST_FLOW_OK);
    GstVideoFrame frame;
    fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
    for (int y = 0; y < hgt; ++y)
      memcpy ((uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0) +
          size_t (y) * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0),
          &img.pixels[size_t (y) * w], w);
    gst_video_frame_unmap (&frame);
    if (i == 0)
      kept = gst_buffer_ref (buf);
    GstBuffer *out = gst_harness_push_and_pull (gpu, buf);
    fail_unless (out != NULL);
    assert_images_equal (image_from_buffer (out, w, hgt), reference (img),
        "pinned input");
    gst_buffer_unref (out);
  }
  gst_harness_teardown (gpu);

  /* The element is gone; its pinned memory must still be usable and freed
   * cleanly. */
  GstMapInfo map;
  fail_unless (gst_buffer_map (kept, &map, GST_MAP_READ));
  gst_buffer_unmap (kept, &map);
  gst_buffer_unref (kept);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  gst_caps_unref (caps);
}

/* Sets @caps_str on the harness's source pad where the caps there differ:
 * a caps event only where the caps change. */
inline void
set_caps_if_changed (GstHarness * h, const std::string & caps_str)
{
  GstCaps *caps = gst_caps_from_string (caps_str.c_str ());
  GstCaps *current = gst_pad_get_current_caps (h->srcpad);
  if (current == NULL || !gst_caps_is_equal (current, caps))
    gst_harness_set_src_caps (h, gst_caps_ref (caps));
  gst_caps_unref (caps);
  if (current != NULL)
    gst_caps_unref (current);
}

}  // namespace test

/* cudasharpen against the definition written out in sharpen_reference.h
 * (itself checked against OpenCV by scripts/check-against-opencv.py), 8- to
 * 16-bit, every radius. Built twice from this file: `cudasharpen` runs
 * every case on the CPU backend (everywhere, no GPU needed); `cudasharpen-gpu`
 * runs them on the CUDA backend, on frames up to 8K, also against the CPU
 * backend bit for bit (the definition where it is affordable), adds the
 * pinned pool the element proposes, and exits 77 (skipped) where no GPU is
 * usable. Frames in CUDA memory: pipelines/cuda_memory_gpu.cpp; what every
 * element does alike: cudafiltersbase.cpp; the Gaussian taps and the CPU
 * path's instruction sets: libs/engines.cpp. */
#include "sharpen_reference.h"

#include <cudafilters/sharpen_params.h>

using namespace test;

static const int kSizes[][2] = {
  {1, 1}, {2, 1}, {1, 7}, {3, 3}, {15, 2}, {16, 3}, {17, 5}, {31, 31},
#if TEST_GPU
  {33, 1},
#endif
  {64, 48},
#if TEST_GPU
  {65, 17},
#endif
  {100, 1}, {1, 100},
#if !TEST_GPU
  {97, 61},
#endif
  {385, 289},
#if TEST_GPU
  {641, 479}, {1280, 720}, {1920, 1080}, {1921, 1081}, {3840, 2160},
  {7680, 4320},
#endif
};

/* Whether the written-out definition, which costs taps^2 per pixel, is
 * checked on a w x h frame: on the CPU every frame of narrow blurs and
 * small frames of wide ones (the others are left out); on the GPU, whose
 * every frame the CPU backend checks, small frames only. */
static bool
definition_affordable (const SharpenSettings & s, int w, int h)
{
#if TEST_GPU
  return double (w) * h <= (s.radius <= 3 ? 65 * 17 : 33);
#else
  return s.radius <= 3.0 || double (w) * h <= 64 * 48;
#endif
}

/* One element for every frame: every frame equals the definition where it
 * is affordable and, on the GPU, the CPU backend's output. */
static void
check_frames (const SharpenSettings & s, const std::vector<Image> & frames,
    const char *what)
{
  const std::string label = s.launch (kBackend) + ": " + what;
  check_frames_through (s.launch (kBackend), s.launch ("cpu"), frames,
      [&](const Image & img) { return reference_sharpen (img, s); },
      label.c_str (), [&](const Image & img) {
        return definition_affordable (s, img.width, img.height);
      });
}

GST_START_TEST (test_random_and_natural_frames)
{
  std::mt19937 rng (2024);
  for (int si = 0; si < int (G_N_ELEMENTS (kSharpenSets)); ++si) {
    const SharpenSettings & s = kSharpenSets[si];
    std::vector<Image> frames;
    for (int zi = 0; zi < int (G_N_ELEMENTS (kSizes)); ++zi) {
      const int *sz = kSizes[zi];
      if ((skip_large () && sz[0] * sz[1] > 1921 * 1081) ||
          !size_in_sample (sz[0], sz[1], si, zi) || (quick () &&
              !in_grid_sample (si, zi, 2)))
        continue;
      frames.push_back (random_image (rng, sz[0], sz[1]));
      frames.push_back (random_image (rng, sz[0], sz[1], 100, 140));
      frames.push_back (natural_image (sz[0], sz[1]));
    }
    for (int v : {0, 128, 255})
      frames.push_back (constant_image (37, 23, uint8_t (v)));
    frames.push_back (constant_image (640, 360, 255));
    check_frames (s, frames, "random/natural/constant");
  }
}
GST_END_TEST;

/* Every radius the element takes, in steps of 0.1, each its own taps (the
 * everyday gpu suite: 16 of them, the narrowest and widest among them). */
GST_START_TEST (test_every_radius)
{
  std::mt19937 rng (9);
  const std::vector<Image> frames = { random_image (rng, 203, 151),
    natural_image (97, 300) };
  for (int k : sample_indices (160, 16, "radius sweep")) {
    const int i = k + 1;
    SharpenSettings s;
    s.amount = 1.7;
    s.radius = i * 0.1;
    check_frames (s, frames, "radius sweep");
  }
}
GST_END_TEST;

/* Worked by hand. 3x1 frame [10 50 20]; the 3x3 kernel with mirrored
 * borders (column -1 is column 1, rows above and below are the row):
 * x=0: 5*10 - 50 - 50 - 10 - 10 = -70 -> 0; x=1: 250 - 10 - 20 - 100 = 120;
 * x=2: 100 - 50 - 50 - 40 = -40 -> 0. Unsharp with amount 0 is the
 * identity, and a threshold of 255 keeps every pixel of a frame whose blur
 * stays within 254 levels of it. */
GST_START_TEST (test_hand_computed_frames)
{
  Image img (3, 1);
  img.pixels = {10, 50, 20};
  Image want (3, 1);
  want.pixels = {0, 120, 0};
  GstHarness *h = harness_for (on_backend ("cudasharpen",
          " kernel=laplacian-3x3").c_str (), 3, 1);
  assert_images_equal (push_pull (h, img), want, "laplacian by hand");
  gst_harness_teardown (h);

  std::mt19937 rng (3);
  const Image noisy = random_image (rng, 45, 31, 1, 254);
  for (const std::string & launch : {on_backend ("cudasharpen",
              " amount=0 radius=3"), on_backend ("cudasharpen",
              " amount=5 threshold=255")}) {
    h = harness_for (launch.c_str (), 45, 31);
    assert_images_equal (push_pull (h, noisy), noisy, launch.c_str ());
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* One stream, several sizes: each caps change reconfigures the element. */
GST_START_TEST (test_renegotiation_mid_stream)
{
  check_renegotiation_mid_stream (on_backend ("cudasharpen"), { {64, 48},
        {33, 17}, {641, 479}, {1, 1}, {7, 300}, {64, 48} },
      [](const Image & img) { return reference_sharpen (img,
            SharpenSettings ()); }, 130);
}
GST_END_TEST;

/* Every property changes while playing: each frame follows the values set
 * before it. */
GST_START_TEST (test_live_property_changes)
{
  std::mt19937 rng (6);
  GstHarness *h = harness_for (on_backend ("cudasharpen").c_str (), 61, 43);
  GstElement *e = gst_harness_find_element (h, "cudasharpen");
  for (const SharpenSettings & s : kSharpenSets) {
    gst_util_set_object_arg (G_OBJECT (e), "kernel", s.kernel);
    gst_harness_set (h, "cudasharpen", "amount", s.amount, "radius", s.radius,
        "threshold", s.threshold, NULL);
    Image img = natural_image (61, 43);
    Image noisy = random_image (rng, 61, 43, 40, 120);
    const std::string label = s.launch (kBackend) + ": live change";
    assert_images_equal (push_pull (h, img), reference_sharpen (img, s),
        label.c_str ());
    assert_images_equal (push_pull (h, noisy), reference_sharpen (noisy, s),
        label.c_str ());
  }
  gst_object_unref (e);
  gst_harness_teardown (h);
}
GST_END_TEST;

#if !TEST_GPU
/* No backend is involved: the cpu build checks the properties. */
GST_START_TEST (test_properties)
{
  GstElement *e = gst_element_factory_make ("cudasharpen", NULL);
  gdouble amount = 0, radius = 0;
  gint threshold = -1, kernel = -1;
  g_object_get (e, "amount", &amount, "radius", &radius, "threshold",
      &threshold, "kernel", &kernel, NULL);
  fail_unless (amount == 1.0);
  fail_unless (radius == 1.0);
  fail_unless_equals_int (threshold, 0);
  fail_unless_equals_int (kernel, (gint) cudafilters::SharpenKernel::kUnsharp);

  assert_live_properties (e, {"kernel", "amount", "radius", "threshold"},
      true);
  GParamSpec *r = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      "radius");
  fail_unless (G_PARAM_SPEC_DOUBLE (r)->minimum == cudafilters::kSharpenMinRadius);
  fail_unless (G_PARAM_SPEC_DOUBLE (r)->maximum == cudafilters::kSharpenMaxRadius);

  gst_util_set_object_arg (G_OBJECT (e), "kernel", "laplacian-3x3");
  g_object_get (e, "kernel", &kernel, NULL);
  fail_unless_equals_int (kernel,
      (gint) cudafilters::SharpenKernel::kLaplacian3x3);

  assert_hardware_filter_klass (e);
  gst_object_unref (e);
}
GST_END_TEST;

/* Invalid values are refused with a warning; the previous value stays. */
GST_START_TEST (test_invalid_values_are_refused)
{
  GstElement *e = gst_element_factory_make ("cudasharpen", NULL);
  g_object_set (e, "amount", 2.5, "radius", 3.0, "threshold", 7, NULL);
  ASSERT_WARNING (g_object_set (e, "amount", -1.0, NULL));
  ASSERT_WARNING (g_object_set (e, "amount", (double) NAN, NULL));
  ASSERT_WARNING (g_object_set (e, "radius", 0.0, NULL));
  ASSERT_WARNING (g_object_set (e, "radius", 100.0, NULL));
  ASSERT_WARNING (g_object_set (e, "radius", (double) NAN, NULL));
  ASSERT_WARNING (g_object_set (e, "threshold", 256, NULL));
  gdouble amount = 0, radius = 0;
  gint threshold = -1;
  g_object_get (e, "amount", &amount, "radius", &radius, "threshold",
      &threshold, NULL);
  fail_unless (amount == 2.5);
  fail_unless (radius == 3.0);
  fail_unless_equals_int (threshold, 7);
  gst_object_unref (e);
}
GST_END_TEST;
#endif

/* Every format: luma as a GRAY8 frame would be (the definition, and on the
 * GPU the CPU backend), chroma byte-identical. */
GST_START_TEST (test_formats_filter_luma_only)
{
  std::mt19937 rng (77);
  const int sizes[][2] = { {33, 17}, {64, 48}, {640, 360}, {2, 2} };
  for (const SharpenSettings & s : {kSharpenSets[0], kSharpenSets[9]})
    for (GstVideoFormat fmt : kFormats)
      for (const auto & sz : sizes)
        for (bool natural : {false, true}) {
          PlanarFrame in = frame_with_luma (rng, fmt, natural ?
              natural_image (sz[0], sz[1]) : random_image (rng, sz[0], sz[1],
                  30, 150));
          PlanarFrame out = push_pull_frame (s.launch (kBackend).c_str (), in);
#if TEST_GPU
          PlanarFrame want = push_pull_frame (s.launch ("cpu").c_str (), in);
          assert_images_equal (out.planes[0], want.planes[0],
              gst_video_format_to_string (fmt));
#endif
          assert_images_equal (out.planes[0], reference_sharpen (in.planes[0],
                  s), gst_video_format_to_string (fmt));
          assert_chroma_carried (out, in);
        }
}
GST_END_TEST;

/* Deep formats against the definition with OpenCV's CV_16U Gaussian (its
 * 2-D sum costs (8 radius)^2 per pixel: on the CPU wide blurs on the
 * smallest frames only, on the GPU small frames only) and, on the GPU,
 * against the CPU backend bit for bit, sizes around the 64-sample deep tile
 * to 1080p. Every setting, one element per setting (and on the GPU one CPU
 * element beside it); chroma carried. */
GST_START_TEST (test_deep_formats)
{
#if TEST_GPU
  std::mt19937 rng (1618);
  const int sizes[][2] = { {1, 1}, {2, 3}, {33, 17}, {65, 17}, {641, 479},
    {1921, 1081} };
#else
  std::mt19937 rng (1616);
  const int sizes[][2] = { {1, 1}, {3, 3}, {17, 5}, {64, 48}, {97, 61} };
#endif
  for (int fi = 0; fi < int (G_N_ELEMENTS (kDeepFormats)); ++fi) {
    const GstVideoFormat fmt = kDeepFormats[fi];
    const int bits = deep_layout (fmt).bits;
    for (int si = 0; si < int (G_N_ELEMENTS (kSharpenSets)); ++si) {
      const SharpenSettings & s = kSharpenSets[si];
      /* Everyday: every format and setting, a third of the pairs. */
      if (!in_grid_sample (fi, si, 3))
        continue;
      GstHarness *h = new_harness (s.launch (kBackend));
#if TEST_GPU
      GstHarness *cpu = new_harness (s.launch ("cpu"));
#endif
      const std::string what = s.launch (kBackend) + " " +
          gst_video_format_to_string (fmt);
      for (const auto & sz : sizes) {
#if TEST_GPU
        if (skip_large () && sz[0] * sz[1] > 20000)
          continue;
        const bool definition = sz[0] * sz[1] <= (s.radius <= 3 ? 65 * 17 : 6);
#else
        if (s.radius > 3.0 && sz[0] * sz[1] > 17 * 5)
          continue;
        const bool definition = true;
#endif
        for (const Image16 & levels : deep_scenes (rng, sz[0], sz[1], bits)) {
          const Image16 got = luma_levels_in (h, fmt, levels, rng);
#if TEST_GPU
          assert_images16_equal (got, luma_levels_in (cpu, fmt, levels, rng),
              what);
#endif
          if (definition)
            assert_images16_equal (got, reference_sharpen_levels (levels, s,
                    bits), what + " (definition)");
        }
      }
#if TEST_GPU
      gst_harness_teardown (cpu);
#endif
      gst_harness_teardown (h);
    }
  }
}
GST_END_TEST;

/* One harness through 8-bit, 16-bit, 10-bit and back. */
GST_START_TEST (test_depth_renegotiation)
{
  std::mt19937 rng (1617);
  const SharpenSettings s { "unsharp", 1.5, 1.2, 3 };
  GstHarness *h = new_harness (s.launch (kBackend));
  for (GstVideoFormat fmt : kDepthChanges) {
    const int bits = luma_bits (fmt);
    const Image16 levels = thermal_like_image (rng, 45, 31, bits);
    assert_images16_equal (luma_levels_in (h, fmt, levels, rng),
        reference_sharpen_levels (levels, s, bits),
        gst_video_format_to_string (fmt));
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Every radius on 16-bit frames, changed while playing: up to 129 taps,
 * the widest tile. Against the definition where it is affordable (the
 * narrow blurs on the CPU) and, on the GPU, the CPU backend. */
GST_START_TEST (test_deep_every_radius)
{
  std::mt19937 rng (1619);
  const Image16 levels = thermal_like_image (rng, 203, 151, 16);
  SharpenSettings s;
  s.amount = 1.7;
  GstHarness *h = new_harness (s.launch (kBackend));
#if TEST_GPU
  GstHarness *cpu = new_harness (s.launch ("cpu"));
#endif
  for (int k : sample_indices (160, 16, "deep radius sweep")) {
    const int i = k + 1;
    s.radius = i * 0.1;
    gst_harness_set (h, "cudasharpen", "radius", s.radius, NULL);
    const std::string what = "radius " + std::to_string (s.radius);
    const Image16 got = luma_levels_in (h, GST_VIDEO_FORMAT_GRAY16_LE, levels,
        rng);
#if TEST_GPU
    gst_harness_set (cpu, "cudasharpen", "radius", s.radius, NULL);
    assert_images16_equal (got, luma_levels_in (cpu, GST_VIDEO_FORMAT_GRAY16_LE,
            levels, rng), what);
#endif
    if (definition_affordable (s, levels.width, levels.height))
      assert_images16_equal (got, reference_sharpen_levels (levels, s, 16),
          what + " (definition)");
  }
#if TEST_GPU
  gst_harness_teardown (cpu);
#endif
  gst_harness_teardown (h);
}
GST_END_TEST;

#if TEST_GPU
/* ------------------------------------------------- GPU against the CPU */

/* Many frames through one instance with every property changing while
 * playing. */
GST_START_TEST (test_many_frames_with_live_changes)
{
  std::mt19937 rng (31);
  GstHarness *gpu = harness_for ("cudasharpen backend=cuda", 640, 480);
  GstElement *e = gst_harness_find_element (gpu, "cudasharpen");
  for (int i = 0; i < 60; ++i) {
    const SharpenSettings &s = kSharpenSets[i % G_N_ELEMENTS (kSharpenSets)];
    gst_util_set_object_arg (G_OBJECT (e), "kernel", s.kernel);
    g_object_set (e, "amount", s.amount, "radius", s.radius, "threshold",
        s.threshold, NULL);
    Image img = random_image (rng, 640, 480, i % 50, 100 + i % 100);
    GstHarness *cpu = harness_for (s.launch ("cpu").c_str (), 640, 480);
    const Image want = push_pull (cpu, img);
    gst_harness_teardown (cpu);
    assert_images_equal (push_pull (gpu, img), want, "live changes");
  }
  gst_object_unref (e);
  gst_harness_teardown (gpu);
}
GST_END_TEST;

static Image
default_sharpen (const Image & img)
{
  return reference_sharpen (img, SharpenSettings ());
}

GST_START_TEST (test_proposed_pinned_pool)
{
  check_proposed_pinned_pool ("cudasharpen backend=cuda", 1283, 721,
      default_sharpen);
}
GST_END_TEST;

/* 4K and 8K at 16 and 10 bits. */
GST_START_TEST (test_deep_large_frames)
{
  if (skip_large ())
    return;
  std::mt19937 rng (1620);
  const SharpenSettings s { "unsharp", 1.2, 1.5, 2 };
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_GRAY16_LE,
          GST_VIDEO_FORMAT_P010_10LE})
    for (const auto & sz : { std::pair<int, int> {3840, 2160}, {7680, 4320} }) {
      const Image16 levels = thermal_like_image (rng, sz.first, sz.second,
          deep_layout (fmt).bits);
      assert_images16_equal (luma_levels_through (s.launch ("cuda"), fmt,
              levels, rng), luma_levels_through (s.launch ("cpu"), fmt, levels,
              rng), gst_video_format_to_string (fmt));
    }
}
GST_END_TEST;

#endif

static Suite *
cudasharpen_suite (void)
{
  Suite *s = suite_create (TEST_SUITE_NAME ("cudasharpen"));
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_random_and_natural_frames);
  tcase_add_test (tc, test_every_radius);
  tcase_add_test (tc, test_hand_computed_frames);
  tcase_add_test (tc, test_renegotiation_mid_stream);
  tcase_add_test (tc, test_live_property_changes);
#if !TEST_GPU
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_invalid_values_are_refused);
#endif
  tcase_add_test (tc, test_formats_filter_luma_only);
  tcase_add_test (tc, test_deep_formats);
  tcase_add_test (tc, test_depth_renegotiation);
  tcase_add_test (tc, test_deep_every_radius);
#if TEST_GPU
  tcase_add_test (tc, test_many_frames_with_live_changes);
  tcase_add_test (tc, test_proposed_pinned_pool);
  tcase_add_test (tc, test_deep_large_frames);
#endif
  return s;
}

int
main (int argc, char **argv)
{
  return run_suite (argc, argv, cudasharpen_suite,
      TEST_SUITE_NAME ("cudasharpen"));
}

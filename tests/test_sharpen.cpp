/* cudasharpen on the CPU backend against the definition written out in
 * sharpen_reference.h (itself checked against OpenCV by
 * scripts/check-against-opencv.py): runs everywhere, no GPU needed. */
#include "sharpen_reference.h"

#include "cpu_isa.h"

using namespace test;

static const int kSizes[][2] = {
  {1, 1}, {2, 1}, {1, 7}, {3, 3}, {15, 2}, {16, 3}, {17, 5}, {31, 31},
  {64, 48}, {100, 1}, {1, 100}, {97, 61}, {385, 289},
};

/* The 2-D reference costs taps^2 per pixel: wide blurs get small frames. */
static bool
affordable (const SharpenSettings & s, int w, int h)
{
  return s.radius <= 3.0 || double (w) * h <= 64 * 48;
}

static void
check_frames (const SharpenSettings & s, const std::vector<Image> & frames,
    const char *what)
{
  const std::string launch = s.launch ("cpu");
  for (const Image & img : frames) {
    if (!affordable (s, img.width, img.height))
      continue;
    GstHarness *h = harness_for (launch.c_str (), img.width, img.height);
    const std::string label = launch + ": " + what;
    assert_images_equal (push_pull (h, img), reference_sharpen (img, s),
        label.c_str ());
    gst_harness_teardown (h);
  }
}

/* OpenCV's fixed-point Gaussian taps (GaussianBlur on CV_8U), as OpenCV
 * 4.6 and 5.0 compute them for these sigmas. */
GST_START_TEST (test_gaussian_taps)
{
  const struct {
    double sigma;
    std::vector<uint32_t> taps;
  } known[] = {
    {0.1, {0, 256, 0}},
    {0.5, {0, 27, 202, 27, 0}},
    {1.0, {1, 14, 62, 102, 62, 14, 1}},
    {2.0, {1, 2, 7, 16, 31, 45, 52, 45, 31, 16, 7, 2, 1}},
  };
  for (const auto & k : known)
    fail_unless (cudafilters::sharpen_gaussian_taps (k.sigma) == k.taps,
        "taps for sigma %g", k.sigma);
  for (bool deep : {false, true})
    for (int i = 1; i <= 160; ++i) {
      const double sigma = i * 0.1;
      const std::vector<uint32_t> taps =
          cudafilters::sharpen_gaussian_taps (sigma, deep);
      const std::vector<int> want = opencv_gaussian_taps (sigma, deep);
      fail_unless_equals_int (taps.size (), want.size ());
      int sum = 0;
      for (size_t t = 0; t < taps.size (); ++t) {
        fail_unless_equals_int (taps[t], want[t]);
        sum += taps[t];
      }
      fail_unless_equals_int (sum, deep ? 65536 : 256);
    }
  fail_unless_equals_int (cudafilters::sharpen_gaussian_taps
      (cudafilters::kSharpenMaxRadius).size (), cudafilters::kSharpenMaxTaps);
  fail_unless_equals_int (cudafilters::sharpen_gaussian_taps
      (cudafilters::kSharpenMaxRadius, true).size (),
      cudafilters::kSharpenMaxTapsDeep);
}
GST_END_TEST;

GST_START_TEST (test_random_and_natural_frames_match_reference)
{
  std::mt19937 rng (1234);
  for (const SharpenSettings & s : kSharpenSets) {
    std::vector<Image> frames;
    for (const auto & sz : kSizes) {
      frames.push_back (random_image (rng, sz[0], sz[1]));
      frames.push_back (random_image (rng, sz[0], sz[1], 100, 140));
      frames.push_back (natural_image (sz[0], sz[1]));
    }
    for (int v : {0, 128, 255})
      frames.push_back (constant_image (37, 23, uint8_t (v)));
    check_frames (s, frames, "random/natural/constant");
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
  GstHarness *h = harness_for ("cudasharpen backend=cpu kernel=laplacian-3x3",
      3, 1);
  assert_images_equal (push_pull (h, img), want, "laplacian by hand");
  gst_harness_teardown (h);

  std::mt19937 rng (3);
  const Image noisy = random_image (rng, 45, 31, 1, 254);
  for (const char *launch : {"cudasharpen backend=cpu amount=0 radius=3",
          "cudasharpen backend=cpu amount=5 threshold=255"}) {
    h = harness_for (launch, 45, 31);
    assert_images_equal (push_pull (h, noisy), noisy, launch);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* The CPU path's instruction-set variants agree bit for bit. */
GST_START_TEST (test_instruction_sets_agree)
{
  std::mt19937 rng (21);
  const Image img = random_image (rng, 333, 97);
  for (const SharpenSettings & s : kSharpenSets) {
    cudafilters::SharpenParams p;
    p.kernel = s.laplacian ()? cudafilters::SharpenKernel::kLaplacian3x3 :
        cudafilters::SharpenKernel::kUnsharp;
    p.amount = s.amount;
    p.radius = s.radius;
    p.threshold = s.threshold;
    Image first (img.width, img.height);
    for (std::string_view isa : cudafilters::cpu_instruction_sets ()) {
      Image out (img.width, img.height);
      cudafilters::sharpen_cpu_with (p, {img.pixels.data (), size_t (img.width),
              img.width, img.height}, {out.pixels.data (), size_t (out.width),
              out.width, out.height}, isa);
      if (isa == "baseline")
        first = out;
      else
        assert_images_equal (out, first, std::string (isa).c_str ());
    }
    if (affordable (s, img.width, img.height))
      assert_images_equal (first, reference_sharpen (img, s), "baseline");

    /* 16-bit words, 12 bits at shift 4 (levels and layout both matter). */
    const cudafilters::SampleLayout layout { 2, 12, 4 };
    const Image16 words = words_of_levels (thermal_like_image (rng, 333, 97,
            12), 4);
    Image16 first16 (words.width, words.height);
    for (std::string_view isa : cudafilters::cpu_instruction_sets ()) {
      Image16 out (words.width, words.height);
      cudafilters::sharpen_cpu_with (p, {(const uint8_t *) words.pixels.data (),
              size_t (2 * words.width), words.width, words.height, layout},
          {(uint8_t *) out.pixels.data (), size_t (2 * out.width), out.width,
              out.height, layout}, isa);
      if (isa == "baseline")
        first16 = out;
      else
        assert_images16_equal (out, first16, std::string (isa) + " 12-bit");
    }
  }
}
GST_END_TEST;

/* One stream, several sizes: each caps change reconfigures the element. */
GST_START_TEST (test_renegotiation_mid_stream)
{
  std::mt19937 rng (5);
  const SharpenSettings s;
  GstHarness *h = harness_for ("cudasharpen backend=cpu", 64, 48);
  const int sizes[][2] = { {64, 48}, {33, 17}, {641, 479}, {1, 1}, {7, 300},
    {64, 48} };
  for (const auto & sz : sizes) {
    gst_harness_set_src_caps_str (h, gray_caps (sz[0], sz[1]).c_str ());
    for (int i = 0; i < 2; ++i) {
      Image img = random_image (rng, sz[0], sz[1], 20, 90 + 40 * i);
      assert_images_equal (push_pull (h, img), reference_sharpen (img, s),
          "after renegotiation");
    }
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Every property changes while playing: each frame follows the values set
 * before it. */
GST_START_TEST (test_live_property_changes)
{
  std::mt19937 rng (6);
  GstHarness *h = harness_for ("cudasharpen backend=cpu", 61, 43);
  GstElement *e = gst_harness_find_element (h, "cudasharpen");
  for (const SharpenSettings & s : kSharpenSets) {
    gst_util_set_object_arg (G_OBJECT (e), "kernel", s.kernel);
    gst_harness_set (h, "cudasharpen", "amount", s.amount, "radius", s.radius,
        "threshold", s.threshold, NULL);
    Image img = natural_image (61, 43);
    Image noisy = random_image (rng, 61, 43, 40, 120);
    const std::string label = s.launch ("cpu") + ": live change";
    assert_images_equal (push_pull (h, img), reference_sharpen (img, s),
        label.c_str ());
    assert_images_equal (push_pull (h, noisy), reference_sharpen (noisy, s),
        label.c_str ());
  }
  gst_object_unref (e);
  gst_harness_teardown (h);
}
GST_END_TEST;

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

  for (const char *name : {"kernel", "amount", "radius", "threshold"}) {
    GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        name);
    fail_unless (pspec != NULL, "no property %s", name);
    fail_unless (g_param_spec_get_blurb (pspec) != NULL);
    fail_unless (pspec->flags & GST_PARAM_MUTABLE_PLAYING, "%s not live", name);
    fail_unless (pspec->flags & GST_PARAM_CONTROLLABLE, "%s not controllable",
        name);
  }
  GParamSpec *r = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      "radius");
  fail_unless (G_PARAM_SPEC_DOUBLE (r)->minimum == cudafilters::kSharpenMinRadius);
  fail_unless (G_PARAM_SPEC_DOUBLE (r)->maximum == cudafilters::kSharpenMaxRadius);

  gst_util_set_object_arg (G_OBJECT (e), "kernel", "laplacian-3x3");
  g_object_get (e, "kernel", &kernel, NULL);
  fail_unless_equals_int (kernel,
      (gint) cudafilters::SharpenKernel::kLaplacian3x3);

  const gchar *klass = gst_element_class_get_metadata (GST_ELEMENT_GET_CLASS (e),
      GST_ELEMENT_METADATA_KLASS);
  fail_unless_equals_string (klass, "Filter/Effect/Video/Hardware");
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

/* Every format: luma as a GRAY8 frame would be, chroma byte-identical. */
GST_START_TEST (test_formats_filter_luma_only)
{
  std::mt19937 rng (77);
  const int sizes[][2] = { {33, 17}, {64, 48}, {2, 2} };
  for (const SharpenSettings & s : {kSharpenSets[0], kSharpenSets[9]})
    for (GstVideoFormat fmt : kFormats)
      for (const auto & sz : sizes) {
        PlanarFrame in = frame_with_luma (rng, fmt,
            random_image (rng, sz[0], sz[1], 30, 150));
        PlanarFrame out = push_pull_frame (s.launch ("cpu").c_str (), in);
        assert_images_equal (out.planes[0], reference_sharpen (in.planes[0],
                s), gst_video_format_to_string (fmt));
        assert_chroma_carried (out, in);
      }
}
GST_END_TEST;

/* Deep formats: luma against the definition with OpenCV's CV_16U Gaussian,
 * chroma carried. */
GST_START_TEST (test_deep_formats_match_reference)
{
  std::mt19937 rng (1616);
  const int sizes[][2] = { {1, 1}, {3, 3}, {17, 5}, {64, 48}, {97, 61} };
  for (GstVideoFormat fmt : kDeepFormats) {
    const int bits = deep_layout (fmt).bits;
    for (const SharpenSettings & s : kSharpenSets)
      for (const auto & sz : sizes) {
        /* The 2-D reference costs (8 radius)^2 per pixel. */
        if (s.radius > 3.0 && sz[0] * sz[1] > 17 * 5)
          continue;
        for (const Image16 & levels : deep_scenes (rng, sz[0], sz[1], bits)) {
          const std::string what = s.launch ("cpu") + " " +
              gst_video_format_to_string (fmt);
          assert_images16_equal (luma_levels_through (s.launch ("cpu"), fmt,
                  levels, rng), reference_sharpen_levels (levels, s, bits),
              what);
        }
      }
  }
}
GST_END_TEST;

/* One harness through 8-bit, 16-bit, 10-bit and back. */
GST_START_TEST (test_depth_renegotiation)
{
  std::mt19937 rng (1617);
  const SharpenSettings s { "unsharp", 1.5, 1.2, 3 };
  GstHarness *h = gst_harness_new_parse (s.launch ("cpu").c_str ());
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

static Suite *
cudasharpen_cpu_suite (void)
{
  Suite *s = suite_create ("cudasharpen-cpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_gaussian_taps);
  tcase_add_test (tc, test_random_and_natural_frames_match_reference);
  tcase_add_test (tc, test_hand_computed_frames);
  tcase_add_test (tc, test_instruction_sets_agree);
  tcase_add_test (tc, test_renegotiation_mid_stream);
  tcase_add_test (tc, test_live_property_changes);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_invalid_values_are_refused);
  tcase_add_test (tc, test_formats_filter_luma_only);
  tcase_add_test (tc, test_deep_formats_match_reference);
  tcase_add_test (tc, test_depth_renegotiation);
  return s;
}

GST_CHECK_MAIN (cudasharpen_cpu);

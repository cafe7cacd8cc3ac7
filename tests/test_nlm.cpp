/* cudanlm on the CPU backend: runs everywhere, no GPU needed. */
#include "nlm_reference.h"

using namespace test;


/* The CPU path's sliding sums against the definition, within one level
 * (float versus double rounding of the weights). */
GST_START_TEST (test_matches_brute_force_reference)
{
  std::mt19937 rng (42);
  const int sizes[][2] = { {1, 1}, {3, 2}, {17, 9}, {40, 30}, {5, 37} };
  for (const auto & s : kNlmParamSets)
    for (const auto & sz : sizes) {
      Image img = random_image (rng, sz[0], sz[1], 40, 200);
      assert_images_close (run_nlm (s, "cpu", img), reference_nlm (img, s), 1,
          s.launch ("cpu").c_str ());
    }
}
GST_END_TEST;

GST_START_TEST (test_output_size_and_format)
{
  std::mt19937 rng (1);
  GstHarness *h = harness_for ("cudanlm backend=cpu", 33, 17);
  GstBuffer *out = gst_harness_push_and_pull (h,
      buffer_from_image (random_image (rng, 33, 17)));
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  GstVideoInfo info;
  fail_unless (gst_video_info_from_caps (&info, caps));
  fail_unless_equals_int (GST_VIDEO_INFO_FORMAT (&info), GST_VIDEO_FORMAT_GRAY8);
  fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&info), 33);
  fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&info), 17);
  fail_unless_equals_int (gst_buffer_get_size (out), GST_VIDEO_INFO_SIZE (&info));
  gst_caps_unref (caps);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_flat_frame_stays_flat)
{
  for (int v : {0, 77, 255})
    for (const auto & s : kNlmParamSets) {
      Image img = constant_image (45, 23, uint8_t (v));
      assert_images_equal (run_nlm (s, "cpu", img), img, "flat frame");
    }
}
GST_END_TEST;

static double
region_variance (const Image & img, int x0, int x1, int y0, int y1)
{
  double sum = 0, sq = 0;
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      sum += img.at (x, y);
      sq += double (img.at (x, y)) * img.at (x, y);
      ++n;
    }
  return sq / n - (sum / n) * (sum / n);
}

static double
region_mean (const Image & img, int x0, int x1, int y0, int y1)
{
  double sum = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x)
      sum += img.at (x, y);
  return sum / ((x1 - x0) * (y1 - y0));
}

/* Noise on both sides of a step edge: the noise goes, the step stays. */
GST_START_TEST (test_denoises_and_keeps_edges)
{
  std::mt19937 rng (9);
  const int w = 96, h = 64, edge = w / 2;
  Image noisy = noisy_step_image (rng, w, h, 12.0);
  NlmSettings s;
  s.h = 12;
  Image out = run_nlm (s, "cpu", noisy);

  for (int side = 0; side < 2; ++side) {
    const int x0 = side ? edge + 8 : 4, x1 = side ? w - 4 : edge - 8;
    const double before = region_variance (noisy, x0, x1, 4, h - 4);
    const double after = region_variance (out, x0, x1, 4, h - 4);
    fail_unless (after < 0.1 * before, "variance %.1f -> %.1f", before, after);
    const double mean = region_mean (out, x0, x1, 4, h - 4);
    fail_unless (std::abs (mean - (side ? 190 : 60)) < 3, "mean %.1f", mean);
  }
  for (int y = 0; y < h; ++y) {
    fail_unless (out.at (edge - 2, y) < 90, "row %d: %d left of the edge", y,
        out.at (edge - 2, y));
    fail_unless (out.at (edge + 1, y) > 160, "row %d: %d right of the edge", y,
        out.at (edge + 1, y));
  }
}
GST_END_TEST;

GST_START_TEST (test_renegotiation_mid_stream)
{
  std::mt19937 rng (5);
  NlmSettings s {15, 5, 9, 0, false};
  GstHarness *h = harness_for (s.launch ("cpu").c_str (), 20, 10);
  const int sizes[][2] = { {20, 10}, {7, 31}, {1, 1}, {33, 12}, {20, 10} };
  for (const auto & sz : sizes) {
    gst_harness_set_src_caps_str (h, gray_caps (sz[0], sz[1]).c_str ());
    Image img = random_image (rng, sz[0], sz[1], 50, 150);
    assert_images_close (push_pull (h, img), reference_nlm (img, s), 1,
        "after renegotiation");
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_properties_and_refused_values)
{
  GstElement *e = gst_element_factory_make ("cudanlm", NULL);
  gfloat strength, sigma;
  gint patch, search, weighting;
  g_object_get (e, "strength", &strength, "patch-size", &patch, "search-size",
      &search, "noise-sigma", &sigma, "patch-weighting", &weighting, NULL);
  fail_unless_equals_float (strength, 10.f);
  fail_unless_equals_int (patch, 7);
  fail_unless_equals_int (search, 21);
  fail_unless_equals_float (sigma, 0.f);
  fail_unless_equals_int (weighting, 0);

  /* Even sizes and a patch larger than the search window are refused with a
   * warning; the previous value stays. */
  ASSERT_WARNING (g_object_set (e, "patch-size", 6, NULL));
  ASSERT_WARNING (g_object_set (e, "search-size", 20, NULL));
  ASSERT_WARNING (g_object_set (e, "search-size", 5, NULL));
  g_object_get (e, "patch-size", &patch, "search-size", &search, NULL);
  fail_unless_equals_int (patch, 7);
  fail_unless_equals_int (search, 21);

  g_object_set (e, "patch-size", 3, "search-size", 5, "strength", 4.5f,
      "noise-sigma", 2.f, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "patch-weighting", "gaussian");
  ASSERT_WARNING (g_object_set (e, "patch-size", 7, NULL));
  g_object_get (e, "strength", &strength, "patch-size", &patch, "search-size",
      &search, "noise-sigma", &sigma, "patch-weighting", &weighting, NULL);
  fail_unless_equals_float (strength, 4.5f);
  fail_unless_equals_int (patch, 3);
  fail_unless_equals_int (search, 5);
  fail_unless_equals_float (sigma, 2.f);
  fail_unless_equals_int (weighting, 1);

  for (const char *name : {"strength", "noise-sigma"}) {
    GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (e), name);
    fail_unless (ps->flags & GST_PARAM_CONTROLLABLE, "%s", name);
    fail_unless (ps->flags & GST_PARAM_MUTABLE_PLAYING, "%s", name);
    fail_unless (g_param_spec_get_blurb (ps) != NULL);
  }
  gst_object_unref (e);
}
GST_END_TEST;

/* A change of strength while playing applies from the next frame. */
GST_START_TEST (test_live_strength_change)
{
  std::mt19937 rng (17);
  Image noisy = noisy_step_image (rng, 48, 32, 15.0);
  NlmSettings weak {2, 5, 11, 0, false}, strong {40, 5, 11, 0, false};
  GstHarness *h = harness_for (weak.launch ("cpu").c_str (), 48, 32);
  assert_images_close (push_pull (h, noisy), reference_nlm (noisy, weak), 1,
      "weak");
  GstElement *nlm = gst_harness_find_element (h, "cudanlm");
  g_object_set (nlm, "strength", 40.f, NULL);
  gst_object_unref (nlm);
  assert_images_close (push_pull (h, noisy), reference_nlm (noisy, strong), 1,
      "strong");
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Every format: luma denoised as a GRAY8 frame would be, chroma unchanged. */
GST_START_TEST (test_formats_filter_luma_only)
{
  std::mt19937 rng (78);
  NlmSettings s {15, 5, 11, 0, false};
  for (GstVideoFormat fmt : kFormats) {
    PlanarFrame in = frame_with_luma (rng, fmt, noisy_step_image (rng, 30, 14,
            15.0));
    PlanarFrame out = push_pull_frame (s.launch ("cpu").c_str (), in);
    assert_images_close (out.planes[0], reference_nlm (in.planes[0], s), 1,
        gst_video_format_to_string (fmt));
    assert_chroma_carried (out, in);
  }
}
GST_END_TEST;

/* Deep formats: luma against the definition with levels in 8-bit units,
 * chroma carried. */
GST_START_TEST (test_deep_formats_match_reference)
{
  std::mt19937 rng (1606);
  const int sizes[][2] = { {1, 1}, {17, 9}, {33, 20} };
  for (GstVideoFormat fmt : kDeepFormats) {
    const int bits = deep_layout (fmt).bits;
    for (const auto & sz : sizes)
      for (int i = 0; i < 4; ++i) {
        const NlmSettings & s = kNlmParamSets[i];
        Image16 levels = noisy_step_levels (rng, sz[0], sz[1], bits, 20.0);
        const std::string what = s.launch ("cpu") + " " +
            gst_video_format_to_string (fmt);
        assert_images_close (luma_levels_through (s.launch ("cpu"), fmt, levels, rng),
            reference_nlm_levels (levels, s, bits), kNlmTolerance,
            what.c_str ());
      }
  }
}
GST_END_TEST;

GST_START_TEST (test_deep_strength_in_8bit_units)
{
  std::mt19937 rng (1607);
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_GRAY16_LE,
          GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_I420_12LE})
    for (const auto & s : kNlmParamSets)
      assert_deep_follows_8bit ("cpu", s, fmt, noisy_step_image (rng, 41, 23,
              15.0), rng);
}
GST_END_TEST;

GST_START_TEST (test_deep_flat_frames_stay_flat)
{
  std::mt19937 rng (1608);
  for (GstVideoFormat fmt : kDeepFormats) {
    const int top = (1 << deep_layout (fmt).bits) - 1;
    for (int v : {0, top / 3, top}) {
      Image16 flat (45, 23);
      std::fill (flat.pixels.begin (), flat.pixels.end (), uint16_t (v));
      assert_images16_equal (luma_levels_through (kNlmParamSets[0].launch ("cpu"),
              fmt, flat, rng), flat, "flat deep frame");
    }
  }
}
GST_END_TEST;

/* One harness through 8-bit, 16-bit, 10-bit and back: each frame filtered
 * at its own depth. */
GST_START_TEST (test_depth_renegotiation)
{
  std::mt19937 rng (1609);
  const NlmSettings s {15, 5, 9, 0, false};
  GstHarness *h = gst_harness_new_parse (s.launch ("cpu").c_str ());
  for (GstVideoFormat fmt : kDepthChanges) {
    const int bits = luma_bits (fmt);
    const Image16 levels = noisy_step_levels (rng, 30, 14, bits, 15.0);
    assert_images_close (luma_levels_in (h, fmt, levels, rng),
        reference_nlm_levels (levels, s, bits), kNlmTolerance,
        gst_video_format_to_string (fmt));
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

static Suite *
cudanlm_cpu_suite (void)
{
  Suite *s = suite_create ("cudanlm-cpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_matches_brute_force_reference);
  tcase_add_test (tc, test_output_size_and_format);
  tcase_add_test (tc, test_flat_frame_stays_flat);
  tcase_add_test (tc, test_denoises_and_keeps_edges);
  tcase_add_test (tc, test_renegotiation_mid_stream);
  tcase_add_test (tc, test_properties_and_refused_values);
  tcase_add_test (tc, test_live_strength_change);
  tcase_add_test (tc, test_formats_filter_luma_only);
  tcase_add_test (tc, test_deep_formats_match_reference);
  tcase_add_test (tc, test_deep_strength_in_8bit_units);
  tcase_add_test (tc, test_deep_flat_frames_stay_flat);
  tcase_add_test (tc, test_depth_renegotiation);
  return s;
}

GST_CHECK_MAIN (cudanlm_cpu);

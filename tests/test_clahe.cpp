/* cudaclahe on the CPU backend against a transcription of OpenCV's CLAHE:
 * runs everywhere, no GPU needed. */
#include "deep_frames.h"

using namespace test;

static const char *kCpu = "cudaclahe backend=cpu";

/* Sizes the grid rarely divides, around the 16-byte vector width, 1x1 and a
 * common video size. */
static const int kSizes[][2] = {
  {1, 1}, {2, 1}, {1, 7}, {3, 3}, {15, 2}, {16, 3}, {17, 5}, {31, 31},
  {64, 48}, {100, 1}, {1, 100}, {385, 289}, {641, 479}, {1280, 720},
};

struct Settings {
  double clip;
  int tiles_x, tiles_y;
};

/* OpenCV's default grid, no clipping, clipping that never bites, a grid
 * larger than small frames, one tile (plateau equalization) and the largest
 * grid. */
static const Settings kSettings[] = {
  {2.0, 8, 8}, {0.0, 8, 8}, {40.0, 8, 8}, {4.0, 3, 5}, {1.0, 1, 1},
  {2.0, 64, 64}, {0.5, 7, 2}, {256.0, 2, 9},
};

static std::string
launch_for (const Settings & s, const char *backend = "cpu")
{
  return std::string ("cudaclahe backend=") + backend + " clip-limit=" +
      std::to_string (s.clip) + " tiles-x=" + std::to_string (s.tiles_x) +
      " tiles-y=" + std::to_string (s.tiles_y);
}

static std::string
describe (const Settings & s, const char *what)
{
  return std::string (what) + " clip " + std::to_string (s.clip) + " grid " +
      std::to_string (s.tiles_x) + "x" + std::to_string (s.tiles_y);
}

static void
check_frames (const Settings & s, const std::vector<Image> & frames,
    const char *what)
{
  const std::string launch = launch_for (s);
  for (const Image & img : frames) {
    GstHarness *h = harness_for (launch.c_str (), img.width, img.height);
    assert_images_equal (push_pull (h, img), reference_clahe (img, s.clip,
            s.tiles_x, s.tiles_y), describe (s, what).c_str ());
    gst_harness_teardown (h);
  }
}

GST_START_TEST (test_random_and_natural_frames_match_reference)
{
  std::mt19937 rng (1234);
  for (const Settings & s : kSettings) {
    std::vector<Image> frames;
    for (const auto & sz : kSizes) {
      frames.push_back (random_image (rng, sz[0], sz[1]));
      frames.push_back (random_image (rng, sz[0], sz[1], 100, 140));
      frames.push_back (natural_image (sz[0], sz[1]));
    }
    check_frames (s, frames, "random/natural");
  }
}
GST_END_TEST;

/* Few levels fill a few bins far above any clip limit: the whole excess is
 * redistributed, with a residual stepped across the bins. */
GST_START_TEST (test_few_levels_and_one_value_frames)
{
  std::mt19937 rng (99);
  for (const Settings & s : kSettings) {
    std::vector<Image> frames;
    for (const auto & sz : kSizes) {
      frames.push_back (few_levels_image (rng, sz[0], sz[1], {5, 9, 200, 201}));
      frames.push_back (few_levels_image (rng, sz[0], sz[1], {17, 18}));
      for (int v : {0, 77, 255})
        frames.push_back (constant_image (sz[0], sz[1], uint8_t (v)));
    }
    check_frames (s, frames, "few levels / one value");
  }
}
GST_END_TEST;

/* Worked by hand: a 2x1 frame, one tile, no clipping. The tile is the frame
 * (the grid divides it): histogram {10: 1, 20: 1}, LUT scale 255/2, so
 * 10 -> round(127.5) = 128 (ties to even) and 20 -> 255; both pixels blend
 * one tile with itself. */
GST_START_TEST (test_hand_computed_frame)
{
  Image img (2, 1);
  img.pixels = {20, 10};
  Image want (2, 1);
  want.pixels = {255, 128};
  GstHarness *h = harness_for ("cudaclahe backend=cpu clip-limit=0 tiles-x=1 "
      "tiles-y=1", 2, 1);
  assert_images_equal (push_pull (h, img), want, "hand-computed");
  gst_harness_teardown (h);
}
GST_END_TEST;

/* One stream, several sizes: each caps change reconfigures the element. */
GST_START_TEST (test_renegotiation_mid_stream)
{
  std::mt19937 rng (5);
  GstHarness *h = harness_for (kCpu, 64, 48);
  const int sizes[][2] = { {64, 48}, {33, 17}, {1920, 1080}, {1, 1}, {7, 300},
    {64, 48} };
  for (const auto & sz : sizes) {
    gst_harness_set_src_caps_str (h, gray_caps (sz[0], sz[1]).c_str ());
    for (int i = 0; i < 2; ++i) {
      Image img = random_image (rng, sz[0], sz[1], 20, 90 + 40 * i);
      assert_images_equal (push_pull (h, img), reference_clahe (img, 2.0, 8, 8),
          "after renegotiation");
    }
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

/* clip-limit, tiles-x and tiles-y change while playing: each frame follows
 * the values set before it. */
GST_START_TEST (test_live_property_changes)
{
  std::mt19937 rng (6);
  GstHarness *h = harness_for (kCpu, 321, 203);
  for (const Settings & s : kSettings) {
    gst_harness_set (h, "cudaclahe", "clip-limit", s.clip, "tiles-x",
        s.tiles_x, "tiles-y", s.tiles_y, NULL);
    Image img = natural_image (321, 203);
    Image noisy = random_image (rng, 321, 203, 40, 120);
    assert_images_equal (push_pull (h, img), reference_clahe (img, s.clip,
            s.tiles_x, s.tiles_y), describe (s, "live change").c_str ());
    assert_images_equal (push_pull (h, noisy), reference_clahe (noisy, s.clip,
            s.tiles_x, s.tiles_y), describe (s, "live change").c_str ());
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_properties)
{
  GstElement *e = gst_element_factory_make ("cudaclahe", NULL);
  gdouble clip = 0, smoothing = -1;
  gint tx = 0, ty = 0;
  g_object_get (e, "clip-limit", &clip, "tiles-x", &tx, "tiles-y", &ty,
      "temporal-smoothing", &smoothing, NULL);
  fail_unless (clip == 2.0);
  fail_unless_equals_int (tx, 8);
  fail_unless_equals_int (ty, 8);
  fail_unless (smoothing == 0.0);

  for (const char *name : {"clip-limit", "tiles-x", "tiles-y",
          "temporal-smoothing", "post-messages", "message-interval"}) {
    GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        name);
    fail_unless (pspec != NULL, "no property %s", name);
    fail_unless (g_param_spec_get_blurb (pspec) != NULL);
    fail_unless (pspec->flags & GST_PARAM_MUTABLE_PLAYING, "%s not live", name);
  }
  for (const char *name : {"clip-limit", "tiles-x", "tiles-y",
          "temporal-smoothing"}) {
    GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        name);
    fail_unless (pspec->flags & GST_PARAM_CONTROLLABLE, "%s not controllable",
        name);
  }
  GParamSpec *tiles = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      "tiles-x");
  fail_unless_equals_int (G_PARAM_SPEC_INT (tiles)->minimum, 1);
  fail_unless_equals_int (G_PARAM_SPEC_INT (tiles)->maximum, 64);

  const gchar *klass = gst_element_class_get_metadata (GST_ELEMENT_GET_CLASS (e),
      GST_ELEMENT_METADATA_KLASS);
  fail_unless_equals_string (klass, "Filter/Effect/Video/Hardware");
  gst_object_unref (e);
}
GST_END_TEST;

/* Invalid values are refused with a warning; the previous value stays. */
GST_START_TEST (test_invalid_values_are_refused)
{
  GstElement *e = gst_element_factory_make ("cudaclahe", NULL);
  g_object_set (e, "clip-limit", 3.5, "tiles-x", 4, "tiles-y", 6, NULL);
  ASSERT_WARNING (g_object_set (e, "clip-limit", -1.0, NULL));
  ASSERT_WARNING (g_object_set (e, "clip-limit", 1000.0, NULL));
  ASSERT_WARNING (g_object_set (e, "clip-limit", (double) NAN, NULL));
  ASSERT_WARNING (g_object_set (e, "tiles-x", 0, NULL));
  ASSERT_WARNING (g_object_set (e, "tiles-y", 65, NULL));
  ASSERT_WARNING (g_object_set (e, "temporal-smoothing", 1.5, NULL));
  gdouble clip = 0, smoothing = -1;
  gint tx = 0, ty = 0;
  g_object_get (e, "clip-limit", &clip, "tiles-x", &tx, "tiles-y", &ty,
      "temporal-smoothing", &smoothing, NULL);
  fail_unless (clip == 3.5);
  fail_unless_equals_int (tx, 4);
  fail_unless_equals_int (ty, 6);
  fail_unless (smoothing == 0.0);
  gst_object_unref (e);
}
GST_END_TEST;

/* Every format: luma as a GRAY8 frame would be, chroma byte-identical. */
GST_START_TEST (test_formats_filter_luma_only)
{
  std::mt19937 rng (77);
  const int sizes[][2] = { {33, 17}, {64, 48}, {2, 2} };
  for (GstVideoFormat fmt : kFormats)
    for (const auto & sz : sizes) {
      PlanarFrame in = frame_with_luma (rng, fmt,
          random_image (rng, sz[0], sz[1], 30, 150));
      PlanarFrame out = push_pull_frame (kCpu, in);
      assert_images_equal (out.planes[0], reference_clahe (in.planes[0], 2.0,
              8, 8), gst_video_format_to_string (fmt));
      assert_chroma_carried (out, in);
    }
}
GST_END_TEST;

/* ------------------------------------------------------------ deep frames
 * OpenCV's CLAHE with 2^b bins: 65536 on 16-bit planes, as OpenCV has it on
 * CV_16UC1. */

static const Settings kDeepSettings[] = {
  {2.0, 8, 8}, {0.0, 3, 5}, {40.0, 1, 1}, {1.0, 7, 2}, {256.0, 2, 2},
};

static void
check_deep_frame (const Settings & s, const PlanarFrame & in,
    const std::string & what, const char *backend = "cpu")
{
  GstHarness *h = gst_harness_new_parse (launch_for (s, backend).c_str ());
  assert_clahe_deep (h, in, s.clip, s.tiles_x, s.tiles_y, describe (s,
          what.c_str ()));
  gst_harness_teardown (h);
}

GST_START_TEST (test_deep_formats_match_reference)
{
  std::mt19937 rng (2020);
  const int sizes[][2] = { {1, 1}, {2, 3}, {17, 5}, {33, 17}, {161, 97} };
  for (GstVideoFormat fmt : kDeepFormats) {
    const DeepLayout l = deep_layout (fmt);
    const int top = (1 << l.bits) - 1;
    for (const auto & sz : sizes)
      for (const Settings & s : kDeepSettings) {
        const std::string what = std::string (gst_video_format_to_string (fmt))
            + " " + std::to_string (sz[0]) + "x" + std::to_string (sz[1]);
        /* Full range, a narrow band (far above any clip limit: the excess
         * is redistributed), and a thermal-like scene. */
        check_deep_frame (s, deep_frame (rng, fmt, random_deep_image (rng,
                    sz[0], sz[1], l, 0, top)), what + " full range");
        check_deep_frame (s, deep_frame (rng, fmt, random_deep_image (rng,
                    sz[0], sz[1], l, top / 3, top / 3 + 3)), what + " narrow");
        check_deep_frame (s, deep_frame (rng, fmt, thermal_like_words (rng,
                    sz[0], sz[1], l)), what + " scene");
      }
  }
}
GST_END_TEST;

/* Plateau equalization of a 14-bit thermal-like scene in GRAY16_LE: one
 * tile, clipped; and the default grid on a 1080p frame. */
GST_START_TEST (test_deep_plateau_and_hd_frames)
{
  std::mt19937 rng (2021);
  const DeepLayout gray16 = deep_layout (GST_VIDEO_FORMAT_GRAY16_LE);
  const PlanarFrame thermal = deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
      thermal_like_image (rng, 640, 512, 14));
  for (double clip : {0.0, 1.0, 4.0, 40.0})
    check_deep_frame (Settings { clip, 1, 1 }, thermal, "14-bit plateau");
  check_deep_frame (Settings { 2.0, 8, 8 }, deep_frame (rng,
          GST_VIDEO_FORMAT_GRAY16_LE, thermal_like_words (rng, 1920, 1080,
              gray16)), "GRAY16 1080p");
  const DeepLayout p010 = deep_layout (GST_VIDEO_FORMAT_P010_10LE);
  check_deep_frame (Settings { 2.0, 8, 8 }, deep_frame (rng,
          GST_VIDEO_FORMAT_P010_10LE, random_deep_image (rng, 1920, 1080, p010,
              100, 700)), "P010 1080p");
}
GST_END_TEST;

/* Temporal smoothing on deep frames: the histories of 2^b bins. */
GST_START_TEST (test_deep_temporal_smoothing)
{
  std::mt19937 rng (2022);
  for (GstVideoFormat fmt : { GST_VIDEO_FORMAT_GRAY16_LE,
          GST_VIDEO_FORMAT_P010_10LE }) {
    const DeepLayout l = deep_layout (fmt);
    GstHarness *h = gst_harness_new_parse ("cudaclahe backend=cpu "
        "clip-limit=3 tiles-x=5 tiles-y=3 temporal-smoothing=0.7");
    SmoothedClaheOf<Image16> want (3.0, 5, 3, 0.7, 1 << l.bits);
    for (int i = 0; i < 4; ++i) {
      const PlanarFrame in = deep_frame (rng, fmt, random_deep_image (rng, 97,
              61, l, 200 * i, 4000 + 300 * i));
      const PlanarFrame out = push_pull_in (h, in);
      assert_images16_equal (words_of (out.planes[0]), words_of_levels (want
              (levels_of (words_of (in.planes[0]), l.bits, l.shift)), l.shift),
          std::string ("smoothed frame ") + std::to_string (i) + " " +
          gst_video_format_to_string (fmt));
    }
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* Depth changes mid-stream: 8-bit, 16-bit, 10-bit and back. */
GST_START_TEST (test_renegotiation_between_depths)
{
  std::mt19937 rng (2023);
  GstHarness *h = gst_harness_new_parse ("cudaclahe backend=cpu");
  const GstVideoFormat fmts[] = { GST_VIDEO_FORMAT_GRAY8,
    GST_VIDEO_FORMAT_GRAY16_LE, GST_VIDEO_FORMAT_P010_10LE,
    GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_Y444_12LE, GST_VIDEO_FORMAT_GRAY8
  };
  for (GstVideoFormat fmt : fmts)
    for (int i = 0; i < 2; ++i) {
      const std::string what = std::string ("after switching to ") +
          gst_video_format_to_string (fmt);
      if (fmt == GST_VIDEO_FORMAT_GRAY8 || fmt == GST_VIDEO_FORMAT_NV12) {
        PlanarFrame in = frame_with_luma (rng, fmt, random_image (rng, 45, 31,
                10, 200));
        PlanarFrame out = push_pull_in (h, in);
        assert_images_equal (out.planes[0], reference_clahe (in.planes[0], 2.0,
                8, 8), what.c_str ());
        continue;
      }
      const DeepLayout l = deep_layout (fmt);
      assert_clahe_deep (h, deep_frame (rng, fmt, random_deep_image (rng, 45,
                  31, l, 5, (1 << l.bits) - 9)), 2.0, 8, 8, what);
    }
  gst_harness_teardown (h);
}
GST_END_TEST;

static Suite *
cudaclahe_cpu_suite (void)
{
  Suite *s = suite_create ("cudaclahe-cpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_random_and_natural_frames_match_reference);
  tcase_add_test (tc, test_few_levels_and_one_value_frames);
  tcase_add_test (tc, test_hand_computed_frame);
  tcase_add_test (tc, test_renegotiation_mid_stream);
  tcase_add_test (tc, test_live_property_changes);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_invalid_values_are_refused);
  tcase_add_test (tc, test_formats_filter_luma_only);
  tcase_add_test (tc, test_deep_formats_match_reference);
  tcase_add_test (tc, test_deep_plateau_and_hd_frames);
  tcase_add_test (tc, test_deep_temporal_smoothing);
  tcase_add_test (tc, test_renegotiation_between_depths);
  return s;
}

GST_CHECK_MAIN (cudaclahe_cpu);

/* cudahisteq on the CPU backend: runs everywhere, no GPU needed. */
#include "deep_frames.h"
#include "test_common.h"

using namespace test;

static const char *kCpu = "cudahisteq backend=cpu";

/* Frame sizes chosen for their edges: 1x1, odd widths (padded strides),
 * widths around the 16-byte vector width, and a common video size. */
static const int kSizes[][2] = {
  {1, 1}, {2, 1}, {1, 7}, {3, 3}, {15, 2}, {16, 3}, {17, 5}, {31, 31},
  {64, 48}, {100, 1}, {1, 100}, {385, 289}, {641, 479}, {1280, 720},
};

static void
check_against_reference (const char *launch, const Image & img,
    const char *what)
{
  GstHarness *h = harness_for (launch, img.width, img.height);
  assert_images_equal (push_pull (h, img), reference_equalize (img), what);
  gst_harness_teardown (h);
}

GST_START_TEST (test_random_frames_match_reference)
{
  std::mt19937 rng (1234);
  for (const auto & s : kSizes) {
    check_against_reference (kCpu, random_image (rng, s[0], s[1]), "uniform");
    check_against_reference (kCpu, random_image (rng, s[0], s[1], 100, 140),
        "low contrast");
    check_against_reference (kCpu, natural_image (s[0], s[1]), "natural");
  }
}
GST_END_TEST;

GST_START_TEST (test_one_value_frames_are_unchanged)
{
  for (int v : {0, 1, 77, 254, 255}) {
    for (const auto & s : kSizes) {
      Image img = constant_image (s[0], s[1], uint8_t (v));
      GstHarness *h = harness_for (kCpu, s[0], s[1]);
      assert_images_equal (push_pull (h, img), img, "one-value frame");
      gst_harness_teardown (h);
    }
  }
}
GST_END_TEST;

/* Two levels a < b: a is the first occupied bin (-> 0) and b collects all of
 * the remaining count (-> 255), whatever the proportions. */
GST_START_TEST (test_two_value_frames_stretch_to_full_range)
{
  std::mt19937 rng (7);
  const uint8_t pairs[][2] = { {0, 1}, {100, 101}, {3, 250}, {254, 255} };
  for (const auto & pr : pairs) {
    Image img = few_levels_image (rng, 37, 11, {pr[0], pr[1]});
    Image want (img.width, img.height);
    for (size_t k = 0; k < img.pixels.size (); ++k)
      want.pixels[k] = img.pixels[k] == pr[0] ? 0 : 255;
    GstHarness *h = harness_for (kCpu, img.width, img.height);
    assert_images_equal (push_pull (h, img), want, "two-value frame");
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* Worked by hand: levels 10,20,30,40 once each (N=4, first bin count 1):
 * scale = 255/3 = 85, so 10->0, 20->85, 30->170, 40->255. */
GST_START_TEST (test_hand_computed_lut)
{
  Image img (4, 1);
  img.pixels = {30, 10, 40, 20};
  Image want (4, 1);
  want.pixels = {170, 0, 255, 85};
  GstHarness *h = harness_for (kCpu, 4, 1);
  assert_images_equal (push_pull (h, img), want, "hand-computed");
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_few_levels_match_reference)
{
  std::mt19937 rng (99);
  for (const auto & s : kSizes)
    check_against_reference (kCpu, few_levels_image (rng, s[0], s[1],
            {5, 9, 200, 201, 202}), "few levels");
}
GST_END_TEST;

/* One stream, several frame sizes: each caps change reconfigures the element
 * and every frame still matches the reference. */
GST_START_TEST (test_renegotiation_mid_stream)
{
  std::mt19937 rng (5);
  GstHarness *h = harness_for (kCpu, 64, 48);
  const int sizes[][2] = { {64, 48}, {33, 17}, {1920, 1080}, {1, 1}, {64, 48} };
  for (const auto & s : sizes) {
    gst_harness_set_src_caps_str (h, gray_caps (s[0], s[1]).c_str ());
    for (int i = 0; i < 2; ++i) {
      Image img = random_image (rng, s[0], s[1], 20, 90);
      assert_images_equal (push_pull (h, img), reference_equalize (img),
          "after renegotiation");
    }
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_state_cycling)
{
  GstElement *e = gst_element_factory_make ("cudahisteq", NULL);
  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  const GstState states[] = { GST_STATE_READY, GST_STATE_PAUSED,
    GST_STATE_PLAYING, GST_STATE_PAUSED, GST_STATE_READY, GST_STATE_NULL
  };
  for (int cycle = 0; cycle < 20; ++cycle)
    for (GstState s : states)
      fail_unless (gst_element_set_state (e, s) != GST_STATE_CHANGE_FAILURE);
  gst_object_unref (e);

  /* And with data flowing between cycles. */
  std::mt19937 rng (11);
  GstHarness *h = harness_for (kCpu, 40, 30);
  for (int cycle = 0; cycle < 5; ++cycle) {
    Image img = random_image (rng, 40, 30);
    assert_images_equal (push_pull (h, img), reference_equalize (img),
        "after state cycle");
    fail_unless (gst_element_set_state (h->element, GST_STATE_NULL) ==
        GST_STATE_CHANGE_SUCCESS);
    gst_harness_play (h);
    gst_harness_set_src_caps_str (h, gray_caps (40, 30).c_str ());
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Every format: luma equalized exactly as a GRAY8 frame would be, chroma
 * byte-identical. */
GST_START_TEST (test_formats_filter_luma_only)
{
  std::mt19937 rng (77);
  const int sizes[][2] = { {33, 17}, {64, 48}, {2, 2} };
  for (GstVideoFormat fmt : kFormats)
    for (const auto & sz : sizes) {
      PlanarFrame in = frame_with_luma (rng, fmt,
          random_image (rng, sz[0], sz[1], 30, 150));
      PlanarFrame out = push_pull_frame (kCpu, in);
      assert_images_equal (out.planes[0], reference_equalize (in.planes[0]),
          gst_video_format_to_string (fmt));
      assert_chroma_carried (out, in);
    }
}
GST_END_TEST;

/* Deeper formats, each frame through a fresh element. */
static void
check_deep_frame (const char *launch, const PlanarFrame & in, int bits,
    const std::string & what)
{
  GstHarness *h = gst_harness_new_parse (launch);
  assert_equalized_deep (h, in, bits, what);
  gst_harness_teardown (h);
}

GST_START_TEST (test_deep_formats_match_reference)
{
  std::mt19937 rng (1010);
  const int sizes[][2] = { {1, 1}, {2, 3}, {17, 5}, {33, 17}, {385, 289} };
  for (GstVideoFormat fmt : kDeepFormats) {
    const DeepLayout l = deep_layout (fmt);
    const int top = (1 << l.bits) - 1;
    for (const auto & sz : sizes) {
      const std::string what = std::string (gst_video_format_to_string (fmt)) +
          " " + std::to_string (sz[0]) + "x" + std::to_string (sz[1]);
      /* Full range, a narrow band, and a thermal-like scene. */
      check_deep_frame (kCpu, deep_frame (rng, fmt, random_deep_image (rng,
                  sz[0], sz[1], l, 0, top)), l.bits, what + " full range");
      check_deep_frame (kCpu, deep_frame (rng, fmt, random_deep_image (rng,
                  sz[0], sz[1], l, top / 3, top / 3 + top / 50)), l.bits,
          what + " narrow");
      Image16 scene = thermal_like_image (rng, sz[0], sz[1], l.bits);
      for (auto &p : scene.pixels)
        p = uint16_t (p << l.shift);
      check_deep_frame (kCpu, deep_frame (rng, fmt, scene), l.bits,
          what + " scene");
    }
  }
}
GST_END_TEST;

GST_START_TEST (test_deep_hd_frame)
{
  std::mt19937 rng (1011);
  const DeepLayout l = deep_layout (GST_VIDEO_FORMAT_P010_10LE);
  check_deep_frame (kCpu, deep_frame (rng, GST_VIDEO_FORMAT_P010_10LE,
          random_deep_image (rng, 1920, 1080, l, 100, 700)), 10, "P010 1080p");
  check_deep_frame (kCpu, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
          thermal_like_image (rng, 1920, 1080, 16)), 16, "GRAY16 1080p");
}
GST_END_TEST;

/* 14-bit data in GRAY16_LE: equalized over 16384 levels, words above the
 * range read as the highest level. */
GST_START_TEST (test_significant_bits)
{
  std::mt19937 rng (1014);
  const char *launch = "cudahisteq backend=cpu significant-bits=14";
  for (int bits : {14, 12, 9}) {
    const std::string l = std::string ("cudahisteq backend=cpu significant-bits=") +
        std::to_string (bits);
    Image16 scene = thermal_like_image (rng, 321, 243, bits);
    check_deep_frame (l.c_str (), deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
            scene), bits, l);
  }
  Image16 over = thermal_like_image (rng, 64, 48, 14);
  over.at (3, 3) = 16384;
  over.at (4, 3) = 65535;
  check_deep_frame (launch, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE, over),
      14, "words above 14 bits");
  /* P010: the significant bits count from bit 6. */
  Image16 p010 = random_deep_image (rng, 66, 40, DeepLayout { 10, 6 }, 0, 1023);
  check_deep_frame ("cudahisteq backend=cpu significant-bits=8",
      deep_frame (rng, GST_VIDEO_FORMAT_P010_10LE, p010), 8, "P010 at 8 bits");
  /* 8 on an 8-bit format is the format's own depth. */
  Image img = random_image (rng, 33, 17);
  GstHarness *h = harness_for ("cudahisteq backend=cpu significant-bits=8", 33, 17);
  assert_images_equal (push_pull (h, img), reference_equalize (img), "GRAY8, 8 bits");
  gst_harness_teardown (h);
}
GST_END_TEST;

static void
check_refused (const char *launch, GstVideoFormat fmt)
{
  BusHarness bh (launch);
  gst_harness_set_src_caps_str (bh.h, video_caps (fmt, 64, 48).c_str ());
  GstVideoInfo info;
  gst_video_info_set_format (&info, fmt, 64, 48);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  gst_buffer_memset (buf, 0, 0, GST_VIDEO_INFO_SIZE (&info));
  fail_unless (gst_harness_push (bh.h, buf) != GST_FLOW_OK, "%s", launch);
  const std::string err = bh.first_error ();
  fail_unless (err.find ("significant-bits") != std::string::npos,
      "%s: error was '%s'", launch, err.c_str ());
}

GST_START_TEST (test_significant_bits_that_do_not_fit_are_refused)
{
  check_refused ("cudahisteq backend=cpu significant-bits=12",
      GST_VIDEO_FORMAT_I420_10LE);
  check_refused ("cudahisteq backend=cpu significant-bits=11",
      GST_VIDEO_FORMAT_P010_10LE);
  check_refused ("cudahisteq backend=cpu significant-bits=10",
      GST_VIDEO_FORMAT_GRAY8);
  check_refused ("cudahisteq backend=cpu significant-bits=6",
      GST_VIDEO_FORMAT_NV12);
}
GST_END_TEST;

/* Depth changes mid-stream: 8-bit, 16-bit, 10-bit and back, with
 * temporal smoothing on, which restarts at each change. */
GST_START_TEST (test_renegotiation_between_depths)
{
  std::mt19937 rng (1016);
  GstHarness *h = gst_harness_new_parse ("cudahisteq backend=cpu");
  const GstVideoFormat fmts[] = { GST_VIDEO_FORMAT_GRAY8,
    GST_VIDEO_FORMAT_GRAY16_LE, GST_VIDEO_FORMAT_P010_10LE,
    GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_Y444_12LE, GST_VIDEO_FORMAT_GRAY8
  };
  for (GstVideoFormat fmt : fmts) {
    for (int i = 0; i < 2; ++i) {
      const std::string what = std::string ("after switching to ") +
          gst_video_format_to_string (fmt);
      if (fmt == GST_VIDEO_FORMAT_GRAY8 || fmt == GST_VIDEO_FORMAT_NV12) {
        PlanarFrame in = frame_with_luma (rng, fmt, random_image (rng, 45, 31, 10, 200));
        PlanarFrame out = push_pull_in (h, in);
        assert_images_equal (out.planes[0], reference_equalize (in.planes[0]),
            what.c_str ());
        continue;
      }
      const DeepLayout l = deep_layout (fmt);
      PlanarFrame in = deep_frame (rng, fmt, random_deep_image (rng, 45, 31, l,
              5, (1 << l.bits) - 9));
      PlanarFrame out = push_pull_in (h, in);
      assert_images16_equal (words_of (out.planes[0]),
          reference_equalize_deep (words_of (in.planes[0]), l.bits, l.shift),
          what);
    }
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

static Suite *
cudahisteq_cpu_suite (void)
{
  Suite *s = suite_create ("cudahisteq-cpu");
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_random_frames_match_reference);
  tcase_add_test (tc, test_one_value_frames_are_unchanged);
  tcase_add_test (tc, test_two_value_frames_stretch_to_full_range);
  tcase_add_test (tc, test_hand_computed_lut);
  tcase_add_test (tc, test_few_levels_match_reference);
  tcase_add_test (tc, test_renegotiation_mid_stream);
  tcase_add_test (tc, test_state_cycling);
  tcase_add_test (tc, test_formats_filter_luma_only);
  tcase_add_test (tc, test_deep_formats_match_reference);
  tcase_add_test (tc, test_deep_hd_frame);
  tcase_add_test (tc, test_significant_bits);
  tcase_add_test (tc, test_significant_bits_that_do_not_fit_are_refused);
  tcase_add_test (tc, test_renegotiation_between_depths);
  return s;
}

GST_CHECK_MAIN (cudahisteq_cpu);

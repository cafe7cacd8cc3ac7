/* cudahisteq against the independent reference of cv::equalizeHist (and its
 * deeper form over 2^b levels), in every format, with temporal smoothing.
 * Built twice from this file: `cudahisteq` runs every case on the CPU
 * backend (everywhere, no GPU needed); `cudahisteq-gpu` runs them on the
 * CUDA backend, on frames up to 8K, also against the CPU backend bit for
 * bit, adds the pinned pools the element proposes, and exits 77 (skipped)
 * where no GPU is usable. Frames in CUDA memory: pipelines/cuda_memory_gpu.cpp;
 * what every element does alike: cudafiltersbase.cpp. */
#include "deep_frames.h"
#include "smoothing.h"

using namespace test;

static const std::string kElement = on_backend ("cudahisteq");
static const char *kCpu = "cudahisteq backend=cpu";

/* Frame sizes chosen for their edges: 1x1, odd widths (padded strides),
 * widths around the 16-byte vector width, and common video sizes; on the
 * GPU up to 8K. */
static const int kSizes[][2] = {
  {1, 1}, {2, 1}, {1, 7}, {3, 3}, {15, 2}, {16, 3}, {17, 5}, {31, 31},
#if TEST_GPU
  {33, 1},
#endif
  {64, 48}, {100, 1}, {1, 100}, {385, 289}, {641, 479}, {1280, 720},
#if TEST_GPU
  {1920, 1080}, {1921, 1081}, {3840, 2160}, {7680, 4320},
#endif
};

/* One element for the whole stream of sizes: every frame equals the
 * reference and, on the GPU, the CPU backend's output, pixel for pixel. */
static void
check_frames (const std::vector<Image> & frames, const char *what)
{
  check_frames_through (kElement, kCpu, frames, reference_equalize, what);
}

/* One frame through a fresh element, against what it must give. */
static void
check_frame (const std::string & launch, const Image & img, const Image & want,
    const char *what)
{
  GstHarness *h = harness_for (launch.c_str (), img.width, img.height);
  assert_images_equal (push_pull (h, img), want, what);
  gst_harness_teardown (h);
}

GST_START_TEST (test_random_frames)
{
  std::mt19937 rng (2024);
  std::vector<Image> frames;
  for (const auto & s : kSizes)
    frames.push_back (random_image (rng, s[0], s[1]));
  check_frames (frames, "uniform random");
}
GST_END_TEST;

GST_START_TEST (test_low_contrast_and_natural_frames)
{
  std::mt19937 rng (77);
  std::vector<Image> frames;
  for (const auto & s : kSizes) {
    frames.push_back (random_image (rng, s[0], s[1], 100, 140));
    frames.push_back (natural_image (s[0], s[1]));
  }
  check_frames (frames, "low contrast / natural");
}
GST_END_TEST;

GST_START_TEST (test_one_and_few_value_frames)
{
  std::mt19937 rng (8);
  std::vector<Image> frames;
  for (const auto & s : kSizes) {
    frames.push_back (constant_image (s[0], s[1], 0));
    frames.push_back (constant_image (s[0], s[1], 201));
    frames.push_back (constant_image (s[0], s[1], 255));
    frames.push_back (few_levels_image (rng, s[0], s[1], {17, 18}));
    frames.push_back (few_levels_image (rng, s[0], s[1], {0, 128, 255}));
  }
  check_frames (frames, "one/two/few values");
}
GST_END_TEST;

/* (Under compute-sanitizer, CUDAFILTERS_TEST_SKIP_LARGE, without the frames
 * above 1080p here and in the next case: each takes minutes there.) */
GST_START_TEST (test_one_value_frames_are_unchanged)
{
  for (int v : {0, 1, 77, 254, 255})
    for (const auto & s : kSizes) {
      if (skip_large () && s[0] * s[1] > 1921 * 1081)
        continue;
      const Image img = constant_image (s[0], s[1], uint8_t (v));
      check_frame (kElement, img, img, "one-value frame");
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
    check_frame (kElement, img, want, "two-value frame");
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
  check_frame (kElement, img, want, "hand-computed");
}
GST_END_TEST;

GST_START_TEST (test_few_levels_match_reference)
{
  std::mt19937 rng (99);
  for (const auto & s : kSizes) {
    if (skip_large () && s[0] * s[1] > 1921 * 1081)
      continue;
    const Image img = few_levels_image (rng, s[0], s[1], {5, 9, 200, 201, 202});
    check_frame (kElement, img, reference_equalize (img), "few levels");
  }
}
GST_END_TEST;

/* One stream, several frame sizes: each caps change reconfigures the element
 * and every frame still matches the reference. */
GST_START_TEST (test_renegotiation_mid_stream)
{
  check_renegotiation_mid_stream (kElement, { {64, 48}, {33, 17}, {1920,
          1080}, {1, 1}, {64, 48} }, reference_equalize, 90);
}
GST_END_TEST;

/* Many frames through one instance: the histogram the engine keeps between
 * frames must start from zero every time. (Fewer frames on the CPU under
 * CUDAFILTERS_TEST_QUICK, for valgrind.) */
GST_START_TEST (test_state_between_frames)
{
  std::mt19937 rng (31);
  const int frames = !TEST_GPU && quick () ? 20 : 200;
  GstHarness *h = harness_for (kElement.c_str (), 640, 480);
  for (int i = 0; i < frames; ++i) {
    Image img = (i % 3 == 0) ? constant_image (640, 480, uint8_t (i))
        : random_image (rng, 640, 480, i % 50, 100 + i % 100);
    assert_images_equal (push_pull (h, img), reference_equalize (img),
        "frame sequence");
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_state_cycling)
{
  GstElement *e = gst_element_factory_make ("cudahisteq", NULL);
  gst_util_set_object_arg (G_OBJECT (e), "backend", kBackend);
  const GstState states[] = { GST_STATE_READY, GST_STATE_PAUSED,
    GST_STATE_PLAYING, GST_STATE_PAUSED, GST_STATE_READY, GST_STATE_NULL
  };
  for (int cycle = 0; cycle < 20; ++cycle) {
    /* Offered the context at each start, as a bin does; the first start
     * makes its own. */
    if (cycle > 0)
      share_test_context (e, Context::kShared);
    for (GstState s : states)
      fail_unless (gst_element_set_state (e, s) != GST_STATE_CHANGE_FAILURE);
  }
  gst_object_unref (e);

  /* And with data flowing between cycles. */
  std::mt19937 rng (12);
  GstHarness *h = harness_for (kElement.c_str (), 320, 240);
  for (int cycle = 0; cycle < 10; ++cycle) {
    Image img = random_image (rng, 320, 240);
    assert_images_equal (push_pull (h, img), reference_equalize (img),
        "after state cycle");
    restart_harness (h);
    gst_harness_set_src_caps_str (h, gray_caps (320, 240).c_str ());
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
      PlanarFrame out = push_pull_frame (kElement.c_str (), in);
      assert_images_equal (out.planes[0], reference_equalize (in.planes[0]),
          gst_video_format_to_string (fmt));
      assert_chroma_carried (out, in);
    }
}
GST_END_TEST;

/* Deeper formats, bit for bit against the reference over 2^b levels (and
 * so against the other backend, which its own build checks the same way):
 * the full range, a narrow band, four levels and a thermal-like scene. One
 * element: every format and size renegotiates it. */
GST_START_TEST (test_deep_formats)
{
  std::mt19937 rng (4040);
  const int sizes[][2] = {
#if TEST_GPU
    {1, 1}, {7, 3}, {17, 5}, {385, 289}, {1920, 1080}, {1921, 1081},
#else
    {1, 1}, {2, 3}, {17, 5}, {33, 17}, {385, 289},
#endif
  };
  GstHarness *h = new_harness (kElement);
  for (GstVideoFormat fmt : kDeepFormats) {
    const DeepLayout l = deep_layout (fmt);
    const int top = (1 << l.bits) - 1;
    for (const auto & sz : sizes) {
      const std::string what = std::string (gst_video_format_to_string (fmt)) +
          " " + std::to_string (sz[0]) + "x" + std::to_string (sz[1]);
      assert_equalized_deep (h, deep_frame (rng, fmt, random_deep_image (rng,
                  sz[0], sz[1], l, 0, top)), l.bits, what + " full range");
      assert_equalized_deep (h, deep_frame (rng, fmt, random_deep_image (rng,
                  sz[0], sz[1], l, top / 3, top / 3 + top / 50)), l.bits,
          what + " narrow");
      assert_equalized_deep (h, deep_frame (rng, fmt, random_deep_image (rng,
                  sz[0], sz[1], l, top / 2, top / 2 + 3)), l.bits,
          what + " four levels");
      Image16 scene = thermal_like_image (rng, sz[0], sz[1], l.bits);
      for (auto &p : scene.pixels)
        p = uint16_t (p << l.shift);
      assert_equalized_deep (h, deep_frame (rng, fmt, scene), l.bits,
          what + " scene");
    }
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

/* The largest deep frames of each backend: 1080p on the CPU, 8K on the GPU.
 * A block's packed counters hold 65535 samples: two levels everywhere
 * check that no counter overflows into its neighbour. */
GST_START_TEST (test_deep_large_frames)
{
  std::mt19937 rng (4041);
  const int w = TEST_GPU ? 7680 : 1920, hgt = TEST_GPU ? 4320 : 1080;
  const std::string size = std::to_string (w) + "x" + std::to_string (hgt);
  GstHarness *h = new_harness (kElement);
  assert_equalized_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
          thermal_like_image (rng, w, hgt, 16)), 16, "GRAY16_LE " + size);
  assert_equalized_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
          random_deep_image (rng, w, hgt, DeepLayout { 16, 0 }, 1000, 1001)),
      16, "GRAY16_LE " + size + ", two levels");
  assert_equalized_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_P010_10LE,
          random_deep_image (rng, w, hgt, DeepLayout { 10, 6 }, 0, 1023)),
      10, "P010 " + size);
  assert_equalized_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_P010_10LE,
          random_deep_image (rng, w, hgt, DeepLayout { 10, 6 }, 100, 700)),
      10, "P010 " + size + ", 100 to 700");
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Deeper formats, each frame through a fresh element. */
static void
check_deep_frame (const std::string & launch, const PlanarFrame & in, int bits,
    const std::string & what)
{
  GstHarness *h = new_harness (launch);
  assert_equalized_deep (h, in, bits, what);
  gst_harness_teardown (h);
}

/* 14-bit data in GRAY16_LE: equalized over 16384 levels, words above the
 * range read as the highest level. */
GST_START_TEST (test_significant_bits)
{
  std::mt19937 rng (1014);
  const std::string launch = on_backend ("cudahisteq", " significant-bits=14");
  for (int bits : {14, 12, 9}) {
    const std::string l = on_backend ("cudahisteq", " significant-bits=" +
        std::to_string (bits));
    Image16 scene = thermal_like_image (rng, 321, 243, bits);
    check_deep_frame (l, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE, scene),
        bits, l);
  }
  /* Larger frames, one word above the range each. */
  for (int bits : {14, 12}) {
    const std::string l = on_backend ("cudahisteq", " significant-bits=" +
        std::to_string (bits));
    Image16 scene = thermal_like_image (rng, 1280, 1024, bits);
    scene.at (5, 5) = 65535;
    check_deep_frame (l, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE, scene),
        bits, l);
  }
  Image16 over = thermal_like_image (rng, 64, 48, 14);
  over.at (3, 3) = 16384;
  over.at (4, 3) = 65535;
  check_deep_frame (launch, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE, over),
      14, "words above 14 bits");
  /* P010: the significant bits count from bit 6. */
  const std::string at8 = on_backend ("cudahisteq", " significant-bits=8");
  Image16 p010 = random_deep_image (rng, 66, 40, DeepLayout { 10, 6 }, 0, 1023);
  check_deep_frame (at8, deep_frame (rng, GST_VIDEO_FORMAT_P010_10LE, p010), 8,
      "P010 at 8 bits");
  /* 8 on an 8-bit format is the format's own depth. */
  Image img = random_image (rng, 33, 17);
  check_frame (at8, img, reference_equalize (img), "GRAY8, 8 bits");
}
GST_END_TEST;

static void
check_refused (const std::string & launch, GstVideoFormat fmt)
{
  BusHarness bh (launch);
  gst_harness_set_src_caps_str (bh.h, video_caps (fmt, 64, 48).c_str ());
  GstVideoInfo info;
  gst_video_info_set_format (&info, fmt, 64, 48);
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  gst_buffer_memset (buf, 0, 0, GST_VIDEO_INFO_SIZE (&info));
  fail_unless (gst_harness_push (bh.h, buf) != GST_FLOW_OK, "%s",
      launch.c_str ());
  const std::string err = bh.first_error ();
  fail_unless (err.find ("significant-bits") != std::string::npos,
      "%s: error was '%s'", launch.c_str (), err.c_str ());
}

GST_START_TEST (test_significant_bits_that_do_not_fit_are_refused)
{
  check_refused (on_backend ("cudahisteq", " significant-bits=12"),
      GST_VIDEO_FORMAT_I420_10LE);
  check_refused (on_backend ("cudahisteq", " significant-bits=11"),
      GST_VIDEO_FORMAT_P010_10LE);
  check_refused (on_backend ("cudahisteq", " significant-bits=10"),
      GST_VIDEO_FORMAT_GRAY8);
  check_refused (on_backend ("cudahisteq", " significant-bits=6"),
      GST_VIDEO_FORMAT_NV12);
}
GST_END_TEST;

/* Depth changes mid-stream: 8-bit, 16-bit, 10-bit and back. */
GST_START_TEST (test_renegotiation_between_depths)
{
  std::mt19937 rng (1016);
  GstHarness *h = new_harness (kElement);
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

/* ---------------------------------------------------- temporal smoothing */

GST_START_TEST (test_smoothing_matches_model)
{
  check_smoothing_matches_model (kHistEq);
}
GST_END_TEST;

GST_START_TEST (test_still_frames_equalize_fully)
{
  check_still_frames_equalize_fully (kHistEq);
}
GST_END_TEST;

GST_START_TEST (test_smoothing_reduces_flicker)
{
  check_smoothing_reduces_flicker (kHistEq);
}
GST_END_TEST;

GST_START_TEST (test_live_smoothing_changes)
{
  check_live_smoothing_changes (kHistEq);
}
GST_END_TEST;

#if TEST_GPU
/* Temporal smoothing on deep frames, with a depth change and a size change
 * on the way: GPU and CPU backends agree frame by frame. */
GST_START_TEST (test_deep_smoothing_matches_cpu)
{
  std::mt19937 rng (4043);
  GstHarness *gpu = new_harness ("cudahisteq backend=cuda temporal-smoothing=0.8");
  GstHarness *cpu = new_harness ("cudahisteq backend=cpu temporal-smoothing=0.8");
  const GstVideoFormat fmts[] = { GST_VIDEO_FORMAT_GRAY16_LE,
    GST_VIDEO_FORMAT_GRAY16_LE, GST_VIDEO_FORMAT_GRAY16_LE,
    GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_P010_10LE,
    GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_I420_12LE,
    GST_VIDEO_FORMAT_I420_12LE };
  int i = 0;
  for (GstVideoFormat fmt : fmts) {
    const int w = i < 6 ? 640 : 333, hgt = i < 6 ? 480 : 251;
    assert_backends_agree (gpu, cpu, mixed_depth_frame (rng, fmt, i, w, hgt), i);
    ++i;
  }
  gst_harness_teardown (gpu);
  gst_harness_teardown (cpu);
}
GST_END_TEST;

/* ------------------------------------------------------ the pinned pool */

GST_START_TEST (test_proposed_pinned_pool)
{
  check_proposed_pinned_pool (kElement.c_str (), 1283, 721, reference_equalize);
  check_proposed_pinned_pool (kElement.c_str (), 1280, 720, reference_equalize);
}
GST_END_TEST;

static Image16
equalize_16 (const Image16 & img)
{
  return reference_equalize_deep (img, 16, 0);
}

GST_START_TEST (test_deep_proposed_pinned_pool)
{
  check_deep_proposed_pinned_pool (kElement.c_str (), equalize_16);
}
GST_END_TEST;
#endif

static Suite *
cudahisteq_suite (void)
{
  Suite *s = suite_create (TEST_SUITE_NAME ("cudahisteq"));
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_random_frames);
  tcase_add_test (tc, test_low_contrast_and_natural_frames);
  tcase_add_test (tc, test_one_and_few_value_frames);
  tcase_add_test (tc, test_one_value_frames_are_unchanged);
  tcase_add_test (tc, test_two_value_frames_stretch_to_full_range);
  tcase_add_test (tc, test_hand_computed_lut);
  tcase_add_test (tc, test_few_levels_match_reference);
  tcase_add_test (tc, test_renegotiation_mid_stream);
  tcase_add_test (tc, test_state_between_frames);
  tcase_add_test (tc, test_state_cycling);
  tcase_add_test (tc, test_formats_filter_luma_only);
  tcase_add_test (tc, test_deep_formats);
  tcase_add_test (tc, test_deep_large_frames);
  tcase_add_test (tc, test_significant_bits);
  tcase_add_test (tc, test_significant_bits_that_do_not_fit_are_refused);
  tcase_add_test (tc, test_renegotiation_between_depths);
  tcase_add_test (tc, test_smoothing_matches_model);
  tcase_add_test (tc, test_still_frames_equalize_fully);
  tcase_add_test (tc, test_smoothing_reduces_flicker);
  tcase_add_test (tc, test_live_smoothing_changes);
#if TEST_GPU
  tcase_add_test (tc, test_deep_smoothing_matches_cpu);
  tcase_add_test (tc, test_proposed_pinned_pool);
  tcase_add_test (tc, test_deep_proposed_pinned_pool);
#endif
  return s;
}

int
main (int argc, char **argv)
{
  return run_suite (argc, argv, cudahisteq_suite,
      TEST_SUITE_NAME ("cudahisteq"));
}

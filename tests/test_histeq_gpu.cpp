/* cudahisteq on the GPU, bit for bit against the CPU backend and the
 * reference. Exits 77 (skipped) where no GPU is usable. */
#include "deep_frames.h"
#include "test_common.h"

using namespace test;

static const char *kCuda = "cudahisteq backend=cuda";
static const char *kCpu = "cudahisteq backend=cpu";

static const int kSizes[][2] = {
  {1, 1}, {2, 1}, {1, 7}, {3, 3}, {15, 2}, {16, 3}, {17, 5}, {31, 31},
  {33, 1}, {64, 48}, {100, 1}, {1, 100}, {385, 289}, {641, 479},
  {1280, 720}, {1920, 1080}, {1921, 1081}, {3840, 2160}, {7680, 4320},
};

/* One GPU harness for the whole stream of sizes (renegotiating on the way),
 * one CPU harness per frame: GPU output must equal CPU output and the
 * reference, pixel for pixel. */
static void
check_gpu_matches_cpu (const std::vector<Image> & frames, const char *what)
{
  GstHarness *gpu = harness_for (kCuda, frames[0].width, frames[0].height);
  for (const Image & img : frames) {
    gst_harness_set_src_caps_str (gpu, gray_caps (img.width,
            img.height).c_str ());
    GstHarness *cpu = harness_for (kCpu, img.width, img.height);
    Image from_cpu = push_pull (cpu, img);
    gst_harness_teardown (cpu);
    Image from_gpu = push_pull (gpu, img);
    assert_images_equal (from_gpu, from_cpu, what);
    assert_images_equal (from_gpu, reference_equalize (img), what);
  }
  gst_harness_teardown (gpu);
}

GST_START_TEST (test_gpu_random_frames)
{
  std::mt19937 rng (2024);
  std::vector<Image> frames;
  for (const auto & s : kSizes)
    frames.push_back (random_image (rng, s[0], s[1]));
  check_gpu_matches_cpu (frames, "uniform random");
}
GST_END_TEST;

GST_START_TEST (test_gpu_low_contrast_and_natural_frames)
{
  std::mt19937 rng (77);
  std::vector<Image> frames;
  for (const auto & s : kSizes) {
    frames.push_back (random_image (rng, s[0], s[1], 100, 140));
    frames.push_back (natural_image (s[0], s[1]));
  }
  check_gpu_matches_cpu (frames, "low contrast / natural");
}
GST_END_TEST;

GST_START_TEST (test_gpu_one_and_two_value_frames)
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
  check_gpu_matches_cpu (frames, "one/two/few values");
}
GST_END_TEST;

/* Many frames through one instance: the histogram the kernels keep between
 * frames must start from zero every time. */
GST_START_TEST (test_gpu_state_between_frames)
{
  std::mt19937 rng (31);
  GstHarness *gpu = harness_for (kCuda, 640, 480);
  for (int i = 0; i < 200; ++i) {
    Image img = (i % 3 == 0) ? constant_image (640, 480, uint8_t (i))
        : random_image (rng, 640, 480, i % 50, 100 + i % 100);
    assert_images_equal (push_pull (gpu, img), reference_equalize (img),
        "frame sequence");
  }
  gst_harness_teardown (gpu);
}
GST_END_TEST;

GST_START_TEST (test_gpu_state_cycling)
{
  std::mt19937 rng (12);
  GstHarness *gpu = harness_for (kCuda, 320, 240);
  for (int cycle = 0; cycle < 10; ++cycle) {
    Image img = random_image (rng, 320, 240);
    assert_images_equal (push_pull (gpu, img), reference_equalize (img),
        "after GPU state cycle");
    fail_unless (gst_element_set_state (gpu->element, GST_STATE_NULL) ==
        GST_STATE_CHANGE_SUCCESS);
    gst_harness_play (gpu);
    gst_harness_set_src_caps_str (gpu, gray_caps (320, 240).c_str ());
  }
  gst_harness_teardown (gpu);
}
GST_END_TEST;

GST_START_TEST (test_gpu_proposed_pinned_pool)
{
  check_proposed_pinned_pool (kCuda, 1283, 721, reference_equalize);
  check_proposed_pinned_pool (kCuda, 1280, 720, reference_equalize);
}
GST_END_TEST;

/* Deeper formats: the GPU equals the reference (and so the CPU backend,
 * which the cpu suite checks against it) bit for bit. */
GST_START_TEST (test_gpu_deep_formats)
{
  std::mt19937 rng (4040);
  const int sizes[][2] = { {1, 1}, {7, 3}, {17, 5}, {385, 289}, {1920, 1080},
    {1921, 1081} };
  /* One harness: every format and size renegotiates the same element. */
  GstHarness *h = gst_harness_new_parse (kCuda);
  for (GstVideoFormat fmt : kDeepFormats) {
    const DeepLayout l = deep_layout (fmt);
    const int top = (1 << l.bits) - 1;
    for (const auto & sz : sizes) {
      const std::string what = std::string (gst_video_format_to_string (fmt)) +
          " " + std::to_string (sz[0]) + "x" + std::to_string (sz[1]);
      assert_equalized_deep (h, deep_frame (rng, fmt, random_deep_image (rng, sz[0], sz[1],
                  l, 0, top)), l.bits, what + " full range");
      assert_equalized_deep (h, deep_frame (rng, fmt, random_deep_image (rng, sz[0], sz[1],
                  l, top / 2, top / 2 + 3)), l.bits, what + " four levels");
      Image16 scene = thermal_like_image (rng, sz[0], sz[1], l.bits);
      for (auto &p : scene.pixels)
        p = uint16_t (p << l.shift);
      assert_equalized_deep (h, deep_frame (rng, fmt, scene), l.bits, what + " scene");
    }
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_gpu_deep_8k)
{
  std::mt19937 rng (4041);
  GstHarness *h = gst_harness_new_parse (kCuda);
  assert_equalized_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
          thermal_like_image (rng, 7680, 4320, 16)), 16, "GRAY16_LE 8K");
  /* A block's packed counters hold 65535 samples: one level everywhere
   * checks that no counter overflows into its neighbour. */
  assert_equalized_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
          random_deep_image (rng, 7680, 4320, DeepLayout { 16, 0 }, 1000,
              1001)), 16, "GRAY16_LE 8K, two levels");
  assert_equalized_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_P010_10LE,
          random_deep_image (rng, 7680, 4320, DeepLayout { 10, 6 }, 0, 1023)),
      10, "P010 8K");
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_gpu_significant_bits)
{
  std::mt19937 rng (4042);
  for (int bits : {14, 12}) {
    const std::string launch = std::string (kCuda) + " significant-bits=" +
        std::to_string (bits);
    GstHarness *h = gst_harness_new_parse (launch.c_str ());
    Image16 scene = thermal_like_image (rng, 1280, 1024, bits);
    scene.at (5, 5) = 65535;  /* above the range: the highest level */
    assert_equalized_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE, scene), bits,
        launch);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* Temporal smoothing on deep frames, with a depth change and a size change
 * on the way: GPU and CPU backends agree frame by frame. */
GST_START_TEST (test_gpu_deep_smoothing_matches_cpu)
{
  std::mt19937 rng (4043);
  GstHarness *gpu = gst_harness_new_parse ("cudahisteq backend=cuda temporal-smoothing=0.8");
  GstHarness *cpu = gst_harness_new_parse ("cudahisteq backend=cpu temporal-smoothing=0.8");
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

static Image16
equalize_16 (const Image16 & img)
{
  return reference_equalize_deep (img, 16, 0);
}

GST_START_TEST (test_gpu_deep_proposed_pinned_pool)
{
  check_deep_proposed_pinned_pool (kCuda, equalize_16);
}
GST_END_TEST;

static Suite *
cudahisteq_gpu_suite (void)
{
  Suite *s = suite_create ("cudahisteq-gpu");
  TCase *tc = tcase_create ("gpu");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_gpu_random_frames);
  tcase_add_test (tc, test_gpu_low_contrast_and_natural_frames);
  tcase_add_test (tc, test_gpu_one_and_two_value_frames);
  tcase_add_test (tc, test_gpu_state_between_frames);
  tcase_add_test (tc, test_gpu_state_cycling);
  tcase_add_test (tc, test_gpu_proposed_pinned_pool);
  tcase_add_test (tc, test_gpu_deep_formats);
  tcase_add_test (tc, test_gpu_deep_8k);
  tcase_add_test (tc, test_gpu_significant_bits);
  tcase_add_test (tc, test_gpu_deep_smoothing_matches_cpu);
  tcase_add_test (tc, test_gpu_deep_proposed_pinned_pool);
  return s;
}

int
main (int argc, char **argv)
{
  return test::run_gpu_suite (argc, argv, cudahisteq_gpu_suite, "cudahisteq-gpu");
}

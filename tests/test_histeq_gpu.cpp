/* cudahisteq on the GPU, bit for bit against the CPU backend and the
 * reference. Exits 77 (skipped) where no GPU is usable. */
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

GST_START_TEST (test_gpu_auto_uses_gpu_without_warning)
{
  BusHarness bh ("cudahisteq backend=auto");
  gst_harness_set_src_caps_str (bh.h, gray_caps (99, 33).c_str ());
  std::mt19937 rng (4);
  Image img = random_image (rng, 99, 33);
  assert_images_equal (push_pull (bh.h, img), reference_equalize (img), "auto");
  fail_unless_equals_int (bh.count (GST_MESSAGE_WARNING), 0);
}
GST_END_TEST;

GST_START_TEST (test_gpu_proposed_pinned_pool)
{
  check_proposed_pinned_pool (kCuda, 1283, 721, reference_equalize);
  check_proposed_pinned_pool (kCuda, 1280, 720, reference_equalize);
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
  tcase_add_test (tc, test_gpu_auto_uses_gpu_without_warning);
  tcase_add_test (tc, test_gpu_proposed_pinned_pool);
  return s;
}

int
main (int argc, char **argv)
{
  return test::run_gpu_suite (argc, argv, cudahisteq_gpu_suite, "cudahisteq-gpu");
}

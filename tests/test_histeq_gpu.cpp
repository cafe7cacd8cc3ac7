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

/* Upstream that takes the pool the element proposes writes into pinned
 * memory; frames must come out the same, with padded strides from the video
 * meta, and pool buffers may outlive the element. A width that is a multiple
 * of 16 has 16-byte aligned rows, which the engine streams (its kernels read
 * and write the pinned frames directly); 1283 has 4-byte aligned rows, which
 * go through copies. */
static void
check_proposed_pinned_pool (int w, int hgt)
{
  std::mt19937 rng (21);
  GstHarness *gpu = harness_for (kCuda, w, hgt);

  GstCaps *caps = gst_caps_from_string (gray_caps (w, hgt).c_str ());
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  fail_unless (gst_pad_peer_query (gpu->srcpad, query));
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
    assert_images_equal (image_from_buffer (out, w, hgt),
        reference_equalize (img), "pinned input");
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

GST_START_TEST (test_gpu_proposed_pinned_pool)
{
  check_proposed_pinned_pool (1283, 721);
  check_proposed_pinned_pool (1280, 720);
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

/* cudasharpen on the GPU, bit for bit against the CPU backend (and the
 * written-out definition where it is affordable), 1x1 to 8K, 8- to 16-bit. Frames in CUDA
 * memory are covered in cuda-memory-gpu. Exits 77 (skipped) where no GPU is
 * usable. */
#include "sharpen_reference.h"

using namespace test;

static const int kSizes[][2] = {
  {1, 1}, {2, 1}, {1, 7}, {3, 3}, {15, 2}, {16, 3}, {17, 5}, {31, 31},
  {33, 1}, {64, 48}, {65, 17}, {100, 1}, {1, 100}, {385, 289}, {641, 479},
  {1280, 720}, {1920, 1080}, {1921, 1081}, {3840, 2160}, {7680, 4320},
};

/* One GPU harness for every frame (renegotiating on the way), one CPU
 * harness per frame: GPU output equals CPU output, and the reference on
 * small frames. */
static void
check_gpu_matches_cpu (const SharpenSettings & s,
    const std::vector<Image> & frames, const char *what)
{
  const std::string gpu_launch = s.launch ("cuda");
  const std::string cpu_launch = s.launch ("cpu");
  GstHarness *gpu = harness_for (gpu_launch.c_str (), frames[0].width,
      frames[0].height);
  for (const Image & img : frames) {
    gst_harness_set_src_caps_str (gpu, gray_caps (img.width,
            img.height).c_str ());
    GstHarness *cpu = harness_for (cpu_launch.c_str (), img.width, img.height);
    const Image from_cpu = push_pull (cpu, img);
    gst_harness_teardown (cpu);
    const Image from_gpu = push_pull (gpu, img);
    const std::string label = gpu_launch + ": " + what;
    assert_images_equal (from_gpu, from_cpu, label.c_str ());
    if (double (img.width) * img.height <= (s.radius <= 3 ? 65 * 17 : 33))
      assert_images_equal (from_gpu, reference_sharpen (img, s),
          label.c_str ());
  }
  gst_harness_teardown (gpu);
}

GST_START_TEST (test_gpu_random_and_natural_frames)
{
  std::mt19937 rng (2024);
  for (const SharpenSettings & s : kSharpenSets) {
    std::vector<Image> frames = random_and_natural_frames (rng, kSizes);
    frames.push_back (constant_image (640, 360, 255));
    check_gpu_matches_cpu (s, frames, "random/natural");
  }
}
GST_END_TEST;

/* Every radius the element takes, in steps of 0.1, each its own taps. */
GST_START_TEST (test_gpu_every_radius)
{
  std::mt19937 rng (9);
  const std::vector<Image> frames = { random_image (rng, 203, 151),
    natural_image (97, 300) };
  for (int i = 1; i <= 160; ++i) {
    SharpenSettings s;
    s.amount = 1.7;
    s.radius = i * 0.1;
    check_gpu_matches_cpu (s, frames, "radius sweep");
  }
}
GST_END_TEST;

/* Many frames through one instance with every property changing while
 * playing. */
GST_START_TEST (test_gpu_live_changes)
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

/* Every format in system memory: luma as the CPU makes it, chroma carried. */
GST_START_TEST (test_gpu_formats)
{
  std::mt19937 rng (77);
  const int sizes[][2] = { {33, 17}, {640, 360}, {2, 2} };
  for (const SharpenSettings & s : {kSharpenSets[0], kSharpenSets[9]})
    for (GstVideoFormat fmt : kFormats)
      for (const auto & sz : sizes) {
        PlanarFrame in = frame_with_luma (rng, fmt, natural_image (sz[0],
                sz[1]));
        PlanarFrame out = push_pull_frame (s.launch ("cuda").c_str (), in);
        PlanarFrame want = push_pull_frame (s.launch ("cpu").c_str (), in);
        assert_images_equal (out.planes[0], want.planes[0],
            gst_video_format_to_string (fmt));
        assert_chroma_carried (out, in);
      }
}
GST_END_TEST;

static Image
default_sharpen (const Image & img)
{
  return reference_sharpen (img, SharpenSettings ());
}

GST_START_TEST (test_gpu_proposed_pinned_pool)
{
  check_proposed_pinned_pool ("cudasharpen backend=cuda", 1283, 721,
      default_sharpen);
}
GST_END_TEST;

/* Deep formats, GPU against CPU bit for bit (and the definition on small
 * frames), every setting, sizes around the 64-sample deep tile to 1080p,
 * through one harness per backend and setting. */
GST_START_TEST (test_gpu_deep_formats)
{
  std::mt19937 rng (1618);
  const int sizes[][2] = { {1, 1}, {2, 3}, {33, 17}, {65, 17}, {641, 479},
    {1921, 1081} };
  for (GstVideoFormat fmt : kDeepFormats) {
    const int bits = deep_layout (fmt).bits;
    for (const SharpenSettings & s : kSharpenSets) {
      GstHarness *gpu = gst_harness_new_parse (s.launch ("cuda").c_str ());
      GstHarness *cpu = gst_harness_new_parse (s.launch ("cpu").c_str ());
      const std::string what = s.launch ("cuda") + " " +
          gst_video_format_to_string (fmt);
      for (const auto & sz : sizes) {
        if (skip_large () && sz[0] * sz[1] > 20000)
          continue;
        for (const Image16 & levels : deep_scenes (rng, sz[0], sz[1], bits)) {
          const Image16 got = luma_levels_in (gpu, fmt, levels, rng);
          assert_images16_equal (got, luma_levels_in (cpu, fmt, levels, rng),
              what);
          if (sz[0] * sz[1] <= (s.radius <= 3 ? 65 * 17 : 6))
            assert_images16_equal (got, reference_sharpen_levels (levels, s,
                    bits), what + " (definition)");
        }
      }
      gst_harness_teardown (gpu);
      gst_harness_teardown (cpu);
    }
  }
}
GST_END_TEST;

/* Every radius on 16-bit frames, changed while playing: up to 129 taps,
 * the widest tile. */
GST_START_TEST (test_gpu_deep_every_radius)
{
  std::mt19937 rng (1619);
  const Image16 levels = thermal_like_image (rng, 203, 151, 16);
  SharpenSettings s;
  s.amount = 1.7;
  GstHarness *gpu = gst_harness_new_parse (s.launch ("cuda").c_str ());
  GstHarness *cpu = gst_harness_new_parse (s.launch ("cpu").c_str ());
  for (int i = 1; i <= 160; ++i) {
    const double radius = i * 0.1;
    gst_harness_set (gpu, "cudasharpen", "radius", radius, NULL);
    gst_harness_set (cpu, "cudasharpen", "radius", radius, NULL);
    const std::string what = "radius " + std::to_string (radius);
    assert_images16_equal (luma_levels_in (gpu, GST_VIDEO_FORMAT_GRAY16_LE,
            levels, rng), luma_levels_in (cpu, GST_VIDEO_FORMAT_GRAY16_LE,
            levels, rng), what);
  }
  gst_harness_teardown (gpu);
  gst_harness_teardown (cpu);
}
GST_END_TEST;

/* 4K and 8K at 16 and 10 bits. */
GST_START_TEST (test_gpu_deep_large_frames)
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

static Suite *
cudasharpen_gpu_suite (void)
{
  Suite *s = suite_create ("cudasharpen-gpu");
  TCase *tc = tcase_create ("gpu");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_gpu_random_and_natural_frames);
  tcase_add_test (tc, test_gpu_every_radius);
  tcase_add_test (tc, test_gpu_live_changes);
  tcase_add_test (tc, test_gpu_formats);
  tcase_add_test (tc, test_gpu_proposed_pinned_pool);
  tcase_add_test (tc, test_gpu_deep_formats);
  tcase_add_test (tc, test_gpu_deep_every_radius);
  tcase_add_test (tc, test_gpu_deep_large_frames);
  return s;
}

int
main (int argc, char **argv)
{
  return test::run_gpu_suite (argc, argv, cudasharpen_gpu_suite,
      "cudasharpen-gpu");
}

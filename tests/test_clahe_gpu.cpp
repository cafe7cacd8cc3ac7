/* cudaclahe on the GPU, bit for bit against the CPU backend and the
 * transcription of OpenCV's CLAHE, 1x1 to 8K. Frames in CUDA memory are
 * covered in cuda-memory-gpu, temporal smoothing in equalize-stream-gpu.
 * Exits 77 (skipped) where no GPU is usable. */
#include "equalize_reference.h"

using namespace test;

static const int kSizes[][2] = {
  {1, 1}, {2, 1}, {1, 7}, {3, 3}, {15, 2}, {16, 3}, {17, 5}, {31, 31},
  {33, 1}, {64, 48}, {100, 1}, {1, 100}, {385, 289}, {641, 479},
  {1280, 720}, {1920, 1080}, {1921, 1081}, {3840, 2160}, {7680, 4320},
};

struct Settings {
  double clip;
  int tiles_x, tiles_y;
};

static const Settings kSettings[] = {
  {2.0, 8, 8}, {0.0, 8, 8}, {40.0, 8, 8}, {4.0, 3, 5}, {1.0, 1, 1},
  {2.0, 64, 64}, {0.5, 7, 2},
};

static std::string
launch_for (const char *backend, const Settings & s)
{
  return std::string ("cudaclahe backend=") + backend + " clip-limit=" +
      std::to_string (s.clip) + " tiles-x=" + std::to_string (s.tiles_x) +
      " tiles-y=" + std::to_string (s.tiles_y);
}

/* One GPU harness for every frame (renegotiating on the way), one CPU
 * harness per frame: GPU output equals CPU output and the reference. */
static void
check_gpu_matches_cpu (const Settings & s, const std::vector<Image> & frames,
    const char *what)
{
  const std::string gpu_launch = launch_for ("cuda", s);
  const std::string cpu_launch = launch_for ("cpu", s);
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
    assert_images_equal (from_gpu, reference_clahe (img, s.clip, s.tiles_x,
            s.tiles_y), label.c_str ());
  }
  gst_harness_teardown (gpu);
}

GST_START_TEST (test_gpu_random_and_natural_frames)
{
  std::mt19937 rng (2024);
  for (const Settings & s : kSettings) {
    std::vector<Image> frames = random_and_natural_frames (rng, kSizes);
    check_gpu_matches_cpu (s, frames, "random/natural");
  }
}
GST_END_TEST;

GST_START_TEST (test_gpu_few_levels_and_one_value_frames)
{
  std::mt19937 rng (8);
  for (const Settings & s : kSettings) {
    std::vector<Image> frames;
    for (const auto & sz : kSizes) {
      if (sz[0] * sz[1] > 1920 * 1088)
        continue;
      frames.push_back (constant_image (sz[0], sz[1], 201));
      frames.push_back (few_levels_image (rng, sz[0], sz[1], {17, 18}));
      frames.push_back (few_levels_image (rng, sz[0], sz[1], {0, 128, 255}));
    }
    check_gpu_matches_cpu (s, frames, "one/few values");
  }
}
GST_END_TEST;

/* Many frames through one instance: the tile histograms and counters the
 * kernels keep between frames must start from zero every time, also when
 * the grid changes while playing. */
GST_START_TEST (test_gpu_state_between_frames)
{
  std::mt19937 rng (31);
  GstHarness *gpu = harness_for ("cudaclahe backend=cuda", 640, 480);
  for (int i = 0; i < 120; ++i) {
    const Settings &s = kSettings[(i / 10) % G_N_ELEMENTS (kSettings)];
    gst_harness_set (gpu, "cudaclahe", "clip-limit", s.clip, "tiles-x",
        s.tiles_x, "tiles-y", s.tiles_y, NULL);
    Image img = (i % 3 == 0) ? constant_image (640, 480, uint8_t (i))
        : random_image (rng, 640, 480, i % 50, 100 + i % 100);
    assert_images_equal (push_pull (gpu, img), reference_clahe (img, s.clip,
            s.tiles_x, s.tiles_y), "frame sequence with live changes");
  }
  gst_harness_teardown (gpu);
}
GST_END_TEST;

/* Every format in system memory: luma as the reference, chroma carried. */
GST_START_TEST (test_gpu_formats)
{
  std::mt19937 rng (77);
  const int sizes[][2] = { {33, 17}, {640, 360}, {2, 2} };
  for (GstVideoFormat fmt : kFormats)
    for (const auto & sz : sizes) {
      PlanarFrame in = frame_with_luma (rng, fmt, natural_image (sz[0], sz[1]));
      PlanarFrame out = push_pull_frame ("cudaclahe backend=cuda", in);
      assert_images_equal (out.planes[0], reference_clahe (in.planes[0], 2.0,
              8, 8), gst_video_format_to_string (fmt));
      assert_chroma_carried (out, in);
    }
}
GST_END_TEST;

static Image
default_clahe (const Image & img)
{
  return reference_clahe (img, 2.0, 8, 8);
}

GST_START_TEST (test_gpu_proposed_pinned_pool)
{
  check_proposed_pinned_pool ("cudaclahe backend=cuda", 1283, 721,
      default_clahe);
  check_proposed_pinned_pool ("cudaclahe backend=cuda", 1280, 720,
      default_clahe);
}
GST_END_TEST;

static Suite *
cudaclahe_gpu_suite (void)
{
  Suite *s = suite_create ("cudaclahe-gpu");
  TCase *tc = tcase_create ("gpu");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_gpu_random_and_natural_frames);
  tcase_add_test (tc, test_gpu_few_levels_and_one_value_frames);
  tcase_add_test (tc, test_gpu_state_between_frames);
  tcase_add_test (tc, test_gpu_formats);
  tcase_add_test (tc, test_gpu_proposed_pinned_pool);
  return s;
}

int
main (int argc, char **argv)
{
  return test::run_gpu_suite (argc, argv, cudaclahe_gpu_suite, "cudaclahe-gpu");
}

/* cudaclahe on the GPU, bit for bit against the CPU backend and the
 * transcription of OpenCV's CLAHE, 1x1 to 8K. Frames in CUDA memory are
 * covered in cuda-memory-gpu, temporal smoothing of 8-bit frames in
 * equalize-stream-gpu. Deep frames against the transcription with 2^b bins.
 * Exits 77 (skipped) where no GPU is usable. */
#include "deep_frames.h"

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

/* ------------------------------------------------------------ deep frames */

/* The default grid (one chunk per tile up to 1080p), no clipping, one tile
 * (plateau equalization: several chunks per tile from 65536 samples on), a
 * grid that does not divide, and a fine grid. (64x64 tiles of 65536 bins
 * would take 512 MB of LUTs, in the reference too.) */
static const Settings kDeepSettings[] = {
  {2.0, 8, 8}, {0.0, 3, 5}, {4.0, 1, 1}, {1.0, 7, 2}, {2.0, 16, 16},
};

GST_START_TEST (test_gpu_deep_formats)
{
  std::mt19937 rng (5050);
  const int sizes[][2] = { {1, 1}, {7, 3}, {17, 5}, {385, 289}, {1920, 1080},
    {1921, 1081} };
  for (const Settings & s : kDeepSettings) {
    /* One harness per setting: formats and sizes renegotiate it. */
    GstHarness *h = gst_harness_new_parse (launch_for ("cuda", s).c_str ());
    for (GstVideoFormat fmt : kDeepFormats) {
      const DeepLayout l = deep_layout (fmt);
      const int top = (1 << l.bits) - 1;
      for (const auto & sz : sizes) {
        const std::string what = launch_for ("cuda", s) + " " +
            gst_video_format_to_string (fmt) + " " + std::to_string (sz[0]) +
            "x" + std::to_string (sz[1]);
        assert_clahe_deep (h, deep_frame (rng, fmt, random_deep_image (rng,
                    sz[0], sz[1], l, 0, top)), s.clip, s.tiles_x, s.tiles_y,
            what + " full range");
        assert_clahe_deep (h, deep_frame (rng, fmt, random_deep_image (rng,
                    sz[0], sz[1], l, top / 2, top / 2 + 3)), s.clip, s.tiles_x,
            s.tiles_y, what + " four levels");
        assert_clahe_deep (h, deep_frame (rng, fmt, thermal_like_words (rng,
                    sz[0], sz[1], l)), s.clip, s.tiles_x, s.tiles_y,
            what + " scene");
      }
    }
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* 4K and 8K: tiles of several chunks. One level everywhere fills one
 * packed counter per chunk to the brim (65535), which must not carry into
 * its neighbour. */
GST_START_TEST (test_gpu_deep_large_frames)
{
  if (skip_large ())
    return;
  std::mt19937 rng (5051);
  const DeepLayout gray16 = deep_layout (GST_VIDEO_FORMAT_GRAY16_LE);
  const Settings grids[] = { {2.0, 8, 8}, {4.0, 1, 1} };
  for (const Settings & s : grids) {
    GstHarness *h = gst_harness_new_parse (launch_for ("cuda", s).c_str ());
    for (const auto & sz : { std::make_pair (3840, 2160),
            std::make_pair (7680, 4320) }) {
      const std::string what = launch_for ("cuda", s) + " " +
          std::to_string (sz.first) + "x" + std::to_string (sz.second);
      assert_clahe_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
              thermal_like_words (rng, sz.first, sz.second, gray16)), s.clip,
          s.tiles_x, s.tiles_y, what + " GRAY16_LE scene");
      assert_clahe_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
              random_deep_image (rng, sz.first, sz.second, gray16, 1000,
                  1000)), s.clip, s.tiles_x, s.tiles_y, what + " one level");
      assert_clahe_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_P010_10LE,
              random_deep_image (rng, sz.first, sz.second, deep_layout
                  (GST_VIDEO_FORMAT_P010_10LE), 0, 1023)), s.clip, s.tiles_x,
          s.tiles_y, what + " P010");
    }
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* Temporal smoothing on deep frames, with depth, size and grid changes on
 * the way (tiles of one chunk and of several): GPU and CPU agree frame by
 * frame. */
GST_START_TEST (test_gpu_deep_smoothing_matches_cpu)
{
  std::mt19937 rng (5052);
  const char *props = " clip-limit=3 temporal-smoothing=0.8";
  GstHarness *gpu = gst_harness_new_parse ((std::string
          ("cudaclahe backend=cuda") + props).c_str ());
  GstHarness *cpu = gst_harness_new_parse ((std::string
          ("cudaclahe backend=cpu") + props).c_str ());
  const GstVideoFormat fmts[] = { GST_VIDEO_FORMAT_GRAY16_LE,
    GST_VIDEO_FORMAT_GRAY16_LE, GST_VIDEO_FORMAT_GRAY16_LE,
    GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_P010_10LE,
    GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_I420_12LE,
    GST_VIDEO_FORMAT_I420_12LE, GST_VIDEO_FORMAT_GRAY16_LE,
    GST_VIDEO_FORMAT_GRAY16_LE, GST_VIDEO_FORMAT_GRAY16_LE };
  int i = 0;
  for (GstVideoFormat fmt : fmts) {
    /* The last three frames: 2x2 tiles of 76800 samples, two chunks each. */
    const int grid = i < 8 ? 5 : 2;
    gst_harness_set (gpu, "cudaclahe", "tiles-x", grid, "tiles-y", grid, NULL);
    gst_harness_set (cpu, "cudaclahe", "tiles-x", grid, "tiles-y", grid, NULL);
    const int w = i < 6 || i >= 8 ? 640 : 333, hgt = i < 6 || i >= 8 ? 480 : 251;
    assert_backends_agree (gpu, cpu, mixed_depth_frame (rng, fmt, i, w, hgt), i);
    ++i;
  }
  gst_harness_teardown (gpu);
  gst_harness_teardown (cpu);
}
GST_END_TEST;

static Image16
default_clahe_16 (const Image16 & img)
{
  return reference_clahe_deep (img, 16, 0, 2.0, 8, 8);
}

GST_START_TEST (test_gpu_deep_proposed_pinned_pool)
{
  check_deep_proposed_pinned_pool ("cudaclahe backend=cuda", default_clahe_16);
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
  tcase_add_test (tc, test_gpu_deep_formats);
  tcase_add_test (tc, test_gpu_deep_large_frames);
  tcase_add_test (tc, test_gpu_deep_smoothing_matches_cpu);
  tcase_add_test (tc, test_gpu_deep_proposed_pinned_pool);
  return s;
}

int
main (int argc, char **argv)
{
  return test::run_gpu_suite (argc, argv, cudaclahe_gpu_suite, "cudaclahe-gpu");
}

/* cudaclahe against a transcription of OpenCV's CLAHE (8-bit, and 2^b bins
 * on deeper frames), in every format, with temporal smoothing. Built twice
 * from this file: `cudaclahe` runs every case on the CPU backend
 * (everywhere, no GPU needed); `cudaclahe-gpu` runs them on the CUDA
 * backend, on frames up to 8K, also against the CPU backend bit for bit,
 * adds the pinned pools the element proposes, and exits 77 (skipped) where
 * no GPU is usable. Frames in CUDA memory: pipelines/cuda_memory_gpu.cpp;
 * what every element does alike: cudafiltersbase.cpp. */
#include "deep_frames.h"
#include "smoothing.h"

using namespace test;

/* Sizes the grid rarely divides, around the 16-byte vector width, 1x1 and
 * common video sizes; on the GPU up to 8K. */
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

struct Settings {
  double clip;
  int tiles_x, tiles_y;
};

/* OpenCV's default grid, no clipping, clipping that never bites, a grid
 * larger than small frames, one tile (plateau equalization), the largest
 * grid, and the largest clip limit. */
static const Settings kSettings[] = {
  {2.0, 8, 8}, {0.0, 8, 8}, {40.0, 8, 8}, {4.0, 3, 5}, {1.0, 1, 1},
  {2.0, 64, 64}, {0.5, 7, 2}, {256.0, 2, 9},
};

static std::string
launch_for (const Settings & s, const char *backend = kBackend)
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

/* One element for every frame: every frame equals the reference and, on
 * the GPU, the CPU backend's output, pixel for pixel. */
static void
check_frames (const Settings & s, const std::vector<Image> & frames,
    const char *what)
{
  const std::string label = launch_for (s) + ": " + describe (s, what);
  check_frames_through (launch_for (s), launch_for (s, "cpu"), frames,
      [&](const Image & img) {
        return reference_clahe (img, s.clip, s.tiles_x, s.tiles_y);
      }, label.c_str ());
}

/* Under compute-sanitizer (CUDAFILTERS_TEST_SKIP_LARGE) frames above 1080p
 * take minutes each and are left out. */
static bool
skipped (int w, int h)
{
  return skip_large () && w * h > 1921 * 1081;
}

GST_START_TEST (test_random_and_natural_frames)
{
  std::mt19937 rng (2024);
  for (int si = 0; si < int (G_N_ELEMENTS (kSettings)); ++si) {
    const Settings & s = kSettings[si];
    std::vector<Image> frames;
    for (int zi = 0; zi < int (G_N_ELEMENTS (kSizes)); ++zi) {
      const int *sz = kSizes[zi];
      if (skipped (sz[0], sz[1]) || !size_in_sample (sz[0], sz[1], si, zi) ||
          (quick () && !in_grid_sample (si, zi, 3)))
        continue;
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
  std::mt19937 rng (8);
  for (int si = 0; si < int (G_N_ELEMENTS (kSettings)); ++si) {
    const Settings & s = kSettings[si];
    std::vector<Image> frames;
    for (int zi = 0; zi < int (G_N_ELEMENTS (kSizes)); ++zi) {
      const int *sz = kSizes[zi];
      if (sz[0] * sz[1] > 1920 * 1088 || !size_in_sample (sz[0], sz[1], si, zi)
          || (quick () && !in_grid_sample (si, zi, 5)))
        continue;
      frames.push_back (few_levels_image (rng, sz[0], sz[1], {5, 9, 200, 201}));
      frames.push_back (few_levels_image (rng, sz[0], sz[1], {17, 18}));
      frames.push_back (few_levels_image (rng, sz[0], sz[1], {0, 128, 255}));
      for (int v : {0, 77, 201, 255})
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
  GstHarness *h = harness_for (launch_for (Settings { 0.0, 1, 1 }).c_str (), 2,
      1);
  assert_images_equal (push_pull (h, img), want, "hand-computed");
  gst_harness_teardown (h);
}
GST_END_TEST;

/* One stream, several sizes: each caps change reconfigures the element. */
GST_START_TEST (test_renegotiation_mid_stream)
{
  check_renegotiation_mid_stream (on_backend ("cudaclahe"), { {64, 48},
        {33, 17}, {1920, 1080}, {1, 1}, {7, 300}, {64, 48} },
      [](const Image & img) { return reference_clahe (img, 2.0, 8, 8); }, 130);
}
GST_END_TEST;

/* clip-limit, tiles-x and tiles-y change while playing: each frame follows
 * the values set before it. */
GST_START_TEST (test_live_property_changes)
{
  std::mt19937 rng (6);
  GstHarness *h = harness_for (on_backend ("cudaclahe").c_str (), 321, 203);
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

/* Many frames through one instance: the tile histograms and counters the
 * engine keeps between frames must start from zero every time, also when
 * the grid changes while playing. (Fewer frames on the CPU under
 * CUDAFILTERS_TEST_QUICK, for valgrind.) */
GST_START_TEST (test_state_between_frames)
{
  std::mt19937 rng (31);
  const int frames = !TEST_GPU && quick () ? 40 : 120;
  GstHarness *h = harness_for (on_backend ("cudaclahe").c_str (), 640, 480);
  for (int i = 0; i < frames; ++i) {
    const Settings &s = kSettings[(i / 10) % G_N_ELEMENTS (kSettings)];
    gst_harness_set (h, "cudaclahe", "clip-limit", s.clip, "tiles-x",
        s.tiles_x, "tiles-y", s.tiles_y, NULL);
    Image img = (i % 3 == 0) ? constant_image (640, 480, uint8_t (i))
        : random_image (rng, 640, 480, i % 50, 100 + i % 100);
    assert_images_equal (push_pull (h, img), reference_clahe (img, s.clip,
            s.tiles_x, s.tiles_y), "frame sequence with live changes");
  }
  gst_harness_teardown (h);
}
GST_END_TEST;

#if !TEST_GPU
static void
assert_clahe_properties (GstElement * e, gdouble clip, gint tiles_x,
    gint tiles_y, gdouble smoothing)
{
  gdouble got_clip = 0, got_smoothing = -1;
  gint tx = 0, ty = 0;
  g_object_get (e, "clip-limit", &got_clip, "tiles-x", &tx, "tiles-y", &ty,
      "temporal-smoothing", &got_smoothing, NULL);
  fail_unless (got_clip == clip);
  fail_unless_equals_int (tx, tiles_x);
  fail_unless_equals_int (ty, tiles_y);
  fail_unless (got_smoothing == smoothing);
}

/* The element's properties: no backend is involved, the cpu build checks
 * them. */
GST_START_TEST (test_properties)
{
  GstElement *e = gst_element_factory_make ("cudaclahe", NULL);
  assert_clahe_properties (e, 2.0, 8, 8, 0.0);

  assert_live_properties (e, {"clip-limit", "tiles-x", "tiles-y",
          "temporal-smoothing"}, true);
  assert_live_properties (e, {"post-messages", "message-interval"}, false);
  GParamSpec *tiles = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      "tiles-x");
  fail_unless_equals_int (G_PARAM_SPEC_INT (tiles)->minimum, 1);
  fail_unless_equals_int (G_PARAM_SPEC_INT (tiles)->maximum, 64);

  assert_hardware_filter_klass (e);
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
  assert_clahe_properties (e, 3.5, 4, 6, 0.0);
  gst_object_unref (e);
}
GST_END_TEST;
#endif

/* Every format: luma as a GRAY8 frame would be, chroma byte-identical. */
GST_START_TEST (test_formats_filter_luma_only)
{
  std::mt19937 rng (77);
  const int sizes[][2] = { {33, 17}, {64, 48}, {640, 360}, {2, 2} };
  const std::string launch = on_backend ("cudaclahe");
  for (GstVideoFormat fmt : kFormats)
    for (const auto & sz : sizes)
      for (bool natural : {false, true}) {
        PlanarFrame in = frame_with_luma (rng, fmt, natural ?
            natural_image (sz[0], sz[1]) : random_image (rng, sz[0], sz[1],
                30, 150));
        PlanarFrame out = push_pull_frame (launch.c_str (), in);
        assert_images_equal (out.planes[0], reference_clahe (in.planes[0], 2.0,
                8, 8), gst_video_format_to_string (fmt));
        assert_chroma_carried (out, in);
      }
}
GST_END_TEST;

/* ------------------------------------------------------------ deep frames
 * OpenCV's CLAHE with 2^b bins: 65536 on 16-bit planes, as OpenCV has it on
 * CV_16UC1. */

/* The default grid (one chunk per tile up to 1080p), no clipping, a grid
 * that does not divide; on the CPU also clipping that never bites on one
 * tile and the largest clip limit, on the GPU one tile (plateau
 * equalization: several chunks per tile from 65536 samples on) and a fine
 * grid. (64x64 tiles of 65536 bins would take 512 MB of LUTs, in the
 * reference too.) */
static const Settings kDeepSettings[] = {
  {2.0, 8, 8}, {0.0, 3, 5},
#if TEST_GPU
  {4.0, 1, 1},
#else
  {40.0, 1, 1},
#endif
  {1.0, 7, 2},
#if TEST_GPU
  {2.0, 16, 16},
#else
  {256.0, 2, 2},
#endif
};

/* Every deep format against the reference: the full range, two bands of
 * four levels (far above any clip limit: the excess is redistributed) and a
 * thermal-like scene. One element per setting: formats and sizes
 * renegotiate it. */
GST_START_TEST (test_deep_formats)
{
  std::mt19937 rng (5050);
  const int sizes[][2] = {
#if TEST_GPU
    {1, 1}, {7, 3}, {17, 5}, {385, 289}, {1920, 1080}, {1921, 1081},
#else
    {1, 1}, {2, 3}, {17, 5}, {33, 17}, {161, 97},
#endif
  };
  for (int si = 0; si < int (G_N_ELEMENTS (kDeepSettings)); ++si) {
    const Settings & s = kDeepSettings[si];
    GstHarness *h = new_harness (launch_for (s));
    for (int fi = 0; fi < int (G_N_ELEMENTS (kDeepFormats)); ++fi) {
      const GstVideoFormat fmt = kDeepFormats[fi];
      const DeepLayout l = deep_layout (fmt);
      const int top = (1 << l.bits) - 1;
      for (int zi = 0; zi < int (G_N_ELEMENTS (sizes)); ++zi) {
        const int *sz = sizes[zi];
        if (!size_in_sample (sz[0], sz[1], fi, si * 8 + zi) || (quick () &&
                !in_grid_sample (fi, si * 8 + zi, 4)))
          continue;
        const std::string what = launch_for (s) + " " +
            gst_video_format_to_string (fmt) + " " + std::to_string (sz[0]) +
            "x" + std::to_string (sz[1]);
        assert_clahe_deep (h, deep_frame (rng, fmt, random_deep_image (rng,
                    sz[0], sz[1], l, 0, top)), s.clip, s.tiles_x, s.tiles_y,
            what + " full range");
        assert_clahe_deep (h, deep_frame (rng, fmt, random_deep_image (rng,
                    sz[0], sz[1], l, top / 3, top / 3 + 3)), s.clip, s.tiles_x,
            s.tiles_y, what + " narrow");
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

/* Plateau equalization of a 14-bit thermal-like scene in GRAY16_LE: one
 * tile, clipped. */
GST_START_TEST (test_deep_plateau)
{
  std::mt19937 rng (2021);
  const PlanarFrame thermal = deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
      thermal_like_image (rng, 640, 512, 14));
  for (double clip : {0.0, 1.0, 4.0, 40.0}) {
    const Settings s { clip, 1, 1 };
    GstHarness *h = new_harness (launch_for (s));
    assert_clahe_deep (h, thermal, s.clip, s.tiles_x, s.tiles_y, describe (s,
            "14-bit plateau"));
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* The largest deep frames of each backend: 1080p on the CPU, 4K and 8K on
 * the GPU (tiles of several chunks). One level everywhere fills one packed
 * counter per chunk to the brim (65535), which must not carry into its
 * neighbour. */
GST_START_TEST (test_deep_large_frames)
{
  std::mt19937 rng (5051);
  const DeepLayout gray16 = deep_layout (GST_VIDEO_FORMAT_GRAY16_LE);
  const DeepLayout p010 = deep_layout (GST_VIDEO_FORMAT_P010_10LE);
  const Settings grids[] = { {2.0, 8, 8}, {4.0, 1, 1} };
  const std::pair<int, int> sizes[] = {
#if TEST_GPU
    {3840, 2160}, {7680, 4320},
#else
    /* (Under the memory checkers a quarter of it.) */
    {quick ()? 961 : 1920, quick ()? 541 : 1080},
#endif
  };
  for (int gi = 0; gi < int (G_N_ELEMENTS (grids)); ++gi) {
    const Settings & s = grids[gi];
    GstHarness *h = new_harness (launch_for (s));
    for (int zi = 0; zi < int (G_N_ELEMENTS (sizes)); ++zi) {
      const auto & sz = sizes[zi];
      /* Everyday: each grid at one of the sizes, each size with one grid. */
      if (skipped (sz.first, sz.second) || (G_N_ELEMENTS (sizes) > 1 &&
              !in_grid_sample (gi, zi, 2)))
        continue;
      const std::string what = launch_for (s) + " " +
          std::to_string (sz.first) + "x" + std::to_string (sz.second);
      assert_clahe_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
              thermal_like_words (rng, sz.first, sz.second, gray16)), s.clip,
          s.tiles_x, s.tiles_y, what + " GRAY16_LE scene");
      assert_clahe_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_GRAY16_LE,
              random_deep_image (rng, sz.first, sz.second, gray16, 1000,
                  1000)), s.clip, s.tiles_x, s.tiles_y, what + " one level");
      assert_clahe_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_P010_10LE,
              random_deep_image (rng, sz.first, sz.second, p010, 0, 1023)),
          s.clip, s.tiles_x, s.tiles_y, what + " P010");
      assert_clahe_deep (h, deep_frame (rng, GST_VIDEO_FORMAT_P010_10LE,
              random_deep_image (rng, sz.first, sz.second, p010, 100, 700)),
          s.clip, s.tiles_x, s.tiles_y, what + " P010, 100 to 700");
    }
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* Temporal smoothing on deep frames: the histories of 2^b bins. */
GST_START_TEST (test_deep_temporal_smoothing)
{
  std::mt19937 rng (2022);
  for (GstVideoFormat fmt : { GST_VIDEO_FORMAT_GRAY16_LE,
          GST_VIDEO_FORMAT_P010_10LE }) {
    const DeepLayout l = deep_layout (fmt);
    GstHarness *h = new_harness (on_backend ("cudaclahe",
            " clip-limit=3 tiles-x=5 tiles-y=3 temporal-smoothing=0.7").c_str ());
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
  GstHarness *h = new_harness (on_backend ("cudaclahe"));
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

/* ---------------------------------------------------- temporal smoothing */

GST_START_TEST (test_smoothing_matches_model)
{
  check_smoothing_matches_model (kClahe);
}
GST_END_TEST;

GST_START_TEST (test_still_frames_equalize_fully)
{
  check_still_frames_equalize_fully (kClahe);
}
GST_END_TEST;

GST_START_TEST (test_smoothing_reduces_flicker)
{
  check_smoothing_reduces_flicker (kClahe);
}
GST_END_TEST;

GST_START_TEST (test_live_smoothing_changes)
{
  check_live_smoothing_changes (kClahe);
}
GST_END_TEST;

#if TEST_GPU
/* Temporal smoothing on deep frames, with depth, size and grid changes on
 * the way (tiles of one chunk and of several): GPU and CPU agree frame by
 * frame. */
GST_START_TEST (test_deep_smoothing_matches_cpu)
{
  std::mt19937 rng (5052);
  const char *props = " clip-limit=3 temporal-smoothing=0.8";
  GstHarness *gpu = new_harness ((std::string
          ("cudaclahe backend=cuda") + props).c_str ());
  GstHarness *cpu = new_harness ((std::string
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

/* ------------------------------------------------------ the pinned pool */

static Image
default_clahe (const Image & img)
{
  return reference_clahe (img, 2.0, 8, 8);
}

GST_START_TEST (test_proposed_pinned_pool)
{
  check_proposed_pinned_pool ("cudaclahe backend=cuda", 1283, 721,
      default_clahe);
  check_proposed_pinned_pool ("cudaclahe backend=cuda", 1280, 720,
      default_clahe);
}
GST_END_TEST;

static Image16
default_clahe_16 (const Image16 & img)
{
  return reference_clahe_deep (img, 16, 0, 2.0, 8, 8);
}

GST_START_TEST (test_deep_proposed_pinned_pool)
{
  check_deep_proposed_pinned_pool ("cudaclahe backend=cuda", default_clahe_16);
}
GST_END_TEST;
#endif

static Suite *
cudaclahe_suite (void)
{
  Suite *s = suite_create (TEST_SUITE_NAME ("cudaclahe"));
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_random_and_natural_frames);
  tcase_add_test (tc, test_few_levels_and_one_value_frames);
  tcase_add_test (tc, test_hand_computed_frame);
  tcase_add_test (tc, test_renegotiation_mid_stream);
  tcase_add_test (tc, test_live_property_changes);
  tcase_add_test (tc, test_state_between_frames);
#if !TEST_GPU
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_invalid_values_are_refused);
#endif
  tcase_add_test (tc, test_formats_filter_luma_only);
  tcase_add_test (tc, test_deep_formats);
  tcase_add_test (tc, test_deep_plateau);
  tcase_add_test (tc, test_deep_large_frames);
  tcase_add_test (tc, test_deep_temporal_smoothing);
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
  return run_suite (argc, argv, cudaclahe_suite, TEST_SUITE_NAME ("cudaclahe"));
}

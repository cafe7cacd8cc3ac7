/* cudanlm on the GPU against the CPU backend: every pixel within one level
 * (8 and 10 bits; a quarter of an 8-bit level deeper, gpu_nlm_tolerance),
 * flat frames identical, frames up to 4K (8K at 16 bits), 8- to 16-bit,
 * chroma denoised, and streams with temporal windows, breaks and all. Exits
 * 77 (skipped) where no GPU is usable. */
#include "nlm_video.h"

using namespace test;


/* Sizes around the 128x16 tile, tiny frames and a common video size. */
GST_START_TEST (test_gpu_matches_cpu)
{
  std::mt19937 rng (2718);
  const int sizes[][2] = { {1, 1}, {2, 3}, {127, 15}, {128, 16}, {129, 17},
    {300, 41}, {641, 479} };
  const bool skip_large = g_getenv ("CUDAFILTERS_TEST_SKIP_LARGE") != NULL;
  for (const auto & s : kNlmParamSets)
    for (const auto & sz : sizes) {
      if (skip_large && sz[0] * sz[1] > 20000)
        continue;
      Image img = random_image (rng, sz[0], sz[1], 30, 220);
      assert_images_close (run_nlm (s, "cuda", img), run_nlm (s, "cpu", img), 1,
          s.launch ("cuda").c_str ());
    }
}
GST_END_TEST;

GST_START_TEST (test_gpu_matches_brute_force_reference)
{
  std::mt19937 rng (31);
  for (const auto & s : kNlmParamSets) {
    Image img = noisy_step_image (rng, 37, 21, 20.0);
    assert_images_close (run_nlm (s, "cuda", img), reference_nlm (img, s), 1,
        s.launch ("cuda").c_str ());
  }
}
GST_END_TEST;

GST_START_TEST (test_gpu_flat_frames_identical)
{
  for (int v : {0, 128, 255})
    for (const auto & s : kNlmParamSets) {
      Image img = constant_image (259, 33, uint8_t (v));
      assert_images_equal (run_nlm (s, "cuda", img), img, "flat frame");
    }
}
GST_END_TEST;

/* Under compute-sanitizer (CUDAFILTERS_TEST_SKIP_LARGE=1) frames above 20000
 * pixels are skipped: they take minutes there. Everything else runs
 * instrumented. */
GST_START_TEST (test_gpu_large_frames)
{
  if (g_getenv ("CUDAFILTERS_TEST_SKIP_LARGE"))
    return;
  std::mt19937 rng (4);
  const int sizes[][2] = { {1280, 720}, {1920, 1080}, {3840, 2160} };
  NlmSettings s;
  for (const auto & sz : sizes) {
    Image img = noisy_step_image (rng, sz[0], sz[1], 20.0);
    Image gpu = run_nlm (s, "cuda", img), cpu = run_nlm (s, "cpu", img);
    assert_images_close (gpu, cpu, 1, "large frame");
  }
}
GST_END_TEST;

/* Parameters changed while playing reach the GPU engine from the next frame. */
GST_START_TEST (test_gpu_live_changes)
{
  std::mt19937 rng (6);
  Image img = noisy_step_image (rng, 200, 50, 18.0);
  NlmSettings a {5, 5, 11, 0, false}, b {30, 3, 15, 4, true};
  GstHarness *h = harness_for (a.launch ("cuda").c_str (), 200, 50);
  assert_images_close (push_pull (h, img), run_nlm (a, "cpu", img), 1, "before");
  GstElement *nlm = gst_harness_find_element (h, "cudanlm");
  g_object_set (nlm, "strength", 30.f, "patch-size", 3, "search-size", 15,
      "noise-sigma", 4.f, NULL);
  gst_util_set_object_arg (G_OBJECT (nlm), "patch-weighting", "gaussian");
  gst_object_unref (nlm);
  assert_images_close (push_pull (h, img), run_nlm (b, "cpu", img), 1, "after");
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Deep formats against the CPU backend, sizes around the tile to 1080p
 * with an odd edge, and the definition on a small frame. */
GST_START_TEST (test_gpu_deep_matches_cpu)
{
  std::mt19937 rng (1610);
  const int sizes[][2] = { {1, 1}, {129, 17}, {641, 479}, {1921, 1081} };
  const bool skip_large = g_getenv ("CUDAFILTERS_TEST_SKIP_LARGE") != NULL;
  for (GstVideoFormat fmt : kDeepFormats) {
    const int bits = deep_layout (fmt).bits;
    for (const auto & sz : sizes)
      for (const auto & s : kNlmParamSets) {
        const bool large = sz[0] * sz[1] > 20000;
        if (large && (skip_large || &s != &kNlmParamSets[0]))
          continue;
        Image16 levels = noisy_step_levels (rng, sz[0], sz[1], bits, 20.0);
        const std::string what = s.launch ("cuda") + " " +
            gst_video_format_to_string (fmt);
        assert_images_close (luma_levels_through (s.launch ("cuda"), fmt, levels,
                rng), luma_levels_through (s.launch ("cpu"), fmt, levels, rng),
            gpu_nlm_tolerance (bits), what.c_str ());
      }
    Image16 levels = noisy_step_levels (rng, 37, 21, bits, 20.0);
    assert_images_close (luma_levels_through (kNlmParamSets[1].launch ("cuda"), fmt,
            levels, rng), reference_nlm_levels (levels, kNlmParamSets[1], bits),
        gpu_nlm_tolerance (bits), "deep frame against the definition");
  }
}
GST_END_TEST;

GST_START_TEST (test_gpu_deep_strength_in_8bit_units)
{
  std::mt19937 rng (1611);
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_GRAY16_LE,
          GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_Y444_12LE})
    for (const auto & s : kNlmParamSets)
      assert_deep_follows_8bit ("cuda", s, fmt, noisy_step_image (rng, 300,
              41, 15.0), rng);
}
GST_END_TEST;

/* 4K and 8K at 16 bits: many blocks and rows past 2^16 bytes. */
GST_START_TEST (test_gpu_deep_large_frames)
{
  if (g_getenv ("CUDAFILTERS_TEST_SKIP_LARGE"))
    return;
  std::mt19937 rng (1612);
  const NlmSettings s {10, 5, 11, 0, false};
  for (const auto & sz : { std::pair<int, int> {3840, 2160}, {7680, 4320} }) {
    Image16 levels = noisy_step_levels (rng, sz.first, sz.second, 16, 20.0);
    assert_images_close (luma_levels_through (s.launch ("cuda"),
            GST_VIDEO_FORMAT_GRAY16_LE, levels, rng), luma_levels_through (s.launch
            ("cpu"), GST_VIDEO_FORMAT_GRAY16_LE, levels, rng),
        gpu_nlm_tolerance (16), "large GRAY16_LE frame");
  }
}
GST_END_TEST;


static const GstVideoFormat kChromaFormats[] = {
  GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YV12, GST_VIDEO_FORMAT_NV12,
  GST_VIDEO_FORMAT_NV21, GST_VIDEO_FORMAT_Y42B, GST_VIDEO_FORMAT_Y444,
  GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_P016_LE,
  GST_VIDEO_FORMAT_I420_10LE, GST_VIDEO_FORMAT_I420_12LE,
  GST_VIDEO_FORMAT_Y444_10LE, GST_VIDEO_FORMAT_Y444_16LE,
};

static PlanarFrame
colour_frame (std::mt19937 & rng, GstVideoFormat fmt, int w, int h)
{
  if (luma_bits (fmt) == 8)
    return noisy_yuv_frame (rng, fmt, w, h, 12.0);
  const DeepLayout l = deep_layout (fmt);
  PlanarFrame f = deep_frame (rng, fmt, words_of_levels (noisy_step_levels (rng,
              w, h, l.bits, 12.0), l.shift));
  return f;
}

/* Luma and chroma of every YUV format, 8 to 16 bits, against the CPU. */
GST_START_TEST (test_gpu_chroma_matches_cpu)
{
  std::mt19937 rng (5150);
  const int sizes[][2] = { {1, 1}, {37, 23}, {641, 479}, {1920, 1080} };
  for (GstVideoFormat fmt : kChromaFormats)
    for (const auto & sz : sizes) {
      const bool large = sz[0] * sz[1] > 20000;
      if (large && (skip_large () || (sz[0] == 1920 &&
                  fmt != GST_VIDEO_FORMAT_NV12 && fmt != GST_VIDEO_FORMAT_I420
                  && fmt != GST_VIDEO_FORMAT_P010_10LE)))
        continue;
      for (const NlmSettings & s : {NlmSettings {12, 5, 11, 0, false, -1},
              NlmSettings {15, 7, 21, 4, false, 6},
              NlmSettings {10, 3, 9, 0, true, 8}}) {
        if (large && s.search > 11)
          continue;
        PlanarFrame in = colour_frame (rng, fmt, sz[0], sz[1]);
        const std::string what = s.launch ("cuda") + " " +
            gst_video_format_to_string (fmt) + " " + std::to_string (sz[0]) +
            "x" + std::to_string (sz[1]);
        assert_frames_close (push_pull_frame (s.launch ("cuda").c_str (), in),
            push_pull_frame (s.launch ("cpu").c_str (), in),
            gpu_nlm_tolerance (luma_bits (fmt)), what);
      }
    }
}
GST_END_TEST;

/* The same stream through both backends: the same frames out at the same
 * moments with the same metadata, each within the tolerance. */
static void
assert_sequence_matches_cpu (const Sequence & seq, const NlmSettings & s)
{
  const GstVideoFormat fmt = GST_VIDEO_INFO_FORMAT (&seq.frames[0].info);
  const std::string what = s.launch ("cuda") + " " +
      gst_video_format_to_string (fmt);
  SequenceOutput gpu, cpu;
  run_sequence (s.launch ("cuda"), seq, gpu);
  run_sequence (s.launch ("cpu"), seq, cpu);
  assert_sequence_shape (gpu, seq, s, what);
  assert_sequence_shape (cpu, seq, s, what);
  for (size_t k = 0; k < cpu.frames.size (); ++k)
    assert_frames_close (gpu.frames[k], cpu.frames[k],
        gpu_nlm_tolerance (luma_bits (fmt)), what);
}

GST_START_TEST (test_gpu_temporal_matches_cpu)
{
  std::mt19937 rng (5151);
  for (int radius = 0; radius <= 3; ++radius)
    for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12,
            GST_VIDEO_FORMAT_I420})
      assert_sequence_matches_cpu (make_sequence (rng, fmt, 67, 43, 8),
          NlmSettings {12, 5, 11, 0, false, 6, radius});
  for (int radius : {1, 2})
    for (Break kind : {Break::kFlush, Break::kDiscont, Break::kCaps})
      assert_sequence_matches_cpu (make_sequence (rng, GST_VIDEO_FORMAT_NV12,
              70, 38, 7, kind, 3, 41, 57), NlmSettings {12, 5, 11, 0, false,
              -1, radius});
}
GST_END_TEST;

/* Deep frames in temporal windows, and 4K. */
GST_START_TEST (test_gpu_temporal_deep_and_large)
{
  std::mt19937 rng (5152);
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_P010_10LE,
          GST_VIDEO_FORMAT_I420_12LE}) {
    Sequence seq;
    for (int i = 0; i < 4; ++i)
      seq.frames.push_back (colour_frame (rng, fmt, 53, 31));
    assert_sequence_matches_cpu (seq, NlmSettings {12, 5, 11, 0, false, 6, 1});
  }
  if (skip_large ())
    return;
  assert_sequence_matches_cpu (make_sequence (rng, GST_VIDEO_FORMAT_NV12, 3840,
          2160, 3), NlmSettings {10, 5, 9, 0, false, 5, 1});
}
GST_END_TEST;

static Suite *
cudanlm_gpu_suite (void)
{
  Suite *s = suite_create ("cudanlm-gpu");
  TCase *tc = tcase_create ("gpu");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_gpu_matches_cpu);
  tcase_add_test (tc, test_gpu_matches_brute_force_reference);
  tcase_add_test (tc, test_gpu_flat_frames_identical);
  tcase_add_test (tc, test_gpu_large_frames);
  tcase_add_test (tc, test_gpu_live_changes);
  tcase_add_test (tc, test_gpu_deep_matches_cpu);
  tcase_add_test (tc, test_gpu_deep_strength_in_8bit_units);
  tcase_add_test (tc, test_gpu_deep_large_frames);
  tcase_add_test (tc, test_gpu_chroma_matches_cpu);
  tcase_add_test (tc, test_gpu_temporal_matches_cpu);
  tcase_add_test (tc, test_gpu_temporal_deep_and_large);
  return s;
}

int
main (int argc, char **argv)
{
  return test::run_gpu_suite (argc, argv, cudanlm_gpu_suite, "cudanlm-gpu");
}

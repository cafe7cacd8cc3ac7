/* cudanlm against the definition of non-local means (brute force, double
 * precision), on gray and colour frames, 8 to 16 bits, and in temporal
 * windows. Built twice from this file: `cudanlm` runs every case on the CPU
 * backend (everywhere, no GPU needed) against the definition, within one
 * level, and against the CPU engine bit for bit where the element must
 * give exactly its result; `cudanlm-gpu` runs them on the CUDA backend,
 * where the reference is the CPU backend (every pixel within one level at 8
 * and 10 bits; a quarter of an 8-bit level deeper, gpu_nlm_tolerance) and
 * the definition on small frames, adds frames up to 4K (8K at 16 bits) and
 * exits 77 (skipped) where no GPU is usable. Frames in CUDA memory:
 * pipelines/cuda_memory_gpu.cpp; what every element does alike:
 * cudafiltersbase.cpp. */
#include "nlm_video.h"

#include "noise_estimate.h"

using namespace test;

/* `got`, this build's output for the 8-bit frame `in`: on the CPU within one
 * level of the definition; on the GPU within one level of the CPU backend. */
static void
assert_nlm (const Image & got, const Image & in, const NlmSettings & s,
    const char *what)
{
#if TEST_GPU
  assert_images_close (got, run_nlm (s, "cpu", in), 1, what);
#else
  assert_images_close (got, reference_nlm (in, s), 1, what);
#endif
}

/* The same for the luma levels of a frame of `fmt` at any depth: on the CPU
 * the definition within kNlmTolerance, on the GPU the CPU backend within
 * gpu_nlm_tolerance. */
static void
assert_nlm_levels (const Image16 & got, GstVideoFormat fmt,
    const Image16 & levels, const NlmSettings & s, std::mt19937 & rng,
    const char *what)
{
  const int bits = luma_bits (fmt);
#if TEST_GPU
  assert_images_close (got, luma_levels_through (s.launch ("cpu"), fmt, levels,
          rng), gpu_nlm_tolerance (bits), what);
#else
  (void) rng;
  assert_images_close (got, reference_nlm_levels (levels, s, bits),
      kNlmTolerance, what);
#endif
}

/* Random frames: on the CPU small ones, which the definition can afford; on
 * the GPU sizes around the 128x16 tile, tiny frames and a common video size
 * (under compute-sanitizer, CUDAFILTERS_TEST_SKIP_LARGE, only frames of at
 * most 20000 pixels: larger ones take minutes there). */
GST_START_TEST (test_random_frames)
{
#if TEST_GPU
  std::mt19937 rng (2718);
  const int sizes[][2] = { {1, 1}, {2, 3}, {127, 15}, {128, 16}, {129, 17},
    {300, 41}, {641, 479} };
  const int lo = 30, hi = 220;
#else
  std::mt19937 rng (42);
  const int sizes[][2] = { {1, 1}, {3, 2}, {17, 9}, {40, 30}, {5, 37} };
  const int lo = 40, hi = 200;
#endif
  for (int si = 0; si < int (G_N_ELEMENTS (kNlmParamSets)); ++si)
    for (int zi = 0; zi < int (G_N_ELEMENTS (sizes)); ++zi) {
      const NlmSettings & s = kNlmParamSets[si];
      const int *sz = sizes[zi];
      if (sz[0] * sz[1] > 20000 && (g_getenv ("CUDAFILTERS_TEST_SKIP_LARGE")
              || !in_grid_sample (si, zi, 3)))
        continue;
      /* Under the memory checkers every setting at some of the sizes. */
      if (quick () && !in_grid_sample (si, zi, 2))
        continue;
      Image img = random_image (rng, sz[0], sz[1], lo, hi);
      assert_nlm (run_nlm (s, kBackend, img), img, s, s.launch (kBackend).c_str ());
    }
}
GST_END_TEST;

/* Both backends against the definition directly, within one level: a noisy
 * step, every parameter set. */
GST_START_TEST (test_matches_definition)
{
  std::mt19937 rng (31);
  /* Under the memory checkers a smaller frame: the same settings, borders
   * and tiles, a quarter of the definition's cost. */
  const int w = quick ()? 19 : 37, h = quick ()? 11 : 21;
  for (const auto & s : kNlmParamSets) {
    Image img = noisy_step_image (rng, w, h, 20.0);
    assert_images_close (run_nlm (s, kBackend, img), reference_nlm (img, s), 1,
        s.launch (kBackend).c_str ());
  }
}
GST_END_TEST;

GST_START_TEST (test_output_size_and_format)
{
  std::mt19937 rng (1);
  GstHarness *h = harness_for (on_backend ("cudanlm").c_str (), 33, 17);
  GstBuffer *out = gst_harness_push_and_pull (h,
      buffer_from_image (random_image (rng, 33, 17)));
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  GstVideoInfo info;
  fail_unless (gst_video_info_from_caps (&info, caps));
  fail_unless_equals_int (GST_VIDEO_INFO_FORMAT (&info), GST_VIDEO_FORMAT_GRAY8);
  fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&info), 33);
  fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&info), 17);
  fail_unless_equals_int (gst_buffer_get_size (out), GST_VIDEO_INFO_SIZE (&info));
  gst_caps_unref (caps);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Flat frames come out unchanged, exactly. */
GST_START_TEST (test_flat_frames_stay_flat)
{
  const int sizes[][2] = { {45, 23}, {259, 33} };
  const int values[] = {0, 77, 128, 255};
  for (int vi = 0; vi < 4; ++vi)
    for (const auto & sz : sizes)
      for (int si = 0; si < int (G_N_ELEMENTS (kNlmParamSets)); ++si) {
        const NlmSettings & s = kNlmParamSets[si];
        const int v = values[vi];
        /* Sampled: every setting at one of the values (each value with
         * some of the settings). */
        if (!in_grid_sample (si, vi, 4))
          continue;
        /* Under the memory checkers the frame of several tiles with the
         * narrow searches only. */
        if (quick () && sz[0] > 64 && s.search > 7)
          continue;
        Image img = constant_image (sz[0], sz[1], uint8_t (v));
        assert_images_equal (run_nlm (s, kBackend, img), img, "flat frame");
      }
}
GST_END_TEST;

static double
region_variance (const Image & img, int x0, int x1, int y0, int y1)
{
  double sum = 0, sq = 0;
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      sum += img.at (x, y);
      sq += double (img.at (x, y)) * img.at (x, y);
      ++n;
    }
  return sq / n - (sum / n) * (sum / n);
}

static double
region_mean (const Image & img, int x0, int x1, int y0, int y1)
{
  double sum = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x)
      sum += img.at (x, y);
  return sum / ((x1 - x0) * (y1 - y0));
}

/* Noise on both sides of a step edge: the noise goes, the step stays. */
GST_START_TEST (test_denoises_and_keeps_edges)
{
  std::mt19937 rng (9);
  const int w = 96, h = 64, edge = w / 2;
  Image noisy = noisy_step_image (rng, w, h, 12.0);
  NlmSettings s;
  s.h = 12;
  Image out = run_nlm (s, kBackend, noisy);

  for (int side = 0; side < 2; ++side) {
    const int x0 = side ? edge + 8 : 4, x1 = side ? w - 4 : edge - 8;
    const double before = region_variance (noisy, x0, x1, 4, h - 4);
    const double after = region_variance (out, x0, x1, 4, h - 4);
    fail_unless (after < 0.1 * before, "variance %.1f -> %.1f", before, after);
    const double mean = region_mean (out, x0, x1, 4, h - 4);
    fail_unless (std::abs (mean - (side ? 190 : 60)) < 3, "mean %.1f", mean);
  }
  for (int y = 0; y < h; ++y) {
    fail_unless (out.at (edge - 2, y) < 90, "row %d: %d left of the edge", y,
        out.at (edge - 2, y));
    fail_unless (out.at (edge + 1, y) > 160, "row %d: %d right of the edge", y,
        out.at (edge + 1, y));
  }
}
GST_END_TEST;

GST_START_TEST (test_renegotiation_mid_stream)
{
  std::mt19937 rng (5);
  NlmSettings s {15, 5, 9, 0, false};
  GstHarness *h = harness_for (s.launch (kBackend).c_str (), 20, 10);
  const int sizes[][2] = { {20, 10}, {7, 31}, {1, 1}, {33, 12}, {20, 10} };
  for (const auto & sz : sizes) {
    gst_harness_set_src_caps_str (h, gray_caps (sz[0], sz[1]).c_str ());
    Image img = random_image (rng, sz[0], sz[1], 50, 150);
    assert_nlm (push_pull (h, img), img, s, "after renegotiation");
  }
  gst_harness_teardown (h);
}
GST_END_TEST;


/* auto-strength: each frame is denoised exactly as at the fixed settings of
 * its own noise (the estimate of the engine library, averaged as
 * noise-smoothing says, nlm_auto_params), following a step in the noise; a
 * DISCONT restarts the average. auto-strength-scale scales the strength. */
GST_START_TEST (test_auto_strength)
{
  std::mt19937 rng (39);
  const int w = 96, h = 64;
  GstHarness *automatic = harness_for ((std::string ("cudanlm backend=") +
          kBackend + " auto-strength=true noise-smoothing=0.5 "
          "auto-strength-scale=1.5 patch-size=5 search-size=11").c_str (), w, h);
  GstHarness *fixed = harness_for ((std::string ("cudanlm auto-strength=false backend=") +
          kBackend + " patch-size=5 search-size=11").c_str (), w, h);
  GstElement *fixed_nlm = gst_harness_find_element (fixed, "cudanlm");
  cudafilters::NlmParams p;
  p.patch_size = 5;
  p.search_size = 11;
  p.auto_strength = true;
  p.auto_scale = 1.5f;
  const double sigmas[] = { 5, 5, 20, 20, 8 };
  double mean = 0;
  float strengths[5];
  for (int i = 0; i < 5; ++i) {
    const Image noisy = noisy_step_image (rng, w, h, sigmas[i]);
    GstBuffer *buf = buffer_from_image (noisy);
    GST_BUFFER_PTS (buf) = gst_util_uint64_scale (i, GST_SECOND, 30);
    if (i == 4)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
    GstBuffer *out = gst_harness_push_and_pull (automatic, buf);
    fail_unless (out != NULL);
    const Image got = image_from_buffer (out, w, h);
    gst_buffer_unref (out);

    const double e = cudafilters::estimate_noise_sigma (cudafilters::ConstPlane (
            noisy.pixels.data (), size_t (w), w, h));
    mean = (i == 0 || i == 4) ? e : 0.5 * mean + 0.5 * e;
    const cudafilters::NlmParams want = cudafilters::nlm_auto_params (p, mean, 0);
    g_object_set (fixed_nlm, "strength", want.h, "noise-sigma",
        want.noise_sigma, NULL);
    assert_images_equal (got, push_pull (fixed, noisy),
        ("frame " + std::to_string (i)).c_str ());
    strengths[i] = want.h;
  }
  fail_unless (strengths[3] > 2 * strengths[1] && strengths[4] < 0.75 * strengths[3],
      "strengths %.3f %.3f %.3f %.3f %.3f", strengths[0], strengths[1],
      strengths[2], strengths[3], strengths[4]);
  gst_object_unref (fixed_nlm);
  gst_harness_teardown (fixed);
  gst_harness_teardown (automatic);
}
GST_END_TEST;

#if !TEST_GPU
static void
assert_nlm_properties (GstElement * e, gfloat strength, gint patch,
    gint search, gfloat sigma, gint weighting)
{
  gfloat got_strength, got_sigma;
  gint got_patch, got_search, got_weighting;
  g_object_get (e, "strength", &got_strength, "patch-size", &got_patch,
      "search-size", &got_search, "noise-sigma", &got_sigma,
      "patch-weighting", &got_weighting, NULL);
  fail_unless_equals_float (got_strength, strength);
  fail_unless_equals_int (got_patch, patch);
  fail_unless_equals_int (got_search, search);
  fail_unless_equals_float (got_sigma, sigma);
  fail_unless_equals_int (got_weighting, weighting);
}

/* One default, the engine's: each property's default is that of the
 * NlmParams field it sets, auto-strength first, and a new element holds
 * them. */
GST_START_TEST (test_defaults_are_the_engines)
{
  const cudafilters::NlmParams engine;
  GstElement *e = gst_element_factory_make ("cudanlm", NULL);
  GObjectClass *klass = G_OBJECT_GET_CLASS (e);
  auto default_of = [klass](const char *name) {
    GParamSpec *pspec = g_object_class_find_property (klass, name);
    fail_unless (pspec != NULL, "no property %s", name);
    return g_param_spec_get_default_value (pspec);
  };
  fail_unless_equals_int (g_value_get_boolean (default_of ("auto-strength")),
      engine.auto_strength);
  gboolean automatic = !engine.auto_strength;
  g_object_get (e, "auto-strength", &automatic, NULL);
  fail_unless_equals_int (automatic, engine.auto_strength);
  fail_unless_equals_float (g_value_get_float (default_of ("strength")), engine.h);
  fail_unless_equals_int (g_value_get_int (default_of ("patch-size")),
      engine.patch_size);
  fail_unless_equals_int (g_value_get_int (default_of ("search-size")),
      engine.search_size);
  fail_unless_equals_float (g_value_get_float (default_of ("noise-sigma")),
      engine.noise_sigma);
  fail_unless_equals_int (g_value_get_enum (default_of ("patch-weighting")),
      engine.gaussian ? 1 : 0);
  fail_unless_equals_float (g_value_get_float (default_of ("chroma-strength")),
      engine.chroma_h);
  fail_unless_equals_int (g_value_get_int (default_of ("temporal-radius")),
      engine.temporal_radius);
  fail_unless_equals_float (g_value_get_float (default_of
          ("auto-strength-scale")), engine.auto_scale);
  fail_unless_equals_float (g_value_get_float (default_of ("noise-smoothing")),
      engine.noise_smoothing);
  gst_object_unref (e);
}
GST_END_TEST;

/* No backend is involved: the cpu build checks the properties. */
GST_START_TEST (test_properties_and_refused_values)
{
  GstElement *e = gst_element_factory_make ("cudanlm", NULL);
  assert_nlm_properties (e, 10.f, 7, 21, 0.f, 0);
  /* Automatic strength on by default. */
  gboolean automatic = FALSE;
  g_object_get (e, "auto-strength", &automatic, NULL);
  fail_unless (automatic);

  /* Even sizes and a patch larger than the search window are refused with a
   * warning; the previous value stays. */
  ASSERT_WARNING (g_object_set (e, "patch-size", 6, NULL));
  ASSERT_WARNING (g_object_set (e, "search-size", 20, NULL));
  ASSERT_WARNING (g_object_set (e, "search-size", 5, NULL));
  assert_nlm_properties (e, 10.f, 7, 21, 0.f, 0);

  g_object_set (e, "patch-size", 3, "search-size", 5, "strength", 4.5f,
      "noise-sigma", 2.f, NULL);
  gst_util_set_object_arg (G_OBJECT (e), "patch-weighting", "gaussian");
  ASSERT_WARNING (g_object_set (e, "patch-size", 7, NULL));
  assert_nlm_properties (e, 4.5f, 3, 5, 2.f, 1);

  assert_live_properties (e, {"strength", "noise-sigma"}, true);

  /* Off once a strength is set; its scale and smoothing in range. */
  gfloat scale = 0, smoothing = 0;
  g_object_get (e, "auto-strength", &automatic, "auto-strength-scale", &scale,
      "noise-smoothing", &smoothing, NULL);
  fail_if (automatic);
  fail_unless_equals_float (scale, 1.f);
  fail_unless_equals_float (smoothing, 0.5f);
  ASSERT_WARNING (g_object_set (e, "auto-strength-scale", 0.05f, NULL));
  ASSERT_WARNING (g_object_set (e, "noise-smoothing", 1.0f, NULL));
  g_object_get (e, "auto-strength-scale", &scale, "noise-smoothing", &smoothing,
      NULL);
  fail_unless_equals_float (scale, 1.f);
  fail_unless_equals_float (smoothing, 0.5f);
  assert_live_properties (e, {"auto-strength-scale", "noise-smoothing"}, true);
  assert_live_properties (e, {"auto-strength"}, false);
  gst_object_unref (e);
}
GST_END_TEST;
#endif

static void
count_notify (GObject *, GParamSpec *, gpointer count)
{
  ++*static_cast<int *> (count);
}

static gboolean
auto_strength_of (GstElement * e)
{
  gboolean on = FALSE;
  g_object_get (e, "auto-strength", &on, NULL);
  return on;
}

/* A strength that is set is used: two pipelines that differ only in
 * `strength=` give different frames, each that of auto-strength=false at its
 * strength. Setting strength, noise-sigma or chroma-strength turns
 * auto-strength off, with a notify; chroma-strength=0 (no strength) does
 * not; auto-strength=true turns it back on and keeps the values given. */
GST_START_TEST (test_given_strength_is_used)
{
  std::mt19937 rng (48);
  /* Under the memory checkers a quarter of the pixels. */
  const Image noisy = quick ()? noisy_step_image (rng, 32, 20, 15.0) :
      noisy_step_image (rng, 64, 40, 15.0);
  const std::string nlm = std::string ("cudanlm backend=") + kBackend +
      " patch-size=5 search-size=11";
  const Image weak = push_pull_image (nlm + " strength=3", noisy);
  const Image strong = push_pull_image (nlm + " strength=40", noisy);
  fail_if (weak.pixels == strong.pixels, "strength=3 and strength=40 gave "
      "the same frame");
  assert_images_equal (weak, push_pull_image (nlm + " auto-strength=false "
          "strength=3", noisy), "strength=3");
  assert_images_equal (strong, push_pull_image (nlm + " auto-strength=false "
          "strength=40", noisy), "strength=40");
  /* Turned back on after the strength: automatic again. */
  assert_images_equal (push_pull_image (nlm + " strength=40 auto-strength=true",
          noisy), push_pull_image (nlm, noisy), "strength=40 auto-strength=true");

  GstElement *e = gst_element_factory_make ("cudanlm", NULL);
  int notified = 0;
  g_signal_connect (e, "notify::auto-strength", G_CALLBACK (count_notify),
      &notified);
  fail_unless (auto_strength_of (e));
  g_object_set (e, "chroma-strength", 0.f, NULL);
  fail_unless (auto_strength_of (e), "chroma-strength=0 turned auto off");
  fail_unless_equals_int (notified, 0);
  for (const char *property : {"strength", "noise-sigma", "chroma-strength"}) {
    g_object_set (e, "auto-strength", TRUE, NULL);
    notified = 0;
    g_object_set (e, property, 7.5f, NULL);
    fail_if (auto_strength_of (e), "%s set, auto-strength still on",
        property);
    fail_unless_equals_int (notified, 1);
    gfloat back = 0;
    g_object_get (e, property, &back, NULL);
    fail_unless_equals_float (back, 7.5f);
    /* Refused values change nothing. */
    g_object_set (e, "auto-strength", TRUE, NULL);
    ASSERT_WARNING (g_object_set (e, property, 1000.f, NULL));
    fail_unless (auto_strength_of (e), "a refused %s turned auto off",
        property);
  }
  gst_object_unref (e);
}
GST_END_TEST;

/* Parameters changed while playing reach the engine from the next frame:
 * the strength alone, and every parameter at once. */
GST_START_TEST (test_live_changes)
{
  std::mt19937 rng (17);
  Image noisy = noisy_step_image (rng, 48, 32, 15.0);
  NlmSettings weak {2, 5, 11, 0, false}, strong {40, 5, 11, 0, false};
  GstHarness *h = harness_for (weak.launch (kBackend).c_str (), 48, 32);
  assert_nlm (push_pull (h, noisy), noisy, weak, "weak");
  GstElement *nlm = gst_harness_find_element (h, "cudanlm");
  g_object_set (nlm, "strength", 40.f, NULL);
  gst_object_unref (nlm);
  assert_nlm (push_pull (h, noisy), noisy, strong, "strong");
  gst_harness_teardown (h);

  std::mt19937 rng2 (6);
  Image img = noisy_step_image (rng2, 200, 50, 18.0);
  NlmSettings a {5, 5, 11, 0, false}, b {30, 3, 15, 4, true};
  h = harness_for (a.launch (kBackend).c_str (), 200, 50);
  assert_nlm (push_pull (h, img), img, a, "before");
  nlm = gst_harness_find_element (h, "cudanlm");
  g_object_set (nlm, "strength", 30.f, "patch-size", 3, "search-size", 15,
      "noise-sigma", 4.f, NULL);
  gst_util_set_object_arg (G_OBJECT (nlm), "patch-weighting", "gaussian");
  gst_object_unref (nlm);
  assert_nlm (push_pull (h, img), img, b, "after");
  gst_harness_teardown (h);
}
GST_END_TEST;

GST_START_TEST (test_formats_filter_luma_only)
{
  std::mt19937 rng (78);
  NlmSettings s {15, 5, 11, 0, false};
  for (GstVideoFormat fmt : kFormats) {
    PlanarFrame in = frame_with_luma (rng, fmt, noisy_step_image (rng, 30, 14,
            15.0));
    PlanarFrame out = push_pull_frame (s.launch (kBackend).c_str (), in);
    assert_nlm (out.planes[0], in.planes[0], s, gst_video_format_to_string (fmt));
    assert_chroma_carried (out, in);
  }
}
GST_END_TEST;

/* Deep formats: on the CPU small frames against the definition, with the
 * first four parameter sets; on the GPU sizes around the tile to 1080p with
 * an odd edge (the largest with the defaults only) against the CPU backend.
 * Then both against the definition on a small frame. Levels in 8-bit
 * units, chroma carried. */
GST_START_TEST (test_deep_formats)
{
#if TEST_GPU
  std::mt19937 rng (1610);
  const int sizes[][2] = { {1, 1}, {129, 17}, {641, 479}, {1921, 1081} };
  const size_t sets = G_N_ELEMENTS (kNlmParamSets);
#else
  std::mt19937 rng (1606);
  const int sizes[][2] = { {1, 1}, {17, 9}, {33, 20} };
  const size_t sets = 4;
#endif
  const bool skip_large = g_getenv ("CUDAFILTERS_TEST_SKIP_LARGE") != NULL;
  for (int fi = 0; fi < int (G_N_ELEMENTS (kDeepFormats)); ++fi) {
    const GstVideoFormat fmt = kDeepFormats[fi];
    const int bits = deep_layout (fmt).bits;
    for (int zi = 0; zi < int (G_N_ELEMENTS (sizes)); ++zi)
      for (size_t i = 0; i < sets; ++i) {
        const NlmSettings & s = kNlmParamSets[i];
        const int *sz = sizes[zi];
        const bool large = sz[0] * sz[1] > 20000;
        if (large && (skip_large || i != 0 || !size_in_sample (sz[0], sz[1],
                    fi, zi)))
          continue;
        /* Under the memory checkers every format and size with half the
         * settings. */
        if (quick () && !in_grid_sample (fi * int (G_N_ELEMENTS (sizes)) + zi,
                int (i), 2))
          continue;
        Image16 levels = noisy_step_levels (rng, sz[0], sz[1], bits, 20.0);
        const std::string what = s.launch (kBackend) + " " +
            gst_video_format_to_string (fmt);
        assert_nlm_levels (luma_levels_through (s.launch (kBackend), fmt,
                levels, rng), fmt, levels, s, rng, what.c_str ());
      }
    Image16 levels = noisy_step_levels (rng, 37, 21, bits, 20.0);
    assert_images_close (luma_levels_through (kNlmParamSets[1].launch
            (kBackend), fmt, levels, rng), reference_nlm_levels (levels,
            kNlmParamSets[1], bits), TEST_GPU ? gpu_nlm_tolerance (bits) :
        kNlmTolerance, "deep frame against the definition");
  }
}
GST_END_TEST;

/* strength and noise-sigma in 8-bit units at every depth (each backend
 * with its own frames: the GPU's f16 distances are checked on wider ones). */
GST_START_TEST (test_deep_strength_in_8bit_units)
{
#if TEST_GPU
  std::mt19937 rng (1611);
  const GstVideoFormat fmts[] = { GST_VIDEO_FORMAT_GRAY16_LE,
    GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_Y444_12LE };
  const int w = 300, h = 41;
#else
  std::mt19937 rng (1607);
  const GstVideoFormat fmts[] = { GST_VIDEO_FORMAT_GRAY16_LE,
    GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_I420_12LE };
  const int w = 41, h = 23;
#endif
  for (GstVideoFormat fmt : fmts)
    for (const auto & s : kNlmParamSets)
      assert_deep_follows_8bit (kBackend, s, fmt, noisy_step_image (rng, w, h,
              15.0), rng);
}
GST_END_TEST;

GST_START_TEST (test_deep_flat_frames_stay_flat)
{
  std::mt19937 rng (1608);
  for (GstVideoFormat fmt : kDeepFormats) {
    const int top = (1 << deep_layout (fmt).bits) - 1;
    for (int v : {0, top / 3, top}) {
      Image16 flat (45, 23);
      std::fill (flat.pixels.begin (), flat.pixels.end (), uint16_t (v));
      assert_images16_equal (luma_levels_through (kNlmParamSets[0].launch (kBackend),
              fmt, flat, rng), flat, "flat deep frame");
    }
  }
}
GST_END_TEST;

/* One harness through 8-bit, 16-bit, 10-bit and back: each frame filtered
 * at its own depth (on the GPU, as a CPU harness through the same stream
 * filters it). */
GST_START_TEST (test_depth_renegotiation)
{
  std::mt19937 rng (1609);
  const NlmSettings s {15, 5, 9, 0, false};
  GstHarness *h = new_harness (s.launch (kBackend));
#if TEST_GPU
  GstHarness *cpu = new_harness (s.launch ("cpu"));
#endif
  for (GstVideoFormat fmt : kDepthChanges) {
    const int bits = luma_bits (fmt);
    const Image16 levels = noisy_step_levels (rng, 30, 14, bits, 15.0);
    const Image16 got = luma_levels_in (h, fmt, levels, rng);
#if TEST_GPU
    assert_images_close (got, luma_levels_in (cpu, fmt, levels, rng),
        gpu_nlm_tolerance (bits), gst_video_format_to_string (fmt));
#else
    assert_images_close (got, reference_nlm_levels (levels, s, bits),
        kNlmTolerance, gst_video_format_to_string (fmt));
#endif
  }
#if TEST_GPU
  gst_harness_teardown (cpu);
#endif
  gst_harness_teardown (h);
}
GST_END_TEST;

#if !TEST_GPU
/* Chroma against the definition: U and V denoised together (one weight
 * from the distance over both), with chroma-strength as h (strength for
 * -1); luma as for a gray frame. Every 8-bit YUV format, tiny and odd
 * sizes, with and without noise-sigma. */
GST_START_TEST (test_chroma_matches_definition)
{
  std::mt19937 rng (4242);
  const int sizes[][2] = { {1, 1}, {5, 3}, {23, 13} };
  for (double chroma : {-1.0, 6.0})
    for (double sigma : {0.0, 4.0})
      for (GstVideoFormat fmt : kFormats) {
        if (fmt == GST_VIDEO_FORMAT_GRAY8)
          continue;
        for (const auto & sz : sizes) {
          NlmSettings s {15, 3, 7, sigma, false, chroma};
          PlanarFrame in = noisy_yuv_frame (rng, fmt, sz[0], sz[1], 12.0);
          PlanarFrame out = push_pull_frame (s.launch ("cpu").c_str (), in);
          const std::string what = s.launch ("cpu") + " " +
              gst_video_format_to_string (fmt);
          assert_images_close (component_image (out, 0), reference_nlm
              (component_image (in, 0), s), 1, (what + " luma").c_str ());
          const auto want = reference_nlm_frames ({{component_image (in, 1),
                      component_image (in, 2)}}, 0, s, chroma < 0 ? s.h : chroma);
          assert_images_close (component_image (out, 1), want[0], 1,
              (what + " U").c_str ());
          assert_images_close (component_image (out, 2), want[1], 1,
              (what + " V").c_str ());
        }
      }
}
GST_END_TEST;
#endif

static double
component_variance (const PlanarFrame & f, guint comp, int y0, int y1)
{
  Image c = component_image (f, comp);
  return region_variance (c, 0, c.width, y0, y1);
}

static double
component_mean (const PlanarFrame & f, guint comp, int y0, int y1)
{
  Image c = component_image (f, comp);
  return region_mean (c, 0, c.width, y0, y1);
}

/* Noisy chroma: its noise goes (variance down at least fourfold on both
 * sides of an edge in U and across V), and the edge in U stays an edge:
 * the rows next to it keep their sides' levels. */
GST_START_TEST (test_chroma_denoised_edges_kept)
{
  std::mt19937 rng (4243);
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_NV12,
          GST_VIDEO_FORMAT_Y444}) {
    PlanarFrame in = noisy_yuv_frame (rng, fmt, 96, 64, 10.0);
    NlmSettings s {15, 5, 11, 0, false, 12};
    PlanarFrame out = push_pull_frame (s.launch (kBackend).c_str (), in);
    const int ch = component_image (in, 1).height, edge = ch / 2;
    const char *what = gst_video_format_to_string (fmt);
    for (auto [y0, y1] : {std::pair<int, int> {0, edge - 3}, {edge + 3, ch}})
      fail_unless (component_variance (out, 1, y0, y1) * 4 <
          component_variance (in, 1, y0, y1), "%s: U noise stays", what);
    fail_unless (component_variance (out, 2, 0, ch) * 4 <
        component_variance (in, 2, 0, ch), "%s: V noise stays", what);
    fail_unless (std::abs (component_mean (out, 1, edge - 1, edge) - 90) < 6,
        "%s: the row above the edge in U is blurred", what);
    fail_unless (std::abs (component_mean (out, 1, edge, edge + 1) - 170) < 6,
        "%s: the row below the edge in U is blurred", what);
  }
}
GST_END_TEST;

#if !TEST_GPU
/* chroma-strength=0: luma exactly as the single-frame luma filter makes it
 * (the CPU engine, the element's arithmetic before chroma was denoised) and
 * chroma byte for byte the input's, at 8 and 10 bits. The CPU engine's own
 * result: the cpu build. */
GST_START_TEST (test_chroma_strength_zero_is_luma_only)
{
  std::mt19937 rng (4244);
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_NV12,
          GST_VIDEO_FORMAT_NV21, GST_VIDEO_FORMAT_Y42B, GST_VIDEO_FORMAT_Y444,
          GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_I420_10LE}) {
    const bool deep = luma_bits (fmt) > 8;
    PlanarFrame in = deep ? deep_frame (rng, fmt, random_deep_image (rng, 47,
            29, deep_layout (fmt), 0, (1 << deep_layout (fmt).bits) - 1)) :
        noisy_yuv_frame (rng, fmt, 47, 29, 12.0);
    NlmSettings s {12, 5, 11, 0, false, 0};
    PlanarFrame out = push_pull_frame (s.launch ("cpu").c_str (), in);
    PlanarFrame want = in;
    cudafilters::NlmParams p;
    p.auto_strength = false;
    p.h = 12;
    p.patch_size = 5;
    p.search_size = 11;
    cudafilters::NlmCpu nlm;
    nlm.set_params (p);
    nlm.process (planes_of (in).luma, planes_out_of (want).luma);
    for (size_t k = 0; k < in.planes.size (); ++k)
      assert_images_equal (out.planes[k], want.planes[k],
          gst_video_format_to_string (fmt));
  }
}
GST_END_TEST;
#endif

/* A stream with temporal-radius r: frame n leaves once frame n + r has
 * arrived, every frame comes out once, in order, with its own timestamps,
 * duration, offsets and flags, the last r at EOS. On the CPU each is
 * exactly what the engine makes of its window (clipped at the start and
 * end); on the GPU each is within the tolerance of the CPU backend's, which
 * gives the same frames at the same moments. Gray and colour, r = 0 to 3; a
 * flush, a DISCONT buffer and a caps change in the middle. */
static void
check_sequence (const Sequence & seq, const NlmSettings & s)
{
  const GstVideoFormat fmt = GST_VIDEO_INFO_FORMAT (&seq.frames[0].info);
  const std::string what = s.launch (kBackend) + " " +
      gst_video_format_to_string (fmt);
  SequenceOutput out;
  run_sequence (s.launch (kBackend), seq, out);
  assert_sequence_shape (out, seq, s, what);
#if TEST_GPU
  SequenceOutput cpu;
  run_sequence (s.launch ("cpu"), seq, cpu);
  assert_sequence_shape (cpu, seq, s, what);
  for (size_t k = 0; k < cpu.frames.size (); ++k)
    assert_frames_close (out.frames[k], cpu.frames[k],
        gpu_nlm_tolerance (luma_bits (fmt)), what);
#else
  const auto want = expected_outputs (seq, s.radius);
  for (size_t k = 0; k < want.size (); ++k) {
    const PlanarFrame expected = engine_nlm (seq.frames, want[k].first,
        want[k].last, want[k].index, s);
    for (size_t p = 0; p < expected.planes.size (); ++p)
      assert_images_equal (out.frames[k].planes[p], expected.planes[p],
          what.c_str ());
  }
#endif
}

GST_START_TEST (test_temporal_sequences)
{
  std::mt19937 rng (4246);
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_GRAY8,
    GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420};
  for (int radius = 0; radius <= 3; ++radius)
    for (int fi = 0; fi < 3; ++fi) {
      const GstVideoFormat fmt = formats[fi];
      /* Under the memory checkers every radius and format, half the pairs. */
      if (quick () && !in_grid_sample (radius, fi, 2))
        continue;
      check_sequence (make_sequence (rng, fmt, 33, 21, 8),
          NlmSettings {12, 3, 7, 0, false, 7, radius});
      if (!quick ())
        check_sequence (make_sequence (rng, fmt, 67, 43, 8),
            NlmSettings {12, 5, 11, 0, false, 6, radius});
    }
}
GST_END_TEST;

GST_START_TEST (test_temporal_flush_discont_caps)
{
  std::mt19937 rng (4247);
  for (int radius : {1, 2})
    for (Break kind : {Break::kFlush, Break::kDiscont, Break::kCaps}) {
      /* Under the memory checkers every break, at one of the radii. */
      if (quick () && !in_grid_sample (radius, int (kind), 2))
        continue;
      check_sequence (make_sequence (rng, GST_VIDEO_FORMAT_I420, 30, 18, 8,
              kind, 4, 22, 26), NlmSettings {12, 3, 7, 0, false, -1, radius});
      /* Under the memory checkers a third of the pixels, the caps growing
       * in height and shrinking in width as well. */
      if (quick ())
        check_sequence (make_sequence (rng, GST_VIDEO_FORMAT_NV12, 40, 24, 7,
                kind, 3, 26, 33), NlmSettings {12, 5, 11, 0, false, -1, radius});
      else
        check_sequence (make_sequence (rng, GST_VIDEO_FORMAT_NV12, 70, 38, 7,
                kind, 3, 41, 57), NlmSettings {12, 5, 11, 0, false, -1, radius});
      /* A break right after the start, where less than a window is held. */
      check_sequence (make_sequence (rng, GST_VIDEO_FORMAT_NV12, 17, 9, 5,
              kind, 1, 14, 12), NlmSettings {12, 3, 7, 0, false, 5, radius});
    }
}
GST_END_TEST;

#if !TEST_GPU
/* The definition over three frames: frame 1 of three searched in all of
 * them (luma and chroma). */
GST_START_TEST (test_temporal_matches_definition)
{
  std::mt19937 rng (4245);
  Sequence seq = make_sequence (rng, GST_VIDEO_FORMAT_I420, 19, 11, 3);
  NlmSettings s {14, 3, 7, 0, false, 9, 1};
  SequenceOutput out;
  run_sequence (s.launch ("cpu"), seq, out);
  fail_unless_equals_int (out.frames.size (), 3);
  for (guint comp = 0; comp < 3; comp += 1) {
    std::vector<std::vector<Image>> frames;
    for (const PlanarFrame & f : seq.frames) {
      if (comp == 0)
        frames.push_back ({component_image (f, 0)});
      else
        frames.push_back ({component_image (f, 1), component_image (f, 2)});
    }
    const auto want = reference_nlm_frames (frames, 1, s, comp == 0 ? s.h :
        s.chroma);
    assert_images_close (component_image (out.frames[1], comp), want[0], 1,
        "temporal, middle frame");
    if (comp == 1) {
      assert_images_close (component_image (out.frames[1], 2), want[1], 1,
          "temporal, middle frame, V");
      comp += 1;
    }
  }
}
GST_END_TEST;
#endif

/* The latency query reports temporal-radius frames, from the caps' frame
 * rate or, without one, the frames' duration. */
GST_START_TEST (test_temporal_latency)
{
  std::mt19937 rng (4248);
  for (int radius : {0, 1, 3})
    for (int rate : {25, 0}) {
      const std::string launch = on_backend ("cudanlm", " patch-size=3 "
          "search-size=5 temporal-radius=" + std::to_string (radius));
      GstHarness *h = new_harness (launch);
      gst_harness_set_src_caps_str (h, (std::string ("video/x-raw,format=GRAY8,"
                  "width=16,height=8,framerate=") + (rate ? "25/1" : "0/1")).c_str ());
      PlanarFrame f = frame_with_luma (rng, GST_VIDEO_FORMAT_GRAY8,
          random_image (rng, 16, 8));
      GstBuffer *buf = buffer_from_frame (f);
      GST_BUFFER_PTS (buf) = 0;
      GST_BUFFER_DURATION (buf) = 20 * GST_MSECOND;
      fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
      const GstClockTime frame = rate ? GST_SECOND / rate : 20 * GST_MSECOND;
      fail_unless_equals_uint64 (gst_harness_query_latency (h), radius * frame);
      gst_harness_teardown (h);
    }
}
GST_END_TEST;

/* temporal-radius keeps the value the element started with while it runs:
 * a new value is refused with a warning, and the frames held and the latency
 * reported stay those of the radius in use, also after a DISCONT buffer
 * (which drains the window) and new caps. */
GST_START_TEST (test_temporal_radius_fixed_while_running)
{
  std::mt19937 rng (4249);
  GstElement *nlm = gst_element_factory_make ("cudanlm", NULL);
  gst_util_set_object_arg (G_OBJECT (nlm), "backend", kBackend);
  g_object_set (nlm, "patch-size", 3, "search-size", 5, "temporal-radius", 1,
      NULL);
  share_test_context (nlm, Context::kShared);
  GstHarness *h = gst_harness_new_with_element (nlm, "sink", "src");
  gst_object_unref (nlm);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=GRAY8,width=16,"
      "height=8,framerate=25/1");
  const GstClockTime frame = GST_SECOND / 25;
  auto push = [&](int i, bool discont) {
    GstBuffer *buf = buffer_from_frame (frame_with_luma (rng,
            GST_VIDEO_FORMAT_GRAY8, random_image (rng, 16, 8)));
    GST_BUFFER_PTS (buf) = i * frame;
    GST_BUFFER_DURATION (buf) = frame;
    if (discont)
      GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
    fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
  };
  push (0, false);
  push (1, false);
  fail_unless_equals_int (gst_harness_buffers_received (h), 1);

  ASSERT_WARNING (g_object_set (h->element, "temporal-radius", 3, NULL));
  gint radius = -1;
  g_object_get (h->element, "temporal-radius", &radius, NULL);
  fail_unless_equals_int (radius, 1);

  /* The DISCONT buffer drains frame 1, then holds itself for one frame. */
  push (2, true);
  fail_unless_equals_int (gst_harness_buffers_received (h), 2);
  push (3, false);
  fail_unless_equals_int (gst_harness_buffers_received (h), 3);
  fail_unless_equals_uint64 (gst_harness_query_latency (h), frame);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=GRAY8,width=16,"
      "height=8,framerate=50/1");
  fail_unless_equals_int (gst_harness_buffers_received (h), 4);
  fail_unless_equals_uint64 (gst_harness_query_latency (h), GST_SECOND / 50);

  /* In READY the new radius is taken, and used from the next start. */
  fail_unless (gst_element_set_state (h->element, GST_STATE_READY) ==
      GST_STATE_CHANGE_SUCCESS);
  g_object_set (h->element, "temporal-radius", 2, NULL);
  g_object_get (h->element, "temporal-radius", &radius, NULL);
  fail_unless_equals_int (radius, 2);
  gst_harness_play (h);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=GRAY8,width=16,"
      "height=8,framerate=25/1");
  const guint before = gst_harness_buffers_received (h);
  for (int i = 0; i < 3; ++i)
    push (10 + i, false);
  fail_unless_equals_int (gst_harness_buffers_received (h), before + 1);
  fail_unless_equals_uint64 (gst_harness_query_latency (h), 2 * frame);
  /* A frame held back cannot be dropped for lateness: no QoS. */
  fail_if (gst_base_transform_is_qos_enabled (GST_BASE_TRANSFORM (h->element)));

  /* Radius 0 holds nothing: each frame leaves at once, late ones may be
   * dropped again. */
  fail_unless (gst_element_set_state (h->element, GST_STATE_READY) ==
      GST_STATE_CHANGE_SUCCESS);
  g_object_set (h->element, "temporal-radius", 0, NULL);
  gst_harness_play (h);
  gst_harness_set_src_caps_str (h, "video/x-raw,format=GRAY8,width=16,"
      "height=8,framerate=25/1");
  fail_unless (gst_base_transform_is_qos_enabled (GST_BASE_TRANSFORM (h->element)),
      "QoS stays off after a start with a window");
  const guint at_zero = gst_harness_buffers_received (h);
  push (20, false);
  fail_unless_equals_int (gst_harness_buffers_received (h), at_zero + 1);
  fail_unless_equals_uint64 (gst_harness_query_latency (h), 0);
  gst_harness_teardown (h);
}
GST_END_TEST;

#if !TEST_GPU
/* The warnings GLib's range checks cannot give: what was refused, why, the
 * order of changes that works, and the value that stays. */

static void
assert_contains (const std::string & text, const char *part)
{
  fail_unless (text.find (part) != std::string::npos, "'%s' not in: %s", part,
      text.c_str ());
}

GST_START_TEST (test_refused_properties_say_why)
{
  GstElement *nlm = gst_element_factory_make ("cudanlm", NULL);
  g_object_set (nlm, "search-size", 7, "patch-size", 7, NULL);
  {
    CapturedWarnings w;
    g_object_set (nlm, "patch-size", 9, NULL);
    const std::string text = w.take ();
    assert_contains (text, "refusing patch-size=9");
    assert_contains (text, "search-size (7)");
    assert_contains (text, "raise search-size first");
    assert_contains (text, "patch-size stays 7");
    fail_unless (text.find ("set patch-size") == std::string::npos, "%s",
        text.c_str ());

    g_object_set (nlm, "search-size", 5, NULL);
    const std::string lower = w.take ();
    assert_contains (lower, "refusing search-size=5");
    assert_contains (lower, "lower patch-size first");
    assert_contains (lower, "search-size stays 7");

    g_object_set (nlm, "chroma-strength", 0.05, NULL);
    const std::string chroma = w.take ();
    assert_contains (chroma, "refusing chroma-strength=0.05");
    assert_contains (chroma, "0.1 to 255");
    assert_contains (chroma, "chroma-strength stays -1");
  }
  gint patch = 0, search = 0;
  gfloat chroma = 0;
  g_object_get (nlm, "patch-size", &patch, "search-size", &search,
      "chroma-strength", &chroma, NULL);
  fail_unless_equals_int (patch, 7);
  fail_unless_equals_int (search, 7);
  fail_unless (chroma == -1.f);
  /* The sizes in an order that works. */
  g_object_set (nlm, "search-size", 9, "patch-size", 9, NULL);
  g_object_set (nlm, "chroma-strength", 0.1, NULL);
  g_object_get (nlm, "patch-size", &patch, "chroma-strength", &chroma, NULL);
  fail_unless_equals_int (patch, 9);
  fail_unless (chroma == 0.1f);
  gst_object_unref (nlm);
}
GST_END_TEST;
#endif

#if TEST_GPU
/* ---------------------------------- GPU against CPU on large and colour frames */

/* Under compute-sanitizer (CUDAFILTERS_TEST_SKIP_LARGE=1) frames above 20000
 * pixels are skipped: they take minutes there. Everything else runs
 * instrumented. */
GST_START_TEST (test_large_frames)
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

/* 4K and 8K at 16 bits: many blocks and rows past 2^16 bytes. */
GST_START_TEST (test_deep_large_frames)
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
GST_START_TEST (test_chroma_matches_cpu)
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
        if (large && !sampled (what, 0.4))
          continue;
        assert_frames_close (push_pull_frame (s.launch ("cuda").c_str (), in),
            push_pull_frame (s.launch ("cpu").c_str (), in),
            gpu_nlm_tolerance (luma_bits (fmt)), what);
      }
    }
}
GST_END_TEST;

/* Deep frames in temporal windows, and 4K. */
GST_START_TEST (test_temporal_deep_and_large)
{
  std::mt19937 rng (5152);
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_P010_10LE,
          GST_VIDEO_FORMAT_I420_12LE}) {
    Sequence seq;
    for (int i = 0; i < 4; ++i)
      seq.frames.push_back (colour_frame (rng, fmt, 53, 31));
    check_sequence (seq, NlmSettings {12, 5, 11, 0, false, 6, 1});
  }
  if (skip_large ())
    return;
  check_sequence (make_sequence (rng, GST_VIDEO_FORMAT_NV12, 3840,
          2160, 3), NlmSettings {10, 5, 9, 0, false, 5, 1});
}
GST_END_TEST;
#endif

static Suite *
cudanlm_suite (void)
{
  Suite *s = suite_create (TEST_SUITE_NAME ("cudanlm"));
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_random_frames);
  tcase_add_test (tc, test_given_strength_is_used);
  tcase_add_test (tc, test_matches_definition);
  tcase_add_test (tc, test_output_size_and_format);
  tcase_add_test (tc, test_flat_frames_stay_flat);
  tcase_add_test (tc, test_denoises_and_keeps_edges);
  tcase_add_test (tc, test_auto_strength);
  tcase_add_test (tc, test_renegotiation_mid_stream);
  tcase_add_test (tc, test_live_changes);
  tcase_add_test (tc, test_formats_filter_luma_only);
  tcase_add_test (tc, test_deep_formats);
  tcase_add_test (tc, test_deep_strength_in_8bit_units);
  tcase_add_test (tc, test_deep_flat_frames_stay_flat);
  tcase_add_test (tc, test_depth_renegotiation);
  tcase_add_test (tc, test_chroma_denoised_edges_kept);
  tcase_add_test (tc, test_temporal_sequences);
  tcase_add_test (tc, test_temporal_flush_discont_caps);
  tcase_add_test (tc, test_temporal_latency);
  tcase_add_test (tc, test_temporal_radius_fixed_while_running);
#if !TEST_GPU
  tcase_add_test (tc, test_defaults_are_the_engines);
  tcase_add_test (tc, test_properties_and_refused_values);
  tcase_add_test (tc, test_chroma_matches_definition);
  tcase_add_test (tc, test_chroma_strength_zero_is_luma_only);
  tcase_add_test (tc, test_temporal_matches_definition);
  tcase_add_test (tc, test_refused_properties_say_why);
#else
  tcase_add_test (tc, test_large_frames);
  tcase_add_test (tc, test_deep_large_frames);
  tcase_add_test (tc, test_chroma_matches_cpu);
  tcase_add_test (tc, test_temporal_deep_and_large);
#endif
  return s;
}

int
main (int argc, char **argv)
{
  return run_suite (argc, argv, cudanlm_suite, TEST_SUITE_NAME ("cudanlm"));
}

/* The four elements on RGB and packed 4:2:2 frames (issue 38): RGBA, BGRA,
 * RGBx, BGRx, ARGB, ABGR, xRGB, xBGR, RGB and BGR, and YUY2, UYVY and YVYU.
 *   - cudahisteq, cudaclahe and cudasharpen on RGB: bit for bit OpenCV's
 *     YCrCb (ycrcb_reference.h), the plane filter's reference on Y, back
 *     with the same Cr and Cb; alpha and padding carried;
 *   - on packed 4:2:2: luma filtered (the plane reference), chroma and an
 *     odd width's unused luma carried, and equal to the element on the same
 *     frame as planar Y42B;
 *   - cudanlm on RGB: equal to the element on the Y444 frame of the same Y,
 *     Cr (U) and Cb (V) planes, converted back; on packed 4:2:2 equal to it
 *     on Y42B; single frames and a temporal window;
 *   - odd widths (3-byte rows padded to 4), a width of 1, output caps equal
 *     to input caps, renegotiation between RGB, packed and planar YUV in one
 *     stream, the template caps, and videotestsrc ! cudahisteq ! fakesink
 *     with no converter.
 * Built twice: `colourformats` on the CPU backend; `colourformats-gpu` on
 * the CUDA backend, also against the CPU backend (bit for bit; cudanlm
 * within its tolerance, gpu_nlm_tolerance), on frames up to 4K, and in CUDA
 * memory through cudaupload and cudadownload; it exits 77 (skipped) where no
 * GPU is usable. */
#include "elements.h"
#include "ycrcb_reference.h"

#include <cmath>

using namespace test;

/* ------------------------------------------------------------ settings */

static Image
clahe_5x3 (const Image & y)
{
  return reference_clahe (y, 3.0, 5, 3);
}

static Image
clahe_unclipped_2x2 (const Image & y)
{
  return reference_clahe (y, 0.0, 2, 2);
}

static Image
sharpen_unsharp (const Image & y)
{
  return reference_sharpen (y, SharpenSettings { "unsharp", 1.5, 1.2, 2 });
}

static Image
sharpen_laplacian (const Image & y)
{
  return reference_sharpen (y, SharpenSettings { "laplacian-3x3", 1.0, 1.0, 0 });
}

/* A plane filter, its settings and its reference on a plane. */
struct PlaneFilter {
  const char *factory;
  const char *props;
  Image (*reference) (const Image &);

  std::string launch () const { return on_backend (factory, props); }
  std::string cpu_launch () const {
    return std::string (factory) + " backend=cpu" + props;
  }
};

static const PlaneFilter kPlaneFilters[] = {
  {"cudahisteq", "", reference_equalize},
  {"cudaclahe", " clip-limit=3 tiles-x=5 tiles-y=3", clahe_5x3},
  {"cudaclahe", " clip-limit=0 tiles-x=2 tiles-y=2", clahe_unclipped_2x2},
  {"cudasharpen", " amount=1.5 radius=1.2 threshold=2", sharpen_unsharp},
  {"cudasharpen", " kernel=laplacian-3x3", sharpen_laplacian},
};

/* cudanlm: chroma at its own strength, at luma's (-1, Gaussian patches),
 * and carried (0). Fixed strengths (auto-strength=false, in launch ()). */
static const NlmSettings kNlmSets[] = {
  {12, 3, 7, 0, false, 9},
  {15, 5, 9, 0, true, -1},
  {10, 3, 5, 0, false, 0},
};

static const NlmSettings kNlmTemporal = { 12, 3, 7, 0, false, 9, 1 };

static const GstVideoFormat kRgbFormats[] = {
  GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx,
  GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_ARGB, GST_VIDEO_FORMAT_ABGR,
  GST_VIDEO_FORMAT_xRGB, GST_VIDEO_FORMAT_xBGR, GST_VIDEO_FORMAT_RGB,
  GST_VIDEO_FORMAT_BGR,
};

static const GstVideoFormat kPackedYuvFormats[] = {
  GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY, GST_VIDEO_FORMAT_YVYU,
};

/* The formats in CUDA memory (what GStreamer's CUDA allocator lays out). */
static const GstVideoFormat kCudaMemoryFormats[] = {
  GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx,
  GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_ARGB, GST_VIDEO_FORMAT_ABGR,
  GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_YUY2,
  GST_VIDEO_FORMAT_UYVY,
};

static std::vector<GstVideoFormat>
all_new_formats ()
{
  std::vector<GstVideoFormat> v (std::begin (kRgbFormats), std::end (kRgbFormats));
  v.insert (v.end (), std::begin (kPackedYuvFormats), std::end (kPackedYuvFormats));
  return v;
}

/* Odd widths (3-byte rows padded to 4 bytes, a 4:2:2 group with an unused
 * luma), a width of 1, a width of 2, and an even frame; under
 * CUDAFILTERS_TEST_QUICK (valgrind) without the largest. */
static std::vector<std::pair<int, int>>
small_sizes ()
{
  std::vector<std::pair<int, int>> s = { {33, 17}, {1, 5}, {2, 3}, {7, 1} };
  if (!quick ()) {
    s.push_back ({64, 48});
    s.push_back ({385, 289});
  }
  return s;
}

/* --------------------------------------------------------------- frames */

/* Smooth colours (natural_image's gradient and disc, one per channel) with
 * Gaussian noise of `sigma` levels; every other byte (alpha, padding, an
 * unused luma) random. */
static PackedFrame
scene_frame (std::mt19937 & rng, GstVideoFormat fmt, int w, int h,
    double sigma)
{
  PackedFrame f = random_packed_frame (rng, fmt, w, h);
  const Image base = natural_image (w, h);
  std::normal_distribution<double> noise (0.0, sigma > 0 ? sigma : 1.0);
  auto level = [&](int v) {
    return ycc_sat (int (std::lround (v + (sigma > 0 ? noise (rng) : 0.0))));
  };
  if (const RgbLayout * l = rgb_layout (fmt)) {
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        uint8_t *p = &f.rows.pixels[size_t (y) * f.rows.width + size_t (x) * l->bytes];
        const int v = base.at (x, y);
        p[l->r] = level (v + 40);
        p[l->g] = level (v);
        p[l->b] = level (250 - v + (60 * y) / h);
      }
    return f;
  }
  const PackedYuvLayout *l = packed_yuv_layout (fmt);
  for (int y = 0; y < h; ++y)
    for (int g = 0; g < (w + 1) / 2; ++g) {
      uint8_t *q = &f.rows.pixels[size_t (y) * f.rows.width + 4 * size_t (g)];
      q[l->y0] = level (base.at (2 * g, y));
      if (2 * g + 1 < w)
        q[l->y1] = level (base.at (2 * g + 1, y));
      q[l->u] = level (128 + (base.at (2 * g, y) - 128) / 3);
      q[l->v] = level (90 + (80 * y) / h);
    }
  return f;
}

#if TEST_GPU
/* Large frames, quickly: structure and noise from a xorshift generator. */
static PackedFrame
large_frame (uint32_t seed, GstVideoFormat fmt, int w, int h)
{
  PackedFrame f (fmt, w, h);
  uint32_t s = seed * 2654435761u + 1;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < f.rows.width; ++x) {
      s ^= s << 13;
      s ^= s >> 17;
      s ^= s << 5;
      f.rows.at (x, y) = uint8_t (((x / 17 + y / 9) & 127) + (s & 63) +
          ((x * 3 + y) >> 8 & 63));
    }
  return f;
}
#endif

/* -------------------------------------------------------------- harness */

static std::string
caps_of (const PackedFrame & f, const char *features = nullptr)
{
  return video_caps (f.format, f.width, f.height, features);
}

/* The output caps are the input's: the same format and size. */
static void
assert_output_caps (GstHarness * h, GstVideoFormat fmt, int w, int hgt,
    const std::string & what)
{
  GstCaps *caps = gst_pad_get_current_caps (h->sinkpad);
  fail_unless (caps != NULL, "%s: no output caps", what.c_str ());
  GstVideoInfo info;
  fail_unless (gst_video_info_from_caps (&info, caps));
  gst_caps_unref (caps);
  fail_unless (GST_VIDEO_INFO_FORMAT (&info) == fmt,
      "%s: output format %s", what.c_str (),
      gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&info)));
  fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&info), w);
  fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&info), hgt);
}

/* One frame through a harness that stays open (renegotiated where the
 * frame's caps changed). */
static PackedFrame
push_pull_packed_in (GstHarness * h, const PackedFrame & in)
{
  set_caps_if_changed (h, caps_of (in));
  /* A refused format fails at once rather than after the pull's timeout. */
  const GstFlowReturn ret = gst_harness_push (h, buffer_from_packed (in));
  fail_unless (ret == GST_FLOW_OK, "%s: pushing gave %s", in.describe ().c_str (),
      gst_flow_get_name (ret));
  GstBuffer *out = gst_harness_pull (h);
  fail_unless (out != NULL, "%s: no output buffer", in.describe ().c_str ());
  assert_output_caps (h, in.format, in.width, in.height, in.describe ());
  PackedFrame got = packed_from_buffer (out, in);
  gst_buffer_unref (out);
  return got;
}

/* One frame through a fresh element of `launch`. */
static PackedFrame
push_pull_packed (const std::string & launch, const PackedFrame & in)
{
  GstHarness *h = new_harness (launch);
  PackedFrame got = push_pull_packed_in (h, in);
  gst_harness_teardown (h);
  return got;
}

/* A planar frame through a harness that stays open, output caps checked. */
static PlanarFrame
push_pull_planar_in (GstHarness * h, const PlanarFrame & in)
{
  PlanarFrame out = push_pull_in (h, in);
  assert_output_caps (h, GST_VIDEO_INFO_FORMAT (&in.info),
      GST_VIDEO_INFO_WIDTH (&in.info), GST_VIDEO_INFO_HEIGHT (&in.info),
      gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&in.info)));
  return out;
}

static std::string
describe (const std::string & launch, const PackedFrame & f)
{
  return launch + " on " + f.describe ();
}

/* -------------------------------------------- what cudanlm must output */

/* The Y444 frame of an RGB frame's OpenCV YCrCb, its planes in OpenCV's
 * channel order: Y, then Cr as U and Cb as V. (cudanlm weighs U and V
 * together; on the CPU the other order gives the same bytes.) */
static PlanarFrame
y444_of_rgb (const PackedFrame & in)
{
  const YCrCbPlanes p = split_ycrcb (in);
  PlanarFrame f;
  gst_video_info_set_format (&f.info, GST_VIDEO_FORMAT_Y444, in.width, in.height);
  f.planes = { p.y, p.cr, p.cb };
  return f;
}

/* `in` with the colours of the Y444 frame `f` (Y, Cr, Cb) converted back. */
static PackedFrame
rgb_of_y444 (const PackedFrame & in, const PlanarFrame & f)
{
  return merge_ycrcb (in, YCrCbPlanes { f.planes[0], f.planes[1], f.planes[2] });
}

/* What an element of `launch` (a fresh one) must output for `in`, from its
 * output on the planar equivalent: Y444 for RGB, Y42B for packed 4:2:2. */
static PackedFrame
through_planar_equivalent (const std::string & launch, const PackedFrame & in)
{
  if (rgb_layout (in.format))
    return rgb_of_y444 (in, push_pull_frame (launch.c_str (), y444_of_rgb (in)));
  return packed_of_planar (in, push_pull_frame (launch.c_str (),
          planar_of_packed (in)));
}

/* Every byte of two packed frames within `tolerance`. */
static void
assert_packed_close (const PackedFrame & got, const PackedFrame & want,
    int tolerance, const std::string & what)
{
  assert_images_close (got.rows, want.rows, tolerance, what.c_str ());
}

/* ------------------------------------------------- the plane filters */

/* Every plane filter on every format of `formats`, at `sizes`, one element
 * per filter and format renegotiated from size to size: each frame equals
 * `reference` (and on the GPU the CPU backend's output, bit for bit). */
template < typename Reference > static void
check_plane_filters (const std::vector<GstVideoFormat> & formats,
    const std::vector<std::pair<int, int>> & sizes, Reference reference,
    bool also_planar_equivalent)
{
  std::mt19937 rng (38);
  for (const PlaneFilter & f : kPlaneFilters)
    for (GstVideoFormat fmt : formats) {
      GstHarness *h = new_harness (f.launch ());
      GstHarness *cpu = TEST_GPU ? new_harness (f.cpu_launch ())
          : nullptr;
      for (const auto & sz : sizes)
        for (double sigma : {0.0, 6.0}) {
          PackedFrame in = sigma > 0 ? scene_frame (rng, fmt, sz.first,
              sz.second, sigma) : random_packed_frame (rng, fmt, sz.first,
              sz.second);
          const std::string what = describe (f.launch (), in);
          PackedFrame got = push_pull_packed_in (h, in);
          assert_packed_equal (got, reference (in, f.reference), what);
          if (cpu)
            assert_packed_equal (got, push_pull_packed_in (cpu, in),
                what + ", against the CPU backend");
          if (also_planar_equivalent)
            assert_packed_equal (got, through_planar_equivalent (f.launch (),
                    in), what + ", against the element on Y42B");
        }
      gst_harness_teardown (h);
      if (cpu)
        gst_harness_teardown (cpu);
    }
}

static PackedFrame
rgb_reference (const PackedFrame & in, Image (*filter) (const Image &))
{
  return reference_rgb (in, filter);
}

static PackedFrame
packed_yuv_reference (const PackedFrame & in, Image (*filter) (const Image &))
{
  return reference_packed_yuv (in, filter);
}

/* OpenCV's YCrCb round trip with the filter on Y, every RGB format. */
GST_START_TEST (test_rgb_plane_filters)
{
  check_plane_filters (std::vector<GstVideoFormat> (std::begin (kRgbFormats),
          std::end (kRgbFormats)), small_sizes (), rgb_reference, false);
}
GST_END_TEST;

/* Luma filtered, chroma carried, and the same as the element on Y42B. */
GST_START_TEST (test_packed_yuv_plane_filters)
{
  check_plane_filters (std::vector<GstVideoFormat> (std::begin
          (kPackedYuvFormats), std::end (kPackedYuvFormats)), small_sizes (),
      packed_yuv_reference, true);
}
GST_END_TEST;

/* Hand-checked pixels: grey stays grey through the round trip (Cr = Cb =
 * 128 exactly), so a grey RGB frame equalizes as its GRAY8 levels would;
 * a saturated colour's chroma saturates on the way in (pure red: Cr 255). */
GST_START_TEST (test_rgb_grey_and_saturated)
{
  fail_unless_equals_int (ycrcb_of ({255, 0, 0}).y, 76);
  fail_unless_equals_int (ycrcb_of ({255, 0, 0}).cr, 255);
  fail_unless_equals_int (ycrcb_of ({0, 0, 255}).cb, 255);
  fail_unless_equals_int (ycrcb_of ({200, 200, 200}).cr, 128);
  fail_unless_equals_int (ycrcb_of ({200, 200, 200}).cb, 128);

  std::mt19937 rng (5);
  const Image levels = random_image (rng, 21, 9, 60, 120);
  const Image want = reference_equalize (levels);
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_RGB}) {
    const RgbLayout *l = rgb_layout (fmt);
    PackedFrame in = random_packed_frame (rng, fmt, 21, 9);
    for (int y = 0; y < 9; ++y)
      for (int x = 0; x < 21; ++x) {
        uint8_t *p = &in.rows.pixels[size_t (y) * in.rows.width + size_t (x) * l->bytes];
        p[l->r] = p[l->g] = p[l->b] = levels.at (x, y);
      }
    const PackedFrame got = push_pull_packed (on_backend ("cudahisteq"), in);
    for (int y = 0; y < 9; ++y)
      for (int x = 0; x < 21; ++x) {
        const Rgb c = rgb_at (got, *l, x, y);
        fail_unless (c.r == want.at (x, y) && c.g == want.at (x, y) &&
            c.b == want.at (x, y), "%s: (%d, %d) is (%d, %d, %d), want grey %d",
            format_name (fmt), x, y, c.r, c.g, c.b, want.at (x, y));
      }
  }
}
GST_END_TEST;

/* ------------------------------------------------------------- cudanlm */

/* RGB: the element on the Y444 frame of Y, Cb and Cr, converted back;
 * packed 4:2:2: the element on Y42B. On the GPU also the CPU backend on the
 * planar equivalent, within the tolerance of cudanlm's backends. */
static void
check_nlm_formats (const std::vector<GstVideoFormat> & formats)
{
  std::mt19937 rng (380);
  std::vector<std::pair<int, int>> sizes = { {33, 17}, {1, 5}, {16, 9} };
  if (quick ())
    sizes = { {17, 9}, {1, 5} };
  for (const NlmSettings & s : kNlmSets)
    for (GstVideoFormat fmt : formats)
      for (const auto & sz : sizes) {
        const std::string launch = s.launch (kBackend);
        PackedFrame in = scene_frame (rng, fmt, sz.first, sz.second, 14.0);
        const std::string what = describe (launch, in);
        const PackedFrame got = push_pull_packed (launch, in);
        assert_packed_equal (got, through_planar_equivalent (launch, in),
            what + ", against the planar equivalent");
        if (TEST_GPU) {
          /* Each of Y, Cr and Cb within one level of the CPU's moves R, G
           * and B by at most 1 + 1.773 + rounding: compare the planes. */
          if (rgb_layout (fmt)) {
            const PlanarFrame y444 = y444_of_rgb (in);
            const PlanarFrame gpu = push_pull_frame (launch.c_str (), y444);
            const PlanarFrame cpu = push_pull_frame (s.launch ("cpu").c_str (), y444);
            for (int p = 0; p < 3; ++p)
              assert_images_close (gpu.planes[p], cpu.planes[p],
                  gpu_nlm_tolerance (8), (what + ", Y444 against the CPU").c_str ());
          } else {
            assert_packed_close (got, push_pull_packed (s.launch ("cpu"), in),
                gpu_nlm_tolerance (8), what + ", against the CPU backend");
          }
        }
      }
}

GST_START_TEST (test_nlm_rgb)
{
  check_nlm_formats (std::vector<GstVideoFormat> (std::begin (kRgbFormats),
          std::end (kRgbFormats)));
}
GST_END_TEST;

GST_START_TEST (test_nlm_packed_yuv)
{
  check_nlm_formats (std::vector<GstVideoFormat> (std::begin
          (kPackedYuvFormats), std::end (kPackedYuvFormats)));
}
GST_END_TEST;

/* Frames through a fresh element of `launch`, all with `caps`, then EOS:
 * every output buffer, in order. */
static std::vector<GstBuffer *>
run_stream (const std::string & launch, const std::string & caps,
    const std::vector<GstBuffer *> & in)
{
  GstHarness *h = new_harness (launch);
  gst_harness_set_src_caps_str (h, caps.c_str ());
  for (size_t i = 0; i < in.size (); ++i) {
    GST_BUFFER_PTS (in[i]) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION (in[i]) = GST_SECOND / 30;
    GST_BUFFER_OFFSET (in[i]) = i;
    fail_unless_equals_int (gst_harness_push (h, in[i]), GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  std::vector<GstBuffer *> out;
  while (gst_harness_buffers_in_queue (h) > 0)
    out.push_back (gst_harness_pull (h));
  gst_harness_teardown (h);
  fail_unless_equals_int (int (out.size ()), int (in.size ()));
  for (size_t i = 0; i < out.size (); ++i)
    fail_unless_equals_uint64 (GST_BUFFER_PTS (out[i]), i * GST_SECOND / 30);
  return out;
}

/* temporal-radius 1 over five frames: each output as the element gives it
 * on the planar equivalents of the same five frames. */
GST_START_TEST (test_nlm_temporal_window)
{
  std::mt19937 rng (381);
  const int n = 5;
  const int w = quick () ? 17 : 33, hgt = quick () ? 9 : 17;
  const std::string launch = kNlmTemporal.launch (kBackend);
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGR,
          GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY}) {
    std::vector<PackedFrame> frames;
    std::vector<GstBuffer *> packed_in, planar_in;
    PlanarFrame planar_like;
    for (int i = 0; i < n; ++i) {
      frames.push_back (scene_frame (rng, fmt, w, hgt, 14.0));
      packed_in.push_back (buffer_from_packed (frames.back ()));
      planar_like = rgb_layout (fmt) ? y444_of_rgb (frames.back ()) :
          planar_of_packed (frames.back ());
      planar_in.push_back (buffer_from_frame (planar_like));
    }
    const std::vector<GstBuffer *> got = run_stream (launch, caps_of (frames[0]),
        packed_in);
    const std::vector<GstBuffer *> planar = run_stream (launch,
        video_caps (GST_VIDEO_INFO_FORMAT (&planar_like.info), w, hgt), planar_in);
    for (int i = 0; i < n; ++i) {
      const PlanarFrame p = frame_from_buffer (planar[i], planar_like.info);
      const PackedFrame want = rgb_layout (fmt) ? rgb_of_y444 (frames[i], p) :
          packed_of_planar (frames[i], p);
      assert_packed_equal (packed_from_buffer (got[i], frames[i]), want,
          describe (launch, frames[i]) + ", frame " + std::to_string (i) +
          " of a temporal window");
      gst_buffer_unref (got[i]);
      gst_buffer_unref (planar[i]);
    }
  }
}
GST_END_TEST;

/* --------------------------------------------- alpha, padding, odd widths */

static std::vector<std::string>
every_element_launch ()
{
  std::vector<std::string> v;
  for (const PlaneFilter & f : kPlaneFilters)
    v.push_back (f.launch ());
  v.push_back (kNlmSets[0].launch (kBackend));
  return v;
}

/* The fourth byte of every 4-byte RGB format comes out as it went in:
 * distinct values, 0 and 255 among them; so does the unused luma of an
 * odd-width 4:2:2 row. */
GST_START_TEST (test_alpha_padding_and_unused_luma_carried)
{
  std::mt19937 rng (382);
  for (const std::string & launch : every_element_launch ()) {
    for (const RgbLayout & l : kRgbLayouts) {
      if (l.extra < 0)
        continue;
      PackedFrame in = scene_frame (rng, l.format, 37, 11, 5.0);
      for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x)
          in.rows.pixels[size_t (y) * in.rows.width + size_t (x) * 4 + l.extra] =
              uint8_t (x == 0 ? 0 : x == 1 ? 255 : (x * 37 + y * 101) & 255);
      const PackedFrame got = push_pull_packed (launch, in);
      for (int y = 0; y < in.height; ++y)
        for (int x = 0; x < in.width; ++x) {
          const size_t k = size_t (y) * in.rows.width + size_t (x) * 4 + l.extra;
          if (got.rows.pixels[k] != in.rows.pixels[k])
            fail ("%s: %s byte of pixel (%d, %d) is %d, went in as %d",
                describe (launch, in).c_str (), l.alpha ? "alpha" : "padding",
                x, y, got.rows.pixels[k], in.rows.pixels[k]);
        }
    }
    for (const PackedYuvLayout & l : kPackedYuvLayouts) {
      PackedFrame in = scene_frame (rng, l.format, 35, 7, 5.0);
      const PackedFrame got = push_pull_packed (launch, in);
      for (int y = 0; y < in.height; ++y) {
        const size_t k = size_t (y) * in.rows.width + 4 * 17 + l.y1;
        fail_unless_equals_int (got.rows.pixels[k], in.rows.pixels[k]);
      }
    }
  }
}
GST_END_TEST;

/* ------------------------------------------------------- renegotiation */

/* One element through RGB, packed and planar YUV frames of several sizes,
 * the caps changing at every frame: each frame as a fresh element gives it,
 * and the plane filters' as their references. */
GST_START_TEST (test_renegotiation_rgb_packed_planar)
{
  struct Step {
    GstVideoFormat fmt;
    int w, h;
  };
  const Step steps[] = {
    {GST_VIDEO_FORMAT_RGBA, 33, 17}, {GST_VIDEO_FORMAT_YUY2, 33, 17},
    {GST_VIDEO_FORMAT_I420, 64, 48}, {GST_VIDEO_FORMAT_RGBA, 33, 17},
    {GST_VIDEO_FORMAT_BGR, 17, 5}, {GST_VIDEO_FORMAT_UYVY, 1, 3},
    {GST_VIDEO_FORMAT_I420, 33, 17}, {GST_VIDEO_FORMAT_YUY2, 20, 10},
    {GST_VIDEO_FORMAT_RGBA, 1, 1},
  };
  std::mt19937 rng (383);
  for (size_t e = 0; e <= G_N_ELEMENTS (kPlaneFilters); ++e) {
    const PlaneFilter *f = e < G_N_ELEMENTS (kPlaneFilters) ? &kPlaneFilters[e] : nullptr;
    const std::string launch = f ? f->launch () : kNlmSets[0].launch (kBackend);
    GstHarness *h = new_harness (launch);
    for (const Step & s : steps) {
      const std::string what = launch + " after switching to " +
          format_name (s.fmt) + " " + std::to_string (s.w) + "x" +
          std::to_string (s.h);
      if (s.fmt == GST_VIDEO_FORMAT_I420) {
        const PlanarFrame in = frame_with_luma (rng, s.fmt, natural_image (s.w, s.h));
        const PlanarFrame got = push_pull_planar_in (h, in);
        const PlanarFrame fresh = push_pull_frame (launch.c_str (), in);
        for (size_t p = 0; p < in.planes.size (); ++p)
          assert_images_equal (got.planes[p], fresh.planes[p], what.c_str ());
        if (f) {
          assert_images_equal (got.planes[0], f->reference (in.planes[0]),
              what.c_str ());
          assert_chroma_carried (got, in);
        }
        continue;
      }
      const PackedFrame in = scene_frame (rng, s.fmt, s.w, s.h, 8.0);
      const PackedFrame got = push_pull_packed_in (h, in);
      assert_packed_equal (got, push_pull_packed (launch, in),
          what + ", against a fresh element");
      if (f)
        assert_packed_equal (got, rgb_layout (s.fmt) ? reference_rgb (in,
                f->reference) : reference_packed_yuv (in, f->reference), what);
    }
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* xRGB (system memory only) and YVYU, by name: every element takes them
 * and outputs them. */
GST_START_TEST (test_xrgb_and_yvyu)
{
  std::mt19937 rng (384);
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_xRGB, GST_VIDEO_FORMAT_YVYU}) {
    for (const PlaneFilter & f : kPlaneFilters) {
      const PackedFrame in = scene_frame (rng, fmt, 45, 13, 4.0);
      assert_packed_equal (push_pull_packed (f.launch (), in), rgb_layout (fmt)
          ? reference_rgb (in, f.reference) : reference_packed_yuv (in,
              f.reference), describe (f.launch (), in));
    }
    const std::string nlm = kNlmSets[0].launch (kBackend);
    const PackedFrame in = scene_frame (rng, fmt, 45, 13, 14.0);
    assert_packed_equal (push_pull_packed (nlm, in),
        through_planar_equivalent (nlm, in), describe (nlm, in));
  }
}
GST_END_TEST;

/* A buffer of `f` with rows `stride` bytes apart after `offset` bytes,
 * described by a video meta; the bytes between rows 0xEE. */
static GstBuffer *
buffer_with_stride (const PackedFrame & f, int offset, int stride)
{
  const size_t size = size_t (offset) + size_t (stride) * f.height;
  GstBuffer *buf = gst_buffer_new_allocate (NULL, size, NULL);
  gst_buffer_memset (buf, 0, 0xEE, size);
  for (int y = 0; y < f.height; ++y)
    gst_buffer_fill (buf, size_t (offset) + size_t (y) * stride,
        &f.rows.pixels[size_t (y) * f.rows.width], f.rows.width);
  gsize offsets[GST_VIDEO_MAX_PLANES] = { gsize (offset) };
  gint strides[GST_VIDEO_MAX_PLANES] = { stride };
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE, f.format,
      f.width, f.height, 1, offsets, strides);
  return buf;
}

/* Input rows further apart than GStreamer's default (a video meta's stride
 * and offset, rows of RGB at odd distances): the same output as from the
 * default layout. */
GST_START_TEST (test_strides_from_video_meta)
{
  std::mt19937 rng (388);
  for (const std::string & launch : every_element_launch ())
    for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_BGRA,
            GST_VIDEO_FORMAT_xBGR, GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_YVYU}) {
      const PackedFrame in = scene_frame (rng, fmt, 31, 9, 8.0);
      const PackedFrame want = push_pull_packed (launch, in);
      for (const auto & layout : { std::make_pair (0, row_bytes (fmt, 31) + 1),
              std::make_pair (7, row_bytes (fmt, 31) + 61) }) {
        GstHarness *h = new_harness (launch);
        gst_harness_set_src_caps_str (h, caps_of (in).c_str ());
        const GstFlowReturn ret = gst_harness_push (h, buffer_with_stride (in,
                layout.first, layout.second));
        fail_unless (ret == GST_FLOW_OK, "%s: pushing gave %s",
            describe (launch, in).c_str (), gst_flow_get_name (ret));
        GstBuffer *out = gst_harness_pull (h);
        fail_unless (out != NULL);
        assert_packed_equal (packed_from_buffer (out, in), want,
            describe (launch, in) + ", stride " + std::to_string (layout.second) +
            " after " + std::to_string (layout.first) + " bytes");
        gst_buffer_unref (out);
        gst_harness_teardown (h);
      }
    }
}
GST_END_TEST;

/* Many frames through one element: what the element keeps between frames
 * (converted planes, histograms, buffers) starts afresh each time. */
GST_START_TEST (test_frame_sequence)
{
  std::mt19937 rng (389);
  const int frames = quick () ? 4 : 20;
  const int w = quick () ? 40 : 160, hgt = quick () ? 30 : 120;
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGR,
          GST_VIDEO_FORMAT_UYVY}) {
    for (const PlaneFilter & f : kPlaneFilters) {
      GstHarness *h = new_harness (f.launch ());
      for (int i = 0; i < frames; ++i) {
        const PackedFrame in = scene_frame (rng, fmt, w, hgt, 2.0 * (i % 7));
        assert_packed_equal (push_pull_packed_in (h, in), rgb_layout (fmt) ?
            reference_rgb (in, f.reference) : reference_packed_yuv (in,
                f.reference), describe (f.launch (), in) + ", frame " +
            std::to_string (i));
      }
      gst_harness_teardown (h);
    }
  }
}
GST_END_TEST;

/* ----------------------------------------------------- caps and links */

/* The formats of the structures of `caps` in system memory (cuda: in CUDA
 * memory), in their order. */
static std::vector<std::string>
formats_in (GstCaps * caps, bool cuda)
{
  std::vector<std::string> out;
  for (guint i = 0; i < gst_caps_get_size (caps); ++i) {
    GstCapsFeatures *features = gst_caps_get_features (caps, i);
    const bool is_cuda = features &&
        gst_caps_features_contains (features, "memory:CUDAMemory");
    if (is_cuda != cuda)
      continue;
    const GValue *v = gst_structure_get_value (gst_caps_get_structure (caps, i),
        "format");
    if (!v)
      continue;
    if (G_VALUE_HOLDS_STRING (v))
      out.push_back (g_value_get_string (v));
    else if (GST_VALUE_HOLDS_LIST (v))
      for (guint k = 0; k < gst_value_list_get_size (v); ++k)
        out.push_back (g_value_get_string (gst_value_list_get_value (v, k)));
  }
  return out;
}

static bool
contains (const std::vector<std::string> & v, const char *s)
{
  return std::find (v.begin (), v.end (), std::string (s)) != v.end ();
}

/* Both pads of every element name the new formats: all of them in system
 * memory, the CUDA allocator's in CUDA memory (xRGB, xBGR and YVYU in
 * system memory only). */
GST_START_TEST (test_template_caps)
{
  for (const char *factory : {"cudahisteq", "cudaclahe", "cudasharpen",
          "cudanlm"}) {
    GstElement *e = gst_element_factory_make (factory, NULL);
    fail_unless (e != NULL, "no %s", factory);
    for (const char *pad : {"sink", "src"}) {
      GstPadTemplate *t = gst_element_class_get_pad_template
          (GST_ELEMENT_GET_CLASS (e), pad);
      fail_unless (t != NULL);
      GstCaps *caps = gst_pad_template_get_caps (t);
      const std::vector<std::string> sysmem = formats_in (caps, false);
      for (GstVideoFormat fmt : all_new_formats ())
        fail_unless (contains (sysmem, format_name (fmt)),
            "%s %s: no %s in system memory", factory, pad, format_name (fmt));
#ifdef HAVE_GST_CUDA
      const std::vector<std::string> cuda = formats_in (caps, true);
      for (GstVideoFormat fmt : kCudaMemoryFormats)
        fail_unless (contains (cuda, format_name (fmt)),
            "%s %s: no %s in CUDA memory", factory, pad, format_name (fmt));
      /* GStreamer's CUDA allocator has no layout for these. */
      for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_xRGB, GST_VIDEO_FORMAT_xBGR,
              GST_VIDEO_FORMAT_YVYU})
        fail_if (contains (cuda, format_name (fmt)),
            "%s %s: %s offered in CUDA memory", factory, pad, format_name (fmt));
#endif
      gst_caps_unref (caps);
    }
    gst_object_unref (e);
  }
}
GST_END_TEST;

static GstPadProbeReturn
count_buffer (GstPad *, GstPadProbeInfo *, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
  return GST_PAD_PROBE_OK;
}

/* videotestsrc ! cudahisteq ! fakesink links with no converter, in the
 * first of videotestsrc's formats that cudahisteq takes (one of the new
 * ones, as GStreamer's format list puts alpha RGB before deep YUV), and
 * reaches EOS after its three frames without error. */
GST_START_TEST (test_videotestsrc_links_without_converter)
{
  const std::string launch = "videotestsrc name=src num-buffers=3 ! " +
      on_backend ("cudahisteq") + " name=f ! fakesink";
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (launch.c_str (), &err);
  fail_unless (pipeline != NULL && err == NULL, "%s: %s", launch.c_str (),
      err ? err->message : "");
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *f = gst_bin_get_by_name (GST_BIN (pipeline), "f");

  /* The format they must meet in: videotestsrc's order first. */
  GstCaps *src_caps = gst_pad_template_get_caps (gst_element_class_get_pad_template
      (GST_ELEMENT_GET_CLASS (src), "src"));
  GstCaps *f_caps = gst_pad_template_get_caps (gst_element_class_get_pad_template
      (GST_ELEMENT_GET_CLASS (f), "sink"));
  const std::vector<std::string> offered = formats_in (src_caps, false);
  const std::vector<std::string> taken = formats_in (f_caps, false);
  gst_caps_unref (src_caps);
  gst_caps_unref (f_caps);
  std::string expected;
  for (const std::string & fmt : offered)
    if (contains (taken, fmt.c_str ())) {
      expected = fmt;
      break;
    }
  fail_if (expected.empty ());

  gint buffers = 0;
  GstPad *srcpad = gst_element_get_static_pad (f, "src");
  gst_pad_add_probe (srcpad, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, &buffers,
      NULL);
  /* What happened is read first and checked once the pipeline is stopped:
   * a pipeline left playing would hang the test's exit. */
  GstBus *bus = gst_element_get_bus (pipeline);
  const bool started = gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE;
  GstMessage *msg = started ? gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
      (GstMessageType) (GST_MESSAGE_EOS | GST_MESSAGE_ERROR)) : NULL;
  std::string error;
  if (msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    GError *e = NULL;
    gchar *debug = NULL;
    gst_message_parse_error (msg, &e, &debug);
    error = std::string (e->message) + " (" + (debug ? debug : "") + ")";
    g_error_free (e);
    g_free (debug);
  }
  const bool eos = msg && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS;
  if (msg)
    gst_message_unref (msg);
  std::string negotiated;
  if (GstCaps * caps = gst_pad_get_current_caps (srcpad)) {
    if (const gchar * s = gst_structure_get_string (gst_caps_get_structure (caps,
                0), "format"))
      negotiated = s;
    gst_caps_unref (caps);
  }
  const gint outputs = g_atomic_int_get (&buffers);
  const GstStateChangeReturn stopped = gst_element_set_state (pipeline,
      GST_STATE_NULL);
  gst_object_unref (srcpad);
  gst_object_unref (src);
  gst_object_unref (f);
  release_bus (bus);
  gst_object_unref (pipeline);

  g_print ("videotestsrc ! cudahisteq ! fakesink negotiated %s\n",
      negotiated.c_str ());
  fail_unless (started, "%s did not start", launch.c_str ());
  fail_unless (error.empty (), "%s: error %s", launch.c_str (), error.c_str ());
  fail_unless (eos, "%s: neither EOS nor an error in 60 s", launch.c_str ());
  fail_unless (stopped == GST_STATE_CHANGE_SUCCESS);
  fail_unless (negotiated == expected, "negotiated %s, expected %s "
      "(videotestsrc's first format that cudahisteq takes)", negotiated.c_str (),
      expected.c_str ());
  bool is_new = false;
  for (GstVideoFormat fmt : all_new_formats ())
    is_new = is_new || negotiated == format_name (fmt);
  fail_unless (is_new, "negotiated %s, none of the new formats",
      negotiated.c_str ());
  fail_unless_equals_int (outputs, 3);
}
GST_END_TEST;

#if TEST_GPU
/* --------------------------------------------------- large frames, GPU */

/* Every new format at 1921x1081, and some at 4K, GPU against the CPU
 * backend bit for bit (cudanlm: on the planar equivalent bit for bit, and
 * within its tolerance of the CPU backend at 1080p). */
GST_START_TEST (test_large_frames_match_cpu)
{
  const int big[][2] = { {1921, 1081}, {3840, 2160} };
  const GstVideoFormat at_4k[] = { GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRx,
    GST_VIDEO_FORMAT_ABGR, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_YUY2,
    GST_VIDEO_FORMAT_UYVY };
  uint32_t seed = 1;
  const std::vector<GstVideoFormat> formats = all_new_formats ();
  for (int fi = 0; fi < int (G_N_ELEMENTS (kPlaneFilters)); ++fi)
    for (int mi = 0; mi < int (formats.size ()); ++mi) {
      const PlaneFilter & f = kPlaneFilters[fi];
      const GstVideoFormat fmt = formats[mi];
      /* Everyday: every format through one of the filters, a third of the
       * pairs. */
      if (!in_grid_sample (fi, mi, 3)) {
        seed += 2;
        continue;
      }
      GstHarness *gpu = new_harness (f.launch ());
      GstHarness *cpu = new_harness (f.cpu_launch ());
      for (const auto & sz : big) {
        if (sz[0] > 1921 && (skip_large () || std::find (std::begin (at_4k),
                    std::end (at_4k), fmt) == std::end (at_4k)))
          continue;
        const PackedFrame in = large_frame (seed++, fmt, sz[0], sz[1]);
        assert_packed_equal (push_pull_packed_in (gpu, in),
            push_pull_packed_in (cpu, in), describe (f.launch (), in) +
            ", against the CPU backend");
      }
      gst_harness_teardown (gpu);
      gst_harness_teardown (cpu);
    }
  const NlmSettings & s = kNlmSets[0];
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGR,
          GST_VIDEO_FORMAT_YUY2}) {
    if (skip_large ())
      break;
    std::mt19937 rng (385);
    const PackedFrame in = scene_frame (rng, fmt, 1920, 1080, 12.0);
    const std::string launch = s.launch ("cuda");
    const PackedFrame got = push_pull_packed (launch, in);
    assert_packed_equal (got, through_planar_equivalent (launch, in),
        describe (launch, in) + ", against the planar equivalent");
    if (rgb_layout (fmt)) {
      const PlanarFrame y444 = y444_of_rgb (in);
      const PlanarFrame a = push_pull_frame (launch.c_str (), y444);
      const PlanarFrame b = push_pull_frame (s.launch ("cpu").c_str (), y444);
      for (int p = 0; p < 3; ++p)
        assert_images_close (a.planes[p], b.planes[p], gpu_nlm_tolerance (8),
            "Y444 of 1080p RGB, GPU against CPU");
    } else {
      assert_packed_close (got, push_pull_packed (s.launch ("cpu"), in),
          gpu_nlm_tolerance (8), describe (launch, in) + ", against the CPU");
    }
  }
}
GST_END_TEST;

#ifdef HAVE_GST_CUDA
/* ---------------------------------------------------------- CUDA memory */

/* Whether cudaupload puts `fmt` in CUDA memory on this GStreamer. */
static bool
cudaupload_takes (GstVideoFormat fmt)
{
  GstElement *up = gst_element_factory_make ("cudaupload", NULL);
  fail_unless (up != NULL, "no cudaupload");
  GstCaps *caps = gst_pad_template_get_caps (gst_element_class_get_pad_template
      (GST_ELEMENT_GET_CLASS (up), "src"));
  const bool ok = contains (formats_in (caps, true), format_name (fmt));
  gst_caps_unref (caps);
  gst_object_unref (up);
  return ok;
}

/* `in` through cudaupload ! video/x-raw(memory:CUDAMemory),format=FMT !
 * `filter` ! cudadownload, the filter's input checked to be in CUDA
 * memory. */
static PackedFrame
through_cuda_memory (const std::string & filter, const PackedFrame & in)
{
  const std::string launch = std::string ("cudaupload ! video/x-raw(memory:CUDAMemory),format=") +
      format_name (in.format) + " ! " + filter + " ! cudadownload";
  GstHarness *h = new_harness (launch);
  gst_harness_set_src_caps_str (h, caps_of (in).c_str ());
  gst_harness_set_sink_caps_str (h, caps_of (in).c_str ());
  GstBuffer *out = gst_harness_push_and_pull (h, buffer_from_packed (in));
  fail_unless (out != NULL, "%s: no output", describe (launch, in).c_str ());

  const std::string factory = filter.substr (0, filter.find (' '));
  GstElement *e = gst_harness_find_element (h, factory.c_str ());
  fail_unless (e != NULL);
  GstPad *pad = gst_element_get_static_pad (e, "sink");
  GstCaps *caps = gst_pad_get_current_caps (pad);
  fail_unless (caps != NULL);
  fail_unless (gst_caps_features_contains (gst_caps_get_features (caps, 0),
          "memory:CUDAMemory"), "%s: no CUDA memory", describe (launch, in).c_str ());
  GstVideoInfo info;
  fail_unless (gst_video_info_from_caps (&info, caps));
  fail_unless (GST_VIDEO_INFO_FORMAT (&info) == in.format);
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_object_unref (e);

  PackedFrame got = packed_from_buffer (out, in);
  gst_buffer_unref (out);
  gst_harness_teardown (h);
  return got;
}

/* cudaupload ! capsfilter RGBA(memory:CUDAMemory) ! cudahisteq !
 * cudadownload, the first thing a user tries: the reference. */
GST_START_TEST (test_cudaupload_rgba_cudahisteq)
{
  std::mt19937 rng (386);
  for (const auto & sz : { std::make_pair (320, 240), std::make_pair (333, 119) }) {
    const PackedFrame in = scene_frame (rng, GST_VIDEO_FORMAT_RGBA, sz.first,
        sz.second, 6.0);
    assert_packed_equal (through_cuda_memory ("cudahisteq backend=cuda", in),
        reference_rgb (in, reference_equalize), "cudahisteq on RGBA in CUDA memory");
  }
}
GST_END_TEST;

/* Every element on every format of the CUDA allocator: the plane filters
 * as the CPU backend on system memory (and the reference on the smaller
 * frames), cudanlm as itself on system memory, bit for bit. */
GST_START_TEST (test_cuda_memory_matches_system_memory)
{
  std::mt19937 rng (387);
  const int sizes[][2] = { {320, 240}, {333, 119}, {1920, 1080} };
  for (GstVideoFormat fmt : kCudaMemoryFormats) {
    if (!cudaupload_takes (fmt)) {
      g_print ("cudaupload of this GStreamer does not take %s in CUDA memory: "
          "not tested there\n", format_name (fmt));
      continue;
    }
    for (const auto & sz : sizes) {
      /* GStreamer's CUDA copies (cudaupload, cudadownload) move
       * COMP_WIDTH * PSTRIDE bytes a row, which for 4:2:2 of odd width
       * leaves out the last group's second luma byte and its V: such
       * frames do not survive the trip whole, whatever the element does. */
      const int width = !rgb_layout (fmt) && sz[0] % 2 ? sz[0] + 1 : sz[0];
      const PackedFrame in = scene_frame (rng, fmt, width, sz[1], 6.0);
      for (const PlaneFilter & f : kPlaneFilters) {
        const std::string what = describe (f.launch (), in) + " in CUDA memory";
        const PackedFrame got = through_cuda_memory (f.launch (), in);
        assert_packed_equal (got, push_pull_packed (f.cpu_launch (), in), what +
            ", against the CPU backend");
        if (sz[0] * sz[1] <= 320 * 240)
          assert_packed_equal (got, rgb_layout (fmt) ? reference_rgb (in,
                  f.reference) : reference_packed_yuv (in, f.reference), what);
      }
      const std::string nlm = kNlmSets[0].launch ("cuda");
      assert_packed_equal (through_cuda_memory (nlm, in), push_pull_packed (nlm,
              in), describe (nlm, in) + " in CUDA memory, against system memory");
    }
  }
}
GST_END_TEST;
#endif
#endif

static Suite *
colourformats_suite (void)
{
  Suite *s = suite_create (TEST_SUITE_NAME ("colourformats"));
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_template_caps);
  tcase_add_test (tc, test_rgb_plane_filters);
  tcase_add_test (tc, test_packed_yuv_plane_filters);
  tcase_add_test (tc, test_rgb_grey_and_saturated);
  tcase_add_test (tc, test_nlm_rgb);
  tcase_add_test (tc, test_nlm_packed_yuv);
  tcase_add_test (tc, test_nlm_temporal_window);
  tcase_add_test (tc, test_alpha_padding_and_unused_luma_carried);
  tcase_add_test (tc, test_renegotiation_rgb_packed_planar);
  tcase_add_test (tc, test_xrgb_and_yvyu);
  tcase_add_test (tc, test_strides_from_video_meta);
  tcase_add_test (tc, test_frame_sequence);
  tcase_add_test (tc, test_videotestsrc_links_without_converter);
#if TEST_GPU
  tcase_add_test (tc, test_large_frames_match_cpu);
#ifdef HAVE_GST_CUDA
  tcase_add_test (tc, test_cudaupload_rgba_cudahisteq);
  tcase_add_test (tc, test_cuda_memory_matches_system_memory);
#endif
#endif
  return s;
}

int
main (int argc, char **argv)
{
  return run_suite (argc, argv, colourformats_suite,
      TEST_SUITE_NAME ("colourformats"));
}

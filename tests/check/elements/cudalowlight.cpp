/* cudalowlight, the bin of cudanlm auto-strength=true temporal-radius=1 !
 * cudaclahe ! [cudasharpen], against the same elements linked by hand, byte
 * for byte, on sequences of dark, noisy frames: gray and colour, with and
 * without sharpening, through a DISCONT buffer, a flush and new caps;
 * sharpening switched on and off while frames flow; its latency (cudanlm's
 * frame) and the frame it holds at EOS; its properties and what they set in
 * the stages, control bindings included. Built twice from this file:
 * `cudalowlight` on the CPU backend, `cudalowlight-gpu` on the CUDA backend
 * (both sides of every comparison on it), which adds frames in CUDA memory
 * through the whole bin and exits 77 (skipped) where no GPU is usable. */
#include "nlm_video.h"

#include <atomic>
#include <chrono>
#include <thread>

using namespace test;

/* The bin's defaults, written out: the chain it must equal. */
static const char *const kNlmStage = " auto-strength=true temporal-radius=1";
static const char *const kClaheStage = " clip-limit=4 temporal-smoothing=0.8";

/* Under the memory checkers the denoiser searches 7x7 offsets rather than
 * 21x21 (the same code, a ninth of the work, which is most of these tests'
 * time there): in the chain through its launch line, in the bin through
 * narrow_search on the harness. The bin's stage is set from here rather
 * than with `cudanlm::search-size` in the launch line, which GStreamer 1.22.0
 * parses with a reference to the child that it never drops (fixed in 1.22.4,
 * gstreamer#2560), and valgrind reports the stage as lost. */
static const char *
quick_search ()
{
  return quick ()? " search-size=7" : "";
}

static void
narrow_search_of (GstElement * bin)
{
  if (!quick ())
    return;
  gst_child_proxy_set (GST_CHILD_PROXY (bin), "cudanlm::search-size", 7, NULL);
  gint search = 0;
  gst_child_proxy_get (GST_CHILD_PROXY (bin), "cudanlm::search-size", &search,
      NULL);
  fail_unless_equals_int (search, 7);
}

static void
narrow_search (GstHarness * h)
{
  if (GstElement * bin = gst_harness_find_element (h, "cudalowlight")) {
    narrow_search_of (bin);
    gst_object_unref (bin);
  }
}

/* A harness of `launch`, with narrow_search applied. */
static GstHarness *
lowlight_harness (const std::string & launch)
{
  GstHarness *h = new_harness (launch);
  narrow_search (h);
  return h;
}

/* `seq` through `launch` (run_sequence) with narrow_search applied. */
static void
run_frames (const std::string & launch, const Sequence & seq,
    SequenceOutput & out)
{
  run_sequence (launch, seq, out, narrow_search);
}

static std::string
lowlight (const std::string & props = "")
{
  return on_backend ("cudalowlight", props);
}

/* The chain cudalowlight stands for, with its stages' settings (the
 * defaults, then `nlm` and `clahe`). */
static std::string
explicit_chain (bool sharpen, const std::string & nlm = "",
    const std::string & clahe = "")
{
  return on_backend ("cudanlm", kNlmStage + (quick_search () + nlm)) + " ! " +
      on_backend ("cudaclahe", kClaheStage + clahe) +
      (sharpen ? " ! " + on_backend ("cudasharpen") : std::string ());
}

/* A scene at night as a camera sees it: a dim wall (levels 14 to 26, a
 * gradient), a lit window (about 60) and a dark doorway (about 5), moved
 * `shift` pixels to the right, with Gaussian noise of `sigma` levels. */
static Image
dark_scene (std::mt19937 & rng, int w, int h, int shift, double sigma)
{
  std::normal_distribution<double> noise (0.0, sigma);
  Image img (w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int sx = ((x - shift) % w + w) % w;
      double v = 14 + (12.0 * y) / h;
      if (sx > w / 8 && sx < w / 3 && y > h / 6 && y < h / 2)
        v = 60;
      else if (sx > w / 2 && sx < w / 2 + w / 6 && y > h / 3)
        v = 5;
      img.at (x, y) = uint8_t (std::clamp (std::lround (v + noise (rng)), 0L,
              255L));
    }
  return img;
}

/* A frame of `fmt` with dark_scene as luma and, in colour formats, chroma
 * near grey with a tint, noisy with half the luma's sigma. */
static PlanarFrame
dark_frame (std::mt19937 & rng, GstVideoFormat fmt, int w, int h, int shift,
    double sigma)
{
  PlanarFrame f = frame_with_luma (rng, fmt, dark_scene (rng, w, h, shift,
          sigma));
  std::normal_distribution<double> noise (0.0, sigma / 2);
  for (guint comp = 1; comp < GST_VIDEO_INFO_N_COMPONENTS (&f.info); ++comp) {
    const cudafilters::ConstPlane c = component_of (f, comp);
    const int step = GST_VIDEO_INFO_COMP_PSTRIDE (&f.info, comp);
    for (int y = 0; y < c.height; ++y)
      for (int x = 0; x < c.width; ++x)
        const_cast<uint8_t *> (c.data)[size_t (y) * c.stride + size_t (x) *
            step] = uint8_t (std::clamp (std::lround ((comp == 1 ? 122 : 134) +
                    noise (rng)), 0L, 255L));
  }
  return f;
}

/* `count` frames of a slowly panning dark scene whose noise grows as it
 * goes (sigma 3 to 3 + count / 2), with one break (nlm_video.h) before
 * frame `break_at`; from there on w2 x h2 for Break::kCaps. */
static Sequence
dark_sequence (std::mt19937 & rng, GstVideoFormat fmt, int w, int h,
    int count, Break kind = Break::kNone, int break_at = 0, int w2 = 0,
    int h2 = 0)
{
  return sequence_of ([&rng](GstVideoFormat f, int fw, int fh, int i) {
        return dark_frame (rng, f, fw, fh, 2 * i, 3.0 + 0.5 * i);
      }, fmt, w, h, count, kind, break_at, w2, h2);
}

static bool
frames_equal (const PlanarFrame & a, const PlanarFrame & b)
{
  if (a.planes.size () != b.planes.size ())
    return false;
  for (size_t p = 0; p < a.planes.size (); ++p)
    if (a.planes[p].pixels != b.planes[p].pixels)
      return false;
  return true;
}

/* The same frames, byte for byte, with the same metadata, at the same
 * moments. */
static void
assert_same_outputs (const SequenceOutput & got, const SequenceOutput & want,
    const std::string & what)
{
  fail_unless_equals_int (got.frames.size (), want.frames.size ());
  fail_unless (got.after_push == want.after_push,
      "%s: frames left at other moments", what.c_str ());
  for (size_t k = 0; k < want.frames.size (); ++k) {
    GstBuffer *g = got.buffers[k], *w = want.buffers[k];
    fail_unless_equals_uint64 (GST_BUFFER_PTS (g), GST_BUFFER_PTS (w));
    fail_unless_equals_uint64 (GST_BUFFER_DURATION (g), GST_BUFFER_DURATION (w));
    fail_unless_equals_int (GST_BUFFER_FLAG_IS_SET (g, GST_BUFFER_FLAG_DISCONT),
        GST_BUFFER_FLAG_IS_SET (w, GST_BUFFER_FLAG_DISCONT));
    fail_unless_equals_int (want.frames[k].planes.size (),
        got.frames[k].planes.size ());
    for (size_t p = 0; p < want.frames[k].planes.size (); ++p)
      assert_images_equal (got.frames[k].planes[p], want.frames[k].planes[p],
          (what + ", frame " + std::to_string (k) + ", plane " +
              std::to_string (p)).c_str ());
  }
}

/* Frame n leaves when frame n + 1 arrives, the last at EOS; a flush drops
 * the one held. */
static void
assert_one_frame_held (const SequenceOutput & out, const Sequence & seq,
    const std::string & what)
{
  NlmSettings one;
  one.radius = 1;
  assert_sequence_shape (out, seq, one, what);
}

/* Dark sequences through cudalowlight and through the chain it stands for:
 * the same bytes, metadata and moments. Gray and colour (I420, NV12), with
 * and without sharpening, without a break and through a DISCONT buffer, a
 * flush and new caps. The stages all act: sharpened frames differ from
 * unsharpened ones, and every frame from its input. */
GST_START_TEST (test_matches_explicit_chain)
{
  std::mt19937 rng (6001);
  /* Under the memory checkers frames of a sixteenth of the size, and every
   * format and break at half of the pairs: the same cases. */
  const int count = quick ()? 6 : 9, scale = quick ()? 4 : 1;
  const GstVideoFormat formats[] = {GST_VIDEO_FORMAT_GRAY8,
    GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_NV12};
  for (int fi = 0; fi < 3; ++fi)
    for (Break kind : {Break::kNone, Break::kDiscont, Break::kFlush,
            Break::kCaps}) {
      const GstVideoFormat fmt = formats[fi];
      if (quick () && !in_grid_sample (fi, int (kind), 2))
        continue;
      const Sequence seq = dark_sequence (rng, fmt, 96 / scale, 64 / scale,
          count, kind, 4, 64 / scale, 48 / scale);
      std::vector<PlanarFrame> plain[2];
      for (bool sharpen : {false, true}) {
        const std::string bin = lowlight (sharpen ? " sharpen=true" : "");
        const std::string what = bin + " " + gst_video_format_to_string (fmt)
            + " break " + std::to_string (int (kind));
        SequenceOutput got, want;
        run_frames (bin, seq, got);
        run_frames (explicit_chain (sharpen), seq, want);
        assert_one_frame_held (got, seq, what);
        assert_same_outputs (got, want, what);
        plain[sharpen] = got.frames;
      }
      const auto expected = expected_outputs (seq, 1);
      for (size_t k = 0; k < expected.size (); ++k) {
        fail_if (frames_equal (plain[0][k], plain[1][k]),
            "frame %d: the same sharpened and not", int (k));
        fail_if (plain[0][k].planes[0].pixels ==
            seq.frames[expected[k].index].planes[0].pixels,
            "frame %d: luma unchanged", int (k));
      }
    }
}
GST_END_TEST;

/* The bin inside another bin made from a launch line (as GstHarness and
 * gst_parse_bin_from_description make them), which ghosts the unlinked pads
 * it finds, looking into child bins: the frames are the chain's, with
 * sharpening off, on, and switched on and off in between. */
GST_START_TEST (test_inside_a_parsed_bin)
{
  std::mt19937 rng (6009);
  const Sequence seq = dark_sequence (rng, GST_VIDEO_FORMAT_I420, 64, 48, 6);
  for (bool sharpen : {false, true}) {
    const std::string props = sharpen ? " sharpen=true" : "";
    SequenceOutput got, want;
    run_frames ("identity ! " + lowlight (props) + " ! identity", seq, got);
    run_frames (explicit_chain (sharpen), seq, want);
    assert_same_outputs (got, want, "identity ! cudalowlight" + props +
        " ! identity");
  }
  GstHarness *h = lowlight_harness (("identity ! " + lowlight () +
          " ! identity").c_str ());
  GstElement *bin = gst_harness_find_element (h, "cudalowlight");
  set_caps_of (h, seq.frames[0]);
  for (int i = 0; i < 6; ++i) {
    g_object_set (bin, "sharpen", i % 2 == 1, NULL);
    fail_unless_equals_int (gst_harness_push (h, sequence_buffer (seq.frames[i],
                i, i == 0)), GST_FLOW_OK);
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  fail_unless_equals_int (gst_harness_buffers_in_queue (h), 6);
  gst_object_unref (bin);
  gst_harness_teardown (h);
}
GST_END_TEST;

/* Luma levels of `img` in [x0, x1) x [y0, y1): the mean, and the noise as
 * the RMS difference of horizontal neighbours over sqrt 2 (the standard
 * deviation of white noise, blind to the wall's vertical gradient). */
static std::pair<double, double>
region_stats (const Image & img, int x0, int x1, int y0, int y1)
{
  double sum = 0, sq = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      sum += img.at (x, y);
      if (x + 1 < x1) {
        const double d = double (img.at (x + 1, y)) - img.at (x, y);
        sq += d * d;
      }
    }
  return {sum / ((x1 - x0) * (y1 - y0)),
      std::sqrt (sq / ((x1 - x0 - 1) * (y1 - y0)) / 2)};
}

/* What the bin is for, in pixel values: on a still dark scene with noise of
 * sigma 6 it brightens the frame (its mean up by 30% at least), leaves the
 * wall's noise below half of the input's and a quarter of what cudaclahe
 * alone makes of it, and makes the window stand out more from the wall. */
GST_START_TEST (test_brightens_and_denoises)
{
  /* Under the memory checkers a smaller scene and fewer frames, where the
   * same margins hold. */
  const int w = quick ()? 96 : 160, h = quick ()? 64 : 96, count = quick ()?
      4 : 6;
  std::mt19937 rng (6002);
  Sequence seq;
  for (int i = 0; i < count; ++i)
    seq.frames.push_back (dark_frame (rng, GST_VIDEO_FORMAT_GRAY8, w, h, 0,
            6.0));
  SequenceOutput bin, clahe;
  run_sequence (lowlight (), seq, bin);
  run_sequence (on_backend ("cudaclahe", kClaheStage), seq, clahe);
  fail_unless_equals_int (bin.frames.size (), count);

  const Image & in = seq.frames[count - 1].planes[0];
  const Image & ours = bin.frames[count - 1].planes[0];
  const Image & alone = clahe.frames[count - 1].planes[0];
  /* A patch of wall, clear of the window, the doorway and the borders. */
  const int x0 = w / 3 + 4, x1 = w / 2 - 4, y0 = h / 2 + 4, y1 = h - 8;
  const auto wall_in = region_stats (in, x0, x1, y0, y1);
  const auto wall_ours = region_stats (ours, x0, x1, y0, y1);
  const auto wall_alone = region_stats (alone, x0, x1, y0, y1);
  const auto frame_in = region_stats (in, 0, w, 0, h);
  const auto frame_ours = region_stats (ours, 0, w, 0, h);
  const auto window_ours = region_stats (ours, w / 8 + 3, w / 3 - 3, h / 6 + 3,
      h / 2 - 3);
  const auto window_in = region_stats (in, w / 8 + 3, w / 3 - 3, h / 6 + 3,
      h / 2 - 3);

  fail_unless (frame_ours.first > 1.3 * frame_in.first,
      "mean %.1f -> %.1f: not brightened", frame_in.first, frame_ours.first);
  fail_unless (wall_ours.second < 0.25 * wall_alone.second,
      "wall noise: %.2f in, %.2f through cudalowlight, %.2f through cudaclahe "
      "alone", wall_in.second, wall_ours.second, wall_alone.second);
  fail_unless (wall_ours.second < 0.5 * wall_in.second,
      "wall noise: %.2f in, %.2f out", wall_in.second, wall_ours.second);
  fail_unless (window_ours.first - wall_ours.first >
      1.2 * (window_in.first - wall_in.first),
      "window against wall: %.1f in, %.1f out",
      window_in.first - wall_in.first, window_ours.first - wall_ours.first);
}
GST_END_TEST;

/* The latency query reports cudanlm's one frame, from the caps' frame rate
 * or, without one, the frames' duration, with and without sharpening. */
GST_START_TEST (test_latency_is_one_frame)
{
  std::mt19937 rng (6003);
  for (bool sharpen : {false, true})
    for (int rate : {25, 0}) {
      GstHarness *h = lowlight_harness (lowlight (sharpen ?
              " sharpen=true" : "").c_str ());
      gst_harness_set_src_caps_str (h, (std::string ("video/x-raw,format=GRAY8,"
                  "width=64,height=48,framerate=") + (rate ? "25/1" :
                  "0/1")).c_str ());
      GstBuffer *buf = buffer_from_image (dark_scene (rng, 64, 48, 0, 4.0));
      GST_BUFFER_PTS (buf) = 0;
      GST_BUFFER_DURATION (buf) = 20 * GST_MSECOND;
      fail_unless_equals_int (gst_harness_push (h, buf), GST_FLOW_OK);
      const GstClockTime frame = rate ? GST_SECOND / rate : 20 * GST_MSECOND;
      fail_unless_equals_uint64 (gst_harness_query_latency (h), frame);
      gst_harness_teardown (h);
    }
}
GST_END_TEST;

/* The first frame is held until the second arrives; EOS lets the last one
 * go, as the chain does, and after a flush the frame held is gone. */
GST_START_TEST (test_eos_drains_held_frame)
{
  std::mt19937 rng (6004);
  for (bool sharpen : {false, true})
    for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12}) {
      const PlanarFrame f = dark_frame (rng, fmt, 80, 48, 0, 5.0);
      GstHarness *h = lowlight_harness (lowlight (sharpen ?
              " sharpen=true" : "").c_str ());
      GstHarness *chain = lowlight_harness (explicit_chain (sharpen));
      for (GstHarness *x : {h, chain}) {
        set_caps_of (x, f);
        fail_unless_equals_int (gst_harness_push (x, sequence_buffer (f, 0,
                    true)), GST_FLOW_OK);
        fail_unless_equals_int (gst_harness_buffers_in_queue (x), 0);
        fail_unless (gst_harness_push_event (x, gst_event_new_eos ()));
        fail_unless_equals_int (gst_harness_buffers_in_queue (x), 1);
      }
      const auto got = pull_all (h, f.info), want = pull_all (chain, f.info);
      for (size_t p = 0; p < want[0].planes.size (); ++p)
        assert_images_equal (got[0].planes[p], want[0].planes[p],
            "the frame held at EOS");
      fail_if (got[0].planes[0].pixels == f.planes[0].pixels);
      gst_harness_teardown (chain);
      gst_harness_teardown (h);

      /* A flush drops it. */
      h = lowlight_harness (lowlight ());
      set_caps_of (h, f);
      fail_unless_equals_int (gst_harness_push (h, sequence_buffer (f, 0,
                  true)), GST_FLOW_OK);
      fail_unless (gst_harness_push_event (h, gst_event_new_flush_start ()));
      fail_unless (gst_harness_push_event (h, gst_event_new_flush_stop (TRUE)));
      GstSegment segment;
      gst_segment_init (&segment, GST_FORMAT_TIME);
      fail_unless (gst_harness_push_event (h, gst_event_new_segment (&segment)));
      fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
      fail_unless_equals_int (gst_harness_buffers_in_queue (h), 0);
      gst_harness_teardown (h);
    }
}
GST_END_TEST;

/* The chain without sharpening on `seq` (no break), and each of its output
 * frames through cudasharpen alone: what the bin must give for each frame
 * with sharpening off, and on. */
struct PlainAndSharp {
  std::vector<PlanarFrame> plain, sharp;
};

static PlainAndSharp
plain_and_sharp (const Sequence & seq)
{
  PlainAndSharp r;
  SequenceOutput out;
  run_frames (explicit_chain (false), seq, out);
  r.plain = out.frames;
  for (const PlanarFrame & f : r.plain)
    r.sharp.push_back (push_pull_frame (on_backend ("cudasharpen").c_str (), f));
  return r;
}

/* `sharpen` changed between frames while playing: each frame that leaves
 * after a change is sharpened as the property now says (frame n leaves when
 * frame n + 1 is pushed, the last at EOS), the others as before; the
 * denoising and equalizing history goes on across the changes. */
GST_START_TEST (test_sharpen_switched_while_playing)
{
  std::mt19937 rng (6005);
  for (GstVideoFormat fmt : {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_I420}) {
    const Sequence seq = dark_sequence (rng, fmt, 72, 40, 10);
    const PlainAndSharp want = plain_and_sharp (seq);
    /* The value of `sharpen` set before pushing frame i (and before EOS,
     * the last). */
    const bool on[] = { false, false, true, true, false, true, false, false,
      true, true, false
    };
    GstHarness *h = lowlight_harness (lowlight ());
    GstElement *bin = gst_harness_find_element (h, "cudalowlight");
    set_caps_of (h, seq.frames[0]);
    std::vector<bool> sharpened;
    for (size_t i = 0; i <= seq.frames.size (); ++i) {
      g_object_set (bin, "sharpen", on[i], NULL);
      gboolean back;
      g_object_get (bin, "sharpen", &back, NULL);
      fail_unless_equals_int (back, on[i]);
      if (i < seq.frames.size ()) {
        fail_unless_equals_int (gst_harness_push (h, sequence_buffer
                (seq.frames[i], int (i), i == 0)), GST_FLOW_OK);
      } else {
        fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
      }
      if (i > 0)
        sharpened.push_back (on[i]);
    }
    const auto got = pull_all (h, seq.frames[0].info);
    fail_unless_equals_int (got.size (), seq.frames.size ());
    for (size_t k = 0; k < got.size (); ++k) {
      const PlanarFrame & expected = sharpened[k] ? want.sharp[k] :
          want.plain[k];
      for (size_t p = 0; p < expected.planes.size (); ++p)
        assert_images_equal (got[k].planes[p], expected.planes[p],
            (std::string (sharpened[k] ? "sharpened" : "not sharpened") +
                " frame " + std::to_string (k)).c_str ());
    }
    gst_object_unref (bin);
    gst_harness_teardown (h);
  }
}
GST_END_TEST;

/* `sharpen` switched on and off from another thread as fast as it can while
 * frames flow: no frame is lost or duplicated, each is exactly the frame
 * sharpened or not, and once the switching stops the last value holds. */
GST_START_TEST (test_sharpen_switched_from_another_thread)
{
  std::mt19937 rng (6006);
  const int count = quick ()? 12 : 30, scale = quick ()? 2 : 1;
  const Sequence seq = dark_sequence (rng, GST_VIDEO_FORMAT_GRAY8, 64 / scale,
      48 / scale, count);
  const PlainAndSharp want = plain_and_sharp (seq);
  GstHarness *h = lowlight_harness (lowlight ());
  GstElement *bin = gst_harness_find_element (h, "cudalowlight");
  set_caps_of (h, seq.frames[0]);

  std::atomic<bool> stop {false};
  std::atomic<int> switches {0};
  std::thread switcher ([&] {
        bool on = false;
        while (!stop.load ()) {
          on = !on;
          g_object_set (bin, "sharpen", on, NULL);
          switches++;
          std::this_thread::sleep_for (std::chrono::microseconds (200));
        }
        g_object_set (bin, "sharpen", TRUE, NULL);
      });
  /* No assertion while the switcher runs: a failure would leave it
   * running on a bin that is gone. */
  std::vector<GstFlowReturn> pushed;
  for (int i = 0; i < count - 2; ++i) {
    /* At least one switch between two frames, however fast they go. */
    for (const int seen = switches.load (); switches.load () == seen;)
      std::this_thread::yield ();
    pushed.push_back (gst_harness_push (h, sequence_buffer (seq.frames[i], i,
                i == 0)));
  }
  stop = true;
  switcher.join ();
  for (GstFlowReturn ret : pushed)
    fail_unless_equals_int (ret, GST_FLOW_OK);
  fail_unless (switches.load () > 1);
  for (int i = count - 2; i < count; ++i)
    fail_unless_equals_int (gst_harness_push (h, sequence_buffer (seq.frames[i],
                i, false)), GST_FLOW_OK);
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));

  const auto got = pull_all (h, seq.frames[0].info);
  fail_unless_equals_int (got.size (), count);
  for (int k = 0; k < count; ++k) {
    const bool sharp = frames_equal (got[k], want.sharp[k]);
    fail_unless (sharp || frames_equal (got[k], want.plain[k]),
        "frame %d is neither the sharpened nor the plain frame", k);
    /* The frames that left after the switching stopped. */
    if (k >= count - 3)
      fail_unless (sharp, "frame %d not sharpened", k);
  }
  gst_object_unref (bin);
  gst_harness_teardown (h);
}
GST_END_TEST;

#if !TEST_GPU
/* The same in a pipeline, whose source pushes from a thread of its own,
 * while other threads load every CPU: run after run, every frame reaches
 * the sink and the stream ends in EOS, never in an error. Frames were lost
 * here (one run in about seventy) while the stage was relinked from the
 * switching thread. */
GST_START_TEST (test_sharpen_switched_in_a_loaded_pipeline)
{
  /* Under the memory checkers, which run one thread at a time, a few runs
   * and no load: spinning threads would only take turns with the test. */
  const int runs = quick ()? 4 : 300, frames = 10;
  const int w = quick ()? 32 : 64, h = quick ()? 24 : 48;
  const unsigned loaders = quick ()? 0 : std::max (2u,
      std::thread::hardware_concurrency ());
  std::atomic<bool> loaded {true};
  std::vector<std::thread> load;
  for (unsigned i = 0; i < loaders; ++i)
    load.emplace_back ([&] {
          volatile unsigned x = 0;
          while (loaded.load (std::memory_order_relaxed))
            x = x + 1;
        });
  int bad = 0;
  std::string first_bad;
  for (int run = 0; run < runs; ++run) {
    const std::string launch = "videotestsrc num-buffers=" +
        std::to_string (frames) + " pattern=ball ! video/x-raw,format=GRAY8,"
        "width=" + std::to_string (w) + ",height=" + std::to_string (h) + " ! " +
        lowlight () + " name=l ! fakesink name=s "
        "sync=false signal-handoffs=true";
    GstElement *pipeline = gst_parse_launch (launch.c_str (), NULL);
    fail_unless (pipeline != NULL);
    share_test_context (pipeline, Context::kShared);
    GstElement *bin = gst_bin_get_by_name (GST_BIN (pipeline), "l");
    GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "s");
    /* The relink is under test, not the denoiser: a small search. */
    gst_child_proxy_set (GST_CHILD_PROXY (bin), "cudanlm::search-size", 7,
        NULL);
    std::atomic<int> arrived {0};
    g_signal_connect (sink, "handoff", G_CALLBACK (+[](GstElement *,
                GstBuffer *, GstPad *, gpointer n) {
              ++*static_cast<std::atomic<int> *> (n);
            }), &arrived);
    std::atomic<bool> stop {false};
    std::thread switcher ([&] {
          bool on = false;
          while (!stop.load ()) {
            on = !on;
            g_object_set (bin, "sharpen", on, NULL);
            std::this_thread::sleep_for (std::chrono::microseconds (200));
          }
        });
    GstBus *bus = gst_element_get_bus (pipeline);
    gst_element_set_state (pipeline, GST_STATE_PLAYING);
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        (GstMessageType) (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    stop = true;
    switcher.join ();
    const bool eos = m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS;
    if (!eos || arrived.load () != frames) {
      if (bad++ == 0)
        first_bad = "run " + std::to_string (run) + ": " + (m ?
            GST_MESSAGE_TYPE_NAME (m) : "no end") + " after " +
            std::to_string (arrived.load ()) + " frames";
    }
    if (m)
      gst_message_unref (m);
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (sink);
    gst_object_unref (bin);
    gst_object_unref (pipeline);
    release_bus (bus);
  }
  loaded = false;
  for (std::thread & t : load)
    t.join ();
  fail_unless (bad == 0, "%d of %d runs went wrong; the first, %s", bad, runs,
      first_bad.c_str ());
}
GST_END_TEST;
#endif

/* ------------------------------------------------- control bindings */

/* A control binding that sets its property to `before` until `at` (stream
 * time) and to `after` from then on. GStreamer's own bindings live in
 * libgstcontroller, which the tests do not link. */
struct StepBinding {
  GstControlBinding parent;
  GstClockTime at;
  double before, after;
};

struct StepBindingClass {
  GstControlBindingClass parent_class;
};

G_DEFINE_TYPE (StepBinding, step_binding, GST_TYPE_CONTROL_BINDING);

static gboolean
step_binding_sync_values (GstControlBinding * binding, GstObject * object,
    GstClockTime timestamp, GstClockTime)
{
  const StepBinding *self = reinterpret_cast<StepBinding *> (binding);
  const double x = timestamp < self->at ? self->before : self->after;
  GValue v = G_VALUE_INIT;
  g_value_init (&v, binding->pspec->value_type);
  if (G_VALUE_HOLDS_FLOAT (&v))
    g_value_set_float (&v, float (x));
  else
    g_value_set_double (&v, x);
  g_object_set_property (G_OBJECT (object), binding->name, &v);
  g_value_unset (&v);
  return TRUE;
}

static void
step_binding_class_init (StepBindingClass * klass)
{
  GST_CONTROL_BINDING_CLASS (klass)->sync_values = step_binding_sync_values;
}

static void
step_binding_init (StepBinding *)
{
}

/* Binds `property` of `object` to a step at frame `frame` (30 frames a
 * second, as sequence_buffer stamps them). */
static void
bind_step (GstElement * object, const char *property, int frame,
    double before, double after)
{
  GstControlBinding *b = GST_CONTROL_BINDING (g_object_new
      (step_binding_get_type (), "object", object, "name", property, NULL));
  fail_unless (b->pspec != NULL, "%s is not controllable", property);
  StepBinding *s = reinterpret_cast<StepBinding *> (b);
  s->at = frame * GST_SECOND / 30;
  s->before = before;
  s->after = after;
  fail_unless (gst_object_add_control_binding (GST_OBJECT (object), b));
}

static void
run_bound_sequence (const std::string & launch, const Sequence & seq,
    const std::function<void (GstHarness *)> & bind, SequenceOutput & out)
{
  GstHarness *h = lowlight_harness (launch);
  bind (h);
  set_caps_of (h, seq.frames[0]);
  for (size_t i = 0; i < seq.frames.size (); ++i) {
    fail_unless_equals_int (gst_harness_push (h, sequence_buffer (seq.frames[i],
                int (i), i == 0)), GST_FLOW_OK);
    out.after_push.push_back (int (out.frames.size () +
            gst_harness_buffers_in_queue (h)));
    auto now = pull_all (h, seq.frames[0].info, &out.buffers);
    out.frames.insert (out.frames.end (), now.begin (), now.end ());
  }
  fail_unless (gst_harness_push_event (h, gst_event_new_eos ()));
  auto last = pull_all (h, seq.frames[0].info, &out.buffers);
  out.frames.insert (out.frames.end (), last.begin (), last.end ());
  gst_harness_teardown (h);
}

/* denoise-strength, clip-limit and temporal-smoothing, each bound to a
 * step on the bin, act as the same step bound to cudanlm's
 * auto-strength-scale or cudaclahe's property: each stage takes the value
 * at the stream time of the frame it filters. Each step changes the output
 * from the frame it reaches on, also cudanlm's, which denoises frame n once
 * frame n + 1 has arrived, with the strength for frame n's time. Frames of
 * 160x96 in NV12 (20x12-pixel tiles), where
 * clip limits 4 and 1.5 clip at different counts (OpenCV's clip is a whole
 * count of pixels, at least 1), or under the memory checkers of 64x48 in
 * gray (8x6), where 4 and 12 do. */
GST_START_TEST (test_control_bindings_reach_the_stages)
{
  struct Step {
    const char *property;
    const char *stage;
    const char *stage_property;
    int frame;
    double before, after;
    int first_changed;
  };
  const Step steps[] = {
    {"denoise-strength", "cudanlm", "auto-strength-scale", 2, 1.0, 3.0, 2},
    {"clip-limit", "cudaclahe", "clip-limit", 4, 4.0, quick ()? 12.0 : 1.5, 4},
    {"temporal-smoothing", "cudaclahe", "temporal-smoothing", 5, 0.8, 0.2, 5},
  };
  std::mt19937 rng (6007);
  const int count = 8;
  const Sequence seq = quick ()? dark_sequence (rng, GST_VIDEO_FORMAT_GRAY8,
      64, 48, count) : dark_sequence (rng, GST_VIDEO_FORMAT_NV12, 160, 96,
      count);
  SequenceOutput unbound;
  run_bound_sequence (lowlight (), seq, [](GstHarness *) {}, unbound);
  for (const Step & step : steps) {
    SequenceOutput on_bin, on_stage;
    run_bound_sequence (lowlight (), seq, [&](GstHarness * h) {
          GstElement *bin = gst_harness_find_element (h, "cudalowlight");
          bind_step (bin, step.property, step.frame, step.before, step.after);
          gst_object_unref (bin);
        }, on_bin);
    run_bound_sequence (explicit_chain (false), seq, [&](GstHarness * h) {
          GstElement *stage = gst_harness_find_element (h, step.stage);
          bind_step (stage, step.stage_property, step.frame, step.before,
              step.after);
          gst_object_unref (stage);
        }, on_stage);
    assert_same_outputs (on_bin, on_stage, step.property);
    for (int k = 0; k < count; ++k) {
      const bool same = frames_equal (on_bin.frames[k], unbound.frames[k]);
      fail_unless (same == (k < step.first_changed), "%s: frame %d %s the "
          "unbound bin's", step.property, k, same ? "equals" : "differs from");
    }
  }
}
GST_END_TEST;

/* A strength given to the denoiser through the bin is used: with
 * cudanlm::strength set on the bin, the frames are those of the chain with
 * that strength and differ from the default bin's; denoise-strength set
 * afterwards brings the automatic strength back, and the default frames
 * with it. */
GST_START_TEST (test_given_strength_is_used)
{
  std::mt19937 rng (6010);
  /* Under the memory checkers a quarter of the pixels. */
  const int scale = quick ()? 2 : 1;
  const Sequence seq = dark_sequence (rng, GST_VIDEO_FORMAT_GRAY8, 64 / scale,
      48 / scale, 4);
  auto with_stage = [](const char *property, float value) {
    return [property, value](GstHarness * h) {
      narrow_search (h);
      GstElement *bin = gst_harness_find_element (h, "cudalowlight");
      gst_child_proxy_set (GST_CHILD_PROXY (bin), property, value, NULL);
      gst_object_unref (bin);
    };
  };
  SequenceOutput plain, given, chain, restored;
  run_frames (lowlight (), seq, plain);
  run_sequence (lowlight (), seq, given, with_stage ("cudanlm::strength",
          40.f));
  run_frames (explicit_chain (false, " strength=40"), seq, chain);
  assert_same_outputs (given, chain, "cudanlm::strength=40");
  for (size_t k = 0; k < plain.frames.size (); ++k)
    fail_if (frames_equal (given.frames[k], plain.frames[k]),
        "frame %d: cudanlm::strength=40 changed nothing", int (k));

  run_sequence (lowlight (), seq, restored, [](GstHarness * h) {
        narrow_search (h);
        GstElement *bin = gst_harness_find_element (h, "cudalowlight");
        gst_child_proxy_set (GST_CHILD_PROXY (bin), "cudanlm::strength", 40.f,
            NULL);
        g_object_set (bin, "denoise-strength", 1.f, NULL);
        gst_object_unref (bin);
      });
  assert_same_outputs (restored, plain, "denoise-strength after strength");
}
GST_END_TEST;

#if !TEST_GPU
/* ------------------------------------------------- properties */

/* A stage by name, as gst-launch's `cudasharpen::amount` finds it (also
 * cudasharpen while it is out of the bin). */
static GstElement *
stage_of (GstElement * bin, const char *name)
{
  GObject *e = gst_child_proxy_get_child_by_name (GST_CHILD_PROXY (bin), name);
  fail_unless (e != NULL, "no %s in the bin", name);
  return GST_ELEMENT (e);
}

/* The value of `property`'s enum nick `nick`. */
static gint
enum_value (GstElement * e, const char *property, const char *nick)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
      property);
  GEnumClass *klass = G_ENUM_CLASS (g_type_class_ref (pspec->value_type));
  const gint value = g_enum_get_value_by_nick (klass, nick)->value;
  g_type_class_unref (klass);
  return value;
}

static void
assert_bin_properties (GstElement * e, gfloat strength, gdouble clip,
    gdouble smoothing, gboolean sharpen)
{
  gfloat got_strength = 0;
  gdouble got_clip = -1, got_smoothing = -1;
  gboolean got_sharpen = !sharpen;
  g_object_get (e, "denoise-strength", &got_strength, "clip-limit", &got_clip,
      "temporal-smoothing", &got_smoothing, "sharpen", &got_sharpen, NULL);
  fail_unless_equals_float (got_strength, strength);
  fail_unless (got_clip == clip, "clip-limit %f, expected %f", got_clip, clip);
  fail_unless (got_smoothing == smoothing, "temporal-smoothing %f, expected %f",
      got_smoothing, smoothing);
  fail_unless_equals_int (got_sharpen, sharpen);
}

/* Defaults, documented and as the stages have them; what the stages are
 * set to; flags; class; pads. No backend is involved: the cpu build checks
 * them. */
GST_START_TEST (test_properties_and_defaults)
{
  GstElement *e = gst_element_factory_make ("cudalowlight", NULL);
  assert_bin_properties (e, 1.f, 4.0, 0.8, FALSE);
  GObjectClass *klass = G_OBJECT_GET_CLASS (e);
  const struct {
    const char *name;
    double value;
  } defaults[] = { {"denoise-strength", 1.0}, {"clip-limit", 4.0},
    {"temporal-smoothing", 0.8}
  };
  for (const auto & d : defaults) {
    GParamSpec *pspec = g_object_class_find_property (klass, d.name);
    GValue v = G_VALUE_INIT;
    g_value_init (&v, G_TYPE_DOUBLE);
    g_value_transform (g_param_spec_get_default_value (pspec), &v);
    fail_unless (std::abs (g_value_get_double (&v) - d.value) < 1e-6,
        "%s: default %f", d.name, g_value_get_double (&v));
    g_value_unset (&v);
  }
  GParamSpecFloat *strength = G_PARAM_SPEC_FLOAT (g_object_class_find_property
      (klass, "denoise-strength"));
  fail_unless_equals_float (strength->minimum, 0.1f);
  fail_unless_equals_float (strength->maximum, 10.f);
  GParamSpecDouble *clip = G_PARAM_SPEC_DOUBLE (g_object_class_find_property
      (klass, "clip-limit"));
  fail_unless (clip->minimum == 0.0 && clip->maximum == 256.0);
  assert_live_properties (e, {"denoise-strength", "clip-limit",
          "temporal-smoothing"}, true);
  assert_live_properties (e, {"sharpen"}, false);
  for (const char *name : {"backend", "cuda-device-id"}) {
    GParamSpec *pspec = g_object_class_find_property (klass, name);
    fail_unless (pspec != NULL && g_param_spec_get_blurb (pspec) != NULL);
    fail_unless (pspec->flags & GST_PARAM_MUTABLE_READY, "%s", name);
    fail_if (pspec->flags & GST_PARAM_MUTABLE_PLAYING, "%s", name);
  }
  assert_hardware_filter_klass (e);

  /* The stages as the bin sets them up. */
  GstElement *nlm = stage_of (e, "cudanlm");
  GstElement *clahe = stage_of (e, "cudaclahe");
  GstElement *sharpen = stage_of (e, "cudasharpen");
  gboolean auto_strength = FALSE;
  gint radius = 0;
  gfloat scale = 0;
  g_object_get (nlm, "auto-strength", &auto_strength, "temporal-radius",
      &radius, "auto-strength-scale", &scale, NULL);
  fail_unless (auto_strength);
  fail_unless_equals_int (radius, 1);
  fail_unless_equals_float (scale, 1.f);
  gdouble clip_limit = 0, smoothing = 0, amount = 0;
  g_object_get (clahe, "clip-limit", &clip_limit, "temporal-smoothing",
      &smoothing, NULL);
  fail_unless (clip_limit == 4.0 && smoothing == 0.8);
  g_object_get (sharpen, "amount", &amount, NULL);
  fail_unless (amount == 1.0);

  /* Off, cudasharpen is out of the chain and of the bin, which holds no
   * unlinked pad: the src pad is cudaclahe's. */
  fail_unless (GST_OBJECT_PARENT (sharpen) == NULL);
  fail_unless (gst_bin_find_unlinked_pad (GST_BIN (e), GST_PAD_SINK) == NULL);
  fail_unless (gst_bin_find_unlinked_pad (GST_BIN (e), GST_PAD_SRC) == NULL);
  GstPad *src = gst_element_get_static_pad (e, "src");
  GstPad *target = gst_ghost_pad_get_target (GST_GHOST_PAD (src));
  fail_unless (GST_PAD_PARENT (target) == clahe);
  gst_object_unref (target);
  GstPad *sink = gst_element_get_static_pad (e, "sink");
  target = gst_ghost_pad_get_target (GST_GHOST_PAD (sink));
  fail_unless (GST_PAD_PARENT (target) == nlm);
  gst_object_unref (target);

  /* The pads take what every stage takes. */
  for (const char *pad : {"sink", "src"}) {
    GstCaps *ours = gst_pad_template_get_caps (gst_element_class_get_pad_template
        (GST_ELEMENT_GET_CLASS (e), pad));
    for (GstElement *stage : {nlm, clahe, sharpen}) {
      GstCaps *theirs = gst_pad_template_get_caps
          (gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (stage),
              pad));
      fail_unless (gst_caps_is_subset (ours, theirs), "%s: %s", pad,
          GST_OBJECT_NAME (stage));
      gst_caps_unref (theirs);
    }
    gst_caps_unref (ours);
  }

  /* The stages' own properties are the bin's children's. */
  GObject *child = NULL;
  GParamSpec *pspec = NULL;
  fail_unless (gst_child_proxy_lookup (GST_CHILD_PROXY (e),
          "cudasharpen::threshold", &child, &pspec));
  fail_unless (child == G_OBJECT (sharpen));
  g_object_unref (child);
  g_param_spec_unref (pspec);

  gst_object_unref (sink);
  gst_object_unref (src);
  gst_object_unref (sharpen);
  gst_object_unref (clahe);
  gst_object_unref (nlm);
  gst_object_unref (e);
}
GST_END_TEST;

/* Setting a property of the bin sets the stage's, and the bin reads the
 * stage's back; `backend` and `cuda-device-id` set all three; `sharpen`
 * relinks the src pad; out-of-range values are refused with a warning and
 * the previous values stay. */
GST_START_TEST (test_properties_proxied_and_refused)
{
  GstElement *e = gst_element_factory_make ("cudalowlight", NULL);
  GstElement *nlm = stage_of (e, "cudanlm");
  GstElement *clahe = stage_of (e, "cudaclahe");
  GstElement *sharpen = stage_of (e, "cudasharpen");

  g_object_set (e, "denoise-strength", 2.5f, "clip-limit", 1.75,
      "temporal-smoothing", 0.25, NULL);
  gfloat scale = 0;
  gdouble clip = 0, smoothing = 0;
  g_object_get (nlm, "auto-strength-scale", &scale, NULL);
  g_object_get (clahe, "clip-limit", &clip, "temporal-smoothing", &smoothing,
      NULL);
  fail_unless_equals_float (scale, 2.5f);
  fail_unless (clip == 1.75 && smoothing == 0.25);

  g_object_set (nlm, "auto-strength-scale", 0.5f, NULL);
  g_object_set (clahe, "clip-limit", 6.0, "temporal-smoothing", 0.5, NULL);
  assert_bin_properties (e, 0.5f, 6.0, 0.5, FALSE);

  gst_util_set_object_arg (G_OBJECT (e), "backend", "cpu");
  g_object_set (e, "cuda-device-id", 1, NULL);
  for (GstElement *stage : {nlm, clahe, sharpen}) {
    gint backend = -1, device = -2;
    g_object_get (stage, "backend", &backend, "cuda-device-id", &device, NULL);
    fail_unless_equals_int (backend, enum_value (e, "backend", "cpu"));
    fail_unless_equals_int (device, 1);
  }
  gint backend = -1, device = -2;
  g_object_get (e, "backend", &backend, "cuda-device-id", &device, NULL);
  fail_unless_equals_int (backend, enum_value (e, "backend", "cpu"));
  fail_unless_equals_int (device, 1);

  /* sharpen relinks the src pad, in the NULL state at once, and takes
   * cudasharpen into the bin and out of it. */
  GstPad *src = gst_element_get_static_pad (e, "src");
  for (gboolean on : {gboolean (TRUE), gboolean (FALSE), gboolean (TRUE)}) {
    g_object_set (e, "sharpen", on, NULL);
    GstPad *target = gst_ghost_pad_get_target (GST_GHOST_PAD (src));
    fail_unless (GST_PAD_PARENT (target) == (on ? sharpen : clahe));
    gst_object_unref (target);
    GstPad *clahe_src = gst_element_get_static_pad (clahe, "src");
    GstPad *peer = gst_pad_get_peer (clahe_src);
    fail_unless (peer != NULL);
    fail_unless ((GST_PAD_PARENT (peer) == sharpen) == bool (on));
    gst_object_unref (peer);
    gst_object_unref (clahe_src);
    fail_unless ((GST_OBJECT_PARENT (sharpen) == GST_OBJECT (e)) == bool (on));
    fail_unless (gst_bin_find_unlinked_pad (GST_BIN (e), GST_PAD_SINK) == NULL);
    fail_unless (gst_bin_find_unlinked_pad (GST_BIN (e), GST_PAD_SRC) == NULL);
  }
  gst_object_unref (src);

  ASSERT_WARNING (g_object_set (e, "denoise-strength", 0.05f, NULL));
  ASSERT_WARNING (g_object_set (e, "denoise-strength", 11.f, NULL));
  ASSERT_WARNING (g_object_set (e, "clip-limit", -1.0, NULL));
  ASSERT_WARNING (g_object_set (e, "clip-limit", 300.0, NULL));
  ASSERT_WARNING (g_object_set (e, "clip-limit", (double) NAN, NULL));
  ASSERT_WARNING (g_object_set (e, "temporal-smoothing", 1.5, NULL));
  ASSERT_WARNING (g_object_set (e, "temporal-smoothing", -0.1, NULL));
  ASSERT_WARNING (g_object_set (e, "cuda-device-id", -2, NULL));
  assert_bin_properties (e, 0.5f, 6.0, 0.5, TRUE);

  gst_object_unref (sharpen);
  gst_object_unref (clahe);
  gst_object_unref (nlm);
  gst_object_unref (e);
}
GST_END_TEST;

/* With a stage's element missing (an incomplete install) the bin is still
 * made, shows its defaults, refuses settings with a warning, and fails to
 * leave NULL with an error that names the stage, instead of aborting the
 * application. */
GST_START_TEST (test_missing_stage_is_an_error)
{
  /* The plugin loaded first: loading it registers its elements again. */
  gst_object_unref (gst_element_factory_make ("cudalowlight", NULL));
  GstRegistry *registry = gst_registry_get ();
  GstPluginFeature *clahe = gst_registry_lookup_feature (registry,
      "cudaclahe");
  fail_unless (clahe != NULL);
  gst_registry_remove_feature (registry, clahe);
  GstElementFactory *gone = gst_element_factory_find ("cudaclahe");
  fail_unless (gone == NULL, "cudaclahe still found");

  GstElement *e = gst_element_factory_make ("cudalowlight", NULL);
  fail_unless (e != NULL);
  gdouble clip = 0;
  g_object_get (e, "clip-limit", &clip, NULL);
  fail_unless (clip == 4.0);
  ASSERT_WARNING (g_object_set (e, "clip-limit", 2.0, NULL));
  g_object_set (e, "sharpen", TRUE, NULL);
  GstBus *bus = gst_bus_new ();
  gst_element_set_bus (e, bus);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_FAILURE);
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (m != NULL);
  GError *err = NULL;
  gst_message_parse_error (m, &err, NULL);
  fail_unless (g_strrstr (err->message, "no cudaclahe element") != NULL, "%s",
      err->message);
  g_error_free (err);
  gst_message_unref (m);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_object_unref (e);
  release_bus (bus);

  gst_registry_add_feature (registry, clahe);
  gst_object_unref (clahe);
  e = gst_element_factory_make ("cudalowlight", NULL);
  fail_unless_equals_int (gst_element_set_state (e, GST_STATE_READY),
      GST_STATE_CHANGE_SUCCESS);
  gst_element_set_state (e, GST_STATE_NULL);
  gst_object_unref (e);
}
GST_END_TEST;

/* The bin in a pipeline that goes to PLAYING and back to NULL with
 * sharpening off, on, and switched in between: every stage ends in NULL. */
GST_START_TEST (test_state_changes_leave_no_stage_running)
{
  for (int round = 0; round < 3; ++round) {
    GstElement *pipeline = gst_parse_launch ("videotestsrc num-buffers=4 ! "
        "video/x-raw,format=GRAY8,width=48,height=32 ! cudalowlight "
        "name=l backend=cpu ! fakesink", NULL);
    fail_unless (pipeline != NULL);
    GstElement *l = gst_bin_get_by_name (GST_BIN (pipeline), "l");
    g_object_set (l, "sharpen", round == 1, NULL);
    fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    if (round == 2)
      g_object_set (l, "sharpen", TRUE, NULL);
    GstBus *bus = gst_element_get_bus (pipeline);
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
        (GstMessageType) (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    fail_unless (msg != NULL && GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS);
    gst_message_unref (msg);
    fail_unless (gst_element_set_state (pipeline, GST_STATE_NULL) ==
        GST_STATE_CHANGE_SUCCESS);
    for (const char *name : {"cudanlm", "cudaclahe", "cudasharpen"}) {
      GstElement *stage = stage_of (l, name);
      fail_unless_equals_int (GST_STATE (stage), GST_STATE_NULL);
      gst_object_unref (stage);
    }
    gst_object_unref (bus);
    gst_object_unref (l);
    gst_object_unref (pipeline);
  }
}
GST_END_TEST;
#endif

#if TEST_GPU && defined (HAVE_GST_CUDA)
/* ------------------------------------------------- CUDA memory */

static bool
caps_in_cuda_memory (GstElement * stage, const char *pad_name)
{
  GstPad *pad = gst_element_get_static_pad (stage, pad_name);
  GstCaps *caps = gst_pad_get_current_caps (pad);
  const bool cuda = caps && gst_caps_features_contains (gst_caps_get_features
      (caps, 0), "memory:CUDAMemory");
  if (caps)
    gst_caps_unref (caps);
  gst_object_unref (pad);
  return cuda;
}

/* cudaupload ! cudalowlight ! cudadownload: every stage takes and gives
 * CUDA memory (nothing converts between them), and the frames are those
 * of the bin in system memory, byte for byte, through a DISCONT buffer and
 * a flush. */
GST_START_TEST (test_frames_stay_in_cuda_memory)
{
  std::mt19937 rng (6008);
  for (bool sharpen : {false, true})
    for (Break kind : {Break::kDiscont, Break::kFlush}) {
      const Sequence seq = dark_sequence (rng, GST_VIDEO_FORMAT_NV12, 160, 96,
          8, kind, 4);
      const std::string bin = lowlight (sharpen ? " sharpen=true" : "");
      const std::string on_device = "cudaupload ! " + bin + " ! cudadownload";

      GstHarness *h = lowlight_harness (on_device);
      set_caps_of (h, seq.frames[0]);
      gst_harness_set_sink_caps_str (h, video_caps (GST_VIDEO_FORMAT_NV12, 160,
              96).c_str ());
      for (int i = 0; i < 2; ++i)
        fail_unless_equals_int (gst_harness_push (h, sequence_buffer
                (seq.frames[i], i, i == 0)), GST_FLOW_OK);
      fail_unless_equals_int (gst_harness_buffers_in_queue (h), 1);
      GstElement *l = gst_harness_find_element (h, "cudalowlight");
      fail_unless (caps_in_cuda_memory (l, "sink"));
      fail_unless (caps_in_cuda_memory (l, "src"));
      std::vector<std::pair<const char *, const char *>> pads = {
        {"cudanlm", "src"}, {"cudaclahe", "sink"}, {"cudaclahe", "src"}};
      if (sharpen)
        pads.push_back ({"cudasharpen", "src"});
      for (const auto & [name, pad] : pads) {
        GstElement *stage = gst_bin_get_by_name (GST_BIN (l), name);
        fail_unless (caps_in_cuda_memory (stage, pad), "%s:%s not in CUDA "
            "memory", name, pad);
        gst_object_unref (stage);
      }
      gst_object_unref (l);
      gst_harness_teardown (h);

      SequenceOutput device, host;
      run_frames (on_device, seq, device);
      run_frames (bin, seq, host);
      assert_same_outputs (device, host, on_device);
    }
}
GST_END_TEST;
#endif

static Suite *
cudalowlight_suite (void)
{
  Suite *s = suite_create (TEST_SUITE_NAME ("cudalowlight"));
  TCase *tc = tcase_create ("general");
  tcase_set_timeout (tc, 600);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_matches_explicit_chain);
  tcase_add_test (tc, test_inside_a_parsed_bin);
  tcase_add_test (tc, test_brightens_and_denoises);
  tcase_add_test (tc, test_latency_is_one_frame);
  tcase_add_test (tc, test_eos_drains_held_frame);
  tcase_add_test (tc, test_sharpen_switched_while_playing);
  tcase_add_test (tc, test_sharpen_switched_from_another_thread);
#if !TEST_GPU
  tcase_add_test (tc, test_sharpen_switched_in_a_loaded_pipeline);
#endif
  tcase_add_test (tc, test_control_bindings_reach_the_stages);
  tcase_add_test (tc, test_given_strength_is_used);
#if !TEST_GPU
  tcase_add_test (tc, test_properties_and_defaults);
  tcase_add_test (tc, test_properties_proxied_and_refused);
  tcase_add_test (tc, test_state_changes_leave_no_stage_running);
  tcase_add_test (tc, test_missing_stage_is_an_error);
#endif
#if TEST_GPU && defined (HAVE_GST_CUDA)
  tcase_add_test (tc, test_frames_stay_in_cuda_memory);
#endif
  return s;
}

int
main (int argc, char **argv)
{
  return run_suite (argc, argv, cudalowlight_suite,
      TEST_SUITE_NAME ("cudalowlight"));
}

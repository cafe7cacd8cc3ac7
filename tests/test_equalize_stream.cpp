/* What the equalizing elements do across frames: temporal smoothing (exact
 * against the arithmetic docs/cudahisteq.md and docs/cudaclahe.md define,
 * restarts on DISCONT, new segments, flushes and new caps, live changes),
 * and the statistics messages every element posts on the bus. Built twice:
 * `equalize-stream` on the CPU backend (everywhere) and
 * `equalize-stream-gpu` on the CUDA backend, adding frames in CUDA memory;
 * the latter exits 77 (skipped) without a GPU. */
#include "equalize_reference.h"

using namespace test;

/* An element and its independent model: the single-frame reference when
 * smoothing is 0, the smoothed one otherwise. */
struct Equalizer {
  const char *factory;
  const char *props;

  std::string launch (double smoothing) const {
    return std::string (factory) + " backend=" + kBackend + props +
        " temporal-smoothing=" + std::to_string (smoothing);
  }
  bool is_clahe () const { return g_str_equal (factory, "cudaclahe"); }
  Image single (const Image & in) const {
    return is_clahe ()? reference_clahe (in, 3.0, 5, 3) : reference_equalize (in);
  }
};

static const Equalizer kEqualizers[] = {
  {"cudahisteq", ""},
  {"cudaclahe", " clip-limit=3 tiles-x=5 tiles-y=3"},
};

/* The model of `e` with smoothing; restart() starts a new history. */
class Model {
public:
  Model (const Equalizer & e, double smoothing) : e_ (e), smoothing_ (smoothing) {
    restart ();
  }
  void restart () {
    histeq_ = SmoothedEqualizer (smoothing_);
    clahe_ = SmoothedClahe (3.0, 5, 3, smoothing_);
  }
  Image operator() (const Image & in) {
    return e_.is_clahe ()? clahe_ (in) : histeq_ (in);
  }

private:
  const Equalizer & e_;
  double smoothing_;
  SmoothedEqualizer histeq_ { 0.0 };
  SmoothedClahe clahe_ { 3.0, 5, 3, 0.0 };
};

/* A frame of the photo-like test image whose brightness and contrast change
 * with i, and whose bright disc comes and goes (a flash). */
static Image
scene (std::mt19937 & rng, int w, int h, int i)
{
  Image img = natural_image (w, h);
  std::normal_distribution<double> noise (0.0, 3.0);
  const bool flash = (i / 3) % 2 == 1;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      double v = img.at (x, y) * (0.6 + 0.05 * (i % 5)) + noise (rng);
      const int dx = x - w / 4, dy = y - h / 2;
      if (flash && dx * dx + dy * dy < w * h / 40)
        v = 250;
      img.at (x, y) = uint8_t (std::clamp (v, 0.0, 255.0));
    }
  return img;
}

static GstBuffer *
timed_buffer (const Image & img, int i, bool discont = false)
{
  GstBuffer *buf = buffer_from_image (img);
  GST_BUFFER_PTS (buf) = gst_util_uint64_scale (i, GST_SECOND, 30);
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  if (discont)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
  return buf;
}

static Image
push_timed (GstHarness * h, const Image & img, int i, bool discont = false)
{
  GstBuffer *out = gst_harness_push_and_pull (h, timed_buffer (img, i, discont));
  fail_unless (out != NULL, "no output for frame %d", i);
  Image result = image_from_buffer (out, img.width, img.height);
  gst_buffer_unref (out);
  return result;
}

/* --------------------------------------------------- temporal smoothing */

/* Frame by frame equal to the model, for several weights, through flashes
 * and changes of brightness; a DISCONT buffer restarts both. */
GST_START_TEST (test_smoothing_matches_model)
{
  const int w = 203, h = 117;
  for (const Equalizer & e : kEqualizers)
    for (double smoothing : {0.5, 0.9, 1.0}) {
      std::mt19937 rng (7);
      Model model (e, smoothing);
      GstHarness *hh = harness_for (e.launch (smoothing).c_str (), w, h);
      for (int i = 0; i < 16; ++i) {
        const Image in = scene (rng, w, h, i);
        const bool discont = i == 9;
        if (discont)
          model.restart ();
        const std::string what = std::string (e.factory) + " smoothing " +
            std::to_string (smoothing) + " frame " + std::to_string (i);
        assert_images_equal (push_timed (hh, in, i, discont), model (in),
            what.c_str ());
      }
      gst_harness_teardown (hh);
    }
}
GST_END_TEST;

/* A still scene equalizes exactly as every frame on its own would: the
 * blended histogram of identical frames is the frame's histogram. */
GST_START_TEST (test_still_frames_equalize_fully)
{
  std::mt19937 rng (8);
  const Image still = scene (rng, 160, 90, 3);
  for (const Equalizer & e : kEqualizers) {
    GstHarness *hh = harness_for (e.launch (0.9).c_str (), 160, 90);
    for (int i = 0; i < 20; ++i)
      assert_images_equal (push_timed (hh, still, i), e.single (still),
          e.factory);
    gst_harness_teardown (hh);
  }
}
GST_END_TEST;

/* The point of smoothing: when a flash comes and goes, the mean level
 * around it jumps much less from frame to frame. (CLAHE keeps a flash's
 * effect to the tiles near it, so the measured region is the flash's
 * neighbourhood, less the flash.) */
static double
background_flicker (const Equalizer & e, double smoothing)
{
  const int w = 160, h = 120;
  std::mt19937 rng (9);
  GstHarness *hh = harness_for (e.launch (smoothing).c_str (), w, h);
  double last = -1, change = 0;
  for (int i = 0; i < 24; ++i) {
    Image in = natural_image (w, h);
    if ((i / 4) % 2)
      for (int y = 0; y < h / 3; ++y)
        for (int x = 0; x < w / 3; ++x)
          in.at (x, y) = 250;
    const Image out = push_timed (hh, in, i);
    double sum = 0;
    int n = 0;
    for (int y = 0; y < h / 2; ++y)
      for (int x = 0; x < w / 2; ++x)
        if (x >= w / 3 || y >= h / 3) {
          sum += out.at (x, y);
          ++n;
        }
    if (last >= 0)
      change += std::fabs (sum / n - last);
    last = sum / n;
  }
  gst_harness_teardown (hh);
  return change;
}

GST_START_TEST (test_smoothing_reduces_flicker)
{
  for (const Equalizer & e : kEqualizers) {
    const double off = background_flicker (e, 0.0);
    const double on = background_flicker (e, 0.9);
    fail_unless (off > 0, "%s: the flash changes nothing", e.factory);
    fail_unless (on < 0.5 * off, "%s: frame-to-frame change %.2f with "
        "smoothing 0.9, %.2f without", e.factory, on, off);
  }
}
GST_END_TEST;

/* Restart triggers, each alone: after frames that fill the history, the
 * next frame maps as if it were the first. Without a trigger it does not
 * (which shows the check can fail). */
enum class Trigger { kNone, kDiscont, kSegment, kFlush, kCaps };

static void
check_restart (const Equalizer & e, Trigger trigger)
{
  const int w = 96, h = 64;
  std::mt19937 rng (10);
  GstHarness *hh = harness_for (e.launch (0.9).c_str (), w, h);
  for (int i = 0; i < 5; ++i)
    push_timed (hh, random_image (rng, w, h, 0, 60 + 30 * i), i);

  switch (trigger) {
    case Trigger::kSegment:
    case Trigger::kFlush:{
      if (trigger == Trigger::kFlush) {
        fail_unless (gst_harness_push_event (hh, gst_event_new_flush_start ()));
        fail_unless (gst_harness_push_event (hh, gst_event_new_flush_stop (TRUE)));
      }
      GstSegment segment;
      gst_segment_init (&segment, GST_FORMAT_TIME);
      fail_unless (gst_harness_push_event (hh, gst_event_new_segment (&segment)));
      break;
    }
    case Trigger::kCaps:
      gst_harness_set_src_caps_str (hh, ("video/x-raw,format=GRAY8,width=96,"
              "height=64,framerate=25/1"));
      break;
    default:
      break;
  }
  const Image next = random_image (rng, w, h, 100, 250);
  const Image got = push_timed (hh, next, 5, trigger == Trigger::kDiscont);
  bool same = got.pixels == e.single (next).pixels;
  fail_unless (same == (trigger != Trigger::kNone), "%s: trigger %d: the "
      "history %s", e.factory, int (trigger), same ? "restarted" :
      "did not restart");
  gst_harness_teardown (hh);
}

GST_START_TEST (test_history_restarts)
{
  for (const Equalizer & e : kEqualizers)
    for (Trigger t : {Trigger::kNone, Trigger::kDiscont, Trigger::kSegment,
            Trigger::kFlush, Trigger::kCaps})
      check_restart (e, t);
}
GST_END_TEST;

/* temporal-smoothing changes while playing: 0 gives single frames at once;
 * turned on again, smoothing starts a new history. */
GST_START_TEST (test_live_smoothing_changes)
{
  const int w = 120, h = 80;
  for (const Equalizer & e : kEqualizers) {
    std::mt19937 rng (11);
    GstHarness *hh = harness_for (e.launch (0.8).c_str (), w, h);
    Model model (e, 0.8);
    int i = 0;
    for (; i < 4; ++i) {
      const Image in = scene (rng, w, h, i);
      assert_images_equal (push_timed (hh, in, i), model (in), "smoothing 0.8");
    }
    gst_harness_set (hh, e.factory, "temporal-smoothing", 0.0, NULL);
    for (; i < 7; ++i) {
      const Image in = scene (rng, w, h, i);
      assert_images_equal (push_timed (hh, in, i), e.single (in), "turned off");
    }
    gst_harness_set (hh, e.factory, "temporal-smoothing", 0.8, NULL);
    model.restart ();
    for (; i < 12; ++i) {
      const Image in = scene (rng, w, h, i);
      assert_images_equal (push_timed (hh, in, i), model (in), "turned on again");
    }
    gst_harness_teardown (hh);
  }
}
GST_END_TEST;

/* ------------------------------------------------------------ messages */

struct Levels {
  guint min, max;
  double mean;
};

static Levels
levels_of (const Image & img)
{
  Levels l { 255, 0, 0 };
  for (uint8_t p : img.pixels) {
    l.min = std::min<guint> (l.min, p);
    l.max = std::max<guint> (l.max, p);
    l.mean += p;
  }
  l.mean /= img.pixels.size ();
  return l;
}

static void
check_levels (const GstStructure * s, const char *prefix, const Levels & want)
{
  guint min = 0, max = 0;
  gdouble mean = -1;
  const std::string p (prefix);
  fail_unless (gst_structure_get_uint (s, (p + "-min").c_str (), &min));
  fail_unless (gst_structure_get_uint (s, (p + "-max").c_str (), &max));
  fail_unless (gst_structure_get_double (s, (p + "-mean").c_str (), &mean));
  fail_unless_equals_int (min, want.min);
  fail_unless_equals_int (max, want.max);
  fail_unless (std::fabs (mean - want.mean) < 1e-9, "%s-mean %f, expected %f",
      prefix, mean, want.mean);
}

/* Checks one element message against the frame it describes. */
static void
check_message (GstMessage * m, const char *factory, const Image & in,
    const Image & out, int i)
{
  const GstStructure *s = gst_message_get_structure (m);
  fail_unless (s != NULL);
  fail_unless_equals_string (gst_structure_get_name (s), factory);

  const GValue *hist = gst_structure_get_value (s, "histogram");
  fail_unless (hist != NULL && GST_VALUE_HOLDS_ARRAY (hist));
  fail_unless_equals_int (gst_value_array_get_size (hist), 256);
  guint want[256] = { 0 };
  for (uint8_t p : in.pixels)
    want[p]++;
  for (guint b = 0; b < 256; ++b)
    fail_unless_equals_int (g_value_get_uint (gst_value_array_get_value (hist,
                b)), want[b]);
  check_levels (s, "input", levels_of (in));
  check_levels (s, "output", levels_of (out));

  const GstClockTime pts = gst_util_uint64_scale (i, GST_SECOND, 30);
  guint64 running = 0, stream = 0, ts = 0;
  fail_unless (gst_structure_get_uint64 (s, "running-time", &running));
  fail_unless (gst_structure_get_uint64 (s, "stream-time", &stream));
  fail_unless (gst_structure_get_uint64 (s, "timestamp", &ts));
  fail_unless_equals_uint64 (running, pts);
  fail_unless_equals_uint64 (stream, pts);
  fail_unless_equals_uint64 (ts, pts);
}

static const char *kMessageElements[] = {
  "cudahisteq", "cudaclahe", "cudanlm strength=15 patch-size=3 search-size=7",
};

/* message-interval 0: one message per frame, with the figures of that
 * frame's input and output. */
GST_START_TEST (test_messages_every_frame)
{
  std::mt19937 rng (12);
  for (const char *el : kMessageElements) {
    const std::string factory (el, strcspn (el, " "));
    BusHarness bh (std::string (el) + " backend=" + kBackend +
        " post-messages=true message-interval=0");
    gst_harness_set_src_caps_str (bh.h, gray_caps (131, 77).c_str ());
    for (int i = 0; i < 4; ++i) {
      const Image in = random_image (rng, 131, 77, 20 + 10 * i, 120 + 30 * i);
      const Image out = push_timed (bh.h, in, i);
      GstMessage *m = gst_bus_pop_filtered (bh.bus, GST_MESSAGE_ELEMENT);
      fail_unless (m != NULL, "%s: no message for frame %d", el, i);
      check_message (m, factory.c_str (), in, out, i);
      gst_message_unref (m);
      fail_unless_equals_int (bh.count (GST_MESSAGE_ELEMENT), 0);
    }
  }
}
GST_END_TEST;

/* The default: no messages. With an interval of 100 ms at 30 frames per
 * second: frames 0, 3, 6 and 9; after a flush the next frame posts. */
GST_START_TEST (test_message_interval)
{
  std::mt19937 rng (13);
  {
    BusHarness quiet (std::string ("cudahisteq backend=") + kBackend);
    gst_harness_set_src_caps_str (quiet.h, gray_caps (40, 30).c_str ());
    for (int i = 0; i < 3; ++i)
      push_timed (quiet.h, random_image (rng, 40, 30), i);
    fail_unless_equals_int (quiet.count (GST_MESSAGE_ELEMENT), 0);
  }
  BusHarness bh (std::string ("cudaclahe backend=") + kBackend +
      " post-messages=true message-interval=100000000");
  gst_harness_set_src_caps_str (bh.h, gray_caps (40, 30).c_str ());
  std::vector<int> posted;
  for (int i = 0; i < 11; ++i) {
    const Image in = random_image (rng, 40, 30);
    const Image out = push_timed (bh.h, in, i);
    if (GstMessage * m = gst_bus_pop_filtered (bh.bus, GST_MESSAGE_ELEMENT)) {
      check_message (m, "cudaclahe", in, out, i);
      gst_message_unref (m);
      posted.push_back (i);
    }
  }
  fail_unless (posted == std::vector<int> ({0, 3, 6, 9}));
  fail_unless (gst_harness_push_event (bh.h, gst_event_new_flush_start ()));
  fail_unless (gst_harness_push_event (bh.h, gst_event_new_flush_stop (FALSE)));
  GstSegment segment;
  gst_segment_init (&segment, GST_FORMAT_TIME);
  fail_unless (gst_harness_push_event (bh.h, gst_event_new_segment (&segment)));
  push_timed (bh.h, random_image (rng, 40, 30), 10);
  fail_unless_equals_int (bh.count (GST_MESSAGE_ELEMENT), 1);

  /* A segment not in time (appsrc's default is bytes) has no running
   * time: every frame posts, with the times NONE, and nothing complains. */
  GstSegment bytes;
  gst_segment_init (&bytes, GST_FORMAT_BYTES);
  fail_unless (gst_harness_push_event (bh.h, gst_event_new_segment (&bytes)));
  for (int i = 0; i < 2; ++i) {
    push_timed (bh.h, random_image (rng, 40, 30), 11 + i);
    GstMessage *m = gst_bus_pop_filtered (bh.bus, GST_MESSAGE_ELEMENT);
    fail_unless (m != NULL, "no message in a bytes segment");
    guint64 running = 0;
    fail_unless (gst_structure_get_uint64 (gst_message_get_structure (m),
            "running-time", &running));
    fail_unless (running == GST_CLOCK_TIME_NONE);
    gst_message_unref (m);
  }
}
GST_END_TEST;

#if TEST_GPU
/* NV12 frames in CUDA memory (cudaupload ! X ! cudadownload): smoothing as
 * the model, and messages with the figures of the device frames. */
GST_START_TEST (test_cuda_memory_smoothing_and_messages)
{
  const int w = 176, h = 96;
  for (const Equalizer & e : kEqualizers) {
    std::mt19937 rng (14);
    Model model (e, 0.7);
    const std::string launch = "cudaupload ! " + e.launch (0.7) +
        " post-messages=true message-interval=0 ! cudadownload";
    GstElement *bin = gst_parse_bin_from_description (launch.c_str (), TRUE,
        NULL);
    fail_unless (bin != NULL);
    GstBus *bus = gst_bus_new ();
    gst_element_set_bus (bin, bus);
    GstHarness *hh = gst_harness_new_with_element (bin, "sink", "src");
    gst_object_unref (bin);
    const std::string caps = video_caps (GST_VIDEO_FORMAT_NV12, w, h);
    gst_harness_set_src_caps_str (hh, caps.c_str ());
    gst_harness_set_sink_caps_str (hh, caps.c_str ());
    for (int i = 0; i < 8; ++i) {
      PlanarFrame in = frame_with_luma (rng, GST_VIDEO_FORMAT_NV12,
          scene (rng, w, h, i));
      GstBuffer *buf = buffer_from_frame (in);
      GST_BUFFER_PTS (buf) = gst_util_uint64_scale (i, GST_SECOND, 30);
      GstBuffer *out = gst_harness_push_and_pull (hh, buf);
      fail_unless (out != NULL);
      PlanarFrame got = frame_from_buffer (out, in.info);
      gst_buffer_unref (out);
      assert_images_equal (got.planes[0], model (in.planes[0]), e.factory);
      assert_chroma_carried (got, in);
      GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ELEMENT);
      fail_unless (m != NULL, "%s: no message in CUDA memory", e.factory);
      check_message (m, e.factory, in.planes[0], got.planes[0], i);
      gst_message_unref (m);
    }
    gst_harness_teardown (hh);
    release_bus (bus);
  }
}
GST_END_TEST;
#endif

static Suite *
equalize_stream_suite (void)
{
  Suite *s = suite_create (TEST_GPU ? "equalize-stream-gpu" : "equalize-stream");
  TCase *tc = tcase_create ("stream");
  tcase_set_timeout (tc, 300);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_smoothing_matches_model);
  tcase_add_test (tc, test_still_frames_equalize_fully);
  tcase_add_test (tc, test_smoothing_reduces_flicker);
  tcase_add_test (tc, test_history_restarts);
  tcase_add_test (tc, test_live_smoothing_changes);
  tcase_add_test (tc, test_messages_every_frame);
  tcase_add_test (tc, test_message_interval);
#if TEST_GPU
  tcase_add_test (tc, test_cuda_memory_smoothing_and_messages);
#endif
  return s;
}

int
main (int argc, char **argv)
{
  if (TEST_GPU)
    return run_gpu_suite (argc, argv, equalize_stream_suite,
        "equalize-stream-gpu");
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (equalize_stream_suite (), "equalize-stream",
      __FILE__);
}

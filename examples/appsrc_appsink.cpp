/* appsrc_appsink: an application that embeds
 *
 *   appsrc ! cudahisteq ! cudanlm ! appsink
 *
 * It pushes low-contrast, noisy frames made in memory, pulls the filtered
 * frames back and checks them: one output per input, same caps and size,
 * timestamps kept, a much wider range of levels than the input (the
 * equalization), and a change of cudanlm's `strength` while PLAYING that both
 * reads back and smooths the frames that follow it (the denoising).
 *
 *   appsrc_appsink [--frames N] [--width W] [--height H] [--format gray8|nv12]
 *                  [--backend auto|cuda|cpu] [--strength H] [--new-strength H]
 *                  [--patch-size N] [--search-size N]
 *
 * Exit status: 0 when every check passed, 1 on a failed check or a pipeline
 * error, 2 on bad arguments. Without a GPU the elements run on the CPU and
 * post a warning, which is printed and is not a failure.
 */

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/* ---- RAII for the GLib and GStreamer types used here ---- */

struct ObjectUnref {
  void operator() (gpointer p) const { gst_object_unref (p); }
};
template <typename T> using ObjectPtr = std::unique_ptr<T, ObjectUnref>;

/* The pipeline goes to NULL before its last reference is dropped: releasing
 * a PLAYING pipeline leaves its streaming threads running. */
struct PipelineRelease {
  void operator() (GstElement * p) const
  {
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
  }
};
using PipelinePtr = std::unique_ptr<GstElement, PipelineRelease>;

struct SampleUnref {
  void operator() (GstSample * s) const { gst_sample_unref (s); }
};
using SamplePtr = std::unique_ptr<GstSample, SampleUnref>;

struct BufferUnref {
  void operator() (GstBuffer * b) const { gst_buffer_unref (b); }
};
using BufferPtr = std::unique_ptr<GstBuffer, BufferUnref>;

struct CapsUnref {
  void operator() (GstCaps * c) const { gst_caps_unref (c); }
};
using CapsPtr = std::unique_ptr<GstCaps, CapsUnref>;

struct MessageUnref {
  void operator() (GstMessage * m) const { gst_message_unref (m); }
};
using MessagePtr = std::unique_ptr<GstMessage, MessageUnref>;

struct ErrorFree {
  void operator() (GError * e) const { g_error_free (e); }
};
using ErrorPtr = std::unique_ptr<GError, ErrorFree>;

struct GFree {
  void operator() (gpointer p) const { g_free (p); }
};
using CharPtr = std::unique_ptr<gchar, GFree>;

/* A GValue that is unset when it goes out of scope. */
class Value {
public:
  explicit Value (GType type) { g_value_init (&value_, type); }
  ~Value () { g_value_unset (&value_); }
  Value (const Value &) = delete;
  Value & operator= (const Value &) = delete;
  GValue * get () { return &value_; }

private:
  GValue value_ = G_VALUE_INIT;
};

/* A video frame mapped for the lifetime of the object. Mapping through
 * GstVideoFrame honours the strides and offsets of a GstVideoMeta, so the
 * code works whatever layout the elements chose for their output. */
class MappedFrame {
public:
  MappedFrame (const GstVideoInfo & info, GstBuffer * buffer, GstMapFlags flags)
  {
    if (!gst_video_frame_map (&frame_, &info, buffer, flags))
      throw std::runtime_error ("cannot map a video frame");
  }
  ~MappedFrame () { gst_video_frame_unmap (&frame_); }
  MappedFrame (const MappedFrame &) = delete;
  MappedFrame & operator= (const MappedFrame &) = delete;

  int width () const { return GST_VIDEO_FRAME_WIDTH (&frame_); }
  int height () const { return GST_VIDEO_FRAME_HEIGHT (&frame_); }
  int planes () const { return GST_VIDEO_FRAME_N_PLANES (&frame_); }
  int stride (int plane) const { return GST_VIDEO_FRAME_PLANE_STRIDE (&frame_, plane); }
  guint8 * row (int plane, int y)
  {
    return static_cast<guint8 *> (GST_VIDEO_FRAME_PLANE_DATA (&frame_, plane)) +
        std::ptrdiff_t (y) * stride (plane);
  }
  /* Rows of a plane: the chroma planes of NV12 have half the rows. */
  int plane_height (int plane) const
  {
    return GST_VIDEO_FRAME_COMP_HEIGHT (&frame_,
        plane == 0 ? 0 : (planes () == 2 ? 1 : plane));
  }
  /* Bytes of a row of a plane (the interleaved UV plane of NV12 holds two
   * bytes per chroma sample). */
  int row_bytes (int plane) const
  {
    const int comp = plane == 0 ? 0 : (planes () == 2 ? 1 : plane);
    return GST_VIDEO_FRAME_COMP_WIDTH (&frame_, comp) *
        GST_VIDEO_FRAME_COMP_PSTRIDE (&frame_, comp);
  }

private:
  GstVideoFrame frame_;
};

/* ---- Options ---- */

struct Options {
  int frames = 60;
  int width = 320;
  int height = 240;
  GstVideoFormat format = GST_VIDEO_FORMAT_GRAY8;
  std::string backend = "auto";
  /* Light denoising first, then strong: the noise the equalization amplified
   * must visibly drop after the change. */
  double strength = 3.0;
  double new_strength = 20.0;
  /* cudanlm's defaults; smaller windows make it much cheaper on the CPU. */
  int patch_size = 7;
  int search_size = 21;
  int fps = 30;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char kUsage[] =
    "usage: appsrc_appsink [--frames N] [--width W] [--height H] "
    "[--format gray8|nv12]\n"
    "                      [--backend auto|cuda|cpu] [--strength H] "
    "[--new-strength H]\n"
    "                      [--patch-size N] [--search-size N]\n";

int
parse_int (const std::string & name, const char *text, int lo, int hi)
{
  char *end = nullptr;
  const long v = std::strtol (text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi)
    throw UsageError (name + " wants an integer in [" + std::to_string (lo) +
        ", " + std::to_string (hi) + "], not '" + text + "'");
  return int (v);
}

/* cudanlm's range of `strength`. */
double
parse_strength (const std::string & name, const char *text)
{
  char *end = nullptr;
  const double v = std::strtod (text, &end);
  if (end == text || *end != '\0' || !(v >= 0.1 && v <= 255))
    throw UsageError (name + " wants a number from 0.1 to 255, not '" + text + "'");
  return v;
}

/* cudanlm's patch and search sizes: odd. */
int
parse_odd (const std::string & name, const char *text, int hi)
{
  const int v = parse_int (name, text, 1, hi);
  if (v % 2 == 0)
    throw UsageError (name + " wants an odd number, not '" + text + "'");
  return v;
}

Options
parse_options (int argc, char **argv)
{
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs (kUsage, stdout);
      std::exit (0);
    }
    if (i + 1 >= argc)
      throw UsageError ("unknown option or missing value: " + arg);
    const char *value = argv[++i];
    if (arg == "--frames")
      o.frames = parse_int (arg, value, 2, 100000);
    else if (arg == "--width")
      o.width = parse_int (arg, value, 16, 8192);
    else if (arg == "--height")
      o.height = parse_int (arg, value, 16, 8192);
    else if (arg == "--strength")
      o.strength = parse_strength (arg, value);
    else if (arg == "--new-strength")
      o.new_strength = parse_strength (arg, value);
    else if (arg == "--patch-size")
      o.patch_size = parse_odd (arg, value, 15);
    else if (arg == "--search-size")
      o.search_size = parse_odd (arg, value, 35);
    else if (arg == "--backend") {
      o.backend = value;
      if (o.backend != "auto" && o.backend != "cuda" && o.backend != "cpu")
        throw UsageError ("--backend wants auto, cuda or cpu");
    } else if (arg == "--format") {
      const std::string f = value;
      if (f == "gray8")
        o.format = GST_VIDEO_FORMAT_GRAY8;
      else if (f == "nv12")
        o.format = GST_VIDEO_FORMAT_NV12;
      else
        throw UsageError ("--format wants gray8 or nv12");
    } else {
      throw UsageError ("unknown option: " + arg);
    }
  }
  if (o.patch_size > o.search_size)
    throw UsageError ("--patch-size must not exceed --search-size");
  return o;
}

/* ---- Checks and bus ---- */

void
expect (bool condition, const std::string & what)
{
  if (!condition)
    throw std::runtime_error ("check failed: " + what);
}

/* "element: message" plus GStreamer's debug details, for an error or a
 * warning message. */
std::string
describe (GstMessage * msg)
{
  GError *raw_error = nullptr;
  gchar *raw_debug = nullptr;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR)
    gst_message_parse_error (msg, &raw_error, &raw_debug);
  else
    gst_message_parse_warning (msg, &raw_error, &raw_debug);
  ErrorPtr error {raw_error};
  CharPtr debug {raw_debug};
  return std::string (GST_OBJECT_NAME (msg->src)) + ": " + error->message +
      (debug ? std::string ("\n  ") + debug.get () : "");
}

/* Prints warnings (the CPU fallback posts one) and turns an error into an
 * exception. Called between frames, since this application has no main
 * loop watching the bus. */
void
drain_bus (GstBus * bus)
{
  while (MessagePtr msg {gst_bus_pop_filtered (bus,
              GstMessageType (GST_MESSAGE_ERROR | GST_MESSAGE_WARNING))}) {
    if (GST_MESSAGE_TYPE (msg.get ()) == GST_MESSAGE_ERROR)
      throw std::runtime_error ("pipeline error from " + describe (msg.get ()));
    std::fprintf (stderr, "warning from %s\n", describe (msg.get ()).c_str ());
  }
}

/* ---- Frames ---- */

/* The spread between the 1st and the 99th percentile of the luma: the range
 * of levels a frame really uses, ignoring a few outliers. */
int
luma_spread (MappedFrame & f)
{
  std::array<uint64_t, 256> histogram {};
  for (int y = 0; y < f.height (); ++y) {
    const guint8 *row = f.row (0, y);
    for (int x = 0; x < f.width (); ++x)
      ++histogram[row[x]];
  }
  const uint64_t total = uint64_t (f.width ()) * f.height ();
  int lo = 0, hi = 255;
  for (uint64_t seen = 0; lo < 255 && (seen += histogram[lo]) < total / 100;)
    ++lo;
  for (uint64_t seen = 0; hi > 0 && (seen += histogram[hi]) < total / 100;)
    --hi;
  return hi - lo;
}

/* Mean absolute difference of horizontal neighbours in the luma: noise
 * raises it, denoising lowers it (the gradient itself adds little). */
double
luma_roughness (MappedFrame & f)
{
  uint64_t sum = 0;
  for (int y = 0; y < f.height (); ++y) {
    const guint8 *row = f.row (0, y);
    for (int x = 1; x < f.width (); ++x)
      sum += uint64_t (std::abs (int (row[x]) - int (row[x - 1])));
  }
  return double (sum) / (double (f.width () - 1) * f.height ());
}

/* A low-contrast gradient (30 levels wide) with Gaussian noise, new noise
 * every frame; the seed makes every run see the same frames. Chroma is
 * neutral grey. */
void
fill_frame (MappedFrame & f, std::mt19937 & rng)
{
  std::normal_distribution<float> noise (0.f, 3.f);
  for (int y = 0; y < f.height (); ++y) {
    guint8 *row = f.row (0, y);
    for (int x = 0; x < f.width (); ++x) {
      const float v = 110.f + 30.f * float (x) / float (f.width () - 1) + noise (rng);
      row[x] = guint8 (std::clamp (std::lround (v), 0L, 255L));
    }
  }
  for (int p = 1; p < f.planes (); ++p)
    for (int y = 0; y < f.plane_height (p); ++y)
      std::memset (f.row (p, y), 128, size_t (f.row_bytes (p)));
}

BufferPtr
make_frame (const GstVideoInfo & info, std::mt19937 & rng)
{
  BufferPtr buffer {gst_buffer_new_allocate (nullptr, info.size, nullptr)};
  {
    MappedFrame f (info, buffer.get (), GST_MAP_WRITE);
    fill_frame (f, rng);
  }                             /* unmapped before appsrc takes it */
  return buffer;
}

/* ---- Pipeline ---- */

/* `strength` is a float property; going through a double GValue lets
 * GObject convert, so this works whatever numeric type the property has
 * (a double passed to g_object_get for a float property would be wrong). */
void
set_strength (GstElement * nlm, double value)
{
  Value v (G_TYPE_DOUBLE);
  g_value_set_double (v.get (), value);
  g_object_set_property (G_OBJECT (nlm), "strength", v.get ());
}

double
get_strength (GstElement * nlm)
{
  Value v (G_TYPE_DOUBLE);
  g_object_get_property (G_OBJECT (nlm), "strength", v.get ());
  return g_value_get_double (v.get ());
}

struct Pipeline {
  PipelinePtr pipeline;
  ObjectPtr<GstBus> bus;
  ObjectPtr<GstElement> src;    /* appsrc */
  ObjectPtr<GstElement> nlm;    /* cudanlm, whose strength changes */
  ObjectPtr<GstElement> sink;   /* appsink */
};

Pipeline
build_pipeline (const Options & o, GstCaps * caps)
{
  /* sync=false: pull frames as soon as they are filtered. A syncing sink
   * would also send QoS events, and the filters would drop frames that are
   * late on a slow (CPU) machine, so fewer frames would come out. */
  const std::string description =
      "appsrc name=src is-live=true format=time ! "
      "cudahisteq backend=" + o.backend + " ! "
      "cudanlm name=nlm auto-strength=false backend=" + o.backend +
      " patch-size=" + std::to_string (o.patch_size) +
      " search-size=" + std::to_string (o.search_size) + " ! "
      "appsink name=sink sync=false";
  GError *raw_error = nullptr;
  GstElement *raw = gst_parse_launch (description.c_str (), &raw_error);
  ErrorPtr error {raw_error};
  if (!raw || error) {
    if (raw)
      gst_object_unref (raw);
    throw std::runtime_error (std::string ("cannot build the pipeline: ") +
        (error ? error->message : "unknown error") +
        " (is GST_PLUGIN_PATH set to the plugin's directory?)");
  }

  Pipeline p;
  p.pipeline.reset (raw);
  p.bus.reset (gst_element_get_bus (raw));
  p.src.reset (gst_bin_get_by_name (GST_BIN (raw), "src"));
  p.nlm.reset (gst_bin_get_by_name (GST_BIN (raw), "nlm"));
  p.sink.reset (gst_bin_get_by_name (GST_BIN (raw), "sink"));

  gst_app_src_set_caps (GST_APP_SRC (p.src.get ()), caps);
  set_strength (p.nlm.get (), o.strength);
  expect (std::fabs (get_strength (p.nlm.get ()) - o.strength) <= 1e-4 * std::max (1.0, o.strength),
      "cudanlm took the strength");
  return p;
}

void
play (Pipeline & p)
{
  if (gst_element_set_state (p.pipeline.get (), GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    drain_bus (p.bus.get ());   /* throws with the element's reason */
    throw std::runtime_error ("the pipeline refused to play");
  }
  /* No waiting for PLAYING here: with a live source the sink completes the
   * change when the first frame reaches it, which is pushed next. */
}

GstState
current_state (Pipeline & p)
{
  GstState state = GST_STATE_NULL;
  gst_element_get_state (p.pipeline.get (), &state, nullptr, 5 * GST_SECOND);
  return state;
}

/* Waits for the end of the stream, so that nothing is still in flight when
 * the pipeline is shut down. */
void
finish (Pipeline & p)
{
  expect (gst_app_src_end_of_stream (GST_APP_SRC (p.src.get ())) ==
      GST_FLOW_OK, "appsrc accepts the end of the stream");
  MessagePtr msg {gst_bus_timed_pop_filtered (p.bus.get (), 10 * GST_SECOND,
          GstMessageType (GST_MESSAGE_EOS | GST_MESSAGE_ERROR))};
  drain_bus (p.bus.get ());     /* warnings and errors posted before */
  if (msg && GST_MESSAGE_TYPE (msg.get ()) == GST_MESSAGE_ERROR)
    throw std::runtime_error ("pipeline error from " + describe (msg.get ()));
  expect (msg != nullptr, "end of stream reached the bus within 10 s");
}

/* What the checks need to remember of one frame. */
struct FrameStats {
  int spread = 0;
  double roughness = 0.0;
};

/* Pulls the output of one input frame and checks it against that input. */
FrameStats
pull_and_check (Pipeline & p, const GstVideoInfo & in_info, GstClockTime pts,
    GstClockTime duration, int index)
{
  /* The frame went in just before: if nothing comes out within a generous
   * time, look on the bus for the reason first. */
  SamplePtr sample {gst_app_sink_try_pull_sample (GST_APP_SINK (p.sink.get ()),
          30 * GST_SECOND)};
  drain_bus (p.bus.get ());
  expect (sample != nullptr, "frame " + std::to_string (index) + " came out");

  GstVideoInfo out_info;
  expect (gst_video_info_from_caps (&out_info, gst_sample_get_caps (sample.get ())),
      "the output caps are video caps");
  expect (GST_VIDEO_INFO_FORMAT (&out_info) == GST_VIDEO_INFO_FORMAT (&in_info) &&
      out_info.width == in_info.width && out_info.height == in_info.height,
      "the output has the input's format and size");

  GstBuffer *buffer = gst_sample_get_buffer (sample.get ());
  expect (gst_buffer_get_size (buffer) >= out_info.size,
      "the output buffer holds a whole frame");
  expect (GST_BUFFER_PTS (buffer) == pts,
      "frame " + std::to_string (index) + " keeps its timestamp");
  expect (GST_BUFFER_DURATION (buffer) == duration,
      "frame " + std::to_string (index) + " keeps its duration");

  MappedFrame f (out_info, buffer, GST_MAP_READ);
  return FrameStats {luma_spread (f), luma_roughness (f)};
}

double
mean_roughness (const std::vector<FrameStats> & s, size_t from, size_t to)
{
  double sum = 0.0;
  for (size_t i = from; i < to; ++i)
    sum += s[i].roughness;
  return sum / double (to - from);
}

int
run (const Options & o)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, o.format, guint (o.width), guint (o.height));
  info.fps_n = o.fps;
  info.fps_d = 1;
  CapsPtr caps {gst_video_info_to_caps (&info)};

  Pipeline p = build_pipeline (o, caps.get ());
  play (p);
  std::printf ("playing %s %dx%d, %d frames, strength %.1f\n",
      gst_video_format_to_string (o.format), o.width, o.height, o.frames,
      get_strength (p.nlm.get ()));

  std::mt19937 rng (20240613);
  const GstClockTime duration = gst_util_uint64_scale (GST_SECOND, 1, guint64 (o.fps));
  const int change_at = o.frames / 2;
  std::vector<FrameStats> stats;
  int input_spread = 0;

  /* One frame in, one frame out: the strength then changes exactly between
   * two frames, and the frames before and after can be compared. */
  for (int i = 0; i < o.frames; ++i) {
    if (i == change_at) {
      expect (current_state (p) == GST_STATE_PLAYING,
          "the pipeline is PLAYING when the strength changes");
      set_strength (p.nlm.get (), o.new_strength);
      const double now = get_strength (p.nlm.get ());
      std::printf ("frame %d: strength %.1f -> %.1f while PLAYING\n", i,
          o.strength, now);
      expect (std::fabs (now - o.new_strength) <= 1e-4 * std::max (1.0, o.new_strength),
          "cudanlm took the new strength");
    }

    BufferPtr buffer = make_frame (info, rng);
    if (i == 0) {
      MappedFrame f (info, buffer.get (), GST_MAP_READ);
      input_spread = luma_spread (f);
    }
    const GstClockTime pts = GstClockTime (i) * duration;
    GST_BUFFER_PTS (buffer.get ()) = pts;
    GST_BUFFER_DURATION (buffer.get ()) = duration;
    /* push_buffer takes the buffer over. */
    expect (gst_app_src_push_buffer (GST_APP_SRC (p.src.get ()), buffer.release ()) ==
        GST_FLOW_OK, "appsrc accepts frame " + std::to_string (i));
    stats.push_back (pull_and_check (p, info, pts, duration, i));
  }
  finish (p);

  expect (int (stats.size ()) == o.frames, "as many frames out as in");

  const int out_spread = stats.front ().spread;
  std::printf ("levels used (1st to 99th percentile): input %d, output %d\n",
      input_spread, out_spread);
  expect (out_spread >= 3 * input_spread && out_spread >= 128,
      "the equalized output uses a much wider range of levels");

  const double before = mean_roughness (stats, 0, size_t (change_at));
  const double after = mean_roughness (stats, size_t (change_at), stats.size ());
  std::printf ("neighbour difference: %.2f at strength %.1f, %.2f at %.1f\n",
      before, o.strength, after, o.new_strength);
  if (o.new_strength > o.strength)
    expect (after < 0.8 * before, "the stronger denoising smooths the frames");

  std::printf ("OK: %d frames pushed, %zu pulled, all checks passed\n",
      o.frames, stats.size ());
  return 0;
}

}  // namespace

int
main (int argc, char **argv)
{
  /* gst_init removes the GStreamer options (--gst-debug=...) it handles. */
  gst_init (&argc, &argv);
  int status = 1;
  try {
    status = run (parse_options (argc, argv));
  } catch (const UsageError & e) {
    std::fprintf (stderr, "appsrc_appsink: %s\n%s", e.what (), kUsage);
    status = 2;
  } catch (const std::exception & e) {
    std::fprintf (stderr, "appsrc_appsink: %s\n", e.what ());
    status = 1;
  }
  /* Frees GStreamer's global state, so memory checkers report only leaks. */
  gst_deinit ();
  return status;
}

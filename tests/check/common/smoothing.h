/* The equalizing elements across frames: each with its independent model
 * of temporal smoothing (the arithmetic docs/cudahisteq.md and
 * docs/cudaclahe.md define), timestamped frames of a scene that changes,
 * and the checks of smoothing each element's tests run on this build's
 * backend. The history's restarts and the statistics messages, which the
 * base class gives every element, are checked in
 * elements/cudafiltersbase.cpp with the same frames. */
#pragma once

#include "equalize_reference.h"

#include <algorithm>
#include <cmath>

namespace test {

/* An element and its independent model: the single-frame reference when
 * smoothing is 0, the smoothed one otherwise. */
struct Equalizer {
  const char *factory;
  const char *props;

  std::string launch (double smoothing) const {
    return on_backend (factory, std::string (props) + " temporal-smoothing=" +
        std::to_string (smoothing));
  }
  bool is_clahe () const { return g_str_equal (factory, "cudaclahe"); }
  Image single (const Image & in) const {
    return is_clahe ()? reference_clahe (in, 3.0, 5, 3) : reference_equalize (in);
  }
};

static const Equalizer kHistEq = {"cudahisteq", ""};
static const Equalizer kClahe = {"cudaclahe", " clip-limit=3 tiles-x=5 tiles-y=3"};
static const Equalizer kEqualizers[] = { kHistEq, kClahe };

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
inline Image
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

/* Frame i of a 30 fps stream. */
inline GstBuffer *
timed_buffer (const Image & img, int i, bool discont = false)
{
  GstBuffer *buf = buffer_from_image (img);
  GST_BUFFER_PTS (buf) = gst_util_uint64_scale (i, GST_SECOND, 30);
  GST_BUFFER_DURATION (buf) = GST_SECOND / 30;
  if (discont)
    GST_BUFFER_FLAG_SET (buf, GST_BUFFER_FLAG_DISCONT);
  return buf;
}

inline Image
push_timed (GstHarness * h, const Image & img, int i, bool discont = false)
{
  GstBuffer *out = gst_harness_push_and_pull (h, timed_buffer (img, i, discont));
  fail_unless (out != NULL, "no output for frame %d", i);
  Image result = image_from_buffer (out, img.width, img.height);
  gst_buffer_unref (out);
  return result;
}

/* Frame by frame equal to the model, for several weights, through flashes
 * and changes of brightness; a DISCONT buffer restarts both. */
inline void
check_smoothing_matches_model (const Equalizer & e)
{
  const int w = 203, h = 117;
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

/* A still scene equalizes exactly as every frame on its own would: the
 * blended histogram of identical frames is the frame's histogram. */
inline void
check_still_frames_equalize_fully (const Equalizer & e)
{
  std::mt19937 rng (8);
  const Image still = scene (rng, 160, 90, 3);
  GstHarness *hh = harness_for (e.launch (0.9).c_str (), 160, 90);
  for (int i = 0; i < 20; ++i)
    assert_images_equal (push_timed (hh, still, i), e.single (still),
        e.factory);
  gst_harness_teardown (hh);
}

/* The point of smoothing: when a flash comes and goes, the mean level
 * around it jumps much less from frame to frame. (CLAHE keeps a flash's
 * effect to the tiles near it, so the measured region is the flash's
 * neighbourhood, less the flash.) */
inline double
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

inline void
check_smoothing_reduces_flicker (const Equalizer & e)
{
  const double off = background_flicker (e, 0.0);
  const double on = background_flicker (e, 0.9);
  fail_unless (off > 0, "%s: the flash changes nothing", e.factory);
  fail_unless (on < 0.5 * off, "%s: frame-to-frame change %.2f with "
      "smoothing 0.9, %.2f without", e.factory, on, off);
}

/* temporal-smoothing changes while playing: 0 gives single frames at once;
 * turned on again, smoothing starts a new history. */
inline void
check_live_smoothing_changes (const Equalizer & e)
{
  const int w = 120, h = 80;
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

}  // namespace test

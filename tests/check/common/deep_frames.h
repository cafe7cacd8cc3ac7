/* Frames of 10- to 16-bit formats for the tests, and an independent
 * reference of histogram equalization over 2^b levels, written from
 * docs/cudahisteq.md ("Deeper frames"): OpenCV's cv::equalizeHist with
 * 2^b - 1 in place of 255. */
#pragma once

#include "equalize_reference.h"
#include "test_common.h"
#include "thermal_scene.h"

#include <algorithm>
#include <cmath>

namespace test {

/* The deep formats every element takes, in system memory. */
static const GstVideoFormat kDeepFormats[] = {
  GST_VIDEO_FORMAT_GRAY16_LE, GST_VIDEO_FORMAT_P010_10LE,
  GST_VIDEO_FORMAT_P016_LE, GST_VIDEO_FORMAT_I420_10LE,
  GST_VIDEO_FORMAT_I420_12LE, GST_VIDEO_FORMAT_Y444_10LE,
  GST_VIDEO_FORMAT_Y444_12LE, GST_VIDEO_FORMAT_Y444_16LE,
};

/* A plane of 16-bit words stored tightly. */
struct Image16 {
  int width = 0;
  int height = 0;
  std::vector<uint16_t> pixels;

  Image16 () = default;
  Image16 (int w, int h) : width (w), height (h), pixels (size_t (w) * h) {}
  uint16_t & at (int x, int y) { return pixels[size_t (y) * width + x]; }
  uint16_t at (int x, int y) const { return pixels[size_t (y) * width + x]; }
};

/* Where a format keeps luma: bits and shift of its samples. */
struct DeepLayout {
  int bits;
  int shift;
};

inline DeepLayout
deep_layout (GstVideoFormat fmt)
{
  const GstVideoFormatInfo *finfo = gst_video_format_get_info (fmt);
  return DeepLayout { (int) GST_VIDEO_FORMAT_INFO_DEPTH (finfo, 0),
      (int) GST_VIDEO_FORMAT_INFO_SHIFT (finfo, 0)};
}

/* Random levels in [lo, hi] of a layout, stored as its words. */
inline Image16
random_deep_image (std::mt19937 & rng, int w, int h, DeepLayout l, int lo,
    int hi)
{
  std::uniform_int_distribution<int> d (lo, hi);
  Image16 img (w, h);
  for (auto &p : img.pixels)
    p = uint16_t (d (rng) << l.shift);
  return img;
}

/* A smooth scene with a few hot spots, like a thermal camera's: levels
 * spread over part of the range, most of it empty. */
inline Image16
thermal_like_image (std::mt19937 & rng, int w, int h, int bits)
{
  const int top = (1 << bits) - 1;
  std::normal_distribution<double> noise (0.0, top / 800.0);
  Image16 img (w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double v = thermal_scene_level (x, y, w, h, top) + noise (rng);
      img.at (x, y) = uint16_t (std::clamp (v, 0.0, double (top)));
    }
  return img;
}

/* Equalization over 2^bits levels of samples (word >> shift), levels above
 * the range read as the highest; the output shifted back. */
inline Image16
reference_equalize_deep (const Image16 & src, int bits, int shift)
{
  const int levels = 1 << bits, top = levels - 1;
  auto level = [&](uint16_t w) { return std::min (int (w >> shift), top); };
  std::vector<int> hist (levels, 0);
  for (uint16_t p : src.pixels)
    hist[level (p)]++;
  int i = 0;
  while (!hist[i])
    ++i;
  const int total = src.width * src.height;
  std::vector<uint16_t> lut (levels, 0);
  if (hist[i] == total) {
    for (int j = 0; j < levels; ++j)
      lut[j] = uint16_t (j << shift);
  } else {
    const float scale = float (top) / float (total - hist[i]);
    int sum = 0;
    for (int j = i + 1; j < levels; ++j) {
      sum += hist[j];
      const int r = int (std::nearbyint (float (sum) * scale));
      lut[j] = uint16_t (std::clamp (r, 0, top) << shift);
    }
  }
  Image16 dst (src.width, src.height);
  for (size_t k = 0; k < src.pixels.size (); ++k)
    dst.pixels[k] = lut[level (src.pixels[k])];
  return dst;
}

/* The levels of words (word >> shift, clamped to 2^bits - 1), and words of
 * levels. */
inline Image16
levels_of (const Image16 & words, int bits, int shift)
{
  Image16 l (words.width, words.height);
  for (size_t k = 0; k < words.pixels.size (); ++k)
    l.pixels[k] = uint16_t (std::min (words.pixels[k] >> shift,
            (1 << bits) - 1));
  return l;
}

inline Image16
words_of_levels (Image16 levels, int shift)
{
  for (auto &p : levels.pixels)
    p = uint16_t (p << shift);
  return levels;
}

/* OpenCV's CLAHE over 2^bits bins (65536 on 16-bit planes, as OpenCV has
 * it on CV_16UC1) on the levels of words. */
inline Image16
reference_clahe_deep (const Image16 & src, int bits, int shift,
    double clip_limit, int tiles_x, int tiles_y)
{
  return words_of_levels (reference_clahe_levels (levels_of (src, bits, shift),
          1 << bits, clip_limit, tiles_x, tiles_y), shift);
}

/* Plane images (bytes) to and from words, little-endian. */
inline Image
bytes_of (const Image16 & img)
{
  Image b (img.width * 2, img.height);
  for (size_t k = 0; k < img.pixels.size (); ++k) {
    b.pixels[2 * k] = uint8_t (img.pixels[k] & 0xFF);
    b.pixels[2 * k + 1] = uint8_t (img.pixels[k] >> 8);
  }
  return b;
}

inline Image16
words_of (const Image & b)
{
  Image16 img (b.width / 2, b.height);
  for (size_t k = 0; k < img.pixels.size (); ++k)
    img.pixels[k] = uint16_t (b.pixels[2 * k] | (b.pixels[2 * k + 1] << 8));
  return img;
}

/* A frame of `fmt` with luma `luma` and random chroma of the format's
 * layout. */
inline PlanarFrame
deep_frame (std::mt19937 & rng, GstVideoFormat fmt, const Image16 & luma)
{
  const DeepLayout l = deep_layout (fmt);
  PlanarFrame f;
  gst_video_info_set_format (&f.info, fmt, luma.width, luma.height);
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&f.info); ++p) {
    Image shape = plane_shape (f.info, p);
    f.planes.push_back (p == 0 ? bytes_of (luma) :
        bytes_of (random_deep_image (rng, shape.width / 2, shape.height, l, 0,
                (1 << l.bits) - 1)));
  }
  return f;
}

/* One frame through a harness that stays open (renegotiating to the
 * frame's caps where they changed). */
inline PlanarFrame
push_pull_in (GstHarness * h, const PlanarFrame & in)
{
  set_caps_if_changed (h, video_caps (GST_VIDEO_INFO_FORMAT (&in.info),
          GST_VIDEO_INFO_WIDTH (&in.info), GST_VIDEO_INFO_HEIGHT (&in.info)));
  GstBuffer *out = gst_harness_push_and_pull (h, buffer_from_frame (in));
  fail_unless (out != NULL);
  PlanarFrame result = frame_from_buffer (out, in.info);
  gst_buffer_unref (out);
  return result;
}

inline void
assert_images16_equal (const Image16 & got, const Image16 & want,
    const std::string & what)
{
  fail_unless_equals_int (got.width, want.width);
  fail_unless_equals_int (got.height, want.height);
  for (int y = 0; y < want.height; ++y)
    for (int x = 0; x < want.width; ++x)
      if (got.at (x, y) != want.at (x, y))
        fail ("%s: %dx%d differs at (%d, %d): got %u, want %u", what.c_str (),
            want.width, want.height, x, y, got.at (x, y), want.at (x, y));
}

/* `in` through harness `h`: luma must equal the reference equalization over
 * 2^bits levels, every other plane must be byte-identical. */
inline void
assert_equalized_deep (GstHarness * h, const PlanarFrame & in, int bits,
    const std::string & what)
{
  const DeepLayout l = deep_layout (GST_VIDEO_INFO_FORMAT (&in.info));
  PlanarFrame out = push_pull_in (h, in);
  assert_images16_equal (words_of (out.planes[0]),
      reference_equalize_deep (words_of (in.planes[0]), bits, l.shift), what);
  assert_chroma_carried (out, in);
}

/* `in` through harness `h`: luma must equal OpenCV's CLAHE over 2^bits
 * bins (reference_clahe_deep), every other plane must be byte-identical. */
inline void
assert_clahe_deep (GstHarness * h, const PlanarFrame & in, double clip_limit,
    int tiles_x, int tiles_y, const std::string & what)
{
  const DeepLayout l = deep_layout (GST_VIDEO_INFO_FORMAT (&in.info));
  PlanarFrame out = push_pull_in (h, in);
  assert_images16_equal (words_of (out.planes[0]),
      reference_clahe_deep (words_of (in.planes[0]), l.bits, l.shift,
          clip_limit, tiles_x, tiles_y), what);
  assert_chroma_carried (out, in);
}

/* A scene of a layout's levels, stored as its words. */
inline Image16
thermal_like_words (std::mt19937 & rng, int w, int h, DeepLayout l)
{
  return words_of_levels (thermal_like_image (rng, w, h, l.bits), l.shift);
}

/* Frame i of a stream whose depth changes: random luma for 8-bit formats,
 * random levels in a band that moves with i for deep ones. */
inline PlanarFrame
mixed_depth_frame (std::mt19937 & rng, GstVideoFormat fmt, int i, int w,
    int h)
{
  if (GST_VIDEO_FORMAT_INFO_DEPTH (gst_video_format_get_info (fmt), 0) == 8)
    return frame_with_luma (rng, fmt, random_image (rng, w, h, 20 + i,
            120 + 10 * i));
  const DeepLayout l = deep_layout (fmt);
  const int top = (1 << l.bits) - 1;
  return deep_frame (rng, fmt, random_deep_image (rng, w, h, l,
          top / 10 * (i % 3), top / 2 + top / 20 * i));
}

/* Levels of `bits` bits to filter: random over the whole range, random in a
 * narrow band, and a thermal-like scene (smooth, hot spots, fine noise). */
inline std::vector<Image16>
deep_scenes (std::mt19937 & rng, int w, int h, int bits)
{
  const int top = (1 << bits) - 1;
  const DeepLayout levels { bits, 0 };
  return { random_deep_image (rng, w, h, levels, 0, top),
    random_deep_image (rng, w, h, levels, top / 3, top / 3 + top / 50),
    thermal_like_image (rng, w, h, bits) };
}

/* Luma `levels` in a frame of deep format `fmt` (random chroma) through a
 * fresh `launch`: the output's luma levels; the chroma must be carried. */
inline Image16
luma_levels_through (const std::string & launch, GstVideoFormat fmt,
    const Image16 & levels, std::mt19937 & rng)
{
  const DeepLayout l = deep_layout (fmt);
  PlanarFrame in = deep_frame (rng, fmt, words_of_levels (levels, l.shift));
  PlanarFrame out = push_pull_frame (launch.c_str (), in);
  assert_chroma_carried (out, in);
  return levels_of (words_of (out.planes[0]), l.bits, l.shift);
}

/* Bits of a format's luma: 8, or 10 to 16. */
inline int
luma_bits (GstVideoFormat fmt)
{
  return GST_VIDEO_FORMAT_INFO_DEPTH (gst_video_format_get_info (fmt), 0);
}

/* Formats of a stream that changes depth: 8, 16, 10, 8, then 12 bits. */
static const GstVideoFormat kDepthChanges[] = { GST_VIDEO_FORMAT_GRAY8,
  GST_VIDEO_FORMAT_GRAY16_LE, GST_VIDEO_FORMAT_P010_10LE,
  GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_Y444_12LE
};

/* Luma `levels` in a frame of `fmt` (8-bit formats too) through harness
 * `h`, which stays open (renegotiating where the caps change): the output's
 * luma levels; the chroma must be carried. */
inline Image16
luma_levels_in (GstHarness * h, GstVideoFormat fmt, const Image16 & levels,
    std::mt19937 & rng)
{
  if (luma_bits (fmt) == 8) {
    Image bytes (levels.width, levels.height);
    for (size_t k = 0; k < levels.pixels.size (); ++k)
      bytes.pixels[k] = uint8_t (levels.pixels[k]);
    PlanarFrame in = frame_with_luma (rng, fmt, bytes);
    PlanarFrame out = push_pull_in (h, in);
    assert_chroma_carried (out, in);
    Image16 got (levels.width, levels.height);
    for (size_t k = 0; k < got.pixels.size (); ++k)
      got.pixels[k] = out.planes[0].pixels[k];
    return got;
  }
  const DeepLayout l = deep_layout (fmt);
  PlanarFrame in = deep_frame (rng, fmt, words_of_levels (levels, l.shift));
  PlanarFrame out = push_pull_in (h, in);
  assert_chroma_carried (out, in);
  return levels_of (words_of (out.planes[0]), l.bits, l.shift);
}

/* Frame i through a GPU and a CPU harness: the luma planes must be equal. */
inline void
assert_backends_agree (GstHarness * gpu, GstHarness * cpu,
    const PlanarFrame & in, int i)
{
  PlanarFrame a = push_pull_in (gpu, in), b = push_pull_in (cpu, in);
  const std::string what = std::string ("frame ") + std::to_string (i) + " " +
      gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&in.info));
  assert_images_equal (a.planes[0], b.planes[0], what.c_str ());
}

/* GRAY16_LE frames from the pool `launch` proposes (pinned memory): rows
 * 16-byte aligned (1280 wide) are streamed by the kernels, others (1283)
 * copied; luma must equal `want` of the input. */
inline void
check_deep_proposed_pinned_pool (const char *launch,
    Image16 (*want) (const Image16 &))
{
  std::mt19937 rng (4044);
  for (int w : {1280, 1283}) {
    const int hgt = 720;
    GstHarness *h = new_harness (launch);
    const std::string caps_str = video_caps (GST_VIDEO_FORMAT_GRAY16_LE, w,
        hgt);
    gst_harness_set_src_caps_str (h, caps_str.c_str ());
    GstCaps *caps = gst_caps_from_string (caps_str.c_str ());
    GstBufferPool *pool = take_proposed_pool (h, caps);
    GstVideoInfo info;
    gst_video_info_from_caps (&info, caps);
    for (int i = 0; i < 3; ++i) {
      Image16 img = thermal_like_image (rng, w, hgt, 16);
      GstBuffer *buf = NULL;
      fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf,
              NULL), GST_FLOW_OK);
      GstVideoFrame frame;
      fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
      for (int y = 0; y < hgt; ++y)
        memcpy ((uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0) +
            size_t (y) * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0),
            &img.pixels[size_t (y) * w], size_t (w) * 2);
      gst_video_frame_unmap (&frame);
      GstBuffer *out = gst_harness_push_and_pull (h, buf);
      fail_unless (out != NULL);
      PlanarFrame got = frame_from_buffer (out, info);
      assert_images16_equal (words_of (got.planes[0]), want (img),
          std::string (launch) + ": pinned GRAY16_LE");
      gst_buffer_unref (out);
    }
    gst_harness_teardown (h);
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
    gst_caps_unref (caps);
  }
}

}  // namespace test

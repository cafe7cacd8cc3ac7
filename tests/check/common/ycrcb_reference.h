/* References for the RGB and packed 4:2:2 formats, written from the
 * definitions (issue 38, docs of the elements) and kept apart from the
 * plugin's code so that the tests check it:
 *   - OpenCV's fixed-point YCrCb conversion (cv2.cvtColor COLOR_BGR2YCrCb
 *     and COLOR_YCrCb2BGR, 8-bit), checked against OpenCV 4.6 on all 2^24
 *     colours both ways;
 *   - the byte layout of each 8-bit RGB format (where R, G, B and alpha or
 *     padding sit in a pixel) and of each packed 4:2:2 format (where Y0,
 *     Y1, U and V sit in a group of two pixels);
 *   - frames of these formats as rows of bytes (PackedFrame), buffers of
 *     them in GStreamer's default layout, and the plane filter's reference
 *     on them: Y' = filter (Y), back to RGB with the input's Cr and Cb,
 *     alpha and padding carried. */
#pragma once

#include "test_common.h"

#include <algorithm>
#include <string>
#include <vector>

namespace test {

/* ------------------------------------------------ OpenCV's YCrCb, 8-bit
 * d(x) = (x + 2^13) >> 14 (arithmetic shift: floor), sat = clamp to
 * [0, 255]:
 *   Y  = d(1868 B + 9617 G + 4899 R)
 *   Cr = sat(d((R - Y) * 11682 + (128 << 14)))
 *   Cb = sat(d((B - Y) * 9241 + (128 << 14)))
 * and back
 *   B = sat(Y + d((Cb - 128) * 29049))
 *   G = sat(Y + d((Cb - 128) * -5636 + (Cr - 128) * -11698))
 *   R = sat(Y + d((Cr - 128) * 22987)) */

inline int
ycc_descale (int x)
{
  /* floor ((x + 8192) / 16384) without relying on >> of negatives. */
  const int v = x + 8192;
  return v >= 0 ? v / 16384 : -((-v + 16383) / 16384);
}

inline uint8_t
ycc_sat (int v)
{
  return uint8_t (v < 0 ? 0 : v > 255 ? 255 : v);
}

struct YCrCb {
  uint8_t y, cr, cb;
};

struct Rgb {
  uint8_t r, g, b;
};

inline YCrCb
ycrcb_of (Rgb c)
{
  const int y = ycc_descale (1868 * c.b + 9617 * c.g + 4899 * c.r);
  return { uint8_t (y), ycc_sat (ycc_descale ((c.r - y) * 11682 + (128 << 14))),
    ycc_sat (ycc_descale ((c.b - y) * 9241 + (128 << 14))) };
}

inline Rgb
rgb_of (YCrCb c)
{
  const int cr = c.cr - 128, cb = c.cb - 128;
  return { ycc_sat (c.y + ycc_descale (cr * 22987)),
    ycc_sat (c.y + ycc_descale (cb * -5636 + cr * -11698)),
    ycc_sat (c.y + ycc_descale (cb * 29049)) };
}

/* ------------------------------------------------------- the layouts */

/* Bytes of one pixel of an 8-bit RGB format: where R, G and B are, and the
 * alpha or padding byte (-1: none). */
struct RgbLayout {
  GstVideoFormat format;
  int bytes;
  int r, g, b;
  int extra;
  bool alpha;
};

static const RgbLayout kRgbLayouts[] = {
  {GST_VIDEO_FORMAT_RGBA, 4, 0, 1, 2, 3, true},
  {GST_VIDEO_FORMAT_BGRA, 4, 2, 1, 0, 3, true},
  {GST_VIDEO_FORMAT_RGBx, 4, 0, 1, 2, 3, false},
  {GST_VIDEO_FORMAT_BGRx, 4, 2, 1, 0, 3, false},
  {GST_VIDEO_FORMAT_ARGB, 4, 1, 2, 3, 0, true},
  {GST_VIDEO_FORMAT_ABGR, 4, 3, 2, 1, 0, true},
  {GST_VIDEO_FORMAT_xRGB, 4, 1, 2, 3, 0, false},
  {GST_VIDEO_FORMAT_xBGR, 4, 3, 2, 1, 0, false},
  {GST_VIDEO_FORMAT_RGB, 3, 0, 1, 2, -1, false},
  {GST_VIDEO_FORMAT_BGR, 3, 2, 1, 0, -1, false},
};

/* Bytes of a group of two pixels of a packed 4:2:2 format. */
struct PackedYuvLayout {
  GstVideoFormat format;
  int y0, y1, u, v;
};

static const PackedYuvLayout kPackedYuvLayouts[] = {
  {GST_VIDEO_FORMAT_YUY2, 0, 2, 1, 3},
  {GST_VIDEO_FORMAT_UYVY, 1, 3, 0, 2},
  {GST_VIDEO_FORMAT_YVYU, 0, 2, 3, 1},
};

inline const RgbLayout *
rgb_layout (GstVideoFormat fmt)
{
  for (const RgbLayout & l : kRgbLayouts)
    if (l.format == fmt)
      return &l;
  return nullptr;
}

inline const PackedYuvLayout *
packed_yuv_layout (GstVideoFormat fmt)
{
  for (const PackedYuvLayout & l : kPackedYuvLayouts)
    if (l.format == fmt)
      return &l;
  return nullptr;
}

inline const char *
format_name (GstVideoFormat fmt)
{
  return gst_video_format_to_string (fmt);
}

/* Bytes of pixel data in a row of `w` pixels: packed 4:2:2 rows hold whole
 * groups (an odd width ends with a group whose second luma is unused). */
inline int
row_bytes (GstVideoFormat fmt, int w)
{
  if (const RgbLayout * l = rgb_layout (fmt))
    return w * l->bytes;
  fail_unless (packed_yuv_layout (fmt) != nullptr, "not a packed format: %s",
      format_name (fmt));
  return 4 * ((w + 1) / 2);
}

/* ------------------------------------------ frames as rows of bytes */

/* A one-plane frame: `rows` holds row_bytes () x height bytes, tightly. */
struct PackedFrame {
  GstVideoFormat format = GST_VIDEO_FORMAT_UNKNOWN;
  int width = 0, height = 0;
  Image rows;

  PackedFrame () = default;
  PackedFrame (GstVideoFormat fmt, int w, int h)
      : format (fmt), width (w), height (h), rows (row_bytes (fmt, w), h) {}

  GstVideoInfo info () const {
    GstVideoInfo i;
    gst_video_info_set_format (&i, format, width, height);
    return i;
  }
  std::string describe () const {
    return std::string (format_name (format)) + " " + std::to_string (width) +
        "x" + std::to_string (height);
  }
};

/* Every byte random: colours, alpha, padding and unused luma. */
inline PackedFrame
random_packed_frame (std::mt19937 & rng, GstVideoFormat fmt, int w, int h)
{
  PackedFrame f (fmt, w, h);
  f.rows = random_image (rng, f.rows.width, h);
  return f;
}

/* A buffer in GStreamer's default layout (RGB rows padded to 4 bytes),
 * the bytes past each row set to 0xEE. */
inline GstBuffer *
buffer_from_packed (const PackedFrame & f)
{
  GstVideoInfo info = f.info ();
  GstBuffer *buf = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info),
      NULL);
  gst_buffer_memset (buf, 0, 0xEE, GST_VIDEO_INFO_SIZE (&info));
  GstVideoFrame frame;
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
  fail_unless (GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0) >= f.rows.width);
  for (int y = 0; y < f.height; ++y)
    memcpy ((uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0) +
        size_t (y) * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0),
        &f.rows.pixels[size_t (y) * f.rows.width], f.rows.width);
  gst_video_frame_unmap (&frame);
  return buf;
}

/* The pixel data of `buf` (video meta honoured), as a frame like `like`. */
inline PackedFrame
packed_from_buffer (GstBuffer * buf, const PackedFrame & like)
{
  PackedFrame f (like.format, like.width, like.height);
  GstVideoInfo info = f.info ();
  GstVideoFrame frame;
  fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_READ));
  for (int y = 0; y < f.height; ++y)
    memcpy (&f.rows.pixels[size_t (y) * f.rows.width],
        (const uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0) +
        size_t (y) * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0), f.rows.width);
  gst_video_frame_unmap (&frame);
  return f;
}

/* Every byte of the pixel data equal; the first difference named by pixel
 * and byte. */
inline void
assert_packed_equal (const PackedFrame & got, const PackedFrame & want,
    const std::string & what)
{
  fail_unless_equals_int (got.rows.width, want.rows.width);
  fail_unless_equals_int (got.rows.height, want.rows.height);
  const int unit = rgb_layout (want.format) ? rgb_layout (want.format)->bytes : 4;
  for (int y = 0; y < want.rows.height; ++y)
    for (int x = 0; x < want.rows.width; ++x)
      if (got.rows.at (x, y) != want.rows.at (x, y))
        fail ("%s (%s): byte %d of %s %d in row %d is %d, expected %d",
            what.c_str (), want.describe ().c_str (), x % unit,
            unit == 4 && !rgb_layout (want.format) ? "group" : "pixel",
            x / unit, y, got.rows.at (x, y), want.rows.at (x, y));
}

/* ----------------------------------------------- RGB through YCrCb */

struct YCrCbPlanes {
  Image y, cr, cb;
};

inline Rgb
rgb_at (const PackedFrame & f, const RgbLayout & l, int x, int y)
{
  const uint8_t *p = &f.rows.pixels[size_t (y) * f.rows.width + size_t (x) * l.bytes];
  return { p[l.r], p[l.g], p[l.b] };
}

/* Full-resolution Y, Cr and Cb planes of an RGB frame. */
inline YCrCbPlanes
split_ycrcb (const PackedFrame & f)
{
  const RgbLayout *l = rgb_layout (f.format);
  fail_unless (l != nullptr);
  YCrCbPlanes planes { Image (f.width, f.height), Image (f.width, f.height),
    Image (f.width, f.height) };
  for (int y = 0; y < f.height; ++y)
    for (int x = 0; x < f.width; ++x) {
      const YCrCb c = ycrcb_of (rgb_at (f, *l, x, y));
      planes.y.at (x, y) = c.y;
      planes.cr.at (x, y) = c.cr;
      planes.cb.at (x, y) = c.cb;
    }
  return planes;
}

/* `in` with its colours replaced by those of `planes`; alpha and padding
 * bytes as in `in`. */
inline PackedFrame
merge_ycrcb (const PackedFrame & in, const YCrCbPlanes & planes)
{
  const RgbLayout *l = rgb_layout (in.format);
  fail_unless (l != nullptr);
  PackedFrame out = in;
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      const Rgb c = rgb_of ({planes.y.at (x, y), planes.cr.at (x, y),
              planes.cb.at (x, y)});
      uint8_t *p = &out.rows.pixels[size_t (y) * out.rows.width + size_t (x) * l->bytes];
      p[l->r] = c.r;
      p[l->g] = c.g;
      p[l->b] = c.b;
    }
  return out;
}

/* What cudahisteq, cudaclahe and cudasharpen must output for an RGB frame,
 * `filter` being the plane filter's reference: OpenCV's YCrCb, the filter
 * on Y, back with the same Cr and Cb. */
template < typename Filter > inline PackedFrame
reference_rgb (const PackedFrame & in, Filter filter)
{
  YCrCbPlanes planes = split_ycrcb (in);
  planes.y = filter (planes.y);
  return merge_ycrcb (in, planes);
}

/* ---------------------------------------------------- packed 4:2:2 */

/* The same frame as planar Y42B: luma w x h, U and V ceil(w/2) x h. */
inline PlanarFrame
planar_of_packed (const PackedFrame & f)
{
  const PackedYuvLayout *l = packed_yuv_layout (f.format);
  fail_unless (l != nullptr);
  PlanarFrame p;
  gst_video_info_set_format (&p.info, GST_VIDEO_FORMAT_Y42B, f.width, f.height);
  const int cw = (f.width + 1) / 2;
  p.planes = { Image (f.width, f.height), Image (cw, f.height), Image (cw,
          f.height) };
  for (int y = 0; y < f.height; ++y)
    for (int g = 0; g < cw; ++g) {
      const uint8_t *q = &f.rows.pixels[size_t (y) * f.rows.width + 4 * size_t (g)];
      p.planes[0].at (2 * g, y) = q[l->y0];
      if (2 * g + 1 < f.width)
        p.planes[0].at (2 * g + 1, y) = q[l->y1];
      p.planes[1].at (g, y) = q[l->u];
      p.planes[2].at (g, y) = q[l->v];
    }
  return p;
}

/* `in` with its samples replaced by those of the Y42B frame `p`; an odd
 * width's unused luma as in `in`. */
inline PackedFrame
packed_of_planar (const PackedFrame & in, const PlanarFrame & p)
{
  const PackedYuvLayout *l = packed_yuv_layout (in.format);
  fail_unless (l != nullptr);
  PackedFrame out = in;
  const int cw = (in.width + 1) / 2;
  for (int y = 0; y < in.height; ++y)
    for (int g = 0; g < cw; ++g) {
      uint8_t *q = &out.rows.pixels[size_t (y) * out.rows.width + 4 * size_t (g)];
      q[l->y0] = p.planes[0].at (2 * g, y);
      if (2 * g + 1 < in.width)
        q[l->y1] = p.planes[0].at (2 * g + 1, y);
      q[l->u] = p.planes[1].at (g, y);
      q[l->v] = p.planes[2].at (g, y);
    }
  return out;
}

/* What a plane filter must output for a packed 4:2:2 frame: `filter` on
 * luma, chroma and the unused luma carried. */
template < typename Filter > inline PackedFrame
reference_packed_yuv (const PackedFrame & in, Filter filter)
{
  PlanarFrame p = planar_of_packed (in);
  p.planes[0] = filter (p.planes[0]);
  return packed_of_planar (in, p);
}

}  // namespace test

/* Independent references for the equalizing elements, kept apart from the
 * plugin's own code so that the tests check it:
 *   - reference_clahe_levels: a transcription of OpenCV's CLAHE on 8-bit
 *     and 16-bit images (imgproc/src/clahe.cpp: copyMakeBorder with
 *     BORDER_REFLECT_101, CLAHE_CalcLut_Body, CLAHE_Interpolation_Body),
 *     with 256 or 65536 bins, or 2^b for images of b-bit levels;
 *   - SmoothedEqualizer / SmoothedClahe: temporal smoothing as
 *     docs/cudahisteq.md and docs/cudaclahe.md define it, written out
 *     from those pages. */
#pragma once

#include "test_common.h"

#include <algorithm>
#include <cmath>

namespace test {

/* cv::borderInterpolate for BORDER_REFLECT_101. */
inline int
opencv_reflect_101 (int p, int len)
{
  if (len == 1)
    return 0;
  do {
    if (p < 0)
      p = -p - 1 + 1;
    else
      p = len - 1 - (p - len) - 1;
  } while ((unsigned) p >= (unsigned) len);
  return p;
}

/* cv::saturate_cast<uchar>(float): cvRound (nearest, ties to even). */
inline uint8_t
opencv_saturate (float v)
{
  const int r = (int) std::nearbyint (v);
  return uint8_t (r < 0 ? 0 : r > 255 ? 255 : r);
}

/* cv::saturate_cast<ushort>(float), and its generalization to `top`. */
inline int
opencv_saturate_to (float v, int top)
{
  const int r = (int) std::nearbyint (v);
  return r < 0 ? 0 : r > top ? top : r;
}

/* The padded source and tile sizes of CLAHE_Impl::apply, for an image of
 * levels: Image (8-bit) or Image16 (CV_16UC1, or b-bit levels). */
template <typename Img> struct ClaheLayoutOf {
  Img ext;
  int tile_w, tile_h;
};
using ClaheLayout = ClaheLayoutOf<Image>;

template <typename Img> inline ClaheLayoutOf<Img>
clahe_layout (const Img & src, int tiles_x, int tiles_y)
{
  ClaheLayoutOf<Img> l;
  if (src.width % tiles_x == 0 && src.height % tiles_y == 0) {
    l.ext = src;
  } else {
    const int bottom = tiles_y - (src.height % tiles_y);
    const int right = tiles_x - (src.width % tiles_x);
    l.ext = Img (src.width + right, src.height + bottom);
    for (int y = 0; y < l.ext.height; ++y)
      for (int x = 0; x < l.ext.width; ++x)
        l.ext.at (x, y) = src.at (opencv_reflect_101 (x, src.width),
            opencv_reflect_101 (y, src.height));
  }
  l.tile_w = l.ext.width / tiles_x;
  l.tile_h = l.ext.height / tiles_y;
  return l;
}

template <typename Img> inline std::vector<int>
tile_histogram (const ClaheLayoutOf<Img> & l, int tx, int ty, int levels)
{
  std::vector<int> hist (levels, 0);
  for (int y = ty * l.tile_h; y < (ty + 1) * l.tile_h; ++y)
    for (int x = tx * l.tile_w; x < (tx + 1) * l.tile_w; ++x)
      hist[l.ext.at (x, y)]++;
  return hist;
}

/* CLAHE_Interpolation_Body, with the LUTs of every tile (tiles x levels). */
template <typename Img> inline Img
clahe_interpolate (const Img & src, const std::vector<int> & lut, int levels,
    int tiles_x, int tiles_y, int tile_w, int tile_h)
{
  Img dst (src.width, src.height);
  const float inv_tw = 1.0f / tile_w, inv_th = 1.0f / tile_h;
  for (int y = 0; y < src.height; ++y) {
    const float tyf = y * inv_th - 0.5f;
    int ty1 = (int) std::floor (tyf);
    int ty2 = ty1 + 1;
    const float ya = tyf - ty1, ya1 = 1.0f - ya;
    ty1 = std::max (ty1, 0);
    ty2 = std::min (ty2, tiles_y - 1);
    const int *plane1 = &lut[size_t (ty1) * tiles_x * levels];
    const int *plane2 = &lut[size_t (ty2) * tiles_x * levels];
    for (int x = 0; x < src.width; ++x) {
      const float txf = x * inv_tw - 0.5f;
      int tx1 = (int) std::floor (txf);
      int tx2 = tx1 + 1;
      const float xa = txf - tx1, xa1 = 1.0f - xa;
      tx1 = std::max (tx1, 0);
      tx2 = std::min (tx2, tiles_x - 1);
      const int v = src.at (x, y);
      const int ind1 = tx1 * levels + v, ind2 = tx2 * levels + v;
      const float res = (float (plane1[ind1]) * xa1 + float (plane1[ind2]) * xa) * ya1 +
          (float (plane2[ind1]) * xa1 + float (plane2[ind2]) * xa) * ya;
      dst.at (x, y) = opencv_saturate_to (res, levels - 1);
    }
  }
  return dst;
}

/* cv::createCLAHE(clip_limit, {tiles_x, tiles_y})->apply(src) with
 * `levels` bins: 256 for 8-bit images, 65536 for 16-bit ones. */
template <typename Img> inline Img
reference_clahe_levels (const Img & src, int levels, double clip_limit,
    int tiles_x, int tiles_y)
{
  const ClaheLayoutOf<Img> l = clahe_layout (src, tiles_x, tiles_y);
  const int area = l.tile_w * l.tile_h;
  const float lut_scale = float (levels - 1) / area;
  int clip = 0;
  if (clip_limit > 0.0)
    clip = std::max (int (clip_limit * area / levels), 1);

  std::vector<int> lut (size_t (tiles_x) * tiles_y * levels);
  for (int ty = 0; ty < tiles_y; ++ty)
    for (int tx = 0; tx < tiles_x; ++tx) {
      std::vector<int> hist = tile_histogram (l, tx, ty, levels);
      if (clip > 0) {
        int clipped = 0;
        for (int i = 0; i < levels; ++i)
          if (hist[i] > clip) {
            clipped += hist[i] - clip;
            hist[i] = clip;
          }
        const int batch = clipped / levels;
        int residual = clipped - batch * levels;
        for (int i = 0; i < levels; ++i)
          hist[i] += batch;
        if (residual != 0) {
          const int step = std::max (levels / residual, 1);
          for (int i = 0; i < levels && residual > 0; i += step, residual--)
            hist[i]++;
        }
      }
      int *t = &lut[(size_t (ty) * tiles_x + tx) * levels];
      int sum = 0;
      for (int i = 0; i < levels; ++i) {
        sum += hist[i];
        t[i] = opencv_saturate_to (sum * lut_scale, levels - 1);
      }
    }
  return clahe_interpolate (src, lut, levels, tiles_x, tiles_y, l.tile_w,
      l.tile_h);
}

inline Image
reference_clahe (const Image & src, double clip_limit, int tiles_x,
    int tiles_y)
{
  return reference_clahe_levels (src, 256, clip_limit, tiles_x, tiles_y);
}

/* ---------------------------------------------------- temporal smoothing
 * Each bin is kept in units of 2^-16 pixel. A new history starts at the
 * frame's counts; after that a bin becomes
 *   (w * past + (65536 - w) * count * 65536 + 32768) / 65536   (floor),
 * with w = round(temporal-smoothing * 65536). The mapping then follows the
 * single-frame rule on these values, each converted to float and scaled by
 * 2^-16 where the rule converts a count. */

inline uint32_t
smoothing_weight (double s)
{
  return uint32_t (std::floor (s * 65536 + 0.5));
}

inline uint64_t
blend_bin (uint64_t past, uint32_t count, uint32_t w, bool fresh)
{
  const uint64_t now = uint64_t (count) << 16;
  return fresh ? now : (w * past + (65536 - w) * now + 32768) >> 16;
}

inline float
pixels_of (uint64_t v)
{
  return float (v) / 65536.0f;
}

/* cudahisteq with temporal-smoothing on a sequence of same-size frames. */
struct SmoothedEqualizer {
  uint32_t w;
  uint64_t bins[256] = { 0 };
  bool fresh = true;

  explicit SmoothedEqualizer (double smoothing) : w (smoothing_weight (smoothing)) {}

  Image operator() (const Image & src) {
    uint32_t hist[256] = { 0 };
    for (uint8_t p : src.pixels)
      hist[p]++;
    for (int i = 0; i < 256; ++i)
      bins[i] = blend_bin (bins[i], hist[i], w, fresh);
    fresh = false;

    int first = 0;
    while (first < 255 && bins[first] == 0)
      ++first;
    uint64_t total = 0;
    for (uint64_t b : bins)
      total += b;
    uint8_t lut[256];
    if (bins[first] == total) {
      for (int i = 0; i < 256; ++i)
        lut[i] = uint8_t (i);
    } else {
      const float scale = 255.0f / pixels_of (total - bins[first]);
      uint64_t sum = 0;
      for (int i = 0; i < 256; ++i) {
        if (i <= first) {
          lut[i] = 0;
          continue;
        }
        sum += bins[i];
        lut[i] = opencv_saturate (pixels_of (sum) * scale);
      }
    }
    Image dst (src.width, src.height);
    for (size_t k = 0; k < src.pixels.size (); ++k)
      dst.pixels[k] = lut[src.pixels[k]];
    return dst;
  }
};

/* cudaclahe with temporal-smoothing: each tile's histogram is blended as
 * above, then clipped at clip * 65536 units; the whole pixels cut off are
 * redistributed as in OpenCV (a fraction of a pixel is dropped). Images of
 * `levels` levels (Image for 256, Image16 otherwise). */
template <typename Img> struct SmoothedClaheOf {
  double clip_limit;
  int tiles_x, tiles_y;
  int levels;
  uint32_t w;
  std::vector<uint64_t> bins;
  bool fresh = true;

  SmoothedClaheOf (double clip, int tx, int ty, double smoothing,
      int levels_ = 256)
      : clip_limit (clip), tiles_x (tx), tiles_y (ty), levels (levels_),
      w (smoothing_weight (smoothing)), bins (size_t (tx) * ty * levels_, 0) {}

  Img operator() (const Img & src) {
    const ClaheLayoutOf<Img> l = clahe_layout (src, tiles_x, tiles_y);
    const int area = l.tile_w * l.tile_h;
    const float lut_scale = float (levels - 1) / area;
    uint64_t limit = 0;
    if (clip_limit > 0.0)
      limit = uint64_t (std::max (int (clip_limit * area / levels), 1)) << 16;

    std::vector<int> lut (size_t (tiles_x) * tiles_y * levels);
    std::vector<uint64_t> h (levels);
    for (int t = 0; t < tiles_x * tiles_y; ++t) {
      const std::vector<int> hist = tile_histogram (l, t % tiles_x,
          t / tiles_x, levels);
      uint64_t *b = &bins[size_t (t) * levels];
      for (int i = 0; i < levels; ++i)
        b[i] = blend_bin (b[i], uint32_t (hist[i]), w, fresh);
      std::copy (b, b + levels, h.begin ());
      if (limit) {
        uint64_t cut = 0;
        for (int i = 0; i < levels; ++i)
          if (h[i] > limit) {
            cut += h[i] - limit;
            h[i] = limit;
          }
        const uint64_t whole = cut >> 16;
        for (int i = 0; i < levels; ++i)
          h[i] += (whole / levels) << 16;
        int residual = int (whole % levels);
        if (residual != 0) {
          const int step = std::max (levels / residual, 1);
          for (int i = 0; i < levels && residual > 0; i += step, residual--)
            h[i] += 65536;
        }
      }
      uint64_t sum = 0;
      for (int i = 0; i < levels; ++i) {
        sum += h[i];
        lut[size_t (t) * levels + i] =
            opencv_saturate_to (pixels_of (sum) * lut_scale, levels - 1);
      }
    }
    fresh = false;
    return clahe_interpolate (src, lut, levels, tiles_x, tiles_y, l.tile_w,
        l.tile_h);
  }
};
using SmoothedClahe = SmoothedClaheOf<Image>;

}  // namespace test

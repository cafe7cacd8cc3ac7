/* cudasharpen's definition (docs/cudasharpen.md), written out directly: the
 * Gaussian as one 2-D sum over the window (not two passes), its taps from
 * OpenCV's steps in their own order, borders mirrored (reflect-101), and the
 * unsharp formula with a fused multiply-add. For small test frames. */
#pragma once

#include "deep_frames.h"

#include <cmath>
#include <string>
#include <vector>

namespace test {

struct SharpenSettings {
  const char *kernel = "unsharp";
  double amount = 1.0;
  double radius = 1.0;
  int threshold = 0;

  bool laplacian () const { return std::string (kernel) == "laplacian-3x3"; }

  std::string launch (const char *backend) const {
    return std::string ("cudasharpen backend=") + backend + " kernel=" +
        kernel + " amount=" + std::to_string (amount) + " radius=" +
        std::to_string (radius) + " threshold=" + std::to_string (threshold);
  }
};

/* The defaults, light and strong masks, amounts whose products are inexact
 * in float, thresholds, the narrowest and widest blurs, and the 3x3 kernel. */
static const SharpenSettings kSharpenSets[] = {
  {"unsharp", 1.0, 1.0, 0},
  {"unsharp", 0.5, 3.0, 0},
  {"unsharp", 1.5, 0.5, 5},
  {"unsharp", 0.7, 2.2, 2},
  {"unsharp", 20.0, 16.0, 0},
  {"unsharp", 0.3, 0.1, 0},
  {"unsharp", 2.0, 0.25, 0},
  {"unsharp", 1.3, 5.5, 10},
  {"unsharp", 0.0, 4.0, 0},
  {"laplacian-3x3", 1.0, 1.0, 0},
};

/* OpenCV's getGaussianKernelBitExact then getGaussianKernelFixedPoint_ED,
 * step by step: for CV_8U, 3 sigma each side and 8 fraction bits; for
 * CV_16U (`deep`), 4 sigma each side and 16 fraction bits. */
inline std::vector<int>
opencv_gaussian_taps (double sigma, bool deep = false)
{
  const int n = int (std::nearbyint (sigma * (deep ? 4 : 3) * 2 + 1)) | 1;
  const int one = deep ? 65536 : 256;
  const int half = (n - 1) / 2;
  std::vector<double> k (n);
  double sum = 0;
  for (int i = 0; i < half; ++i) {
    const double d = i - (n - 1) * 0.5;
    k[i] = std::exp (d * d * (-0.5 / (sigma * sigma)));
    sum += k[i];
  }
  sum = sum * 2 + 1;
  const double norm = 1 / sum;
  std::vector<int> taps (n);
  double err = 0;
  int outer = 0;
  for (int i = 0; i < half; ++i) {
    const double v = k[i] * norm * one + err;
    taps[i] = taps[n - 1 - i] = int (std::nearbyint (v));
    err = v - taps[i];
    outer += taps[i];
  }
  taps[half] = one - 2 * outer;
  return taps;
}

/* The definition on an image of levels of `bits` bits (Image: 8, Image16:
 * up to 16): deeper levels take OpenCV's CV_16U Gaussian, saturate at
 * 2^bits - 1, and the threshold in 8-bit levels scaled by 2^(bits-8). */
template <typename Img>
inline Img
reference_sharpen_levels (const Img & src, const SharpenSettings & s, int bits)
{
  using Sample = std::decay_t<decltype (src.pixels[0])>;
  const int top = (1 << bits) - 1;
  Img out (src.width, src.height);
  if (s.laplacian ()) {
    for (int y = 0; y < src.height; ++y)
      for (int x = 0; x < src.width; ++x) {
        auto at = [&](int dx, int dy) {
          return int (src.at (mirror (x + dx, src.width),
                  mirror (y + dy, src.height)));
        };
        const int v = 5 * at (0, 0) - at (-1, 0) - at (1, 0) - at (0, -1) -
            at (0, 1);
        out.at (x, y) = Sample (v < 0 ? 0 : v > top ? top : v);
      }
    return out;
  }
  const bool deep = bits > 8;
  const std::vector<int> taps = opencv_gaussian_taps (s.radius, deep);
  const int r = int (taps.size ()) / 2;
  const int frac2 = deep ? 32 : 16;
  const int threshold = deep ? s.threshold << (bits - 8) : s.threshold;
  const float w_src = float (1 + s.amount), w_blur = float (-s.amount);
  for (int y = 0; y < src.height; ++y)
    for (int x = 0; x < src.width; ++x) {
      int64_t acc = 0;
      for (int j = -r; j <= r; ++j)
        for (int i = -r; i <= r; ++i)
          acc += int64_t (taps[j + r]) * taps[i + r] *
              src.at (mirror (x + i, src.width), mirror (y + j,
                  src.height));
      const int blur = int ((acc + (int64_t (1) << (frac2 - 1))) >> frac2);
      const int level = src.at (x, y);
      int v = int (std::nearbyint (std::fma (float (level), w_src,
                  float (blur) * w_blur)));
      v = v < 0 ? 0 : v > top ? top : v;
      out.at (x, y) = Sample (std::abs (level - blur) < threshold ? level : v);
    }
  return out;
}

inline Image
reference_sharpen (const Image & src, const SharpenSettings & s)
{
  return reference_sharpen_levels (src, s, 8);
}

}  // namespace test

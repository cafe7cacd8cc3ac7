/* Brute-force non-local means, straight from the definition: for every pixel
 * and every offset, the whole patch distance summed directly in double
 * precision, borders mirrored (reflect-101). Slow; for small test frames. */
#pragma once

#include "test_common.h"

#include <algorithm>
#include <cmath>

namespace test {

struct NlmSettings {
  double h = 10;
  int patch = 7;
  int search = 21;
  double sigma = 0;
  bool gaussian = false;

  std::string launch (const char *backend) const {
    return std::string ("cudanlm backend=") + backend + " strength=" +
        std::to_string (h) + " patch-size=" + std::to_string (patch) +
        " search-size=" + std::to_string (search) + " noise-sigma=" +
        std::to_string (sigma) + " patch-weighting=" +
        (gaussian ? "gaussian" : "box");
  }
};

/* Parameter sets the element tests run: box and Gaussian, patch 1 to 15,
 * search 3 to 35, with and without noise-sigma. */
static const NlmSettings kNlmParamSets[] = {
  {10, 7, 21, 0, false},        /* defaults */
  {20, 3, 7, 5, false},
  {15, 5, 11, 0, true},
  {8, 1, 3, 0, false},
  {25, 15, 35, 10, false},
  {12, 7, 9, 3, true},
  {30, 13, 21, 0, true},
};

/* One frame through a fresh cudanlm harness. */
inline Image
run_nlm (const NlmSettings & s, const char *backend, const Image & img)
{
  GstHarness *h = harness_for (s.launch (backend).c_str (), img.width,
      img.height);
  Image out = push_pull (h, img);
  gst_harness_teardown (h);
  return out;
}

inline Image
reference_nlm (const Image & src, const NlmSettings & s)
{
  const int rp = s.patch / 2, rs = s.search / 2;
  std::vector<double> g (s.patch, 1.0);
  if (s.gaussian) {
    const double sd = s.patch / 4.0;
    for (int k = -rp; k <= rp; ++k)
      g[k + rp] = std::exp (-(k * k) / (2 * sd * sd));
  }
  double norm = 0;
  for (int ky = 0; ky < s.patch; ++ky)
    for (int kx = 0; kx < s.patch; ++kx)
      norm += g[ky] * g[kx];

  auto px = [&](int x, int y) {
    return double (src.at (mirror (x, src.width), mirror (y, src.height)));
  };
  Image out (src.width, src.height);
  for (int y = 0; y < src.height; ++y)
    for (int x = 0; x < src.width; ++x) {
      double wsum = 0, vsum = 0;
      for (int dy = -rs; dy <= rs; ++dy)
        for (int dx = -rs; dx <= rs; ++dx) {
          double d2 = 0;
          for (int ky = -rp; ky <= rp; ++ky)
            for (int kx = -rp; kx <= rp; ++kx) {
              const double diff = px (x + kx, y + ky) - px (x + dx + kx,
                  y + dy + ky);
              d2 += g[ky + rp] * g[kx + rp] * diff * diff;
            }
          d2 /= norm;
          const double w = std::exp (-std::max (d2 - 2 * s.sigma * s.sigma,
                  0.0) / (s.h * s.h));
          wsum += w;
          vsum += w * px (x + dx, y + dy);
        }
      out.at (x, y) = uint8_t (std::clamp (std::lround (vsum / wsum), 0L,
              255L));
    }
  return out;
}

/* Every pixel within `tolerance` levels; reports the worst one otherwise. */
inline void
assert_images_close (const Image & got, const Image & want, int tolerance,
    const char *what)
{
  fail_unless_equals_int (got.width, want.width);
  fail_unless_equals_int (got.height, want.height);
  for (int y = 0; y < want.height; ++y)
    for (int x = 0; x < want.width; ++x)
      if (std::abs (int (got.at (x, y)) - int (want.at (x, y))) > tolerance)
        fail ("%s (%dx%d): pixel (%d,%d) is %d, expected %d +- %d", what,
            want.width, want.height, x, y, got.at (x, y), want.at (x, y),
            tolerance);
}

inline Image
noisy_step_image (std::mt19937 & rng, int w, int h, double sigma)
{
  std::normal_distribution<double> noise (0.0, sigma);
  Image img (w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      img.at (x, y) = uint8_t (std::clamp (std::lround ((x < w / 2 ? 60 : 190)
                  + noise (rng)), 0L, 255L));
  return img;
}

}  // namespace test

/* Brute-force non-local means, straight from the definition: for every pixel
 * and every offset, the whole patch distance summed directly in double
 * precision, borders mirrored (reflect-101). Slow; for small test frames. */
#pragma once

#include "deep_frames.h"

#include <cudafilters/nlm_params.h>

#include <algorithm>
#include <cmath>

namespace test {

/* cudanlm's settings. chroma is the chroma strength: 0 (the default here)
 * leaves chroma as it is, so that tests of luma can check chroma is
 * carried; -1 means the same as h. */
struct NlmSettings {
  double h = 10;
  int patch = 7;
  int search = 21;
  double sigma = 0;
  bool gaussian = false;
  double chroma = 0;
  int radius = 0;

  std::string launch (const char *backend) const {
    return std::string ("cudanlm auto-strength=false backend=") + backend + " strength=" +
        std::to_string (h) + " patch-size=" + std::to_string (patch) +
        " search-size=" + std::to_string (search) + " noise-sigma=" +
        std::to_string (sigma) + " patch-weighting=" +
        (gaussian ? "gaussian" : "box") + " chroma-strength=" +
        std::to_string (chroma) + " temporal-radius=" + std::to_string (radius);
  }

  /* The same settings for the engines: the strength given, as launch ()
   * gives it. */
  cudafilters::NlmParams params () const {
    cudafilters::NlmParams p;
    p.auto_strength = false;
    p.h = float (h);
    p.patch_size = patch;
    p.search_size = search;
    p.noise_sigma = float (sigma);
    p.gaussian = gaussian;
    p.chroma_h = float (chroma);
    p.temporal_radius = radius;
    return p;
  }
};

/* The definition's patch weights: 1-D taps (1 for box patches, a Gaussian
 * of standard deviation patch / 4 otherwise), the 2-D weight of (kx, ky)
 * being g[kx] g[ky]; and their sum over the patch, the distance's norm. */
struct ReferencePatch {
  std::vector<double> g;
  double norm = 0;

  explicit ReferencePatch (const NlmSettings & s) : g (s.patch, 1.0) {
    const int rp = s.patch / 2;
    if (s.gaussian) {
      const double sd = s.patch / 4.0;
      for (int k = -rp; k <= rp; ++k)
        g[k + rp] = std::exp (-(k * k) / (2 * sd * sd));
    }
    for (int ky = 0; ky < s.patch; ++ky)
      for (int kx = 0; kx < s.patch; ++kx)
        norm += g[ky] * g[kx];
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
  return push_pull_image (s.launch (backend), img);
}

/* The definition on an image of levels of `bits` bits (Image: 8, Image16:
 * up to 16). Levels enter in 8-bit units (level / 2^(bits-8)), as the
 * element's strength and noise-sigma are; the result is rounded back to
 * levels. */
template <typename Img>
inline Img
reference_nlm_levels (const Img & src, const NlmSettings & s, int bits)
{
  const int rp = s.patch / 2, rs = s.search / 2;
  const double unit = std::ldexp (1.0, 8 - bits);
  const long top = (1L << bits) - 1;
  using Sample = std::decay_t<decltype (src.pixels[0])>;
  const ReferencePatch patch (s);
  const std::vector<double> & g = patch.g;
  const double norm = patch.norm;

  auto px = [&](int x, int y) {
    return unit * double (src.at (mirror (x, src.width), mirror (y,
                src.height)));
  };
  Img out (src.width, src.height);
  for (int y = 0; y < src.height; ++y)
    for (int x = 0; x < src.width; ++x) {
      double wsum = 0, vsum = 0;
      for (int dy = -rs; dy <= rs; ++dy)
        for (int dx = -rs; dx <= rs; ++dx) {
          /* The search window is the disk of radius rs. */
          if (dx * dx + dy * dy > rs * rs)
            continue;
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
      out.at (x, y) = Sample (std::clamp (std::lround (vsum
                  / wsum / unit), 0L, top));
    }
  return out;
}

inline Image
reference_nlm (const Image & src, const NlmSettings & s)
{
  return reference_nlm_levels (src, s, 8);
}

/* Every pixel within `tolerance` levels; reports the worst one otherwise. */
template <typename Img>
inline void
assert_images_close (const Img & got, const Img & want, int tolerance,
    const char *what)
{
  fail_unless_equals_int (got.width, want.width);
  fail_unless_equals_int (got.height, want.height);
  int worst = 0, wx = 0, wy = 0;
  for (int y = 0; y < want.height; ++y)
    for (int x = 0; x < want.width; ++x) {
      const int d = std::abs (int (got.at (x, y)) - int (want.at (x, y)));
      if (d > worst) {
        worst = d;
        wx = x;
        wy = y;
      }
    }
  if (worst > tolerance)
    fail ("%s (%dx%d): pixel (%d,%d) is %d, expected %d +- %d", what,
        want.width, want.height, wx, wy, int (got.at (wx, wy)),
        int (want.at (wx, wy)), tolerance);
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

/* The noisy step at `bits` bits: the 8-bit scene's levels scaled up, noise
 * of `sigma` 8-bit units at full precision. */
inline Image16
noisy_step_levels (std::mt19937 & rng, int w, int h, int bits, double sigma)
{
  const double scale = std::ldexp (1.0, bits - 8);
  std::normal_distribution<double> noise (0.0, sigma);
  Image16 img (w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      img.at (x, y) = uint16_t (std::clamp (std::lround (((x < w / 2 ? 60 : 190)
                      + noise (rng)) * scale), 0L, (1L << bits) - 1));
  return img;
}

/* How far the element may be from the definition, or from the other
 * backend, in levels at every depth: float against double rounding of the
 * weights (and one ulp or two between the exp2 implementations) can move a
 * result across a rounding boundary. Deeper levels are not integers in
 * 8-bit units, so box patch distances are no longer exact in float; that
 * moves weights by about 1e-6 of themselves, far below one level. */
constexpr int kNlmTolerance = 1;

/* The GPU computes patch distances on the tensor cores from samples in f16
 * (11 significant bits, docs/cudanlm.md): exact up to 10 bits, so 8- and
 * 10-bit frames stay within kNlmTolerance of the CPU. Deeper samples are
 * rounded there (the weighted means still take them at full precision),
 * which moves outputs by up to about a tenth of an 8-bit level; allowed: a
 * quarter. */
inline int
gpu_nlm_tolerance (int bits)
{
  return std::max (kNlmTolerance, 1 << std::max (0, bits - 10));
}

/* strength and noise-sigma are in 8-bit units at every depth: a frame of
 * 8-bit levels scaled to `fmt`'s depth goes through the same arithmetic
 * (its levels in 8-bit units are the same integers), so each output level
 * rounds to that of the 8-bit frame: within half an 8-bit level of it. */
inline void
assert_deep_follows_8bit (const char *backend, const NlmSettings & s,
    GstVideoFormat fmt, const Image & img8, std::mt19937 & rng)
{
  const DeepLayout l = deep_layout (fmt);
  const int up = l.bits - 8;
  Image16 levels (img8.width, img8.height);
  for (size_t k = 0; k < img8.pixels.size (); ++k)
    levels.pixels[k] = uint16_t (img8.pixels[k] << up);
  const Image out8 = run_nlm (s, backend, img8);
  const Image16 out = luma_levels_through (s.launch (backend), fmt, levels, rng);
  const int half = 1 << up >> 1;
  for (int y = 0; y < img8.height; ++y)
    for (int x = 0; x < img8.width; ++x) {
      const int want = out8.at (x, y) << up, got = out.at (x, y);
      if (std::abs (got - want) > half)
        fail ("%s %s: (%d, %d) is %d, the 8-bit frame gives %d (%d at %d "
            "bits)", s.launch (backend).c_str (), gst_video_format_to_string
            (fmt), x, y, got, out8.at (x, y), want, l.bits);
    }
}

}  // namespace test

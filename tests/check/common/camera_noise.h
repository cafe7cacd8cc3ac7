/* Noise as a camera leaves it, for the noise estimate's tests: spatially
 * correlated, as demosaicing makes it, and frames of studies/camera_set.py's
 * simulated camera kept in tests/media. */
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace test {

/* White Gaussian noise filtered with [1 c 1] / (c + 2) along rows and
 * along columns, scaled back to a standard deviation of `sigma`: w x h
 * values, row by row. Neighbours correlate by 2c / (c^2 + 2): c = 4 gives
 * 0.44, a bilinear demosaic's luma (0.42 measured, pixels two apart 0.07);
 * c = 8 gives 0.24, its 4:2:0 chroma (0.26). */
inline std::vector<double>
correlated_noise (int w, int h, double sigma, double c, std::mt19937 & rng)
{
  std::normal_distribution<double> n (0.0, 1.0);
  const int W = w + 2, H = h + 2;
  std::vector<double> white (size_t (W) * H), rows (size_t (W) * H), out (size_t (w) * h);
  for (double &v : white)
    v = n (rng);
  const double k = c + 2;
  for (int y = 0; y < H; ++y)
    for (int x = 1; x + 1 < W; ++x)
      rows[size_t (y) * W + x] = (white[size_t (y) * W + x - 1] + c * white[size_t (y) * W + x]
          + white[size_t (y) * W + x + 1]) / k;
  /* Each pass leaves sqrt (c^2 + 2) / k of the standard deviation. */
  const double gain = (c * c + 2) / (k * k);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      out[size_t (y) * w + x] = sigma / gain * (rows[size_t (y) * W + x + 1]
          + c * rows[size_t (y + 1) * W + x + 1] + rows[size_t (y + 2) * W + x + 1]) / k;
  return out;
}

/* A binary PGM (P5, 8-bit) of tests/media; empty pixels if it cannot be
 * read. */
struct Pgm {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;
};

inline Pgm
read_pgm (const std::string & path)
{
  Pgm p;
  FILE *f = std::fopen (path.c_str (), "rb");
  if (!f)
    return p;
  int top = 0;
  if (std::fscanf (f, "P5 %d %d %d", &p.width, &p.height, &top) == 3 && top == 255
      && std::fgetc (f) != EOF) {
    p.pixels.resize (size_t (p.width) * p.height);
    if (std::fread (p.pixels.data (), 1, p.pixels.size (), f) != p.pixels.size ())
      p.pixels.clear ();
  }
  std::fclose (f);
  return p;
}

}  // namespace test

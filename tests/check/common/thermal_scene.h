/* The scene of a thermal camera's frame, shared by the deep tests
 * (deep_frames.h) and the benchmarks (bench/bench_util.h): free of
 * GStreamer, so that both can include it. */
#pragma once

#include <algorithm>
#include <cmath>

/* The noiseless level at (x, y) of a w x h frame whose levels run to @top:
 * a smooth background at about a third of the range, one hot object at
 * 85%. @phase shifts the background's ripple, so that frames can differ. */
inline double
thermal_scene_level (int x, int y, int w, int h, double top, int phase = 0)
{
  double v = top * (0.30 + 0.05 * std::sin ((x + phase) * 0.05) +
      0.04 * y / std::max (h, 1));
  const double dx = x - 0.7 * w, dy = y - 0.4 * h;
  if (dx * dx + dy * dy < 0.01 * w * h)
    v = top * 0.85;
  return v;
}

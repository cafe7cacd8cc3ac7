#include <cudafilters/plane_levels.h>

#include "cpu_histogram.h"

namespace cudafilters {

LevelSummary summarize_levels(const uint32_t hist[kHistBins]) {
  LevelSummary s;
  uint64_t pixels = 0, sum = 0;
  s.min = -1;
  for (int b = 0; b < kHistBins; ++b) {
    if (hist[b] == 0) continue;
    if (s.min < 0) s.min = b;
    s.max = b;
    pixels += hist[b];
    sum += static_cast<uint64_t>(b) * hist[b];
  }
  if (s.min < 0) s.min = 0;
  s.mean = pixels ? static_cast<double>(sum) / static_cast<double>(pixels) : 0.0;
  return s;
}

void count_levels_cpu(ConstPlane plane, uint32_t hist[kHistBins]) { count_plane(plane, hist); }

}  // namespace cudafilters

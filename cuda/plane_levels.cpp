#include "plane_levels.h"

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

void count_levels_cpu(ConstPlane plane, uint32_t hist[kHistBins]) {
  for (int b = 0; b < kHistBins; ++b) hist[b] = 0;
  for (int y = 0; y < plane.height; ++y) {
    const uint8_t *row = plane.data + static_cast<size_t>(y) * plane.stride;
    for (int x = 0; x < plane.width; ++x) ++hist[row[x]];
  }
}

}  // namespace cudafilters

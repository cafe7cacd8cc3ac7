#include <cudafilters/histeq_cpu.h>

#include "cpu_histogram.h"

namespace cudafilters {

namespace {

// OpenCV's rule on a histogram of any fixed point (unit: one pixel in it).
template <typename Count>
void equalize_lut(const Count *hist, float unit, uint8_t lut[kHistBins]) {
  int first = 0;
  while (first < kHistBins - 1 && hist[first] == 0) ++first;
  uint64_t total = 0;
  for (int b = 0; b < kHistBins; ++b) total += hist[b];
  uint64_t cdf = 0;
  for (int b = 0; b < kHistBins; ++b) {
    cdf += hist[b];
    lut[b] = equalized_level(b, first, hist[first], total, cdf, unit);
  }
}

}  // namespace

void equalize_hist_cpu(ConstPlane src, Plane dst) {
  uint32_t hist[kHistBins];
  count_plane(src, hist);
  uint8_t lut[kHistBins];
  equalize_lut(hist, 1.f, lut);
  map_plane(src, dst, lut);
}

void HistEqCpu::process(ConstPlane src, Plane dst) {
  HistoryShape shape;
  shape.width = src.width;
  shape.height = src.height;
  const HistoryMode mode = temporal_.next_frame(shape);
  if (mode == HistoryMode::kOff) {
    equalize_hist_cpu(src, dst);
    return;
  }
  uint32_t hist[kHistBins];
  count_plane(src, hist);
  for (int b = 0; b < kHistBins; ++b)
    history_[b] = next_history_bin(mode, history_[b], hist[b], temporal_.weight());
  uint8_t lut[kHistBins];
  equalize_lut(history_, kHistoryUnit, lut);
  map_plane(src, dst, lut);
}

}  // namespace cudafilters

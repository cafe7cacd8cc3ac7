#include "histeq_cpu.h"

#include <cmath>

namespace cudafilters {

void build_equalize_lut(const uint32_t hist[kHistBins], uint64_t total, uint8_t lut[kHistBins]) {
  int first = 0;
  while (first < kHistBins - 1 && hist[first] == 0) ++first;

  if (hist[first] == total) {
    for (int i = 0; i < kHistBins; ++i) lut[i] = static_cast<uint8_t>(i);
    return;
  }

  // Same arithmetic as OpenCV: a float scale, an integer running sum
  // converted to float for the product, rounding to nearest even.
  const float scale = (kHistBins - 1.f) / static_cast<float>(total - hist[first]);
  for (int i = 0; i <= first; ++i) lut[i] = 0;
  uint32_t sum = 0;
  for (int i = first + 1; i < kHistBins; ++i) {
    sum += hist[i];
    const long v = std::lrintf(static_cast<float>(sum) * scale);
    lut[i] = static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
  }
}

void equalize_hist_cpu(ConstPlane src, Plane dst) {
  uint32_t hist[kHistBins] = {};
  for (int y = 0; y < src.height; ++y) {
    const uint8_t *row = src.data + y * src.stride;
    for (int x = 0; x < src.width; ++x) ++hist[row[x]];
  }

  uint8_t lut[kHistBins];
  build_equalize_lut(hist, static_cast<uint64_t>(src.width) * src.height, lut);

  for (int y = 0; y < src.height; ++y) {
    const uint8_t *in = src.data + y * src.stride;
    uint8_t *out = dst.data + y * dst.stride;
    for (int x = 0; x < src.width; ++x) out[x] = lut[in[x]];
  }
}

}  // namespace cudafilters

#include <cudafilters/plane_levels.h>

#include "noise_estimate.h"

#include "cpu_histogram.h"
#include "equalize_math.h"

#include <algorithm>

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
  if (!plane.samples.deep()) {
    count_plane(plane, hist);
    return;
  }
  std::fill(hist, hist + kHistBins, 0u);
  const SampleLayout l = plane.samples;
  for (int y = 0; y < plane.height; ++y) {
    const uint16_t *row = row16(plane, y);
    for (int x = 0; x < plane.width; ++x)
      ++hist[coarse_bin(sample_level(row[x], l.shift, l.max_level()), l.bits)];
  }
}

}  // namespace cudafilters

namespace cudafilters {

void measure_levels_cpu(ConstPlane in, ConstPlane out, FrameLevels &levels,
                        const FramePlanes *in_frame) {
  count_levels_cpu(in, levels.input);
  count_levels_cpu(out, levels.output);
  // The bands' tables together are the plane's: one walk for both.
  NoiseCurveTable curve;
  curve.add(in);
  const bool has_chroma = in_frame && in_frame->has_chroma();
  NoiseTable chroma;
  if (has_chroma) {
    chroma.add(in_frame->u, in_frame->chroma_step);
    chroma.add(in_frame->v, in_frame->chroma_step);
  }
  const FrameNoise noise =
      frame_noise_of(curve.readings(), has_chroma, has_chroma ? chroma.readings() : NoiseReadings{});
  levels.noise_sigma = noise.luma.sigma;
  levels.noise_sigma_chroma = has_chroma ? noise.chroma.sigma : -1.0;
  const std::array<double, kNoiseBands> bands = curve.sigmas(noise.luma.correlated);
  std::copy(bands.begin(), bands.end(), levels.noise_curve);
}

}  // namespace cudafilters

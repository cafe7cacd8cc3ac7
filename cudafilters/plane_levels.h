// Level histograms of a filtered plane before and after filtering, for the
// elements' statistics messages: counted on the CPU, or on the GPU on the
// frame's stream and copied into page-locked memory there, so the host reads
// them after the frame's one synchronisation.
#pragma once

#include "frame_planes.h"
#include "plane.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

namespace cudafilters {

// The input's noise level function has this many bands of brightness: band
// b holds the pixels whose 3x3 mean lies in [b, b + 1) eighths of the
// plane's range (8-bit levels 32 b to 32 b + 31).
constexpr int kNoiseCurveBands = 8;

// Levels of planes deeper than 8 bits are counted by their top 8 significant
// bits, so every histogram has 256 bins.
struct FrameLevels {
  uint32_t input[kHistBins];
  uint32_t output[kHistBins];
  // The input's noise, a robust estimate of its standard deviation in 8-bit
  // units (docs/noise-estimation.md): of the plane counted, and of the two
  // chroma channels together where the frame's were given (else -1).
  double noise_sigma;
  double noise_sigma_chroma;
  // The same estimate of the plane counted, band by band of brightness
  // (kNoiseCurveBands); -1 for a band of too few pixels.
  double noise_curve[kNoiseCurveBands];
};

struct LevelSummary {
  int min = 0;
  int max = 0;
  double mean = 0;
};

// The lowest and highest occupied level and the mean level of a histogram.
LevelSummary summarize_levels(const uint32_t hist[kHistBins]);

// A host plane's histogram.
void count_levels_cpu(ConstPlane plane, uint32_t hist[kHistBins]);

// The levels of host planes: in and out counted, in's noise estimated, and
// the noise of in_frame's chroma where it has chroma (null: none given).
void measure_levels_cpu(ConstPlane in, ConstPlane out, FrameLevels &levels,
                        const FramePlanes *in_frame = nullptr);

class LevelCounterGpu {
 public:
  // Allocates in the current context.
  LevelCounterGpu();
  ~LevelCounterGpu();
  LevelCounterGpu(LevelCounterGpu &&) noexcept;
  LevelCounterGpu &operator=(LevelCounterGpu &&) noexcept;
  // in and out are device planes of equal size; the counts and in's noise
  // (with in_frame's chroma, where given and it has chroma) are queued on
  // `stream` and land in result() once it has been synchronised.
  void enqueue(ConstPlane in, ConstPlane out, cudaStream_t stream,
               const FramePlanes *in_frame = nullptr);
  FrameLevels result() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudafilters

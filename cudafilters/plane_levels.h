// Level histograms of a filtered plane before and after filtering, for the
// elements' statistics messages: counted on the CPU, or on the GPU on the
// frame's stream and copied into page-locked memory there, so the host reads
// them after the frame's one synchronisation.
#pragma once

#include "cuda_memory.h"
#include "plane.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace cudafilters {

// Levels of planes deeper than 8 bits are counted by their top 8 significant
// bits, so every histogram has 256 bins.
struct FrameLevels {
  uint32_t input[kHistBins];
  uint32_t output[kHistBins];
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

class LevelCounterGpu {
 public:
  // Allocates in the current context.
  LevelCounterGpu();
  // in and out are device planes of equal size; the counts are queued on
  // `stream` and land in result() once it has been synchronised.
  void enqueue(ConstPlane in, ConstPlane out, cudaStream_t stream);
  const FrameLevels &result() const { return *reinterpret_cast<const FrameLevels *>(host_.data()); }

 private:
  DeviceArray<uint32_t> counts_;  // input then output, 256 each
  PinnedBuffer host_;
  int sm_count_ = 1;
};

}  // namespace cudafilters

// Histograms and look-up-table mapping of 8-bit host planes, spread over the
// shared thread pool where the frame is large enough to be worth it. Shared
// by the CPU paths of every element.
#pragma once

#include <cudafilters/plane.h>

#include "equalize_math.h"

#include <cstdint>
#include <vector>

namespace cudafilters {

// Below this many pixels a frame is not worth splitting across threads: the
// hand-off to the pool costs more than it saves.
constexpr int64_t kParallelPixels = 64 * 1024;

// Adds the n levels at p to four interleaved histograms. Runs of equal
// levels (flat regions) would otherwise make every increment wait for the
// previous one to reach memory.
void count_span(const uint8_t *p, int n, uint32_t sub[4][kHistBins]);

// hist = the histogram of the whole plane.
void count_plane(ConstPlane src, uint32_t hist[kHistBins]);

// dst = lut[src], pixel by pixel; src and dst are of equal size and may be
// the same plane.
void map_plane(ConstPlane src, Plane dst, const uint8_t lut[kHistBins]);

// Deep planes (16-bit words, SampleLayout l): hist (l.levels() bins) = the
// histogram of the plane's levels. scratch holds partial histograms between
// calls, so a stream of frames does not allocate per frame.
void count_plane_deep(ConstPlane src, SampleLayout l, std::vector<uint32_t> &scratch,
                      uint32_t *hist);

// dst = lut[level of src], word by word; the LUT holds output words (the
// level already shifted into place).
void map_plane_deep(ConstPlane src, Plane dst, SampleLayout l, const uint16_t *lut);

}  // namespace cudafilters

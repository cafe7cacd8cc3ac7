// What SharpenCpu and SharpenGpu keep between frames: the parameters and the
// fixed-point Gaussian taps their radius gives, for 8-bit and for deeper
// planes. Private to the engine library.
#pragma once

#include <cudafilters/plane.h>
#include <cudafilters/sharpen_params.h>

#include "sharpen_taps.h"

#include <cstdint>
#include <vector>

namespace cudafilters {

struct SharpenState {
  SharpenParams params;
  std::vector<uint32_t> taps = sharpen_gaussian_taps(params.radius);
  std::vector<uint32_t> deep_taps = sharpen_gaussian_taps(params.radius, true);

  // p must be valid; the taps are computed again only for a new radius.
  void set(const SharpenParams &p) {
    if (p.radius != params.radius) {
      taps = sharpen_gaussian_taps(p.radius);
      deep_taps = sharpen_gaussian_taps(p.radius, true);
    }
    params = p;
  }
  // The taps for planes of layout l.
  const std::vector<uint32_t> &taps_for(SampleLayout l) const { return l.deep() ? deep_taps : taps; }
};

}  // namespace cudafilters

// Non-local means on the CPU: the same arithmetic as the GPU kernel (exact
// integer-valued patch distances for box patches, the same weight formula
// and accumulation order), spread over the CPU's cores in bands of rows.
// Memory per band is O(width x (band + patch)), whatever the frame size.
#pragma once

#include "hd_math.h"
#include "nlm_params.h"
#include "plane.h"

namespace cudafilters {

// src and dst are host planes of equal size; p must be valid
// (nlm_params_error(p) empty). Borders are mirrored (reflect-101).
void nlm_cpu(ConstPlane src, Plane dst, const NlmParams &p);

}  // namespace cudafilters

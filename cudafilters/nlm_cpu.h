// Non-local means on the CPU: the same arithmetic as the GPU kernel (levels
// in 8-bit units, see nlm_level_unit; exact integer-valued patch distances
// for box patches on 8-bit frames; the same weight formula and accumulation
// order), spread over the CPU's cores in tiles. Memory per tile is
// O(tile + search window), whatever the frame size.
#pragma once

#include "nlm_params.h"
#include "plane.h"

#include <string_view>
#include <vector>

namespace cudafilters {

// src and dst are host planes of equal size and sample layout, 8- or 16-bit;
// p must be valid (nlm_params_error(p) empty). Borders are mirrored
// (reflect-101).
void nlm_cpu(ConstPlane src, Plane dst, const NlmParams &p);

// The instruction set nlm_cpu runs with on this CPU: "avx512", "avx2" or
// "baseline" (the compiler's default target). All give identical output.
std::string_view nlm_cpu_instruction_set();

// For tests and benchmarks: the instruction sets this CPU can run nlm_cpu
// with, and nlm_cpu with one of them.
std::vector<std::string_view> nlm_cpu_instruction_sets();
void nlm_cpu_with(ConstPlane src, Plane dst, const NlmParams &p, std::string_view isa);

}  // namespace cudafilters

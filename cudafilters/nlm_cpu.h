// Non-local means on the CPU: the same arithmetic as the GPU kernel (levels
// in 8-bit units, see nlm_level_unit; exact integer-valued patch distances
// for box patches on 8-bit frames; the same weight formula and accumulation
// order), spread over the CPU's cores in tiles. Memory per tile is
// O(tile + search window), whatever the frame size.
#pragma once

#include "frame_planes.h"
#include "nlm_params.h"
#include "plane.h"

#include <string_view>
#include <vector>

namespace cudafilters {

// src and dst are host planes of equal size and sample layout, 8- or 16-bit;
// p must be valid (nlm_params_error(p) empty). Borders are mirrored
// (reflect-101).
void nlm_cpu(ConstPlane src, Plane dst, const NlmParams &p);

// Whole frames, and several of them: denoises window[center] into dst,
// searching the same window of offsets in every frame of window[0, count)
// (temporal non-local means; the frames in time order, all of one size and
// layout). Luma always; chroma, where the frames have it, with both channels
// together when p denoises chroma (nlm_denoises_chroma), else copied from
// window[center]. With one frame, luma is exactly nlm_cpu's. Host planes;
// throws std::invalid_argument if the frames do not match dst.
void nlm_cpu_frames(const FramePlanes *window, int count, int center, const FramePlanesOut &dst,
                    const NlmParams &p);

// The instruction set nlm_cpu runs with on this CPU: "avx512", "avx2" or
// "baseline" (the compiler's default target). All give identical output.
std::string_view nlm_cpu_instruction_set();

// For tests and benchmarks: the instruction sets this CPU can run nlm_cpu
// with, and nlm_cpu with one of them.
std::vector<std::string_view> nlm_cpu_instruction_sets();
void nlm_cpu_with(ConstPlane src, Plane dst, const NlmParams &p, std::string_view isa);

}  // namespace cudafilters

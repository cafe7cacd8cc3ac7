// The instruction sets the CPU paths are compiled for (each path's hot
// loops are built once per set with target attributes) and the one this
// CPU runs: "avx512", "avx2" (with FMA) or "baseline" (the compiler's
// default target). Off x86-64 there is only "baseline". Private to the
// engine library, its tests and benchmarks.
#pragma once

#include <cudafilters/nlm_params.h>
#include <cudafilters/plane.h>
#include <cudafilters/sharpen_params.h>

#include <string_view>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#define CUDAFILTERS_X86_VARIANTS 1
#endif

namespace cudafilters {

// The widest set this CPU runs.
std::string_view cpu_instruction_set();

// Every set this CPU runs, baseline first.
std::vector<std::string_view> cpu_instruction_sets();

// For tests and benchmarks: the engines that have variants (NlmCpu and
// SharpenCpu) on one plane, with one of cpu_instruction_sets(). Every set
// gives the same output, but for NLM's baseline without hardware FMA, which
// rounds twice where the others fuse: within a level.
void nlm_cpu_with(ConstPlane src, Plane dst, const NlmParams &p, std::string_view isa);
void sharpen_cpu_with(const SharpenParams &p, ConstPlane src, Plane dst, std::string_view isa);

}  // namespace cudafilters

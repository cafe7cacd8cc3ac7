// The instruction sets the CPU paths are compiled for (each path's hot
// loops are built once per set with target attributes) and the one this
// CPU runs: "avx512", "avx2" (with FMA) or "baseline" (the compiler's
// default target). Off x86-64 there is only "baseline".
#pragma once

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

}  // namespace cudafilters

#include "cpu_isa.h"

namespace cudafilters {

std::string_view cpu_instruction_set() {
#ifdef CUDAFILTERS_X86_VARIANTS
  static const char *const chosen = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
      return "avx512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
    return "baseline";
  }();
  return chosen;
#else
  return "baseline";
#endif
}

std::vector<std::string_view> cpu_instruction_sets() {
  std::vector<std::string_view> sets{"baseline"};
  if (cpu_instruction_set() != "baseline") sets.push_back("avx2");
  if (cpu_instruction_set() == "avx512") sets.push_back("avx512");
  return sets;
}

}  // namespace cudafilters

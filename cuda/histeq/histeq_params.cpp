#include <cudafilters/histeq_params.h>

namespace cudafilters {

std::string histeq_params_error(const HistEqParams &p) {
  if (!(p.temporal_smoothing >= 0 && p.temporal_smoothing <= 1))
    return "temporal-smoothing must be a number from 0 to 1";
  if (p.significant_bits < 0 || p.significant_bits > 16)
    return "significant-bits must be from 0 to 16";
  return {};
}

}  // namespace cudafilters

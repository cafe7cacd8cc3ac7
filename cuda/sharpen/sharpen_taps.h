// The fixed-point arithmetic of sharpening that the CPU path and the kernel
// share (sharpen_params.h states the function it computes): OpenCV's
// Gaussian taps, the weights of the unsharp formula and the threshold in a
// plane's levels. Private to the engine library and its tests.
#pragma once

#include <cudafilters/plane.h>
#include <cudafilters/sharpen_params.h>

#include <cstdint>
#include <vector>

namespace cudafilters {

// Taps of the widest Gaussian (radius kSharpenMaxRadius): 6 sigma + 1 on
// 8-bit planes, 8 sigma + 1 on deeper ones.
constexpr int kSharpenMaxTaps = 97;
constexpr int kSharpenMaxTapsDeep = 129;

// OpenCV's fixed-point Gaussian kernel for `sigma`. On 8-bit planes:
// cvRound(6 sigma + 1) | 1 taps in units of 1/256 that sum to 256; on deeper
// ones (`deep`, OpenCV's CV_16U): cvRound(8 sigma + 1) | 1 taps in units of
// 1/65536 that sum to 65536. From the double-precision kernel by rounding
// with error diffusion from the outside in, the centre taking what is left
// (getGaussianKernelFixedPoint_ED).
std::vector<uint32_t> sharpen_gaussian_taps(double sigma, bool deep = false);

// Fraction bits of the taps: 8, or 16 on deeper planes.
constexpr int sharpen_tap_bits(bool deep) { return deep ? 16 : 8; }

// The threshold (in 8-bit levels) in levels of planes of layout l.
inline int sharpen_threshold_levels(int threshold, SampleLayout l) {
  return l.bits > 8 ? threshold << (l.bits - 8) : threshold;
}

// The two factors of the unsharp formula as OpenCV rounds them to float.
struct UnsharpWeights {
  float source;  // 1 + amount
  float blur;    // -amount
};
UnsharpWeights unsharp_weights(double amount);

}  // namespace cudafilters

// Parameters of sharpening and the exact arithmetic they define, shared by
// the CPU and GPU implementations so both compute the same function: that of
// OpenCV on 8-bit planes.
//
// kLaplacian3x3: cv::filter2D(src, dst, -1, [0 -1 0; -1 5 -1; 0 -1 0]) with
// BORDER_REFLECT_101, i.e. dst = saturate(5 c - n - s - w - e).
//
// kUnsharp: blur = cv::GaussianBlur(src, {0, 0}, radius) with
// BORDER_REFLECT_101, OpenCV's bit-exact 8-bit path (integer taps in 1/256,
// see sharpen_gaussian_taps, rounded once at the end), then per pixel
//   dst = |src - blur| < threshold ? src
//       : saturate(round_half_even(fma(src, 1 + amount, -amount * blur)))
// in float, which is cv::addWeighted(src, 1 + amount, blur, -amount, 0).
//
// On 10- to 16-bit planes the same with OpenCV's CV_16U arithmetic, on
// levels (word >> shift): the Gaussian is wider (cvRound(8 sigma + 1) | 1
// taps) with taps in 1/65536, both passes exact and rounded half up once;
// results saturate to 2^b - 1; threshold is in 8-bit units, scaled by
// 2^(b-8). docs/cudasharpen.md states the same in words.
#pragma once

#include "plane.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cudafilters {

enum class SharpenKernel : int {
  kUnsharp,       // unsharp masking with a Gaussian blur
  kLaplacian3x3,  // the classic 3x3 sharpening kernel
};

constexpr double kSharpenMaxAmount = 20.0;
constexpr double kSharpenMinRadius = 0.1;
constexpr double kSharpenMaxRadius = 16.0;
constexpr int kSharpenMaxThreshold = 255;
// Taps of the widest Gaussian (radius kSharpenMaxRadius): 6 sigma + 1 on
// 8-bit planes, 8 sigma + 1 on deeper ones.
constexpr int kSharpenMaxTaps = 97;
constexpr int kSharpenMaxTapsDeep = 129;

struct SharpenParams {
  SharpenKernel kernel = SharpenKernel::kUnsharp;
  double amount = 1.0;  // 0..kSharpenMaxAmount; unsharp only
  double radius = 1.0;  // Gaussian sigma in pixels; unsharp only
  int threshold = 0;    // 8-bit levels 0..255 below which a pixel is kept; unsharp only
};

// Empty when the parameters are valid, otherwise what is wrong with them.
std::string sharpen_params_error(const SharpenParams &p);

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

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
// docs/cudasharpen.md states the same in words.
#pragma once

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
// Taps of the widest Gaussian (radius kSharpenMaxRadius): 6 sigma + 1.
constexpr int kSharpenMaxTaps = 97;

struct SharpenParams {
  SharpenKernel kernel = SharpenKernel::kUnsharp;
  double amount = 1.0;  // 0..kSharpenMaxAmount; unsharp only
  double radius = 1.0;  // Gaussian sigma in pixels; unsharp only
  int threshold = 0;    // levels 0..255 below which a pixel is kept; unsharp only
};

// Empty when the parameters are valid, otherwise what is wrong with them.
std::string sharpen_params_error(const SharpenParams &p);

// OpenCV's 8-bit Gaussian kernel for `sigma`: cvRound(6 sigma + 1) | 1 taps
// in units of 1/256 that sum to 256, from the double-precision kernel by
// rounding with error diffusion from the outside in, the centre taking what
// is left (getGaussianKernelFixedPoint_ED).
std::vector<uint16_t> sharpen_gaussian_taps(double sigma);

// The two factors of the unsharp formula as OpenCV rounds them to float.
struct UnsharpWeights {
  float source;  // 1 + amount
  float blur;    // -amount
};
UnsharpWeights unsharp_weights(double amount);

}  // namespace cudafilters

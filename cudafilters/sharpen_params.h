// Parameters of sharpening and the exact arithmetic they define, shared by
// the CPU and GPU implementations so both compute the same function: that of
// OpenCV on 8-bit planes.
//
// kLaplacian3x3: cv::filter2D(src, dst, -1, [0 -1 0; -1 5 -1; 0 -1 0]) with
// BORDER_REFLECT_101, i.e. dst = saturate(5 c - n - s - w - e).
//
// kUnsharp: blur = cv::GaussianBlur(src, {0, 0}, radius) with
// BORDER_REFLECT_101, OpenCV's bit-exact 8-bit path (integer taps in 1/256
// rounded from the Gaussian with error diffusion, the sum rounded once at
// the end), then per pixel
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

#include <string>

namespace cudafilters {

enum class SharpenKernel : int {
  kUnsharp,       // unsharp masking with a Gaussian blur
  kLaplacian3x3,  // the classic 3x3 sharpening kernel
};

constexpr double kSharpenMaxAmount = 20.0;
constexpr double kSharpenMinRadius = 0.1;
constexpr double kSharpenMaxRadius = 16.0;
constexpr int kSharpenMaxThreshold = 255;

struct SharpenParams {
  SharpenKernel kernel = SharpenKernel::kUnsharp;
  double amount = 1.0;  // 0..kSharpenMaxAmount; unsharp only
  double radius = 1.0;  // Gaussian sigma in pixels; unsharp only
  int threshold = 0;    // 8-bit levels 0..255 below which a pixel is kept; unsharp only
};

// Empty when the parameters are valid, otherwise what is wrong with them.
std::string sharpen_params_error(const SharpenParams &p);

}  // namespace cudafilters

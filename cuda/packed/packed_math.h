// The per-pixel arithmetic of packed frames (cudafilters/packed_pixels.h),
// compiled for the CPU paths and the kernels alike. The YCrCb transforms
// are OpenCV's 8-bit fixed-point ones (modules/imgproc/src/
// color_yuv.simd.hpp, RGB2YCrCb_i and YCrCb2RGB_i): 14-bit coefficients,
// each product sum rounded by adding 2^13 and shifting right arithmetically.
// Private to the engine library.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define CUDAFILTERS_PACKED_HD __host__ __device__ __forceinline__
#else
#define CUDAFILTERS_PACKED_HD inline
#endif

namespace cudafilters {
namespace ycrcb {

constexpr int kShift = 14;
constexpr int kR2Y = 4899, kG2Y = 9617, kB2Y = 1868;  // 0.299, 0.587, 0.114
constexpr int kCr = 11682, kCb = 9241;                 // 0.713, 0.564
constexpr int kCr2R = 22987, kCr2G = -11698, kCb2G = -5636, kCb2B = 29049;
constexpr int kHalf = 128;

CUDAFILTERS_PACKED_HD int descale(int x) { return (x + (1 << (kShift - 1))) >> kShift; }

CUDAFILTERS_PACKED_HD uint8_t saturate(int x) {
  return static_cast<uint8_t>(x < 0 ? 0 : x > 255 ? 255 : x);
}

// Y needs no saturation: its weights sum to 2^14.
CUDAFILTERS_PACKED_HD int luma(int r, int g, int b) { return descale(b * kB2Y + g * kG2Y + r * kR2Y); }

CUDAFILTERS_PACKED_HD uint8_t cr(int r, int y) { return saturate(descale((r - y) * kCr + (kHalf << kShift))); }

CUDAFILTERS_PACKED_HD uint8_t cb(int b, int y) { return saturate(descale((b - y) * kCb + (kHalf << kShift))); }

struct Rgb {
  uint8_t r, g, b;
};

CUDAFILTERS_PACKED_HD Rgb to_rgb(int y, int cr_, int cb_) {
  const int dcr = cr_ - kHalf, dcb = cb_ - kHalf;
  return Rgb{saturate(y + descale(dcr * kCr2R)), saturate(y + descale(dcb * kCb2G + dcr * kCr2G)),
             saturate(y + descale(dcb * kCb2B))};
}

}  // namespace ycrcb
}  // namespace cudafilters

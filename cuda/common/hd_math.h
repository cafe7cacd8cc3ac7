// Arithmetic that the CPU paths and the kernels must carry out identically:
// each helper compiles for both, rounding every float operation on its own
// (no fused multiply-add) and rounding to nearest even, as x86 code does. A
// result that only differs in how it is rounded then cannot drift between the
// two paths. Private to the engine library and its tests.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define CUDAFILTERS_HD __host__ __device__ __forceinline__
#else
#include <cmath>
#define CUDAFILTERS_HD inline
#endif

namespace cudafilters {

CUDAFILTERS_HD float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

CUDAFILTERS_HD float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

CUDAFILTERS_HD float sub_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

CUDAFILTERS_HD float div_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// The same for doubles: the noise estimate (noise_estimate.h) runs its fixed
// point on both sides.
CUDAFILTERS_HD double dmul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

CUDAFILTERS_HD double dadd_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

CUDAFILTERS_HD double dsub_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, -b);
#else
  return a - b;
#endif
}

CUDAFILTERS_HD double ddiv_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

CUDAFILTERS_HD double to_double(uint64_t v) {
#ifdef __CUDA_ARCH__
  return __ull2double_rn(v);
#else
  return static_cast<double>(v);
#endif
}

// An integer to the nearest float (OpenCV converts its int counts this way).
CUDAFILTERS_HD float to_float_rn(uint32_t v) {
#ifdef __CUDA_ARCH__
  return __uint2float_rn(v);
#else
  return static_cast<float>(v);
#endif
}

CUDAFILTERS_HD float to_float_rn(uint64_t v) {
#ifdef __CUDA_ARCH__
  return __ull2float_rn(v);
#else
  return static_cast<float>(v);
#endif
}

// Round half to even, as cvRound and lrintf do in the default rounding mode,
// for |v| < 2^22 (every level these paths round).
CUDAFILTERS_HD int round_even(float v) {
#ifdef __CUDA_ARCH__
  return __float2int_rn(v);
#else
  // Adding and taking away 1.5 * 2^23 leaves v rounded to an integer, ties
  // to even: no libm call per pixel, and loops over it can vectorise.
  constexpr float kShift = 12582912.0f;
  return static_cast<int>((v + kShift) - kShift);
#endif
}

CUDAFILTERS_HD int floor_to_int(float v) {
#ifdef __CUDA_ARCH__
  return __float2int_rd(v);
#else
  return static_cast<int>(std::floor(v));
#endif
}

// Reflect-101 index into [0, len) for any distance outside it (OpenCV's
// BORDER_REFLECT_101, reflected again while still outside).
CUDAFILTERS_HD int reflect101(int i, int len) {
  if (len == 1) return 0;
  while (i < 0 || i >= len) i = i < 0 ? -i : 2 * len - 2 - i;
  return i;
}

}  // namespace cudafilters

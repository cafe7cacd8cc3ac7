// Parameters of non-local means, shared by the CPU and GPU implementations so
// both compute the same function.
#pragma once

#include "plane.h"

#include <cmath>
#include <string>

namespace cudafilters {

constexpr int kNlmMaxPatchSize = 15;
constexpr int kNlmMaxSearchSize = 35;
constexpr int kNlmMaxTemporalRadius = 3;
// The range of strength, and of a chroma-strength of its own (8-bit units).
constexpr float kNlmMinStrength = 0.1f;
constexpr float kNlmMaxStrength = 255.f;

// The defaults are the cudanlm element's too (its properties take theirs
// from here): automatic strength, patch 7, search 21, box patches, chroma
// denoised, one frame at a time.
struct NlmParams {
  float h = 10.f;          // filtering strength, in 8-bit intensity units
  int patch_size = 7;      // odd, 1..kNlmMaxPatchSize, at most search_size
  int search_size = 21;    // odd, 1..kNlmMaxSearchSize
  float noise_sigma = 0.f; // distances below 2 sigma^2 count as identical
  bool gaussian = false;   // Gaussian-weighted patch distance instead of box
  // h for the chroma channels, in 8-bit units: negative means the same as h,
  // 0 leaves chroma as it is. U and V are denoised together (one weight per
  // pair of patches, from the distance over both channels).
  float chroma_h = -1.f;
  // Frames searched before and after the one denoised, 0..kNlmMaxTemporalRadius.
  int temporal_radius = 0;
  // Strength from the frames themselves, the default (it denoised the test
  // photos better than any one fixed setting, docs/cudanlm.md "Automatic
  // strength"): each frame's noise is estimated (luma, and chroma where it
  // is denoised), followed over the stream, and sets h, noise_sigma and a
  // non-zero chroma_h (nlm_auto_params). With auto_strength the values of
  // h, noise_sigma and a non-zero chroma_h are not used; chroma_h 0 still
  // leaves chroma as it is. A caller that gives a strength sets
  // auto_strength = false.
  bool auto_strength = true;
  // Multiplies the automatic strengths, 0.1..10: above 1 removes more noise.
  float auto_scale = 1.f;
  // Weight of the past in the exponential average of the noise estimate,
  // 0 (each frame's own) .. kNlmMaxNoiseSmoothing. It restarts with the first
  // frame after a start, a seek, a gap or new caps.
  float noise_smoothing = 0.5f;
};

constexpr float kNlmMinAutoScale = 0.1f;
constexpr float kNlmMaxAutoScale = 10.f;
constexpr float kNlmMaxNoiseSmoothing = 0.99f;

// The settings auto_strength filters a frame with, given the smoothed noise
// estimates of its luma and chroma (8-bit units) and how much of the luma's
// reads as correlated noise, a camera's (0..1, smoothed likewise): p with
// h, noise_sigma and chroma_h set from them. `still` (0..1, smoothed
// likewise): how far a temporal window's scene reads still, its luma sigma
// then read from the difference of its frames, with factors of its own.
NlmParams nlm_auto_params(const NlmParams &p, double luma_sigma, double chroma_sigma,
                          double luma_correlated = 0.0, double still = 0.0);

// The strength chroma is denoised with (0: chroma is carried).
inline float nlm_chroma_strength(const NlmParams &p) { return p.chroma_h < 0.f ? p.h : p.chroma_h; }
inline bool nlm_denoises_chroma(const NlmParams &p) { return nlm_chroma_strength(p) > 0.f; }

// Empty when the parameters are valid, otherwise what is wrong with them.
std::string nlm_params_error(const NlmParams &p);

// Levels of deeper samples enter the arithmetic in 8-bit units, level
// / 2^(b-8): strength and noise-sigma then mean the same at every depth.
// Scaling by a power of two is exact, so 8-bit frames are unchanged.
inline float nlm_level_unit(SampleLayout l) { return std::ldexp(1.f, 8 - l.bits); }

}  // namespace cudafilters

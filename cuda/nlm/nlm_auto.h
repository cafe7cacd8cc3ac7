// Non-local means settings that both the CPU and the GPU compute, from the
// parameters or from the frames' own noise (auto_strength): every double
// operation rounded on its own (hd_math.h), so the two paths weight patches
// with the same floats.
#pragma once

#include <cudafilters/nlm_params.h>

#include "frame_difference.h"
#include "hd_math.h"
#include "nlm_weights.h"
#include "noise_estimate.h"

namespace cudafilters {

// The strengths auto_strength gives a frame whose smoothed noise estimates
// are luma_sigma and chroma_sigma (8-bit units): strength = a(sigma) sigma,
// noise-sigma = sigma, chroma-strength = 0.6 chroma_sigma, all strengths
// times `scale`. a follows the noise (linear between the knots, constant
// beyond them): the factor that kept the calibration photos closest to
// their best settings at each noise level (studies/nlm_auto_strength.py,
// docs/cudanlm.md "Automatic strength"). Temporal windows, which find more
// similar patches, take their own, lower factors. On a camera's correlated
// noise (luma_correlated 1, noise_estimate.h's NoiseEstimate) the best
// settings had a higher strength and a lower noise allowance, for single
// frames and temporal windows alike (studies/camera_set.py's calibration
// photos): those factors are taken in proportion to luma_correlated.
// A window of a still scene reads its luma sigma from the difference of its
// frames (frame_difference.h) and takes factors of its own, fitted per band
// of sigma on the camera set's calibration photos, white and correlated
// noise alike (studies/temporal-noise, "--grid"); a moving one keeps the
// one-frame estimate and the factors above, which were fitted on panning
// frames; `still` (0..1, smoothed as the estimates) blends the two.
struct NlmStrengths {
  float h;
  float noise_sigma;
  float chroma_h;  // 0: chroma is carried
};

namespace nlm_auto_detail {

struct Knot {
  double sigma;
  double per_sigma;
};

constexpr double kChromaStrengthPerSigma = 0.6;
constexpr double kAllowancePerSigma = 1.0;
// Temporal windows on correlated noise.
constexpr double kCorrelatedTemporalStrength = 0.75;
constexpr double kCorrelatedTemporalAllowance = 0.85;

CUDAFILTERS_HD double towards(double from, double to, double share) {
  return dadd_rn(from, dmul_rn(share, dsub_rn(to, from)));
}

template <int N>
CUDAFILTERS_HD double factor_at(const Knot (&knots)[N], double sigma) {
  if (sigma <= knots[0].sigma) return knots[0].per_sigma;
  for (int i = 1; i < N; ++i)
    if (sigma <= knots[i].sigma) {
      const double t = ddiv_rn(dsub_rn(sigma, knots[i - 1].sigma),
                               dsub_rn(knots[i].sigma, knots[i - 1].sigma));
      return dadd_rn(knots[i - 1].per_sigma,
                     dmul_rn(t, dsub_rn(knots[i].per_sigma,
                                        knots[i - 1].per_sigma)));
    }
  return knots[N - 1].per_sigma;
}

CUDAFILTERS_HD float clamp_strength(double h) {
  return h < double(kNlmMinStrength) ? kNlmMinStrength
         : h > double(kNlmMaxStrength) ? kNlmMaxStrength
                                       : float(h);
}

}  // namespace nlm_auto_detail

CUDAFILTERS_HD NlmStrengths nlm_auto_strengths(double luma_sigma, double chroma_sigma, float scale,
                                                int temporal_radius, bool chroma,
                                                double luma_correlated, double still) {
  using namespace nlm_auto_detail;
  // (Local tables: namespace-scope arrays are not visible to device code.)
  const Knot spatial[] = {{3.5, 0.75}, {5.5, 0.9},  {10.5, 0.8}, {15.0, 0.7},
                          {20.0, 0.65}, {29.0, 0.6}, {38.0, 0.55}};
  const Knot temporal[] = {{10.5, 0.6}, {20.0, 0.55}};
  // Correlated noise, single frames: strength and allowance per sigma,
  // meeting the white-noise factors from sigma 29 (above 25 both kept the
  // calibration photos as close to their best, 0.08 against 0.09 dB).
  const Knot correlated_spatial[] = {{15.0, 0.9}, {29.0, 0.6}, {38.0, 0.55}};
  const Knot correlated_allowance[] = {{5.0, 0.7}, {10.0, 0.85}, {29.0, 1.0}};
  // Windows on the frame difference's sigma: the fitted bands' factors at
  // their middles (up to 6, 6 to 10, 10 to 15, 15 to 25, above).
  const Knot frames_strength[] = {{8.0, 0.9}, {12.5, 0.75}, {20.0, 0.75}, {30.0, 0.6}};
  const Knot frames_allowance[] = {{3.0, 1.0}, {8.0, 0.85}, {12.5, 0.85}, {20.0, 0.7}, {30.0, 0.85}};
  const bool window = temporal_radius > 0;
  double per_sigma, allowance;
  if (window) {
    per_sigma = towards(towards(factor_at(temporal, luma_sigma), kCorrelatedTemporalStrength,
                                luma_correlated),
                        factor_at(frames_strength, luma_sigma), still);
    allowance = towards(towards(kAllowancePerSigma, kCorrelatedTemporalAllowance, luma_correlated),
                        factor_at(frames_allowance, luma_sigma), still);
  } else {
    per_sigma = towards(factor_at(spatial, luma_sigma), factor_at(correlated_spatial, luma_sigma),
                        luma_correlated);
    allowance = towards(kAllowancePerSigma, factor_at(correlated_allowance, luma_sigma),
                        luma_correlated);
  }
  NlmStrengths s;
  s.h = clamp_strength(dmul_rn(dmul_rn(per_sigma, luma_sigma), double(scale)));
  const double ns = dmul_rn(allowance, luma_sigma);
  s.noise_sigma = float(ns < 255.0 ? ns : 255.0);
  s.chroma_h = chroma ? clamp_strength(dmul_rn(dmul_rn(kChromaStrengthPerSigma, chroma_sigma),
                                               double(scale)))
                      : 0.f;
  return s;
}

// A frame's luma noise for automatic strength, and how still its scene
// reads: the one-frame estimate, or in a window that has a frame difference
// (from_frames), the difference's sigma as far as the scene reads still.
struct LumaNoise {
  double sigma;
  double still;
};

CUDAFILTERS_HD LumaNoise luma_noise_of(NoiseEstimate one_frame, bool from_frames,
                                       FrameDifference d) {
  if (!from_frames) return LumaNoise{one_frame.sigma, 0.0};
  return LumaNoise{nlm_auto_detail::towards(one_frame.sigma, d.sigma, d.still), d.still};
}

// exp(-max(S / (norm * h^2) - 2 sigma^2 / h_luma^2, 0)) as exp2(min(S * a + b, 0)),
// for S summed over `channels` channels, h this channel group's strength.
CUDAFILTERS_HD NlmWeightCoeffs nlm_coeffs_of(float luma_h, float noise_sigma, double h,
                                             double channels, bool gaussian, int patch_size) {
  const double log2e = 1.4426950408889634;
  const double k = ddiv_rn(log2e, dmul_rn(h, h));
  const double luma_k = ddiv_rn(log2e, dmul_rn(double(luma_h), double(luma_h)));
  // Box: S is a sum over patch_size^2 pixels; Gaussian: S is already a mean.
  const double inv_norm =
      gaussian ? 1.0 : ddiv_rn(1.0, dmul_rn(double(patch_size), double(patch_size)));
  return NlmWeightCoeffs{
      float(ddiv_rn(dmul_rn(-k, inv_norm), channels)),
      float(dmul_rn(dmul_rn(dmul_rn(2.0, double(noise_sigma)), double(noise_sigma)), luma_k))};
}

}  // namespace cudafilters

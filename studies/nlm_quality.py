#!/usr/bin/env python3
"""Denoising quality and speed of cudanlm next to OpenCV's
fastNlMeansDenoising, on real grayscale photographs with added Gaussian noise.

For each photo and noise sigma (10, 20, 30) both filters run with patch 7 and
search 21 over the same grid of h, and the best PSNR of each is reported.
cudanlm runs through gst-launch-1.0 (all h values as tee branches of one
pipeline). With --timing, OpenCV's time per frame at 720p, 1080p and 4K on
this host is measured too.

With --deep, the same photos scaled to 16 bits (x257, so that 65535 is 255)
with the same noise added at full precision go through cudanlm as
GRAY16_LE, with the same grid of strength (in 8-bit units at every depth),
next to OpenCV's fastNlMeansDenoising on CV_16U (which takes NORM_L1 only,
h in 16-bit units over the same grid x257) and cudanlm's own 8-bit result.

With --against cpu, the same grid also runs on the other backend, and each
case's best PSNR on both is printed with the difference: what the GPU's own
arithmetic (f16 tensor-core patch distances, docs/cudanlm.md) changes,
against the CPU's exact distances.

    studies/nlm_quality.py [--photos bench/photos] [--backend cuda] [--timing] [--deep]
                         [--against cpu] [--json FILE]
Photos: scripts/prepare-photos.py. Needs numpy, cv2, gst-launch-1.0 and the
plugin on GST_PLUGIN_PATH.
"""
import argparse
import glob
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from gstraw import filter_frames, psnr  # noqa: E402

SIGMAS = [10, 20, 30]
H_GRID = [round(h, 2) for h in np.arange(3.0, 48.0, 1.5)]
PATCH, SEARCH = 7, 21


def add_noise(clean, sigma, seed, scale=1):
    """clean + Gaussian noise of sigma, times scale (257: to 16 bits), rounded."""
    rng = np.random.default_rng(seed)
    top, dtype = (65535, np.uint16) if scale > 1 else (255, np.uint8)
    noisy = (clean + rng.normal(0, sigma, clean.shape)) * scale
    return np.clip(np.rint(noisy), 0, top).astype(dtype)


def quality(photos, backend, results):
    print(f"PSNR (dB) at the best h of each, patch {PATCH}, search {SEARCH}; "
          f"cudanlm backend={backend}, OpenCV {cv2.__version__}")
    print("  cudanlm: noise-sigma=0 (the same weight function as OpenCV), and noise-sigma set to the")
    print("  true noise level (distances below 2 sigma^2 count as identical)")
    print(f"  {'photo':<14} {'sigma':>5} {'noisy':>7} {'OpenCV':>7} {'(h)':>6} {'cudanlm':>8} {'(h)':>6} "
          f"{'diff':>6} {'+sigma':>7} {'(h)':>6} {'diff':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for path in photos:
            clean = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
            noisy = [add_noise(clean, s, seed=s) for s in SIGMAS]
            ours = filter_frames(noisy, [f"cudanlm auto-strength=false backend={backend} strength={h} patch-size={PATCH} "
                                         f"search-size={SEARCH}" for h in H_GRID], tmp)
            # With noise-sigma the filter wants a smaller h; one branch per
            # (sigma, h), each applied to the frame with that sigma.
            with_sigma = filter_frames(noisy, [f"cudanlm auto-strength=false backend={backend} strength={h} noise-sigma={s} "
                                               f"patch-size={PATCH} search-size={SEARCH}"
                                               for s in SIGMAS for h in H_GRID], tmp)
            for i, s in enumerate(SIGMAS):
                cv_best = max((psnr(cv2.fastNlMeansDenoising(noisy[i], None, h, PATCH, SEARCH), clean), h)
                              for h in H_GRID)
                our_best = max((psnr(ours[k][i], clean), h) for k, h in enumerate(H_GRID))
                sig_best = max((psnr(with_sigma[i * len(H_GRID) + k][i], clean), h)
                               for k, h in enumerate(H_GRID))
                name = os.path.basename(path)
                print(f"  {name:<14} {s:>5} {psnr(noisy[i], clean):7.2f} {cv_best[0]:7.2f} {cv_best[1]:6.1f} "
                      f"{our_best[0]:8.2f} {our_best[1]:6.1f} {our_best[0] - cv_best[0]:+6.2f} "
                      f"{sig_best[0]:7.2f} {sig_best[1]:6.1f} {sig_best[0] - cv_best[0]:+6.2f}")
                results.append({"kind": "quality", "photo": name, "sigma": s,
                                 "noisy_psnr": psnr(noisy[i], clean),
                                 "opencv_psnr": cv_best[0], "opencv_h": cv_best[1],
                                 "cudanlm_psnr": our_best[0], "cudanlm_h": our_best[1],
                                 "cudanlm_sigma_psnr": sig_best[0], "cudanlm_sigma_h": sig_best[1]})


def quality_deep(photos, backend, results):
    print(f"16-bit frames (photos x257, GRAY16_LE): PSNR (dB, peak 65535) at the best h of each, "
          f"patch {PATCH}, search {SEARCH}; cudanlm backend={backend}, OpenCV {cv2.__version__} "
          f"fastNlMeansDenoising on CV_16U with NORM_L1 (h x257)")
    print(f"  {'photo':<14} {'sigma':>5} {'noisy':>7} {'OpenCV':>7} {'(h)':>6} {'cudanlm':>8} {'(h)':>6} "
          f"{'diff':>6} {'8-bit':>7} {'(h)':>6} {'16-8':>6} {'+sigma':>7} {'(h)':>6} {'diff':>6}")
    elements = [f"cudanlm auto-strength=false backend={backend} strength={h} patch-size={PATCH} search-size={SEARCH}"
                for h in H_GRID]
    sigma_elements = [f"cudanlm auto-strength=false backend={backend} strength={h} noise-sigma={s} patch-size={PATCH} "
                      f"search-size={SEARCH}" for s in SIGMAS for h in H_GRID]
    with tempfile.TemporaryDirectory() as tmp:
        for path in photos:
            clean = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
            clean16 = clean.astype(np.uint16) * 257
            noisy8 = [add_noise(clean, s, seed=s) for s in SIGMAS]
            noisy16 = [add_noise(clean, s, seed=s, scale=257) for s in SIGMAS]
            ours8 = filter_frames(noisy8, elements, tmp)
            ours16 = filter_frames(noisy16, elements, tmp)
            with_sigma16 = filter_frames(noisy16, sigma_elements, tmp)
            for i, s in enumerate(SIGMAS):
                cv_best = max((psnr(cv2.fastNlMeansDenoising(noisy16[i], h=[h * 257.0], templateWindowSize=PATCH,
                                                             searchWindowSize=SEARCH, normType=cv2.NORM_L1),
                                    clean16), h) for h in H_GRID)
                best16 = max((psnr(ours16[k][i], clean16), h) for k, h in enumerate(H_GRID))
                best8 = max((psnr(ours8[k][i], clean), h) for k, h in enumerate(H_GRID))
                sig_best = max((psnr(with_sigma16[i * len(H_GRID) + k][i], clean16), h)
                               for k, h in enumerate(H_GRID))
                name = os.path.basename(path)
                print(f"  {name:<14} {s:>5} {psnr(noisy16[i], clean16):7.2f} {cv_best[0]:7.2f} {cv_best[1]:6.1f} "
                      f"{best16[0]:8.2f} {best16[1]:6.1f} {best16[0] - cv_best[0]:+6.2f} "
                      f"{best8[0]:7.2f} {best8[1]:6.1f} {best16[0] - best8[0]:+6.2f} "
                      f"{sig_best[0]:7.2f} {sig_best[1]:6.1f} {sig_best[0] - cv_best[0]:+6.2f}")
                results.append({"kind": "quality16", "photo": name, "sigma": s,
                                 "noisy_psnr": psnr(noisy16[i], clean16),
                                 "opencv16_psnr": cv_best[0], "opencv16_h": cv_best[1],
                                 "cudanlm16_psnr": best16[0], "cudanlm16_h": best16[1],
                                 "cudanlm8_psnr": best8[0], "cudanlm8_h": best8[1],
                                 "cudanlm16_sigma_psnr": sig_best[0], "cudanlm16_sigma_h": sig_best[1]})


def against(photos, backend, other, deep, results):
    """Best PSNR of cudanlm on `backend` and on `other`, over the same grid,
    with noise-sigma 0 and with noise-sigma set to the noise; 8-bit frames,
    and 16-bit ones with `deep`."""
    print(f"cudanlm backend={backend} against backend={other}: best PSNR (dB) over the same h grid, "
          f"patch {PATCH}, search {SEARCH}")
    print(f"  {'photo':<14} {'bits':>4} {'sigma':>5} {backend:>8} {other:>8} {'diff':>7} "
          f"{'+sigma ' + backend:>13} {other:>8} {'diff':>7}")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for path in photos:
            clean = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
            for bits in [8, 16] if deep else [8]:
                scale = 257 if bits == 16 else 1
                ref = clean.astype(np.uint16) * 257 if bits == 16 else clean
                noisy = [add_noise(clean, s, seed=s, scale=scale) for s in SIGMAS]
                best = {}
                for b in (backend, other):
                    plain = filter_frames(noisy, [f"cudanlm auto-strength=false backend={b} strength={h} patch-size={PATCH} "
                                                  f"search-size={SEARCH}" for h in H_GRID], tmp)
                    sig = filter_frames(noisy, [f"cudanlm auto-strength=false backend={b} strength={h} noise-sigma={s} "
                                                f"patch-size={PATCH} search-size={SEARCH}"
                                                for s in SIGMAS for h in H_GRID], tmp)
                    best[b] = [(max(psnr(plain[k][i], ref) for k in range(len(H_GRID))),
                                max(psnr(sig[i * len(H_GRID) + k][i], ref) for k in range(len(H_GRID))))
                               for i in range(len(SIGMAS))]
                for i, s in enumerate(SIGMAS):
                    (a0, a1), (b0, b1) = best[backend][i], best[other][i]
                    worst = min(worst, a0 - b0, a1 - b1)
                    name = os.path.basename(path)
                    print(f"  {name:<14} {bits:>4} {s:>5} {a0:8.3f} {b0:8.3f} {a0 - b0:+7.3f} "
                          f"{a1:13.3f} {b1:8.3f} {a1 - b1:+7.3f}")
                    results.append({"kind": "against", "photo": name, "bits": bits, "sigma": s,
                                    backend: a0, other: b0, backend + "_sigma": a1, other + "_sigma": b1})
    print(f"  largest drop: {-worst:.3f} dB")


def timing(results):
    print(f"OpenCV fastNlMeansDenoising(h=10, {PATCH}, {SEARCH}) on this host: "
          f"{cv2.getNumThreads()} threads, {os.cpu_count()} CPUs")
    rng = np.random.default_rng(3)
    for name, (w, h) in [("720p", (1280, 720)), ("1080p", (1920, 1080)), ("4K", (3840, 2160))]:
        yy, xx = np.mgrid[0:h, 0:w]
        frame = np.clip(60 + 60 * xx / w + 30 * yy / h + rng.normal(0, 15, (h, w)), 0, 255).astype(np.uint8)
        cv2.fastNlMeansDenoising(frame, None, 10, PATCH, SEARCH)
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            cv2.fastNlMeansDenoising(frame, None, 10, PATCH, SEARCH)
            ts.append((time.perf_counter() - t0) * 1e3)
        ts.sort()
        print(f"  {name:<6} median {ts[1]:8.1f} ms  (min {ts[0]:.1f}, max {ts[2]:.1f})")
        results.append({"kind": "opencv_time", "size": name, "median_ms": ts[1]})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--photos", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "photos"))
    ap.add_argument("--backend", default="cuda", choices=["cuda", "cpu", "auto"])
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--deep", action="store_true", help="also 16-bit frames against OpenCV on CV_16U")
    ap.add_argument("--against", choices=["cuda", "cpu"],
                    help="only compare cudanlm's best PSNR on --backend with this backend")
    ap.add_argument("--json")
    args = ap.parse_args()
    photos = sorted(glob.glob(os.path.join(args.photos, "*.png")))
    if not photos:
        sys.exit(f"no photos in {args.photos}: run scripts/prepare-photos.py")
    results = []
    if args.against:
        against(photos, args.backend, args.against, args.deep, results)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
        return
    quality(photos, args.backend, results)
    if args.deep:
        quality_deep(photos, args.backend, results)
    if args.timing:
        timing(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

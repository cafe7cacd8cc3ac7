#!/usr/bin/env python3
"""Denoising quality and speed of cudanlm next to OpenCV's
fastNlMeansDenoising, on real grayscale photographs with added Gaussian noise.

For each photo and noise sigma (10, 20, 30) both filters run with patch 7 and
search 21 over the same grid of h, and the best PSNR of each is reported.
cudanlm runs through gst-launch-1.0 (all h values as tee branches of one
pipeline). With --timing, OpenCV's time per frame at 720p, 1080p and 4K on
this host is measured too.

    bench/nlm_quality.py [--photos bench/photos] [--backend cuda] [--timing] [--json FILE]
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

import cv2
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from gstraw import filter_frames  # noqa: E402

SIGMAS = [10, 20, 30]
H_GRID = [round(h, 2) for h in np.arange(3.0, 48.0, 1.5)]
PATCH, SEARCH = 7, 21


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 10 * np.log10(255.0 ** 2 / mse)


def add_noise(clean, sigma, seed):
    rng = np.random.default_rng(seed)
    return np.clip(np.rint(clean + rng.normal(0, sigma, clean.shape)), 0, 255).astype(np.uint8)


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
            ours = filter_frames(noisy, [f"cudanlm backend={backend} strength={h} patch-size={PATCH} "
                                         f"search-size={SEARCH}" for h in H_GRID], tmp)
            # With noise-sigma the filter wants a smaller h; one branch per
            # (sigma, h), each applied to the frame with that sigma.
            with_sigma = filter_frames(noisy, [f"cudanlm backend={backend} strength={h} noise-sigma={s} "
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
    ap.add_argument("--photos", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "photos"))
    ap.add_argument("--backend", default="cuda", choices=["cuda", "cpu", "auto"])
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    photos = sorted(glob.glob(os.path.join(args.photos, "*.png")))
    if not photos:
        sys.exit(f"no photos in {args.photos}: run scripts/prepare-photos.py")
    results = []
    quality(photos, args.backend, results)
    if args.timing:
        timing(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

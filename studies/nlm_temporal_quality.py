#!/usr/bin/env python3
"""Temporal denoising quality of cudanlm next to OpenCV's
fastNlMeansDenoisingMulti, on a noisy synthetic video made from a real photo.

The video: 24 gray frames of 360x240 cut from scikit-image's
motorcycle_left photo (741x500): 12 frames of a pan (2.3 and 0.8 pixels per
frame to the right and down, so at subpixel positions), then 12 of a slow
zoom (to 1.06x) that keeps panning. Each frame gets its own Gaussian noise of
sigma 20.

cudanlm runs through gst-launch-1.0 on the GRAY8 frames with temporal-radius
0 (each frame alone) and 1 (frames n-1, n, n+1), with noise-sigma 0
(OpenCV's weight function) and with noise-sigma set to the noise. OpenCV's
fastNlMeansDenoisingMulti runs with a temporal window of 3 (the same three
frames) and fastNlMeansDenoising on single frames. All use patch 7 and search 21 and the same grid of h; each
one's best is reported. PSNR is taken over frames 1 to 22, those with a
neighbour on both sides (fastNlMeansDenoisingMulti's window needs them), as
10 log10(255^2 / mean squared error over all their pixels).

    studies/nlm_temporal_quality.py [--backend cpu|cuda] [--photo PATH] [--json FILE]

The photo is scikit-image's data/motorcycle_left.png, or PATH (a copy, for
hosts without scikit-image). Needs numpy, cv2, gst-launch-1.0 and the
plugin on GST_PLUGIN_PATH.
"""
import argparse
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

from gstraw import filter_frames  # noqa: E402

SIGMA = 20.0
H_GRID = [5, 6, 8, 10, 12, 14, 16, 20, 24, 28]
PATCH, SEARCH = 7, 21
W, H, FRAMES = 360, 240, 24


def photo(path):
    if not path:
        import skimage
        path = os.path.join(os.path.dirname(skimage.__file__), "data", "motorcycle_left.png")
    img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    if img is None:
        sys.exit(f"cannot read {path}")
    return img.astype(np.float32)


def clean_video(src):
    """Frames of a pan, then a zoom, as affine warps of the photo."""
    frames = []
    x, y = 60.0, 70.0
    for i in range(FRAMES):
        x += 2.3
        y += 0.8
        zoom = 1.0 + 0.005 * max(0, i - 11)
        # Output pixel (u, v) shows photo point (x + u / zoom, y + v / zoom).
        m = np.float32([[1 / zoom, 0, x], [0, 1 / zoom, y]])
        f = cv2.warpAffine(src, m, (W, H), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
        frames.append(np.clip(np.rint(f), 0, 255).astype(np.uint8))
    return frames


def add_noise(frames):
    rng = np.random.default_rng(2026)
    return [np.clip(np.rint(f + rng.normal(0, SIGMA, f.shape)), 0, 255).astype(np.uint8)
            for f in frames]


def video_psnr(out, clean):
    """PSNR over frames 1 .. n-2 together."""
    err = [np.mean((o.astype(np.float64) - c) ** 2) for o, c in zip(out[1:-1], clean[1:-1])]
    return 10 * np.log10(255.0 ** 2 / np.mean(err))


def best(scores):
    return max(scores, key=lambda s: s[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--photo", help="the photo (default: scikit-image's motorcycle_left.png)")
    ap.add_argument("--json")
    args = ap.parse_args()

    clean = clean_video(photo(args.photo))
    noisy = add_noise(clean)
    print(f"{FRAMES} frames of {W}x{H}, sigma {SIGMA:.0f}, patch {PATCH}, search {SEARCH}, "
          f"h from {H_GRID}; cudanlm backend={args.backend}, OpenCV {cv2.__version__}")
    print(f"noisy: {video_psnr(noisy, clean):.2f} dB")

    t0 = time.time()
    variants = [("cudanlm, temporal-radius 0", 0, 0.0), ("cudanlm, temporal-radius 1", 1, 0.0),
                ("cudanlm, temporal-radius 0, noise-sigma 20", 0, SIGMA),
                ("cudanlm, temporal-radius 1, noise-sigma 20", 1, SIGMA)]
    elements, keys = [], []
    for name, radius, sigma in variants:
        for h in H_GRID:
            elements.append(f"cudanlm auto-strength=false backend={args.backend} strength={h} temporal-radius={radius} "
                            f"noise-sigma={sigma} patch-size={PATCH} search-size={SEARCH}")
            keys.append((name, h))
    with tempfile.TemporaryDirectory() as tmp:
        outs = filter_frames(noisy, elements, tmp)
    results = {}
    for (name, h), out in zip(keys, outs):
        results.setdefault(name, []).append((video_psnr(out, clean), h))
    print(f"  cudanlm: {time.time() - t0:.0f} s", flush=True)

    t0 = time.time()
    results["OpenCV fastNlMeansDenoisingMulti, window 3"] = [
        (video_psnr([noisy[0]] + [cv2.fastNlMeansDenoisingMulti(noisy, i, 3, None, float(h), PATCH,
                                                                SEARCH)
                                  for i in range(1, FRAMES - 1)] + [noisy[-1]], clean), h)
        for h in H_GRID]
    results["OpenCV fastNlMeansDenoising, single frames"] = [
        (video_psnr([cv2.fastNlMeansDenoising(f, None, float(h), PATCH, SEARCH) for f in noisy],
                    clean), h) for h in H_GRID]
    print(f"  OpenCV: {time.time() - t0:.0f} s")

    print(f"{'':<46} {'best PSNR':>9} {'at h':>5}")
    table = {}
    for name, scores in results.items():
        p, h = best(scores)
        table[name] = {"psnr": p, "h": h, "grid": scores}
        print(f"{name:<46} {p:>9.2f} {h:>5}")
    r0 = table["cudanlm, temporal-radius 0"]["psnr"]
    r1 = table["cudanlm, temporal-radius 1"]["psnr"]
    s0 = table["cudanlm, temporal-radius 0, noise-sigma 20"]["psnr"]
    s1 = table["cudanlm, temporal-radius 1, noise-sigma 20"]["psnr"]
    multi = table["OpenCV fastNlMeansDenoisingMulti, window 3"]["psnr"]
    print(f"radius 1 - radius 0: {r1 - r0:+.2f} dB with noise-sigma 0, {s1 - s0:+.2f} dB with "
          f"noise-sigma 20")
    print(f"radius 1 - OpenCV Multi: {r1 - multi:+.2f} dB with noise-sigma 0, {s1 - multi:+.2f} dB "
          f"with noise-sigma 20")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Colour denoising quality of cudanlm next to OpenCV's
fastNlMeansDenoisingColored, on real colour photographs.

For each photo (scikit-image's astronaut, coffee and chelsea by default) and
noise sigma (10, 20, 30), Gaussian noise is added in RGB. With --input rgb,
cudanlm takes the noisy RGB photo itself, as OpenCV's
fastNlMeansDenoisingColored does (it denoises the Y, Cr and Cb of OpenCV's
YCrCb at full resolution). With --input i420, it sees the photo as a
pipeline with a converter does: videoconvert to I420, cudanlm, videoconvert
back to RGB. Both run with patch 7 and search 21 over the same grid of luma and
chroma strengths (h and hColor for OpenCV, strength and chroma-strength for
cudanlm, multiples of sigma), and each one's best PSNR in RGB against the
clean photo is reported, with the settings that gave it.

Also reported: the noisy photo after the I420 round trip (or as it is), the
clean photo after the I420 round trip or after the 8-bit YCrCb one (the
most the filter can reach),
cudanlm with chroma carried (chroma-strength=0), and cudanlm with
noise-sigma searched too (NOISE_GRID; OpenCV has no such setting).

OpenCV's function is its Lab conversion (COLOR_LBGR2Lab), fastNlMeansDenoising
on L with h and on a,b with hColor, and the conversion back: the grid is run
in that form (each h once), and its best point checked bit for bit against
the function itself.

    studies/nlm_colour_quality.py [--backend cpu|cuda] [--input rgb|i420]
                                [--sigmas 10 20 30] [--photos DIR]
                                [--names astronaut ...] [--json FILE]

The photos come from scikit-image's data folder, or from DIR (copies of
astronaut.png, coffee.png and chelsea.png, for hosts without it). Needs
numpy, cv2, gst-launch-1.0 and the plugin on GST_PLUGIN_PATH.
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

from gstraw import filter_frames, psnr  # noqa: E402

PHOTOS = ["astronaut", "coffee", "chelsea"]


def photo_dir(given):
    if given:
        return given
    import skimage
    return os.path.join(os.path.dirname(skimage.__file__), "data")


def load_rgb(folder, name):
    img = cv2.imread(os.path.join(folder, name + ".png"), cv2.IMREAD_COLOR)
    if img is None:
        sys.exit(f"cannot read {name}.png from {folder}")
    return np.ascontiguousarray(img[..., ::-1])
GRID = [0.15, 0.2, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.9]  # strengths, times sigma
NOISE_GRID = [0.3, 0.45, 0.6]  # cudanlm's noise-sigma, times sigma
PATCH, SEARCH = 7, 21


INPUT = "i420"


def through_i420(img, filters, tmp):
    """img -> videoconvert -> I420 -> each of `filters` (one tee branch
    each; "" for none) -> videoconvert -> RGB. Returns the RGB images.
    With --input rgb, each filter takes the RGB image itself."""
    if INPUT == "rgb":
        return [o[0] for o in filter_frames([img], filters, tmp)]
    outs = filter_frames([img], filters, tmp, via="videoconvert ! video/x-raw,format=I420",
                         back="videoconvert ! video/x-raw,format=RGB")
    return [o[0] for o in outs]


def ceiling_of(clean, tmp):
    """The clean photo after the conversion the filter works behind."""
    if INPUT == "rgb":
        ycc = cv2.cvtColor(clean, cv2.COLOR_RGB2YCrCb)
        return psnr(cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB), clean)
    return psnr(through_i420(clean, [""], tmp)[0], clean)


def opencv_best(noisy, clean, strengths):
    """Best (PSNR, h, hColor) of fastNlMeansDenoisingColored over strengths^2."""
    bgr = np.ascontiguousarray(noisy[..., ::-1])
    lab = cv2.cvtColor(bgr, cv2.COLOR_LBGR2Lab)
    lum = np.ascontiguousarray(lab[..., 0])
    ab = np.ascontiguousarray(lab[..., 1:])
    lums = [cv2.fastNlMeansDenoising(lum, None, float(h), PATCH, SEARCH) for h in strengths]
    abs_ = [cv2.fastNlMeansDenoising(ab, None, float(h), PATCH, SEARCH) for h in strengths]
    best = None
    for i, h in enumerate(strengths):
        for j, hc in enumerate(strengths):
            out = cv2.cvtColor(np.dstack([lums[i], abs_[j]]), cv2.COLOR_Lab2LBGR)[..., ::-1]
            p = psnr(out, clean)
            if best is None or p > best[0]:
                best = (p, h, hc)
    real = cv2.fastNlMeansDenoisingColored(bgr, None, float(best[1]), float(best[2]), PATCH,
                                           SEARCH)[..., ::-1]
    if abs(psnr(real, clean) - best[0]) > 1e-9:
        raise RuntimeError("OpenCV's Colored function differs from its decomposition")
    return best


def cudanlm_best(noisy, clean, strengths, noise_sigmas, backend, tmp):
    """Best (PSNR, strength, chroma-strength, noise-sigma) over strengths^2
    without noise-sigma, the best with chroma carried, and the best with
    noise-sigma searched too."""
    combos = [(h, hc, ns) for ns in [0.0] + noise_sigmas for h in strengths
              for hc in strengths] + [(h, 0.0, 0.0) for h in strengths]
    filters = [f"cudanlm auto-strength=false backend={backend} strength={h:.3f} chroma-strength={hc:.3f} "
               f"noise-sigma={ns:.3f} patch-size={PATCH} search-size={SEARCH}"
               for h, hc, ns in combos]
    outs = through_i420(noisy, filters, tmp)
    scores = [(psnr(o, clean), h, hc, ns) for o, (h, hc, ns) in zip(outs, combos)]
    plain = max(s for s in scores if s[2] > 0 and s[3] == 0)
    carried = max(s for s in scores if s[2] == 0)
    with_sigma = max(s for s in scores if s[2] > 0)
    return plain, carried, with_sigma


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--sigmas", type=float, nargs="+", default=[10, 20, 30])
    ap.add_argument("--photos", help="folder with the photos (default: scikit-image's)")
    ap.add_argument("--input", choices=["rgb", "i420"], default="rgb")
    ap.add_argument("--names", nargs="+", default=PHOTOS)
    ap.add_argument("--json")
    args = ap.parse_args()
    global INPUT
    INPUT = args.input
    folder = photo_dir(args.photos)

    print(f"RGB PSNR (dB) at each one's best strengths from the same grid ({GRID} x sigma); "
          f"patch {PATCH}, search {SEARCH}; cudanlm backend={args.backend}, input {args.input}, "
          f"OpenCV {cv2.__version__}")
    print(f"{'photo':<10} {'sigma':>5} {'ceiling':>12} {'noisy':>6} {'OpenCV':>7} {'(h, hColor)':>13} "
          f"{'cudanlm':>8} {'(h, chroma)':>13} {'diff':>6} {'carried':>8} {'+noise-sigma':>12} "
          f"{'(h, chroma, sigma)':>19} {'diff':>6}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names:
            clean = load_rgb(folder, name)
            ceiling = ceiling_of(clean, tmp)
            for sigma in args.sigmas:
                t0 = time.time()
                rng = np.random.default_rng(int(sigma) * 7919 + len(name))
                noisy = np.clip(np.rint(clean + rng.normal(0, sigma, clean.shape)), 0,
                                255).astype(np.uint8)
                noisy_rt = psnr(through_i420(noisy, [""], tmp)[0], clean) if INPUT == "i420" \
                    else psnr(noisy, clean)
                strengths = [round(m * sigma, 3) for m in GRID]
                noise_sigmas = [round(m * sigma, 3) for m in NOISE_GRID]
                cv_best = opencv_best(noisy, clean, strengths)
                ours, carried, ns = cudanlm_best(noisy, clean, strengths, noise_sigmas,
                                                 args.backend, tmp)
                row = dict(photo=name, sigma=sigma, ceiling=ceiling, noisy=noisy_rt,
                           opencv=cv_best[0], opencv_h=cv_best[1], opencv_hcolor=cv_best[2],
                           cudanlm=ours[0], cudanlm_h=ours[1], cudanlm_chroma=ours[2],
                           carried=carried[0], carried_h=carried[1],
                           with_noise_sigma=ns[0], ns_h=ns[1], ns_chroma=ns[2], ns_sigma=ns[3])
                rows.append(row)
                print(f"{name:<10} {sigma:>5.0f} {ceiling:>12.2f} {noisy_rt:>6.2f} {cv_best[0]:>7.2f} "
                      f"({cv_best[1]:>4.1f}, {cv_best[2]:>4.1f}) {ours[0]:>8.2f} "
                      f"({ours[1]:>4.1f}, {ours[2]:>4.1f}) {ours[0] - cv_best[0]:>+6.2f} "
                      f"{carried[0]:>8.2f} {ns[0]:>12.2f} ({ns[1]:>4.1f}, {ns[2]:>4.1f}, {ns[3]:>4.1f}) "
                      f"{ns[0] - cv_best[0]:>+6.2f}   [{time.time() - t0:.0f} s]", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    worst = min(r["cudanlm"] - r["opencv"] for r in rows)
    worst_ns = min(r["with_noise_sigma"] - r["opencv"] for r in rows)
    print(f"cudanlm - OpenCV: {worst:+.2f} dB at worst; with noise-sigma searched too: "
          f"{worst_ns:+.2f} dB at worst")
    return 0 if worst >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())

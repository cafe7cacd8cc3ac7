#!/usr/bin/env python3
"""Pictures for docs/cudaclahe.md: real photos from scikit-image (Debian:
python3-skimage) through the plugin's cudahisteq and cudaclahe, side by
side with their histograms, and cudaclahe at several clip limits.

Every output is also compared with OpenCV (cv2.equalizeHist,
cv2.createCLAHE); the script fails on any difference.

    GST_PLUGIN_PATH=build/plugin scripts/make-clahe-pictures.py [--out docs/img] [--backend cpu|cuda]

Writes clahe-moon.png, clahe-hubble_deep_field.png, clahe-camera.png and
clahe-clip-limits.png. Needs numpy, cv2, matplotlib and gst-launch-1.0.
"""
import argparse
import os
import sys
import tempfile

import cv2
import matplotlib
import numpy as np
import skimage

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gstraw import filter_frames  # noqa: E402

PHOTOS = ["moon.png", "hubble_deep_field.jpg", "camera.png"]
# Photos wider than this are scaled down first (the element then filters
# the picture as shown).
MAX_WIDTH = 640
CLIP_LIMITS = [1.0, 2.0, 4.0, 0.0]


def load_gray(name):
    img = cv2.imread(os.path.join(skimage.data_dir, name), cv2.IMREAD_GRAYSCALE)
    if img is None:
        sys.exit(f"cannot read {name} from {skimage.data_dir}")
    if img.shape[1] > MAX_WIDTH:
        h = round(img.shape[0] * MAX_WIDTH / img.shape[1])
        img = cv2.resize(img, (MAX_WIDTH, h), interpolation=cv2.INTER_AREA)
    return img


def run(img, elements, backend, tmp):
    outs = filter_frames([img], [f"{e} backend={backend}" for e in elements], tmp)
    return [o[0] for o in outs]


def same_as(got, want, what):
    if not np.array_equal(got, want):
        sys.exit(f"{what}: {np.count_nonzero(got != want)} pixels differ from OpenCV")


def comparison(name, img, backend, tmp, out_dir):
    eq, clahe = run(img, ["cudahisteq", "cudaclahe clip-limit=2 tiles-x=8 tiles-y=8"], backend, tmp)
    same_as(eq, cv2.equalizeHist(img), f"{name} cudahisteq")
    same_as(clahe, cv2.createCLAHE(2.0, (8, 8)).apply(img), f"{name} cudaclahe")

    panels = [("original", img), ("cudahisteq (global)", eq), ("cudaclahe (clip 2, 8x8)", clahe)]
    fig, axes = plt.subplots(2, 3, figsize=(12, 5.6), gridspec_kw={"height_ratios": [4, 1]})
    for col, (title, pic) in enumerate(panels):
        axes[0, col].imshow(pic, cmap="gray", vmin=0, vmax=255)
        axes[0, col].set_title(title)
        axes[0, col].axis("off")
        axes[1, col].bar(np.arange(256), np.bincount(pic.ravel(), minlength=256), width=1,
                         color="0.3")
        axes[1, col].set_xlim(0, 255)
        axes[1, col].set_yticks([])
    stem = os.path.splitext(name)[0]
    fig.suptitle(f"{stem}, {img.shape[1]}x{img.shape[0]}, backend={backend}")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    path = os.path.join(out_dir, f"clahe-{stem}.png")
    fig.savefig(path, dpi=72)
    plt.close(fig)
    return path


def clip_limits(img, backend, tmp, out_dir):
    outs = run(img, [f"cudaclahe clip-limit={c} tiles-x=8 tiles-y=8" for c in CLIP_LIMITS],
               backend, tmp)
    fig, axes = plt.subplots(1, len(CLIP_LIMITS), figsize=(14, 3.9))
    for ax, c, pic in zip(axes, CLIP_LIMITS, outs):
        same_as(pic, cv2.createCLAHE(c, (8, 8)).apply(img), f"clip-limit {c}")
        ax.imshow(pic, cmap="gray", vmin=0, vmax=255)
        ax.set_title(f"clip-limit={c:g}" + (" (no clipping)" if c == 0 else ""))
        ax.axis("off")
    fig.tight_layout()
    path = os.path.join(out_dir, "clahe-clip-limits.png")
    fig.savefig(path, dpi=72)
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/img")
    ap.add_argument("--backend", choices=["cpu", "cuda"], default="cpu")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in PHOTOS:
            print(comparison(name, load_gray(name), args.backend, tmp, args.out))
        print(clip_limits(load_gray("moon.png"), args.backend, tmp, args.out))


if __name__ == "__main__":
    main()

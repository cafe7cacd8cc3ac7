#!/usr/bin/env python3
"""Effect of temporal-smoothing on cudahisteq and cudaclahe: flicker of the
background when a bright region appears, and what it costs on a still scene.

Three synthetic GRAY8 videos are made from scikit-image's camera.png
(512x512), each with Gaussian sensor noise (sigma 2):
  flashing  120 frames; a 120x120 square at 250 is on for frames 30-59 and 90-99
  moving    120 frames; the same square moves left to right across the frame
  still     60 frames of the photo alone
Each video goes through one gst-launch-1.0 pipeline with a tee branch per
element (cudahisteq, cudaclahe with clip-limit 2 and 8x8 tiles) and
temporal-smoothing 0, 0.5, 0.8, 0.9. Reported per branch:
  * flicker: |mean(out[n]) - mean(out[n-1])| over the pixels outside the
    square (in frames n and n-1), averaged over n (and its largest value),
    and the average's drop against smoothing 0;
  * on the still video, the max and mean |smoothed - unsmoothed| over all
    frames after the first.
Smoothing 0 must equal cv2.equalizeHist / cv2.createCLAHE(2, (8, 8)) frame
for frame; the script exits 1 if not.

    GST_PLUGIN_PATH=build/plugin studies/temporal_smoothing.py [--backend cpu|cuda] [--json FILE] [--plot FILE]
Needs numpy, cv2, scikit-image's data directory (camera.png) and
gst-launch-1.0; matplotlib for --plot.
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy", "skimage"])

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import skimage  # noqa: E402

from gstraw import filter_frames  # noqa: E402

SMOOTHING = [0, 0.5, 0.8, 0.9]
ELEMENTS = {"cudahisteq": ("cudahisteq", cv2.equalizeHist),
            "cudaclahe": ("cudaclahe clip-limit=2 tiles-x=8 tiles-y=8",
                          cv2.createCLAHE(2.0, (8, 8)).apply)}
SIDE, LEVEL, NOISE = 120, 250, 2.0
FLASH_ON = set(range(30, 60)) | set(range(90, 100))
FLASH_Y, FLASH_X = 340, 360  # top left corner of the flashing square


def make_videos(seed=1):
    scene = cv2.imread(os.path.join(skimage.data_dir, "camera.png"), cv2.IMREAD_GRAYSCALE)
    h, w = scene.shape
    rng = np.random.default_rng(seed)

    def frame(square):  # square: (y, x) or None -> (frame, mask of the square)
        img = scene.astype(np.float64)
        mask = np.zeros((h, w), bool)
        if square is not None:
            mask[square[0]:square[0] + SIDE, square[1]:square[1] + SIDE] = True
            img[mask] = LEVEL
        img = np.clip(np.rint(img + rng.normal(0, NOISE, img.shape)), 0, 255).astype(np.uint8)
        return img, mask

    n = 120
    return {
        "flashing": [frame((FLASH_Y, FLASH_X) if i in FLASH_ON else None) for i in range(n)],
        "moving": [frame((h // 2 - SIDE // 2, round(i * (w - SIDE) / (n - 1)))) for i in range(n)],
        "still": [frame(None) for _ in range(60)],
    }


def outside_means(outs, masks, fixed):
    """Mean output level outside the square, per frame; with `fixed`, outside
    the union of all squares (the flashing one), else outside the square of
    that frame. Returns (levels, deltas) where deltas[n-1] compares n to n-1
    over pixels outside the square in both frames."""
    union = np.logical_or.reduce(masks)
    levels, deltas = [], []
    for i, out in enumerate(outs):
        keep = ~union if fixed else ~masks[i]
        levels.append(float(out[keep].mean()))
        if i:
            keep = ~union if fixed else ~(masks[i] | masks[i - 1])
            deltas.append(abs(float(out[keep].mean()) - float(outs[i - 1][keep].mean())))
    return levels, deltas


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--json")
    ap.add_argument("--plot")
    args = ap.parse_args()

    videos = make_videos()
    branches = [(name, s) for name in ELEMENTS for s in SMOOTHING]
    descs = [f"{ELEMENTS[n][0]} backend={args.backend} temporal-smoothing={s}" for n, s in branches]
    rows = {b: {"element": b[0], "smoothing": b[1]} for b in branches}
    plot_levels = {}
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for vname, video in videos.items():
            frames = [f for f, _ in video]
            masks = [m for _, m in video]
            outs = dict(zip(branches, filter_frames(frames, descs, tmp)))
            for name, (_, ref_fn) in ELEMENTS.items():
                bad = [i for i, (f, o) in enumerate(zip(frames, outs[(name, 0)]))
                       if not np.array_equal(o, ref_fn(f))]
                if bad:
                    ok = False
                    print(f"MISMATCH: {name} temporal-smoothing=0 differs from OpenCV on {vname} "
                          f"in {len(bad)} frames (first {bad[0]})", file=sys.stderr)
            for b in branches:
                row = rows[b]
                if vname == "still":
                    diff = np.abs(np.stack(outs[b][1:]).astype(np.int16)
                                  - np.stack(outs[(b[0], 0)][1:]).astype(np.int16))
                    row["still_max_diff"] = int(diff.max())
                    row["still_mean_diff"] = float(diff.mean())
                    continue
                levels, deltas = outside_means(outs[b], masks, fixed=vname == "flashing")
                row[f"{vname}_mean_delta"] = float(np.mean(deltas))
                row[f"{vname}_max_delta"] = float(np.max(deltas))
                if vname == "flashing":
                    plot_levels[b] = levels
    for b in branches:
        for v in ("flashing", "moving"):
            off = rows[(b[0], 0)][f"{v}_mean_delta"]
            rows[b][f"{v}_drop_factor"] = off / rows[b][f"{v}_mean_delta"]

    print(f"Mean output level outside the bright square: |change| between successive frames "
          f"(mean over frames, max in brackets); backend={args.backend}")
    print("| element | smoothing | flashing | drop vs off | moving | drop vs off "
          "| still: max / mean diff vs off |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for b in branches:
        r = rows[b]
        cells = []
        for v in ("flashing", "moving"):
            f = r[f"{v}_drop_factor"]
            cells += [f"{r[f'{v}_mean_delta']:.3f} ({r[f'{v}_max_delta']:.2f})",
                      f"{f:.2f}x ({100 * (1 - 1 / f):.0f}%)"]
        cells.append(f"{r['still_max_diff']} / {r['still_mean_diff']:.3f}")
        print(f"| {b[0]} | {b[1]} | " + " | ".join(cells) + " |")
    print("smoothing 0 equals OpenCV frame for frame: " + ("yes" if ok else "NO"))

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"backend": args.backend, "opencv_match": ok, "rows": list(rows.values())},
                      f, indent=1)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(9, 4.5))
        for i, name in enumerate(ELEMENTS):
            for s, style in ((0, "-"), (0.9, "--")):
                ax.plot(plot_levels[(name, s)], style, color=f"C{i}",
                        label=f"{name} temporal-smoothing={s}")
        for start, end in ((30, 59), (90, 99)):
            ax.axvspan(start - 0.5, end + 0.5, color="0.9", zorder=0)
        ax.set_xlabel("frame (grey: bright square on)")
        ax.set_ylabel("mean output level outside the square")
        ax.set_title(f"Flashing video, backend={args.backend}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

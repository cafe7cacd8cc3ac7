#!/usr/bin/env python3
"""What a user would run instead, on the same frames: OpenCV's equalizeHist,
CLAHE, unsharp masking, filter2D sharpening and fastNlMeansDenoising on the
host CPU.

    bench/peers.py FRAMES_DIR [--json FILE] [--frames N]

FRAMES_DIR holds the raw GRAY8 frames element_bench --dump-frames wrote
(NAME-WxH-K.gray). Times are per frame, median and 10th/90th percentiles
after warm-up, with OpenCV's default thread count. The 16-bit rows take the
same frames x257 as CV_16U (cpu_bench's 16-bit rows do the same); OpenCV
has no 16-bit equalizeHist, and its 16-bit fastNlMeansDenoising takes only
NORM_L1.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])

import cv2  # noqa: E402
import numpy as np  # noqa: E402


def load_frames(directory):
    sizes = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.gray"))):
        m = re.match(r"(.+)-(\d+)x(\d+)-(\d+)\.gray$", os.path.basename(path))
        if not m:
            continue
        name, w, h = m.group(1), int(m.group(2)), int(m.group(3))
        frame = np.fromfile(path, dtype=np.uint8).reshape(h, w)
        sizes.setdefault((name, w, h), []).append(frame)
    return sizes


def time_per_frame(fn, frames, iters, warmup=3):
    for i in range(warmup):
        fn(frames[i % len(frames)])
    samples = []
    for i in range(iters):
        f = frames[i % len(frames)]
        t0 = time.perf_counter()
        fn(f)
        samples.append((time.perf_counter() - t0) * 1e6)
    samples.sort()
    at = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
    return statistics.median(samples), at(0.1), at(0.9)


LAPLACIAN_3X3 = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)


def unsharp(img, amount=1.0, radius=1.0, threshold=0):
    """Unsharp masking as an OpenCV user writes it (the same function as
    cudasharpen's default, see docs/cudasharpen.md)."""
    blur = cv2.GaussianBlur(img, (0, 0), radius)
    sharp = cv2.addWeighted(img, 1 + amount, blur, -amount, 0)
    if threshold > 0:
        keep = cv2.absdiff(img, blur) < threshold
        sharp[keep] = img[keep]
    return sharp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("frames_dir")
    ap.add_argument("--json")
    ap.add_argument("--frames", type=int, default=100)
    args = ap.parse_args()

    out = open(args.json, "w") if args.json else None
    machine = {"bench": "peers", "machine": True, "opencv": cv2.__version__,
               "cpus": os.cpu_count(), "opencv_threads": cv2.getNumThreads()}
    print(f"OpenCV {cv2.__version__}, {os.cpu_count()} CPUs, {cv2.getNumThreads()} OpenCV threads")
    if out:
        out.write(json.dumps(machine) + "\n")

    clahe = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8))
    peers = [
        ("OpenCV equalizeHist", cv2.equalizeHist, args.frames),
        ("OpenCV CLAHE (clip 2, 8x8 tiles)", clahe.apply, args.frames),
        ("OpenCV unsharp mask (GaussianBlur + addWeighted, amount 1, radius 1)", unsharp,
         args.frames),
        ("OpenCV filter2D laplacian-3x3",
         lambda f: cv2.filter2D(f, -1, LAPLACIAN_3X3), args.frames),
        ("OpenCV fastNlMeansDenoising (h 10, patch 7, search 21)",
         lambda f: cv2.fastNlMeansDenoising(f, None, 10, 7, 21), max(3, args.frames // 20)),
    ]
    deep_peers = [
        ("OpenCV CLAHE 16-bit (clip 2, 8x8 tiles)", clahe.apply, args.frames),
        ("OpenCV unsharp mask 16-bit (amount 1, radius 1)", unsharp, args.frames),
        ("OpenCV fastNlMeansDenoising 16-bit NORM_L1 (h 10, patch 7, search 21)",
         lambda f: cv2.fastNlMeansDenoising(f, h=[10.0 * 257], templateWindowSize=7, searchWindowSize=21,
                                            normType=cv2.NORM_L1), max(3, args.frames // 20)),
    ]
    for (name, w, h), frames8 in sorted(load_frames(args.frames_dir).items(), key=lambda kv: kv[0][1]):
        frames16 = [f.astype(np.uint16) * 257 for f in frames8]
        for what, fn, iters, frames in ([p + (frames8,) for p in peers] +
                                        [p + (frames16,) for p in deep_peers]):
            med, p10, p90 = time_per_frame(fn, frames, iters)
            print(f"  {what:<58} {name:<6} median {med:9.1f} us  (p10 {p10:9.1f}, p90 {p90:9.1f})")
            if out:
                out.write(json.dumps({"bench": "peers", "what": what, "size": name, "width": w,
                                      "height": h, "median_us": med, "p10_us": p10,
                                      "p90_us": p90}) + "\n")
    if out:
        out.close()


if __name__ == "__main__":
    main()

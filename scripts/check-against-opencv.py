#!/usr/bin/env python3
"""End-to-end check of cudahisteq against OpenCV's cv2.equalizeHist.

Writes frames of many sizes and contents as raw GRAY8 (GStreamer's default
layout: rows padded to 4 bytes), runs them through
    filesrc ! rawvideoparse ! cudahisteq backend=BACKEND ! filesink
with gst-launch-1.0, and compares every pixel with cv2.equalizeHist.
Also times cv2.equalizeHist and CLAHE on this host for comparison.

    scripts/check-against-opencv.py [--backend cuda|cpu] [--timing]
Needs python3 with numpy and cv2, gst-launch-1.0 and the plugin on
GST_PLUGIN_PATH. Exits non-zero on any mismatch.
"""
import argparse
import os
import sys
import tempfile
import time

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gstraw import filter_frames  # noqa: E402

SIZES = [(1, 1), (2, 1), (1, 7), (3, 3), (17, 5), (33, 1), (385, 289), (641, 479),
         (1280, 720), (1921, 1081), (3840, 2160), (7680, 4320)]


def frames_for(rng, w, h):
    yield "uniform", rng.integers(0, 256, (h, w), dtype=np.uint8)
    yield "low-contrast", rng.integers(100, 141, (h, w), dtype=np.uint8)
    yield "one-value", np.full((h, w), 201, np.uint8)
    yield "two-value", rng.choice(np.array([17, 18], np.uint8), (h, w), p=[0.3, 0.7])
    yy, xx = np.mgrid[0:h, 0:w]
    smooth = 90 + 40 * xx / max(w, 1) + 20 * yy / max(h, 1) + rng.normal(0, 4, (h, w))
    yield "natural", np.clip(smooth, 0, 255).astype(np.uint8)


def run_element(frames, w, h, backend, tmp):
    return filter_frames(frames, [f"cudahisteq backend={backend}"], tmp)[0]


def check(backend):
    rng = np.random.default_rng(2026)
    failures = checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for w, h in SIZES:
            named = list(frames_for(rng, w, h))
            outs = run_element([img for _, img in named], w, h, backend, tmp)
            for (name, img), got in zip(named, outs):
                want = cv2.equalizeHist(img)
                checked += 1
                if not np.array_equal(got, want):
                    bad = np.argwhere(got != want)
                    y, x = bad[0]
                    print(f"MISMATCH {w}x{h} {name}: {len(bad)} pixels differ, first at "
                          f"({x},{y}) got {got[y, x]} want {want[y, x]}")
                    failures += 1
    print(f"cudahisteq backend={backend} vs cv2.equalizeHist {cv2.__version__}: "
          f"{checked - failures}/{checked} frames identical")
    return failures == 0


def timing():
    rng = np.random.default_rng(1)
    print(f"OpenCV {cv2.__version__} on this host, {cv2.getNumThreads()} threads, {os.cpu_count()} CPUs")
    for name, (w, h) in [("720p", (1280, 720)), ("1080p", (1920, 1080)), ("4K", (3840, 2160))]:
        yy, xx = np.mgrid[0:h, 0:w]
        frames = [np.clip(60 + 60 * xx / w + 30 * yy / h + rng.normal(0, 6, (h, w)), 0, 255)
                  .astype(np.uint8) for _ in range(4)]
        clahe = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8))
        for label, fn in [("equalizeHist", cv2.equalizeHist), ("CLAHE(2, 8x8)", clahe.apply)]:
            for f in frames:
                fn(f)
            ts = []
            for i in range(200):
                t0 = time.perf_counter()
                fn(frames[i % 4])
                ts.append((time.perf_counter() - t0) * 1e6)
            ts.sort()
            print(f"  opencv {label:<14} {name:<6} median {ts[len(ts) // 2]:9.1f} us  "
                  f"(p10 {ts[len(ts) // 10]:9.1f}, p90 {ts[9 * len(ts) // 10]:9.1f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="cuda", choices=["cuda", "cpu", "auto"])
    ap.add_argument("--timing", action="store_true")
    args = ap.parse_args()
    ok = check(args.backend)
    if args.timing:
        timing()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

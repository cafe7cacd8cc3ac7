#!/usr/bin/env python3
"""cudaclahe on 16-bit frames against OpenCV's CLAHE on CV_16UC1.

Runs gst-launch-1.0 (filesrc ! rawvideoparse format=gray16-le ! cudaclahe !
filesink) on synthetic 16-bit frames, with each backend, and compares every
output word with cv2.createCLAHE(clip, (tx, ty)).apply() on the same array.
Needs python3 with numpy and OpenCV, and the plugin on GST_PLUGIN_PATH.

  scripts/check_clahe16_opencv.py [--backends cuda,cpu]

Prints one line per case and exits 1 if any output differs.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

# width, height, clip limit, tiles across, tiles down
CASES = [
    (640, 512, 2.0, 8, 8),
    (640, 512, 4.0, 1, 1),     # plateau equalization of a thermal frame
    (640, 512, 0.0, 1, 1),
    (1920, 1080, 2.0, 8, 8),
    (1922, 1081, 3.0, 5, 3),   # a grid that does not divide the frame
    (3840, 2160, 2.0, 8, 8),   # tiles of more than 65535 samples
    (3840, 2160, 40.0, 1, 1),
]


def thermal_scene(rng, w, h):
    """A 14-bit scene in 16-bit words: a smooth background, hot spots, noise."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    top = (1 << 14) - 1
    v = top * (0.30 + 0.05 * np.sin(x * 0.05) + 0.04 * y / h)
    for cx, cy, r in ((0.7, 0.4, 0.08), (0.2, 0.7, 0.03), (0.5, 0.2, 0.015)):
        v[(x - cx * w) ** 2 + (y - cy * h) ** 2 < (r * w) ** 2] = top * 0.85
    v += rng.normal(0.0, top / 800.0, size=v.shape)
    return np.clip(v, 0, top).astype(np.uint16)


def full_range(rng, w, h):
    return rng.integers(0, 65536, size=(h, w), dtype=np.uint16)


def run_element(backend, img, clip, tx, ty, tmp):
    h, w = img.shape
    src = os.path.join(tmp, "in.raw")
    dst = os.path.join(tmp, "out.raw")
    img.tofile(src)
    launch = [
        "gst-launch-1.0", "-q", "filesrc", f"location={src}", f"blocksize={w * h * 2}", "!",
        "rawvideoparse", "format=gray16-le", f"width={w}", f"height={h}", "framerate=1/1", "!",
        "cudaclahe", f"backend={backend}", f"clip-limit={clip}", f"tiles-x={tx}",
        f"tiles-y={ty}", "!", "filesink", f"location={dst}",
    ]
    subprocess.run(launch, check=True)
    return np.fromfile(dst, dtype=np.uint16).reshape(h, w)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="cuda,cpu")
    args = ap.parse_args()
    rng = np.random.default_rng(16)
    bad = 0
    print(f"OpenCV {cv2.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        for w, h, clip, tx, ty in CASES:
            for name, make in (("14-bit scene", thermal_scene), ("full range", full_range)):
                img = make(rng, w, h)
                want = cv2.createCLAHE(clipLimit=clip, tileGridSize=(tx, ty)).apply(img)
                for backend in args.backends.split(","):
                    got = run_element(backend, img, clip, tx, ty, tmp)
                    diff = int(np.count_nonzero(got != want))
                    bad += diff != 0
                    print(f"{backend:4s} {w}x{h} clip {clip} {tx}x{ty} {name}: "
                          f"{'identical' if diff == 0 else f'{diff} words differ'}")
    print("all identical" if bad == 0 else f"{bad} cases differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

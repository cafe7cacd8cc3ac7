#!/usr/bin/env python3
"""cudaclahe and cudasharpen on 16-bit frames against OpenCV on CV_16UC1.

Runs gst-launch-1.0 (filesrc ! rawvideoparse format=gray16-le ! <element> !
filesink) on synthetic 16-bit frames, with each backend, and compares every
output word with OpenCV on the same array:
  cudaclahe clip-limit=c tiles-x=tx tiles-y=ty
      cv2.createCLAHE(c, (tx, ty)).apply(img)
  cudasharpen amount=a radius=r
      cv2.addWeighted(img, 1 + a, cv2.GaussianBlur(img, (0, 0), r,
      borderType=BORDER_REFLECT_101), -a, 0)
  cudasharpen kernel=laplacian-3x3
      cv2.filter2D(img, -1, [0 -1 0; -1 5 -1; 0 -1 0], BORDER_REFLECT_101)
Needs python3 with numpy and OpenCV, and the plugin on GST_PLUGIN_PATH.

  scripts/check_16bit_opencv.py [--backends cuda,cpu] [--elements cudaclahe,cudasharpen]

Prints one line per case and exits 1 if any output differs.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from gstraw import from_raw, stride_of, to_raw  # noqa: E402

LAPLACIAN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)

# (element, width, height, properties, OpenCV on the array)
CASES = [
    ("cudaclahe", 640, 512, "clip-limit=2 tiles-x=8 tiles-y=8",
     lambda img: cv2.createCLAHE(2.0, (8, 8)).apply(img)),
    # plateau equalization of a thermal frame
    ("cudaclahe", 640, 512, "clip-limit=4 tiles-x=1 tiles-y=1",
     lambda img: cv2.createCLAHE(4.0, (1, 1)).apply(img)),
    ("cudaclahe", 640, 512, "clip-limit=0 tiles-x=1 tiles-y=1",
     lambda img: cv2.createCLAHE(0.0, (1, 1)).apply(img)),
    ("cudaclahe", 1920, 1080, "clip-limit=2 tiles-x=8 tiles-y=8",
     lambda img: cv2.createCLAHE(2.0, (8, 8)).apply(img)),
    # a grid that does not divide the frame
    ("cudaclahe", 1922, 1081, "clip-limit=3 tiles-x=5 tiles-y=3",
     lambda img: cv2.createCLAHE(3.0, (5, 3)).apply(img)),
    # tiles of more than 65535 samples
    ("cudaclahe", 3840, 2160, "clip-limit=2 tiles-x=8 tiles-y=8",
     lambda img: cv2.createCLAHE(2.0, (8, 8)).apply(img)),
    ("cudaclahe", 3840, 2160, "clip-limit=40 tiles-x=1 tiles-y=1",
     lambda img: cv2.createCLAHE(40.0, (1, 1)).apply(img)),
]


def unsharp(amount, radius):
    def opencv(img):
        blur = cv2.GaussianBlur(img, (0, 0), radius, borderType=cv2.BORDER_REFLECT_101)
        return cv2.addWeighted(img, 1 + amount, blur, -amount, 0)
    return opencv


for w, h, amount, radius in [(640, 512, 1.0, 1.0), (641, 479, 0.7, 2.2), (1921, 1081, 1.5, 0.5),
                             (333, 119, 20.0, 16.0), (640, 512, 0.3, 0.1), (1280, 720, 1.3, 5.5)]:
    CASES.append(("cudasharpen", w, h, f"amount={amount} radius={radius}", unsharp(amount, radius)))
CASES.append(("cudasharpen", 641, 479, "kernel=laplacian-3x3",
              lambda img: cv2.filter2D(img, -1, LAPLACIAN, borderType=cv2.BORDER_REFLECT_101)))


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


def run_element(element, props, backend, img, tmp):
    h, w = img.shape
    src = os.path.join(tmp, "in.raw")
    dst = os.path.join(tmp, "out.raw")
    with open(src, "wb") as f:
        f.write(to_raw(img))
    launch = [
        "gst-launch-1.0", "-q", "filesrc", f"location={src}", f"blocksize={stride_of(w, np.uint16) * h * 2}",
        "!",
        "rawvideoparse", "format=gray16-le", f"width={w}", f"height={h}", "framerate=1/1", "!",
        element, f"backend={backend}", *props.split(), "!", "filesink", f"location={dst}",
    ]
    subprocess.run(launch, check=True)
    with open(dst, "rb") as f:
        return from_raw(f.read(), w, h, 1, np.uint16)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="cuda,cpu")
    ap.add_argument("--elements", default="cudaclahe,cudasharpen")
    args = ap.parse_args()
    elements = args.elements.split(",")
    known = sorted({case[0] for case in CASES})
    unknown = [e for e in elements if e not in known]
    if unknown:
        ap.error(f"--elements: no cases for {', '.join(unknown)} (of {','.join(known)})")
    backends = args.backends.split(",")
    if any(b not in ("cuda", "cpu", "auto") for b in backends):
        ap.error("--backends takes cuda, cpu and auto, separated by commas")
    rng = np.random.default_rng(16)
    bad = 0
    print(f"OpenCV {cv2.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        for element, w, h, props, opencv in CASES:
            if element not in elements:
                continue
            for name, make in (("14-bit scene", thermal_scene), ("full range", full_range)):
                img = make(rng, w, h)
                want = opencv(img)
                for backend in backends:
                    try:
                        got = run_element(element, props, backend, img, tmp)
                    except subprocess.CalledProcessError:
                        print(f"check_16bit_opencv.py: {element} backend={backend} failed "
                              "(gst-launch-1.0's message above)", file=sys.stderr)
                        return 1
                    diff = int(np.count_nonzero(got != want))
                    bad += diff != 0
                    print(f"{backend:4s} {element} {props} {w}x{h} {name}: "
                          f"{'identical' if diff == 0 else f'{diff} words differ'}")
    print("all identical" if bad == 0 else f"{bad} cases differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes grayscale PNGs of real photographs that ship with scikit-image
(Debian: python3-skimage) into DIR, for the denoising quality benchmark:
camera (512x512), astronaut (512x512), coffee (600x400), chelsea (451x300);
and colour copies into DIR/colour for the colour and temporal benchmarks
(studies/nlm_colour_quality.py, studies/nlm_temporal_quality.py --photo):
astronaut, coffee, chelsea and motorcycle_left (741x500).

    scripts/prepare-photos.py [DIR]      (default: bench/photos)
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "skimage"])

import cv2  # noqa: E402
import skimage  # noqa: E402

PHOTOS = ["camera.png", "astronaut.png", "coffee.png", "chelsea.png"]
COLOUR = ["astronaut.png", "coffee.png", "chelsea.png", "motorcycle_left.png"]


def copy_photos(names, data, out, flags):
    """Reads each photo from scikit-image's `data` folder as `flags` says
    (gray or colour) and writes it to `out`."""
    os.makedirs(out, exist_ok=True)
    for name in names:
        img = cv2.imread(os.path.join(data, name), flags)
        if img is None:
            sys.exit(f"cannot read {name} from {data}")
        cv2.imwrite(os.path.join(out, name), img)
        print(f"{out}/{name}: {img.shape[1]}x{img.shape[0]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?", default="bench/photos", help="folder to write (default bench/photos)")
    out = ap.parse_args().dir
    if os.path.exists(out) and not os.path.isdir(out):
        ap.error(f"{out} is a file, not a folder")
    data = os.path.join(os.path.dirname(skimage.__file__), "data")
    copy_photos(PHOTOS, data, out, cv2.IMREAD_GRAYSCALE)
    copy_photos(COLOUR, data, os.path.join(out, "colour"), cv2.IMREAD_COLOR)


if __name__ == "__main__":
    main()

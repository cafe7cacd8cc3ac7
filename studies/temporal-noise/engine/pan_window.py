#!/usr/bin/env python3
"""A window of radius 1 with automatic strength on the camera set's panning
scenes (held out; the scene moves 1 pixel a frame), through the CPU engine
(bit for bit the GPU's) of two builds: luma PSNR of the middle frame.

    /usr/bin/python3 studies/temporal-noise/engine/pan_window.py NEW_LIB OLD_LIB [SET]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])
import numpy as np  # noqa: E402

import camera_set as cs  # noqa: E402
from nlm_auto_strength import Engine  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("new_lib")
    ap.add_argument("old_lib")
    ap.add_argument("set", nargs="?", default=".carry/camera")
    args = ap.parse_args()
    new, old = Engine(args.new_lib, False), Engine(args.old_lib, False)
    set_dir = args.set
    rows = []
    for name in cs.HELD_OUT:
        for peak in [10, 20, 50, 100, 200, 500]:
            frames, clean = cs.make_case(cs.load_photo(set_dir, name), name, peak, "pan",
                                         os.path.join(set_dir, "h264"))
            ref = [clean[cs.FRAMES // 2][0]]
            r = []
            for e in (new, old):
                e.reset()
                r.append(cs.psnr(e.denoise(frames, radius=1, automatic=True, chroma_h=-1)[:1], ref))
            rows.append(r)
            print(f"{name:18} {peak:4} new {r[0]:.2f} old {r[1]:.2f} d {r[0] - r[1]:+.2f}", flush=True)
    d = np.array([a - b for a, b in rows])
    print(f"pan held out: mean new - old {d.mean():+.3f} dB, worst {d.min():+.3f}, "
          f"new better in {(d > 0).sum()} of {len(d)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The frame difference's scale, fitted on the camera set's calibration
photos through the engine (cuda/nlm/frame_difference.h, CPU, bit for bit
the GPU's): kDifferenceScale = the median over their still cases of true
noise / the smallest shift's median. Then, with the engine's scale, how
many held-out cases read within 20% of the true luma noise (still, and the
1-pixel pan), and how still each reads.

    /usr/bin/python3 studies/temporal-noise/engine/calibrate.py [--set .carry/camera]
        [--lib build/studies/libnlmtune.so] [--jobs 2]
"""
import argparse
import multiprocessing
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

_engine = None


def _init(lib):
    global _engine
    _engine = Engine(lib, False)


def case(task):
    set_dir, name, peak, variant = task
    frames, clean = cs.make_case(cs.load_photo(set_dir, name), name, peak, variant,
                                 os.path.join(set_dir, "h264"))
    mid, before = frames[cs.FRAMES // 2][0], frames[cs.FRAMES // 2 - 1][0]
    sigma, still, medians = _engine.frame_difference(mid, before)
    return {"photo": name, "peak": peak, "variant": variant,
            "calibration": name in cs.CALIBRATION, "true": cs.truth(frames, clean, [0]),
            "sigma": sigma, "still": still, "raw": min(medians)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default=".carry/camera")
    ap.add_argument("--lib", default="build/studies/libnlmtune.so")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    tasks = [(args.set, n, p, v) for n in cs.CALIBRATION + cs.HELD_OUT
             for p in [10, 20, 50, 100, 200, 500] for v in cs.VARIANTS]
    with multiprocessing.Pool(args.jobs, initializer=_init, initargs=(args.lib,)) as pool:
        rows = pool.map(case, tasks, chunksize=1)
    cal = [r for r in rows if r["calibration"] and r["variant"] != "pan"]
    fit = float(np.median([r["true"] / r["raw"] for r in cal]))
    print(f"scale fitted on {len(cal)} calibration still cases: {fit:.4f}")
    for label, sel in (("held-out still", lambda r: not r["calibration"] and r["variant"] != "pan"),
                       ("held-out pan", lambda r: not r["calibration"] and r["variant"] == "pan"),
                       ("calibration still", lambda r: r["calibration"] and r["variant"] != "pan")):
        rs = [r for r in rows if sel(r)]
        within = sum(abs(r["sigma"] / r["true"] - 1) <= 0.2 for r in rs)
        ratio = [r["sigma"] / r["true"] for r in rs]
        still = [r["still"] for r in rs]
        print(f"{label:18}: {within} of {len(rs)} within 20% (engine's scale); estimate / true "
              f"{min(ratio):.2f} to {max(ratio):.2f}; still 1 in {sum(s == 1 for s in still)}, "
              f"0 in {sum(s == 0 for s in still)}, between in "
              f"{sum(0 < s < 1 for s in still)}")
    per_case(rows)


def per_case(rows):
    """The held-out cases' estimate / true noise by variant and peak."""
    print("| variant | peak | estimate / true, mean (range) | within 20% | reads still |")
    print("| --- | ---: | --- | ---: | ---: |")
    for v in cs.VARIANTS:
        for p in [10, 20, 50, 100, 200, 500]:
            rs = [r for r in rows if not r["calibration"] and r["variant"] == v and r["peak"] == p]
            q = [r["sigma"] / r["true"] for r in rs]
            print(f"| {v} | {p} | {np.mean(q):.2f} ({min(q):.2f}-{max(q):.2f}) | "
                  f"{sum(abs(x - 1) <= 0.2 for x in q)} of {len(q)} | "
                  f"{sum(r['still'] == 1 for r in rs)} of {len(rs)} |")


if __name__ == "__main__":
    main()

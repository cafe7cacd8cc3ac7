#!/usr/bin/env python3
"""The window factors fitted again on the engine's own frame difference
(cuda/nlm/frame_difference.h, its blocks' mean taken out), as
../README.md's --grid fitted them on the study's estimate: every still case
of the camera set through a window of radius 1 at strength = a x sigma and
noise-sigma = b x sigma (CPU engine), per band of sigma the (a, b) with the
best mean over the calibration photos, applied to the held-out ones
against fastNlMeansDenoisingMulti's best.

    /usr/bin/python3 studies/temporal-noise/engine/refit.py [--set .carry/camera]
        [--lib build/studies/libnlmtune.so] [--jobs 2] [--json refit.json]
"""
import argparse
import json
import multiprocessing
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])

import camera_set as cs  # noqa: E402
import temporal_noise as tn  # noqa: E402


def engine_sigma(task):
    set_dir, name, peak, variant = task
    frames, _ = tn.static_case(set_dir, name, peak, variant)
    return tn._engine.frame_difference(frames[cs.FRAMES // 2][0], frames[cs.FRAMES // 2 - 1][0])[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default=".carry/camera")
    ap.add_argument("--lib", default="build/studies/libnlmtune.so")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    cases = [(args.set, n, p, v) for n in cs.CALIBRATION + cs.HELD_OUT for p in cs.PEAKS
             for v in cs.VARIANTS if v != "pan"]
    with multiprocessing.Pool(args.jobs, initializer=tn._init, initargs=(args.lib,)) as pool:
        sigmas = pool.map(engine_sigma, cases, chunksize=4)
        gs = pool.map(tn.grid_case, [c + (s,) for c, s in zip(cases, sigmas)], chunksize=1)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(gs, f)
    tn.report_grid(gs)


if __name__ == "__main__":
    main()

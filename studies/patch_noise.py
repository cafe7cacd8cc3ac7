#!/usr/bin/env python3
"""The noise as NLM's weights see it, read from patch distances: a numpy
study on the camera set (studies/camera_set.py), beside the engine's
estimate.

NLM weighs a patch by its distance to the patch being denoised. Between
two noisy copies of one clean patch the mean squared difference per pixel
is 2 sigma^2, whatever the noise's spatial correlation (each pixel pair
holds two independent noise samples). So among a frame's patch pairs,
those whose clean patches match measure sigma directly, in NLM's own
terms; texture only adds to a pair's distance. The estimator:

  1. reference patches (7x7, NLM's patch) on a grid of step 8;
  2. for each, the mean squared difference per pixel to the patches at
     offsets of 3 to 5 pixels (Chebyshev distance: past the demosaicing's
     correlation, so that the two copies' noise is independent);
  3. per reference, a low quantile over its offsets (the most similar
     neighbours, along an edge too), then a low quantile over the
     references (flat or self-similar places);
  4. sigma = sqrt(value / 2) times a factor fitted on the calibration
     photos (the quantiles of chi-square-like sums sit below their mean).

Prints, per variant and peak, the estimate / true noise (the standard
deviation of delivered - clean, as camera_set.py) for the engine's
estimate (CPU engine, bit for bit the GPU's) and for this one; and how many
held-out cases fall within 20%. Static and panning cases alike: it reads
one frame.

    /usr/bin/python3 studies/patch_noise.py --set .carry/camera --lib build/studies/libnlmtune.so \
        --json patch-noise.json
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])
import numpy as np  # noqa: E402

import camera_set as cs  # noqa: E402
from nlm_auto_strength import Engine  # noqa: E402

PATCH = 7
STEP = 8
RING = (3, 5)
REF_QUANTILES = [0.02, 0.05, 0.1, 0.25, 0.5]
FRAME_QUANTILES = [0.05, 0.1, 0.2, 0.3]


def box(a, k):
    """Sums of k x k windows of a (valid part)."""
    c = np.cumsum(np.cumsum(np.pad(a, ((1, 0), (1, 0))), 0), 1)
    return c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]


def patch_statistics(y, PATCH, RING):
    """Per reference: low quantiles of its mean squared difference per pixel
    to the patches on the ring; an array (references, len(REF_QUANTILES))."""
    y = y.astype(np.float64)
    h, w = y.shape
    m = RING[1]
    offsets = [(dy, dx) for dy in range(-m, m + 1) for dx in range(-m, m + 1)
               if RING[0] <= max(abs(dy), abs(dx)) <= RING[1]]
    # Patch top-left corners of the references, with room for every offset.
    ys = np.arange(m, h - PATCH - m + 1, STEP)
    xs = np.arange(m, w - PATCH - m + 1, STEP)
    msd = np.empty((len(offsets), len(ys), len(xs)))
    for i, (dy, dx) in enumerate(offsets):
        shifted = np.roll(np.roll(y, -dy, 0), -dx, 1)
        s = box((y - shifted) ** 2, PATCH) / (PATCH * PATCH)
        msd[i] = s[np.ix_(ys, xs)]
    msd = msd.reshape(len(offsets), -1)
    return np.stack([np.quantile(msd, q, axis=0) for q in REF_QUANTILES], axis=1)


_engine = None


_shape = (PATCH, RING)


def _init(lib, shape):
    global _engine, _shape
    _engine = Engine(lib, gpu=False) if lib else None
    _shape = shape


def case(task):
    set_dir, name, peak, variant = task
    frames, clean = cs.make_case(cs.load_photo(set_dir, name), name, peak, variant,
                                 os.path.join(set_dir, "h264"))
    mid = frames[cs.FRAMES // 2]
    refs = patch_statistics(mid[0], *_shape)
    raw = {f"{rq}/{fq}": float(np.sqrt(np.quantile(refs[:, i], fq) / 2))
           for i, rq in enumerate(REF_QUANTILES) for fq in FRAME_QUANTILES}
    r = {"photo": name, "peak": peak, "variant": variant,
         "calibration": name in cs.CALIBRATION, "true": cs.truth(frames, clean, [0]), "raw": raw}
    if _engine:
        r["engine"] = _engine.estimate_frame(*mid)[0]
    return r


def main():
    ap = cs.study_arguments(__doc__)
    ap.add_argument("--patch", type=int, default=PATCH)
    ap.add_argument("--ring", type=int, nargs=2, default=list(RING),
                    help="the offsets' Chebyshev distances, from and to")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            rows = json.load(f)
    else:
        lib = a.lib if os.path.exists(a.lib) else None
        rows = cs.measure_cases(case, _init, (lib, (a.patch, tuple(a.ring))), a.jobs, a.set,
                                cs.VARIANTS, a.json)
    cal = [r for r in rows if r["calibration"]]
    held = [r for r in rows if not r["calibration"]]
    key, n_cal, factor = cs.fit_statistic(cal)
    if not a.from_json:
        print(f"patch {a.patch}, offsets {a.ring[0]} to {a.ring[1]} pixels away")
    print(f"statistic {key} (reference quantile / frame quantile), factor {factor:.3f}: "
          f"{n_cal} of {len(cal)} calibration cases within 20%")
    print("| variant | peak | engine: estimate / true (held out) | patch distances: estimate / true |")
    print("| --- | ---: | --- | --- |")
    for v in cs.VARIANTS:
        for p in cs.PEAKS:
            rs = [r for r in held if r["variant"] == v and r["peak"] == p]
            pd = [factor * r["raw"][key] / r["true"] for r in rs]
            en = [r["engine"] / r["true"] for r in rs if "engine" in r]
            fmt = lambda x: f"{np.mean(x):.2f} ({min(x):.2f} to {max(x):.2f})" if x else "-"
            print(f"| {v} | {p} | {fmt(en)} | {fmt(pd)} |")
    n_pd = sum(cs.within(factor * r["raw"][key], r["true"]) for r in held)
    n_en = sum(cs.within(r["engine"], r["true"]) for r in held if "engine" in r)
    print(f"held-out cases within 20% of the true luma noise: engine {n_en}, patch distances "
          f"{n_pd}, of {len(held)}")
    for v in cs.VARIANTS:
        rs = [r for r in held if r["variant"] == v]
        print(f"  {v}: engine {sum(cs.within(r['engine'], r['true']) for r in rs if 'engine' in r)}, "
              f"patch distances {sum(cs.within(factor * r['raw'][key], r['true']) for r in rs)} "
              f"of {len(rs)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The noise of a static scene read from the difference of two frames: a
numpy study on the camera set (studies/camera_set.py), beside the engine's
estimate, for the windows of temporal denoising (cudanlm temporal-radius,
cudalowlight), which hold the frame before.

Two frames of a still scene differ by their noise alone: per pixel the
difference has variance 2 sigma^2, however the noise is correlated in
space, and texture cancels. A moving region adds its motion, so the
estimate takes a low quantile of the mean squared difference over 8x8
blocks: sigma = sqrt(q / 2) times a factor fitted on the calibration
photos. A codec that repeats a static block (H.264 skips) leaves no
difference there.

Prints, per variant and peak (held-out photos), the estimate / true noise
(the standard deviation of delivered - clean of the middle frame) of the
engine (CPU engine, bit for bit the GPU's), of the frame difference (the
middle frame against the one before), and of the smaller of the two; and
how many held-out cases fall within 20%.

    /usr/bin/python3 studies/temporal_noise.py --set .carry/camera --lib build/studies/libnlmtune.so
"""
import json
import multiprocessing
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])
import numpy as np  # noqa: E402

import camera_set as cs  # noqa: E402
from nlm_auto_strength import Engine  # noqa: E402

BLOCK = 8
QUANTILES = [0.1, 0.25, 0.5]

_engine = None


def _init(lib):
    global _engine
    _engine = Engine(lib, gpu=False) if lib else None


def case(task):
    set_dir, name, peak, variant = task
    frames, clean = cs.make_case(cs.load_photo(set_dir, name), name, peak, variant,
                                 os.path.join(set_dir, "h264"))
    mid, before = frames[cs.FRAMES // 2][0], frames[cs.FRAMES // 2 - 1][0]
    d = mid.astype(np.float64) - before
    h, w = d.shape
    blocks = (d[:h // BLOCK * BLOCK, :w // BLOCK * BLOCK] ** 2).reshape(
        h // BLOCK, BLOCK, w // BLOCK, BLOCK).mean(axis=(1, 3)).ravel()
    r = {"photo": name, "peak": peak, "variant": variant, "calibration": name in cs.CALIBRATION,
         "true": cs.truth(frames, clean, [0]),
         "raw": {str(q): float(np.sqrt(np.quantile(blocks, q) / 2)) for q in QUANTILES}}
    r["shift"] = {str(radius): shift_reading(mid, before, radius) for radius in SHIFT_RADII}
    if _engine:
        r["engine"] = _engine.estimate_frame(*frames[cs.FRAMES // 2])[0]
    return r


SHIFT_RADII = [0, 1, 2]


def shift_reading(mid, before, radius):
    """The global shift reading (`--shifts`): for each integer shift (dx,
    dy) within `radius`, the blocks' mean squared difference of mid(x, y)
    and before(x + dx, y + dy) on mid's 8x8 block grid, over the blocks
    where every such shift has both frames (radius 0: all of them), the
    median over the blocks; the smallest of the shifts' medians (ties keep
    (0, 0)). Returns raw = sqrt(min / 2), the shift that gave it, raw0 =
    shift (0, 0)'s on the same blocks, and every shift's median."""
    mid = mid.astype(np.float64)
    before = before.astype(np.float64)
    h, w = mid.shape
    b0 = -(-radius // BLOCK)  # the first block wholly at least `radius` from the edge
    by1, bx1 = (h - radius) // BLOCK, (w - radius) // BLOCK
    y0, y1, x0, x1 = b0 * BLOCK, by1 * BLOCK, b0 * BLOCK, bx1 * BLOCK
    shifts = sorted(((dx, dy) for dy in range(-radius, radius + 1) for dx in range(-radius, radius + 1)),
                    key=lambda s: (abs(s[0]) + abs(s[1]), s[1], s[0]))
    medians = {}
    best = None
    for dx, dy in shifts:
        d = mid[y0:y1, x0:x1] - before[y0 + dy:y1 + dy, x0 + dx:x1 + dx]
        blocks = (d ** 2).reshape(by1 - b0, BLOCK, bx1 - b0, BLOCK).mean(axis=(1, 3)).ravel()
        m = float(np.median(blocks))
        medians[f"{dx},{dy}"] = m
        if best is None or m < best[0]:
            best = (m, dx, dy)
    return {"raw": float(np.sqrt(best[0] / 2)), "dx": best[1], "dy": best[2],
            "raw0": float(np.sqrt(medians["0,0"] / 2)), "blocks": (by1 - b0) * (bx1 - b0),
            "medians": medians}


def report_shifts(rows, pans):
    """The global shift reading at each radius: its factor (the median of
    true / raw over the calibration cases), held-out still and pan cases
    within 20%, the range of estimate / true, how often a still case's
    smallest median is at a shift other than (0, 0), and the min's raw
    reading over shift (0, 0)'s on the same blocks."""
    held = [r for r in rows if not r["calibration"]]
    pan_held = [r for r in pans if not r["calibration"]] if pans else []
    print("global shift: the smallest over shifts in [-R, R]^2 of the blocks' median squared "
          "difference of mid(x, y) and before(x + dx, y + dy)")
    print(f"| R | factor | calibration within 20% | held-out still within 20% (of {len(held)}) | "
          f"still estimate / true | held-out pan within 20% (of {len(pan_held) or 'none: --motion'}) | "
          "pan estimate / true | "
          f"still cases at a shift other than (0, 0) (all {len(rows)}; held out {len(held)}) | "
          "still: min / shift (0, 0), raw, median (range) |")
    print("| ---: | ---: | ---: | ---: | --- | ---: | --- | ---: | --- |")
    for radius in SHIFT_RADII:
        k = str(radius)
        cal = [r for r in rows if r["calibration"]]
        factor = float(np.median([r["true"] / r["shift"][k]["raw"] for r in cal
                                  if r["shift"][k]["raw"] > 0]))
        est = lambda r: factor * r["shift"][k]["raw"]
        n_cal = sum(cs.within(est(r), r["true"]) for r in cal)
        n_held = sum(cs.within(est(r), r["true"]) for r in held)
        still = [est(r) / r["true"] for r in held]
        pan = [est(r) / r["true"] for r in pan_held]
        moved = lambda rs: sum((r["shift"][k]["dx"], r["shift"][k]["dy"]) != (0, 0) for r in rs)
        bias = [r["shift"][k]["raw"] / r["shift"][k]["raw0"] for r in rows if r["shift"][k]["raw0"] > 0]
        pan_part = (f"{sum(cs.within(est(r), r['true']) for r in pan_held)} | "
                    f"{min(pan):.2f} to {max(pan):.2f} |") if pan else " | |"
        print(f"| {radius} | {factor:.3f} | {n_cal} of {len(cal)} | {n_held} | "
              f"{min(still):.2f} to {max(still):.2f} | {pan_part} {moved(rows)}; {moved(held)} | "
              f"{np.median(bias):.3f} ({min(bias):.3f} to {max(bias):.3f}) |")
    if pans:
        for radius in SHIFT_RADII[1:]:
            k = str(radius)
            picked = {}
            for r in pans:
                s = (r["shift"][k]["dx"], r["shift"][k]["dy"])
                picked[s] = picked.get(s, 0) + 1
            print(f"  R {radius}, pan cases' chosen shift (dx, dy): " +
                  ", ".join(f"{s}: {n}" for s, n in sorted(picked.items(), key=lambda x: -x[1])))
    for radius in SHIFT_RADII[1:]:
        k = str(radius)
        rs = [r for r in rows if (r["shift"][k]["dx"], r["shift"][k]["dy"]) != (0, 0)]
        print(f"  R {radius}, still cases at a shift other than (0, 0): " +
              (", ".join(f"{r['photo']} {r['variant']} {r['peak']} ({r['shift'][k]['dx']}, "
                         f"{r['shift'][k]['dy']}) x{r['shift'][k]['raw'] / r['shift'][k]['raw0']:.3f}"
                         for r in rs) or "none"))


def temporal_factors(sigma, correlated):
    """nlm_auto_strengths' strength and allowance per sigma for a temporal
    window (cuda/nlm/nlm_auto.h), on noise the estimator reads as
    correlated (1: the Bayer variants) or white (0: poisson)."""
    if correlated:
        return 0.75, 0.85
    per = 0.6 if sigma <= 10.5 else (0.55 if sigma > 20 else 0.6 - 0.05 * (sigma - 10.5) / 9.5)
    return per, 1.0


def static_case(set_dir, name, peak, variant):
    """A case's frames, and the clean middle frame's luma as the reference."""
    frames, clean = cs.make_case(cs.load_photo(set_dir, name), name, peak, variant,
                                 os.path.join(set_dir, "h264"))
    return frames, [clean[cs.FRAMES // 2][0]]


def best_multi(frames, ref):
    """fastNlMeansDenoisingMulti's best PSNR over camera_set.py's h."""
    return max(cs.psnr([cs.cv2.fastNlMeansDenoisingMulti([f[0] for f in frames], cs.FRAMES // 2,
                                                         cs.FRAMES, None, h, 7, 21)], ref)
               for h in cs.OPENCV_H)


def psnr_case(task):
    """Luma PSNR of the middle frame of a static case through a window of
    radius 1: automatic strength as the engine runs it, and the same
    factors on the frame difference's estimate (sigma); and
    fastNlMeansDenoisingMulti's best."""
    set_dir, name, peak, variant, sigma = task
    frames, ref = static_case(set_dir, name, peak, variant)
    e = _engine
    e.reset()
    auto = cs.psnr(e.denoise(frames, radius=1, automatic=True, chroma_h=-1)[:1], ref)
    per, allow = temporal_factors(sigma, variant != "poisson")
    ys = [[f[0]] for f in frames]
    e.reset()
    tmp = cs.psnr(e.denoise(ys, radius=1, h=min(max(per * sigma, 1.0), 100.0),
                            noise_sigma=allow * sigma), ref)
    return {"photo": name, "peak": peak, "variant": variant, "auto": auto, "frame_difference": tmp,
            "multi": best_multi(frames, ref)}


PER_SIGMA = [0.4, 0.5, 0.6, 0.75, 0.9, 1.1, 1.35]
ALLOWANCE = [0.5, 0.7, 0.85, 1.0, 1.2]
SIGMA_BANDS = [6.0, 10.0, 15.0, 25.0]


def grid_case(task):
    """The middle frame of a static case through a window of radius 1 at
    strength = per x sigma, noise-sigma = allowance x sigma for the grid
    above (sigma: the frame difference's estimate), luma PSNR of each; and
    fastNlMeansDenoisingMulti's best."""
    set_dir, name, peak, variant, sigma = task
    frames, ref = static_case(set_dir, name, peak, variant)
    e = _engine
    ys = [[f[0]] for f in frames]
    grid = {}
    for per in PER_SIGMA:
        for allow in ALLOWANCE:
            e.reset()
            grid[f"{per}/{allow}"] = cs.psnr(e.denoise(ys, radius=1, h=min(max(per * sigma, 1.0), 100.0),
                                                       noise_sigma=min(allow * sigma, 255.0)), ref)
    return {"photo": name, "peak": peak, "variant": variant, "calibration": name in cs.CALIBRATION,
            "sigma": sigma, "grid": grid, "multi": best_multi(frames, ref)}


def band_of(sigma):
    return sum(sigma > b for b in SIGMA_BANDS)


def report_grid(gs):
    cal = [g for g in gs if g["calibration"]]
    held = [g for g in gs if not g["calibration"]]
    best_of = lambda g: max(g["grid"].values())
    print(f"the grid's best setting at or above Multi's best: calibration "
          f"{sum(best_of(g) >= g['multi'] for g in cal)} of {len(cal)}, held out "
          f"{sum(best_of(g) >= g['multi'] for g in held)} of {len(held)}")
    # Per band of sigma, the setting with the best mean PSNR over the
    # calibration cases, then applied to the held-out ones.
    chosen = {}
    for b in range(len(SIGMA_BANDS) + 1):
        cs_b = [g for g in cal if band_of(g["sigma"]) == b]
        if not cs_b:
            continue
        chosen[b] = max(cs_b[0]["grid"], key=lambda k: np.mean([g["grid"][k] for g in cs_b]))
    print("per band of sigma (upper bounds " + ", ".join(f"{x:g}" for x in SIGMA_BANDS) +
          "), strength / allowance per sigma fitted on the calibration photos: " +
          ", ".join(f"{b}: {k}" for b, k in sorted(chosen.items())))
    fitted = lambda g: g["grid"][chosen.get(band_of(g["sigma"]), "0.75/0.85")]
    today = lambda g: g["grid"]["0.75/0.85"] if g["variant"] != "poisson" else None
    print(f"held out above Multi's best with the fitted factors: "
          f"{sum(fitted(g) > g['multi'] for g in held)} of {len(held)}; mean "
          f"{np.mean([fitted(g) - g['multi'] for g in held]):+.3f} dB (today's correlated factors "
          f"0.75/0.85: {sum(today(g) > g['multi'] for g in held if today(g) is not None)} of "
          f"{sum(1 for g in held if today(g) is not None)} Bayer cases)")
    for v in [v for v in cs.VARIANTS if v != "pan"]:
        q = [g for g in held if g["variant"] == v]
        print(f"  {v}: fitted - Multi " + ", ".join(
            f"{pk}: {np.mean([fitted(g) - g['multi'] for g in q if g['peak'] == pk]):+.2f}"
            for pk in cs.PEAKS))


def static_groups(rows):
    """(variant, peak, the rows of that variant and peak) for the static
    variants, in camera_set.py's order."""
    for v in [v for v in cs.VARIANTS if v != "pan"]:
        for p in cs.PEAKS:
            yield v, p, [r for r in rows if r["variant"] == v and r["peak"] == p]


def denoise_cases(fn, rows, sigma_of, a, json_out):
    """fn over the cases of `rows`, each with its frame difference's sigma,
    in a pool of CPU engines; the results, also written to json_out."""
    tasks = [(a.set, r["photo"], r["peak"], r["variant"], sigma_of(r)) for r in rows]
    with multiprocessing.Pool(a.jobs, _init, (a.lib,)) as pool:
        out = pool.map(fn, tasks, chunksize=1)
    with open(json_out, "w") as f:
        json.dump(out, f, indent=0)
    return out


def main():
    ap = cs.study_arguments(__doc__)
    ap.add_argument("--psnr", help="also denoise the held-out static cases (CPU engine); JSON here")
    ap.add_argument("--grid", help="a grid of window strengths on the frame difference's estimate, "
                    "every static case (CPU engine); JSON here, or reported from it if it exists")
    ap.add_argument("--motion", help="also the pan variant's estimates (JSON here): where the "
                    "frame difference's reading over the engine's tells a moving scene")
    ap.add_argument("--smaller", action="store_true",
                    help="with --grid: sigma is the smaller of the frame difference's estimate "
                    "and the engine's (a moving scene keeps the engine's)")
    ap.add_argument("--shifts", type=int, choices=SHIFT_RADII[1:],
                    help="the global shift reading: the smallest over shifts (dx, dy) in [-R, R]^2 "
                    "of the blocks' median squared difference of mid(x, y) and before(x + dx, y + dy), "
                    "its factor fitted again; and a table of it at R = 0, 1, 2 (with --motion: the "
                    "pan variant's too)")
    a = ap.parse_args()
    if a.from_json:
        with open(a.from_json) as f:
            rows = json.load(f)
    else:
        rows = cs.measure_cases(case, _init, (a.lib if os.path.exists(a.lib) else None,), a.jobs,
                                a.set, [v for v in cs.VARIANTS if v != "pan"], a.json)
    cal = [r for r in rows if r["calibration"]]
    held = [r for r in rows if not r["calibration"]]
    if a.shifts:
        key, n_cal, factor = cs.fit_statistic(
            [{"true": r["true"], "raw": {"min": r["shift"][str(a.shifts)]["raw"]}} for r in cal])
        print(f"static scenes; global shift within {a.shifts}, blocks' median, factor {factor:.3f}: "
              f"{n_cal} of {len(cal)} calibration cases within 20%")
        tmp = lambda r: factor * r["shift"][str(a.shifts)]["raw"]
    else:
        key, n_cal, factor = cs.fit_statistic(cal)
        print(f"static scenes; blocks' quantile {key}, factor {factor:.3f}: {n_cal} of {len(cal)} "
              "calibration cases within 20%")
        tmp = lambda r: factor * r["raw"][key]
    print("| variant | peak | engine / true | frame difference / true | smaller of the two / true |")
    print("| --- | ---: | --- | --- | --- |")
    fmt = lambda x: f"{np.mean(x):.2f} ({min(x):.2f} to {max(x):.2f})"
    for v, p, rs in static_groups(held):
        print(f"| {v} | {p} | {fmt([r['engine'] / r['true'] for r in rs])} | "
              f"{fmt([tmp(r) / r['true'] for r in rs])} | "
              f"{fmt([min(tmp(r), r['engine']) / r['true'] for r in rs])} |")
    count = lambda f: sum(cs.within(f(r), r["true"]) for r in held)
    if a.motion:
        # The pan variant (the scene moves 1 pixel a frame) beside the still
        # ones: the frame difference's estimate over the engine's, to find
        # where a rule can tell a moving scene.
        pans = cs.measure_cases(case, _init, (a.lib if os.path.exists(a.lib) else None,), a.jobs,
                                a.set, ["pan"], a.motion)
        ratio = lambda r: tmp(r) / r["engine"]
        still = sorted(ratio(r) for r in rows)
        moving = sorted(ratio(r) for r in pans)
        print(f"frame difference / engine: still scenes {still[0]:.2f} to {still[-1]:.2f} "
              f"(99th percentile {np.quantile(still, 0.99):.2f}), moving 1 px a frame "
              f"{moving[0]:.2f} to {moving[-1]:.2f} (1st percentile {np.quantile(moving, 0.01):.2f})")
        for t in (1.25, 1.5, 2.0, 3.0):
            print(f"  threshold {t}: still scenes read as moving {sum(x > t for x in still)} of "
                  f"{len(still)}, moving read as still {sum(x <= t for x in moving)} of {len(moving)}")
        if a.shifts:
            report_shifts(rows, pans)
        return
    if a.grid:
        if os.path.exists(a.grid):
            with open(a.grid) as f:
                gs = json.load(f)
        else:
            sigma = (lambda r: min(tmp(r), r["engine"])) if a.smaller else tmp
            gs = denoise_cases(grid_case, rows, sigma, a, a.grid)
        report_grid(gs)
        return
    if a.psnr:
        ps = denoise_cases(psnr_case, held, tmp, a, a.psnr)
        above = lambda k: sum(p[k] > p["multi"] for p in ps)
        print(f"temporal-radius=1 above fastNlMeansDenoisingMulti's best (of {len(ps)} held-out "
              f"static cases): automatic strength {above('auto')}, the same factors on the frame "
              f"difference's estimate {above('frame_difference')}; mean difference to Multi "
              f"{np.mean([p['auto'] - p['multi'] for p in ps]):+.3f} and "
              f"{np.mean([p['frame_difference'] - p['multi'] for p in ps]):+.3f} dB")
        for v, pk, q in static_groups(ps):
            print(f"  {v} {pk}: auto - Multi {np.mean([p['auto'] - p['multi'] for p in q]):+.2f}, "
                  f"frame difference - Multi "
                  f"{np.mean([p['frame_difference'] - p['multi'] for p in q]):+.2f} dB")
    print(f"held-out static cases within 20% (of {len(held)}): engine {count(lambda r: r['engine'])}, "
          f"frame difference {count(tmp)}, smaller of the two "
          f"{count(lambda r: min(tmp(r), r['engine']))}")
    if a.shifts:
        report_shifts(rows, None)


if __name__ == "__main__":
    main()

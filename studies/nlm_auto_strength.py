#!/usr/bin/env python3
"""cudanlm's automatic strength: calibration and evaluation on real photos.

Every case is a photo with Gaussian noise of a known sigma (8-bit units,
rounded and clipped), denoised by the engines of the plugin (NlmGpu, or
NlmCpu with --cpu) through build/studies/libnlmtune.so, patch 7 and search 21:

- gray: the photo's luma; colour: I420 from the photo with the noise added
  in RGB (BT.601 full range, OpenCV's RGB2YCrCb, chroma averaged over 2x2),
  PSNR over all the Y, U and V samples against the clean photo's I420;
- temporal: three frames panning 2 px right and 1 px down per frame, each
  with its own noise, temporal-radius 1, the middle frame scored.

Modes:

  --prepare DIR   writes the photos (needs scikit-image): DIR/gray/*.png,
                  centre crops of at most 512x512 (luma of colour photos,
                  BT.601 weights), and DIR/colour/*.png for colour photos.
  --grid FILE     for every photo and sigma: the noise estimate (GPU and CPU,
                  which must agree bit for bit), PSNR over an absolute grid of
                  strength x noise-sigma (the best-of-grid every result is
                  compared with), and over a grid relative to the estimate
                  (strength = a sigma^, noise-sigma = b sigma^) on the
                  calibration photos; the factors a, b (and chroma's c, and the
                  temporal a, b) fitted on the calibration photos only. JSON.
  --evaluate FILE --against GRID
                  automatic strength as the engine runs it, on every photo
                  and sigma, next to GRID's best-of-grid: the report for
                  docs/cudanlm.md (held-out photos apart). With --markdown
                  OUT, writes the tables of an earlier evaluation instead.

    python3 studies/nlm_auto_strength.py --prepare .carry/photos
    python3 studies/nlm_auto_strength.py --grid grid.json --photos .carry/photos
    python3 studies/nlm_auto_strength.py --evaluate auto.json --against grid.json --photos .carry/photos

Needs numpy and cv2 (and scikit-image for --prepare).
"""
import argparse
import ctypes
import json
import multiprocessing
import os
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])

import cv2  # noqa: E402
import numpy as np  # noqa: E402

SIGMAS = [0, 3, 5, 10, 15, 20, 30, 40]
TEMPORAL_SIGMAS = [5, 10, 20, 30]
# The photos the factors are fitted on; the others are held out.
CALIBRATION = {"camera", "coins", "page", "coffee", "chelsea", "rocket", "brick", "gravel"}
GRAY = ["rocket", "moon", "brick", "hubble_deep_field", "camera", "coins", "text", "page",
        "coffee", "astronaut", "chelsea", "motorcycle_left", "immunohistochemistry",
        "gravel", "grass"]
COLOUR = ["rocket", "hubble_deep_field", "coffee", "astronaut", "chelsea", "motorcycle_left",
          "immunohistochemistry"]
CROP = 512
# The absolute grid: every result is compared with the best of it.
STRENGTHS = [1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 16, 18, 20, 23, 26, 30, 35, 40,
             45, 50]
NOISE_SIGMAS = [0, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40]
CHROMA_STRENGTHS = [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30]
# The grid relative to the estimate.
REL_STRENGTH = [round(0.2 + 0.05 * i, 2) for i in range(17)]   # 0.2 .. 1.0
REL_ALLOWANCE = [0, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]
REL_CHROMA = [round(0.2 + 0.1 * i, 2) for i in range(15)]      # 0.2 .. 1.6
PAN = (2, 1)


# ------------------------------------------------------------------ engine

class NtParams(ctypes.Structure):
    _fields_ = [("h", ctypes.c_float), ("noise_sigma", ctypes.c_float), ("chroma_h", ctypes.c_float),
                ("patch_size", ctypes.c_int), ("search_size", ctypes.c_int),
                ("temporal_radius", ctypes.c_int), ("auto_strength", ctypes.c_int),
                ("auto_scale", ctypes.c_float), ("noise_smoothing", ctypes.c_float)]


class Engine:
    def __init__(self, lib, gpu=True):
        self.lib = ctypes.CDLL(lib)
        self.lib.nt_error.restype = ctypes.c_char_p
        self.gpu = 1 if gpu else 0
        self._check(self.lib.nt_open(self.gpu))

    def _check(self, rc):
        if rc != 0:
            raise RuntimeError(self.lib.nt_error().decode())

    @staticmethod
    def _ptrs(arrays):
        return (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])

    def reset(self):
        self._check(self.lib.nt_reset())

    def denoise(self, frames, center=None, h=10, noise_sigma=0, chroma_h=0, radius=0,
                automatic=False, scale=1.0, smoothing=0.5):
        """frames: list of (Y,) or (Y, U, V) uint8 arrays, tightly packed."""
        center = len(frames) // 2 if center is None else center
        p = NtParams(h, noise_sigma, chroma_h, 7, 21, radius, 1 if automatic else 0, scale, smoothing)
        y = [np.ascontiguousarray(f[0]) for f in frames]
        colour = len(frames[0]) == 3
        u = [np.ascontiguousarray(f[1]) for f in frames] if colour else None
        v = [np.ascontiguousarray(f[2]) for f in frames] if colour else None
        out = [np.empty_like(y[0])] + ([np.empty_like(u[0]), np.empty_like(v[0])] if colour else [])
        height, width = y[0].shape
        self._check(self.lib.nt_denoise(
            self.gpu, ctypes.byref(p), self._ptrs(y), self._ptrs(u) if colour else None,
            self._ptrs(v) if colour else None, len(frames), center, width, height,
            ctypes.c_void_p(out[0].ctypes.data),
            ctypes.c_void_p(out[1].ctypes.data) if colour else None,
            ctypes.c_void_p(out[2].ctypes.data) if colour else None))
        return out

    def frame_difference(self, a, b):
        """The engine's frame difference of two 8-bit luma planes (CPU):
        (sigma, how still 0..1, the nine shifts' medians unscaled)."""
        out = (ctypes.c_double * 11)()
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
        self._check(self.lib.nt_frame_difference(ctypes.c_void_p(a.ctypes.data),
                                                 ctypes.c_void_p(b.ctypes.data), a.shape[1],
                                                 a.shape[0], out))
        return out[0], out[1], list(out[2:])

    def estimate_frame(self, y, u=None, v=None, gpu=None):
        """The engines' noise estimates of a frame (luma, and its chroma
        planes unless u is None): (luma's, chroma's; 0 without chroma)."""
        out = (ctypes.c_double * 2)()
        y = np.ascontiguousarray(y)
        u = None if u is None else np.ascontiguousarray(u)
        v = None if v is None else np.ascontiguousarray(v)
        self._check(self.lib.nt_estimate(
            self.gpu if gpu is None else int(gpu), ctypes.c_void_p(y.ctypes.data), y.shape[1],
            y.shape[0], ctypes.c_void_p(u.ctypes.data) if u is not None else None,
            ctypes.c_void_p(v.ctypes.data) if v is not None else None,
            u.shape[1] if u is not None else 0, u.shape[0] if u is not None else 0, out))
        return out[0], out[1]

    def estimate(self, plane, second=None, gpu=None):
        """A gray frame's estimate (one plane), or with `second` the
        estimate of two chroma planes together."""
        if second is None:
            return self.estimate_frame(plane, gpu=gpu)[0]
        # Chroma's estimate does not depend on the luma: any luma will do.
        luma = np.zeros((3, 3), np.uint8)
        return self.estimate_frame(luma, plane, second, gpu=gpu)[1]

    def estimate_scales(self, plane, second=None):
        """The CPU's two readings: (fine sigma, fine share kept, coarse sigma,
        coarse share kept)."""
        out = (ctypes.c_double * 4)()
        plane = np.ascontiguousarray(plane)
        second = None if second is None else np.ascontiguousarray(second)
        self._check(self.lib.nt_estimate_scales(
            ctypes.c_void_p(plane.ctypes.data),
            ctypes.c_void_p(second.ctypes.data) if second is not None else None,
            plane.shape[1], plane.shape[0], out))
        return tuple(out)


# ------------------------------------------------------------------ frames

def rgb_to_i420(rgb):
    ycc = cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb).astype(np.float64)
    h, w = rgb.shape[:2]
    h2, w2 = h // 2 * 2, w // 2 * 2
    y = ycc[:h2, :w2, 0]

    def sub(c):
        c = ycc[:h2, :w2, c]
        return np.rint((c[0::2, 0::2] + c[1::2, 0::2] + c[0::2, 1::2] + c[1::2, 1::2]) / 4)
    return [np.rint(y).astype(np.uint8), sub(2).astype(np.uint8), sub(1).astype(np.uint8)]


def add_noise(img, sigma, rng):
    if sigma == 0:
        return np.clip(np.rint(img), 0, 255).astype(np.uint8)
    return np.clip(np.rint(img + rng.normal(0, sigma, img.shape)), 0, 255).astype(np.uint8)


def psnr(out, ref):
    err = sum(float(((o.astype(np.float64) - r) ** 2).sum()) for o, r in zip(out, ref))
    n = sum(r.size for r in ref)
    mse = err / n
    return 99.0 if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def case_frames(photo_dir, kind, name, sigma, seed):
    """(noisy frames, clean reference of the middle one) for a case."""
    rng = np.random.default_rng([seed, int(sigma * 10), zlib.crc32(name.encode()), len(kind)])
    if kind == "colour":
        rgb = cv2.cvtColor(cv2.imread(os.path.join(photo_dir, "colour", name + ".png")), cv2.COLOR_BGR2RGB)
        return [rgb_to_i420(add_noise(rgb.astype(np.float64), sigma, rng))], rgb_to_i420(rgb)
    gray = cv2.imread(os.path.join(photo_dir, "gray", name + ".png"), cv2.IMREAD_GRAYSCALE)
    if kind == "gray":
        return [[add_noise(gray.astype(np.float64), sigma, rng)]], [gray]
    # temporal: a pan over three frames
    h, w = gray.shape
    ch, cw = h - 2 * PAN[1] - 2, w - 2 * PAN[0] - 2
    crops = [gray[k * PAN[1]:k * PAN[1] + ch, k * PAN[0]:k * PAN[0] + cw] for k in range(3)]
    return [[add_noise(c.astype(np.float64), sigma, rng)] for c in crops], [crops[1]]


# ------------------------------------------------------------------ grid

_engine = None


def _worker_init(lib, gpu):
    global _engine
    _engine = Engine(lib, gpu)


def grid_case(args):
    photo_dir, kind, name, sigma, factors = args
    e = _engine
    frames, ref = case_frames(photo_dir, kind, name, sigma, 0)
    mid = frames[len(frames) // 2]
    radius = 1 if kind == "temporal" else 0
    # The frame's estimate, as the engines make it (a colour frame's luma is
    # read with its chroma).
    est_gpu = e.estimate_frame(*mid)[0]
    est_cpu = e.estimate_frame(*mid, gpu=False)[0]
    r = {"kind": kind, "photo": name, "sigma": sigma, "estimate": est_gpu,
         "estimate_cpu_matches": est_gpu == est_cpu, "calibration": name in CALIBRATION}
    if kind == "colour":
        c_gpu = e.estimate(mid[1], mid[2])
        c_cpu = e.estimate(mid[1], mid[2], gpu=False)
        r["estimate_chroma"] = c_gpu
        r["estimate_cpu_matches"] = r["estimate_cpu_matches"] and c_gpu == c_cpu

    def score(**kw):
        return psnr(e.denoise(frames, radius=radius, **kw), ref)

    r["noisy"] = psnr(mid, ref)
    # Luma over the absolute grid (chroma carried for colour, so the order of
    # the luma grid is the order of the whole frame's).
    r["grid"] = [[score(h=h, noise_sigma=ns) for ns in NOISE_SIGMAS] for h in STRENGTHS]
    bi, bj = np.unravel_index(int(np.argmax(r["grid"])), (len(STRENGTHS), len(NOISE_SIGMAS)))
    r["best"] = {"h": STRENGTHS[bi], "noise_sigma": NOISE_SIGMAS[bj], "psnr": r["grid"][bi][bj]}
    if kind == "colour":
        bh, bns = STRENGTHS[bi], NOISE_SIGMAS[bj]
        r["chroma_grid"] = [score(h=bh, noise_sigma=bns, chroma_h=c) for c in CHROMA_STRENGTHS]
        k = int(np.argmax(r["chroma_grid"]))
        r["best"]["chroma_h"] = CHROMA_STRENGTHS[k]
        r["best"]["psnr"] = max(r["best"]["psnr"], r["chroma_grid"][k])
    if kind != "colour" and name in CALIBRATION:
        s = max(est_gpu, 0.05)
        r["rel"] = [[score(h=max(0.1, a * s), noise_sigma=b * s) for b in REL_ALLOWANCE]
                    for a in REL_STRENGTH]
    if kind == "colour" and name in CALIBRATION and factors:
        a, b = factors["a"], factors["b"]
        s, sc = max(est_gpu, 0.05), max(r["estimate_chroma"], 0.05)
        r["rel_chroma"] = [score(h=max(0.1, a * s), noise_sigma=b * s, chroma_h=max(0.1, c * sc))
                           for c in REL_CHROMA]
    return r


def fit(results, kind):
    """The (a, b) of the relative grid that keeps every calibration case of
    `kind` closest to its best-of-grid (the largest shortfall smallest, then
    the mean), among those that keep clean photos at 45 dB or more."""
    cases = [r for r in results if r["kind"] == kind and "rel" in r]
    noisy = [r for r in cases if r["sigma"] > 0]
    clean = [r for r in cases if r["sigma"] == 0]
    best = None
    table = []
    for i, a in enumerate(REL_STRENGTH):
        for j, b in enumerate(REL_ALLOWANCE):
            losses = [r["best"]["psnr"] - r["rel"][i][j] for r in noisy]
            clean_ok = all(r["rel"][i][j] >= 45 for r in clean)
            key = (not clean_ok, max(losses), float(np.mean(losses)))
            table.append({"a": a, "b": b, "worst": max(losses), "mean": float(np.mean(losses)),
                          "clean_min": min((r["rel"][i][j] for r in clean), default=None)})
            if best is None or key < best[0]:
                best = (key, a, b)
    # The same at each sigma alone: how the best factors move with the noise.
    per_sigma = {}
    for sigma in sorted({r["sigma"] for r in noisy}):
        sel = [r for r in noisy if r["sigma"] == sigma]
        scores = [(max(sel_r["best"]["psnr"] - sel_r["rel"][i][j] for sel_r in sel), a, b)
                  for i, a in enumerate(REL_STRENGTH) for j, b in enumerate(REL_ALLOWANCE)]
        w, a, b = min(scores)
        per_sigma[sigma] = {"a": a, "b": b, "worst": w,
                            "mean_estimate_over_sigma": float(np.mean([r["estimate"] / sigma for r in sel]))}
    return {"a": best[1], "b": best[2], "worst": best[0][1], "mean": best[0][2],
            "clean_ok": not best[0][0], "table": table, "per_sigma": per_sigma}


def fit_chroma(results):
    cases = [r for r in results if r["kind"] == "colour" and "rel_chroma" in r and r["sigma"] > 0]
    best = None
    for k, c in enumerate(REL_CHROMA):
        losses = [r["best"]["psnr"] - r["rel_chroma"][k] for r in cases]
        key = (max(losses), float(np.mean(losses)))
        if best is None or key < best[0]:
            best = (key, c)
    return {"c": best[1], "worst": best[0][0], "mean": best[0][1]}


def run_pool(lib, gpu, jobs, tasks):
    with multiprocessing.Pool(jobs, initializer=_worker_init, initargs=(lib, gpu)) as pool:
        return pool.map(grid_case, tasks, chunksize=1)


def grid(args):
    t0 = time.time()
    tasks = [(args.photos, "gray", n, s, None) for n in GRAY for s in SIGMAS]
    tasks += [(args.photos, "temporal", n, s, None) for n in GRAY for s in TEMPORAL_SIGMAS]
    results = run_pool(args.lib, not args.cpu, args.jobs, tasks)
    with open(args.grid + ".partial", "w") as f:
        json.dump({"results": results}, f)
    gray_fit, temporal_fit = fit(results, "gray"), fit(results, "temporal")
    print(f"gray fit: a {gray_fit['a']} b {gray_fit['b']} worst {gray_fit['worst']:.3f} dB "
          f"mean {gray_fit['mean']:.3f} clean ok {gray_fit['clean_ok']}")
    for name, f in (("gray", gray_fit), ("temporal", temporal_fit)):
        for sigma, v in f["per_sigma"].items():
            print(f"  {name} sigma {sigma}: a {v['a']} b {v['b']} worst {v['worst']:.3f} dB, "
                  f"estimate / sigma {v['mean_estimate_over_sigma']:.3f}")
    print(f"temporal fit: a {temporal_fit['a']} b {temporal_fit['b']} worst "
          f"{temporal_fit['worst']:.3f} dB mean {temporal_fit['mean']:.3f}")
    colour = run_pool(args.lib, not args.cpu, args.jobs,
                      [(args.photos, "colour", n, s, gray_fit) for n in COLOUR for s in SIGMAS])
    chroma_fit = fit_chroma(colour)
    print(f"chroma fit: c {chroma_fit['c']} worst {chroma_fit['worst']:.3f} dB mean {chroma_fit['mean']:.3f}")
    results += colour
    mismatches = sum(not r["estimate_cpu_matches"] for r in results)
    print(f"GPU and CPU estimates differ in {mismatches} of {len(results)} cases")
    with open(args.grid, "w") as f:
        json.dump({"results": results, "fit": {"gray": gray_fit, "temporal": temporal_fit,
                                               "chroma": chroma_fit},
                   "grid": {"strength": STRENGTHS, "noise_sigma": NOISE_SIGMAS,
                            "chroma_strength": CHROMA_STRENGTHS, "rel_strength": REL_STRENGTH,
                            "rel_allowance": REL_ALLOWANCE, "rel_chroma": REL_CHROMA},
                   "seconds": time.time() - t0, "backend": "cpu" if args.cpu else "gpu"}, f)
    print(f"{len(results)} cases in {time.time() - t0:.0f} s")


# ------------------------------------------------------------------ evaluate

def evaluate_case(args):
    photo_dir, kind, name, sigma = args
    e = _engine
    frames, ref = case_frames(photo_dir, kind, name, sigma, 0)
    radius = 1 if kind == "temporal" else 0
    e.reset()
    # A new history, as after a start: the estimate is the scored frame's own.
    out = e.denoise(frames, radius=radius, automatic=True, chroma_h=-1)
    return {"kind": kind, "photo": name, "sigma": sigma, "auto": psnr(out, ref)}


def evaluate(args):
    t0 = time.time()
    with open(args.against) as f:
        g = json.load(f)
    tasks = [(args.photos, r["kind"], r["photo"], r["sigma"]) for r in g["results"]]
    auto = run_pool_eval(args.lib, not args.cpu, args.jobs, tasks)
    rows = []
    for r, a in zip(g["results"], auto):
        rows.append({**{k: r[k] for k in ("kind", "photo", "sigma", "estimate", "calibration", "noisy")},
                     "best": r["best"], "auto": a["auto"], "shortfall": r["best"]["psnr"] - a["auto"]})
    with open(args.evaluate, "w") as f:
        json.dump({"rows": rows, "seconds": time.time() - t0}, f)
    report(rows)


def run_pool_eval(lib, gpu, jobs, tasks):
    with multiprocessing.Pool(jobs, initializer=_worker_init, initargs=(lib, gpu)) as pool:
        return pool.map(evaluate_case, tasks, chunksize=1)


def report(rows):
    for kind in ("gray", "colour", "temporal"):
        for held in (False, True):
            sel = [r for r in rows if r["kind"] == kind and r["calibration"] != held]
            noisy = [r for r in sel if r["sigma"] > 0]
            clean = [r for r in sel if r["sigma"] == 0]
            if not sel:
                continue
            worst = max(noisy, key=lambda r: r["shortfall"]) if noisy else None
            print(f"{kind:8s} {'held out' if held else 'calibration':11s}: "
                  f"{sum(r['shortfall'] <= 0.3 for r in noisy)}/{len(noisy)} within 0.3 dB of the "
                  f"best, mean shortfall {np.mean([r['shortfall'] for r in noisy]):.3f} dB, worst "
                  f"{worst['shortfall']:.3f} ({worst['photo']} sigma {worst['sigma']})"
                  + (f"; clean: lowest {min(r['auto'] for r in clean):.2f} dB" if clean else ""))


# The files in scikit-image's data directory.
FILES = {"camera": "camera.png", "moon": "moon.png", "astronaut": "astronaut.png",
         "coffee": "coffee.png", "chelsea": "chelsea.png", "rocket": "rocket.jpg",
         "immunohistochemistry": "ihc.png", "page": "page.png", "text": "text.png",
         "brick": "brick.png", "grass": "grass.png", "gravel": "gravel.png",
         "hubble_deep_field": "hubble_deep_field.jpg", "coins": "coins.png",
         "motorcycle_left": "motorcycle_left.png"}


def markdown(evaluation, grid, out):
    """The tables of docs/cudanlm.md from an --evaluate file and its grid."""
    with open(evaluation) as f:
        rows = json.load(f)["rows"]
    with open(grid) as f:
        g = json.load(f)
    s_grid, n_grid = g["grid"]["strength"], g["grid"]["noise_sigma"]
    default = {(r["kind"], r["photo"], r["sigma"]): r["grid"][s_grid.index(10)][n_grid.index(0)]
               for r in g["results"]}
    lines = []
    w = lines.append
    w("| kind | photos | sigma | cases | within 0.3 dB of the best | mean shortfall (dB) | "
      "worst (dB) | automatic - fixed strength 10 (dB, mean) |")
    w("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: |")
    for kind in ("gray", "colour", "temporal"):
        for held in (False, True):
            for sigma in sorted({r["sigma"] for r in rows if r["kind"] == kind}):
                sel = [r for r in rows if r["kind"] == kind and r["calibration"] != held
                       and r["sigma"] == sigma]
                if not sel:
                    continue
                gain = np.mean([r["auto"] - default[(kind, r["photo"], sigma)] for r in sel])
                if sigma == 0:
                    low = min(sel, key=lambda r: r["auto"])
                    w(f"| {kind} | {'held out' if held else 'calibration'} | 0 | {len(sel)} | "
                      f"clean: lowest PSNR {low['auto']:.1f} dB ({low['photo']}) | | | {gain:+.2f} |")
                    continue
                worst = max(sel, key=lambda r: r["shortfall"])
                w(f"| {kind} | {'held out' if held else 'calibration'} | {sigma} | {len(sel)} | "
                  f"{sum(r['shortfall'] <= 0.3 for r in sel)} | "
                  f"{np.mean([r['shortfall'] for r in sel]):.2f} | {worst['shortfall']:.2f} "
                  f"({worst['photo']}) | {gain:+.2f} |")
    w("")
    w("The estimate against the sigma of the noise added before rounding and clipping (dark "
      "photos lose part of it to clipping, hubble_deep_field most; a photo's own noise and "
      "texture add to it), held-out photos, mean and range of estimate / sigma:")
    w("")
    w("| kind | " + " | ".join(f"sigma {s}" for s in SIGMAS if s) + " |")
    w("| --- |" + " ---: |" * (len(SIGMAS) - 1))
    for kind in ("gray", "temporal"):
        cells = []
        for sigma in SIGMAS[1:]:
            sel = [r["estimate"] / sigma for r in rows
                   if r["kind"] == kind and not r["calibration"] and r["sigma"] == sigma]
            cells.append(f"{np.mean(sel):.2f} ({min(sel):.2f}-{max(sel):.2f})" if sel else "")
        w(f"| {kind} | " + " | ".join(cells) + " |")
    w("")
    w("Held-out cases more than 0.3 dB from their best, and clean photos under 45 dB:")
    w("")
    w("| kind | photo | sigma | estimate | automatic (dB) | best of grid (dB) | at strength, noise-sigma |")
    w("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        if r["calibration"]:
            continue
        if (r["sigma"] > 0 and r["shortfall"] > 0.3) or (r["sigma"] == 0 and r["auto"] < 45):
            b = r["best"]
            w(f"| {r['kind']} | {r['photo']} | {r['sigma']} | {r['estimate']:.2f} | {r['auto']:.2f} | "
              f"{b['psnr']:.2f} | {b['h']}, {b['noise_sigma']} |")
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    print(text)


def prepare(out):
    """The photos of docs/noise-estimation.md: centre crops of at most
    512x512, luma by OpenCV's BGR2GRAY (BT.601 weights)."""
    ensure(["skimage"])
    import skimage  # noqa: E402
    os.makedirs(os.path.join(out, "gray"), exist_ok=True)
    os.makedirs(os.path.join(out, "colour"), exist_ok=True)
    for name in GRAY:
        img = cv2.imread(os.path.join(skimage.data_dir, FILES[name]), cv2.IMREAD_UNCHANGED)
        if img is None:
            sys.exit(f"cannot read {FILES[name]} in {skimage.data_dir}")
        h, w = img.shape[:2]
        ch, cw = min(h, CROP), min(w, CROP)
        y0, x0 = (h - ch) // 2, (w - cw) // 2
        img = np.ascontiguousarray(img[y0:y0 + ch, x0:x0 + cw])
        if img.ndim == 3:
            if name in COLOUR:
                cv2.imwrite(os.path.join(out, "colour", name + ".png"), img[:, :, :3])
            img = cv2.cvtColor(img[:, :, :3], cv2.COLOR_BGR2GRAY)
        cv2.imwrite(os.path.join(out, "gray", name + ".png"), img)
        print(f"{name}: {img.shape[1]}x{img.shape[0]}{' (colour too)' if name in COLOUR else ''}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepare")
    ap.add_argument("--grid")
    ap.add_argument("--evaluate")
    ap.add_argument("--against")
    ap.add_argument("--markdown", help="with --evaluate FILE --against GRID: the tables, to this file")
    ap.add_argument("--photos", default=".carry/photos")
    ap.add_argument("--lib", default="build/studies/libnlmtune.so")
    ap.add_argument("--cpu", action="store_true", help="NlmCpu instead of NlmGpu")
    ap.add_argument("--jobs", type=int, default=8)
    args = ap.parse_args()
    if args.prepare:
        prepare(args.prepare)
    elif args.grid:
        grid(args)
    elif args.evaluate and args.markdown:
        markdown(args.evaluate, args.against, args.markdown)
    elif args.evaluate:
        evaluate(args)
    else:
        ap.error("one of --prepare, --grid, --evaluate")


if __name__ == "__main__":
    main()

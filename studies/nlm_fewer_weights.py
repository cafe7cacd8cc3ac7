#!/usr/bin/env python3
"""cudanlm with fewer weights per output pixel: which variant keeps quality.

cudanlm computes the weight of a pair of patches for every output pixel and
every search offset; a kernel twice as fast has to compute fewer of them
(docs/cudanlm.md). This study decides which way of computing fewer weights
keeps the quality within -0.05 dB of today's pixelwise NLM. A numpy model
(or CuPy, the same code) of NLM with patch 7 and search 21, borders mirrored
(reflect-101, as cv2.BORDER_REFLECT_101), for an offset d of the search
window and a pixel p:

  D(p,d) = mean over the 7x7 box around p of (I(p+k) - I(p+d+k))^2,
  w(p,d) = exp(-max(D - 2 noise_sigma^2, 0) / h^2)   (h, noise_sigma in 8-bit units),

computed per offset over the whole frame (squared difference image, box
sums, weight, accumulation). The variants:

  pixelwise       today's: output(p) = sum_d w(p,d) I(p+d) / sum_d w(p,d);
  copy-2x2        weights at the grid points g (even row, even column) only,
                  each pixel using its grid point's, g = (y & ~1, x & ~1):
                  sum_d w(g,d) I(p+d) / sum_d w(g,d); a quarter of the weights;
  spread-3x3      blockwise NLM (Coupe et al. 2008, step 2): each grid
                  point's weight carries to the 3x3 pixels around it, a pixel
                  summing those of the 1, 2 or 4 grid points whose block
                  covers it: W(p,d) = sum_{g: |p-g|_inf <= 1} w(g,d);
  ...-disk        each of the three over a disk search window
                  (dx^2 + dy^2 <= 10^2: 317 offsets of the 441);
  copy-2x2-fp16   copy-2x2 with each weight rounded to float16 before it is
                  accumulated (the sums in float32); also over the disk.

The outputs are rounded to 8 bits, as the element writes them, and scored by
PSNR against the clean frame (nlm_auto_strength.py's psnr). For each case
and variant: the best PSNR over a grid of strengths relative to the true
noise sigma s, h = a s for a = 0.4, 0.5, ..., 1.6, with noise-sigma s and
with noise-sigma 0 (26 settings), and its difference to pixelwise's best;
also the difference at pixelwise's best setting.

Cases:

  gray    the photos DIR/gray/*.png of `nlm_auto_strength.py --prepare DIR`
          with Gaussian noise of sigma 10, 20, 30: the same noisy frames as
          that study's gray cases (its case_frames: seeded by the name and
          sigma, added to the 8-bit photo, rounded and clipped), then a
          centre crop; s is the sigma;
  camera  the held-out photos of camera_set.py's simulated camera (its
          make_case, from DIR/photos/*.png and the stored H.264 frames
          DIR/h264/*.npz of `camera_set.py --prepare DIR`): the luma of the
          middle frame against the clean frame's, a centre crop; s is the
          standard deviation of noisy - clean over the crop. The first N
          cases of an order that spreads them over the 8 variants and 6
          peaks (48 covers every variant x peak once; 192 is all).

    python3 studies/nlm_fewer_weights.py --self-check
    python3 studies/nlm_fewer_weights.py --quick --json quick.json
    python3 studies/nlm_fewer_weights.py --json fewer.json --photos .carry/photos --camera .carry/camera
    python3 studies/nlm_fewer_weights.py --json fewer-all.json --camera-limit 192

--self-check compares the model with a direct per-pixel NLM on a small
frame (every variant), and the grid variants at step 1 with pixelwise.
--quick: 2 photos, crop 96, sigma 20, a = 0.6, 1.0, 1.4, 2 camera cases.

Backend: CuPy when it imports and finds a GPU (crop 512 by default), else
numpy (crop 256; cases spread over --jobs processes). Needs numpy and cv2;
CuPy optional.
"""
import argparse
import json
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from nlm_auto_strength import CALIBRATION, GRAY, add_noise, case_frames, psnr  # noqa: E402
from camera_set import FRAMES, HELD_OUT, PEAKS  # noqa: E402
from camera_set import VARIANTS as CAMERA_VARIANTS  # noqa: E402
from camera_set import digest, load_photo, make_case  # noqa: E402

PATCH = 7
SEARCH = 21
STEP = 2
SIGMAS = [10, 20, 30]
STRENGTH_FACTORS = [round(0.4 + 0.1 * i, 1) for i in range(13)]   # h = a s, 0.4 .. 1.6
ALLOWANCE_FACTORS = [1.0, 0.0]                                    # noise-sigma = b s
QUICK_FACTORS = [0.6, 1.0, 1.4]
VARIANTS = ["pixelwise", "copy-2x2", "spread-3x3", "pixelwise-disk", "copy-2x2-disk",
            "spread-3x3-disk", "copy-2x2-fp16", "copy-2x2-fp16-disk"]
REFERENCE = "pixelwise"
WITHIN = -0.05   # dB: the quality a variant has to keep


# ------------------------------------------------------------------ backend

def backend(name):
    """(module, name): CuPy when asked or when it imports and has a GPU."""
    if name in ("auto", "cupy"):
        why = None
        try:
            import cupy
            if cupy.cuda.runtime.getDeviceCount() > 0:
                return cupy, "cupy"
            why = "no GPU"
        except Exception as error:  # no CuPy, no driver, no device
            why = str(error)
        if name == "cupy":
            sys.exit(f"error: CuPy with a GPU is not available: {why}")
    return np, "numpy"


def to_host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def disk_offsets(radius):
    return sum(dy * dy + dx * dx <= radius * radius
               for dy in range(-radius, radius + 1) for dx in range(-radius, radius + 1))


def weights_per_pixel(variant):
    """Weights computed per output pixel."""
    r = SEARCH // 2
    n = disk_offsets(r) if variant.endswith("disk") else SEARCH * SEARCH
    return n if variant.startswith("pixelwise") else n / (STEP * STEP)


# ------------------------------------------------------------------ the model

def box_sums(sq, patch, out_h, out_w):
    """Sums over patch x patch boxes of sq ((out_h + patch - 1) x (out_w +
    patch - 1)): out_h x out_w. Squared differences of 8-bit values are
    integers and a box's sum stays under 2^24, so float32 keeps it exact."""
    v = sq[0:out_h].copy()
    for i in range(1, patch):
        v += sq[i:i + out_h]
    s = v[:, 0:out_w].copy()
    for j in range(1, patch):
        s += v[:, j:j + out_w]
    return s


def add_copied(num, wg, src, step):
    """num(p) += wg(g(p)) * src(p), g(p) the grid point of p's step x step block."""
    for oy in range(step):
        for ox in range(step):
            s = src[oy::step, ox::step]
            num[:, oy::step, ox::step] += wg[:, :s.shape[0], :s.shape[1]] * s


def copied(xp, wg, h, w, step):
    """Each grid point's value over its step x step block: K x h x w."""
    out = xp.empty((wg.shape[0], h, w), wg.dtype)
    for oy in range(step):
        for ox in range(step):
            view = out[:, oy::step, ox::step]
            view[...] = wg[:, :view.shape[1], :view.shape[2]]
    return out


def spread(xp, wg, h, w, step):
    """W(p) = sum of wg(g) over the grid points g (multiples of step, inside
    the frame) with |p - g|_inf <= 1: K x h x w."""
    k, gh, gw = wg.shape
    # Along x: the grid values at columns 1 + step j of a zero row 2 longer,
    # then the sum of three neighbours.
    z = xp.zeros((k, gh, w + 2), wg.dtype)
    z[:, :, 1::step][:, :, :gw] = wg
    cols = z[:, :, 0:w] + z[:, :, 1:w + 1]
    cols += z[:, :, 2:w + 2]
    z = xp.zeros((k, h + 2, w), wg.dtype)
    z[:, 1::step][:, :gh] = cols
    out = z[:, 0:h] + z[:, 1:h + 1]
    out += z[:, 2:h + 2]
    return out


def denoise_variants(xp, noisy, settings, step=STEP, patch=PATCH, search=SEARCH):
    """Every variant's output of a gray frame for every (h, noise_sigma) of
    settings, before rounding: {variant: K x H x W float32 array}."""
    f32 = xp.float32
    noisy = xp.asarray(noisy, dtype=f32)
    height, width = noisy.shape
    p, r = patch // 2, search // 2
    k = len(settings)
    img = xp.pad(noisy, p + r, mode="reflect")   # numpy's and CuPy's "reflect" is reflect-101
    eh, ew = height + 2 * p, width + 2 * p       # the pixels the patches reach
    ref = img[r:r + eh, r:r + ew]
    neg_inv_h2 = xp.asarray([-1.0 / (h * h) for h, _ in settings], f32)[:, None, None]
    allowance = xp.asarray([2.0 * s * s for _, s in settings], f32)[:, None, None]
    gh, gw = -(-height // step), -(-width // step)
    # Offsets in the disk and outside it (the corners) apart: the square
    # window is their sum.
    acc = {}
    for region in ("disk", "corner"):
        acc[region] = {n: xp.zeros((k, height, width), f32)
                       for n in ("pix_num", "pix_den", "copy_num", "spread_num", "copy16_num")}
        acc[region].update({n: xp.zeros((k, gh, gw), f32) for n in ("grid_den", "grid16_den")})
    sq = xp.empty((eh, ew), f32)
    wt = xp.empty((k, height, width), f32)
    tmp = xp.empty((k, height, width), f32)
    inv_area = np.float32(1.0 / (patch * patch))
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            a = acc["disk" if dy * dy + dx * dx <= r * r else "corner"]
            shifted = img[r + dy:r + dy + eh, r + dx:r + dx + ew]
            xp.subtract(ref, shifted, out=sq)
            xp.multiply(sq, sq, out=sq)
            dist = box_sums(sq, patch, height, width)
            dist *= inv_area
            src = shifted[p:p + height, p:p + width]          # I(p + d)
            xp.subtract(dist[None], allowance, out=wt)
            xp.maximum(wt, 0, out=wt)
            xp.multiply(wt, neg_inv_h2, out=wt)
            xp.exp(wt, out=wt)
            # pixelwise
            a["pix_den"] += wt
            xp.multiply(wt, src[None], out=tmp)
            a["pix_num"] += tmp
            # the grid points' weights
            wg = wt[:, ::step, ::step]
            a["grid_den"] += wg
            add_copied(a["copy_num"], wg, src, step)
            ws = spread(xp, wg, height, width, step)
            ws *= src[None]
            a["spread_num"] += ws
            w16 = wg.astype(xp.float16).astype(f32)
            a["grid16_den"] += w16
            add_copied(a["copy16_num"], w16, src, step)

    def whole(name):
        return acc["disk"][name] + acc["corner"][name]

    out = {}
    for suffix, get in (("", whole), ("-disk", lambda n: acc["disk"][n])):
        out["pixelwise" + suffix] = get("pix_num") / get("pix_den")
        out["copy-2x2" + suffix] = get("copy_num") / copied(xp, get("grid_den"), height, width, step)
        out["spread-3x3" + suffix] = get("spread_num") / spread(xp, get("grid_den"), height, width, step)
        out["copy-2x2-fp16" + suffix] = get("copy16_num") / copied(xp, get("grid16_den"), height, width,
                                                                  step)
    return {v: out[v] for v in VARIANTS}


def rounded(xp, out):
    """The 8-bit output, as float32."""
    return xp.clip(xp.rint(out), 0, 255)


def psnr_each(xp, outs, clean):
    """psnr() of each output (K x H x W) of a frame against clean (H x W):
    the same figures, computed where the outputs are."""
    diff = rounded(xp, outs) - xp.asarray(clean, dtype=xp.float32)[None]
    err = to_host((diff * diff).astype(xp.float64).sum(axis=(1, 2)))
    mse = err / clean.size
    return [99.0 if m == 0 else float(10 * np.log10(255.0 ** 2 / m)) for m in mse]


# ------------------------------------------------------------------ cases

def centre_crop(plane, size):
    h, w = plane.shape
    ch, cw = min(h, size), min(w, size)
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    return np.ascontiguousarray(plane[y0:y0 + ch, x0:x0 + cw])


def gray_photos(photo_dir, limit):
    names = [n for n in GRAY if os.path.exists(os.path.join(photo_dir, "gray", n + ".png"))]
    if not names:
        sys.exit(f"no photos in {photo_dir}/gray (run: python3 studies/nlm_auto_strength.py "
                 f"--prepare {photo_dir})")
    return names[:limit] if limit else names


def camera_cases(limit):
    """(photo, peak, variant) of the held-out photos, in an order whose
    first 48 hold every variant x peak once, each variant with more than
    one photo; the next rounds the same with the photos moved on."""
    order = []
    nv, npk, nph = len(CAMERA_VARIANTS), len(PEAKS), len(HELD_OUT)
    for rnd in range(nph):
        for i in range(nv * npk):
            # i % 8 and i % 6 meet every pair of the same parity in the first
            # 24, the others with the peak moved by one in the next 24.
            variant = CAMERA_VARIANTS[i % nv]
            peak = PEAKS[(i % npk + i // (nv * npk // 2)) % npk]
            photo = HELD_OUT[(i + i // nv + rnd) % nph]
            order.append((photo, peak, variant))
    return order[:limit]


def settings_of(factors):
    return [(a, b) for b in ALLOWANCE_FACTORS for a in factors]


def run_case(task):
    """Denoises one case with every variant and setting; its row."""
    case, crop, factors, backend_name, camera_dir, photo_dir = task
    xp, _ = backend(backend_name)
    t0 = time.time()
    if case[0] == "gray":
        _, name, sigma = case
        frames, ref = case_frames(photo_dir, "gray", name, sigma, 0)
        noisy, clean = centre_crop(frames[0][0], crop), centre_crop(ref[0], crop)
        true_sigma = float(sigma)
        row = {"kind": "gray", "photo": name, "sigma": sigma, "calibration": name in CALIBRATION}
    else:
        _, name, peak, variant = case
        frames, clean_frames = make_case(load_photo(camera_dir, name), name, peak, variant,
                                         os.path.join(camera_dir, "h264"))
        noisy = centre_crop(frames[FRAMES // 2][0], crop)
        clean = centre_crop(clean_frames[FRAMES // 2][0], crop)
        true_sigma = float(np.std(noisy.astype(np.float64) - clean))
        manifest = os.path.join(camera_dir, "manifest.json")
        same = None
        if os.path.exists(manifest):
            with open(manifest) as f:
                same = json.load(f).get(f"{name}-{peak}-{variant}") == digest(frames)
        row = {"kind": "camera", "photo": name, "peak": peak, "variant": variant,
               "calibration": False, "same_frames": same}
    settings = settings_of(factors)
    params = [(a * true_sigma, b * true_sigma) for a, b in settings]
    outs = denoise_variants(xp, noisy, params)
    row.update({"true_sigma": true_sigma, "size": list(noisy.shape), "noisy": psnr([noisy], [clean]),
                "measured_sigma": float(np.std(noisy.astype(np.float64) - clean))})
    grid = {v: psnr_each(xp, outs[v], clean) for v in VARIANTS}
    del outs
    best = {}
    for v in VARIANTS:
        i = int(np.argmax(grid[v]))
        a, b = settings[i]
        # a best setting at the end of the strength grid may lie beyond it
        edge = a in (factors[0], factors[-1])
        best[v] = {"psnr": grid[v][i], "a": a, "b": b, "h": params[i][0],
                   "noise_sigma": params[i][1], "at_edge": edge}
    i_ref = int(np.argmax(grid[REFERENCE]))
    row["settings"] = settings
    row["grid"] = grid
    row["best"] = best
    row["diff_best"] = {v: best[v]["psnr"] - best[REFERENCE]["psnr"] for v in VARIANTS}
    row["diff_same"] = {v: grid[v][i_ref] - grid[REFERENCE][i_ref] for v in VARIANTS}
    row["seconds"] = time.time() - t0
    return row


def describe(r):
    what = (f"gray   {r['photo']:20} sigma {r['sigma']:3}" if r["kind"] == "gray" else
            f"camera {r['photo']:16} {r['peak']:3} {r['variant']:8}")
    b = r["best"][REFERENCE]
    diffs = " ".join(f"{r['diff_best'][v]:+.3f}" for v in VARIANTS[1:])
    return (f"{what} s {r['true_sigma']:5.2f} noisy {r['noisy']:5.2f} | pixelwise {b['psnr']:6.3f} "
            f"(h {b['h']:5.2f}, noise-sigma {b['noise_sigma']:5.2f}) | {diffs} [{r['seconds']:.1f} s]")


# ------------------------------------------------------------------ report

def report(rows):
    lines = []
    w = lines.append
    kinds = [k for k in ("gray", "camera") if any(r["kind"] == k for r in rows)]
    head = "| variant | weights per pixel |"
    rule = "| --- | ---: |"
    for k in kinds:
        n = sum(r["kind"] == k for r in rows)
        head += (f" {k}: best - pixelwise best, mean (min, max) dB | {k}: within {WITHIN} dB "
                 f"(of {n}) | {k}: at pixelwise's setting, mean (min) dB |")
        rule += " ---: | ---: | ---: |"
    w(head)
    w(rule)
    for v in VARIANTS:
        line = f"| {v} | {weights_per_pixel(v):g} |"
        for k in kinds:
            d = [r["diff_best"][v] for r in rows if r["kind"] == k]
            s = [r["diff_same"][v] for r in rows if r["kind"] == k]
            line += (f" {np.mean(d):+.3f} ({min(d):+.3f}, {max(d):+.3f}) | "
                     f"{sum(x >= WITHIN for x in d)} | {np.mean(s):+.3f} ({min(s):+.3f}) |")
        w(line)
    w("")
    for k in kinds:
        sel = [r for r in rows if r["kind"] == k]
        edge = [r for r in sel if r["best"][REFERENCE]["at_edge"]]
        edge_any = sum(any(r["best"][v]["at_edge"] for v in VARIANTS) for r in sel)
        mean_best = np.mean([r["best"][REFERENCE]["psnr"] for r in sel])
        w(f"{k}: {len(sel)} cases, pixelwise best PSNR mean {mean_best:.2f} dB"
          f" (noisy {np.mean([r['noisy'] for r in sel]):.2f}); pixelwise's best strength at an end "
          f"of the grid in {len(edge)}" + (": " + ", ".join(
              f"{r['photo']} {r.get('sigma', r.get('peak'))}" for r in edge[:8]) if edge else "")
          + f" (any variant's: {edge_any}); noise-sigma 0 best in "
          f"{sum(r['best'][REFERENCE]['b'] == 0 for r in sel)}.")
        w("  best a (h = a s), mean: " + ", ".join(
            f"{v} {np.mean([r['best'][v]['a'] for r in sel]):.2f}" for v in VARIANTS))
        worst = {v: min(sel, key=lambda r: r["diff_best"][v]) for v in VARIANTS[1:]}
        w("  worst case per variant: " + "; ".join(
            f"{v} {worst[v]['diff_best'][v]:+.3f} ({worst[v]['photo']} "
            + (f"sigma {worst[v]['sigma']}" if k == "gray" else f"{worst[v]['peak']} {worst[v]['variant']}")
            + ")" for v in VARIANTS[1:]))
    text = "\n".join(lines) + "\n"
    print(text)
    return text


def against_engine(rows, path):
    """The model's pixelwise PSNR next to the engine's (nlm_auto_strength.py
    --grid's file) at the settings both grids hold, for the gray cases whose
    crop is the whole photo: the model is the element's arithmetic if they
    agree. Adds "engine" to those rows; a line of text, or None."""
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        g = json.load(f)
    strengths, allowances = g["grid"]["strength"], g["grid"]["noise_sigma"]
    engine = {(r["photo"], r["sigma"]): r for r in g["results"] if r["kind"] == "gray"}
    diffs = []
    for row in rows:
        e = engine.get((row.get("photo"), row.get("sigma")))
        if row["kind"] != "gray" or e is None or abs(row["noisy"] - e["noisy"]) > 1e-9:
            continue   # another crop than the engine's whole photo
        row["engine"] = {}
        for i, (a, b) in enumerate(row["settings"]):
            h, ns = round(a * row["true_sigma"], 6), round(b * row["true_sigma"], 6)
            if h in strengths and ns in allowances:
                p = e["grid"][strengths.index(h)][allowances.index(ns)]
                row["engine"][i] = p
                diffs.append(row["grid"][REFERENCE][i] - p)
    if not diffs:
        return None
    return (f"pixelwise model - engine ({os.path.relpath(path)}) at the same settings: "
            f"{len(diffs)} settings of {sum('engine' in r for r in rows)} cases, "
            f"mean {np.mean(diffs):+.4f} dB, range {min(diffs):+.4f} to {max(diffs):+.4f}")


# ------------------------------------------------------------------ self-check

def direct(noisy, settings, step=STEP, patch=PATCH, search=SEARCH):
    """Every variant by the definition, pixel by pixel (float64, padding by
    OpenCV): {variant: K x H x W}."""
    p, r = patch // 2, search // 2
    height, width = noisy.shape
    pad = cv2.copyMakeBorder(noisy.astype(np.float64), p + r, p + r, p + r, p + r,
                             cv2.BORDER_REFLECT_101)
    windows = np.lib.stride_tricks.sliding_window_view(pad, (patch, patch))
    dy, dx = np.mgrid[-r:r + 1, -r:r + 1]
    disk = dy * dy + dx * dx <= r * r
    weights = np.empty((len(settings), height, width, search, search))
    values = np.empty((height, width, search, search))
    for y in range(height):
        for x in range(width):
            centre = windows[y + r, x + r]
            others = windows[y:y + search, x:x + search]
            dist = ((others - centre) ** 2).mean(axis=(2, 3))
            for i, (h, s) in enumerate(settings):
                weights[i, y, x] = np.exp(-np.maximum(dist - 2 * s * s, 0) / (h * h))
            values[y, x] = pad[y + p:y + p + search, x + p:x + p + search]

    def nlm(wfield, mask):
        wm = wfield * mask
        return (wm * values).sum(axis=(3, 4)) / wm.sum(axis=(3, 4))

    out = {}
    for suffix, mask in (("", np.ones_like(disk)), ("-disk", disk)):
        out["pixelwise" + suffix] = nlm(weights, mask)
        for name, wsrc in (("copy-2x2", weights),
                           ("copy-2x2-fp16",
                            weights.astype(np.float32).astype(np.float16).astype(np.float64))):
            wf = np.empty_like(weights)
            for y in range(height):
                for x in range(width):
                    wf[:, y, x] = wsrc[:, y - y % step, x - x % step]
            out[name + suffix] = nlm(wf, mask)
        wf = np.zeros_like(weights)
        for y in range(height):
            for x in range(width):
                for gy in range(max(0, y - 1), min(height, y + 2)):
                    for gx in range(max(0, x - 1), min(width, x + 2)):
                        if gy % step == 0 and gx % step == 0:
                            wf[:, y, x] += weights[:, gy, gx]
        out["spread-3x3" + suffix] = nlm(wf, mask)
    return out


def self_check(xp, name):
    rng = np.random.default_rng(7)
    yy, xx = np.mgrid[0:19, 0:23]
    clean = np.rint(100 + 60 * np.sin(xx / 3.0) * np.cos(yy / 4.0) + 40 * (xx > 11)).astype(np.uint8)
    noisy = add_noise(clean.astype(np.float64), 15, rng)
    settings = [(8.0, 15.0), (15.0, 0.0), (4.0, 6.0)]
    t0 = time.time()
    model = {v: to_host(o) for v, o in denoise_variants(xp, noisy, settings).items()}
    ref = direct(noisy, settings)
    failed = False
    print(f"self-check ({name}), a {noisy.shape[1]}x{noisy.shape[0]} frame, {len(settings)} settings:")
    for v in VARIANTS:
        err = float(np.abs(model[v] - ref[v]).max())
        # float32 sums against float64; a float16 rounding may fall the other
        # way for a weight at a tie.
        tol = 2e-2 if "fp16" in v else 1e-3
        ok = err <= tol
        failed |= not ok
        print(f"  {v:20} against the direct per-pixel definition: max |diff| {err:.2e} "
              f"(<= {tol:g}) {'ok' if ok else 'FAILED'}")
    one = {v: to_host(o) for v, o in denoise_variants(xp, noisy, settings, step=1).items()}
    for v in ("copy-2x2", "copy-2x2-disk"):
        base = "pixelwise-disk" if v.endswith("disk") else "pixelwise"
        err = float(np.abs(one[v] - one[base]).max())
        ok = err <= 1e-4
        failed |= not ok
        print(f"  {v} at step 1 against {base}: max |diff| {err:.2e} (<= 1e-4) {'ok' if ok else 'FAILED'}")
    ours = psnr_each(xp, xp.asarray(model["spread-3x3"]), clean)
    theirs = [psnr([np.clip(np.rint(o), 0, 255)], [clean]) for o in model["spread-3x3"]]
    ok = ours == theirs
    failed |= not ok
    print(f"  psnr_each against nlm_auto_strength.psnr: {'equal' if ok else 'DIFFERENT'} "
          f"({', '.join(f'{p:.4f}' for p in ours)})")
    print(f"  {time.time() - t0:.1f} s")
    if failed:
        sys.exit("self-check failed")
    print("self-check passed")


# ------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="every row, to this file")
    ap.add_argument("--photos", default=".carry/photos", help="nlm_auto_strength.py --prepare's folder")
    ap.add_argument("--camera", default=".carry/camera", help="camera_set.py --prepare's folder")
    ap.add_argument("--kinds", nargs="+", default=["gray", "camera"], choices=["gray", "camera"])
    ap.add_argument("--sigmas", type=int, nargs="+", default=SIGMAS)
    ap.add_argument("--limit-photos", type=int, default=0, help="the first N gray photos (0: all)")
    ap.add_argument("--camera-limit", type=int, default=48, help="camera cases (192: all)")
    ap.add_argument("--crop", type=int, help="centre crop (default 512 with CuPy, 256 with numpy)")
    ap.add_argument("--factors", type=float, nargs="+", default=STRENGTH_FACTORS,
                    help="h = a * sigma for these a")
    ap.add_argument("--engine-grid", default=os.path.join(HERE, "auto-strength", "grid.json"),
                    help="nlm_auto_strength.py --grid's file: the engine's PSNR at the same settings")
    ap.add_argument("--backend", default="auto", choices=["auto", "numpy", "cupy"])
    ap.add_argument("--jobs", type=int, help="processes with numpy (default: the cores); 1 with CuPy")
    ap.add_argument("--quick", action="store_true",
                    help="2 photos, crop 96, sigma 20, a = 0.6 1.0 1.4, 2 camera cases")
    ap.add_argument("--self-check", action="store_true")
    args = ap.parse_args()
    xp, name = backend(args.backend)
    if args.self_check:
        self_check(xp, name)
        return
    if args.quick:
        args.limit_photos, args.crop, args.sigmas = 2, 96, [20]
        args.factors, args.camera_limit = QUICK_FACTORS, 2
    crop = args.crop or (512 if name == "cupy" else 256)
    factors = sorted(args.factors)
    cases = []
    if "gray" in args.kinds:
        cases += [("gray", n, s) for n in gray_photos(args.photos, args.limit_photos) for s in args.sigmas]
    if "camera" in args.kinds:
        cases += [("camera",) + c for c in camera_cases(args.camera_limit)]
    tasks = [(c, crop, factors, name, args.camera, args.photos) for c in cases]
    jobs = 1 if name == "cupy" else (args.jobs or os.cpu_count() or 1)
    print(f"{len(cases)} cases, crop {crop}, {len(settings_of(factors))} settings, backend {name}"
          + (f", {jobs} processes" if jobs > 1 else ""), flush=True)
    print("columns: pixelwise best PSNR, then best - pixelwise best of " + ", ".join(VARIANTS[1:]),
          flush=True)
    t0 = time.time()
    rows = []
    if jobs > 1:
        with multiprocessing.Pool(jobs) as pool:
            for r in pool.imap(run_case, tasks, chunksize=1):
                rows.append(r)
                print(describe(r), flush=True)
    else:
        for t in tasks:
            rows.append(run_case(t))
            print(describe(rows[-1]), flush=True)
    seconds = time.time() - t0
    print(f"{len(rows)} cases in {seconds:.0f} s\n")
    text = report(rows)
    engine = against_engine(rows, args.engine_grid)
    if engine:
        print(engine)
        text += "\n" + engine + "\n"
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "variants": VARIANTS, "settings": settings_of(factors),
                       "crop": crop, "patch": PATCH, "search": SEARCH, "step": STEP,
                       "backend": name, "seconds": seconds, "quick": args.quick,
                       "report": text}, f, indent=0)


if __name__ == "__main__":
    main()

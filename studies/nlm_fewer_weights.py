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
sums, weight, accumulation). With several channels (chroma: U and V
together) D is the mean over the box and the channels, and one weight
serves every channel; with several frames (temporal) the offsets d run over
the same window in each frame, D comparing the frame denoised at p with
that frame at p + d, and I(p+d) is that frame's. The variants:

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

The grid and the blocks are those of the plane denoised: for chroma, in
chroma-sample coordinates (patch and search count chroma samples too).

The outputs are rounded to 8 bits, as the element writes them, and scored by
PSNR against the clean frame (nlm_auto_strength.py's psnr). For each case
and variant: the best PSNR over a grid of strengths relative to a noise
level s of the case, h = a s for a = 0.4, 0.5, ..., 1.6, with noise-sigma s
and with noise-sigma 0 (26 settings; colour: each with 3 chroma strengths,
78), and its difference to pixelwise's best; also the difference at
pixelwise's best setting.

Cases:

  gray      the photos DIR/gray/*.png of `nlm_auto_strength.py --prepare DIR`
            with Gaussian noise of sigma 10, 20, 30: the same noisy frames as
            that study's gray cases (its case_frames: seeded by the name and
            sigma, added to the 8-bit photo, rounded and clipped), then a
            centre crop; s is the sigma;
  camera    the held-out photos of camera_set.py's simulated camera (its
            make_case, from DIR/photos/*.png and the stored H.264 frames
            DIR/h264/*.npz of `camera_set.py --prepare DIR`): the luma of the
            middle frame against the clean frame's, a centre crop; s is the
            standard deviation of noisy - clean over the crop. The first N
            cases of an order that spreads them over the 8 variants and 6
            peaks (48 covers every variant x peak once; 192 is all);
  colour    the photos DIR/colour/*.png with Gaussian noise of sigma 10, 20,
            30 added in RGB, as I420 (nlm_auto_strength.py's colour case:
            BT.601 full range, chroma averaged over 2x2), a centre crop
            (chroma crop/2, luma the matching crop x crop). Luma denoised as
            gray; U and V together, d2 the mean over the patch and both
            channels, one weight for both, w = exp(-max(d2 - 2 (sigma hc /
            h)^2, 0) / hc^2) with the chroma strength hc = c h, c = 0.5,
            0.75, 1.0 (the luma weight function at strength c h and
            noise-sigma c noise-sigma). PSNR over all the Y, U and V
            samples against the clean photo's I420; s is the standard
            deviation of noisy - clean luma over the crop (about 0.6 sigma);
  temporal  nlm_auto_strength.py's temporal case: three gray frames panning
            2 px right and 1 px down per frame, each with its own noise,
            sigma 10, 20, 30 (the same noisy frames), the same centre crop of
            each; the middle frame denoised with the search over all three
            (temporal-radius 1) and scored against its clean frame; s is
            the sigma.

    python3 studies/nlm_fewer_weights.py --self-check
    python3 studies/nlm_fewer_weights.py --quick --json quick.json
    python3 studies/nlm_fewer_weights.py --json fewer.json --photos .carry/photos --camera .carry/camera
    python3 studies/nlm_fewer_weights.py --json fewer-all.json --camera-limit 192
    python3 studies/nlm_fewer_weights.py --kinds colour,temporal --json ct.json

--self-check compares the model with a direct per-pixel NLM on small frames
(every variant: gray, the luma and chroma of a small I420 frame, and three
frames of a pan), the grid variants at step 1 with pixelwise, and the
scores with nlm_auto_strength.py's psnr.
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

from nlm_auto_strength import CALIBRATION, COLOUR, GRAY, PAN, add_noise, case_frames, psnr  # noqa: E402
from nlm_auto_strength import rgb_to_i420  # noqa: E402
from camera_set import FRAMES, HELD_OUT, PEAKS  # noqa: E402
from camera_set import VARIANTS as CAMERA_VARIANTS  # noqa: E402
from camera_set import digest, load_photo, make_case  # noqa: E402

PATCH = 7
SEARCH = 21
STEP = 2
SIGMAS = [10, 20, 30]
KINDS = ["gray", "camera", "colour", "temporal"]
CHROMA_FACTORS = [0.5, 0.75, 1.0]                                 # chroma strength hc = c h
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


class OffsetWeights:
    """The part of NLM every variant shares: for one search offset at a time,
    the weight of every pixel of the frame at `centre` of `frames` (as
    as_frames gives them) against a frame, for every (h, noise_sigma) of
    settings (K x H x W), the distance the mean over the patch and the
    channels; borders reflect-101."""

    def __init__(self, xp, frames, settings, centre, patch, search):
        f32 = xp.float32
        self.xp, self.patch = xp, patch
        self.channels = len(frames[0])
        self.height, self.width = frames[0][0].shape
        self.p, self.r = patch // 2, search // 2
        p, r = self.p, self.r
        # numpy's and CuPy's "reflect" is reflect-101
        self.pads = [[xp.pad(xp.asarray(c, dtype=f32), p + r, mode="reflect") for c in f]
                     for f in frames]
        self.eh, self.ew = self.height + 2 * p, self.width + 2 * p   # the pixels the patches reach
        self.refs = [img[r:r + self.eh, r:r + self.ew] for img in self.pads[centre]]
        self.neg_inv_h2 = xp.asarray([-1.0 / (h * h) for h, _ in settings], f32)[:, None, None]
        self.allowance = xp.asarray([2.0 * s * s for _, s in settings], f32)[:, None, None]
        self.sq = xp.empty((self.eh, self.ew), f32)
        self.sq1 = xp.empty((self.eh, self.ew), f32)
        self.wt = xp.empty((len(settings), self.height, self.width), f32)
        # Box sums of integer squared differences stay under 2^24 (2 channels:
        # 98 x 255^2), exact in float32.
        self.inv_area = np.float32(1.0 / (patch * patch * self.channels))

    def at(self, t, dy, dx):
        """(the weights, K x H x W; each channel's I(p + d)) of offset (dy, dx)
        in frame t. The weights are overwritten by the next call."""
        xp, p, r, sq, sq1, wt = self.xp, self.p, self.r, self.sq, self.sq1, self.wt
        shifted = [img[r + dy:r + dy + self.eh, r + dx:r + dx + self.ew] for img in self.pads[t]]
        for c in range(self.channels):
            xp.subtract(self.refs[c], shifted[c], out=sq1 if c else sq)
            if c:
                xp.multiply(sq1, sq1, out=sq1)
                sq += sq1
            else:
                xp.multiply(sq, sq, out=sq)
        dist = box_sums(sq, self.patch, self.height, self.width)
        dist *= self.inv_area
        xp.subtract(dist[None], self.allowance, out=wt)
        xp.maximum(wt, 0, out=wt)
        xp.multiply(wt, self.neg_inv_h2, out=wt)
        xp.exp(wt, out=wt)
        return wt, [sh[p:p + self.height, p:p + self.width] for sh in shifted]


def as_frames(frames):
    """A 2-D plane (one frame, one channel), or a list of frames, each a
    2-D plane or a list of planes (its channels): a list of lists of planes."""
    if hasattr(frames, "ndim") and frames.ndim == 2:
        return [[frames]]
    return [[f] if hasattr(f, "ndim") and f.ndim == 2 else list(f) for f in frames]


def denoise_variants(xp, frames, settings, centre=None, step=STEP, patch=PATCH, search=SEARCH):
    """Every variant's output of the frame at `centre` of `frames` (as_frames;
    default the middle one) for every (h, noise_sigma) of settings, before
    rounding: {variant: K x C x H x W float32 array}, C the channels. The
    search runs over the same window in every frame, the frame denoised
    first, then the others in time order; the distance is the mean over the
    patch and the channels, one weight serving every channel."""
    f32 = xp.float32
    frames = as_frames(frames)
    nt, nc = len(frames), len(frames[0])
    centre = nt // 2 if centre is None else centre
    height, width = frames[0][0].shape
    r = search // 2
    k = len(settings)
    weights = OffsetWeights(xp, frames, settings, centre, patch, search)
    gh, gw = -(-height // step), -(-width // step)
    # Offsets in the disk and outside it (the corners) apart: the square
    # window is their sum.
    acc = {}
    for region in ("disk", "corner"):
        acc[region] = {n: xp.zeros((k, nc, height, width), f32)
                       for n in ("pix_num", "copy_num", "spread_num", "copy16_num")}
        acc[region]["pix_den"] = xp.zeros((k, height, width), f32)
        acc[region].update({n: xp.zeros((k, gh, gw), f32) for n in ("grid_den", "grid16_den")})
    tmp = xp.empty((k, height, width), f32)
    for t in [centre] + [t for t in range(nt) if t != centre]:
        for dy in range(-r, r + 1):
            for dx in range(-r, r + 1):
                a = acc["disk" if dy * dy + dx * dx <= r * r else "corner"]
                wt, src = weights.at(t, dy, dx)   # src: I(p + d)
                # pixelwise
                a["pix_den"] += wt
                for c in range(nc):
                    xp.multiply(wt, src[c][None], out=tmp)
                    a["pix_num"][:, c] += tmp
                # the grid points' weights
                wg = wt[:, ::step, ::step]
                a["grid_den"] += wg
                ws = spread(xp, wg, height, width, step)
                w16 = wg.astype(xp.float16).astype(f32)
                a["grid16_den"] += w16
                for c in range(nc):
                    add_copied(a["copy_num"][:, c], wg, src[c], step)
                    xp.multiply(ws, src[c][None], out=tmp)
                    a["spread_num"][:, c] += tmp
                    add_copied(a["copy16_num"][:, c], w16, src[c], step)

    def whole(name):
        return acc["disk"][name] + acc["corner"][name]

    out = {}
    for suffix, get in (("", whole), ("-disk", lambda n: acc["disk"][n])):
        out["pixelwise" + suffix] = get("pix_num") / get("pix_den")[:, None]
        out["copy-2x2" + suffix] = get("copy_num") / copied(xp, get("grid_den"), height, width,
                                                            step)[:, None]
        out["spread-3x3" + suffix] = get("spread_num") / spread(xp, get("grid_den"), height, width,
                                                                step)[:, None]
        out["copy-2x2-fp16" + suffix] = get("copy16_num") / copied(xp, get("grid16_den"), height,
                                                                  width, step)[:, None]
    return {v: out[v] for v in VARIANTS}


def chroma_params(params, chroma_factors):
    """The chroma weights' (h, noise_sigma) of each luma (h, noise_sigma) and
    chroma strength hc = c h, c outermost: w = exp(-max(d2 - 2 (sigma hc /
    h)^2, 0) / hc^2) is the luma weight function at (c h, c sigma)."""
    return [(c * h, c * s) for c in chroma_factors for h, s in params]


def case_outputs(xp, kind, frames, params, chroma_factors, denoise=denoise_variants):
    """A case's outputs by part: [(indices of the planes, {variant: K' x C x H
    x W})]. frames: the case's frames, each a list of planes (Y; or Y, U, V).
    Colour: luma at params, then U and V together at chroma_params."""
    luma = denoise(xp, [[f[0]] for f in frames], params)
    if kind != "colour":
        return [([0], luma)]
    chroma = denoise(xp, [f[1:] for f in frames], chroma_params(params, chroma_factors))
    return [([0], luma), ([1, 2], chroma)]


def rounded(xp, out):
    """The 8-bit output, as float32."""
    return xp.clip(xp.rint(out), 0, 255)


def squared_errors(xp, outs, clean):
    """Sum of squared errors of each rounded output (K x C x H x W) against the
    clean planes (C of H x W), in float64: K values."""
    ref = xp.asarray(np.stack([np.asarray(c, np.float32) for c in clean]))
    diff = rounded(xp, outs) - ref[None]
    return to_host((diff * diff).astype(xp.float64).sum(axis=(1, 2, 3)))


def to_psnr(err, n):
    """psnr() of a sum of squared errors over n samples."""
    mse = err / n
    return 99.0 if mse == 0 else float(10 * np.log10(255.0 ** 2 / mse))


def case_scores(xp, parts, clean, chroma_factors):
    """{variant: PSNR over every plane of clean, for each setting}: settings
    as settings_of()'s; colour, (a, b, c) with c outermost, the chroma part's
    order (chroma_params)."""
    n = sum(c.size for c in clean)
    scores = {}
    for v in VARIANTS:
        errs = [squared_errors(xp, outs[v], [clean[i] for i in idx]) for idx, outs in parts]
        total = errs[0]
        if len(errs) > 1:   # colour: luma's error at (a, b) + chroma's at (a, b, c)
            total = np.tile(errs[0], len(chroma_factors)) + errs[1]
        scores[v] = [to_psnr(e, n) for e in total]
    return scores


# ------------------------------------------------------------------ cases

def centre_crop(plane, size):
    h, w = plane.shape
    ch, cw = min(h, size), min(w, size)
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    return np.ascontiguousarray(plane[y0:y0 + ch, x0:x0 + cw])


def crop_i420(planes, size):
    """The centre crop of an I420 frame: chroma size/2 x size/2 (at most its
    own size), luma the matching 2x2 samples of each."""
    u = planes[1]
    ch, cw = min(u.shape[0], size // 2), min(u.shape[1], size // 2)
    y0, x0 = (u.shape[0] - ch) // 2, (u.shape[1] - cw) // 2
    y = planes[0][2 * y0:2 * (y0 + ch), 2 * x0:2 * (x0 + cw)]
    return [np.ascontiguousarray(y)] + [np.ascontiguousarray(c[y0:y0 + ch, x0:x0 + cw])
                                        for c in planes[1:]]


def photos(photo_dir, kind, limit):
    """The photos of nlm_auto_strength.py --prepare of a kind: gray and
    temporal from DIR/gray, colour from DIR/colour; the first `limit`."""
    folder, order = ("colour", COLOUR) if kind == "colour" else ("gray", GRAY)
    names = [n for n in order if os.path.exists(os.path.join(photo_dir, folder, n + ".png"))]
    if not names:
        sys.exit(f"no photos in {photo_dir}/{folder} (run: python3 studies/nlm_auto_strength.py "
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


def settings_of(factors, chroma_factors=None):
    """(a, b): h = a s, noise_sigma = b s; with chroma_factors (colour),
    (a, b, c), hc = c h, c outermost."""
    base = [(a, b) for b in ALLOWANCE_FACTORS for a in factors]
    if chroma_factors is None:
        return base
    return [(a, b, c) for c in chroma_factors for a, b in base]


def case_input(case, crop, camera_dir, photo_dir):
    """(frames: lists of planes, the middle one denoised; clean planes of
    the middle frame; noise level s; row)."""
    kind, name = case[0], case[1]
    if kind in ("gray", "temporal"):
        sigma = case[2]
        frames, ref = case_frames(photo_dir, kind, name, sigma, 0)
        # the same crop of each frame: the pan stays
        noisy = [[centre_crop(f[0], crop)] for f in frames]
        clean = [centre_crop(ref[0], crop)]
        row = {"kind": kind, "photo": name, "sigma": sigma, "calibration": name in CALIBRATION}
        return noisy, clean, float(sigma), row
    if kind == "colour":
        sigma = case[2]
        frames, ref = case_frames(photo_dir, "colour", name, sigma, 0)
        noisy = [crop_i420(frames[0], crop)]
        clean = crop_i420(ref, crop)
        s = float(np.std(noisy[0][0].astype(np.float64) - clean[0]))
        row = {"kind": kind, "photo": name, "sigma": sigma, "calibration": name in CALIBRATION,
               "chroma_sigma": float(np.std(np.concatenate(
                   [(noisy[0][i].astype(np.float64) - clean[i]).ravel() for i in (1, 2)])))}
        return noisy, clean, s, row
    _, name, peak, variant = case
    frames, clean_frames = make_case(load_photo(camera_dir, name), name, peak, variant,
                                     os.path.join(camera_dir, "h264"))
    noisy = centre_crop(frames[FRAMES // 2][0], crop)
    clean = centre_crop(clean_frames[FRAMES // 2][0], crop)
    manifest = os.path.join(camera_dir, "manifest.json")
    same = None
    if os.path.exists(manifest):
        with open(manifest) as f:
            same = json.load(f).get(f"{name}-{peak}-{variant}") == digest(frames)
    row = {"kind": "camera", "photo": name, "peak": peak, "variant": variant,
           "calibration": False, "same_frames": same}
    return [[noisy]], [clean], float(np.std(noisy.astype(np.float64) - clean)), row


def run_case(task):
    """Denoises one case with every variant and setting; its row."""
    case, crop, factors, chroma_factors, backend_name, camera_dir, photo_dir = task
    xp, _ = backend(backend_name)
    t0 = time.time()
    frames, clean, true_sigma, row = case_input(case, crop, camera_dir, photo_dir)
    kind = row["kind"]
    cf = chroma_factors if kind == "colour" else None
    settings = settings_of(factors, cf)
    params = [(a * true_sigma, b * true_sigma) for a, b in settings_of(factors)]
    parts = case_outputs(xp, kind, frames, params, chroma_factors)
    mid = frames[len(frames) // 2]
    row.update({"true_sigma": true_sigma, "size": list(mid[0].shape), "frames": len(frames),
                "noisy": psnr(mid, clean),
                "measured_sigma": float(np.std(mid[0].astype(np.float64) - clean[0]))})
    grid = case_scores(xp, parts, clean, chroma_factors)
    del parts
    best = {}
    for v in VARIANTS:
        i = int(np.argmax(grid[v]))
        a, b = settings[i][:2]
        h, ns = a * true_sigma, b * true_sigma
        # a best setting at the end of the strength grid may lie beyond it
        edge = a in (factors[0], factors[-1])
        best[v] = {"psnr": grid[v][i], "a": a, "b": b, "h": h, "noise_sigma": ns, "at_edge": edge}
        if cf:
            c = settings[i][2]
            best[v].update({"c": c, "chroma_h": c * h, "chroma_noise_sigma": c * ns,
                            "c_at_edge": c in (min(cf), max(cf))})
    i_ref = int(np.argmax(grid[REFERENCE]))
    row["settings"] = settings
    row["grid"] = grid
    row["best"] = best
    row["diff_best"] = {v: best[v]["psnr"] - best[REFERENCE]["psnr"] for v in VARIANTS}
    row["diff_same"] = {v: grid[v][i_ref] - grid[REFERENCE][i_ref] for v in VARIANTS}
    row["seconds"] = time.time() - t0
    return row


def label(r):
    """A case's name: photo and sigma, or the camera's photo, peak and variant."""
    if r["kind"] == "camera":
        return f"{r['photo']} {r['peak']} {r['variant']}"
    return f"{r['photo']} sigma {r['sigma']}"


def describe(r):
    what = (f"camera {r['photo']:16} {r['peak']:3} {r['variant']:8}" if r["kind"] == "camera" else
            f"{r['kind']:8} {r['photo']:20} sigma {r['sigma']:3}")
    b = r["best"][REFERENCE]
    diffs = " ".join(f"{r['diff_best'][v]:+.3f}" for v in VARIANTS[1:])
    chroma = f", hc {b['chroma_h']:5.2f}" if "chroma_h" in b else ""
    return (f"{what} s {r['true_sigma']:5.2f} noisy {r['noisy']:5.2f} | pixelwise {b['psnr']:6.3f} "
            f"(h {b['h']:5.2f}, noise-sigma {b['noise_sigma']:5.2f}{chroma}) | {diffs} "
            f"[{r['seconds']:.1f} s]")


# ------------------------------------------------------------------ report

def report(rows):
    lines = []
    w = lines.append
    kinds = [k for k in KINDS if any(r["kind"] == k for r in rows)]
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
    if "colour" in kinds or "temporal" in kinds:
        w("Weights per output sample and frame searched: chroma's per chroma sample; temporal "
          "searches three frames (three times as many per output pixel).")
        w("")
    for k in kinds:
        sel = [r for r in rows if r["kind"] == k]
        edge = [r for r in sel if r["best"][REFERENCE]["at_edge"]]
        edge_any = sum(any(r["best"][v]["at_edge"] for v in VARIANTS) for r in sel)
        mean_best = np.mean([r["best"][REFERENCE]["psnr"] for r in sel])
        w(f"{k}: {len(sel)} cases, pixelwise best PSNR mean {mean_best:.2f} dB"
          f" (noisy {np.mean([r['noisy'] for r in sel]):.2f}); pixelwise's best strength at an end "
          f"of the grid in {len(edge)}" + (": " + ", ".join(
              label(r) for r in edge[:8]) if edge else "")
          + f" (any variant's: {edge_any}); noise-sigma 0 best in "
          f"{sum(r['best'][REFERENCE]['b'] == 0 for r in sel)}.")
        w("  best a (h = a s), mean: " + ", ".join(
            f"{v} {np.mean([r['best'][v]['a'] for r in sel]):.2f}" for v in VARIANTS))
        if k == "colour":
            w("  best c (hc = c h), mean: " + ", ".join(
                f"{v} {np.mean([r['best'][v]['c'] for r in sel]):.2f}" for v in VARIANTS)
              + f"; pixelwise's best c at an end of the chroma grid in "
              f"{sum(r['best'][REFERENCE]['c_at_edge'] for r in sel)} (c "
              + ", ".join(f"{c:g}: {sum(r['best'][REFERENCE]['c'] == c for r in sel)}"
                          for c in sorted({r['best'][REFERENCE]['c'] for r in sel})) + ")")
        worst = {v: min(sel, key=lambda r: r["diff_best"][v]) for v in VARIANTS[1:]}
        w("  worst case per variant: " + "; ".join(
            f"{v} {worst[v]['diff_best'][v]:+.3f} ({label(worst[v])})" for v in VARIANTS[1:]))
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

def direct(frames, settings, centre=None, step=STEP, patch=PATCH, search=SEARCH):
    """Every variant by the definition, pixel by pixel (float64, padding by
    OpenCV): {variant: K x C x H x W}. frames as as_frames(); settings (h,
    sigma), or (h, sigma, hc) for chroma: w = exp(-max(d2 - 2 (sigma hc /
    h)^2, 0) / hc^2), d2 the mean over the patch and the channels, the search
    over the same window of every frame."""
    frames = as_frames(frames)
    nt, nc = len(frames), len(frames[0])
    centre = nt // 2 if centre is None else centre
    p, r = patch // 2, search // 2
    height, width = frames[0][0].shape
    pads = [[cv2.copyMakeBorder(c.astype(np.float64), p + r, p + r, p + r, p + r,
                                cv2.BORDER_REFLECT_101) for c in f] for f in frames]
    windows = [[np.lib.stride_tricks.sliding_window_view(c, (patch, patch)) for c in f] for f in pads]
    dy, dx = np.mgrid[-r:r + 1, -r:r + 1]
    disk = dy * dy + dx * dx <= r * r
    weights = np.empty((len(settings), height, width, nt, search, search))
    values = np.empty((nc, height, width, nt, search, search))
    for y in range(height):
        for x in range(width):
            for t in range(nt):
                dist = np.mean([((windows[t][c][y:y + search, x:x + search]
                                  - windows[centre][c][y + r, x + r]) ** 2).mean(axis=(2, 3))
                                for c in range(nc)], axis=0)
                for i, setting in enumerate(settings):
                    h, s = setting[:2]
                    hc = setting[2] if len(setting) > 2 else h
                    weights[i, y, x, t] = np.exp(-np.maximum(dist - 2 * (s * hc / h) ** 2, 0)
                                                 / (hc * hc))
                for c in range(nc):
                    values[c, y, x, t] = pads[t][c][y + p:y + p + search, x + p:x + p + search]

    def nlm(wfield, mask):
        wm = wfield * mask
        return (wm[:, None] * values[None]).sum(axis=(4, 5, 6)) / wm.sum(axis=(3, 4, 5))[:, None]

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


def pattern(height, width, phase=0.0):
    yy, xx = np.mgrid[0:height, 0:width]
    return 100 + 60 * np.sin(xx / 3.0 + phase) * np.cos(yy / 4.0) + 40 * (xx > width // 2)


def self_check(xp, name):
    rng = np.random.default_rng(7)
    settings = [(8.0, 15.0), (15.0, 0.0), (4.0, 6.0)]
    chroma = [0.5, 1.0]
    failed = False
    t0 = time.time()

    def check(what, ok, text):
        nonlocal failed
        failed |= not ok
        print(f"  {what}: {text} {'ok' if ok else 'FAILED'}")

    def against_direct(what, model, ref):
        for v in VARIANTS:
            err = float(np.abs(to_host(model[v]) - ref[v]).max())
            # float32 sums against float64; a float16 rounding may fall the
            # other way for a weight at a tie.
            tol = 2e-2 if "fp16" in v else 1e-3
            check(f"{what + ' ' + v:32}", err <= tol,
                  f"against the direct per-pixel definition: max |diff| {err:.2e} (<= {tol:g})")

    def at_step_one(what, frames, params):
        one = {v: to_host(o) for v, o in denoise_variants(xp, frames, params, step=1).items()}
        for v in ("copy-2x2", "copy-2x2-disk"):
            base = "pixelwise-disk" if v.endswith("disk") else "pixelwise"
            err = float(np.abs(one[v] - one[base]).max())
            check(f"{what} {v} at step 1 against {base}", err <= 1e-4,
                  f"max |diff| {err:.2e} (<= 1e-4)")

    def scores(what, kind, frames, clean, parts, combos):
        """case_scores against nlm_auto_strength.psnr of the rounded planes."""
        ours = case_scores(xp, parts, clean, chroma)["spread-3x3"]
        theirs = []
        for i in combos:
            planes = [np.clip(np.rint(to_host(parts[0][1]["spread-3x3"][i % len(settings)])[0]), 0, 255)]
            if kind == "colour":
                planes += list(np.clip(np.rint(to_host(parts[1][1]["spread-3x3"][i])), 0, 255))
            theirs.append(psnr(planes, clean))
        check(f"{what} scores against nlm_auto_strength.psnr", ours == theirs,
              f"{'equal' if ours == theirs else 'DIFFERENT'} ({', '.join(f'{p:.4f}' for p in ours)})")

    # gray: one frame of 23x19
    clean = np.rint(pattern(19, 23)).astype(np.uint8)
    noisy = add_noise(clean.astype(np.float64), 15, rng)
    print(f"self-check ({name}), {len(settings)} settings (h, noise-sigma) {settings}:")
    print(f"gray, a {noisy.shape[1]}x{noisy.shape[0]} frame:")
    parts = case_outputs(xp, "gray", [[noisy]], settings, chroma)
    against_direct("gray", parts[0][1], direct(noisy, settings))
    at_step_one("gray", noisy, settings)
    scores("gray", "gray", [[noisy]], [clean], parts, range(len(settings)))

    # colour: I420 of a 44x36 RGB frame, noise added in RGB
    rgb = np.stack([pattern(36, 44), pattern(36, 44, 1.0)[:, ::-1], 255 - pattern(36, 44, 2.0)], -1)
    rgb = np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
    clean = rgb_to_i420(rgb)
    frame = rgb_to_i420(add_noise(rgb.astype(np.float64), 15, rng))
    print(f"colour, I420 of a {rgb.shape[1]}x{rgb.shape[0]} frame (chroma {frame[1].shape[1]}x"
          f"{frame[1].shape[0]}, U and V together), chroma strength hc = c h for c in {chroma}:")
    parts = case_outputs(xp, "colour", [frame], settings, chroma)
    against_direct("colour luma", parts[0][1], direct([frame[0]], settings))
    # the chroma weight as docs/cudanlm.md writes it: (h, sigma, hc)
    against_direct("colour chroma", parts[1][1],
                   direct([[frame[1], frame[2]]], [(h, s, c * h) for c in chroma for h, s in settings]))
    at_step_one("colour chroma", [[frame[1], frame[2]]], settings)
    scores("colour", "colour", [frame], clean, parts, range(len(settings) * len(chroma)))

    # temporal: three frames of a pan (2 right, 1 down per frame), own noise each
    big = pattern(19 + 2 * PAN[1], 23 + 2 * PAN[0])
    crops = [big[k * PAN[1]:k * PAN[1] + 19, k * PAN[0]:k * PAN[0] + 23] for k in range(3)]
    clean = np.rint(crops[1]).astype(np.uint8)
    frames = [[add_noise(c, 15, rng)] for c in crops]
    print("temporal, three 23x19 frames of a pan, the middle one denoised:")
    parts = case_outputs(xp, "temporal", frames, settings, chroma)
    against_direct("temporal", parts[0][1], direct(frames, settings))
    at_step_one("temporal", frames, settings)
    scores("temporal", "temporal", frames, [clean], parts, range(len(settings)))

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
    ap.add_argument("--kinds", nargs="+", default=["gray,camera"],
                    help="of " + ",".join(KINDS) + " (commas or spaces; default gray,camera)")
    ap.add_argument("--sigmas", type=int, nargs="+", default=SIGMAS, help="gray and colour")
    ap.add_argument("--temporal-sigmas", type=int, nargs="+", help="temporal (default: --sigmas)")
    ap.add_argument("--limit-photos", type=int, default=0,
                    help="the first N photos of each of gray, colour, temporal (0: all)")
    ap.add_argument("--camera-limit", type=int, default=48, help="camera cases (192: all)")
    ap.add_argument("--crop", type=int, help="centre crop (default 512 with CuPy, 256 with numpy)")
    ap.add_argument("--factors", type=float, nargs="+", default=STRENGTH_FACTORS,
                    help="h = a * sigma for these a")
    ap.add_argument("--chroma-factors", type=float, nargs="+", default=CHROMA_FACTORS,
                    help="colour: chroma strength hc = c * h for these c")
    ap.add_argument("--engine-grid", default=os.path.join(HERE, "auto-strength", "grid.json"),
                    help="nlm_auto_strength.py --grid's file: the engine's PSNR at the same settings")
    ap.add_argument("--backend", default="auto", choices=["auto", "numpy", "cupy"])
    ap.add_argument("--jobs", type=int, help="processes with numpy (default: the cores); 1 with CuPy")
    ap.add_argument("--quick", action="store_true",
                    help="2 photos, crop 96, sigma 20, a = 0.6 1.0 1.4, 2 camera cases")
    ap.add_argument("--self-check", action="store_true")
    args = ap.parse_args()
    kinds = [k for arg in args.kinds for k in arg.split(",") if k]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        ap.error(f"--kinds: unknown {', '.join(unknown)} (of {','.join(KINDS)})")
    xp, name = backend(args.backend)
    if args.self_check:
        self_check(xp, name)
        return
    if args.quick:
        args.limit_photos, args.crop, args.sigmas = 2, 96, [20]
        args.factors, args.camera_limit = QUICK_FACTORS, 2
    crop = args.crop or (512 if name == "cupy" else 256)
    factors = sorted(args.factors)
    chroma_factors = sorted(args.chroma_factors)
    cases = []
    for kind in KINDS:
        if kind not in kinds:
            continue
        if kind == "camera":
            cases += [("camera",) + c for c in camera_cases(args.camera_limit)]
            continue
        sigmas = args.temporal_sigmas or args.sigmas if kind == "temporal" else args.sigmas
        cases += [(kind, n, s) for n in photos(args.photos, kind, args.limit_photos) for s in sigmas]
    tasks = [(c, crop, factors, chroma_factors, name, args.camera, args.photos) for c in cases]
    jobs = 1 if name == "cupy" else (args.jobs or os.cpu_count() or 1)
    print(f"{len(cases)} cases, crop {crop}, {len(settings_of(factors))} settings"
          + (f" (colour: {len(settings_of(factors, chroma_factors))}, chroma strength c h for c in "
             f"{' '.join(f'{c:g}' for c in chroma_factors)})" if "colour" in kinds else "")
          + f", backend {name}" + (f", {jobs} processes" if jobs > 1 else ""), flush=True)
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
                       "colour_settings": settings_of(factors, chroma_factors), "kinds": kinds,
                       "argv": sys.argv[1:],
                       "crop": crop, "patch": PATCH, "search": SEARCH, "step": STEP,
                       "backend": name, "seconds": seconds, "quick": args.quick,
                       "report": text}, f, indent=0)


if __name__ == "__main__":
    main()

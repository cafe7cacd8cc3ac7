#!/usr/bin/env python3
"""Per-frame noise estimators measured on real photos: which one should the
GPU compute for cudanlm's automatic mode (issue 39).

Every estimator takes one plane (8 or 16 bits) and returns the standard
deviation of its noise in 8-bit units (level / 2^(bits-8), cudanlm's rule).
All are vectorised numpy, deterministic, and shaped as one or two passes
over the plane plus a small reduction (docs/noise-estimation.md):

  immerkaer      J. Immerkaer, "Fast noise variance estimation", CVIU 64(2),
                 1996: L = I * [1 -2 1; -2 4 -2; 1 -2 1] on the interior,
                 sigma = sqrt(pi/2) sum|L| / (6 (W-2)(H-2)).
  tai-yang       S.-C. Tai, S.-M. Yang, "A fast method for image noise
                 estimation using Laplacian operator and adaptive edge
                 detection", ISCCSP 2008: the same sum over the pixels whose
                 Sobel magnitude |Gx|+|Gy| is not in the top 10%.
  flat-lap-qXX   (a variant of tai-yang written for this measurement)
                 Immerkaer over flat pixels, with a threshold that follows
                 the estimate: keep the pixels with |Gx|+|Gy| <= the XXth
                 percentile of |Gx|+|Gy| on pure noise of the current
                 estimate; start from tai-yang and repeat to the fixed point.
                 For Gaussian noise L is independent of (Gx, Gy) (their masks
                 are orthogonal), so the selection does not bias the sum.
  flat-lap-q90-table  the same as a GPU would compute it: one pass fills a
                 table of count and sum |L| per 1-level gradient bin, and the
                 fixed point reads only the table.
  haar-mad       D. Donoho, "De-noising by soft-thresholding", IEEE Trans.
                 IT 41(3), 1995: sigma = median(|HH|) / 0.6745, HH the
                 finest diagonal Haar subband, (a - b - c + d) / 2 on 2x2
                 blocks; median from a histogram, interpolated in its bin.
  flat-haar-qXX  haar-mad over flat blocks, selected as flat-lap-qXX does,
                 with a 4x4 gradient centred on the block (orthogonal to HH).
  pca            G. Chen, F. Zhu, P. A. Heng, "An efficient statistical
                 method for image noise level estimation", ICCV 2015: the
                 eigenvalues of the covariance of the 8x8 patches (every
                 3rd row and column, as the authors' code); drop the
                 largest until the mean of the rest is their median.

Photos: scikit-image's data (grey photos as they are, colour ones as luma,
BT.601 weights as cv2.COLOR_BGR2GRAY), centre crops of at most 512x512, each
classed as smooth, moderately or strongly textured by T, the median Sobel
gradient magnitude (levels per pixel) of the clean photo blurred with a
Gaussian of sigma 1: smooth T < 1.5, moderate 1.5 <= T < 7, strong T >= 7
(the two thresholds sit in the two widest gaps between these photos' T).

Noise: additive Gaussian of sigma 0, 3, 5, 10, 15, 20, 30, 40 at 8 bits
(rounded, clipped; 3 seeds) and 16 bits (photo x 256 + noise x 256, rounded,
clipped; 1 seed); Poisson-Gaussian y = a Poisson(x / a) + N(0, b^2) in 8-bit
units, rounded and clipped, at four (a, b) and once more on the photo
darkened to a quarter (2 seeds). The truth is the noise actually added: the
pooled standard deviation of (noisy - clean) among the pixels of each clean
level (so clipping and rounding count, and for Poisson-Gaussian it is the
root mean of the per-level variance over the image). Criterion (issue 39):
|estimate - truth| <= max(0.15 truth, 1 level).

A last part follows one estimator through a video whose noise changes (a pan
over motorcycle_left) with the exponential average of temporal-smoothing.

    studies/noise_estimation.py [--out DIR] [--jobs N] [--quick]
                              [--recommended NAME] [--from-json FILE]

Writes DIR/results.json (every case) and DIR/report.md (the tables, also
printed); --from-json makes the report again from a results.json. About a
minute on 2 cores (every case seeds its own generator, so the numbers do not
depend on --jobs). Needs numpy, cv2 and scikit-image (its data directory).
"""
import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy", "skimage"])

import cv2  # noqa: E402
import numpy as np  # noqa: E402

# ---------------------------------------------------------------- estimators

IMMERKAER_SCALE = math.sqrt(math.pi / 2) / 6   # E|L| = 6 sigma sqrt(2/pi)
MAD_SCALE = 0.6744897501960817                  # median |N(0,1)|
SOBEL_NOISE = math.sqrt(12.0)                   # std of Gx (and Gy) for unit noise
BLOCK_GRAD_NOISE = math.sqrt(40.0)              # the same for the 4x4 block gradient
PCA_PATCH = 8
PCA_STEP = 3                                    # patches every 3rd row and column, as the authors' code
MIN_KEEP = 0.02                                 # flat selections keep at least 2% of the plane


def _abs_sum_quantile(level):
    """The `level` quantile of |Z1| + |Z2|, Z1 and Z2 independent N(0, 1):
    the spread of |Gx| + |Gy| on pure noise, in units of the std of Gx."""
    u = np.linspace(0.0, 12.0, 24001)
    erf = np.frompyfunc(math.erf, 1, 1)
    phi = np.exp(-u * u / 2) / math.sqrt(2 * math.pi)

    def cdf(t):  # P(|Z1| + |Z2| <= t) = int_0^t 2 phi(u) (2 Phi(t - u) - 1) du
        v = u[u <= t]
        f = 2 * phi[: v.size] * erf((t - v) / math.sqrt(2)).astype(float)
        return float(np.sum((f[1:] + f[:-1]) / 2 * np.diff(v)))

    lo, hi = 0.0, 12.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < level else (lo, mid)
    return (lo + hi) / 2


NOISE_GRAD_QUANTILE = {q: _abs_sum_quantile(q / 100) for q in (50, 75, 90)}


def laplacian(x):
    """Immerkaer's mask [1 -2 1; -2 4 -2; 1 -2 1] = [1 -2 1]^T [1 -2 1], interior."""
    d = x[:, :-2] - 2 * x[:, 1:-1] + x[:, 2:]
    return d[:-2] - 2 * d[1:-1] + d[2:]


def sobel_abs(x):
    """|Gx| + |Gy| of the 3x3 Sobel masks on the interior (aligned with laplacian)."""
    dx = x[:, 2:] - x[:, :-2]
    dy = x[2:] - x[:-2]
    return (np.abs(dx[:-2] + 2 * dx[1:-1] + dx[2:])
            + np.abs(dy[:, :-2] + 2 * dy[:, 1:-1] + dy[:, 2:]))


def haar_hh(x):
    """The finest diagonal Haar subband (a - b - c + d) / 2 of the 2x2 blocks."""
    h, w = x.shape[0] // 2 * 2, x.shape[1] // 2 * 2
    x = x[:h, :w]
    return (x[0::2, 0::2] - x[0::2, 1::2] - x[1::2, 0::2] + x[1::2, 1::2]) / 2


def block_gradient(x):
    """|Gx| + |Gy| over the 4x4 neighbourhood centred on each 2x2 block (blocks
    with a whole neighbourhood, aligned with haar_hh(x)[1:-1, 1:-1]). Gx uses
    weights [1 2 2 1] down and [-1 -1 1 1] across: symmetric in y and
    antisymmetric in x, so orthogonal to the HH pattern (antisymmetric in both)."""
    nbh, nbw = x.shape[0] // 2, x.shape[1] // 2
    wy, wx = (1.0, 2.0, 2.0, 1.0), (-1.0, -1.0, 1.0, 1.0)
    gx = np.zeros((nbh - 2, nbw - 2))
    gy = np.zeros_like(gx)
    for r in range(4):
        for c in range(4):
            s = x[1 + r: 1 + r + 2 * (nbh - 2): 2, 1 + c: 1 + c + 2 * (nbw - 2): 2]
            gx += wy[r] * wx[c] * s
            gy += wx[r] * wy[c] * s
    return np.abs(gx) + np.abs(gy)


def hist_median(values, width):
    """Median of values >= 0 from a histogram of bins `width` wide centred on
    multiples of `width` (the first bin is [0, width/2)), interpolated inside
    the bin that holds it, as a GPU would take it from a histogram. At 8 bits
    |HH| is a multiple of 0.5, so width 0.5 puts every value on a bin centre."""
    top = int(round(255.0 / width))
    k = np.minimum(np.floor(values / width + 0.5), top).astype(np.int64)
    counts = np.bincount(k.ravel(), minlength=top + 1)
    half = values.size / 2.0
    cum = np.cumsum(counts)
    b = int(np.searchsorted(cum, half))
    before = cum[b - 1] if b else 0
    lo, span = (0.0, width / 2) if b == 0 else ((b - 0.5) * width, width)
    return lo + span * (half - before) / counts[b]


def hist_width(bits):
    return 0.5 if bits == 8 else 1.0 / 32


def immerkaer(x, bits):
    return IMMERKAER_SCALE * float(np.mean(np.abs(laplacian(x))))


def _keep_lowest(g, frac_edges):
    """Mask of the pixels whose gradient is not in the top `frac_edges`."""
    n = g.size
    k = max(int(math.ceil(n * (1 - frac_edges))) - 1, 0)
    return g <= np.partition(g.ravel(), k)[k]


def tai_yang(x, bits, frac_edges=0.10):
    lap, g = np.abs(laplacian(x)), sobel_abs(x)
    return IMMERKAER_SCALE * float(lap[_keep_lowest(g, frac_edges)].mean())


def _fixed_point(start, estimate_below, noise_spread, iterations=50):
    """sigma <- estimate over the pixels with gradient <= noise_spread * sigma,
    from `start` until it moves by less than 1e-4 (relative)."""
    sigma = start
    for _ in range(iterations):
        new = estimate_below(noise_spread * sigma)
        if abs(new - sigma) <= 1e-4 * max(sigma, 1e-6):
            return new
        sigma = new
    return sigma


def flat_laplacian(x, bits, q=90):
    """Immerkaer over the flat pixels, the threshold following the estimate.
    The pixels sorted by gradient once, with a running sum of |L|, give the
    estimate for any threshold: what a GPU gets from one pass that fills a
    table of count and sum |L| per gradient bin."""
    lap, g = np.abs(laplacian(x)).ravel(), sobel_abs(x).ravel()
    order = np.argsort(g, kind="stable")
    gs, cum = g[order], np.cumsum(lap[order])
    n_min = max(int(MIN_KEEP * g.size), 1)

    def below(t):
        n = max(int(np.searchsorted(gs, t, side="right")), n_min)
        return IMMERKAER_SCALE * cum[n - 1] / n

    start = IMMERKAER_SCALE * float(lap[_keep_lowest(g, 0.10)].mean())
    return _fixed_point(start, below, NOISE_GRAD_QUANTILE[q] * SOBEL_NOISE)


TABLE_BIN = 1.0      # gradient bin of the GPU's table, in 8-bit levels
TABLE_BINS = 1024    # the last bin takes every gradient from 1023 levels up


def flat_laplacian_table(x, bits, q=90):
    """flat_laplacian as the GPU would run it: one pass fills a table of the
    pixel count and the sum of |L| per gradient bin (1 level wide, 1024 bins);
    the threshold search then reads only the table (running sums; the bin
    that holds a threshold counts in proportion to the part below it)."""
    lap, g = np.abs(laplacian(x)).ravel(), sobel_abs(x).ravel()
    k = np.minimum((g / TABLE_BIN).astype(np.int64), TABLE_BINS - 1)
    count = np.bincount(k, minlength=TABLE_BINS).astype(np.float64)
    total = np.bincount(k, lap, minlength=TABLE_BINS)
    below_n = np.concatenate([[0.0], np.cumsum(count)])   # pixels in the bins before bin j
    below_s = np.concatenate([[0.0], np.cumsum(total)])
    n_all = float(g.size)
    n_min = max(int(MIN_KEEP * g.size), 1)

    def at_count(n):  # the sum of |L| over the n lowest-gradient pixels
        j = min(int(np.searchsorted(below_n, n, side="left")) - 1, TABLE_BINS - 1)
        j = max(j, 0)
        f = (n - below_n[j]) / count[j] if count[j] else 0.0
        return below_s[j] + f * total[j]

    def below(t):
        j = min(int(t / TABLE_BIN), TABLE_BINS - 1)
        f = min(t / TABLE_BIN - j, 1.0)
        n = below_n[j] + f * count[j]
        if n < n_min:
            return IMMERKAER_SCALE * at_count(n_min) / n_min
        return IMMERKAER_SCALE * (below_s[j] + f * total[j]) / n

    start = IMMERKAER_SCALE * at_count(0.9 * n_all) / (0.9 * n_all)
    return _fixed_point(start, below, NOISE_GRAD_QUANTILE[q] * SOBEL_NOISE)


def haar_mad(x, bits):
    return hist_median(np.abs(haar_hh(x)), hist_width(bits)) / MAD_SCALE


def flat_haar(x, bits, q=90):
    hh = np.abs(haar_hh(x)[1:-1, 1:-1]).ravel()
    g = block_gradient(x).ravel()
    order = np.argsort(g, kind="stable")
    gs, hs = g[order], hh[order]
    n_min = max(int(MIN_KEEP * g.size), 1)
    width = hist_width(bits)

    def below(t):
        n = max(int(np.searchsorted(gs, t, side="right")), n_min)
        return hist_median(hs[:n], width) / MAD_SCALE

    start = hist_median(hh[_keep_lowest(g, 0.10).ravel()], width) / MAD_SCALE
    return _fixed_point(start, below, NOISE_GRAD_QUANTILE[q] * BLOCK_GRAD_NOISE)


def pca_chen(x, bits, patch=PCA_PATCH, step=PCA_STEP):
    """Chen, Zhu and Heng 2015: covariance of the patch x patch patches at
    every `step`-th row and column (3 in the authors' code), then (their published
    loop) drop the largest eigenvalue until as many of the rest lie above
    their mean as below it; sigma = sqrt(that mean)."""
    x = x - x.mean()
    win = np.lib.stride_tricks.sliding_window_view(x, (patch, patch))[::step, ::step]
    r = patch * patch
    gram, total, n = np.zeros((r, r)), np.zeros(r), 0
    for y0 in range(0, win.shape[0], 32):
        block = win[y0:y0 + 32].reshape(-1, r)
        gram += block.T @ block
        total += block.sum(axis=0)
        n += block.shape[0]
    mean = total / n
    cov = gram / n - np.outer(mean, mean)
    eig = np.linalg.eigvalsh(cov)  # ascending
    for count in range(r, 0, -1):
        tail = eig[:count]
        m = tail.mean()
        if np.sum(tail > m) == np.sum(tail < m):
            break
    return math.sqrt(max(m, 0.0))


ESTIMATORS = {
    "immerkaer": immerkaer,
    "tai-yang": tai_yang,
    "flat-lap-q50": lambda x, b: flat_laplacian(x, b, 50),
    "flat-lap-q90": lambda x, b: flat_laplacian(x, b, 90),
    "flat-lap-q90-table": lambda x, b: flat_laplacian_table(x, b, 90),
    "haar-mad": haar_mad,
    "flat-haar-q50": lambda x, b: flat_haar(x, b, 50),
    "flat-haar-q90": lambda x, b: flat_haar(x, b, 90),
    "pca": pca_chen,
}


def estimate_all(plane, bits, names=None):
    x = plane.astype(np.float64) / (1 << (bits - 8))
    return {k: float(ESTIMATORS[k](x, bits)) for k in (names or ESTIMATORS)}


# ---------------------------------------------------------------- photos

# (name, file in skimage's data directory)
PHOTOS = [
    ("camera", "camera.png"), ("moon", "moon.png"), ("astronaut", "astronaut.png"),
    ("coffee", "coffee.png"), ("chelsea", "chelsea.png"), ("rocket", "rocket.jpg"),
    ("immunohistochemistry", "ihc.png"), ("page", "page.png"), ("text", "text.png"),
    ("brick", "brick.png"), ("grass", "grass.png"), ("gravel", "gravel.png"),
    ("hubble_deep_field", "hubble_deep_field.jpg"), ("coins", "coins.png"),
    ("motorcycle_left", "motorcycle_left.png"),
]
CROP = 512
SMOOTH_BELOW, STRONG_FROM = 1.5, 7.0
CLASSES = ["smooth", "moderate", "strong"]


def data_dir():
    import skimage
    return skimage.data_dir


def load_photo(filename, crop=CROP):
    """Grey (luma for colour photos, BT.601 weights), centre crop of at most crop x crop."""
    img = cv2.imread(os.path.join(data_dir(), filename), cv2.IMREAD_UNCHANGED)
    if img is None:
        sys.exit(f"cannot read {filename} in {data_dir()}")
    if img.ndim == 3:
        img = cv2.cvtColor(img[:, :, :3], cv2.COLOR_BGR2GRAY)
    h, w = img.shape
    ch, cw = min(h, crop), min(w, crop)
    y0, x0 = (h - ch) // 2, (w - cw) // 2
    return np.ascontiguousarray(img[y0:y0 + ch, x0:x0 + cw])


def texture_measure(clean):
    """T: median Sobel gradient magnitude (levels per pixel) of the clean photo
    blurred with a Gaussian of sigma 1 (which takes out most of its own noise)."""
    b = cv2.GaussianBlur(clean.astype(np.float64), (0, 0), 1.0)
    gx = cv2.Sobel(b, cv2.CV_64F, 1, 0) / 8
    gy = cv2.Sobel(b, cv2.CV_64F, 0, 1) / 8
    return float(np.median(np.hypot(gx, gy)))


def texture_class(t):
    return "smooth" if t < SMOOTH_BELOW else "moderate" if t < STRONG_FROM else "strong"


# ---------------------------------------------------------------- noise

SIGMAS = [0, 3, 5, 10, 15, 20, 30, 40]
SEEDS_8, SEEDS_16, SEEDS_PG = 3, 1, 2
# Poisson-Gaussian (a, b) in 8-bit units: variance a x + b^2 at level x.
PG_PARAMS = [(0.25, 2.0), (1.0, 2.0), (2.0, 4.0), (4.0, 8.0)]
PG_DARK = (1.0, 2.0)     # on the photo darkened to a quarter
DARK = 0.25


def make_noisy(clean, model, param, bits, rng):
    """(noisy plane, clean levels in 8-bit units it was made from)."""
    x = clean.astype(np.float64)
    if model == "pg-dark":
        x = np.rint(x * DARK)
    if model == "gauss":
        y = x + rng.normal(0.0, param, x.shape) if param else x.copy()
    else:
        a, b = param
        y = a * rng.poisson(x / a) + rng.normal(0.0, b, x.shape)
    scale = 1 << (bits - 8)
    top = (1 << bits) - 1
    noisy = np.clip(np.rint(y * scale), 0, top).astype(np.uint8 if bits == 8 else np.uint16)
    return noisy, x


def added_sigma(noisy, x, bits):
    """The noise actually added, in 8-bit units: the pooled standard deviation of
    noisy - clean among the pixels of each clean level (square root of the
    mean, over the image, of the variance at each pixel's level)."""
    r = noisy.astype(np.float64).ravel() / (1 << (bits - 8)) - x.ravel()
    lev = x.ravel().astype(np.int64)
    n = np.bincount(lev)
    s1 = np.bincount(lev, r)
    s2 = np.bincount(lev, r * r)
    used = n > 0
    ss = np.sum(s2[used] - s1[used] ** 2 / n[used])
    return math.sqrt(max(ss, 0.0) / (r.size - int(used.sum())))


def nominal_sigma(model, param, x):
    if model == "gauss":
        return float(param)
    a, b = param
    return math.sqrt(float(np.mean(a * x + b * b)))


# ---------------------------------------------------------------- cases

_PHOTO_CACHE = {}


def _photo(index):
    if index not in _PHOTO_CACHE:
        _PHOTO_CACHE[index] = load_photo(PHOTOS[index][1])
    return _PHOTO_CACHE[index]


def cases(quick=False):
    photos = range(len(PHOTOS))
    sigmas = [0, 5, 20, 40] if quick else SIGMAS
    out = []
    for p in photos:
        for s in sigmas:
            for seed in range(1 if quick else SEEDS_8):
                out.append((p, "gauss", s, 8, seed))
            for seed in range(SEEDS_16):
                out.append((p, "gauss", s, 16, seed))
        for ab in PG_PARAMS:
            for seed in range(1 if quick else SEEDS_PG):
                out.append((p, "pg", ab, 8, seed))
        for seed in range(1 if quick else SEEDS_PG):
            out.append((p, "pg-dark", PG_DARK, 8, seed))
    return out


def run_case(case):
    p, model, param, bits, seed = case
    clean = _photo(p)
    # One stream per case, from the case itself: the same noise whatever the
    # order or the number of processes.
    key = [p, ["gauss", "pg", "pg-dark"].index(model), bits, seed,
           int(round(1000 * (param if model == "gauss" else param[0]))),
           int(round(1000 * (0 if model == "gauss" else param[1])))]
    rng = np.random.default_rng(key)
    noisy, x = make_noisy(clean, model, param, bits, rng)
    t0 = time.perf_counter()
    est = estimate_all(noisy, bits)
    return {"photo": PHOTOS[p][0], "model": model,
            "param": param if model == "gauss" else list(param), "bits": bits, "seed": seed,
            "nominal": nominal_sigma(model, param, x), "truth": added_sigma(noisy, x, bits),
            "estimates": est, "seconds": time.perf_counter() - t0}


# ---------------------------------------------------------------- video

VIDEO_FILE = "motorcycle_left.png"
VW, VH, VFRAMES = 480, 320, 150
RESTART_AT = 120      # a DISCONT buffer: the history starts again
SMOOTHING = [0.0, 0.5, 0.8, 0.9]


def video_sigma(n):
    """Noise of frame n: 5, a step to 20 at frame 40, a ramp down to 3 over
    frames 80-119, and 10 after the break at frame 120."""
    if n < 40:
        return 5.0
    if n < 80:
        return 20.0
    if n < 120:
        return 20.0 + (3.0 - 20.0) * (n - 80) / 39
    return 10.0


def video_estimates(estimator):
    """Per frame: (truth, raw estimate) on a pan over motorcycle_left (1.7 and
    0.9 pixels per frame, bilinear), Gaussian noise of video_sigma(n)."""
    src = load_photo(VIDEO_FILE, crop=10 ** 6).astype(np.float32)
    rng = np.random.default_rng([7, 7])
    truth, raw = [], []
    for n in range(VFRAMES):
        m = np.float32([[1, 0, 1.7 * n], [0, 1, 0.9 * n]])
        clean = np.rint(cv2.warpAffine(src, m, (VW, VH), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP))
        noisy, x = make_noisy(clean.astype(np.uint8), "gauss", video_sigma(n), 8, rng)
        truth.append(added_sigma(noisy, x, 8))
        raw.append(float(ESTIMATORS[estimator](noisy.astype(np.float64), 8)))
    return truth, raw


def smooth(raw, s, restarts):
    """temporal-smoothing's exponential average: weight s on the past; a history
    starts again (with the frame's own estimate) at frame 0 and at each restart."""
    out = []
    for n, e in enumerate(raw):
        out.append(e if n == 0 or n in restarts else s * out[-1] + (1 - s) * e)
    return out


def within(est, truth):
    return abs(est - truth) <= max(0.15 * truth, 1.0)


def video_report(estimator):
    truth, raw = video_estimates(estimator)
    rows = []
    for s in SMOOTHING:
        for restarts in ({RESTART_AT}, set()):
            if s == 0 and not restarts:
                continue
            m = smooth(raw, s, restarts)
            ok = [within(e, t) for e, t in zip(m, truth)]
            settle = next((n - 40 for n in range(40, 80) if all(ok[n:80])), None)
            after_break = next((n - RESTART_AT for n in range(RESTART_AT, VFRAMES) if all(ok[n:])), None)
            steady = np.array(m[10:40]) - np.array(truth[10:40])
            ramp = np.array(m[90:120]) - np.array(truth[90:120])
            rows.append({
                "smoothing": s, "restart_at_discont": bool(restarts),
                "frames_within": int(sum(ok)), "frames": VFRAMES,
                "steady_rel_std": float(np.std(steady) / np.mean(truth[10:40])),
                "steady_mean_step": float(np.mean(np.abs(np.diff(m[10:40])))),
                "frames_to_settle_after_step": settle,
                "ramp_mean_error": float(np.mean(ramp)),
                "frames_to_settle_after_break": after_break,
                "worst_error_after_break": float(np.max(np.abs(np.array(m[RESTART_AT:])
                                                                - np.array(truth[RESTART_AT:])))),
            })
    return {"estimator": estimator, "truth": truth, "raw": raw, "rows": rows}


# ---------------------------------------------------------------- report

def tolerance(truth):
    return max(0.15 * truth, 1.0)


def passes(r, name, truth=None):
    t = r["truth"] if truth is None else truth
    return abs(r["estimates"][name] - t) <= tolerance(t)


def rel(r, name):
    return (r["estimates"][name] - r["truth"]) / r["truth"]


def fmt_rel(values):
    """'mean (worst)' of relative errors, in %; worst is the largest in size."""
    if not values:
        return ""
    worst = max(values, key=abs)
    return f"{100 * np.mean(values):+.0f} ({100 * worst:+.0f})"


def report(results, photos, names, recommended, video, seconds):
    lines = []
    out = lines.append
    cls = {p["name"]: p["class"] for p in photos}
    g8 = [r for r in results if r["model"] == "gauss" and r["bits"] == 8]
    g16 = [r for r in results if r["model"] == "gauss" and r["bits"] == 16]
    pg = [r for r in results if r["model"] in ("pg", "pg-dark")]

    out("## Photos")
    out("")
    out(f"Centre crops of at most {CROP}x{CROP}; T = median Sobel gradient (levels per pixel) of the clean "
        f"photo blurred with a Gaussian of sigma 1; smooth T < {SMOOTH_BELOW}, moderate T < {STRONG_FROM}, "
        "strong beyond. Then each estimator's estimate on the clean photo (no noise added, 8 bits), in levels.")
    out("")
    out("| photo | size | T | class | " + " | ".join(names) + " |")
    out("| --- | --- | ---: | --- | " + " | ".join("---:" for _ in names) + " |")
    for p in sorted(photos, key=lambda p: (CLASSES.index(p["class"]), p["T"])):
        r = next(r for r in g8 if r["photo"] == p["name"] and r["param"] == 0)
        out(f"| {p['name']} | {p['size']} | {p['T']:.2f} | {p['class']} | "
            + " | ".join(f"{r['estimates'][n]:.2f}" for n in names) + " |")

    def error_table(rows, title):
        out("")
        out(title)
        out("")
        sig = [s for s in SIGMAS if s]
        out("| estimator | class | sigma 0: estimate, mean (largest) | "
            + " | ".join(f"{s}" for s in sig) + " | within the bar, sigma 3-40 |")
        out("| --- | --- | ---: | " + " | ".join("---:" for _ in sig) + " | ---: |")
        for n in names:
            for c in CLASSES:
                rs = [r for r in rows if cls[r["photo"]] == c]
                zero = [r["estimates"][n] for r in rs if r["param"] == 0]
                cells = [fmt_rel([rel(r, n) for r in rs if r["param"] == s]) for s in sig]
                noisy = [r for r in rs if r["param"] != 0]
                ok = sum(passes(r, n) for r in noisy)
                out(f"| {n} | {c} | {np.mean(zero):.2f} ({max(zero):.2f}) | " + " | ".join(cells)
                    + f" | {ok}/{len(noisy)} |")

    error_table(g8, "## Gaussian noise, 8 bits\n\nError of the estimate against the noise actually added, "
                "(estimate - truth) / truth in %: mean over the photos of the class and the seeds, and the "
                "largest in brackets. The bar: within 15% or 1 level, whichever is larger.")
    error_table(g16, "## Gaussian noise, 16 bits\n\nThe same photos x 256, noise x 256 at full precision, "
                "estimates in 8-bit units (one seed).")

    out("")
    out("## Poisson-Gaussian noise, 8 bits")
    out("")
    out("y = a Poisson(x / a) + N(0, b^2) in 8-bit units, rounded and clipped; `dark`: the photo x 0.25 first. "
        "Truth: the root mean over the image of the variance at each pixel's level (noise actually added). "
        "Cells: mean (largest) error in %, over the photos of the class and 2 seeds.")
    out("")
    settings = [("pg", ab) for ab in PG_PARAMS] + [("pg-dark", PG_DARK)]
    heads = [f"a {a:g}, b {b:g}" + (" dark" if m == "pg-dark" else "") for m, (a, b) in settings]
    out("| estimator | class | " + " | ".join(heads) + " | within the bar |")
    out("| --- | --- | " + " | ".join("---:" for _ in heads) + " | ---: |")
    for n in names:
        for c in CLASSES:
            rs = [r for r in pg if cls[r["photo"]] == c]
            cells = [fmt_rel([rel(r, n) for r in rs if r["model"] == m and tuple(r["param"]) == ab])
                     for m, ab in settings]
            out(f"| {n} | {c} | " + " | ".join(cells) + f" | {sum(passes(r, n) for r in rs)}/{len(rs)} |")
    out("")
    truths = {}
    for r in pg:
        truths.setdefault((r["model"], tuple(r["param"])), []).append(r["truth"])
    out("Truth (noise actually added) over the photos, levels: " + "; ".join(
        f"{h}: {min(truths[s]):.1f} to {max(truths[s]):.1f}" for h, s in zip(heads, settings)) + ".")

    # The clean photos' own noise: each estimator's estimate on a clean photo
    # is its own noise plus what texture adds, so the lowest of them bounds
    # the photo's own noise from above.
    own = {p["name"]: min(r["estimates"][n] for n in names for r in g8
                          if r["photo"] == p["name"] and r["param"] == 0) for p in photos}

    def total_truth(r):
        c = own[r["photo"]] * (DARK if r["model"] == "pg-dark" else 1.0)
        return math.hypot(r["truth"], c)

    out("")
    out("## Summary")
    out("")
    out("Within the bar on smooth and moderately textured photos, sigma 3-40 (Gaussian) and every "
        "Poisson-Gaussian case, against the noise added, and against the noise added and the photo's own "
        "noise c together, sqrt(added^2 + c^2), c the lowest estimate of the clean photo over all estimators "
        "(" + ", ".join(f"{k} {v:.2f}" for k, v in own.items() if v >= 1) + ", below 1 elsewhere); "
        "mean error on strongly textured ones; spread between seeds (relative standard deviation, median over "
        "photos and sigmas); time per 512x512 plane here (numpy, one core).")
    out("")
    out("| estimator | Gaussian 8-bit | Gaussian 16-bit | Poisson-Gaussian | all, against added + own | "
        "largest error (levels), smooth+moderate, against added | strong: mean error at sigma 3 / 10 / 40 | "
        "seed spread | ms |")
    out("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in names:
        sm = lambda rows: [r for r in rows if cls[r["photo"]] != "strong" and r["truth"] > 0]  # noqa: E731
        cells = []
        for rows in (g8, g16, pg):
            rs = [r for r in sm(rows) if r["param"] != 0]
            cells.append(f"{sum(passes(r, n) for r in rs)}/{len(rs)}")
        rs = [r for r in sm(g8 + g16 + pg) if r["param"] != 0]
        cells.append(f"{sum(passes(r, n, total_truth(r)) for r in rs)}/{len(rs)}")
        allsm = [r for r in sm(g8 + g16 + pg) if r["param"] != 0]
        worst = max(allsm, key=lambda r: abs(r["estimates"][n] - r["truth"]) / tolerance(r["truth"]))
        werr = worst["estimates"][n] - worst["truth"]
        strong = [(fmt_rel([rel(r, n) for r in g8 if cls[r["photo"]] == "strong" and r["param"] == s])
                   or "-").split()[0] for s in (3, 10, 40)]
        spread = []
        for p in photos:
            for s in SIGMAS[1:]:
                v = [r["estimates"][n] for r in g8 if r["photo"] == p["name"] and r["param"] == s]
                if len(v) > 1:
                    spread.append(np.std(v, ddof=1) / np.mean(v))
        ms = 1000 * seconds.get(n, float("nan"))
        out(f"| {n} | " + " | ".join(cells)
            + f" | {werr:+.2f} ({worst['photo']}, {worst['model']} {worst['param']}, truth {worst['truth']:.1f})"
            + f" | {' / '.join(strong)} % | {100 * float(np.median(spread)):.2f}% | {ms:.0f} |")

    if "flat-lap-q90-table" in names:
        d = max(abs(r["estimates"]["flat-lap-q90-table"] - r["estimates"]["flat-lap-q90"]) for r in results)
        dr = max(abs(r["estimates"]["flat-lap-q90-table"] / r["estimates"]["flat-lap-q90"] - 1)
                 for r in results if r["truth"] >= 2.5)
        out("")
        out(f"flat-lap-q90-table against flat-lap-q90 over all {len(results)} cases: largest difference "
            f"{d:.3f} levels (on clean photos, where the threshold is a few 1-level bins); "
            f"{100 * dr:.2f}% at most where the noise added is 2.5 levels or more.")
    out("")
    out(f"## {recommended}, photo by photo (8 bits, Gaussian)")
    out("")
    out("Error in levels (estimate - truth, mean over 3 seeds); sigma 0: the estimate itself.")
    out("")
    out("| photo | class | " + " | ".join(str(s) for s in SIGMAS) + " |")
    out("| --- | --- | " + " | ".join("---:" for _ in SIGMAS) + " |")
    for p in sorted(photos, key=lambda p: (CLASSES.index(p["class"]), p["T"])):
        cells = []
        for s in SIGMAS:
            rs = [r for r in g8 if r["photo"] == p["name"] and r["param"] == s]
            e = np.mean([r["estimates"][recommended] - r["truth"] for r in rs])
            bad = any(not passes(r, recommended) for r in rs)
            cells.append(f"{e:+.2f}" + ("*" if bad and s else ""))
        out(f"| {p['name']} | {p['class']} | " + " | ".join(cells) + " |")
    out("")
    out("`*`: outside the bar in at least one seed.")

    if video:
        out("")
        out(f"## Video: {video['estimator']} with temporal smoothing")
        out("")
        out(f"{VFRAMES} frames of {VW}x{VH} panning over {VIDEO_FILE} (gray), Gaussian noise of sigma 5, a "
            f"step to 20 at frame 40, a ramp down to 3 over frames 80-119, a DISCONT at {RESTART_AT} and "
            "sigma 10 after it. Exponential average with weight s on the past; a history restarts at the "
            "first frame and (or not) at the DISCONT.")
        out("")
        out("| s | restart at DISCONT | frames within the bar | steady (10-39): std of error / sigma, "
            "mean change per frame | frames to settle after the step | mean error on the ramp (90-119) | "
            "frames to settle after the break, largest error there |")
        out("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        for v in video["rows"]:
            out(f"| {v['smoothing']} | {'yes' if v['restart_at_discont'] else 'no'} | "
                f"{v['frames_within']}/{v['frames']} | {100 * v['steady_rel_std']:.2f}%, "
                f"{v['steady_mean_step']:.3f} | {v['frames_to_settle_after_step']} | "
                f"{v['ramp_mean_error']:+.2f} | {v['frames_to_settle_after_break']}, "
                f"{v['worst_error_after_break']:.2f} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="directory for results.json and report.md")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--quick", action="store_true", help="fewer sigmas and seeds (a smoke test)")
    ap.add_argument("--recommended", default="flat-lap-q90",
                    help="the estimator shown photo by photo and followed through the video")
    ap.add_argument("--from-json", help="make the report again from an earlier results.json")
    args = ap.parse_args()
    if args.recommended not in ESTIMATORS:
        sys.exit(f"--recommended: one of {', '.join(ESTIMATORS)}")

    started = time.perf_counter()
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        photos, results, video = saved["photos"], saved["cases"], saved.get("video")
        seconds = saved.get("ms_per_plane", {})
        seconds = {k: v / 1000 for k, v in seconds.items()}
    else:
        photos = []
        for name, filename in PHOTOS:
            img = load_photo(filename)
            t = texture_measure(img)
            photos.append({"name": name, "file": filename, "size": f"{img.shape[1]}x{img.shape[0]}",
                           "T": t, "class": texture_class(t)})
        todo = cases(args.quick)
        with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
            results = list(pool.map(run_case, todo, chunksize=4))
        # Time per estimator on one 512x512 plane, in this process.
        plane = make_noisy(load_photo("camera.png"), "gauss", 10, 8, np.random.default_rng(0))[0]
        x = plane.astype(np.float64)
        seconds = {}
        for n, f in ESTIMATORS.items():
            t0 = time.perf_counter()
            for _ in range(3):
                f(x, 8)
            seconds[n] = (time.perf_counter() - t0) / 3
        video = video_report(args.recommended)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        if not args.from_json:
            with open(os.path.join(args.out, "results.json"), "w") as f:
                json.dump({"photos": photos, "cases": results, "video": video,
                           "ms_per_plane": {k: 1000 * v for k, v in seconds.items()},
                           "versions": {"numpy": np.__version__, "opencv": cv2.__version__}}, f, indent=1)
    names = list(ESTIMATORS)
    text = report(results, photos, names, args.recommended, video, seconds)
    print(text)
    print(f"({len(results)} cases, {time.perf_counter() - started:.0f} s)")
    if args.out:
        with open(os.path.join(args.out, "report.md"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The design study behind cudanlm's chroma denoising (docs/cudanlm.md): a
numpy model of non-local means on I420 frames made from noisy colour photos,
with four ways to denoise the chroma, next to cv2.fastNlMeansDenoisingColored.

Pipeline per (photo, sigma):
  clean RGB --(+Gaussian noise in RGB, round, clip)--> noisy RGB
  noisy RGB --gst videoconvert--> I420 (Y, U, V)
  Y: plain NLM (21x21 search, 7x7 box patches, w = exp(-d2/h^2), reflect-101), h picked by Y PSNR
     against the clean image's Y (clean RGB -> I420 through the same videoconvert)
  U,V: variants A (joint U+V distance), B (luma-guided), C (luma+chroma, wc=1,2), D (carried)
  I420 --gst videoconvert--> RGB, PSNR against the clean RGB photo.
OpenCV baseline: fastNlMeansDenoisingColored(h, hColor, 7, 21) on the noisy RGB (and on the
I420-round-tripped noisy RGB). The (h, hColor) grid is evaluated through OpenCV's own
decomposition (cvtColor LBGR2Lab -> fastNlMeansDenoising(L,h), fastNlMeansDenoising(ab,hColor)
-> Lab2LBGR), which is checked to be bit-exact with the Colored call at the chosen point.

Usage: studies/nlm_chroma_variants.py [photo ...]   (default: astronaut coffee chelsea)
       studies/nlm_chroma_variants.py --table        (the table again from results.json)
Writes results.json and table.md into $CHROMA_VARIANTS_OUT (default:
bench-results/chroma-variants); caches I420 conversions there. Needs numpy,
cv2, scikit-image and gst-launch-1.0 (videoconvert).
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy", "skimage"])

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from skimage import data  # noqa: E402

from gstraw import psnr  # noqa: E402

HERE = os.environ.get('CHROMA_VARIANTS_OUT', os.path.join('bench-results', 'chroma-variants'))
CACHE = os.path.join(HERE, 'cache')
TMP = os.path.join(HERE, 'tmp')
os.makedirs(CACHE, exist_ok=True)
os.makedirs(TMP, exist_ok=True)

F32 = np.float32
R = 10            # search radius (21x21)
P = 3             # patch radius (7x7)
SIGMAS = [10, 20, 30]
# Strengths, multiples of sigma: wide enough that no optimum lies at an edge (chroma noise after
# I420's 2x2 subsampling is only about 0.27 sigma, and variant A's best strength is about 0.25 sigma)
MULTS = [0.1, 0.15, 0.2, 0.25, 0.3, 0.375, 0.45, 0.525, 0.6, 0.75, 0.9, 1.1, 1.3, 1.6, 2.0]
PHOTOS = {'astronaut': data.astronaut, 'coffee': data.coffee, 'chelsea': data.chelsea}
VARIANTS = ['A', 'B', 'C1', 'C2']   # C1: wc=1, C2: wc=2


def ru4(x):
    return (x + 3) // 4 * 4


# ----------------------------------------------------------------------------- GStreamer I/O
class Geo:
    def __init__(self, W, H):
        self.W, self.H = W, H
        self.rgb_stride = ru4(3 * W)
        self.rgb_size = self.rgb_stride * H
        self.Cw, self.Ch = (W + 1) // 2, (H + 1) // 2
        self.ys, self.cs = ru4(W), ru4(self.Cw)
        self.i420_size = self.ys * H + 2 * self.cs * self.Ch


def gst_convert(inp, outp, g, fin, fout):
    fsize = g.rgb_size if fin == 'rgb' else g.i420_size
    subprocess.run(['gst-launch-1.0', '-q', 'filesrc', 'location=' + inp, 'blocksize=%d' % fsize,
                    '!', 'rawvideoparse', 'format=' + fin, 'width=%d' % g.W, 'height=%d' % g.H,
                    'framerate=1/1', '!', 'videoconvert', '!', 'video/x-raw,format=' + fout,
                    '!', 'filesink', 'location=' + outp], check=True)


def rgb_to_bytes(im, g):
    buf = np.zeros((g.H, g.rgb_stride), np.uint8)
    buf[:, :3 * g.W] = im.reshape(g.H, -1)
    return buf.tobytes()


def bytes_to_rgb(raw, g):
    return raw.reshape(g.H, g.rgb_stride)[:, :3 * g.W].reshape(g.H, g.W, 3).copy()


def i420_to_bytes(Y, U, V, g):
    y = np.zeros((g.H, g.ys), np.uint8); y[:, :g.W] = Y
    u = np.zeros((g.Ch, g.cs), np.uint8); u[:, :g.Cw] = U
    v = np.zeros((g.Ch, g.cs), np.uint8); v[:, :g.Cw] = V
    return y.tobytes() + u.tobytes() + v.tobytes()


def bytes_to_i420(raw, g):
    o = g.ys * g.H
    c = g.cs * g.Ch
    Y = raw[:o].reshape(g.H, g.ys)[:, :g.W].copy()
    U = raw[o:o + c].reshape(g.Ch, g.cs)[:, :g.Cw].copy()
    V = raw[o + c:o + 2 * c].reshape(g.Ch, g.cs)[:, :g.Cw].copy()
    return Y, U, V


def rgb_to_i420(im, g, key):
    """Cached RGB -> I420 through videoconvert."""
    path = os.path.join(CACHE, key + '.i420')
    if not os.path.exists(path):
        src = os.path.join(TMP, 'in.rgb')
        with open(src, 'wb') as f:
            f.write(rgb_to_bytes(im, g))
        gst_convert(src, path + '.part', g, 'rgb', 'I420')
        os.replace(path + '.part', path)
    return bytes_to_i420(np.fromfile(path, np.uint8), g)


def i420_frames_to_rgb(frames, g):
    """frames: list of (Y,U,V) uint8 -> list of RGB uint8, one gst-launch for the batch."""
    src = os.path.join(TMP, 'batch.i420')
    dst = os.path.join(TMP, 'batch.rgb')
    with open(src, 'wb') as f:
        for Y, U, V in frames:
            f.write(i420_to_bytes(Y, U, V, g))
    gst_convert(src, dst, g, 'i420', 'RGB')
    raw = np.fromfile(dst, np.uint8)
    assert raw.size == g.rgb_size * len(frames), (raw.size, g.rgb_size, len(frames))
    return [bytes_to_rgb(raw[i * g.rgb_size:(i + 1) * g.rgb_size], g) for i in range(len(frames))]


# ----------------------------------------------------------------------------- NLM
def pad101(I, p):
    return cv2.copyMakeBorder(I, p, p, p, p, cv2.BORDER_REFLECT_101)


def box(d):
    return cv2.boxFilter(d, -1, (2 * P + 1, 2 * P + 1), normalize=True,
                         borderType=cv2.BORDER_CONSTANT)


def nlm_luma_multi(Y, hs):
    """Plain NLM of one plane for several strengths at once. Returns (K,H,W) float32."""
    I = Y.astype(F32)
    H, W = I.shape
    Ip = pad101(I, R + P)
    C = Ip[R:R + H + 2 * P, R:R + W + 2 * P]
    coef = (-1.0 / np.asarray(hs, F32) ** 2).astype(F32)[:, None, None]
    K = len(hs)
    num = np.zeros((K, H, W), F32)
    den = np.zeros((K, H, W), F32)
    for dy in range(-R, R + 1):
        for dx in range(-R, R + 1):
            S = Ip[R + dy:R + dy + H + 2 * P, R + dx:R + dx + W + 2 * P]
            d = S - C
            d *= d
            d2 = box(d)[P:P + H, P:P + W]
            w = d2[None] * coef
            np.exp(w, out=w)
            den += w
            w *= S[P:P + H, P:P + W]
            num += w
    return num / den


def nlm_chroma_multi(Y, U, V, hs):
    """All chroma variants for several strengths. Returns dict variant -> (Uo, Vo) with shape (K,Hc,Wc).
    A : d2 = mean over 7x7 and over {U,V}
    B : d2 = luma 7x7 patch distance between luma (2cx,2cy) and (2cx+2dx, 2cy+2dy)
    C1: (dY + 1*dC)/2   C2: (dY + 2*dC)/3
    """
    Yf, Uf, Vf = Y.astype(F32), U.astype(F32), V.astype(F32)
    H, W = Yf.shape
    Hc, Wc = Uf.shape
    assert (Hc, Wc) == ((H + 1) // 2, (W + 1) // 2)
    Up, Vp = pad101(Uf, R + P), pad101(Vf, R + P)
    Uc = Up[R:R + Hc + 2 * P, R:R + Wc + 2 * P]
    Vc = Vp[R:R + Hc + 2 * P, R:R + Wc + 2 * P]
    LR = 2 * R
    Yp = pad101(Yf, LR + P)
    Yc = Yp[LR:LR + H + 2 * P, LR:LR + W + 2 * P]
    coef = (-1.0 / np.asarray(hs, F32) ** 2).astype(F32)[None, :, None, None]
    K, NV = len(hs), len(VARIANTS)
    numU = np.zeros((NV, K, Hc, Wc), F32)
    numV = np.zeros((NV, K, Hc, Wc), F32)
    den = np.zeros((NV, K, Hc, Wc), F32)
    D = np.empty((NV, 1, Hc, Wc), F32)
    for dy in range(-R, R + 1):
        for dx in range(-R, R + 1):
            US = Up[R + dy:R + dy + Hc + 2 * P, R + dx:R + dx + Wc + 2 * P]
            VS = Vp[R + dy:R + dy + Hc + 2 * P, R + dx:R + dx + Wc + 2 * P]
            du = US - Uc
            du *= du
            dv = VS - Vc
            dv *= dv
            du += dv
            dC = box(du)[P:P + Hc, P:P + Wc] * F32(0.5)
            YS = Yp[LR + 2 * dy:LR + 2 * dy + H + 2 * P, LR + 2 * dx:LR + 2 * dx + W + 2 * P]
            dl = YS - Yc
            dl *= dl
            dL = box(dl)[P:P + H:2, P:P + W:2]
            D[0, 0] = dC
            D[1, 0] = dL
            D[2, 0] = (dL + dC) * F32(0.5)
            D[3, 0] = (dL + 2 * dC) * F32(1.0 / 3.0)
            w = D * coef
            np.exp(w, out=w)
            den += w
            uq = US[P:P + Hc, P:P + Wc]
            vq = VS[P:P + Hc, P:P + Wc]
            numU += w * uq
            w *= vq
            numV += w
    return {v: (numU[i] / den[i], numV[i] / den[i]) for i, v in enumerate(VARIANTS)}


def to_u8(x):
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


# ----------------------------------------------------------------------------- OpenCV baseline
def opencv_grid(rgb, clean, hs):
    """Best (psnr, h, hColor) of fastNlMeansDenoisingColored over hs x hs, plus full grid."""
    bgr = np.ascontiguousarray(rgb[..., ::-1])
    lab = cv2.cvtColor(bgr, cv2.COLOR_LBGR2Lab)
    L = np.ascontiguousarray(lab[..., 0])
    ab = np.ascontiguousarray(lab[..., 1:])
    Ls = [cv2.fastNlMeansDenoising(L, None, float(h), 7, 21) for h in hs]
    abs_ = [cv2.fastNlMeansDenoising(ab, None, float(h), 7, 21) for h in hs]
    grid = np.zeros((len(hs), len(hs)))
    for i in range(len(hs)):
        for j in range(len(hs)):
            out = cv2.cvtColor(np.dstack([Ls[i], abs_[j]]), cv2.COLOR_Lab2LBGR)[..., ::-1]
            grid[i, j] = psnr(out, clean)
    i, j = np.unravel_index(np.argmax(grid), grid.shape)
    # bit-exactness check against the real call at the optimum
    ref = cv2.fastNlMeansDenoisingColored(bgr, None, float(hs[i]), float(hs[j]), 7, 21)[..., ::-1]
    chk = psnr(ref, clean)
    assert abs(chk - grid[i, j]) < 1e-9, (chk, grid[i, j])
    return float(grid[i, j]), int(i), int(j), grid


# ----------------------------------------------------------------------------- experiment
def run_case(name, clean, sigma, pidx):
    t0 = time.time()
    H, W, _ = clean.shape
    g = Geo(W, H)
    rng = np.random.default_rng(1000 * pidx + sigma)
    noisy = np.clip(np.rint(clean.astype(np.float64) + rng.normal(0, sigma, clean.shape)),
                    0, 255).astype(np.uint8)
    hs = [m * sigma for m in MULTS]
    res = {'photo': name, 'W': W, 'H': H, 'sigma': sigma, 'mults': MULTS}

    cY, cU, cV = rgb_to_i420(clean, g, '%s_clean' % name)
    nY, nU, nV = rgb_to_i420(noisy, g, '%s_s%d_noisy' % (name, sigma))
    ceil_rgb, noisy_rt = i420_frames_to_rgb([(cY, cU, cV), (nY, nU, nV)], g)
    res['ceiling'] = psnr(ceil_rgb, clean)
    res['noisy_rgb'] = psnr(noisy, clean)
    res['noisy_rt'] = psnr(noisy_rt, clean)
    res['noisy_Y'] = psnr(nY, cY)
    res['noisy_UV'] = psnr(np.stack([nU, nV]), np.stack([cU, cV]))
    t1 = time.time()

    # ---- luma
    Yo = nlm_luma_multi(nY, hs)
    ypsnr = [psnr(to_u8(Yo[k]), cY) for k in range(len(hs))]
    kl = int(np.argmax(ypsnr))
    Ybest = to_u8(Yo[kl])
    res['luma'] = {'psnr_Y': ypsnr, 'best_k': kl, 'h': hs[kl]}
    t2 = time.time()

    # ---- chroma
    CO = nlm_chroma_multi(nY, nU, nV, hs)
    t3 = time.time()
    frames = [(Ybest, nU, nV),            # D: chroma carried
              (Ybest, cU, cV),            # oracle: clean chroma (after round trip)
              (nY, cU, cV)]               # info: noisy luma + clean chroma
    for v in VARIANTS:
        Uo, Vo = CO[v]
        for k in range(len(hs)):
            frames.append((Ybest, to_u8(Uo[k]), to_u8(Vo[k])))
    rgbs = i420_frames_to_rgb(frames, g)
    res['D'] = psnr(rgbs[0], clean)
    res['oracle_clean_chroma'] = psnr(rgbs[1], clean)
    res['noisyY_clean_chroma'] = psnr(rgbs[2], clean)
    ref_uv = np.stack([cU, cV])
    for vi, v in enumerate(VARIANTS):
        ps = [psnr(rgbs[3 + vi * len(hs) + k], clean) for k in range(len(hs))]
        uvp = [psnr(np.stack([to_u8(CO[v][0][k]), to_u8(CO[v][1][k])]), ref_uv)
               for k in range(len(hs))]
        kb = int(np.argmax(ps))
        res[v] = {'psnr_rgb': ps, 'psnr_uv': uvp, 'best_k': kb, 'best': ps[kb], 'hc': hs[kb]}
    t4 = time.time()

    # ---- OpenCV
    b, i, j, grid = opencv_grid(noisy, clean, hs)
    res['cv'] = {'best': b, 'h': hs[i], 'hColor': hs[j], 'grid': grid.tolist()}
    t5 = time.time()
    b2, i2, j2, grid2 = opencv_grid(noisy_rt, clean, hs)
    res['cv_rt'] = {'best': b2, 'h': hs[i2], 'hColor': hs[j2], 'grid': grid2.tolist()}
    t6 = time.time()
    res['time'] = {'io': t1 - t0, 'luma': t2 - t1, 'chroma': t3 - t2, 'eval': t4 - t3,
                   'cv': t5 - t4, 'cv_rt': t6 - t5, 'total': t6 - t0}
    return res


def fmt_m(h, s):
    return '%.2gσ' % (h / s)


def main():
    names = sys.argv[1:] or list(PHOTOS)
    out_path = os.path.join(HERE, 'results.json')
    allres = json.load(open(out_path)) if os.path.exists(out_path) else {}
    T0 = time.time()
    for pidx, name in enumerate(PHOTOS):
        if name not in names:
            continue
        clean = PHOTOS[name]()
        for s in SIGMAS:
            r = run_case(name, clean, s, pidx)
            allres['%s_%d' % (name, s)] = r
            json.dump(allres, open(out_path, 'w'), indent=1)
            print('%-9s s=%2d ceil %.2f noisy %.2f | Y h=%s | D %.2f A %.2f(%s) B %.2f(%s) C1 %.2f(%s) '
                  'C2 %.2f(%s) oracle %.2f | cv %.2f(%s,%s) cv_rt %.2f | %.1fs %s' % (
                      name, s, r['ceiling'], r['noisy_rt'], fmt_m(r['luma']['h'], s), r['D'],
                      r['A']['best'], fmt_m(r['A']['hc'], s), r['B']['best'], fmt_m(r['B']['hc'], s),
                      r['C1']['best'], fmt_m(r['C1']['hc'], s), r['C2']['best'], fmt_m(r['C2']['hc'], s),
                      r['oracle_clean_chroma'], r['cv']['best'], fmt_m(r['cv']['h'], s),
                      fmt_m(r['cv']['hColor'], s), r['cv_rt']['best'], r['time']['total'],
                      {k: round(v, 1) for k, v in r['time'].items()}), flush=True)
    print('total %.1fs' % (time.time() - T0))
    write_table(allres)


def write_table(allres):
    lines = ['| photo | σ | ceiling | noisy (RT) | OpenCV Colored best (h, hColor) | OpenCV on RT input (h, hColor) '
             '| luma h | D carried | A joint UV (hc) | B luma-guided (hc) | C wc=1 (hc) | C wc=2 (hc) '
             '| best I420 − OpenCV | oracle clean chroma |',
             '|' + '---|' * 14]
    for key, r in allres.items():
        s = r['sigma']
        best_v = max(VARIANTS, key=lambda v: r[v]['best'])
        cells = [r['photo'], str(s), '%.2f' % r['ceiling'], '%.2f' % r['noisy_rt'],
                 '%.2f (%s, %s)' % (r['cv']['best'], fmt_m(r['cv']['h'], s), fmt_m(r['cv']['hColor'], s)),
                 '%.2f (%s, %s)' % (r['cv_rt']['best'], fmt_m(r['cv_rt']['h'], s),
                                    fmt_m(r['cv_rt']['hColor'], s)),
                 fmt_m(r['luma']['h'], s), '%.2f' % r['D']]
        for v in VARIANTS:
            c = '%.2f (%s)' % (r[v]['best'], fmt_m(r[v]['hc'], s))
            if v == best_v:
                c = '**' + c + '**'
            cells.append(c)
        cells.append('%+.2f' % (r[best_v]['best'] - r['cv']['best']))
        cells.append('%.2f' % r['oracle_clean_chroma'])
        lines.append('| ' + ' | '.join(cells) + ' |')
    tab = '\n'.join(lines) + '\n'
    open(os.path.join(HERE, 'table.md'), 'w').write(tab)
    print(tab)


if __name__ == '__main__':
    if sys.argv[1:] == ['--table']:
        write_table(json.load(open(os.path.join(HERE, 'results.json'))))
    else:
        main()

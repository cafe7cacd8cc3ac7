#!/usr/bin/env python3
"""A camera's stream, simulated: the set automatic strength is measured on.

Every frame is made from a clean colour photo by the chain a camera runs
(every draw seeded):

1. the photo's values v become linear light x = g^-1(v / 255), g the
   transfer curve (gamma 2.2, or sRGB);
2. a Bayer sensor (RGGB) keeps one channel per pixel and counts photons:
   Poisson(x * peak) plus read noise Normal(0, read^2) electrons, divided by
   the peak (the photon count at white) and clipped to [0, 1];
3. OpenCV demosaics the mosaic (bilinear, or edge-aware), on 16 bits;
4. g again, to 8-bit RGB, then I420 (BT.601 full range, OpenCV's
   RGB2YCrCb, chroma averaged over 2x2);
5. a codec, or none: H.264 (libx264 at a constant quantizer, through
   ffmpeg) or JPEG (OpenCV, quality 75, 4:2:0).

The clean frame is the same chain with the photon and read noise left
out, and no codec. Demosaicing mixes neighbouring pixels' noise, so the
noise is spatially correlated; the transfer curve stretches the shadows'
noise; the codec smooths part of it.

A case is a photo, a peak and a variant; a variant changes one thing of the
base (bilinear, gamma 2.2, no codec, a static scene):

  base, ea (edge-aware demosaicing), h264-20, h264-28 (H.264 at qp 20 and
  28), jpeg, srgb, pan (the scene moves 1 pixel right a frame), poisson
  (no Bayer filter: each channel counted at every pixel, so the noise is
  not correlated, as docs/noise-estimation.md's Poisson-gamma cases).

Each case has three frames, each with fresh noise. Photos, scaled so that
their shorter side is 288 pixels (INTER_AREA), 256x256 crops:
  calibration: astronaut, chelsea, coffee, rocket (scikit-image);
  held out: ascent, face (SciPy), grace_hopper (Matplotlib),
  motorcycle_right (scikit-image); no earlier measurement of the project
  used them.

Modes:

  --prepare DIR   writes DIR/photos/*.png (the clean crops, needs
                  scikit-image, SciPy and Matplotlib's sample data) and
                  DIR/h264/*.npz (the H.264 cases' decoded frames, needs
                  ffmpeg with libx264), and DIR/manifest.json (SHA-1 of the
                  frames made here, which --evaluate compares its own with).
  --evaluate OUT  per case: the true noise (standard deviation of delivered
                  - clean over the middle frame, luma, and U and V
                  together), the engine's estimates of it; luma PSNR against
                  the clean frames, mean over the three frames, of:
                  cudanlm's automatic strength (frames in order, as a
                  stream), the best single strength x noise-sigma setting
                  of a grid, OpenCV's fastNlMeansDenoising at its best h
                  (patch 7, search 21, as cudanlm); for static scenes, the
                  middle frame through temporal-radius 1 (automatic) and
                  through fastNlMeansDenoisingMulti (3 frames) at its best
                  h. JSON, and a markdown report with --markdown.
  --frames DIR    writes one case's frames as PGM (for the tests).

    python3 studies/camera_set.py --prepare .carry/camera
    python3 studies/camera_set.py --evaluate camera.json --set .carry/camera --jobs 12

Engines through build/studies/libnlmtune.so (NlmGpu, or NlmCpu with --cpu).
"""
import argparse
import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])
import cv2  # noqa: E402
import numpy as np  # noqa: E402

from camera_noise import from_linear, to_linear  # noqa: E402
from nlm_auto_strength import Engine, psnr, rgb_to_i420  # noqa: E402

CALIBRATION = ["astronaut", "chelsea", "coffee", "rocket"]
HELD_OUT = ["ascent", "face", "grace_hopper", "motorcycle_right"]
PEAKS = [10, 20, 50, 100, 200, 500]
VARIANTS = ["base", "ea", "h264-20", "h264-28", "jpeg", "srgb", "pan", "poisson"]
READ_NOISE = 3.0
CROP = 256
SHORT_SIDE = 288
FRAMES = 3
JPEG_QUALITY = 75
STRENGTHS = [2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50]
NOISE_SIGMAS = [0, 3, 5, 8, 12, 16, 20, 25, 30, 40]
OPENCV_H = [3, 5, 7, 9, 11, 13, 15, 18, 21, 25, 30, 35, 40, 50, 60]


# ------------------------------------------------------------------ the chain

def mosaic(lin):
    """RGGB: the channel each photosite of an RGB image (H x W x 3) sees."""
    m = np.empty(lin.shape[:2])
    m[0::2, 0::2] = lin[0::2, 0::2, 0]
    m[0::2, 1::2] = lin[0::2, 1::2, 1]
    m[1::2, 0::2] = lin[1::2, 0::2, 1]
    m[1::2, 1::2] = lin[1::2, 1::2, 2]
    return m


def demosaic(raw, edge_aware):
    """RGB from an RGGB mosaic in [0, 1], on 16 bits. OpenCV names a Bayer
    pattern by its second row's first two sites: RGGB is its BayerBG."""
    r16 = np.clip(np.rint(raw * 65535), 0, 65535).astype(np.uint16)
    code = cv2.COLOR_BayerBG2RGB_EA if edge_aware else cv2.COLOR_BayerBG2RGB
    return cv2.demosaicing(r16, code).astype(np.float64) / 65535


def camera_rgb(clean_rgb, peak, variant, rng):
    """The camera's 8-bit RGB frame of a clean photo; peak None: no noise."""
    curve = "srgb" if variant == "srgb" else "gamma22"
    lin = to_linear(clean_rgb, curve)

    def count(x):
        if peak is None:
            return x
        return np.clip((rng.poisson(x * peak) + rng.normal(0, READ_NOISE, x.shape)) / peak, 0, 1)

    if variant == "poisson":
        rgb = count(lin)
    else:
        rgb = demosaic(count(mosaic(lin)), variant == "ea")
    return np.clip(np.rint(from_linear(rgb, curve)), 0, 255).astype(np.uint8)


def jpeg(rgb):
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR),
                           [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    return cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def h264(frames, qp):
    """I420 frames through libx264 at a constant quantizer and back."""
    h, w = frames[0][0].shape
    with tempfile.TemporaryDirectory() as d:
        raw, enc, dec = (os.path.join(d, n) for n in ("in.yuv", "out.264", "out.yuv"))
        with open(raw, "wb") as f:
            for plane in (p for fr in frames for p in fr):
                f.write(plane.tobytes())
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "yuv420p",
                        "-s", f"{w}x{h}", "-i", raw, "-c:v", "libx264", "-preset", "medium",
                        "-qp", str(qp), "-threads", "1", enc], check=True)
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", enc, "-f", "rawvideo",
                        "-pix_fmt", "yuv420p", dec], check=True)
        data = np.fromfile(dec, np.uint8)
    n, c = w * h, (w // 2) * (h // 2)
    out = []
    for i in range(len(frames)):
        b = data[i * (n + 2 * c):(i + 1) * (n + 2 * c)]
        out.append([b[:n].reshape(h, w), b[n:n + c].reshape(h // 2, w // 2),
                    b[n + c:].reshape(h // 2, w // 2)])
    return out


def crops(photo, variant):
    """The clean crop of each frame: static, or panning 1 pixel a frame."""
    h, w = photo.shape[:2]
    y0, x0 = (h - CROP) // 2, (w - CROP) // 2 - (FRAMES // 2 if variant == "pan" else 0)
    return [np.ascontiguousarray(photo[y0:y0 + CROP, x0 + (k if variant == "pan" else 0):
                                       x0 + (k if variant == "pan" else 0) + CROP])
            for k in range(FRAMES)]


def rng_of(name, peak, variant):
    return np.random.default_rng([2026, zlib.crc32(name.encode()), peak, zlib.crc32(variant.encode())])


def make_case(photo, name, peak, variant, h264_dir=None):
    """(delivered I420 frames, clean I420 frames) of a case."""
    rng = rng_of(name, peak, variant)
    scenes = crops(photo, variant)
    clean = [rgb_to_i420(camera_rgb(s, None, variant, rng)) for s in scenes]
    stored = os.path.join(h264_dir or "", f"{name}-{peak}-{variant}.npz")
    if variant.startswith("h264") and h264_dir and os.path.exists(stored):
        z = np.load(stored)
        return [[z[f"f{k}p{p}"] for p in range(3)] for k in range(FRAMES)], clean
    rgbs = [camera_rgb(s, peak, variant, rng) for s in scenes]
    if variant == "jpeg":
        rgbs = [jpeg(r) for r in rgbs]
    frames = [rgb_to_i420(r) for r in rgbs]
    if variant.startswith("h264"):
        frames = h264(frames, int(variant.split("-")[1]))
    return frames, clean


def digest(frames):
    h = hashlib.sha1()
    for p in (p for fr in frames for p in fr):
        h.update(np.ascontiguousarray(p).tobytes())
    return h.hexdigest()


# ------------------------------------------------------------------ prepare

def source_photo(name):
    ensure(["skimage"])
    import skimage.data as data  # noqa: E402
    if name in ("ascent", "face"):
        import warnings
        warnings.simplefilter("ignore")
        import scipy.misc  # noqa: E402 (bundled images up to SciPy 1.11)
        img = scipy.misc.ascent() if name == "ascent" else scipy.misc.face()
        img = np.clip(img, 0, 255).astype(np.uint8)
    elif name == "grace_hopper":
        import matplotlib  # noqa: E402
        path = os.path.join(matplotlib.get_data_path(), "sample_data", "grace_hopper.jpg")
        img = cv2.cvtColor(cv2.imread(path), cv2.COLOR_BGR2RGB)
    elif name == "motorcycle_right":
        import skimage  # noqa: E402
        img = cv2.cvtColor(cv2.imread(os.path.join(skimage.data_dir, name + ".png")), cv2.COLOR_BGR2RGB)
    else:
        img = getattr(data, name)()
    if img.ndim == 2:
        img = np.dstack([img] * 3)
    return img[:, :, :3]


def prepare(out):
    os.makedirs(os.path.join(out, "photos"), exist_ok=True)
    os.makedirs(os.path.join(out, "h264"), exist_ok=True)
    manifest = {}
    for name in CALIBRATION + HELD_OUT:
        img = source_photo(name)
        s = SHORT_SIDE / min(img.shape[:2])
        img = cv2.resize(img, (round(img.shape[1] * s), round(img.shape[0] * s)),
                         interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_CUBIC)
        cv2.imwrite(os.path.join(out, "photos", name + ".png"), cv2.cvtColor(img, cv2.COLOR_RGB2BGR))
        photo = load_photo(out, name)
        for peak in PEAKS:
            for variant in VARIANTS:
                frames, _ = make_case(photo, name, peak, variant)
                manifest[f"{name}-{peak}-{variant}"] = digest(frames)
                if variant.startswith("h264") and name in HELD_OUT:
                    np.savez_compressed(os.path.join(out, "h264", f"{name}-{peak}-{variant}.npz"),
                                        **{f"f{k}p{p}": frames[k][p] for k in range(FRAMES)
                                           for p in range(3)})
        print(f"{name}: {img.shape[1]}x{img.shape[0]}", flush=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=0, sort_keys=True)


def load_photo(set_dir, name):
    img = cv2.imread(os.path.join(set_dir, "photos", name + ".png"))
    if img is None:
        sys.exit(f"no photo {name} in {set_dir}/photos (run --prepare)")
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


# ------------------------------------------------------------------ evaluate

_engine = None


def _init(lib, gpu):
    global _engine
    _engine = Engine(lib, gpu)


def truth(frames, clean, planes):
    d = np.concatenate([(frames[FRAMES // 2][p].astype(np.float64) - clean[FRAMES // 2][p]).ravel()
                        for p in planes])
    return float(np.sqrt(np.mean((d - d.mean()) ** 2)))


def within(estimate, true, share=0.2):
    return abs(estimate / true - 1) <= share


def measure_cases(cases, init, initargs, jobs, set_dir, variants, json_out=None):
    """Runs `cases` (a function of (set_dir, photo, peak, variant)) over
    every photo, peak and variant in a pool whose workers run
    init(*initargs); the rows, also written to json_out if given."""
    tasks = [(set_dir, n, p, v) for n in CALIBRATION + HELD_OUT for p in PEAKS for v in variants]
    with multiprocessing.Pool(jobs, init, initargs) as pool:
        rows = pool.map(cases, tasks, chunksize=1)
    if json_out:
        with open(json_out, "w") as f:
            json.dump(rows, f, indent=0)
    return rows


def study_arguments(description):
    """The arguments the estimator studies share (patch_noise.py,
    temporal_noise.py): the set, the engine library, the JSON to write or
    to report from, the workers."""
    ap = argparse.ArgumentParser(description=description,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", default=".carry/camera")
    ap.add_argument("--lib", default="build/studies/libnlmtune.so")
    ap.add_argument("--json")
    ap.add_argument("--from-json", help="report an earlier run's JSON instead of measuring")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    return ap


def fit_statistic(calibration):
    """Of the raw statistics of each calibration row (row["raw"][key], an
    estimate up to a factor), the one that puts the most rows within 20% of
    row["true"] once scaled by its factor, the median of true / raw (over
    the rows where raw > 0: a codec's repeated blocks can leave nothing to
    measure): (key, rows within 20%, factor)."""
    best = None
    for key in calibration[0]["raw"]:
        factor = float(np.median([r["true"] / r["raw"][key] for r in calibration
                                  if r["raw"][key] > 0]))
        n = sum(within(factor * r["raw"][key], r["true"]) for r in calibration)
        if best is None or n > best[1]:
            best = (key, n, factor)
    return best


def luma_psnr(outs, clean):
    return float(np.mean([psnr([o[0]], [c[0]]) for o, c in zip(outs, clean)]))


def evaluate_case(task):
    set_dir, name, peak, variant, manifest, auto_only = task
    e = _engine
    t0 = time.time()
    frames, clean = make_case(load_photo(set_dir, name), name, peak, variant,
                              os.path.join(set_dir, "h264"))
    key = f"{name}-{peak}-{variant}"
    mid = frames[FRAMES // 2]
    r = {"photo": name, "peak": peak, "variant": variant, "calibration": name in CALIBRATION,
         "same_frames": manifest.get(key) == digest(frames) if manifest else None,
         "true_luma": truth(frames, clean, [0]), "true_chroma": truth(frames, clean, [1, 2]),
         "estimate_luma": e.estimate_frame(*mid)[0], "estimate_chroma": e.estimate(mid[1], mid[2]),
         "noisy": luma_psnr(frames, clean)}
    # Automatic strength as the element runs it: the frames in order, a new
    # history at the first.
    e.reset()
    r["auto"] = luma_psnr([e.denoise([f], automatic=True, chroma_h=-1) for f in frames], clean)
    if auto_only:
        if variant != "pan":
            e.reset()
            r["temporal_auto"] = psnr(e.denoise(frames, radius=1, automatic=True, chroma_h=-1)[:1],
                                      [clean[FRAMES // 2][0]])
        r["seconds"] = time.time() - t0
        return r
    best = (-1.0, None)
    for h in STRENGTHS:
        for ns in NOISE_SIGMAS:
            p = luma_psnr([e.denoise([[f[0]]], h=h, noise_sigma=ns) for f in frames], clean)
            if p > best[0]:
                best = (p, {"h": h, "noise_sigma": ns})
    r["best"], r["best_setting"] = best
    r["opencv"], r["opencv_h"] = max(
        (luma_psnr([[cv2.fastNlMeansDenoising(f[0], None, h, 7, 21)] for f in frames], clean), h)
        for h in OPENCV_H)
    if variant != "pan":
        ys = [f[0] for f in frames]
        e.reset()
        r["temporal_auto"] = psnr(e.denoise(frames, radius=1, automatic=True, chroma_h=-1)[:1],
                                  [clean[FRAMES // 2][0]])
        r["opencv_multi"], r["opencv_multi_h"] = max(
            (psnr([cv2.fastNlMeansDenoisingMulti(ys, FRAMES // 2, FRAMES, None, h, 7, 21)],
                  [clean[FRAMES // 2][0]]), h) for h in OPENCV_H)
    r["seconds"] = time.time() - t0
    return r


def evaluate(args):
    t0 = time.time()
    manifest = {}
    path = os.path.join(args.set, "manifest.json")
    if os.path.exists(path):
        with open(path) as f:
            manifest = json.load(f)
    names = HELD_OUT if args.held_out else CALIBRATION + HELD_OUT
    tasks = [(args.set, n, p, v, manifest, args.auto_only) for n in names for p in args.peaks
             for v in args.variants]
    with multiprocessing.Pool(args.jobs, initializer=_init, initargs=(args.lib, not args.cpu)) as pool:
        rows = []
        for r in pool.imap(evaluate_case, tasks, chunksize=1):
            rows.append(r)
            print(f"{r['photo']:17} {r['peak']:4} {r['variant']:8} true {r['true_luma']:6.2f} "
                  f"est {r['estimate_luma']:6.2f} | auto {r['auto']:6.2f}"
                  + (f" best {r['best']:6.2f} opencv {r['opencv']:6.2f}" if "best" in r else "")
                  + (f" | temporal {r['temporal_auto']:6.2f}" if "temporal_auto" in r else "")
                  + (f" multi {r['opencv_multi']:6.2f}" if "opencv_multi" in r else "")
                  + f" [{r['seconds']:.1f} s]", flush=True)
    with open(args.evaluate, "w") as f:
        json.dump({"rows": rows, "backend": "cpu" if args.cpu else "gpu",
                   "seconds": time.time() - t0}, f, indent=0)
    print(f"{len(rows)} cases in {time.time() - t0:.0f} s; frames as in the manifest: "
          f"{sum(bool(r['same_frames']) for r in rows)} of {len(rows)}")
    if not args.auto_only:
        report(rows)


def report(rows, out=None):
    lines = []
    w = lines.append
    held = [r for r in rows if not r["calibration"]]

    def within(r):
        return abs(r["estimate_luma"] / r["true_luma"] - 1) <= 0.2

    w("| variant | peak | cases | estimate / true noise, luma (range) | chroma (range) | "
      "estimate within 20% | default - best single (dB, worst) | default - OpenCV best (dB, worst) | "
      "temporal default - OpenCV Multi best (dB, worst) |")
    w("| --- | ---: | ---: | --- | --- | ---: | --- | --- | --- |")
    for v in sorted({r["variant"] for r in held}, key=VARIANTS.index):
        for p in sorted({r["peak"] for r in held}):
            sel = [r for r in held if r["variant"] == v and r["peak"] == p]
            if not sel:
                continue
            el = [r["estimate_luma"] / r["true_luma"] for r in sel]
            ec = [r["estimate_chroma"] / r["true_chroma"] for r in sel]
            d_best = [r["auto"] - r["best"] for r in sel]
            d_cv = [r["auto"] - r["opencv"] for r in sel]
            d_t = [r["temporal_auto"] - r["opencv_multi"] for r in sel if "temporal_auto" in r]
            w(f"| {v} | {p} | {len(sel)} | {np.mean(el):.2f} ({min(el):.2f}-{max(el):.2f}) | "
              f"{np.mean(ec):.2f} ({min(ec):.2f}-{max(ec):.2f}) | {sum(map(within, sel))} | "
              f"{np.mean(d_best):+.2f} ({min(d_best):+.2f}) | {np.mean(d_cv):+.2f} ({min(d_cv):+.2f}) | "
              + (f"{np.mean(d_t):+.2f} ({min(d_t):+.2f})" if d_t else "") + " |")
    n = len(held)
    w("")
    w(f"Held-out cases: {n}. Estimate within 20% of the true luma noise: {sum(map(within, held))}; "
      f"default within 0.3 dB of the best single setting: {sum(r['auto'] - r['best'] >= -0.3 for r in held)}; "
      f"default at or above OpenCV's best: {sum(r['auto'] >= r['opencv'] for r in held)}; "
      f"temporal default above OpenCV Multi's best: "
      f"{sum(r['temporal_auto'] > r['opencv_multi'] for r in held if 'temporal_auto' in r)} of "
      f"{sum('temporal_auto' in r for r in held)}.")
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)


# ------------------------------------------------------------------ frames

def write_frames(args):
    """One case's middle frame and its clean frame as PGM: Y (size x size)
    above U and V side by side (size / 2 square each), as one image."""
    photo = load_photo(args.set, args.photo)
    frames, clean = make_case(photo, args.photo, args.peaks[0], args.variants[0])
    os.makedirs(args.frames, exist_ok=True)
    tag = f"{args.photo}-{args.peaks[0]}-{args.variants[0]}"
    s, c = args.size, args.size // 2
    for what, fr in (("delivered", frames), ("clean", clean)):
        y, u, v = fr[FRAMES // 2]
        cv2.imwrite(os.path.join(args.frames, f"camera-{tag}-{what}.pgm"),
                    np.vstack([y[:s, :s], np.hstack([u[:c, :c], v[:c, :c]])]))
    d = frames[FRAMES // 2][0][:s, :s].astype(np.float64) - clean[FRAMES // 2][0][:s, :s]
    print(f"{tag}: true luma noise of the crop {d.std():.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepare")
    ap.add_argument("--evaluate")
    ap.add_argument("--markdown", help="with --evaluate FILE: the report of that file, to this file")
    ap.add_argument("--frames")
    ap.add_argument("--set", default=".carry/camera")
    ap.add_argument("--lib", default="build/studies/libnlmtune.so")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--held-out", action="store_true", help="only the held-out photos")
    ap.add_argument("--auto-only", action="store_true",
                    help="only the estimates and automatic strength (another build's, say)")
    ap.add_argument("--peaks", type=int, nargs="+", default=PEAKS)
    ap.add_argument("--variants", nargs="+", default=VARIANTS)
    ap.add_argument("--photo", default="grace_hopper")
    ap.add_argument("--size", type=int, default=128)
    args = ap.parse_args()
    if args.prepare:
        prepare(args.prepare)
    elif args.evaluate and args.markdown:
        with open(args.evaluate) as f:
            report(json.load(f)["rows"], args.markdown)
    elif args.evaluate:
        evaluate(args)
    elif args.frames:
        write_frames(args)
    else:
        ap.error("one of --prepare, --evaluate, --frames")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""End-to-end check of cudahisteq, cudaclahe and cudasharpen against OpenCV.

Writes frames of many sizes and contents as raw GRAY8 (GStreamer's default
layout: rows padded to 4 bytes), runs them through
    filesrc ! rawvideoparse ! cudahisteq backend=BACKEND ! filesink
through cudaclahe with several clip limits and tile grids and through
cudasharpen with several settings (one tee branch each) with
gst-launch-1.0, and compares every pixel with cv2.equalizeHist,
cv2.createCLAHE(clip, grid).apply() and OpenCV's sharpening
(opencv_sharpen below). Also times cv2.equalizeHist and CLAHE on this host
for comparison.

The RGB paths the same way: BGR, RGBA and BGRx frames (odd widths among
them, alpha and padding bytes random) through the same elements, against
OpenCV itself: cv2.cvtColor to YCrCb (COLOR_BGR2YCrCb, or COLOR_RGB2YCrCb
for RGBA), the same operation on channel 0, cv2.cvtColor(COLOR_YCrCb2BGR or
COLOR_YCrCb2RGB) back, the fourth byte as it went in.

    scripts/check-against-opencv.py [--backend cuda|cpu] [--timing] [--quick]
                                    [--colour-only]
Needs python3 with numpy and cv2, gst-launch-1.0 and the plugin on
GST_PLUGIN_PATH. Exits non-zero on any mismatch.
"""
import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "numpy"])

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from gstraw import filter_frames  # noqa: E402

SIZES = [(1, 1), (2, 1), (1, 7), (3, 3), (17, 5), (33, 1), (385, 289), (641, 479),
         (1280, 720), (1921, 1081), (3840, 2160), (7680, 4320)]


def frames_for(rng, w, h):
    yield "uniform", rng.integers(0, 256, (h, w), dtype=np.uint8)
    yield "low-contrast", rng.integers(100, 141, (h, w), dtype=np.uint8)
    yield "one-value", np.full((h, w), 201, np.uint8)
    yield "two-value", rng.choice(np.array([17, 18], np.uint8), (h, w), p=[0.3, 0.7])
    yy, xx = np.mgrid[0:h, 0:w]
    smooth = 90 + 40 * xx / max(w, 1) + 20 * yy / max(h, 1) + rng.normal(0, 4, (h, w))
    yield "natural", np.clip(smooth, 0, 255).astype(np.uint8)


# (clip limit, tiles x, tiles y): OpenCV's default grid, no clipping, a
# clip high enough to never bite, grids that divide few frames, one tile
# (plateau equalization) and the largest grid.
CLAHE_PARAMS = [(2.0, 8, 8), (0.0, 8, 8), (40.0, 8, 8), (4.0, 3, 5), (1.0, 1, 1),
                (2.0, 64, 64), (0.5, 7, 2)]


# (kernel, amount, radius, threshold): the defaults, light and strong
# unsharp masks, a threshold, amounts whose products are not exact in float
# (ties broken by the rounding), the widest and narrowest blurs, and the
# 3x3 kernel.
SHARPEN_PARAMS = [("unsharp", 1.0, 1.0, 0), ("unsharp", 0.5, 3.0, 0), ("unsharp", 1.5, 0.5, 5),
                  ("unsharp", 0.7, 2.2, 2), ("unsharp", 20.0, 16.0, 0), ("unsharp", 0.3, 0.1, 0),
                  ("unsharp", 2.0, 0.25, 0), ("unsharp", 1.3, 5.5, 10), ("laplacian-3x3", 1, 1, 0)]
LAPLACIAN_3X3 = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)


def opencv_sharpen(img, kernel, amount, radius, threshold):
    """cudasharpen's definition (docs/cudasharpen.md) in OpenCV calls."""
    if kernel == "laplacian-3x3":
        return cv2.filter2D(img, -1, LAPLACIAN_3X3, borderType=cv2.BORDER_REFLECT_101)
    blur = cv2.GaussianBlur(img, (0, 0), radius, borderType=cv2.BORDER_REFLECT_101)
    sharp = cv2.addWeighted(img, 1 + amount, blur, -amount, 0)
    keep = cv2.absdiff(img, blur) < threshold
    sharp[keep] = img[keep]
    return sharp


def sharpen_element(backend, kernel, amount, radius, threshold):
    return (f"cudasharpen backend={backend} kernel={kernel} amount={amount} radius={radius} "
            f"threshold={threshold}")


def check_sharpen(backend, sizes):
    """Every size with SHARPEN_PARAMS, then every radius from 0.1 to 16 in
    steps of 0.1 (each its own Gaussian taps) on one frame."""
    rng = np.random.default_rng(7)
    failures = checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for w, h in sizes:
            named = list(frames_for(rng, w, h))
            frames = [img for _, img in named]
            outs = filter_frames(frames, [sharpen_element(backend, *p) for p in SHARPEN_PARAMS], tmp)
            for params, branch in zip(SHARPEN_PARAMS, outs):
                for (name, img), got in zip(named, branch):
                    checked += 1
                    failures += not compare(f"sharpen{params} {w}x{h} {name}", got,
                                            opencv_sharpen(img, *params))
        img = dict(frames_for(rng, 203, 151))["natural"]
        radii = [round(0.1 * i, 1) for i in range(1, 161)]
        for start in range(0, len(radii), 40):
            batch = [("unsharp", 1.7, r, 0) for r in radii[start:start + 40]]
            outs = filter_frames([img], [sharpen_element(backend, *p) for p in batch], tmp)
            for params, branch in zip(batch, outs):
                checked += 1
                failures += not compare(f"sharpen{params} 203x151", branch[0],
                                        opencv_sharpen(img, *params))
    print(f"cudasharpen backend={backend} vs OpenCV {cv2.__version__} (GaussianBlur, addWeighted, "
          f"filter2D): {checked - failures}/{checked} frames identical")
    return failures == 0


def compare(label, got, want):
    if np.array_equal(got, want):
        return True
    bad = np.argwhere(got != want)
    y, x = bad[0][:2]
    print(f"MISMATCH {label}: {len(bad)} samples differ, first at ({x},{y}) "
          f"got {got[y, x]} want {want[y, x]}")
    return False


def check(backend, sizes):
    rng = np.random.default_rng(2026)
    eq_failures = eq_checked = cl_failures = cl_checked = 0
    clahe_elements = [f"cudaclahe backend={backend} clip-limit={c} tiles-x={tx} tiles-y={ty}"
                      for c, tx, ty in CLAHE_PARAMS]
    with tempfile.TemporaryDirectory() as tmp:
        for w, h in sizes:
            named = list(frames_for(rng, w, h))
            frames = [img for _, img in named]
            outs = filter_frames(frames, [f"cudahisteq backend={backend}"] + clahe_elements, tmp)
            for (name, img), got in zip(named, outs[0]):
                eq_checked += 1
                eq_failures += not compare(f"equalizeHist {w}x{h} {name}", got,
                                           cv2.equalizeHist(img))
            for (clip, tx, ty), branch in zip(CLAHE_PARAMS, outs[1:]):
                clahe = cv2.createCLAHE(clipLimit=clip, tileGridSize=(tx, ty))
                for (name, img), got in zip(named, branch):
                    cl_checked += 1
                    cl_failures += not compare(f"CLAHE({clip}, {tx}x{ty}) {w}x{h} {name}", got,
                                               clahe.apply(img))
    print(f"cudahisteq backend={backend} vs cv2.equalizeHist {cv2.__version__}: "
          f"{eq_checked - eq_failures}/{eq_checked} frames identical")
    print(f"cudaclahe backend={backend} vs cv2.createCLAHE {cv2.__version__}: "
          f"{cl_checked - cl_failures}/{cl_checked} frames identical "
          f"({len(CLAHE_PARAMS)} clip/grid settings)")
    return eq_failures == 0 and cl_failures == 0


# The RGB paths: sizes with odd widths (3-byte rows padded to 4 bytes), a
# width of 1, and common video sizes; 4K without --quick.
COLOUR_SIZES = [(1, 1), (1, 7), (3, 3), (17, 5), (33, 17), (385, 289), (641, 479),
                (1281, 721), (1920, 1080), (3840, 2160)]

# Each format: its rawvideoparse name, the pixel's size in bytes, and
# OpenCV's conversions for its channel order.
COLOUR_FORMATS = {
    "BGR": ("bgr", 3, cv2.COLOR_BGR2YCrCb, cv2.COLOR_YCrCb2BGR),
    "RGBA": ("rgba", 4, cv2.COLOR_RGB2YCrCb, cv2.COLOR_YCrCb2RGB),
    "BGRx": ("bgrx", 4, cv2.COLOR_BGR2YCrCb, cv2.COLOR_YCrCb2BGR),
}


def colour_frames_for(rng, w, h, channels):
    """Random colours, a low-contrast band, a smooth scene with noise, grey
    and saturated primaries; any fourth byte random."""
    def with_extra(rgb):
        if channels == 3:
            return rgb.astype(np.uint8)
        extra = rng.integers(0, 256, (h, w, 1))
        return np.concatenate([rgb, extra], axis=2).astype(np.uint8)
    yield "uniform", with_extra(rng.integers(0, 256, (h, w, 3)))
    yield "low-contrast", with_extra(rng.integers(100, 141, (h, w, 3)))
    yy, xx = np.mgrid[0:h, 0:w]
    base = 90 + 40 * xx / max(w, 1) + 20 * yy / max(h, 1)
    scene = np.stack([base + 40, base, 250 - base], axis=2) + rng.normal(0, 6, (h, w, 3))
    yield "natural", with_extra(np.clip(scene, 0, 255))
    grey = rng.integers(60, 121, (h, w, 1))
    yield "grey", with_extra(np.repeat(grey, 3, axis=2))
    primaries = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0],
                          [0, 0, 0], [255, 255, 255]])
    yield "primaries", with_extra(primaries[rng.integers(0, len(primaries), (h, w))])


def filter_colour_frames(frames, fmt, elements, tmp):
    """frames (h, w, channels) in the byte order of `fmt` through each
    element description (one tee branch each)."""
    return filter_frames(frames, elements, tmp, fmt=COLOUR_FORMATS[fmt][0])


def opencv_on_luma(img, fmt, op):
    """OpenCV's YCrCb of `img` (channel order of `fmt`), `op` on channel 0,
    back to the same order; a fourth byte as it was."""
    _, _, to_ycc, from_ycc = COLOUR_FORMATS[fmt]
    ycc = cv2.cvtColor(np.ascontiguousarray(img[:, :, :3]), to_ycc)
    ycc[:, :, 0] = op(np.ascontiguousarray(ycc[:, :, 0]))
    out = img.copy()
    out[:, :, :3] = cv2.cvtColor(ycc, from_ycc)
    return out


def check_colour(backend, sizes):
    """cudahisteq, cudaclahe (CLAHE_PARAMS) and cudasharpen (SHARPEN_PARAMS)
    on BGR, RGBA and BGRx frames against OpenCV's YCrCb round trip."""
    rng = np.random.default_rng(38)
    elements = ([f"cudahisteq backend={backend}"] +
                [f"cudaclahe backend={backend} clip-limit={c} tiles-x={tx} tiles-y={ty}"
                 for c, tx, ty in CLAHE_PARAMS] +
                [sharpen_element(backend, *p) for p in SHARPEN_PARAMS])
    ops = ([("equalizeHist", cv2.equalizeHist)] +
           [(f"CLAHE({c}, {tx}x{ty})", cv2.createCLAHE(clipLimit=c, tileGridSize=(tx, ty)).apply)
            for c, tx, ty in CLAHE_PARAMS] +
           [(f"sharpen{p}", lambda img, p=p: opencv_sharpen(img, *p)) for p in SHARPEN_PARAMS])
    counts = {"cudahisteq": [0, 0], "cudaclahe": [0, 0], "cudasharpen": [0, 0]}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in COLOUR_FORMATS:
            channels = COLOUR_FORMATS[fmt][1]
            for w, h in sizes:
                named = list(colour_frames_for(rng, w, h, channels))
                outs = filter_colour_frames([img for _, img in named], fmt, elements, tmp)
                for el, (label, op), branch in zip(elements, ops, outs):
                    count = counts[el.split()[0]]
                    for (name, img), got in zip(named, branch):
                        count[0] += 1
                        count[1] += not compare(f"{label} {fmt} {w}x{h} {name}", got,
                                                opencv_on_luma(img, fmt, op))
    for el, (checked, failures) in counts.items():
        print(f"{el} backend={backend} on {', '.join(COLOUR_FORMATS)} vs OpenCV {cv2.__version__} "
              f"(cvtColor YCrCb round trip): {checked - failures}/{checked} frames identical")
    return all(failures == 0 for _, failures in counts.values())


def timing():
    rng = np.random.default_rng(1)
    print(f"OpenCV {cv2.__version__} on this host, {cv2.getNumThreads()} threads, {os.cpu_count()} CPUs")
    for name, (w, h) in [("720p", (1280, 720)), ("1080p", (1920, 1080)), ("4K", (3840, 2160))]:
        yy, xx = np.mgrid[0:h, 0:w]
        frames = [np.clip(60 + 60 * xx / w + 30 * yy / h + rng.normal(0, 6, (h, w)), 0, 255)
                  .astype(np.uint8) for _ in range(4)]
        clahe = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8))
        for label, fn in [("equalizeHist", cv2.equalizeHist), ("CLAHE(2, 8x8)", clahe.apply)]:
            for f in frames:
                fn(f)
            ts = []
            for i in range(200):
                t0 = time.perf_counter()
                fn(frames[i % 4])
                ts.append((time.perf_counter() - t0) * 1e6)
            ts.sort()
            print(f"  opencv {label:<14} {name:<6} median {ts[len(ts) // 2]:9.1f} us  "
                  f"(p10 {ts[len(ts) // 10]:9.1f}, p90 {ts[9 * len(ts) // 10]:9.1f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="cuda", choices=["cuda", "cpu", "auto"])
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--quick", action="store_true", help="leave out 4K and 8K frames")
    ap.add_argument("--colour-only", action="store_true",
                    help="only the RGB paths (BGR, RGBA, BGRx)")
    args = ap.parse_args()
    sizes = [s for s in SIZES if not args.quick or s[0] * s[1] < 3840 * 2160]
    colour_sizes = [s for s in COLOUR_SIZES if not args.quick or s[0] * s[1] < 3840 * 2160]
    ok = True
    try:
        if not args.colour_only:
            ok = check(args.backend, sizes)
            ok = check_sharpen(args.backend, sizes) and ok
        ok = check_colour(args.backend, colour_sizes) and ok
    except RuntimeError as error:
        # gst-launch's failure (no GPU with --backend cuda, no plugin): one line.
        sys.exit(f"check-against-opencv.py: {error}")
    if args.timing:
        timing()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

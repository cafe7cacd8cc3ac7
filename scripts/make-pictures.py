#!/usr/bin/env python3
"""Makes every picture in docs/img that README.md and docs/ show again.

Real photos from scikit-image (Debian: python3-skimage) go through the
plugin's elements with gst-launch-1.0, and the outputs of the elements that
are defined to equal OpenCV are compared with OpenCV on the way: the script
fails on any difference.

    scripts/make-pictures.py [--out docs/img] [--backend cpu|cuda|auto] [--only SET ...]

    GST_PLUGIN_PATH=build/plugin scripts/make-pictures.py         (everything)
    scripts/make-pictures.py --only histeq clahe                  (some sets)

GST_PLUGIN_PATH defaults to build/plugin when it is not set. The elements run
with backend=cpu unless --backend says otherwise; both backends give the
same pictures. Needs numpy, cv2, matplotlib and PIL (python3-skimage,
python3-opencv, python3-matplotlib: `scripts/install-deps.sh --pictures`)
and gst-launch-1.0. The sets and what they write:

  histeq    histeq.png: cudahisteq on moon, camera, hubble_deep_field and
            astronaut (the last two as gray), before and after, with
            histograms (== cv2.equalizeHist)
  clahe     clahe.png: the same for cudaclahe (== cv2.createCLAHE);
            clahe-moon.png, clahe-hubble_deep_field.png, clahe-camera.png:
            photo, cudahisteq and cudaclahe side by side; clahe-clip-limits.png
  colour    colour.png: astronaut in colour through I420, cudahisteq and
            cudaclahe: the luma is filtered (== OpenCV on it), the chroma
            must come out unchanged
  rgb       rgb.png: the astronaut PNG straight from pngdec (RGB, no
            converter) through cudahisteq and cudaclahe to pngenc; each
            output == OpenCV's YCrCb round trip with the filter on Y
  nlm       nlm.png: photos with Gaussian noise (sigma 20, fixed seed), noisy,
            cudanlm, OpenCV's fastNlMeansDenoising and clean, 128x128 crops
            zoomed 2x, PSNR in the titles
  sharpen   sharpen.png: a slightly blurred photo, cudasharpen (unsharp) and
            cudasharpen kernel=laplacian-3x3, and the photo, zoomed crops.
            Skipped with a note while `gst-inspect-1.0 cudasharpen` fails.
  temporal  temporal-smoothing.png (studies/temporal_smoothing.py --plot)
  bench     bench-*.png from the committed results (bench/report.py; the
            tables in docs/benchmarks.md come from the same command)
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interpreter import ensure  # noqa: E402

ensure(["cv2", "matplotlib", "numpy", "skimage", "PIL"])

import cv2  # noqa: E402
import matplotlib  # noqa: E402
import numpy as np  # noqa: E402
import skimage  # noqa: E402
from PIL import Image  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)
from gstraw import filter_frames, psnr  # noqa: E402

SETS = ["histeq", "clahe", "colour", "rgb", "nlm", "sharpen", "temporal", "bench"]

# In skimage.data_dir. The colour ones are loaded as gray (GRAY8) for the
# before/after grids; COLOUR goes through as I420 for colour.png.
PHOTOS = ["moon.png", "camera.png", "hubble_deep_field.jpg", "astronaut.png"]
COLOUR = "astronaut.png"
# Photos wider than this are scaled down first (the element then filters
# the picture as shown).
MAX_WIDTH = 640
CLAHE = "cudaclahe clip-limit=2 tiles-x=8 tiles-y=8"
COMPARED = ["moon.png", "hubble_deep_field.jpg", "camera.png"]
CLIP_LIMITS = [1.0, 2.0, 4.0, 0.0]

NOISE_SIGMA, NOISE_SEED = 20, 20
NLM = f"cudanlm auto-strength=false strength=12 noise-sigma={NOISE_SIGMA}"
NLM_TEXT = f"cudanlm auto-strength=false strength=12\nnoise-sigma={NOISE_SIGMA}"
OPENCV_H = 19.5  # about OpenCV's best h for this noise (studies/nlm_quality.py)
# Crops: (photo, top, left) of 128x128 pixels, shown zoomed 2x.
NLM_CROPS = [("camera.png", 64, 160), ("astronaut.png", 36, 160)]
CROP, ZOOM = 128, 2

BLUR_SIGMA = 1.2  # the "slightly blurred" input of cudasharpen
UNSHARP = dict(amount=2.0, radius=1.5)
SHARPEN_CROPS = [("camera.png", 64, 160), ("astronaut.png", 316, 104)]
LAPLACIAN_3X3 = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)

BENCH_RESULTS = "studies/gpu-host"
BENCH_CPU_RESULTS = ["studies/gpu-host-cpu", "studies/cpu-only"]

DPI = 100
THUMB = 224  # width of the photos in the before/after grids
HIST_H = 56
BAR_GREY, CDF_GREY = "0.6", "0.1"
KB_LIMIT = 400


# ---------------------------------------------------------------- inputs ---

def photo_path(name):
    return os.path.join(skimage.data_dir, name)


def load(name, mode="gray"):
    """The photo as GRAY8 or RGB, at most MAX_WIDTH wide."""
    img = cv2.imread(photo_path(name), cv2.IMREAD_GRAYSCALE if mode == "gray" else cv2.IMREAD_COLOR)
    if img is None:
        sys.exit(f"cannot read {name} from {skimage.data_dir}")
    if mode != "gray":
        img = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
    if img.shape[1] > MAX_WIDTH:
        h = round(img.shape[0] * MAX_WIDTH / img.shape[1])
        img = cv2.resize(img, (MAX_WIDTH, h), interpolation=cv2.INTER_AREA)
    return img


def add_noise(clean, sigma, seed):
    """Gaussian noise, rounded and clipped to 8 bits (as studies/nlm_quality.py)."""
    rng = np.random.default_rng(seed)
    return np.clip(np.rint(clean + rng.normal(0, sigma, clean.shape)), 0, 255).astype(np.uint8)


# ------------------------------------------------------------ the plugin ---

def has_element(name):
    return subprocess.run(["gst-inspect-1.0", name], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def run_gray(img, elements, backend, tmp):
    """img (GRAY8) through each element description; one output per element."""
    outs = filter_frames([img], [f"{e} backend={backend}" for e in elements], tmp)
    return [o[0] for o in outs]


def ru4(v):
    return (v + 3) & ~3


def i420_layout(w, h):
    """GStreamer's default I420 layout: [(offset, stride, width, height)] of Y, U, V."""
    cw, ch = (w + 1) // 2, (h + 1) // 2
    ys, cs = ru4(w), ru4(cw)
    u = ys * ((h + 1) & ~1)
    v = u + cs * ch
    return [(0, ys, w, h), (u, cs, cw, ch), (v, cs, cw, ch)], v + cs * ch


def read_i420(path, w, h):
    data = np.fromfile(path, np.uint8)
    planes, size = i420_layout(w, h)
    if data.size != size:
        raise RuntimeError(f"{path}: {data.size} bytes, expected {size}")
    return [data[o:o + s * ph].reshape(ph, s)[:, :pw] for o, s, pw, ph in planes]


def read_rgb(path, w, h):
    data = np.fromfile(path, np.uint8)
    s = ru4(3 * w)
    if data.size != s * h:
        raise RuntimeError(f"{path}: {data.size} bytes, expected {s * h}")
    return data.reshape(h, s)[:, :3 * w].reshape(h, w, 3)


def run_i420(rgb, elements, backend, tmp):
    """An RGB photo converted to I420 by videoconvert, then through each
    element. Returns (the I420 input's planes, the RGB the input converts
    back to, [(the output's planes, the output as RGB) per element])."""
    h, w, _ = rgb.shape
    src = os.path.join(tmp, "in.rgb")
    padded = np.zeros((h, ru4(3 * w)), np.uint8)
    padded[:, :3 * w] = rgb.reshape(h, 3 * w)
    padded.tofile(src)
    to_rgb = ["videoconvert", "!", "video/x-raw,format=RGB"]
    cmd = ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "rawvideoparse", "format=rgb",
           f"width={w}", f"height={h}", "framerate=1/1", "!", "videoconvert", "!",
           "video/x-raw,format=I420", "!", "tee", "name=t",
           "t.", "!", "queue", "!", "filesink", f"location={tmp}/in.i420",
           "t.", "!", "queue", "!"] + to_rgb + ["!", "filesink", f"location={tmp}/in-back.rgb"]
    for i, el in enumerate(elements):
        cmd += ["t.", "!", "queue", "!"] + f"{el} backend={backend}".split() + ["!", "tee", f"name=o{i}",
                f"o{i}.", "!", "queue", "!", "filesink", f"location={tmp}/out{i}.i420",
                f"o{i}.", "!", "queue", "!"] + to_rgb + ["!", "filesink", f"location={tmp}/out{i}.rgb"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"gst-launch failed: {res.stdout}{res.stderr}")
    outs = [(read_i420(f"{tmp}/out{i}.i420", w, h), read_rgb(f"{tmp}/out{i}.rgb", w, h))
            for i in range(len(elements))]
    return read_i420(f"{tmp}/in.i420", w, h), read_rgb(f"{tmp}/in-back.rgb", w, h), outs


def same_as(got, want, what):
    if not np.array_equal(got, want):
        sys.exit(f"{what}: {np.count_nonzero(got != want)} pixels differ from OpenCV")


# --------------------------------------------------------------- drawing ---

class Sheet:
    """A matplotlib figure laid out in pixels, so that pictures are shown
    pixel for pixel (zoomed by whole factors beforehand where they are)."""

    def __init__(self, width, height):
        self.w, self.h = width, height
        self.fig = plt.figure(figsize=(width / DPI, height / DPI), dpi=DPI)

    def axes(self, x, y, w, h):
        return self.fig.add_axes([x / self.w, 1 - (y + h) / self.h, w / self.w, h / self.h])

    def image(self, x, y, img, title=None):
        h, w = img.shape[:2]
        ax = self.axes(x, y, w, h)
        ax.imshow(img, cmap="gray", vmin=0, vmax=255, interpolation="nearest")
        ax.set_axis_off()
        if title:
            self.text(x + w / 2, y - 4, title, ha="center", va="bottom", fontsize=9.5)
        return ax

    def text(self, x, y, s, **kw):
        self.fig.text(x / self.w, 1 - y / self.h, s, **kw)

    def save(self, path):
        self.fig.savefig(path, dpi=DPI)
        plt.close(self.fig)
        compact(path)
        return path


def compact(path):
    """Re-saves a PNG as 8-bit grey where it has no colour, else RGB (no
    alpha), with the best compression: the pictures are committed."""
    img = Image.open(path).convert("RGB")
    a = np.asarray(img)
    if np.array_equal(a[..., 0], a[..., 1]) and np.array_equal(a[..., 1], a[..., 2]):
        img = img.convert("L")
    img.save(path, optimize=True)


def thumbnail(img, width=THUMB):
    h, w = img.shape[:2]
    if w == width:
        return img
    return cv2.resize(img, (width, round(h * width / w)), interpolation=cv2.INTER_AREA)


def zoom(img, top, left, size=CROP, factor=ZOOM):
    crop = img[top:top + size, left:left + size]
    return np.repeat(np.repeat(crop, factor, axis=0), factor, axis=1)


def histogram(ax, plane):
    counts = np.bincount(plane.ravel(), minlength=256)
    ax.bar(np.arange(256), counts, width=1.0, color=BAR_GREY, linewidth=0)
    ax.set_xlim(-0.5, 255.5)
    # A few very full levels (black borders, a saturated sky) would flatten
    # the rest: the scale is set by the fuller levels, and taller bins are
    # cut at the top.
    used = np.sort(counts[counts > 0])
    ax.set_ylim(0, min(used[-1], used[int(0.97 * (len(used) - 1))] * 1.6) * 1.05)
    ax.set_yticks([])
    ax.set_xticks([0, 64, 128, 192, 255])
    ax.tick_params(axis="x", labelsize=7, length=2, pad=1)
    cdf = ax.twinx()
    cdf.plot(np.arange(256), np.cumsum(counts) / plane.size, color=CDF_GREY, linewidth=1.0)
    cdf.set_ylim(0, 1.05)
    cdf.set_yticks([])
    for a in (ax, cdf):
        for side in ("top", "right", "left"):
            a.spines[side].set_visible(False)


def grid(columns, row_labels, title, footer, path, width=THUMB):
    """columns: [(title, [(picture, plane) per row])]: the pictures shown
    `width` wide, each with the histogram and cumulative histogram of the
    plane under it (the plane the element filtered)."""
    left, gap, top = 34 if any(row_labels) else 8, 14, 58
    tallest = max(round(pic.shape[0] * width / pic.shape[1]) for _, cells in columns for pic, _ in cells)
    block = tallest + 4 + HIST_H + 16
    foot = 14 * (footer.count("\n") + 1) + 12
    sheet = Sheet(left + len(columns) * (width + gap), top + 22 + len(row_labels) * (block + 14) + foot)
    sheet.text(sheet.w / 2, 10, title, ha="center", va="top", fontsize=12)
    for row, rlabel in enumerate(row_labels):
        y0 = top + row * (block + 14)
        if rlabel:
            sheet.text(12, y0 + 22 + tallest / 2, rlabel, rotation=90, ha="center", va="center",
                       fontsize=10.5, weight="bold")
        for c, (ctitle, cells) in enumerate(columns):
            x0 = left + c * (width + gap)
            pic, plane = cells[row]
            sheet.image(x0, y0 + 22, thumbnail(pic, width), ctitle if row == 0 else None)
            histogram(sheet.axes(x0, y0 + 22 + tallest + 4, width, HIST_H), plane)
    sheet.text(sheet.w / 2, sheet.h - 8, footer, ha="center", va="bottom", fontsize=8.5, color="0.25")
    return sheet.save(path)


def before_after_grid(element, reference, label, title, path, backend, tmp):
    """Every photo (as gray) before and after `element`, which must equal
    `reference` (an OpenCV function)."""
    columns = []
    for name in PHOTOS:
        img = load(name)
        out = run_gray(img, [element], backend, tmp)[0]
        same_as(out, reference(img), f"{name} {element.split()[0]}")
        columns.append((f"{os.path.splitext(name)[0]}, {img.shape[1]}x{img.shape[0]}",
                        [(img, img), (out, out)]))
    return grid(columns, ["before", label], title,
                "Photos shown at reduced size; astronaut and hubble_deep_field converted to gray. Under "
                "each: histogram (grey) and\ncumulative histogram (line) of its levels. "
                f"backend={backend}; every output checked equal to OpenCV's.", path)


# ------------------------------------------------------------------ sets ---

def histeq_set(out, backend, tmp):
    return [before_after_grid("cudahisteq", cv2.equalizeHist, "after cudahisteq",
                              "cudahisteq: global histogram equalization (= cv2.equalizeHist)",
                              os.path.join(out, "histeq.png"), backend, tmp)]


def colour_set(out, backend, tmp):
    """The colour photo through I420: the luma is filtered (and must equal
    OpenCV's on it), the chroma must come out unchanged."""
    clahe_ref = cv2.createCLAHE(2.0, (8, 8)).apply
    elements = [("cudahisteq", cv2.equalizeHist, "cudahisteq"),
                (CLAHE, clahe_ref, "cudaclahe (clip 2, 8x8 tiles)")]
    rgb = load(COLOUR, "colour")
    planes_in, shown_in, outs = run_i420(rgb, [e for e, _, _ in elements], backend, tmp)
    columns = [(f"{os.path.splitext(COLOUR)[0]}, {rgb.shape[1]}x{rgb.shape[0]}, I420",
                [(shown_in, planes_in[0])])]
    for (element, reference, label), (planes_out, shown_out) in zip(elements, outs):
        same_as(planes_out[0], reference(planes_in[0]), f"{COLOUR} (I420 luma) {element.split()[0]}")
        for k in (1, 2):
            same_as(planes_out[k], planes_in[k], f"{COLOUR} (I420 chroma) {element.split()[0]}")
        columns.append((label, [(shown_out, planes_out[0])]))
    return [grid(columns, [None], "Colour frames: the elements filter the luma (Y) and carry the chroma over",
                 "videoconvert makes I420 of the photo; each output goes back to RGB to be shown.\n"
                 "Under each: histogram and cumulative histogram of the luma.\n"
                 f"Checked: luma equal to OpenCV's on the input luma, chroma unchanged. backend={backend}.",
                 os.path.join(out, "colour.png"), width=240)]


def luma_of(rgb):
    return np.ascontiguousarray(cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb)[..., 0])


def rgb_set(out, backend, tmp):
    """The colour PNG as pngdec gives it (RGB) through each element with no
    converter; each output must equal OpenCV's YCrCb round trip with the
    element's OpenCV counterpart on Y."""
    elements = [("cudahisteq", cv2.equalizeHist, "cudahisteq"),
                (CLAHE, cv2.createCLAHE(2.0, (8, 8)).apply, "cudaclahe (clip 2, 8x8 tiles)")]
    src = photo_path(COLOUR)
    rgb = cv2.cvtColor(cv2.imread(src, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
    columns = [(f"{os.path.splitext(COLOUR)[0]}, {rgb.shape[1]}x{rgb.shape[0]}, RGB", [(rgb, luma_of(rgb))])]
    for element, reference, label in elements:
        dst = os.path.join(tmp, "rgb-out.png")
        cmd = ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "pngdec", "!"] + \
            element.split() + [f"backend={backend}", "!", "pngenc", "!", "filesink", f"location={dst}"]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed: {res.stdout}{res.stderr}")
        got = cv2.cvtColor(cv2.imread(dst, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
        ycc = cv2.cvtColor(rgb, cv2.COLOR_RGB2YCrCb)
        ycc[..., 0] = reference(np.ascontiguousarray(ycc[..., 0]))
        same_as(got, cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB), f"{COLOUR} (RGB) {element.split()[0]}")
        columns.append((label, [(got, luma_of(got))]))
    return [grid(columns, [None], "RGB frames straight from pngdec: the elements filter the luma of YCrCb",
                 "filesrc ! pngdec ! ELEMENT ! pngenc, no converter. Checked: equal to OpenCV's "
                 "cvtColor(RGB2YCrCb),\nthe OpenCV function on Y, cvtColor(YCrCb2RGB). Under each: "
                 "histogram and cumulative histogram of Y. "
                 f"backend={backend}.", os.path.join(out, "rgb.png"), width=240)]


def comparison(name, img, backend, tmp, out_dir):
    """The photo, cudahisteq and cudaclahe side by side, with histograms."""
    eq, clahe = run_gray(img, ["cudahisteq", CLAHE], backend, tmp)
    same_as(eq, cv2.equalizeHist(img), f"{name} cudahisteq")
    same_as(clahe, cv2.createCLAHE(2.0, (8, 8)).apply(img), f"{name} cudaclahe")

    panels = [("original", img), ("cudahisteq (global)", eq), ("cudaclahe (clip 2, 8x8)", clahe)]
    fig, axes = plt.subplots(2, 3, figsize=(12, 5.6), gridspec_kw={"height_ratios": [4, 1]})
    for col, (title, pic) in enumerate(panels):
        axes[0, col].imshow(pic, cmap="gray", vmin=0, vmax=255)
        axes[0, col].set_title(title)
        axes[0, col].axis("off")
        axes[1, col].bar(np.arange(256), np.bincount(pic.ravel(), minlength=256), width=1,
                         color="0.3")
        axes[1, col].set_xlim(0, 255)
        axes[1, col].set_yticks([])
    stem = os.path.splitext(name)[0]
    fig.suptitle(f"{stem}, {img.shape[1]}x{img.shape[0]}, backend={backend}")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    path = os.path.join(out_dir, f"clahe-{stem}.png")
    fig.savefig(path, dpi=72)
    plt.close(fig)
    compact(path)
    return path


def clip_limits(img, backend, tmp, out_dir):
    """cudaclahe at several clip limits."""
    outs = run_gray(img, [f"cudaclahe clip-limit={c} tiles-x=8 tiles-y=8" for c in CLIP_LIMITS],
                    backend, tmp)
    fig, axes = plt.subplots(1, len(CLIP_LIMITS), figsize=(14, 3.9))
    for ax, c, pic in zip(axes, CLIP_LIMITS, outs):
        same_as(pic, cv2.createCLAHE(c, (8, 8)).apply(img), f"clip-limit {c}")
        ax.imshow(pic, cmap="gray", vmin=0, vmax=255)
        ax.set_title(f"clip-limit={c:g}" + (" (no clipping)" if c == 0 else ""))
        ax.axis("off")
    fig.tight_layout()
    path = os.path.join(out_dir, "clahe-clip-limits.png")
    fig.savefig(path, dpi=72)
    plt.close(fig)
    compact(path)
    return path


def clahe_set(out, backend, tmp):
    paths = [before_after_grid(CLAHE, cv2.createCLAHE(2.0, (8, 8)).apply, "after cudaclahe",
                               "cudaclahe: CLAHE, clip-limit 2, 8x8 tiles (= cv2.createCLAHE(2, (8, 8)))",
                               os.path.join(out, "clahe.png"), backend, tmp)]
    paths += [comparison(name, load(name), backend, tmp, out) for name in COMPARED]
    paths.append(clip_limits(load("moon.png"), backend, tmp, out))
    return paths


def crop_rows(rows, path, title, footer):
    """rows: [(label, [(title, zoomed crop)])]: a grid of zoomed crops."""
    left, gap, top, title_h = 34, 12, 46, 40
    side = CROP * ZOOM
    ncol = max(len(cells) for _, cells in rows)
    sheet = Sheet(left + ncol * (side + gap), top + len(rows) * (title_h + side + gap) + 44)
    sheet.text(sheet.w / 2, 10, title, ha="center", va="top", fontsize=12)
    for r, (label, cells) in enumerate(rows):
        y0 = top + r * (title_h + side + gap) + title_h
        sheet.text(12, y0 + side / 2, label, rotation=90, ha="center", va="center", fontsize=10.5,
                   weight="bold")
        for c, (ctitle, img) in enumerate(cells):
            sheet.image(left + c * (side + gap), y0, img, ctitle)
    sheet.text(sheet.w / 2, sheet.h - 8, footer, ha="center", va="bottom", fontsize=8.5, color="0.25")
    return sheet.save(path)


def nlm_set(out, backend, tmp):
    rows = []
    for name, top, left in NLM_CROPS:
        clean = load(name)
        noisy = add_noise(clean, NOISE_SIGMA, NOISE_SEED)
        ours = run_gray(noisy, [NLM], backend, tmp)[0]
        theirs = cv2.fastNlMeansDenoising(noisy, None, OPENCV_H, 7, 21)
        print(f"  {name}: PSNR noisy {psnr(noisy, clean):.2f} dB, cudanlm {psnr(ours, clean):.2f} dB, "
              f"OpenCV {psnr(theirs, clean):.2f} dB")
        rows.append((os.path.splitext(name)[0], [
            (f"noisy (sigma {NOISE_SIGMA})\nPSNR {psnr(noisy, clean):.1f} dB", zoom(noisy, top, left)),
            (f"{NLM_TEXT}: PSNR {psnr(ours, clean):.1f} dB", zoom(ours, top, left)),
            (f"OpenCV fastNlMeansDenoising\nh {OPENCV_H:g}: PSNR {psnr(theirs, clean):.1f} dB",
             zoom(theirs, top, left)),
            ("clean photo", zoom(clean, top, left))]))
    return [crop_rows(rows, os.path.join(out, "nlm.png"),
                      f"cudanlm: non-local means on Gaussian noise (sigma {NOISE_SIGMA})",
                      f"{CROP}x{CROP} crops zoomed {ZOOM}x (nearest neighbour); PSNR against the clean photo "
                      f"over the whole {clean.shape[1]}x{clean.shape[0]} frame.\n"
                      "Patch 7, search 21 for both; "
                      f"noise: rounded, clipped to 8 bits, seed {NOISE_SEED}. backend={backend}.")]


def sharpen_set(out, backend, tmp):
    if not has_element("cudasharpen"):
        print("  cudasharpen: not in the plugin on GST_PLUGIN_PATH (gst-inspect-1.0 cudasharpen "
              "failed): sharpen.png not made")
        return []
    unsharp = f"cudasharpen kernel=unsharp amount={UNSHARP['amount']} radius={UNSHARP['radius']}"
    rows = []
    for name, top, left in SHARPEN_CROPS:
        clean = load(name)
        blurred = cv2.GaussianBlur(clean, (0, 0), BLUR_SIGMA)
        us, lap = run_gray(blurred, [unsharp, "cudasharpen kernel=laplacian-3x3"], backend, tmp)
        # Defined as OpenCV's arithmetic (cudafilters/sharpen_params.h). The
        # comparison is printed, not enforced: OpenCV builds that fuse
        # multiply-adds (aarch64, -march=native) can round addWeighted
        # differently.
        a = UNSHARP["amount"]
        cv_us = cv2.addWeighted(blurred, 1 + a, cv2.GaussianBlur(blurred, (0, 0), UNSHARP["radius"]), -a, 0)
        cv_lap = cv2.filter2D(blurred, -1, LAPLACIAN_3X3)
        for what, got, want in (("unsharp", us, cv_us), ("laplacian-3x3", lap, cv_lap)):
            diff = np.abs(got.astype(int) - want.astype(int))
            print(f"  {name} cudasharpen {what}: " + (
                "identical to OpenCV" if not diff.any() else
                f"{np.count_nonzero(diff)} pixels differ from OpenCV, by at most {diff.max()}"))
        rows.append((os.path.splitext(name)[0], [
            (f"blurred input\n(Gaussian, sigma {BLUR_SIGMA:g})", zoom(blurred, top, left)),
            (f"cudasharpen (unsharp)\namount {UNSHARP['amount']:g}, radius {UNSHARP['radius']:g}",
             zoom(us, top, left)),
            ("cudasharpen\nkernel=laplacian-3x3", zoom(lap, top, left)),
            ("the photo before blurring", zoom(clean, top, left))]))
    return [crop_rows(rows, os.path.join(out, "sharpen.png"),
                      "cudasharpen: unsharp masking and the 3x3 kernel",
                      f"{CROP}x{CROP} crops zoomed {ZOOM}x (nearest neighbour). The photos were blurred with "
                      f"cv2.GaussianBlur (sigma {BLUR_SIGMA:g}) first.\nbackend={backend}.")]


def temporal_set(out, backend, tmp):
    path = os.path.join(out, "temporal-smoothing.png")
    res = subprocess.run([sys.executable, os.path.join(ROOT, "studies", "temporal_smoothing.py"),
                          "--backend", backend, "--plot", path], capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"studies/temporal_smoothing.py failed:\n{res.stdout}{res.stderr}")
    return [path]


def bench_set(out, backend, tmp):
    """The plots only: the page goes to a scratch file (scripts/run-benchmarks.sh
    or bench/report.py itself write docs/benchmarks.md)."""
    start = time.time()
    cmd = [sys.executable, os.path.join(ROOT, "bench", "report.py"), os.path.join(ROOT, BENCH_RESULTS),
           "--out", os.path.join(tmp, "benchmarks.md"), "--plots", out,
           "--cpu-results"] + [os.path.join(ROOT, d) for d in BENCH_CPU_RESULTS]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"bench/report.py failed:\n{res.stdout}{res.stderr}")
    return sorted(os.path.join(out, f) for f in os.listdir(out) if f.startswith("bench-")
                  and f.endswith(".png") and os.path.getmtime(os.path.join(out, f)) >= start - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img"))
    ap.add_argument("--backend", choices=["cpu", "cuda", "auto"], default="cpu")
    ap.add_argument("--only", nargs="+", choices=SETS, default=SETS, metavar="SET",
                    help="make only these sets: " + ", ".join(SETS))
    args = ap.parse_args()

    if not os.environ.get("GST_PLUGIN_PATH") and os.path.isdir(os.path.join(ROOT, "build", "plugin")):
        os.environ["GST_PLUGIN_PATH"] = os.path.join(ROOT, "build", "plugin")
        print(f"GST_PLUGIN_PATH={os.environ['GST_PLUGIN_PATH']}")
    needs_plugin = {"histeq": "cudahisteq", "clahe": "cudaclahe", "colour": "cudaclahe", "rgb": "cudaclahe",
                    "nlm": "cudanlm", "sharpen": "cudasharpen",
                    "temporal": "cudaclahe"}
    for s in args.only:
        if s in needs_plugin and not has_element(needs_plugin[s]):
            sys.exit(f"gst-inspect-1.0 {needs_plugin[s]} fails: put the plugin on GST_PLUGIN_PATH "
                     "(e.g. GST_PLUGIN_PATH=build/plugin)")

    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as error:
        ap.error(f"cannot make {args.out}: {error.strerror}")
    made = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in SETS:
            if s not in args.only:
                continue
            print(f"{s}:")
            paths = globals()[f"{s}_set"](args.out, args.backend, tmp)
            for p in paths:
                kb = os.path.getsize(p) / 1024
                print(f"  {p} ({kb:.0f} KB)" + ("  <- larger than it should be" if kb > KB_LIMIT else ""))
            made += paths
    print(f"{len(made)} pictures, {sum(os.path.getsize(p) for p in made) / 1024:.0f} KB")


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as error:   # gst-launch-1.0 failed: its own words
        sys.exit(f"make-pictures.py: {error}")

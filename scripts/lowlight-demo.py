#!/usr/bin/env python3
"""Night-time video through cudalowlight, beside cudaclahe alone.

Makes a short video of a scikit-image photo growing dark: the view pans
across the photo while its brightness falls (from --bright to --dark times
the photo's) and Gaussian noise grows (sigma from --sigma-start to
--sigma-end levels, in R, G and B), as a camera's picture does when the light
goes and its gain goes up. The video goes through gst-launch-1.0 as I420, in
one pipeline with three branches:

  input           the video as it is
  cudaclahe       cudaclahe alone, with the settings cudalowlight gives it
                  (clip-limit=4 temporal-smoothing=0.8): the shadows come up,
                  and the noise with them
  cudalowlight    cudanlm auto-strength=true temporal-radius=1 ! cudaclahe

Each branch ends in a meter, `cudasharpen amount=0` (which passes frames
unchanged) posting statistics messages, whose `noise-sigma` is the plugin's
own noise estimate of the branch's luma (docs/noise-estimation.md).

Writes into OUT:
  lowlight-demo.png  a montage: a few frames (rows), input / cudaclahe alone
                     / cudalowlight (columns), each with its noise estimate
                     and mean luma
  lowlight-demo.md   the noise estimate and mean luma of every frame, each
                     branch, and the pipeline run

    scripts/lowlight-demo.py OUT [--backend cpu|cuda|auto] [--photo coffee]
    GST_PLUGIN_PATH=build-nocuda/plugin scripts/lowlight-demo.py /tmp/demo --clip-limits 2 3 4 6

The last line made docs/img/lowlight.png (OUT/lowlight-demo.png) and
studies/lowlight-demo/report.md (OUT/lowlight-demo.md), on the CPU
backend.

--clip-limits adds, for the frames shown, cudalowlight and cudaclahe alone at
each clip limit (noise estimate and mean luma) to the report.
GST_PLUGIN_PATH defaults to build/plugin when it is not set. Needs numpy,
skimage, PIL and matplotlib (scripts/install-deps.sh --pictures), and
gst-launch-1.0 with videoconvert.
"""
import argparse
import io
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interpreter import ensure  # noqa: E402

ensure(["numpy", "skimage", "PIL", "matplotlib"])

import matplotlib  # noqa: E402
import numpy as np  # noqa: E402
import skimage.data  # noqa: E402
from PIL import Image  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(SCRIPTS)
from gstraw import from_raw, to_raw  # noqa: E402

# cudaclahe as cudalowlight sets it up (its clip-limit and
# temporal-smoothing defaults).
CLAHE = "cudaclahe clip-limit=4 temporal-smoothing=0.8"
LOWLIGHT = "cudalowlight"
METER = "cudasharpen backend=cpu amount=0 post-messages=true message-interval=0"
MESSAGE = re.compile(r'Got message #\d+ from element "(meter\d+)" \(element\): cudasharpen, '
                     r'timestamp=\(guint64\)(\d+).*?input-mean=\(double\)([0-9.e+-]+).*?'
                     r'noise-sigma=\(double\)([0-9.e+-]+)')
KB_LIMIT = 500


def make_video(photo, frames, width, height, bright, dark, sigma_start, sigma_end, seed):
    """The photo (RGB), panned across, darker and noisier frame by frame."""
    img = getattr(skimage.data, photo)()
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    img = img[..., :3]
    scale = max(height * 1.1 / img.shape[0], (width * 1.3) / img.shape[1])
    size = (int(round(img.shape[1] * scale)), int(round(img.shape[0] * scale)))
    img = np.asarray(Image.fromarray(img).resize(size, Image.LANCZOS), np.float64)
    rng = np.random.default_rng(seed)
    y0 = (img.shape[0] - height) // 2
    pan = img.shape[1] - width
    video, gains, sigmas = [], [], []
    for i in range(frames):
        t = i / max(frames - 1, 1)
        gain = bright * (dark / bright) ** t
        sigma = sigma_start + (sigma_end - sigma_start) * t
        x0 = int(round(pan * t))
        view = img[y0:y0 + height, x0:x0 + width] * gain
        noisy = view + rng.normal(0, sigma, view.shape)
        video.append(np.clip(np.rint(noisy), 0, 255).astype(np.uint8))
        gains.append(gain)
        sigmas.append(sigma)
    return video, gains, sigmas


def run_branches(video, branches, tmp):
    """The video (RGB frames) as I420 through one pipeline with a tee branch
    per element description ("" for none), each ending in a meter. Returns
    the command, and per branch the RGB output frames and, per frame, the
    meter's (noise-sigma, mean luma)."""
    h, w = video[0].shape[:2]
    src = os.path.join(tmp, "in.rgb")
    with open(src, "wb") as f:
        for frame in video:
            f.write(to_raw(frame))
    cmd = ["gst-launch-1.0", "-m", "filesrc", f"location={src}", "!", "rawvideoparse",
           "format=rgb", f"width={w}", f"height={h}", "framerate=30/1", "!",
           "videoconvert", "!", "video/x-raw,format=I420", "!", "tee", "name=t"]
    outs = []
    for i, element in enumerate(branches):
        out = os.path.join(tmp, f"out{i}.rgb")
        outs.append(out)
        cmd += ["t.", "!", "queue", "max-size-buffers=0", "max-size-time=0", "max-size-bytes=0", "!"]
        cmd += (element.split() + ["!"] if element else [])
        cmd += METER.split() + [f"name=meter{i}", "!", "videoconvert", "!",
                                "video/x-raw,format=RGB", "!", "filesink", f"location={out}"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"gst-launch-1.0 failed:\n{' '.join(cmd)}\n{res.stdout[-3000:]}{res.stderr}")
    stats = [dict() for _ in branches]
    for line in res.stdout.splitlines():
        m = MESSAGE.search(line)
        if m:
            stats[int(m.group(1)[5:])][int(m.group(2))] = (float(m.group(4)), float(m.group(3)))
    results = []
    for out, st in zip(outs, stats):
        with open(out, "rb") as f:
            frames = list(from_raw(f.read(), w, h, len(video), np.uint8, 3))
        if len(st) != len(video):
            raise RuntimeError(f"{len(st)} statistics messages for {len(video)} frames:\n"
                               + " ".join(cmd))
        results.append((frames, [st[k] for k in sorted(st)]))
    return cmd, results


def has_element(name):
    return subprocess.run(["gst-inspect-1.0", name], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def save_small_png(fig, path):
    """The figure as a PNG with an adaptive palette (noise compresses badly)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    buf.seek(0)
    img = Image.open(buf).convert("RGB")
    img.quantize(colors=128, method=Image.MEDIANCUT, dither=Image.NONE).save(path, optimize=True)


def montage(path, shown, titles, results, gains, sigmas, backend):
    cols = len(results)
    h, w = results[0][0][0].shape[:2]
    fig, axes = plt.subplots(len(shown), cols, figsize=(cols * w / 100 + 0.3, len(shown) * (h / 100 + 0.6)),
                             dpi=100, squeeze=False)
    for r, k in enumerate(shown):
        for c, (frames, stats) in enumerate(results):
            ax = axes[r][c]
            ax.imshow(frames[k], interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            sigma, mean = stats[k]
            label = f"noise {sigma:.1f}, mean {mean:.0f}"
            if c == 0:
                label = f"frame {k}: x{gains[k]:.2f} light, +sigma {sigmas[k]:.0f}\n" + label
            elif r == 0:
                label = titles[c] + "\n" + label
            ax.set_title(label, fontsize=8)
    fig.suptitle(f"backend={backend}; noise: the plugin's estimate of the luma's noise (8-bit levels)",
                 fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.97), pad=0.3)
    save_small_png(fig, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("out", help="folder for lowlight-demo.png and lowlight-demo.md")
    ap.add_argument("--backend", choices=["cpu", "cuda", "auto"], default="cpu")
    ap.add_argument("--photo", default="coffee", help="a scikit-image photo (skimage.data.NAME)")
    ap.add_argument("--frames", type=int, default=36)
    ap.add_argument("--size", default="320x240", help="WIDTHxHEIGHT of the video")
    ap.add_argument("--bright", type=float, default=0.45, help="brightness of the first frame")
    ap.add_argument("--dark", type=float, default=0.08, help="brightness of the last frame")
    ap.add_argument("--sigma-start", type=float, default=2.0)
    ap.add_argument("--sigma-end", type=float, default=9.0)
    ap.add_argument("--show", type=int, nargs="+", help="frames in the montage (default: 3 spread out)")
    ap.add_argument("--clip-limits", type=float, nargs="*", default=[],
                    help="also compare these clip limits on the frames shown")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    if not os.environ.get("GST_PLUGIN_PATH") and os.path.isdir(os.path.join(ROOT, "build", "plugin")):
        os.environ["GST_PLUGIN_PATH"] = os.path.join(ROOT, "build", "plugin")
        print(f"GST_PLUGIN_PATH={os.environ['GST_PLUGIN_PATH']}")
    if not has_element("cudalowlight"):
        sys.exit("gst-inspect-1.0 cudalowlight fails: put the plugin on GST_PLUGIN_PATH "
                 "(e.g. GST_PLUGIN_PATH=build/plugin)")
    size = re.fullmatch(r"(\d+)x(\d+)", args.size)
    if not size or not all(16 <= int(v) <= 4096 for v in size.groups()):
        ap.error("--size wants WIDTHxHEIGHT, each 16 to 4096 (e.g. 320x240)")
    width, height = (int(v) for v in size.groups())
    if args.frames < 3:
        ap.error("--frames must be 3 or more")
    if not (0 < args.dark <= 1 and 0 < args.bright <= 1):
        ap.error("--bright and --dark must be above 0, up to 1")
    if args.sigma_start < 0 or args.sigma_end < 0:
        ap.error("--sigma-start and --sigma-end must not be negative")
    if args.show and not all(0 <= k < args.frames for k in args.show):
        ap.error(f"--show takes frames 0 to {args.frames - 1}")
    if not all(0 <= c <= 256 for c in args.clip_limits):
        ap.error("--clip-limits must be 0 to 256 (cudaclahe's range)")
    if not callable(getattr(skimage.data, args.photo, None)):
        ap.error(f"--photo: skimage.data has no photo {args.photo!r}")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        ap.error(f"{args.out} is a file, not a folder")
    shown = args.show or [args.frames // 6, args.frames // 2, args.frames - 2]

    video, gains, sigmas = make_video(args.photo, args.frames, width, height, args.bright,
                                      args.dark, args.sigma_start, args.sigma_end, args.seed)
    on_backend = f" backend={args.backend}"
    branches = ["", CLAHE + on_backend, LOWLIGHT + on_backend]
    titles = ["input", CLAHE + " (alone)", LOWLIGHT]
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as error:
        ap.error(f"cannot make {args.out}: {error.strerror}")
    with tempfile.TemporaryDirectory() as tmp:
        cmd, results = run_branches(video, branches, tmp)
        command = " ".join(c if " " not in c else f"'{c}'" for c in cmd).replace(tmp, "TMP")
        sweep = []
        if args.clip_limits:
            sweep_branches = []
            for clip in args.clip_limits:
                sweep_branches += [f"{LOWLIGHT}{on_backend} clip-limit={clip:g}",
                                   f"cudaclahe{on_backend} clip-limit={clip:g} temporal-smoothing=0.8"]
            _, sweep_results = run_branches(video[:max(shown) + 2], sweep_branches, tmp)
            sweep = [(b, [r[1][k] for k in shown]) for b, r in zip(sweep_branches, sweep_results)]

    png = os.path.join(args.out, "lowlight-demo.png")
    montage(png, shown, titles, results, gains, sigmas, args.backend)

    report = os.path.join(args.out, "lowlight-demo.md")
    with open(report, "w") as f:
        f.write(f"# {os.path.basename(__file__)}: {args.photo}, {args.frames} frames of "
                f"{width}x{height}, backend={args.backend}\n\n")
        f.write("noise: the plugin's estimate of the luma's noise (statistics message "
                "`noise-sigma`, 8-bit levels); mean: the luma's mean.\n\n")
        f.write("| frame | light | sigma added | " + " | ".join(f"{t}: noise, mean" for t in titles)
                + " |\n")
        f.write("| --- | --- | --- |" + " --- |" * len(titles) + "\n")
        for k in range(args.frames):
            cells = " | ".join(f"{r[1][k][0]:.2f}, {r[1][k][1]:.1f}" for r in results)
            f.write(f"| {k} | {gains[k]:.3f} | {sigmas[k]:.2f} | {cells} |\n")
        if sweep:
            f.write("\nClip limits, on the frames shown (noise, mean):\n\n| pipeline | "
                    + " | ".join(f"frame {k} (light {gains[k]:.3f}, sigma {sigmas[k]:.2f})" for k in shown)
                    + " |\n| --- |" + " --- |" * len(shown) + "\n")
            for b, values in sweep:
                f.write(f"| `{b}` | " + " | ".join(f"{sigma:.2f}, {mean:.1f}" for sigma, mean in values)
                        + " |\n")
        f.write(f"\nPipeline (TMP: the video as raw RGB frames, and the outputs):\n\n    {command}\n")

    print(f"{png} ({os.path.getsize(png) / 1024:.0f} KB)"
          + ("  <- larger than it should be" if os.path.getsize(png) / 1024 > KB_LIMIT else ""))
    print(f"{report}")
    for k in shown:
        print(f"frame {k}: light x{gains[k]:.3f}, sigma {sigmas[k]:.1f}: "
              + ", ".join(f"{t}: noise {r[1][k][0]:.2f} mean {r[1][k][1]:.1f}"
                          for t, r in zip(titles, results)))
    for b, values in sweep:
        print(f"  {b}: " + ", ".join(f"frame {k}: noise {sigma:.2f} mean {mean:.1f}"
                                     for k, (sigma, mean) in zip(shown, values)))


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as error:   # gst-launch-1.0 failed: its own words
        sys.exit(f"lowlight-demo.py: {error}")

#!/usr/bin/env python3
"""A simulated night camera's frame through cudalowlight: the elements'
automatic strength of an earlier build (--old-plugin), today's, and the best
single setting.

The frames come from studies/camera_set.py's chain (Bayer sensor, photon and
read noise, bilinear demosaicing, gamma 2.2, I420; static scene, three
frames, fresh noise in each) at a low photon count, on a scene darkened to
--exposure times the photo's linear light (a street at night). Each version runs
`cudalowlight backend=cpu` (the GPU's arithmetic) through gst-launch-1.0 on
the three frames; the middle frame is shown:

  delivered        the camera's frame
  cudaclahe alone  cudaclahe clip-limit=4 temporal-smoothing=0.8, as inside
                   cudalowlight: the shadows come up with their noise
  before           cudalowlight with the plugin of --old-plugin
  automatic        cudalowlight as it is
  best setting     cudalowlight with cudanlm::auto-strength=false and the
                   strength x noise-sigma that denoise the middle frame
                   best (temporal radius 1, luma PSNR against the clean
                   frame, through the engine library)

Beside each: the luma PSNR of its output against the clean frames through
the same cudaclahe (the same brightening without noise).

    scripts/camera-lowlight-picture.py OUT --old-plugin DIR [--old-label NAME]
                                       [--photo motorcycle_right] [--peak 40] [--exposure 0.25]

Writes OUT/camera-lowlight.png and OUT/camera-lowlight.md. GST_PLUGIN_PATH
defaults to build/plugin; the engine library to build/studies/libnlmtune.so.
Needs numpy, cv2, skimage, scipy and matplotlib, and gst-launch-1.0.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "studies"))
from interpreter import ensure  # noqa: E402

ensure(["numpy", "cv2", "matplotlib"])
import cv2  # noqa: E402
import matplotlib  # noqa: E402
import numpy as np  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import camera_set as cs  # noqa: E402
from nlm_auto_strength import Engine, psnr  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLAHE = "cudaclahe backend=cpu clip-limit=4 temporal-smoothing=0.8"


def through(frames, element, plugin_dir):
    """I420 frames (lists of Y, U, V) through one gst-launch pipeline."""
    h, w = frames[0][0].shape
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.yuv"), os.path.join(d, "out.yuv")
        with open(src, "wb") as f:
            for plane in (p for fr in frames for p in fr):
                f.write(np.ascontiguousarray(plane).tobytes())
        env = dict(os.environ, GST_PLUGIN_PATH=plugin_dir)
        cmd = (f"gst-launch-1.0 -q filesrc location={src} ! rawvideoparse format=i420 width={w} "
               f"height={h} framerate=30/1 ! {element} ! video/x-raw,format=I420 ! "
               f"filesink location={dst}")
        if subprocess.run(cmd, shell=True, env=env).returncode != 0:
            sys.exit(f"camera-lowlight-picture.py: {element} failed (gst-launch-1.0's message above)")
        data = np.fromfile(dst, np.uint8)
    n, c = w * h, (w // 2) * (h // 2)
    return [[data[i * (n + 2 * c):][:n].reshape(h, w),
             data[i * (n + 2 * c) + n:][:c].reshape(h // 2, w // 2),
             data[i * (n + 2 * c) + n + c:][:c].reshape(h // 2, w // 2)] for i in range(len(frames))]


def best_setting(engine, frames, clean):
    best = (-1.0, None)
    for hh in cs.STRENGTHS:
        for ns in cs.NOISE_SIGMAS:
            p = psnr(engine.denoise([[f[0]] for f in frames], radius=1, h=hh, noise_sigma=ns)[:1],
                     [clean[1][0]])
            if p > best[0]:
                best = (p, (hh, ns))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--old-plugin", required=True, help="plugin directory of the build before")
    ap.add_argument("--old-label", default="before", help="what to call that build")
    ap.add_argument("--photo", default="motorcycle_right")
    ap.add_argument("--peak", type=int, default=40, help="photons at white, 1 or more")
    ap.add_argument("--exposure", type=float, default=0.25, help="share of the light, above 0 up to 1")
    ap.add_argument("--variant", default="base", choices=cs.VARIANTS)
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "studies", "libnlmtune.so"))
    args = ap.parse_args()
    if args.peak < 1:
        ap.error("--peak must be 1 or more")
    if not 0 < args.exposure <= 1:
        ap.error("--exposure must be above 0, up to 1")
    new_plugin = os.environ.get("GST_PLUGIN_PATH", os.path.join(ROOT, "build", "plugin"))
    for flag, folder in (("--old-plugin", args.old_plugin), ("GST_PLUGIN_PATH", new_plugin)):
        if not os.path.isfile(os.path.join(folder, "libgstcudafilters.so")):
            ap.error(f"{flag}: {folder} holds no libgstcudafilters.so")
    if not os.path.isfile(args.lib):
        ap.error(f"--lib: no {args.lib} (build the studies first: scripts/build.sh)")
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as error:
        ap.error(f"cannot make {args.out}: {error.strerror}")

    photo = cs.source_photo(args.photo)
    s = cs.SHORT_SIDE / min(photo.shape[:2])
    photo = cv2.resize(photo, (round(photo.shape[1] * s), round(photo.shape[0] * s)),
                       interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_CUBIC)
    photo = np.clip(np.rint(cs.from_linear(cs.to_linear(photo, "gamma22") * args.exposure,
                                           "gamma22")), 0, 255).astype(np.uint8)
    frames, clean = cs.make_case(photo, args.photo, args.peak, args.variant)
    engine = Engine(args.lib, gpu=False)
    gain, (bh, bns) = best_setting(engine, frames, clean)
    versions = [
        ("delivered", None, None),
        ("cudaclahe alone", CLAHE, new_plugin),
        (f"before ({args.old_label})", "cudalowlight backend=cpu", args.old_plugin),
        ("automatic (now)", "cudalowlight backend=cpu", new_plugin),
        (f"best setting (strength {bh}, noise-sigma {bns})",
         f"cudalowlight backend=cpu cudanlm::auto-strength=false cudanlm::strength={bh} "
         f"cudanlm::noise-sigma={bns}", new_plugin),
    ]
    reference = through(clean, CLAHE, new_plugin)[1][0]
    shown, lines = [], []
    for title, element, plugin in versions:
        y = frames[1][0] if element is None else through(frames, element, plugin)[1][0]
        p = psnr([y], [reference]) if element else psnr([y], [clean[1][0]])
        shown.append((title, y, p))
        lines.append(f"| {title} | {p:.2f} |")
    fig, axes = plt.subplots(1, len(shown), figsize=(3.2 * len(shown), 3.9))
    for ax, (title, y, p) in zip(axes, shown):
        ax.imshow(y, cmap="gray", vmin=0, vmax=255, interpolation="nearest")
        ax.set_title(f"{title}\n{p:.2f} dB", fontsize=9)
        ax.axis("off")
    fig.suptitle(f"{args.photo} at {args.exposure:g} of its light, {args.peak} photons at white, "
                 f"read noise {cs.READ_NOISE:g} e-, bilinear demosaicing, gamma 2.2", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    fig.savefig(os.path.join(args.out, "camera-lowlight.png"), dpi=110)
    true_noise = cs.truth(frames, clean, [0])
    with open(os.path.join(args.out, "camera-lowlight.md"), "w") as f:
        f.write(f"{args.photo} at {args.exposure:g} of its light, peak {args.peak}, variant "
                f"{args.variant}; true luma noise "
                f"{true_noise:.2f}; the engine's one-frame estimate "
                f"{engine.estimate_frame(*frames[1])[0]:.2f}; best single setting strength {bh}, "
                f"noise-sigma {bns} ({gain:.2f} dB on the NLM stage alone)\n\n")
        f.write("| version | luma PSNR against the clean frame through the same cudaclahe (dB; "
                "delivered: against the clean frame) |\n| --- | ---: |\n")
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

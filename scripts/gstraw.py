"""Raw GRAY8 frames in GStreamer's default layout (rows padded to 4 bytes),
and running them through gst-launch-1.0 pipelines."""
import os
import subprocess

import numpy as np


def stride_of(width):
    return (width + 3) & ~3


def to_raw(img):
    h, w = img.shape
    padded = np.full((h, stride_of(w)), 0xEE, np.uint8)
    padded[:, :w] = img
    return padded.tobytes()


def from_raw(data, w, h, count):
    s = stride_of(w)
    arr = np.frombuffer(data, np.uint8)
    if arr.size != count * s * h:
        raise RuntimeError(f"output has {arr.size} bytes, expected {count * s * h}")
    return arr.reshape(count, h, s)[:, :, :w]


def filter_frames(frames, elements, tmp):
    """Runs frames (same size) through each element description in
    `elements` (one tee branch each, in one pipeline) and returns, per
    element, the list of output frames."""
    h, w = frames[0].shape
    src = os.path.join(tmp, "in.raw")
    with open(src, "wb") as f:
        for img in frames:
            f.write(to_raw(img))
    cmd = ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "rawvideoparse",
           "format=gray8", f"width={w}", f"height={h}", "framerate=30/1", "!", "tee", "name=t"]
    outs = []
    for i, el in enumerate(elements):
        out = os.path.join(tmp, f"out{i}.raw")
        outs.append(out)
        cmd += ["t.", "!", "queue", "!"] + el.split() + ["!", "filesink", f"location={out}"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"gst-launch failed ({w}x{h}): {res.stdout}{res.stderr}")
    results = []
    for out in outs:
        with open(out, "rb") as f:
            results.append(list(from_raw(f.read(), w, h, len(frames))))
    return results

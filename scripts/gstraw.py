"""Raw GRAY8 and GRAY16_LE frames in GStreamer's default layout (rows padded
to 4 bytes), and running them through gst-launch-1.0 pipelines."""
import os
import subprocess

import numpy as np


def stride_of(width, dtype=np.uint8):
    """Row stride in samples."""
    size = np.dtype(dtype).itemsize
    return ((width * size + 3) & ~3) // size


def to_raw(img):
    h, w = img.shape
    padded = np.full((h, stride_of(w, img.dtype)), 0xEE, img.dtype)
    padded[:, :w] = img
    return padded.astype(padded.dtype.newbyteorder("<")).tobytes()


def from_raw(data, w, h, count, dtype=np.uint8):
    s = stride_of(w, dtype)
    arr = np.frombuffer(data, np.dtype(dtype).newbyteorder("<"))
    if arr.size != count * s * h:
        raise RuntimeError(f"output has {arr.size} samples, expected {count * s * h}")
    return arr.reshape(count, h, s)[:, :, :w].astype(dtype)


def filter_frames(frames, elements, tmp):
    """Runs frames (same size) through each element description in
    `elements` (one tee branch each, in one pipeline) and returns, per
    element, the list of output frames. uint8 frames go as GRAY8, uint16
    ones as GRAY16_LE."""
    h, w = frames[0].shape
    dtype = frames[0].dtype
    fmt = "gray16-le" if dtype == np.uint16 else "gray8"
    src = os.path.join(tmp, "in.raw")
    with open(src, "wb") as f:
        for img in frames:
            f.write(to_raw(img))
    cmd = ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "rawvideoparse",
           f"format={fmt}", f"width={w}", f"height={h}", "framerate=30/1", "!", "tee", "name=t"]
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
            results.append(list(from_raw(f.read(), w, h, len(frames), dtype)))
    return results

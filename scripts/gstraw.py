"""Raw GRAY8, GRAY16_LE and RGB frames in GStreamer's default layout (rows
padded to 4 bytes), running them through gst-launch-1.0 pipelines, and the
PSNR the quality scripts compare frames by."""
import os
import subprocess

import numpy as np


def stride_of(width, dtype=np.uint8):
    """Row stride in samples."""
    size = np.dtype(dtype).itemsize
    return ((width * size + 3) & ~3) // size


def to_raw(img):
    """A gray (h, w) or RGB (h, w, 3) frame as raw bytes."""
    h = img.shape[0]
    n = img.size // h  # samples per row
    padded = np.full((h, stride_of(n, img.dtype)), 0xEE, img.dtype)
    padded[:, :n] = img.reshape(h, n)
    return padded.astype(padded.dtype.newbyteorder("<")).tobytes()


def from_raw(data, w, h, count, dtype=np.uint8, channels=1):
    """`count` frames of (h, w), or (h, w, channels) where channels > 1."""
    n = w * channels
    s = stride_of(n, dtype)
    arr = np.frombuffer(data, np.dtype(dtype).newbyteorder("<"))
    if arr.size != count * s * h:
        raise RuntimeError(f"output has {arr.size} samples, expected {count * s * h}")
    frames = arr.reshape(count, h, s)[:, :, :n].astype(dtype)
    return frames if channels == 1 else frames.reshape(count, h, w, channels)


def psnr(a, b):
    """PSNR in dB of a against b, with the peak of their sample type."""
    peak = 65535.0 if a.dtype == np.uint16 else 255.0
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 10 * np.log10(peak ** 2 / mse)


def filter_frames(frames, elements, tmp, via="", back="", fmt=None):
    """Runs frames (same size) through each element description in
    `elements` (one tee branch each, in one pipeline; "" for none) and
    returns, per element, the list of output frames. uint8 frames go as
    GRAY8, uint16 ones as GRAY16_LE, (h, w, 3) uint8 ones as RGB. `via`
    (e.g. "videoconvert ! video/x-raw,format=I420") comes before the tee,
    and `back` after each element, to return to the frames' format. `fmt`
    (a rawvideoparse format name) says what the bytes of (h, w, channels)
    frames are, where it is not RGB (BGR, RGBA, BGRx...)."""
    h, w = frames[0].shape[:2]
    dtype = frames[0].dtype
    channels = frames[0].shape[2] if frames[0].ndim == 3 else 1
    fmt = fmt or ("rgb" if channels == 3 else "gray16-le" if dtype == np.uint16 else "gray8")
    src = os.path.join(tmp, "in.raw")
    with open(src, "wb") as f:
        for img in frames:
            f.write(to_raw(img))
    cmd = ["gst-launch-1.0", "-q", "filesrc", f"location={src}", "!", "rawvideoparse",
           f"format={fmt}", f"width={w}", f"height={h}", "framerate=30/1", "!"]
    cmd += (via.split() + ["!"] if via else []) + ["tee", "name=t"]
    outs = []
    for i, el in enumerate(elements):
        out = os.path.join(tmp, f"out{i}.raw")
        outs.append(out)
        cmd += ["t.", "!", "queue", "!"] + (el.split() + ["!"] if el else [])
        cmd += (back.split() + ["!"] if back else []) + ["filesink", f"location={out}"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"gst-launch failed ({fmt} {w}x{h}): {res.stdout}{res.stderr}")
    results = []
    for out in outs:
        with open(out, "rb") as f:
            results.append(list(from_raw(f.read(), w, h, len(frames), dtype, channels)))
    return results

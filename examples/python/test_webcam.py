#!/usr/bin/env python3
"""Test of webcam.py: record the side-by-side view headless, check the file.

Runs webcam.py on videotestsrc (a camera, where there is one, is left
alone) for 60 frames of 320x240 into an MP4, and checks that the file
decodes to frames twice as wide as the source. It records twice: as is,
and with the filtered branch held back at the start, where the compositor
would otherwise begin at the size of the direct branch alone.

Run by ``meson test example-py-webcam``; by hand::

    GST_PLUGIN_PATH=build/plugin examples/python/test_webcam.py

Exit status: 0 passed, 1 failed, 77 skipped (PyGObject, x264enc, the MP4
elements, compositor or an H.264 decoder missing).
"""

import os
import subprocess
import sys
import tempfile

from test_filter_video import Gst, check, decoded_frames, missing_elements

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "webcam.py")
FRAMES, WIDTH, HEIGHT = 60, 320, 240


# Runs webcam.py with the filtered branch held back 400 ms from its first
# event on, caps included, as a slow start on a loaded machine does.
LATE_BRANCH = """
import sys
import threading

sys.path.insert(0, sys.argv[1])
import webcam
from gi.repository import Gst

filters = webcam.SideBySide.filters


def late_filters(self):
    hold = webcam.make("queue")
    pad = hold.get_static_pad("src")
    timers = []

    def block(pad, info):
        if not timers:
            timers.append(threading.Timer(0.4, pad.remove_probe, [info.id]))
            timers[0].start()
        return Gst.PadProbeReturn.OK

    pad.add_probe(Gst.PadProbeType.BLOCK_DOWNSTREAM, block)
    return [hold] + filters(self)


webcam.SideBySide.filters = late_filters
sys.exit(webcam.main(sys.argv[2:]))
"""


def record(output, program):
    """Runs `program` (webcam.py) headless into `output`; checks the file."""
    command = [sys.executable] + program + [
        "--source",
        "test",
        "--frames",
        str(FRAMES),
        "--width",
        str(WIDTH),
        "--height",
        str(HEIGHT),
        "--output",
        output,
        "--verbose",
    ]
    print("$", " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, timeout=100)
    sys.stdout.write(result.stdout + result.stderr)
    check(
        result.returncode == 0,
        f"webcam.py exited with {result.returncode}",
    )
    check(
        os.path.isfile(output) and os.path.getsize(output) > 0,
        f"{output} was written",
    )
    frames, size = decoded_frames(output)
    print(f"{output}: {frames} frames, {size[0]}x{size[1]}")
    check(
        size == (2 * WIDTH, HEIGHT),
        f"size {size}, {(2 * WIDTH, HEIGHT)} expected",
    )
    # Live: the compositor may add or drop a frame at the edges.
    check(frames >= FRAMES // 2, f"{frames} frames, about {FRAMES} expected")


def main():
    Gst.init(None)
    missing = missing_elements(
        [
            "videotestsrc",
            "videoconvert",
            "videoscale",
            "tee",
            "compositor",
            "x264enc",
            "h264parse",
            "mp4mux",
            "qtdemux",
            "decodebin",
        ]
    )
    if missing:
        print(f"skipped: missing {', '.join(missing)}", file=sys.stderr)
        return 77

    with tempfile.TemporaryDirectory(prefix="webcam-") as tmp:
        record(os.path.join(tmp, "side-by-side.mp4"), [SCRIPT])
        # On a busy CPU the filtered branch's first frame, and its caps, can
        # reach the compositor after the first output frame: the recording
        # must keep its size and timestamps all the same.
        record(
            os.path.join(tmp, "late-branch.mp4"), ["-c", LATE_BRANCH, HERE]
        )
    print("OK")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (AssertionError, subprocess.TimeoutExpired) as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)

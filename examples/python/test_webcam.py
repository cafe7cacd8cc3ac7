#!/usr/bin/env python3
"""Test of webcam.py: record the side-by-side view headless, check the file.

Runs webcam.py on videotestsrc (a camera, where there is one, is left
alone) for 60 frames of 320x240 into an MP4, and checks that the file
decodes to frames twice as wide as the source.

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
        output = os.path.join(tmp, "side-by-side.mp4")
        command = [
            sys.executable,
            SCRIPT,
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
        ]
        print("$", " ".join(command), flush=True)
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=100
        )
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
        check(
            frames >= FRAMES // 2, f"{frames} frames, about {FRAMES} expected"
        )
    print("OK")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (AssertionError, subprocess.TimeoutExpired) as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)

#!/usr/bin/env python3
"""Test of webcam.py: record the side-by-side view headless, check the file.

Runs webcam.py on videotestsrc (a camera, where there is one, is left
alone) for 60 frames of 320x240 into an MP4, and checks that the file
decodes to frames twice as wide as the source. It records three times: as
is, and with the filtered branch or both branches held back at the start,
where a live compositor would otherwise begin at a size, format or rate of
its own and change it mid-stream.

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


# Runs webcam.py with frames and caps held back 400 ms from the first event
# on, as a slow start on a loaded machine does: those of the filtered
# branch ("branch"), or those of both, before the tee ("source").
HELD_BACK = r"""
import sys
import threading

sys.path.insert(0, sys.argv[1])
import webcam
from gi.repository import Gst


def hold(pad):
    timers = []

    def block(pad, info):
        if not timers:
            timers.append(threading.Timer(0.4, pad.remove_probe, [info.id]))
            timers[0].start()
        return Gst.PadProbeReturn.OK

    pad.add_probe(Gst.PadProbeType.BLOCK_DOWNSTREAM, block)


output_caps = []


def note_caps(pad, info):
    event = info.get_event()
    if event.type == Gst.EventType.CAPS:
        output_caps.append(event.parse_caps().to_string())
    return Gst.PadProbeReturn.OK


make = webcam.make


def watched_make(factory, **properties):
    element = make(factory, **properties)
    if factory == "tee" and sys.argv[2] == "source":
        hold(element.get_static_pad("sink"))
    if factory == "compositor":
        element.get_static_pad("src").add_probe(
            Gst.PadProbeType.EVENT_DOWNSTREAM, note_caps
        )
    return element


webcam.make = watched_make
if sys.argv[2] == "branch":
    filters = webcam.SideBySide.filters

    def late_filters(self):
        queue = webcam.make("queue")
        hold(queue.get_static_pad("src"))
        return [queue] + filters(self)

    webcam.SideBySide.filters = late_filters
status = webcam.main(sys.argv[3:])
if len(output_caps) != 1:
    # An encoder and an MP4 cannot follow a change of caps mid-stream.
    print("compositor output caps:", *output_caps, sep="\n  ")
    status = status or 1
sys.exit(status)
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
    shown = [SCRIPT] + command[len(program) + 1 :]
    if program[0] == "-c":
        shown.insert(1, f"(held back: {program[-1]})")
    print("$", " ".join(shown), flush=True)
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
        # On a busy CPU the first frames, and their caps, can reach the
        # compositor late, from one branch or from both: the recording must
        # keep its size, format, rate and timestamps all the same.
        for late in ("branch", "source"):
            record(
                os.path.join(tmp, f"late-{late}.mp4"),
                ["-c", HELD_BACK, HERE, late],
            )
    print("OK")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (AssertionError, subprocess.TimeoutExpired) as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)

#!/usr/bin/env python3
"""Test of filter_video.py: filter a small generated MP4, check the result.

Makes a 30-frame 320x240 MP4 with videotestsrc and x264enc, runs
filter_video.py on it with --equalize --denoise and with --clahe, and checks
that each output decodes to the same number of frames at the same size. Also
checks that a missing input file gives a clear message and a nonzero exit.

Run by ``meson test example-py-filter-video``; by hand::

    GST_PLUGIN_PATH=build/plugin examples/python/test_filter_video.py

Exit status: 0 passed, 1 failed, 77 skipped (PyGObject, an H.264 encoder,
decoder, parser or the MP4 elements missing).
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "scripts"))
from interpreter import ensure_gst  # noqa: E402

ensure_gst(["Gst"])
from gi.repository import Gst  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "filter_video.py")
FRAMES, WIDTH, HEIGHT = 30, 320, 240


# H.264 decoders decodebin may pick, software first. (Asking the registry
# for every decoder through PyGObject leaks a little, which the memory-checked
# test runs report.)
H264_DECODERS = [
    "avdec_h264",
    "openh264dec",
    "nvh264dec",
    "vah264dec",
    "vaapih264dec",
    "v4l2slh264dec",
    "v4l2h264dec",
    "msdkh264dec",
]


def missing_elements(factories):
    """Those of `factories`, and an H.264 decoder, that are missing."""
    missing = [f for f in factories if Gst.ElementFactory.find(f) is None]
    if not any(Gst.ElementFactory.find(f) for f in H264_DECODERS):
        missing.append("an H.264 decoder (avdec_h264)")
    return missing


def check(condition, what):
    """Fail the test with `what` unless `condition` holds."""
    if not condition:
        raise AssertionError(what)


def run_pipeline(description, timeout=60):
    """Run a pipeline to its end; raise with GStreamer's error message."""
    pipeline = Gst.parse_launch(description)
    try:
        pipeline.set_state(Gst.State.PLAYING)
        message = pipeline.get_bus().timed_pop_filtered(
            timeout * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR
        )
        if message is None:
            raise AssertionError(
                f"no end of stream within {timeout} s: {description}"
            )
        if message.type == Gst.MessageType.ERROR:
            raise AssertionError(
                f"{description}: {message.parse_error()[0].message}"
            )
    finally:
        pipeline.set_state(Gst.State.NULL)


def make_input(path):
    run_pipeline(
        f"videotestsrc num-buffers={FRAMES} pattern=ball ! "
        f"video/x-raw,format=I420,width={WIDTH},height={HEIGHT},"
        "framerate=30/1 ! "
        f"x264enc speed-preset=ultrafast ! mp4mux ! filesink location={path}"
    )


def decoded_frames(path):
    """Frame count and (width, height) of a video file, by decoding it."""
    pipeline = Gst.parse_launch(
        f"filesrc location={path} ! decodebin ! fakesink name=sink"
    )
    frames = 0
    size = None

    def count(pad, _info):
        nonlocal frames, size
        frames += 1
        if size is None:
            structure = pad.get_current_caps().get_structure(0)
            size = (
                structure.get_int("width")[1],
                structure.get_int("height")[1],
            )
        return Gst.PadProbeReturn.OK

    pipeline.get_by_name("sink").get_static_pad("sink").add_probe(
        Gst.PadProbeType.BUFFER, count
    )
    try:
        pipeline.set_state(Gst.State.PLAYING)
        message = pipeline.get_bus().timed_pop_filtered(
            60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR
        )
        if message is None or message.type == Gst.MessageType.ERROR:
            raise AssertionError(f"{path} does not decode")
    finally:
        pipeline.set_state(Gst.State.NULL)
    return frames, size


def filter_video(*args):
    """Run filter_video.py; its output is shown in the test log."""
    command = [sys.executable, SCRIPT, *args]
    print("$", " ".join(command), flush=True)
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=100
    )
    sys.stdout.write(result.stdout)
    sys.stdout.write(result.stderr)
    return result


def check_filtered(source, output, *options):
    result = filter_video(source, output, *options)
    check(
        result.returncode == 0,
        f"filter_video.py exited with {result.returncode}",
    )
    check(
        "memory -> filtering in" in result.stdout,
        "it says which memory kind it chose",
    )
    check(
        os.path.isfile(output) and os.path.getsize(output) > 0,
        f"{output} was written",
    )
    frames, size = decoded_frames(output)
    print(f"{output}: {frames} frames, {size[0]}x{size[1]}")
    check(frames == FRAMES, f"{frames} frames decoded, {FRAMES} expected")
    check(size == (WIDTH, HEIGHT), f"size {size}, {(WIDTH, HEIGHT)} expected")


def main():
    Gst.init(None)
    missing = missing_elements(
        [
            "videotestsrc",
            "videoconvert",
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

    with tempfile.TemporaryDirectory(prefix="filter-video-") as tmp:
        source = os.path.join(tmp, "input.mp4")
        make_input(source)
        check_filtered(
            source,
            os.path.join(tmp, "equalized.mp4"),
            "--equalize",
            "--denoise",
            "10",
        )
        check_filtered(source, os.path.join(tmp, "clahe.mp4"), "--clahe")

        result = filter_video(
            os.path.join(tmp, "absent.mp4"),
            os.path.join(tmp, "x.mp4"),
            "--equalize",
        )
        check(result.returncode == 1, "a missing input file fails")
        check("no such input file" in result.stderr, "with a clear message")

        # The input as output would be truncated while it is read.
        before = os.path.getsize(source)
        result = filter_video(source, source, "--equalize")
        check(result.returncode == 1, "the input as output fails")
        check("is the input" in result.stderr, "with a clear message")
        check(os.path.getsize(source) == before, "and the input is intact")

        # A smaller search window than the element's default, with a patch
        # that fits it, is used as given, in whatever order it is set.
        small = os.path.join(tmp, "small-window.mp4")
        result = filter_video(
            source, small, "--denoise", "5", "--patch-size", "3",
            "--search-size", "5",
        )
        check(result.returncode == 0, "a small window runs")
        check("refusing" not in result.stderr, "and is taken as given")

        # A value the element refuses (out of range) is an error, not a run
        # at the default.
        result = filter_video(
            source, os.path.join(tmp, "zero.mp4"), "--denoise", "0"
        )
        check(result.returncode == 1, "strength 0 fails")
        check("strength=0" in result.stderr, "with the value named")
    print("OK")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (AssertionError, subprocess.TimeoutExpired) as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        sys.exit(1)

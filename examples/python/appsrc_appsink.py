#!/usr/bin/env python3
"""Embed ``appsrc ! cudahisteq ! cudanlm ! appsink`` in a Python application.

Pushes low-contrast, noisy numpy frames, pulls the filtered frames back and
checks them with numpy: one output per input, same format and size,
timestamps kept, a much wider range of levels than the input (the
equalization), and a change of cudanlm's ``strength`` while PLAYING that
reads back and smooths the frames after it (the denoising).

Usage::

    GST_PLUGIN_PATH=build/plugin examples/python/appsrc_appsink.py \\
        [--frames N] [--width W] [--height H] [--format GRAY8|NV12] \\
        [--backend auto|cuda|cpu] [--strength H] [--new-strength H] \\
        [--patch-size N] [--search-size N]

It runs under the first python3 that has PyGObject and numpy: the one on
PATH, or else /usr/bin/python3, where Debian's packages are (it says so
when it switches). When none has them it names the interpreter and the
packages to install.

Exit status: 0 when every check passed, 1 on a failed check, a pipeline
error or missing modules. Without a GPU the elements run on the CPU and post a warning,
which is printed and is not a failure.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "scripts"))
from interpreter import ensure_gst  # noqa: E402

ensure_gst(["Gst", "GstApp", "GstVideo"], modules=["numpy"])
import numpy as np  # noqa: E402
from gi.repository import GLib, Gst, GstApp, GstVideo  # noqa: E402

SEED = 20240613


class CheckFailed(Exception):
    """A check of the output did not hold."""


class PipelineError(Exception):
    """The pipeline posted an error."""


def expect(condition, what):
    """Raise CheckFailed with `what` unless `condition` holds."""
    if not condition:
        raise CheckFailed(f"check failed: {what}")


def describe(message):
    """'element: text' and the debug details of an error or warning message."""
    if message.type == Gst.MessageType.ERROR:
        error, debug = message.parse_error()
    else:
        error, debug = message.parse_warning()
    text = f"{message.src.get_name()}: {error.message}"
    return f"{text}\n  {debug}" if debug else text


def drain_bus(bus):
    """Print warnings (the CPU fallback posts one); raise on an error.

    Called between frames: this application has no main loop on the bus.
    """
    while True:
        message = bus.pop_filtered(
            Gst.MessageType.ERROR | Gst.MessageType.WARNING
        )
        if message is None:
            return
        if message.type == Gst.MessageType.ERROR:
            raise PipelineError(f"pipeline error from {describe(message)}")
        print(f"warning from {describe(message)}", file=sys.stderr)


def make_luma(rng, width, height):
    """A gradient 30 levels wide with Gaussian noise: low contrast, noisy."""
    ramp = 110.0 + 30.0 * np.arange(width) / (width - 1)
    noisy = ramp[np.newaxis, :] + rng.normal(0.0, 3.0, (height, width))
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8)


def plane_rows(data, offset, stride, height):
    """The rows of a plane in a flat frame, as a (height, stride) view."""
    end = offset + stride * height
    return data[offset:end].reshape(height, stride)


def pack_frame(info, luma):
    """Lay out a luma plane and neutral chroma as `info` says."""
    data = np.full(info.size, 128, dtype=np.uint8)
    rows = plane_rows(data, info.offset[0], info.stride[0], info.height)
    rows[:, : info.width] = luma
    return data.tobytes()


def luma_of(sample):
    """The luma plane of a sample as a (height, width) array.

    The strides come from the buffer's GstVideoMeta when the element set one,
    otherwise from the caps' default layout.
    """
    info = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
    buffer = sample.get_buffer()
    meta = GstVideo.buffer_get_video_meta(buffer)
    stride = meta.stride[0] if meta else info.stride[0]
    offset = meta.offset[0] if meta else info.offset[0]
    ok, mapped = buffer.map(Gst.MapFlags.READ)
    expect(ok, "the output buffer can be mapped")
    try:
        data = np.frombuffer(mapped.data, dtype=np.uint8)
        rows = plane_rows(data, offset, stride, info.height)
        return rows[:, : info.width].copy()
    finally:
        buffer.unmap(mapped)


def spread(luma):
    """Levels a frame really uses: 1st to 99th percentile of the luma."""
    lo, hi = np.percentile(luma, [1, 99])
    return int(hi - lo)


def roughness(luma):
    """Mean absolute difference of horizontal neighbours: noise raises it."""
    return float(np.mean(np.abs(np.diff(luma.astype(np.int16), axis=1))))


def build_pipeline(args, info):
    # sync=false pulls frames as soon as they are filtered; a syncing sink
    # would also send QoS events, and filters drop late frames on a slow CPU.
    pipeline = Gst.parse_launch(
        "appsrc name=src is-live=true format=time ! "
        f"cudahisteq backend={args.backend} ! "
        f"cudanlm name=nlm auto-strength=false backend={args.backend} "
        f"patch-size={args.patch_size} "
        f"search-size={args.search_size} ! "
        "appsink name=sink sync=false"
    )
    src = pipeline.get_by_name("src")
    src.set_property("caps", info.to_caps())
    nlm = pipeline.get_by_name("nlm")
    nlm.set_property("strength", args.strength)
    expect(
        abs(nlm.get_property("strength") - args.strength) <= 1e-4 * max(1.0, args.strength),
        "cudanlm took the strength",
    )
    sink = pipeline.get_by_name("sink")
    # The typed classes give push_buffer, try_pull_sample and end_of_stream.
    expect(
        isinstance(src, GstApp.AppSrc) and isinstance(sink, GstApp.AppSink),
        "appsrc and appsink are GstApp elements",
    )
    return pipeline, src, nlm, sink


def run(args):
    info = GstVideo.VideoInfo()
    info.set_format(
        GstVideo.VideoFormat.from_string(args.format), args.width, args.height
    )
    info.fps_n, info.fps_d = args.fps, 1

    try:
        pipeline, src, nlm, sink = build_pipeline(args, info)
    except GLib.Error as error:
        raise PipelineError(
            f"cannot build the pipeline: {error.message} "
            "(is GST_PLUGIN_PATH set to the plugin's directory?)"
        )
    bus = pipeline.get_bus()
    try:
        if (
            pipeline.set_state(Gst.State.PLAYING)
            == Gst.StateChangeReturn.FAILURE
        ):
            drain_bus(bus)
            raise PipelineError("the pipeline refused to play")
        # No waiting for PLAYING here: with a live source the sink completes
        # the change when the first frame reaches it.
        stats = push_and_pull(args, info, pipeline, bus, src, nlm, sink)
        finish(bus, src)
    finally:
        pipeline.set_state(Gst.State.NULL)
    report(args, stats)


def push_and_pull(args, info, pipeline, bus, src, nlm, sink):
    """One frame in, one out; returns the (input, output) luma statistics.

    Going in lockstep makes the strength change fall exactly between two
    frames, so the frames before and after it can be compared.
    """
    print(
        f"playing {args.format} {args.width}x{args.height}, "
        f"{args.frames} frames, "
        f"strength {nlm.get_property('strength'):.1f}"
    )
    rng = np.random.default_rng(SEED)
    duration = Gst.util_uint64_scale(Gst.SECOND, 1, args.fps)
    change_at = args.frames // 2
    stats = []
    for i in range(args.frames):
        if i == change_at:
            change_strength(args, pipeline, nlm, i)
        luma = make_luma(rng, args.width, args.height)
        buffer = Gst.Buffer.new_wrapped(pack_frame(info, luma))
        buffer.pts = i * duration
        buffer.duration = duration
        expect(
            src.push_buffer(buffer) == Gst.FlowReturn.OK,
            f"appsrc accepts frame {i}",
        )

        sample = sink.try_pull_sample(30 * Gst.SECOND)
        drain_bus(bus)  # the reason, if nothing came out
        expect(sample is not None, f"frame {i} came out")
        check_sample(sample, info, buffer.pts, duration, i)
        out = luma_of(sample)
        stats.append((spread(luma), spread(out), roughness(out)))
    expect(len(stats) == args.frames, "as many frames out as in")
    return stats


def change_strength(args, pipeline, nlm, index):
    _, state, _ = pipeline.get_state(5 * Gst.SECOND)
    expect(
        state == Gst.State.PLAYING,
        "the pipeline is PLAYING when the strength changes",
    )
    nlm.set_property("strength", args.new_strength)
    now = nlm.get_property("strength")
    print(
        f"frame {index}: strength {args.strength:.1f} -> {now:.1f} "
        "while PLAYING"
    )
    # The property is a float: compare with float precision.
    expect(
        abs(now - args.new_strength) <= 1e-4 * max(1.0, args.new_strength),
        "cudanlm took the new strength",
    )


def check_sample(sample, info, pts, duration, index):
    out_info = GstVideo.VideoInfo.new_from_caps(sample.get_caps())
    expect(
        out_info.finfo.format == info.finfo.format
        and (out_info.width, out_info.height) == (info.width, info.height),
        "the output has the input's format and size",
    )
    buffer = sample.get_buffer()
    expect(
        buffer.get_size() >= out_info.size,
        "the output buffer holds a whole frame",
    )
    expect(buffer.pts == pts, f"frame {index} keeps its timestamp")
    expect(buffer.duration == duration, f"frame {index} keeps its duration")


def finish(bus, src):
    """Send end-of-stream and wait for it, so nothing is left in flight."""
    expect(
        src.end_of_stream() == Gst.FlowReturn.OK,
        "appsrc accepts the end of stream",
    )
    message = bus.timed_pop_filtered(
        10 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR
    )
    drain_bus(bus)
    if message is not None and message.type == Gst.MessageType.ERROR:
        raise PipelineError(f"pipeline error from {describe(message)}")
    expect(message is not None, "end of stream reached the bus within 10 s")


def report(args, stats):
    stats = np.array(stats)
    change_at = args.frames // 2
    in_spread, out_spread = int(stats[0, 0]), int(stats[0, 1])
    print(
        "levels used (1st to 99th percentile): "
        f"input {in_spread}, output {out_spread}"
    )
    expect(
        out_spread >= 3 * in_spread and out_spread >= 128,
        "the equalized output uses a much wider range of levels",
    )
    before = stats[:change_at, 2].mean()
    after = stats[change_at:, 2].mean()
    print(
        f"neighbour difference: {before:.2f} at strength {args.strength:.1f}, "
        f"{after:.2f} at {args.new_strength:.1f}"
    )
    if args.new_strength > args.strength:
        expect(
            after < 0.8 * before, "the stronger denoising smooths the frames"
        )
    print(
        f"OK: {args.frames} frames pushed, {len(stats)} pulled, "
        "all checks passed"
    )


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=240)
    parser.add_argument(
        "--format", type=str.upper, choices=["GRAY8", "NV12"], default="GRAY8"
    )
    parser.add_argument(
        "--backend", choices=["auto", "cuda", "cpu"], default="auto"
    )
    parser.add_argument(
        "--strength",
        type=float,
        default=3.0,
        help="cudanlm strength at the start (default 3)",
    )
    parser.add_argument(
        "--new-strength",
        type=float,
        default=20.0,
        help="strength set halfway, while PLAYING (default 20)",
    )
    parser.add_argument(
        "--patch-size",
        type=int,
        default=7,
        help="cudanlm patch-size (odd, default 7)",
    )
    parser.add_argument(
        "--search-size",
        type=int,
        default=21,
        help="cudanlm search-size (odd, default 21); smaller is cheaper",
    )
    parser.add_argument("--fps", type=int, default=30)
    args = parser.parse_args(argv)
    if (
        args.frames < 2
        or args.width < 16
        or args.height < 16
        or not 1 <= args.fps <= 1000
    ):
        parser.error("needs --frames >= 2, --width/--height >= 16, --fps 1 to 1000")
    for name in ("strength", "new_strength"):
        if not 0.1 <= getattr(args, name) <= 255:
            parser.error(f"--{name.replace('_', '-')} must be 0.1 to 255 (cudanlm's range)")
    for name, most in (("patch_size", 15), ("search_size", 35)):
        value = getattr(args, name)
        if not 1 <= value <= most or value % 2 == 0:
            parser.error(f"--{name.replace('_', '-')} must be odd, 1 to {most}")
    if args.patch_size > args.search_size:
        parser.error("--patch-size must not exceed --search-size")
    return args


def main(argv=None):
    args = parse_args(argv)
    Gst.init(None)
    try:
        run(args)
    except (CheckFailed, PipelineError) as failure:
        print(f"appsrc_appsink.py: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Show a camera's picture and the filtered picture side by side.

Usage::

    GST_PLUGIN_PATH=build/plugin examples/python/webcam.py [options]

    --source auto|camera|test   auto (default): a camera when one works,
                                otherwise videotestsrc is-live=true
    --device /dev/videoN        this V4L2 device
    --width W --height H        size of each half (default 640x480)
    --equalize histeq|clahe|none
                                equalization (default clahe)
    --denoise STRENGTH          cudanlm strength, 0 for none (default 5,
                                light: patch 5, search 11)
    --frames N                  stop after N frames (default: until Ctrl-C)
    --output FILE.mp4           write an MP4 instead of showing a window

The source is on the left, the filtered video on the right (``compositor``
with the second pad at xpos=W). With a display ($DISPLAY or
$WAYLAND_DISPLAY) and no --output it opens a window (autovideosink);
otherwise it writes an H.264 MP4 (x264enc), webcam.mp4 by default. Ctrl-C
ends the recording properly.

It runs under the first python3 that has PyGObject: the one on
PATH, or else /usr/bin/python3, where Debian's packages are (it says so
when it switches). When none has them it names the interpreter and the
packages to install.

Exit status: 0 on success, 1 on an error (missing modules too), 2 on bad
arguments.
"""

import argparse
import glob
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "scripts"))
from interpreter import ensure_gst  # noqa: E402

ensure_gst(["Gst"])
from gi.repository import GLib, Gst  # noqa: E402
from gst_elements import link_chain, make  # noqa: E402


def starts(element):
    """Whether a source element opens: a camera that is busy or is no
    capture device fails going to PAUSED (V4L2 opens the device on the way)."""
    ok = element.set_state(Gst.State.PAUSED) != Gst.StateChangeReturn.FAILURE
    element.set_state(Gst.State.NULL)
    return ok


def find_camera(device=None):
    """A working camera source element, or None.

    Asks GStreamer's device monitor for video sources first (V4L2, and
    PipeWire or libcamera where installed), then tries /dev/video* directly.
    """
    if device:
        candidates = [make("v4l2src", device=device)]
    else:
        monitor = Gst.DeviceMonitor.new()
        monitor.add_filter("Video/Source", Gst.Caps.from_string("video/x-raw"))
        candidates = []
        if monitor.start():
            candidates = [
                d.create_element(None) for d in monitor.get_devices()
            ]
            monitor.stop()
        if not candidates and Gst.ElementFactory.find("v4l2src"):
            candidates = [
                make("v4l2src", device=path)
                for path in sorted(glob.glob("/dev/video*"))
            ]
    for element in candidates:
        if element is not None and starts(element):
            return element
    return None


def have_display():
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class SideBySide:
    """source ! tee, one branch as is and one filtered, into a compositor."""

    def __init__(self, args):
        self.args = args
        self.loop = GLib.MainLoop()
        self.status = 0
        self.pipeline = Gst.Pipeline.new("webcam")

        source, kind = self.source()
        print(f"source: {kind}", flush=True)
        if args.frames:
            source.set_property("num-buffers", args.frames)
        # Every source is brought to one size and format, so that both halves
        # have the same size and the output is exactly twice as wide.
        size = (
            f"video/x-raw,format=I420,width={args.width},height={args.height}"
        )
        if kind == "videotestsrc":
            size += f",framerate={args.fps}/1"
        head = [
            source,
            make("videoconvert"),
            make("videoscale"),
            make("capsfilter", caps=Gst.Caps.from_string(size)),
            make("tee"),
        ]
        # The filters take time, the direct branch none: the compositor
        # waits this long for the filtered frame of the same instant. Its
        # clock starts at the first frame: started at zero, a live
        # compositor on a busy CPU can time out before any branch has caps,
        # and begin at a size, format and rate of its own choosing.
        compositor = make(
            "compositor",
            latency=args.latency * Gst.MSECOND,
            start_time_selection="first",
        )
        # Nor may it begin at the size of the branch that has caps first:
        # an encoder and an MP4 cannot follow a change mid-stream.
        both = (
            f"video/x-raw,format=I420,width={2 * args.width},"
            f"height={args.height}"
        )
        tail = [
            compositor,
            make("capsfilter", caps=Gst.Caps.from_string(both)),
            make("videoconvert"),
        ] + self.output()

        direct = [make("queue")]
        filtered = [make("queue")] + self.filters()
        for element in head + tail + direct + filtered:
            self.pipeline.add(element)
        link_chain(head)
        link_chain(tail)
        tee = head[-1]
        for xpos, branch in ((0, direct), (args.width, filtered)):
            tee.link(branch[0])
            link_chain(branch)
            pad = compositor.request_pad_simple("sink_%u")
            pad.set_property("xpos", xpos)
            branch[-1].get_static_pad("src").link(pad)

        bus = self.pipeline.get_bus()
        bus.add_signal_watch()
        bus.connect("message", self.on_message)

    def source(self):
        """The source element and a word saying what it is."""
        a = self.args
        if a.source != "test":
            camera = find_camera(a.device)
            if camera is not None:
                return camera, f"camera ({camera.get_factory().get_name()})"
            if a.source == "camera":
                raise RuntimeError(
                    "no working camera found"
                    + (f" at {a.device}" if a.device else "")
                )
            print("no working camera: using videotestsrc instead", flush=True)
        test = make("videotestsrc", is_live=True, pattern=a.pattern)
        if a.pattern == "ball":
            # A dim ball on a dark background: little contrast to equalize.
            test.set_property("background-color", 0xFF303030)
            test.set_property("foreground-color", 0xFF505050)
        return test, "videotestsrc"

    def filters(self):
        a = self.args
        elements = []
        if a.equalize == "clahe":
            elements.append(make("cudaclahe", backend=a.backend))
        elif a.equalize == "histeq":
            elements.append(make("cudahisteq", backend=a.backend))
        if a.denoise > 0:
            # Light: a small window keeps it real-time on the CPU path too.
            elements.append(
                make(
                    "cudanlm",
                    backend=a.backend,
                    auto_strength=False,
                    strength=a.denoise,
                    patch_size=5,
                    search_size=11,
                )
            )
        return elements or [make("identity")]

    def output(self):
        """A window, or an MP4 file."""
        if self.args.output is None and have_display():
            print("output: window (autovideosink)", flush=True)
            return [make("autovideosink")]
        path = self.args.output or "webcam.mp4"
        print(
            f"output: {path} ({2 * self.args.width}x{self.args.height})",
            flush=True,
        )
        # Fast settings keep up with a live source on few cores.
        return [
            make("x264enc", speed_preset="veryfast", tune="zerolatency"),
            make("h264parse"),
            make("mp4mux"),
            make("filesink", location=path),
        ]

    def on_message(self, _bus, message):
        if message.type == Gst.MessageType.EOS:
            print("done")
            self.loop.quit()
        elif message.type == Gst.MessageType.ERROR:
            error, debug = message.parse_error()
            print(
                f"webcam.py: error from {message.src.get_name()}: "
                f"{error.message}"
                + (f"\n  {debug}" if self.args.verbose and debug else ""),
                file=sys.stderr,
            )
            self.status = 1
            self.loop.quit()
        elif message.type == Gst.MessageType.WARNING:
            warning, _ = message.parse_warning()
            print(
                f"warning from {message.src.get_name()}: {warning.message}",
                file=sys.stderr,
            )

    def on_interrupt(self):
        """Ctrl-C: end the stream, so that an MP4 gets its index written."""
        print("\ninterrupted: stopping", file=sys.stderr)
        self.pipeline.send_event(Gst.Event.new_eos())
        return True

    def run(self):
        GLib.unix_signal_add(
            GLib.PRIORITY_DEFAULT, signal.SIGINT, self.on_interrupt
        )
        try:
            if (
                self.pipeline.set_state(Gst.State.PLAYING)
                == Gst.StateChangeReturn.FAILURE
            ):
                self.status = 1  # the reason is on the bus: the loop prints it
            self.loop.run()
        finally:
            self.pipeline.set_state(Gst.State.NULL)
            self.pipeline.get_bus().remove_signal_watch()
        return self.status


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Show a camera's picture and the filtered picture "
        "side by side."
    )
    parser.add_argument(
        "--source", choices=["auto", "camera", "test"], default="auto"
    )
    parser.add_argument("--device", help="V4L2 device, e.g. /dev/video0")
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument(
        "--fps", type=int, default=30, help="videotestsrc frame rate"
    )
    parser.add_argument(
        "--pattern",
        default="ball",
        help="videotestsrc pattern (default ball, in low contrast)",
    )
    parser.add_argument(
        "--equalize", choices=["clahe", "histeq", "none"], default="clahe"
    )
    parser.add_argument(
        "--denoise",
        type=float,
        default=5.0,
        metavar="STRENGTH",
        help="cudanlm strength, 0 for none (default 5)",
    )
    parser.add_argument(
        "--backend", choices=["auto", "cuda", "cpu"], default="auto"
    )
    parser.add_argument(
        "--latency",
        type=int,
        default=200,
        help="ms the compositor waits for filtered frames (default 200)",
    )
    parser.add_argument(
        "--frames", type=int, default=0, help="stop after N frames"
    )
    parser.add_argument(
        "--output", help="write this MP4 file instead of showing a window"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print GStreamer's debug details with errors",
    )
    args = parser.parse_args(argv)
    if (
        args.width < 16
        or args.height < 16
        or args.width % 2
        or args.height % 2
    ):
        parser.error("--width and --height must be even and at least 16")
    if args.device and args.source == "test":
        parser.error("--device goes with --source auto or camera")
    if not 1 <= args.fps <= 240:
        parser.error("--fps must be 1 to 240")
    if args.frames < 0:
        parser.error("--frames must be 0 (no end) or more")
    return args


def main(argv=None):
    args = parse_args(argv)
    Gst.init(None)
    try:
        side_by_side = SideBySide(args)
    except RuntimeError as error:
        print(f"webcam.py: error: {error}", file=sys.stderr)
        return 1
    return side_by_side.run()


if __name__ == "__main__":
    sys.exit(main())

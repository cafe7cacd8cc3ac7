#!/usr/bin/env python3
"""Equalize and/or denoise a video file and write an H.264 MP4.

Usage::

    export GST_PLUGIN_PATH=build/plugin
    examples/python/filter_video.py INPUT OUTPUT.mp4 \\
        [--equalize | --clahe] [--denoise STRENGTH] [options]

    --equalize            global histogram equalization (cudahisteq)
    --clahe               adaptive equalization (cudaclahe;
                          --clip-limit, --tiles)
    --denoise STRENGTH    non-local means with that strength h (cudanlm;
                          --noise-sigma, --patch-size, --search-size)
    --backend B           auto (default), cuda or cpu
    --bitrate KBITS       encoder bitrate in kbit/s (default 4000)

``decodebin`` decodes the input and picks the best decoder there is, a
hardware one such as nvh264dec included. When the decoded frames are in
CUDA memory (``memory:CUDAMemory``), they stay there through the filters and
into nvh264enc (or are downloaded once for x264enc); otherwise they are
converted to I420 in system memory. The choice is made from the decoder's
output caps, when decodebin adds its pad, and printed. A progress line
(percent, frames, frames per second) updates while it runs.

It runs under the first python3 that has PyGObject: the one on
PATH, or else /usr/bin/python3, where Debian's packages are (it says so
when it switches). When none has them it names the interpreter and the
packages to install.

Exit status: 0 on success, 1 on an error (missing input, pipeline error,
missing modules), 2 on bad arguments.
"""

import argparse
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "scripts"))
from interpreter import ensure_gst  # noqa: E402

ensure_gst(["Gst"])
from gi.repository import GLib, Gst  # noqa: E402
from gst_elements import link_chain, make  # noqa: E402

CUDA_FEATURE = "memory:CUDAMemory"
# What the filters take in each memory kind (the first plane is filtered).
CUDA_CAPS = (
    f"video/x-raw({CUDA_FEATURE}),format={{ (string)NV12, (string)I420 }}"
)
SYSTEM_CAPS = "video/x-raw,format=I420"
# Hardware H.264 encoders that take CUDA memory: the newer one first.
NV_ENCODERS = ["nvcudah264enc", "nvh264enc"]


def have(factory):
    return Gst.ElementFactory.find(factory) is not None


def caps_filter(caps):
    return make("capsfilter", caps=Gst.Caps.from_string(caps))


def cuda_path_possible(args):
    """Whether CUDA frames could be converted, filtered and downloaded."""
    return (
        args.backend != "cpu"
        and have("cudadownload")
        and (have("cudaconvert") or have("cudaconvertscale"))
    )



# cudanlm's default search-size: a patch may not exceed the search window at
# any moment, so the sizes are set in the order that keeps it so.
DEFAULT_SEARCH_SIZE = 21


def window_sizes(patch_size, search_size):
    """cudanlm's patch-size and search-size, in an order it takes."""
    if patch_size <= DEFAULT_SEARCH_SIZE:
        return {"patch-size": patch_size, "search-size": search_size}
    return {"search-size": search_size, "patch-size": patch_size}

class VideoFilter:
    """filesrc ! decodebin, then the branch that suits the decoder's output."""

    def __init__(self, args):
        self.args = args
        self.loop = GLib.MainLoop()
        self.status = 0
        self.reported = False
        self.linked = False
        self.frames = 0
        self.last_pts = Gst.CLOCK_TIME_NONE
        self.framerate = None
        self.started = None
        self.progress_shown = False

        # Fail now rather than when the first frame is decoded.
        needed = [
            "filesrc",
            "decodebin",
            "videoconvert",
            "x264enc",
            "h264parse",
            "mp4mux",
        ]
        needed += [factory for factory, _ in self.filter_specs()]
        for factory in needed:
            if not have(factory):
                raise RuntimeError(
                    f"GStreamer element '{factory}' is missing "
                    "(install its plugin, or set GST_PLUGIN_PATH)"
                )

        self.pipeline = Gst.Pipeline.new("filter-video")
        source = make("filesrc", location=args.input)
        decoder = make("decodebin")
        self.pipeline.add(source)
        self.pipeline.add(decoder)
        source.link(decoder)
        decoder.connect("autoplug-query", self.on_autoplug_query)
        decoder.connect("pad-added", self.on_pad_added)
        decoder.connect("no-more-pads", self.on_no_more_pads)

        bus = self.pipeline.get_bus()
        bus.add_signal_watch()
        bus.connect("message", self.on_message)

    # ---- Decoder side ----

    def on_autoplug_query(self, _decodebin, _pad, element, query):
        """Tell video decoders that CUDA memory is welcome downstream.

        Until decodebin exposes its pad nothing is linked to it, so a decoder
        asking what downstream accepts gets no answer and takes system
        memory. playbin answers for its sinks; here the application does,
        for video decoders only (parsers and audio decoders are left alone).
        """
        klass = element.get_metadata("klass") or ""
        if (
            "Decoder" not in klass
            or "Video" not in klass
            or not cuda_path_possible(self.args)
        ):
            return False
        accepted = Gst.Caps.from_string(
            f"video/x-raw({CUDA_FEATURE}); video/x-raw"
        )
        if query.type == Gst.QueryType.CAPS:
            wanted = query.parse_caps()
            if wanted is not None:
                accepted = wanted.intersect_full(
                    accepted, Gst.CapsIntersectMode.FIRST
                )
            query.set_caps_result(accepted)
            return True
        if query.type == Gst.QueryType.ACCEPT_CAPS:
            query.set_accept_caps_result(
                query.parse_accept_caps().can_intersect(accepted)
            )
            return True
        return False

    def on_pad_added(self, _decodebin, pad):
        """Link the first video stream to the branch for its memory kind.

        This runs in a streaming thread: failures go to the main loop.
        """
        try:
            self.link_video(pad)
        except RuntimeError as error:
            GLib.idle_add(self.fail, str(error))

    def link_video(self, pad):
        caps = pad.get_current_caps() or pad.query_caps(None)
        if (
            caps.is_empty()
            or not caps.get_structure(0).get_name().startswith("video/")
            or self.linked
        ):
            self.discard(pad)  # audio, subtitles, a second video stream
            return
        in_cuda = caps.get_features(0).contains(CUDA_FEATURE)
        structure = caps.get_structure(0)
        ok, num, den = structure.get_fraction("framerate")
        self.framerate = num / den if ok and num > 0 and den > 0 else None

        if in_cuda and cuda_path_possible(self.args):
            memory = "CUDA memory"
            elements = self.cuda_branch()
        else:
            memory = "system memory"
            # backend=cpu with a decoder in CUDA memory: download first.
            elements = (
                [make("cudadownload")] if in_cuda else []
            ) + self.system_branch()
        encoder = elements[-1]
        elements += [
            make("h264parse"),
            make("mp4mux"),
            make("filesink", location=self.args.output),
        ]
        width = structure.get_int("width")[1]
        height = structure.get_int("height")[1]
        print(
            f"decoded video: {structure.get_string('format')} "
            f"{width}x{height} in {'CUDA' if in_cuda else 'system'} memory "
            f"-> filtering in {memory}, "
            f"encoding with {encoder.get_factory().get_name()}",
            flush=True,
        )

        for element in elements:
            self.pipeline.add(element)
        link_chain(elements)
        encoder.get_static_pad("sink").add_probe(
            Gst.PadProbeType.BUFFER, self.count_frame
        )
        for element in elements:
            element.sync_state_with_parent()
        if (
            pad.link(elements[0].get_static_pad("sink"))
            != Gst.PadLinkReturn.OK
        ):
            raise RuntimeError(
                f"cannot link the decoder to the filters ({caps.to_string()})"
            )
        self.linked = True

    def on_no_more_pads(self, _decodebin):
        if not self.linked:
            GLib.idle_add(self.fail, "the input has no video stream")

    def discard(self, pad):
        sink = make("fakesink", sync=False)
        self.pipeline.add(sink)
        sink.sync_state_with_parent()
        pad.link(sink.get_static_pad("sink"))

    # ---- Branches ----

    def filter_specs(self):
        """(factory, properties) of the filters asked for, in order."""
        a = self.args
        specs = []
        if a.equalize:
            specs.append(("cudahisteq", {"backend": a.backend}))
        if a.clahe:
            specs.append(
                (
                    "cudaclahe",
                    {
                        "backend": a.backend,
                        "clip-limit": a.clip_limit,
                        "tiles-x": a.tiles,
                        "tiles-y": a.tiles,
                    },
                )
            )
        if a.denoise is not None:
            specs.append(
                (
                    "cudanlm",
                    {
                        "backend": a.backend,
                        "auto-strength": False,
                        "strength": a.denoise,
                        "noise-sigma": a.noise_sigma,
                        **window_sizes(a.patch_size, a.search_size),
                    },
                )
            )
        return specs

    def filters(self):
        return [
            make(factory, **properties)
            for factory, properties in self.filter_specs()
        ]

    def cuda_branch(self):
        """Convert in CUDA memory, filter there, encode from there."""
        convert = "cudaconvert" if have("cudaconvert") else "cudaconvertscale"
        head = (
            [make(convert), caps_filter(CUDA_CAPS)]
            + self.filters()
            + [make("queue")]
        )
        nv_encoder = next((f for f in NV_ENCODERS if have(f)), None)
        if nv_encoder:
            return head + [make(nv_encoder, bitrate=self.args.bitrate)]
        return head + [make("cudadownload"), self.x264()]

    def system_branch(self):
        return (
            [make("videoconvert"), caps_filter(SYSTEM_CAPS)]
            + self.filters()
            + [make("queue"), self.x264()]
        )

    def x264(self):
        return make(
            "x264enc", bitrate=self.args.bitrate, speed_preset="veryfast"
        )

    # ---- Progress ----

    def count_frame(self, _pad, info):
        buffer = info.get_buffer()
        self.frames += 1
        if buffer.pts != Gst.CLOCK_TIME_NONE:
            self.last_pts = buffer.pts
        if self.started is None:
            self.started = time.monotonic()
        return Gst.PadProbeReturn.OK

    def show_progress(self, final=False):
        ok, duration = self.pipeline.query_duration(Gst.Format.TIME)
        position_ok, position = self.pipeline.query_position(Gst.Format.TIME)
        # The sink's position may be unknown (filesink writes bytes): the
        # timestamp of the last frame to reach the encoder says as much.
        if not position_ok or position < 0:
            position = self.last_pts
        elapsed = time.monotonic() - self.started if self.started else 0.0
        fps = self.frames / elapsed if elapsed > 0 else 0.0
        parts = []
        if ok and duration > 0 and position != Gst.CLOCK_TIME_NONE:
            parts.append(f"{min(100.0, 100.0 * position / duration):5.1f}%")
        frames = f"{self.frames} frames"
        if ok and duration > 0 and self.framerate:
            total = round(duration / Gst.SECOND * self.framerate)
            frames = f"{self.frames}/{total} frames"
        parts += [frames, f"{fps:.1f} fps"]
        line = " | ".join(parts)
        if sys.stderr.isatty():
            print(
                f"\r{line}   ",
                end="\n" if final else "",
                file=sys.stderr,
                flush=True,
            )
        else:
            print(line, file=sys.stderr, flush=True)
        self.progress_shown = True
        return True  # keep the timer

    # ---- Bus and run ----

    def on_message(self, _bus, message):
        if message.type == Gst.MessageType.EOS:
            self.show_progress(final=True)
            print(f"wrote {self.args.output} ({self.frames} frames)")
            self.loop.quit()
        elif message.type == Gst.MessageType.ERROR:
            error, debug = message.parse_error()
            self.fail(
                f"{message.src.get_name()}: {error.message}"
                + (f"\n  {debug}" if self.args.verbose and debug else "")
            )
        elif message.type == Gst.MessageType.WARNING:
            warning, _ = message.parse_warning()
            self.newline_after_progress()
            print(
                f"warning from {message.src.get_name()}: {warning.message}",
                file=sys.stderr,
            )

    def newline_after_progress(self):
        if self.progress_shown and sys.stderr.isatty():
            print(file=sys.stderr)

    def fail(self, text):
        if self.reported:
            return False  # the first error is the one that says why
        self.reported = True
        self.newline_after_progress()
        print(f"filter_video.py: error: {text}", file=sys.stderr)
        self.status = 1
        self.loop.quit()
        return False  # as an idle callback: once

    def on_interrupt(self):
        """Ctrl-C: finish the file (mp4mux writes its index at EOS)."""
        self.newline_after_progress()
        print("interrupted: finishing the file", file=sys.stderr)
        self.pipeline.send_event(Gst.Event.new_eos())
        return True

    def run(self):
        GLib.unix_signal_add(
            GLib.PRIORITY_DEFAULT, signal.SIGINT, self.on_interrupt
        )
        GLib.timeout_add(
            500 if sys.stderr.isatty() else 1000, self.show_progress
        )
        try:
            if (
                self.pipeline.set_state(Gst.State.PLAYING)
                == Gst.StateChangeReturn.FAILURE
            ):
                # The reason is on the bus: run the loop to print it.
                self.status = 1
            self.loop.run()
        finally:
            self.pipeline.set_state(Gst.State.NULL)
            self.pipeline.get_bus().remove_signal_watch()
        return self.status


def odd(text):
    value = int(text)
    if value < 1 or value % 2 == 0:
        raise argparse.ArgumentTypeError("wants an odd number >= 1")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Equalize and/or denoise a video file "
        "and write an H.264 MP4."
    )
    parser.add_argument("input", help="any video file GStreamer can decode")
    parser.add_argument("output", help="the MP4 file to write")
    equalize = parser.add_mutually_exclusive_group()
    equalize.add_argument(
        "--equalize",
        action="store_true",
        help="global histogram equalization (cudahisteq)",
    )
    equalize.add_argument(
        "--clahe",
        action="store_true",
        help="contrast-limited adaptive equalization (cudaclahe)",
    )
    parser.add_argument(
        "--denoise",
        type=float,
        metavar="STRENGTH",
        help="non-local means denoising with strength h (cudanlm), e.g. 10",
    )
    parser.add_argument(
        "--clip-limit", type=float, default=2.0, help="cudaclahe clip-limit"
    )
    parser.add_argument(
        "--tiles", type=int, default=8, help="cudaclahe tiles-x and tiles-y"
    )
    parser.add_argument(
        "--noise-sigma", type=float, default=0.0, help="cudanlm noise-sigma"
    )
    parser.add_argument(
        "--patch-size", type=odd, default=7, help="cudanlm patch-size"
    )
    parser.add_argument(
        "--search-size", type=odd, default=21, help="cudanlm search-size"
    )
    parser.add_argument(
        "--backend", choices=["auto", "cuda", "cpu"], default="auto"
    )
    parser.add_argument(
        "--bitrate", type=int, default=4000, help="kbit/s (default 4000)"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print GStreamer's debug details with errors",
    )
    args = parser.parse_args(argv)
    if not (args.equalize or args.clahe or args.denoise is not None):
        parser.error(
            "choose a filter: --equalize or --clahe, and/or --denoise STRENGTH"
        )
    return args


def main(argv=None):
    args = parse_args(argv)
    if not os.path.isfile(args.input):
        print(
            f"filter_video.py: error: no such input file: {args.input}",
            file=sys.stderr,
        )
        return 1
    if os.path.exists(args.output) and os.path.samefile(
        args.input, args.output
    ):
        # filesink would truncate it while it is being read.
        print(
            f"filter_video.py: error: the output {args.output} is the input",
            file=sys.stderr,
        )
        return 1
    Gst.init(None)
    try:
        video_filter = VideoFilter(args)
    except RuntimeError as error:
        print(f"filter_video.py: error: {error}", file=sys.stderr)
        return 1
    return video_filter.run()


if __name__ == "__main__":
    sys.exit(main())

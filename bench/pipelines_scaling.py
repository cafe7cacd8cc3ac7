#!/usr/bin/env python3
"""Several pipelines at once: one per process, or all in one process.

Runs `gst-launch-1.0 SOURCE ! ELEMENT ! fakesink` as N processes at once,
or as one process whose pipeline has N independent branches (which share
one CUDA context), optionally under a private NVIDIA MPS daemon, and
reports for each case:

- the aggregate rate: the frames of all pipelines over the span from the
  first PLAYING to the last EOS (each gst-launch's "Execution ended after");
- the process CPU time (user + sys) per frame, counted from PLAYING to the
  end, so that loading the plugins and opening CUDA are left out.

    pipelines_scaling.py [--frames N] [--streams 1,8] [--elements LIST]
                         [--sources pool,pageable] [--ways process,branches]
                         [--mps] [--size 1920x1080] [--format NV12]
                         [--gst-launch PATH] [--json FILE]

Sources: `pool` is videotestsrc as it is (it takes the pool the element
proposes, page-locked where the element runs on the GPU); `pageable` puts
`identity drop-allocation=true` in front of the element, so videotestsrc
cycles the buffers of its own system-memory pool. Elements are launch-line
fragments separated by ';' (default: identity, cudahisteq, cudanlm and
cudahisteq backend=cpu). Needs only the standard library.
"""
import argparse
import json
import os
import re
import selectors
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_ELEMENTS = "identity;cudahisteq;cudanlm;cudahisteq backend=cpu"
ENDED = re.compile(r"Execution ended after (\d+):(\d+):(\d+(?:\.\d+)?)")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """user + sys of a running process, from /proc (None once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def branch(source, element, frames):
    return (f"videotestsrc num-buffers={frames} pattern=black ! {source} ! "
            f"{element} ! fakesink")


def launch_line(args, source, element, branches):
    caps = (f"video/x-raw,format={args.format},width={args.width},"
            f"height={args.height},framerate=0/1")
    if source == "pageable":
        caps += " ! identity drop-allocation=true"
    return " ".join(branch(caps, element, args.frames) for _ in range(branches))


def run_processes(args, lines, env):
    """Starts one gst-launch per line at once; returns per process
    (playing time, end time, cpu at playing, cpu at end, output)."""
    procs = []
    # gst-launch's messages go through stdio, fully buffered into a pipe:
    # without line buffering, "Setting pipeline to PLAYING" may only arrive
    # at the end, and the CPU time at PLAYING be read after the run.
    stdbuf = shutil.which("stdbuf")
    prefix = [stdbuf, "-oL"] if stdbuf else []
    for line in lines:
        p = subprocess.Popen(prefix + [args.gst_launch] + line.split(), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, env=env)
        procs.append({"p": p, "out": [], "playing": None, "cpu0": None,
                      "pending": b""})
    # Read every process's output as it comes (os.read: a buffered reader
    # would keep lines that select() no longer reports), noting when it goes
    # PLAYING.
    sel = selectors.DefaultSelector()
    for r in procs:
        sel.register(r["p"].stdout, selectors.EVENT_READ, r)
    open_streams = len(procs)
    deadline = time.monotonic() + args.timeout
    while open_streams:
        if time.monotonic() > deadline:
            for r in procs:
                r["p"].kill()
            raise RuntimeError("pipelines did not finish in time:\n" +
                               "".join(procs[0]["out"][-20:]))
        for key, _ in sel.select(timeout=1.0):
            r = key.data
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                open_streams -= 1
                if r["pending"]:
                    r["out"].append(r["pending"].decode(errors="replace"))
                continue
            *complete, r["pending"] = (r["pending"] + chunk).split(b"\n")
            for raw in complete:
                line = raw.decode(errors="replace") + "\n"
                r["out"].append(line)
                if r["playing"] is None and "Setting pipeline to PLAYING" in line:
                    r["playing"] = time.monotonic()
                    r["cpu0"] = cpu_seconds(r["p"].pid)
    results = []
    for r in procs:
        _, status, usage = os.wait4(r["p"].pid, 0)
        r["p"].returncode = os.waitstatus_to_exitcode(status)
        text = "".join(r["out"])
        m = ENDED.search(text)
        if r["p"].returncode != 0 or not m or r["playing"] is None:
            raise RuntimeError(f"gst-launch failed ({r['p'].returncode}):\n"
                               + text[-3000:])
        ran = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
        results.append({
            "playing": r["playing"], "ran": ran,
            "cpu": usage.ru_utime + usage.ru_stime - (r["cpu0"] or 0.0),
        })
    return results


class Mps:
    """A private MPS control daemon for the runs inside the block."""

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="mps-")
        self.env = dict(os.environ,
                        CUDA_MPS_PIPE_DIRECTORY=os.path.join(self.dir, "pipe"),
                        CUDA_MPS_LOG_DIRECTORY=os.path.join(self.dir, "log"))
        os.makedirs(self.env["CUDA_MPS_PIPE_DIRECTORY"])
        os.makedirs(self.env["CUDA_MPS_LOG_DIRECTORY"])
        subprocess.run(["nvidia-cuda-mps-control", "-d"], env=self.env,
                       check=True)
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", text=True,
                       env=self.env)
        time.sleep(1.0)
        shutil.rmtree(self.dir, ignore_errors=True)


def measure(args, source, element, streams, way, env, mps=False):
    if way == "process":
        lines = [launch_line(args, source, element, 1)] * streams
    else:
        lines = [launch_line(args, source, element, streams)]
    res = run_processes(args, lines, env)
    start = min(r["playing"] for r in res)
    # "Execution ended" counts from PLAYING; each process's end is its
    # PLAYING moment plus that time.
    end = max(r["playing"] + r["ran"] for r in res)
    frames = args.frames * streams
    return {
        "source": source, "element": element, "streams": streams, "way": way,
        "mps": mps,
        "fps": frames / (end - start),
        "cpu_ms_per_frame": 1e3 * sum(r["cpu"] for r in res) / frames,
        "span_s": end - start,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--streams", default="1,8")
    ap.add_argument("--elements", default=DEFAULT_ELEMENTS)
    ap.add_argument("--sources", default="pool,pageable")
    ap.add_argument("--ways", default="process,branches")
    ap.add_argument("--mps", action="store_true",
                    help="also run every multi-stream case under MPS")
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--format", default="NV12")
    ap.add_argument("--gst-launch", default="gst-launch-1.0")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--json")
    args = ap.parse_args()
    args.width, args.height = (int(v) for v in args.size.split("x"))
    rows = []
    print(f"{args.size} {args.format}, {args.frames} frames per pipeline, "
          f"{os.cpu_count()} CPUs", flush=True)
    print(f"{'source':9} {'element':26} {'N':>3} {'way':9} {'MPS':4} "
          f"{'fps':>9} {'CPU ms/frame':>13}", flush=True)

    def report(row):
        rows.append(row)
        print(f"{row['source']:9} {row['element']:26} {row['streams']:>3} "
              f"{row['way']:9} {'yes' if row['mps'] else 'no':4} "
              f"{row['fps']:9.1f} {row['cpu_ms_per_frame']:13.3f}",
              flush=True)

    streams = [int(s) for s in args.streams.split(",")]
    ways = args.ways.split(",")
    for source in args.sources.split(","):
        for element in args.elements.split(";"):
            for n in streams:
                for way in (ways if n > 1 else ["process"]):
                    report(measure(args, source, element, n, way, os.environ))
    if args.mps:
        with Mps() as mps:
            for source in args.sources.split(","):
                for element in args.elements.split(";"):
                    if "cuda" not in element or "backend=cpu" in element:
                        continue
                    for n in streams:
                        for way in (ways if n > 1 else ["process"]):
                            report(measure(args, source, element, n, way,
                                           mps.env, mps=True))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Times two builds' benches side by side, in the same run, and prints one
table: each row's median for every round of each build, and the change.

    scripts/compare-benches.py OLD_BUILD NEW_BUILD [--rounds N]
        [--benches nlm,histeq,clahe,sharpen] [--size 1080p] [--log FILE]
    scripts/compare-benches.py --from-log FILE

The builds run in ABBA order (old, new, new, old, ... for N rounds each),
so that neither always runs first: a GPU that warms up or a host that gets
busier shows in both. Each bench is `BUILD/bench/NAME_bench --size SIZE
--frames F` (20 frames for nlm, 300 for the others). --log keeps the
benches' own output, with a "== old|new NAME" line before each run; a log
so written (or by hand in that form) is read again with --from-log.

Only the standard library: it runs with whichever python3 comes first.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROW = re.compile(r"\s*(.*?)\s+(?:720p|1080p|4K|8K)\s+median\s+([\d.]+) us")
FRAMES = {"nlm": 20}


def parse(lines):
    """{(bench, row): {variant: [medians...]}} from a log of == headers."""
    table = {}
    variant = bench = None
    for line in lines:
        if line.startswith("== "):
            parts = line[3:].split()
            if len(parts) < 2:
                sys.exit(f"compare-benches.py: a header without a bench's name: {line.strip()!r}")
            variant, bench = parts[0], parts[1]
            continue
        m = ROW.match(line)
        if m and variant:
            table.setdefault((bench, m.group(1)), {}).setdefault(variant, []).append(
                float(m.group(2)))
    return table


def run(args):
    order = []
    for r in range(args.rounds):
        order += [("old", args.old), ("new", args.new)] if r % 2 == 0 else [
            ("new", args.new), ("old", args.old)]
    log = []
    for bench in args.benches.split(","):
        for variant, build in order:
            exe = f"{build}/bench/{bench}_bench"
            if not os.access(exe, os.X_OK):
                sys.exit(f"no {exe}: build the benches of both builds first")
            cmd = [exe, "--size", args.size, "--frames", str(FRAMES.get(bench, 300))]
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
            log.append(f"== {variant} {bench}\n")
            log += out.stdout.splitlines(keepends=True)
    if args.log:
        with open(args.log, "w") as f:
            f.writelines(log)
    return log


def report(table):
    print("| bench | row | old | new | change |")
    print("| --- | --- | ---: | ---: | ---: |")
    for (bench, row), v in table.items():
        old, new = v.get("old"), v.get("new")
        if not old or not new or "CPU" in row:
            continue
        change = statistics.median(new) / statistics.median(old) - 1
        fmt = lambda xs: ", ".join(f"{x:.1f}" for x in xs)
        print(f"| {bench} | {row} | {fmt(old)} | {fmt(new)} | {change * 100:+.1f} % |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old", nargs="?")
    p.add_argument("new", nargs="?")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--benches", default="nlm,histeq,clahe,sharpen")
    p.add_argument("--size", default="1080p")
    p.add_argument("--log")
    p.add_argument("--from-log")
    args = p.parse_args()
    if args.rounds < 1:
        p.error("--rounds must be 1 or more")
    if args.from_log:
        try:
            with open(args.from_log) as f:
                lines = f.readlines()
        except OSError as error:
            p.error(f"--from-log: {error.strerror}: {args.from_log}")
        # Logs of earlier runs name the new build "build".
        lines = [l.replace("== build ", "== new ") for l in lines]
    elif args.old and args.new:
        lines = run(args)
    else:
        p.error("two build directories, or --from-log FILE")
    report(parse(lines))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Instruction mix of the innermost loop holding a given instruction in each
kernel of an object file's SASS: a cheap check of what a kernel costs per
iteration before timing it (how many FFMA, MUFU, HMMA, LDS, ...).

    scripts/sass-loop-stats.py OBJECT [--kernel SUBSTRING] [--marker MUFU]

Needs cuobjdump (CUDA toolkit) on PATH or in /usr/local/cuda/bin.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
from collections import Counter


def cuobjdump():
    tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    if not os.path.exists(tool):
        sys.exit("cuobjdump not found")
    return tool


def opcode(text):
    words = text.split()
    if words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0]


def loops_of(instructions):
    """(first, last) indices of every backward branch's loop."""
    index = {addr: i for i, (addr, _) in enumerate(instructions)}
    for i, (addr, text) in enumerate(instructions):
        m = re.search(r"BRA.*?0x([0-9a-f]+)", text)
        if m and int(m.group(1), 16) <= addr and int(m.group(1), 16) in index:
            yield index[int(m.group(1), 16)], i


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("object")
    ap.add_argument("--kernel", default="")
    ap.add_argument("--marker", default="MUFU")
    ap.add_argument("--print", action="store_true", help="print the loop's instructions too")
    args = ap.parse_args()
    sass = subprocess.run([cuobjdump(), "-sass", args.object], check=True, capture_output=True,
                          text=True).stdout
    for func in re.split(r"\n\s+Function : ", sass)[1:]:
        name = func.split("\n")[0].strip()
        if args.kernel not in name:
            continue
        instructions = []
        for line in func.split("\n"):
            m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
            if m:
                instructions.append((int(m.group(1), 16), m.group(2)))
        inner = [(last - first + 1, first, last) for first, last in loops_of(instructions)
                 if any(args.marker in t for _, t in instructions[first:last + 1])]
        if not inner:
            continue
        n, first, last = min(inner)
        mix = Counter(opcode(t) for _, t in instructions[first:last + 1])
        print(f"{name}\n  innermost loop with {args.marker}: {n} instructions")
        print("  " + ", ".join(f"{op} {c}" for op, c in mix.most_common()))
        if args.print:
            for _, text in instructions[first:last + 1]:
                print("    " + text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Summarises a sampler.c profile: CPU time by thread group, and the
functions with the most inclusive and exclusive time in each group.

  profile.py SAMPLES --lib DIR [--lib DIR ...] [--group queue] [--top 40]
             [--from-s T] [--to-s T]

Addresses in modules found in a --lib directory are named from that file's
symbol table (`nm -C`), so static functions of the plugin show too; others
take the nearest exported symbol the process saw, marked ~ (right at an
API entry such as cuLaunchKernel, a guess inside a stripped library)."""
import argparse, bisect, collections, os, re, subprocess, sys

def symbols(path):
    """A file's full symbol table (static functions too); empty where it
    has none (a stripped library: its names then come from the process)."""
    out = subprocess.run(["nm", "-C", "--defined-only", "-n", path], capture_output=True,
                         text=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwWiI":
            addrs.append(int(parts[0], 16)); names.append(parts[2])
    return addrs, names

def group_of(thread):
    for g in ("queue", "qtdemux", "cuda-EvtHandlr", "multiqueue", "cuda"):
        if thread.startswith(g): return g
    return re.sub(r"\d+", "", thread)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("samples"); ap.add_argument("--lib", action="append", default=[])
    ap.add_argument("--group", default="queue"); ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--from-s", type=float, default=0); ap.add_argument("--to-s", type=float, default=1e9)
    a = ap.parse_args()
    files = {}
    for d in a.lib:
        for root, _, names in os.walk(d):
            for n in names:
                if ".so" in n or os.access(os.path.join(root, n), os.X_OK):
                    files.setdefault(n, os.path.join(root, n))
    tables, samples, where = {}, [], {}
    for line in open(a.samples):
        if line.startswith("S "):
            p = line.split()
            samples.append((float(p[1]), p[2], p[3:]))
        elif line.startswith("A "):
            _, addr, mod, off, sname = line.split(maxsplit=4)
            where[addr] = (mod, int(off, 16), sname.strip())
    def name(addr):
        if addr not in where: return "?"
        mod, off, sname = where[addr]
        if mod in files:
            if mod not in tables: tables[mod] = symbols(files[mod])
            addrs, names = tables[mod]
            i = bisect.bisect_right(addrs, off) - 1
            if i >= 0: return f"{names[i][:110]} [{mod}]"
        # The nearest exported symbol at or below the address: the function
        # itself at an API entry, some static function after it elsewhere.
        return f"~{sname} [{mod}]"
    t0 = samples[0][0] if samples else 0
    samples = [s for s in samples if a.from_s <= s[0] - t0 <= a.to_s]
    by_group = collections.Counter(group_of(t) for _, t, _ in samples)
    total = len(samples)
    print(f"{total} samples; by thread group:",
          ", ".join(f"{g} {n} ({100*n/total:.1f}%)" for g, n in by_group.most_common()))
    incl, excl = collections.Counter(), collections.Counter()
    cache = {}
    n = 0
    for _, t, stack in samples:
        if group_of(t) != a.group: continue
        n += 1
        frames = [cache.setdefault(x, name(x)) for x in stack[2:]]  # past the handler
        if frames: excl[frames[0]] += 1
        for f in set(frames): incl[f] += 1
    print(f"\n{a.group}: {n} samples. Inclusive:")
    for f, c in incl.most_common(a.top): print(f"{100*c/n:6.1f}%  {f}")
    print(f"\n{a.group}: exclusive:")
    for f, c in excl.most_common(a.top // 2): print(f"{100*c/n:6.1f}%  {f}")

if __name__ == "__main__":
    main()

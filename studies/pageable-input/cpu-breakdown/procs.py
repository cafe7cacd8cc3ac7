#!/usr/bin/env python3
"""N gst-launch processes of one line at once, run twice (F1 and F2 frames
each): CPU per frame as the difference of the two runs (start-up cancels),
in all (rusage) and by thread name (sampled from /proc every 20 ms), and
the phase timers' lines of the longer run, averaged over processes.
procs.py N F1 F2 'LINE with {F}'"""
import collections, os, re, resource, subprocess, sys, time

def run(n, frames, line):
    procs = [subprocess.Popen(["gst-launch-1.0", "-q"] + line.replace("{F}", str(frames)).split(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(n)]
    last = {}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    while any(p.poll() is None for p in procs):
        for p in procs:
            try:
                tids = os.listdir(f"/proc/{p.pid}/task")
            except OSError:
                continue
            for t in tids:
                try:
                    with open(f"/proc/{p.pid}/task/{t}/comm") as f: name = f.read().strip()
                    with open(f"/proc/{p.pid}/task/{t}/schedstat") as f: ns = int(f.read().split()[0])
                except (OSError, ValueError, IndexError):
                    continue
                last[(p.pid, t)] = (name, ns * 1e-9)
        time.sleep(0.02)
    wall = time.monotonic() - t0
    errs = [p.stderr.read().decode(errors="replace") for p in procs]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    groups = collections.Counter()
    for (_, _), (name, s) in last.items():
        groups["cuda (driver)" if name.startswith("cuda0") else re.sub(r"\d+$", "", name)] += s
    return wall, cpu, groups, errs, [p.returncode for p in procs]

n, f1, f2, line = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
w1, c1, g1, _, r1 = run(n, f1, line)
w2, c2, g2, errs, r2 = run(n, f2, line)
df = n * (f2 - f1)
print(f"N={n} x {f2} frames: rc {set(r1) | set(r2)}; {n * f2 / w2:.0f} fps over the longer run; "
      f"CPU {1e6 * (c2 - c1) / df:.1f} us per frame (difference of {f2} and {f1} frames)")
print("  by thread, us per frame:", ", ".join(
    f"{k} {1e6 * (g2[k] - g1.get(k, 0.0)) / df:.1f}" for k, _ in g2.most_common(8)))
acc = collections.defaultdict(lambda: [0.0, 0.0, 0])
for e in errs:
    for m in re.finditer(r"prof (\S+)\s+n=(\d+) wall ([\d.]+) us cpu ([\d.]+) us", e):
        a = acc[m.group(1)]; a[0] += float(m.group(3)); a[1] += float(m.group(4)); a[2] += int(m.group(2))
for k, (w, c, cnt) in acc.items():
    print(f"  {k:18s} {cnt / (n * f2):.2f} a frame: wall {w / n:.1f} us, cpu {c / n:.1f} us each")
bad = [e for e in errs if "ERROR" in e or "rror" in e]
if bad: print("stderr:", bad[0][-400:])

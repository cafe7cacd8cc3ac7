#!/usr/bin/env python3
"""Sums the CPU time per frame that multistream_bench logs per thread
("CPU ... us per frame; by thread: ...") by thread group: decoders
(qtdemux*), the elements' streaming threads (queue*), cuda-EvtHandlr.

  groups.py LOG [LOG ...]"""
import re, sys

for path in sys.argv[1:]:
    text = open(path).read()
    for m in re.finditer(r"cuda +(\w+) +N=(\d+).*?([\d.]+) fps.*?\n +CPU ([\d.]+) us per frame; "
                         r"by thread:(.*)", text):
        groups = {}
        for name, value in re.findall(r"(\S+) ([\d.]+)", m.group(5)):
            key = re.sub(r"\d+:.*", "", name)
            groups[key] = groups.get(key, 0) + float(value)
        parts = "  ".join(f"{k} {v:.1f}" for k, v in sorted(groups.items(), key=lambda x: -x[1])
                          if v >= 0.5)
        print(f"{path.split('/')[-1]:24} {m.group(1):9} N={m.group(2):3} {m.group(3):>7} fps  "
              f"total {m.group(4):>7}  {parts}")

#!/usr/bin/env python3
"""CPU time per frame of N decode pipelines (filesrc ! qtdemux ! h264parse !
nvh264dec ! queue ! ELEMENT ! fakesink) in one process, with the elements'
cuda-wait keep and blocking, from call1-27a7102.json (multistream_bench
--json). Writes cpu-per-stream.png here.

    python3 studies/cuda-wait/plot.py
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
from interpreter import ensure  # noqa: E402

ensure(["matplotlib"])
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
rows = [json.loads(line) for line in open(os.path.join(HERE, "call1-27a7102.json"))]
rows = [r for r in rows if "element" in r]
fig, ax = plt.subplots(figsize=(7, 4.2))
styles = {"keep": "--", "blocking": "-"}
colours = {"decode": "black", "histeq": "tab:blue", "nlm": "tab:red", "lowlight": "tab:green"}
names = {"decode": "decode alone", "histeq": "cudahisteq", "nlm": "cudanlm", "lowlight": "cudalowlight"}
for element in ("decode", "histeq", "nlm", "lowlight"):
    for wait in ("keep", "blocking"):
        sel = sorted((r for r in rows if r["element"] == element and
                      (r["cuda_wait"] == wait or element == "decode")), key=lambda r: r["streams"])
        if not sel or (element == "decode" and wait == "blocking"):
            continue
        label = names[element] + ("" if element == "decode" else f", cuda-wait={wait}")
        ax.plot([r["streams"] for r in sel], [r["cpu_us_per_frame"] / 1000 for r in sel],
                styles[wait], color=colours[element], marker="o", label=label)
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xticks([1, 8, 32])
ax.set_xticklabels(["1", "8", "32"])
ax.set_xlabel("streams (branches of one process)")
ax.set_ylabel("CPU time per frame (ms)")
ax.set_title("1080p H.264 through nvh264dec ! queue ! element, H200, 16 cores", fontsize=10)
ax.grid(True, which="both", alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(HERE, "cpu-per-stream.png"), dpi=110)

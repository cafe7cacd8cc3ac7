#!/usr/bin/env python3
"""Turns a benchmark results directory (scripts/run-benchmarks.sh) into a
Markdown page with tables and PNG plots.

    bench/report.py RESULTS_DIR --out docs/benchmarks.md [--plots docs/img]
                    [--cpu-results OTHER_DIR ...]

RESULTS_DIR holds the JSON-lines files of the benchmarks (element.json,
histeq.json, clahe.json, nlm.json, cpu.json, peers.json) and command.txt, the
command that made them. The CPU paths of RESULTS_DIR and of each OTHER_DIR
(another machine's run, CPU rows only) get a section each, next to OpenCV on
the same machine. Every number on the page comes from those files.
"""
import argparse
import json
import os

SIZES = ["720p", "1080p", "4K"]
# The CPU paths and the OpenCV function each one is measured against.
CPU_PEERS = [
    ("Histogram equalization", "equalize_hist_cpu", "equalizeHist", 3),
    ("CLAHE (clip 2, 8x8 tiles)", "ClaheCpu", "CLAHE", 3),
    ("NLM (h 10, patch 7, search 21)", "nlm_cpu", "NlMeans", 0),
]


def read_rows(directory):
    rows, machines = [], []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        for line in open(os.path.join(directory, name)):
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            r["file"] = name
            (machines if r.get("machine") or "gpu" in r and "what" not in r else rows).append(r)
    return rows, machines


def fmt_us(v):
    if v >= 10000:
        return f"{v / 1000:.1f} ms"
    if v >= 1000:
        return f"{v / 1000:.2f} ms"
    return f"{v:.1f} us"


def table(rows, title):
    # Rows at another size (the device bandwidth copy) go below the table.
    other = [r for r in rows if r["size"] not in SIZES]
    rows = [r for r in rows if r["size"] in SIZES]
    whats = []
    for r in rows:
        if r["what"] not in whats:
            whats.append(r["what"])
    by = {(r["what"], r["size"]): r for r in rows}
    sizes = [s for s in SIZES if any(r["size"] == s for r in rows)]
    out = [f"### {title}", "", "| | " + " | ".join(sizes) + " |",
           "| --- |" + " --- |" * len(sizes)]
    for w in whats:
        cells = []
        for s in sizes:
            r = by.get((w, s))
            cells.append("" if r is None else
                         f"{fmt_us(r['median_us'])} ({fmt_us(r['p10_us'])} to {fmt_us(r['p90_us'])})")
        out.append(f"| {w} | " + " | ".join(cells) + " |")
    out.append("")
    for r in other:
        rate = f", {r['bytes'] / (r['median_us'] * 1e3):.0f} GB/s" if r.get("bytes") else ""
        out += [f"{r['what']}, {r['size']}: {fmt_us(r['median_us'])} ({fmt_us(r['p10_us'])} to "
                f"{fmt_us(r['p90_us'])}){rate}.", ""]
    return out


def plot(rows, title, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    whats = []
    for r in rows:
        if r["what"] not in whats:
            whats.append(r["what"])
    sizes = [s for s in SIZES if any(r["size"] == s for r in rows)]
    by = {(r["what"], r["size"]): r for r in rows}
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(whats) * len(sizes) + 1.5))
    labels, values, lo, hi = [], [], [], []
    for w in whats:
        for s in sizes:
            r = by.get((w, s))
            if r is None:
                continue
            labels.append(f"{w} @ {s}")
            values.append(r["median_us"])
            lo.append(r["median_us"] - r["p10_us"])
            hi.append(r["p90_us"] - r["median_us"])
    y = range(len(labels))
    ax.barh(list(y), values, xerr=[lo, hi], color="#4c72b0")
    ax.set_yticks(list(y))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("time per frame, microseconds (log scale; bars: median, whiskers: p10 to p90)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cpu_section(directory, heading):
    """This plugin's CPU paths beside OpenCV on one machine (cpu.json, peers.json)."""
    rows, machines = read_rows(directory)
    cpu = next((m for m in machines if m.get("bench") == "cpu"), None)
    if cpu is None:
        return []
    peers = next((m for m in machines if m.get("bench") == "peers"), None)
    element = next((m for m in machines if m.get("bench") == "element"), None)
    model = cpu.get("cpu") or (element or {}).get("cpu", "CPU")
    lines = [f"### {model}, {cpu['hardware_threads']} hardware threads ({heading})", "",
             f"- This plugin: one shared pool of "
             f"{cpu['threads']} threads; NLM compiled for {cpu['nlm_isa']}.",
             f"- OpenCV {peers['opencv']} with {peers['opencv_threads']} threads (its default)."
             if peers else "- OpenCV: not measured on this machine.",
             f"- Command: `{open(os.path.join(directory, 'command.txt')).read().strip()}`"
             if os.path.exists(os.path.join(directory, "command.txt")) else "", ""]
    mem = {r["what"]: r for r in rows if r["file"] == "cpu.json" and r["what"].startswith("memory")}
    copy_rate = None
    for what, r in mem.items():
        rate = r["bytes"] / (r["median_us"] * 1e3)
        lines.append(f"- {what}, 1 GiB buffer: {rate:.1f} GB/s")
        if "copy" in what:
            copy_rate = rate
    lines += ["", "| | size | this plugin, CPU | OpenCV | OpenCV time / ours | floor (bytes at the copy rate) |",
              "| --- | --- | --- | --- | --- | --- |"]
    for label, ours_key, peer_key, bytes_per_px in CPU_PEERS:
        ours = [r for r in rows if r["file"] == "cpu.json" and r["what"].startswith(ours_key)]
        for r in ours:
            peer = next((p for p in rows if p["file"] == "peers.json" and peer_key in p["what"]
                         and p["width"] == r["width"] and p["height"] == r["height"]), None)
            floor = ""
            if bytes_per_px and copy_rate:
                floor = fmt_us(bytes_per_px * r["width"] * r["height"] / (copy_rate * 1e3))
            lines.append(f"| {label} | {r['size']} ({r['width']}x{r['height']}) | {fmt_us(r['median_us'])} | "
                         + (f"{fmt_us(peer['median_us'])} | {peer['median_us'] / r['median_us']:.2f}x"
                            if peer else " | ") + f" | {floor} |")
    lines += ["", "Equalization moves 3 bytes per pixel (the frame read twice, written once); the floor "
              "column is that at the machine's copy rate. Frames of a few MB stay in the last-level "
              "cache, so the real floor is lower still. NLM's floor is its arithmetic: see "
              "[cudanlm.md](cudanlm.md#cpu-path).", ""]
    return lines


def machine_lines(machines):
    out = []
    for m in machines:
        if m.get("bench") == "element":
            out.append(f"- GPU: {m['gpu']} (CUDA driver API {m['driver']}, runtime {m['runtime']}); "
                       f"CPU: {m['cpu']}, {m['cpus']} logical CPUs; {m['gstreamer']}; "
                       f"element backend: **{m['backend']}**")
        elif m.get("bench") == "peers":
            out.append(f"- OpenCV {m['opencv']} with {m['opencv_threads']} threads on {m['cpus']} CPUs")
        elif "gpu" in m:
            out.append(f"- {m['bench']}_bench: {m['gpu']}, {m['sms']} SMs, driver API {m['driver']}, "
                       f"runtime {m['runtime']}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--out", required=True)
    ap.add_argument("--plots", default=None)
    ap.add_argument("--cpu-results", nargs="*", default=[])
    args = ap.parse_args()

    rows, machines = read_rows(args.results)
    plots_dir = args.plots or os.path.join(os.path.dirname(args.out), "img")
    os.makedirs(plots_dir, exist_ok=True)
    cpu_only = any(m.get("bench") == "element" and m.get("backend") == "cpu" for m in machines)
    command = open(os.path.join(args.results, "command.txt")).read().strip() \
        if os.path.exists(os.path.join(args.results, "command.txt")) else "(not recorded)"

    lines = ["# Benchmarks", ""]
    if cpu_only:
        lines += ["**CPU-only run**: the elements ran with `backend=cpu` on a machine without a GPU. "
                  "These numbers say nothing about the GPU path: run `scripts/run-benchmarks.sh` on a "
                  "GPU machine for those. [cudahisteq.md](cudahisteq.md), [cudaclahe.md](cudaclahe.md) "
                  "and [cudanlm.md](cudanlm.md) hold the GPU-host measurements of the engines.", ""]
    results_rel = os.path.relpath(args.results, os.path.dirname(os.path.abspath(args.out)))
    lines += [f"Made by (results in [{results_rel}]({results_rel})):", "", "```", command, "```", "",
              "Machine:", ""] + machine_lines(machines) + [""]
    lines += ["Times are per frame: median after warm-up, with the 10th to 90th percentile in "
              "brackets. Frames are synthetic but textured (gradients, blocks and noise), four "
              "distinct frames rotated; the OpenCV rows run on the same frames.", ""]

    groups = [
        ("cudahisteq through GStreamer, and its peers",
         lambda r: r["file"] == "element.json" and ("cudahisteq" in r["what"] or "identity" in r["what"]
                                                    or "cvequalizehist" in r["what"])
         or r["file"] == "peers.json" and "equalizeHist" in r["what"], "histeq"),
        ("cudaclahe through GStreamer, and its peer",
         lambda r: r["file"] == "element.json" and "cudaclahe" in r["what"]
         or r["file"] == "peers.json" and "CLAHE" in r["what"], "clahe"),
        ("cudanlm through GStreamer, and its peer",
         lambda r: r["file"] == "element.json" and "cudanlm" in r["what"]
         or r["file"] == "peers.json" and "NlMeans" in r["what"], "nlm"),
        ("Histogram equalization engine: kernels, copies and floors",
         lambda r: r["file"] == "histeq.json", "histeq-engine"),
        ("CLAHE engine: kernels, copies and floors",
         lambda r: r["file"] == "clahe.json", "clahe-engine"),
        ("Non-local means engine: kernel",
         lambda r: r["file"] == "nlm.json", "nlm-engine"),
    ]
    for title, pick, slug in groups:
        sel = [r for r in rows if pick(r)]
        if not sel:
            continue
        lines += ["## " + title, ""] + table(sel, "Time per frame")
        png = os.path.join(plots_dir, f"bench-{slug}.png")
        plot(sel, title, png)
        rel = os.path.relpath(png, os.path.dirname(args.out))
        lines += [f"![{title}]({rel})", ""]

    cpu_dirs = [args.results] + args.cpu_results
    cpu_lines = []
    for d in cpu_dirs:
        rel = os.path.relpath(d, os.path.dirname(os.path.abspath(args.out)))
        cpu_lines += cpu_section(d, f"[{rel}]({rel})")
    if cpu_lines:
        lines += ["## CPU paths beside OpenCV", "",
                  "The engines' CPU paths alone (bench/cpu_bench: no GStreamer, no GPU), on the "
                  "frames the OpenCV rows use. Times are medians per frame.", ""] + cpu_lines

    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.out} and plots in {plots_dir}")


if __name__ == "__main__":
    main()

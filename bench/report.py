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

Plots (PNG, in --plots): one per table, with a panel per resolution in
which this plugin's rows and its peers' (OpenCV, GStreamer's identity, the
bare copies) are bars one below the other, coloured per implementation
(IMPL_COLOURS) on a logarithmic time axis; and one per CPU section, this
plugin's CPU path and OpenCV side by side at each size.
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
    ("Unsharp masking (amount 1, radius 1)", "SharpenCpu unsharp", "unsharp mask", 0),
    ("3x3 sharpening kernel", "SharpenCpu laplacian-3x3", "filter2D laplacian-3x3", 0),
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


# Colours per implementation, the same on every plot.
IMPL_COLOURS = [
    ("this plugin, GPU", "#1f77b4"),
    ("this plugin, CPU", "#2ca02c"),
    ("OpenCV (CPU)", "#d62728"),
    ("GStreamer alone (identity)", "#b0b0b0"),
    ("copies alone (floor)", "#6f6f6f"),
]


def implementation(r, backend):
    """Which implementation a row measures (the key of IMPL_COLOURS)."""
    what = r["what"]
    if r["file"] == "peers.json" or what.startswith("OpenCV") or "cvequalizehist" in what:
        return "OpenCV (CPU)"
    if what.startswith("identity"):
        return "GStreamer alone (identity)"
    if r["file"] == "element.json":
        return "this plugin, CPU" if backend == "cpu" or "[CPU backend]" in what else "this plugin, GPU"
    if r["file"] == "cpu.json" or what.startswith("CPU implementation"):
        return "this plugin, CPU"
    if any(k in what for k in ("h2d", "d2h", "d2d", "memory floor")) or what.startswith("memory"):
        return "copies alone (floor)"
    return "this plugin, GPU"


def fmt_time_axis(v, _pos=None):
    """Axis label of a time in microseconds: 1 µs, 10 µs, 1 ms, 1 s."""
    if v >= 1e6:
        return f"{v / 1e6:g} s"
    if v >= 1e3:
        return f"{v / 1e3:g} ms"
    return f"{v:g} µs"


def fmt_time_label(v):
    return fmt_us(v).replace(" us", " µs")


def plot(rows, title, path, backend=None):
    """One panel per resolution, this plugin's rows and its peers' as
    horizontal bars one below the other, coloured per implementation, on a
    shared logarithmic time axis."""
    import textwrap

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    rows = [r for r in rows if r["size"] in SIZES]
    whats = []
    for r in rows:
        if r["what"] not in whats:
            whats.append(r["what"])
    sizes = [s for s in SIZES if any(r["size"] == s for r in rows)]
    by = {(r["what"], r["size"]): r for r in rows}
    impl = {w: implementation(next(r for r in rows if r["what"] == w), backend) for w in whats}
    colours = dict(IMPL_COLOURS)

    lo = min(r["p10_us"] for r in rows)
    hi = max(r["p90_us"] for r in rows)
    fig, axes = plt.subplots(1, len(sizes), sharey=True, squeeze=False,
                             figsize=(3.2 * len(sizes) + 3.6, 0.3 * len(whats) + 1.9))
    axes = axes[0]
    y = list(range(len(whats)))
    for ax, s in zip(axes, sizes):
        for i, w in enumerate(whats):
            r = by.get((w, s))
            if r is None:  # not measured at this size: no bar
                continue
            ax.barh(i, r["median_us"], height=0.72, color=colours[impl[w]],
                    xerr=[[r["median_us"] - r["p10_us"]], [r["p90_us"] - r["median_us"]]],
                    error_kw={"elinewidth": 0.8, "capsize": 0, "ecolor": "black"})
            ax.text(r["p90_us"] * 1.12, i, fmt_time_label(r["median_us"]), va="center", fontsize=7)
        ax.set_xscale("log")
        ax.set_xlim(lo * 0.5, hi * 10)
        ax.xaxis.set_major_locator(LogLocator(base=10))
        ax.xaxis.set_major_formatter(FuncFormatter(fmt_time_axis))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", which="major", color="0.88", linewidth=0.8)
        ax.set_axisbelow(True)
        ax.set_title(s, fontsize=10)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    axes[0].set_yticks(y)
    axes[0].set_yticklabels([textwrap.fill(w, 48) for w in whats], fontsize=7.5)
    axes[0].invert_yaxis()
    present = [name for name, _ in IMPL_COLOURS if name in impl.values()]
    fig.legend(handles=[Patch(color=colours[n], label=n) for n in present], loc="lower center",
               ncol=len(present), fontsize=8, frameon=False)
    fig.suptitle(f"{title}\ntime per frame, log scale: bar = median, whisker = 10th to 90th "
                 "percentile (shorter is faster)", fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_cpu(pairs, title, path):
    """This plugin's CPU paths beside OpenCV on one machine: one panel per
    algorithm, the sizes along x, the two implementations side by side."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    labels = []
    for label, _, _ in pairs:
        if label not in labels:
            labels.append(label)
    colours = dict(IMPL_COLOURS)
    ours_c, peer_c = colours["this plugin, CPU"], colours["OpenCV (CPU)"]
    ncol = min(3, len(labels))
    nrow = -(-len(labels) // ncol)
    fig, axes = plt.subplots(nrow, ncol, squeeze=False, figsize=(3.6 * ncol, 3.3 * nrow + 0.6))
    for ax in axes.flat[len(labels):]:
        ax.set_visible(False)
    for ax, label in zip(axes.flat, labels):
        sel = [(r, p) for lab, r, p in pairs if lab == label]
        for i, (r, p) in enumerate(sel):
            for dx, v, c in ((-0.2, r, ours_c), (0.2, p, peer_c)):
                if v is None:
                    continue
                ax.bar(i + dx, v["median_us"], width=0.38, color=c)
                ax.text(i + dx, v["median_us"] * 1.15, fmt_time_label(v["median_us"]), ha="center",
                        va="bottom", fontsize=7, rotation=90)
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels([r["size"] + (f"\n{p['median_us'] / r['median_us']:.2f}x" if p else "")
                            for r, p in sel], fontsize=8)
        ax.set_xlabel("size; below it, OpenCV's time / ours", fontsize=7.5)
        values = [v["median_us"] for r, p in sel for v in (r, p) if v]
        ax.set_yscale("log")
        ax.set_ylim(min(values) * 0.4, max(values) * 8)
        ax.yaxis.set_major_locator(LogLocator(base=10))
        ax.yaxis.set_major_formatter(FuncFormatter(fmt_time_axis))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(axis="y", which="major", color="0.88", linewidth=0.8)
        ax.set_axisbelow(True)
        ax.set_title(label, fontsize=9.5)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    fig.legend(handles=[Patch(color=ours_c, label="this plugin, CPU path"),
                        Patch(color=peer_c, label="OpenCV")], loc="lower center", ncol=2,
               fontsize=8, frameon=False)
    fig.suptitle(f"{title}\nmedian time per frame, log scale (shorter is faster)", fontsize=10)
    fig.tight_layout(rect=(0, 0.06 / nrow, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def cpu_section(directory, heading, plots_dir=None, out=None):
    """This plugin's CPU paths beside OpenCV on one machine (cpu.json,
    peers.json). With plots_dir, also a plot of them there, linked from the
    page `out`."""
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
    pairs = []
    for label, ours_key, peer_key, bytes_per_px in CPU_PEERS:
        ours = [r for r in rows if r["file"] == "cpu.json" and r["what"].startswith(ours_key)]
        for r in ours:
            peer = next((p for p in rows if p["file"] == "peers.json" and peer_key in p["what"]
                         and p["width"] == r["width"] and p["height"] == r["height"]), None)
            pairs.append((label, r, peer))
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
    if plots_dir and pairs:
        png = os.path.join(plots_dir, f"bench-cpu-{os.path.basename(os.path.normpath(directory))}.png")
        plot_cpu(pairs, f"CPU paths beside OpenCV: {model}, {cpu['hardware_threads']} hardware threads",
                 png)
        rel = os.path.relpath(png, os.path.dirname(out))
        lines += [f"![CPU paths beside OpenCV, {model}]({rel})", ""]
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


KEEP_MARKER = "<!-- measured by hand: bench/report.py keeps what follows -->"


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
    backend = next((m.get("backend") for m in machines if m.get("bench") == "element"), None)
    cpu_only = backend == "cpu"
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
        ("cudasharpen through GStreamer, and its peers",
         lambda r: r["file"] == "element.json" and "cudasharpen" in r["what"]
         or r["file"] == "peers.json" and ("unsharp mask" in r["what"] or "filter2D" in r["what"]),
         "sharpen"),
        ("Histogram equalization engine: kernels, copies and floors",
         lambda r: r["file"] == "histeq.json", "histeq-engine"),
        ("CLAHE engine: kernels, copies and floors",
         lambda r: r["file"] == "clahe.json", "clahe-engine"),
        ("Non-local means engine: kernel",
         lambda r: r["file"] == "nlm.json", "nlm-engine"),
        ("Sharpening engine: kernels and copies",
         lambda r: r["file"] == "sharpen.json", "sharpen-engine"),
    ]
    for title, pick, slug in groups:
        sel = [r for r in rows if pick(r)]
        if not sel:
            continue
        lines += ["## " + title, ""] + table(sel, "Time per frame")
        png = os.path.join(plots_dir, f"bench-{slug}.png")
        plot(sel, title, png, backend)
        rel = os.path.relpath(png, os.path.dirname(args.out))
        lines += [f"![{title}]({rel})", ""]

    cpu_dirs = [args.results] + args.cpu_results
    cpu_lines = []
    for d in cpu_dirs:
        rel = os.path.relpath(d, os.path.dirname(os.path.abspath(args.out)))
        cpu_lines += cpu_section(d, f"[{rel}]({rel})", plots_dir, args.out)
    if cpu_lines:
        lines += ["## CPU paths beside OpenCV", "",
                  "The engines' CPU paths alone (bench/cpu_bench: no GStreamer, no GPU), on the "
                  "frames the OpenCV rows use. Times are medians per frame.", ""] + cpu_lines

    # Sections measured by hand (docs/benchmarks.md's "Pageable input") follow
    # KEEP_MARKER in the file being replaced, and are kept.
    kept = ""
    if os.path.exists(args.out):
        text = open(args.out).read()
        at = text.find(KEEP_MARKER)
        if at >= 0:
            kept = "\n" + text[at:]
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + kept)
    print(f"wrote {args.out} and plots in {plots_dir}")


if __name__ == "__main__":
    main()

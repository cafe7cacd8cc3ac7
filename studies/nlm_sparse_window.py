#!/usr/bin/env python3
"""cudanlm over fewer search offsets: does a sparser disk keep the quality?

The disk kernel's time is close to linear in the offsets it searches
(`nlm_bench`, 1080p luma, patch 7: 115.0 us at search 11, 341.1 at 21,
910.1 at 35: about 0.96 us an offset plus 37 us), so 230 us allows about
200 of today's 317. This study measures, with the model of
`nlm_fewer_weights.py` (pixelwise NLM, patch 7, borders mirrored), what
searching such a subset of the radius-10 disk costs in quality, on the same
cases (gray photos with Gaussian noise, held-out camera cases), each
variant at its best setting and at the disk's best setting:

  disk        today's: every offset within radius 10 (317);
  disk-r8     a smaller disk, radius 8 (197);
  rows        every offset within |dy| <= 2, and the rows of even dy beyond (197);
  checker     every offset within radius 5, and those of even dx + dy beyond (199).

    python3 studies/nlm_sparse_window.py --backend cupy --json sparse.json \\
        --photos .carry/photos --camera .carry/camera
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nlm_fewer_weights as nfw  # noqa: E402

R = nfw.SEARCH // 2


def in_disk(dy, dx, r=R):
    return dy * dy + dx * dx <= r * r


SPARSE = {
    "disk": lambda dy, dx: in_disk(dy, dx),
    "disk-r8": lambda dy, dx: in_disk(dy, dx, 8),
    "rows": lambda dy, dx: in_disk(dy, dx) and (abs(dy) <= 2 or dy % 2 == 0),
    "checker": lambda dy, dx: in_disk(dy, dx) and (in_disk(dy, dx, 5) or (dx + dy) % 2 == 0),
}


def offsets(variant):
    return [(dy, dx) for dy in range(-R, R + 1) for dx in range(-R, R + 1) if SPARSE[variant](dy, dx)]


def denoise_sparse(xp, frames, settings, centre=None, patch=nfw.PATCH, **_):
    """Pixelwise NLM of the frame at `centre` over each variant's offsets:
    {variant: K x C x H x W float32}, as nfw.denoise_variants."""
    f32 = xp.float32
    frames = nfw.as_frames(frames)
    nt, nc = len(frames), len(frames[0])
    centre = nt // 2 if centre is None else centre
    height, width = frames[0][0].shape
    k = len(settings)
    weights = nfw.OffsetWeights(xp, frames, settings, centre, patch, nfw.SEARCH)
    num = {v: xp.zeros((k, nc, height, width), f32) for v in SPARSE}
    den = {v: xp.zeros((k, height, width), f32) for v in SPARSE}
    tmp = xp.empty((k, height, width), f32)
    for t in [centre] + [t for t in range(nt) if t != centre]:
        for dy, dx in offsets("disk"):
            takers = [v for v in SPARSE if SPARSE[v](dy, dx)]
            wt, src = weights.at(t, dy, dx)
            for c in range(nc):
                xp.multiply(wt, src[c][None], out=tmp)
                for v in takers:
                    num[v][:, c] += tmp
            for v in takers:
                den[v] += wt
    return {v: num[v] / den[v][:, None] for v in SPARSE}


def case_outputs(xp, kind, frames, params, chroma_factors, denoise=denoise_sparse):
    return nfw.__dict__["_case_outputs"](xp, kind, frames, params, chroma_factors, denoise=denoise)


if __name__ == "__main__":
    nfw._case_outputs = nfw.case_outputs
    nfw.case_outputs = case_outputs
    nfw.VARIANTS = list(SPARSE)
    nfw.REFERENCE = "disk"
    nfw.weights_per_pixel = lambda v: len(offsets(v))
    for v in SPARSE:
        print(f"{v}: {len(offsets(v))} offsets", flush=True)
    nfw.main()

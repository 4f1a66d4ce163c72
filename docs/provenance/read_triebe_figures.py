"""Read Triebe & Rajagopal's figures off the authors' result plots, pixel by pixel.

Our copy of the paper lost its figures. The authors' repository
(github.com/ourownstory/federated_kmeans, commit e8e6f89fb3b7) holds ``results/stats_*.png``,
which the paper's PDF in the same repository embeds pixel for pixel as Figs 1-5. This script
reads the mean lines (test and training clients) at each setting's x tick against the y
ticks, and prints them; ``config/paper_targets.yaml`` (section ``fedkmeans``) holds the test
clients' values it printed, labelled "from the authors' result files".

Run it from the repository's ``results/`` folder (a checkout outside this repository; none
of its files are copied here)::

    python docs/provenance/read_triebe_figures.py [fig1 fig2a ...]

A value printed as ``above/below`` left the plot's frame at that tick. The ``sd`` lines are
the half-width of the test clients' shading (``fill_between`` of the mean ± one standard
deviation over the seeds, in the authors' ``clustering/utils_stats.plot_stats``) at the same
ticks, the mean of its extent above and below the line; ``*`` marks a tick where the shading
reaches the frame on one side (the other side's extent is used).
"""

import sys

import matplotlib.image as mpimg
import numpy as np

FILES = {
    "fig1": "results_stats_sample_fraction_E1_lrc1.png",
    "fig2a": "results_stats_sample_fraction_E10_lrc1.png",
    "fig2b": "results_stats_sample_fraction_E10_lrc0-1.png",
    "fig3a": "results_stats_sample_fraction_E5_lrc1.png",
    "fig3b": "results_stats_sample_fraction_E5_lrc0-2.png",
    "fig4a": "results_stats_epochs_per_round_C0-1_lrc1.png",
    "fig4b": "results_stats_epochs_per_round_C0-1_lrc0-1.png",
    "fig5a": "results_stats_epoch_lr_E1.png",
    "fig5b": "results_stats_epoch_lr_E10.png",
}
TICKS = {
    "fig4": ([0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25], [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5])
}
DEFAULT = ([0.1, 0.2, 0.3, 0.4, 0.5], [0.2, 0.4, 0.6, 0.8, 1.0])


def runs(mask):
    idx = np.flatnonzero(mask)
    if not len(idx):
        return []
    groups = np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1)
    return [(g[0], g[-1]) for g in groups]


def trace(mask, ticks, slope, icpt):
    """The line's row at every tick column, followed column by column from the first tick
    (or, when its column holds several runs, from the last): the run nearest the previous
    column's, so that the legend's sample line is never taken for the data."""

    def col_runs(c):
        return [((r0 + r1) / 2, r0, r1) for r0, r1 in runs(mask[:, c])]

    first, last = ticks[0], ticks[-1]
    cols = range(first, last + 1) if len(col_runs(first)) == 1 else range(last, first - 1, -1)
    prev, found = None, {}
    for c in cols:
        rs = col_runs(c)
        if rs:
            pick = rs[0] if prev is None else min(rs, key=lambda r: abs(r[0] - prev))
            if prev is None or abs(pick[0] - prev) < 60:
                prev = pick[0]
                if c in ticks:
                    found[c] = pick
                continue
        if c in ticks:
            found[c] = None  # the line leaves the frame here
    return [
        None
        if found.get(t) is None
        else (float(np.polyval([slope, icpt], found[t][0])), found[t][1], found[t][2])
        for t in ticks
    ]


def band_mask(a):
    """Pixels of the test clients' ±1 std shading (blue at alpha 0.2, alone or over the
    training clients' red at alpha 0.3, as the authors' plot_stats draws them) or of the test
    line itself."""
    r, g, b = a[..., 0], a[..., 1], a[..., 2]
    test_only = b - r >= 20
    overlap = (abs(r - 204) <= 14) & (g < 175) & (abs(b - 193) <= 14)
    return test_only | overlap


def half_width(mask, col, centre, top, bottom, gap=20):
    """Rows of the shading above and below row ``centre`` (the line's) at column ``col``,
    crossing up to ``gap`` rows of another line; ``None`` on a side that reaches the frame."""
    def extent(start, step, stop):
        row, last, misses = start, start, 0
        while row != stop:
            row += step
            if mask[row, col]:
                last, misses = row, 0
            else:
                misses += 1
                if misses > gap:
                    return abs(last - start)
        return None
    return extent(centre, -1, top + 1), extent(centre, +1, bottom - 1)


def read(name, verbose=False):
    a = (mpimg.imread(FILES[name])[..., :3] * 255).astype(int)
    H, W, _ = a.shape
    dark = a.sum(-1) < 150
    # spines: columns with long dark runs
    colsum = dark.sum(0)
    spine_cols = [c for c in range(W) if colsum[c] > 0.3 * H]
    left = [r for r in runs(np.isin(np.arange(W), spine_cols))]
    xl, xr = left[0][1], left[-1][0]  # inner edges of left and right spines
    # panels: rows where the row is dark between xl and xr
    rowfrac = dark[:, xl:xr].mean(1)
    hlines = runs(rowfrac > 0.9)
    assert len(hlines) == 4, hlines
    panels = [(hlines[0][1], hlines[1][0]), (hlines[2][1], hlines[3][0])]
    out = {}
    yt = TICKS.get(name[:4], DEFAULT)
    for p, (top, bottom) in enumerate(panels):
        # y ticks: dark pixels left of the left spine
        lspine = left[0][0]
        tick_rows = runs(
            dark[:, lspine - 12 : lspine - 2].all(1)
            & (np.arange(H) >= top - 8)
            & (np.arange(H) <= bottom + 8)
        )
        centers = np.array([(a0 + a1) / 2 for a0, a1 in tick_rows])
        vals = np.array(yt[p])[::-1]
        assert len(centers) == len(vals), (name, p, centers)
        slope, icpt = np.polyfit(centers, vals, 1)
        resid = np.abs(np.polyval([slope, icpt], centers) - vals).max()
        # x ticks below the bottom spine
        bspine_end = bottom + 1
        while dark[bspine_end, xl + 5]:
            bspine_end += 1
        xt = runs(dark[bspine_end + 2 : bspine_end + 10, xl:xr].all(0))
        xcent = [xl + (c0 + c1) / 2 for c0, c1 in xt]
        res = {}
        for split, (ci, co) in (("test", (2, (0, 1))), ("train", (0, (1, 2)))):
            m = (a[..., ci] > 200) & (a[..., co[0]] < 90) & (a[..., co[1]] < 90)
            m[: top + 1] = False
            m[bottom:] = False
            res[split] = trace(m, [int(round(x)) for x in xcent], slope, icpt)
        shade = band_mask(a)
        res["test_sd"] = []
        cols = [int(round(x)) for x in xcent]
        for i, (x, v) in enumerate(zip(cols, res["test"], strict=True)):
            if v is None:
                res["test_sd"].append(None)
                continue
            # the shading's polygon ends at the first and last tick, where its edge pixels
            # are blended: read those a few columns inside
            x += 4 if i == 0 else (-4 if i == len(cols) - 1 else 0)
            up, down = half_width(shade, x, int(round((v[1] + v[2]) / 2)), top, bottom)
            if verbose:
                print("   band px", x, up, down)
            sides = [d for d in (up, down) if d is not None]
            res["test_sd"].append(
                None if not sides else (float(np.mean(sides)) * abs(slope), up, down)
            )
        if verbose:
            print(
                name,
                p,
                "tick resid",
                resid,
                "px per unit",
                1 / abs(slope),
                "x ticks",
                len(xcent),
                "frame",
                top,
                bottom,
            )
        out["mean_distance" if p == 0 else "davies_bouldin"] = res
    return out


if __name__ == "__main__":
    for name in sys.argv[1:] or FILES:
        r = read(name, verbose=True)
        for metric, res in r.items():
            print(
                f"  {metric:15s} test :",
                " ".join("above/below" if v is None else f"{v[0]:.3f}" for v in res["test"]),
            )
            print(
                f"  {metric:15s} sd   :",
                " ".join(
                    "      ?" if v is None else f"{v[0]:.3f}{'' if None not in v[1:] else '*'}"
                    for v in res["test_sd"]
                ),
            )
            print(
                f"  {metric:15s} train:",
                " ".join("above/below" if v is None else f"{v[0]:.3f}" for v in res["train"]),
            )

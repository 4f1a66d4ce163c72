"""A code change's evidence at paper scale: two pipeline runs' tables side by side.

A change that moves the computed numbers in their last bits (float32 sums, BLAS forms) may go
into the paper profile when one coreset setting's 30 runs and one Table 2 cell give means
within one standard error of the bit-exact code's (issue 42). This script reads those tables
from two run directories of the paper profile -- ``--old``, made by the code before the
change, and ``--new``, where the same jobs were made again by the changed code (the same
seeds; everything else, the baselines included, copied from the old run) -- and writes, per
cell, each side's mean with its standard error, the paired difference (new minus old, run by
run) and whether the new mean lies within one old standard error:

    python benchmarks/code_change_means.py --old .paper-run --new /tmp/check-run \\
        --coreset n100/weighted --table2 n200_k2_kfed --change "float32 dots" \\
        --out seeding_float32_dots_means

Writes ``benchmarks/results/<--out>.{csv,md}``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import machine  # noqa: E402
from coreset_setting_means import comparison_cells, summary  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results"
CORESET = "results/coreset/kmeans/msd_mixture/{setting}"
TABLE2 = "results/kfed/table2/{cell}.csv"
#: A coreset setting's cells: every graph, construction, network and coreset size.
CORESET_KEYS = ("graph", "algorithm", "network", "coreset_size")


def coreset_runs(run: Path, setting: str) -> pd.DataFrame:
    """The cost ratios of a coreset setting's runs (its ``runs*.csv`` jobs) in ``run``."""
    paths = sorted((run / CORESET.format(setting=setting)).glob("runs*.csv"))
    if not paths:
        raise SystemExit(f"{run / CORESET.format(setting=setting)}: no runs*.csv")
    table = pd.concat([pd.read_csv(path) for path in paths], ignore_index=True)
    return table[table["metric"] == "cost_ratio"]


def table2_runs(run: Path, cell: str) -> pd.DataFrame:
    """Every run's final test accuracy of a Table 2 cell in ``run`` (``cell`` as the job's
    file: ``n200_k2_kfed``)."""
    path = run / TABLE2.format(cell=cell)
    if not path.is_file():
        raise SystemExit(f"{path}: no such table")
    table = pd.read_csv(path)
    final = table[(table["metric"] == "test_accuracy")
                  & (table["round"] == table["round"].max())]
    return final.assign(cell=cell)


def compare(old: pd.DataFrame, new: pd.DataFrame, labels: list[str], keys,
            metric: str) -> pd.DataFrame:
    """:func:`coreset_setting_means.summary` of the two sides' rows of ``metric``."""
    runs = pd.concat([old.assign(variant=labels[0]), new.assign(variant=labels[1])],
                     ignore_index=True)
    return summary(runs, labels, keys=keys, metric=metric)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the run before the change")
    parser.add_argument("--new", type=Path, required=True,
                        help="a copy of it whose compared jobs the changed code made again")
    parser.add_argument("--coreset", nargs="*", default=[], metavar="SETTING",
                        help="coreset settings, as their folder: n100/weighted")
    parser.add_argument("--table2", nargs="*", default=[], metavar="CELL",
                        help="Table 2 cells, as their job's file: n200_k2_kfed")
    parser.add_argument("--change", required=True, help="what the new side changed")
    parser.add_argument("--old-label", default="bit-exact")
    parser.add_argument("--out", required=True, help="name of the tables under benchmarks/results/")
    args = parser.parse_args(argv)
    labels = [args.old_label, args.change]
    parts = []
    for setting in args.coreset:
        part = compare(coreset_runs(args.old, setting), coreset_runs(args.new, setting),
                       labels, CORESET_KEYS, "cost_ratio")
        parts.append(part.assign(table=f"coreset {setting}", quantity="cost ratio"))
    for cell in args.table2:
        part = compare(table2_runs(args.old, cell), table2_runs(args.new, cell), labels,
                       ("cell",), "test_accuracy")
        parts.append(part.assign(table=f"Table 2 {cell}", quantity="final test accuracy"))
    if not parts:
        parser.error("name at least one --coreset setting or --table2 cell")
    table = pd.concat(parts, ignore_index=True)
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / f"{args.out}.csv", index=False)
    command = " ".join(["python benchmarks/code_change_means.py", *(sys.argv[1:] if argv is None
                                                                     else argv)])
    lines = [f"# {args.change} against the {args.old_label} code at paper scale", "",
             f"Machine: {machine()}. Old: the jobs of `{args.old}`; new: the same jobs made "
             f"again by the changed code in a copy of it (the same seeds, every other file "
             f"the old run's). Mean ± standard error over the runs; the difference is new "
             f"minus old, run by run. Command: `{command}`.", "",
             "| table | cell | quantity | runs | old | new | difference | new mean within one "
             "old SE |", "|---|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        cell = r.cell if isinstance(getattr(r, "cell", None), str) else \
            f"{r.graph}, {r.algorithm} ({r.network}), t = {int(r.coreset_size)}"
        lines.append(f"| {r.table} | {cell} | {r.quantity} | {r.runs} | "
                     f"{comparison_cells(r)} |")
    lines += ["", f"{int(table.within_one_se.sum())} of {len(table)} cells within one standard "
              "error of the old mean."]
    (OUT / f"{args.out}.md").write_text("\n".join(lines) + "\n")
    print((OUT / f"{args.out}.md").read_text())


if __name__ == "__main__":
    main()

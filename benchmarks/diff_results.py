"""Compare the result tables of two runs of the pipeline (e.g. before and after a refactor).

    python benchmarks/diff_results.py BEFORE_RUN_DIR AFTER_RUN_DIR

Every CSV under ``results/`` of both (logs and benchmark files left out): timing columns and
metrics are dropped, the schema renames of issue 27 (federated k-means' natural-client runs:
``setting`` -> ``variant``, ``k-fed`` -> ``kfed``, ``federated_kmeans`` -> ``fedkmeans``; the
participation table's ``floats_up`` -> ``floats_up_in_round``, where AFTER has the new name
and BEFORE not) are applied to BEFORE, then the
tables are compared on their common columns and metrics, values as written (strings); columns,
metrics and files only one side has are listed.
"""
import sys
from pathlib import Path

import pandas as pd

TIMING = {"wall_s", "peak_mb", "seconds", "wall_seconds", "fit_seconds", "time_s"}
RENAMED_VALUES = {"algorithm": {"k-fed": "kfed", "federated_kmeans": "fedkmeans"}}


def load(path):
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def renamed(rel, df, after):
    """BEFORE's table ``df`` in the schema of AFTER's ``after``, for issue 27's renames."""
    if rel == "fedkmeans/real.csv" or rel.startswith("fedkmeans/real/"):
        df = df.rename(columns={"setting": "variant"})
        df["algorithm"] = df["algorithm"].replace(RENAMED_VALUES["algorithm"])
    # the participation table later gained a new floats_up beside floats_up_in_round: rename
    # only a run from before issue 27
    if rel.startswith("kfed/participation") and "metric" in df and "metric" in after \
            and "floats_up_in_round" in set(after["metric"]) - set(df["metric"]):
        df.loc[df["metric"] == "floats_up", "metric"] = "floats_up_in_round"
    return df


def main(before, after):
    before, after = Path(before) / "results", Path(after) / "results"
    skip = ("benchmarks/", "logs/")
    files_b = {p.relative_to(before).as_posix() for p in before.rglob("*.csv")}
    files_a = {p.relative_to(after).as_posix() for p in after.rglob("*.csv")}
    files_b = {f for f in files_b if not f.startswith(skip)}
    files_a = {f for f in files_a if not f.startswith(skip)}
    print("only before:", sorted(files_b - files_a))
    print("only after:", sorted(files_a - files_b))
    same = differ = 0
    for rel in sorted(files_b & files_a):
        a = load(after / rel)
        b = renamed(rel, load(before / rel), a)
        notes = []
        cols = [c for c in b.columns if c in a.columns and c not in TIMING]
        if set(b.columns) ^ set(a.columns):
            notes.append(f"columns only before {sorted(set(b.columns) - set(a.columns))}, "
                         f"only after {sorted(set(a.columns) - set(b.columns))}")
        if "metric" in cols:
            mb, ma = set(b["metric"]), set(a["metric"])
            if mb ^ ma:
                notes.append(f"metrics only before {sorted(mb - ma)}, only after {sorted(ma - mb)}")
            keep = (mb & ma) - TIMING
            b, a = b[b["metric"].isin(keep)], a[a["metric"].isin(keep)]
        b = b[cols].sort_values(cols).reset_index(drop=True)
        a = a[cols].sort_values(cols).reset_index(drop=True)
        if b.equals(a):
            same += 1
            if notes:
                print(f"SAME values  {rel}: " + "; ".join(notes))
        else:
            differ += 1
            merged = b.merge(a, how="outer", indicator=True)
            print(f"DIFFERENT    {rel}: {len(b)} vs {len(a)} rows, "
                  f"{(merged['_merge'] != 'both').sum()} rows on one side only; "
                  + "; ".join(notes))
    print(f"{same} tables equal on their common columns and metrics, {differ} differ")


if __name__ == "__main__":
    main(*sys.argv[1:3])

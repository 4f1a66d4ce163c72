"""The first fit in a fresh environment, with and without compiling the kernels ahead.

For every estimator, in new processes with an empty numba cache (``NUMBA_CACHE_DIR`` a new
folder, as after ``pip install``): the first fit with its defaults on 20,000 x 20 rows over 10
devices (k = 10), which compiles what it calls; then, in another empty cache,
``python -m fedclust.compile --estimators NAME`` and the same first fit in a new process.
Import time is not counted.

    python benchmarks/first_fit.py

Writes ``benchmarks/results/first_fit.{csv,md}``.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernel import machine  # noqa: E402

from fedclust.compile import WARM_UP_ESTIMATORS  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"

FIT = r"""
import json, sys, time, warnings
import numpy as np
import fedclust
rng = np.random.default_rng(0)
X = rng.normal(size=(20000, 20))
warnings.simplefilter("ignore")
start = time.perf_counter()
getattr(fedclust, sys.argv[1])(10, random_state=0).fit(X, devices=np.arange(20000) % 10)
print(json.dumps({"fit_s": time.perf_counter() - start}))
"""


def _first_fit(name: str, env: dict) -> float:
    done = subprocess.run([sys.executable, "-c", FIT, name], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["fit_s"]


def main() -> None:
    rows = []
    for name in WARM_UP_ESTIMATORS:
        with tempfile.TemporaryDirectory() as cold, tempfile.TemporaryDirectory() as warm:
            cold_s = _first_fit(name, {**os.environ, "NUMBA_CACHE_DIR": cold})
            env = {**os.environ, "NUMBA_CACHE_DIR": warm}
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "fedclust.compile", "--estimators", name],
                           env=env, check=True, capture_output=True)
            compile_s = time.perf_counter() - start
            warm_s = _first_fit(name, env)
        rows.append({"estimator": name, "first_fit_empty_cache_s": cold_s,
                     "compile_ahead_s": compile_s, "first_fit_after_compile_s": warm_s})
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    OUT.mkdir(exist_ok=True)
    table.to_csv(OUT / "first_fit.csv", index=False)
    lines = ["# The first fit in a fresh environment", "",
             f"Machine: {machine()}; {datetime.date.today()}. Command: "
             "`python benchmarks/first_fit.py`. Each estimator's defaults, `fit` on 20,000 x 20 "
             "rows over 10 devices (k = 10) in a new process with an empty numba cache, then "
             "`python -m fedclust.compile --estimators NAME` in another empty cache and the "
             "same fit in a new process (import not counted).", "",
             "| estimator | first fit, empty cache (s) | compile ahead (s) | "
             "first fit after it (s) |", "|---|---|---|---|"]
    lines += [f"| {r.estimator} | {r.first_fit_empty_cache_s:.1f} | {r.compile_ahead_s:.0f} | "
              f"{r.first_fit_after_compile_s:.2f} |" for r in table.itertuples()]
    (OUT / "first_fit.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

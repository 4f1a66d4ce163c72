"""The pipeline itself: lint, dry runs, what a user sees when something is wrong, and the quick
profile for real."""

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fedclust.data import MNIST_FILES
from fedclust.pipeline import OUTPUT_FOLDERS, workdir

from .conftest import REPO, profile_config

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def copy_workflow(dest):
    """The workflow as an installed clone has it, in ``dest``
    (:func:`fedclust.pipeline.workdir.copy_workflow`)."""
    return workdir.copy_workflow(REPO, dest)


def md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


def run(args, cwd, timeout=1800, *, ok=True, umask=None):
    env = dict(os.environ, PYTHONHASHSEED="0")
    result = subprocess.run(SNAKEMAKE + args, cwd=cwd, capture_output=True, text=True,
                            timeout=timeout, env=env,
                            preexec_fn=None if umask is None else (lambda: os.umask(umask)))
    if ok:
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    else:
        assert result.returncode != 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result


def test_lint_is_clean(tmp_path):
    result = run(["--lint"], copy_workflow(tmp_path))
    assert "Congratulations" in result.stdout + result.stderr
    # formatted as snakefmt writes it (line length from pyproject.toml), and no lambda in a
    # rule: every input function is named, in workflow/rules/input_functions.smk
    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk")),
             *sorted((REPO / "src" / "fedclust" / "papers").glob("*/rules.smk"))]
    assert len(files) == 1 + 5 + 5
    check = subprocess.run([sys.executable, "-m", "snakefmt", "--check",
                            *map(str, files)], cwd=REPO, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    lambdas = [f"{path.name}:{n}" for path in files
               for n, line in enumerate(path.read_text().splitlines(), 1)
               if re.search(r"\blambda\b[^:]*:", line) and not line.lstrip().startswith("#")]
    assert not lambdas, f"lambdas in rules (name the input function instead): {lambdas}"


@pytest.mark.parametrize("extra", [[], ["--configfile", "config/ci.yaml"]])
def test_dry_run_on_a_fresh_copy(tmp_path, extra):
    result = run(["-n", "--cores", "2", *extra], copy_workflow(tmp_path))
    assert "fetch_mnist" in result.stdout and "reproduction" in result.stdout
    # without a mirror, Postures comes from UCI's archive
    assert "data/postures/raw/Postures.csv" in result.stdout
    # plain `snakemake` applies the local profile by itself
    assert "workflow specific profile profiles/default" in result.stderr
    # every job asks for the memory it uses (measured, in its rule), so that a scheduler --
    # `--resources mem_mb=...` locally, SLURM with the slurm profile -- gets honest requests
    jobs = re.findall(r"(?ms)^rule (\w+):\n(.*?)(?=^\S|\Z)", result.stdout)
    without = sorted({rule for rule, body in jobs
                      if rule != "all" and not re.search(r"mem_mb=\d+", body)})
    assert jobs and not without, f"rules without resources: mem_mb: {without}"
    # the README's job count of this profile is this dry run's (rerun
    # `python benchmarks/profiles.py --readme` after adding or removing jobs)
    total = int(re.search(r"^total\s+(\d+)\s*$", result.stdout, re.M).group(1))
    profile = "quick" if extra else "paper"
    stated = re.search(rf"^\| {profile} profile.*?\| ([\d,]+) jobs", (REPO / "README.md")
                       .read_text(), re.M)
    assert stated and int(stated.group(1).replace(",", "")) == total, (
        f"README.md's measured table: {profile} profile has {total} jobs; run "
        f"`python benchmarks/profiles.py --readme`")


def test_year_prediction_is_selectable_for_the_coreset_figures(tmp_path):
    result = run(["-n", "--cores", "2", "--configfile", "config/ci.yaml", "--config",
                  "coreset={datasets: [year_prediction], kmedian: {datasets: []}, "
                  "diameter: {datasets: []}}", "--", "results/coreset/claims.csv"],
                 copy_workflow(tmp_path))
    assert "fetch_year_prediction" in result.stdout
    assert "data/year_prediction/features.h5" in result.stdout


def test_table2_batched_is_one_job_for_every_cell_and_run(tmp_path):
    # kfed.table2.batch_cells (auto: on a GPU) plans one job per setting (Z, k') whose
    # outputs are its methods' tables, the same files the per-cell jobs write
    result = run(["-n", "--cores", "2", "--configfile", "config/ci.yaml", "--config",
                  "kfed={table2: {batch_cells: true}}", "--", "results/kfed/table2.csv"],
                 copy_workflow(tmp_path))
    assert re.search(r"^rule kfed_table2_cells:", result.stdout, re.M)
    assert not re.search(r"^rule kfed_table2:", result.stdout, re.M)
    assert re.search(r"^kfed_table2_cells\s+4$", result.stdout, re.M)   # 2 Z x 2 k'
    assert "results/kfed/table2/n200_k2_kfed.csv" in result.stdout


def test_jobs_run_this_checkouts_code_even_when_another_stands_first(tmp_path):
    # another fedclust first on the path (an editable install of another checkout, a
    # PYTHONPATH): the Snakefile and every job must still import this copy's src/
    other = tmp_path / "other" / "fedclust"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("raise ImportError('the other checkout was imported')\n")
    work = copy_workflow(tmp_path / "work")
    env = dict(os.environ, PYTHONPATH=str(other.parent))
    result = subprocess.run(SNAKEMAKE + ["--cores", "1", "results/run_config.yaml"], cwd=work,
                            capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "the other checkout" not in result.stdout + result.stderr


def test_bad_config_stops_with_the_key_named_in_a_few_lines(tmp_path):
    work = copy_workflow(tmp_path)
    result = run(["-n", "--config", "seed=-3"], work, ok=False)
    output = result.stdout + result.stderr
    assert "ConfigError: --config: config key 'seed': -3 is less than the minimum of 0" in output
    assert "Traceback" not in output and 'File "' not in output  # the message alone
    result = run(["-n", "--config", "kfedd={}"], work, ok=False)
    output = result.stdout + result.stderr
    assert "unknown config key 'kfedd' (did you mean 'kfed'?)" in output
    assert "allowed keys under '(top level)'" in output
    assert "$defs" not in output and len(output.splitlines()) < 12


def test_a_quoted_number_in_a_configfile_and_an_empty_mirror_are_refused(tmp_path):
    """Only --config values are retyped; a --configfile's "3" is a string, refused by the
    schema, and ``data_mirror=`` (empty) does not silently mean "download"."""
    work = copy_workflow(tmp_path)
    (work / "quoted.yaml").write_text('fedkmeans:\n  seeds: "3"\n')
    result = run(["-n", "--configfile", "quoted.yaml"], work, ok=False)
    # the file and line that set it, before the key (issue 44: never only "Snakefile")
    assert ("quoted.yaml, line 2: config key 'fedkmeans.seeds': '3' is not of type integer"
            in result.stdout + result.stderr)
    result = run(["-n", "--config", "data_mirror="], work, ok=False)
    assert ("config key 'data_mirror': given empty on the command line"
            in result.stdout + result.stderr)
    assert "Job stats" not in result.stdout


def test_a_missing_or_broken_configfile_is_named_with_its_line(tmp_path):
    """Snakemake reads --configfile before the pipeline's code; the workflow profile, which it
    reads first, names the file (and the line of a YAML mistake) in one line."""
    work = copy_workflow(tmp_path)
    result = run(["-n", "--configfile", "missing.yaml"], work, ok=False)
    assert result.stderr.strip().splitlines()[-1] == (
        "config file missing.yaml: No such file or directory")
    assert len(result.stderr.strip().splitlines()) <= 2 and "Traceback" not in result.stderr
    (work / "broken.yaml").write_text("seed: 3\nkfed: {table1: [1, 2}\n")
    result = run(["-n", "--configfile", "broken.yaml"], work, ok=False)
    assert "config file broken.yaml, line 2, column" in result.stderr
    assert "Job stats" not in result.stdout


def test_a_malformed_config_entry_is_named_in_one_line(tmp_path):
    """Snakemake parses --config before the pipeline's code (a 12-28-line traceback): the
    workflow profile names the entry and says how to write it."""
    work = copy_workflow(tmp_path)
    for entry, expected in (("runs", "--config runs: an entry is name=value"),
                            ("kfed.fig1.runs=3", "write --config 'kfed={fig1: {runs: 3}}'")):
        result = run(["-n", "--config", entry], work, ok=False)
        lines = result.stderr.strip().splitlines()
        assert expected in lines[-1] and len(lines) <= 2, result.stderr
        assert "Traceback" not in result.stderr


def test_a_lock_held_by_a_live_run_stops_the_next_one_without_suggesting_unlock(tmp_path):
    """A second run in a folder a live Snakemake works in stops before it repairs or runs
    anything, saying so (Snakemake's own message would suggest --unlock); once that run is
    gone, the lock it left is named with --unlock as the safe way on."""
    from .test_pipeline_lock import _snakemake_in

    work = copy_workflow(tmp_path / "w")
    (work / ".snakemake" / "locks").mkdir(parents=True, exist_ok=True)
    (work / ".snakemake" / "locks" / "0.output.lock").write_text("results/run_config.yaml\n")
    other = _snakemake_in(work, tmp_path)
    try:
        result = run(["--cores", "1", "results/run_config.yaml"], work, ok=False)
        text = result.stdout + result.stderr
        assert f"another Snakemake (pid {other.pid}) is running in this folder" in text
        assert "--unlock" not in text.replace("do not --unlock", "")
        assert not (work / "results" / "run_config.yaml").exists()
    finally:
        other.kill()
        other.wait()
    result = run(["--cores", "1", "results/run_config.yaml"], work, ok=False)
    assert "left by a Snakemake that is gone" in result.stdout + result.stderr


def test_a_read_only_results_folder_stops_the_run_before_any_job(tmp_path):
    work = copy_workflow(tmp_path)
    (work / "results").symlink_to("/sys/kernel")  # no user, root included, can write there
    result = run(["--cores", "1", "results/run_config.yaml"], work, ok=False)
    assert "results/ is not writable (Permission denied)" in result.stdout + result.stderr
    assert "Finished job" not in result.stdout + result.stderr


def test_a_finished_job_copied_to_another_folder_is_not_run_again(tmp_path):
    """No rule's parameters hold the checkout's absolute path: a run copied elsewhere (dates
    kept) has nothing to redo."""
    first = copy_workflow(tmp_path / "a")
    run(["--cores", "1", "results/run_config.yaml"], first)
    second = tmp_path / "b"
    shutil.copytree(first, second, symlinks=True)
    result = run(["-n", "--cores", "1", "results/run_config.yaml"], second)
    assert "Nothing to be done" in result.stdout + result.stderr, result.stdout[-2000:]


def test_a_mistyped_figure_is_named_with_the_nearest_ones(tmp_path):
    work = copy_workflow(tmp_path)
    result = run(["-n", "figures/kfed_fig1_acuracy_vs_separation.png"], work, ok=False)
    assert ("did you mean figures/kfed_fig1_accuracy_vs_separation.png"
            in result.stdout + result.stderr)


def test_a_damaged_raw_file_and_a_damaged_derived_file_are_rebuilt_by_the_next_run(tmp_path,
                                                                                  mirror):
    """A raw file damaged after its fetch is fetched again (named, its date kept) and a
    truncated cache (found by its checksum sidecar) is made again, in the same run: the bytes
    equal a clean run's."""
    work = copy_workflow(tmp_path)
    target = ["data/mnist/features.h5", "--cores", "1", "--configfile", "config/ci.yaml",
              "--config", f"data_mirror={mirror}"]
    run(target, work)
    features = work / "data" / "mnist" / "features.h5"
    clean, clean_date = features.read_bytes(), features.stat().st_mtime_ns
    raw = work / "data" / "mnist" / "raw" / "t10k-labels-idx1-ubyte.gz"
    raw_bytes, raw_date = raw.read_bytes(), raw.stat().st_mtime_ns
    raw.write_bytes(raw_bytes[:-7] + b"garbage")
    os.utime(raw, ns=(raw_date, raw_date))   # bit rot, or a copy that kept the dates
    features.write_bytes(clean[:1000])
    features_date = features.stat().st_mtime_ns
    # a dry run says what a run would repair and changes nothing
    result = run(["-n", *target], work)
    log = result.stdout + result.stderr
    assert f"a run would remove data/mnist/raw/{raw.name} and fetch it again" in log
    assert "data/mnist/features.h5: sha256" in log and "(a run would remove it)" in log
    assert raw.read_bytes() != raw_bytes and raw.stat().st_mtime_ns == raw_date
    assert features.read_bytes() == clean[:1000]
    assert features.stat().st_mtime_ns == features_date
    result = run(target, work)
    log = result.stdout + result.stderr
    assert f"fetched data/mnist/raw/{raw.name} again" in log
    assert "damaged file, to be made again: data/mnist/features.h5: sha256" in log
    assert raw.read_bytes() == raw_bytes and raw.stat().st_mtime_ns == raw_date
    # made again before the DAG, to the same bytes: its date kept, nothing left to run
    # (the date it was written with, its sidecar's: Snakemake touches an output after its job)
    assert features.read_bytes() == clean
    assert clean_date - 10**10 < features.stat().st_mtime_ns <= clean_date
    assert "data/mnist/features.h5: made again with the bytes it was written with" in log
    assert "Nothing to be done" in log


def test_a_result_table_cut_at_a_line_is_named_and_made_again_with_the_same_bytes(tmp_path):
    """Every result table carries its sha256 in a sidecar: a table cut at a line boundary
    (which pandas would read without a word) is named by a dry run, left as it is, then named
    and made again by the next run, equal to the undamaged bytes (the other damages, mid-row
    cuts and changed bytes, are the same mismatch: tests/test_io.py)."""
    work = copy_workflow(tmp_path)
    target = ["results/kfed/table1/d100_k16.csv", "--cores", "1", "--configfile",
              "config/ci.yaml"]
    run(target, work)
    table = work / "results" / "kfed" / "table1" / "d100_k16.csv"
    clean, clean_date = table.read_bytes(), table.stat().st_mtime_ns
    lines = clean.splitlines(keepends=True)
    damaged = b"".join(lines[: len(lines) // 2])
    table.write_bytes(damaged)
    dry = run(["-n", *target], work)
    assert "d100_k16.csv: sha256" in dry.stdout + dry.stderr
    assert "(a run would remove it)" in dry.stdout + dry.stderr
    assert table.read_bytes() == damaged
    result = run(target, work)
    log = result.stdout + result.stderr
    assert "damaged file, to be made again: results/kfed/table1/d100_k16.csv" in log
    # made again by a run of its own before the DAG: the same bytes get their date back, so
    # nothing made from the table reruns (Snakemake decides by dates) and no job is left
    # (the date it was written with, its sidecar's: Snakemake touches an output after its job)
    assert table.read_bytes() == clean
    assert clean_date - 10**10 < table.stat().st_mtime_ns <= clean_date
    assert ("results/kfed/table1/d100_k16.csv: made again with the bytes it was written "
            "with; its date kept" in log)
    assert "Nothing to be done" in log


def test_a_missing_mirror_is_reported_before_any_job(tmp_path):
    work = copy_workflow(tmp_path)
    result = run(["-n", "--config", "data_mirror=/no/such/mirror"], work, ok=False)
    assert "data_mirror=/no/such/mirror: no such folder" in result.stdout
    assert "Job stats" not in result.stdout


def test_a_failed_jobs_cause_reaches_the_terminal(tmp_path):
    """No mirror and no network: the download's own message, not "message: None"."""
    work = copy_workflow(tmp_path)
    result = run(["--cores", "1", "data/postures/raw/Postures.csv"], work, ok=False,
                 timeout=600)
    assert "Error in rule fetch_postures: DataUnavailableError: could not download" in \
        result.stderr
    assert "point data_mirror at a folder holding postures/" in result.stderr
    assert "(full log: results/logs/data/fetch_postures.log)" in result.stderr
    assert not (work / "data" / "postures" / "raw" / "Postures.csv").exists()


@pytest.mark.parametrize("override, message", [
    ("kfed={table1: {runs: 0}}", "config key 'kfed.table1.runs': 0 is less than the minimum"),
    ("kfed={table1: {runs: 5.0}}", "config key 'kfed.table1.runs': 5.0 is not of type integer"),
    ("localkmeans={synthetic: {n_features: 2}}",
     "config key 'localkmeans.synthetic.n_clusters': K=4 orthonormal centres do not fit"),
    ("coreset={graphs: [ring]}", "config key 'coreset.graphs[0]': 'ring' is not one of"),
])
def test_a_nested_value_on_the_command_line_is_typed_and_checked(tmp_path, override, message):
    result = run(["-n", "--config", override], copy_workflow(tmp_path), ok=False)
    assert message in result.stdout + result.stderr
    assert "Job stats" not in result.stdout and len(result.stdout.splitlines()) < 12


def test_a_dotted_key_on_the_command_line_is_refused_before_any_job(tmp_path):
    # Snakemake parses --config before any workflow code runs (snakemake/snakemake#3907); the
    # workflow profile's check, which runs before that, names the nested form to write, as
    # the README shows it
    result = run(["-n", "--config", "kfed.table1.runs=0"], copy_workflow(tmp_path), ok=False)
    assert ("--config kfed.table1.runs=0: a nested key is not dotted; write "
            "--config 'kfed={table1: {runs: 0}}'") in result.stdout + result.stderr
    assert "Job stats" not in result.stdout
    readme = (REPO / "README.md").read_text()
    assert "--config 'kfed={table1: {runs: 3}}'" in readme


def test_a_corrupt_local_copy_is_named_removed_and_fetched_again(tmp_path):
    """After a good download a file under data/ is damaged: the next run names it and fetches
    it again; when the source is bad too, the fetch fails naming the file and nothing
    downstream is written."""
    work = copy_workflow(tmp_path / "work")
    raw = work / "data" / "mnist" / "raw"
    raw.mkdir(parents=True)
    name = MNIST_FILES["test_images"].name
    (raw / name).write_bytes(b"\x1f\x8b truncated")
    bad_mirror = tmp_path / "mirror"
    (bad_mirror / "mnist").mkdir(parents=True)
    for remote in MNIST_FILES.values():
        (bad_mirror / remote.mirror_path).write_bytes(b"not MNIST")
    result = run(["--cores", "1", "--config", f"data_mirror={bad_mirror}", "--",
                  "data/mnist/features.h5"], work, ok=False, timeout=600)
    assert f"damaged local copy: md5 mismatch for {name}" in result.stderr
    assert f"removed data/mnist/raw/{name}; fetching it again failed" in result.stderr
    assert "Error in rule fetch_mnist: ChecksumError: md5 mismatch for" in result.stderr
    assert "the file is corrupt or not the published version" in result.stderr
    assert not (work / "data" / "mnist" / "features.h5").exists()
    # neither the damaged copy nor a half-fetched file (Snakemake drops the emptied folder)
    assert not raw.exists() or list(raw.iterdir()) == []


def test_a_corrupt_local_copy_is_fetched_again_from_a_good_mirror(tmp_path, mirror):
    work = copy_workflow(tmp_path)
    remote = MNIST_FILES["test_labels"]
    target = f"data/mnist/raw/{remote.name}"
    run(["--cores", "1", "--config", f"data_mirror={mirror}", "--", target], work)
    good = md5(work / target)
    with open(work / target, "r+b") as fh:  # a flipped byte, same size
        fh.seek(100)
        byte = fh.read(1)
        fh.seek(100)
        fh.write(bytes([byte[0] ^ 0xFF]))
    result = run(["--cores", "1", "--config", f"data_mirror={mirror}", "--", target], work)
    assert f"md5 mismatch for {remote.name}" in result.stderr
    assert md5(work / target) == good


# Table 1 of k-FED in the paper profile: synthetic (no data needed), five jobs of 3-20 s
MIXTURE_TABLE = "results/kfed/table1.csv"
MIXTURE_LONGEST = "results/logs/kfed/table1/d300_k100.log"


@pytest.fixture(scope="module")
def killed_and_clean_runs(tmp_path_factory):
    """The same targets twice: once with --cores 1 undisturbed; once with --cores 2, the
    whole Snakemake process group SIGKILLed while a job runs, then unlocked and restarted."""
    import signal
    import time

    clean = copy_workflow(tmp_path_factory.mktemp("clean"))
    run(["--cores", "1", MIXTURE_TABLE], clean)

    killed = copy_workflow(tmp_path_factory.mktemp("killed"))
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.Popen(SNAKEMAKE + ["--cores", "2", MIXTURE_TABLE], cwd=killed, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    log = killed / MIXTURE_LONGEST
    deadline = time.monotonic() + 300
    while not (log.exists() and "thread(s)" in log.read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, "the job never started"
        time.sleep(0.2)
    time.sleep(1.0)  # mid-job
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # what a kill mid-write leaves: the temporary file of an atomic write
    orphan = killed / "results" / "kfed" / "table1" / ".d300_k100.csv.tmp-x1y2z3.csv"
    orphan.write_text("half a table")
    relaunch = run(["--cores", "2", MIXTURE_TABLE], killed, ok=False)
    unlock = run(["--unlock"], killed)
    restart = run(["--cores", "2", MIXTURE_TABLE], killed)
    return clean, killed, relaunch, unlock, restart, orphan


def test_a_killed_run_restarts_after_unlock_to_complete_correct_outputs(killed_and_clean_runs):
    clean, killed, relaunch, _, restart, orphan = killed_and_clean_runs
    # the lock of the killed run is reported as left by a run that is gone, with its remedy
    assert "left by a Snakemake that is gone" in relaunch.stdout + relaunch.stderr
    assert "--unlock" in relaunch.stdout + relaunch.stderr
    assert not orphan.exists()
    assert "the temporary file of a job killed mid-write" in restart.stderr
    tables = sorted((clean / "results" / "kfed" / "table1").glob("*.csv"))
    assert len(tables) == 5
    for table in tables:
        assert md5(killed / table.relative_to(clean)) == md5(table), table.name
    assert not [p for p in (killed / "results").rglob("*") if ".tmp-" in p.name]


def test_result_tables_are_identical_across_runs_and_core_counts(killed_and_clean_runs,
                                                                tmp_path):
    clean, killed, *_ = killed_and_clean_runs
    assert md5(killed / MIXTURE_TABLE) == md5(clean / MIXTURE_TABLE)
    # and a third run, of one setting alone, repeats its part byte for byte
    alone = copy_workflow(tmp_path)
    part = "results/kfed/table1/d100_k16.csv"
    run(["--cores", "2", part], alone)
    assert md5(alone / part) == md5(clean / part)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """The quick profile, run once on a fresh copy of the workflow with the offline mirror.

    ``FEDCLUST_QUICK_RUN=<folder>`` checks a quick run already finished there instead (e.g.
    after changing only the targets and rerunning ``results/reproduction.csv`` in it)."""
    from .conftest import shared_data_dir

    if os.environ.get("FEDCLUST_QUICK_RUN"):
        work = Path(os.environ["FEDCLUST_QUICK_RUN"]).resolve()
        if not (work / "results" / "reproduction.csv").is_file():
            pytest.fail(f"FEDCLUST_QUICK_RUN={work}: no results/reproduction.csv there")
        return work, {p.relative_to(work) for p in work.rglob("*")
                      if p.parts[len(work.parts)] in OUTPUT_FOLDERS}
    mirror = shared_data_dir()
    if mirror is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs the offline data mirror at ../shared/data")
        pytest.skip("offline data mirror not found")
    work = copy_workflow(tmp_path_factory.mktemp("quick"))
    before = {p.relative_to(work) for p in work.rglob("*")}
    # a group-shared umask, as on a lab's cluster: every output must be group-readable
    # the timeout guards against a hung run, it is not the time budget: the quick profile's
    # wall time is measured and recorded by benchmarks/profiles.py (31-34 min on 2026-11-28's
    # slow host, 13 min on 2026-11-26's)
    run(["--cores", "2", "--configfile", "config/ci.yaml", "--config",
         f"data_mirror={mirror}"], work, timeout=3600, umask=0o002)
    created = {p.relative_to(work) for p in work.rglob("*")} - before
    return work, created


def quick_config():
    return profile_config(quick=True)


@pytest.mark.reproduction
def test_quick_profile_writes_only_data_results_and_figures(quick_run):
    work, created = quick_run
    # outputs only under data/, results/ and figures/ (and snakemake's own bookkeeping);
    # the jobs import this checkout's src, so Python's and numba's caches of its compiled
    # code land in its __pycache__ folders, as in any checkout
    outputs = {p for p in created if "__pycache__" not in p.parts}
    assert {p.parts[0] for p in outputs} <= {*OUTPUT_FOLDERS, ".snakemake"}
    # with the user's umask (002: group-writable), not owner-only temporary-file modes
    for path in ("results/reproduction.csv", "results/kfed/fig2.csv",
                 "figures/kfed_fig2_structured_vs_iid.png", "data/mnist/features.h5",
                 "data/mnist/raw/train-labels-idx1-ubyte.gz", "results/kfed/table1.md"):
        assert (work / path).stat().st_mode & 0o777 == 0o664, path
    # no hidden temporary file is left anywhere
    assert not [p for p in created if p.name.startswith(".") and p.parts[0] != ".snakemake"]
    # every job applied its threads and logged plain lines (no progress-bar redraws)
    log = (work / "results" / "logs" / "kfed" / "oracle" / "mnist_k2.log").read_text()
    assert "rule kfed_oracle: 1 thread(s)" in log  # as its rule declares (one since b41ac63)
    train = (work / "results" / "logs" / "data" / "train_cifar10_cnn.log").read_text()
    assert "\r" not in train and len(train) < 5000
    # every data file the run read, with its sha256: MNIST's raw files as published, every
    # cache as its sidecar says
    from fedclust.io import sha256_of

    from .conftest import shared_data_dir

    sums = pd.read_csv(work / "results" / "data_checksums.csv").set_index("file")
    for remote in MNIST_FILES.values():
        path = f"data/mnist/raw/{remote.name}"
        assert md5(work / path) == remote.md5 and sums.loc[path, "sha256"] == sha256_of(
            work / path)
    sidecar = (work / "data" / "mnist" / "features.h5.sha256").read_text().split()[0]
    assert sums.loc["data/mnist/features.h5", "sha256"] == sidecar
    # read in place from the mirror (the pipeline names it resolved: ../shared may be a link)
    assert any(f.startswith(str(shared_data_dir().resolve()) + "/femnist/leaf_sample_")
               for f in sums.index)


EXPECTED_VERDICTS = REPO / "tests" / "data" / "quick_verdicts.csv"


@pytest.mark.reproduction
def test_every_figure_of_the_quick_profile_reads_well(quick_run):
    """No figure job logged a layout problem (overlapping tick labels or legend entries,
    legend text under 8 pt, a legend over data: fedclust.plots._style.layout_problems)."""
    work, _ = quick_run
    logs = sorted((work / "results" / "logs").glob("*/figure_*.log"))
    assert len(logs) >= 40
    problems = [f"{log.relative_to(work)}: {line.split('layout problem: ', 1)[1]}"
                for log in logs for line in log.read_text().splitlines()
                if "layout problem: " in line]
    assert not problems, "\n".join(problems)


@pytest.mark.reproduction
def test_every_quick_profile_verdict_is_the_committed_one(quick_run):
    """A verdict that changes, in either direction, fails CI, and so does a row's definition
    (its test and the paper's side of it): the expectation changes only in a commit that says
    why (``expectation(report).to_csv(EXPECTED_VERDICTS, index=False)``)."""
    from fedclust.reproduction import VERDICTS, definition_changes, verdict_changes

    work, _ = quick_run
    report = pd.read_csv(work / "results" / "reproduction.csv")
    assert set(report.status) <= set(VERDICTS)
    expected = pd.read_csv(EXPECTED_VERDICTS, keep_default_na=False, dtype=str)
    moved = definition_changes(report, expected)
    assert moved.empty, (f"{len(moved)} rows' tests differ from {EXPECTED_VERDICTS.name}:\n"
                         + moved.to_string(max_colwidth=40))
    changes = verdict_changes(report, expected)
    assert changes.empty, (
        f"{len(changes)} verdicts differ from {EXPECTED_VERDICTS.name} (expected -> now):\n"
        + changes.to_string(max_colwidth=60)
        + f"\n(the run's rows: {work / 'results' / 'reproduction.csv'})")
    # every row that does not pass says why, with what was measured
    missed = report[report.status.isin(["fail", "not at this profile", "not shown"])]
    assert missed.explanation.fillna("").str.len().gt(20).all(), missed[["item", "quantity"]]
    text = (work / "results" / "reproduction.md").read_text()
    counts = report.status.value_counts()
    assert ", ".join(f"**{int(counts.get(v, 0))} {v}**" for v in VERDICTS) in text


@pytest.mark.reproduction
def test_quick_profile_reproduces_table1_and_fig5_on_real_data(quick_run):
    work, _ = quick_run
    # the data came from the mirror and is the official MNIST
    for remote in MNIST_FILES.values():
        assert md5(work / "data" / "mnist" / "raw" / remote.name) == remote.md5

    # Table 1: recompute each row's mean accuracy from the runs and compare with the paper's
    quick = quick_config()["kfed"]["table1"]
    targets = yaml.safe_load((REPO / "config" / "paper_targets.yaml").read_text())
    table1 = targets["kfed"]["table1"]
    runs = pd.read_csv(work / "results" / "kfed" / "table1.csv")
    acc = runs[runs.metric == "accuracy"]
    assert set(acc.devices_per_cluster) == {5} and set(acc.separation) == {100.0}
    report = pd.read_csv(work / "results" / "reproduction.csv")
    t1 = report[report.key == "kfed.table1"].set_index("item")
    assert len(t1) == len(table1["rows"])
    for row in table1["rows"]:
        sel = acc[(acc.n_features == row["n_features"]) & (acc.n_clusters == row["n_clusters"])]
        assert len(sel) == quick["runs"]
        assert set(sel.device_clusters) == {round(row["n_clusters"] ** 0.5)}
        # the test, recomputed from the runs: our mean and spread against the printed mean
        # +- std over the paper's runs, plus half the last printed digit (Welch)
        from fedclust.verdicts import Spread, same_value

        expected = same_value(Spread.of(sel.value),
                              Spread(row["value"], row["std"], table1["runs"]),
                              table1["printed_precision"]).verdict
        verdict = t1.loc[f"Table 1, d={row['n_features']}, k={row['n_clusters']}", "status"]
        assert verdict == expected, row

    # Fig 5 is drawn from real MNIST: every pair of oracle clusters for every k of the grid
    cfg = quick_config()
    grid = cfg["kfed"]["separation"]["k_grid"]
    pairs = pd.read_csv(work / "results" / "kfed" / "separation" / "mnist" / "pairs.csv")
    assert pairs.groupby("n_clusters").size().to_dict() == {k: k * (k - 1) // 2 for k in grid}
    assert set(pairs.n_samples) == {cfg["datasets"]["mnist"]["max_samples"]}
    chosen = pd.read_csv(work / "results" / "kfed" / "separation" / "mnist" / "chosen_k.csv")
    assert len(chosen) == 1 and chosen.n_clusters.iloc[0] in grid
    for fig in ("kfed_fig1_accuracy_vs_separation", "kfed_fig5_separation_mnist"):
        assert (work / "figures" / f"{fig}.png").stat().st_size > 10_000
        assert (work / "figures" / f"{fig}.pdf").stat().st_size > 5_000


@pytest.mark.reproduction
def test_quick_profile_reproduces_the_federated_claims_on_femnist_and_shakespeare(quick_run):
    work, _ = quick_run
    cfg = quick_config()
    report = pd.read_csv(work / "results" / "reproduction.csv")
    for ds in ("femnist", "shakespeare"):
        # the oracle analysis ran on the real data (LEAF writers, LEAF roles)
        summary = pd.read_csv(work / "results" / "kfed" / "separation" / ds / "summary.csv")
        assert summary.n_clusters.tolist() == cfg["kfed"]["separation"]["k_grid"]
        chosen = int(pd.read_csv(work / "results" / "kfed" / "separation" / ds /
                                 "chosen_k.csv").n_clusters.iloc[0])
        # Fig 2: structured closer to the oracle than IID, recomputed from the runs
        fig2 = pd.read_csv(work / "results" / "kfed" / "fig2.csv")
        sub = fig2[(fig2.dataset == ds) & (fig2.device_clusters < chosen)]
        assert set(sub.n_clusters) == {chosen}
        assert set(sub.n_devices) == {cfg["kfed"]["fig2"]["n_devices"]}   # same Z for every k'
        mean = sub.groupby("metric").value.mean()
        assert mean["structured_cost"] - mean["oracle_cost"] < \
            mean["iid_cost"] - mean["oracle_cost"]
        claims = report[report.item == f"Fig 2, {ds}"]
        assert len(claims) == 3 and "by construction" in set(claims.status)
        # Fig 3: k-FED's cost within 10% of naive distributed k-means, in one round
        fig3 = pd.read_csv(work / "results" / "kfed" / "fig3.csv")
        sub = fig3[fig3.dataset == ds]
        # the oracle k of Fig 2 ("the same oracle clustering"), several k'
        assert set(sub.n_clusters) == {chosen}
        k_primes = cfg["kfed"]["fig3"]["device_clusters"]
        assert sorted(sub.device_clusters.unique()) == k_primes
        cost = sub[sub.metric == "cost"].groupby(["device_clusters", "algorithm"]).value.mean()
        for k_prime in k_primes:
            assert cost[(k_prime, "k-FED")] <= 1.1 * cost[(k_prime, "distributed Lloyd")]
        rounds = sub[sub.metric == "rounds"].groupby("algorithm").value
        assert rounds.max()["k-FED"] == 1 and rounds.min()["distributed Lloyd"] > 1
        # the naive baseline's Lloyd rounds are reported apart from its seeding rounds
        lloyd = sub[(sub.metric == "lloyd_rounds") & (sub.algorithm == "distributed Lloyd")]
        seeding = sub[(sub.metric == "seeding_rounds") & (sub.algorithm == "distributed Lloyd")]
        assert (lloyd.value > 0).all() and (seeding.value == 2 * chosen).all()
        # k-FED's download is k^(z) cluster identities per device (8-byte integers), no floats
        kfed = sub[sub.algorithm == "k-FED"].groupby("metric").value.max()
        assert kfed["floats_down"] == 0 and kfed["bytes_down"] > 0
        assert kfed["bytes_down"] % 8 == 0
        claims = report[report.item.str.startswith(f"Fig 3, {ds}")]
        assert len(claims) == 2 * len(k_primes)
    # every beyond-the-paper experiment produced its table and figure for both data sets
    for experiment in ("participation", "new_devices", "heterogeneity"):
        table = pd.read_csv(work / "results" / "kfed" / f"{experiment}.csv")
        assert set(table.dataset) == {"femnist", "shakespeare"}
        assert (work / "figures" / f"kfed_{experiment}.png").stat().st_size > 10_000
    for fig in ("kfed_fig2_structured_vs_iid", "kfed_fig3_kfed_vs_distributed_lloyd"):
        assert (work / "figures" / f"{fig}.png").stat().st_size > 10_000


@pytest.mark.reproduction
def test_quick_profile_reproduces_localkmeans_on_synthetic_and_real_data(quick_run):
    work, _ = quick_run
    cfg = quick_config()["localkmeans"]
    # Figures 1-4 are drawn
    for fig in ("fig1_misclustering", "fig4_sweeps", "fig2_misclustering_real",
                "fig3_objective_real"):
        assert (work / "figures" / f"localkmeans_{fig}.png").stat().st_size > 10_000
    # Figure 1: L = 1 is centralized Lloyd, every L starts from the same initialization
    fig1 = pd.read_csv(work / "results" / "localkmeans" / "fig1.csv")
    assert set(fig1.snr) == set(cfg["fig1"]["snrs"])
    assert fig1.trial.nunique() == cfg["fig1"]["trials"]
    # the embeddings were trained here, with their test accuracy recorded beside them
    mnist = pd.read_csv(work / "results" / "embeddings" / "mnist_cnn.csv").iloc[0]
    cifar = pd.read_csv(work / "results" / "embeddings" / "cifar10_cnn.csv").iloc[0]
    assert mnist.embedding_dim == 1568 and mnist.test_accuracy > 0.95
    assert cifar.embedding_dim == 512 and cifar.test_accuracy > 0.3
    assert "JPEG re-encoding (lossy approximation)" in cifar.source
    # Figures 2-3 claims on every real data set, recomputed from the runs
    real = pd.read_csv(work / "results" / "localkmeans" / "real.csv")
    report = pd.read_csv(work / "results" / "reproduction.csv")
    for ds in cfg["real"]["datasets"]:
        final = real[(real.dataset == ds) & (real.metric == "misclustering")
                     & (real.iteration == cfg["real"]["n_iter"])]
        mean = final.groupby("local_steps").value.mean()
        assert mean["no aggregation"] >= mean.drop("no aggregation").max()
        claims = report[report.item == f"Figs 2-3, {ds}"]
        assert len(claims) >= 2


@pytest.mark.reproduction
def test_quick_profile_reproduces_the_distributed_coreset_figures(quick_run):
    work, _ = quick_run
    cfg = quick_config()["coreset"]
    graphs = pd.read_csv(work / "results" / "coreset" / "graphs.csv")
    ratio = graphs[graphs.metric == "cost_ratio"]
    # every panel of Figs 2-3 on every run, every construction at every size
    assert ratio.groupby(["graph", "partition"]).run.nunique().eq(cfg["runs"]).all()
    assert len(ratio.groupby(["graph", "partition"])) == len(cfg["graphs"]) * len(
        cfg["partitions"])
    assert set(ratio.algorithm) == {"distributed", "combine", "zhang"}
    # the largest coreset of ours and COMBINE solves within 10% of Lloyd on the global data,
    # on average (Zhang et al.'s coresets of coresets lose more on the deep grid trees)
    largest = ratio[(ratio.coreset_size == max(cfg["coreset_sizes"]))
                    & ratio.algorithm.isin(["distributed", "combine"])]
    assert largest.groupby("algorithm").value.mean().between(0.95, 1.10).all()
    for name in ("fig2", "fig3", "fig2_bytes", "fig3_bytes", "kmedian"):
        assert (work / "figures" / f"coreset_{name}_msd_mixture.png").exists()
    assert (work / "figures" / "coreset_diameter.png").exists()
    report = pd.read_csv(work / "results" / "reproduction.csv")
    claims = report[report.paper.str.startswith("Distributed coresets")]
    checked = claims[claims.status != "reported"]
    # a row per panel: Fig 2's four partitions' statements (the weighted and degree-based ones
    # two each) on every graph, whether run or not; Fig 3's two on every panel run
    n_graphs, n_panels = len(cfg["graphs"]), len(cfg["graphs"]) * len(cfg["partitions"])
    assert len(checked) == n_graphs * (2 + 2 * 2) + 2 * n_panels
    # the mirror lacks YearPredictionMSD: every row names the stand-in it ran on
    assert checked.stand_in.str.contains("stand-in data: Gaussian mixture").all()


@pytest.mark.reproduction
def test_quick_profile_reproduces_federated_kmeans(quick_run):
    work, _ = quick_run
    cfg = quick_config()["fedkmeans"]
    sweeps = pd.read_csv(work / "results" / "fedkmeans" / "sweeps.csv")
    # every sweep of the paper on every seed, central k-means beside every sweep of C, and
    # the second readings the config declares (Fig 5 with the authors' reassignment rule)
    assert {"fig1", "fig2a", "fig2b", "fig3a", "fig3b", "fig4a", "fig4b", "fig5a",
            "fig5b"} <= set(sweeps.sweep) == set(cfg["sweeps"])
    assert sweeps.groupby("sweep").seed.nunique().eq(cfg["seeds"]).all()
    assert set(sweeps[sweeps.varied == "sample_fraction"].setting) == {
        "0.01", "0.03", "0.1", "0.3", "1.0", "central"}
    for name in (*sorted(set(sweeps.sweep)),):
        assert (work / "figures" / f"fedkmeans_sweep_{name}.png").exists()
    for name in ("fig6", "fig7a", "fig7b"):
        assert (work / "figures" / f"fedkmeans_progress_{name}.png").exists()
    report = pd.read_csv(work / "results" / "reproduction.csv")
    claims = report[report.paper.str.startswith("Federated k-means")]
    # the text's claim: the best federated setting matches or beats central k-means on both
    # metrics of the test clients
    match = claims[claims.item.str.startswith("best federated setting")]
    assert len(match) == 2


@pytest.mark.reproduction
def test_quick_profile_reproduces_the_kfed_applications(quick_run):
    """Table 2 on rotated MNIST and Fig 4 on FEMNIST and Shakespeare: every cell and curve,
    and the orderings the paper states."""
    work, _ = quick_run
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["kfed"]
    table2 = pd.read_csv(work / "results" / "kfed" / "table2.csv")
    cells = set(zip(table2.n_devices, table2.device_clusters, table2.method, strict=True))
    assert cells == {(z, kp, m) for z in cfg["table2"]["n_devices"]
                     for kp in cfg["table2"]["device_clusters"] for m in cfg["table2"]["methods"]}
    fig4 = pd.read_csv(work / "results" / "kfed" / "fig4.csv")
    assert set(zip(fig4.dataset, fig4.strategy, strict=True)) == {
        (ds, s) for ds in cfg["fig4"]["datasets"] for s in cfg["fig4"]["strategies"]}
    for name in ("table2_rotated_mnist", "fig4_client_selection_femnist",
                 "fig4_client_selection_shakespeare"):
        assert (work / "figures" / f"kfed_{name}.png").stat().st_size > 10_000
    report = pd.read_csv(work / "results" / "reproduction.csv")
    claims = report[report.paper.str.startswith("k-FED")]
    # all four cells: IFCA and k-FED above one global model, k-FED sending k'/k of IFCA's floats
    above = claims[claims.quantity.str.endswith("minus Global")]
    assert len(above) == 8
    comm = claims[claims.quantity.str.startswith("floats sent down per round")]
    assert sorted(comm.reproduced) == [0.25, 0.25, 0.5, 0.5]
    assert (comm.status == "by construction").all()
    femnist = claims[claims.item == "Fig 4, femnist"]
    assert len(femnist) == 4
    # the printed accuracies sit beside ours, every cell measured
    printed = claims[claims.quantity.str.match(r"test accuracy, (Global|IFCA|k-FED)$")]
    assert len(printed) == 12 and printed.reproduced.notna().all()


def _report_results(path):
    """The files of a Snakemake HTML report (its ``var results = {...}``): path -> entry with
    the rendered ``caption`` and, for a text file, its decoded ``text``."""
    import base64
    import json

    html = path.read_text()
    start = html.index("var results = {") + len("var results = ")
    results, _ = json.JSONDecoder().raw_decode(html, start)
    for name, entry in results.items():
        if name.endswith((".md", ".yaml", ".csv")):
            encoded = entry["data_uri"].partition("base64,")[2]
            entry["text"] = base64.b64decode(encoded).decode()
    return results


@pytest.mark.reproduction
def test_the_report_shows_every_figure_with_its_caption_the_claims_and_the_run(quick_run):
    import html
    import re

    from fedclust.pipeline import registry

    work, _ = quick_run
    from .conftest import shared_data_dir
    run(["--report", "report.html", "--configfile", "config/ci.yaml", "--config",
         f"data_mirror={shared_data_dir()}"], work)
    results = _report_results(work / "report.html")
    config = quick_config()

    def text(caption):
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", caption)).split())

    figures = [f"figures/{paper}_{name}.png" for paper, names in
               registry.figure_names(config).items() for name in names]
    assert len(figures) >= 40 and set(figures) <= set(results)
    for name in figures:
        paper, figure = name.removeprefix("figures/").removesuffix(".png").split("_", 1)
        expected = " ".join(registry.figure_caption(paper, figure, config).split())
        shown = text(results[name]["caption"])
        # what it reproduces, in its first words (RST markup aside)
        assert re.sub(r"\W", "", shown)[:50] == re.sub(r"\W", "", expected)[:50], name
        assert len(shown) > 0.8 * len(expected)  # deviations included, not cut short
    reproduction = results["results/reproduction.md"]["text"]
    for paper in ("k-FED", "LocalKMeans", "Balcan", "Triebe", "Cross-paper comparison"):
        assert paper in reproduction
    run_config = yaml.safe_load(results["results/run_config.yaml"]["text"])
    assert run_config["config"]["profile"] == "quick"
    assert set(run_config["versions"]) >= {"python", "numpy", "scikit-learn", "snakemake"}
    assert set(run_config["provenance"]) == {"commit", "dirty", "machine", "blas"}


@pytest.mark.reproduction
def test_quick_profile_compares_every_algorithm_on_the_same_partitions(quick_run):
    """The cross-paper comparison: every algorithm on every data set and partition, the
    dropout and heterogeneity sweeps, and the measured statements."""
    from fedclust.papers.comparison import declare as comparison
    from fedclust.papers.comparison.experiments import fits

    work, _ = quick_run
    config = quick_config()
    table = pd.read_csv(work / "results" / "comparison" / "table.csv")
    assert set(zip(table.dataset, table.partition, strict=True)) == set(
        comparison.settings(config))
    families = {fit.algorithm for fit in fits(config["comparison"], n_clusters=2)}
    assert set(table.algorithm) == {"centralized"} | families
    assert set(table.dropout) == set(config["comparison"]["dropout"])
    for metric in ("cost_ratio", "agreement", "rounds", "floats_up", "bytes_down", "wall_s",
                   "peak_mb"):
        assert metric in set(table.metric)
    # accuracy where the data set has k classes: the mixture and MNIST
    assert set(table[table.metric == "accuracy"].dataset) == {"mixture", "mnist"}
    heterogeneity = pd.read_csv(work / "results" / "comparison" / "heterogeneity.csv")
    assert set(heterogeneity.partition) == {"mix=0", "mix=1"}
    claims = pd.read_csv(work / "results" / "comparison" / "claims.csv")
    factor = claims[claims.quantity == "k-FED cost / best multi-round cost"]
    assert len(factor) == len(config["comparison"]["datasets"])
    # a cross-paper measurement has no printed value: reported, never judged
    assert set(claims.status) == {"reported"}
    for name in ("pareto_bytes", "pareto_rounds", "dropout", "heterogeneity"):
        assert (work / "figures" / f"comparison_{name}.png").stat().st_size > 10_000


def test_the_layout_the_project_specifies():
    """The Snakefile at the root beside config/, workflow/, src/, environment.yml and
    README.md; rules, scripts, report captions, envs and profiles under workflow/; the link
    that lets Snakemake apply workflow/profiles/default by itself."""
    for name in ("Snakefile", "config", "workflow", "src", "environment.yml", "README.md",
                 "LICENSE", "config/README.md", ".snakemake-workflow-catalog.yml"):
        assert (REPO / name).exists(), name
    for name in ("rules", "scripts", "report", "envs", "profiles/default", "profiles/slurm"):
        assert (REPO / "workflow" / name).is_dir(), name
    assert not (REPO / "workflow" / "Snakefile").exists()
    link = REPO / "profiles"
    assert link.is_symlink() and link.resolve() == (REPO / "workflow" / "profiles").resolve()


def test_the_readme_is_short_and_every_relative_link_in_it_and_docs_resolves():
    """The README is a first screen and an index (at most 200 lines); every page it and
    docs/ link to exists, anchors aside."""
    import re

    assert len((REPO / "README.md").read_text().splitlines()) <= 200
    pages = [REPO / "README.md", REPO / "config" / "README.md", *sorted(REPO.glob("docs/*.md"))]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            path = target.split("#", 1)[0]
            if not path or re.match(r"[a-z]+://", path):
                continue
            if not (page.parent / path).exists():
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken, broken


def test_every_readme_heading_is_there_once():
    """A section written twice (an edit that pasted the rest of the file again) is caught."""
    import collections

    headings, fenced = [], False
    for line in (REPO / "README.md").read_text().splitlines():
        fenced ^= line.startswith("```")
        if not fenced and line.startswith("#"):
            headings.append(line)
    repeated = [h for h, n in collections.Counter(headings).items() if n > 1]
    assert not repeated, repeated

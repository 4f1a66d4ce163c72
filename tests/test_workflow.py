"""The pipeline itself: lint, dry runs, what a user sees when something is wrong, and the quick
profile for real."""

import hashlib
import os
import re
import shutil
import subprocess
import sys

import pytest

from fedclust.data import MNIST_FILES
from fedclust.pipeline import workdir

from .conftest import REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def copy_workflow(dest):
    """The workflow as an installed clone has it, in ``dest``
    (:func:`fedclust.pipeline.workdir.copy_workflow`)."""
    return workdir.copy_workflow(REPO, dest)


def md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


def run(args, cwd, timeout=1800, *, ok=True, umask=None, env=None):
    env = dict(os.environ, PYTHONHASHSEED="0", **(env or {}))
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
    result = run(["-n", "--cores", "2", *extra], copy_workflow(tmp_path),
                 env={"PYTHONPROFILEIMPORTTIME": "1"})
    # Snakemake's own process (every run and dry run, each SLURM submission) reads the
    # config, the targets and the captions without the numeric libraries the jobs import:
    # they took it 1.4 s of its 5 s of CPU per call
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()
                if line.startswith("import time:")}
    assert "fedclust.pipeline.config" in imported
    heavy = sorted(name for name in imported
                   if name.split(".")[0] in ("sklearn", "numba", "torch", "matplotlib")
                   or name.startswith("scipy.stats"))
    assert not heavy, f"Snakemake's process imported {heavy}"
    result.stderr = "\n".join(line for line in result.stderr.splitlines()
                              if not line.startswith("import time:"))
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


def test_the_quick_profile_batches_table2_fig4_and_the_sweeps(tmp_path):
    # config/ci.yaml: kfed.table2.batch_cells plans one job per setting (Z, k') whose
    # outputs are its methods' tables, kfed.fig4.batch_strategies one job per data set,
    # fedkmeans.batch_sweeps one job for every sweep: the files the per-part jobs write
    result = run(["-n", "--cores", "2", "--configfile", "config/ci.yaml", "--",
                  "results/kfed/table2.csv", "results/kfed/fig4.csv",
                  "results/fedkmeans/sweeps.csv"], copy_workflow(tmp_path))
    for rule, jobs in (("kfed_table2_cells", 4), ("kfed_fig4_strategies", 2),   # 2 Z x 2 k'
                       ("fedkmeans_sweeps", 1)):
        assert re.search(rf"^rule {rule}:", result.stdout, re.M)
        assert re.search(rf"^{rule}\s+{jobs}$", result.stdout, re.M), result.stdout[-3000:]
    for rule in ("kfed_table2", "kfed_fig4", "fedkmeans_sweep"):
        assert not re.search(rf"^rule {rule}:", result.stdout, re.M)
    assert "results/kfed/table2/n200_k2_kfed.csv" in result.stdout
    assert "results/kfed/fig4_devices/shakespeare_kfed_powd.csv" in result.stdout


def test_batched_fedkmeans_sweeps_write_the_per_sweep_jobs_bytes(tmp_path):
    # fedkmeans.batch_sweeps: one job computes every sweep, each table the bytes its own
    # job writes (the quick profile's setting; the paper profile keeps a job per sweep)
    small = "fedkmeans={seeds: 2, n_rounds: 5, batch_sweeps: %s}"
    targets = ["results/fedkmeans/sweeps/fig1.csv",
               "results/fedkmeans/sweeps/fig5bAuthorsReassign.csv"]   # seeds_of: fig5b
    tables = {}
    for batched, jobs in (("true", r"^fedkmeans_sweeps\s+1$"), ("false", r"^fedkmeans_sweep\s+2$")):
        work = copy_workflow(tmp_path / batched)
        result = run(["--cores", "2", "--config", small % batched, "--", *targets], work,
                     timeout=900)
        assert re.search(jobs, result.stdout + result.stderr, re.M), result.stdout[-3000:]
        tables[batched] = {p.name: md5(p) for p in
                           (work / "results" / "fedkmeans" / "sweeps").glob("*.csv")}
    assert len(tables["true"]) == 11 and len(tables["false"]) == 2
    assert tables["false"] == {name: tables["true"][name] for name in tables["false"]}


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


def test_a_copy_takes_the_checkouts_kernels_only_when_asked(tmp_path):
    """A copy for a profile leaves the checkout's numba cache behind (it compiles its own, as
    a clone's set-up does); the tests' copies take it."""
    cache = tmp_path / "repo" / "src" / "fedclust" / "__pycache__"
    cache.mkdir(parents=True)
    (cache.parent / "lloyd.py").write_text("# njit\n")
    kept = ["lloyd._pass_kernel-224.py311.nbi", "lloyd._pass_kernel-224.py311.1.nbc",
            "numba-sources.sha256", "numba-cache.lock"]
    for name in [*kept, "lloyd.cpython-311.pyc"]:
        (cache / name).write_text("x")
    for kernels, expected in ((True, kept), (False, [])):
        dest = workdir.copy_workflow(tmp_path / "repo", tmp_path / f"copy-{kernels}",
                                     kernels=kernels)
        copied = dest / "src" / "fedclust"
        assert (copied / "lloyd.py").read_text() == "# njit\n"
        assert sorted(p.name for p in (copied / "__pycache__").iterdir()) == sorted(expected)


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

"""Whether a locked folder's lock belongs to a live Snakemake or to one that is gone."""

import subprocess
import sys
import time

from fedclust.pipeline.lock import lock_holders, lock_message


def _snakemake_in(folder, tmp_path):
    """A process whose command line is ``snakemake ...`` (a stand-in that sleeps), working
    in ``folder``."""
    program = tmp_path / "bin" / "snakemake"
    program.parent.mkdir()
    program.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    program.chmod(0o755)
    process = subprocess.Popen([str(program), "--cores", "2"], cwd=folder)
    time.sleep(0.5)
    return process


def test_a_live_snakemake_in_the_folder_holds_the_lock(tmp_path):
    folder = tmp_path / "run"
    (folder / ".snakemake" / "locks").mkdir(parents=True)
    assert lock_message(folder) is None  # no lock file: nothing to say
    (folder / ".snakemake" / "locks" / "0.output.lock").write_text("results/a.csv\n")
    message, alive = lock_message(folder)
    assert not alive and "no other run is alive on this machine" in message
    assert "`snakemake --unlock` is safe" in message
    process = _snakemake_in(folder, tmp_path)
    try:
        assert lock_holders(folder) == [process.pid]
        assert lock_holders(tmp_path) == []  # another folder's run is not this one's
        message, alive = lock_message(folder)
        assert alive and f"pid {process.pid}" in message and "do not --unlock" in message
    finally:
        process.kill()
        process.wait()
    assert lock_message(folder)[1] is False


def test_a_job_script_is_not_taken_for_snakemake(tmp_path):
    """A job runs ``python .snakemake/scripts/tmpXXXX.rule.py``: not a Snakemake."""
    folder = tmp_path / "run"
    scripts = folder / ".snakemake" / "scripts"
    scripts.mkdir(parents=True)
    script = scripts / "tmpabc.rule.py"
    script.write_text("import time\ntime.sleep(60)\n")
    process = subprocess.Popen([sys.executable, str(script)], cwd=folder)
    try:
        time.sleep(0.3)
        assert lock_holders(folder) == []
    finally:
        process.kill()
        process.wait()


#: A stand-in for Snakemake (a program named ``snakemake``) that starts one job and waits.
FAKE_SNAKEMAKE = """import subprocess, sys, time
job = subprocess.Popen([sys.executable, "-c", '''
import time
from fedclust.pipeline.lock import snakemake_ancestor, stop_with_snakemake
assert snakemake_ancestor() is not None
stop_with_snakemake(0.1)
print("job started", flush=True)
time.sleep(60)
'''], stdout=open(sys.argv[1], "w"), stderr=subprocess.STDOUT)
print(job.pid, flush=True)
time.sleep(60)
"""


def test_a_job_stops_when_its_snakemake_is_killed_outright(tmp_path):
    """kill -9 of Snakemake alone leaves its jobs running: each job watches it and stops."""
    import os
    import signal

    fake = tmp_path / "snakemake"
    fake.write_text(FAKE_SNAKEMAKE)
    log = tmp_path / "job.log"
    parent = subprocess.Popen([sys.executable, str(fake), str(log)], stdout=subprocess.PIPE,
                              text=True)
    job = int(parent.stdout.readline())
    deadline = time.monotonic() + 60
    while "job started" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the job never started"
        time.sleep(0.1)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{job}") and "Z" != open(f"/proc/{job}/stat").read().rsplit(
            ")", 1)[1].split()[0]:
        assert time.monotonic() < deadline, "the job outlived its Snakemake"
        time.sleep(0.1)
    assert f"the Snakemake that started this job (pid {parent.pid}) is gone" in log.read_text()


def test_a_process_no_snakemake_started_is_not_watched():
    from fedclust.pipeline.lock import snakemake_ancestor, stop_with_snakemake

    assert snakemake_ancestor() is None and stop_with_snakemake() is None

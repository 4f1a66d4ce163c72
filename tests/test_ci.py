"""The CI scripts: .ci/slurm-down.sh stops what .ci/slurm-up.sh recorded, and nothing else."""

import os
import subprocess
import time

import pytest

from .conftest import REPO


def test_slurm_down_stops_only_the_recorded_daemons(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("slurm-down.sh runs as root (it re-executes itself with sudo)")
    ours = subprocess.Popen(["sleep", "300"])
    theirs = subprocess.Popen(["sleep", "301"])
    try:
        (tmp_path / "ours.pid").write_text(str(ours.pid))
        (tmp_path / "theirs.pid").write_text(str(theirs.pid))
        state = tmp_path / "started"
        state.write_text(f"daemon {tmp_path / 'ours.pid'} sleep\n")
        env = dict(os.environ, SLURM_UP_STATE=str(state))
        result = subprocess.run(["bash", str(REPO / ".ci" / "slurm-down.sh")], text=True,
                                capture_output=True, env=env)
        assert result.returncode == 0, result.stderr
        assert "stopping sleep" in result.stdout
        for _ in range(50):
            if ours.poll() is not None:
                break
            time.sleep(0.1)
        assert ours.poll() is not None and theirs.poll() is None
        assert not state.exists()
        # nothing recorded: nothing to do
        again = subprocess.run(["bash", str(REPO / ".ci" / "slurm-down.sh")], text=True,
                               capture_output=True,
                               env=dict(os.environ, SLURM_UP_STATE=str(state)))
        assert again.returncode == 0 and again.stdout == ""
    finally:
        for process in (ours, theirs):
            process.kill()
            process.wait()

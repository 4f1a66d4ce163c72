"""The code base stays clean under ruff (pinned in requirements.txt, rules in pyproject.toml)."""

import subprocess
import sys

from .conftest import REPO


def test_ruff_is_clean():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "src", "tests",
                             "workflow/scripts", "benchmarks"], cwd=REPO, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout + result.stderr

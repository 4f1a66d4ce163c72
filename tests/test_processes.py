"""Helpers for the processes the package starts (fedclust.runtime.processes) that need no
optional extra: the cores a process may use, and a child's path to a given fedclust."""

import os
import subprocess
import sys

from fedclust.runtime.processes import source_first, usable_cores


def test_usable_cores_are_this_processs_affinity():
    assert usable_cores() == len(os.sched_getaffinity(0)) >= 1


def test_a_child_imports_the_source_put_first_on_its_path(tmp_path, monkeypatch):
    package = tmp_path / "fedclust"
    package.mkdir()
    (package / "__init__.py").write_text("WHERE = 'copy'\n")
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    env = source_first(tmp_path)
    assert env["PYTHONPATH"] == os.pathsep.join([str(tmp_path), "/elsewhere"])
    assert os.environ["PYTHONPATH"] == "/elsewhere"  # a copy: this process's is left alone
    done = subprocess.run([sys.executable, "-c", "import fedclust; print(fedclust.WHERE)"],
                          env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "copy"
    assert source_first(tmp_path, {})["PYTHONPATH"] == str(tmp_path)

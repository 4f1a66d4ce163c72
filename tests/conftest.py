"""Shared fixtures: small data made in the tests, and where the offline mirror lives."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from fedclust.data import MNIST_FILES

REPO = Path(__file__).resolve().parents[1]


#: Where SLURM's client reads its configuration (the file .ci/slurm-up.sh writes).
SLURM_CONF = Path("/etc/slurm/slurm.conf")


def pytest_configure(config):
    """Snakemake's SLURM executor plugin (2.8) runs ``scontrol show config`` when Snakemake
    starts, to word a help text; where SLURM's client is installed and its controller is down
    (between CI runs on this project's machines) scontrol retries for MessageTimeout - 1 s,
    9 s by default, on every Snakemake command a test runs. Unless the SLURM tests are on
    (FEDCLUST_TEST_SLURM=1, a live cluster), the tests' commands read a copy of the cluster's
    configuration with a 1 s MessageTimeout, so that scontrol gives up at once."""
    if (os.environ.get("FEDCLUST_TEST_SLURM") == "1" or "SLURM_CONF" in os.environ
            or shutil.which("scontrol") is None or not SLURM_CONF.is_file()):
        return
    folder = Path(tempfile.mkdtemp(prefix="fedclust-slurm-conf-"))
    kept = [line for line in SLURM_CONF.read_text().splitlines()
            if not re.match(r"\s*MessageTimeout\s*=", line, re.IGNORECASE)]
    (folder / "slurm.conf").write_text("\n".join([*kept, "MessageTimeout=1", ""]))
    os.environ["SLURM_CONF"] = str(folder / "slurm.conf")
    config._fedclust_slurm_conf = folder


def pytest_unconfigure(config):
    folder = getattr(config, "_fedclust_slurm_conf", None)
    if folder is not None:
        os.environ.pop("SLURM_CONF", None)
        shutil.rmtree(folder, ignore_errors=True)


def profile_config(quick: bool = False) -> dict:
    """A profile's config as the pipeline sees it: config/config.yaml, config/ci.yaml merged
    over it for the quick profile (as ``--configfile`` does: ci.yaml holds only what the
    quick profile changes), the schema's defaults filled in."""
    import yaml
    from snakemake.utils import update_config

    from fedclust.pipeline.config import validate_config

    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    if quick:
        update_config(config, yaml.safe_load((REPO / "config" / "ci.yaml").read_text()))
    return validate_config(config, REPO / "config" / "schema.yaml")


def shared_data_dir() -> Path | None:
    """The offline data mirror: $FEDCLUST_DATA_MIRROR, else ../shared/data beside the repo."""
    candidate = Path(os.environ.get("FEDCLUST_DATA_MIRROR", REPO.parent / "shared" / "data"))
    return candidate if candidate.is_dir() else None


@pytest.fixture
def mirror() -> Path:
    """The offline mirror; missing data fails under CI and skips elsewhere."""
    path = shared_data_dir()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs the offline data mirror at ../shared/data "
                        "(or FEDCLUST_DATA_MIRROR)")
        pytest.skip("offline data mirror not found")
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def make_blobs(rng, n_clusters=4, n_features=5, per_cluster=30, spread=50.0):
    """Well-separated blobs: centers on scaled axes, unit noise. Returns X, labels, centers."""
    centers = spread * np.eye(n_clusters, n_features) if n_clusters <= n_features else \
        spread * rng.standard_normal((n_clusters, n_features))
    labels = np.repeat(np.arange(n_clusters), per_cluster)
    X = centers[labels] + rng.standard_normal((len(labels), n_features))
    return X, labels, centers


def assert_same_rows(alone, more, **where):
    """The rows of setting ``where`` are identical whether other settings ran or not."""
    import pandas as pd

    def pick(table):
        sel = table
        for key, value in where.items():
            sel = sel[sel[key] == value]
        return sel.reset_index(drop=True)

    picked = pick(alone)
    assert len(picked) > 0
    pd.testing.assert_frame_equal(picked, pick(more)[picked.columns])


def write_idx(path, array: np.ndarray):
    codes = {np.dtype(np.uint8): 0x08}
    header = bytes([0, 0, codes[array.dtype], array.ndim])
    header += b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + array.tobytes())


def fake_mnist(root, rng, n_train=12, n_test=5):
    root.mkdir(parents=True, exist_ok=True)
    data = {}
    for part, n in (("train", n_train), ("test", n_test)):
        images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, size=n, dtype=np.uint8)
        write_idx(root / MNIST_FILES[f"{part}_images"].name, images)
        write_idx(root / MNIST_FILES[f"{part}_labels"].name, labels)
        data[part] = (images, labels)
    return data


@pytest.fixture
def torch_one_thread():
    """One torch thread for the test, as the pipeline's jobs run (and restored after)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _close_figures():
    """Every figure a test draws is closed after it: open figures pile up across tests
    (matplotlib warns past 20, and fedclust's RuntimeWarnings are errors here)."""
    yield
    import sys
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


#: Files whose module fixtures run for minutes (CI at 0a437cd: the killed and clean pipeline
#: runs 407 s, the Flower runs 446 s): started right after the quick profile, so that they do
#: not end the suite alone on one worker.
LONG_FILES = ("test_workflow.py", "test_flower.py")


def pytest_collection_modifyitems(config, items):
    """The files holding reproduction tests (the quick profile) come first, then
    :data:`LONG_FILES`, the rest in their order: CI's ``-n 2 --dist loadfile`` then starts one
    worker on the longest file while the other takes the long ones and every other file beside
    it, so that both end about together."""
    quick_profile_files = {item.path for item in items
                           if item.get_closest_marker("reproduction")}
    items.sort(key=lambda item: (item.path not in quick_profile_files,
                                 item.path.name not in LONG_FILES))

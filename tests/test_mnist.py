"""MNIST's idx files."""

import gzip

import numpy as np
import pytest

from fedclust.data import load_mnist
from fedclust.data.mnist import read_idx

from .conftest import fake_mnist, write_idx


def test_read_idx_round_trip_and_errors(tmp_path, rng):
    arr = rng.integers(0, 256, size=(3, 4, 5), dtype=np.uint8)
    write_idx(tmp_path / "a.idx.gz", arr)
    np.testing.assert_array_equal(read_idx(tmp_path / "a.idx.gz"), arr)
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04rest")
    with pytest.raises(ValueError, match="bad: not an idx file"):
        read_idx(tmp_path / "bad")
    with gzip.open(tmp_path / "short.gz", "wb") as fh:
        fh.write(bytes([0, 0, 8, 1]) + (10).to_bytes(4, "big") + b"\x00" * 3)
    with pytest.raises(ValueError, match=r"short.gz: idx header announces shape \(10,\)"):
        read_idx(tmp_path / "short.gz")


def test_load_mnist_from_idx_files(tmp_path, rng):
    data = fake_mnist(tmp_path / "mnist", rng)
    X, y = load_mnist(tmp_path / "mnist", split="all")
    assert X.shape == (17, 784) and X.dtype == np.float32
    np.testing.assert_allclose(X[:12], data["train"][0].reshape(12, -1) / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(y[12:], data["test"][1])
    Xt, _ = load_mnist(tmp_path / "mnist", split="test")
    assert Xt.shape == (5, 784)
    with pytest.raises(FileNotFoundError, match="MNIST file missing"):
        load_mnist(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="split must be"):
        load_mnist(tmp_path / "mnist", split="validation")

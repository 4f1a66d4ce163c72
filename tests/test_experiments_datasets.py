import gzip
import json

import numpy as np
import pytest

from fedclust.data import prepared as datasets
from fedclust.data.prepared import (
    PreparedData,
    prepare_femnist,
    prepare_mnist,
    read_prepared,
    write_prepared,
)

from .conftest import fake_mnist


def test_prepare_mnist_subsamples_with_the_seed(tmp_path, rng):
    fake_mnist(tmp_path / "raw", rng, n_train=30, n_test=10)
    full = prepare_mnist(tmp_path / "raw")
    assert full.X.shape == (40, 784) and not full.has_devices
    a = prepare_mnist(tmp_path / "raw", max_samples=12, seed=1)
    b = prepare_mnist(tmp_path / "raw", max_samples=12, seed=1)
    assert a.X.shape == (12, 784)
    np.testing.assert_array_equal(a.X, b.X)
    assert "12 of 40 images" in a.description


def write_leaf(directory, writers):
    (directory / "train").mkdir(parents=True)
    users = list(writers)
    data = {u: {"x": np.full((n, 784), 1.0).tolist(), "y": [i % 62 for i in range(n)]}
            for u, n in writers.items()}
    payload = {"users": users, "num_samples": [writers[u] for u in users], "user_data": data}
    with gzip.open(directory / "train" / "part.json.gz", "wt") as fh:
        json.dump(payload, fh)


def test_prepare_femnist_devices_are_writers(tmp_path):
    write_leaf(tmp_path / "run1", {"w1": 3, "w2": 2})
    write_leaf(tmp_path / "run2", {"w2": 5, "w3": 4})
    data = prepare_femnist(leaf_dirs=[tmp_path / "run1", tmp_path / "run2"], split="train")
    assert data.X.shape == (9, 784) and data.has_devices
    assert np.bincount(data.devices).tolist() == [3, 2, 4]  # w2 taken from the first run only
    few = prepare_femnist(leaf_dirs=[tmp_path / "run1", tmp_path / "run2"], split="train",
                          max_writers=2, seed=0)
    assert len(np.unique(few.devices)) == 2 and few.devices.max() == 1
    with pytest.raises(ValueError, match="exactly one of leaf_dirs or tff_h5"):
        prepare_femnist()


def test_prepared_round_trip(tmp_path, rng):
    data = PreparedData(name="toy", X=rng.standard_normal((5, 3)).astype(np.float32),
                        y=np.arange(5), devices=np.array([0, 0, 1, 1, 1]), description="toy",
                        params={"a": 1})
    write_prepared(data, tmp_path / "f.h5")
    back = read_prepared(tmp_path / "f.h5")
    np.testing.assert_array_equal(back.X, data.X)
    np.testing.assert_array_equal(back.devices, data.devices)
    assert back.params == {"a": 1} and back.name == "toy"


def test_embedding_subset_is_random_not_a_class_sorted_prefix():
    # The JPEG release of CIFAR-10 is stored class by class: a prefix of it holds few classes.
    y = np.repeat(np.arange(10), 500)
    X = np.arange(len(y) * 2).reshape(-1, 2)
    X_shuffled, y_shuffled = datasets._shuffled(X, y, seed=3)
    assert set(y_shuffled[:1000]) == set(range(10))
    assert (y_shuffled == y[X_shuffled[:, 0] // 2]).all()      # rows and labels stay paired
    np.testing.assert_array_equal(np.sort(X_shuffled[:, 0]), X[:, 0])


def test_an_embedding_rebuilt_from_the_same_inputs_has_the_same_bytes(tmp_path, rng):
    """No timing goes into an embedding's cache or its summary (the training time is logged):
    two trainings on the same files and seed write identical files."""
    pytest.importorskip("torch")
    fake_mnist(tmp_path / "raw", rng, n_train=40, n_test=10)
    settings = {"n_embed": 20, "max_train": 40, "epochs": 1}
    written = []
    for run in ("a", "b"):
        data, summary = datasets.embed("mnist_cnn", [str(tmp_path / "raw" / "x")], settings,
                                       seed=5)
        assert "epoch_seconds" not in data.params["history"]
        assert not any("seconds" in column for column in summary.columns)
        written.append(write_prepared(data, tmp_path / run / "features.h5").read_bytes())
    assert written[0] == written[1]

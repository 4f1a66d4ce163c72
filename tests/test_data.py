import gzip
import hashlib
import socket

import numpy as np
import pytest

from fedclust.data import (
    MNIST_FILES,
    ChecksumError,
    DataUnavailableError,
    RemoteFile,
    fetch,
    load_mnist,
    make_separated_mixture,
)
from fedclust.data.mnist import read_idx
from fedclust.metrics import separation


def remote_for(tmp_path, payload: bytes, *, good=True, urls=()):
    mirror = tmp_path / "mirror"
    (mirror / "set").mkdir(parents=True)
    (mirror / "set" / "file.bin").write_bytes(payload)
    digest = hashlib.sha256(payload if good else b"something else").hexdigest()
    return mirror, RemoteFile(name="file.bin", urls=tuple(urls), mirror_path="set/file.bin",
                              sha256=digest, md5=hashlib.md5(payload).hexdigest() if good else None)


def test_fetch_from_mirror_verifies_and_places_the_file(tmp_path):
    mirror, remote = remote_for(tmp_path, b"hello data")
    path = fetch(remote, tmp_path / "dest", mirror=mirror)
    assert path.read_bytes() == b"hello data"
    assert sorted(p.name for p in (tmp_path / "dest").iterdir()) == ["file.bin"]
    # a second call verifies the existing copy instead of copying again
    assert fetch(remote, tmp_path / "dest", mirror=None) == path


def test_checksum_mismatch_names_the_file_and_leaves_nothing(tmp_path):
    mirror, remote = remote_for(tmp_path, b"tampered", good=False)
    with pytest.raises(ChecksumError, match=r"sha256 mismatch for file\.bin \(from mirror"):
        fetch(remote, tmp_path / "dest", mirror=mirror)
    assert list((tmp_path / "dest").iterdir()) == []


def test_corrupt_existing_copy_is_reported(tmp_path):
    mirror, remote = remote_for(tmp_path, b"payload")
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "file.bin").write_bytes(b"payloaX")
    with pytest.raises(ChecksumError, match="file.bin"):
        fetch(remote, dest, mirror=mirror)


def test_missing_in_mirror_names_the_path(tmp_path):
    _, remote = remote_for(tmp_path, b"x")
    with pytest.raises(DataUnavailableError,
                       match=r"not found in the data mirror at .*set/file\.bin"):
        fetch(remote, tmp_path / "dest", mirror=tmp_path / "empty")


def test_offline_without_mirror_explains_what_to_do(tmp_path):
    # a closed local port stands in for an unreachable host
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _, remote = remote_for(tmp_path, b"x", urls=[f"http://127.0.0.1:{port}/file.bin"])
    with pytest.raises(DataUnavailableError, match="could not download file.bin.*data_mirror"):
        fetch(remote, tmp_path / "dest", progress=False)
    assert list((tmp_path / "dest").iterdir()) == []


def test_remote_file_needs_a_checksum():
    with pytest.raises(ValueError, match="needs an md5 or a sha256"):
        RemoteFile(name="a", urls=(), mirror_path="a")


def test_content_check_stands_in_for_a_missing_checksum(tmp_path):
    def starts_with_magic(path, label):
        if not path.read_bytes().startswith(b"MAGIC"):
            raise ValueError(f"{label}: no magic")
    mirror = tmp_path / "mirror"
    (mirror / "set").mkdir(parents=True)
    (mirror / "set" / "file.bin").write_bytes(b"MAGIC payload")
    remote = RemoteFile(name="file.bin", urls=(), mirror_path="set/file.bin",
                        check=starts_with_magic)
    assert fetch(remote, tmp_path / "ok", mirror=mirror).read_bytes() == b"MAGIC payload"
    (mirror / "set" / "file.bin").write_bytes(b"other bytes")
    with pytest.raises(ValueError, match=r"file\.bin \(from mirror .*\): no magic"):
        fetch(remote, tmp_path / "bad", mirror=mirror)
    assert list((tmp_path / "bad").iterdir()) == []


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


def test_mnist_checksums_match_the_mirror_manifest(mirror):
    manifest = dict(line.split()[::-1] for line in (mirror / "SHA256SUMS").read_text().splitlines()
                    if line.strip())
    for remote in MNIST_FILES.values():
        assert manifest[f"./{remote.mirror_path}"] == remote.sha256


@pytest.mark.parametrize("c", [0.05, 1.0, 100.0])
def test_generated_mixture_has_the_requested_separation(c):
    mix = make_separated_mixture(6, 10, c, samples_per_cluster=40, device_clusters=2,
                                 devices_per_cluster=3, random_state=1)
    measured = separation(mix.X, mix.labels, device_clusters=2, devices_per_cluster=3)
    assert measured.minimum == pytest.approx(c, rel=1e-9)
    np.testing.assert_allclose(measured.means, mix.centers, atol=1e-9)
    assert measured.residual_norm == pytest.approx(mix.residual_norm, rel=1e-12)


def test_generated_mixture_is_seeded():
    kw = dict(samples_per_cluster=10, device_clusters=1, devices_per_cluster=1)
    a = make_separated_mixture(3, 4, 2.0, random_state=5, **kw)
    b = make_separated_mixture(3, 4, 2.0, random_state=5, **kw)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, make_separated_mixture(3, 4, 2.0, random_state=6, **kw).X)
    with pytest.raises(ValueError, match="separation must be > 0"):
        make_separated_mixture(3, 4, 0.0, **kw)

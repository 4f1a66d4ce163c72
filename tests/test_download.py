"""Fetching verified files from a mirror or the official URLs."""

import hashlib
import socket

import pytest

from fedclust.data import ChecksumError, DataUnavailableError, RemoteFile, fetch


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


def test_every_mirrored_file_has_the_checksum_of_the_mirror_manifest(mirror):
    """The library's published checksums against the mirror's independent SHA256SUMS."""
    from fedclust.data import CIFAR10_FILES, MNIST_FILES, POSTURES_SUBSET, SHAKESPEARE_RAW
    manifest = dict(line.split()[::-1] for line in (mirror / "SHA256SUMS").read_text()
                    .splitlines() if line.strip())
    remotes = [*MNIST_FILES.values(), SHAKESPEARE_RAW, POSTURES_SUBSET, CIFAR10_FILES["jpeg"]]
    for remote in remotes:
        assert manifest[f"./{remote.mirror_path}"] == remote.sha256, remote.name

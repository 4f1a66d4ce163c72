import csv
import hashlib
import io
import pickle
import tarfile

import h5py
import numpy as np
import pytest
from PIL import Image

from fedclust.data import ChecksumError, DataUnavailableError, RemoteFile
from fedclust.data import cifar10 as cifar
from fedclust.data.cache import read_h5
from fedclust.data.cifar10 import (
    CIFAR10_BATCH_MD5,
    CIFAR10_CLASSES,
    CIFAR10_FILES,
    Cifar10FormatError,
    fetch_cifar10_jpeg,
    fetch_cifar10_python,
    load_cifar10,
    load_cifar10_cache,
    read_cifar10_batch,
    read_cifar10_jpeg_tar,
    read_cifar10_python,
)

BATCHES = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5",
           "test_batch"]

# ---------------------------------------------------------------------------------------------
# small files in the official formats, written by the tests


def random_images(rng, n):
    return rng.integers(0, 256, size=(n, 32, 32, 3), dtype=np.uint8)


def batch_bytes(images, labels, *, keys=(b"data", b"labels"), numpy1=True):
    """A pickled batch like the official ones: rows of R, G and B planes, row-major."""
    data = images.transpose(0, 3, 1, 2).reshape(len(images), 3072)
    batch = {b"batch_label": b"training batch 1 of 5", keys[0]: data,
             keys[1]: [int(v) for v in labels],  # plain ints, as in the official files
             b"filenames": [f"img_{i}.png".encode() for i in range(len(images))]}
    payload = pickle.dumps(batch, protocol=2)
    # the official files were written by numpy 1, which names numpy.core, not numpy._core
    return payload.replace(b"numpy._core.multiarray", b"numpy.core.multiarray") if numpy1 \
        else payload


def tar_bytes(members, mode="w:gz"):
    """A tar archive of ``{name: bytes}``; a value ``("symlink", target)`` makes a link."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as tar:
        for name, payload in members.items():
            info = tarfile.TarInfo(name)
            if isinstance(payload, tuple):
                info.type, info.linkname = tarfile.SYMTYPE, payload[1]
                tar.addfile(info)
            elif payload is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
    return buffer.getvalue()


@pytest.fixture
def official(rng):
    """Batches of 3 images each (test_batch: 2), as arrays and as pickled bytes."""
    arrays = {name: (random_images(rng, 2 if name == "test_batch" else 3),
                     rng.integers(0, 10, size=2 if name == "test_batch" else 3))
              for name in BATCHES}
    payloads = {name: batch_bytes(*arrays[name]) for name in BATCHES}
    return arrays, payloads


def fake_python_remote(monkeypatch, mirror, members, *, payloads=None, good=True):
    """Put a fake cifar-10-python.tar.gz in ``mirror`` and point the module's records at it."""
    archive = tar_bytes(members)
    (mirror / "cifar10").mkdir(parents=True, exist_ok=True)
    (mirror / "cifar10" / "fake-python.tar.gz").write_bytes(archive)
    digest = hashlib.sha256(archive if good else b"other").hexdigest()
    remote = RemoteFile(name="cifar-10-python.tar.gz", urls=(),
                        mirror_path="cifar10/fake-python.tar.gz", sha256=digest)
    monkeypatch.setitem(CIFAR10_FILES, "python", remote)
    for name, payload in (payloads or {}).items():
        monkeypatch.setitem(CIFAR10_BATCH_MD5, name, hashlib.md5(payload).hexdigest())
    return remote


def official_members(payloads):
    members = {"cifar-10-batches-py": None}
    members.update({f"cifar-10-batches-py/{name}": payloads[name] for name in BATCHES})
    members["cifar-10-batches-py/batches.meta"] = pickle.dumps({b"label_names": []})
    members["cifar-10-batches-py/readme.html"] = b"<html></html>"
    return members


# ---------------------------------------------------------------------------------------------
# official python batches


def test_read_batch_unpacks_rgb_planes_row_major(tmp_path, rng):
    images, labels = random_images(rng, 4), np.array([0, 9, 3, 3])
    path = tmp_path / "data_batch_1"
    path.write_bytes(batch_bytes(images, labels))
    X, y = read_cifar10_batch(path)
    assert X.dtype == np.uint8 and X.shape == (4, 32, 32, 3) and X.flags.c_contiguous
    np.testing.assert_array_equal(X, images)
    assert y.dtype == np.int64 and list(y) == [0, 9, 3, 3]
    # the layout itself: row = 1024 red, then 1024 green, then 1024 blue values, row-major
    data = pickle.loads(path.read_bytes(), encoding="bytes")[b"data"]
    assert tuple(X[1, 0, 0]) == (data[1, 0], data[1, 1024], data[1, 2048])
    assert X[1, 0, 1, 0] == data[1, 1] and X[1, 1, 0, 2] == data[1, 2048 + 32]
    # numpy 2 pickles and str keys (as pickle.load(..., encoding="latin1") would give) work too
    path.write_bytes(batch_bytes(images, labels, keys=("data", "labels"), numpy1=False))
    np.testing.assert_array_equal(read_cifar10_batch(path)[0], images)
    # labels stored as numpy integers instead of Python ints
    path.write_bytes(pickle.dumps({b"data": data, b"labels": list(np.array([1, 2, 3, 4]))}))
    assert list(read_cifar10_batch(path)[1]) == [1, 2, 3, 4]


def test_bad_batches_are_named(tmp_path, rng):
    images = random_images(rng, 2)
    path = tmp_path / "data_batch_3"
    cases = [
        (batch_bytes(images, [1, 2], keys=(b"data", b"fine_labels")),
         r"data_batch_3: missing key b'labels'"),
        (batch_bytes(images, [1]), r"data_batch_3: b'data' holds 2 images but b'labels' has "
                                   r"shape \(1,\)"),
        (batch_bytes(images, [1, 10]), r"b'labels' must hold integers in 0\.\.9"),
        (pickle.dumps({b"data": np.zeros((2, 100), np.uint8), b"labels": [0, 1]}),
         r"b'data' must be a uint8 array of shape \(n, 3072\); got uint8 \(2, 100\)"),
        (pickle.dumps([1, 2]), r"expected a pickled dict .* got a list"),
        (b"not a pickle", r"data_batch_3: not a CIFAR-10 python batch"),
    ]
    for payload, message in cases:
        path.write_bytes(payload)
        with pytest.raises(Cifar10FormatError, match=message):
            read_cifar10_batch(path)
    with pytest.raises(FileNotFoundError, match=r"CIFAR-10 batch file missing: .*test_batch"):
        read_cifar10_batch(tmp_path / "test_batch")


class _Evil:
    def __reduce__(self):
        return (open, ("should_not_exist", "w"))


def test_a_batch_cannot_run_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "data_batch_1"
    path.write_bytes(pickle.dumps({b"data": _Evil(), b"labels": []}, protocol=2))
    with pytest.raises(Cifar10FormatError, match=r"refusing to load the global .*open"):
        read_cifar10_batch(path)
    assert not (tmp_path / "should_not_exist").exists()


def test_fetch_and_load_official_batches(tmp_path, official, monkeypatch):
    arrays, payloads = official
    mirror = tmp_path / "mirror"
    fake_python_remote(monkeypatch, mirror, official_members(payloads), payloads=payloads)
    root = tmp_path / "data/cifar10"
    folder = fetch_cifar10_python(root, mirror=mirror, progress=False)
    assert folder == root / "cifar-10-batches-py"
    assert sorted(p.name for p in folder.iterdir()) == sorted(BATCHES)  # only the batches
    assert all((folder / name).read_bytes() == payloads[name] for name in BATCHES)

    X, y = read_cifar10_python(folder, "train")
    np.testing.assert_array_equal(X, np.concatenate([arrays[n][0] for n in BATCHES[:5]]))
    np.testing.assert_array_equal(y, np.concatenate([arrays[n][1] for n in BATCHES[:5]]))

    cache = tmp_path / "cache/cifar10.h5"
    data = load_cifar10(root, cache=cache, progress=False)  # batches present: no mirror needed
    np.testing.assert_array_equal(data.X_train, X)
    np.testing.assert_array_equal(data.y_train, y)
    np.testing.assert_array_equal(data.X_test, arrays["test_batch"][0])
    np.testing.assert_array_equal(data.y_test, arrays["test_batch"][1])
    assert data.source == "official python batches" and not data.is_approximation
    assert data.files == tuple(str(folder / name) for name in BATCHES)
    _, attrs = read_h5(cache, names=[])
    assert attrs["source"] == "official python batches"
    assert attrs["checksums"].splitlines()[0] == (
        f"data_batch_1 md5={hashlib.md5(payloads['data_batch_1']).hexdigest()}")

    # the cache is used when the source checksums agree ...
    def fail(*args, **kwargs):
        raise AssertionError("the batches were read again despite a valid cache")

    monkeypatch.setattr(cifar, "read_cifar10_python", fail)
    cached = load_cifar10(root, cache=cache, progress=False)
    np.testing.assert_array_equal(cached.X_train, X)
    assert cached.source == data.source and cached.checksums == data.checksums
    # ... and a modified batch is refused rather than silently served from the cache
    (folder / "test_batch").write_bytes(payloads["data_batch_1"])
    with pytest.raises(ChecksumError, match=r"md5 mismatch for test_batch"):
        load_cifar10(root, cache=cache, progress=False)


def test_official_archive_checksum_is_enforced(tmp_path, official, monkeypatch):
    _, payloads = official
    fake_python_remote(monkeypatch, tmp_path / "mirror", official_members(payloads),
                       payloads=payloads, good=False)
    with pytest.raises(ChecksumError, match=r"sha256 mismatch for cifar-10-python\.tar\.gz"):
        fetch_cifar10_python(tmp_path / "root", mirror=tmp_path / "mirror", progress=False)
    assert list((tmp_path / "root").iterdir()) == []


def test_batch_md5_is_enforced_on_extraction(tmp_path, official, monkeypatch):
    _, payloads = official
    fake_python_remote(monkeypatch, tmp_path / "mirror", official_members(payloads),
                       payloads=payloads)
    monkeypatch.setitem(CIFAR10_BATCH_MD5, "data_batch_4", "0" * 32)
    with pytest.raises(ChecksumError, match=r"md5 mismatch for data_batch_4 \(member "
                                            r"'cifar-10-batches-py/data_batch_4' of "):
        fetch_cifar10_python(tmp_path / "root", mirror=tmp_path / "mirror", progress=False)
    folder = tmp_path / "root/cifar-10-batches-py"
    assert sorted(p.name for p in folder.iterdir()) == BATCHES[:3]  # nothing half-written


@pytest.mark.parametrize("member, message", [
    ("../data_batch_1", "its path leaves the target folder"),
    ("cifar-10-batches-py/../../evil", "its path leaves the target folder"),
    ("/tmp/fedclust_cifar_evil", "its path leaves the target folder"),
    (("link", ("symlink", "/etc/passwd")), "not a regular file or folder"),
])
def test_unsafe_archive_members_are_refused(tmp_path, official, monkeypatch, member, message):
    _, payloads = official
    members = official_members(payloads)
    name, payload = member if isinstance(member, tuple) else (member, b"evil")
    members[name] = payload
    fake_python_remote(monkeypatch, tmp_path / "mirror", members, payloads=payloads)
    root = tmp_path / "deep/root"
    with pytest.raises(Cifar10FormatError, match=rf"refusing to extract '{name}': {message}"):
        fetch_cifar10_python(root, mirror=tmp_path / "mirror", progress=False)
    assert sorted(p.name for p in root.iterdir()) == ["cifar-10-batches-py",
                                                      "cifar-10-python.tar.gz"]
    assert list((root / "cifar-10-batches-py").iterdir()) == []
    assert not (tmp_path / "deep/data_batch_1").exists()


def test_missing_batch_member_and_missing_files_are_named(tmp_path, official, monkeypatch):
    _, payloads = official
    members = official_members(payloads)
    del members["cifar-10-batches-py/test_batch"]
    fake_python_remote(monkeypatch, tmp_path / "mirror", members, payloads=payloads)
    with pytest.raises(Cifar10FormatError, match=r"expected one member named 'test_batch', "
                                                 r"found 0"):
        fetch_cifar10_python(tmp_path / "root", mirror=tmp_path / "mirror", progress=False)
    with pytest.raises(FileNotFoundError, match=r"CIFAR-10 batch file\(s\) missing: .*"
                                                r"test_batch.*fetch_cifar10_python"):
        load_cifar10(tmp_path / "root", progress=False)
    with pytest.raises(FileNotFoundError, match=r"cifar10-jpeg-imagefolder\.tar"):
        load_cifar10(tmp_path / "root", source="jpeg", progress=False)
    with pytest.raises(ValueError, match=r"source must be one of \['jpeg', 'official'\]"):
        load_cifar10(tmp_path / "root", source="png")


# ---------------------------------------------------------------------------------------------
# JPEG re-encoding


def jpeg_bytes(colour, size=(32, 32), mode="RGB"):
    buffer = io.BytesIO()
    Image.new(mode, size, colour).save(buffer, format="JPEG", quality=95)
    return buffer.getvalue()


def colour(split, label, index):
    """A flat colour unique to (split, class, image): survives JPEG almost exactly."""
    return (20 * label + 10, 40 + 60 * index, 200 if split == "train" else 100)


@pytest.fixture
def jpeg_tar(tmp_path):
    """An ImageFolder tar with classes cat (3) and airplane/truck, members added unsorted."""
    members = {"train": None, "train/truck": None}
    layout = {("train", "truck"): 2, ("train", "airplane"): 2, ("train", "cat"): 3,
              ("test", "cat"): 1, ("test", "airplane"): 1}
    for (split, name), count in layout.items():
        label = CIFAR10_CLASSES.index(name)
        for index in reversed(range(count)):
            members[f"{split}/{name}/{index:04d}.jpg"] = jpeg_bytes(colour(split, label, index))
    path = tmp_path / "mirror/cifar10/fake-jpeg.tar"
    path.parent.mkdir(parents=True)
    path.write_bytes(tar_bytes(members, mode="w"))
    return path, layout


def expected_order(layout, split):
    """(label, index) in sorted member-name order: classes alphabetical = standard order."""
    rows = [(CIFAR10_CLASSES.index(name), i) for (s, name), count in layout.items()
            if s == split for i in range(count)]
    return sorted(rows)


def test_read_jpeg_tar_in_sorted_member_order(jpeg_tar):
    path, layout = jpeg_tar
    got = read_cifar10_jpeg_tar(path, progress=False)
    assert set(got) == {"train", "test"}
    for split in ("train", "test"):
        X, y = got[split]
        rows = expected_order(layout, split)
        assert X.dtype == np.uint8 and X.shape == (len(rows), 32, 32, 3)
        assert y.dtype == np.int64 and list(y) == [label for label, _ in rows]
        want = np.array([colour(split, label, i) for label, i in rows], dtype=float)
        assert np.abs(X.reshape(len(rows), -1, 3).mean(axis=1) - want).max() < 3  # lossy


def test_read_jpeg_tar_converts_greyscale_and_strips_dot_slash(tmp_path):
    path = tmp_path / "a.tar"
    path.write_bytes(tar_bytes({"./train/frog/1.jpg": jpeg_bytes(128, mode="L"),
                                "./test/ship/1.jpeg": jpeg_bytes((0, 0, 255))}, mode="w"))
    got = read_cifar10_jpeg_tar(path, progress=False)
    assert got["train"][0].shape == (1, 32, 32, 3) and list(got["train"][1]) == [6]
    assert abs(int(got["train"][0].mean()) - 128) <= 2 and list(got["test"][1]) == [8]


@pytest.mark.parametrize("member, payload, message", [
    ("train/cow/0000.jpg", "jpeg", r"unexpected member 'train/cow/0000\.jpg'; expected the "
                                   r"ImageFolder layout"),
    ("README.md", b"hello", r"unexpected member 'README\.md'"),
    ("train/cat/0000.png", "jpeg", r"unexpected member 'train/cat/0000\.png'"),
    ("train/cat/extra/0000.jpg", "jpeg", r"unexpected member"),
    ("../train/cat/0000.jpg", "jpeg", r"refusing member '\.\./train/cat/0000\.jpg': its path"),
    ("train/cat/link.jpg", ("symlink", "/etc/passwd"), r"refusing member 'train/cat/link\.jpg'"
                                                       r": not a regular file or folder"),
    ("train/cat/big.jpg", "big", r"member 'train/cat/big\.jpg': image is 16 x 16 pixels"),
    ("train/cat/bad.jpg", b"not a jpeg", r"member 'train/cat/bad\.jpg': cannot be decoded"),
])
def test_bad_jpeg_tar_members_are_named(tmp_path, member, payload, message):
    payload = {"jpeg": jpeg_bytes((1, 2, 3)), "big": jpeg_bytes((1, 2, 3), size=(16, 16))}.get(
        payload, payload) if isinstance(payload, str) else payload
    path = tmp_path / "bad.tar"
    path.write_bytes(tar_bytes({"train/cat/a.jpg": jpeg_bytes((9, 9, 9)),
                                "test/cat/a.jpg": jpeg_bytes((9, 9, 9)), member: payload},
                               mode="w"))
    with pytest.raises(Cifar10FormatError, match=message):
        read_cifar10_jpeg_tar(path, progress=False)


def test_jpeg_tar_without_a_split_or_not_a_tar(tmp_path):
    path = tmp_path / "train_only.tar"
    path.write_bytes(tar_bytes({"train/cat/a.jpg": jpeg_bytes((9, 9, 9))}, mode="w"))
    with pytest.raises(Cifar10FormatError, match=r"no images under test/"):
        read_cifar10_jpeg_tar(path, progress=False)
    path.write_bytes(b"not a tar at all")
    with pytest.raises(Cifar10FormatError, match=r"not a readable tar archive"):
        read_cifar10_jpeg_tar(path, progress=False)
    with pytest.raises(FileNotFoundError, match=r"CIFAR-10 JPEG tar missing"):
        read_cifar10_jpeg_tar(tmp_path / "absent.tar")


def fake_jpeg_remote(monkeypatch, path, *, good=True):
    digest = hashlib.sha256(path.read_bytes() if good else b"other").hexdigest()
    remote = RemoteFile(name="cifar10-jpeg-imagefolder.tar", urls=(),
                        mirror_path=f"cifar10/{path.name}", sha256=digest)
    monkeypatch.setitem(CIFAR10_FILES, "jpeg", remote)
    return remote


def test_jpeg_tar_is_mirror_only(tmp_path, jpeg_tar, monkeypatch):
    path, _ = jpeg_tar
    with pytest.raises(DataUnavailableError, match=r"third-party file with no official "
                                                   r"download URL"):
        fetch_cifar10_jpeg(tmp_path / "root")
    fake_jpeg_remote(monkeypatch, path, good=False)
    with pytest.raises(ChecksumError, match=r"sha256 mismatch for cifar10-jpeg-imagefolder"):
        fetch_cifar10_jpeg(tmp_path / "root", mirror=tmp_path / "mirror", progress=False)
    fake_jpeg_remote(monkeypatch, path)
    got = fetch_cifar10_jpeg(tmp_path / "root", mirror=tmp_path / "mirror", progress=False)
    assert got == tmp_path / "root/cifar10-jpeg-imagefolder.tar"
    assert got.read_bytes() == path.read_bytes()
    assert fetch_cifar10_jpeg(tmp_path / "root") == got  # present: verified, no mirror needed


def test_load_jpeg_source_with_cache(tmp_path, jpeg_tar, monkeypatch):
    path, layout = jpeg_tar
    fake_jpeg_remote(monkeypatch, path)
    root, cache = tmp_path / "root", tmp_path / "root/cifar10_jpeg.h5"
    data = load_cifar10(root, source="jpeg", mirror=tmp_path / "mirror", download=True,
                        cache=cache, progress=False)
    assert data.source == "JPEG re-encoding (lossy approximation)" and data.is_approximation
    assert list(data.y_train) == [label for label, _ in expected_order(layout, "train")]
    assert data.X_test.shape == (2, 32, 32, 3)
    with h5py.File(cache) as fh:
        assert fh.attrs["source"] == "JPEG re-encoding (lossy approximation)"
        assert bool(fh.attrs["is_approximation"])
        assert fh["X_train"].dtype == np.uint8
    again = load_cifar10_cache(cache)
    for key in ("X_train", "y_train", "X_test", "y_test"):
        np.testing.assert_array_equal(getattr(again, key), getattr(data, key))
    assert again.source == data.source and again.files == data.files

    # another tar (another checksum) makes the cache stale: it is rebuilt
    members = {"train/dog/0.jpg": jpeg_bytes((1, 1, 1)), "test/dog/0.jpg": jpeg_bytes((2, 2, 2))}
    path.write_bytes(tar_bytes(members, mode="w"))
    fake_jpeg_remote(monkeypatch, path)
    (root / "cifar10-jpeg-imagefolder.tar").write_bytes(path.read_bytes())
    rebuilt = load_cifar10(root, source="jpeg", cache=cache, progress=False)
    assert list(rebuilt.y_train) == [5] and list(load_cifar10_cache(cache).y_train) == [5]
    # a cache of the other source is rebuilt, not served
    fake_data = load_cifar10_cache(cache)
    fake_data.source = "official python batches"
    cifar.cache_cifar10(fake_data, cache)
    assert load_cifar10(root, source="jpeg", cache=cache, progress=False).is_approximation
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as fh:
        fh.attrs["format"] = "something else"
    with pytest.raises(Cifar10FormatError, match=r"other\.h5: not a CIFAR-10 cache"):
        load_cifar10_cache(other)


# ---------------------------------------------------------------------------------------------
# the offline mirror's real JPEG tar


@pytest.mark.slow
def test_jpeg_tar_on_the_mirror(mirror, tmp_path):
    data = load_cifar10(tmp_path, source="jpeg", mirror=mirror, download=True, progress=False)
    assert data.is_approximation
    assert data.X_train.shape == (50_000, 32, 32, 3) and data.X_test.shape == (10_000, 32, 32, 3)
    assert data.X_train.dtype == np.uint8 and data.y_train.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(data.y_train), [5_000] * 10)
    np.testing.assert_array_equal(np.bincount(data.y_test), [1_000] * 10)
    assert np.all(np.diff(data.y_train) >= 0)  # grouped by class, in the standard order

    # The tar numbers the images of a class in the order of the official batches: the k-th
    # image of class c among the first 200 of data_batch_1 (the mirror's lossless PNGs) is
    # train/<c>/{k:04d}.jpg, i.e. row 5000 * c + k here, up to JPEG's loss.
    folder = mirror / "cifar10/png_first200"
    with open(folder / "trainLabels.csv", newline="") as fh:
        rows = [row for row in csv.reader(fh) if row and row[0] != "id"]
    assert len(rows) == 200
    seen = np.zeros(10, dtype=int)
    errors, wrong = [], []
    for file, name in rows:
        label = CIFAR10_CLASSES.index(name)
        png = np.asarray(Image.open(folder / "train" / file).convert("RGB"), dtype=float)
        index = 5_000 * label + seen[label]
        seen[label] += 1
        errors.append(np.abs(data.X_train[index] - png).mean())
        wrong.append(np.abs(data.X_train[index + 1] - png).mean())
    errors, wrong = np.array(errors), np.array(wrong)
    assert errors.mean() < 8 and errors.max() < 15  # measured: 5.9 and 9.7 (of 255)
    assert np.median(wrong) > 40 and np.all(wrong > errors)  # the neighbour is another image

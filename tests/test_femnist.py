import gzip
import hashlib
import io
import json
import tarfile

import h5py
import numpy as np
import pytest

from fedclust.data import ChecksumError, RemoteFile, femnist
from fedclust.data.cache import read_h5
from fedclust.data.femnist import (
    TFF_EMNIST_FILES,
    FemnistFormatError,
    cache_femnist,
    fetch_tff_emnist,
    leaf_femnist_dirs,
    load_femnist_cache,
    load_leaf_femnist,
    load_tff_emnist_h5,
)

# ---------------------------------------------------------------------------------------------
# small LEAF json files written by the tests


def writer_data(rng, n, label=0):
    """``n`` images with pixels k/255 (as LEAF stores them) and labels starting at ``label``."""
    x = (rng.integers(0, 256, size=(n, 784)) / 255.0).tolist()
    y = [(label + i) % 62 for i in range(n)]
    return {"x": x, "y": y}


def leaf_doc(user_data):
    users = list(user_data)
    return {"users": users, "num_samples": [len(user_data[u]["y"]) for u in users],
            "user_data": user_data}


def write_json(path, doc, *, gz=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    text = doc if isinstance(doc, str) else json.dumps(doc)
    if gz if gz is not None else path.name.endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


def images(entry):
    return np.asarray(entry["x"], dtype=np.float32)


@pytest.fixture
def leaf_dirs(tmp_path, rng):
    """Two LEAF directories; writer 'w2' is in both (different data), 'w1' has train and test."""
    data = {
        ("A", "train", "w1"): writer_data(rng, 3, 0),
        ("A", "train", "w2"): writer_data(rng, 2, 10),
        ("A", "test", "w1"): writer_data(rng, 1, 20),
        ("A", "test", "w2"): writer_data(rng, 1, 30),
        ("B", "train", "w2"): writer_data(rng, 4, 40),
        ("B", "train", "w3"): writer_data(rng, 2, 50),
        ("B", "test", "w3"): writer_data(rng, 2, 60),
    }
    write_json(tmp_path / "A/train/all_data_0_train.json",
               leaf_doc({"w1": data["A", "train", "w1"], "w2": data["A", "train", "w2"]}))
    write_json(tmp_path / "A/test/all_data_0_test.json.gz",
               leaf_doc({"w1": data["A", "test", "w1"], "w2": data["A", "test", "w2"]}))
    write_json(tmp_path / "B/train/all_data_1_train.json.gz", leaf_doc(
        {"w2": data["B", "train", "w2"]}))
    write_json(tmp_path / "B/train/all_data_2_train.json.gz", leaf_doc(
        {"w3": data["B", "train", "w3"]}))
    write_json(tmp_path / "B/test/all_data_2_test.json", leaf_doc({"w3": data["B", "test", "w3"]}))
    (tmp_path / "B/test/README.txt").write_text("not json")
    return tmp_path / "A", tmp_path / "B", data


def test_load_leaf_reads_plain_and_gzip_and_joins_train_and_test(leaf_dirs):
    a, _, data = leaf_dirs
    got = load_leaf_femnist(a, split="all")
    assert got.X.dtype == np.float32 and got.y.dtype == np.int64 and got.writers.dtype == np.int64
    np.testing.assert_array_equal(got.writer_ids, ["w1", "w2"])
    np.testing.assert_array_equal(got.writers, [0, 0, 0, 0, 1, 1, 1])
    expected = [data["A", part, w] for w in ("w1", "w2") for part in ("train", "test")]
    np.testing.assert_array_equal(got.X, np.concatenate([images(e) for e in expected]))
    np.testing.assert_array_equal(got.y, np.concatenate([e["y"] for e in expected]))
    np.testing.assert_array_equal(got.samples_per_writer(), [4, 3])
    assert list(got.sources) == [str(a), str(a)]
    assert got.files == (str(a / "train/all_data_0_train.json"),
                         str(a / "test/all_data_0_test.json.gz"))
    train = load_leaf_femnist([a], split="train")
    assert train.n_samples == 5 and list(train.writer_ids) == ["w1", "w2"]
    test = load_leaf_femnist(a, split="test")
    np.testing.assert_array_equal(test.X, np.concatenate(
        [images(data["A", "test", "w1"]), images(data["A", "test", "w2"])]))
    assert test.files == (str(a / "test/all_data_0_test.json.gz"),)


def test_writer_in_several_directories_is_taken_from_the_first(leaf_dirs):
    a, b, data = leaf_dirs
    ab = load_leaf_femnist([a, b])
    np.testing.assert_array_equal(ab.writer_ids, ["w1", "w2", "w3"])
    np.testing.assert_array_equal(ab.samples_per_writer(), [4, 3, 4])
    np.testing.assert_array_equal(ab.X[ab.writers == 1], np.concatenate(
        [images(data["A", "train", "w2"]), images(data["A", "test", "w2"])]))
    assert list(ab.sources) == [str(a), str(a), str(b)]
    assert len(ab.files) == 5  # every file is read (and checked), even if all its writers are
    ba = load_leaf_femnist([str(b), str(a)])
    np.testing.assert_array_equal(ba.writer_ids, ["w2", "w3", "w1"])
    np.testing.assert_array_equal(ba.X[ba.writers == 0], images(data["B", "train", "w2"]))
    assert list(ba.sources) == [str(b), str(b), str(a)]


def test_writer_twice_in_one_directory_and_split_is_an_error(tmp_path, rng):
    write_json(tmp_path / "d/train/a.json", leaf_doc({"w": writer_data(rng, 1)}))
    write_json(tmp_path / "d/train/b.json", leaf_doc({"w": writer_data(rng, 1)}))
    with pytest.raises(FemnistFormatError, match=r"writer 'w' appears in two train files of the "
                                                 r"same directory: .*a\.json and .*b\.json"):
        load_leaf_femnist(tmp_path / "d")


def test_directory_errors(tmp_path, rng):
    with pytest.raises(FileNotFoundError, match="LEAF data directory not found: .*nowhere"):
        load_leaf_femnist(tmp_path / "nowhere")
    (tmp_path / "empty/train").mkdir(parents=True)
    (tmp_path / "empty/train/notes.txt").write_text("x")
    with pytest.raises(FileNotFoundError, match=r"empty: no LEAF json file \(\*\.json or "
                                                r"\*\.json\.gz\) in .*empty/train or .*empty/test"):
        load_leaf_femnist(tmp_path / "empty")
    write_json(tmp_path / "d/train/a.json", leaf_doc({"w": writer_data(rng, 1)}))
    with pytest.raises(FileNotFoundError, match=r"no LEAF json file .* in .*d/test$"):
        load_leaf_femnist(tmp_path / "d", split="test")
    with pytest.raises(ValueError, match="split must be"):
        load_leaf_femnist(tmp_path / "d", split="valid")
    with pytest.raises(ValueError, match="dirs is empty"):
        load_leaf_femnist([])
    write_json(tmp_path / "e/train/a.json", leaf_doc({"w": {"x": [], "y": []}}))
    with pytest.raises(FemnistFormatError, match="no samples found in .*e'.*split='all'"):
        load_leaf_femnist(tmp_path / "e")


def _drop(key):
    def edit(doc):
        del doc[key]
    return edit


def _edit_writer(fn):
    def edit(doc):
        fn(doc["user_data"]["w1"])
    return edit


BAD_DOCS = {
    "missing users": (_drop("users"), r"missing key\(s\) \['users'\]"),
    "missing user_data": (_drop("user_data"), r"missing key\(s\) \['user_data'\]"),
    "missing x": (_edit_writer(lambda e: e.pop("x")), r"writer 'w1': missing key\(s\) \['x'\]"),
    "missing y": (_edit_writer(lambda e: e.pop("y")), r"writer 'w1': missing key\(s\) \['y'\]"),
    "short row": (_edit_writer(lambda e: e["x"][1].pop()),
                  r"writer 'w1': image 1 of 'x' has 783 values; expected 784"),
    "long rows": (_edit_writer(lambda e: [row.append(1.0) for row in e["x"]]),
                  r"writer 'w1': image 0 of 'x' has 785 values"),
    "flat x": (_edit_writer(lambda e: e.update(x=[1.0] * len(e["y"]))),
               r"writer 'w1': image 0 of 'x' is a float, not a list of 784 values"),
    "non-numeric x": (_edit_writer(lambda e: e["x"][0].__setitem__(5, "ink")),
                      r"writer 'w1': 'x' must hold 784 numbers per image"),
    "null pixel": (_edit_writer(lambda e: e["x"][1].__setitem__(5, None)),
                   r"writer 'w1': 'x' holds missing or non-finite values"),
    "x/y lengths": (_edit_writer(lambda e: e["y"].append(3)),
                    r"writer 'w1': 'x' holds 2 images but 'y' holds 3 labels"),
    "x not a list": (_edit_writer(lambda e: e.update(x="pixels")),
                     r"writer 'w1': 'x' must be a list; got a str"),
    "label range": (_edit_writer(lambda e: e["y"].__setitem__(0, 62)),
                    r"writer 'w1': labels must be in 0\.\.61; got values in 2\.\.62"),
    "float labels": (_edit_writer(lambda e: e["y"].__setitem__(0, 1.5)),
                     r"writer 'w1': labels must be integers; got dtype float64"),
    "unlisted writer": (lambda doc: doc["users"].remove("w2"),
                        r"'user_data' holds writer\(s\) not listed in 'users': \['w2'\]"),
    "listed, no data": (lambda doc: doc["user_data"].pop("w2"),
                        r"writer 'w2' is listed in 'users' but has no entry in 'user_data'"),
    "num_samples": (lambda doc: doc["num_samples"].__setitem__(0, 5),
                    r"writer 'w1': 'num_samples' says 5 but 'y' holds 2 labels"),
    "users twice": (lambda doc: doc["users"].append("w1"),
                    r"writer\(s\) \['w1'\] listed twice in 'users'"),
    "user_data list": (lambda doc: doc.update(user_data=[]), r"'user_data' must be an object"),
}


@pytest.mark.parametrize("gz", [False, True], ids=["json", "gz"])
@pytest.mark.parametrize("case", list(BAD_DOCS))
def test_bad_leaf_content_names_file_writer_and_key(tmp_path, rng, case, gz):
    edit, message = BAD_DOCS[case]
    doc = leaf_doc({"w1": writer_data(rng, 2, 1), "w2": writer_data(rng, 1)})
    edit(doc)
    name = "all_data_7.json.gz" if gz else "all_data_7.json"
    write_json(tmp_path / "d/train" / name, doc)
    with pytest.raises(FemnistFormatError, match=rf"all_data_7\.json(\.gz)?: .*{message}"):
        load_leaf_femnist(tmp_path / "d")


@pytest.mark.parametrize("name, payload, message", [
    ("bad.json", '{"users": ["w"], "user_data": {', r"bad\.json: malformed JSON"),
    ("bad.json.gz", '{"users": [} ', r"bad\.json\.gz: malformed JSON"),
    ("list.json", "[1, 2]", r"list\.json: expected a JSON object .*; got a list"),
    ("notgzip.json.gz", None, r"notgzip\.json\.gz: cannot be read"),
])
def test_unreadable_leaf_files_are_named(tmp_path, name, payload, message):
    path = tmp_path / "d/test" / name
    if payload is None:
        path.parent.mkdir(parents=True)
        path.write_bytes(b"plain bytes, not gzip")
    else:
        write_json(path, payload)
    with pytest.raises(FemnistFormatError, match=message):
        load_leaf_femnist(tmp_path / "d", split="test")


def test_leaf_femnist_dirs_lists_the_mirror_sample_folders(tmp_path):
    for name in ("leaf_sample_b", "leaf_sample_a", "other"):
        (tmp_path / "femnist" / name).mkdir(parents=True)
    (tmp_path / "femnist/leaf_sample_file").write_text("")
    assert [p.name for p in leaf_femnist_dirs(tmp_path)] == ["leaf_sample_a", "leaf_sample_b"]
    with pytest.raises(FileNotFoundError, match="no LEAF FEMNIST folder femnist/leaf_sample_"):
        leaf_femnist_dirs(tmp_path / "nowhere")


# ---------------------------------------------------------------------------------------------
# TFF HDF5 layout


def write_tff_h5(path, clients):
    with h5py.File(path, "w") as fh:
        examples = fh.create_group("examples")
        for client, (pixels, label) in clients.items():
            group = examples.create_group(client)
            group.create_dataset("pixels", data=pixels)
            group.create_dataset("label", data=label)
    return path


def tff_clients(rng, sizes):
    return {cid: (rng.random((n, 28, 28), dtype=np.float32),
                  rng.integers(0, 62, size=n).astype(np.int32)) for cid, n in sizes.items()}


def test_load_tff_h5_in_sorted_client_order(tmp_path, rng):
    clients = tff_clients(rng, {"f0002_13": 3, "f0000_01": 2, "f0001_07": 4})
    path = write_tff_h5(tmp_path / "fed_emnist_train.h5", clients)
    got = load_tff_emnist_h5(path)
    order = ["f0000_01", "f0001_07", "f0002_13"]
    np.testing.assert_array_equal(got.writer_ids, order)
    np.testing.assert_array_equal(got.samples_per_writer(), [2, 4, 3])
    np.testing.assert_array_equal(got.X, np.concatenate(
        [clients[c][0].reshape(-1, 784) for c in order]))
    np.testing.assert_array_equal(got.y, np.concatenate([clients[c][1] for c in order]))
    assert got.X.dtype == np.float32 and got.y.dtype == np.int64
    assert got.files == (str(path),) and set(got.sources) == {str(path)}
    first = load_tff_emnist_h5(path, max_clients=2)
    np.testing.assert_array_equal(first.writer_ids, order[:2])
    assert first.n_samples == 6
    with pytest.raises(ValueError, match="max_clients must be >= 1"):
        load_tff_emnist_h5(path, max_clients=0)


def test_bad_tff_h5_is_named(tmp_path, rng):
    with pytest.raises(FileNotFoundError, match="TFF EMNIST HDF5 file missing"):
        load_tff_emnist_h5(tmp_path / "missing.h5")
    (tmp_path / "text.h5").write_text("not hdf5")
    with pytest.raises(FemnistFormatError, match=r"text\.h5: not an HDF5 file"):
        load_tff_emnist_h5(tmp_path / "text.h5")
    with h5py.File(tmp_path / "flat.h5", "w") as fh:
        fh["pixels"] = np.zeros((1, 28, 28))
    with pytest.raises(FemnistFormatError, match=r"flat\.h5: no group 'examples'.*\['pixels'\]"):
        load_tff_emnist_h5(tmp_path / "flat.h5")
    pixels, label = tff_clients(rng, {"c": 3})["c"]
    cases = {
        "nolabel": ({"c": (pixels, label)}, "label",
                    r"client 'c': missing dataset\(s\) \['label'\]"),
        "shape": ({"c": (pixels.reshape(3, 784), label)}, None,
                  r"client 'c': 'pixels' must have shape \(n, 28, 28\); got \(3, 784\)"),
        "length": ({"c": (pixels, label[:2])}, None,
                   r"client 'c': 'pixels' holds 3 images but 'label' has shape \(2,\)"),
        "range": ({"c": (pixels, label - 100)}, None, r"client 'c': labels must be in 0\.\.61"),
    }
    for name, (clients, drop, message) in cases.items():
        path = write_tff_h5(tmp_path / f"{name}.h5", clients)
        if drop:
            with h5py.File(path, "a") as fh:
                del fh["examples/c"][drop]
        with pytest.raises(FemnistFormatError, match=rf"{name}\.h5: {message}"):
            load_tff_emnist_h5(path)


# ---------------------------------------------------------------------------------------------
# TFF archive: fetch, verify, extract safely


def h5_bytes(tmp_path, rng, name, sizes):
    return write_tff_h5(tmp_path / name, tff_clients(rng, sizes)).read_bytes()


def make_tar_bz2(path, members):
    """``members``: name -> bytes (a regular file) or ("symlink", target)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:bz2") as tar:
        for name, payload in members.items():
            info = tarfile.TarInfo(name)
            if isinstance(payload, tuple):
                info.type, info.linkname = tarfile.SYMTYPE, payload[1]
                tar.addfile(info)
            else:
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
    return path


def fake_tff_remote(monkeypatch, mirror, members, *, key="all", good=True):
    """Put a TFF-like archive in ``mirror`` and point TFF_EMNIST_FILES[key] at it."""
    name = TFF_EMNIST_FILES[key].name
    archive = make_tar_bz2(mirror / "tff" / name, members)
    digest = hashlib.sha256(archive.read_bytes() if good else b"other").hexdigest()
    remote = RemoteFile(name=name, urls=(), mirror_path=f"tff/{name}", sha256=digest)
    monkeypatch.setitem(femnist.TFF_EMNIST_FILES, key, remote)
    return archive


def test_fetch_tff_emnist_verifies_and_extracts(tmp_path, rng, monkeypatch):
    train = h5_bytes(tmp_path, rng, "a.h5", {"c1": 2, "c0": 1})
    test = h5_bytes(tmp_path, rng, "b.h5", {"c0": 1})
    fake_tff_remote(monkeypatch, tmp_path / "mirror", {
        "fed_emnist_train.h5": train, "./fed_emnist_test.h5": test, "README": b"hello"})
    root = tmp_path / "data/femnist"
    paths = fetch_tff_emnist(root, mirror=tmp_path / "mirror", progress=False)
    assert paths == {"train": root / "fed_emnist_train.h5", "test": root / "fed_emnist_test.h5"}
    assert paths["train"].read_bytes() == train and paths["test"].read_bytes() == test
    assert sorted(p.name for p in root.iterdir()) == [
        "fed_emnist.tar.bz2", "fed_emnist_test.h5", "fed_emnist_train.h5"]
    np.testing.assert_array_equal(load_tff_emnist_h5(paths["train"]).writer_ids, ["c0", "c1"])
    # present files are kept: no mirror needed, the archive is verified again
    paths["test"].write_bytes(b"kept")
    assert fetch_tff_emnist(root, progress=False) == paths
    assert paths["test"].read_bytes() == b"kept"


def test_fetch_tff_emnist_digits_only_uses_its_own_archive(tmp_path, rng, monkeypatch):
    payload = h5_bytes(tmp_path, rng, "a.h5", {"c": 1})
    fake_tff_remote(monkeypatch, tmp_path / "mirror", {
        "fed_emnist_digitsonly_train.h5": payload, "fed_emnist_digitsonly_test.h5": payload},
        key="digits")
    paths = fetch_tff_emnist(tmp_path / "root", mirror=tmp_path / "mirror", digits_only=True,
                             progress=False)
    assert [p.name for p in paths.values()] == ["fed_emnist_digitsonly_train.h5",
                                                "fed_emnist_digitsonly_test.h5"]


def test_fetch_tff_emnist_refuses_a_bad_checksum(tmp_path, monkeypatch):
    fake_tff_remote(monkeypatch, tmp_path / "mirror", {
        "fed_emnist_train.h5": b"x", "fed_emnist_test.h5": b"y"}, good=False)
    with pytest.raises(ChecksumError, match=r"sha256 mismatch for fed_emnist\.tar\.bz2"):
        fetch_tff_emnist(tmp_path / "root", mirror=tmp_path / "mirror", progress=False)
    assert list((tmp_path / "root").iterdir()) == []


@pytest.mark.parametrize("member, message", [
    ("../fed_emnist_train.h5", "its path leaves the target folder"),
    ("sub/../../evil", "its path leaves the target folder"),
    ("/tmp/fedclust_evil.h5", "its path leaves the target folder"),
    (("link", ("symlink", "/etc/passwd")), "not a regular file or folder"),
])
def test_fetch_tff_emnist_refuses_unsafe_members(tmp_path, monkeypatch, member, message):
    name, payload = member if isinstance(member, tuple) else (member, b"evil")
    fake_tff_remote(monkeypatch, tmp_path / "mirror", {
        "fed_emnist_train.h5": b"x", "fed_emnist_test.h5": b"y", name: payload})
    root = tmp_path / "deep/root"
    with pytest.raises(FemnistFormatError, match=rf"refusing to extract '{name}': {message}"):
        fetch_tff_emnist(root, mirror=tmp_path / "mirror", progress=False)
    assert sorted(p.name for p in root.iterdir()) == ["fed_emnist.tar.bz2"]
    assert not (tmp_path / "deep/fed_emnist_train.h5").exists()


def test_fetch_tff_emnist_names_a_missing_member(tmp_path, monkeypatch):
    fake_tff_remote(monkeypatch, tmp_path / "mirror", {"fed_emnist_train.h5": b"x"})
    with pytest.raises(FemnistFormatError, match=r"expected one member named "
                                                 r"'fed_emnist_test\.h5', found 0"):
        fetch_tff_emnist(tmp_path / "root", mirror=tmp_path / "mirror", progress=False)


# ---------------------------------------------------------------------------------------------
# cache


def test_cache_round_trip_keeps_arrays_and_source_checksums(leaf_dirs, tmp_path):
    a, b, _ = leaf_dirs
    data = load_leaf_femnist([a, b])
    path = cache_femnist(data, tmp_path / "data/femnist/leaf_all.h5", attrs={"split": "all"})
    back = load_femnist_cache(path)
    for field in ("X", "y", "writers", "writer_ids", "sources"):
        np.testing.assert_array_equal(getattr(back, field), getattr(data, field))
    assert back.X.dtype == np.float32 and back.files == data.files
    arrays, attrs = read_h5(path, names=["files", "files_sha256"])
    assert list(arrays["files_sha256"]) == [
        hashlib.sha256(open(f, "rb").read()).hexdigest() for f in data.files]
    assert attrs["split"] == "all" and attrs["n_writers"] == 3 and attrs["n_samples"] == 11
    assert "background 1.0" in attrs["pixel_convention"] and len(attrs["sources_sha256"]) == 64
    # the digest over all sources changes with any source file
    (a / "train/all_data_0_train.json").write_text(
        (a / "train/all_data_0_train.json").read_text().replace('"w1"', '"w9"'))
    other = cache_femnist(load_leaf_femnist([a, b]), tmp_path / "other.h5")
    assert read_h5(other, names=[])[1]["sources_sha256"] != attrs["sources_sha256"]


def test_cache_errors(leaf_dirs, tmp_path):
    from fedclust.data.cache import write_h5
    write_h5(tmp_path / "plain.h5", {"X": np.zeros((2, 3))})
    with pytest.raises(FemnistFormatError, match=r"plain\.h5: not a FEMNIST cache"):
        load_femnist_cache(tmp_path / "plain.h5")
    with pytest.raises(FileNotFoundError, match="cache file missing"):
        load_femnist_cache(tmp_path / "missing.h5")
    data = load_leaf_femnist(leaf_dirs[0])
    data.files = data.files + (str(tmp_path / "gone.json"),)
    with pytest.raises(FileNotFoundError, match=r"cannot checksum the source file\(s\) .*gone"):
        cache_femnist(data, tmp_path / "c.h5")


# ---------------------------------------------------------------------------------------------
# the offline mirror's three LEAF sampling runs


@pytest.mark.slow
def test_leaf_femnist_on_the_mirror(mirror):
    dirs = leaf_femnist_dirs(mirror)
    assert [d.name for d in dirs] == [
        "leaf_sample_arakotom_flic", "leaf_sample_slz-ai", "leaf_sample_wenzhu23333"]
    train = load_leaf_femnist(dirs, split="train")
    test = load_leaf_femnist(dirs, split="test")
    for part in (train, test):
        # 110 + 105 + 105 writers, 20 of them in two runs: 300 distinct, each with train and test
        assert part.n_writers == 300 and len(set(part.writer_ids)) == 300
        np.testing.assert_array_equal(np.unique(part.sources, return_counts=True)[1],
                                      [110, 102, 88])
        assert len(part.files) == 60
        assert np.array_equal(np.unique(part.y), np.arange(62))
        assert part.X.dtype == np.float32 and part.X.shape == (part.n_samples, 784)
        assert part.X.min() == 0.0 and part.X.max() == 1.0
        assert (part.X == 1.0).mean() > 0.8  # background is 1.0
    np.testing.assert_array_equal(train.writer_ids, test.writer_ids)
    # after deduplication; the three runs hold 14,697 + 14,708 + 14,640 = 44,045 train rows
    assert train.n_samples == 41_202 and test.n_samples == 4_730
    assert train.samples_per_writer().min() == 2 and train.samples_per_writer().max() == 320

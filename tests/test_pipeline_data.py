"""Which files each data set comes from, for each config."""

import os

import pytest

from fedclust.data import MNIST_FILES
from fedclust.pipeline import data


def config(mirror=None, **datasets):
    base = {"femnist": {"source": "auto", "leaf_dirs": None},
            "cifar10_cnn": {"source": "auto"},
            "postures": {"source": "auto", "csv": None}}
    for name, values in datasets.items():
        base[name] = {**base.get(name, {}), **values}
    return {"data_mirror": None if mirror is None else str(mirror), "datasets": base}


@pytest.fixture
def fake_mirror(tmp_path):
    (tmp_path / "femnist" / "leaf_sample_a" / "train").mkdir(parents=True)
    (tmp_path / "femnist" / "leaf_sample_a" / "train" / "x.json.gz").write_bytes(b"")
    (tmp_path / "cifar10").mkdir()
    (tmp_path / "cifar10" / "cifar10-jpeg-imagefolder.tar").write_bytes(b"")
    (tmp_path / "postures").mkdir()
    (tmp_path / "postures" / "Postures.subset_classes1-3_users0-2.csv").write_text("")
    return tmp_path


def test_auto_sources_follow_what_the_mirror_holds(fake_mirror, tmp_path):
    with_mirror = config(fake_mirror)
    assert data.source("femnist", with_mirror) == "leaf"
    assert data.source("cifar10_cnn", with_mirror) == "jpeg"
    assert data.source("postures", with_mirror) == "subset"
    without = config()
    assert data.source("femnist", without) == "tff"
    assert data.source("cifar10_cnn", without) == "official"
    assert data.source("postures", without) == "uci"
    assert data.source("mnist", without) == "official"
    assert data.source("postures", config(fake_mirror, postures={"source": "uci"})) == "uci"


def test_raw_files_use_the_loaders_file_names(fake_mirror):
    cfg = config(fake_mirror)
    assert data.raw_files("mnist", cfg) == [f"data/mnist/raw/{r.name}" for r in
                                            MNIST_FILES.values()]
    assert data.raw_files("mnist_cnn", cfg) == data.raw_files("mnist", cfg)
    assert data.raw_files("postures", cfg) == [
        "data/postures/raw/Postures.subset_classes1-3_users0-2.csv"]
    assert data.raw_files("postures", config()) == ["data/postures/raw/Postures.csv"]
    assert data.raw_files("femnist", cfg)[0].endswith("leaf_sample_a/train/x.json.gz")
    assert data.raw_files("femnist", config())[0] == "data/femnist/tff/fed_emnist_train.h5"
    assert data.raw_files("cifar10_cnn", cfg) == ["data/cifar10/images.h5"]
    assert data.fetch_outputs("fetch_cifar10", config())[0].endswith(
        "cifar-10-batches-py/data_batch_1")
    with pytest.raises(ValueError, match="unknown data set 'svhn'"):
        data.raw_files("svhn", cfg)


def test_registry_lists_and_mirror_check(tmp_path):
    assert data.dataset_names(embedding=True) == ["mnist_cnn", "cifar10_cnn"]
    assert data.dataset_names(natural=True) == ["femnist", "shakespeare", "postures"]
    data.check_mirror(config(tmp_path))
    with pytest.raises(FileNotFoundError, match="data_mirror=.*nowhere: no such folder"):
        data.check_mirror(config(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="femnist/leaf_sample_"):
        data.leaf_femnist_dirs(config(tmp_path))


def test_a_damaged_local_copy_is_removed_naming_its_checksum(tmp_path):
    config = {"data_mirror": None, "datasets": {"postures": {"source": "uci", "csv": None},
                                                "cifar10_cnn": {"source": "official"},
                                                "femnist": {"source": "tff", "leaf_dirs": []}}}
    checks = data.local_checks("fetch_mnist", config)
    assert sorted(checks) == sorted(f"data/mnist/raw/{r.name}" for r in MNIST_FILES.values())
    # files without a published checksum of their own are checked when read, not here
    assert data.local_checks("fetch_postures", config) == {}
    assert data.local_checks("fetch_femnist", config) == {}
    assert len(data.local_checks("fetch_cifar10", config)) == 6
    damaged = tmp_path / "data" / "mnist" / "raw" / MNIST_FILES["train_labels"].name
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"\x1f\x8b cut short")
    # no mirror and no network: removed, left to its fetch rule
    removed = data.repair_corrupt_copies(config, root=tmp_path)
    assert len(removed) == 1 and not damaged.exists()
    assert removed[0].startswith(f"md5 mismatch for {damaged.name}: expected "
                                 f"{MNIST_FILES['train_labels'].md5}")
    assert "fetching it again failed" in removed[0]
    assert data.repair_corrupt_copies(config, root=tmp_path) == []  # nothing else is there


def test_a_damaged_local_copy_is_fetched_again_keeping_its_date(tmp_path, mirror):
    config = {"data_mirror": str(mirror), "datasets": {}}
    for remote in MNIST_FILES.values():
        good = tmp_path / "data" / "mnist" / "raw" / remote.name
        good.parent.mkdir(parents=True, exist_ok=True)
        good.write_bytes((mirror / remote.mirror_path).read_bytes())
    damaged = tmp_path / "data" / "mnist" / "raw" / MNIST_FILES["train_labels"].name
    original = damaged.read_bytes()
    damaged.write_bytes(original[:100])
    os.utime(damaged, ns=(10**18, 10**18))
    lines = data.repair_corrupt_copies(config, root=tmp_path)
    assert len(lines) == 1 and f"fetched {damaged} again" in lines[0]
    assert damaged.read_bytes() == original and damaged.stat().st_mtime_ns == 10**18


def test_a_good_local_copy_is_kept(tmp_path, mirror):
    config = {"data_mirror": str(mirror), "datasets": {"postures": {"source": "subset",
                                                                    "csv": None}}}
    path = tmp_path / data.fetch_outputs("fetch_postures", config)[0]
    path.parent.mkdir(parents=True)
    from fedclust.data.postures import POSTURES_SUBSET
    path.write_bytes((mirror / POSTURES_SUBSET.mirror_path).read_bytes())
    assert data.repair_corrupt_copies(config, root=tmp_path) == [] and path.exists()


def test_every_release_is_one_registry_entry_with_one_fetch_rule(fake_mirror):
    """A release is one entry of RELEASES: its rule name, outputs, checks and source follow;
    every data set names a release's rule; the checks cover only the release's own files."""
    assert data.FETCH_RULES == tuple(f"fetch_{name}" for name in data.RELEASES)
    assert {spec.fetch for spec in data.DATASETS.values()} <= set(data.FETCH_RULES)
    for cfg in (config(fake_mirror), config()):
        for release in data.RELEASES.values():
            outputs = data.fetch_outputs(release.rule, cfg)
            assert outputs and all(p.startswith("data/") for p in outputs)
            assert set(data.local_checks(release.rule, cfg)) <= set(outputs)
    assert data.RELEASES["cifar10"].source(config(fake_mirror)) == "jpeg"
    assert data.RELEASES["cifar10"].source(config()) == "official"
    assert data.RELEASES["mnist"].source(config()) == "official"
    with pytest.raises(ValueError, match=r"unknown fetch rule 'fetch_emnist'; expected one of"):
        data.fetch_outputs("fetch_emnist", config())


def test_the_workflow_makes_one_local_fetch_rule_per_release():
    """workflow/rules/data.smk defines the fetch rule once, for every entry of RELEASES, each a
    local rule (downloads need the submitting host's network)."""
    from .conftest import REPO

    text = (REPO / "workflow" / "rules" / "data.smk").read_text()
    assert text.count("release.rule") >= 1 and "for release in datasets.RELEASES.values()" in text
    assert "rule fetch_" not in text and "localrule: True" in text


def test_every_data_set_prepared_from_raw_files_names_its_preparer_in_its_spec():
    """One spec per data set: the raw-file data sets name a preparer that exists and takes
    (raw files, settings, seed); an embedding names none."""
    import inspect
    from importlib import import_module

    from fedclust.data.prepared import prepare

    for name, spec in data.DATASETS.items():
        assert (spec.prepare is None) == spec.embedding, name
        if spec.prepare:
            module, _, function = spec.prepare.partition(":")
            preparer = getattr(import_module(module), function)
            assert list(inspect.signature(preparer).parameters) == ["inputs", "settings", "seed"]
    with pytest.raises(ValueError, match="'mnist_cnn' is not prepared from raw files"):
        prepare("mnist_cnn", [], {}, seed=0)


def test_the_data_sets_a_config_uses_and_their_checksums(tmp_path, monkeypatch):
    from fedclust.io import sha256_of

    base = {"datasets": {"femnist": {}}, "data_mirror": None,
            "kfed": {"enabled": True, "fig2": {"datasets": ["femnist", "shakespeare"]}},
            "localkmeans": {"enabled": False, "real": {"datasets": ["postures"]}},
            "coreset": {"enabled": True, "datasets": ["msd_mixture"]}}
    # a disabled paper's data sets, synthetic ones and the datasets settings section left out
    assert data.used_datasets(base) == ["femnist", "shakespeare"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "x" / "raw").mkdir(parents=True)
    (tmp_path / "data" / "x" / "raw" / "a.bin").write_bytes(b"abc")
    (tmp_path / "data" / "x" / "features.h5.sha256").write_text("0  features.h5\n")
    (tmp_path / "data" / "x" / ".features.h5.tmp-1").write_bytes(b"")
    rows = data.data_checksums({"datasets": {}})
    assert rows == [{"file": "data/x/raw/a.bin", "bytes": 3,
                     "sha256": sha256_of(tmp_path / "data" / "x" / "raw" / "a.bin")}]


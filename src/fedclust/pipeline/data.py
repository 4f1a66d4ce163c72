"""The data sets the pipeline knows, and where their files live: declared once, here.

Every data set a config may name is one :class:`DatasetSpec`; the workflow's rules, wildcard
constraints and the config schema's list of data set names all read :data:`DATASETS`. The
raw files a data set is prepared from, and the source each comes from (official download or
the offline mirror's variant), are resolved from the config by :func:`source` and
:func:`raw_files`; the file names themselves are the loaders' constants
(:data:`fedclust.data.MNIST_FILES`, ...).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..exceptions import ConfigError
from ..vocabulary import DATASETS, MIXTURE, SYNTHETIC, DatasetSpec, dataset_names, title_of

__all__ = ["DatasetSpec", "DATASETS", "SYNTHETIC", "title_of", "dataset_names", "source",
           "raw_files", "fetch_outputs", "leaf_femnist_dirs", "check_mirror", "FETCH_RULES",
           "local_checks", "repair_corrupt_copies", "used_datasets",
           "outside_inputs", "data_checksums", "DATA_CHECKSUMS", "MIXTURE", "Release", "RELEASES"]


def _mirror(config) -> Path | None:
    mirror = config.get("data_mirror")
    return Path(mirror).resolve() if mirror else None


def check_mirror(config, command_line=None) -> None:
    """Raise naming ``data_mirror`` when it is set but is not a folder, or when the command
    line gave it empty (``--config data_mirror=``, which Snakemake reads as null: it would
    silently mean "download"). ``command_line``: the ``--config`` values."""
    if command_line and "data_mirror" in command_line and not command_line["data_mirror"]:
        raise ConfigError("config key 'data_mirror': given empty on the command line; give a "
                          "folder (e.g. data_mirror=../shared/data), or leave it out to "
                          "download")
    mirror = config.get("data_mirror")
    if mirror and not Path(mirror).is_dir():
        raise FileNotFoundError(
            f"data_mirror={mirror}: no such folder (resolved to {Path(mirror).resolve()}); "
            f"point it at a folder laid out like the upstream sources (e.g. ../shared/data), "
            f"or leave it null to download")


def leaf_femnist_dirs(config) -> list[str]:
    """LEAF FEMNIST directories: ``datasets.femnist.leaf_dirs``, else the mirror's."""
    dirs = config["datasets"]["femnist"]["leaf_dirs"]
    if dirs:
        return [os.path.abspath(d) for d in dirs]
    mirror = _mirror(config)
    if mirror is None:
        raise ValueError(
            "datasets.femnist.source=leaf needs LEAF json directories: set "
            "datasets.femnist.leaf_dirs, or data_mirror to a folder holding "
            "femnist/leaf_sample_*, or datasets.femnist.source to 'tff' (or 'auto') to download "
            "TFF's official h5 files")
    found = sorted(glob.glob(str(mirror / "femnist" / "leaf_sample_*")))
    if not found:
        raise ValueError(f"data_mirror={mirror} has no femnist/leaf_sample_* directory "
                         f"(datasets.femnist.source=leaf)")
    return found


def source(name: str, config) -> str:
    """Which release a data set is read from, ``auto`` resolved.

    * femnist: ``leaf`` (LEAF json: ``leaf_dirs``, or the mirror's sample) or ``tff``
      (TensorFlow Federated's h5, downloaded); ``auto`` is ``leaf`` when json is at hand.
    * cifar10_cnn: ``jpeg`` (the mirror's JPEG re-encoding) or ``official`` (the python
      batches); ``auto`` is ``jpeg`` when the mirror has it.
    * postures: ``subset`` (the mirror's real subset) or ``uci`` (UCI's archive); ``auto`` is
      ``subset`` when the mirror has it.
    * every other data set: ``official``.
    """
    cfg = config["datasets"].get(name, {})
    chosen = cfg.get("source", "official")
    if chosen != "auto":
        return chosen
    mirror = _mirror(config)
    if name == "femnist":
        has = cfg["leaf_dirs"] or (mirror and glob.glob(str(mirror / "femnist" /
                                                             "leaf_sample_*")))
        return "leaf" if has else "tff"
    if name == "cifar10_cnn":
        from ..data.cifar10 import CIFAR10_FILES
        has = mirror and (mirror / CIFAR10_FILES["jpeg"].mirror_path).is_file()
        return "jpeg" if has else "official"
    if name == "postures":
        from ..data.postures import POSTURES_SUBSET
        has = mirror and (mirror / POSTURES_SUBSET.mirror_path).is_file()
        return "subset" if has else "uci"
    raise ValueError(f"datasets.{name}.source: 'auto' is not defined for {name}")


@dataclass(frozen=True)
class Release:
    """One upstream release: what its fetch rule (``fetch_<name>``) writes under ``data/``,
    how each file is verified once on disk, and how it is fetched.

    Attributes
    ----------
    name : str
    description : str
        What it is (the fetch rule's docstring in logs and reports).
    variant_of : str or None
        The data set whose ``source`` setting picks this release's files (:func:`source`);
        None for a release with one form.
    outputs : callable(config) -> list of str
        Its files, for the source the config selects.
    checks : callable(config, paths) -> dict of str -> callable(Path)
        How each of ``paths`` (its outputs) is verified once on disk: the same published
        checksums as at download time; a file without one is not listed.
    fetch : callable(root, config, mirror)
        Download (or copy from ``mirror``) into ``root``, the folder of its first output.
    """

    name: str
    description: str
    variant_of: str | None
    outputs: Callable[[dict], list[str]]
    checks: Callable[[dict, list[str]], dict]
    fetch: Callable[[Path, dict, str | None], None]

    @property
    def rule(self) -> str:
        return f"fetch_{self.name}"

    def source(self, config) -> str:
        """The source the config selects (``official`` for a release with one form)."""
        return source(self.variant_of, config) if self.variant_of else "official"


def _verified_by(remotes):
    """Checks of outputs that are published files (``Remote``), in order."""
    return lambda config, paths: {
        path: (lambda p, remote=remote: remote.verify(p, remote.name))
        for path, remote in zip(paths, remotes(config), strict=True)}


def _no_checks(config, paths) -> dict:
    return {}


def _mnist_outputs(config):
    from ..data.mnist import MNIST_FILES
    return [f"data/mnist/raw/{remote.name}" for remote in MNIST_FILES.values()]


def _mnist_remotes(config):
    from ..data.mnist import MNIST_FILES
    return list(MNIST_FILES.values())


def _mnist_fetch(root, config, mirror):
    from ..data.mnist import fetch_mnist
    fetch_mnist(root, mirror=mirror)


def _femnist_outputs(config):
    from ..data.femnist import TFF_EMNIST_H5
    return [f"data/femnist/tff/{name}" for name in TFF_EMNIST_H5]


def _femnist_fetch(root, config, mirror):
    from ..data.femnist import fetch_tff_emnist
    fetch_tff_emnist(root, mirror=mirror)


def _shakespeare_outputs(config):
    from ..data.shakespeare import SHAKESPEARE_RAW
    return [f"data/shakespeare/raw/{SHAKESPEARE_RAW.name}"]


def _shakespeare_remotes(config):
    from ..data.shakespeare import SHAKESPEARE_RAW
    return [SHAKESPEARE_RAW]


def _shakespeare_fetch(root, config, mirror):
    from ..data.shakespeare import fetch_shakespeare
    fetch_shakespeare(root, mirror=mirror)


def _postures_outputs(config):
    from ..data.postures import POSTURES_CSV, POSTURES_SUBSET
    name = POSTURES_SUBSET.name if source("postures", config) == "subset" else POSTURES_CSV
    return [f"data/postures/raw/{name}"]


def _postures_checks(config, paths):
    """The mirror's subset has a checksum; UCI's Postures.csv is extracted from an archive
    verified by content (UCI publishes no checksum) and is not listed."""
    from ..data.postures import POSTURES_SUBSET
    if source("postures", config) != "subset":
        return {}
    return _verified_by(lambda config: [POSTURES_SUBSET])(config, paths)


def _postures_fetch(root, config, mirror):
    from ..data.postures import fetch_postures_subset, fetch_postures_uci
    if source("postures", config) == "subset":
        fetch_postures_subset(root, mirror=mirror)
    else:
        fetch_postures_uci(root, mirror=mirror)


def _cifar10_outputs(config):
    from ..data.cifar10 import CIFAR10_FILES, CIFAR10_PYTHON_BATCHES
    if source("cifar10_cnn", config) == "jpeg":
        return [f"data/cifar10/raw/{CIFAR10_FILES['jpeg'].name}"]
    return [f"data/cifar10/raw/cifar-10-batches-py/{name}" for name in CIFAR10_PYTHON_BATCHES]


def _cifar10_checks(config, paths):
    from ..data.cifar10 import CIFAR10_FILES, verify_cifar10_batch
    if source("cifar10_cnn", config) == "jpeg":
        return _verified_by(lambda config: [CIFAR10_FILES["jpeg"]])(config, paths)
    return {path: verify_cifar10_batch for path in paths}


def _cifar10_fetch(root, config, mirror):
    from ..data.cifar10 import fetch_cifar10_jpeg, fetch_cifar10_python
    if source("cifar10_cnn", config) == "jpeg":
        fetch_cifar10_jpeg(root, mirror=mirror)
    else:
        fetch_cifar10_python(root.parent, mirror=mirror)  # into <root>/cifar-10-batches-py


def _year_prediction_outputs(config):
    from ..data.year_prediction import YEAR_PREDICTION
    return [f"data/year_prediction/raw/{YEAR_PREDICTION.name}"]


def _year_prediction_fetch(root, config, mirror):
    from ..data.year_prediction import fetch_year_prediction
    fetch_year_prediction(root, mirror=mirror)


#: Every upstream release, by name; its fetch rule is ``fetch_<name>`` (one rule definition in
#: ``workflow/rules/data.smk``, made for each entry). A new release is one entry here.
RELEASES = {release.name: release for release in (
    Release("mnist", "MNIST's four idx files.", None, _mnist_outputs,
            _verified_by(_mnist_remotes), _mnist_fetch),
    Release("femnist", "TensorFlow Federated's EMNIST h5 files (when FEMNIST is not read from "
            "LEAF json; extracted from an archive: no published checksum of its members).",
            None, _femnist_outputs, _no_checks, _femnist_fetch),
    Release("shakespeare", "The Gutenberg text LEAF's Shakespeare preprocessing starts from.",
            None, _shakespeare_outputs, _verified_by(_shakespeare_remotes),
            _shakespeare_fetch),
    Release("postures", "UCI's Postures.csv (archive verified by content: UCI publishes no "
            "checksum) or the mirror's verified subset (datasets.postures.source).",
            "postures", _postures_outputs, _postures_checks, _postures_fetch),
    Release("cifar10", "CIFAR-10: the official python batches, or the mirror's JPEG "
            "re-encoding (datasets.cifar10_cnn.source).", "cifar10_cnn", _cifar10_outputs,
            _cifar10_checks, _cifar10_fetch),
    Release("year_prediction", "UCI's YearPredictionMSD archive (Balcan et al.'s data set; "
            "verified by content when fetched and when read: UCI publishes no checksum). Not "
            "in the offline mirror: downloaded, or read from a mirror that holds "
            "year_prediction_msd/YearPredictionMSD.txt.zip.", None,
            _year_prediction_outputs, _no_checks, _year_prediction_fetch),
)}

#: Fetch rules, each downloading (or copying from the mirror) one upstream release.
FETCH_RULES = tuple(release.rule for release in RELEASES.values())


def _release(rule: str) -> Release:
    for release in RELEASES.values():
        if release.rule == rule:
            return release
    raise ValueError(f"unknown fetch rule {rule!r}; expected one of {FETCH_RULES}")


def fetch_outputs(rule: str, config) -> list[str]:
    """The files a fetch rule writes (under ``data/``), for the source the config selects."""
    return _release(rule).outputs(config)


def local_checks(rule: str, config) -> dict[str, Callable[[Path], None]]:
    """How each file of fetch rule ``rule`` is verified once it is on disk: its path (as
    :func:`fetch_outputs` names it) -> a function raising ``ValueError`` (a
    :class:`~fedclust.data.ChecksumError` for a checksum) that names the file.

    The same published checksums as at download time. Files extracted from an archive whose
    members have no published checksum (TFF's FEMNIST h5 files, UCI's Postures.csv) and
    UCI's YearPredictionMSD archive (no published checksum; its content, 515,345 rows, is
    verified when fetched and when read) are not listed.
    """
    release = _release(rule)
    return release.checks(config, release.outputs(config))


def repair_corrupt_copies(config, root=".", *, dry_run: bool = False) -> list[str]:
    """Verify the local copies of every fetched file under ``root`` (the working directory)
    as downloads are verified; fetch each that fails again, at once.

    A copy that was good when fetched can be damaged later (a disk error, a truncated
    ``rsync``, an editor): without this check every later preparation of the data set would
    fail with a raw decompression error naming no file. A damaged copy is removed and its
    release fetched again (from ``data_mirror`` or the official URLs, the same checksums),
    here and not by its fetch rule: Snakemake runs a fetch rule only when a job needs the
    file, so a removed file whose data set is already prepared would stay missing. The
    repaired file keeps the damaged copy's date: its bytes are the published ones again, so
    nothing made from it reruns. When fetching fails (offline, no mirror), the file stays
    removed and its fetch rule fetches it when a job needs it. The Snakefile calls this
    before the DAG is built (about 0.3 s for every data set's files). With ``dry_run``
    (``snakemake -n``) nothing is removed or fetched: each line says what a run would do.

    Returns
    -------
    list of str
        One line per damaged file: why it failed and what was done.
    """
    from ..data.download import ChecksumError, DataUnavailableError

    lines = []
    for rule in FETCH_RULES:
        damaged = {}
        for name, check in local_checks(rule, config).items():
            path = Path(root) / name
            if not path.is_file():
                continue
            try:
                check(path)
            except ValueError as error:  # ChecksumError or a failed content check
                damaged[path] = (path.stat().st_mtime_ns, str(error))
                if not dry_run:
                    path.unlink()
        if not damaged:
            continue
        if dry_run:
            lines += [f"{why}: a run would remove {path} and fetch it again"
                      for path, (_, why) in damaged.items()]
            continue
        try:
            fetch(rule, config, root=root)
        except (DataUnavailableError, ChecksumError, FileNotFoundError) as error:
            lines += [f"{why}: removed {path}; fetching it again failed ({error}), so its "
                      f"rule fetches it when a job needs it" for path, (_, why) in
                      damaged.items()]
            continue
        for path, (mtime, why) in damaged.items():
            os.utime(path, ns=(mtime, mtime))
            lines.append(f"{why}: fetched {path} again (the published checksum; its date "
                         f"kept, so nothing made from it reruns)")
    return lines


#: The table of every data file a run read: path, bytes and sha256 (rule data_checksums).
DATA_CHECKSUMS = "results/data_checksums.csv"


def used_datasets(config) -> list[str]:
    """The data sets the enabled papers name (every ``datasets`` list of an enabled section;
    ``datasets`` at the top level holds settings, not a choice), synthetic ones left out."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("enabled") is False:
                return
            for key, value in node.items():
                if key == "datasets" and isinstance(value, list):
                    found.extend(value)
                else:
                    walk(value)

    walk({key: value for key, value in config.items() if key != "datasets"})
    return sorted({name for name in found if name in DATASETS})


def outside_inputs(config) -> list[str]:
    """The raw files the used data sets are read from outside ``data/`` (LEAF json folders, a
    Postures csv given by path): every other input is fetched into ``data/``."""
    files = []
    for name in used_datasets(config):
        if not DATASETS[name].embedding:
            files += [f for f in raw_files(name, config) if not f.startswith("data/")]
    return sorted(set(files))


def data_checksums(config, root=".") -> list[dict]:
    """Path, size and sha256 of every data file of the run: each file under ``data/`` (fetched
    or derived; checksum sidecars and temporaries left out) and :func:`outside_inputs`."""
    from ..io import SIDECAR_SUFFIX, sha256_of

    root = Path(root)
    paths = sorted(p.relative_to(root).as_posix() for p in (root / "data").rglob("*")
                   if p.is_file() and not p.name.endswith(SIDECAR_SUFFIX)
                   and not p.name.startswith("."))
    rows = [{"file": path, "bytes": (root / path).stat().st_size,
             "sha256": sha256_of(root / path)} for path in paths]
    rows += [{"file": path, "bytes": Path(path).stat().st_size, "sha256": sha256_of(path)}
             for path in outside_inputs(config)]
    return rows


def raw_files(name: str, config) -> list[str]:
    """The files data set ``name`` is prepared from (inputs of its preparation rule)."""
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(DATASETS)}")
    if name == "postures" and config["datasets"]["postures"]["csv"]:
        return [os.path.abspath(config["datasets"]["postures"]["csv"])]
    # every data set made from FEMNIST's release reads what datasets.femnist.source picks
    if DATASETS[name].fetch == DATASETS["femnist"].fetch and source("femnist", config) == "leaf":
        files = []
        for d in leaf_femnist_dirs(config):
            files += sorted(glob.glob(os.path.join(d, "*", "*.json*")))
        if not files:
            raise ValueError(f"no LEAF json files under {leaf_femnist_dirs(config)}")
        return files
    if name == "cifar10_cnn":
        return ["data/cifar10/images.h5"]
    return fetch_outputs(DATASETS[name].fetch, config)


def fetch(rule: str, config, root=".") -> list[Path]:
    """Run fetch rule ``rule``: download (or copy from ``data_mirror``) and verify its files
    under ``root`` (the working directory).

    Returns
    -------
    list of Path
        The files of :func:`fetch_outputs`, each checked to exist.
    """
    outputs = [Path(root) / p for p in fetch_outputs(rule, config)]
    _release(rule).fetch(outputs[0].parent, config, config.get("data_mirror"))
    missing = [str(p) for p in outputs if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{rule} did not produce {missing}")
    return outputs

"""requirements.txt and environment.yml must list the same packages with the same pins."""

import re

import yaml

from .conftest import REPO


def pins_from_requirements():
    pins = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line).groups()
            pins[name.lower()] = version
    return pins


def pins_from_environment():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_lists = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(pip_lists) == 1, "environment.yml needs exactly one pip: section"
    pins = {}
    for spec in pip_lists[0]:
        name, version = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", spec).groups()
        pins[name.lower()] = version
    return pins, env


def test_environment_lists_the_same_pinned_packages():
    req = pins_from_requirements()
    env_pins, env = pins_from_environment()
    assert env_pins == req
    assert "python=3.11" in env["dependencies"]


def test_every_requirement_is_pinned_and_torch_is_the_cpu_pin():
    req = pins_from_requirements()
    assert req["torch"] == "2.13.0" and req["torchvision"] == "0.28.0"
    assert req["snakemake"].startswith("9.")
    first = next(line for line in (REPO / "requirements.txt").read_text().splitlines()
                 if line.strip() and not line.startswith("#"))
    assert first.startswith("torch==")  # installed first, so nothing pulls a CUDA build
    for needed in ("numpy", "scipy", "scikit-learn", "pandas", "matplotlib", "h5py", "networkx",
                   "tqdm", "pyyaml", "pytest", "hypothesis"):
        assert needed in req, needed


def test_the_rules_environment_is_the_root_environment_file():
    """workflow/envs/ holds the rules' conda environment as the workflow catalog expects, as a
    link to environment.yml: one file of pins, not two."""
    env = REPO / "workflow" / "envs" / "fedclust.yaml"
    assert env.is_symlink() and env.resolve() == (REPO / "environment.yml").resolve()
    common = (REPO / "workflow" / "rules" / "common.smk").read_text()
    assert 'ENV = str(WORKFLOW / "envs" / "fedclust.yaml")' in common


def test_the_lock_pins_every_requirement_at_its_version_with_a_hash():
    """requirements.lock (python .ci/lock.py) agrees with requirements.txt: every direct pin
    at the same version (a local build tag such as torch's +cpu allowed), every line hashed."""
    locked = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, version, digest = re.fullmatch(
            r"([A-Za-z0-9_.\-]+)==(\S+) --hash=sha256:([0-9a-f]{64})", line).groups()
        locked[re.sub(r"[-_.]+", "-", name.lower())] = version
    for name, version in pins_from_requirements().items():
        key = re.sub(r"[-_.]+", "-", name)
        assert locked.get(key, "").split("+")[0] == version, (name, version, locked.get(key))
    assert len(locked) > len(pins_from_requirements())   # the transitive ones too



def test_the_flower_lock_adds_packages_on_top_of_the_base_lock():
    """requirements-flower.lock (python .ci/lock.py --extra flower) pins pyproject.toml's
    flower extra with hashes and only packages requirements.lock does not hold (or holds, pinned
    again at the same version and hash with the extras the flower extra asks for), so that
    installing it after the base lock, or with it, changes no pinned version."""
    import tomllib

    def locked(path):
        pins = {}
        for line in path.read_text().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            name, extras, version, digest = re.fullmatch(
                r"([A-Za-z0-9_.\-]+)(\[[a-z0-9_,\-]+\])?==(\S+) --hash=sha256:([0-9a-f]{64})",
                line).groups()
            pins[re.sub(r"[-_.]+", "-", name.lower())] = (version, digest, extras)
        return pins

    base, flower = locked(REPO / "requirements.lock"), locked(REPO / "requirements-flower.lock")
    again = set(base) & set(flower)
    assert again <= {name for name, (_, _, extras) in flower.items() if extras}
    assert all(flower[name][:2] == base[name][:2] for name in again)
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["flower"]
    for spec in extra:
        name, version = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", spec).groups()
        assert flower[re.sub(r"[-_.]+", "-", name.lower())][0] == version

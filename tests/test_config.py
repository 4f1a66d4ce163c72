"""The profiles validate against config/schema.yaml, and a bad key is named in the error."""

import copy

import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from .conftest import REPO

SCHEMA = str(REPO / "config" / "schema.yaml")


def load(name):
    return yaml.safe_load((REPO / "config" / name).read_text())


def merged(base, override):
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("profile", [None, "ci.yaml"])
def test_profiles_validate(profile):
    config = load("config.yaml")
    if profile:
        config = merged(config, load(profile))
    validate(config, SCHEMA)
    assert config["kfed"]["table1"]["separation"] == 100
    assert config["kfed"]["table1"]["devices_per_cluster"] == 5


def test_unknown_key_is_named():
    config = load("config.yaml")
    config["kfed"]["table1"]["sepration"] = 3
    with pytest.raises(WorkflowError, match="sepration"):
        validate(config, SCHEMA)


def test_bad_value_is_named():
    config = load("config.yaml")
    config["kfed"]["fig1"]["runs"] = 0
    with pytest.raises(WorkflowError, match="runs"):
        validate(config, SCHEMA)

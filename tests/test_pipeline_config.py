"""The profiles validate against config/schema.yaml; defaults come from the schema; a bad key
is named in a few lines."""

import copy
import re

import pytest
import yaml
from snakemake.utils import update_config

from fedclust.pipeline.config import (
    ConfigError,
    load_schema,
    type_command_line_values,
    validate_config,
)
from fedclust.pipeline.data import dataset_names

from .conftest import REPO

SCHEMA = REPO / "config" / "schema.yaml"


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


@pytest.mark.parametrize("profile", [None, "ci.yaml", "beyond_paper.yaml"])
def test_profiles_validate(profile):
    config = load("config.yaml")
    if profile:
        config = merged(config, load(profile))
    validate_config(config, SCHEMA)
    assert config["kfed"]["table1"]["separation"] == 100
    assert config["kfed"]["table1"]["devices_per_cluster"] == 5


def _leaves(node, path=()):
    """Every (dotted path, value) of a config; a list is one value (Snakemake replaces it whole)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, str(key)))
    else:
        yield ".".join(path), node


def _repeated(paper: dict, quick: dict) -> dict:
    """The values of ``quick`` equal to the (schema-filled) ``paper`` profile's at that key."""
    paper = dict(_leaves(validate_config(copy.deepcopy(paper), SCHEMA)))
    return {key: value for key, value in _leaves(quick) if key in paper and paper[key] == value}


def test_the_quick_profile_holds_only_what_it_changes():
    """config/ci.yaml is merged over config/config.yaml: a value equal to the paper profile's
    (or to the schema's default, where config.yaml leaves it out) is a second home for it."""
    repeated = _repeated(load("config.yaml"), load("ci.yaml"))
    assert not repeated, f"config/ci.yaml repeats the paper profile's values: {repeated}"
    beyond = _repeated(load("config.yaml"), load("beyond_paper.yaml"))
    assert not beyond, f"config/beyond_paper.yaml repeats the paper profile's values: {beyond}"
    # a value repeated at any depth, or a schema default written out, is named
    quick = merged(load("ci.yaml"), {"kfed": {"table1": {"separation": 100}},
                                     "datasets": {"mnist_cnn": {"max_train": None}}})
    assert _repeated(load("config.yaml"), quick) == {
        "kfed.table1.separation": 100, "datasets.mnist_cnn.max_train": None}


def test_defaults_are_filled_from_the_schema_down_to_nested_sections():
    config = load("config.yaml")
    del config["datasets"]
    del config["kfed"]["fig3"]["max_iter"]
    del config["localkmeans"]["synthetic"]["perturbation"]
    validate_config(config, SCHEMA)
    assert config["datasets"]["mnist"] == {"split": "all", "max_samples": None}
    assert config["datasets"]["shakespeare"]["n_users"] == 109
    assert config["kfed"]["fig3"]["max_iter"] == 300
    assert config["localkmeans"]["synthetic"]["perturbation"] == 0.3
    assert config["data_mirror"] is None and config["profile"] == "paper"
    # a default written once in its $defs entry reaches every section that refers to it
    config = load("config.yaml")
    del config["kfed"]["table2"]["kfed"]["server_starts"]
    del config["comparison"]["kfed"]["server_starts"]
    validate_config(config, SCHEMA)
    assert config["kfed"]["table2"]["kfed"]["server_starts"] == 1
    assert config["comparison"]["kfed"]["server_starts"] == 1
    assert config["reproduction"] == {"not_at_this_profile": {}}


def test_every_default_lives_in_the_schema_only():
    """No script repeats a default with .get(key, default)."""
    scripts = (REPO / "workflow" / "scripts").glob("*.py")
    offenders = [p.name for p in scripts if ".get(" in p.read_text()
                 and "snakemake.input.get" not in p.read_text()]
    assert offenders == []


def test_unknown_key_is_named_with_its_path_and_the_allowed_keys():
    config = load("config.yaml")
    config["kfed"]["table1"]["sepration"] = 3
    with pytest.raises(ConfigError) as error:
        validate_config(config, SCHEMA)
    message = str(error.value)
    assert "unknown config key 'kfed.table1.sepration' (did you mean 'separation'?)" in message
    assert "allowed keys under 'kfed.table1':" in message and "runs" in message
    assert len(message.splitlines()) <= 2


@pytest.mark.parametrize("path, value, expected", [
    (("kfed", "fig1", "runs"), 0, "config key 'kfed.fig1.runs': 0 is less than the minimum"),
    (("kfed", "fig1", "runs"), 5.0, "config key 'kfed.fig1.runs': 5.0 is not of type integer"),
    (("seed",), -3, "config key 'seed': -3 is less than the minimum of 0"),
    (("kfed", "separation", "datasets"), ["mnsit"], "'mnsit' is not one of"),
    (("kfed", "heterogeneity", "datasets"), ["mnist"], "'mnist' is not one of"),
])
def test_bad_values_are_named_in_a_few_lines(path, value, expected):
    config = load("config.yaml")
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ConfigError, match=expected) as error:
        validate_config(config, SCHEMA)
    assert len(str(error.value).splitlines()) <= 2


def test_missing_required_key_is_named():
    config = load("config.yaml")
    del config["kfed"]["fig2"]["runs"]
    with pytest.raises(ConfigError, match="missing config key 'kfed.fig2.runs'"):
        validate_config(config, SCHEMA)


def test_data_set_names_come_from_the_registry():
    schema = load_schema(SCHEMA)
    assert schema["$defs"]["dataset_name"]["enum"] == dataset_names()
    assert set(schema["$defs"]["natural_dataset"]["enum"]) == {"femnist", "shakespeare",
                                                               "postures"}


@pytest.mark.parametrize("edit,message", [
    # coreset: every real data set has its k; a grid needs a square number of sites
    (lambda c: c["coreset"].update(datasets=["mnist", "postures"]),
     "config key 'coreset.n_clusters': no k for data set(s) postures"),
    (lambda c: c["coreset"].update(n_sites=50),
     "config key 'coreset.n_sites': 50 sites make no square grid"),
    (lambda c: c["coreset"].update(datasets=["yearprediction"]),
     "config key 'coreset.datasets[0]': 'yearprediction' is not one of"),
    # fedkmeans: names fit in file names; every run fixes the knobs it does not vary
    (lambda c: c["fedkmeans"]["sweeps"].update({"fig-1": {"vary": "local_epochs",
                                                          "sample_fraction": 0.1,
                                                          "client_lr": 1.0}}),
     "fedkmeans.sweeps.fig-1': a name of letters and digits"),
    (lambda c: c["fedkmeans"]["sweeps"]["fig1"].pop("client_lr"),
     "fedkmeans.sweeps.fig1': set client_lr"),
    (lambda c: c["fedkmeans"]["progress"]["fig7a"].pop("local_epochs"),
     "fedkmeans.progress.fig7a': set local_epochs"),
    # k-FED's applications: rotations deal evenly, a round fits, pow-d draws enough
    (lambda c: c["kfed"]["table2"].update(n_devices=[102]),
     "'kfed.table2.n_devices': 102 devices with k'=1 of the 4 rotations"),
    (lambda c: c["kfed"]["table2"].update(devices_per_round=150),
     "'kfed.table2.devices_per_round': 150 is more than the 100 devices"),
    (lambda c: c["kfed"]["fig4"].update(candidates=5),
     "'kfed.fig4.candidates': pow-d draws d >= m candidates; got d=5 < m=10"),
    (lambda c: c["kfed"]["fig4"]["kfed"].update(device_clusters=12),
     "'kfed.fig4.kfed.device_clusters': k'=12 is more than k=10"),
    (lambda c: c["kfed"]["fig4"]["femnist"].update(classes_per_device=11),
     "'kfed.fig4.femnist.classes_per_device': 11 is more than the 10 classes"),
    (lambda c: c["kfed"]["fig4"].update(strategies=["greedy"]),
     "'kfed.fig4.strategies[0]': 'greedy' is not one of"),
    (lambda c: c["kfed"]["table2"].update(pairing="diagonal"),
     "'kfed.table2.pairing': 'diagonal' is not one of"),
])
def test_settings_the_schema_cannot_check_stop_before_any_job(edit, message):
    config = load("config.yaml")
    edit(config)
    with pytest.raises(ConfigError, match=re.escape(message)):
        validate_config(config, SCHEMA)


def test_fedkmeans_real_data_needs_the_separation_analysis():
    config = load("config.yaml")
    config["kfed"]["separation"]["datasets"] = ["mnist", "femnist"]
    with pytest.raises(ConfigError, match="fedkmeans.real.datasets': shakespeare take k from"):
        validate_config(config, SCHEMA)


def _set(path, value):
    def edit(config):
        node = config
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


# Each a config a user could write; each must stop before any job with the key named. The
# first four were accepted once and crashed inside a job.
MALFORMED = [
    (_set(("kfed", "table1", "runs"), 5.0), "'kfed.table1.runs': 5.0 is not of type integer"),
    (_set(("kfed", "table1", "settings"), [{"n_features": 100, "n_clusters": 16.0}]),
     "'kfed.table1.settings[0].n_clusters': 16.0 is not of type integer"),
    (_set(("kfed", "table1", "device_clusters"), 20),
     "'kfed.table1.device_clusters': k'=20 is more than k=16 of kfed.table1.settings"),
    (_set(("localkmeans", "synthetic", "n_features"), 3),
     "'localkmeans.synthetic.n_clusters': K=4 orthonormal centres do not fit in R^3"),
    (_set(("localkmeans", "fig4", "n_clusters"), [2, 40]),
     "'localkmeans.fig4.n_clusters': K=40 orthonormal centres do not fit in R^20"),
    (_set(("kfed", "fig2", "device_clusters"), [1, 40]),
     "'kfed.fig2.device_clusters': k'=40 is more than k=30 (the largest k of "
     "kfed.separation.k_grid)"),
    (_set(("kfed", "participation", "n_clusters"), 4), None),  # k' = 2 <= 4: fine
    (_set(("kfed", "heterogeneity", "n_clusters"), 3),  None),
    (_set(("kfed", "new_devices", "device_clusters"), 31),
     "'kfed.new_devices.device_clusters': k'=31 is more than k=30"),
    (_set(("kfed", "fig3", "n_clusters"), -2),
     "'kfed.fig3.n_clusters': -2 is less than the minimum of 2"),
    (_set(("kfed", "table1", "separation"), "large"),
     "'kfed.table1.separation': 'large' is not of type number"),
    (_set(("kfed", "participation", "fractions"), [0.5, 1.5]),
     "'kfed.participation.fractions[1]': 1.5 is greater than the maximum of 1"),
    (_set(("fedkmeans", "sample_fractions"), [0.0, 0.5]),
     "'fedkmeans.sample_fractions[0]': 0.0 is less than or equal to the minimum of 0"),
    (_set(("fedkmeans", "sweeps", "fig1", "sample_fraction"), 1.2),
     "'fedkmeans.sweeps.fig1.sample_fraction': 1.2 is greater than the maximum of 1"),
    (_set(("coreset", "graphs"), ["ring"]), "'coreset.graphs[0]': 'ring' is not one of"),
    (_set(("coreset", "n_sites"), 1), "'coreset.n_sites': 1 is less than the minimum of 2"),
    (_set(("localkmeans", "fig1", "inits"), ["random"]),
     "'localkmeans.fig1.inits[0]': 'random' is not one of"),
    (_set(("localkmeans", "fig1", "trials"), 0),
     "'localkmeans.fig1.trials': 0 is less than the minimum of 1"),
    (_set(("kfed", "table2", "device_clusters"), [3]),
     "'kfed.table2.device_clusters[0]': 3 is not one of [1, 2, 4]"),
    (_set(("kfed", "table2", "lr"), 0), "'kfed.table2.lr': 0 is less than or equal to the "
                                         "minimum of 0"),
    (_set(("kfed", "fig4", "kfed"), {"n_clusters": 10, "device_clusters": 11}),
     "'kfed.fig4.kfed.device_clusters': k'=11 is more than k=10"),
    (_set(("seed",), "abc"), "'seed': 'abc' is not of type integer"),
    (_set(("fedkmeans", "seeds"), "3"), "'fedkmeans.seeds': '3' is not of type integer"),
    (_set(("data_mirror",), ""), "'data_mirror': '' should be non-empty"),
    (_set(("kfed", "enabled"), "yes"), "'kfed.enabled': 'yes' is not of type boolean"),
    (_set(("coreset", "n_clusters"), {"mnist": 10, "cifar10": 10}),
     "'coreset.n_clusters': 'cifar10' is not one of"),
    (_set(("comparison", "n_clusters"), {"mixture": 16, "mnist": 10, "femnist": 10}),
     "'comparison.n_clusters': no k for data set(s) shakespeare"),
    (_set(("comparison", "device_clusters"), 6),
     "'comparison.device_clusters': k'=6 is more than k=5 of shakespeare"),
    (_set(("comparison", "n_devices"), 3),
     "'comparison.n_devices': 3 devices of at most k'=2 clusters cannot hold the k=16"),
    (_set(("comparison", "dropout"), [0.0, 1.0]),
     "'comparison.dropout[1]': 1.0 is greater than or equal to the maximum of 1"),
    (_set(("comparison", "coreset"), {"topologies": ["grid"]}),
     "'comparison.coreset.topologies[0]': 'grid' is not one of ['star', 'erdos_renyi']"),
    (_set(("reproduction",), {"not_at_this_profile": {"kfed.tabel2": "sixty rounds only, "
                                                                      "not the paper's"}}),
     "'reproduction.not_at_this_profile.kfed.tabel2': no such target in "
     "config/paper_targets.yaml (did you mean 'kfed.table2'?)"),
    (_set(("reproduction",), {"not_at_this_profile": {"kfed.table2": "short"}}),
     "'reproduction.not_at_this_profile.kfed.table2': 'short' is too short"),
    # settings that cannot run, once accepted and failed inside their jobs
    (_set(("coreset", "synthetic", "n_samples"), 5),
     "'coreset.synthetic.n_samples': 5 rows cannot make 50 clusters"),
    (_set(("localkmeans", "synthetic", "samples_per_machine"), 0),
     "'localkmeans.synthetic.samples_per_machine': 0 is less than the minimum of 1"),
    (_set(("localkmeans", "fig4", "total_samples"), 30),
     "'localkmeans.fig4.total_samples': 30 rows cannot make K=10 clusters over 80 machines"),
    (_set(("fedkmeans", "data", "samples_per_client"), 0),
     "'fedkmeans.data.samples_per_client': 0 is less than the minimum of 1"),
    (_set(("fedkmeans", "data"), {"n_clients": 2, "samples_per_client": 2}),
     "'fedkmeans.data.samples_per_client': 2 clients of 2 rows cannot make K=5 clusters"),
    (_set(("kfed", "table1", "separation"), float("nan")),
     "'kfed.table1.separation': nan is not a finite number"),
    (_set(("kfed", "table1", "separation"), float("inf")),
     "'kfed.table1.separation': inf is not a finite number"),
    # what Snakemake keeps of --config 'kfed={fig1: {runs: 3}' (not YAML): the string
    (_set(("kfed",), "{fig1: {runs: 3}"),
     "'kfed': '{fig1: {runs: 3}' is not valid YAML: expected ',' or '}'"),
]


@pytest.mark.parametrize("edit, message", MALFORMED)
def test_malformed_configs_stop_before_any_job_naming_the_key(edit, message):
    config = load("config.yaml")
    edit(config)
    if message is None:
        validate_config(config, SCHEMA)
        return
    with pytest.raises(ConfigError) as error:
        validate_config(config, SCHEMA)
    text = str(error.value)
    assert f"config key {message}" in text, text
    assert len(text.splitlines()) <= 2


def test_enough_malformed_configs_are_checked():
    assert sum(message is not None for _, message in MALFORMED) >= 20


def test_nested_command_line_values_are_typed_before_validation():
    config = load("config.yaml")
    # what Snakemake makes of --config 'kfed={table1: {runs: 0, separation: 1e2}}': strings
    overrides = {"kfed": {"table1": {"runs": "0", "device_clusters": "sqrt"}},
                 "coreset": {"graphs": ["grid"], "erdos_renyi_p": "0.5"}}
    update_config(config, overrides)
    type_command_line_values(config, overrides)
    assert config["kfed"]["table1"]["runs"] == 0
    assert config["kfed"]["table1"]["device_clusters"] == "sqrt"
    assert config["coreset"]["erdos_renyi_p"] == 0.5 and config["coreset"]["graphs"] == ["grid"]
    # a value of the config file itself is never re-read
    assert config["kfed"]["table1"]["samples_per_cluster"] == 200
    with pytest.raises(ConfigError, match="'kfed.table1.runs': 0 is less than the minimum of 1"):
        validate_config(config, SCHEMA)


def test_config_readme_describes_every_section():
    """config/README.md names every top-level key the schema allows and every section (a
    mapping) of each paper's part of the paper profile."""
    readme = (REPO / "config" / "README.md").read_text()
    schema = load_schema(SCHEMA)
    paper = load("config.yaml")
    names = set(schema["properties"])
    for part in ("kfed", "localkmeans", "fedkmeans", "coreset"):
        names |= {key for key, value in paper[part].items() if isinstance(value, dict)}
    missing = sorted(name for name in names if f"`{name}`" not in readme)
    assert not missing, f"config/README.md does not describe: {missing}"


def test_command_line_config_files_are_named_with_their_line(tmp_path):
    from fedclust.pipeline.configfiles import command_line_problems, main

    good = tmp_path / "good.yaml"
    good.write_text("seed: 3\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("seed: 3\nkfed: [1, 2\nfedkmeans: {}\n")
    listed = tmp_path / "listed.yaml"
    listed.write_text("- seed\n")
    missing = tmp_path / "missing.yaml"
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing set yet\n")
    assert command_line_problems(["--configfile", str(empty)]) == [
        f"config file {empty}: empty (a config file holds keys at its top level)"]
    assert command_line_problems(["-n", "--configfile", str(good), "--config", "seed=1"]) == []
    assert command_line_problems([f"--configfile={good}"]) == []
    problems = command_line_problems(
        ["-n", "--configfiles", str(good), str(broken), str(listed), "--cores", "2",
         "--configfile", str(missing), "--", "results/reproduction.md"])
    assert problems == [
        f"config file {broken}, line 3, column 10: expected ',' or ']', but got ':'",
        f"config file {listed}: holds a list, not keys",
        f"config file {missing}: No such file or directory"]
    # --config is not an abbreviation of --configfile
    assert command_line_problems(["--config", f"configfile={missing}"]) == []
    with pytest.raises(SystemExit) as stop:
        main(["--configfile", str(missing)])
    assert str(stop.value) == f"config file {missing}: No such file or directory"
    main(["--configfile", str(good)])  # nothing to say: returns


def test_a_schema_error_names_the_file_and_line_or_the_command_line(tmp_path):
    from fedclust.pipeline.config import locate_key

    main = tmp_path / "config.yaml"
    main.write_text("seed: 1\nkfed:\n  table1:\n    runs: 10\n    separation: 100\n")
    mine = tmp_path / "mine.yaml"
    mine.write_text("# mine\nkfed:\n  table1:\n    runs: -3\n  tabel1: {runs: 2}\n")
    sources = [("--config", {"seed": 5}), mine, main]
    assert locate_key(["kfed", "table1", "runs"], sources).endswith("mine.yaml, line 4")
    assert locate_key(["kfed", "table1", "separation"], sources).endswith("config.yaml, line 5")
    assert locate_key(["kfed", "tabel1"], sources).endswith("mine.yaml, line 5")
    assert locate_key(["seed"], sources) == "--config"
    # a missing key is placed at its deepest parent found
    assert locate_key(["kfed", "table1", "n_clusters"], sources).endswith("mine.yaml, line 3")
    schema = tmp_path / "schema.yaml"
    schema.write_text(yaml.safe_dump({"type": "object", "properties": {"seed": {
        "type": "integer"}, "kfed": {"type": "object", "properties": {"table1": {
            "type": "object", "properties": {"runs": {"type": "integer", "minimum": 1}}}}}}}))
    with pytest.raises(ConfigError, match=r"mine\.yaml, line 4: config key 'kfed\.table1\.runs'"):
        validate_config({"seed": 5, "kfed": {"table1": {"runs": -3}}}, schema, sources=sources)


def test_a_dry_run_is_read_from_snakemakes_command_line():
    from fedclust.pipeline.configfiles import is_dry_run

    assert is_dry_run(["-n", "--cores", "2"]) and is_dry_run(["-np"])
    assert is_dry_run(["--dry-run"]) and is_dry_run(["--dryrun", "target"])
    assert not is_dry_run(["--cores", "2", "--configfile", "config/ci.yaml"])
    assert not is_dry_run(["-j", "2", "--", "-n"])          # after "--": a target
    assert not is_dry_run(["--config", "runs=-n"]) and not is_dry_run(["-c1"])


def test_command_line_config_entries_are_checked_in_one_line():
    from fedclust.pipeline.configfiles import command_line_problems, config_entry_problem

    assert config_entry_problem("seed=3") is None
    assert config_entry_problem("kfed={fig1: {runs: 3}}") is None
    assert config_entry_problem("runs").startswith("--config runs: an entry is name=value")
    assert config_entry_problem("kfed.fig1.runs=3") == (
        "--config kfed.fig1.runs=3: a nested key is not dotted; write "
        "--config 'kfed={fig1: {runs: 3}}'")
    assert "is not a config key" in config_entry_problem("2seed=1")
    problems = command_line_problems(["-n", "--config", "seed=1", "results/run_config.yaml"])
    assert problems == [config_entry_problem("results/run_config.yaml")]
    assert "a target after --config" in problems[0]
    assert command_line_problems(["--config", "seed=1", "--", "results/run_config.yaml"]) == []


def test_a_target_after_configfile_is_named_as_one(tmp_path):
    from fedclust.pipeline.configfiles import read_config_file

    image = tmp_path / "figure.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    _, problem = read_config_file(image)
    assert problem == (f"config file {image}: not a text file (a target after --configfile is "
                       f"read as one: put targets before it or after --)")
    _, problem = read_config_file(tmp_path / "results" / "reproduction.md")
    assert problem.endswith("No such file or directory (a target after --configfile is read "
                            "as one: put targets before it or after --)")
    assert read_config_file(tmp_path / "mine.yaml")[1].endswith("No such file or directory")
    report = tmp_path / "reproduction.md"  # a text target that exists: read as YAML
    report.write_text("# Reproduction\n\n| key | verdict |\n")
    assert read_config_file(report)[1] == (
        f"config file {report}, line 3, column 3: expected a comment or a line break, but "
        f"found 'k' (a target after --configfile is read as one: put targets before it or "
        f"after --)")
    words = tmp_path / "run_config.txt"
    words.write_text("a finished run\n")
    assert read_config_file(words)[1] == (
        f"config file {words}: holds a str, not keys (a target after --configfile is read as "
        f"one: put targets before it or after --)")


def test_likely_mistakes_in_a_valid_config_are_warned_with_their_line(tmp_path):
    from fedclust.pipeline.config import config_warnings

    mine = tmp_path / "mine.yaml"
    mine.write_text("profile: quik\nseed: 1\nkfed:\n  fig1:\n    runs: 1000000000\n"
                    "seed: 2\n")
    config = load("config.yaml")
    update_config(config, yaml.safe_load(mine.read_text()))
    sources = [("--config", {}), ("mine.yaml", mine), REPO / "config" / "config.yaml"]
    assert config_warnings(config, sources) == [
        "mine.yaml, line 6: config key 'seed' set again (line 2); the later value is used",
        "mine.yaml, line 1: profile 'quik' (did you mean 'quick'?); the name goes into the "
        "report as written",
        "mine.yaml, line 5: config key 'kfed.fig1.runs': 1,000,000,000 runs (more than 1,000: "
        "is it a typo?)"]
    # the shipped profiles have none
    for name in ("config.yaml", "ci.yaml"):
        config = load("config.yaml")
        update_config(config, load(name))
        assert config_warnings(config, [REPO / "config" / name,
                                        REPO / "config" / "config.yaml"]) == []

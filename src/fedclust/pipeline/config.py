"""The pipeline's configuration: validated against ``config/schema.yaml``, defaults filled.

:func:`validate_config` is what the Snakefile calls on the merged config (config file,
``--configfile`` and ``--config``). It fills every default the schema declares (so no script
needs ``.get(key, default)``), treats a float as no integer (``runs: 5.0`` is refused), and
stops at the first problem with a message of a few lines naming the key, its path and, for an
unknown key, the keys allowed there -- not the schema. The lists of data set names in the
schema come from :data:`fedclust.pipeline.data.DATASETS`.
"""

from __future__ import annotations

import copy
import difflib
import math
import re
from pathlib import Path

import yaml
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import best_match

from ..exceptions import ConfigError
from .configfiles import read_config_file
from .data import MIXTURE, SYNTHETIC, dataset_names

__all__ = ["ConfigError", "load_schema", "validate_config", "type_command_line_values",
           "load_config_file", "locate_key", "config_warnings"]


def load_config_file(path) -> dict:
    """A config file's YAML keys; a missing file or a YAML mistake is a :class:`ConfigError`
    naming the file and the line (:func:`fedclust.pipeline.configfiles.read_config_file`)."""
    loaded, problem = read_config_file(path)
    if problem is not None:
        raise ConfigError(problem)
    return loaded


def _strict_integer(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _validator_class(defs: dict | None = None):
    """A strict-integer validator that fills defaults, a property's own or, for a property
    that is only a ``{$ref: "#/$defs/<name>"}``, the one of ``defs[<name>]`` (so a default
    shared by several sections is written once, in its definition)."""
    base = Draft202012Validator
    type_checker = base.TYPE_CHECKER.redefine("integer", _strict_integer)
    strict = validators.extend(base, type_checker=type_checker)
    check_properties = strict.VALIDATORS["properties"]
    defs = defs or {}

    def default_of(sub: dict):
        if "default" in sub:
            return sub
        ref = str(sub.get("$ref", ""))
        target = defs.get(ref.removeprefix("#/$defs/"), {}) if ref.startswith("#/$defs/") \
            else {}
        return target if "default" in target else None

    def fill_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                found = default_of(sub)
                if found is not None and name not in instance:
                    instance[name] = copy.deepcopy(found["default"])
        yield from check_properties(validator, properties, instance, schema)

    return validators.extend(strict, {"properties": fill_defaults})


def load_schema(path) -> dict:
    """The schema at ``path`` with the data set name lists filled from the registry."""
    path = Path(path)
    with open(path) as fh:
        schema = yaml.safe_load(fh)
    defs = schema.setdefault("$defs", {})
    defs["dataset_name"] = {"type": "string", "enum": dataset_names(),
                            "description": "a data set of fedclust.pipeline.data.DATASETS"}
    defs["coreset_dataset"] = {"type": "string", "enum": [*dataset_names(), *SYNTHETIC],
                               "description": "a data set of fedclust.pipeline.data.DATASETS "
                                              "or a synthetic one (SYNTHETIC)"}
    defs["comparison_dataset"] = {"type": "string", "enum": [MIXTURE, *dataset_names()],
                                  "description": "a data set of fedclust.pipeline.data.DATASETS "
                                                 f"or '{MIXTURE}' (k-FED's Gaussian mixture)"}
    defs["natural_dataset"] = {"type": "string", "enum": dataset_names(natural=True),
                               "description": "a data set with a natural partition"}
    return schema


def _where(path) -> str:
    parts = []
    for p in path:
        if isinstance(p, int):
            parts.append(f"[{p}]")
        else:
            parts.append(("." if parts else "") + str(p))
    return "".join(parts) or "(top level)"


def _short(value, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _yaml_problem(value) -> str | None:
    """What YAML finds wrong with a string meant as a mapping or list (a ``--config``
    value that did not parse, which Snakemake then keeps as a string), or None."""
    if not isinstance(value, str) or not value.lstrip().startswith(("{", "[")):
        return None
    try:
        yaml.safe_load(value)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        return problem + (f" at column {mark.column + 1}" if mark is not None else "")
    return None


def _message(error) -> str:
    where = _where(error.absolute_path)
    schema, instance = error.schema, error.instance
    if error.validator == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        unknown = sorted(set(instance) - set(allowed))
        lines = []
        for key in unknown:
            full = key if where == "(top level)" else f"{where}.{key}"
            hint = difflib.get_close_matches(key, allowed, n=1)
            lines.append(f"unknown config key '{full}'" +
                         (f" (did you mean '{hint[0]}'?)" if hint else ""))
        lines.append(f"allowed keys under '{where}': {', '.join(allowed)}")
        return "\n".join(lines)
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in instance]
        full = ", ".join(k if where == "(top level)" else f"{where}.{k}" for k in missing)
        return f"missing config key '{full}'"
    description = schema.get("description")
    if error.validator == "oneOf":
        detail = f"{_short(instance)} is not valid here"
    elif error.validator == "enum":
        detail = f"{_short(instance)} is not one of {error.validator_value}"
    elif error.validator == "type":
        expected = error.validator_value
        detail = f"{_short(instance)} is not of type {expected}"
        problem = _yaml_problem(instance) if expected in ("object", "array") else None
        if problem:
            detail = f"{_short(instance)} is not valid YAML: {problem}"
    else:
        detail = error.message if len(error.message) < 160 else f"{_short(instance)} is invalid"
    text = f"config key '{where}': {detail}"
    if description:
        text += f"\n  ({description})"
    return text


def type_command_line_values(config: dict, overrides: dict) -> dict:
    """Give the values nested in ``--config`` overrides their YAML types, in ``config``.

    Snakemake types a top-level ``--config seed=3`` (an int) but reads a nested override,
    ``--config 'kfed={table1: {runs: 5}}'``, with YAML's base loader: every value inside it is
    a string. Each such string that ``config`` still holds at the same place is read again as
    YAML (``'5'`` -> 5, ``'0.5'`` -> 0.5, ``'[1, 2]'`` stays a list of ints), so the schema
    checks what the user meant. Snakemake refuses dotted keys (``kfed.table1.runs=5``) before
    any workflow code runs; the nested form is the way to change one value of a section.

    Examples
    --------
    >>> config = {"kfed": {"table1": {"runs": "0", "name": "sqrt"}}, "seed": 3}
    >>> type_command_line_values(config, {"kfed": {"table1": {"runs": "0", "name": "sqrt"}}})
    {'kfed': {'table1': {'runs': 0, 'name': 'sqrt'}}, 'seed': 3}
    """
    def retype(target, given, depth):
        if isinstance(given, dict) and isinstance(target, dict):
            for key, value in given.items():
                if key in target:
                    target[key] = retype(target[key], value, depth + 1)
            return target
        if isinstance(given, list) and isinstance(target, list) and len(given) == len(target):
            return [retype(t, g, depth + 1) for t, g in zip(target, given, strict=True)]
        if depth > 1 and isinstance(given, str) and target == given:
            try:
                return yaml.safe_load(given)
            except yaml.YAMLError:
                return given
        return target

    for key, value in overrides.items():
        if key in config:
            config[key] = retype(config[key], value, 1)
    return config


def _key_path(error) -> list:
    """The keys of the config entry a schema error is about (an unknown key: the key itself,
    so that its line is found)."""
    path = list(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - allowed)
        if unknown:
            path.append(unknown[0])
    return path


def _node_at(node, keys):
    """The YAML node naming the entry at ``keys`` below ``node`` (a composed document): the
    key's node for a mapping entry, the item's for a list item; None when absent."""
    found = None
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == str(key)), None)
            if pair is None:
                return None
            found, node = pair
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) \
                and key < len(node.value):
            found = node = node.value[key]
        else:
            return None
    return found


def _short_path(path) -> str:
    """``path`` relative to the working directory where it lies below it."""
    import os

    text = os.path.relpath(path)
    return text if not text.startswith("..") else str(path)


def _holds(mapping, keys) -> bool:
    for key in keys:
        if isinstance(mapping, dict) and key in mapping:
            mapping = mapping[key]
        elif isinstance(mapping, list) and isinstance(key, int) and key < len(mapping):
            mapping = mapping[key]
        else:
            return False
    return True


def locate_key(keys, sources) -> str | None:
    """Where the config entry at ``keys`` was set: ``"--config"`` or ``"FILE, line N"``.

    ``sources`` are in the order they take precedence, highest first: ``("--config", dict)``
    for the command line's values, then config files' paths or ``(label, path)`` (the last
    ``--configfile`` first, ``config/config.yaml`` last). The first source holding the whole
    path names it; a path no source holds (a missing key) is placed at its deepest parent
    found. None when no source holds any of it.
    """
    keys = list(keys)
    composed = []
    for entry in sources:
        label, source = entry if isinstance(entry, tuple) else (None, entry)
        if isinstance(source, dict):
            composed.append((label or "--config", source))
            continue
        try:
            composed.append((label or _short_path(source),
                             yaml.compose(Path(source).read_text())))
        except (OSError, yaml.YAMLError):
            continue
    for depth in range(len(keys), 0, -1):
        for label, source in composed:
            if isinstance(source, dict):
                if _holds(source, keys[:depth]):
                    return label
                continue
            node = _node_at(source, keys[:depth]) if source is not None else None
            if node is not None:
                return f"{label}, line {node.start_mark.line + 1}"
    return None


def _leaves(node, keys=()):
    """Every ``(key path, value)`` below ``node`` that is not a mapping or a list."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*keys, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, (*keys, index))
    else:
        yield keys, node


def _dotted(keys) -> str:
    text = ""
    for key in keys:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text


def _duplicate_keys(node, keys=()):
    """``(key path, line, earlier line)`` of every key a YAML mapping node sets twice."""
    if isinstance(node, yaml.MappingNode):
        seen = {}
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                yield (*keys, key), key_node.start_mark.line + 1, seen[key]
            seen[key] = key_node.start_mark.line + 1
            yield from _duplicate_keys(value_node, (*keys, key))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _duplicate_keys(item, (*keys, index))


#: profile names the pipeline ships (config/config.yaml, config/ci.yaml)
KNOWN_PROFILES = ("paper", "quick")
#: more runs than this in one setting is taken for a typo
PLAUSIBLE_RUNS = 1000


def config_warnings(config: dict, sources) -> list[str]:
    """What in a valid config is probably a mistake, each naming where it was set: a key a
    config file sets twice (YAML keeps the later value), a ``profile`` one letter off a
    shipped one, a ``runs`` above :data:`PLAUSIBLE_RUNS`."""
    found = []
    for entry in sources:
        label, source = entry if isinstance(entry, tuple) else (None, entry)
        if isinstance(source, dict):
            continue
        try:
            root = yaml.compose(Path(source).read_text())
        except (OSError, yaml.YAMLError):
            continue
        for keys, line, earlier in _duplicate_keys(root):
            found.append(f"{label or _short_path(source)}, line {line}: config key "
                         f"'{_dotted(keys)}' set again (line {earlier}); the later value is used")
    profile = config.get("profile")
    close = difflib.get_close_matches(str(profile), KNOWN_PROFILES, n=1, cutoff=0.7)
    if profile not in KNOWN_PROFILES and close:
        where = locate_key(["profile"], sources) or "config"
        found.append(f"{where}: profile '{profile}' (did you mean '{close[0]}'?); the name goes "
                     f"into the report as written")
    for keys, value in _leaves(config):
        if keys and keys[-1] == "runs" and isinstance(value, int) and value > PLAUSIBLE_RUNS:
            where = locate_key(keys, sources) or "config"
            found.append(f"{where}: config key '{_dotted(keys)}': {value:,} runs (more than "
                         f"{PLAUSIBLE_RUNS:,}: is it a typo?)")
    return found


def validate_config(config: dict, schema_path, *, sources=None) -> dict:
    """Validate ``config`` in place against the schema, filling its defaults; with
    ``sources`` (:func:`locate_key`'s), an error also names the file and line (or
    ``--config``) that set the entry.

    Returns
    -------
    config : dict
        The same object, defaults filled.

    Raises
    ------
    ConfigError
        Naming the offending key in a few lines.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from fedclust.pipeline.config import validate_config
    >>> schema = pathlib.Path(tempfile.mkdtemp()) / "schema.yaml"
    >>> _ = schema.write_text("type: object\\nadditionalProperties: false\\n"
    ...                       "properties:\\n  runs: {type: integer, default: 3}\\n")
    >>> validate_config({}, schema)
    {'runs': 3}
    >>> validate_config({"rusn": 2}, schema)
    Traceback (most recent call last):
    ...
    fedclust.exceptions.ConfigError: unknown config key 'rusn' (did you mean 'runs'?)
    allowed keys under '(top level)': runs
    """
    schema = load_schema(schema_path)
    validator = _validator_class(schema.get("$defs"))(schema)
    error = best_match(validator.iter_errors(config))
    if error is not None:
        where = locate_key(_key_path(error), sources) if sources else None
        raise ConfigError((f"{where}: " if where else "") + _message(error))
    for keys, value in _leaves(config):
        if isinstance(value, float) and not math.isfinite(value):
            where = locate_key(keys, sources) if sources else None
            raise ConfigError((f"{where}: " if where else "") +
                              f"config key '{_dotted(keys)}': {value} is not a finite number")
    try:
        _check_coreset(config)
        _check_fedkmeans(config)
        _check_kfed_clusters_per_device(config)
        _check_kfed_applications(config)
        _check_localkmeans(config)
        _check_comparison(config)
        _check_reproduction(config)
    except ConfigError as error:  # named with the file and line of the key it names
        named = re.match(r"config key '([\w.]+)'", str(error))
        where = locate_key(named.group(1).split("."), sources) if named and sources else None
        if where is None:
            raise
        raise ConfigError(f"{where}: {error}") from None
    return config


def _check_reproduction(config: dict) -> None:
    """Every target a profile declares scale-limited exists in the paper targets."""
    declared = config.get("reproduction", {}).get("not_at_this_profile", {})
    if not declared:
        return
    from ..reproduction import load_targets, target_keys

    known = target_keys(load_targets(config["paper_targets"]))
    for key in declared:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise ConfigError(f"config key 'reproduction.not_at_this_profile.{key}': no such "
                              f"target in {config['paper_targets']}{hint}")


def _check_comparison(config: dict) -> None:
    """Every data set of the comparison has its k, k' fits in every k, and the structured
    partition's devices can hold every cluster."""
    cfg = config.get("comparison")
    if not cfg:
        return
    lacking = [ds for ds in cfg["datasets"] if ds not in cfg["n_clusters"]]
    if lacking:
        raise ConfigError(f"config key 'comparison.n_clusters': no k for data set(s) "
                          f"{', '.join(lacking)}; add e.g. 'comparison.n_clusters."
                          f"{lacking[0]}: 10'")
    for ds in cfg["datasets"]:
        k = cfg["n_clusters"][ds]
        if "structured" in cfg["partitions"] and cfg["n_devices"] * cfg["device_clusters"] < k:
            raise ConfigError(f"config key 'comparison.n_devices': {cfg['n_devices']} devices "
                              f"of at most k'={cfg['device_clusters']} clusters cannot hold the "
                              f"k={k} clusters of {ds} (structured partition)")
        if cfg["device_clusters"] > cfg["n_clusters"][ds]:
            raise ConfigError(f"config key 'comparison.device_clusters': k'="
                              f"{cfg['device_clusters']} is more than k="
                              f"{cfg['n_clusters'][ds]} of {ds}")


_KFED_ORACLE_SECTIONS = ("fig2", "fig3", "participation", "new_devices", "heterogeneity")


def _check_kfed_clusters_per_device(config: dict) -> None:
    """k' <= k wherever both are known before any job: Table 1 and Fig 1 give k per setting;
    an oracle section gives an int k, or 'chosen' (a k of ``separation.k_grid``, known only
    once the separation analysis ran: then k' above the largest k of the grid can never fit)."""
    cfg = config.get("kfed")
    if not cfg:
        return
    for name in ("table1", "fig1"):
        section = cfg.get(name)
        if not section or section["device_clusters"] == "sqrt":
            continue
        k = min(s["n_clusters"] for s in section["settings"])
        if section["device_clusters"] > k:
            raise ConfigError(f"config key 'kfed.{name}.device_clusters': k'="
                              f"{section['device_clusters']} is more than k={k} of "
                              f"kfed.{name}.settings (a device cannot hold more clusters than "
                              f"there are)")
    k_grid = cfg.get("separation", {}).get("k_grid", [])
    for name in _KFED_ORACLE_SECTIONS:
        section = cfg.get(name)
        if not section:
            continue
        k, kp = section["n_clusters"], section["device_clusters"]
        largest_kp = max(kp) if isinstance(kp, list) else (None if kp == "sqrt" else kp)
        largest_k = max(k_grid, default=None) if k == "chosen" else k
        if largest_kp is not None and largest_k is not None and largest_kp > largest_k:
            where = "the largest k of kfed.separation.k_grid" if k == "chosen" else \
                f"kfed.{name}.n_clusters"
            raise ConfigError(f"config key 'kfed.{name}.device_clusters': k'={largest_kp} is "
                              f"more than k={largest_k} ({where})")


def _check_localkmeans(config: dict) -> None:
    """LocalKMeans' synthetic model places K orthonormal centres in R^d, so d >= K for every K
    it draws (Sec. 4.1 and the K sweep of Fig 4), and every setting has at least K rows and a
    row on every machine."""
    cfg = config.get("localkmeans")
    if not cfg:
        return
    synthetic, fig4 = cfg["synthetic"], cfg["fig4"]
    d = synthetic["n_features"]
    largest_k = max(synthetic["n_clusters"], *fig4["n_clusters"])
    for key, k in (("localkmeans.synthetic.n_clusters", synthetic["n_clusters"]),
                   ("localkmeans.fig4.n_clusters", max(fig4["n_clusters"], default=0))):
        if k > d:
            raise ConfigError(f"config key '{key}': K={k} orthonormal centres do not fit in "
                              f"R^{d} (localkmeans.synthetic.n_features); K <= d is needed")
    rows = synthetic["n_machines"] * synthetic["samples_per_machine"]
    if rows < largest_k:
        raise ConfigError(f"config key 'localkmeans.synthetic.samples_per_machine': "
                          f"{synthetic['n_machines']} machines of "
                          f"{synthetic['samples_per_machine']} rows cannot make K={largest_k} "
                          f"clusters")
    most_machines = max(fig4["n_machines"], default=1)
    if fig4["total_samples"] < max(largest_k, most_machines):
        raise ConfigError(f"config key 'localkmeans.fig4.total_samples': "
                          f"{fig4['total_samples']} rows cannot make K={largest_k} clusters "
                          f"over {most_machines} machines (localkmeans.fig4.n_machines)")


def _check_kfed_applications(config: dict) -> None:
    """What the schema cannot say about k-FED's Table 2 and Fig 4: the rotations deal evenly
    over the devices, a round fits in the federation, pow-d draws at least m candidates."""
    cfg = config.get("kfed")
    if not cfg or "table2" not in cfg:
        return
    t2, f4 = cfg["table2"], cfg["fig4"]
    for z in t2["n_devices"]:
        for kp in t2["device_clusters"]:
            if (z * kp) % 4:
                raise ConfigError(f"config key 'kfed.table2.n_devices': {z} devices with k'={kp} "
                                  f"of the 4 rotations: n_devices * k' must be a multiple of 4")
    if t2["devices_per_round"] > min(t2["n_devices"]):
        raise ConfigError(f"config key 'kfed.table2.devices_per_round': "
                          f"{t2['devices_per_round']} is more than the "
                          f"{min(t2['n_devices'])} devices of the smallest setting")
    if f4["candidates"] < f4["devices_per_round"]:
        raise ConfigError(f"config key 'kfed.fig4.candidates': pow-d draws d >= m candidates; "
                          f"got d={f4['candidates']} < m={f4['devices_per_round']}")
    if f4["kfed"]["device_clusters"] > f4["kfed"]["n_clusters"]:
        raise ConfigError(f"config key 'kfed.fig4.kfed.device_clusters': k'="
                          f"{f4['kfed']['device_clusters']} is more than k="
                          f"{f4['kfed']['n_clusters']}")
    fem = f4["femnist"]
    if fem["classes_per_device"] > fem["classes"]:
        raise ConfigError(f"config key 'kfed.fig4.femnist.classes_per_device': "
                          f"{fem['classes_per_device']} is more than the {fem['classes']} classes")
    if f4["candidates"] > fem["devices"]:
        raise ConfigError(f"config key 'kfed.fig4.candidates': {f4['candidates']} candidates "
                          f"of only {fem['devices']} FEMNIST devices")


_FEDKMEANS_KNOBS = ("sample_fraction", "local_epochs", "client_lr")


def _check_fedkmeans(config: dict) -> None:
    """What the schema cannot say about the ``fedkmeans`` section: sweep and progress names
    fit in file names, every sweep fixes the hyper-parameters it does not vary, every
    federated progress run sets all three."""
    cfg = config.get("fedkmeans")
    if not cfg:
        return
    for group in ("sweeps", "progress"):
        for name, spec in cfg[group].items():
            key = f"fedkmeans.{group}.{name}"
            if not re.fullmatch(r"[A-Za-z0-9]+", name):
                raise ConfigError(f"config key '{key}': a name of letters and digits only "
                                  f"(it names files)")
            needed = [k for k in _FEDKMEANS_KNOBS if k != spec.get("vary")] \
                if group == "sweeps" else ([] if spec.get("central") else list(_FEDKMEANS_KNOBS))
            lacking = [k for k in needed if k not in spec]
            if lacking:
                raise ConfigError(f"config key '{key}': set {', '.join(lacking)}")
    data = cfg["data"]
    if data["n_clients"] * data["samples_per_client"] < cfg["n_clusters"]:
        raise ConfigError(f"config key 'fedkmeans.data.samples_per_client': "
                          f"{data['n_clients']} clients of {data['samples_per_client']} rows "
                          f"cannot make K={cfg['n_clusters']} clusters (fedkmeans.n_clusters)")
    separated = config.get("kfed", {}).get("separation", {}).get("datasets", [])
    unseparated = [ds for ds in cfg["real"]["datasets"] if ds not in separated]
    if unseparated:
        raise ConfigError(f"config key 'fedkmeans.real.datasets': {', '.join(unseparated)} "
                          f"take k from the k-FED separation analysis; add them to "
                          f"kfed.separation.datasets")


def _check_coreset(config: dict) -> None:
    """What the schema cannot say about the ``coreset`` section: every real data set has its
    ``k``, and a grid has a square number of sites."""
    cfg = config.get("coreset")
    if not cfg:
        return
    used = {*cfg["datasets"], *cfg["kmedian"]["datasets"], *cfg["diameter"]["datasets"]}
    lacking = sorted(ds for ds in used if ds not in SYNTHETIC and ds not in cfg["n_clusters"])
    if lacking:
        raise ConfigError(f"config key 'coreset.n_clusters': no k for data set(s) "
                          f"{', '.join(lacking)}; add e.g. 'coreset.n_clusters.{lacking[0]}: 10'")
    synthetic = cfg["synthetic"]
    for bound, what in (("n_clusters", "clusters"), ("n_sites", "sites")):
        limit = synthetic[bound] if bound == "n_clusters" else cfg[bound]
        if synthetic["n_samples"] < limit:
            raise ConfigError(f"config key 'coreset.synthetic.n_samples': "
                              f"{synthetic['n_samples']} rows cannot make {limit} {what} "
                              f"('coreset.{'synthetic.' if bound == 'n_clusters' else ''}"
                              f"{bound}')")
    uses_grid = "grid" in cfg["graphs"] or "grid" in cfg["kmedian"]["graphs"]
    side = round(cfg["n_sites"] ** 0.5)
    if uses_grid and side * side != cfg["n_sites"]:
        raise ConfigError(f"config key 'coreset.n_sites': {cfg['n_sites']} sites make no square "
                          f"grid (graphs include 'grid'); use e.g. {side * side} or "
                          f"{(side + 1) ** 2}")

"""The ``--configfile`` of a Snakemake command line, checked before Snakemake reads it.

Snakemake reads ``--configfile`` before any of the pipeline's code runs and names neither the
file nor the line of a mistake ("Config file is not valid JSON or YAML"; a 27-line traceback
for a missing file). It reads its profiles earlier: the workflow profile
(``workflow/profiles/default/config.yaml``) runs :func:`main`, which stops with one line per
bad file, its name and the line and column of a YAML mistake.

Standard library and PyYAML only, no relative import: the profile loads this file by its path,
so that nothing of ``fedclust`` is imported into Snakemake's process before the Snakefile
imports its own checkout's copy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

__all__ = ["read_config_file", "config_entry_problem", "command_line_problems", "is_dry_run",
           "main"]


def read_config_file(path) -> tuple[dict | None, str | None]:
    """``(keys, None)``, or ``(None, problem)`` where ``path`` is missing, empty, not YAML or
    not a mapping: the problem names the file (and the line and column of a YAML mistake)."""
    path = Path(path)
    hint = "" if path.suffix in (".yaml", ".yml", ".json") else (
        " (a target after --configfile is read as one: put targets before it or after --)")
    try:
        text = path.read_text()
    except OSError as error:
        return None, f"config file {path}: {error.strerror}{hint}"
    except UnicodeDecodeError:
        return None, f"config file {path}: not a text file{hint}"
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        return None, f"config file {path}{where}: {problem}{hint}"
    if loaded is None:
        # Snakemake would refuse it without its name ("Config file must be given as JSON or
        # YAML with keys at top level")
        return None, f"config file {path}: empty (a config file holds keys at its top level)"
    if not isinstance(loaded, dict):
        return None, f"config file {path}: holds a {type(loaded).__name__}, not keys{hint}"
    return loaded, None


def command_line_problems(argv) -> list[str]:
    """The problem of every ``--configfile`` / ``--configfiles`` file on the command line
    ``argv`` (Snakemake's arguments) that has one."""
    # no abbreviations: --config (values) must not read as --configfile
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--configfile", "--configfiles", nargs="+", action="extend",
                        default=[])
    parser.add_argument("--config", "-C", nargs="*", action="extend", default=[])
    known, _ = parser.parse_known_args(list(argv))
    problems = [problem for entry in known.config
                if (problem := config_entry_problem(entry)) is not None]
    return problems + [problem for path in known.configfile
                       if (problem := read_config_file(path)[1]) is not None]


def config_entry_problem(entry: str) -> str | None:
    """What is wrong with one ``--config`` entry (``name=value``, ``name`` a top-level key),
    or None; Snakemake's own message comes with a traceback of 12-28 lines."""
    name, equals, _ = entry.partition("=")
    if not equals:
        return (f"--config {entry}: an entry is name=value (e.g. --config seed=3); a target "
                f"after --config is read as one: put targets before it or after --")
    if "." in name:
        head, *rest = name.split(".")
        value = entry.partition("=")[2]
        nested = value
        for key in reversed(rest):
            nested = f"{{{key}: {nested}}}"
        return (f"--config {entry}: a nested key is not dotted; write "
                f"--config '{head}={nested}'")
    if not name.isidentifier():
        return f"--config {entry}: '{name}' is not a config key (letters, digits and _)"
    return None


def is_dry_run(argv) -> bool:
    """Whether Snakemake's command line ``argv`` asks for a dry run (``-n``, ``-np`` and the
    like, ``--dry-run``, ``--dryrun``): the Snakefile reads it while it is parsed, before
    Snakemake has set up its executor (``workflow.dryrun`` is still False then)."""
    for token in argv:
        if token == "--":
            break
        if token in ("--dry-run", "--dryrun", "--dry_run"):
            return True
        if token.startswith("-") and not token.startswith("--") and token[1:].isalpha() \
                and "n" in token[1:]:
            return True
    return False


def main(argv=None) -> None:
    """Stop (exit status 1) with one line per bad ``--configfile`` of ``argv`` (default:
    this process's command line)."""
    problems = command_line_problems(sys.argv[1:] if argv is None else argv)
    if problems:
        raise SystemExit("\n".join(problems))

"""Print every table and figure the pipeline makes, with its file and what it shows.

    python -m fedclust.pipeline.targets                      # the paper profile
    python -m fedclust.pipeline.targets --configfile config/ci.yaml   # the quick profile

It checks a config file as the pipeline does and names what is wrong in one line, the file and
line of a YAML mistake included (Snakemake itself says only "Config file is not valid JSON or
YAML"), so it is also the way to check a config before a run. Run from the repository root (it
reads ``config/config.yaml`` and the schema as Snakemake does, the ``--configfile`` merged over
it). Build one of them with ``snakemake <file>``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from snakemake.utils import update_config

from ..exceptions import ConfigError
from .config import load_config_file, validate_config
from .registry import catalogue


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fedclust.pipeline.targets",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", type=Path, help="a profile's config, e.g. "
                        "config/ci.yaml (merged over config/config.yaml)")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="the repository root (default: the working directory)")
    args = parser.parse_args(argv)
    try:
        config = load_config_file(args.root / "config" / "config.yaml")
        if args.configfile:
            # merged key by key, as Snakemake merges a --configfile over the Snakefile's
            update_config(config, load_config_file(args.configfile))
        config = validate_config(config, args.root / "config" / "schema.yaml")
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    rows = catalogue(config)
    width = max(len(r["file"]) for r in rows)
    lines, paper = [], None
    for row in rows:
        if row["paper"] != paper:
            paper = row["paper"]
            lines.append(f"\n{paper}")
        lines.append(f"  {row['file']:<{width}}  {row['about']}".rstrip())
    lines.append("\nbuild one: snakemake <file> --cores N   (each figure's PDF beside its PNG)")
    try:
        print("\n".join(lines))
    except BrokenPipeError:  # piped into head: not an error
        sys.stderr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

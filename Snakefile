# fedclust: one command regenerates the tables and figures of the federated k-means papers.
#
#   snakemake --cores N                                   # paper profile (config/config.yaml)
#   snakemake --cores 2 --configfile config/ci.yaml       # quick profile
#   snakemake --cores N --config data_mirror=DIR          # read data from an offline mirror
#   snakemake --profile workflow/profiles/slurm           # submit to a SLURM cluster
#
# Run from the repository root: Snakemake finds this Snakefile and applies the local profile
# workflow/profiles/default by itself (it looks for profiles/default beside the Snakefile: the
# link profiles -> workflow/profiles). Outputs land in results/ (tidy CSV tables, logs) and
# figures/ (PNG + PDF); downloaded data in data/. What each paper produces (figures, gathered
# tables, claims, rules) lives in its folder, src/fedclust/papers/<paper>/; the generic rules
# (workflow/rules/) and the scripts (workflow/scripts/) stay thin.

import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import min_version

min_version("9.0")

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from fedclust.io import (  # noqa: E402
    check_output_folders,
    remove_damaged_files,
    remove_orphan_temporaries,
)
from fedclust.pipeline import OUTPUT_FOLDERS, benchmarks, registry  # noqa: E402
from fedclust.exceptions import ConfigError  # noqa: E402
from fedclust.pipeline.config import (  # noqa: E402
    config_warnings,
    type_command_line_values,
    validate_config,
)
from fedclust.pipeline.configfiles import is_dry_run  # noqa: E402
from fedclust.pipeline.data import check_mirror, repair_corrupt_copies  # noqa: E402
from fedclust.pipeline.lock import lock_message  # noqa: E402
from fedclust.pipeline.rebuild import REBUILDING, rebuild_keeping_dates  # noqa: E402


configfile: "config/config.yaml"


# defaults filled from the schema; a bad key or a missing mirror stops here, before any job.
# Only --config values are retyped (Snakemake reads nested ones as strings); a --configfile's
# values keep their YAML types, so a quoted number there is refused, not read as a number.
type_command_line_values(config, workflow.config_settings.config or {})
# an error names the file and line that set the entry (or --config): the command line's values
# win, then the last --configfile, ..., then config/config.yaml
CONFIG_SOURCES = [
    ("--config", workflow.config_settings.config or {}),
    *reversed(workflow.overwrite_configfiles or []),
    Path(workflow.basedir) / "config" / "config.yaml",
]
try:
    validate_config(
        config, Path(workflow.basedir) / "config" / "schema.yaml", sources=CONFIG_SOURCES
    )
    check_mirror(config, workflow.config_settings.config)
except ConfigError as error:  # the message names the file and line: no traceback under it
    sys.exit(f"ConfigError: {error}")
# a damaged local copy of a fetched file is fetched again (named, its date kept), and a damaged
# derived file (its bytes no longer those its checksum sidecar holds) is removed, so its rule
# makes it again in this run, before any job reads it. Only the main process checks: jobs on a
# cluster's nodes parse this file too.
# A dry run (-n) changes nothing: it says what a run would repair.
if workflow.is_main_process:
    # a key set twice in a file, a near-miss profile name, an implausible number of runs
    for problem in config_warnings(config, CONFIG_SOURCES):
        logger.warning(f"config: {problem}")
    DRY_RUN = workflow.dryrun or is_dry_run(sys.argv[1:])
    # locks left in the folder: a live run's stops this one before it repairs anything; a dead
    # run's are named, with --unlock as what to do
    LOCK = lock_message(Path.cwd())
    if LOCK is not None:
        if LOCK[1] and not DRY_RUN:
            raise WorkflowError(LOCK[0])
        logger.warning(f"lock: {LOCK[0]}")
    for problem in repair_corrupt_copies(config, dry_run=DRY_RUN):
        logger.warning(f"damaged local copy: {problem}")
    RECORDED = {}
    DAMAGED = remove_damaged_files(OUTPUT_FOLDERS, dry_run=DRY_RUN, recorded=RECORDED)
    for problem in DAMAGED:
        logger.warning(f"damaged file, to be made again: {problem}")
    # made again now, by a run of their own: the same bytes get their date back, so the DAG
    # built next reruns nothing made from them (Snakemake decides by dates alone)
    if DAMAGED and not DRY_RUN and not os.environ.get(REBUILDING):
        for line in rebuild_keeping_dates(
            RECORDED,
            snakefile=workflow.main_snakefile,
            config=config,
            cores=workflow.resource_settings.cores,
        ):
            logger.warning(f"damaged file: {line}")


onstart:
    # before the first job: an output folder that cannot take the outputs stops the run here,
    # in one line, not in the first job's traceback
    check_output_folders(OUTPUT_FOLDERS)
    # holding the working directory's lock, before the first job: nothing else writes now
    for orphan in remove_orphan_temporaries(OUTPUT_FOLDERS):
        logger.info(f"removed {orphan}, the temporary file of a job killed mid-write")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/input_functions.smk"
include: "workflow/rules/data.smk"
include: "src/fedclust/papers/kfed/rules.smk"
include: "src/fedclust/papers/localkmeans/rules.smk"
include: "src/fedclust/papers/coreset/rules.smk"
include: "src/fedclust/papers/fedkmeans/rules.smk"
include: "src/fedclust/papers/comparison/rules.smk"
include: "workflow/rules/runtime.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        registry.targets(config),
        datasets.DATA_CHECKSUMS,
        benchmarks.SUMMARY_CSV,
        benchmarks.SUMMARY_MD,

# fedclust: one command regenerates the tables and figures of the federated k-means papers.
#
#   snakemake --cores N                                   # paper profile (config/config.yaml)
#   snakemake --cores 2 --configfile config/ci.yaml       # quick profile
#   snakemake --cores N --config data_mirror=DIR          # read data from an offline mirror
#   snakemake --profile workflow/profiles/slurm           # submit to a SLURM cluster
#
# Outputs land in results/ (tidy CSV tables, logs) and figures/ (PNG + PDF); downloaded data in
# data/. The logic lives in the `fedclust` package under src/; rules and scripts stay thin.

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "config/schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/kfed.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_targets(),
    default_target: True

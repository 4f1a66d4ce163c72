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


# Run on the submitting host under a cluster executor: downloads need the network that compute
# nodes often lack, and the rest take seconds (queueing would dominate).
localrules:
    all,
    fetch_mnist,
    fetch_shakespeare,
    fetch_tff_emnist,
    fetch_postures,
    fetch_cifar10,
    kfed_gather,
    kfed_table1,
    kfed_separation,
    kfed_figure,
    kfed_claims,
    lkm_gather,
    lkm_figure,
    lkm_claims,
    reproduction,


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/kfed.smk"
include: "workflow/rules/localkmeans.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        all_targets(),
    default_target: True

# Shared by every .smk file: the conda environment, the registry-driven wildcard constraints
# and the run-on-the-submitting-host rules (the input functions are in input_functions.smk).

from fedclust.pipeline import comparison as comparison_pipeline
from fedclust.pipeline import coreset as coreset_pipeline
from fedclust.pipeline import data as datasets
from fedclust.pipeline import fedkmeans as fedkmeans_pipeline
from fedclust.pipeline import kfed as kfed_pipeline
from fedclust.pipeline import localkmeans as lkm_pipeline

# the one environment (a link to the root environment.yml, which pins what requirements.txt pins)
ENV = "../envs/fedclust.yaml"


wildcard_constraints:
    dataset="|".join(datasets.DATASETS),
    paper="|".join(registry.papers()),
    figure=registry.figure_pattern(),
    d=r"\d+",
    k=r"\d+",


# Run on the submitting host under a cluster executor: these take seconds (queueing would
# dominate). The fetch rules are local too (their own `localrule: True`, data.smk).
localrules:
    all,
    gather,
    figure,
    claims,
    kfed_table1,
    kfed_separation,
    reproduction,
    run_config,
    data_checksums,
    benchmark_summary,

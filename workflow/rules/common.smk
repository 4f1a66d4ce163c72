# Shared by every .smk file: the conda environment, the registry-driven wildcard constraints
# and the run-on-the-submitting-host rules (the input functions are in input_functions.smk).

from fedclust.papers.comparison import declare as comparison_declare
from fedclust.papers.coreset import declare as coreset_declare
from fedclust.pipeline import data as datasets
from fedclust.papers.fedkmeans import declare as fedkmeans_declare
from fedclust.papers.kfed import declare as kfed_declare
from fedclust.papers.localkmeans import declare as localkmeans_declare
from fedclust.papers import localkmeans

# the workflow's own folder: the papers' rule files (src/fedclust/papers/<paper>/rules.smk) name
# its scripts, environment and report captions from there, not relative to themselves
WORKFLOW = Path(workflow.basedir) / "workflow"
SCRIPTS = WORKFLOW / "scripts"
# the one environment (a link to the root environment.yml, which pins what requirements.txt pins)
ENV = str(WORKFLOW / "envs" / "fedclust.yaml")


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

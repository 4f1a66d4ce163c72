"""The papers the pipeline reproduces, one folder each on the shared core.

A paper's folder holds what only that paper uses: ``declare.py`` (its figures, gathered
tables, claims and path templates, read by the Snakefile at parse time), its experiments, its
``figures.py`` (one function per figure, named as the figure's file), ``claims.py``,
``captions/`` and ``rules.smk``. Modules here import the core, never the reverse; the core
finds the papers through :data:`PAPERS` alone.
"""

#: Every paper's folder, in the order the report lists them. A new paper is a folder and a
#: name here.
PAPERS = ("kfed", "localkmeans", "coreset", "fedkmeans", "comparison")

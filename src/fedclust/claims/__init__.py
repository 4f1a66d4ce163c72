"""Each paper's printed numbers and statements, checked against the pipeline's results.

One module per paper (:mod:`~fedclust.claims.kfed`, :mod:`~fedclust.claims.localkmeans`),
each with a ``claims(tables, targets)`` function that the paper's registry entry names.
"""

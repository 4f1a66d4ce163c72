"""The statistics a figure shows and a claim checks, computed once from the results tables.

``fedclust.plots`` draws them and ``fedclust.claims`` compares them with the papers' numbers;
both import from here, and nothing here imports matplotlib (a numeric check never pulls in
plotting; ``tests/test_summaries.py`` checks it).
"""

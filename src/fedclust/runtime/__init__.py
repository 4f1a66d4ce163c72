"""The library's estimators on a real federated runtime.

:mod:`fedclust.runtime.flower` runs k-FED and federated k-means as Flower apps (a SuperLink
and SuperNodes as separate processes), calling the estimators' own local and server steps, and
measures what travels: Flower's payload and the bytes on the wire, beside the ledger. It needs
the optional extra ``flower`` (``pip install -e .[flower]``); importing this package does not.
"""

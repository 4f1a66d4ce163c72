"""Errors the library raises on purpose, so callers can catch exactly them."""

from __future__ import annotations

__all__ = ["ConfigError", "InfeasibleSettingError", "OutputFolderError", "DevicesWarning",
           "DamagedFileError"]


class InfeasibleSettingError(ValueError):
    """A setting the algorithm cannot run on this data, whatever the seed.

    Raised, for example, when fewer distinct local centres reach the k-FED server than the
    ``n_clusters`` it must form. Experiments catch this error only: they log the setting and
    write it to their results table as skipped, with the message as its reason. Invalid
    parameters (a negative count, an unknown name) raise ``ValueError`` or ``TypeError``
    instead and stop the run.
    """


class ConfigError(ValueError):
    """The pipeline's configuration is invalid; the message names the key (raised before any
    job runs, by :mod:`fedclust.pipeline.config` and :mod:`fedclust.pipeline.data`)."""


class OutputFolderError(OSError):
    """An output folder (``data/``, ``results/``, ``figures/``) cannot take the run's outputs:
    not a folder, not writable, or full. Raised before any job runs."""


class DevicesWarning(UserWarning):
    """A federated estimator was fitted without ``devices``: every row is one device (a
    centralized fit). Raised with ``y`` given (``fit(X, devices)`` passes the devices as
    ``y``, which is ignored) and, once per call site, with neither; filter it with
    ``warnings.filterwarnings("ignore", category=DevicesWarning)`` where that is meant."""


class DamagedFileError(OSError):
    """A file the pipeline wrote no longer has the bytes its checksum sidecar records (cut
    short, changed by hand, a disk error): named and removed, so the next run makes it
    again."""

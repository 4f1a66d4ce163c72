"""k-FED, federated k-means, LocalKMeans and distributed Lloyd as Flower apps (``flwr`` 1.42,
the Message API).

The apps call the estimators' own steps (``KFed.server_step``,
``FederatedKMeans.client_step`` and ``server_step``,
:func:`~fedclust.algorithms.local_kmeans.local_lloyd_steps`), so there is one copy of every
algorithm, and the server draws from the generator ``fit`` would use, in the same order: a
run with every device answering gives the in-process fit's centres. :func:`launch` starts the
processes, runs an app, measures the bytes and stops every process it started. What each app
exchanges, what the ledger does not count and how a lost device is handled:
``docs/devices.md`` (The apps' exchanges). One module per concern:
:mod:`~fedclust.runtime.flower.protocol` (what client and server share),
:mod:`~fedclust.runtime.flower.client` (the ClientApp), :mod:`~fedclust.runtime.flower.server`
(the ServerApp), :mod:`~fedclust.runtime.flower.app` (the app folder),
:mod:`~fedclust.runtime.flower.launcher` (the processes),
:mod:`~fedclust.runtime.flower.measurements` and :mod:`~fedclust.runtime.flower.cli`.
"""

# one check for the package (Python imports it before any of its modules)
try:
    import flwr  # noqa: F401
except ImportError as error:  # pragma: no cover - the extra is optional
    raise ImportError("fedclust.runtime.flower needs Flower: pip install -e '.[flower]' "
                      "(pinned in requirements-flower.lock)") from error

from .app import write_app  # noqa: E402
from .cli import KILL_BEFORE, demo_federation, demo_params, main, run_and_measure  # noqa: E402
from .client import client_app  # noqa: E402
from .launcher import FlowerRun, launch, run_config_toml, write_partitions  # noqa: E402
from .measurements import fit_in_process, measurements, summary_markdown  # noqa: E402
from .protocol import ALGORITHMS, DevicesLostError, payload_bytes  # noqa: E402
from .server import server_app  # noqa: E402

__all__ = ["ALGORITHMS", "KILL_BEFORE", "DevicesLostError", "FlowerRun", "client_app",
           "demo_federation", "demo_params", "fit_in_process", "launch", "main",
           "measurements", "payload_bytes", "run_and_measure", "run_config_toml", "server_app",
           "summary_markdown", "write_app", "write_partitions"]

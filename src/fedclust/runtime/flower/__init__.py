"""k-FED, federated k-means, LocalKMeans and distributed Lloyd as Flower apps (``flwr`` 1.42, the
Message API) that call the estimators' own steps, so that a run with every device answering ends
with the in-process fit's centres; :func:`launch` starts the processes, runs an app and measures
the bytes. One module per concern (:mod:`.protocol`, :mod:`.client`, :mod:`.server`, :mod:`.app`,
:mod:`.launcher`, :mod:`.measurements`, :mod:`.cli`); what each app exchanges and how a lost
device is handled: docs/devices.md, *The apps' exchanges*.
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

"""k-FED, federated k-means, LocalKMeans and distributed Lloyd as Flower apps (``flwr`` 1.42,
the Message API).

The apps call the estimators' own steps, so there is one copy of every algorithm:

* k-FED (:class:`~fedclust.KFed`, one round). The server draws what the federation-wide
  local step would draw (:func:`fedclust.algorithms.kfed.local_draws`) and sends each device its
  share (:meth:`~fedclust.algorithms.kfed.LocalDraws.for_device`); every device runs
  :func:`~fedclust.algorithms.kfed.awasthi_sheffet` on its own rows and sends its local centres
  (and sizes with ``server_weighting="size"``) up; the server runs ``KFed.server_step``
  (Algorithm 2) and sends every device the global cluster of each of its local centres.
* Federated k-means (:class:`~fedclust.FederatedKMeans`, ``n_rounds`` rounds with client
  sampling). Every round the server samples clients as ``fit`` does and sends them the
  centroids; each runs ``FederatedKMeans.client_step`` on its rows and sends its centroids
  and cluster sizes up; the server runs ``FederatedKMeans.server_step``.
* LocalKMeans (:class:`~fedclust.LocalKMeans`, ``n_iter`` local Lloyd steps, aggregated every
  ``local_steps``). Every aggregation the server sends the global centres; each machine runs
  :func:`~fedclust.algorithms.local_kmeans.local_lloyd_steps` (the shared kernel's pass, once
  per step, as ``fit`` runs them) and sends its centres and cluster weights up; the server
  takes their size-weighted aggregate (:func:`fedclust.rounds.aggregate_centers`), as ``fit``
  does. Devices above the kernel's block of 256 rows may differ from ``fit`` in the last bits:
  the federation-wide pass splits a device's sums over its threads' tasks, a device alone
  over its own (about 1e-15 measured).
* Naive distributed Lloyd (:class:`~fedclust.DistributedLloyd`): LocalKMeans' exchange with
  one local step, every round, until the centres repeat (``fit``'s convergence) or
  ``max_iter``; equal to ``fit``'s pooled Lloyd to rounding (the sums are added per device).

The server draws from the generator ``fit`` would use (:func:`fedclust._validation.fit_rng`),
in the same order, so a run with every device answering gives the in-process fit's centres.
Two exchanges carry what the simulator knows without a message and the ledger therefore does
not count: ``describe`` (each device's row count and dimension, once) and ``evaluate`` (the
final centres down, each device's k-means cost up, to measure the cost); the k-FED draws
travel inside the local step's message (record ``draws``: a deployment not bound to reproduce
the simulator would send a seed instead).

A device that does not answer within ``round_timeout`` seconds is *lost*: k-FED's server goes
on with the local centres that arrived (as with devices that do not participate), federated
k-means goes on with the clients left (a lost client sampled in a later round is not asked
again). :func:`launch` starts the processes (one ``flower-superlink``, N
``flower-supernode``), runs an app, measures the bytes and stops every process it started.

The package, one module per concern: :mod:`~fedclust.runtime.flower.protocol` (what client and
server share), :mod:`~fedclust.runtime.flower.client` (the ClientApp),
:mod:`~fedclust.runtime.flower.server` (the ServerApp), :mod:`~fedclust.runtime.flower.app`
(the app folder), :mod:`~fedclust.runtime.flower.launcher` (the processes),
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

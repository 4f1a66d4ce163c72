"""What the Flower apps' client and server share: the estimators by name, the exchanges
and records of the protocol, the array wrapper and the byte count of a message.
"""

from __future__ import annotations

import json

import numpy as np
from flwr.app import Array, Context, RecordDict

from ...algorithms.distributed_lloyd import DistributedLloyd
from ...algorithms.federated_kmeans import FederatedKMeans
from ...algorithms.kfed import KFed
from ...algorithms.local_kmeans import LocalKMeans

#: The estimators that run as Flower apps, by the name the run config gives.
ALGORITHMS = {"kfed": KFed, "fedkmeans": FederatedKMeans, "localkmeans": LocalKMeans,
              "distributed_lloyd": DistributedLloyd}

#: Exchanges of control records only (the device sizes; the final centres and costs).
CONTROL_EXCHANGES = ("describe", "evaluate")

#: Records that carry what the simulator knows without a message (not in the ledger): each
#: device's size once, the final centres down and the cost up.
CONTROL_RECORDS = ("describe", "evaluate")

#: Records whose bytes the ledger counts (its message kinds).
LEDGER_RECORDS = ("local_centers", "local_sizes", "cluster_ids", "centers", "client_centers",
                  "client_counts", "feature_range", "client_sizes", "local_counts")

_APP_MODULE = "fedclust_flower_app"

#: How often the server asks the SuperLink for the replies of an exchange (seconds).
_PULL_INTERVAL_S = 0.5

#: What a SuperNode (or the SuperLink) logs when a ClientApp (ServerApp) process asks for its
#: task after Flower's start window closed: a task claimed for a new process must be taken up
#: within ``HEARTBEAT_DEFAULT_INTERVAL`` seconds (30 in flwr 1.42, not configurable), and
#: a ClientApp's start alone (interpreter and Flower's imports) is about 2.8 s of CPU.
_TOKEN_REFUSED = "task-token authentication failed"


class DevicesLostError(RuntimeError):
    """Every device of a run is lost: none is left to answer the server."""


def _array(values) -> Array:
    return Array(np.ascontiguousarray(values))


def payload_bytes(content: RecordDict) -> dict[str, int]:
    """Bytes of every record of a message, as Flower's ``message_size_mod`` counts them
    (``record.count_bytes()``: the arrays' serialized bytes, keys and values of configs)."""
    return {name: int(record.count_bytes()) for name, record in content.items()}

def estimator_of(context: Context):
    """The estimator a run's config names, with its parameters (JSON)."""
    config = context.run_config
    return ALGORITHMS[str(config["algorithm"])](**json.loads(str(config["params"])))

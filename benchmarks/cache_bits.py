"""Whether the kernels' last bits depend on the state of numba's cache.

Runs one Lloyd step per device (``fedclust.lloyd.lloyd_step_by_device``, LocalKMeans' pass) on
a fixed federation of 4,000 x 20 rows over 20 devices in new processes: with the checkout's
own cache (whatever earlier runs compiled into it, in whatever order) and with an empty
``NUMBA_CACHE_DIR`` (compiled now, in this step's order), and prints the sha256 of the squared
distances of each. Different digests mean that a rerun at the same commit can differ in its
last bits depending on which kernels its processes compiled first.

    python benchmarks/cache_bits.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

STEP = r"""
import hashlib
import numpy as np
from fedclust.federation import Federation
from fedclust.lloyd import lloyd_step_by_device
rng = np.random.default_rng(1)
X = rng.normal(size=(4000, 20)) + np.repeat(3 * rng.normal(size=(4, 20)), 1000, axis=0)
federation = Federation.from_devices(X, np.arange(4000) % 20)
centers = np.repeat(X[:4][None], 20, axis=0)
sq = lloyd_step_by_device(federation, centers)[1]
print(hashlib.sha256(sq.tobytes()).hexdigest())
"""


def digest(env) -> str:
    done = subprocess.run([sys.executable, "-c", STEP], env=env, check=True,
                          capture_output=True, text=True)
    return done.stdout.strip().splitlines()[-1]


def main() -> int:
    checkout = digest(dict(os.environ))
    with tempfile.TemporaryDirectory() as empty:
        fresh = digest({**os.environ, "NUMBA_CACHE_DIR": empty})
    print(f"the checkout's cache: {checkout}\nan empty cache:       {fresh}")
    print("same bits" if checkout == fresh else "DIFFERENT bits: the cache's state matters")
    return 0 if checkout == fresh else 1


if __name__ == "__main__":
    sys.exit(main())

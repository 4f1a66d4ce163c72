"""The Flower app folder that ``flwr run`` bundles: ``pyproject.toml`` and a module naming
the ServerApp and the ClientApp.
"""

from __future__ import annotations

from pathlib import Path

from .protocol import _APP_MODULE

_PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "fedclust-flower"
version = "1.0.0"
description = "fedclust's federated k-means estimators as a Flower app"
license = "MIT"
dependencies = ["flwr==1.42.0"]

[tool.hatch.build.targets.wheel]
packages = ["."]

[tool.flwr.app]
publisher = "fedclust"

[tool.flwr.app.components]
serverapp = "{module}:server_app"
clientapp = "{module}:client_app"

[tool.flwr.app.config]
# the estimator (kfed, fedkmeans) and its parameters as JSON
algorithm = "kfed"
params = "{{}}"
# the SuperNodes the server waits for, where it writes its result (on its machine)
n-devices = 2
result-path = "result.json"
# seconds the server waits for one exchange's replies (then a device is lost), and for the
# SuperNodes to connect and describe themselves
round-timeout = 60.0
connect-timeout = 120.0
# the launcher's fault hook (a JSON file), empty otherwise
spec = ""
"""


def write_app(directory) -> Path:
    """Write the Flower app folder (``pyproject.toml`` and a module naming this module's
    ``server_app`` and ``client_app``) that ``flwr run`` bundles; the SuperLink's and the
    SuperNodes' machines need fedclust (with the ``flower`` extra) installed."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pyproject.toml").write_text(_PYPROJECT.format(module=_APP_MODULE))
    (directory / f"{_APP_MODULE}.py").write_text(
        '"""fedclust\'s Flower app: the components live in fedclust.runtime.flower."""\n\n'
        "from fedclust.runtime.flower import client_app, server_app\n\n"
        '__all__ = ["client_app", "server_app"]\n')
    return directory





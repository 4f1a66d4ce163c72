"""Collection rules for the whole repository (the tests' fixtures are in tests/conftest.py).

The Flower runtime (``fedclust.runtime.flower``) is an optional extra: without ``flwr`` its
module cannot be imported, so the doctest collection of ``src/`` leaves it out
(``tests/test_flower.py`` skips itself, saying so).
"""

try:
    import flwr  # noqa: F401
except ModuleNotFoundError:
    collect_ignore = ["src/fedclust/runtime/flower.py"]

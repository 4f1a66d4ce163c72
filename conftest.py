"""Collection rules for the whole repository (the tests' fixtures are in tests/conftest.py).

The Flower runtime (``fedclust.runtime.flower``) is an optional extra: without ``flwr`` its
package cannot be imported, so the doctest collection of ``src/`` leaves it out
(``tests/test_flower.py`` skips itself, saying so). ``find_spec`` looks without importing.
"""

from importlib.util import find_spec

if find_spec("flwr") is None:
    collect_ignore = ["src/fedclust/runtime/flower"]

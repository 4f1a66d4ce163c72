"""``python -m fedclust.runtime.flower``: see :mod:`fedclust.runtime.flower.cli`."""

import sys

from .cli import main

sys.exit(main())

"""Processed arrays cached as HDF5 under ``data/``, written atomically.

A cache file holds named arrays plus scalar/string attributes (e.g. the source files'
checksums and the preprocessing parameters), so a stale cache can be recognised.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from ..io import atomic_path

__all__ = ["write_h5", "read_h5"]


def write_h5(path, arrays: dict[str, np.ndarray], attrs: dict | None = None) -> Path:
    """Write ``arrays`` (and ``attrs``) to the HDF5 file ``path`` atomically, with its sha256
    in a sidecar (:func:`fedclust.io.atomic_path`: a damaged cache is found before it is read).

    String arrays are stored as UTF-8 variable-length strings.
    """
    path = Path(path)
    with atomic_path(path, sidecar=True) as tmp:
        with h5py.File(tmp, "w") as fh:
            for name, value in arrays.items():
                value = np.asarray(value)
                if value.dtype.kind in "UO":
                    fh.create_dataset(name, data=value.astype(object),
                                      dtype=h5py.string_dtype("utf-8"))
                else:
                    fh.create_dataset(name, data=value, compression="gzip", compression_opts=4,
                                      shuffle=True)
            for key, value in (attrs or {}).items():
                fh.attrs[key] = value
    return path


def read_h5(path, names=None):
    """Read arrays (all, or ``names``) and the attributes of an HDF5 cache file.

    Returns
    -------
    arrays : dict of str -> ndarray
    attrs : dict
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"cache file missing: {path}")
    try:
        fh = h5py.File(path, "r")
    except OSError as error:  # h5py's message names no file
        raise OSError(f"{path} is damaged ({error}): remove it and run again to rebuild it") \
            from None
    with fh:
        keys = list(fh.keys()) if names is None else list(names)
        missing = [k for k in keys if k not in fh]
        if missing:
            raise KeyError(f"{path}: no dataset(s) {missing}; has {list(fh.keys())}")
        arrays = {}
        for key in keys:
            ds = fh[key]
            if h5py.check_string_dtype(ds.dtype) is not None:
                arrays[key] = np.array([s.decode("utf-8") if isinstance(s, bytes) else s
                                        for s in ds[()]])
            else:
                arrays[key] = ds[()]
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in fh.attrs.items()}
    return arrays, attrs

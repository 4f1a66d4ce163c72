"""Parameter and input validation shared by every estimator.

Errors name the argument that is wrong, so that a bad value coming from a config file can be
traced back to its key.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "check_data",
    "check_devices",
    "check_sample_weight",
    "check_n_clusters",
    "check_distinct_points",
    "fit_rng",
    "check_int",
    "check_fraction",
    "check_real",
    "check_choice",
    "check_random_state",
]


def check_data(X, *, name: str = "X", min_samples: int = 1,
               finite: bool = True) -> np.ndarray:
    """Return ``X`` as a C-contiguous 2-D float array, or raise a ``ValueError`` naming it.

    float32 input stays float32; every other numeric type becomes float64. ``finite=False``
    leaves the NaN/inf check to the caller (:func:`check_finite`), e.g. to a pass over the
    data it makes anyway.
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape (n_samples, n_features); "
                         f"got {X.ndim}-D")
    if not np.issubdtype(X.dtype, np.number):
        raise ValueError(f"{name} must be numeric; got dtype {X.dtype}")
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    X = np.ascontiguousarray(X, dtype=dtype)
    if X.shape[0] < min_samples:
        raise ValueError(f"{name} has {X.shape[0]} samples; at least {min_samples} are needed")
    if X.shape[1] < 1:
        raise ValueError(f"{name} has no features")
    if finite:
        check_finite(X, name=name)
    return X


def check_finite(X: np.ndarray, *, name: str = "X", total: float | None = None) -> None:
    """Raise a ``ValueError`` naming ``X`` if it holds a NaN or an infinity.

    The sum (``total``, when the caller has it) is finite for almost all data and needs no
    ``n x d`` temporary; only when it is not (a NaN or inf, or an overflow of finite values)
    are the entries checked one by one.
    """
    if total is None:
        with np.errstate(over="ignore", invalid="ignore"):
            total = X.sum()
    if not np.isfinite(total) and not np.isfinite(X).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    _check_scale(X, name)


def _check_scale(X: np.ndarray, name: str) -> None:
    """Raise a ``ValueError`` naming ``X`` when its squared distances could overflow.

    Every k-means cost below is a sum of squared distances, each at most twice the sum of two
    squared norms; while ``4 n`` times the total squared norm stays below the dtype's largest
    value, no cost a fit computes can overflow. Data close to that limit (entries near 1e150
    in float64, 1e12 in float32) fail here, naming the remedy, instead of as NaN deep inside
    a fit.
    """
    if X.size == 0:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        squares = float(np.vdot(X.ravel(), X.ravel()))
    limit = float(np.finfo(X.dtype).max) / (4.0 * X.shape[0])
    if not squares < limit:
        largest = float(np.abs(X).max())
        raise ValueError(
            f"{name} holds values up to {largest:.3g}, too large for k-means in {X.dtype}: "
            f"its squared distances would overflow; rescale {name} (e.g. with "
            f"sklearn.preprocessing.StandardScaler)")


def check_devices(devices, n_samples: int, *, name: str = "devices") -> np.ndarray:
    """Return the per-row device ids as a 1-D array of length ``n_samples``: integers (int64;
    whole floats become integers) or strings (federated data sets usually name their
    clients), any values of one type that sort."""
    devices = np.asarray(devices)
    if devices.ndim != 1 or devices.shape[0] != n_samples:
        raise ValueError(
            f"{name} must be a 1-D array with one device id per row of X ({n_samples}); "
            f"got shape {devices.shape}"
        )
    if devices.dtype.kind in "USO":  # strings, or objects that must sort among themselves
        try:
            np.unique(devices)
        except TypeError:
            kinds = sorted({type(v).__name__ for v in devices.tolist()})
            raise ValueError(f"{name} must be ids of one sortable type (integers or strings); "
                             f"got {', '.join(kinds)}") from None
        return devices
    if not np.issubdtype(devices.dtype, np.integer) or devices.dtype == bool:
        if np.issubdtype(devices.dtype, np.floating) and np.all(devices == np.round(devices)):
            devices = devices.astype(np.int64)
        else:
            raise ValueError(f"{name} must hold integer or string device ids; got dtype "
                             f"{devices.dtype}")
    return devices.astype(np.int64, copy=False)


def check_sample_weight(sample_weight, n_samples: int, *, allow_negative: bool = False,
                        dtype=np.float64, name: str = "sample_weight") -> np.ndarray | None:
    """Per-row weights as a 1-D float array of length ``n_samples`` (None stays None).

    Weights must be finite; negative weights are refused unless ``allow_negative`` (the
    weighted solver of a coreset accepts them, see docs/algorithms.md). At least one weight
    must be positive.
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight)
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(f"{name} must be a 1-D array with one weight per row of X "
                         f"({n_samples}); got shape {w.shape}")
    if not np.issubdtype(w.dtype, np.number) or np.issubdtype(w.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real numbers; got dtype {w.dtype}")
    w = np.ascontiguousarray(w, dtype=dtype)
    if not np.isfinite(w).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    if not allow_negative and (w < 0).any():
        raise ValueError(f"{name} must be non-negative; {int((w < 0).sum())} weights are "
                         f"negative (min {w.min():g})")
    if not (w > 0).any():
        raise ValueError(f"{name} has no positive weight")
    return w


def check_n_clusters(n_clusters, n_samples: int, *, name: str = "n_clusters") -> int:
    """``n_clusters`` as an int in ``[1, n_samples]``, the error naming both numbers."""
    n_clusters = check_int(n_clusters, name, low=1)
    if n_clusters > n_samples:
        raise ValueError(f"{name}={n_clusters} exceeds the number of samples ({n_samples}): "
                         f"every cluster needs at least one point")
    return n_clusters


def _distinct_rows(X: np.ndarray, cap: int) -> int:
    """How many distinct rows ``X`` has, counted up to ``cap`` (one vectorized comparison of
    every row per distinct row found)."""
    if len(X) == 0:
        return 0
    found, unmatched = 1, np.any(X != X[0], axis=1)
    while found < cap and unmatched.any():
        row = X[np.argmax(unmatched)]
        unmatched &= np.any(X != row, axis=1)
        found += 1
    return found


def check_distinct_points(X: np.ndarray, n_clusters: int, sample_weight=None) -> bool:
    """Warn (scikit-learn's ``ConvergenceWarning``, as ``KMeans`` does) when ``X`` (its rows of
    positive weight) holds fewer than ``n_clusters`` distinct points: some of the ``k``
    centres found are then duplicates, or clusters without a row. Returns whether it warned.

    Most data show ``n_clusters`` distinct rows among their first few rows, so the full scan
    runs only on data with many repeated rows.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    if sample_weight is not None:
        X = X[sample_weight > 0]
    head = X[:8 * n_clusters]
    if _distinct_rows(head, n_clusters) >= n_clusters:
        return False
    found = _distinct_rows(X, n_clusters)
    if found < n_clusters:
        warnings.warn(
            f"Number of distinct clusters ({found}) found smaller than n_clusters "
            f"({n_clusters}). Possibly due to duplicate points in X (the data hold only "
            f"{found} distinct point(s) of positive weight).", ConvergenceWarning, stacklevel=3)
    return found < n_clusters


def check_int(value, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int in ``[low, high]``, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {value!r}")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}; got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}; got {value}")
    return value


def check_real(value, name: str, *, low: float | None = None, high: float | None = None,
               low_inclusive: bool = True) -> float:
    """Return ``value`` as a float in the given range, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}")
    if low is not None and (value < low or (not low_inclusive and value == low)):
        bound = ">=" if low_inclusive else ">"
        raise ValueError(f"{name} must be {bound} {low}; got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}; got {value}")
    return value


def check_fraction(value, name: str) -> float:
    """Return ``value`` as a float in ``(0, 1]``."""
    return check_real(value, name, low=0.0, high=1.0, low_inclusive=False)


def check_choice(value, name: str, choices) -> str:
    """Return ``value`` if it is one of ``choices``, else raise listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}; got {value!r}")
    return value


def fit_rng(random_state) -> np.random.Generator:
    """The generator one ``fit`` draws from, leaving the caller's generator untouched.

    An int, a ``SeedSequence`` or None seeds a new generator; a ``Generator`` is copied (same
    state), so fitting twice with the same generator gives the same result, as with an int,
    and the caller's stream does not advance; a legacy ``RandomState`` (as scikit-learn
    accepts) seeds a new generator from a copy of it, leaving it untouched too.
    """
    if isinstance(random_state, np.random.Generator):
        bit_generator = type(random_state.bit_generator)()
        bit_generator.state = random_state.bit_generator.state
        return np.random.Generator(bit_generator)
    if isinstance(random_state, np.random.RandomState):
        # scikit-learn's legacy generator: a copy of it draws the new generator's seed
        copy = np.random.RandomState()
        copy.set_state(random_state.get_state())
        return np.random.default_rng(copy.randint(0, 2**32, size=4, dtype=np.uint64))
    return check_random_state(random_state)


def check_random_state(seed) -> np.random.Generator:
    """Turn ``seed`` (None, int, SeedSequence or Generator) into a ``numpy.random.Generator``."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(seed)
    raise TypeError(f"random_state must be None, an int or a numpy Generator; got {seed!r}")

"""The top singular subspace of every device's data, all devices in one compiled call (k-FED's
Algorithm 1, step 1): :func:`top_subspaces_by_device` runs, in parallel on all cores (numba), an
exact eigendecomposition or a randomized subspace iteration of each device's small Gram matrix.
How, and why not one randomized SVD per device: docs/algorithms.md, *k-FED*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import get_cython_function_address, intrinsic

from ._jit import njit, prange
from ._validation import check_random_state
from .federation import Federation
from .lloyd import _DIRECT_MAX_K, _direct_dots, _single_threaded_blas

__all__ = ["DeviceSubspaces", "gaussian_start", "top_subspaces_by_device"]

# Gram matrices up to this size are diagonalized exactly (eigh is then cheaper than iterating)
_EXACT_DIM = 64


@intrinsic
def _call_syrk(typingctx, fn, chars, ints, scalars, A, C):
    """Call the Fortran ``?syrk`` at address ``fn``: ``uplo, trans`` are ``chars[0:2]``,
    ``n, k, lda, ldc`` are ``ints[0:4]``, ``alpha, beta`` are ``scalars[0:2]``. The arrays
    themselves are the arguments (not their addresses), so they stay alive through the call;
    the address is a run-time argument, so the compiled kernel stays cacheable."""
    sig = types.void(fn, chars, ints, scalars, A, C)

    def codegen(context, builder, signature, args):
        ptr = ir.IntType(8).as_pointer()

        def data(position, index=0):
            ary = context.make_array(signature.args[position])(context, builder,
                                                                 value=args[position])
            element = builder.gep(ary.data, [ir.Constant(ir.IntType(64), index)])
            return builder.bitcast(element, ptr)

        fnty = ir.FunctionType(ir.VoidType(), [ptr] * 10)
        target = builder.inttoptr(args[0], fnty.as_pointer())
        builder.call(target, [data(1, 0), data(1, 1), data(2, 0), data(2, 1), data(3, 0),
                              data(4), data(2, 2), data(3, 1), data(5), data(2, 3)])

    return sig, codegen


@njit(cache=True)
def _gram(A, dual, dsyrk):  # pragma: no cover (compiled)
    """``A^T A`` (or ``A A^T`` when ``dual``) of the C-contiguous ``A``, by one BLAS ``dsyrk``
    (half the flops of a GEMM) and a mirror of the triangle it fills."""
    m, d = A.shape
    size = m if dual else d
    M = np.empty((size, size))
    # row-major A is the Fortran d x m matrix A^T: A^T A = F F^T ("N"), A A^T = F^T F ("T")
    chars = np.array([ord("U"), ord("T") if dual else ord("N")], dtype=np.uint8)
    ints = np.array([size, d if dual else m, d, size], dtype=np.int32)
    scalars = np.array([1.0, 0.0])
    _call_syrk(dsyrk, chars, ints, scalars, A, M)
    # Fortran's upper triangle is row-major's lower one
    for i in range(size):
        for j in range(i + 1, size):
            M[i, j] = M[j, i]
    return M


@njit(cache=True)
def _top_eigvecs(M, r):  # pragma: no cover (compiled)
    """The ``r`` leading eigenvectors of the symmetric ``M``, largest eigenvalue first."""
    _, vecs = np.linalg.eigh(M)
    m = M.shape[0]
    out = np.empty((m, r))
    for j in range(r):
        out[:, j] = vecs[:, m - 1 - j]
    return out


@njit(parallel=True, cache=True)
def _subspace_kernel(X, sqrt_w, weighted, offsets, ranks, omega, n_power_iter, exact_dim, dsyrk,
                     direct_max, V, X_hat):  # pragma: no cover (compiled; wrapper tested)
    d = X.shape[1]
    for z in prange(len(offsets) - 1):
        s, e, r = offsets[z], offsets[z + 1], ranks[z]
        if r == 0 or e == s:
            continue
        if r >= d:
            # the subspace is the whole space: no projection
            for j in range(d):
                V[z, j, j] = 1.0
            X_hat[s:e, :d] = X[s:e]
            continue
        rows = np.asarray(X[s:e], dtype=np.float64)  # a view unless X is float32
        A = rows * sqrt_w[s:e].reshape(-1, 1) if weighted else rows
        At = A.T  # F-contiguous: BLAS reads it transposed, no copy
        dual = e - s < d
        M = _gram(A, dual, dsyrk)
        m = M.shape[0]
        r_eff = min(r, m)
        width = min(r_eff + omega.shape[1] - ranks.max(), m)
        if m <= exact_dim or width >= m:
            U = _top_eigvecs(M, r_eff)
        else:
            start = np.ascontiguousarray(omega[:, :width])
            Q = np.dot(A, start) if dual else start
            Q = np.ascontiguousarray(np.linalg.qr(np.dot(M, Q))[0])
            # scikit-learn's randomized_svd "auto": 7 power steps for a rank below a tenth
            # of the matrix's smaller side, else 4. Two steps share one QR (scikit-learn
            # normalizes by LU instead): between QRs a direction of eigenvalue lambda_j keeps a
            # relative accuracy of about eps * (lambda_1 / lambda_j)^2, 1e-8 even at a ratio
            # of 1e4 among the kept directions
            steps = n_power_iter if n_power_iter >= 0 else (7 if r < 0.1 * min(e - s, d) else 4)
            for step in range(steps):
                Q = np.dot(M, Q)
                if step % 2 == 1 or step == steps - 1:
                    Q = np.ascontiguousarray(np.linalg.qr(Q)[0])
            ritz = _top_eigvecs(np.dot(np.ascontiguousarray(Q.T), np.dot(M, Q)), r_eff)
            U = np.dot(Q, ritz)
        if dual:
            Vz = np.dot(At, U)
            for j in range(r_eff):
                norm = np.sqrt(np.sum(Vz[:, j] ** 2))
                if norm > 0.0:
                    Vz[:, j] /= norm
        else:
            Vz = U
        V[z, :, :r_eff] = Vz
        if r_eff <= direct_max:  # a few columns: loops beat a skinny GEMM (see lloyd)
            X_hat[s:e, :r_eff] = _direct_dots(rows, 0, e - s, np.ascontiguousarray(Vz.T))
        else:
            X_hat[s:e, :r_eff] = np.dot(rows, Vz)


def _dsyrk_address() -> int:
    """Address of scipy's BLAS ``dsyrk`` (the BLAS numba's own ``np.dot`` calls)."""
    return get_cython_function_address("scipy.linalg.cython_blas", "dsyrk")


@dataclass
class DeviceSubspaces:
    """Every device's top singular subspace and its rows' coordinates in it.

    Attributes
    ----------
    bases : ndarray of shape (n_devices, d, width)
        Orthonormal columns spanning device ``z``'s subspace, zero-padded to ``width``
        columns (``width = min(d, max rank)``); the identity for a device whose rank is
        at least ``d``.
    projected : ndarray of shape (n_samples, width)
        ``X_z @ bases[z]`` for every row (sorted-row order): the coordinates in which
        distances within the subspace are measured.
    """

    bases: np.ndarray
    projected: np.ndarray


def gaussian_start(n_features: int, ranks, random_state=None, *,
                   oversample: int = 10) -> np.ndarray:
    """The shared Gaussian start of :func:`top_subspaces_by_device`'s subspace iteration,
    drawn as that function draws it: ``(n_features, max(ranks) + oversample)`` standard
    normals. Drawn apart, it lets a device that holds only its own rows (a real deployment)
    use the start the whole federation's call would have drawn."""
    rng = check_random_state(random_state)
    return rng.standard_normal((n_features, int(np.max(ranks)) + oversample))


def top_subspaces_by_device(federation: Federation, ranks, *, weights=None, random_state=None,
                            oversample: int = 10, n_power_iter: int = -1,
                            start: np.ndarray | None = None) -> DeviceSubspaces:
    """Top-``ranks[z]`` right singular subspace of every device's data matrix.

    Parameters
    ----------
    federation : Federation
    ranks : int or ndarray of shape (n_devices,)
        Dimension of each device's subspace; 0 leaves a device out (zeros).
    weights : ndarray of shape (n_samples,), optional
        Row weights (sorted-row order): the subspace of the rows scaled by ``sqrt(w)``,
        the weighted second-moment subspace. Negative weights count as 0.
    random_state : int, Generator or None
        Draws the shared Gaussian start of the subspace iteration.
    oversample, n_power_iter : int
        Extra columns and power steps of the subspace iteration; ``n_power_iter=-1`` chooses
        as scikit-learn's ``randomized_svd`` does (7 when the rank is below a tenth of the
        device matrix's smaller side, else 4).
    start : ndarray of shape (n_features, max(ranks) + oversample), optional
        The Gaussian start (:func:`gaussian_start`) instead of a new draw: ``random_state``
        and ``oversample`` are then unused (the columns beyond ``max(ranks)`` are the
        oversampling).

    Returns
    -------
    DeviceSubspaces

    Examples
    --------
    >>> import numpy as np
    >>> from fedclust.federation import Federation
    >>> X = np.array([[3.0, 0.0], [-3.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    >>> fed = Federation.from_devices(X, [0, 0, 1, 1])
    >>> sub = top_subspaces_by_device(fed, 1)
    >>> np.abs(sub.bases[:, :, 0]).tolist()  # the x axis on device 0, the y axis on device 1
    [[1.0, 0.0], [0.0, 1.0]]
    """
    Z, d = federation.n_devices, federation.n_features
    ranks = np.broadcast_to(np.asarray(ranks, dtype=np.int64), (Z,)).copy()
    width = int(min(d, ranks.max())) if Z else 0
    omega = gaussian_start(d, ranks, random_state, oversample=oversample) if start is None \
        else np.asarray(start, dtype=np.float64)
    if omega.shape[0] != d or omega.shape[1] < ranks.max():
        raise ValueError(f"start must have shape ({d}, >= {int(ranks.max())}); got "
                         f"{omega.shape}")
    bases = np.zeros((Z, d, width))
    projected = np.zeros((federation.n_samples, width))
    sqrt_w = np.empty(0) if weights is None else np.sqrt(np.maximum(weights, 0.0))
    X = np.ascontiguousarray(federation.X)
    with _single_threaded_blas():
        _subspace_kernel(X, sqrt_w, weights is not None, federation.offsets, ranks, omega,
                         n_power_iter, _EXACT_DIM, _dsyrk_address(), _DIRECT_MAX_K, bases,
                         projected)
    return DeviceSubspaces(bases=bases, projected=projected)

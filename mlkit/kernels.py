"""The project's kernel helpers: the Gaussian kernel from BLAS and per-bag block reductions.

Every kernel method in mlkit computes ``k(x, z) = exp(-gamma ||x - z||^2)`` with
:func:`rbf_kernel` and aggregates instance-level matrices over bags with :func:`bag_reduce`
and :func:`set_kernel`. Bags follow the layout of
:class:`mlkit.datasets.MultiInstanceDataset`: one flat instance matrix and an ``offsets``
array of length ``n_bags + 1`` (bag ``b`` is rows ``offsets[b]:offsets[b + 1]``), so every
aggregation is one ``np.<ufunc>.reduceat`` call and never a Python loop over bags.

Work shared by the fits of a grid search: inside :func:`shared_work` (the grid search of
:mod:`mlkit.resumable_search` opens one per CV fold), a call with ``shared=True`` computes
the squared distances of a pair of matrices once and reuses them for every later call on
the same data, whatever gamma, C or other grid value the later fit has; derived quantities
that depend on gamma only (a set kernel) are kept by :func:`shared_result`. The values are the
ones an unshared call computes, bit for bit: a hit returns the stored distances, and the
kernel is formed from them by the same operations.
"""

import hashlib
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp

__all__ = ["squared_norms", "squared_distances", "rbf_kernel", "bag_reduce", "set_kernel",
           "dense_dot", "shared_work", "shared_result", "fingerprint", "active_work"]

_REDUCERS = {"sum": np.add, "max": np.maximum}


class SharedWork:
    """The store of one :func:`shared_work` scope: results by key, and the fingerprints of
    the arrays seen (by identity; each array is held, so its ``id`` is never reused while
    the scope lives)."""

    def __init__(self):
        self.results = {}
        self._fingerprints = {}
        self.hits = self.misses = 0

    def fingerprint(self, A):
        """:func:`fingerprint` of ``A``, computed once per array object in this scope."""
        if A is None:
            return None
        held = self._fingerprints.get(id(A))
        if held is None or held[0] is not A:
            held = self._fingerprints[id(A)] = (A, fingerprint(A))
        return held[1]

    def hold(self, A):
        """Keep ``A`` for this scope; returns the key that :meth:`held` takes."""
        key = ("held", self.fingerprint(A))
        self.results.setdefault(key, A)
        return key

    def held(self, key):
        """The array kept under ``key`` by :meth:`hold`, or None."""
        return self.results.get(key)

    def get(self, key, compute):
        """The result stored under ``key``, else ``compute()`` stored read-only."""
        value = self.results.get(key)
        if value is None:
            self.misses += 1
            value = compute()
            for part in value if isinstance(value, tuple) else (value,):
                if isinstance(part, np.ndarray):
                    part.setflags(write=False)
            self.results[key] = value
        else:
            self.hits += 1
        return value


_ACTIVE = []


@contextmanager
def shared_work():
    """A scope in which ``shared=True`` kernel calls and :func:`shared_result` reuse their results
    (e.g. one CV fold of a grid search: every grid point fits on the same rows). Scopes
    nest; the innermost is used. Everything it holds is released at exit.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(5, 3))
    >>> with shared_work() as work:
    ...     K1 = rbf_kernel(X, gamma=0.1, shared=True)
    ...     K2 = rbf_kernel(X, gamma=1.0, shared=True)     # the distances are reused
    >>> work.hits, work.misses, bool(np.array_equal(K2, rbf_kernel(X, gamma=1.0)))
    (1, 1, True)
    """
    work = SharedWork()
    _ACTIVE.append(work)
    try:
        yield work
    finally:
        _ACTIVE.remove(work)
        work.results.clear()
        work._fingerprints.clear()


def active_work():
    """The innermost :func:`shared_work` scope, or None outside any."""
    return _ACTIVE[-1] if _ACTIVE else None


def fingerprint(A):
    """A digest of the values of a dense array or scipy.sparse matrix (its shape, dtype and
    bytes; of a sparse matrix, its CSR arrays), for keying shared results by content."""
    h = hashlib.blake2b(digest_size=16)
    if sp.issparse(A):
        A = A.tocsr()
        h.update(b"csr")
        parts = (A.data, A.indices, A.indptr)
    else:
        parts = (np.asarray(A),)
    for part in parts:
        part = np.ascontiguousarray(part)
        h.update(f"{part.shape}{part.dtype.str}".encode())
        h.update(part.view(np.uint8).ravel() if part.size else b"")
    return h.hexdigest()


def shared_result(tag, compute, *parts):
    """``compute()``, computed once per :func:`shared_work` scope for the same ``tag`` and
    ``parts`` (arrays, by content, and plain values such as gamma); outside a scope simply
    ``compute()``. The result is read-only inside a scope."""
    work = active_work()
    if work is None:
        return compute()
    key = (tag,) + tuple(work.fingerprint(p) if isinstance(p, np.ndarray) or sp.issparse(p)
                         else p for p in parts)
    return work.get(key, compute)


def _as_dtype(A, dtype):
    """``A`` (dense or sparse) in floating ``dtype``, without a copy when it already is."""
    if sp.issparse(A):
        return A if A.dtype == dtype else A.astype(dtype)
    return np.asarray(A, dtype=dtype)


def dense_dot(A, B, *, dtype=float):
    """``A @ B`` as a dense ndarray of ``dtype`` (default float64), for any mix of dense and
    scipy.sparse operands."""
    R = A @ B
    return R.toarray() if sp.issparse(R) else np.asarray(R, dtype=dtype)


def squared_norms(X, *, dtype=float):
    """||x||^2 of every row of a dense array or scipy.sparse matrix, shape (n,)."""
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=dtype).ravel()
    return np.einsum("ij,ij->i", X, X)


def squared_distances(X, Z=None, *, X_norms=None, Z_norms=None, dtype=None):
    """||x - z||^2 for every pair of rows, as ||x||^2 + ||z||^2 - 2 x.z (one BLAS product).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
    Z : {ndarray, sparse matrix} of shape (m, d), default=None
        None means ``Z = X``; the diagonal is then exactly zero.
    X_norms, Z_norms : ndarray of shape (n,) and (m,), default=None
        Precomputed :func:`squared_norms` of X and Z, for repeated calls with the same rows.
    dtype : {None, numpy.float64, numpy.float32}, default=None
        Precision of the computation. None (the default) is float64 for every input, as
        before; ``np.float32`` casts X and Z (a no-op when they already are float32) and
        returns float32, about twice as fast in BLAS and memory for ~1e-7 relative rounding.

    Returns
    -------
    D : ndarray of shape (n, m)
        Clipped at 0 (rounding can make the expansion slightly negative). Sparse inputs are
        never densified; only the (n, m) result is dense.
    """
    same = Z is None
    dtype = np.dtype(float if dtype is None else dtype)
    if dtype != np.float64:
        X = _as_dtype(X, dtype)
        Z = X if same else _as_dtype(Z, dtype)
    Z = X if same else Z
    D = dense_dot(X, Z.T, dtype=dtype)
    D *= -2.0
    D += (squared_norms(X, dtype=dtype) if X_norms is None else X_norms)[:, None]
    D += (squared_norms(Z, dtype=dtype) if Z_norms is None else Z_norms)[None, :]
    np.maximum(D, 0.0, out=D)
    if same:
        np.fill_diagonal(D, 0.0)
    return D


def rbf_kernel(X, Z=None, gamma=1.0, *, X_norms=None, Z_norms=None, dtype=None,
               shared=False, columns=None):
    """Gaussian kernel matrix ``K[i, j] = exp(-gamma ||x_i - z_j||^2)``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
    Z : {ndarray, sparse matrix} of shape (m, d), default=None
        None means ``Z = X`` (then the diagonal is exactly 1).
    gamma : float, default=1.0
    X_norms, Z_norms : ndarray, default=None
        Precomputed squared row norms (see :func:`squared_distances`).
    dtype : {None, numpy.float64, numpy.float32}, default=None
        Precision (see :func:`squared_distances`); None is float64.
    shared : bool, default=False
        Inside :func:`shared_work`, take the squared distances of (X, Z) from the scope,
        computing them only on its first call with these values (the same numbers). For the
        calls that repeat across a grid search's fits on one fold, not for ones whose Z
        changes every call.
    columns : ndarray of int, default=None
        Only these rows of Z (the kernel against ``Z[columns]``). With ``shared=True`` in a
        scope, the columns are taken from the scope's distances to all of Z (e.g. the XVs of
        a model, which are rows of its fold's training instances: one distance computation
        per fold for every grid point's model).

    Returns
    -------
    K : ndarray of shape (n, m)

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.kernels import rbf_kernel
    >>> rbf_kernel(np.array([[0.0, 0.0], [1.0, 0.0]]), gamma=0.5).round(4).tolist()
    [[1.0, 0.6065], [0.6065, 1.0]]
    """
    if shared and active_work() is not None:
        D = shared_result("squared_distances", lambda: squared_distances(
            X, Z, X_norms=X_norms, Z_norms=Z_norms, dtype=dtype), X, Z, np.dtype(
            float if dtype is None else dtype).str)
        if columns is not None:
            D = D[:, columns]
        K = D * D.dtype.type(-gamma)            # the unshared path's values, in a new array
    else:
        if columns is not None:
            Z = (X if Z is None else Z)[columns]
            Z_norms = None if Z_norms is None else Z_norms[columns]
        K = squared_distances(X, Z, X_norms=X_norms, Z_norms=Z_norms, dtype=dtype)
        K *= K.dtype.type(-gamma)
    return np.exp(K, out=K)


def bag_reduce(A, offsets, how="sum", axis=0):
    """Sum, mean or max of ``A`` over the rows (or columns) of every bag.

    Parameters
    ----------
    A : ndarray
        Instance-level values along ``axis`` (e.g. a kernel matrix or instance scores).
    offsets : ndarray of int, shape (n_bags + 1,)
        Bag boundaries: ``offsets[0] == 0``, ``offsets[-1] == A.shape[axis]``, and every bag
        non-empty (``np.ufunc.reduceat`` would otherwise return a row instead of an empty
        reduction).
    how : {"sum", "mean", "max"}, default="sum"
    axis : int, default=0

    Returns
    -------
    ndarray
        ``A`` with ``axis`` reduced from n_instances to n_bags.
    """
    if how == "mean":
        sizes = np.diff(offsets).astype(float)
        shape = [1] * np.ndim(A)
        shape[axis] = -1
        return np.add.reduceat(A, offsets[:-1], axis=axis) / sizes.reshape(shape)
    return _REDUCERS[how].reduceat(A, offsets[:-1], axis=axis)


def bag_mean_matrix(offsets):
    """The bags' averaging operator S as a CSR matrix of shape (n_bags, n_instances),
    ``S[i, p] = 1 / n_i`` for the instances p of bag i, so that ``S @ A`` is
    ``bag_reduce(A, offsets, "mean")`` (to rounding: it sums each bag's rows times 1/n_i,
    where :func:`bag_reduce` divides their sum). For a loop that takes the bag means of many
    (n_instances, m) matrices: a sparse product is several times faster than ``reduceat``
    along rows."""
    offsets = np.asarray(offsets)
    sizes = np.diff(offsets)
    n = int(offsets[-1])
    return sp.csr_matrix((np.repeat(1.0 / sizes, sizes), np.arange(n), offsets),
                         shape=(len(sizes), n))


def set_kernel(K, offsets_rows, offsets_cols):
    """Normalised set kernel from an instance kernel matrix (label-mean / MI-Kernel).

    .. math:: K(X, X') = \\frac{1}{n\\,n'} \\sum_{p=1}^{n} \\sum_{q=1}^{n'} k(x_p, x'_q)

    the averaged set kernel of Gärtner et al. (2002) that Fu et al. (2013) show is the
    kernel of the label-mean formulation, Eq. (2)-(3) of [1]_.

    Parameters
    ----------
    K : ndarray of shape (N, N')
        Instance kernel between the instances of two bag collections.
    offsets_rows : ndarray of int, shape (n_bags + 1,)
        Bag boundaries of the rows of ``K``.
    offsets_cols : ndarray of int, shape (n_bags' + 1,)
        Bag boundaries of the columns of ``K``.

    Returns
    -------
    ndarray of shape (n_bags, n_bags')

    References
    ----------
    .. [1] Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for
       multi-instance classification. IEEE TNNLS 24(9):1377-1389, 2013.
    """
    return bag_reduce(bag_reduce(K, offsets_rows, "mean", axis=0), offsets_cols, "mean", axis=1)

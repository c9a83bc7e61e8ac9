"""In-process memos of learned models, shared by the runs of one worker.

The runner gives the runs of one dataset and split whose estimators declare the same
``learning_family`` to one worker, one after the other (:mod:`mlkit.runner.contract`). A memo
here lets a later run take what an earlier one learned on the same rows with the same
parameters instead of learning it again: a hit gives exactly the values a refit would
compute (the learning is deterministic given its inputs and ``random_state``), so a memo
never changes a number, only the time.

:class:`Memo` is a least-recently-used store bounded by the bytes of its arrays;
:func:`memoized_fit` memoises a whole ``fit`` by the estimator's parameters and the bytes of
its training data.
"""

import copy
import warnings
from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

from ..kernels import fingerprint

__all__ = ["Memo", "FITTED", "memoized_fit", "fitted_attributes", "nbytes"]


def nbytes(value):
    """The bytes of the arrays in ``value`` (nested lists, tuples and dicts followed)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if sp.issparse(value):
        return sum(getattr(value, a).nbytes for a in ("data", "indices", "indptr", "row", "col")
                   if hasattr(value, a))
    if hasattr(value, "nbytes"):                # an object that counts its own arrays
        return int(value.nbytes)
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v) for v in value)
    return 0


class Memo:
    """A least-recently-used memo bounded by ``max_bytes`` of held arrays (and by ``size``
    entries, when given); the oldest entries go first."""

    def __init__(self, max_bytes=256 * 2**20, size=None):
        self.max_bytes, self.size = max_bytes, size
        self._store, self._bytes, self.held_bytes = OrderedDict(), {}, 0
        self.hits = self.misses = 0

    def get(self, key):
        value = self._store.get(key)
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        self._store.move_to_end(key)
        return value

    def put(self, key, value):
        if key in self._store:
            self.held_bytes -= self._bytes.pop(key)
            del self._store[key]
        size = nbytes(value)
        if size > self.max_bytes:
            return                              # larger than the whole memo: not kept
        self._store[key], self._bytes[key] = value, size
        self.held_bytes += size
        while self.held_bytes > self.max_bytes or (
                self.size is not None and len(self._store) > self.size):
            old, _ = self._store.popitem(last=False)
            self.held_bytes -= self._bytes.pop(old)

    def clear(self):
        self._store.clear()
        self._bytes.clear()
        self.held_bytes = 0
        self.hits = self.misses = 0

    def __len__(self):
        return len(self._store)


#: The fitted attributes of whole fits (:func:`memoized_fit`), per worker process.
FITTED = Memo()


def fitted_attributes(est):
    """The fitted attributes of ``est``: scikit-learn's trailing-underscore names, and the
    private ones its class lists in ``_memo_attributes`` (state a fit leaves for later
    methods, e.g. SparseMI's per-iteration models)."""
    extra = getattr(est, "_memo_attributes", ())
    return {k: v for k, v in vars(est).items()
            if (k.endswith("_") and not k.startswith("_")) or k in extra}


def _reproducible(params):
    """Whether a fit with these parameters repeats exactly: an integer (or absent)
    ``random_state``, never None or a RandomState whose state moves."""
    return "random_state" not in params or isinstance(params["random_state"],
                                                      (int, np.integer))


def _content(part):
    """A key part for ``part``: the digest of an array's values (the repr of an object
    array's, whose bytes are pointers), a tuple of those of a list holding arrays, the
    repr of another list, tuple, dict or set, the value itself otherwise."""
    if isinstance(part, (list, tuple)) and any(isinstance(p, np.ndarray) for p in part):
        return tuple(_content(p) for p in part)
    if isinstance(part, np.ndarray) and part.dtype == object:
        return repr(part.tolist())
    if isinstance(part, np.ndarray) or sp.issparse(part):
        return fingerprint(part)
    if isinstance(part, (list, tuple, dict, set)):
        return repr(part)                       # plain values: their repr is complete
    return part


def memoized_fit(est, data, fit):
    """``fit()`` unless :data:`FITTED` holds a fit of the same estimator class, parameters
    and training ``data`` (arrays, sparse matrices or plain values, keyed by content); either
    way ``est`` ends with the fitted attributes. Returns ``est``.

    A fit whose ``random_state`` is None or a RandomState is never memoised."""
    params = est.get_params(deep=False)
    if not _reproducible(params):
        return fit()
    key = (type(est).__qualname__, tuple((k, _content(v)) for k, v in sorted(params.items())),
           tuple(_content(p) for p in data))
    hit = FITTED.get(key)
    if hit is not None:
        attributes, caught = hit
        for name, value in copy.deepcopy(attributes).items():
            setattr(est, name, value)
    else:
        # the fit's warnings are kept with it and given again on every hit
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit()
        caught = [(w.category, str(w.message)) for w in caught]
        FITTED.put(key, (copy.deepcopy(fitted_attributes(est)), caught))
    for category, message in caught:
        warnings.warn(message, category, stacklevel=3)
    return est

"""The one grid search of mlkit: scikit-learn's ``GridSearchCV`` that resumes, used for every
grid a config gives (its folds from :func:`mlkit.runner.splits.cv_splitter`, its choice
``GridSearchCV``'s or a ``refit`` rule of :mod:`mlkit.grid_rules`), and the validation-part
search of the ``labelled`` protocol.

Resuming
--------
A run of the runner that chooses its parameters by CV (:func:`mlkit.runner.fit.
build_estimator`) may take hours (SparseMI on COREL-20: 25 grid cells x 3 folds of
minutes each). Stopped halfway, scikit-learn's ``GridSearchCV`` loses every fold it has
fitted. :class:`ResumableGridSearchCV` is that ``GridSearchCV`` with a ``checkpoint`` file:
after each (candidate, fold) fit it writes the fold's score there (atomically), and a later
fit of the same search reads them back and fits only the folds still missing, so an
interrupted run loses at most the fold that was being fitted.

Its numbers are ``GridSearchCV``'s to the bit (the same clones, the same
``_safe_split`` of the data, the same scorer, the mean over folds and the first best
candidate as its ``rank_test_score``), which ``tests/test_resumable_search.py`` checks.
"""

import json
import logging
import time

import numpy as np
import scipy.sparse as sp
from joblib import hash as joblib_hash
from scipy.stats import rankdata
from sklearn.base import clone, is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import GridSearchCV, ParameterGrid, check_cv
from sklearn.utils import indexable
from sklearn.utils.metaestimators import _safe_split

from .._errors import MlkitError
from .._io import read_json, write_json
from ..grid_rules import choose, fold_scores
from ..kernels import shared_work
from ..registry import METRICS
from . import contract
from .scoring import _jsonable, _model_description, _predict, _score

logger = logging.getLogger(__name__)

__all__ = ["ResumableGridSearchCV", "read_checkpoint", "CHECKPOINT_SUFFIX", "validation_search",
           "grid_scores", "capped_n_xv_grid"]

#: suffix of a run's checkpoint file beside its record (not ``.json``: never read as a record)
CHECKPOINT_SUFFIX = ".cv-checkpoint"

_FORMAT = 2


def _hashed(value):
    """joblib's hash of ``value`` (its value and type, however long: never a shortened
    repr); of its module and name when it cannot be pickled (a local function)."""
    try:
        return joblib_hash(value)
    except Exception:                   # pickling errors are of many types
        return joblib_hash((type(value).__module__,
                            getattr(value, "__qualname__", type(value).__qualname__)))


def _params_hash(params):
    return joblib_hash({name: _hashed(value) for name, value in params.items()})


def _cell_name(params, fold):
    """The checkpoint's name of one (candidate, fold): a hash of its parameters, and the
    fold."""
    return f"{_params_hash(params)}|{fold}"


def _by_value(data):
    """``data`` for hashing by value: sparse matrices as their arrays (their pickled state
    carries flags that scipy sets lazily), lists, tuples and dicts item by item."""
    if sp.issparse(data):
        csr = data.tocsr()
        return ("csr", csr.shape, csr.data, csr.indices, csr.indptr)
    if isinstance(data, (list, tuple)):
        return [_by_value(v) for v in data]
    if isinstance(data, dict):
        return {k: _by_value(v) for k, v in data.items()}
    return data


def read_checkpoint(path, key=None, identity=None):
    """The cells of the checkpoint file ``path`` ({name: {"score", "fit_s", "cpu_s",
    "params"}}): {} when it is missing, unreadable, malformed, of another format, or made
    under another ``checkpoint_key`` (``key``) or by another search (``identity``)."""
    try:
        stored = read_json(path)
        if (stored["format"] != _FORMAT or (key is not None and stored["key"] != key)
                or (identity is not None and stored["identity"] != identity)):
            return {}
        cells = stored["cells"]
        if all(isinstance(c[f], float) for c in cells.values()
               for f in ("score", "fit_s", "cpu_s")):
            return cells
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return {}


class _FoldScores:
    """The (candidate, fold) scores of one search, kept in the file ``path``."""

    def __init__(self, path, key, identity):
        self.path, self.key, self.identity = path, key, identity
        self.cells = read_checkpoint(path, key, identity)

    def add(self, name, params, score, fit_s, cpu_s):
        self.cells[name] = {"score": score, "fit_s": fit_s, "cpu_s": cpu_s,
                            "params": json.dumps(params, sort_keys=True, default=repr)}
        if self.path is None:
            return
        try:
            write_json(self.path, {"format": _FORMAT, "key": self.key,
                                   "identity": self.identity, "cells": self.cells})
        except OSError as exc:           # unwritable: the search goes on unsaved
            logger.warning("grid search checkpoint %s not written (%s); this run will not "
                           "resume from it", self.path, exc)
            self.path = None


def _fitted_cells(base, candidates, n_folds, part, *, post_params=(), skip=None):
    """Fit ``base`` with every candidate (a parameter dict) on every fold: the one loop of
    both searches of this module.

    ``part(est, k)`` gives fold ``k``'s ``((X_train, y_train), held_out)`` for the cell's
    estimator ``est`` (asked again for every cell fitted); ``held_out`` is handed back with
    the cell (the fold's test rows of a CV search; the validation part of a predefined
    split). The folds go one after the other, each inside one
    :func:`mlkit.kernels.shared_work` scope, and the candidates in order. With
    ``post_params`` (the estimator's ``post_fit_params`` in the grid:
    :mod:`mlkit.runner.contract`) the candidates that differ only in them share one fit:
    the group's estimator is fitted once with the other parameters, and every cell sets its
    post-fit parameters and calls ``refit_post`` (so a cell's estimator is valid until the
    next cell). ``skip(i, k)``: True for a cell not to fit (read back from a checkpoint).

    Yields ``(candidate index, fold index, fitted estimator, held_out, t0, c0)``: the
    wall and CPU clocks (``time.perf_counter``, ``time.process_time``) when the cell's
    fitting began (a shared fit counts for the first cell of its group).
    """
    post = set(post_params)
    for k in range(n_folds):
        # every grid point of a fold fits on the same rows, so what does not depend on a
        # grid value (distances, a kernel per gamma) is computed once per fold
        # (mlkit.kernels.shared_work) and released before the next fold
        with shared_work():
            est, fitted_as = None, None
            for i, params in enumerate(candidates):
                if skip is not None and skip(i, k):
                    continue
                heavy = {p: v for p, v in params.items() if p not in post}
                light = {p: v for p, v in params.items() if p in post}
                shared = bool(post) and est is not None and heavy == fitted_as
                if not shared:
                    est = clone(base).set_params(**clone(heavy, safe=False))
                (X_train, y_train), held_out = part(est, k)
                t0, c0 = time.perf_counter(), time.process_time()
                if not shared:
                    est.fit(X_train, y_train)
                    fitted_as = heavy
                if light:                 # only what follows the fit, redone
                    est.set_params(**light).refit_post(X_train, y_train)
                yield i, k, est, held_out, t0, c0


def rank_test_scores(means):
    """GridSearchCV's ``rank_test_score`` of the mean scores: 1 for the best, ties sharing
    the lowest rank, NaN ranked below the worst."""
    means = np.asarray(means, dtype=float)
    finite = np.nan_to_num(means, nan=np.nanmin(means) - 1) \
        if not np.isnan(means).all() else np.zeros_like(means)
    return rankdata(-finite, method="min").astype(np.int32, copy=False)


class ResumableGridSearchCV(GridSearchCV):
    """scikit-learn's ``GridSearchCV`` (one scorer, refit on all the data, folds fitted in
    this process) that keeps its fold scores in ``checkpoint`` and resumes from them.

    Parameters
    ----------
    estimator, param_grid, scoring, cv, error_score
        As ``GridSearchCV``'s (``scoring``: one scorer).
    checkpoint : path or None
        The file of fold scores; None: kept in memory only. The file is written after
        every fold fitted and left in place (the caller removes it once the run's result is
        saved).
    checkpoint_key : str
        What determines the scores beyond what the search sees (the runner's: the run's key,
        with the method's numerics revision, the data's fingerprint and the machine's
        compute kernels). A file made under another key, or by a search with another
        estimator (class or parameters), scorer, data or folds, is not reused; one whose
        grid changed keeps the folds of the grid points both grids hold (the same fits).

    The folds are fitted one after the other, every grid point of a fold inside one
    :func:`mlkit.kernels.shared_work` scope: what the estimators compute with ``shared=True``
    (distances between a fold's instances, a set kernel per gamma) is computed once per fold,
    not once per grid point, with the same numbers. Given fit parameters (``sample_weight``,
    ``groups``) or several scorers (a dict or list: ``GridSearchCV``'s multi-metric search)
    and no checkpoint, it is plain ``GridSearchCV``; with a checkpoint it takes neither. It ignores scikit-learn's callbacks; ``cv_results_`` holds the params, the fold,
    mean and std test scores, their rank and the mean fit time (fit and scoring of the cell;
    not the ``param_*`` columns or the score times).

    Attributes
    ----------
    ``GridSearchCV``'s, and
    n_resumed_ : int
        Fold fits read from the checkpoint instead of computed.
    resumed_fit_s_, resumed_cpu_s_ : float
        The fit seconds (wall, CPU) those fold fits took when they were computed.
    """

    def __init__(self, estimator, param_grid, *, scoring=None, cv=None, error_score="raise",
                 checkpoint=None, checkpoint_key="", refit=True):
        super().__init__(estimator, param_grid, scoring=scoring, cv=cv,
                         error_score=error_score, refit=refit)
        self.checkpoint = checkpoint
        self.checkpoint_key = checkpoint_key

    def fit(self, X, y=None, **params):
        several = isinstance(self.scoring, (dict, list, tuple))
        if self.checkpoint is None and (params or several):
            return super().fit(X, y, **params)
        if params:
            raise ValueError(f"ResumableGridSearchCV with a checkpoint takes no fit "
                             f"parameters; got {sorted(params)}")
        if self.error_score != "raise":
            raise ValueError("ResumableGridSearchCV with a checkpoint needs "
                             "error_score='raise'")
        if not (self.scoring is None or isinstance(self.scoring, str)
                or callable(self.scoring)):
            raise ValueError("ResumableGridSearchCV with a checkpoint takes one scorer "
                             "(a name or a callable), not a list or dict of them")
        X, y = indexable(X, y)
        cv = check_cv(self.cv, y, classifier=is_classifier(self.estimator))
        folds = list(cv.split(X, y))
        scorer = check_scoring(self.estimator, scoring=self.scoring)
        candidates = list(ParameterGrid(self.param_grid))
        base = clone(self.estimator)
        # what the fold scores depend on, besides the grid point: the estimator (class and
        # parameters, hashed by value, never by a shortened repr), scorer, data and folds
        identity = None if self.checkpoint is None else joblib_hash((
            type(base).__module__, type(base).__qualname__,
            _params_hash(base.get_params(deep=False)), _hashed(scorer), _by_value(X),
            _by_value(y), folds))
        store = _FoldScores(self.checkpoint, self.checkpoint_key, identity)

        scores = np.empty((len(candidates), len(folds)))
        fit_s = np.empty_like(scores)
        self.n_resumed_, self.resumed_fit_s_, self.resumed_cpu_s_ = 0, 0.0, 0.0

        def known(i, k):                  # a cell read back from the checkpoint
            cell = store.cells.get(_cell_name(candidates[i], k))
            if cell is not None:
                scores[i, k], fit_s[i, k] = cell["score"], cell["fit_s"]
                self.n_resumed_ += 1
                self.resumed_fit_s_ += cell["fit_s"]
                self.resumed_cpu_s_ += cell["cpu_s"]
            return cell is not None

        def part(est, k):                 # GridSearchCV's split of the data, per cell
            train, test = folds[k]
            return _safe_split(est, X, y, train), _safe_split(est, X, y, test, train)

        for i, k, est, (X_test, y_test), t0, c0 in _fitted_cells(
                base, candidates, len(folds), part, skip=known):
            scores[i, k] = scorer(est, X_test, y_test)
            # fit and score of the cell (its share of the fold's shared work included)
            fit_s[i, k], cpu_s = time.perf_counter() - t0, time.process_time() - c0
            store.add(_cell_name(candidates[i], k), candidates[i], float(scores[i, k]),
                      float(fit_s[i, k]), cpu_s)

        means = scores.mean(axis=1)
        # best_index_ is the rank's argmin: the first candidate of the top mean
        rank = rank_test_scores(means)
        self.cv_results_ = {
            "params": candidates,
            **{f"split{k}_test_score": scores[:, k] for k in range(len(folds))},
            "mean_test_score": means, "std_test_score": scores.std(axis=1),
            "rank_test_score": rank, "mean_fit_time": fit_s.mean(axis=1),
        }
        # refit=True (or False, no refit): GridSearchCV's choice; a callable (GridSearchCV's
        # refit contract): cv_results_ -> the chosen index (e.g. mlkit.grid_rules.refit_rule)
        self.best_index_ = int(self.refit(self.cv_results_)) if callable(self.refit) \
            else int(rank.argmin())
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = means[self.best_index_]
        self.scorer_, self.multimetric_, self.n_splits_ = scorer, False, len(folds)
        if self.refit is False:             # the fold scores only (a stage of a staged search)
            return self

        self.best_estimator_ = clone(base).set_params(**clone(self.best_params_, safe=False))
        t0 = time.perf_counter()
        self.best_estimator_.fit(X, y)
        self.refit_time_ = time.perf_counter() - t0
        return self


def grid_scores(search):
    """The fold scores of every grid point of a fitted grid search, for a selection rule
    applied afterwards (e.g. the smallest N_XV within one standard error of the best):
    ``{"params": [...], "fold_scores": [[...] per grid point]}``."""
    return {"params": _jsonable(list(search.cv_results_["params"])),
            "fold_scores": fold_scores(search.cv_results_).tolist()}


def capped_n_xv_grid(search, train):
    """``search``'s grid without the ``n_xv`` values at or above the number of instances of
    its smallest inner training fold (``grid_n_xv_cap: training_instances``): with as many
    expansion vectors as instances the model is the dense one. Needs bag inputs (a list of
    instance matrices) and keeps at least the smallest value."""
    sizes = np.array([np.shape(bag)[0] for bag in train.inputs])
    y = np.asarray(train.target)
    n_min = min(int(sizes[fold].sum()) for fold, _ in search.cv.split(np.zeros((len(y), 1)), y))
    values = sorted(search.param_grid["n_xv"])
    kept = [v for v in values if v < n_min] or values[:1]
    return {**search.param_grid, "n_xv": kept}


def _score_rule(search, rule, train, test, metric_names):
    """What another grid rule would have given: its choice, refitted on the training part
    (unless it is the search's own) and scored on the test part."""
    index = choose(search.cv_results_, rule)
    params = dict(search.cv_results_["params"][index])
    if index == search.best_index_:
        model = search.best_estimator_
    else:
        model = clone(search.estimator).set_params(**params).fit(train.inputs, train.target)
    score, pred = _predict(model, test.inputs)
    return {"chosen": _jsonable(params), "metrics": _score(metric_names, test.target, score, pred),
            "model": _model_description(model)}


def validation_search(est, grid, train, validation, test, metric_names, grid_metric):
    """Choose ``grid`` on the validation part; every model is fitted on ``train`` only: the
    grid search of :class:`ResumableGridSearchCV` (the same cell loop) on one predefined fold,
    whose held-out rows are the validation part (as scikit-learn's ``PredefinedSplit``).

    Every setting of the grid is fitted on the labelled ``train`` part and scored on
    ``validation`` by ``grid_metric``; the best (first in grid order on ties) is the run's
    model; a NaN validation score (e.g. ``mean_ap`` with no positive of some label in the
    validation part) ranks below every number, and a search whose every setting scores NaN
    is a :class:`MlkitError`. An estimator may declare ``post_fit_params`` (parameters that
    change only what follows its costly fit, e.g. the percentage of features kept by a
    selection method or its downstream classifier's) and ``refit_post(X, y)`` (redo only that
    part): the search then fits once per setting of the other parameters
    (:mod:`mlkit.runner.contract`). Validation and test labels never reach a fit.

    Returns (the chosen fitted estimator, its parameters, its validation score, fit seconds
    of the whole search, and per grid parameter the curve over its values: at each value
    the setting best on validation, its validation score and test metrics).
    """
    import copy

    sign = 1.0 if METRICS.entry(grid_metric).meta["greater_is_better"] else -1.0

    def rank(val):                      # NaN never wins
        return -np.inf if np.isnan(val) else sign * val

    post = contract.post_fit_params(est) & set(grid)
    heavy = {k: v for k, v in grid.items() if k not in post}
    light = {k: v for k, v in grid.items() if k in post}
    # the settings of the other parameters first, the post-fit ones within each
    candidates = [{**hp, **lp} for hp in ParameterGrid(heavy) for lp in ParameterGrid(light)]
    entries, best, fit_s = [], None, 0.0
    # the one predefined fold: fitted on the labelled part, scored on the validation part
    part = lambda model, k: ((train.inputs, train.target), validation)   # noqa: E731
    for i, _, model, _, t0, _ in _fitted_cells(est, candidates, 1, part, post_params=post):
        fit_s += time.perf_counter() - t0
        v_score, v_pred = _predict(model, validation.inputs)
        val = _score([grid_metric], validation.target, v_score, v_pred)[grid_metric]
        t_score, t_pred = _predict(model, test.inputs)
        entries.append({"params": candidates[i], "validation": val,
                        "metrics": _score(metric_names, test.target, t_score, t_pred)})
        if best is None or rank(val) > rank(best[1]):
            best = (copy.deepcopy(model), val, candidates[i])
    if np.isnan(best[1]):
        raise MlkitError(f"{type(est).__name__}: every grid setting scores NaN on the "
                         f"validation part ({grid_metric}); no setting can be chosen")
    curves = {}
    for key, values in grid.items():
        rows = []
        for value in values:
            hits = [e for e in entries if e["params"][key] == value]
            top = max(hits, key=lambda e: rank(e["validation"]))   # first on ties
            rows.append(top)
        curves[key] = {"values": list(values),
                       "validation": [e["validation"] for e in rows],
                       "metrics": {m: [e["metrics"][m] for e in rows] for m in metric_names},
                       "chosen": [e["params"] for e in rows]}
    return best[0], best[2], best[1], fit_s, curves

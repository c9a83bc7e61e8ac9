"""A grid search that resumes: the fold scores it has computed are kept on disk.

A run of the runner that chooses its parameters by CV (:func:`mlkit.experiment.
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
from joblib import hash as joblib_hash
from scipy.stats import rankdata
from sklearn.base import clone, is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import GridSearchCV, ParameterGrid, check_cv
from sklearn.utils import indexable
from sklearn.utils.metaestimators import _safe_split

from ._io import read_json, write_json

logger = logging.getLogger(__name__)

__all__ = ["ResumableGridSearchCV", "CHECKPOINT_SUFFIX"]

#: suffix of a run's checkpoint file beside its record (not ``.json``: never read as a record)
CHECKPOINT_SUFFIX = ".cv-checkpoint"

_FORMAT = 1


def _cell_name(params, fold):
    """The checkpoint's name of one (candidate, fold): its parameters in JSON, and the fold."""
    return f"{json.dumps(params, sort_keys=True, default=repr)}|{fold}"


class _FoldScores:
    """The (candidate, fold) scores of one search on disk; ``identity`` says which search
    they belong to (a file of another search, or unreadable, starts afresh)."""

    def __init__(self, path, identity):
        self.path, self.identity = path, identity
        self.cells = {}
        try:
            stored = read_json(path)
        except (OSError, ValueError):
            return
        if stored.get("format") == _FORMAT and stored.get("identity") == identity:
            self.cells = dict(stored.get("cells", {}))

    def add(self, name, score, fit_s, cpu_s):
        self.cells[name] = {"score": score, "fit_s": fit_s, "cpu_s": cpu_s}
        if self.path is None:
            return
        try:
            write_json(self.path, {"format": _FORMAT, "identity": self.identity,
                                   "cells": self.cells})
        except OSError as exc:           # e.g. a remote worker: the search goes on unsaved
            logger.warning("grid search checkpoint %s not written (%s); this run will not "
                           "resume from it", self.path, exc)
            self.path = None


class ResumableGridSearchCV(GridSearchCV):
    """scikit-learn's ``GridSearchCV`` (one scorer, refit on all the data, folds fitted in
    this process) that keeps its fold scores in ``checkpoint`` and resumes from them.

    Parameters
    ----------
    estimator, param_grid, scoring, cv, error_score
        As ``GridSearchCV``'s (``scoring``: one scorer).
    checkpoint : path or None
        The file of fold scores; None: plain ``GridSearchCV``. The file is written after
        every fold fitted and left in place (the caller removes it once the run's result is
        saved).
    checkpoint_key : str
        What determines the scores beyond what the search sees (the run's key: method
        revision, data): a file made under another key, another estimator, grid or folds
        is not reused.

    Attributes
    ----------
    ``GridSearchCV``'s (``cv_results_`` with the params, the fold, mean and std test scores,
    their rank and the mean fit time), and
    n_resumed_ : int
        Fold fits read from the checkpoint instead of computed.
    resumed_fit_s_, resumed_cpu_s_ : float
        The fit seconds (wall, CPU) those fold fits took when they were computed.
    """

    def __init__(self, estimator, param_grid, *, scoring=None, cv=None, error_score="raise",
                 checkpoint=None, checkpoint_key=""):
        super().__init__(estimator, param_grid, scoring=scoring, cv=cv,
                         error_score=error_score)
        self.checkpoint = checkpoint
        self.checkpoint_key = checkpoint_key

    def fit(self, X, y=None):
        if self.checkpoint is None:
            return super().fit(X, y)
        if self.error_score != "raise":
            raise ValueError("ResumableGridSearchCV with a checkpoint needs "
                             "error_score='raise'")
        X, y = indexable(X, y)
        cv = check_cv(self.cv, y, classifier=is_classifier(self.estimator))
        folds = list(cv.split(X, y))
        scorer = check_scoring(self.estimator, scoring=self.scoring)
        candidates = list(ParameterGrid(self.param_grid))
        base = clone(self.estimator)
        identity = joblib_hash((self.checkpoint_key, repr(base.get_params(deep=False)),
                                [test for _, test in folds]))
        store = _FoldScores(self.checkpoint, identity)

        scores = np.empty((len(candidates), len(folds)))
        fit_s = np.empty_like(scores)
        self.n_resumed_, self.resumed_fit_s_, self.resumed_cpu_s_ = 0, 0.0, 0.0
        for i, params in enumerate(candidates):
            for k, (train, test) in enumerate(folds):
                name = _cell_name(params, k)
                cell = store.cells.get(name)
                if cell is not None:
                    scores[i, k], fit_s[i, k] = cell["score"], cell["fit_s"]
                    self.n_resumed_ += 1
                    self.resumed_fit_s_ += cell["fit_s"]
                    self.resumed_cpu_s_ += cell["cpu_s"]
                    continue
                est = clone(base).set_params(**clone(params, safe=False))
                X_train, y_train = _safe_split(est, X, y, train)
                X_test, y_test = _safe_split(est, X, y, test, train)
                t0, c0 = time.perf_counter(), time.process_time()
                est.fit(X_train, y_train)
                fit_s[i, k] = time.perf_counter() - t0
                scores[i, k] = scorer(est, X_test, y_test)
                store.add(name, float(scores[i, k]), float(fit_s[i, k]),
                          time.process_time() - c0)

        means = scores.mean(axis=1)
        # GridSearchCV's rank_test_score (NaN ranked below the worst) and best_index_ (the
        # rank's argmin: the first candidate of the top mean)
        finite = np.nan_to_num(means, nan=np.nanmin(means) - 1) \
            if not np.isnan(means).all() else np.zeros_like(means)
        rank = rankdata(-finite, method="min").astype(np.int32, copy=False)
        self.best_index_ = int(rank.argmin())
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = means[self.best_index_]
        self.cv_results_ = {
            "params": candidates,
            **{f"split{k}_test_score": scores[:, k] for k in range(len(folds))},
            "mean_test_score": means, "std_test_score": scores.std(axis=1),
            "rank_test_score": rank, "mean_fit_time": fit_s.mean(axis=1),
        }
        self.scorer_, self.multimetric_, self.n_splits_ = scorer, False, len(folds)

        self.best_estimator_ = clone(base).set_params(**clone(self.best_params_, safe=False))
        t0 = time.perf_counter()
        self.best_estimator_.fit(X, y)
        self.refit_time_ = time.perf_counter() - t0
        return self

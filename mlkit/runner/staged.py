"""Grid searches in two stages: N_XV after gamma and C, or gamma from another method's CV.

SparseMI's Table I protocol chooses gamma, C and N_XV by 3-fold CV ([1]_, Sec. V-B: "The
kernel parameter gamma and the SVM parameter C for all methods are chosen via threefold CV
on the training data. [...] The optimal number of XVs is determined by CV and chosen from
a discrete set of candidate values"). Whether the three are searched jointly or N_XV after
gamma and C is not stated. The joint grid (5 N_XV x 7 gamma x 5 C) costs about 44 CPU-hours
on MUSK2's 100 runs, almost all of it in the fits with 500 and 1000 XVs. The staged reading
searches gamma and C with N_XV held at a start value (stage 1), then N_XV with gamma and C
at the stage-1 choice (stage 2): 35 + 5 - 1 cells instead of 175, and only 4 of them with
more XVs than the start.

:class:`StagedGridSearchCV` is that search: a :class:`~mlkit.runner.grid.
ResumableGridSearchCV` (its checkpoint, resume, fold-by-fold shared work and ``refit``
rule), run once per stage on the same inner folds. Stage 1 chooses by the best mean score
(scikit-learn's rule); stage 2 by the search's ``refit`` (e.g. the one-standard-error rule
of :mod:`mlkit.grid_rules`, which concerns N_XV). The stage-1 cell at the stage-1 choice
is stage 2's cell at the start value: it is fitted once.

``cv_results_`` holds every cell of both stages, stage 2's first, so that a rule of
:mod:`mlkit.grid_rules` applied to it afterwards (``grid_also``) chooses what it chooses
among stage 2's cells: every stage-1 cell has the start value and a mean score at most that
of stage 2's start cell, which comes first (``tests/test_staged_search.py`` checks this).

:class:`BorrowedGridSearchCV` takes some parameters from another estimator's CV on the
same inner folds (``grid_borrow``): e.g. gamma from MI-Kernel's (gamma, C) search for a
sparse start without optimisation, whose own CV would otherwise tune gamma to the start.

References
----------
.. [1] Fu, Lu, Ting & Zhang, "Learning sparse kernel classifiers for multi-instance
   classification", IEEE TNNLS 24(9), 2013.
"""

import time

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import ParameterGrid

from .grid import ResumableGridSearchCV, rank_test_scores

__all__ = ["BorrowedGridSearchCV", "StagedGridSearchCV", "stage_grids"]


def stage_grids(param_grid, start):
    """(stage-1 grid, stage-2 values): ``param_grid`` with the ``start`` parameters held at
    their start values, and those parameters' own values.

    Raises ``ValueError`` when a start parameter is not in the grid or its start value is
    not one of the grid's values (stage 2 would not hold stage 1's chosen cell)."""
    for name, value in start.items():
        if name not in param_grid:
            raise ValueError(f"staged grid: {name!r} is not a grid parameter (grid: "
                             f"{sorted(param_grid)})")
        if value not in list(param_grid[name]):
            raise ValueError(f"staged grid: the start value {name}={value!r} is not one of "
                             f"the grid's values {list(param_grid[name])}")
    first = {k: ([start[k]] if k in start else list(v)) for k, v in param_grid.items()}
    second = {k: list(param_grid[k]) for k in start}
    return first, second


class StagedGridSearchCV(ResumableGridSearchCV):
    """Grid search over ``param_grid`` in two stages (see the module docstring).

    Parameters
    ----------
    estimator, param_grid, scoring, cv, error_score, checkpoint, checkpoint_key, refit
        As :class:`~mlkit.runner.grid.ResumableGridSearchCV`'s; ``refit`` (True or a
        callable of :func:`mlkit.grid_rules.refit_rule`) chooses in stage 2. Both stages
        keep their fold scores in the one ``checkpoint``.
    start : dict
        ``{parameter: start value}``: held at that value in stage 1, searched over
        ``param_grid``'s values in stage 2, e.g. ``{"n_xv": 100}``.

    Attributes
    ----------
    ``ResumableGridSearchCV``'s (over both stages), and
    stage1_best_params_ : dict
        Stage 1's choice.
    n_stage2_ : int
        The cells of stage 2: the first ``n_stage2_`` entries of ``cv_results_``.
    """

    def __init__(self, estimator, param_grid, *, start, scoring=None, cv=None,
                 error_score="raise", checkpoint=None, checkpoint_key="", refit=True):
        super().__init__(estimator, param_grid, scoring=scoring, cv=cv,
                         error_score=error_score, checkpoint=checkpoint,
                         checkpoint_key=checkpoint_key, refit=refit)
        self.start = start

    def _stage(self, grid):
        """One stage's search: no refit (the staged search refits its own choice)."""
        return ResumableGridSearchCV(
            self.estimator, grid, scoring=self.scoring, cv=self.cv,
            error_score=self.error_score, checkpoint=self.checkpoint,
            checkpoint_key=self.checkpoint_key, refit=False)

    def fit(self, X, y=None, **params):
        first_grid, second_values = stage_grids(self.param_grid, self.start)
        first = self._stage(first_grid).fit(X, y, **params)
        self.stage1_best_params_ = dict(first.best_params_)
        chosen = {k: v for k, v in first.best_params_.items() if k not in self.start}
        # stage 2: the start parameters' grid at stage 1's choice; its start cell is stage
        # 1's chosen cell, whose fold scores are taken from stage 1, not fitted again
        points = [{**chosen, **combo} for combo in ParameterGrid(second_values)]
        others = [p for p in points if any(p[k] != v for k, v in self.start.items())]
        second = self._stage([{k: [v] for k, v in p.items()} for p in others]) \
            .fit(X, y, **params) if others else None
        stage1 = _rows(first.cv_results_)
        rows = [_rows(second.cv_results_) if second is not None else {}, stage1]
        stage2 = [_row_of(p, rows) for p in points]
        in_stage2 = {_point(p) for p in points}
        stage1_rest = [r for r in stage1.values() if _point(r["params"]) not in in_stage2]
        results2 = _results(stage2)
        index = int(self.refit(results2)) if callable(self.refit) \
            else int(results2["rank_test_score"].argmin())

        self.cv_results_ = _results(stage2 + stage1_rest)      # stage 2's cells first
        self.n_stage2_ = len(stage2)
        self.best_index_ = index
        self.best_params_ = stage2[index]["params"]
        self.best_score_ = stage2[index]["mean_test_score"]
        self.scorer_, self.multimetric_, self.n_splits_ = first.scorer_, False, first.n_splits_
        searches = [s for s in (first, second) if s is not None]
        self.n_resumed_ = sum(s.n_resumed_ for s in searches)
        self.resumed_fit_s_ = sum(s.resumed_fit_s_ for s in searches)
        self.resumed_cpu_s_ = sum(s.resumed_cpu_s_ for s in searches)
        self.best_estimator_ = clone(self.estimator).set_params(
            **clone(self.best_params_, safe=False))
        t0 = time.perf_counter()
        self.best_estimator_.fit(X, y, **params)
        self.refit_time_ = time.perf_counter() - t0
        return self


def _point(params):
    return tuple(sorted(params.items()))


def _rows(cv_results):
    """{grid point: its row of ``cv_results`` (params, fold scores, mean, std, fit time)}."""
    keys = [k for k in cv_results if k not in ("params", "rank_test_score")]
    return {_point(p): {"params": p, **{k: cv_results[k][i] for k in keys}}
            for i, p in enumerate(cv_results["params"])}


def _row_of(params, tables):
    for table in tables:
        if _point(params) in table:
            return {**table[_point(params)], "params": params}
    raise KeyError(params)          # not reached: every stage-2 point was fitted


def _results(rows):
    """``cv_results_`` of the rows, in their order, ranked as GridSearchCV ranks."""
    out = {"params": [r["params"] for r in rows]}
    for k in rows[0]:
        if k != "params":
            out[k] = np.array([r[k] for r in rows], dtype=float)
    out["rank_test_score"] = rank_test_scores(out["mean_test_score"])
    return out


class BorrowedGridSearchCV(ResumableGridSearchCV):
    """A grid search whose ``borrow`` parameters are another estimator's CV choice.

    Stage 1 searches ``source`` (e.g. MI-Kernel, the dense model SparseMI and RSVM
    approximate) over the grid's parameters it takes, on the same inner folds, and keeps
    its choice of the ``borrow`` parameters (e.g. gamma); stage 2 searches ``estimator``
    over the rest of the grid with those fixed. This gives a sparse model the start the
    dense one would choose ([1]_, Sec. V-D compares starts without optimisation to
    SparseMI; the paper does not say how their gamma was chosen).

    Parameters
    ----------
    estimator, param_grid, scoring, cv, error_score, checkpoint, checkpoint_key, refit
        As :class:`~mlkit.runner.grid.ResumableGridSearchCV`'s, for stage 2 (stage 1,
        cheap, keeps its fold scores in memory only).
    source : estimator
        The estimator whose CV choice is borrowed.
    borrow : list of str
        The parameters taken from stage 1's choice; each must be a parameter of the grid
        and of ``source``.

    Attributes
    ----------
    ``ResumableGridSearchCV``'s (of stage 2), and
    borrowed_params_ : dict
        The values borrowed.
    source_best_params_ : dict
        Stage 1's whole choice.
    """

    def __init__(self, estimator, param_grid, *, source, borrow, scoring=None, cv=None,
                 error_score="raise", checkpoint=None, checkpoint_key="", refit=True):
        super().__init__(estimator, param_grid, scoring=scoring, cv=cv,
                         error_score=error_score, checkpoint=checkpoint,
                         checkpoint_key=checkpoint_key, refit=refit)
        self.source = source
        self.borrow = borrow

    def fit(self, X, y=None, **params):
        takes = self.source.get_params()
        missing = [k for k in self.borrow if k not in self.param_grid or k not in takes]
        if missing:
            raise ValueError(f"borrowed grid: {missing} must be parameters of the grid "
                             f"({sorted(self.param_grid)}) and of "
                             f"{type(self.source).__name__}")
        source_grid = {k: v for k, v in self.param_grid.items() if k in takes}
        first = ResumableGridSearchCV(self.source, source_grid, scoring=self.scoring,
                                      cv=self.cv, error_score=self.error_score,
                                      refit=False).fit(X, y, **params)
        self.source_best_params_ = dict(first.best_params_)
        self.borrowed_params_ = {k: first.best_params_[k] for k in self.borrow}
        second = ResumableGridSearchCV(
            self.estimator, {**self.param_grid,
                             **{k: [v] for k, v in self.borrowed_params_.items()}},
            scoring=self.scoring, cv=self.cv, error_score=self.error_score,
            checkpoint=self.checkpoint, checkpoint_key=self.checkpoint_key,
            refit=self.refit).fit(X, y, **params)
        # stage 2's results are the search's (stage 1 was fitted in memory only)
        self.__dict__.update({k: v for k, v in vars(second).items() if k.endswith("_")})
        return self

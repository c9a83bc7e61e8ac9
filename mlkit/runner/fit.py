"""One run: the method's estimator built (its seed, its grid search), fitted on the training
part, scored on the test part, and what its record holds (runs in a worker)."""

import time

import numpy as np
from sklearn.model_selection import GridSearchCV

from .._errors import MlkitError, RunFailed
from ..manifest import compute_kernels
from ..metrics import average_precision_score
from ..registry import METHODS, METRICS
from ..grid_rules import refit_rule
from . import contract
from .grid import (ResumableGridSearchCV, _score_rule, capped_n_xv_grid, grid_scores,
                   validation_search)
from .staged import BorrowedGridSearchCV, StagedGridSearchCV
from .scoring import _jsonable, _model_description, _predict, _score, fitted_model
from .splits import cv_splitter, method_seed

__all__ = ["build_estimator", "fit_method", "check_method_parameters"]


def build_estimator(method, split, estimator_class=None, checkpoint=None, checkpoint_key=""):
    """The method's estimator with the config's parameters and, unless the config fixes it,
    the run's own ``random_state`` (see :func:`method_seed`); wrapped in a ``GridSearchCV``
    over ``method.grid`` (folds shuffled with the run's seed) when the config gives a grid,
    unless the split has a validation part (the grid is then chosen on it:
    :func:`validation_search`). With a ``checkpoint`` file the grid search keeps its fold
    scores there and resumes from them (:class:`~mlkit.resumable_search.
    ResumableGridSearchCV`; ``checkpoint_key``: the run's key). ``grid_staged`` and
    ``grid_borrow`` search in two stages (:mod:`mlkit.runner.staged`)."""
    cls = estimator_class or METHODS.get(method.name)
    est = cls(**method.params)
    seed = method_seed(split.seed, method.seed_from or method.display) % (2**31)
    if "random_state" in est.get_params() and "random_state" not in method.params:
        est.set_params(random_state=seed)
    if method.grid and split.validation is None:
        from sklearn.metrics import make_scorer

        entry = METRICS.entry(method.grid_metric)
        scorer = make_scorer(entry.obj, greater_is_better=entry.meta["greater_is_better"],
                             response_method="decision_function"
                             if entry.meta["needs"] == "score" else "predict")
        cv = cv_splitter(method.grid_folds, seed, stratified=method.grid_stratified)
        refit = True if method.grid_rule == "argmax" else refit_rule(method.grid_rule)
        search = dict(cv=cv, scoring=scorer, error_score="raise", checkpoint=checkpoint,
                      checkpoint_key=checkpoint_key, refit=refit)
        if method.grid_staged:
            est = StagedGridSearchCV(est, method.grid, start=method.grid_staged, **search)
        elif method.grid_borrow is not None:
            source = METHODS.get(method.grid_borrow.method)()
            if "random_state" in source.get_params():
                source.set_params(random_state=seed)
            est = BorrowedGridSearchCV(est, method.grid, source=source,
                                       borrow=list(method.grid_borrow.params), **search)
        else:
            est = ResumableGridSearchCV(est, method.grid, **search)
    return est


def fit_method(data, method, split, estimator_class=None, checkpoint=None, checkpoint_key=""):
    """(fitted estimator, train part, test part, fit seconds) of one method on one split
    (``estimator_class``: the registered class, resolved by the caller's registry, so a
    worker process needs no plugin imported to run it; ``checkpoint``, ``checkpoint_key``:
    see :func:`build_estimator`)."""
    est = build_estimator(method, split, estimator_class, checkpoint, checkpoint_key)
    train, test = data.subset(split.train), data.subset(split.test)
    if method.grid_n_xv_cap is not None and isinstance(est, GridSearchCV) \
            and "n_xv" in est.param_grid:
        est.set_params(param_grid=capped_n_xv_grid(est, train))
    t0 = time.perf_counter()
    if split.validation is not None and method.grid:
        raise MlkitError("fit_method: a split with a validation part and a grid needs "
                         "validation_search")
    est.fit(train.inputs, train.target)
    return est, train, test, time.perf_counter() - t0


def check_method_parameters(method, dataset_name, estimator_class=None):
    """A config's bad parameter value (its ``params`` or any point of its ``grid``) as one
    user error, before anything is fitted: each setting goes through the estimator's own
    parameter validation. A parameter error raised later, inside a fit, comes from a value
    the method computed: a bug, reported as a failed run with its traceback."""
    from sklearn.model_selection import ParameterGrid
    from sklearn.utils._param_validation import InvalidParameterError

    cls = estimator_class or METHODS.get(method.name)
    for setting in (ParameterGrid(method.grid) if method.grid else [{}]):
        est = cls(**method.params).set_params(**setting)
        try:
            if not contract.validate_params(est):        # declares no constraints
                return
        except InvalidParameterError as exc:
            msg = " ".join(str(exc).split())
            raise MlkitError(f"{method.display} on {dataset_name}: {msg}") from None


def _fit_and_score(data, method, split, metric_names, curves, estimator_class=None,
                   checkpoint=None, checkpoint_key=""):
    """:func:`_fit_and_score_run` with any exception turned into :class:`RunFailed`
    naming the run and carrying its traceback (a failure inside a method is a bug)."""
    import traceback

    from .._progress import collect_warnings

    check_method_parameters(method, data.name, estimator_class)
    try:
        with collect_warnings() as found:
            record = _fit_and_score_run(data, method, split, metric_names, curves,
                                        estimator_class, checkpoint, checkpoint_key)
        if found:                       # the runner logs them (WarningLog), never stores them
            record["_warnings"] = found
        return record
    except MlkitError as exc:
        raise MlkitError(f"{method.display} on {data.name}, split {split.name}: "
                         f"{exc}") from None
    except Exception as exc:
        raise RunFailed(f"{method.display} on {data.name}, split {split.name} failed: "
                        f"{type(exc).__name__}: {exc}", traceback.format_exc()) from None


def _fit_and_score_run(data, method, split, metric_names, curves, estimator_class=None,
                       checkpoint=None, checkpoint_key=""):
    """Fit one method on one split and score it on the test part (runs in a worker).

    The record holds the metrics, fit and prediction seconds, what the fitted model says of
    itself (``run_record_extras()``) and of the test part (``test_record_extras(X, y)``,
    when it has one), the per-label AP for multi-label targets, and with
    ``curves`` the score-type metrics after every stage of an ensemble plus the cumulative
    prediction time of its first t base models. A grid search resumed from its
    ``checkpoint`` adds the fit seconds of the folds it read back to ``fit_s`` and ``cpu_s``
    and says how many it read (``resumed_folds``).
    """
    searched = None
    cpu0 = time.process_time()
    if split.validation is not None and method.grid:
        est = build_estimator(method, split, estimator_class)
        train, test = data.subset(split.train), data.subset(split.test)
        validation = data.subset(split.validation)
        est, chosen, val, fit_s, by_param = validation_search(
            est, method.grid, train, validation, test, metric_names, method.grid_metric)
        searched = {"chosen": chosen, "validation": {method.grid_metric: val},
                    "n_validation": len(validation), "grid_curves": by_param}
    else:
        est, train, test, fit_s = fit_method(data, method, split, estimator_class,
                                             checkpoint, checkpoint_key)
    resumed = est.n_resumed_ if isinstance(est, ResumableGridSearchCV) else 0
    if resumed:                          # the folds fitted before the run was interrupted
        fit_s += est.resumed_fit_s_
        cpu0 -= est.resumed_cpu_s_
    t1 = time.perf_counter()
    score, pred = _predict(est, test.inputs)
    t2 = time.perf_counter()
    record = {
        "metrics": _score(metric_names, test.target, score, pred),
        # CPU seconds of the worker beside wall seconds: the machines may be shared
        "timings": {"fit_s": fit_s, "predict_s": t2 - t1,
                    "cpu_s": time.process_time() - cpu0},
        "n_train": len(train), "n_test": len(test),
        # where it ran: on another CPU, BLAS rounds differently (mlkit.manifest)
        "compute_kernels": compute_kernels(),
        "random_state": fitted_model(est).get_params().get("random_state"),
        "model": _model_description(fitted_model(est)),
    }
    if isinstance(est, GridSearchCV):
        record["chosen"] = {k: v for k, v in est.best_params_.items()}
        record["grid_scores"] = grid_scores(est)
        if method.grid_also:
            record["also"] = {rule: _score_rule(est, rule, train, test, metric_names)
                              for rule in method.grid_also}
    if resumed:
        record["resumed_folds"] = resumed
    if searched is not None:
        record.update(_jsonable(searched))
    model = fitted_model(est)
    extras = contract.test_record_extras(model, test.inputs, test.target)
    if extras is not None:                       # what the model says of the test part
        record["test_extras"] = _jsonable(extras)
    target = np.asarray(test.target)
    if score is not None and target.ndim == 2 and "mean_ap" in metric_names:
        record["label_ap"] = [None if np.isnan(v) else float(v)
                              for v in average_precision_score(target, score)]
    staged = contract.staged_decision_function(model, test.inputs) if curves else None
    if staged is not None:
        record["curves"] = _stage_curves(model, staged, test.target, metric_names)
        seconds = contract.stage_predict_seconds(model, test.inputs)
        if seconds is not None:
            record["stage_predict_s"] = np.cumsum(seconds).tolist()
    return record


def _stage_curves(model, staged, target, metric_names):
    """Every metric after every stage of ``staged`` (the model's ``staged_decision_function``
    on the test part): the score-type metrics from the stage's decision values, the
    label-type ones from the labels ``predict_from_scores`` gives of them (left out when the
    model has no ``predict_from_scores``; :mod:`mlkit.runner.contract`)."""
    needs = {m: METRICS.entry(m).meta["needs"] for m in metric_names}
    score_metrics = [m for m in metric_names if needs[m] == "score"]
    label_metrics = [m for m in metric_names if needs[m] != "score"]
    curves = {m: [] for m in score_metrics}
    for F in staged:
        pred = contract.predict_from_scores(model, F) if label_metrics else None
        names = score_metrics if pred is None else metric_names
        for m, value in _score(names, target, F, pred).items():
            curves.setdefault(m, []).append(value)
    return curves

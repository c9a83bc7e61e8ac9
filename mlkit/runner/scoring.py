"""Scoring a fitted model on a part of the data: metrics from decision values or labels,
through the estimator contract (:mod:`mlkit.runner.contract`), JSON-ready."""

import numpy as np
from sklearn.model_selection import GridSearchCV

from ..registry import METRICS
from . import contract

__all__ = ["fitted_model"]


def _score(metric_names, y_true, score, pred):
    out = {}
    for name in metric_names:
        entry = METRICS.entry(name)
        out[name] = float(entry.obj(y_true, score if entry.meta["needs"] == "score" else pred))
    return out


def fitted_model(est):
    """The fitted estimator itself, or the refitted best one of a grid search."""
    return est.best_estimator_ if isinstance(est, GridSearchCV) else est


def _predict(est, inputs):
    """(scores or None, predictions) of a fitted estimator."""
    score = contract.decision_function(est, inputs)
    if score is None:
        return None, est.predict(inputs)
    pred = contract.predict_from_scores(fitted_model(est), score)
    return score, est.predict(inputs) if pred is None else pred


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _model_description(est):
    """What the estimator says of its fitted model (``run_record_extras()``: see
    :mod:`mlkit.runner.contract`), JSON-ready."""
    return _jsonable(contract.run_record_extras(est))

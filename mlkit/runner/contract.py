"""The contract between the runner and an estimator: what the runner asks of a method.

The runner fits any scikit-learn estimator: ``fit(X, y)``, ``predict(X)``, and
``decision_function(X)`` when it has one (the score-type metrics and a grid's score-type
``grid_metric`` need it); ``get_params``/``set_params`` (a ``random_state`` parameter, when
the estimator has one, is set to the run's own seed); scikit-learn's parameter validation
(``_parameter_constraints``), when the estimator declares it, checks every configured
setting before anything is fitted. Beyond
that, an estimator may declare any of the optional members below, each with a default; the
runner reads them through this module only, so this docstring is the whole protocol (the
"Runner contract" section of ``docs/reference.md`` says the same).

Class attributes
----------------
numerics_revision : int, default 0
    Bumped whenever a change alters the estimator's numbers: it is part of every run key,
    so the records made before the change are never reused (``scripts/numerics_revisions.py``
    and ``tests/test_numerics_revisions.py`` keep it honest).
numerics_revision_for(params) : classmethod -> int, optional
    The revision of one configured setting (``params``: the config's parameters), for a
    change that alters the numbers of some settings only: only their records are recomputed.
learning_family : str or None, default None
    The name of the model the estimator learns and shares with others (LM3FS and LM3FT both
    learn ``"LM3FE"``): the runs of one dataset and split with the same family go to one
    worker, so the shared model is learned once in its memory.
post_fit_params : tuple of str, default ()
    Parameters that change only what follows the costly part of ``fit`` (e.g. the percentage
    of features a selection method keeps); with them, the estimator has
    ``refit_post(X, y)``, which redoes only that part after ``set_params``. The
    validation-part search then fits once per setting of the other parameters.

Methods of a fitted estimator
-----------------------------
predict_from_scores(scores) -> labels, optional
    The labels ``predict`` would give, from the output of ``decision_function`` (or of one
    stage of ``staged_decision_function``): the runner then scores the test part once
    instead of twice, and with ``curves: true`` records the label-type metrics (e.g.
    accuracy) after every stage too.
run_record_extras() -> dict, optional
    What the fitted model says of itself (JSON-ready values, or numpy ones): the record's
    ``model`` (``mlkit.methods._record.RecordedModel`` gives it from declared attributes).
test_record_extras(X, y) -> dict, optional
    What the model says of the test part (e.g. per-class F1): the record's ``test_extras``.
staged_decision_function(X) -> iterator of scores, optional
    The decision values after every stage of an ensemble (what a stage is, the estimator's
    parameters say: e.g. HFSS's ``stages``): with ``curves: true`` the record's ``curves``
    holds each score-type metric after every stage, and each label-type metric when the
    model has ``predict_from_scores``.
base_predictions(X, return_times=True) -> (H, seconds), optional
    With ``staged_decision_function`` and ``curves: true``: the prediction seconds of every
    base model, kept cumulated as the record's ``stage_predict_s``.

A grid search over the estimator is the runner's own (:mod:`mlkit.runner.grid`), never the
estimator's concern.
"""

__all__ = ["numerics_revision", "learning_family", "post_fit_params", "validate_params",
           "decision_function", "predict_from_scores", "run_record_extras",
           "test_record_extras", "staged_decision_function", "stage_predict_seconds"]


def _method_class(method):
    """The estimator class of a registered method name, or ``method`` itself (a class)."""
    if isinstance(method, str):
        from ..registry import METHODS

        return METHODS.get(method)
    return method


def numerics_revision(method, params=None):
    """The numerics revision of a method (a registered name or an estimator class):
    ``numerics_revision_for(params)`` when it has one and ``params`` are given, else its
    ``numerics_revision`` (0 without one)."""
    cls = _method_class(method)
    per_setting = getattr(cls, "numerics_revision_for", None)
    if per_setting is not None and params is not None:
        return per_setting(dict(params))
    return int(getattr(cls, "numerics_revision", 0))


def learning_family(method):
    """The ``learning_family`` of a method (a registered name or a class), None without one."""
    return getattr(_method_class(method), "learning_family", None)


def post_fit_params(est):
    """The ``post_fit_params`` of an estimator, as a set (empty without them)."""
    return set(getattr(est, "post_fit_params", ()))


def validate_params(est):
    """Check ``est``'s parameters with scikit-learn's own validation (raises
    ``InvalidParameterError``); False when it declares no ``_parameter_constraints``."""
    if not hasattr(est, "_parameter_constraints"):
        return False
    est._validate_params()
    return True


def decision_function(est, X):
    """``est.decision_function(X)``, or None when it has none (a grid search has one when
    its estimator has)."""
    fn = getattr(est, "decision_function", None)
    return None if fn is None else fn(X)


def predict_from_scores(model, scores):
    """``model.predict_from_scores(scores)``, or None when the model has no such method."""
    fn = getattr(model, "predict_from_scores", None)
    return None if fn is None else fn(scores)


def run_record_extras(model):
    """``model.run_record_extras()`` as a dict ({} without it)."""
    fn = getattr(model, "run_record_extras", None)
    return {} if fn is None else dict(fn())


def test_record_extras(model, X, y):
    """``model.test_record_extras(X, y)`` as a dict, or None without it."""
    fn = getattr(model, "test_record_extras", None)
    return None if fn is None else dict(fn(X, y))


def staged_decision_function(model, X):
    """``model.staged_decision_function(X)`` (an iterator of scores), or None without it."""
    fn = getattr(model, "staged_decision_function", None)
    return None if fn is None else fn(X)


def stage_predict_seconds(model, X):
    """The prediction seconds of each base model of ``model`` on ``X``
    (``base_predictions(X, return_times=True)``), or None without it."""
    fn = getattr(model, "base_predictions", None)
    if fn is None:
        return None
    _, seconds = fn(X, return_times=True)
    return seconds

"""The runner's former single module, kept so that ``mlkit.experiment`` stays importable: every
name it had is re-exported from :mod:`mlkit.runner`, whose modules each do one of its jobs
(splits, keys, records, the grid search, one run, backends, the run loop)."""

from .runner import *  # noqa: F401,F403
from .runner import __all__ as _runner_all
from .runner.backends import (_checkpoint, _dask_client, _fit_and_score_one_thread,  # noqa: F401
                              _indexed, _run_task, _shared_learning_tasks, _task_records)
from .runner.fit import _fit_and_score, _fit_and_score_run  # noqa: F401
from .runner.grid import _score_rule  # noqa: F401
from .runner.keys import _key_payload, _plan, _protocol_key, _run_key  # noqa: F401
from .runner.records import _checkpointed_seconds, _manifest_plan  # noqa: F401
from .runner.scoring import _jsonable, _model_description, _predict, _score  # noqa: F401
from .runner.splits import _check_classes, _check_folds, _seed  # noqa: F401
from .stats import complete_repeats, repetition_values  # noqa: F401  (re-exported: moved)

__all__ = [*_runner_all, "repetition_values", "complete_repeats"]

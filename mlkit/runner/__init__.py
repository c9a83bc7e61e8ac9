"""The runner: a spec's runs, each one method fitted on one training split and scored on its
test split, in small parts with one job each.

=========================  ==================================================================
:mod:`~.splits`            the train/test splits of a protocol, their seeds, the K-fold splitter
:mod:`~.keys`              run keys (what determines a run's numbers) and record paths; the plan
:mod:`~.records`           reading records back: a folder's, an invocation's, a run's progress
:mod:`~.contract`          the optional members the runner asks of an estimator
:mod:`~.grid`              the one grid search (resumable ``GridSearchCV``; validation part)
:mod:`~.staged`            that search in two stages: N_XV after gamma, C; a borrowed gamma
:mod:`~.scoring`           metrics of a fitted model on a part of the data
:mod:`~.fit`               one run: estimator built, fitted, scored, its record
:mod:`~.backends`          where runs execute: joblib/Dask checks, one BLAS thread, shared tasks
:mod:`~.loop`              :func:`run`: reuse the records whose key matches, compute the rest
:mod:`~.result`            :class:`RunResult`, what :func:`run` returns
=========================  ==================================================================

Runs are independent, so they go to joblib (``--jobs``; any joblib backend, e.g. a Dask
cluster with ``backend="dask"``), and each finished run is written at once, atomically, to
``<out>/runs/<dataset>/<method>/r<repeat>-f<fold>.json`` with a key hashing everything that
determines its numbers (:mod:`mlkit.store` folds those files into the folder's table). A
rerun loads every record whose key matches and computes only the rest, so an interrupted
reproduction resumes where it stopped; ``force=True`` recomputes everything.
"""

from .backends import check_parallel
from .contract import numerics_revision
from .fit import build_estimator, check_method_parameters, fit_method
from .grid import ResumableGridSearchCV, capped_n_xv_grid, grid_scores, validation_search
from .keys import checkpoint_path, planned_runs, record_path
from .loop import run
from .records import load_records, manifest_records, run_status
from .result import QUICK_NOTE, WARNINGS_LOG, RunResult
from .scoring import fitted_model
from .splits import Split, cv_folds, cv_splitter, folds_per_repeat, make_splits, method_seed

__all__ = ["Split", "RunResult", "make_splits", "run", "load_records", "manifest_records",
           "method_seed", "build_estimator", "fit_method", "numerics_revision", "planned_runs",
           "run_status", "check_parallel", "validation_search", "folds_per_repeat",
           "cv_splitter", "cv_folds", "record_path", "checkpoint_path", "fitted_model",
           "grid_scores", "capped_n_xv_grid", "check_method_parameters",
           "ResumableGridSearchCV", "QUICK_NOTE", "WARNINGS_LOG"]

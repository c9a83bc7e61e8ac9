"""The run loop: every (dataset, split, method) of a spec, its record reused when its key
matches, the others computed (in this process or on a joblib backend) and each record
written atomically as it finishes."""

import json
import logging
import time
from contextlib import ExitStack
from pathlib import Path

from joblib import Parallel, delayed, parallel_config

from .. import __version__
from .._errors import DataError
from .._io import write_json
from ..datasets import load_dataset
from ..manifest import compute_kernels
from ..registry import METHODS
from ..store import RunStore
from .backends import (_checkpoint, _dask_client, _fit_and_score_one_thread, _indexed,
                       _run_task, _shared_learning_tasks, _task_records, check_parallel)
from .contract import numerics_revision
from .fit import _fit_and_score, check_method_parameters
from .keys import _run_key, checkpoint_path, record_path
from .result import WARNINGS_LOG, RunResult
from .splits import _check_classes, make_splits

__all__ = ["run"]

logger = logging.getLogger(__name__)


def run(spec, out_dir, *, jobs=1, force=False, backend=None, scheduler=None,
        connect_timeout=10.0, progress=False, only=None, compute=True, compute_only=None):
    """Run every (method, split) of ``spec``, reusing the records already in ``out_dir``;
    the runs left to compute go repetition by repetition across the datasets.

    Parameters
    ----------
    spec : ExperimentSpec
    out_dir : path
        Where ``runs/`` records go.
    jobs : int
        Parallel runs (joblib ``n_jobs``; -1 for all cores): ``--jobs N`` uses N cores.
        With ``jobs=1`` the runs execute in this process, one at a time. Every run, on
        every backend, executes under ``threadpoolctl.threadpool_limits(1)``, so that
        BLAS/OpenMP pools use one thread and ``--jobs N`` uses N cores (joblib's own worker
        limit would give each of N workers cpu_count // N threads).

        Runs that share a learned model are one task: an estimator class may declare
        ``learning_family``, a string naming the model it learns and shares with other
        estimators (LM3FS and LM3FT both learn ``"LM3FE"``; None or absent: it shares
        nothing). The runs to compute of one (dataset, split, learning family) go to one
        worker, one after the other, so the model is learned once in that worker's memory
        whatever ``jobs`` is. Grouping changes no number, record or key: each record is
        written, atomically, as soon as its task returns it (the runs finished before a
        failing run of the task included), and ``jobs=1`` runs every run in order in this
        process, where the memo is shared anyway.
    force : bool
        Recompute runs that already have a record.
    backend : str, optional
        A joblib backend name ("loky", "threading", "dask", ...).
    scheduler : str, optional
        With ``backend="dask"``: the address of the Dask scheduler to connect to.
    connect_timeout : float
        Seconds to wait for the scheduler before giving up with a clear error.
    progress : bool
        Show a progress bar.
    only : callable, optional
        ``only(dataset_display, method_display, split) -> bool``: reuse or compute only the
        runs it accepts (a script's slice of a target's runs, e.g. a benchmark on the first
        folds; their records are the target's own).
    compute : bool
        False: compute nothing, only read the runs already recorded (a long run's results so
        far); ``RunResult.missing`` counts the others.
    compute_only : callable, optional
        ``compute_only(dataset_display, method_display, split) -> bool``: compute only the
        runs it accepts; the others are read when recorded and counted in
        ``RunResult.missing`` when not (``mlkit reproduce --datasets``: one part of a long
        target now, rendered with the rest recorded so far).

    Returns
    -------
    RunResult
    """
    check_parallel(jobs, backend, scheduler)
    t_start = time.perf_counter()
    result = RunResult(spec=spec, datasets={})
    store = RunStore(out_dir)                 # the records saved so far, read when needed
    todo = []
    for ds in spec.datasets:
        try:
            data = load_dataset(ds.name, path=ds.path, format=ds.format, params=ds.params,
                                test_path=ds.test_path)
        except DataError as exc:
            # a paper's own data the user may not have: skipped and said, never substituted
            if not (ds.when_present and getattr(exc, "missing", False)):
                raise
            result.absent[ds.display] = str(exc)
            logger.info("%s: %s skipped (when_present): %s", spec.target, ds.display, exc)
            continue
        result.datasets[ds.display] = data
        _check_classes(data)
        data_sha = data.fingerprint()
        for spec_method in spec.methods:     # every bad value said before anything is fitted
            check_method_parameters(ds.method_as_run(spec_method), ds.display)
            for r in ds.split_method_params:
                check_method_parameters(ds.method_as_run(spec_method, r),
                                        f"{ds.display} (repetition {r})")
        for split in make_splits(data, ds.protocol_over(spec.protocol)):
            for spec_method in spec.methods:
                # the method as run on this dataset and repetition, with its parameters there
                method = ds.method_as_run(spec_method, split.repeat)
                if method.repeats is not None and split.repeat >= method.repeats:
                    continue
                if only is not None and not only(ds.display, method.display, split):
                    continue
                key = _run_key(spec, ds, method, split)
                path = record_path(out_dir, ds, method, split)
                if not force:
                    rec = store.get(path)
                    # a record made on other data (a loader that changed) is stale; one
                    # from before records carried the data's fingerprint is taken by its key
                    if (rec is not None and rec.get("key") == key
                            and rec.get("data_sha", data_sha) == data_sha):
                        result.records.append(rec)
                        continue
                if compute_only is not None and not compute_only(ds.display, method.display,
                                                                 split):
                    result.missing += 1
                    continue
                todo.append((ds.display, method, split, key, path))
    # repetition by repetition across all datasets (then the config's order): a long run
    # stopped early holds whole repetitions of every dataset, not all of the first dataset
    # and nothing of the last (--partial renders them)
    d_order = {d.display: i for i, d in enumerate(spec.datasets)}
    todo.sort(key=lambda t: (t[2].repeat, d_order[t[0]]))
    result.reused = len(result.records)
    if not compute:
        result.missing, todo = result.missing + len(todo), []
    if force:                                    # recomputed from the start
        for *_, path in todo:
            checkpoint_path(path).unlink(missing_ok=True)
    logger.info("%s: %d runs to compute, %d reused", spec.target, len(todo), result.reused)

    with ExitStack() as stack:
        if scheduler is not None:
            backend = "dask"
            stack.enter_context(_dask_client(scheduler, connect_timeout))
        if backend is not None:
            stack.enter_context(parallel_config(backend=backend))
        bar = None
        if progress and todo:
            from .._progress import progress_reporter

            bar = stack.enter_context(progress_reporter(len(todo), spec.target))
        from .._progress import WarningLog

        warned = WarningLog(Path(out_dir) / WARNINGS_LOG, spec.target)
        # every run uses one BLAS/OpenMP thread, whatever the backend: the runs in this
        # process (sequential, or threads of the "threading" backend) under one limit set
        # here (so that no thread's exit lifts another's BLAS limit), and every task of a
        # backend under its own (worker processes; OpenMP's limit is per thread)
        in_process = (jobs == 1 and backend is None) or backend == "threading"
        # a run's grid search keeps its fold scores beside its record until the record is
        # written: an interrupted run resumes from them (mlkit.resumable_search); not on
        # a Dask cluster, whose workers may not share this file system
        kernels = json.dumps(compute_kernels(), sort_keys=True)
        checkpoints = [(None, "") if backend == "dask" else
                       _checkpoint(p, k, result.datasets[d], kernels)
                       for d, _, _, k, p in todo]
        if in_process and todo:
            from threadpoolctl import threadpool_limits

            stack.enter_context(threadpool_limits(limits=1))
        if jobs == 1 and backend is None:
            outputs = (
                _indexed(i, _fit_and_score, result.datasets[d], m, s,
                         spec.metrics, spec.curves, METHODS.get(m.name), *checkpoints[i])
                for i, (d, m, s, _, _) in enumerate(todo)
            )
        else:
            # each run sets its own limit too: OpenMP's is per thread. The runs that share a
            # learned model are one task (_shared_learning_tasks); each task returns its runs'
            # indices so records can be matched however they arrive
            parallel = Parallel(n_jobs=jobs, return_as="generator_unordered")
            outputs = _task_records(parallel(
                delayed(_run_task)(_fit_and_score_one_thread, [
                    (i, (result.datasets[todo[i][0]], todo[i][1], todo[i][2], spec.metrics,
                         spec.curves, METHODS.get(todo[i][1].name), *checkpoints[i]))
                    for i in task])
                for task in _shared_learning_tasks(todo)
            ))
        for i, rec in outputs:
            dataset, method, split, key, path = todo[i]
            warned.add(f"{dataset} / {method.display} / {split.name}", rec.pop("_warnings", ()))
            rec.update(key=key, data_sha=result.datasets[dataset].fingerprint(),
                       dataset=dataset, method=method.display, method_name=method.name,
                       params=method.params,
                       numerics_revision=numerics_revision(method.name, method.params),
                       repeat=split.repeat, fold=split.fold, split_seed=split.seed,
                       mlkit_version=__version__)
            write_json(path, rec)
            checkpoint_path(path).unlink(missing_ok=True)
            result.records.append(rec)
            result.computed += 1
            if bar is not None:
                bar.update(1)
    result.warnings = warned.summary()
    # config order (dataset, method, split) whatever order the runs finished in
    d_rank = {d.display: i for i, d in enumerate(spec.datasets)}
    m_rank = {m.display: i for i, m in enumerate(spec.methods)}
    result.records.sort(key=lambda r: (d_rank[r["dataset"]], m_rank[r["method"]], r["repeat"],
                                       r["fold"]))
    result.wall_time = time.perf_counter() - t_start
    return result

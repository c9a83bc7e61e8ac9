"""Where the runs execute: the checks of ``--jobs``/``--backend``/``--scheduler``, the Dask
client, one BLAS thread per run, and the runs that share a learned model packed into one
task of a parallel backend."""

from .._errors import MlkitError, did_you_mean
from ..registry import METHODS
from . import contract
from .fit import _fit_and_score
from .keys import checkpoint_path

__all__ = ["check_parallel"]


def check_parallel(jobs, backend, scheduler):
    """One clear error for a ``--jobs``/``--backend``/``--scheduler`` that cannot work."""
    from joblib.parallel import BACKENDS

    if jobs == 0 or jobs < -1:
        raise MlkitError(f"--jobs {jobs}: give a positive number of parallel runs, or -1 for "
                         "all cores")
    known = sorted(set(BACKENDS) | {"dask"})
    if backend is not None and backend not in known:
        raise MlkitError(f"--backend {backend!r} is not a joblib backend"
                         f"{did_you_mean(backend, known)}; known: {', '.join(known)}")
    if scheduler is not None and backend not in (None, "dask"):
        raise MlkitError("--scheduler goes with --backend dask")


def _dask_client(scheduler, timeout):
    try:
        from dask.distributed import Client
    except ImportError:
        raise MlkitError("--scheduler needs dask.distributed: pip install 'mlkit[dask]'") \
            from None
    try:
        return Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise MlkitError(f"--scheduler {scheduler}: cannot connect within {timeout:g} s "
                         f"({type(exc).__name__}: {exc}); is the Dask scheduler running "
                         "there? (--connect-timeout sets the wait)") from None


def _fit_and_score_one_thread(*args):
    """:func:`_fit_and_score` with BLAS/OpenMP thread pools limited to one thread (a run
    in a worker process of joblib's process backends)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _fit_and_score(*args)


def _checkpoint(record, key, data, kernels):
    """(checkpoint file, checkpoint key) of the run whose record goes to ``record``: its
    grid search resumes only from folds of the same run, on the same data, computed with
    the same BLAS and SIMD kernels ``kernels`` (folds from two machines would mix their
    roundings)."""
    return checkpoint_path(record).absolute(), f"{key}:{data.fingerprint()}:{kernels}"


def _indexed(i, fn, *args):
    return i, fn(*args)


def _shared_learning_tasks(todo):
    """The runs of ``todo`` (their indices) packed into the tasks of a parallel backend.

    The runs of one dataset and split whose estimators declare the same
    ``learning_family`` (a class attribute: e.g. LM3FS and LM3FT both learn LM3FE) are one
    task, in ``todo`` order, placed where its first run is: their estimators learn the
    shared model once in the worker's in-process memo. A run whose estimator declares none
    (or None) is a task of its own."""
    tasks, where = [], {}
    for i, (dataset, method, split, _, _) in enumerate(todo):
        family = contract.learning_family(METHODS.get(method.name))
        group = (dataset, split.repeat, split.fold, family)
        if family is not None and group in where:
            tasks[where[group]].append(i)
            continue
        if family is not None:
            where[group] = len(tasks)
        tasks.append([i])
    return tasks


def _run_task(fn, calls):
    """``[(i, fn(*args)) for i, args in calls]`` and the exception that stopped it, if any
    (the runs finished before a failing one are kept: their records are still written)."""
    done = []
    for i, args in calls:
        try:
            done.append((i, fn(*args)))
        except Exception as exc:        # re-raised by _task_records after the finished runs
            return done, exc
    return done, None


def _task_records(outputs):
    """The ``(index, record)`` pairs of the tasks' ``outputs`` one by one, as they arrive;
    a task's exception is raised after its finished runs are given."""
    for done, exc in outputs:
        yield from done
        if exc is not None:
            raise exc

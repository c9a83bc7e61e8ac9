"""What every paper's full protocol costs on this machine, against what the committed runs cost.

For every registered target that computes runs of its own (a target drawn from another's
runs costs nothing), every (dataset, method) of its config is sampled: one split drawn with
a fixed seed, and on it

* a method chosen by k-fold CV over a grid: a seeded sample of its (grid point, fold) cells,
  timed as the runner's grid search fits them (one fold's cells inside one
  :func:`mlkit.kernels.shared_work` scope, the first cell paying the fold's shared work).
  A run is extrapolated as ``folds x (first cell + (grid points - 1) x mean later cell)``
  plus the refit on the whole training part, taken as one mean cell scaled by the ratio of
  training sizes (``n_train / n_inner_train``, linear in n: an approximation). A row that
  takes its seed from a row learning the same models (``seed_from``, one task in the
  runner: RS (10) beside RS (100), SparseMI (100) beside SparseMI's stage 1) has each
  sampled cell fitted first as that row's, untimed: its time is its cost beside it;
* any other method (fixed parameters, or a grid chosen on a validation part): one whole
  run of the runner (fit, grid, prediction, extras). A run whose committed records say it
  costs more than ``--max-run-s`` is not timed: its group is *carried* at its recorded cost
  and counted in ``carried_groups``.

Times are CPU seconds (``time.process_time``) of the worker, BLAS limited to one thread;
``--jobs`` workers sample different (target, dataset) pairs at once. The recorded cost is
the sum over the committed run records of ``timings.cpu_s`` (``fit_s + predict_s`` where an
old record has no CPU time); those runs were computed on other, often slower, machines.

Also measured here, each in the same run as its alternative:

* ``mikernel_grid_vs_plain``: CPU time of mlkit's MI-Kernel grid search (the Table I grid,
  3-fold CV and refit) over that of a plain numpy + scikit-learn one on the same folds (each
  inner fold standardised on its training instances, distances once, the set kernel once per
  gamma, ``SVC(kernel="precomputed")`` for every C), on one MUSK2 training part; both must
  choose the same grid point;
* ``hfss_speedup``, ``mssboost_loss_share``: from ``scripts/bench_hfss.py`` and
  ``scripts/bench_mssboost.py`` (their ``measure_*`` functions), when they provide them;
* ``lm3fe_table1_s``: the estimated CPU seconds of ``lm3fe/table1`` divided by 2, its wall
  time with ``--jobs 2`` when the runs scale over two cores (``scripts/bench_lm3fe.py``
  measures the real wall time).

Usage::

    MLKIT_DATA_MIRROR=../shared/data python scripts/bench_full.py --jobs 2

The last line: ``total_cpu_h=<x> recorded_cpu_h=<y> sparsemi_table1_cpu_h=<a>
sparsemi_fig3_cpu_h=<b> mikernel_grid_vs_plain=<c> lm3fe_table1_s=<d> hfss_speedup=<e>
mssboost_loss_share=<f>`` (and ``carried_groups``, ``sampled_cpu_s``); a figure this run
could not measure is ``nan``.

Run time on this machine (2 cores, shared): the default (every target, ``--jobs 2``) took
1,489 s wall in a full run while other work loaded the machine; ``--targets T`` samples
only T (``mssboost/fig4``: 3 CPU-s, 9 s wall, nothing to sample). Its peers are those of the scripts
it imports (``pip install -e ".[bench]"``).
"""

import argparse
import importlib.util
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

SCRIPTS = Path(__file__).resolve().parent


# -- the sample of one (target, dataset) -------------------------------------------------------
def _cell_times(search, X, y, rng, max_cells, budget_s, warm=None):
    """Time a seeded sample of the cells of one fold of ``search`` (a
    ``ResumableGridSearchCV``): [(cpu seconds, shared work included?)], the number of
    folds and grid points, and the mean training size of a fold.

    ``warm``: the estimator of the row whose seed this one takes and whose learned models
    it shares in the runner's task (``seed_from``, same ``learning_family``); each sampled
    cell is first fitted, untimed, as that row's, so the time is this row's cost beside it.
    Then also returns the untimed fits' mean CPU seconds (for the refit's estimate)."""
    from sklearn.base import clone, is_classifier
    from sklearn.model_selection import ParameterGrid, check_cv
    from sklearn.utils.metaestimators import _safe_split

    from mlkit.kernels import shared_work

    from mlkit.runner.staged import StagedGridSearchCV, stage_grids

    cv = check_cv(search.cv, y, classifier=is_classifier(search.estimator))
    folds = list(cv.split(X, y))
    train, test = folds[rng.integers(len(folds))]
    if isinstance(search, StagedGridSearchCV):
        # stage 1's cells, then stage 2's at one of them (as if chosen) but its start cell
        first, second = stage_grids(search.param_grid, search.start)
        candidates = list(ParameterGrid(first))
        at = candidates[rng.integers(len(candidates))]
        candidates += [{**at, **p} for p in ParameterGrid(second)
                       if any(p[k] != v for k, v in search.start.items())]
    else:
        candidates = list(ParameterGrid(search.param_grid))
    order = rng.permutation(len(candidates))[:max_cells]
    scorer = search.scoring
    times, warm_times, spent = [], [], 0.0
    with shared_work():
        for i in order:
            est = clone(search.estimator).set_params(**candidates[i])
            X_tr, y_tr = _safe_split(est, X, y, train)
            X_te, y_te = _safe_split(est, X, y, test, train)
            if warm is not None:
                c0 = time.process_time()
                clone(warm).set_params(**candidates[i]).fit(X_tr, y_tr)
                warm_times.append(time.process_time() - c0)
            c0 = time.process_time()
            est.fit(X_tr, y_tr)
            scorer(est, X_te, y_te)
            times.append(time.process_time() - c0)
            spent += times[-1]
            if spent > budget_s:
                break
    if warm is not None:
        return times, len(folds), len(candidates), len(train), float(np.mean(warm_times))
    return times, len(folds), len(candidates), len(train)


def _grid_run_estimate(times, n_folds, n_cells, n_inner, n_train, refit_cell=None):
    """CPU seconds of one grid-searched run from its sampled cells (see the module doc);
    ``refit_cell``: the mean cell the refit is scaled from, when not ``times``'."""
    later = np.mean(times[1:]) if len(times) > 1 else times[0]
    mean_cell = np.mean(times) if refit_cell is None else refit_cell
    return n_folds * (times[0] + (n_cells - 1) * later) + mean_cell * n_train / n_inner


def _empty_memos():
    """Empty this worker's memos of the MI models (:mod:`mlkit.methods._memo`); LM3FE's is
    kept: LM3FT's whole run is timed after LM3FS's, as the runner runs them."""
    from mlkit.methods._memo import FITTED
    from mlkit.methods.mi.reduced import CONSTRUCTIONS

    for memo in (FITTED, CONSTRUCTIONS):
        memo.clear()


def _warm_source(spec, ds, method, split):
    """The estimator of the row ``method`` takes its seed from, when that row learns the
    same models (the same ``learning_family``: the runner runs both in one task, so this
    row's fits are shared with it), else None."""
    from mlkit import experiment
    from mlkit.registry import METHODS
    from mlkit.runner import contract

    if method.seed_from is None:
        return None
    source = next((ds.method_as_run(m) for m in spec.methods
                   if m.display == method.seed_from), None)
    family = contract.learning_family(METHODS.get(method.name))
    if source is None or family is None or \
            contract.learning_family(METHODS.get(source.name)) != family:
        return None
    from sklearn.base import clone

    est = experiment.build_estimator(source, split, METHODS.get(source.name))
    base = getattr(est, "estimator", est)
    # a staged search's cells of this row's grid are its stage 1, at the start values
    return clone(base).set_params(**est.start) if hasattr(est, "start") else base


def sample_dataset(target_name, ds_display, max_cells, budget_s, max_run_s, recorded_per_run):
    """[(target, dataset, method, runs planned, estimated CPU s per run, sampled CPU s,
    how)] for every method of one dataset of one target."""
    from mlkit import experiment
    from mlkit.datasets import load_dataset
    from mlkit.registry import METHODS
    from mlkit.targets import resolve_target, target_spec

    warnings.simplefilter("ignore")
    target = resolve_target(target_name)
    _, spec = target_spec(target)
    ds = next(d for d in spec.datasets if d.display == ds_display)
    try:
        data = load_dataset(ds.name, path=ds.path, format=ds.format, params=ds.params,
                            test_path=ds.test_path)
    except Exception as exc:                       # absent (when_present) or not fetchable
        reason = str(exc).split(";")[0]            # the first clause: what is missing where
        return [(target_name, ds_display, None, 0, np.nan, 0.0, reason)]
    splits = experiment.make_splits(data, ds.protocol_over(spec.protocol))
    seed = zlib.crc32(f"{target_name}|{ds_display}".encode())
    rng = np.random.default_rng(seed)
    split = splits[rng.integers(len(splits))]
    out = []
    for spec_method in spec.methods:
        method = ds.method_as_run(spec_method)
        recorded = recorded_per_run.get(method.display, np.nan)
        _empty_memos()          # only a row's own warm fits may be shared with it
        c0 = time.process_time()
        with threadpool_limits(limits=1):
            if method.grid and split.validation is None:
                est = experiment.build_estimator(method, split, METHODS.get(method.name))
                train = data.subset(split.train)
                if method.grid_n_xv_cap is not None and "n_xv" in method.grid:
                    est.set_params(param_grid=experiment.capped_n_xv_grid(est, train))
                warm = _warm_source(spec, ds, method, split)
                sampled = _cell_times(est, train.inputs, np.asarray(train.target), rng,
                                      max_cells, budget_s, warm=warm)
                times, n_folds, n_cells, n_inner = sampled[:4]
                per_run = _grid_run_estimate(times, n_folds, n_cells, n_inner, len(train),
                                             refit_cell=sampled[4] if warm is not None
                                             else None)
                how = f"{len(times)} of {n_folds * n_cells} cells" + (
                    f", beside {method.seed_from}" if warm is not None else "")
            elif np.isfinite(recorded) and recorded > max_run_s:
                per_run, how = recorded, "carried"
            else:
                experiment._fit_and_score(data, method, split, spec.metrics, spec.curves,
                                          METHODS.get(method.name))
                per_run, how = np.nan, "1 run"
        sampled = time.process_time() - c0
        if how == "1 run":
            per_run = sampled
        n_runs = len(splits)
        out.append((target_name, ds_display, method.display, n_runs, per_run, sampled, how))
    return out


# -- the recorded costs --------------------------------------------------------------------
def recorded_costs(target):
    """{(dataset, method): [CPU seconds of every committed run]} of a target."""
    from mlkit.experiment import load_records
    from mlkit.targets import results_dir

    costs = {}
    for rec in load_records(results_dir(target)):
        t = rec.get("timings", {})
        cpu = t.get("cpu_s")
        if cpu is None:
            cpu = t.get("fit_s", 0.0) + t.get("predict_s", 0.0)
        costs.setdefault((rec["dataset"], rec["method"]), []).append(float(cpu))
    return costs


# -- MI-Kernel's grid search against a plain one -----------------------------------------------
def _plain_mikernel_search(bags, y, folds, gammas, Cs):
    """The obvious numpy + scikit-learn grid search of an averaged-set-kernel SVM: per fold,
    standardise on its training instances, distances once, a set kernel per gamma, an SVC
    per C; refit at the best mean accuracy. Returns (best (gamma, C), refitted SVC)."""
    from sklearn.svm import SVC

    def stack(bs):
        sizes = np.array([len(b) for b in bs])
        return np.vstack(bs), np.r_[0, np.cumsum(sizes)]

    def standardise(X_tr, X_te):
        mean, sd = X_tr.mean(axis=0), X_tr.std(axis=0)
        sd[sd == 0] = 1.0
        return (X_tr - mean) / sd, (X_te - mean) / sd

    def sqdist(A, B):
        D = -2.0 * A @ B.T
        D += (A * A).sum(1)[:, None]
        D += (B * B).sum(1)[None, :]
        return np.maximum(D, 0.0)

    def set_k(D, gamma, off_r, off_c):
        K = np.exp(-gamma * D)
        K = np.add.reduceat(K, off_r[:-1], axis=0) / np.diff(off_r)[:, None]
        return np.add.reduceat(K, off_c[:-1], axis=1) / np.diff(off_c)[None, :]

    def ovr_fit(K, labels, C):
        return {c: SVC(kernel="precomputed", C=C).fit(K, np.where(labels == c, 1, -1))
                for c in np.unique(labels)} if len(np.unique(labels)) > 2 else \
            {None: SVC(kernel="precomputed", C=C).fit(K, labels)}

    def predict(models, K, classes):
        if None in models:
            return models[None].predict(K)
        scores = np.column_stack([models[c].decision_function(K) for c in classes])
        return classes[scores.argmax(1)]

    acc = np.zeros((len(Cs), len(gammas)))     # ParameterGrid's order: C outer, gamma inner
    for train, test in folds:
        X_tr, off_tr = stack([bags[i] for i in train])
        X_te, off_te = stack([bags[i] for i in test])
        X_tr, X_te = standardise(X_tr, X_te)
        D_tr, D_te = sqdist(X_tr, X_tr), sqdist(X_te, X_tr)
        for a, gamma in enumerate(gammas):
            K_tr, K_te = set_k(D_tr, gamma, off_tr, off_tr), set_k(D_te, gamma, off_te, off_tr)
            classes = np.unique(y[train])
            for b, C in enumerate(Cs):
                models = ovr_fit(K_tr, y[train], C)
                acc[b, a] += np.mean(predict(models, K_te, classes) == y[test])
    b, a = np.unravel_index(np.argmax(acc / len(folds)), acc.shape)    # GridSearchCV's first best
    X, off = stack(bags)
    X, _ = standardise(X, X)
    models = ovr_fit(set_k(sqdist(X, X), gammas[a], off, off), y, Cs[b])
    return (gammas[a], Cs[b]), models


def mikernel_grid_vs_plain():
    """(ratio of CPU times mlkit / plain, both choices) on the first training part of
    MUSK2's Table I protocol, MI-Kernel's Table I grid, 3-fold CV."""
    from mlkit import experiment
    from mlkit.datasets import load_dataset
    from mlkit.registry import METHODS
    from mlkit.targets import resolve_target, target_spec

    _, spec = target_spec(resolve_target("sparsemi/table1"))
    ds = next(d for d in spec.datasets if d.name == "musk2")
    method = ds.method_as_run(next(m for m in spec.methods if m.display == "MI-Kernel"))
    data = load_dataset("musk2")
    split = experiment.make_splits(data, ds.protocol_over(spec.protocol))[0]
    train = data.subset(split.train)
    bags, y = list(train.inputs), np.asarray(train.target)
    with threadpool_limits(limits=1):
        search = experiment.build_estimator(method, split, METHODS.get(method.name))
        folds = list(search.cv.split(bags, y))
        c0 = time.process_time()
        search.fit(bags, y)
        ours = time.process_time() - c0
        c0 = time.process_time()
        chosen, _ = _plain_mikernel_search(bags, y, folds, list(method.grid["gamma"]),
                                           list(method.grid["C"]))
        plain = time.process_time() - c0
    mine = (search.best_params_["gamma"], search.best_params_["C"])
    return ours / plain, ours, plain, mine, chosen


# -- the other benches' figures ----------------------------------------------------------------
def _from_script(name, function, key, **kw):
    """``<key>`` of ``scripts/<name>.py``'s ``function(**kw)``, or nan when absent."""
    path = SCRIPTS / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        fn = getattr(module, function)
    except (AttributeError, ImportError, FileNotFoundError) as exc:
        print(f"{name}.{function}: not available ({exc})", file=sys.stderr)
        return np.nan
    return float(fn(**kw)[key])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--targets", default=None, help="comma-separated; default all")
    ap.add_argument("--max-cells", type=int, default=3, help="grid cells sampled per run")
    ap.add_argument("--budget-s", type=float, default=20.0,
                    help="CPU seconds after which no further cell of a run is sampled")
    ap.add_argument("--max-run-s", type=float, default=120.0,
                    help="runs recorded as costlier than this are carried, not timed")
    ap.add_argument("--rows", action="store_true",
                    help="also print every (target, dataset, method) estimate")
    ap.add_argument("--skip-others", action="store_true",
                    help="only the per-target estimates, not the other benches' figures")
    args = ap.parse_args(argv)

    from mlkit.targets import TARGETS, resolve_target, target_spec

    names = args.targets.split(",") if args.targets else TARGETS.names()
    tasks, recorded = [], {}
    for name in names:
        target = resolve_target(name)
        spec, run_spec = target_spec(target)
        if spec.runs_of:
            continue
        costs = recorded_costs(target)
        recorded[name] = sum(sum(v) for v in costs.values())
        for ds in run_spec.datasets:
            per_run = {m: float(np.mean(v)) for (d, m), v in costs.items() if d == ds.display}
            tasks.append(delayed(sample_dataset)(name, ds.display, args.max_cells,
                                                 args.budget_s, args.max_run_s, per_run))
    t0 = time.perf_counter()
    rows = [r for out in Parallel(n_jobs=args.jobs, verbose=0)(tasks) for r in out]
    if args.rows:
        for target, ds, method, n_runs, per_run, sampled, how in rows:
            print(f"{target} | {ds} | {method} | runs {n_runs} | est s/run {per_run:.1f} | "
                  f"total h {n_runs * per_run / 3600:.2f} | sampled {sampled:.0f} | {how}")
    by_target = {}
    for target, ds, method, n_runs, per_run, sampled, how in rows:
        agg = by_target.setdefault(target, {"est": 0.0, "sampled": 0.0, "carried": 0,
                                            "missing": []})
        agg["sampled"] += sampled
        if method is None:
            agg["missing"].append(f"{ds} ({how})")
            continue
        agg["est"] += n_runs * per_run if np.isfinite(per_run) else 0.0
        agg["carried"] += how == "carried"
    print(f"{'target':<22} {'ours CPU-h':>10} {'recorded CPU-h':>14} {'ratio':>6} "
          f"{'sampled s':>9} carried")
    for name in names:
        if name not in by_target:
            continue
        a = by_target[name]
        rec_h = recorded.get(name, 0.0) / 3600
        est_h = a["est"] / 3600
        print(f"{name:<22} {est_h:>10.2f} {rec_h:>14.2f} "
              f"{(est_h / rec_h if rec_h else np.nan):>6.2f} {a['sampled']:>9.0f} "
              f"{a['carried']}" + (f"  not loaded: {', '.join(a['missing'])}"
                                   if a["missing"] else ""))
    total_h = sum(a["est"] for a in by_target.values()) / 3600
    recorded_h = sum(recorded.get(n, 0.0) for n in by_target) / 3600
    sampled_s = sum(a["sampled"] for a in by_target.values())
    carried = sum(a["carried"] for a in by_target.values())
    print(f"sampling: {time.perf_counter() - t0:.0f} s wall, {sampled_s:.0f} s CPU")

    figures = {k: np.nan for k in ("mikernel_grid_vs_plain", "lm3fe_table1_s", "hfss_speedup",
                                   "mssboost_loss_share")}
    if "lm3fe/table1" in by_target:
        figures["lm3fe_table1_s"] = by_target["lm3fe/table1"]["est"] / 2
    if not args.skip_others:
        ratio, ours, plain, mine, theirs = mikernel_grid_vs_plain()
        print(f"MI-Kernel grid search on a MUSK2 training part: mlkit {ours:.1f} s CPU, plain "
              f"{plain:.1f} s; chosen (gamma, C) mlkit {mine}, plain {theirs}")
        if mine != theirs:
            print("  (the two searches chose different grid points)")
        figures["mikernel_grid_vs_plain"] = ratio
        figures["hfss_speedup"] = _from_script("bench_hfss", "measure_speedup",
                                               "hfss_speedup", quick=True)
        figures["mssboost_loss_share"] = _from_script("bench_mssboost", "measure_loss_share",
                                                      "mssboost_loss_share", quick=True)
    h = {n: by_target.get(n, {"est": np.nan})["est"] / 3600
         for n in ("sparsemi/table1", "sparsemi/fig3")}
    print(f"total_cpu_h={total_h:.2f} recorded_cpu_h={recorded_h:.2f} "
          f"sparsemi_table1_cpu_h={h['sparsemi/table1']:.2f} "
          f"sparsemi_fig3_cpu_h={h['sparsemi/fig3']:.2f} "
          f"mikernel_grid_vs_plain={figures['mikernel_grid_vs_plain']:.3f} "
          f"lm3fe_table1_s={figures['lm3fe_table1_s']:.0f} "
          f"hfss_speedup={figures['hfss_speedup']:.2f} "
          f"mssboost_loss_share={figures['mssboost_loss_share']:.3f} "
          f"carried_groups={carried} sampled_cpu_s={sampled_s:.0f}")


if __name__ == "__main__":
    main()

"""The inner solve of SparseMI and RSVM (the label-mean SVM of Eq. (12)-(16), Fu et al., TNNLS
2013): L-BFGS (the paper's solver, driven by mlkit's direct L-BFGS-B loop) against the finite
Newton method, and the direct loop against ``scipy.optimize.minimize``; CPU seconds with BLAS
on one thread (medians over ``--repeats``), on the real data.

Three parts (``--part``):

``solve``
    On COREL-20 (``--bags`` bags drawn at random, 20 one-vs-rest problems sharing the XVs),
    N_XV random training instances as XVs (each of ``--n-xv``) at gamma 0.1 and C 10: the
    three solve the same problems from zero; the direct loop must give bitwise
    ``minimize``'s beta, rho and values, Newton the same values to rounding (it ends lower).
``fits``
    Whole SparseMI fits (init random, t_max 50, as ``sparsemi/table1``) on the first inner
    training fold of the first split of ``sparsemi/table1`` (COREL-20: 666 bags, MUSK2: 61
    bags), for every cell of ``--n-xv`` x ``--C`` x ``--gamma``, with each solver: CPU
    seconds and where they go (the inner solve less its whitening, the whitening
    ``K_Z = L L^T``, ``B = A L^{-T}``, the kernels and bag means, the outer gradient of
    Eq. (18), the rest), timed around those calls.
``records``
    Recomputes committed runs of ``sparsemi/table1`` (the first ``--folds`` splits of each
    of ``--datasets``; methods ``--methods``) with Newton's method inside SparseMI and RSVM,
    without writing anything, and compares accuracy, the CV's choice and the objective with
    the records: a change of solver is a numerics revision, and this says what it changes.
    With ``--attribute``, a run that differs is rerun with L-BFGS on this machine too (the
    records were computed on other CPUs, which round differently).

Usage::

    MLKIT_DATA_MIRROR=../shared/data python scripts/bench_lbfgs.py --part solve
    MLKIT_DATA_MIRROR=../shared/data python scripts/bench_lbfgs.py --part fits \\
        --datasets corel20 --n-xv 10 100 500 1000 --C 0.1 10 1000 --gamma 0.01 1
    MLKIT_DATA_MIRROR=../shared/data python scripts/bench_lbfgs.py --part records \\
        --datasets musk1 --folds 10

Last line: ``solve``: ``lbfgs_speedup_cpu=<x> newton_speedup_cpu=<x> identical=<bool>
newton_rel_gap=<g>`` (at the last N_XV; the gap is max (L-BFGS - Newton) / Newton over the
problems); ``fits``: ``fit_speedup_cpu=<total L-BFGS / total Newton>``; ``records``:
``runs=<n> same_accuracy=<n> same_choice=<n>``.

Run time on this machine (2 cores, shared; CPU seconds, the wall time grows with the load):
``--part solve`` (the default) 6 CPU-s (20 s wall on the loaded machine) and ``--part fits
--n-xv 100`` 13 CPU-s, measured; ``--part fits`` (N_XV 100 and 1000) about 1 CPU-minute,
estimated from the solve times (the N_XV = 1000 solve costs about 6x the N_XV = 100 one).
``--part records`` reruns whole grid searches: one COREL-20 split of SparseMI about 3 CPU-hours
and one MUSK1 split about 4 CPU-minutes, from the runs' recorded fit times (not measured
here). The peers, ``scipy.optimize.minimize`` and mlkit's Newton solver, need no extra.
"""

import argparse
import time
import warnings
from collections import defaultdict
from contextlib import contextmanager

import numpy as np
from threadpoolctl import threadpool_limits

from mlkit.datasets import load_dataset
from mlkit.experiment import _fit_and_score_run, cv_splitter, make_splits, method_seed
from mlkit.kernels import bag_reduce, rbf_kernel
from mlkit.methods.mi import RSVM, SparseMI, _label_mean, _lbfgs, sparsemi
from mlkit.methods.mi._label_mean import KZ_RIDGE, fit_label_mean_svm
from mlkit.store import RunStore
from mlkit.targets import resolve_target, results_dir, target_spec

TARGET = "sparsemi/table1"


def _cpu(fn, repeats):
    """(last result, median CPU seconds) of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return out, float(np.median(times))


@contextmanager
def _solver(name):
    """SparseMI and RSVM with ``name`` as their inner solver."""
    saved = SparseMI.inner_solver, RSVM.inner_solver
    SparseMI.inner_solver = RSVM.inner_solver = name
    try:
        yield
    finally:
        SparseMI.inner_solver, RSVM.inner_solver = saved


def _table():
    _, spec = target_spec(resolve_target(TARGET))
    return spec


# -- solve ------------------------------------------------------------------------------------
def part_solve(args):
    data = load_dataset("corel20")
    rng = np.random.RandomState(0)
    n_bags = min(args.bags, len(data.target))
    keep = np.sort(rng.choice(len(data.target), size=n_bags, replace=False))
    bags = [data.inputs[i] for i in keep]
    X = np.vstack(bags)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    offsets = np.r_[0, np.cumsum([len(b) for b in bags])]
    y = np.asarray(data.target)[keep]
    Y = np.where(y[:, None] == np.unique(y)[None, :], 1.0, -1.0)
    print(f"COREL-20 (real data): {n_bags} bags, {len(X)} instances, {Y.shape[1]} problems; "
          "gamma 0.1, C 10; CPU seconds, BLAS on one thread")
    identical = True
    for n_xv in args.n_xv:
        Z = X[np.sort(rng.choice(len(X), size=min(n_xv, len(X)), replace=False))]
        A = bag_reduce(rbf_kernel(X, Z, 0.1), offsets, "mean")
        K_z = rbf_kernel(Z, gamma=0.1) + KZ_RIDGE * np.eye(len(Z))
        _lbfgs._STATE["fast"] = True
        fast, fast_cpu = _cpu(lambda: fit_label_mean_svm(A, Y, K_z, 10.0), args.repeats)
        _lbfgs._STATE["fast"] = False
        ref, ref_cpu = _cpu(lambda: fit_label_mean_svm(A, Y, K_z, 10.0), args.repeats)
        del _lbfgs._STATE["fast"]
        newton, newton_cpu = _cpu(lambda: fit_label_mean_svm(A, Y, K_z, 10.0, solver="newton"),
                                  args.repeats)
        same = all(np.array_equal(a, b) for a, b in zip(fast, ref))
        identical &= same
        gap = float(np.max((fast[2] - newton[2]) / newton[2]))
        print(f"N_XV {n_xv:5d}: minimize {ref_cpu:.3f} s, direct L-BFGS loop {fast_cpu:.3f} s "
              f"(bitwise minimize's: {same}), Newton {newton_cpu:.3f} s; Newton's values "
              f"lower by up to {gap:.1e} (relative)")
    print(f"lbfgs_speedup_cpu={ref_cpu / fast_cpu:.2f} newton_speedup_cpu="
          f"{fast_cpu / newton_cpu:.2f} identical={identical} newton_rel_gap={gap:.1e}")


# -- fits -------------------------------------------------------------------------------------
def inner_fold(spec, name):
    """(bags, labels, seed) of the first inner training fold of the first split: what
    SparseMI's 3-fold CV fits first in ``sparsemi/table1``."""
    ds = next(d for d in spec.datasets if d.name == name)
    data = load_dataset(name)
    split = make_splits(data, ds.protocol_over(spec.protocol))[0]
    seed = method_seed(split.seed, "SparseMI") % (2**31)
    train = data.subset(split.train)
    bags, y = list(train.inputs), np.asarray(train.target)
    rows, _ = next(cv_splitter(3, seed).split(np.zeros((len(y), 1)), y))
    return [bags[i] for i in rows], y[rows], seed


class _Parts:
    """CPU seconds spent in the calls of a SparseMI fit, by part (wrappers around the
    module-level names the fit calls; ~100 calls per fit, so no measurable overhead)."""

    PARTS = ("inner solve", "whitening", "kernels, bag means", "outer gradient")

    def __init__(self):
        self.cpu = defaultdict(float)

    def _wrap(self, module, name, part):
        fn = getattr(module, name)

        def timed(*args, **kwargs):
            t0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.cpu[part] += time.process_time() - t0
        return fn, timed

    @contextmanager
    def timing(self):
        wraps = [(sparsemi, "fit_label_mean_svm", "inner solve"),
                 (_label_mean, "_whiten", "whitening"),
                 (sparsemi._DenseGeometry, "kernels", "kernels, bag means"),
                 (sparsemi, "bag_reduce", "kernels, bag means"),
                 (sparsemi, "_objective_gradient", "outer gradient")]
        saved = []
        for module, name, part in wraps:
            fn, timed = self._wrap(module, name, part)
            saved.append((module, name, fn))
            setattr(module, name, timed)
        try:
            yield self
        finally:
            for module, name, fn in saved:
                setattr(module, name, fn)

    def shares(self, total):
        """{part: share of total}; the inner solve less its whitening, and "rest"."""
        cpu = dict(self.cpu)
        cpu["inner solve"] = cpu.get("inner solve", 0.0) - cpu.get("whitening", 0.0)
        cpu["rest"] = total - sum(cpu.values())
        return {k: v / total for k, v in cpu.items()}


def part_fits(args):
    spec = _table()
    totals = defaultdict(float)
    for name in args.datasets:
        bags, y, seed = inner_fold(spec, name)
        print(f"\n{name}: first inner fold of {TARGET}'s first split, {len(bags)} bags, "
              f"{sum(len(b) for b in bags)} instances; SparseMI init random, t_max 50; CPU s "
              f"(median of {args.repeats}) and shares: inner solve / whitening / kernels / "
              "outer gradient / rest")
        for n_xv in args.n_xv:
            for C in args.C:
                for gamma in args.gamma:
                    line = [f"  n_xv {n_xv:4d} C {C:g} gamma {gamma:g}:"]
                    for solver in args.solvers:
                        def fit():
                            model = SparseMI(n_xv=n_xv, C=C, gamma=gamma, init="random",
                                             t_max=50, random_state=seed)
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                return model.fit(bags, y)
                        with _solver(solver):
                            times = []
                            for _ in range(args.repeats):
                                parts = _Parts()
                                with parts.timing():
                                    t0 = time.process_time()
                                    model = fit()
                                    times.append(time.process_time() - t0)
                            cpu = float(np.median(times))
                            shares = parts.shares(times[-1])
                        totals[solver] += cpu
                        line.append(f"{solver} {cpu:7.2f} s (" + " / ".join(
                            f"{100 * shares.get(p, 0.0):.0f}" for p in _Parts.PARTS + ("rest",))
                            + f" %, {model.n_iter_} it, g {model.objective_[-1]:.10g})")
                    print("  ".join(line), flush=True)
    if {"lbfgs", "newton"} <= set(totals):
        print(f"fit_speedup_cpu={totals['lbfgs'] / totals['newton']:.2f}")


# -- records ----------------------------------------------------------------------------------
def part_records(args):
    spec = _table()
    records = {(r["dataset"], r["method"], r["repeat"], r["fold"]): r
               for r in RunStore(results_dir(resolve_target(TARGET))).records()}
    n = same_acc = same_choice = 0
    for ds in (d for d in spec.datasets if d.name in args.datasets):
        data = load_dataset(ds.name)
        splits = make_splits(data, ds.protocol_over(spec.protocol))[:args.folds]
        for method in (ds.method_as_run(m) for m in spec.methods if m.display in args.methods):
            for split in splits:
                record = records.get((ds.display, method.display, split.repeat, split.fold))
                if record is None:
                    print(f"  {ds.display} {method.display} {split.name}: no record")
                    continue
                ours, cpu = _rerun(data, method, split, "newton")
                acc, ref = ours["metrics"]["accuracy"], record["metrics"]["accuracy"]
                chosen, ref_chosen = ours.get("chosen"), record.get("chosen")
                n += 1
                same_acc += acc == ref
                same_choice += chosen == ref_chosen
                print(f"  {ds.display} {method.display} {split.name}: accuracy {acc:.4f} "
                      f"(record {ref:.4f}), chosen {chosen} (record {ref_chosen}); final g "
                      f"{_final_objective(ours):.10g} (record {_final_objective(record):.10g});"
                      f" CPU {cpu:.1f} s (record "
                      f"{record['timings'].get('cpu_s', float('nan')):.1f})", flush=True)
                if args.attribute and (acc, chosen) != (ref, ref_chosen):
                    # the committed solver, here: does this machine alone differ?
                    old, cpu = _rerun(data, method, split, "lbfgs")
                    print(f"    with L-BFGS here: accuracy {old['metrics']['accuracy']:.4f}, "
                          f"chosen {old.get('chosen')}, final g {_final_objective(old):.10g};"
                          f" CPU {cpu:.1f} s", flush=True)
    print(f"runs={n} same_accuracy={same_acc} same_choice={same_choice}")


def _rerun(data, method, split, solver):
    """(the run's record fields, CPU seconds) of one run with ``solver`` inside."""
    with _solver(solver), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        out = _fit_and_score_run(data, method, split, ["accuracy"], False)
        return out, time.process_time() - t0


def _final_objective(record):
    """g at the end of SparseMI's fit (NaN for a record without one)."""
    objective = record.get("model", {}).get("objective")
    return float("nan") if not objective else float(objective[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("solve", "fits", "records"), default="solve")
    parser.add_argument("--bags", type=int, default=700, help="solve: COREL-20 bags")
    parser.add_argument("--n-xv", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--C", type=float, nargs="+", default=[10.0])
    parser.add_argument("--gamma", type=float, nargs="+", default=[1.0])
    parser.add_argument("--solvers", nargs="+", default=["lbfgs", "newton"],
                        choices=_label_mean.SOLVERS)
    parser.add_argument("--datasets", nargs="+", default=["corel20"])
    parser.add_argument("--methods", nargs="+", default=["SparseMI"],
                        help="records: the table's method labels")
    parser.add_argument("--folds", type=int, default=1, help="records: splits per dataset")
    parser.add_argument("--attribute", action="store_true",
                        help="records: rerun with L-BFGS here the runs Newton changes")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    with threadpool_limits(limits=1, user_api="blas"):
        {"solve": part_solve, "fits": part_fits, "records": part_records}[args.part](args)


if __name__ == "__main__":
    main()

"""MI-SVM's fit and grid search: the current code against a baseline revision's, CPU time.

MI-SVM (Andrews et al., NIPS 2002; the bag-slack QP of every witness iteration solved by
``mlkit.methods.mi.misvm.group_slack_svm``) is fitted on the inner 3-fold CV training part of
``--splits`` outer splits of SparseMI Table I's protocol (50/50 stratified splits on
COREL-20, 10-fold CV on MUSK2), once with this checkout's ``mlkit.methods.mi.misvm`` and once
with the module as it was at ``--baseline`` (read with ``git show`` and loaded beside the
current one). Both see the same standardised bags, so their numbers must agree: the script
checks that the decision values on the inner test part are equal (bit for bit unless
``--atol`` says otherwise) and stops with an error line when they are not.

Per fit: one grid cell (``--gamma``, ``--C``), CPU seconds of each side, median over the
splits. Per grid: the ``--grid-gammas`` x ``--grid-Cs`` cells of one inner fold fitted in one
:func:`mlkit.kernels.shared_work` scope (as the grid search does, so distances, and in the
current code the kernel of each gamma, are shared), on the first split. BLAS is limited to
one thread. The last line::

    corel20_fit_ratio=<old/new> musk2_fit_ratio=<old/new> corel20_grid_ratio=<old/new>
    musk2_grid_ratio=<old/new> corel20_fit_cpu_s=<new> corel20_fit_cpu_s_old=<old> ...

Run time on this machine (2 cores, shared with other work): about 6 CPU-minutes with
``--splits 3``, estimated from its parts as measured (COREL-20: 21.3 + 7.7 CPU-s per fit on
each side x 3 splits, 172 + 56 CPU-s for the two 4-cell grids; MUSK2 about 20 CPU-s). It
needs a git clone (``git show`` reads the baseline module); the peer is mlkit's own former
solver, as no MI-SVM release exists on PyPI.

Usage::

    MLKIT_DATA_MIRROR=../shared/data python scripts/bench_misvm.py --splits 3
"""

import argparse
import subprocess
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from mlkit.config import ProtocolSpec
from mlkit.datasets import load_dataset
from mlkit.experiment import cv_folds, make_splits
from mlkit.kernels import shared_work
from mlkit.methods.mi import MISVM

ROOT = Path(__file__).resolve().parents[1]
MODULE = "mlkit/methods/mi/misvm.py"
PROTOCOLS = {
    "corel20": dict(split="holdout", test_size=0.5, stratify=True),
    "musk2": dict(split="cv", n_folds=10, stratify=True),
}


def baseline_class(rev):
    """MI-SVM as defined in ``mlkit/methods/mi/misvm.py`` at git revision ``rev``, loaded as
    a module of the ``mlkit.methods.mi`` package (its registrations left out)."""
    try:
        source = subprocess.run(["git", "show", f"{rev}:{MODULE}"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"bench_misvm: cannot read {MODULE} at {rev!r}: "
                         f"{exc.stderr.strip()}") from None
    source = "\n".join(line for line in source.splitlines()
                       if not line.startswith(("METHODS.register", "                 family=")))
    module = types.ModuleType("mlkit.methods.mi._misvm_baseline")
    module.__package__ = "mlkit.methods.mi"
    exec(compile(source, f"{rev}:{MODULE}", "exec"), module.__dict__)
    return module.MISVM


def inner_folds(name, n_splits, seed):
    """[(inner training part, inner test part)] of the first inner 3-fold CV fold of each of
    the first ``n_splits`` outer splits (dataset subsets)."""
    data = load_dataset(name)
    repeats = n_splits if PROTOCOLS[name]["split"] == "holdout" else 1
    splits = make_splits(data, ProtocolSpec(seed=seed, repeats=repeats,
                                            **PROTOCOLS[name]))[:n_splits]
    out = []
    for split in splits:
        part = data.subset(split.train)
        train, test = cv_folds(len(part), 3, split.seed % 2**31,
                               stratify=np.asarray(part.stratify))[0]
        out.append((part.subset(train), part.subset(test)))
    return out


def timed_fit(cls, params, train, test):
    """(CPU seconds of the fit, decision values on ``test``)."""
    est = cls(**params)
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(train.inputs, np.asarray(train.target))
    cpu = time.process_time() - c0
    return cpu, est.decision_function(test.inputs)


def timed_grid(cls, cells, train, test):
    """(CPU seconds of all ``cells`` fitted and scored in one shared_work scope,
    [decision values])."""
    values = []
    c0 = time.process_time()
    with shared_work(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for params in cells:
            est = cls(**params).fit(train.inputs, np.asarray(train.target))
            values.append(est.decision_function(test.inputs))
    return time.process_time() - c0, values


def check_equal(name, new, old, atol):
    """Stop with one error line when the decision values differ by more than ``atol``."""
    for u, v in zip(new if isinstance(new, list) else [new],
                    old if isinstance(old, list) else [old]):
        gap = float(np.max(np.abs(u - v)))
        if gap > atol:
            raise SystemExit(f"bench_misvm: {name}: decision values differ from the baseline "
                             f"by {gap:.3g} (> atol {atol:g})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["corel20", "musk2"],
                        choices=sorted(PROTOCOLS))
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", default="a5ddb974",
                        help="git revision of the baseline misvm.py (default: the last one "
                             "with the per-step recomputing SMO)")
    parser.add_argument("--gamma", type=float, default=0.1)
    parser.add_argument("--C", type=float, default=10.0)
    parser.add_argument("--grid-gammas", type=float, nargs="+", default=[0.01, 0.1])
    parser.add_argument("--grid-Cs", type=float, nargs="+", default=[1.0, 100.0])
    parser.add_argument("--atol", type=float, default=0.0)
    args = parser.parse_args(argv)
    if args.splits < 1:
        raise SystemExit("bench_misvm: --splits must be at least 1")
    old_cls = baseline_class(args.baseline)
    cells = [{"gamma": g, "C": c} for g in args.grid_gammas for c in args.grid_Cs]
    out = {}
    with threadpool_limits(1):
        for name in args.datasets:
            folds = inner_folds(name, args.splits, args.seed)
            new_t, old_t = [], []
            for k, (train, test) in enumerate(folds):
                params = {"gamma": args.gamma, "C": args.C}
                t_new, f_new = timed_fit(MISVM, params, train, test)
                t_old, f_old = timed_fit(old_cls, params, train, test)
                check_equal(name, f_new, f_old, args.atol)
                new_t.append(t_new)
                old_t.append(t_old)
                print(f"{name} split {k}: fit {params}: {t_new:.1f} s CPU (baseline "
                      f"{t_old:.1f} s, x{t_old / t_new:.2f}), same decision values",
                      flush=True)
            g_new, v_new = timed_grid(MISVM, cells, *folds[0])
            g_old, v_old = timed_grid(old_cls, cells, *folds[0])
            check_equal(name, v_new, v_old, args.atol)
            print(f"{name}: grid of {len(cells)} cells, one inner fold: {g_new:.1f} s CPU "
                  f"(baseline {g_old:.1f} s, x{g_old / g_new:.2f}), same decision values",
                  flush=True)
            out[f"{name}_fit_ratio"] = float(np.median(old_t) / np.median(new_t))
            out[f"{name}_grid_ratio"] = g_old / g_new
            out[f"{name}_fit_cpu_s"] = float(np.median(new_t))
            out[f"{name}_fit_cpu_s_old"] = float(np.median(old_t))
            out[f"{name}_grid_cpu_s"] = g_new
            out[f"{name}_grid_cpu_s_old"] = g_old
    print(" ".join(f"{k}={v:.3g}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

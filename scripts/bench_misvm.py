"""MI-SVM's fit and grid search: the current code against a baseline revision's, CPU time.

MI-SVM (Andrews et al., NIPS 2002; the bag-slack QP of every witness iteration solved by
``mlkit.methods.mi.misvm.group_slack_svm``, its SMO steps compiled with numba) is fitted on
the inner 3-fold CV training part of ``--splits`` outer splits of SparseMI Table I's protocol
(50/50 stratified splits on COREL-20, 20 one-vs-rest problems; 10-fold CV on MUSK2), once
with this checkout's ``mlkit.methods.mi.misvm`` and once with the module as it was at
``--baseline`` (read with ``git show`` and loaded beside the current one; by default the last
revision whose SMO steps were numpy calls, the oracle of tests/test_group_slack_smo.py). Both
see the same standardised bags, so their numbers must agree: the script checks that the
decision values on the inner test part are equal (bit for bit unless ``--atol`` says
otherwise) and stops with an error line when they are not.

Per fit: one grid cell (``--gamma``, ``--C``), CPU seconds of each side
(``time.process_time``, BLAS limited to one thread), median over the splits, and the CPU
seconds spent inside the QP solver (``*_smo_cpu_s``). The compiled code is warmed up by
small fits before any timing (its first calls in a process load it from numba's cache or
compile it: ``jit_first_call_cpu_s``; a fresh compile of the SMO, per specialisation, is
timed apart: ``jit_compile_cpu_s``). Per grid: the ``--grid-gammas`` x ``--grid-Cs``
cells of one inner fold fitted in one :func:`mlkit.kernels.shared_work` scope (as the grid
search does, so distances and the kernel of each gamma are shared), on the first split. The
last line::

    corel20_fit_ratio=<old/new> corel20_grid_ratio=<old/new> corel20_fit_cpu_s=<new>
    corel20_fit_cpu_s_old=<old> ... corel20_smo_cpu_s=<new> corel20_smo_cpu_s_old=<old>
    ... musk2_... smo_speedup=<old/new SMO CPU over all fits> jit_first_call_cpu_s=...
    jit_compile_cpu_s=...

Run time on this machine (2 cores, shared with other work): about 2 CPU-minutes (5 minutes
wall) with ``--splits 3``, as measured (COREL-20: 2.0 + 8.1 CPU-s per fit on the two sides x
3 splits, 15 + 62 CPU-s for the two 4-cell grids; MUSK2: 1.0 + 1.2 CPU-s per fit x 3, 2 + 4
CPU-s for the grids; the warm-up, loading and splitting the data sets the rest).
It needs a git clone (``git show`` reads the baseline module); the peer is mlkit's own former
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
from mlkit.methods.mi import _smo
from mlkit.methods.mi import misvm as misvm_module

ROOT = Path(__file__).resolve().parents[1]
MODULE = "mlkit/methods/mi/misvm.py"
PROTOCOLS = {
    "corel20": dict(split="holdout", test_size=0.5, stratify=True),
    "musk2": dict(split="cv", n_folds=10, stratify=True),
}


def baseline_module(rev):
    """``mlkit/methods/mi/misvm.py`` at git revision ``rev``, loaded as a module of the
    ``mlkit.methods.mi`` package (its registrations left out)."""
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
    return module


class SMOClock:
    """Replaces ``module.group_slack_svm`` by itself timed: ``cpu`` accumulates the CPU
    seconds spent in the bag-slack QP solver (MI-SVM's fit looks the solver up in its
    module's namespace at every call)."""

    def __init__(self, module):
        self.solver = module.group_slack_svm
        self.cpu = 0.0
        module.group_slack_svm = self

    def __call__(self, *args, **kwargs):
        c0 = time.process_time()
        try:
            return self.solver(*args, **kwargs)
        finally:
            self.cpu += time.process_time() - c0


def jit_costs():
    """(CPU seconds of the compiled code's first calls in this process, loaded from numba's
    cache when it holds them, else compiled; CPU seconds of compiling the SMO afresh, per
    specialisation (array layouts) the warm-up made): the
    first is paid once per process, the second once per installation; neither is in the
    fit timings, which follow this warm-up (small MI-SVM fits, binary and one-vs-rest,
    inside and outside a shared_work scope, so every specialisation the timings use is
    loaded)."""
    rng = np.random.default_rng(0)
    bags = [rng.normal(size=(3, 2)) + (k % 3) for k in range(12)]
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for labels in (np.arange(12) % 2, np.arange(12) % 3):
            MISVM(C=1.0, gamma=0.5).fit(bags, labels)
            with shared_work():
                MISVM(C=1.0, gamma=0.5).fit(bags, labels)
    first = time.process_time() - c0
    n_sigs = len(_smo.smo_steps.signatures)
    c0 = time.process_time()
    _smo.smo_steps.recompile()          # afresh (numba then rewrites its cache)
    return first, (time.process_time() - c0) / n_sigs


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
    parser.add_argument("--baseline", default="bb292403",
                        help="git revision of the baseline misvm.py (default: the last one "
                             "with the SMO steps in numpy)")
    parser.add_argument("--gamma", type=float, default=0.1)
    parser.add_argument("--C", type=float, default=10.0)
    parser.add_argument("--grid-gammas", type=float, nargs="+", default=[0.01, 0.1])
    parser.add_argument("--grid-Cs", type=float, nargs="+", default=[1.0, 100.0])
    parser.add_argument("--atol", type=float, default=0.0)
    args = parser.parse_args(argv)
    if args.splits < 1:
        raise SystemExit("bench_misvm: --splits must be at least 1")
    old_module = baseline_module(args.baseline)
    old_cls = old_module.MISVM
    cells = [{"gamma": g, "C": c} for g in args.grid_gammas for c in args.grid_Cs]
    out = {}
    smo_new_total = smo_old_total = 0.0
    with threadpool_limits(1):
        jit_first, jit_compile = jit_costs()
        print(f"compiled SMO: first call {jit_first:.2f} s CPU (numba's cache or a compile), "
              f"a fresh compile {jit_compile:.2f} s CPU; neither is in the timings below",
              flush=True)
        compiled = {f: len(f.signatures) for f in (_smo.smo_steps, _smo.gather_block)}
        clock_new, clock_old = SMOClock(misvm_module), SMOClock(old_module)
        for name in args.datasets:
            folds = inner_folds(name, args.splits, args.seed)
            new_t, old_t, smo_new, smo_old = [], [], [], []
            for k, (train, test) in enumerate(folds):
                params = {"gamma": args.gamma, "C": args.C}
                clock_new.cpu = clock_old.cpu = 0.0
                t_new, f_new = timed_fit(MISVM, params, train, test)
                t_old, f_old = timed_fit(old_cls, params, train, test)
                check_equal(name, f_new, f_old, args.atol)
                new_t.append(t_new)
                old_t.append(t_old)
                smo_new.append(clock_new.cpu)
                smo_old.append(clock_old.cpu)
                print(f"{name} split {k}: fit {params}: {t_new:.1f} s CPU (baseline "
                      f"{t_old:.1f} s, x{t_old / t_new:.2f}), of which the SMO "
                      f"{clock_new.cpu:.2f} s (baseline {clock_old.cpu:.2f} s, "
                      f"x{clock_old.cpu / max(clock_new.cpu, 1e-9):.1f}), same decision "
                      f"values", flush=True)
            smo_new_total += sum(smo_new)
            smo_old_total += sum(smo_old)
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
            out[f"{name}_smo_cpu_s"] = float(np.median(smo_new))
            out[f"{name}_smo_cpu_s_old"] = float(np.median(smo_old))
        for f, count in compiled.items():
            if len(f.signatures) > count:
                print(f"warning: {f.__name__} was specialised during the timings (the "
                      f"warm-up missed a type); its timings include a compile", flush=True)
        out["smo_speedup"] = smo_old_total / max(smo_new_total, 1e-9)
        out["jit_first_call_cpu_s"] = jit_first
        out["jit_compile_cpu_s"] = jit_compile
    print(" ".join(f"{k}={v:.3g}" for k, v in out.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

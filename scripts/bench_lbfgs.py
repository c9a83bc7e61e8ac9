"""The inner solve of SparseMI and RSVM (the label-mean SVM of Eq. (12)-(16), Fu et al., TNNLS
2013) with mlkit's direct L-BFGS-B loop against ``scipy.optimize.minimize(method="L-BFGS-B")``,
the obvious alternative, in one run.

On COREL-20 (the real set, ``--bags`` bags drawn at random, 20 one-vs-rest problems sharing the
XVs, as SparseMI's inner problem on it), for N_XV random training instances as XVs at
gamma 0.1 and C 10 (each N_XV of ``--n-xv``), both solve the same problems from zero; the
script checks that they return bitwise the same beta, rho and values, and prints CPU and
wall seconds (best of ``--repeats``) and their ratios.

Usage::

    MLKIT_DATA_MIRROR=../shared/data python scripts/bench_lbfgs.py

The last line: ``lbfgs_speedup_cpu=<x> lbfgs_speedup_wall=<x> identical=<bool>`` (the
ratios at the last N_XV; identical over all of them).
"""

import argparse
import time

import numpy as np

from mlkit.datasets import load_dataset
from mlkit.kernels import bag_reduce, rbf_kernel
from mlkit.methods.mi import _lbfgs
from mlkit.methods.mi._label_mean import KZ_RIDGE, fit_label_mean_svm, single_threaded_blas


def _timed(fn, repeats):
    best_cpu = best_wall = np.inf
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        out = fn()
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    return out, best_cpu, best_wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bags", type=int, default=700)
    parser.add_argument("--n-xv", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

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
          "gamma 0.1, C 10")
    all_identical = True
    with single_threaded_blas():
        for n_xv in args.n_xv:
            Z = X[np.sort(rng.choice(len(X), size=min(n_xv, len(X)), replace=False))]
            A = bag_reduce(rbf_kernel(X, Z, 0.1), offsets, "mean")
            K_z = rbf_kernel(Z, gamma=0.1) + KZ_RIDGE * np.eye(len(Z))
            _lbfgs._STATE["fast"] = True
            fast, fast_cpu, fast_wall = _timed(lambda: fit_label_mean_svm(A, Y, K_z, 10.0),
                                               args.repeats)
            _lbfgs._STATE["fast"] = False
            ref, ref_cpu, ref_wall = _timed(lambda: fit_label_mean_svm(A, Y, K_z, 10.0),
                                            args.repeats)
            del _lbfgs._STATE["fast"]
            identical = all(np.array_equal(a, b) for a, b in zip(fast, ref))
            all_identical &= identical
            print(f"N_XV {n_xv:5d}: direct loop {fast_cpu:.2f} s CPU ({fast_wall:.2f} s wall), "
                  f"scipy.optimize.minimize {ref_cpu:.2f} s CPU ({ref_wall:.2f} s wall): "
                  f"{ref_cpu / fast_cpu:.2f}x CPU, {ref_wall / fast_wall:.2f}x wall; "
                  f"identical: {identical}")
    print(f"lbfgs_speedup_cpu={ref_cpu / fast_cpu:.2f} lbfgs_speedup_wall={ref_wall / fast_wall:.2f} "
          f"identical={all_identical}")


if __name__ == "__main__":
    main()

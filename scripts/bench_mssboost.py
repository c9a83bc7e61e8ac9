"""Speed of MSSBoost against the Baseline it replaces (spec-mssboost claims 2 and 5).

Measured side by side in one run, on the same 75/25 split: training and prediction time of
Baseline (one RBF SVM per label on everything) and MSSBoost (T = 100 RBF-SVM base models,
by default the paper's TREC ratios rd = 0.2, rf = 0.1, chi-square filter), their Mean-AP,
the model-size ratio, and the share of MSSBoost's fit time spent in the joint Newton step
(Eqn 2) and in the joint loss (Eqn 1), each for all candidates x labels. Both score with the same BLAS kernel code.

    python scripts/bench_mssboost.py [--datasets trecvid-style corel5k] [--T 100]

The last line holds the figures of the first (TREC-shaped) dataset as key=value pairs.
Paper (TREC, Table 2 / Sec. 6.2): ~60x faster training, ~20x cheaper prediction at the
Baseline's Mean-AP.
"""

import argparse
import time

import numpy as np

import mlkit.methods.mssboost as mss
from mlkit.datasets import load_dataset
from mlkit.methods import BaselineSVM, MSSBoost
from mlkit.metrics import mean_average_precision_score

PARAMS = {"trecvid-style": {"random_state": 0}, "corel5k": {"max_labels": 39}}


class _Timer:
    """Accumulates the time spent in the wrapped functions."""

    def __init__(self):
        self.seconds = 0.0

    def wrap(self, fn):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        return timed


def _fit_predict(model, X_train, Y_train, X_test):
    start = time.perf_counter()
    model.fit(X_train, Y_train)
    fit_s = time.perf_counter() - start
    start = time.perf_counter()
    F = model.decision_function(X_test)
    return fit_s, time.perf_counter() - start, F


def bench(name, T, seed, rd, rf, gamma):
    data = load_dataset(name, params=PARAMS.get(name, {}))
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(data))
    cut = int(0.75 * len(idx))
    tr, te = idx[:cut], idx[cut:]
    X, Y = data.X, data.Y
    base = BaselineSVM(gamma=gamma)
    b_fit, b_pred, b_F = _fit_predict(base, X[tr], Y[tr], X[te])
    t_newton, t_loss = _Timer(), _Timer()
    newton, loss = mss.newton_step, mss.joint_loss
    mss.newton_step, mss.joint_loss = t_newton.wrap(newton), t_loss.wrap(loss)
    try:
        model = MSSBoost(T, base_learner="svm", rd=rd, rf=rf, gamma=gamma, chi2_filter=True,
                         random_state=seed)
        m_fit, m_pred, m_F = _fit_predict(model, X[tr], Y[tr], X[te])
    finally:
        mss.newton_step, mss.joint_loss = newton, loss
    out = {
        "dataset": name, "synthetic": data.synthetic,
        "fit_baseline_s": b_fit, "fit_mssboost_s": m_fit,
        "predict_baseline_s": b_pred, "predict_mssboost_s": m_pred,
        "train_speedup": b_fit / m_fit, "predict_speedup": b_pred / m_pred,
        "map_baseline": mean_average_precision_score(Y[te], b_F),
        "map_mssboost": mean_average_precision_score(Y[te], m_F),
        "size_ratio": base.model_size_ / model.model_size_,
        "newton_share": t_newton.seconds / m_fit,
        "loss_share": t_loss.seconds / m_fit,
    }
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["trecvid-style", "corel5k"])
    parser.add_argument("--T", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rd", type=float, default=0.2, help="paper's TREC value")
    parser.add_argument("--rf", type=float, default=0.1, help="paper's TREC value")
    parser.add_argument("--gamma", type=float, default=0.02,
                        help="rho chosen for TRECVID-style by mlkit reproduce mssboost/selection")
    args = parser.parse_args()
    results = [bench(name, args.T, args.seed, args.rd, args.rf, args.gamma)
               for name in args.datasets]
    for r in results:
        kind = "synthetic" if r["synthetic"] else "real"
        print(f"{r['dataset']} ({kind}): Baseline fit {r['fit_baseline_s']:.1f}s predict "
              f"{r['predict_baseline_s']:.2f}s Mean-AP {r['map_baseline']:.3f} | MSSBoost(T="
              f"{args.T}, rd={args.rd}, rf={args.rf}) fit {r['fit_mssboost_s']:.1f}s predict {r['predict_mssboost_s']:.2f}s "
              f"Mean-AP {r['map_mssboost']:.3f} | train {r['train_speedup']:.1f}x, predict "
              f"{r['predict_speedup']:.1f}x, model {r['size_ratio']:.1f}x smaller; of MSSBoost's fit: "
              f"Newton step {100 * r['newton_share']:.1f}%, joint loss "
              f"{100 * r['loss_share']:.1f}% "
              "(paper, TREC: ~60x train, ~20x predict, ~40x smaller)")
    first = results[0]
    print(" ".join(f"{k}={first[k]:.4g}" for k in
                   ("train_speedup", "predict_speedup", "map_baseline", "map_mssboost",
                    "newton_share", "loss_share")))


if __name__ == "__main__":
    main()

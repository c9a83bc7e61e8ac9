"""The rd/rf selection rule of MSSBoost (Sec. 6.2.1) on GridSearchCV."""

import numpy as np
import pytest

from mlkit.methods import BaselineSVM, Subspace
from mlkit.selection import select_ratios, smallest_ratios_reaching


def test_rule_picks_the_smallest_product_reaching_the_threshold():
    results = {"param_rd": [0.1, 0.1, 0.2, 0.2, 0.05], "param_rf": [0.1, 0.5, 0.1, 0.5, 0.5],
               "mean_test_score": [0.30, 0.50, 0.45, 0.60, 0.47]}
    assert smallest_ratios_reaching(0.44)(results) == 2      # rd*rf = 0.02
    assert smallest_ratios_reaching(0.46)(results) == 4
    assert smallest_ratios_reaching(0.48)(results) == 1      # 0.05 < 0.1
    assert smallest_ratios_reaching(0.99)(results) == 3      # none reaches: the best


def test_select_ratios_on_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 10))
    Y = np.column_stack([X[:, 0] + X[:, 1] > 0, X[:, 2] > 0.3]).astype(int)
    out = select_ratios(Subspace(gamma=0.1, random_state=0), BaselineSVM(gamma=0.1), X, Y,
                        rd_grid=[0.1, 0.5], rf_grid=[0.2, 0.5], fraction=0.8)
    assert out["threshold"] == 0.8 * out["baseline_map"]
    assert len(out["grid"]) == 4
    chosen = [g for g in out["grid"] if (g["rd"], g["rf"]) == (out["rd"], out["rf"])][0]
    assert out["reached"] == (chosen["mean_ap"] >= out["threshold"])
    if out["reached"]:
        smaller = [g for g in out["grid"] if g["rd"] * g["rf"] < out["rd"] * out["rf"]]
        assert all(g["mean_ap"] < out["threshold"] for g in smaller)


def _redundant_features(seed=0, n=300, m=40):
    """40 noisy copies of a 2-D latent point; labels are discs in the latent plane. Any few
    features carry the signal, so a subspace SVM is informative, but its squared distances are
    about rf times those over all features."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 2))
    X = Z[:, np.arange(m) % 2] + 0.7 * rng.normal(size=(n, m))
    centres = np.array([[0, 0], [1, 0], [0, -1]])
    Y = (((Z[:, None, :] - centres[None]) ** 2).sum(-1) < 1.0).astype(int)
    return X, Y


GAMMAS = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0]


def test_baseline_selection_is_sensible_and_reports_support_vectors():
    from mlkit.selection import select_baseline

    X, Y = _redundant_features()
    out = select_baseline(X, Y, gamma_grid=GAMMAS, C_grid=[1.0, 10.0])
    assert len(out["grid"]) == 14
    best = [r for r in out["grid"] if (r["gamma"], r["C"]) == (out["gamma"], out["C"])][0]
    assert best["mean_ap"] == out["mean_ap"] == max(r["mean_ap"] for r in out["grid"])
    # a width inside the grid, far better than the label frequencies (a random ranking)
    assert GAMMAS[0] < out["gamma"] < GAMMAS[-1]
    assert out["mean_ap"] > 0.85 > 2 * Y.mean(axis=0).max()
    # the widest kernels make every training point a support vector (a flat kernel cannot
    # separate): the support fraction reported for each setting shows it
    assert all(0 < r["sv_fraction"] <= 1 for r in out["grid"])
    widest = [r for r in out["grid"] if r["gamma"] == 1.0]
    assert all(r["sv_fraction"] > 0.95 for r in widest) and best["sv_fraction"] < 0.9


def test_base_models_get_their_own_wider_gamma_on_small_subspaces():
    """A subspace of M * rf features has squared distances about rf times the full ones, so the
    base model's best rho is larger than the Baseline's: reusing the Baseline's rho (what the
    configs did) leaves the base models with a nearly flat kernel."""
    from mlkit.selection import select_mssboost_settings

    X, Y = _redundant_features()
    out = select_mssboost_settings(X, Y, gamma_grid=GAMMAS[1:-1], C_grid=[1.0],
                                   rd_grid=[0.3, 0.6], rf_grid=[0.1, 0.5], fraction=0.8)
    assert out["threshold"] == pytest.approx(0.8 * out["baseline_map"])
    small = [g for g in out["grid"] if g["rf"] == 0.1]
    assert all(g["gamma"] >= 3 * out["baseline_gamma"] for g in small)
    # and the 80% rule: the chosen pair is the first reaching the threshold in the order
    # (rd * rf, rd); every pair is scored at its own best base-model setting
    order = sorted(out["grid"], key=lambda g: (g["rd"] * g["rf"], g["rd"]))
    first = next(g for g in order if g["mean_ap"] >= out["threshold"])
    assert out["reached"] and (out["rd"], out["rf"]) == (first["rd"], first["rf"])
    assert (out["gamma"], out["C"], out["subspace_map"]) == (first["gamma"], first["C"],
                                                             first["mean_ap"])
    assert 0 < out["baseline_sv_fraction"] < 1

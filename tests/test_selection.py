"""The rd/rf selection rule of MSSBoost (Sec. 6.2.1) on GridSearchCV."""

import numpy as np

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

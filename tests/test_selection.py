"""MSSBoost's settings by the paper's 2-fold CV rules (Sec. 6.2.1): the rd/rf rule (a
GridSearchCV refit callable), the Baseline's and the base models' own rho and C on the
runner's grid search, and the selection as a method."""

import json
from pathlib import Path

import numpy as np
import pytest

from mlkit.papers.mssboost.selection import ratio_rule, smallest_ratios_reaching


def test_rule_picks_the_smallest_product_reaching_the_threshold():
    grid = [{"rd": a, "rf": b, "mean_ap": m} for a, b, m in
            [(0.1, 0.1, 0.30), (0.1, 0.5, 0.50), (0.2, 0.1, 0.45), (0.2, 0.5, 0.60),
             (0.05, 0.5, 0.47)]]
    pick = lambda t: smallest_ratios_reaching(grid, t)
    assert pick(0.44) == (grid[2], True)      # rd*rf = 0.02
    assert pick(0.46) == (grid[4], True)      # 0.025, below 0.05
    assert pick(0.48) == (grid[1], True)      # rd*rf 0.05 each: then the smaller rd
    assert pick(0.99) == (grid[3], False)     # none reaches: the best


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
    from mlkit.papers.mssboost.selection import select_baseline

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
    from mlkit.papers.mssboost.selection import select_mssboost_settings

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


def test_a_label_with_one_class_in_a_fold_is_left_out_of_the_selection():
    """A rare label whose only positive falls in one fold's test part has one class in that
    fold's training part: it is left out of every fit and Mean-AP of the selection, which
    then chooses and scores exactly as without it."""
    from mlkit.papers.mssboost.selection import select_mssboost_settings
    from mlkit.runner.splits import cv_folds

    X, Y = _redundant_features(n=200)
    rare = np.zeros(len(Y), int)
    rare[cv_folds(len(Y), 2, 0)[0][1][0]] = 1        # in fold 0's test part only
    grids = dict(gamma_grid=[0.03, 0.3], C_grid=[1.0], rd_grid=[0.3], rf_grid=[0.5])
    assert (select_mssboost_settings(X, np.column_stack([Y, rare]), **grids)
            == select_mssboost_settings(X, Y, **grids))
    with pytest.raises(ValueError, match="no label has both classes"):
        select_mssboost_settings(X, rare, **grids)


def test_settings_method_records_its_choices_and_scores_with_the_chosen_baseline():
    from mlkit.methods import BaselineSVM
    from mlkit.metrics import mean_average_precision_score
    from mlkit.papers.mssboost.settings import MSSBoostSettings
    from mlkit.papers.mssboost.selection import select_mssboost_settings

    X, Y = _redundant_features()
    grids = dict(gamma_grid=[0.01, 0.1], C_grid=[1.0], base_gamma_grid=[0.1, 1.0],
                 base_C_grid=[1.0], rd_grid=[0.3, 0.6], rf_grid=[0.1, 0.5])
    est = MSSBoostSettings(**grids, random_state=0).fit(X[:200], Y[:200])
    direct = select_mssboost_settings(X[:200], Y[:200], **grids, random_state=0)
    rec = est.run_record_extras()
    for key in ("baseline_gamma", "baseline_C", "gamma", "C", "rd", "rf", "reached",
                "baseline_sv_fraction"):
        assert rec[key] == direct[key]
    assert len(rec["grid"]) == 4 and len(rec["baseline_grid"]) == 2
    ref = BaselineSVM(gamma=direct["baseline_gamma"], C=direct["baseline_C"]).fit(X[:200],
                                                                                  Y[:200])
    np.testing.assert_allclose(est.decision_function(X[200:]), ref.decision_function(X[200:]))
    assert mean_average_precision_score(Y[200:], est.decision_function(X[200:])) > 0.8
    with pytest.raises(ValueError, match="rd_grid"):
        MSSBoostSettings(**{**grids, "rd_grid": [0.5, 2.0]}).fit(X, Y)


def test_the_rule_can_score_the_mssboost_ensemble_on_the_same_folds():
    """scored_estimator: each pair's base-model rho, C come from the Subspace model's CV; the
    80% rule then reads the scored model's own CV Mean-AP at (rd, rf, rho, C), which is
    recomputed here fold by fold; with exhaustive=False the search stops at the chosen pair."""
    from sklearn.base import clone

    from mlkit.methods import MSSBoost
    from mlkit.metrics import mean_average_precision_score
    from mlkit.papers.mssboost.selection import select_base_model, select_mssboost_settings
    from mlkit.runner.splits import cv_folds

    X, Y = _redundant_features(n=200)
    scored = MSSBoost(n_estimators=6, random_state=0)
    grids = dict(gamma_grid=[0.03, 0.3], C_grid=[1.0], base_gamma_grid=[0.3, 3.0],
                 base_C_grid=[1.0], rd_grid=[0.2, 0.5], rf_grid=[0.2, 1.0], fraction=0.8)
    out = select_mssboost_settings(X, Y, **grids, scored_estimator=scored)
    assert out["scored"] == "MSSBoost" and len(out["grid"]) == 4
    folds = cv_folds(len(Y), 2, 0)
    for row in out["grid"]:
        sub = select_base_model(X, Y, rd=row["rd"], rf=row["rf"], gamma_grid=[0.3, 3.0],
                                C_grid=[1.0])
        assert (row["gamma"], row["C"], row["subspace_map"]) == (sub["gamma"], sub["C"],
                                                                 sub["mean_ap"])
        est = clone(scored).set_params(rd=row["rd"], rf=row["rf"], gamma=row["gamma"],
                                       C=row["C"])
        again = np.mean([mean_average_precision_score(
            Y[te], clone(est).fit(X[tr], Y[tr]).decision_function(X[te])) for tr, te in folds])
        assert row["mean_ap"] == pytest.approx(again, rel=1e-12)
    order = sorted(out["grid"], key=lambda g: (g["rd"] * g["rf"], g["rd"]))
    first = next((g for g in order if g["mean_ap"] >= out["threshold"]), None)
    assert first is not None and out["reached"]
    assert (out["rd"], out["rf"], out["scored_map"]) == (first["rd"], first["rf"],
                                                         first["mean_ap"])
    short = select_mssboost_settings(X, Y, **grids, scored_estimator=scored, exhaustive=False)
    assert (short["rd"], short["rf"]) == (out["rd"], out["rf"])
    assert short["grid"] == order[:order.index(first) + 1]
    # without a scored estimator the rule reads the Subspace model, as before
    plain = select_mssboost_settings(X, Y, **grids)
    assert plain["scored"] == "Subspace"
    assert all(g["mean_ap"] == g["subspace_map"] for g in plain["grid"])


def test_settings_method_scores_table2s_mssboost_when_asked():
    from mlkit.papers.mssboost.settings import MSSBoostSettings

    X, Y = _redundant_features(n=160)
    grids = dict(gamma_grid=[0.1], C_grid=[1.0], base_gamma_grid=[1.0], base_C_grid=[1.0],
                 rd_grid=[0.3], rf_grid=[0.5])
    est = MSSBoostSettings(**grids, scored="mssboost", random_state=0,
                           scored_params={"n_estimators": 4, "init": "zero"}).fit(X, Y)
    rec = est.run_record_extras()
    assert rec["scored"] == "MSSBoost" and rec["grid"][0]["mean_ap"] == rec["scored_map"]
    assert rec["scored_map"] != rec["subspace_map"]
    assert est._scored_estimator(0).get_params()["n_estimators"] == 4
    table2 = MSSBoostSettings(scored="mssboost")._scored_estimator(3).get_params()
    assert {k: table2[k] for k in ("n_estimators", "score_bound", "chi2_filter", "init",
                                   "random_state")} == dict(
        n_estimators=100, score_bound="clip", chi2_filter=True, init="zero", random_state=3)


def test_the_rule_is_a_grid_search_refit_callable():
    """ratio_rule(threshold) is GridSearchCV's refit contract (cv_results_ -> index): given
    to scikit-learn's GridSearchCV over (rd, rf) it picks the pair smallest_ratios_reaching
    picks from the same CV scores, and refits that pair."""
    from sklearn.model_selection import GridSearchCV

    from mlkit.methods import Subspace
    from mlkit.papers.mssboost.selection import mean_ap_scorer

    X, Y = _redundant_features(n=200)
    grid = {"rd": [0.2, 0.5], "rf": [0.1, 0.5, 1.0]}
    plain = GridSearchCV(Subspace(gamma=0.3, random_state=0), grid, cv=2,
                         scoring=mean_ap_scorer, refit=False).fit(X, Y)
    rows = [{**p, "mean_ap": m} for p, m in zip(plain.cv_results_["params"],
                                                 plain.cv_results_["mean_test_score"])]
    means = sorted(r["mean_ap"] for r in rows)
    for threshold in (means[0] - 1, means[2], means[-1], means[-1] + 1):
        search = GridSearchCV(Subspace(gamma=0.3, random_state=0), grid, cv=2,
                              scoring=mean_ap_scorer, refit=ratio_rule(threshold)).fit(X, Y)
        row, reached = smallest_ratios_reaching(rows, threshold)
        assert search.best_params_ == {"rd": row["rd"], "rf": row["rf"]}
        assert reached == (threshold <= means[-1])
        assert search.best_estimator_.get_params()["rd"] == row["rd"]


FIXTURE = Path(__file__).parent / "fixtures" / "mssboost_selection.json"


@pytest.mark.parametrize("case", sorted(json.loads(FIXTURE.read_text())))
def test_the_choices_are_those_of_the_former_hand_written_search(case):
    """The settings chosen, and every CV score, as the hand-written grid search that the
    runner's grid search replaced gave them (tests/fixtures/mssboost_selection.json: its
    output on these data, one case per branch of the rule)."""
    from mlkit.methods import MSSBoost
    from mlkit.papers.mssboost.selection import select_mssboost_settings

    stored = json.loads(FIXTURE.read_text())[case]
    X, Y = _redundant_features(n=200)
    Y = np.where(Y > 0, 1.0, -1.0)
    scored = None if stored["scored"] is None else MSSBoost(**stored["scored"])
    out = select_mssboost_settings(X, Y, random_state=0, scored_estimator=scored,
                                   **stored["params"])
    want = stored["settings"]
    for key in ("rd", "rf", "gamma", "C", "baseline_gamma", "baseline_C", "reached",
                "scored"):
        assert out[key] == want[key], key
    assert [(r["rd"], r["rf"], r["gamma"], r["C"]) for r in out["grid"]] == [
        (r["rd"], r["rf"], r["gamma"], r["C"]) for r in want["grid"]]
    assert [(r["gamma"], r["C"]) for r in out["baseline_grid"]] == [
        (r["gamma"], r["C"]) for r in want["baseline_grid"]]
    for got, exp in ((out, want), *zip(out["grid"], want["grid"]),
                     *zip(out["baseline_grid"], want["baseline_grid"])):
        for key, value in exp.items():
            if isinstance(value, float):
                assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key

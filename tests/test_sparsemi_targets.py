"""SparseMI's targets end to end: fig1 (toy bag features), fig2 (XVs from poor starting
points, drawn from the recorded runs) and claim 4, whose verdict follows fig2.yaml's
threshold; the bag features of Eq. (8) and the recorded-model scorer against the estimator."""

import shutil

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from scipy import stats

from mlkit.cli import cli
from mlkit.datasets import load_dataset
from mlkit.methods.mi import SparseMI
from mlkit.papers.sparsemi.data import make_sparsemi_toy
from mlkit.papers.sparsemi.renderers import bag_features, recorded_scores, toy_xvs

from .conftest import CONFIGS, assert_comparison_matches_tables


def _invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_toy_generator_matches_the_paper_description():
    d = make_sparsemi_toy(random_state=3)
    assert len(d.y) == 20 and d.y.sum() == 10 and np.all(np.diff(d.offsets) == 3)
    per_bag = np.add.reduceat(d.instance_labels, d.offsets[:-1])
    assert np.array_equal(per_bag, d.y)                         # 1 positive per positive bag
    s = d.instances.sum(axis=1)                                  # separable by x1 + x2 = 1
    assert s[d.instance_labels == 1].min() > 1 > s[d.instance_labels == 0].max()
    poor, good = toy_xvs(d.instances, d.instance_labels)
    assert poor.sum(axis=1).max() < 1 < good.sum(axis=1).min()


def test_bag_features_are_label_means_of_the_kernel():
    rng = np.random.default_rng(0)
    X, off = rng.normal(size=(7, 2)), np.array([0, 3, 7])
    Z = rng.normal(size=(4, 2))
    S = bag_features(X, off, Z, lambda A, B: A @ B.T)
    assert np.allclose(S, np.vstack([X[:3].mean(0) @ Z.T, X[3:].mean(0) @ Z.T]))


def test_recorded_model_scores_equal_the_estimator():
    d = load_dataset("sparsemi-3class")
    bags = [d.instances[a:b] for a, b in zip(d.offsets[:-1], d.offsets[1:])]
    est = SparseMI(n_xv=2, C=10, gamma=0.25, init=[[-1.0, 0.0], [1.0, 0.0]], t_max=5,
                   record_path=True).fit(bags, d.y)
    model = est.run_record_extras()
    assert len(model["xv_path"]) == model["n_iter"] + 1
    pts = np.array([[0.3, -1.0], [2.0, 1.5]])
    assert np.allclose(recorded_scores(model, pts), est.decision_function([p[None] for p in pts]))


def test_fig1_and_fig2_quick_and_claim_4_threshold(results, tmp_path, monkeypatch):
    res = _invoke("reproduce", "sparsemi/fig1", "--quick")
    assert res.exit_code == 0, res.output
    assert "sparsemi-toy" in res.stdout and "paper" in res.stdout
    assert (results / "sparsemi" / "fig1-quick" / "fig1.png").is_file()
    root = tmp_path / "configs"
    shutil.copytree(CONFIGS, root)
    monkeypatch.setattr("mlkit.targets.configs_dir", lambda: root)
    res = _invoke("reproduce", "sparsemi/fig2", "--quick")
    assert res.exit_code == 0, res.output
    assert "final XVs (paper)" in res.stdout and "final XVs (ours)" in res.stdout
    assert (results / "sparsemi" / "fig2-quick" / "fig2.pdf").is_file()
    res = _invoke("verify", "sparsemi")
    assert "PASS    claim 4" in res.stdout
    assert "NOT RUN claim 1" in res.stdout
    path = root / "sparsemi" / "fig2.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg["thresholds"]["xv_distance"] = 0.01
    path.write_text(yaml.safe_dump(cfg))
    res = _invoke("verify", "sparsemi")
    assert "FAIL    claim 4" in res.stdout


def _tiny(root, artifact, datasets, quick_methods=None):
    """Rewrite configs/sparsemi/<artifact>.yaml under ``root`` to run in seconds on the
    synthetic problems (no grid search, one split)."""
    path = root / "sparsemi" / f"{artifact}.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg.pop("quick", None)
    cfg["datasets"] = datasets
    for m in cfg["methods"]:
        m.pop("grid", None)
        m.pop("grid_folds", None)
        m["params"].update(gamma=0.5, C=10.0, t_max=min(m["params"]["t_max"], 8))
    cfg["protocol"].update(repeats=2)
    path.write_text(yaml.safe_dump(cfg))
    return cfg


def test_fig3_fig4_and_claim_5_on_tiny_configs(results, tmp_path, monkeypatch):
    root = tmp_path / "configs"
    shutil.copytree(CONFIGS, root)
    monkeypatch.setattr("mlkit.targets.configs_dir", lambda: root)
    sets = [{"name": "sparsemi-binary", "method_params": {"*": {"n_xv": 3}}},
            {"name": "sparsemi-3class", "method_params": {"*": {"n_xv": 3}}}]
    cfg = _tiny(root, "fig3", sets)
    cfg["report"]["sparse"] = ["sparsemi-3class"]
    (root / "sparsemi" / "fig3.yaml").write_text(yaml.safe_dump(cfg))
    cfg = _tiny(root, "fig4", sets)
    cfg["report"]["iterations"] = 8
    (root / "sparsemi" / "fig4.yaml").write_text(yaml.safe_dump(cfg))
    # --datasets: one set's runs now, rendered partial; the full run then reuses them
    res = _invoke("reproduce", "sparsemi/fig3", "--datasets", "sparsemi-3class")
    assert res.exit_code == 0, res.output
    assert "not recorded yet (partial)" in res.stdout
    runs = results / "sparsemi" / "fig3" / "runs"
    assert {p.name for p in runs.iterdir()} == {"sparsemi-3class"}
    n_part = len(list(runs.rglob("*.json")))
    res = _invoke("reproduce", "sparsemi/fig3")
    assert res.exit_code == 0, res.output
    assert f", {n_part} reused" in res.stdout and "partial" not in res.stdout.splitlines()[-2]
    assert "SparseMI kmeans t=0" in res.stdout and "accuracy (paper)" in res.stdout
    assert "not public" in res.stdout                           # GENRE keeps its row
    assert (results / "sparsemi" / "fig3" / "fig3.png").is_file()
    res = _invoke("reproduce", "sparsemi/fig4")
    assert res.exit_code == 0, res.output
    assert "stable from (paper)" in res.stdout
    assert (results / "sparsemi" / "fig4" / "fig4.pdf").is_file()
    for fig in ("fig3", "fig4"):
        frame = assert_comparison_matches_tables(results / "sparsemi" / fig)
        assert len(frame) and set(frame.data_role) <= {"synthetic", "substitute"}, fig
    res = _invoke("verify", "sparsemi")
    assert "claim 5" in res.stdout and "NOT RUN claim 5" not in res.stdout
    verdict = "PASS" if "PASS    claim 5" in res.stdout else "FAIL"
    path = root / "sparsemi" / "fig3.yaml"
    cfg = yaml.safe_load(path.read_text())
    # no set may lack a significant gain (2 runs: a plain comparison of means) or allow all
    cfg["thresholds"].update(no_gain_max=2 if verdict == "FAIL" else -1,
                             init_differ_max=2 if verdict == "FAIL" else -1,
                             kmeans_poor_min=0 if verdict == "FAIL" else 2)
    path.write_text(yaml.safe_dump(cfg))
    res = _invoke("verify", "sparsemi")
    assert ("FAIL" if verdict == "PASS" else "PASS") + "    claim 5" in res.stdout


def test_staged_scores_follow_the_recorded_iterations():
    d = load_dataset("sparsemi-binary")
    bags = [d.instances[a:b] for a, b in zip(d.offsets[:-1], d.offsets[1:])]
    est = SparseMI(n_xv=1, C=10, gamma=1.0, init=[[1.0, -1.0]], t_max=4, keep_stages=True,
                   record_path=True).fit(bags, d.y)
    staged = list(est.staged_decision_function(bags))
    assert len(staged) == est.n_iter_ + 1
    assert np.allclose(staged[-1], est.decision_function(bags))
    first = SparseMI(n_xv=1, C=10, gamma=1.0, init=[[1.0, -1.0]], t_max=0).fit(bags, d.y)
    assert np.allclose(staged[0], first.decision_function(bags))   # stage 0 = t_max=0 model


def test_table_claims_read_the_table1_runs_and_thresholds(results, tmp_path, monkeypatch):
    root = tmp_path / "configs"
    shutil.copytree(CONFIGS, root)
    monkeypatch.setattr("mlkit.targets.configs_dir", lambda: root)
    path = root / "sparsemi" / "table1.yaml"
    cfg = yaml.safe_load(path.read_text())
    cfg.pop("quick")
    cfg["datasets"] = [{"name": "sparsemi-3class", "params": {"n_bags_per_class": 8}}]
    keep = {"MI-Kernel", "MILES", "SparseMI", "RS (10)", "RSVM (10)", "SparseMI (10)"}
    cfg["methods"] = [m for m in cfg["methods"] if m["label"] in keep]
    for m in cfg["methods"]:
        m.pop("grid", None)
        m.pop("grid_folds", None)
        m["params"] = {**m.get("params", {}), "gamma": 0.5, "C": 10.0}
        if m["name"] == "sparsemi":
            m["params"].update(n_xv=4 if m["label"] == "SparseMI" else 10, t_max=5)
    cfg["protocol"]["repeats"] = 2
    cfg["reported"] = {}
    path.write_text(yaml.safe_dump(cfg))
    res = _invoke("reproduce", "sparsemi/table1")
    assert res.exit_code == 0, res.output
    res = _invoke("verify", "sparsemi")
    for n in (1, 2, 3):
        assert f"NOT RUN claim {n}" not in res.stdout and f"claim {n}" in res.stdout
    cfg["thresholds"].update(mikernel_gap=-100.0, miles_more_accurate=2.0)  # unreachable
    path.write_text(yaml.safe_dump(cfg))
    res = _invoke("verify", "sparsemi")
    assert "FAIL    claim 1" in res.stdout and "FAIL    claim 3" in res.stdout
    # a method changed since the results were made: no verdict on them, numbers still shown
    next(m for m in cfg["methods"] if m["label"] == "MILES")["params"]["C"] = 100.0
    path.write_text(yaml.safe_dump(cfg))
    res = _invoke("verify", "sparsemi")
    assert "NO VERDICT claim 1" in res.stdout and "NO VERDICT claim 3" in res.stdout
    assert "no verdict: outdated or partial results (sparsemi/table1 holds 10 of the 12 runs " \
           "its config plans now" in res.stdout
    assert "SparseMI vs MILES: significantly more accurate (paired t) on" in res.stdout


def _records(rows):
    """Fake run records: {(dataset, method): ([accuracies %], n_xv)}."""
    out = []
    for (ds, method), (accs, n_xv) in rows.items():
        out += [{"dataset": ds, "method": method, "repeat": r, "fold": 0,
                 "metrics": {"accuracy": a / 100}, "model": {"n_xv": n_xv}}
                for r, a in enumerate(accs)]
    return out


#: accuracy of each of five repetitions shared by every method (the split's difficulty), and
#: zero-mean run-to-run noise patterns: paired differences vary, their means are exact
_BASE = np.array([80.0, 84.0, 78.0, 86.0, 82.0])
_NOISE = [np.array(e) for e in ([0.3, -0.2, 0.1, -0.4, 0.2], [-0.1, 0.2, -0.3, 0.1, 0.1],
                                [0.2, 0.0, -0.2, 0.1, -0.1], [-0.3, 0.1, 0.2, 0.1, -0.1])]


def _runs(offset, noise):
    return list(_BASE + offset + _NOISE[noise])


def _patch_saved(monkeypatch, claims, saved):
    from mlkit.targets import resolve_target

    monkeypatch.setattr(claims, "_saved", lambda art: (
        resolve_target(f"sparsemi/{art}"), saved[art], f"results/sparsemi/{art}", False)
        if art in saved else (None,) * 4)


def _table1_rows(at10=8.0):
    """COREL-10 rows of Table I (one record per repetition): SparseMI above the better of RS
    and RSVM by ``at10`` points at N_XV = 10, 1.5 at 50, 0.5 at 100, always significantly
    (paired over the five repetitions)."""
    return {("corel10", m): (a, n) for m, a, n in [
        ("SparseMI", _runs(6, 0), 100), ("MI-Kernel", _runs(6, 1), 300),
        ("MILES", _runs(1, 2), 400),
        ("SparseMI (10)", _runs(-6 + at10, 3), 10), ("RS (10)", _runs(-6, 1), 10),
        ("RSVM (10)", _runs(-9, 2), 10),
        ("SparseMI (50)", _runs(4, 0), 50), ("RS (50)", _runs(2.5, 1), 50),
        ("RSVM (50)", _runs(1, 2), 50),
        ("SparseMI (100)", _runs(5, 3), 100), ("RS (100)", _runs(4.5, 1), 100),
        ("RSVM (100)", _runs(3, 2), 100)]}


def _tst_rows(sparsemi=94.0):
    return {("tst1", m): (a, n) for m, a, n in [
        ("SparseMI", _runs(sparsemi - 80, 0), 10), ("mi-SVM", _runs(15, 1), 500),
        ("MI-Kernel", _runs(15, 2), 1900), ("MILES", _runs(16, 3), 1000),
        ("RS", _runs(8, 1), 10), ("RSVM", _runs(1, 2), 10)]}


def test_claims_2_and_3_judge_the_gap_at_10_xvs_and_tst_comparability(monkeypatch):
    from mlkit.papers.sparsemi import claims

    saved = {"table1": _records(_table1_rows()), "table2": _records(_tst_rows())}
    _patch_saved(monkeypatch, claims, saved)
    res = claims.claim_2()
    # margins over the better of RS / RSVM: +8 at 10, +1.5 at 50, +0.5 at 100
    assert "N_XV = 10: +8.00, 50: +1.50, 100: +0.50 (largest at 10: yes)" in res.measured
    assert "in 3/3 cases" in res.measured and "beats both on 1/1 sets" in res.measured
    assert res.passed
    res = claims.claim_3()
    assert "TST: within 4 points of MI-Kernel's and MILES's mean with fewer XVs than" in \
        res.measured and res.passed
    # TST1 5 points below the baselines' mean: not comparable
    saved["table2"] = _records(_tst_rows(sparsemi=90.5))
    res = claims.claim_3()
    assert not res.passed and "(not: tst1 (+5.00 below, 10 vs 500+ XVs))" in res.measured
    # the gap largest at 50 instead of 10: claim 2 fails
    saved["table1"] = _records(_table1_rows(at10=0.75))
    res = claims.claim_2()
    assert "(largest at 10: no)" in res.measured and not res.passed


def test_claim_2_counts_a_tie_as_a_tie_with_the_paired_p_value(monkeypatch):
    """A higher mean that a paired t-test does not separate is a tie, not a win: TST1 with
    SparseMI 0.7 points above RS on average but varying by +-3 points from run to run."""
    from mlkit.papers.sparsemi import claims

    tst = _tst_rows()
    swing = np.array([3.0, -2.5, 2.0, -3.0, 4.0])           # mean 0.7
    tst[("tst1", "RS")] = (list(np.array(tst[("tst1", "SparseMI")][0]) - swing), 10)
    saved = {"table1": _records(_table1_rows()), "table2": _records(tst)}
    _patch_saved(monkeypatch, claims, saved)
    res = claims.claim_2()
    p = stats.ttest_rel(tst[("tst1", "SparseMI")][0], tst[("tst1", "RS")][0]).pvalue
    assert p > 0.05
    assert f"not on tst1 (vs RS 96.00 vs 95.30, tie (p={p:.2g})" in res.measured
    assert "beats both on 0/1 sets" in res.measured and not res.passed


def test_claims_pair_by_repetition_not_as_independent_samples(monkeypatch):
    """SparseMI 0.6 points above MILES in every repetition (+-0.2), over repetitions that
    differ by up to 30 points: a paired t-test finds it significant, an unpaired one (Welch
    or pooled) does not. Claim 3's verdict and p-value are the paired test's."""
    from mlkit.papers.sparsemi import claims

    base = np.array([60.0, 90.0, 70.0, 85.0, 75.0])
    rows = _table1_rows()
    rows[("corel10", "MILES")] = (list(base), 400)
    rows[("corel10", "SparseMI")] = (list(base + 0.6 + np.array([0.2, -0.2, 0.1, 0.0, -0.1])),
                                     100)
    saved = {"table1": _records(rows)}
    _patch_saved(monkeypatch, claims, saved)
    x, y = rows[("corel10", "SparseMI")][0], rows[("corel10", "MILES")][0]
    p = stats.ttest_rel(x, y).pvalue
    assert p < 0.05 and stats.ttest_ind(x, y).pvalue > 0.5
    assert stats.ttest_ind(x, y, equal_var=False).pvalue > 0.5
    res = claims.claim_3()
    assert f"corel10: 76.60 vs 76.00, better (p={p:.2g})" in res.measured
    assert "significantly more accurate (paired t) on 1, sparser on 1 of 1" in res.measured
    # the repetitions listed in another order pair the same runs
    saved["table1"] = _records(rows)[::-1]
    assert f"better (p={p:.2g})" in claims.claim_3().measured


def test_claims_compare_methods_over_the_same_repetitions(monkeypatch):
    """While a run is in progress one method may have a repetition more than another: the
    claims compare them over the repetitions both have, accuracy and XVs alike."""
    from mlkit.papers.sparsemi import claims
    from mlkit.targets import resolve_target

    rows = {("corel10", "SparseMI"): ([90, 80], 100),
            ("corel10", "MI-Kernel"): ([90, 80, 20], 300),
            ("corel10", "MILES"): ([85, 75, 99, 99], 400)}
    recs = _records(rows)
    recs[-1]["model"]["n_xv"] = 10 ** 6          # MILES's 4th repetition: not compared
    monkeypatch.setattr(claims, "_saved", lambda art: (
        resolve_target(f"sparsemi/{art}"), recs, f"results/sparsemi/{art}", False)
        if art == "table1" else (None,) * 4)
    # MI-Kernel's third repetition (20 %) would put it at 63.33, below SparseMI's 85
    res = claims.claim_1()
    assert "corel10: 85.00 vs 85.00 (100 vs 300 XVs)" in res.measured
    res = claims.claim_3()
    assert "corel10: 85.00 vs 80.00, better (p=0) (100 vs 400 XVs)" in res.measured
    # with no repetition in common, nothing is compared
    recs = [r for r in _records(rows) if not (r["method"] == "SparseMI" and r["repeat"] < 2)]
    recs += _records({("corel10", "SparseMI"): ([0, 0, 0, 0, 90], 100)})[4:]
    assert claims.claim_1().passed is None


def test_claims_pair_repetitions_not_folds():
    """The paper's paired t-tests are "on the differences over ten runs": on MUSK a run is a
    10-fold CV, so the claims compare its fold means, one value per repetition, paired
    repeat by repeat over the complete repetitions both methods have."""
    from mlkit.papers.sparsemi.claims import _acc, paired
    from mlkit.runner.result import runs_frame
    from mlkit.targets import resolve_target, target_spec

    spec = target_spec(resolve_target("sparsemi/table1"))[1]     # MUSK1: 10-fold CV
    folds = {0: [80, 100, 90] * 3 + [90], 1: [70, 90, 80] * 3 + [80],
             2: [100, 100, 70] * 3 + [90]}
    recs = [{"dataset": "musk1", "method": m, "repeat": r, "fold": f,
             "metrics": {"accuracy": (a - d) / 100}}
            for m, d in (("SparseMI", 0), ("MI-Kernel", 1)) for r, accs in folds.items()
            for f, a in enumerate(accs)]
    # a repetition in progress (4 folds of 10, of every method) is not a run yet, even
    # when no method has more of it
    recs += [{"dataset": "musk1", "method": m, "repeat": 3, "fold": f,
              "metrics": {"accuracy": 0.0}} for m in ("SparseMI", "MI-Kernel")
             for f in range(4)]
    runs = runs_frame(recs)
    assert _acc(runs, "musk1", "SparseMI", spec) == pytest.approx({0: 90, 1: 80, 2: 90})
    assert _acc(runs, "musk1", "MI-Kernel", spec) == pytest.approx({0: 89, 1: 79, 2: 89})
    assert _acc(runs[runs["repeat"] == 3], "musk1", "SparseMI", spec) == {}
    # pairs by repeat over the repeats both have: {0, 1, 4} here, a difference of -1, -1.5,
    # -1.2; pairing by position (2 with 3) would give -1, -1.5, -50 and no significance
    a, b = {0: 80.0, 1: 81.0, 2: 50.0, 4: 70.0}, {0: 81.0, 1: 82.5, 3: 100.0, 4: 71.2}
    test = paired(a, b)
    assert test.worse and test.n == 3 and test.dropped == 2
    assert test.p == pytest.approx(stats.ttest_rel([80, 81, 70], [81, 82.5, 71.2]).pvalue,
                                   rel=1e-12)
    assert stats.ttest_rel([80, 81, 50], [81, 82.5, 100]).pvalue > 0.05


def test_by_rule_puts_the_rules_refit_in_place_of_the_methods_runs_only():
    """Claim 3's other grid rule: SparseMI's runs become the refit their record keeps under
    ``also`` (a run without it is left out); every other method's runs stay, in order."""
    from mlkit.papers.sparsemi.claims import _by_rule
    from mlkit.runner.result import runs_frame

    def rec(method, repeat, acc, also=None):
        r = {"dataset": "musk1", "method": method, "repeat": repeat, "fold": 0,
             "metrics": {"accuracy": acc}}
        if also is not None:
            r["also"] = also
        return r

    runs = runs_frame([rec("MI-Kernel", 0, 0.80),
                       rec("SparseMI", 0, 0.85, {"1se": {"metrics": {"accuracy": 0.83},
                                                         "chosen": {"C": 1.0}}}),
                       rec("SparseMI", 1, 0.86),                        # no refit: left out
                       rec("MI-Kernel", 1, 0.81)])
    out = _by_rule(runs, "SparseMI", "1se")
    assert list(zip(out["method"], out["repeat"], out["accuracy"])) == [
        ("MI-Kernel", 0, 0.80), ("SparseMI", 0, 0.83), ("MI-Kernel", 1, 0.81)]
    assert out.loc[1, "chosen"] == {"C": 1.0}
    assert runs.loc[1, "accuracy"] == 0.85                # the runs given are not changed

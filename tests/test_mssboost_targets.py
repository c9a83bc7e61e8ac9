"""Table 2, Figs. 5-8 and claims 1-7 of MSSBoost end to end on a tiny Table 2 config
(a small TRECVID-style set in the TREC role), plus the claim helpers on crafted runs."""

import re
import shutil

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from mlkit.cli import cli
from mlkit.runner.result import runs_frame
from mlkit.papers.mssboost.claims import (best_on_frequent_sharing_labels,
                                          borrowing_follows_cooccurrence,
                                          first_models_are_general)

from .conftest import CONFIGS, assert_comparison_matches_tables


@pytest.fixture
def tiny_table2(results, tmp_path, monkeypatch):
    """configs/ with a table2.yaml shrunk to seconds: 6 labels, T=12, 2 repetitions."""
    spec = yaml.safe_load((CONFIGS / "mssboost" / "table2.yaml").read_text())
    spec.pop("quick")
    spec["datasets"] = [{"name": "trecvid-style", "label": "TRECVID-style", "role": "TREC",
                         "params": {"random_state": 0, "scale": 0.12, "n_labels": 6},
                         "method_params": {"*": {"gamma": 1.0, "rd": 0.3, "rf": 0.5}}}]
    for m in spec["methods"]:
        if "n_estimators" in m["params"]:
            m["params"]["n_estimators"] = 2 if m["label"] == "Bagging" else 12
    spec["protocol"]["repeats"] = 2
    spec["thresholds"].update(train_speedup=0.0, size_ratio=0.0)    # claim 2 must pass
    root = tmp_path / "configs"
    shutil.copytree(CONFIGS, root)
    (root / "mssboost" / "table2.yaml").write_text(yaml.safe_dump(spec))
    for fig, report in (("fig7", {"dataset": "TRECVID-style"}),
                        ("fig8", {"dataset": "TRECVID-style", "models": 10})):
        path = root / "mssboost" / f"{fig}.yaml"
        cfg = yaml.safe_load(path.read_text())
        cfg["report"] = report
        path.write_text(yaml.safe_dump(cfg))
    monkeypatch.setattr("mlkit.targets.configs_dir", lambda: root)
    return results


def _invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_table2_figures_and_every_claim_from_one_set_of_runs(tiny_table2):
    res = _invoke("reproduce", "mssboost/table2")
    assert res.exit_code == 0, res.output
    assert "14 runs computed" in res.stdout           # 7 rows (the intercept row too) x 2
    assert "synthetic" in res.stdout and "TREC" in res.stdout
    for fig in ("fig5", "fig6", "fig7", "fig8"):
        res = _invoke("reproduce", f"mssboost/{fig}")
        assert res.exit_code == 0, res.output
        assert "0 runs computed, 14 reused" in res.stdout          # nothing trained twice
        out = tiny_table2 / "mssboost" / fig
        assert (out / f"{fig}.png").is_file() and (out / f"{fig}.pdf").is_file()
        assert_comparison_matches_tables(out)
    table2 = assert_comparison_matches_tables(tiny_table2 / "mssboost" / "table2")
    assert len(table2) and set(table2.data_role) == {"synthetic"}     # the TREC role
    table = (tiny_table2 / "mssboost" / "table2" / "table.md").read_text()
    for method in ("Baseline", "Bagging", "Subspace", "RSBag", "NSBoost", "MSSBoost",
                   "MSSBoost (intercept)"):
        assert method in table
    assert ".449" in table                        # the paper's TREC Baseline beside ours
    assert "train CPU s (ours, median)" in table and "median of splits" in table
    row = next(x for x in table.splitlines() if "| MSSBoost (intercept) |" in x)
    assert "0.456 ± 0.003" in row                 # the paper's MSSBoost beside the intercept

    res = _invoke("verify", "mssboost")
    out = res.stdout.splitlines()
    status, measured = {}, {}
    for i, line in enumerate(out):
        if m := re.search(r"claim (\d+):", line):
            status[int(m.group(1))], measured[int(m.group(1))] = line, out[i + 1]
    for n in (1, 2, 4, 5, 6, 7):                  # claim 3 needs fig4's runs
        assert not status[n].startswith("NOT RUN"), status[n]
        assert "TRECVID-style" in measured[n], measured[n]
        # the intercept row's verdict beside the literal row's
        assert re.search(r"\|\| MSSBoost \(intercept\) in MSSBoost's place: (PASS|FAIL)",
                         measured[n]), measured[n]
    # claim 2 reads its thresholds from the config: 0x passes, 1e9x fails
    assert status[2].startswith("PASS") and "(paper: ~0x, ~0x)" in measured[2]
    cfg = tiny_table2.parent / "configs" / "mssboost" / "table2.yaml"
    spec = yaml.safe_load(cfg.read_text())
    spec["thresholds"].update(train_speedup=1e9)
    cfg.write_text(yaml.safe_dump(spec))
    again = _invoke("verify", "mssboost").stdout
    assert next(x for x in again.splitlines() if "claim 2:" in x).startswith("FAIL")
    assert re.search(r"first models learned for \w+ \(frequency rank \d+/6\)", measured[7])
    assert "synthetic labels" in measured[7]
    assert re.search(r"best of the three on \d+/\d+ of the most frequent", measured[6])


def _record(alphas, own):
    return {"model": {"alphas": np.asarray(alphas, dtype=float).tolist(),
                      "estimator_labels": list(own)}}


def test_first_models_are_general_reads_frequency_ranks():
    freq = np.array([0.05, 0.4, 0.1, 0.3])          # ranks: 3, 0, 2, 1
    ranks, general = first_models_are_general(_record(np.ones((3, 4)), [1, 3, 0]), freq, 2)
    assert list(ranks) == [0, 1] and general
    ranks, general = first_models_are_general(_record(np.ones((3, 4)), [1, 3, 0]), freq, 3)
    assert list(ranks) == [0, 1, 3] and not general


def test_borrowing_follows_cooccurrence_on_crafted_weights():
    rng = np.random.default_rng(0)
    z = rng.random(400)
    Y = np.column_stack([z > 0.5, z > 0.6, rng.random(400) > 0.5, rng.random(400) > 0.7])
    phi = np.corrcoef(Y.T.astype(float))
    # label 1 borrows label 0's model (strongly related); label 3 borrows label 2's with a
    # negative weight (ignored: only positive borrowing counts)
    alphas = [[0.5, 0.7, 0.0, 0.0], [0.0, 0.0, 0.4, -0.3]]
    used, overall, lenders = borrowing_follows_cooccurrence(_record(alphas, [0, 2]), Y)
    assert used == pytest.approx(phi[1, 0])
    assert overall == pytest.approx(phi[~np.eye(4, dtype=bool)].mean())
    assert used > overall
    assert lenders == [(1, [0])]


def test_best_on_frequent_sharing_labels_counts_only_sharing_labels():
    ap = {"MSSBoost": np.array([0.9, 0.1, 0.8, 0.7]),
          "NSBoost": np.array([0.5, 0.5, 0.9, 0.1]),
          "RSBag": np.array([0.4, 0.2, 0.1, 0.8])}
    shares = np.array([True, True, True, False])
    freq = np.array([0.1, 0.4, 0.3, 0.5])
    assert best_on_frequent_sharing_labels(ap, shares, freq, n_top=2) == (0, 2)
    assert best_on_frequent_sharing_labels(ap, shares, freq, n_top=9) == (1, 3)


def test_claim_helpers_on_edge_cases():
    freq = np.array([0.5, 0.2])
    assert first_models_are_general(_record(np.zeros((0, 2)), []), freq)[1] is False
    # a constant label has no correlation: left out of both means, never NaN-poisoned
    rng = np.random.default_rng(1)
    z = rng.random(200)
    Y = np.column_stack([z > 0.5, z > 0.4, np.zeros(200)])
    used, overall, _ = borrowing_follows_cooccurrence(
        _record([[0.5, 0.5, 0.5]], [0]), Y)
    phi01 = np.corrcoef(Y[:, :2].T)[0, 1]
    assert used == pytest.approx(phi01) and overall == pytest.approx(phi01)
    # one label, or no borrowing: NaN (the claim then fails), not a crash
    used, overall, lenders = borrowing_follows_cooccurrence(_record([[1.0]], [0]), Y[:, :1])
    assert np.isnan(used) and np.isnan(overall) and lenders == []
    ap = {m: np.array([0.5, 0.4]) for m in ("MSSBoost", "NSBoost", "RSBag")}
    assert best_on_frequent_sharing_labels(ap, np.array([False, False]), freq) == (0, 0)


def test_selection_target_reads_the_records_of_the_settings_method(results, tmp_path,
                                                                   monkeypatch):
    """mssboost/selection trains only through the runner (one mssboost-settings run per
    collection, resumable); rendering again reuses the record and prints the same table."""
    spec = yaml.safe_load((CONFIGS / "mssboost" / "selection.yaml").read_text())
    spec.pop("quick")
    spec["methods"] = spec["methods"][:1]             # the search as Table 2 uses it
    spec["datasets"] = [{"name": "trecvid-style", "label": "TRECVID-style", "role": "TREC",
                         "params": {"random_state": 0, "scale": 0.12, "n_labels": 4}}]
    spec["protocol"]["repeats"] = 1
    spec["methods"][0]["params"].update(
        gamma_grid=[0.05, 0.5], C_grid=[1.0], base_gamma_grid=[0.5, 5.0], base_C_grid=[1.0],
        rd_grid=[0.2, 0.5], rf_grid=[0.5])
    root = tmp_path / "configs"
    shutil.copytree(CONFIGS, root)
    (root / "mssboost" / "selection.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.setattr("mlkit.targets.configs_dir", lambda: root)
    first = _invoke("reproduce", "mssboost/selection")
    assert first.exit_code == 0, first.output
    assert "1 runs computed" in first.stdout
    again = _invoke("reproduce", "mssboost/selection")
    assert "0 runs computed, 1 reused" in again.stdout
    table = lambda out: out[out.index("| collection"):out.index("\n\n", out.index("| coll"))]
    assert table(first.stdout) == table(again.stdout)
    row = [line for line in table(first.stdout).splitlines() if "TRECVID-style" in line][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:4] == ["Settings", "0"]                       # the search and its split
    assert cells[4] == "0.050"                                   # the paper's rho beside ours
    assert cells[5] in ("0.050", "0.500") and cells[8] in ("0.500", "5")
    grid = (results / "mssboost" / "selection" / "grid.csv").read_text()
    assert grid.count("TRECVID-style,Settings,0,Baseline,") == 2
    assert grid.count("TRECVID-style,Settings,0,MSSBoost,") >= 1   # up to the first pair reaching 80%


def test_each_splits_settings_are_the_rule_applied_to_that_splits_training_part(tmp_path):
    """selection.yaml's Settings search, shrunk, on 2 splits through the runner: each split's
    record holds what select_mssboost_settings chooses on that split's training rows alone,
    and that choice is the rule of Sec. 6.2.1 read off the record's own CV rows: the
    Baseline's rho, C with the best 2-fold Mean-AP; then, of the (rd, rf) pairs whose scored
    MSSBoost reaches 80% of that Mean-AP, the smallest rd * rf, then rd."""
    from mlkit.config import load_spec
    from mlkit.datasets import load_dataset
    from mlkit.experiment import make_splits, run
    from mlkit.papers.mssboost.selection import select_mssboost_settings
    from mlkit.papers.mssboost.settings import MSSBoostSettings

    spec = yaml.safe_load((CONFIGS / "mssboost" / "selection.yaml").read_text())
    spec.pop("quick")
    spec["methods"] = spec["methods"][:1]
    spec["datasets"] = [{"name": "trecvid-style", "label": "TRECVID-style", "role": "TREC",
                         "params": {"random_state": 0, "scale": 0.12, "n_labels": 4}}]
    params = spec["methods"][0]["params"]
    params.update(gamma_grid=[0.05, 0.5], C_grid=[1.0, 10.0], base_gamma_grid=[0.5, 5.0],
                  base_C_grid=[1.0], rd_grid=[0.2, 0.5], rf_grid=[0.2, 1.0], exhaustive=True,
                  scored_params={"n_estimators": 8, "base_learner": "svm",
                                 "score_bound": "clip", "chi2_filter": True, "init": "zero"})
    spec["protocol"]["repeats"] = 2
    path = tmp_path / "selection.yaml"
    path.write_text(yaml.safe_dump(spec))
    loaded = load_spec(path)
    result = run(loaded, tmp_path / "out")
    data = load_dataset("trecvid-style", params=spec["datasets"][0]["params"])
    splits = make_splits(data, loaded.protocol)
    assert sorted(r["repeat"] for r in result.records) == [0, 1]
    keys = ("baseline_gamma", "baseline_C", "gamma", "C", "rd", "rf")
    for rec in result.records:
        train = splits[rec["repeat"]].train
        s = rec["model"]
        est = MSSBoostSettings(**params)
        direct = select_mssboost_settings(
            data.X[train], data.Y[train], gamma_grid=params["gamma_grid"],
            C_grid=params["C_grid"], base_gamma_grid=params["base_gamma_grid"],
            base_C_grid=params["base_C_grid"], rd_grid=params["rd_grid"],
            rf_grid=params["rf_grid"], fraction=0.8, n_folds=2, random_state=0,
            exhaustive=True, scored_estimator=est._scored_estimator(0))
        assert {k: s[k] for k in keys} == {k: direct[k] for k in keys}
        # the rule by hand on the record's rows (the first best of equals, in grid order)
        best = max(s["baseline_grid"], key=lambda g: g["mean_ap"])
        assert (s["baseline_gamma"], s["baseline_C"]) == (best["gamma"], best["C"])
        assert len(s["grid"]) == 4 and s["threshold"] == pytest.approx(0.8 * best["mean_ap"])
        reaching = [g for g in s["grid"] if g["mean_ap"] >= 0.8 * best["mean_ap"]]
        pick = (min(reaching, key=lambda g: (g["rd"] * g["rf"], g["rd"])) if reaching
                else max(s["grid"], key=lambda g: g["mean_ap"]))
        assert (s["rd"], s["rf"], s["gamma"], s["C"], s["reached"]) == (
            pick["rd"], pick["rf"], pick["gamma"], pick["C"], bool(reaching))
    # the two splits' training parts differ, and so may what they choose: each is its own
    assert not np.array_equal(splits[0].train, splits[1].train)


def test_the_ablation_rule_on_subspace_row_uses_the_settings_that_search_chose():
    """mssboost/ablation's "MSSBoost (rule on Subspace)" row runs, on every collection it
    shares with mssboost/selection, the base rho, C, rd and rf that the selection's "Settings
    (rule on Subspace)" run chose (copied by hand into ablation.yaml)."""
    from mlkit.config import load_spec
    from mlkit.experiment import manifest_records

    runs = [r for r in manifest_records(CONFIGS.parent / "results" / "mssboost" / "selection")
            if r["method"] == "Settings (rule on Subspace)"]
    ablation = load_spec(CONFIGS / "mssboost" / "ablation.yaml")
    by_label = {d.display: d for d in ablation.datasets}
    method = {m.display: m for m in ablation.methods}["MSSBoost (rule on Subspace)"]
    checked = 0
    for rec in runs:
        if rec["dataset"] not in by_label:
            continue
        chosen, p = rec["model"], by_label[rec["dataset"]].params_for(method)
        assert (p["gamma"], p["C"], p["rd"], p["rf"]) == (
            chosen["gamma"], chosen["C"], chosen["rd"], chosen["rf"]), rec["dataset"]
        checked += 1
    assert checked == len(ablation.datasets) == 3


#: table2's collections still run at the settings chosen on split 0's training part: on
#: TRECVID-style the per-split selection is committed (9 x ~130 CPU s) but table2's runs at
#: it are not; on corel5k-top39 and corel5k-lear-top39 the "Settings" search's 9 later
#: splits are not run (about 9 x 330 and 9 x 135 CPU seconds here). Their leak test is a
#: strict xfail, so giving them their own splits' settings makes this set shrink
SPLIT0_SETTINGS = {"TRECVID-style", "corel5k-top39", "corel5k-lear-top39"}


def _table2_settings(ds, methods, repeat):
    """{label: (rho, C[, rd, rf])} table2 runs its methods at on ``repeat`` of ``ds``."""
    out = {}
    for label, m in methods.items():
        p = ds.params_for(m, repeat)
        out[label] = tuple(p[k] for k in (("gamma", "C") if label in ("Baseline", "Bagging")
                                          else ("gamma", "C", "rd", "rf")))
    return out


def _selection_settings(record, methods):
    """The same, for the settings a mssboost-settings record chose."""
    s = record["model"]
    return {label: ((s["baseline_gamma"], s["baseline_C"]) if label in ("Baseline", "Bagging")
                    else (s["gamma"], s["C"], s["rd"], s["rf"])) for label in methods}


class _Rows:
    """What make_splits reads of a data set (its size; no stratification here)."""

    stratify = None

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


@pytest.mark.parametrize("collection", [
    pytest.param(c, marks=pytest.mark.xfail(strict=True, reason="settings chosen on split 0"))
    if c in SPLIT0_SETTINGS else c
    for c in ("TRECVID-style", "corel5k-top39", "corel5k-lear-top39", "scene")])
def test_no_table2_split_runs_at_settings_chosen_on_its_test_part(collection):
    """Every method of table2 runs, on every split r, at the rho, C, rd, rf that a committed
    mssboost/selection record chose (the same choice for every method: the Baseline's and
    Bagging's rho, C; the base models' rho, C, rd, rf), and that record's training part (the
    rows its 2-fold CV saw, rebuilt from the selection's protocol and checked against the
    record's seed and size) shares no example with split r's test part."""
    from mlkit.config import load_spec
    from mlkit.experiment import make_splits, manifest_records

    table2 = load_spec(CONFIGS / "mssboost" / "table2.yaml")
    selection = load_spec(CONFIGS / "mssboost" / "selection.yaml")
    ds = next(d for d in table2.datasets if d.display == collection)
    sel_ds = next(d for d in selection.datasets if d.display == collection)
    assert (sel_ds.name, sel_ds.params) == (ds.name, ds.params)       # the same data
    methods = {m.display: m for m in table2.methods}
    records = [r for r in manifest_records(CONFIGS.parent / "results" / "mssboost" / "selection")
               if r["method"] == "Settings" and r["dataset"] == collection]
    assert records, f"no committed selection record for {collection}"
    n = records[0]["n_train"] + records[0]["n_test"]
    chosen_on = {s.repeat: s for s in make_splits(_Rows(n),
                                                  sel_ds.protocol_over(selection.protocol))}
    for rec in records:
        split = chosen_on[rec["repeat"]]
        assert (rec["split_seed"], rec["n_train"]) == (split.seed, len(split.train))
    for split in make_splits(_Rows(n), ds.protocol_over(table2.protocol)):
        used = _table2_settings(ds, methods, split.repeat)
        sources = [r for r in records if _selection_settings(r, methods) == used]
        assert sources, f"{collection} split {split.repeat}: no selection record chose {used}"
        overlap = min(len(np.intersect1d(chosen_on[r["repeat"]].train, split.test))
                      for r in sources)
        assert overlap == 0, (f"{collection} split {split.repeat}: its settings were chosen "
                              f"on a training part holding {overlap} of its "
                              f"{len(split.test)} test examples")


def test_table2_runs_each_split_at_that_splits_own_selection():
    """Where a collection's settings are chosen per split, split r runs at exactly what the
    selection chose on split r's training part (not merely at some leak-free choice), and
    the Settings search ran on every split of table2's protocol."""
    from mlkit.config import load_spec
    from mlkit.experiment import manifest_records

    table2 = load_spec(CONFIGS / "mssboost" / "table2.yaml")
    methods = {m.display: m for m in table2.methods}
    records = [r for r in manifest_records(CONFIGS.parent / "results" / "mssboost" / "selection")
               if r["method"] == "Settings"]
    per_split = [d for d in table2.datasets if d.display not in SPLIT0_SETTINGS]
    assert len(per_split) == 4 - len(SPLIT0_SETTINGS)
    for ds in per_split:
        by_repeat = {r["repeat"]: r for r in records if r["dataset"] == ds.display}
        assert sorted(by_repeat) == list(range(table2.protocol.repeats)), ds.display
        for r, rec in by_repeat.items():
            assert _table2_settings(ds, methods, r) == _selection_settings(rec, methods), (
                ds.display, r)
    for ds in table2.datasets:           # split 0's choice, also where it is kept for all
        rec = next(r for r in records if r["dataset"] == ds.display and r["repeat"] == 0)
        assert _table2_settings(ds, methods, 0) == _selection_settings(rec, methods)


def test_the_benchmark_reads_every_collections_selected_settings(tmp_path):
    """scripts/bench_mssboost.py runs each collection at the settings mssboost/selection
    chose for it: every collection of table2.yaml resolves from the selection's manifest, to
    the values table2 uses, and a collection without a record is a clear exit."""
    import importlib.util

    from mlkit.config import load_spec

    spec = importlib.util.spec_from_file_location(
        "bench_mssboost", CONFIGS.parent / "scripts" / "bench_mssboost.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    table2 = load_spec(CONFIGS / "mssboost" / "table2.yaml")
    methods = {m.display: m for m in table2.methods}
    by_label = {d.display: d for d in table2.datasets}
    assert set(bench.CONFIG_LABELS.values()) == set(by_label)
    for name, label in bench.CONFIG_LABELS.items():
        chosen = bench.selected_settings(name)
        p = by_label[label].params_for(methods["MSSBoost"])
        assert (chosen["gamma"], chosen["C"], chosen["rd"], chosen["rf"]) == (
            p["gamma"], p["C"], p["rd"], p["rf"]), name
    with pytest.raises(SystemExit, match="no selection record for scene"):
        bench.selected_settings("scene", selection=tmp_path)


def test_the_optional_approximations_are_off_by_default():
    """MSSBoost's documented approximations (Sec. "What to build" 3 of the issue) are not
    the paper's algorithm: the estimator's defaults and table2's settings leave them off."""
    from mlkit.config import load_spec
    from mlkit.methods import MSSBoost

    model = MSSBoost()
    assert model.shortlist is None and model.selection_subsample is None
    table2 = load_spec(CONFIGS / "mssboost" / "table2.yaml")
    for ds in table2.datasets:
        for m in table2.methods:
            p = ds.params_for(m)
            assert p.get("shortlist") is None and p.get("selection_subsample") is None


def test_grid_edges_name_every_choice_at_an_end_of_its_grid():
    """The selection table's edge note: a chosen rho or C at the low or high end of a grid
    of 3+ values is named; inside values and 2-value grids are not."""
    from mlkit.papers.mssboost.renderers.real import _grid_edges

    rec = {"model": {"baseline_gamma": 0.005, "baseline_C": 10.0, "gamma": 0.5, "C": 1.0},
           "params": {"gamma_grid": [0.005, 0.05, 0.5], "C_grid": [1.0, 10.0],
                      "base_gamma_grid": [0.05, 0.5, 5.0], "base_C_grid": [0.1, 1.0, 10.0]}}
    assert _grid_edges(rec) == [("Baseline rho", 0.005, [0.005, 0.05, 0.5], "low")]
    rec["model"].update(gamma=5.0, C=10.0)
    assert [(w, side) for w, _, _, side in _grid_edges(rec)] == [
        ("Baseline rho", "low"), ("base rho", "high"), ("base C", "high")]
    # the committed selection: corel5k-top39's base rho sits at its grid's low end
    from mlkit.experiment import manifest_records

    records = manifest_records(CONFIGS.parent / "results" / "mssboost" / "selection")
    corel = next(r for r in records if r["dataset"] == "corel5k-top39")
    assert ("base rho", 0.05) in [(w, v) for w, v, _, side in _grid_edges(corel)
                                   if side == "low"]


def _table2_runs(map_of, n_splits=6, seed=0):
    """Run records of Table 2's six methods on one collection: ``map_of[method]`` is the
    Mean-AP offset of the method, each split adds its own difficulty (shared by every
    method) and each run a little noise of its own; the records come in a shuffled order."""
    rng = np.random.default_rng(seed)
    split = rng.normal(0.0, 0.05, n_splits)
    recs = [{"dataset": "C", "method": m, "repeat": r, "fold": 0,
             "metrics": {"mean_ap": 0.4 + off + split[r] + rng.normal(0, 0.004)}}
            for m, off in map_of.items() for r in range(n_splits)]
    return [recs[i] for i in rng.permutation(len(recs))]


def test_claim_1_pairs_the_runs_split_by_split():
    """Claim 1's tests pair each method's run with MSSBoost's on the same split (repeat,
    fold), whatever order the records come in: their p-values are scipy's ttest_rel on the
    split-aligned runs. Pairing the runs in record order, or not pairing them, gives other
    p-values (the split-to-split spread, 0.05, dwarfs the differences, ~0.01)."""
    from scipy import stats

    from mlkit.papers.mssboost.claims import claim_1

    offsets = {"Baseline": 0.0, "Bagging": -0.001, "Subspace": -0.08, "RSBag": -0.02,
               "NSBoost": -0.012, "MSSBoost": 0.01}
    recs = _table2_runs(offsets)

    def aligned(method):
        return [r["metrics"]["mean_ap"] for r in sorted(
            (r for r in recs if r["method"] == method), key=lambda r: (r["repeat"], r["fold"]))]

    ok, parts = claim_1.__wrapped__(runs_frame(recs), None, {})
    for m in ("Baseline", "Bagging", "Subspace", "RSBag", "NSBoost"):
        p = stats.ttest_rel(aligned("MSSBoost"), aligned(m)).pvalue
        assert p < 0.05 and f"{m} better (p={p:.2g})" in parts[0], (m, p, parts[0])
        in_order = [r["metrics"]["mean_ap"] for r in recs if r["method"] == m]
        mss = [r["metrics"]["mean_ap"] for r in recs if r["method"] == "MSSBoost"]
        # runs misaligned, or not paired: other p-values (unpaired, the small differences
        # are not significant)
        unpaired = stats.ttest_ind(mss, aligned(m)).pvalue
        for wrong in (stats.ttest_rel(mss, in_order).pvalue, unpaired):
            assert f"{wrong:.2g}" != f"{p:.2g}"
        assert m not in ("Baseline", "Bagging", "NSBoost") or unpaired > 0.05
    p = stats.ttest_rel(aligned("NSBoost"), aligned("RSBag")).pvalue
    assert f"NSBoost > RSBag: better (p={p:.2g})" in parts[0]
    assert ok
    # NSBoost only 0.001 above RSBag on average: a tie, said with its p-value; claim FAILs
    recs = _table2_runs({**offsets, "NSBoost": -0.019})
    ok, parts = claim_1.__wrapped__(runs_frame(recs), None, {})
    p = stats.ttest_rel(aligned("NSBoost"), aligned("RSBag")).pvalue
    assert p > 0.05 and f"NSBoost > RSBag: tie (p={p:.2g})" in parts[0] and not ok
    # a run missing on one side (a split in progress) is left out of that pair only
    recs = [r for r in _table2_runs(offsets)
            if not (r["method"] == "Baseline" and r["repeat"] == 5)]
    ok, parts = claim_1.__wrapped__(runs_frame(recs), None, {})
    p = stats.ttest_rel(aligned("MSSBoost")[:5], aligned("Baseline")).pvalue
    assert f"Baseline better (p={p:.2g})" in parts[0]


def _timed(method, repeat, fit_cpu=None, cpu=None, predict=1.0, stages=None, ap=0.5):
    rec = {"dataset": "D", "method": method, "repeat": repeat, "fold": 0,
           "metrics": {"mean_ap": ap}, "timings": {"cpu_s": cpu, "predict_s": predict},
           "model": {} if fit_cpu is None else {"fit_cpu_s": fit_cpu}}
    if stages is not None:
        rec["stage_predict_s"] = list(stages)
        rec["curves"] = {"mean_ap": [ap * (t + 1) / len(stages) for t in range(len(stages))]}
    return rec


def test_training_speed_is_the_median_of_per_split_cpu_ratios():
    from mlkit.papers.mssboost.renderers.real import fit_cpu_seconds, split_ratios

    # an old record without the estimator's own count: not measured (never a wall time)
    assert np.isnan(fit_cpu_seconds(_timed("Baseline", 0, cpu=12.0, predict=2.0)))
    assert fit_cpu_seconds(_timed("MSSBoost", 0, fit_cpu=3.0, cpu=99.0)) == 3.0
    recs = [_timed("Baseline", r, fit_cpu=c) for r, c in enumerate([10.0, 20.0, 90.0])]
    recs += [_timed("MSSBoost", r, fit_cpu=c) for r, c in enumerate([5.0, 2.0, 30.0, 1.0])]
    recs.append(_timed("Baseline", 3))                       # no CPU count: left out
    ratios = split_ratios(runs_frame(recs), "D", "Baseline", "MSSBoost", fit_cpu_seconds)
    np.testing.assert_allclose(ratios, [2.0, 10.0, 3.0])
    # the median of the ratios (3) is not the ratio of the means (120/37)
    assert np.median(ratios) == 3.0 != pytest.approx(120 / 37)


def test_prediction_speedups_are_per_split_at_the_mean_curves_level():
    from mlkit.papers.mssboost.renderers.real import prediction_speedups

    base = [_timed("Baseline", r, fit_cpu=1.0, predict=p, ap=0.5)
            for r, p in enumerate([10.0, 20.0, 40.0])]
    # MSSBoost's curve reaches 0.25 (50% of 0.5) at t = 2 of 4 and 0.5 at t = 4
    mss = [_timed("MSSBoost", r, fit_cpu=1.0, stages=s, ap=0.5)
           for r, s in enumerate([[1, 2, 3, 4], [1, 4, 6, 8], [1, 2, 3, 10]])]
    sp = prediction_speedups(runs_frame(base + mss), "D", fractions=(1.0, 0.5, 2.0))
    t, secs, base_s, ratio = sp[0.5]
    assert t == 2 and secs == 2.0 and base_s == 20.0
    assert ratio == pytest.approx(np.median([10 / 2, 20 / 4, 40 / 2]))
    assert sp[1.0][0] == 4 and sp[1.0][3] == pytest.approx(np.median([10 / 4, 20 / 8, 4.0]))
    assert sp[2.0][0] is None and np.isnan(sp[2.0][3])


def test_the_intercept_row_takes_mssboosts_place_for_the_beside_verdicts():
    from mlkit.papers.mssboost.claims import INTERCEPT, _with_intercept_as_mssboost

    recs = [_timed("MSSBoost", 0, ap=0.1), _timed(INTERCEPT, 0, ap=0.2),
            _timed("RSBag", 0, ap=0.3)]
    runs = runs_frame(recs)
    alt = _with_intercept_as_mssboost(runs)
    assert list(zip(alt["method"], alt["mean_ap"])) == [("MSSBoost", 0.2), ("RSBag", 0.3)]
    assert [r["method"] for r in alt["record"]] == ["MSSBoost", "RSBag"]
    assert recs[1]["method"] == INTERCEPT                   # the records are not changed
    assert list(runs["method"]) == ["MSSBoost", INTERCEPT, "RSBag"]     # nor the frame
    assert _with_intercept_as_mssboost(runs_frame(recs[:1] + recs[2:])) is None


def test_every_ablation_row_changes_one_setting_of_table2s_mssboost():
    """mssboost/ablation: on every collection a row differs from Table 2's MSSBoost in at
    most one parameter (none: the seed-noise control), and each row changes one somewhere;
    the one change of "MSSBoost (rule on Subspace)" is the model the 80% rule scores, so it
    may move every setting that rule chooses (rd, rf, base rho and C) and nothing else.
    Split by split: where table2's settings differ by split (each split's own selection),
    the rows follow them (the rule-on-Subspace row's search ran on split 0 only)."""
    from mlkit.config import load_spec
    from mlkit.papers.mssboost.renderers.ablation import _changes

    table2 = load_spec(CONFIGS / "mssboost" / "table2.yaml")
    ablation = load_spec(CONFIGS / "mssboost" / "ablation.yaml")
    assert ablation.protocol == table2.protocol
    mss = next(m for m in table2.methods if m.display == "MSSBoost")
    for m, r in ((m, r) for m in ablation.methods for r in range(table2.protocol.repeats)):
        ref = {d.display: d.params_for(mss, r) for d in table2.datasets}
        n_changed = []
        for ds in ablation.datasets:
            mine = ds.params_for(m, r)
            assert set(mine) == set(ref[ds.display]), (m.display, ds.display)
            changed = {k for k, v in mine.items() if ref[ds.display][k] != v}
            if m.display == "MSSBoost (rule on Subspace)":
                assert changed <= {"rd", "rf", "gamma", "C"}, (ds.display, changed)
                changed = {"rule"} if changed else set()
            n_changed.append(len(changed))
        assert max(n_changed) <= 1, (m.display, r, n_changed)
        assert r or max(n_changed) == 1, (m.display, n_changed)
    rows = dict(_changes(ablation, table2))
    assert rows["MSSBoost (rf 0.5)"]["corel5k-top39"] == "rf = 0.5 (table2: 1.0)"
    assert rows["MSSBoost (rf 0.5)"]["scene"].startswith("none: Table 2's settings")
    assert rows["MSSBoost (tanh)"]["scene"] == "score_bound = tanh (table2: clip)"


def test_ablation_rows_pair_each_row_with_table2s_runs_split_by_split():
    from scipy import stats

    from mlkit.papers.mssboost.renderers.ablation import ablation_rows

    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.3, 6)
    row = base + rng.normal(0.01, 0.005, 6)

    def recs(method, values, skip=()):
        return [{"dataset": "d", "method": method, "repeat": r, "fold": 0,
                 "metrics": {"mean_ap": float(v)}} for r, v in enumerate(values)
                if r not in skip]

    table2 = recs("MSSBoost", base)
    mine = recs("MSSBoost (x)", row, skip=(2,))           # one split missing: left out
    rows, figures = ablation_rows(runs_frame(mine), runs_frame(table2), ["d"],
                                  [("MSSBoost (x)", {"d": "x = 1"})])
    keep = [r for r in range(6) if r != 2]
    assert [r["row"] for r in rows] == ["MSSBoost (table2)", "MSSBoost (x)"]
    assert figures["delta.d.MSSBoost (x)"] == pytest.approx(np.mean(row[keep] - base[keep]))
    assert figures["p.d.MSSBoost (x)"] == pytest.approx(
        stats.ttest_rel(row[keep], base[keep]).pvalue)
    assert rows[1]["change"] == "x = 1"

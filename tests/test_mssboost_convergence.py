"""mssboost/convergence: fig4's MSSBoost with one change per row, read against fig4's row."""

import numpy as np
import pytest
from scipy import stats

from mlkit.papers.mssboost.renderers.convergence import (boundaries_found, convergence_rows,
                                                          row_changes, run_facts,
                                                          true_boundaries)

from .conftest import CONFIGS

#: the five sides of the box generator's label regions
SIDES = [(0, -1.0), (0, 1.0), (1, -2.0), (1, 0.0), (1, 2.0)]


def _stump(feature, threshold):
    return {"feature": feature, "threshold": threshold, "label": 0, "left": -1.0, "right": 0.3}


def _record(method, repeat, curve, stumps):
    return {"dataset": "d", "method": method, "repeat": repeat, "fold": 0,
            "metrics": {"hamming_error": curve[-1]},
            "curves": {"hamming_error": list(curve)},
            "model": {"base_models": [_stump(*s) for s in stumps]}}


def test_true_boundaries_are_the_distinct_sides_of_the_label_boxes():
    assert true_boundaries() == SIDES
    assert true_boundaries([(0, 1, 0, 1), (0, 2, 0, 1)]) == [(0, 0), (0, 1), (0, 2), (1, 0),
                                                              (1, 1)]


def test_boundaries_found_counts_each_side_once_within_the_tolerance():
    stumps = [_stump(1, 0.05), _stump(1, -0.08), _stump(0, 1.2), _stump(0, 0.9),
              _stump(1, 1.85)]
    # y = 0 twice (counted once), x = 1.2 too far at 0.15, x = 0.9 and y = 1.85 found
    assert boundaries_found(stumps, SIDES, 0.15).tolist() == [1, 1, 1, 2, 3]
    assert boundaries_found(stumps, SIDES, 0.25).tolist() == [1, 1, 2, 2, 3]


def test_run_facts_split_the_fall_after_the_early_models_at_new_boundaries():
    curve = [0.5, 0.4, 0.3, 0.3, 0.25, 0.20]
    stumps = [(1, 0.0), (0, -1.0), (0, 1.0), (0, 1.0), (1, 2.0), (0, 1.0)]
    r = _record("m", 0, curve, stumps)
    f = run_facts(r, tol=0.01, early=3, boundaries=SIDES, edge_tol=0.1)
    assert f["reach"] == 6 and f["early"] == 0.3 and f["last"] == 0.2
    assert f["found_early"] == 3 and not f["all_found"]
    # after model 3: model 4 (0.0, no new side), 5 (-0.05, y = 2 new), 6 (-0.05, none)
    assert f["fall"] == pytest.approx(0.1) and f["fall_new"] == pytest.approx(0.05)
    assert (f["n_new"], f["n_steps"]) == (1, 3)
    assert f["missed"] == [False, False, True, False, False]             # y = -2 never


def test_convergence_rows_pair_every_row_with_the_reference_split_by_split():
    rng = np.random.default_rng(0)
    t = np.arange(1, 11)
    ref_reach, row_reach, ref_e5, row_e5, records = [], [], [], [], []
    slow = [(1, 0.0), (0, -1.0), (0, 1.0), (0, 1.0), (0, 1.0), (0, 1.0), (0, 1.0),
            (1, 2.0), (1, -2.0), (0, 1.0)]
    fast = [(1, 0.0), (0, -1.0), (0, 1.0), (1, 2.0), (1, -2.0)] + [(0, 1.0)] * 5
    for r in range(5):
        # the reference falls until model 8 or 9, the row is flat after model 4 or 5
        a = np.maximum(0.5 - (0.04 + 0.006 * r) * t, 0.1) + rng.uniform(0, 1e-3, 10)
        b = np.maximum(0.5 - (0.08 + 0.03 * (r % 2)) * t, 0.05) + rng.uniform(0, 1e-3, 10)
        records += [_record("ref", r, a, slow), _record("row", r, b, fast)]
        for curve, reach, e5 in ((a, ref_reach, ref_e5), (b, row_reach, row_e5)):
            reach.append(int(np.flatnonzero(curve <= curve.min() + 0.01)[0]) + 1)
            e5.append(curve[4])
    records = [rec for rec in records if not (rec["method"] == "row" and rec["repeat"] == 2)]
    rows, figs = convergence_rows(records, ["ref", "row"], {"row": "x = 1"}, reference="ref",
                                  tol=0.01, early=5, edge_tol=0.1)
    assert [row["row"] for row in rows] == ["ref", "row"] and rows[1]["change"] == "x = 1"
    keep = [0, 1, 3, 4]                                   # repeat 2 of "row" is missing
    assert len(set(ref_reach)) > 2 and len(set(np.diff(np.array(row_reach)[keep]
                                                        - np.array(ref_reach)[keep]))) > 1
    assert figs["reach.ref"] == pytest.approx(np.mean(ref_reach))
    assert figs["reach.row"] == pytest.approx(np.mean(np.array(row_reach)[keep]))
    diff = np.array(row_reach)[keep] - np.array(ref_reach)[keep]
    assert figs["diff.reach.row"] == pytest.approx(diff.mean())
    assert figs["p.reach.row"] == pytest.approx(
        stats.ttest_rel(np.array(row_reach)[keep], np.array(ref_reach)[keep]).pvalue)
    assert figs["p.early.row"] == pytest.approx(
        stats.ttest_rel(np.array(row_e5)[keep], np.array(ref_e5)[keep]).pvalue)
    ref_mean = np.mean([rec["curves"]["hamming_error"] for rec in records
                        if rec["method"] == "ref"], axis=0)
    assert figs["models_to_best.ref"] == int(np.argmax(ref_mean <= ref_mean.min() + 0.01)) + 1
    assert figs["found_early.ref"] == 3 and figs["found_early.row"] == 5
    assert figs["all_found.ref"] == 1 and rows[0]["runs with all by 10"] == "5/5"
    assert rows[0]["runs missing it by 10"] == ""
    assert figs["missed.row.y=2"] == 0 and "missed.row.x=1" in figs
    # the reference's fall after model 5 comes at models 6-8 (no new side) and 8-9 (new)
    ref_curves = [np.array(rec["curves"]["hamming_error"]) for rec in records
                  if rec["method"] == "ref"]
    at_new = sum(c[6] - c[8] for c in ref_curves)        # models 8 and 9 found y = +-2
    total = sum(c[4] - c[-1] for c in ref_curves)
    assert figs["share_new.ref"] == pytest.approx(at_new / total)


def test_every_row_of_the_config_changes_one_setting_of_fig4s_mssboost():
    from mlkit.config import load_spec

    fig4 = load_spec(CONFIGS / "mssboost" / "fig4.yaml")
    spec = load_spec(CONFIGS / "mssboost" / "convergence.yaml")
    literal = next(m for m in fig4.methods if m.display == "MSSBoost")
    ref = next(m for m in spec.methods if m.display == spec.options.reference)
    assert ref.params == literal.params and ref.name == literal.name
    assert spec.protocol == fig4.protocol and spec.datasets[0].params == fig4.datasets[0].params
    changes = row_changes(spec, spec.options.reference)
    assert changes["MSSBoost"] == "none: fig4's settings"
    for m in spec.methods:
        if m.display != "MSSBoost":
            assert "," not in changes[m.display] and " = " in changes[m.display], changes
    assert changes["MSSBoost (pool 10L)"] == "n_candidates = 10 (fig4: 1)"
    assert changes["MSSBoost (intercept)"] == "init = prior (fig4: zero)"


def test_a_reference_or_row_the_config_cannot_pair_is_one_clear_error():
    from mlkit._errors import MlkitError
    from mlkit.config import load_spec

    spec = load_spec(CONFIGS / "mssboost" / "convergence.yaml")
    with pytest.raises(MlkitError, match="names no method"):
        row_changes(spec, "MSSBoost (nope)")
    other = spec.model_copy(update={"methods": spec.methods[:1] + [
        spec.methods[1].model_copy(update={"name": "nsboost"})]})
    with pytest.raises(MlkitError, match="a row changes one setting"):
        row_changes(other, "MSSBoost")
    with pytest.raises(MlkitError, match="no runs of the reference row"):
        convergence_rows([_record("row", 0, [0.5, 0.4], SIDES[:2])], ["row"], {},
                         reference="MSSBoost", tol=0.01, early=1, edge_tol=0.1)

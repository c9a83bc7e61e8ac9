"""mlkit.stats against scipy and closed forms: paired t-tests over runs matched by key (never
by position), the sign test, Student-t intervals, and the metric table's default spread."""

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

from mlkit._errors import MlkitError
from mlkit.runner.result import rows_of, runs_frame
from mlkit.stats import (complete_repeats, matched, mean_confidence_interval, mean_spread,
                         paired_ttest, repetition_values, run_values, sign_test)

RNG = np.random.default_rng(7)


def _shuffled(d, seed):
    keys = list(d)
    np.random.default_rng(seed).shuffle(keys)
    return {k: d[k] for k in keys}


@pytest.mark.parametrize("n", [3, 10, 40])
def test_paired_ttest_equals_scipy_ttest_rel_on_matched_runs(n):
    """Runs keyed by (repeat, fold), given in different orders on the two sides: the test
    pairs them by key and equals scipy.stats.ttest_rel on the key-aligned arrays."""
    keys = [(r, f) for r in range(n) for f in range(2)]
    base = RNG.normal(80, 10, len(keys))                  # shared per split
    a = dict(zip(keys, base + 1.0 + RNG.normal(0, 1.5, len(keys))))
    b = dict(zip(keys, base + RNG.normal(0, 1.5, len(keys))))
    res = paired_ttest(_shuffled(a, 1), _shuffled(b, 2))
    ref = sp.ttest_rel([a[k] for k in keys], [b[k] for k in keys])
    assert res.t == pytest.approx(ref.statistic, rel=1e-10)
    assert res.p == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.n == len(keys) and res.dropped == 0
    assert res.mean_a == pytest.approx(np.mean(list(a.values())))
    assert res.diff == pytest.approx(res.mean_a - res.mean_b)
    # and the closed form t = mean(d) / (sd(d) / sqrt(n)), p = 2 P(T > |t|)
    d = np.array([a[k] - b[k] for k in keys])
    t = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
    assert res.t == pytest.approx(t, rel=1e-10)
    assert res.p == pytest.approx(2 * sp.t.sf(abs(t), d.size - 1), rel=1e-10)


def test_pairing_is_by_key_never_by_position():
    """The same runs listed in another order give the same test; pairing by position would
    give another (here: a strong shared split effect hides the difference unpaired)."""
    base = np.array([60.0, 90.0, 70.0, 85.0, 75.0, 65.0])
    a = {r: v + 1.0 + e for r, (v, e) in enumerate(zip(base, [0.2, -0.1, 0.0, 0.3, -0.2, 0.1]))}
    b = {r: v for r, v in enumerate(base)}
    res = paired_ttest(a, dict(reversed(list(b.items()))))
    assert res.better and res.p < 1e-4
    positional = sp.ttest_rel(list(a.values()), list(b.values())[::-1]).pvalue
    assert positional > 0.5                     # what a positional pairing would have said
    assert sp.ttest_ind(list(a.values()), list(b.values())).pvalue > 0.5   # unpaired too


def test_unmatched_runs_are_an_error_or_dropped_and_counted():
    a, b = {0: 1.0, 1: 2.0, 2: 3.5, 5: 9.0}, {0: 0.5, 1: 1.0, 2: 3.0, 3: 7.0}
    with pytest.raises(MlkitError, match=r"1 only on the first side \(5\); 1 only on the "
                                         r"second side \(3\)"):
        paired_ttest(a, b)
    res = paired_ttest(a, b, missing="drop")
    assert res.n == 3 and res.dropped == 2
    assert res.p == pytest.approx(sp.ttest_rel([1.0, 2.0, 3.5], [0.5, 1.0, 3.0]).pvalue)
    assert "2 unmatched runs left out" in res.text()
    keys, x, y, dropped = matched(a, b, missing="drop")
    assert keys == [0, 1, 2] and x.tolist() == [1.0, 2.0, 3.5] and dropped == 2
    with pytest.raises(MlkitError, match="missing='sideways'"):
        matched(a, b, missing="sideways")


def test_verdicts_at_the_level_and_their_limits():
    a = {k: 80.0 + k + 0.1 * (k % 3) for k in range(10)}
    b = {k: 79.0 + k for k in range(10)}
    res = paired_ttest(a, b, alpha=0.05)
    assert res.outcome == "better" and res.verdict() == f"better (p={res.p:.2g})"
    assert paired_ttest(b, a).outcome == "worse"
    assert paired_ttest(a, b, greater_is_better=False).outcome == "worse"   # errors
    # the same difference judged at a level below its p is a tie
    near = {k: b[k] + (0.3 if k % 2 else -0.1) for k in b}
    res = paired_ttest(near, b)
    assert res.p == pytest.approx(sp.ttest_rel(list(near.values()), list(b.values())).pvalue)
    assert paired_ttest(near, b, alpha=res.p * 0.99).outcome == "tie"
    assert paired_ttest(near, b, alpha=min(0.999, res.p * 1.01)).outcome == "better"
    # differences that do not vary: identical runs tie (p = 1), a constant shift is
    # significant (|t| infinite, p = 0), whatever rounding leaves
    same = paired_ttest({0: 0.1 + 0.2, 1: 0.5}, {0: 0.3, 1: 0.5})
    assert same.outcome == "tie" and same.p == 1.0 and same.t == 0.0
    shift = paired_ttest({k: v - 2.0 for k, v in b.items()}, b)
    assert shift.outcome == "worse" and shift.p == 0.0 and shift.t == -np.inf
    # fewer than two pairs: no test, neither better nor worse
    one = paired_ttest({0: 5.0}, {0: 1.0})
    assert one.outcome == "untested" and not one.better and not one.worse
    assert one.verdict() == "untested (1 pair)"
    with pytest.raises(MlkitError, match="alpha=1.5"):
        paired_ttest(a, b, alpha=1.5)


def test_sign_test_equals_the_binomial_tail_and_drops_ties():
    a = dict(enumerate([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.55]))
    b = dict(enumerate([0.1, 0.2, 0.3, 0.4, 0.5, 0.3, 0.2, 0.1, 0.3, 0.55]))
    res = sign_test(_shuffled(a, 3), b)
    assert (res.wins, res.losses, res.ties) == (7, 1, 2)
    # P(Bin(8, 1/2) >= 7) = (C(8,7) + C(8,8)) / 2^8
    assert res.p == pytest.approx((8 + 1) / 256)
    assert res.p == pytest.approx(sp.binomtest(7, 8, 0.5, alternative="greater").pvalue)
    assert sign_test(a, b, alternative="less").p == pytest.approx(1 - 1 / 256)
    assert sign_test({0: 1.0}, {0: 1.0}).p == 1.0                # no untied pair
    with pytest.raises(MlkitError, match="alternative"):
        sign_test(a, b, alternative="up")


def test_confidence_interval_and_spreads_against_closed_forms():
    v = RNG.normal(0.5, 0.1, 9)
    mean, half = mean_confidence_interval(v)
    lo, hi = sp.t.interval(0.95, v.size - 1, loc=v.mean(), scale=sp.sem(v))
    assert mean == pytest.approx(v.mean()) and half == pytest.approx((hi - lo) / 2)
    assert half == pytest.approx(sp.t.ppf(0.975, 8) * v.std(ddof=1) / 3)
    assert mean_confidence_interval(v, 0.99)[1] == pytest.approx(
        sp.t.ppf(0.995, 8) * v.std(ddof=1) / 3)
    assert mean_spread(v) == mean_confidence_interval(v)              # the default: the CI
    assert mean_spread(v, "std") == pytest.approx((v.mean(), v.std(ddof=1)))
    assert np.isnan(mean_spread([0.3], "std")[1]) and np.isnan(mean_spread([0.3])[1])
    assert mean_spread([np.nan, 1.0, 3.0], "std") == pytest.approx((2.0, np.sqrt(2)))
    with pytest.raises(MlkitError, match="unknown spread 'sd'"):
        mean_spread(v, "sd")


def test_run_and_repetition_values_are_keyed():
    recs = [{"repeat": r, "fold": f, "method": "M", "dataset": "D",
             "metrics": {"accuracy": a}}
            for r, f, a in [(1, 1, 0.6), (0, 0, 0.8), (1, 0, 0.7), (0, 1, 1.0), (2, 0, 0.5)]]
    assert run_values(recs, "accuracy", 100) == pytest.approx(
        {(0, 0): 80.0, (0, 1): 100.0, (1, 0): 70.0, (1, 1): 60.0, (2, 0): 50.0})
    assert run_values(recs, lambda r: r["fold"]) == {(0, 0): 0, (0, 1): 1, (1, 0): 0,
                                                     (1, 1): 1, (2, 0): 0}
    assert repetition_values(recs, "accuracy", 100, n_folds=2) == pytest.approx(
        {0: 90.0, 1: 65.0})
    assert complete_repeats(recs, n_folds=2) == [0, 1]
    with pytest.raises(MlkitError, match="repeat 0, fold 0: a run can be paired only"):
        run_values(recs + [recs[1]], "accuracy")
    # the old homes re-export the same functions
    from mlkit import experiment, metrics, stats
    assert experiment.repetition_values is stats.repetition_values
    assert experiment.complete_repeats is stats.complete_repeats
    assert metrics.mean_confidence_interval is stats.mean_confidence_interval


def _runs(method, values, order):
    """A runs frame of ``method``: one run per (repeat, fold) key of ``values``, its rows in
    the order of ``order`` (a permutation of the keys), as the runner may record them."""
    return runs_frame([{"dataset": "D", "method": method, "repeat": r, "fold": f,
                        "metrics": {"accuracy": values[(r, f)]}} for r, f in order])


def test_run_and_repetition_values_of_a_runs_frame_are_keyed_by_its_columns():
    """The frame form: keys come from the ``repeat`` and ``fold`` columns whatever the rows'
    order or the frame's index (a selection of a larger frame), and equal the records form."""
    keys = [(r, f) for r in range(4) for f in range(3)]
    values = dict(zip(keys, np.random.default_rng(3).uniform(0.5, 1.0, len(keys))))
    order = [keys[i] for i in np.random.default_rng(4).permutation(len(keys))]
    runs = _runs("M", values, order)
    assert run_values(runs, "accuracy", 100) == pytest.approx(
        {k: 100 * v for k, v in sorted(values.items())})
    assert list(run_values(runs, "accuracy")) == sorted(keys)
    # a function of the run's row: its columns, and the record itself
    assert run_values(runs, lambda run: run["fold"]) == {k: k[1] for k in sorted(keys)}
    assert run_values(runs, lambda run: run["record"]["repeat"]) == {
        k: k[0] for k in sorted(keys)}
    want = {r: 100 * np.mean([values[(r, f)] for f in range(3)]) for r in range(4)}
    assert repetition_values(runs, "accuracy", 100, n_folds=3) == pytest.approx(want)
    assert complete_repeats(runs, n_folds=3) == [0, 1, 2, 3]
    # the frame form and the records form agree
    recs = runs["record"].tolist()
    assert run_values(recs, "accuracy") == run_values(runs, "accuracy")
    assert repetition_values(recs, "accuracy", n_folds=3) == repetition_values(
        runs, "accuracy", n_folds=3)
    # a selection of a larger frame (its index has gaps) and a repetition in progress
    pooled = pd.concat([_runs("other", values, keys), runs.iloc[:-1]], ignore_index=True)
    mine = rows_of(pooled, "D", "M")
    assert list(mine.index) == list(range(len(keys), 2 * len(keys) - 1))
    missing = order[-1]
    assert set(run_values(mine, "accuracy")) == set(keys) - {missing}
    assert complete_repeats(mine, n_folds=3) == [r for r in range(4) if r != missing[0]]
    assert set(repetition_values(mine, "accuracy", n_folds=3)) == set(range(4)) - {missing[0]}
    # an unknown metric and a duplicated split are errors naming them
    with pytest.raises(MlkitError, match="no run has the metric 'mean_ap'"):
        run_values(runs, "mean_ap")
    with pytest.raises(MlkitError, match=r"of M on D have repeat \d, fold \d: a run can be "
                                         "paired only"):
        run_values(pd.concat([runs, runs.iloc[[0]]]), "accuracy")
    assert run_values(runs.iloc[:0], "accuracy") == {}
    assert repetition_values(runs.iloc[:0], "accuracy") == {} and complete_repeats(
        runs.iloc[:0]) == []


def test_paired_ttest_of_two_runs_frames_pairs_split_by_split():
    """Two methods' frames with rows in different orders: the test pairs the runs by
    (repeat, fold) and equals scipy.stats.ttest_rel on the key-aligned arrays; pairing the
    rows by position (the planted bug) gives another p."""
    keys = [(r, f) for r in range(5) for f in range(2)]
    rng = np.random.default_rng(6)
    base = rng.normal(75, 8, len(keys))
    a = dict(zip(keys, base + 0.8 + rng.normal(0, 0.6, len(keys))))
    b = dict(zip(keys, base + rng.normal(0, 0.6, len(keys))))
    fa = _runs("A", a, keys[::-1])
    fb = _runs("B", b, [keys[i] for i in np.random.default_rng(5).permutation(len(keys))])
    res = paired_ttest(run_values(fa, "accuracy"), run_values(fb, "accuracy"))
    ref = sp.ttest_rel([a[k] for k in keys], [b[k] for k in keys])
    assert res.t == pytest.approx(ref.statistic, rel=1e-10)
    assert res.p == pytest.approx(ref.pvalue, rel=1e-10)
    positional = sp.ttest_rel(fa["accuracy"], fb["accuracy"]).pvalue
    assert abs(np.log(positional) - np.log(res.p)) > 1.0
    # by repetition: the fold means, paired repeat by repeat
    ra, rb = (repetition_values(f, "accuracy", n_folds=2) for f in (fa, fb))
    rep = paired_ttest(ra, rb)
    ref = sp.ttest_rel([np.mean([a[(r, f)] for f in range(2)]) for r in range(5)],
                       [np.mean([b[(r, f)] for f in range(2)]) for r in range(5)])
    assert rep.n == 5 and rep.p == pytest.approx(ref.pvalue, rel=1e-10)


def test_metric_table_spread_is_the_95_t_interval_by_default(tmp_path):
    """A config without ``report.spread`` gets mean ± the 95% Student-t half-width over the
    runs, and says so; ``spread: std`` the sample sd."""
    from mlkit.config import ExperimentSpec
    from mlkit.experiment import RunResult
    from mlkit.report import format_mean_ci
    from mlkit.report.generic import MetricTableOptions, render_metric_table

    class _Data:
        provenance = "toy (synthetic data)"

    acc = [0.80, 0.86, 0.83, 0.90, 0.78]
    recs = [{"dataset": "tst1", "method": "MI-Kernel", "repeat": r, "fold": 0,
             "metrics": {"accuracy": a}, "model": {}, "timings": {"fit_s": 1.0},
             "chosen": {}} for r, a in enumerate(acc)]

    def cell(report):
        spec = ExperimentSpec.model_validate({
            "paper": "toy", "artifact": "t1", "title": "Toy", "datasets": [{"name": "tst1"}],
            "methods": [{"name": "mi-kernel", "label": "MI-Kernel"}],
            "metrics": ["accuracy"], "report": {"scale": 100, **report}})
        render_metric_table(RunResult(spec=spec, datasets={"tst1": _Data()}, records=recs),
                            tmp_path, spec)
        md = (tmp_path / "table.md").read_text()
        row = next(line for line in md.splitlines() if line.startswith("| tst1"))
        return re.findall(r"\d+\.\d+ ± \d+\.\d+", row)[0], md

    assert MetricTableOptions().spread == "ci"
    v = 100 * np.array(acc)
    half = sp.t.ppf(0.975, 4) * v.std(ddof=1) / np.sqrt(5)
    text, md = cell({})
    assert text == format_mean_ci(v.mean(), half, 2) and "± 95% t-interval" in md
    assert text != format_mean_ci(v.mean(), v.std(ddof=1), 2)
    text, md = cell({"spread": "std"})
    assert text == format_mean_ci(v.mean(), v.std(ddof=1), 2) and "± sample sd" in md

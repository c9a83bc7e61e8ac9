"""The generic metric-table renderer and table cells: paper beside ours, with the same
number of decimals, markers kept as written, TeX escaped."""

import numpy as np
import pytest

from mlkit.config import ExperimentSpec
from mlkit.experiment import RunResult
from mlkit.report import format_mean_ci
from mlkit.report.generic import render_metric_table
from mlkit.report.tables import _latex_escape


class _Data:
    provenance = "toy (synthetic data)"


def _rec(dataset, acc, n_xv, repeat, chosen=None, fold=0):
    return {"dataset": dataset, "method": "MI-Kernel", "repeat": repeat, "fold": fold,
            "metrics": {"accuracy": acc}, "model": {"n_xv": n_xv},
            "timings": {"fit_s": 1.0}, "chosen": chosen or {}}


def _spec(reported, musk1_protocol=None, **report):
    musk1 = {"name": "musk1", **({"protocol": musk1_protocol} if musk1_protocol else {})}
    return ExperimentSpec.model_validate({
        "paper": "toy", "artifact": "t1", "title": "Toy",
        "datasets": [musk1, {"name": "tst1"}],
        "methods": [{"name": "mi-kernel", "label": "MI-Kernel",
                     "grid": {"C": [0.1, 1.0, 10.0]}}],
        "metrics": ["accuracy"], "reported": reported,
        "report": {"spread": "std", "scale": 100, "extras": ["n_xv"], **report}})


def _render(tmp_path, spec, recs):
    result = RunResult(spec=spec, datasets={"musk1": _Data(), "tst1": _Data()}, records=recs)
    return render_metric_table(result, tmp_path, spec)


def test_percent_table_has_paper_beside_ours_with_equal_decimals(tmp_path):
    recs = [_rec("musk1", 0.87, 280, 0, {"C": 10.0}), _rec("musk1", 0.87, 281, 1, {"C": 1.0}),
            _rec("tst1", 0.955, 1302, 0, {"C": 1.0})]
    spec = _spec({"musk1": {"MI-Kernel": {"accuracy": {"value": 89.93, "spread": 1.33},
                                          "n_xv": 362.4}},
                  "tst1": {"MI-Kernel": {"accuracy": 94.0, "n_xv": 1935.8}},
                  "GENRE": "not public"})
    out = _render(tmp_path, spec, recs)
    md = (tmp_path / "table.md").read_text()
    lines = {line.split("|")[1].strip() + "/" + line.split("|")[2].strip(): line
             for line in md.splitlines() if line.startswith("| ") and "---" not in line}
    assert "| 89.93 ± 1.33 " in lines["musk1/MI-Kernel"]
    assert "| 87.00 ± 0.00 " in lines["musk1/MI-Kernel"]
    assert "| 362.4 " in lines["musk1/MI-Kernel"] and "| 280.5 " in lines["musk1/MI-Kernel"]
    assert "| 94.00 " in lines["tst1/MI-Kernel"]          # not shortened to "94"
    assert "| 95.50 " in lines["tst1/MI-Kernel"]          # one run: no spread
    assert "not public" in lines["GENRE/(all)"]           # a row for data we cannot run
    assert out.figures["accuracy.musk1.MI-Kernel"] == pytest.approx(87.0)
    # C = 10 is the top of its 3-value grid in one of musk1's two runs: a footnote says so
    assert "C chosen at the upper edge 10 in 1 of 2 runs (grid [0.1, 10])" in md
    assert {p.name for p in out.files} >= {"table.md", "table.csv", "table.tex"}


def test_grid_edge_notes_are_one_per_method_and_parameter(tmp_path):
    """A method at a grid edge on several sets gets one footnote with the count per set
    (a figure over 7 sets x 6 methods had 80 notes, one per set)."""
    recs = [_rec("musk1", 0.87, 280, 0, {"C": 10.0}), _rec("musk1", 0.87, 281, 1, {"C": 1.0}),
            _rec("tst1", 0.955, 1302, 0, {"C": 10.0}), _rec("tst1", 0.9, 1302, 1, {"C": 0.1})]
    _render(tmp_path, _spec({}), recs)
    md = (tmp_path / "table.md").read_text()
    assert md.count("C chosen at") == 1
    assert ("MI-Kernel: C chosen at the lower edge 0.1 in tst1 1/2 and the upper edge 10 in "
            "musk1 1/2, tst1 1/2 runs (grid [0.1, 10])") in md


def _cells(md):
    """{(dataset, method): {column: cell}} of a rendered table.md."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()
            if line.startswith("| ") and "---" not in line]
    header, body = rows[0], rows[1:]
    return {(r[0], r[1]): dict(zip(header, r)) for r in body}


def test_cv_spread_is_over_repetitions_each_the_mean_of_its_folds(tmp_path):
    """10 x 10-fold CV reports mean +- std over the ten runs (repetitions), not the folds."""
    folds = {0: [0.8, 1.0, 0.9], 1: [0.7, 0.9, 0.8], 2: [1.0, 1.0, 0.7]}
    recs = [_rec("musk1", a, 10, r, fold=f) for r, accs in folds.items()
            for f, a in enumerate(accs)]
    cv = {"split": "cv", "n_folds": 3}
    out = _render(tmp_path, _spec({}, cv), recs)
    md = (tmp_path / "table.md").read_text()
    means = 100 * np.array([np.mean(v) for v in folds.values()])       # 90, 80, 90
    row = _cells(md)[("musk1", "MI-Kernel")]
    assert row["accuracy (ours)"] == format_mean_ci(means.mean(), means.std(ddof=1), 2)
    assert row["runs"] == "9"                                # the runs column counts folds
    assert "on musk1 (k-fold CV) over its complete repetitions, each the mean of its k " \
           "folds" in md
    assert out.figures["accuracy.musk1.MI-Kernel"] == pytest.approx(means.mean())
    # a repetition still in progress (one fold of three) is left out of every cell: the
    # accuracy, the runs it counts, and the extras and fit time it averages
    busy = _rec("musk1", 0.0, 1000, 3)
    busy["timings"]["fit_s"] = 100.0
    _render(tmp_path, _spec({}, cv), recs + [busy])
    row = _cells((tmp_path / "table.md").read_text())[("musk1", "MI-Kernel")]
    assert row["accuracy (ours)"] == format_mean_ci(means.mean(), means.std(ddof=1), 2)
    assert row["runs"] == "9" and row["n_xv (ours)"] == "10.0"
    assert float(row["fit s"]) == pytest.approx(1.0)
    # a single k-fold CV has no repetitions to spread over: its folds
    _render(tmp_path, _spec({}, cv), [r for r in recs if r["repeat"] == 0])
    row = _cells((tmp_path / "table.md").read_text())[("musk1", "MI-Kernel")]
    assert row["accuracy (ours)"] == format_mean_ci(90.0, 10.0, 2)
    # holdout protocols are unchanged: one value per run
    _render(tmp_path, _spec({}), [_rec("tst1", a, 10, r) for r, a in enumerate([0.8, 0.9])])
    md = (tmp_path / "table.md").read_text()
    assert _cells(md)[("tst1", "MI-Kernel")]["accuracy (ours)"] == format_mean_ci(
        85.0, 100 * np.std([0.8, 0.9], ddof=1), 2)
    assert "k-fold CV" not in md


def test_a_fold_without_a_number_leaves_only_itself_out_of_its_repetition():
    from mlkit.experiment import repetition_values

    recs = [{"repeat": r, "fold": f, "metrics": {"accuracy": a}}
            for r, f, a in [(0, 0, float("nan")), (0, 1, 0.8), (0, 2, 0.9), (1, 0, 0.7),
                            (1, 1, 0.7), (1, 2, 0.7)]]
    assert repetition_values(recs, "accuracy", 100, n_folds=3) == pytest.approx({0: 85.0,
                                                                                  1: 70.0})


def test_marker_for_a_method_and_unknown_option_is_an_error(tmp_path):
    spec = _spec({"tst1": {"MI-Kernel": "not reported"}})
    _render(tmp_path, spec, [_rec("tst1", 0.9, 10, 0)])
    assert "not reported" in (tmp_path / "table.md").read_text()
    bad = _spec({}, sprad="std")
    with pytest.raises(Exception, match="sprad"):
        bad.options


def test_tex_output_escapes_specials():
    assert _latex_escape("a<b>c 5% x_y & z") == r"a$<$b$>$c 5\% x\_y \& z"


def test_format_mean_ci():
    assert format_mean_ci(0.4561, 0.0031) == "0.456 ± 0.003"
    assert format_mean_ci(87.0, float("nan"), 2) == "87.00"
    assert format_mean_ci(float("nan"), 0.1) == "-"
    assert format_mean_ci(np.float64(1.0), None) == "1.000"
    assert format_mean_ci(95, None, 2) == "95.00"
    assert format_mean_ci("n/a", None) == "n/a"

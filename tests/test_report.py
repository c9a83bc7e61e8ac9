"""Table cells: paper and ours side by side, with the same number of decimals."""

import numpy as np

from mlkit.report import format_mean_ci
from mlkit.report.summaries import metric_table


def _rec(dataset, acc, n_xv, repeat):
    return {"dataset": dataset, "method": "MI-Kernel", "repeat": repeat, "fold": 0,
            "metrics": {"accuracy": acc}, "model": {"n_xv": n_xv},
            "timings": {"fit_s": 1.0}}


def test_percent_table_has_paper_beside_ours_with_equal_decimals():
    recs = [_rec("musk1", 0.87, 280, 0), _rec("musk1", 0.87, 281, 1), _rec("tst1", 0.955, 1302, 0)]
    reported = {"musk1": {"MI-Kernel": {"accuracy": 89.93, "n_xv": 362.4}},
                "tst1": {"MI-Kernel": {"accuracy": 94.0, "n_xv": 1935.8}}}
    df = metric_table(recs, ["accuracy"], reported, spread="std", scale=100)
    musk, tst = df.iloc[0], df.iloc[1]
    assert musk["accuracy (paper)"] == "89.93"
    assert musk["accuracy (ours)"] == "87.00 ± 0.00"
    assert tst["accuracy (paper)"] == "94.00"            # not shortened to "94"
    assert tst["accuracy (ours)"] == "95.50"             # one run: no spread
    assert (musk["#XV (paper)"], musk["#XV (ours)"]) == ("362.4", "280.5")
    assert list(df["runs"]) == [2, 1]
    reported["tst1"]["MI-Kernel"] = {"accuracy": "n/a", "n_xv": "-"}
    tst = metric_table(recs, ["accuracy"], reported, spread="std", scale=100).iloc[1]
    assert (tst["accuracy (paper)"], tst["#XV (paper)"]) == ("n/a", "-")


def test_format_mean_ci():
    assert format_mean_ci(0.4561, 0.0031) == "0.456 ± 0.003"
    assert format_mean_ci(87.0, float("nan"), 2) == "87.00"
    assert format_mean_ci(float("nan"), 0.1) == "-"
    assert format_mean_ci(np.float64(1.0), None) == "1.000"
    assert format_mean_ci(95, None, 2) == "95.00"
    assert format_mean_ci("n/a", None) == "n/a"

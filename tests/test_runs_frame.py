"""A target's runs as one data frame (mlkit.runner.result.runs_frame, RunResult.frame)."""

import numpy as np

from mlkit.runner import RunResult
from mlkit.runner.result import RUN_COLUMNS, runs_frame


def _rec(dataset, method, repeat, fold, acc, **extra):
    return {"dataset": dataset, "method": method, "method_name": method.lower(),
            "repeat": repeat, "fold": fold, "split_seed": 7, "random_state": None,
            "n_train": 10, "n_test": 5, "params": {"C": 1.0}, "key": "k",
            "metrics": {"accuracy": acc}, "timings": {"fit_s": 0.5, "predict_s": 0.1},
            **extra}


RECORDS = [_rec("a", "M", 0, 0, 0.5, model={"n_xv": 3}, chosen={"gamma": 0.1}),
           _rec("a", "M", 0, 1, 0.7, model={"n_xv": 5, "accuracy": 0.9}),
           _rec("b", "N", 1, 0, 0.6, curves={"accuracy": [0.1, 0.6]})]


def test_one_row_per_run_with_its_metrics_timings_and_extras():
    f = runs_frame(RECORDS)
    assert list(f.columns[:len(RUN_COLUMNS)]) == list(RUN_COLUMNS)
    assert f.shape[0] == 3 and f.columns[-1] == "record"
    assert f["accuracy"].tolist() == [0.5, 0.7, 0.6]
    assert f["fit_s"].tolist() == [0.5, 0.5, 0.5]
    # an extra some runs lack is missing there; a name shared with a metric keeps its prefix
    assert f["n_xv"].tolist()[:2] == [3, 5] and np.isnan(f["n_xv"].iloc[2])
    assert f["model.accuracy"].iloc[1] == 0.9 and "metrics.accuracy" not in f
    assert f["curves"].iloc[2] == {"accuracy": [0.1, 0.6]} and f["curves"].iloc[0] is None
    assert f["chosen"].tolist() == [{"gamma": 0.1}, {}, {}]
    assert "key" not in f and f["record"].iloc[1] is RECORDS[1]
    # pandas does the grouping the renderers did by hand
    means = f.groupby(["dataset", "method"])["accuracy"].mean()
    assert means.loc[("a", "M")] == 0.6


def test_the_result_frame_is_built_once_and_follows_new_records():
    res = RunResult(spec=None, datasets={}, records=list(RECORDS[:2]))
    assert res.frame is res.frame and len(res.frame) == 2
    res.records.append(RECORDS[2])
    assert len(res.frame) == 3
    assert runs_frame([]).columns.tolist() == list(RUN_COLUMNS) + ["record"]


def test_runs_by_groups_the_records_in_their_order():
    from mlkit.runner.result import runs_by

    groups = runs_by(runs_frame(RECORDS + [_rec("a", "M", 1, 0, 0.4)]))
    assert list(groups) == [("a", "M"), ("b", "N")]
    assert [r["fold"] for r in groups[("a", "M")]] == [0, 1, 0]
    assert groups[("b", "N")] == [RECORDS[2]]
    assert list(runs_by(runs_frame(RECORDS), "method")) == ["M", "N"]
    assert runs_by(runs_frame([])) == {}

"""The runner: seeds, splits, resumable records, parallel backends, manifests."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from mlkit.config import slug

from mlkit.config import load_spec
from mlkit.experiment import load_records, make_splits, run

from .conftest import CONFIGS

FIG4 = CONFIGS / "mssboost" / "fig4.yaml"
SMALL = ["protocol.repeats=3", "methods.RSBag.params.n_estimators=5",
         "methods.NSBoost.params.n_estimators=5", "methods.MSSBoost.params.n_estimators=5",
         "methods.MSSBoost (intercept).params.n_estimators=5"]


def _numbers(result):
    return sorted((r["method"], r["repeat"], r["fold"], json.dumps(r["metrics"]),
                   json.dumps(r.get("curves"))) for r in result.records)


def test_same_seed_same_numbers_and_jobs_do_not_matter(tmp_path):
    spec = load_spec(FIG4, overrides=SMALL)
    a = run(spec, tmp_path / "a", jobs=1)
    b = run(spec, tmp_path / "b", jobs=2)
    assert a.computed == b.computed == 12
    assert _numbers(a) == _numbers(b)
    assert [r["method"] for r in b.records] == ["RSBag"] * 3 + ["NSBoost"] * 3 + ["MSSBoost"] * 3 + ["MSSBoost (intercept)"] * 3
    c = run(load_spec(FIG4, overrides=SMALL, seed=1), tmp_path / "c")
    assert _numbers(c) != _numbers(a)


def test_rerun_reuses_records_and_recomputes_only_what_is_missing(tmp_path):
    spec = load_spec(FIG4, overrides=SMALL)
    first = run(spec, tmp_path)
    assert (first.computed, first.reused) == (12, 0)
    again = run(spec, tmp_path)
    assert (again.computed, again.reused) == (0, 12)
    assert _numbers(again) == _numbers(first)
    runs = tmp_path / "runs" / "mssboost-synthetic"
    (runs / slug("MSSBoost") / "r01-f00.json").unlink()
    (runs / slug("RSBag") / "r02-f00.json").write_text("{truncated")
    partial = run(spec, tmp_path)
    assert (partial.computed, partial.reused) == (2, 10)
    assert _numbers(partial) == _numbers(first)
    forced = run(spec, tmp_path, force=True)
    assert forced.computed == 12


def test_changed_config_does_not_reuse_stale_records(tmp_path):
    run(load_spec(FIG4, overrides=SMALL), tmp_path)
    changed = run(load_spec(FIG4, overrides=SMALL + ["methods.MSSBoost.params.rd=0.2"]),
                  tmp_path)
    assert changed.computed == 3 and changed.reused == 9


def test_records_made_on_other_data_are_recomputed(tmp_path, monkeypatch):
    """A run record carries the fingerprint of the data it ran on: when a loader starts
    returning other data under the same config, its records are stale and recomputed; a
    record from before fingerprints existed is taken by its key."""
    import mlkit.runner.loop as E

    spec = load_spec(FIG4, overrides=SMALL)
    first = run(spec, tmp_path)
    assert first.computed == 12 and {r["data_sha"] for r in first.records} == {
        first.datasets["mssboost-synthetic"].fingerprint()}
    real = E.load_dataset

    def changed(*args, **kwargs):          # the same config, one label flipped
        data = real(*args, **kwargs)
        data.Y = data.Y.copy()
        data.Y[0, 0] = 1 - data.Y[0, 0]
        return data

    monkeypatch.setattr(E, "load_dataset", changed)
    again = run(spec, tmp_path)
    assert again.computed == 12 and again.reused == 0
    monkeypatch.setattr(E, "load_dataset", real)
    path = next((tmp_path / "runs").rglob("r00-f00.json"))
    rec = json.loads(path.read_text())
    rec.pop("data_sha")                    # a record written before fingerprints
    path.write_text(json.dumps(rec))
    back = run(spec, tmp_path)
    assert back.reused == 1 and back.computed == 11


def test_records_are_written_atomically(tmp_path):
    run(load_spec(FIG4, overrides=SMALL), tmp_path)
    assert not list(tmp_path.rglob("*.part"))
    recs = load_records(tmp_path)
    assert len(recs) == 12
    assert {"key", "metrics", "timings", "curves", "split_seed"} <= set(recs[0])
    assert len(recs[0]["curves"]["hamming_error"]) == 5


def test_a_bad_parameter_value_is_a_user_error_before_any_fit_and_one_inside_a_fit_a_bug(
        tmp_path, monkeypatch):
    """A config value the estimator rejects (in its params or anywhere in its grid) is one
    user error naming the method, before anything is fitted; the same exception raised from
    inside a fit comes from a value the method computed: a failed run with its traceback."""
    from sklearn.utils._param_validation import InvalidParameterError

    from mlkit._errors import MlkitError, RunFailed
    from mlkit.methods.mssboost import MSSBoost

    fits = {"n": 0}
    fit = MSSBoost.fit

    def counting(self, X, Y):
        fits["n"] += 1
        return fit(self, X, Y)

    monkeypatch.setattr(MSSBoost, "fit", counting)
    bad = load_spec(FIG4, overrides=SMALL + ["methods.MSSBoost.grid={rd: [0.2, 1.5]}"])
    with pytest.raises(MlkitError, match=r"MSSBoost on mssboost-synthetic: .*'rd'") as err:
        run(bad, tmp_path / "bad")
    assert not isinstance(err.value, RunFailed) and fits["n"] == 0
    # a bad value of a later dataset is said before the first dataset's runs are fitted
    one = load_spec(FIG4, overrides=SMALL)
    first = one.datasets[0]
    second = first.model_copy(update={"label": "b", "method_params": {"MSSBoost": {"rf": 0.0}}})
    two = one.model_copy(update={"datasets": [first, second]})
    with pytest.raises(MlkitError, match=r"MSSBoost on b: .*'rf'"):
        run(two, tmp_path / "two")
    assert fits["n"] == 0

    def inner_bug(self, X, Y):
        raise InvalidParameterError("The 'C' parameter of SVC must be > 0. Got -1.0.")

    monkeypatch.setattr(MSSBoost, "fit", inner_bug)
    with pytest.raises(RunFailed, match="InvalidParameterError") as err:
        run(load_spec(FIG4, overrides=SMALL), tmp_path / "inner")
    assert "inner_bug" in err.value.traceback_text


def test_splits_are_fresh_per_repeat_and_cover_the_data():
    spec = load_spec(FIG4)
    from mlkit.datasets import make_mssboost_synthetic

    data = make_mssboost_synthetic()
    splits = make_splits(data, spec.protocol)
    assert len(splits) == 20
    assert all(len(s.test) == 250 and len(s.train) == 750 for s in splits)
    assert not np.array_equal(splits[0].test, splits[1].test)
    cv = make_splits(data, spec.protocol.model_copy(update={"split": "cv", "n_folds": 4,
                                                            "repeats": 2}))
    assert len(cv) == 8
    np.testing.assert_array_equal(np.sort(np.concatenate([s.test for s in cv[:4]])),
                                  np.arange(1000))


def test_one_fold_helper_stratified_or_not_partitions_the_rows():
    """cv_folds (the runner's cv protocol, MSSBoost's selection, HFSS's pair rule): K
    disjoint test parts covering every row once, the same for the same seed, another for
    another seed; stratified folds keep each class's share within one row."""
    from mlkit.experiment import cv_folds

    y = np.repeat([0, 1, 2], [30, 12, 9])
    for stratify in (None, y):
        folds = cv_folds(len(y), 3, 7, stratify=stratify)
        assert len(folds) == 3
        np.testing.assert_array_equal(np.sort(np.concatenate([te for _, te in folds])),
                                      np.arange(len(y)))
        assert all(np.intersect1d(tr, te).size == 0 and len(tr) + len(te) == len(y)
                   for tr, te in folds)
        again = cv_folds(len(y), 3, 7, stratify=stratify)
        assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
        other = cv_folds(len(y), 3, 8, stratify=stratify)
        assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other))
    for _, te in cv_folds(len(y), 3, 7, stratify=y):
        assert np.all(np.abs(np.bincount(y[te], minlength=3) - np.bincount(y) / 3) <= 1)


def test_dask_backend_on_a_local_cluster_gives_the_same_numbers(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    spec = load_spec(FIG4, overrides=SMALL[:2] + ["methods.RSBag.params.n_estimators=5"])
    local = run(spec, tmp_path / "local", jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        remote = run(spec, tmp_path / "dask", jobs=2, backend="dask",
                     scheduler=cluster.scheduler_address)
    assert remote.computed == local.computed
    assert _numbers(remote) == _numbers(local)


def test_killed_run_resumes_without_redoing_finished_runs(tmp_path):
    """Kill `mlkit train` mid-run; the rerun computes only the missing runs."""
    out = tmp_path / "out"
    args = [sys.executable, "-m", "mlkit.cli", "-q", "train", "--config", str(FIG4),
            "--out", str(out), "--set", "protocol.repeats=60"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and len(list(out.glob("runs/*/*/*.json"))) < 10:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(list(out.glob("runs/*/*/*.json")))
    assert 10 <= done < 240, "the run should have been killed part-way"
    assert not (out / "manifest.json").exists()
    finished = subprocess.run(args, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runs_reused"] == done
    assert manifest["runs_computed"] == 240 - done


def test_grid_chooses_parameters_by_cv_inside_each_run(tmp_path):
    spec = load_spec(FIG4, overrides=SMALL[:1] + [
        "methods.MSSBoost.grid={rd: [0.05, 0.3]}", "methods.MSSBoost.grid_folds=2",
        "methods.MSSBoost.grid_metric=hamming_error"])
    res = run(spec, tmp_path)
    recs = [r for r in res.records if r["method"] == "MSSBoost"]
    assert all(r["chosen"]["rd"] in (0.05, 0.3) for r in recs)
    assert all("curves" in r and len(r["model"]["alphas"]) == 20 for r in recs)


def _two_datasets(tmp_path, b_settings):
    """fig4.yaml on two synthetic datasets, a and b; b carries ``b_settings``."""
    cfg = tmp_path / "two.yaml"
    cfg.write_text(FIG4.read_text().replace(
        "dataset:\n  name: mssboost-synthetic          # the paper's generator, reconstructed "
        "(synthetic data)\n  params: {n_samples: 1000, random_state: 0}",
        "datasets:\n  - {name: mssboost-synthetic, label: a, params: {random_state: 0}}\n"
        "  - {name: mssboost-synthetic, label: b, params: {random_state: 1},\n"
        f"     {b_settings}}}"))
    return cfg


def test_a_dataset_replaces_the_values_a_grid_searches(tmp_path):
    """method_grids: "*" replaces a searched parameter's values for every method that
    searches it, a label for that method only; other datasets keep the config's grid, and
    their runs keep their keys (records are reused)."""
    cfg = _two_datasets(tmp_path, "method_grids: {'*': {rd: [0.4, 0.5]}, MSSBoost: {rf: [0.5]}}")
    grid = ["methods.MSSBoost.grid={rd: [0.05, 0.3]}", "methods.RSBag.grid={rd: [0.05, 0.3]}",
            "methods.MSSBoost.grid_folds=2", "methods.RSBag.grid_folds=2",
            "methods.MSSBoost.grid_metric=hamming_error",
            "methods.RSBag.grid_metric=hamming_error"]
    spec = load_spec(cfg, overrides=SMALL[:1] + grid)
    res = run(spec, tmp_path / "out")
    for m in ("MSSBoost", "RSBag"):
        assert all(r["chosen"]["rd"] in (0.05, 0.3) for r in res.records_of("a", m))
        assert all(r["chosen"]["rd"] in (0.4, 0.5) for r in res.records_of("b", m))
    assert all(r["chosen"]["rf"] == 0.5 for r in res.records_of("b", "MSSBoost"))
    assert all("rf" not in r["chosen"] for r in res.records_of("b", "RSBag"))
    assert all("chosen" not in r for r in res.records_of("b", "NSBoost"))   # no grid: none
    # dropping b's override recomputes only b's gridded runs
    plain = cfg.read_text().replace(", MSSBoost: {rf: [0.5]}", "")
    cfg.write_text(plain)
    again = run(load_spec(cfg, overrides=SMALL[:1] + grid), tmp_path / "out")
    assert again.computed == 3 and again.reused == 21


def test_several_datasets_with_their_own_method_parameters(tmp_path):
    cfg = _two_datasets(tmp_path, "method_params: {'*': {C: 2.0, rd: 0.3}, "
                                  "MSSBoost: {n_estimators: 4, rd: 0.3}}")
    res = run(load_spec(cfg, overrides=SMALL[:1]), tmp_path / "out")
    assert set(res.datasets) == {"a", "b"} and res.computed == 24
    b_mss = res.records_of(dataset="b", method="MSSBoost")
    assert all(r["params"]["rd"] == 0.3 and r["params"]["n_estimators"] == 4 for r in b_mss)
    # "*" fills in what a method leaves unset (C), never what it sets itself (rd)
    assert all(r["params"]["C"] == 2.0 for r in res.records_of(dataset="b"))
    assert all(r["params"]["rd"] == 0.1 for r in res.records_of(dataset="b", method="RSBag"))
    assert all(r["params"]["rd"] == 0.1 and "C" not in r["params"]
               for r in res.records_of(dataset="a"))
    assert (tmp_path / "out" / "runs" / "b" / slug("MSSBoost") / "r00-f00.json").is_file()


def test_dataset_protocol_changes_only_its_fields_and_seed_reaches_it(tmp_path):
    from .conftest import CONFIGS as C

    spec = load_spec(C / "sparsemi" / "table1.yaml", seed=7)
    musk1 = spec.datasets[0]
    eff = musk1.protocol_over(spec.protocol)
    assert (eff.split, eff.n_folds, eff.seed, eff.repeats) == ("cv", 10, 7, 10)


def test_stale_records_never_mix_into_a_targets_results(results):
    from mlkit.targets import reproduce, resolve_target, saved_results

    target = resolve_target("mssboost/fig4")
    reproduce(target, quick=True)
    reproduce(target, quick=True, overrides=["protocol.repeats=2"])
    records, out, quick = saved_results(target)
    assert quick and len(records) == 8          # not the 20 records of the first run
    # a --quick run says so wherever its data is named (captions, summary)
    from mlkit.experiment import QUICK_NOTE

    assert QUICK_NOTE in json.loads((out / "summary.json").read_text())["provenance"]
    assert "[--quick settings: fewer splits" in (out / "table.md").read_text()


def test_a_slice_of_runs_is_the_targets_own_records(tmp_path):
    spec = load_spec(FIG4, overrides=SMALL)
    part = run(spec, tmp_path, only=lambda d, m, s: m == "MSSBoost" and s.repeat < 2)
    assert part.computed == 2 and {(r["method"], r["repeat"]) for r in part.records} == \
        {("MSSBoost", 0), ("MSSBoost", 1)}
    whole = run(spec, tmp_path)
    assert (whole.computed, whole.reused) == (10, 2)
    assert _numbers(run(spec, tmp_path / "fresh")) == _numbers(whole)


def test_compute_only_computes_a_part_and_reads_the_rest(tmp_path):
    """``compute_only`` (``mlkit reproduce --datasets``): the runs it rejects are never
    computed, but read when recorded and otherwise counted as missing (a partial result)."""
    spec = load_spec(FIG4, overrides=SMALL)
    part = run(spec, tmp_path, compute_only=lambda d, m, s: m == "MSSBoost")
    assert (part.computed, part.reused, part.missing) == (3, 0, 9)
    assert {r["method"] for r in part.records} == {"MSSBoost"}
    run(spec, tmp_path, only=lambda d, m, s: m == "RSBag" and s.repeat == 0)
    again = run(spec, tmp_path, compute_only=lambda d, m, s: False)
    assert (again.computed, again.reused, again.missing) == (0, 4, 8)
    # with compute=False too, nothing is counted twice
    assert run(spec, tmp_path, compute=False, compute_only=lambda d, m, s: False).missing == 8


def test_more_repeats_reuse_the_runs_already_done(tmp_path):
    first = run(load_spec(FIG4, overrides=SMALL), tmp_path)
    more = run(load_spec(FIG4, overrides=SMALL[1:] + ["protocol.repeats=4"]), tmp_path)
    assert (more.computed, more.reused) == (4, 12)
    assert _numbers(first) == [n for n in _numbers(more) if n[1] < 3]


def test_a_failure_inside_a_method_names_the_run_keeps_its_traceback_and_finished_records(
        tmp_path, monkeypatch):
    from mlkit._errors import MlkitError, RunFailed, SolverError
    from mlkit.methods.mssboost import MSSBoost

    spec = load_spec(FIG4, overrides=SMALL)
    calls = {"n": 0}
    fit = MSSBoost.fit

    def flaky(self, X, Y):
        calls["n"] += 1
        if calls["n"] == 2:
            raise SolverError("the solver gave up")
        return fit(self, X, Y)

    monkeypatch.setattr(MSSBoost, "fit", flaky)
    with pytest.raises(RunFailed, match=r"MSSBoost( \(intercept\))? on mssboost-synthetic, split r0\d-f00 "
                                        r"failed: SolverError: the solver gave up") as err:
        run(spec, tmp_path)
    # a failure inside a method is a bug, not a user error: its traceback is kept
    assert not isinstance(err.value, MlkitError)
    assert "flaky" in err.value.traceback_text and "SolverError" in err.value.traceback_text
    monkeypatch.setattr(MSSBoost, "fit", lambda self, X, Y: 1 / 0)
    with pytest.raises(RunFailed, match="ZeroDivisionError") as err:
        run(spec, tmp_path / "other")
    assert "1 / 0" in err.value.traceback_text
    monkeypatch.setattr(MSSBoost, "fit", fit)
    again = run(spec, tmp_path)
    assert again.computed < 12 and again.reused > 0


def test_fingerprint_reads_the_data_without_changing_it():
    """The same matrix gives the same fingerprint in any sparse layout (duplicates, unsorted
    indices) and as a copy; computing it leaves the dataset's arrays exactly as they were;
    another value gives another fingerprint."""
    import scipy.sparse as sp

    from mlkit.datasets import MultiLabelDataset

    X = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 0, 1, 1]),
                       np.array([0, 2, 4])), shape=(2, 3))       # row 1: column 1 twice
    Y = np.array([[1, 0], [0, 1]])
    d = MultiLabelDataset(name="toy", X=X, Y=Y)
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy(), X.has_sorted_indices)
    f = d.fingerprint()
    assert (X.data.tolist(), X.indices.tolist(), X.indptr.tolist(), X.has_sorted_indices) == (
        before[0].tolist(), before[1].tolist(), before[2].tolist(), before[3])
    same = MultiLabelDataset(name="other name", X=sp.csr_matrix(X.toarray()), Y=Y.copy())
    assert same.fingerprint() == f
    Y2 = Y.copy()
    Y2[0, 1] = 1
    assert MultiLabelDataset(name="toy", X=X, Y=Y2).fingerprint() != f


def test_planned_runs_are_the_runs_a_config_makes_without_loading_data(tmp_path):
    from mlkit.experiment import planned_runs

    spec = load_spec(FIG4, overrides=SMALL)
    done = run(spec, tmp_path)
    plan = planned_runs(spec, tmp_path)
    assert sorted(key for key, _ in plan) == sorted(r["key"] for r in done.records)
    assert all(p.is_file() for _, p in plan)
    cv = load_spec(FIG4, overrides=SMALL[1:] + ["protocol.split=cv", "protocol.n_folds=2",
                                                 "protocol.repeats=2"])
    done = run(cv, tmp_path / "cv")
    assert sorted(k for k, _ in planned_runs(cv, tmp_path / "cv")) == \
        sorted(r["key"] for r in done.records) and len(done.records) == 16


def test_run_status_counts_the_records_of_the_current_config(tmp_path):
    """``mlkit reproduce --status``: per (dataset, method), the runs recorded of those
    planned, their mean fit time and the time left (mean x runs left); a record made with
    other settings (another key) does not count."""
    from mlkit.experiment import run_status

    spec = load_spec(FIG4, overrides=SMALL)
    before = run_status(spec, tmp_path)
    assert all(r["recorded"] == 0 and r["mean_fit_s"] is None and r["left_s"] is None
               for r in before)
    assert sum(r["planned"] for r in before) == 12
    done = run(spec, tmp_path, only=lambda d, m, s: m == "MSSBoost" and s.repeat < 2)
    rows = {r["method"]: r for r in run_status(spec, tmp_path)}
    mss = rows["MSSBoost"]
    fits = [r["timings"]["fit_s"] for r in done.records]
    assert (mss["recorded"], mss["planned"]) == (2, 3)
    assert mss["mean_fit_s"] == pytest.approx(np.mean(fits))
    assert mss["left_s"] == pytest.approx(np.mean(fits) * 1)
    cpu = [r["timings"]["cpu_s"] for r in done.records]
    assert all(c > 0 for c in cpu) and mss["mean_cpu_s"] == pytest.approx(np.mean(cpu))
    assert all(r["recorded"] == 0 for m, r in rows.items() if m != "MSSBoost")
    # the fit seconds a not-yet-recorded run's grid search checkpoint holds are done
    from mlkit.experiment import checkpoint_path, planned_runs

    [(key, third)] = [(k, p) for k, p in planned_runs(spec, tmp_path)
                      if p.parent.name == slug("MSSBoost") and p.name == "r02-f00.json"]
    cell = {"score": 0.5, "fit_s": 0.25 * np.mean(fits), "cpu_s": 0.1}
    for made_under, done in [(f"{key}:data:kernels", 0.25), ("another-key:data", 0.0)]:
        checkpoint_path(third).write_text(json.dumps(
            {"format": 2, "key": made_under, "identity": "i", "cells": {"a|0": cell}}))
        rows = {r["method"]: r for r in run_status(spec, tmp_path)}
        assert rows["MSSBoost"]["left_s"] == pytest.approx((1 - done) * np.mean(fits))
    checkpoint_path(third).unlink()
    # a record whose key is not the current one is not counted
    record = next((tmp_path / "runs").rglob("*.json"))
    rec = json.loads(record.read_text())
    record.write_text(json.dumps({**rec, "key": "made-by-other-settings"}))
    assert {r["method"]: r for r in run_status(spec, tmp_path)}["MSSBoost"]["recorded"] == 1
    run(spec, tmp_path)
    assert all(r["recorded"] == r["planned"] and r["left_s"] == 0
               for r in run_status(spec, tmp_path))


def test_partial_renders_the_recorded_runs_and_says_how_many(results):
    from mlkit._errors import MlkitError
    from mlkit.targets import reproduce, resolve_target, saved_results

    target = resolve_target("mssboost/fig4")
    with pytest.raises(MlkitError, match="no run recorded yet"):
        reproduce(target, quick=True, partial=True)
    _, out, full = reproduce(target, quick=True)
    next((out / "runs").rglob("*.json")).unlink()
    _, out, part = reproduce(target, quick=True, partial=True)
    assert (part.computed, part.missing, len(part.records)) == (0, 1, full.computed - 1)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] and json.loads((out / "manifest.json").read_text())[
        "runs_missing"] == 1
    assert f"[partial: {full.computed - 1} of the {full.computed} runs" in \
        (out / "table.md").read_text()
    assert len(saved_results(target)[0]) == full.computed - 1


def test_runs_go_repetition_by_repetition_across_datasets(tmp_path, monkeypatch):
    import mlkit.runner.loop as experiment

    from .conftest import CONFIGS as C

    order = []

    def fake(data, method, split, *args):
        order.append((data.name, split.repeat, split.fold, method.display))
        return {"metrics": {}, "timings": {"fit_s": 0.0, "predict_s": 0.0}}

    monkeypatch.setattr(experiment, "_fit_and_score", fake)
    spec = load_spec(C / "sparsemi" / "table1.yaml", quick=True,
                     overrides=["protocol.repeats=2"])
    run(spec, tmp_path)
    sets = [(d, r) for d, r, _, _ in order]
    # every dataset's repetition 0 before any repetition 1; within it, the config's order
    assert sets == sorted(sets, key=lambda t: (t[1], ["musk1", "corel10"].index(t[0])))
    assert sets[0] == ("musk1", 0) and ("corel10", 0) in sets[:len(order) // 2]


def test_grid_options_stratified_folds_n_xv_cap_and_recorded_fold_scores():
    """grid_stratified draws the inner folds with StratifiedKFold; grid_n_xv_cap leaves out
    the N_XV values at or above the instances of the smallest inner training fold; the
    options count in a run's key only when set (earlier records keep theirs); the record's
    grid_scores are the search's fold scores, grid point by grid point."""
    from types import SimpleNamespace

    from sklearn.model_selection import StratifiedKFold

    from mlkit.config import MethodSpec
    from mlkit.experiment import (_key_payload, _run_key, build_estimator, capped_n_xv_grid,
                                  grid_scores)

    grid = {"n_xv": [2, 5, 20, 60], "C": [1.0]}
    plain = MethodSpec(name="rsvm", grid=grid)
    strat = MethodSpec(name="rsvm", grid=grid, grid_stratified=True,
                       grid_n_xv_cap="training_instances")
    split = SimpleNamespace(seed=3, validation=None, repeat=0, fold=0)
    search = build_estimator(strat, split)
    assert isinstance(search.cv, StratifiedKFold)
    assert not isinstance(build_estimator(plain, split).cv, StratifiedKFold)
    rng = np.random.default_rng(0)
    bags = [rng.normal(size=(3, 2)) + (i % 2) for i in range(12)]       # 36 instances
    train = SimpleNamespace(inputs=bags, target=np.arange(12) % 2)
    # 3 folds of 12 bags: inner training parts of 8 bags, 24 instances
    assert capped_n_xv_grid(search, train)["n_xv"] == [2, 5, 20]
    spec = load_spec(FIG4)
    dataset = spec.datasets[0]
    same = MethodSpec(name="rsvm", grid=grid, grid_stratified=False, grid_also=[])
    assert _run_key(spec, dataset, plain, split) == _run_key(spec, dataset, same, split)
    # a method without the options keeps the key it had before they existed
    before = {k: v for k, v in plain.model_dump(mode="json").items()
              if k not in ("grid_stratified", "grid_n_xv_cap", "grid_rule", "grid_also",
                           "grid_staged", "grid_borrow", "seed_from", "label", "repeats")}
    assert _key_payload(spec, dataset, plain)["method"] == before
    assert _run_key(spec, dataset, plain, split) != _run_key(spec, dataset, strat, split)
    # seed_from: an ablation row takes the seeds (random state, inner folds) of another
    paired = MethodSpec(name="rsvm", grid=grid, label="RSVM | cap", seed_from="rsvm",
                        grid_n_xv_cap="training_instances")
    twin = build_estimator(paired, split)
    assert twin.estimator.random_state == search.estimator.random_state
    assert twin.cv.random_state == search.cv.random_state
    assert build_estimator(MethodSpec(name="rsvm", grid=grid, label="other"),
                           split).estimator.random_state != search.estimator.random_state
    search.set_params(param_grid=capped_n_xv_grid(search, train)).fit(train.inputs,
                                                                      train.target)
    scores = grid_scores(search)
    assert scores["params"] == [dict(p) for p in search.cv_results_["params"]]
    np.testing.assert_allclose(np.mean(scores["fold_scores"], axis=1),
                               search.cv_results_["mean_test_score"])

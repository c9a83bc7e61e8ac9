"""The ``labelled`` protocol's ``n_test``: scored rows of a fixed size per class, drawn every
repeat from the rows outside the labelled draw (and the validation part); with
``validation_size: 0`` both draws come from the whole dataset (HFSS Table 3's protocol).
Without ``n_test`` the splits and run keys are those made before the field existed."""

import numpy as np
import pytest
from pydantic import ValidationError

from mlkit._errors import MlkitError
from mlkit.config import DatasetSpec, ExperimentSpec, MethodSpec, ProtocolSpec
from mlkit.experiment import _fit_and_score_run, _protocol_key, load_records, make_splits, run

from .test_protocol_labelled import _data, _Spy


def _protocol(**kw):
    base = dict(split="labelled", validation_size=0.0, repeats=4, seed=0, n_labelled=3,
                n_test=4)
    return ProtocolSpec(**{**base, **kw})


def _per_class(y, rows, k=3):
    return np.bincount(y[rows], minlength=k)


def test_whole_dataset_draws_exact_counts_and_disjoint():
    data = _data()                                      # classes of 12, 20, 16
    for s in make_splits(data, _protocol()):
        assert s.validation is None
        np.testing.assert_array_equal(_per_class(data.y, s.train), [3, 3, 3])
        np.testing.assert_array_equal(_per_class(data.y, s.test), [4, 4, 4])
        assert len(np.unique(s.train)) == 9 and len(np.unique(s.test)) == 12
        assert not set(s.train) & set(s.test)


def test_with_validation_part_scored_rows_avoid_train_and_validation():
    data = _data()
    p = _protocol(validation_size=0.2, test_size=0.5)
    for s in make_splits(data, p):
        np.testing.assert_array_equal(_per_class(data.y, s.train), [3, 3, 3])
        np.testing.assert_array_equal(_per_class(data.y, s.test), [4, 4, 4])
        # the validation part is the one drawn without n_test: 20% of half of every class
        np.testing.assert_array_equal(_per_class(data.y, s.validation),
                                      np.round(0.2 * np.array([6, 10, 8])))
        assert not set(s.train) & set(s.test) and not set(s.validation) & set(s.test)
        assert not set(s.train) & set(s.validation)
    # train and validation are exactly those of the protocol without n_test (same draws)
    for a, b in zip(make_splits(data, p), make_splits(data, p.model_copy(update={"n_test": None}))):
        np.testing.assert_array_equal(a.train, b.train)
        np.testing.assert_array_equal(a.validation, b.validation)
        assert set(a.test) <= set(np.setdiff1d(np.arange(len(data)),
                                               np.concatenate([a.train, a.validation])))


def test_deterministic_and_repeat_r_independent_of_the_repeat_count():
    data = _data()
    a, b = make_splits(data, _protocol()), make_splits(data, _protocol())
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.train, y.train)
        np.testing.assert_array_equal(x.test, y.test)
        assert x.seed == y.seed
    last = make_splits(data, _protocol(repeats=2))[1]
    np.testing.assert_array_equal(last.train, a[1].train)
    np.testing.assert_array_equal(last.test, a[1].test)
    other = make_splits(data, _protocol(seed=1))
    assert any(not np.array_equal(x.train, z.train) for x, z in zip(a, other))


def test_repeats_draw_from_the_whole_class_not_a_fixed_pool():
    data = _data()                                      # class 0: 12 samples
    splits = make_splits(data, _protocol(repeats=60))
    trains = [set(s.train) for s in splits]
    assert len({frozenset(t) for t in trains}) == 60    # every repeat its own draw
    for c, count in enumerate((12, 20, 16)):
        rows = set(np.flatnonzero(data.y == c))
        seen_train = set().union(*trains) & rows
        seen_test = set().union(*(set(s.test) for s in splits)) & rows
        # a fixed pool would hold n_labelled + n_test = 7 rows of each class at most
        assert seen_train == rows and seen_test == rows
        # each row trains in about n_labelled/count of the repeats (binomial, 60 draws)
        freq = np.array([sum(r in t for t in trains) for r in sorted(rows)]) / 60
        assert abs(freq.mean() - 3 / count) < 1e-12     # exactly 3 per class every repeat
    # a row in one repeat's test set trains in another repeat: no fixed train/test partition
    assert set(splits[0].test) & set().union(*trains[1:])


def test_multilabel_positives_and_negatives_per_label():
    data = _data((40, 40), multilabel=True)
    for s in make_splits(data, _protocol(n_labelled=3, n_test=5)):
        Y = data.y
        for rows, k in ((s.train, 3), (s.test, 5)):
            assert np.all(Y[rows].sum(axis=0) >= k) and np.all((1 - Y[rows]).sum(axis=0) >= k)
        assert len(s.test) <= 2 * 5 * 3 and not set(s.train) & set(s.test)


def test_too_small_classes_are_one_line_errors():
    data = _data()                                      # class 0 has 12
    with pytest.raises(MlkitError) as exc:
        make_splits(data, _protocol(n_labelled=6, n_test=7))
    msg = str(exc.value)
    assert "\n" not in msg and "class 0 has 12 samples" in msg and "6 + 7" in msg
    # with a validation part the rest may run short: said with the fields to lower
    with pytest.raises(MlkitError) as exc:
        make_splits(data, _protocol(n_labelled=3, n_test=8, validation_size=0.9,
                                    test_size=0.5))
    msg = str(exc.value)
    assert "\n" not in msg and "n_test=8" in msg and "class 0" in msg
    for bad in ({"n_test": 0}, {"validation_size": -0.1}, {"validation_size": 1.0}):
        with pytest.raises(ValidationError):
            _protocol(**bad)


def test_run_keys_unchanged_without_n_test():
    base = dict(split="labelled", test_size=0.5, validation_size=0.2, seed=3, n_labelled=3)
    # the key of a labelled protocol made before n_test existed: exactly these fields
    assert _protocol_key(ProtocolSpec(**base)) == {
        "split": "labelled", "test_size": 0.5, "n_folds": 10, "stratify": False, "seed": 3,
        "n_labelled": 3, "validation_size": 0.2}
    assert _protocol_key(ProtocolSpec(**base, n_test=5))["n_test"] == 5
    for other in ("holdout", "cv", "predefined"):
        assert "n_test" not in _protocol_key(ProtocolSpec(split=other, n_test=5))
    # and its splits: the indices the protocol drew before n_test existed (seed 3, repeat 0)
    s = make_splits(_data(), ProtocolSpec(**base, repeats=1))[0]
    assert s.seed == 2891048379
    assert s.train.tolist() == [2, 3, 10, 12, 26, 29, 34, 42, 45]
    assert s.validation.tolist() == [9, 18, 27, 37, 41]
    assert s.test.tolist() == [0, 4, 5, 7, 11, 13, 15, 19, 20, 21, 23, 24, 28, 32, 35, 36,
                               40, 46, 47]
    m = make_splits(_data((30, 30), multilabel=True),
                    ProtocolSpec(split="labelled", test_size=0.5, seed=0, n_labelled=4))[0]
    assert m.train.tolist() == [0, 2, 6, 12, 15, 17, 19, 22, 27, 32, 33, 37, 40, 41, 45, 50,
                                53, 58]
    assert m.validation.tolist() == [7, 10, 16, 23, 28, 35]


def test_no_validation_part_without_grid_fits_train_scores_test():
    data = _data(counts=(8, 30, 14))
    split = make_splits(data, _protocol(repeats=1))[0]
    _Spy.fitted_rows = []
    rec = _fit_and_score_run(data, MethodSpec(name="cat", label="spy", params={"a": 1}),
                             split, ["accuracy"], False, _Spy)
    assert [set(r) for r in _Spy.fitted_rows] == [set(split.train)]
    assert rec["n_train"] == 9 and rec["n_test"] == 12
    assert rec["metrics"]["accuracy"] == pytest.approx(np.mean(data.y[split.test] == 1))
    assert "n_validation" not in rec


def test_no_validation_part_with_grid_chooses_by_cv_on_train_rows():
    data = _data(counts=(8, 30, 14))
    split = make_splits(data, _protocol(repeats=1, n_labelled=6, n_test=2))[0]
    _Spy.fitted_rows = []
    rec = _fit_and_score_run(data, MethodSpec(name="cat", label="spy", grid={"a": [0, 1]}),
                             split, ["accuracy"], False, _Spy)
    assert all(set(r) <= set(split.train) for r in _Spy.fitted_rows)   # never a test row
    assert "chosen" in rec and rec["n_test"] == 6


def test_run_records_the_fixed_sizes_and_keys_by_n_test(tmp_path, monkeypatch):
    import mlkit.runner.loop as E

    real = E.METHODS.get
    monkeypatch.setattr(E.METHODS, "get", lambda n: _Spy if n == "cat" else real(n))
    data = _data()
    monkeypatch.setattr(E, "load_dataset", lambda *a, **k: data)

    def spec(n_test):
        return ExperimentSpec(paper="t", artifact="a", metrics=["accuracy"],
                              datasets=[DatasetSpec(name="msrc-v1", label="toy")],
                              methods=[MethodSpec(name="cat")],
                              protocol=_protocol(repeats=2, n_test=n_test))

    first = run(spec(4), tmp_path / "out")
    assert first.computed == 2
    assert [(r["n_train"], r["n_test"]) for r in first.records] == [(9, 12)] * 2
    again = run(spec(4), tmp_path / "out")
    assert again.computed == 0 and again.reused == 2
    other = run(spec(5), tmp_path / "out")              # a new n_test: new keys, recomputed
    assert other.computed == 2
    assert {r["n_test"] for r in load_records(tmp_path / "out")} == {15}


def test_validation_size_zero_without_n_test_scores_the_whole_test_part():
    data = _data()
    p = ProtocolSpec(split="labelled", test_size=0.5, validation_size=0.0, repeats=2,
                     n_labelled=3)
    for s, w in zip(make_splits(data, p), make_splits(data, p.model_copy(
            update={"validation_size": 0.2}))):
        assert s.validation is None
        np.testing.assert_array_equal(s.train, w.train)        # the same labelled draw
        np.testing.assert_array_equal(np.sort(s.test),
                                      np.sort(np.concatenate([w.validation, w.test])))
        np.testing.assert_array_equal(_per_class(data.y, s.test), [6, 10, 8])


def test_labelled_fields_outside_the_labelled_split_are_an_error():
    """n_test / n_labelled mean something only to split: labelled: with another split (the
    config's, or a dataset's merged over it) they are a config error, not silently dropped."""
    common = dict(paper="t", artifact="a", metrics=["accuracy"],
                  methods=[MethodSpec(name="cat")])
    with pytest.raises(ValidationError, match="n_test apply to 'split: labelled' only"):
        ExperimentSpec(**common, datasets=[DatasetSpec(name="msrc-v1")],
                       protocol=ProtocolSpec(split="holdout", n_test=5))
    with pytest.raises(ValidationError, match="dataset b: n_labelled and n_test apply"):
        ExperimentSpec(**common, datasets=[DatasetSpec(name="msrc-v1", label="b", protocol={
            "n_labelled": 5, "n_test": 5})], protocol=ProtocolSpec(split="cv", n_folds=3))
    ok = ExperimentSpec(**common, datasets=[DatasetSpec(name="msrc-v1", protocol={
        "n_labelled": 5, "n_test": 5})], protocol=ProtocolSpec(split="labelled",
                                                               validation_size=0.0))
    assert ok.datasets[0].protocol_over(ok.protocol).n_test == 5

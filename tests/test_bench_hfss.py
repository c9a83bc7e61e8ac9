"""scripts/bench_hfss.py: the comparison it times is the same work on both sides, and the
liblinear floor it reports is taken from every weak SVM of HFSS's fit."""

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

from mlkit.datasets import Views

PATH = Path(__file__).resolve().parent.parent / "scripts" / "bench_hfss.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_hfss", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _problem(seed=0, n=60):
    rng = np.random.default_rng(seed)
    y = np.repeat([3, 7], n // 2)
    shift = (y == 7)[:, None]
    views = Views([rng.normal(size=(n, 4)) + 0.8 * shift, rng.normal(size=(n, 6)),
                   rng.normal(size=(n, 3)) + 0.3 * shift])
    return views, y


def test_bagging_side_gives_hfss_outputs_exactly(bench):
    views, y = _problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, seed = bench.fit_hfss(views, y, 7, 0)
        theirs = bench.fit_bagging(views, y, 7, seed)
    assert mine.keys() == theirs.keys()
    for key in mine:
        np.testing.assert_array_equal(np.asarray(mine[key], dtype=float),
                                      np.asarray(theirs[key], dtype=float), err_msg=key)


def test_timed_liblinear_sees_every_weak_svm_and_changes_nothing(bench):
    views, y = _problem(1)
    rounds = 5
    plain, _ = bench.fit_hfss(views, y, rounds, 2)
    with bench.timed_liblinear() as spent:
        timed, _ = bench.fit_hfss(views, y, rounds, 2)
    assert spent[1] == rounds * len(views.views)       # one solve per (round, subspace)
    assert spent[0] >= 0.0
    for key in plain:
        np.testing.assert_array_equal(np.asarray(plain[key], dtype=float),
                                      np.asarray(timed[key], dtype=float), err_msg=key)
    # outside the context the solver is HFSS's own again
    import mlkit.methods.hfss as hfss

    assert hfss._train_wrap is bench.hfss_module._train_wrap
    assert getattr(hfss._train_wrap, "__name__", "") != "timed"

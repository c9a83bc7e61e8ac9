"""Metrics against independent computations (scikit-learn, scipy, hand-worked examples)."""

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score as sk_ap
from sklearn.metrics import f1_score

from mlkit.metrics import (accuracy_score, average_precision_score, hamming_error,
                           macro_f1_score, mean_average_precision_score,
                           mean_confidence_interval)


def test_ap_hand_example():
    # ranking: + - + - -  -> (1/1 + 2/3) / 2
    y = np.array([1, 0, 1, 0, 0])
    s = np.array([5, 4, 3, 2, 1.0])
    assert average_precision_score(y, s) == pytest.approx((1 + 2 / 3) / 2)


@pytest.mark.parametrize("seed", range(5))
def test_ap_equals_sklearn_on_tie_free_scores(seed):
    rng = np.random.default_rng(seed)
    Y = (rng.random((300, 7)) < 0.2).astype(int)
    S = rng.normal(size=Y.shape) + Y
    ours = average_precision_score(Y, S)
    ref = [sk_ap(Y[:, j], S[:, j]) for j in range(Y.shape[1])]
    np.testing.assert_allclose(ours, ref, rtol=1e-12)
    assert mean_average_precision_score(Y, S) == pytest.approx(np.mean(ref))


def test_ap_accepts_pm1_and_bool_labels():
    rng = np.random.default_rng(0)
    y = rng.random(50) < 0.3
    s = rng.normal(size=50)
    a = average_precision_score(y, s)
    assert average_precision_score(np.where(y, 1, -1), s) == a
    assert average_precision_score(y.astype(int), s) == a


def test_ap_undefined_without_positives_and_mean_skips_it():
    Y = np.array([[1, 0], [0, 0], [1, 0]])
    S = np.array([[0.9, 0.1], [0.2, 0.3], [0.8, 0.5]])
    ap = average_precision_score(Y, S)
    assert ap[0] == 1.0 and np.isnan(ap[1])
    with pytest.warns(UserWarning, match="1 of 2 labels have no positive example"):
        assert mean_average_precision_score(Y, S) == 1.0


def test_ap_shape_mismatch():
    with pytest.raises(ValueError, match="shape"):
        average_precision_score(np.ones(3), np.ones(4))


def test_hamming_error_counts_wrong_signs():
    Y = np.array([[1, 0], [0, 1]])
    F = np.array([[0.5, 0.2], [-1.0, 0.3]])       # one wrong of four
    assert hamming_error(Y, F) == 0.25
    assert hamming_error(np.where(Y > 0, 1, -1), F) == 0.25


@pytest.mark.parametrize("seed", range(3))
def test_macro_f1_equals_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 5, 200)
    p = np.where(rng.random(200) < 0.6, y, rng.integers(0, 6, 200))   # a class only predicted
    assert macro_f1_score(y, p) == pytest.approx(f1_score(y, p, average="macro",
                                                          labels=np.union1d(y, p)))


def test_accuracy():
    assert accuracy_score([1, 2, 3, 4], [1, 2, 0, 4]) == 0.75
    with pytest.raises(ValueError):
        accuracy_score([1, 2], [1])


def test_confidence_interval_equals_scipy():
    v = np.array([0.45, 0.452, 0.449, 0.455, 0.447, 0.451, 0.453, 0.448, 0.45, 0.456])
    mean, half = mean_confidence_interval(v)
    lo, hi = stats.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=stats.sem(v))
    assert mean == pytest.approx(v.mean())
    assert half == pytest.approx((hi - lo) / 2)
    assert np.isnan(mean_confidence_interval([0.3])[1])

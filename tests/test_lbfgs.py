"""The direct L-BFGS-B loop (mlkit.methods.mi._lbfgs): bitwise the iterates of
``scipy.optimize.minimize(method="L-BFGS-B")``, the same stopping rules and messages, and a
fallback to ``minimize`` where scipy's private routine cannot be driven."""

import numpy as np
import pytest
import scipy
from scipy.optimize import minimize

from mlkit.methods.mi import _lbfgs
from mlkit.methods.mi._label_mean import LBFGS_OPTIONS, label_mean_objective


def label_mean_problem(n_bags, n_xv, seed):
    rng = np.random.default_rng(seed)
    B = rng.uniform(size=(n_bags, n_xv)) / np.sqrt(n_xv)
    y = np.where(rng.uniform(size=n_bags) > 0.4, 1.0, -1.0)
    return B, y, rng.normal(scale=0.1, size=n_xv + 1)


def scipy_reference(args, x0, **options):
    return minimize(label_mean_objective, x0, jac=True, args=args, method="L-BFGS-B",
                    options=options)


@pytest.mark.skipif(tuple(int(p) for p in scipy.__version__.split(".")[:2]) < (1, 15),
                    reason="scipy < 1.15 has the Fortran setulb: lbfgs falls back to minimize")
def test_the_fast_loop_is_usable_with_the_installed_scipy():
    # a later scipy that changes setulb makes lbfgs fall back silently; this test says so
    assert _lbfgs._fast_available()


@pytest.mark.parametrize("n_bags,n_xv,C,warm", [(60, 10, 1.0, False), (80, 50, 100.0, True),
                                               (40, 120, 1000.0, False), (200, 30, 0.1, True)])
def test_lbfgs_is_bitwise_scipys_minimize(n_bags, n_xv, C, warm):
    B, y, start = label_mean_problem(n_bags, n_xv, seed=n_xv)
    x0 = start if warm else np.zeros(n_xv + 1)
    args = (B, y, None, C)
    ref = scipy_reference(args, x0, **LBFGS_OPTIONS)
    x, value, success, message = _lbfgs.lbfgs(label_mean_objective, x0, args, **LBFGS_OPTIONS)
    assert np.array_equal(x, ref.x) and value == ref.fun
    assert success == ref.success and message == ref.message


def test_limits_stop_it_as_they_stop_scipy():
    B, y, _ = label_mean_problem(100, 40, seed=3)
    args, x0 = (B, y, None, 100.0), np.zeros(41)
    for options in ({"maxiter": 3}, {"maxfun": 4}):
        ref = scipy_reference(args, x0, **LBFGS_OPTIONS, **options)
        x, value, success, message = _lbfgs.lbfgs(label_mean_objective, x0, args,
                                                  **LBFGS_OPTIONS, **options)
        assert not success and not ref.success and message == ref.message
        assert np.array_equal(x, ref.x) and value == ref.fun


def test_the_fallback_gives_the_same_result(monkeypatch):
    B, y, start = label_mean_problem(50, 20, seed=5)
    args = (B, y, None, 10.0)
    fast = _lbfgs.lbfgs(label_mean_objective, start, args, **LBFGS_OPTIONS)
    monkeypatch.setitem(_lbfgs._STATE, "fast", False)
    slow = _lbfgs.lbfgs(label_mean_objective, start, args, **LBFGS_OPTIONS)
    assert np.array_equal(fast[0], slow[0]) and fast[1:] == slow[1:]


def test_a_private_routine_that_cannot_be_called_means_the_fallback(monkeypatch):
    def other_convention(*args):
        raise TypeError("setulb() takes another argument list")

    monkeypatch.setattr(_lbfgs, "_setulb_loop", other_convention)
    monkeypatch.delitem(_lbfgs._STATE, "fast", raising=False)
    assert not _lbfgs._fast_available()
    B, y, _ = label_mean_problem(30, 8, seed=7)
    args = (B, y, None, 1.0)
    x, value, success, _ = _lbfgs.lbfgs(label_mean_objective, np.zeros(9), args,
                                        **LBFGS_OPTIONS)
    ref = scipy_reference(args, np.zeros(9), **LBFGS_OPTIONS)
    assert success and np.array_equal(x, ref.x) and value == ref.fun

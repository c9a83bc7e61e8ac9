"""Unconstrained L-BFGS with scipy's own L-BFGS-B routine, without its per-call wrappers.

``scipy.optimize.minimize(method="L-BFGS-B")`` drives the routine ``setulb`` through a
``ScalarFunction`` and a ``MemoizeJac``: a copy of x, an equality test and a cache lookup on
every evaluation. For the label-mean SVM of SparseMI (a few hundred bags, 10-1000 expansion
vectors, ~170 evaluations per solve, 20 solves per Z on COREL-20) that bookkeeping costs
about as much as the objective itself (~0.35 ms against ~0.3 ms per evaluation).

:func:`lbfgs` runs the same ``setulb`` loop as ``scipy.optimize._lbfgsb_py._minimize_lbfgsb``
(no bounds, the same stopping rules, the same evaluation count for ``maxfun``) and calls the
objective directly, so its iterates, its optimum and its value are bitwise those of
``minimize``. ``setulb`` is private: where its calling convention differs (scipy < 1.15 had
the Fortran one) or the loop would not reproduce ``minimize`` on a check problem, it falls
back to ``minimize`` itself, with the same result, only slower.
"""

import numpy as np
from scipy.optimize import minimize

__all__ = ["lbfgs"]

_FG, _NEW_X, _CONVERGENCE, _STOP = 3, 1, 4, 5
_STATE = {}            # "fast": whether the direct loop is usable here (checked once)


def _setulb_loop(fun, x0, args, ftol, gtol, maxcor, maxls, maxiter, maxfun):
    """``_minimize_lbfgsb``'s loop for ``bounds=None`` and ``jac=True``:
    (x, f, success, message)."""
    from scipy.optimize import _lbfgsb
    from scipy.optimize._lbfgsb_py import status_messages, task_messages

    x = np.array(np.asarray(x0, dtype=np.float64).ravel(), dtype=np.float64)
    n, m = len(x), maxcor
    f, g = fun(x.copy(), *args)        # minimize evaluates x0 first (nfev = 1)
    last_x, nfev = x.copy(), 1
    nbd, low, up = np.zeros(n, np.int32), np.zeros(n), np.zeros(n)
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m)
    iwa = np.zeros(3 * n, np.int32)
    task, ln_task = np.zeros(2, np.int32), np.zeros(2, np.int32)
    lsave, isave, dsave = np.zeros(4, np.int32), np.zeros(44, np.int32), np.zeros(29)
    factr = ftol / np.finfo(float).eps
    fcur, gcur = np.array(0.0), np.zeros(n)
    n_iter = 0
    while True:
        gcur = np.asarray(gcur, dtype=np.float64).copy()
        _lbfgsb.setulb(m, x, low, up, nbd, fcur, gcur, factr, gtol, wa, iwa, task, lsave,
                       isave, dsave, maxls, ln_task)
        if task[0] == _FG:
            if not (x == last_x).all():       # np.array_equal without its checks
                f, g = fun(x.copy(), *args)
                last_x, nfev = x.copy(), nfev + 1
            fcur, gcur = f, g
        elif task[0] == _NEW_X:
            n_iter += 1
            if n_iter >= maxiter:
                task[0], task[1] = _STOP, 504
            elif nfev > maxfun:
                task[0], task[1] = _STOP, 502
        else:
            break
    success = task[0] == _CONVERGENCE
    return x, float(fcur), success, f"{status_messages[task[0]]}: {task_messages[task[1]]}"


def _minimize_loop(fun, x0, args, ftol, gtol, maxcor, maxls, maxiter, maxfun):
    res = minimize(fun, x0, jac=True, args=args, method="L-BFGS-B",
                   options={"ftol": ftol, "gtol": gtol, "maxcor": maxcor, "maxls": maxls,
                            "maxiter": maxiter, "maxfun": maxfun})
    return res.x, float(res.fun), bool(res.success), str(res.message)


def _check_problem(x, A, y):
    """A small squared-hinge objective of the label-mean SVM's kind, for the self-check."""
    r = np.maximum(0.0, 1.0 - y * (A @ x))
    return 0.5 * x @ x + r @ r, x - 2.0 * A.T @ (y * r)


def _fast_available():
    """Whether the direct ``setulb`` loop runs and reproduces ``minimize`` bitwise here."""
    if "fast" not in _STATE:
        rng = np.random.RandomState(0)
        args = (rng.normal(size=(30, 8)), np.sign(rng.normal(size=30)))
        opts = (1e-12, 1e-8, 10, 20, 15000, 15000)
        try:
            fast = _setulb_loop(_check_problem, np.zeros(8), args, *opts)
            ref = _minimize_loop(_check_problem, np.zeros(8), args, *opts)
            _STATE["fast"] = bool(np.array_equal(fast[0], ref[0]) and fast[1] == ref[1])
        except Exception:                   # a different private calling convention
            _STATE["fast"] = False
    return _STATE["fast"]


def lbfgs(fun, x0, args=(), *, ftol=2.2204460492503131e-09, gtol=1e-5, maxcor=10, maxls=20,
          maxiter=15000, maxfun=15000):
    """Minimise ``fun`` (returning value and gradient) from ``x0`` with L-BFGS, exactly as
    ``scipy.optimize.minimize(fun, x0, args, jac=True, method="L-BFGS-B", options=...)``
    without bounds, only without its per-evaluation overhead.

    Parameters
    ----------
    fun : callable ``fun(x, *args) -> (float, ndarray)``
        Must not modify x.
    x0 : ndarray of shape (n,)
    args : tuple
    ftol, gtol, maxcor, maxls, maxiter, maxfun
        As the options of scipy's L-BFGS-B (same defaults).

    Returns
    -------
    x : ndarray of shape (n,)
    value : float
    success : bool
        False when an iteration or evaluation limit or an abnormal line search stopped it.
    message : str
        scipy's status message.
    """
    run = _setulb_loop if _fast_available() else _minimize_loop
    return run(fun, x0, args, ftol, gtol, maxcor, maxls, maxiter, maxfun)

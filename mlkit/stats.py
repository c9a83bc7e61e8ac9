"""Statistics shared by every paper's tables and claims: one value per run or repetition,
Student-t confidence intervals, paired t-tests [1]_ and sign tests [2]_ over matched runs, and the
three-way verdict "significantly better / tie / significantly worse" at a paper's level.

Runs are matched by their keys, never by position: a run is keyed by ``(repeat, fold)``
(:func:`run_values`) or a repetition by ``repeat`` (:func:`repetition_values`), and
:func:`matched` pairs two such mappings key by key. A run present on one side only is an
error (``missing="error"``) or is dropped and counted (``missing="drop"``, the count is in
the test's text), never silently paired with another.

A paper's "significantly better" is a two-sided paired t-test at its level ``alpha`` (the
``alpha`` of its claims YAML, ``mlkit/papers/<paper>/claims.yaml``; 0.05 where the paper
states none) together with the sign of the mean difference; a difference that is not
significant is a *tie*.

References
----------
.. [1] Student (W. S. Gosset). The probable error of a mean. Biometrika 6(1), 1-25, 1908.
.. [2] W. J. Dixon, A. M. Mood. The statistical sign test. Journal of the American
   Statistical Association 41(236), 557-566, 1946.
"""

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as _sp

from ._errors import MlkitError

__all__ = ["complete_repeats", "repetition_values", "run_values", "mean_confidence_interval",
           "mean_spread", "matched", "PairedTest", "paired_ttest", "SignTest", "sign_test",
           "OUTCOMES"]

#: the verdicts of a paired comparison; "untested": fewer than two matched pairs
OUTCOMES = ("better", "tie", "worse", "untested")


# -- one value per run or repetition -------------------------------------------------------
def _runs(runs):
    """``runs`` as a runs frame (:func:`~mlkit.runner.result.as_runs_frame`)."""
    from .runner.result import as_runs_frame

    return as_runs_frame(runs)


def _metric(runs, metric):
    """The column of ``metric`` in a runs frame (``metrics.<name>`` where a split column
    has its name, see :func:`mlkit.runner.result.runs_frame`)."""
    for column in (f"metrics.{metric}", metric):
        if column in runs.columns:
            return runs[column]
    raise MlkitError(f"no run has the metric {metric!r} (the runs have "
                     f"{', '.join(map(str, runs.columns))})")


def _folds(runs):
    """Each run's fold, 0 for a run without one (a single split per repetition)."""
    if "fold" not in runs.columns:
        return pd.Series(0, index=runs.index)
    return runs["fold"].map(lambda f: 0 if f is None or f != f else int(f))


def complete_repeats(runs, n_folds=1):
    """The repetitions (``repeat`` of the runs frame ``runs``) with all ``n_folds`` folds
    recorded, in order: the ones :func:`repetition_values` reports and a table counts.

    >>> from mlkit.runner.result import runs_frame
    >>> complete_repeats(runs_frame([{"repeat": r} for r in (1, 0, 1, 2, 0)]), n_folds=2)
    [0, 1]
    """
    runs = _runs(runs)
    if runs.empty:
        return []
    counts = runs["repeat"].astype(int).value_counts()
    return sorted(int(k) for k, n in counts.items() if n >= n_folds)


def repetition_values(runs, metric, scale=1.0, n_folds=1):
    """``metric`` of each complete repetition of a protocol: {repeat: value}, in repeat order.
    A repetition's value is the mean over its ``n_folds`` folds (k-fold CV: that
    repetition's CV estimate; a fold whose metric is NaN is left out of the mean), or the
    run's own value where a repetition has one split (holdout, labelled, predefined). A
    repetition with fewer folds recorded (a run still in progress) is left out. The folds
    are grouped by their ``repeat`` column, never by their place in the frame.

    A paper's "mean +- std over ten runs" of a 10 x 10-fold CV (e.g. Table I of Fu et al.
    2013) is the mean and sd of these ten values, and its paired t-tests pair them, repeat
    by repeat: the spread of single folds of ~10 test bags is another, much larger,
    quantity.

    Parameters
    ----------
    runs : DataFrame
        The runs frame (:func:`mlkit.runner.result.runs_frame`) of one dataset and method; run
        records (a list of dicts) are read through :func:`~mlkit.runner.result.runs_frame`.
    metric : str
        A metric column of the frame.
    scale : float, default=1.0
        Multiplies every value (100: percentages).
    n_folds : int, default=1
        Folds per repetition (:func:`mlkit.runner.folds_per_repeat`).

    Returns
    -------
    dict of {int: float}

    Examples
    --------
    >>> from mlkit.runner.result import runs_frame
    >>> runs = runs_frame([{"repeat": r, "fold": f, "metrics": {"accuracy": a}}
    ...                    for r, f, a in [(0, 0, 0.8), (0, 1, 1.0), (1, 0, 0.7), (1, 1, 0.9),
    ...                                    (2, 0, 1)]])
    >>> repetition_values(runs, "accuracy", 100, n_folds=2)
    {0: 90.0, 1: 80.0}
    """
    runs = _runs(runs)
    if runs.empty:
        return {}
    values = _metric(runs, metric)
    by_repeat = {int(k): g.to_numpy(dtype=float)
                 for k, g in values.groupby(runs["repeat"].astype(int), sort=False)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # a repetition of NaN folds
        return {k: scale * float(np.nanmean(by_repeat[k]))
                for k in complete_repeats(runs, n_folds)}


def run_values(runs, value, scale=1.0):
    """{(repeat, fold): value} of the runs frame ``runs`` (one dataset and method): the key
    that pairs a run with the same split's run of another method, read from the frame's
    ``repeat`` and ``fold`` columns (a run without a fold is fold 0), never from a run's
    place in the frame. ``value`` is a metric column or a function of a run's row (a
    :class:`pandas.Series`: the frame's columns, ``record`` the whole record). Two runs with
    the same (repeat, fold) are an error: pairing them would be a guess.

    Run records (a list of dicts) are read through :func:`~mlkit.runner.result.runs_frame`.

    >>> from mlkit.runner.result import runs_frame
    >>> run_values(runs_frame([{"repeat": 1, "fold": 0, "metrics": {"mean_ap": 0.5}},
    ...                        {"repeat": 0, "fold": 0, "metrics": {"mean_ap": 0.25}}]),
    ...            "mean_ap")
    {(0, 0): 0.25, (1, 0): 0.5}
    """
    runs = _runs(runs)
    if runs.empty:
        return {}
    values = ([value(row) for _, row in runs.iterrows()] if callable(value)
              else _metric(runs, value).tolist())
    out = {}
    for i, (repeat, fold, v) in enumerate(zip(runs["repeat"], _folds(runs), values)):
        key = (int(repeat), int(fold))
        if key in out:
            row = runs.iloc[i]
            raise MlkitError(f"two run records of {row.get('method') or 'one method'} on "
                             f"{row.get('dataset') or 'one dataset'} have repeat {key[0]}, "
                             f"fold {key[1]}: a run can be paired only when its (repeat, fold) "
                             "is unique; remove the duplicate record")
        out[key] = scale * float(v)
    return dict(sorted(out.items()))


# -- spreads and confidence intervals -----------------------------------------------------
def mean_confidence_interval(values, confidence=0.95):
    """Mean and half-width of its Student-t confidence interval [1]_.

    .. math:: \\bar v \\pm t_{(1+c)/2,\\,n-1}\\; s / \\sqrt{n}

    with ``s`` the sample standard deviation (ddof=1). The half-width is NaN for fewer than
    two values. NaN values are dropped.

    >>> m, h = mean_confidence_interval([1.0, 2.0, 3.0])
    >>> round(m, 3), round(h, 3)
    (2.0, 2.484)
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    mean = float(v.mean())
    if v.size < 2:
        return mean, float("nan")
    half = _sp.t.ppf((1 + confidence) / 2, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size)
    return mean, float(half)


def mean_spread(values, how="ci"):
    """(mean, spread) of ``values``: ``how="ci"`` the half-width of the 95% Student-t
    interval (:func:`mean_confidence_interval`), ``"std"`` the sample sd (ddof=1; NaN for
    one value). NaN values are dropped.

    >>> mean_spread([1.0, 2.0, 3.0], "std")
    (2.0, 1.0)
    """
    if how == "ci":
        return mean_confidence_interval(values)
    if how != "std":
        raise MlkitError(f"unknown spread {how!r}: use 'ci' (95% t-interval) or 'std'")
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    return float(v.mean()), (float(v.std(ddof=1)) if v.size > 1 else float("nan"))


# -- matching -----------------------------------------------------------------------------
def _show(keys, at_most=3):
    keys = sorted(keys)
    return ", ".join(map(str, keys[:at_most])) + (", ..." if len(keys) > at_most else "")


def matched(a, b, *, missing="error"):
    """Pair two mappings {key: value} key by key: (keys, values of ``a``, values of ``b``,
    number of keys dropped). Keys are runs (``(repeat, fold)``), repetitions (``repeat``)
    or any other unit both sides name (a label, a problem).

    Parameters
    ----------
    a, b : mapping
    missing : {"error", "drop"}, default="error"
        A key on one side only: an error naming the keys, or dropped (and counted).

    Examples
    --------
    >>> keys, x, y, dropped = matched({1: 2.0, 0: 1.0, 5: 9.0}, {0: 0.5, 1: 1.5},
    ...                               missing="drop")
    >>> keys, x.tolist(), y.tolist(), dropped
    ([0, 1], [1.0, 2.0], [0.5, 1.5], 1)
    """
    if missing not in ("error", "drop"):
        raise MlkitError(f"missing={missing!r}: use 'error' or 'drop'")
    only_a, only_b = set(a) - set(b), set(b) - set(a)
    if (only_a or only_b) and missing == "error":
        parts = [f"{len(s)} only on the {side} side ({_show(s)})"
                 for s, side in ((only_a, "first"), (only_b, "second")) if s]
        raise MlkitError("paired comparison over unmatched runs: " + "; ".join(parts)
                         + "; pair only the runs both sides have (missing='drop')")
    keys = sorted(set(a) & set(b))
    x = np.array([a[k] for k in keys], dtype=float)
    y = np.array([b[k] for k in keys], dtype=float)
    return keys, x, y, len(only_a) + len(only_b)


# -- paired t-test ------------------------------------------------------------------------
def _fmt(v, digits):
    return f"{v:.{digits}f}"


@dataclass(frozen=True)
class PairedTest:
    """A paired t-test of ``a`` against ``b`` over ``n`` matched pairs.

    ``outcome`` is "better" (``a`` significantly better than ``b`` at level ``alpha``),
    "worse", "tie" (not significant) or "untested" (fewer than two pairs: no test; counted
    as neither better nor worse). ``dropped``: runs present on one side only, left out.
    """

    n: int
    dropped: int
    mean_a: float
    mean_b: float
    diff: float             # mean of a - b over the pairs
    t: float
    p: float                # two-sided
    alpha: float
    outcome: str

    @property
    def better(self):
        return self.outcome == "better"

    @property
    def worse(self):
        return self.outcome == "worse"

    def verdict(self):
        """The outcome with its p-value: "better (p=0.003)", "tie (p=0.47)", "untested (1
        pair)"."""
        if self.outcome == "untested":
            return f"untested ({self.n} pair{'s' if self.n != 1 else ''})"
        return f"{self.outcome} (p={self.p:.2g})"

    def text(self, digits=2):
        """"a vs b, verdict" with the means over the matched pairs, e.g. "80.55 vs 81.25,
        tie (p=0.47)"; the dropped runs are said."""
        out = (f"{_fmt(self.mean_a, digits)} vs {_fmt(self.mean_b, digits)}, "
               f"{self.verdict()}")
        if self.dropped:
            out += f", {self.dropped} unmatched run{'s' if self.dropped != 1 else ''} left out"
        return out


def paired_ttest(a, b, *, alpha=0.05, missing="error", greater_is_better=True, rtol=1e-12):
    """Two-sided paired t-test of ``a`` against ``b`` ({key: value} each, matched by key with
    :func:`matched`), and the verdict at level ``alpha`` [1]_.

    .. math:: t = \\frac{\\bar d}{s_d / \\sqrt{n}},\\quad
              p = 2\\, P(T_{n-1} \\ge |t|),\\quad d_k = a_k - b_k

    ``a`` is significantly better than ``b`` when ``p < alpha`` and the mean difference
    favours ``a`` (``greater_is_better``: a higher value is better), significantly worse
    when it favours ``b``, and tied otherwise. Equal to :func:`scipy.stats.ttest_rel` on
    the matched pairs, with the limits where the differences do not vary: all zero (within
    ``rtol`` of the values) is a tie with t = 0, p = 1; a non-zero constant difference has
    ``|t| = inf``, p = 0.

    Parameters
    ----------
    a, b : mapping of {key: float}
        Keyed by run ``(repeat, fold)``, repetition, or another unit both sides name.
    alpha : float, default=0.05
        The paper's level (its claims YAML ``alpha``).
    missing : {"error", "drop"}, default="error"
        A run on one side only: an error, or left out and counted in ``dropped``.
    greater_is_better : bool, default=True
    rtol : float, default=1e-12
        Differences within ``rtol`` of the largest value are zero (rounding).

    Returns
    -------
    PairedTest

    Examples
    --------
    >>> r = paired_ttest({0: 81.0, 1: 83.0, 2: 80.0}, {0: 80.0, 1: 80.5, 2: 79.5})
    >>> r.n, r.outcome, round(r.p, 3)
    (3, 'tie', 0.157)
    """
    if not 0 < alpha < 1:
        raise MlkitError(f"alpha={alpha!r}: a test level must lie in (0, 1)")
    keys, x, y, dropped = matched(a, b, missing=missing)
    n = len(keys)
    mean_a = float(x.mean()) if n else float("nan")
    mean_b = float(y.mean()) if n else float("nan")
    d = x - y
    diff = float(d.mean()) if n else float("nan")
    if n < 2:
        return PairedTest(n, dropped, mean_a, mean_b, diff, float("nan"), float("nan"), alpha,
                          "untested")
    scale = max(1.0, float(np.max(np.abs(np.concatenate([x, y])))))
    sd = float(d.std(ddof=1))
    if np.all(np.abs(d) <= rtol * scale):                      # identical runs
        t, p = 0.0, 1.0
    elif sd <= rtol * scale:                                   # a constant non-zero shift
        t, p = float(np.sign(diff) * np.inf), 0.0
    else:
        t = diff / (sd / np.sqrt(n))
        p = float(2 * _sp.t.sf(abs(t), n - 1))
    favours_a = diff > 0 if greater_is_better else diff < 0
    outcome = "tie" if not p < alpha else ("better" if favours_a else "worse")
    return PairedTest(n, dropped, mean_a, mean_b, diff, float(t), float(p), alpha, outcome)


# -- sign test ----------------------------------------------------------------------------
@dataclass(frozen=True)
class SignTest:
    """Sign test of ``a`` against ``b``: pairs where ``a`` is higher (``wins``), lower
    (``losses``) or equal (``ties``, left out of the test), and its p-value."""

    wins: int
    losses: int
    ties: int
    p: float
    alternative: str

    @property
    def n(self):
        return self.wins + self.losses + self.ties


def sign_test(a, b, *, alternative="greater", missing="error"):
    """Sign test [2]_ of ``a`` against ``b`` ({key: value}, matched by key with
    :func:`matched`): under H0 each untied pair favours ``a`` with probability 1/2, so

    .. math:: p = P(\\mathrm{Bin}(w + l, 1/2) \\ge w)

    for ``alternative="greater"`` (``a`` higher more often), the lower tail for "less",
    both for "two-sided" (:func:`scipy.stats.binomtest`); tied pairs are left out, and with
    no untied pair p = 1.

    >>> sign_test({i: 1.0 for i in range(8)}, {i: 0.0 for i in range(8)}).p
    0.00390625
    """
    if alternative not in ("greater", "less", "two-sided"):
        raise MlkitError(f"alternative={alternative!r}: use 'greater', 'less' or 'two-sided'")
    _, x, y, _ = matched(a, b, missing=missing)
    wins, losses = int(np.sum(x > y)), int(np.sum(x < y))
    ties = len(x) - wins - losses
    p = (float(_sp.binomtest(wins, wins + losses, 0.5, alternative=alternative).pvalue)
         if wins + losses else 1.0)
    return SignTest(wins, losses, ties, p, alternative)

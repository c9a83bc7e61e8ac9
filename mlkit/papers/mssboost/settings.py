"""MSSBoost's settings chosen as Sec. 6.2.1 of Yan et al. (KDD 2007) chooses them, as a method.

:class:`MSSBoostSettings` is an estimator whose ``fit`` runs the paper's 2-fold selection
(:func:`mlkit.papers.mssboost.selection.select_mssboost_settings`, on the runner's grid
search) on its training data and keeps what it chose;
the runner stores that in every run record, so the ``mssboost/selection`` target only reads
records (it never trains) and a selection resumes like any other run. Its scores are those of
the Baseline refitted on the whole training part at the chosen rho and C, so the record also
holds the test Mean-AP of the Baseline the other settings are measured against.
"""

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval, StrOptions

from ...methods import BaselineSVM, MSSBoost
from ...methods._multilabel import MultiLabelClassifier
from ...registry import METHODS
from .selection import select_mssboost_settings

__all__ = ["MSSBoostSettings"]

_GRID = ["array-like"]


class MSSBoostSettings(MultiLabelClassifier):
    """The Baseline's rho and C, the base models' rho and C and the ratios rd, rf, selected by
    ``n_folds``-fold CV on the training data (Sec. 6.2.1 of Yan et al. 2007):

    1. the Baseline's rho (``gamma``) and C by CV Mean-AP of the Baseline;
    2. for every (rd, rf) of the grids, the base models' rho and C by CV of the Subspace model
       (one subspace SVM per label) at (rd, rf);
    3. rd, rf: the smallest rd * rf (then rd) whose scored model reaches ``fraction`` of the
       Baseline's CV Mean-AP ("the minimal ones that can achieve at least 80% of the baseline
       performance on average"); the best pair when none does. The scored model (not named
       in the paper) is ``scored``: the Subspace model, or the MSSBoost ensemble at the
       pair's rd, rf and base-model rho, C (the paper's own Table 2 puts Subspace below 80% of
       its Baseline at the ratios it chose, MSSBoost above 100%).

    Parameters
    ----------
    gamma_grid, C_grid : list of float
        The Baseline's grids (the paper's list is not given; it reports rho = 0.05).
    base_gamma_grid, base_C_grid : list of float
        The base models' grids: a subspace SVM sees rf * M features, so its best rho is
        about 1 / rf times the Baseline's.
    rd_grid, rf_grid : list of float
        The ratios searched (not listed in the paper).
    fraction : float, default=0.8
    scored : {"subspace", "mssboost"}, default="subspace"
        The model the 80% rule scores.
    scored_params : dict, default=None
        With ``scored="mssboost"``: the MSSBoost parameters other than rd, rf, gamma, C and
        random_state (None: ``n_estimators=100``, SVM base models clipped to [-1, 1], the
        chi-square filter on, ``init="zero"``: Table 2's MSSBoost).
    exhaustive : bool, default=True
        Score every (rd, rf) pair; False stops at the first pair, in the rule's order, that
        reaches the threshold (the same choice; the grid table then has fewer rows).
    n_folds : int, default=2
    random_state : int, default=0
        Seed of the CV folds and of the Subspace models' sampling.

    Attributes
    ----------
    settings_ : dict
        What :func:`~mlkit.papers.mssboost.selection.select_mssboost_settings` returns: the chosen values,
        the CV Mean-APs, the Baseline's support-vector fraction and every grid row.
    baseline_ : BaselineSVM
        The Baseline at the chosen rho and C, fitted on all the training data.
    """

    _parameter_constraints = {
        "gamma_grid": _GRID, "C_grid": _GRID, "base_gamma_grid": _GRID, "base_C_grid": _GRID,
        "rd_grid": _GRID, "rf_grid": _GRID,
        "fraction": [Interval(Real, 0, 1, closed="right")],
        "scored": [StrOptions({"subspace", "mssboost"})],
        "scored_params": [dict, None], "exhaustive": ["boolean"],
        "n_folds": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    #: constructor parameters that make the common tests' fits fast
    _quick_params = dict(gamma_grid=[0.5], C_grid=[1.0], base_gamma_grid=[0.5],
                         base_C_grid=[1.0], rd_grid=[0.5], rf_grid=[1.0])

    #: scikit-learn checks that cannot hold for a 2-fold CV selection, with the reason
    _expected_failed_checks = {
        "check_fit2d_1feature": "its 10 rows leave a 2-fold CV fold with one class only"}

    def __init__(self, *, gamma_grid=(0.005, 0.02, 0.05, 0.2, 0.5, 2.0),
                 C_grid=(1.0, 10.0), base_gamma_grid=(0.05, 0.2, 0.5, 2.0, 5.0, 20.0),
                 base_C_grid=(1.0, 10.0), rd_grid=(0.1, 0.2, 0.3, 0.5),
                 rf_grid=(0.1, 0.2, 0.3, 0.5), fraction=0.8, scored="subspace",
                 scored_params=None, exhaustive=True, n_folds=2, random_state=0):
        self.gamma_grid = gamma_grid
        self.C_grid = C_grid
        self.base_gamma_grid = base_gamma_grid
        self.base_C_grid = base_C_grid
        self.rd_grid = rd_grid
        self.rf_grid = rf_grid
        self.fraction = fraction
        self.scored = scored
        self.scored_params = scored_params
        self.exhaustive = exhaustive
        self.n_folds = n_folds
        self.random_state = random_state

    def fit(self, X, Y):
        """Select every setting by CV on (X, Y), then refit the Baseline at its chosen rho, C."""
        X, Y = self._check_fit_input(X, Y)
        self._check_grids()
        seed = 0 if self.random_state is None else self.random_state
        if not isinstance(seed, Integral):
            seed = int(seed.randint(2**31 - 1))
        self.settings_ = select_mssboost_settings(
            X, Y, gamma_grid=self.gamma_grid, C_grid=self.C_grid,
            base_gamma_grid=self.base_gamma_grid, base_C_grid=self.base_C_grid,
            rd_grid=self.rd_grid, rf_grid=self.rf_grid, fraction=self.fraction,
            n_folds=self.n_folds, random_state=int(seed), exhaustive=self.exhaustive, scored_estimator=self._scored_estimator(int(seed)))
        self.baseline_ = BaselineSVM(gamma=self.settings_["baseline_gamma"],
                                     C=self.settings_["baseline_C"]).fit(X, Y)
        return self

    #: Table 2's MSSBoost, the model ``scored="mssboost"`` scores unless ``scored_params``
    _TABLE2_MSSBOOST = dict(n_estimators=100, base_learner="svm", score_bound="clip",
                            chi2_filter=True, init="zero")

    def _scored_estimator(self, seed):
        if self.scored == "subspace":
            return None
        params = dict(self._TABLE2_MSSBOOST if self.scored_params is None
                      else self.scored_params)
        return MSSBoost(**params, random_state=seed)

    def _check_grids(self):
        for name in ("gamma_grid", "C_grid", "base_gamma_grid", "base_C_grid", "rd_grid",
                     "rf_grid"):
            grid = getattr(self, name)
            if (isinstance(grid, (str, bytes)) or not hasattr(grid, "__len__") or not len(grid)
                    or not all(isinstance(v, Real) and v > 0 for v in grid)):
                raise ValueError(f"{name} must be a non-empty list of positive numbers, "
                                 f"got {grid!r}")
        if any(v > 1 for v in [*self.rd_grid, *self.rf_grid]):
            raise ValueError("rd_grid and rf_grid are sampling ratios in (0, 1]")

    def decision_function(self, X):
        """The scores of the Baseline refitted at the chosen rho and C."""
        X = self._check_X(X)
        return self._shape_scores(self.baseline_.decision_function(X))

    def run_record_extras(self):
        """The chosen settings with every grid row, and the refitted Baseline's facts."""
        return {**self.settings_,
                "baseline": self.baseline_.run_record_extras()}


METHODS.register("mssboost-settings", MSSBoostSettings,
                 summary="MSSBoost's rho, C, rd, rf by the paper's 2-fold CV rule (Yan et al. "
                         "2007, Sec. 6.2.1); scores with the selected Baseline",
                 family="multilabel", paper="mssboost")

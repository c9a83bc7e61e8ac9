"""mlkit's estimators, scikit-learn compatible and usable without the CLI."""

from ..registry import METHODS
from .mssboost import MSSBoost, NSBoost, RSBag
from .multilabel_baselines import BaggingSVM, BaselineSVM, Subspace

__all__ = ["RSBag", "NSBoost", "MSSBoost", "BaselineSVM", "BaggingSVM", "Subspace"]

for _name, _cls, _summary in [
    ("rsbag", RSBag, "round-robin random subspace bagging (Yan et al. 2007, Alg. 1)"),
    ("nsboost", NSBoost, "non-shared subspace boosting (Yan et al. 2007, Sec. 4.1)"),
    ("mssboost", MSSBoost, "model-shared subspace boosting (Yan et al. 2007, Alg. 2)"),
    ("baseline-svm", BaselineSVM, "one RBF SVM per label on all data (Yan et al. 2007, Table 2)"),
    ("bagging-svm", BaggingSVM, "10 bagged RBF SVMs per label (Yan et al. 2007, Table 2)"),
    ("subspace", Subspace, "one subspace model per label (Yan et al. 2007, Table 2)"),
]:
    METHODS.register(_name, _cls, summary=_summary, family="multilabel", paper="mssboost")

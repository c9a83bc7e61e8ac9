"""mlkit's estimators, scikit-learn compatible and usable without the CLI."""

from ..registry import METHODS
from .mssboost import MSSBoost, NSBoost, RSBag

__all__ = ["RSBag", "NSBoost", "MSSBoost"]

for _name, _cls, _summary in [
    ("rsbag", RSBag, "round-robin random subspace bagging (Yan et al. 2007, Alg. 1)"),
    ("nsboost", NSBoost, "non-shared subspace boosting (Yan et al. 2007, Sec. 4.1)"),
    ("mssboost", MSSBoost, "model-shared subspace boosting (Yan et al. 2007, Alg. 2)"),
]:
    METHODS.register(_name, _cls, summary=_summary, family="multilabel", paper="mssboost")

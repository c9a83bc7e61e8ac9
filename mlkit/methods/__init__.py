"""mlkit's estimators, scikit-learn compatible and usable without the CLI.

Each estimator module registers its methods itself (``METHODS.register`` at its end); the
registry imports every module of this package, so a new method is one new module.
"""

from .mi import MILES, MISVM, RS, RSVM, MIKernel, miSVM
from .mssboost import MSSBoost, NSBoost, RSBag
from .multilabel_baselines import BaggingSVM, BaselineSVM, Subspace

__all__ = ["RSBag", "NSBoost", "MSSBoost", "BaselineSVM", "BaggingSVM", "Subspace",
           "miSVM", "MISVM", "MIKernel", "MILES", "RS", "RSVM"]

"""mlkit's estimators, scikit-learn compatible and usable without the CLI."""

from ..registry import METHODS
from .mssboost import MSSBoost, NSBoost, RSBag
from .mi import MILES, MISVM, RS, RSVM, MIKernel, miSVM
from .multilabel_baselines import BaggingSVM, BaselineSVM, Subspace

__all__ = ["RSBag", "NSBoost", "MSSBoost", "BaselineSVM", "BaggingSVM", "Subspace",
           "miSVM", "MISVM", "MIKernel", "MILES", "RS", "RSVM"]

for _name, _cls, _summary in [
    ("rsbag", RSBag, "round-robin random subspace bagging (Yan et al. 2007, Alg. 1)"),
    ("nsboost", NSBoost, "non-shared subspace boosting (Yan et al. 2007, Sec. 4.1)"),
    ("mssboost", MSSBoost, "model-shared subspace boosting (Yan et al. 2007, Alg. 2)"),
    ("baseline-svm", BaselineSVM, "one RBF SVM per label on all data (Yan et al. 2007, Table 2)"),
    ("bagging-svm", BaggingSVM, "10 bagged RBF SVMs per label (Yan et al. 2007, Table 2)"),
    ("subspace", Subspace, "one subspace model per label (Yan et al. 2007, Table 2)"),
]:
    METHODS.register(_name, _cls, summary=_summary, family="multilabel", paper="mssboost")

for _name, _cls, _summary in [
    ("mi-svm", miSVM, "mi-SVM: instance-level alternating SVM (Andrews et al. 2002)"),
    ("mi-svm-bag", MISVM, "MI-SVM: bag-level witness alternating SVM (Andrews et al. 2002)"),
    ("mi-kernel", MIKernel, "MI-Kernel: SVM on the normalised set kernel (Gaertner et al. 2002)"),
    ("miles", MILES, "MILES: instance-similarity embedding + 1-norm SVM (Chen et al. 2006)"),
    ("rs", RS, "RS: reduced-set approximation of MI-Kernel with N_XV vectors (Fu et al. 2013)"),
    ("rsvm", RSVM, "RSVM: N_XV random instances as expansion vectors (Fu et al. 2013)"),
]:
    METHODS.register(_name, _cls, summary=_summary, family="multi-instance", paper="sparsemi")

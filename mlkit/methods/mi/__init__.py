"""Multi-instance kernel classifiers: the baselines of SparseMI (Fu et al., TNNLS 2013).

Every class takes a list of bags (each an (n_i, d) array or sparse matrix) and one label per
bag: ``fit(bags, y)``, ``decision_function(bags)``, ``predict(bags)``.
"""

from .mikernel import MIKernel
from .miles import MILES
from .misvm import MISVM, miSVM
from .reduced import RS, RSVM
from .sparsemi import SparseMI

__all__ = ["miSVM", "MISVM", "MIKernel", "MILES", "RS", "RSVM", "SparseMI"]

"""SparseMI (Fu, Lu, Ting & Zhang, TNNLS 2013): the toy bag-feature illustration (Fig. 1),
the synthetic XV trajectories (Fig. 2), the initialisation bars (Fig. 3) and the paper's
claims; Tables I and II use the generic metric table.

The folder has the shape of every paper's: ``data`` registers the paper's generators
(``sparsemi-toy`` of Fig. 1, ``sparsemi-binary`` and ``sparsemi-3class`` of Fig. 2; the real
benchmarks are :mod:`mlkit.datasets.mi_catalog`'s), ``renderers`` draws Figs. 1-4, ``claims``
(with ``claims.yaml``) checks claims 1-5 (``mlkit verify sparsemi``). The methods (SparseMI and
its peers) are estimators of :mod:`mlkit.methods.mi`.
"""

from . import claims, data, renderers  # noqa: F401  (importing registers them)

#: The paper's full reference.
CITATION = ("Z. Fu, G. Lu, K. M. Ting, D. Zhang. Learning sparse kernel classifiers for "
            "multi-instance classification. IEEE Transactions on Neural Networks and Learning "
            "Systems 24(9):1377-1389, 2013.")

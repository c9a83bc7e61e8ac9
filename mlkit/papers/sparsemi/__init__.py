"""SparseMI (Fu, Lu, Ting & Zhang, TNNLS 2013): the toy bag-feature illustration (Fig. 1),
the synthetic XV trajectories (Fig. 2), the initialisation bars (Fig. 3) and the paper's
claims; Tables I and II use the generic metric table."""

from . import claims, figures  # noqa: F401  (importing registers the dataset, renderers, claims)

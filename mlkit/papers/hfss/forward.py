"""``hfss-forward``: HFSS whose stages are the forward-selection prefixes (Fig. 5).

Algorithm 2 of Gao & Fan (MIR 2005) grows the ensemble one goodness-sorted subspace at a
time. :class:`HFSSForward` is :class:`mlkit.methods.HFSS` itself (same fit, same numbers)
whose ``staged_decision_function`` yields, for k = 1..k_homo, the decision values of the
ensemble of the k best subspaces (``HFSS.forward_score``'s stages), so that the runner's
``curves: true`` records the test accuracy of every prefix beside the OOB forward curve of
``run_record_extras``: the green curve of Fig. 5, with no renderer training anything.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ...methods.hfss import HFSS
from ...registry import METHODS

__all__ = ["HFSSForward"]


class HFSSForward(HFSS):
    """:class:`mlkit.methods.HFSS` staged by goodness-sorted prefixes of subspaces (Fig. 5
    of Gao & Fan 2005, Algorithm 2): stage k is the ensemble of the k best subspaces (all
    their weak SVMs). Fit and predictions are HFSS's.

    Parameters
    ----------
    n_rounds, selection, bestk_ties, pca_variance, C, loss, scaling, vote, tie_break
        As in :class:`mlkit.methods.HFSS`.
    no_oob, subspaces, view_columns, tol, max_iter, n_jobs, random_state
        As in :class:`mlkit.methods.HFSS`.
    """

    numerics_revision = 1

    def staged_decision_function(self, X):
        """Decision values of each goodness-sorted prefix (k = 1..n_subspaces).

        Yields
        ------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        Xs, _ = self._views(X, fitted=True)
        S = np.stack([p.forward_scores(Xs, self) for p in self.problems_], axis=1)
        for k in range(S.shape[2]):
            yield self._decide(S[:, :, k])


METHODS.register("hfss-forward", HFSSForward, family="multi-view", paper="hfss",
                 summary="HFSS staged by goodness-sorted prefixes of subspaces: the test "
                         "curve of forward selection (Gao & Fan, MIR 2005, Alg. 2, Fig. 5)")

"""A synthetic multi-label set whose labels share latent concepts with a settable strength.

A controlled test of the hypothesis behind MSSBoost (Yan, Tesic & Smith, KDD 2007, Sec. 1):
a base model learned for one label helps other labels when the labels are "interrelated ...
and hence exhibit certain co-occurrence patterns". Here the labels come in groups, every
group thresholds the same latent concept, and ``cooccurrence`` sets how much of each label's
score is that shared concept (0: independent labels, 1: the labels of a group are the same
label). **The data are synthetic.**
"""

import numpy as np

from ._containers import MultiLabelDataset
from .catalog import register_dataset

__all__ = ["make_shared_concepts", "within_group_phi"]


def _unit_directions(n, dim, rng):
    W = rng.standard_normal((n, dim))
    return W / np.linalg.norm(W, axis=1, keepdims=True)


def make_shared_concepts(n_samples=1000, *, n_features=30, n_labels=12, n_concepts=3,
                         cooccurrence=0.5, noise=0.3, positive_rate=0.2, random_state=0):
    """Labels in groups that share a latent concept, with a settable co-occurrence strength.

    X ~ N(0, I) in ``n_features`` dimensions. Concept k has a score c_k(x) = |u_k . x| and
    label l, of group k(l) = l mod ``n_concepts``, a private score p_l(x) = |v_l . x| (u, v
    random unit directions: every score is a slab, not a half-space, so an RBF SVM is the
    right learner). Label l is positive for the ``positive_rate`` share of the examples
    with the largest

    .. math:: z_l = \\sqrt{s}\\, \\tilde c_{k(l)}(x) + \\sqrt{1 - s}\\, \\tilde p_l(x)
              + \\sigma \\varepsilon_l

    (tilde: standardised over the sample; s = ``cooccurrence``, sigma = ``noise``,
    epsilon standard normal). At s = 0 the labels are independent; as s grows the labels of
    a group co-occur more (their correlation :func:`within_group_phi` rises) and a model
    learned for one of them ranks the others too; at s = 1 they differ by the noise only.
    Labels of different groups stay independent.

    Parameters
    ----------
    n_samples, n_features, n_labels, n_concepts : int
    cooccurrence : float in [0, 1], default=0.5
    noise : float >= 0, default=0.3
    positive_rate : float in (0, 1), default=0.2
        Each label's share of positives (exact: the top ranks of z_l).
    random_state : int, default=0

    Returns
    -------
    MultiLabelDataset
        ``synthetic=True``; labels named "c<k>.l<j>" (group k, member j).
    """
    if not 0 <= cooccurrence <= 1:
        raise ValueError(f"cooccurrence must be in [0, 1], got {cooccurrence}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    if not 0 < positive_rate < 1:
        raise ValueError(f"positive_rate must be in (0, 1), got {positive_rate}")
    if not 1 <= n_concepts <= n_labels:
        raise ValueError(f"n_concepts must be in 1..n_labels ({n_labels}), got {n_concepts}")
    if n_samples < 10 or n_features < 1:
        raise ValueError(f"need n_samples >= 10 and n_features >= 1, got {n_samples}, "
                         f"{n_features}")
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((n_samples, n_features))
    U = _unit_directions(n_concepts, n_features, rng)
    V = _unit_directions(n_labels, n_features, rng)

    def standard(S):
        return (S - S.mean(axis=0)) / S.std(axis=0)

    concept = standard(np.abs(X @ U.T))                    # (n, K)
    private = standard(np.abs(X @ V.T))                    # (n, L)
    group = np.arange(n_labels) % n_concepts
    Z = (np.sqrt(cooccurrence) * concept[:, group] + np.sqrt(1 - cooccurrence) * private
         + noise * rng.standard_normal((n_samples, n_labels)))
    n_pos = max(1, int(round(positive_rate * n_samples)))
    ranks = np.argsort(np.argsort(-Z, axis=0, kind="stable"), axis=0, kind="stable")
    Y = (ranks < n_pos).astype(np.int8)
    member = np.arange(n_labels) // n_concepts
    return MultiLabelDataset(
        name="shared-concepts", X=X, Y=Y,
        label_names=[f"c{k + 1}.l{j + 1}" for k, j in zip(group, member)],
        feature_names=[f"x{j + 1}" for j in range(n_features)], synthetic=True,
        source=f"shared-concepts generator (synthetic): {n_labels} labels in {n_concepts} "
               f"groups, co-occurrence strength {cooccurrence:g}",
        descr=make_shared_concepts.__doc__)


def within_group_phi(data, n_concepts):
    """Mean phi (Pearson) correlation of the label pairs of the same group and of the pairs
    of different groups, for a :func:`make_shared_concepts` set of ``n_concepts`` groups."""
    Y = np.asarray(data.Y, dtype=float)
    phi = np.corrcoef(Y.T)
    group = np.arange(Y.shape[1]) % n_concepts
    same = (group[:, None] == group[None, :]) & ~np.eye(len(group), dtype=bool)
    other = group[:, None] != group[None, :]
    return (float(phi[same].mean()) if same.any() else float("nan"),
            float(phi[other].mean()) if other.any() else float("nan"))


register_dataset("shared-concepts", make_shared_concepts, kind="multilabel", synthetic=True,
                 paper="mssboost",
                 summary="synthetic labels in groups sharing a latent concept, with a settable "
                         "co-occurrence strength (MSSBoost's sharing hypothesis)")

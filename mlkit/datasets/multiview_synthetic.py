"""``multiview-synthetic``: a multi-view generator with planted informative features.

For tests of multi-view feature selection and extraction (LM3FE, HFSS): each view holds a
few informative columns, whose distribution depends on the class (or labels), and noise
columns that do not. A method that selects features should rank the informative columns of
every view first.
"""

from numbers import Integral

import numpy as np

from ._containers import MultiViewDataset
from .catalog import register_dataset

__all__ = ["make_multiview_synthetic"]


def _as_per_view(value, n_views, what):
    values = [value] * n_views if isinstance(value, Integral) else list(value)
    if len(values) != n_views:
        raise ValueError(f"{what} needs one value per view ({n_views}), got {len(values)}")
    return [int(v) for v in values]


def make_multiview_synthetic(n_samples=300, *, n_classes=4, view_dims=(20, 30, 40),
                             n_informative=4, multilabel=False, label_density=0.3,
                             class_sep=2.0, random_state=0):
    """Multi-view data with ``n_informative[v]`` class-dependent columns in every view.

    Single-label (``multilabel=False``): classes are balanced (sample i has class
    ``i mod n_classes`` before a random permutation). Class c has in view v a centre
    ``m_{v,c}`` in R^{k_v} (k_v = ``n_informative[v]``) drawn from N(0, class_sep^2 I);
    the informative columns of sample i are ``m_{v,y_i} + e``, e ~ N(0, I).
    Multi-label (``multilabel=True``): every label l is on independently with probability
    ``label_density`` (a sample with no label gets one at random, so each has at least one);
    the informative columns are ``sum_{l on} m_{v,l} + e``. In both cases the other columns
    of each view are N(0, 1) noise independent of the target.

    The informative columns are the FIRST ``n_informative[v]`` columns of view v, so a
    selection method can be checked against ``range(n_informative[v])``.

    Parameters
    ----------
    n_samples : int, default=300
    n_classes : int, default=4
        Classes (single-label) or labels (multi-label), at least 2.
    view_dims : list of int, default=(20, 30, 40)
        The number of columns of each view.
    n_informative : int or list of int, default=4
        Informative columns per view (one int for every view), each <= its view's size.
    multilabel : bool, default=False
    label_density : float in (0, 1), default=0.3
        Probability of each label in the multi-label case.
    class_sep : float, default=2.0
        Standard deviation of the class centres: larger is easier.
    random_state : int, default=0

    Returns
    -------
    MultiViewDataset
        ``synthetic=True``; y a class vector (n,) or a 0/1 matrix (n, n_classes).
    """
    view_dims = ([int(view_dims)] if isinstance(view_dims, Integral)
                 else [int(d) for d in view_dims])
    n_views = len(view_dims)
    if n_views == 0:
        raise ValueError("view_dims must give at least one view")
    n_informative = _as_per_view(n_informative, n_views, "n_informative")
    if int(n_samples) < 2 * n_classes:
        raise ValueError(f"n_samples must be at least 2 * n_classes = {2 * n_classes}, "
                         f"got {n_samples}")
    if n_classes < 2:
        raise ValueError(f"n_classes must be at least 2, got {n_classes}")
    for v, (d, k) in enumerate(zip(view_dims, n_informative)):
        if d < 1 or not 0 <= k <= d:
            raise ValueError(f"view {v + 1}: n_informative={k} must be in 0..view_dims={d} "
                             "(and the view needs at least one column)")
    if multilabel and not 0 < label_density < 1:
        raise ValueError(f"label_density must be in (0, 1), got {label_density}")
    if class_sep <= 0:
        raise ValueError(f"class_sep must be positive, got {class_sep}")
    rng = np.random.default_rng(random_state)
    n = int(n_samples)
    if multilabel:
        Y = (rng.random((n, n_classes)) < label_density).astype(np.int8)
        empty = np.flatnonzero(Y.sum(axis=1) == 0)
        Y[empty, rng.integers(0, n_classes, len(empty))] = 1
        y, weights = Y, Y.astype(float)
    else:
        y = rng.permutation(np.arange(n) % n_classes)
        weights = np.eye(n_classes)[y]
    views = []
    for d, k in zip(view_dims, n_informative):
        centres = rng.normal(0.0, class_sep, (n_classes, k))
        X = rng.normal(size=(n, d))
        X[:, :k] += weights @ centres
        views.append(X)
    kind = "multi-label" if multilabel else "single-label"
    return MultiViewDataset(
        name="multiview-synthetic", views=views,
        view_names=[f"view {v + 1}" for v in range(n_views)], y=y,
        class_names=[f"{'label' if multilabel else 'class'} {c + 1}"
                     for c in range(n_classes)],
        synthetic=True, descr=make_multiview_synthetic.__doc__,
        source=f"multi-view generator ({kind}, informative columns first: "
               f"{dict(zip(range(1, n_views + 1), n_informative))}, random_state="
               f"{random_state})")


register_dataset("multiview-synthetic", make_multiview_synthetic, kind="multi-view",
                 synthetic=True, paper="lm3fe",
                 summary="multi-view generator with planted informative columns per view "
                         "(single- or multi-label), for tests")

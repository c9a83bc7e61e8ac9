"""Synthetic data sets that mimic the papers' generated data ("-style" data)."""

import numpy as np

from .catalog import register_dataset
from ._containers import MultiLabelDataset

__all__ = ["make_mssboost_synthetic", "MSSBOOST_SYNTHETIC_REGIONS"]

#: Label regions of the MSSBoost synthetic set as axis-aligned ellipses
#: (centre x, centre y, semi-axis x, semi-axis y) inside the rectangle [-2, 2] x [-2.5, 2.5].
#: All three share the x-range [-1.128, 1.128], so one vertical stump is the right boundary
#: and another the left boundary of every label; label 1 spans y in [0, 2.256], label 2
#: [-2.256, 0] and label 3 [-2.256, 2.256], so three horizontal stumps finish the job:
#: 5 shared stumps instead of 4 per label (12). Areas are 20%, 20% and 40% of the rectangle,
#: i.e. 200/200/400 expected positives in 1000 points (Sec. 6.1 of Yan et al. 2007).
MSSBOOST_SYNTHETIC_REGIONS = (
    (0.0, 1.128, 1.128, 1.128),
    (0.0, -1.128, 1.128, 1.128),
    (0.0, 0.0, 1.128, 2.256),
)
_RECTANGLE = ((-2.0, 2.0), (-2.5, 2.5))


def make_mssboost_synthetic(n_samples=1000, *, label_noise=0.0, random_state=0):
    """The 2-D, 3-label synthetic set of MSSBoost (Yan, Tesic & Smith, KDD 2007, Sec. 6.1, Fig. 1).

    The paper: "1000 data points uniformly sampled inside a rectangle area. The samples of each
    label follow a different Gaussian distribution ... 200, 200 and 400 samples for the first,
    second and third label ... Some of these samples are associated with multiple labels and
    some of them do not have any labels." Our reconstruction (the paper gives no coordinates):
    points are uniform in [-2, 2] x [-2.5, 2.5] and a point carries label l when it lies inside
    the level-set ellipse of label l's Gaussian, :data:`MSSBOOST_SYNTHETIC_REGIONS` (the dashed
    boundaries of Fig. 1). The regions are chosen to satisfy the paper's remark that 4
    axis-parallel stumps per label are needed without sharing but 5 shared ones suffice.

    Parameters
    ----------
    n_samples : int, default=1000
    label_noise : float in [0, 0.5), default=0.0
        Probability of flipping each (example, label) entry; the paper adds none.
    random_state : int, default=0

    Returns
    -------
    MultiLabelDataset
        ``synthetic=True``; Y has shape (n_samples, 3).
    """
    if not 0 <= label_noise < 0.5:
        raise ValueError(f"label_noise must be in [0, 0.5), got {label_noise}")
    if int(n_samples) < 10:
        raise ValueError(f"n_samples must be at least 10, got {n_samples}")
    rng = np.random.default_rng(random_state)
    (x0, x1), (y0, y1) = _RECTANGLE
    X = np.column_stack([rng.uniform(x0, x1, n_samples), rng.uniform(y0, y1, n_samples)])
    regions = np.array(MSSBOOST_SYNTHETIC_REGIONS)
    cx, cy, ax, ay = (regions[:, j] for j in range(4))
    inside = ((X[:, :1] - cx) / ax) ** 2 + ((X[:, 1:] - cy) / ay) ** 2 <= 1.0
    flips = rng.random(inside.shape) < label_noise
    Y = (inside ^ flips).astype(np.int8)
    return MultiLabelDataset(
        name="mssboost-synthetic", X=X, Y=Y, label_names=["Label 1", "Label 2", "Label 3"],
        feature_names=["x1", "x2"], synthetic=True,
        source="MSSBoost-style generator (Yan et al. 2007, Sec. 6.1), reconstructed",
        descr=make_mssboost_synthetic.__doc__,
    )


register_dataset("mssboost-synthetic", make_mssboost_synthetic, kind="multilabel",
                 synthetic=True, paper="mssboost",
                 summary="MSSBoost-style 2-D, 3-label set (Yan et al. 2007, Sec. 6.1, Fig. 1)")

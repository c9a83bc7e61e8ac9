"""LM3FE's own data: ``emotions-views``, Mulan's emotions set as two modalities, its stand-in
for MIR Flickr (the paper's NUS-WIDE and MIR Flickr readers, and the real sets that play
NUS-WIDE's role, are shared readers of :mod:`mlkit.datasets`).

LM3FE (Luo et al., TIP 2016) evaluates multi-label multi-modal feature extraction on MIR
Flickr 25k (38 concepts; SIFT, GIST and tag modalities), whose features are not public in
the paper's form. The real multi-label substitute in that role is the emotions set
(Trohidis et al. 2008; 593 music clips, 6 emotion labels) split by attribute name into two
modalities: the 64 timbre attributes (spectral centroid, rolloff, flux and MFCC means and
standard deviations) and the 8 rhythm attributes of the beat histogram (``BH_LowPeakAmp``,
``BH_LowPeakBPM``, ``BH_HighPeakAmp``, ``BH_HighPeakBPM``, ``BH_HighLowRatio``, ``BHSUM1``,
``BHSUM2``, ``BHSUM3``). The data are read, verified and split by
:func:`~mlkit.datasets.mulan_catalog.load_emotions` (its ``feature_groups``); Mulan's
predefined split (391 training, 202 test clips) is kept in ``splits``.
"""

import numpy as np

from ..._errors import DataError
from ...datasets._containers import MultiViewDataset
from ...datasets.catalog import register_dataset
from ...datasets.mulan_catalog import EMOTIONS_FILES, load_emotions

__all__ = ["load_emotions_views", "EMOTIONS_VIEWS"]

#: The two modalities, in view order.
EMOTIONS_VIEWS = ("timbre", "rhythm")


def load_emotions_views(*, min_positives=0, max_labels=None):
    """Mulan's emotions as a two-view multi-label set: timbre (64-D) and rhythm (8-D).

    The real substitute for MIR Flickr in LM3FE's multi-label experiments (Table II,
    Fig. 4): music, not images, and two modalities instead of three.

    Parameters
    ----------
    min_positives, max_labels
        See :func:`~mlkit.datasets.mulan_catalog.restrict_labels`.

    Returns
    -------
    MultiViewDataset
        Views ``[X_timbre (593, 64), X_rhythm (593, 8)]``, y the 0/1 label matrix (593, 6),
        ``class_names`` the emotion labels, ``splits`` Mulan's train/test rows.
    """
    data = load_emotions(min_positives=min_positives, max_labels=max_labels)
    groups = data.feature_groups or {}
    if set(groups) != set(EMOTIONS_VIEWS):
        raise DataError(f"emotions: expected the feature groups {', '.join(EMOTIONS_VIEWS)}, "
                        f"got {', '.join(groups) or 'none'}")
    views = [np.ascontiguousarray(data.X[:, groups[v]]) for v in EMOTIONS_VIEWS]
    return MultiViewDataset(
        name="emotions-views", views=views, view_names=list(EMOTIONS_VIEWS),
        y=np.asarray(data.Y, dtype=np.int8), class_names=list(data.label_names),
        splits=dict(data.splits), checksums=dict(data.checksums), synthetic=False,
        source="emotions (Trohidis et al. 2008, ISMIR; Mulan repository tsoumakas/mulan@"
               "43f6389) split by attribute name into timbre and rhythm (BH*) modalities: "
               "a real substitute in the MIR Flickr role of LM3FE (Luo et al. 2016)",
        descr=load_emotions_views.__doc__)


register_dataset("emotions-views", load_emotions_views, kind="multi-view", synthetic=False,
                 files=EMOTIONS_FILES, paper="lm3fe",
                 summary="emotions (Trohidis et al. 2008) as 2 views, 64 timbre + 8 rhythm "
                         "features, 6 labels: LM3FE's real substitute for MIR Flickr")

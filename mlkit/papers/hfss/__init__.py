"""HFSS (Gao & Fan, ACM MIR 2005): hierarchical feature subset selection on grouped features.

The paper's image-blob data are private: every target runs on the real grouped-feature
datasets (mfeat, msrc-v1, scene15, leaves100 with 19 classes; the harder corel1k-mpeg7, 10
seeded categories of corel10k-mpeg7, wikipedia and uci-segmentation) and on ``hfss-synthetic`` (the
paper's 83-D / 9-subspace layout, synthetic), each caption saying which.

The folder has the shape of every paper's: ``data`` registers the paper's own data (the
``hfss-synthetic`` generator and ``hfss-subset``, the one-problem / class-subset views of a
dataset; Table 3's small samples are the runner's ``split: labelled`` with ``n_test``, drawn
from the whole dataset every repetition); ``renderers`` the figures and special tables;
``claims`` (with ``claims.yaml``) the paper's claims 1-4 (``mlkit verify hfss``). The
method is :class:`mlkit.methods.HFSS`.
"""

from . import claims, data, renderers  # noqa: F401  (importing registers them)

#: The paper's full reference.
CITATION = ("Y. Gao, J. Fan. Semantic image classification with hierarchical feature subset "
            "selection. ACM SIGMM International Workshop on Multimedia Information Retrieval "
            "(MIR) 2005, pp. 135-142.")

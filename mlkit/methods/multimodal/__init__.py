"""Multi-modal (multi-view) feature extraction: LM3FE (Luo et al., TIP 2016) and the baselines
of its Tables I-II (BSF, CAT, MTFS/MTFT, RFS/RFT, SSMVFS/SSMVFT, TMFS).

Every method is one scikit-learn estimator: feature selection at ``percent``% of each modality
or the C-dimensional transformation, followed by a kNN or RLS ``classifier`` (see
:mod:`mlkit.methods.multimodal._base`).
"""

from .baselines import BSF, CAT, MTFS, MTFT, RFS, RFT, SSMVFS, SSMVFT, TMFS
from .lm3fe import LM3FE, LM3FS, LM3FT

__all__ = ["LM3FE", "LM3FS", "LM3FT", "BSF", "CAT", "MTFS", "MTFT", "RFS", "RFT", "SSMVFS",
           "SSMVFT", "TMFS"]

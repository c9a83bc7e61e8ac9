"""Multi-modal (multi-view) feature extraction: LM3FE (Luo et al., TIP 2016) and the baselines
of its Tables I-II (BSF, CAT, MTFS/MTFT, RFS/RFT, SSMVFS/SSMVFT, TMFS)."""

from .lm3fe import LM3FE, LM3FS, LM3FT

__all__ = ["LM3FE", "LM3FS", "LM3FT"]

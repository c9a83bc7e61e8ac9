"""MSSBoost (Yan, Tesic & Smith, KDD 2007): the synthetic figures (1, 3, 4) and the real
collections' tables and figures (Tables 1-2, Figs. 5-8), with the paper's claims."""

from . import ablation, real, scaling, settings, sharing, synthetic  # noqa: F401  (importing registers the targets and claims)

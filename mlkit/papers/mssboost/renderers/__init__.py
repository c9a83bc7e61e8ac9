"""MSSBoost's renderers, one module per group of targets.

``real``: the real collections' Tables 1-2, Figs. 5-8 (drawn from Table 2's runs) and the
settings of Sec. 6.2.1 (``mssboost/selection``); ``synthetic``: Figs. 1, 3 and 4 on the
synthetic set; ``sharing``: the sharing hypothesis against label co-occurrence
(``mssboost/sharing``); ``ablation``: one change at a time from Table 2's settings
(``mssboost/ablation``); ``convergence``: one change at a time from Fig. 4's MSSBoost on the
synthetic set (``mssboost/convergence``); ``scaling``: the cost ratios against the training size
(``mssboost/scaling``).
"""

from . import ablation, convergence, real, scaling, sharing, synthetic  # noqa: F401  (importing registers them)

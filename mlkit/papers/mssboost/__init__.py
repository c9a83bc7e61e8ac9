"""MSSBoost (Yan, Tesic & Smith, KDD 2007): the synthetic figures (1, 3, 4) and the real
collections' tables and figures (Tables 1-2, Figs. 5-8), with the paper's claims.

The folder has the shape of every paper's: ``data`` registers the paper's generators
(``mssboost-synthetic``, ``trecvid-style``, ``shared-concepts``; the real collections in the
paper's roles are shared readers of :mod:`mlkit.datasets`), ``renderers`` (a package: one module
per group of targets, see its docstring) draws the tables and figures, ``claims`` (with
``claims.yaml``) checks claims 1-7 (``mlkit verify mssboost``). Two modules are the paper's
own: ``selection``, the model selection of Sec. 6.2.1 (2-fold CV of the Baseline and of the
subspace models, the rule choosing rd and rf), and ``settings``, the ``mssboost-settings``
method that runs it as a run of the runner. The ensembles themselves are estimators of
:mod:`mlkit.methods.mssboost`.
"""

from . import claims, data, renderers, settings  # noqa: F401  (importing registers them)

#: The paper's full reference.
CITATION = ("R. Yan, J. Tesic, J. R. Smith. Model-shared subspace boosting for multi-label "
            "classification. Proceedings of the 13th ACM SIGKDD International Conference on "
            "Knowledge Discovery and Data Mining (KDD) 2007, pp. 834-843.")

"""mlkit's estimators, scikit-learn compatible and usable without the CLI::

    from mlkit.methods import MSSBoost, SparseMI, MIKernel, MILES, HFSS, LM3FE

Each estimator module registers its methods itself (``METHODS.register`` at its end); the
registry imports every module of this package, so a new method is one new module. Every
registered method's class is importable from here (``__all__``; tests/test_common.py keeps
the two in step). The classes are imported on first use, so ``import mlkit.methods`` does
not import scikit-learn's solvers or any estimator module.

Input kinds (see each family's docstring):

* multi-label (:class:`MSSBoost`, :class:`NSBoost`, :class:`RSBag` and the baselines): one
  (n_samples, n_features) matrix X and an (n_samples, n_labels) 0/1 or -1/+1 matrix Y;
* multi-instance (:class:`SparseMI`, :class:`MIKernel`, :class:`MILES`, ...): a list of
  bags, each an (n_instances, n_features) array or sparse matrix, and one label per bag;
* multi-view (:class:`HFSS`, :class:`LM3FE` and its baselines): a
  :class:`mlkit.datasets.Views` (or a list or dict of per-view matrices), or one matrix or
  pandas DataFrame with the estimator's ``view_columns`` parameter saying which columns
  form each view.
"""

import importlib

#: public name -> module defining it (imported on first access)
_EXPORTS = {
    # multi-label (Yan et al., KDD 2007)
    "RSBag": ".mssboost", "NSBoost": ".mssboost", "MSSBoost": ".mssboost",
    "BaselineSVM": ".multilabel_baselines", "BaggingSVM": ".multilabel_baselines",
    "Subspace": ".multilabel_baselines",
    "MSSBoostSettings": "mlkit.papers.mssboost.settings",
    # multi-instance (Fu et al., TNNLS 2013)
    "SparseMI": ".mi.sparsemi", "MIKernel": ".mi.mikernel", "MILES": ".mi.miles",
    "miSVM": ".mi.misvm", "MISVM": ".mi.misvm", "RS": ".mi.reduced", "RSVM": ".mi.reduced",
    # multi-view: hierarchical feature subset selection (Gao & Fan, MIR 2005)
    "HFSS": ".hfss", "HFSSOneShotSVM": ".hfss",
    # multi-view: multi-modal feature extraction (Luo et al., TIP 2016) and its baselines
    "LM3FE": ".multimodal.lm3fe", "LM3FS": ".multimodal.lm3fe", "LM3FT": ".multimodal.lm3fe",
    "BSF": ".multimodal.baselines", "CAT": ".multimodal.baselines",
    "MTFS": ".multimodal.baselines", "MTFT": ".multimodal.baselines",
    "RFS": ".multimodal.baselines", "RFT": ".multimodal.baselines",
    "SSMVFS": ".multimodal.baselines", "SSMVFT": ".multimodal.baselines",
    "TMFS": ".multimodal.baselines",
    # the error every estimator raises for training data it cannot fit
    "TrainingDataError": "._validation",
}

__all__ = list(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value            # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))

"""Data containers, loaders and generators; ``mlkit.registry.DATASETS`` maps names to them."""

from ._containers import MultiInstanceDataset, MultiLabelDataset, MultiViewDataset
from .catalog import describe, fetch_dataset, register_dataset, verify_dataset
from .synthetic import make_mssboost_synthetic
from . import mi_catalog, mi_formats, mulan, mulan_catalog, trecvid  # noqa: F401,E402  (registers)

__all__ = ["MultiLabelDataset", "MultiInstanceDataset", "MultiViewDataset", "load_dataset",
           "make_mssboost_synthetic", "describe", "fetch_dataset", "register_dataset",
           "verify_dataset"]


def load_dataset(name=None, *, path=None, format=None, params=None):
    """Load a registered dataset by ``name``, or a user's file by ``path`` and ``format``."""
    from ..registry import DATASETS, FORMATS

    params = dict(params or {})
    if name is not None:
        return DATASETS.get(name)(**params)
    return FORMATS.get(format)(path, **params)

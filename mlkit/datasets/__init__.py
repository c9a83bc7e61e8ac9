"""Data containers, loaders and generators; ``mlkit.registry.DATASETS`` maps names to them.

Each loader and reader module registers its datasets and formats itself; the registry
imports every module of this package (no list to edit when a reader is added). The readers
here are shared: a paper's own generators and loaders live in its folder
(``mlkit/papers/<paper>/data.py``); :func:`make_mssboost_synthetic` is still importable from
here.
"""

from ._containers import MultiInstanceDataset, MultiLabelDataset, MultiViewDataset, Views
from .catalog import describe, fetch_dataset, register_dataset, verify_dataset

__all__ = ["MultiLabelDataset", "MultiInstanceDataset", "MultiViewDataset", "Views",
           "load_dataset", "make_mssboost_synthetic", "describe", "fetch_dataset",
           "register_dataset", "verify_dataset"]


def load_dataset(name=None, *, path=None, format=None, params=None, test_path=None):
    """Load a registered dataset by ``name``, or a user's file by ``path`` and ``format``
    (with ``test_path``, its predefined test part in the same format: the dataset's
    ``splits`` are then that split)."""
    from .._errors import DataError
    from ..registry import DATASETS, FORMATS
    from ._containers import with_test_part

    params = dict(params or {})
    if name is not None:
        return DATASETS.get(name)(**params)
    reader = FORMATS.get(format)
    data = reader(path, **params)
    if test_path is None:
        return data
    try:
        return with_test_part(data, reader(test_path, **params))
    except ValueError as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"{test_path}: {exc}") from None


def __getattr__(name):
    # the former home of MSSBoost's generator, imported on first use (mlkit.papers imports
    # mlkit.datasets, never the other way round at import time)
    if name == "make_mssboost_synthetic":
        from ..papers.mssboost.data import make_mssboost_synthetic

        return make_mssboost_synthetic
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

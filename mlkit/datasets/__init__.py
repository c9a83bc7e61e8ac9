"""Data containers, loaders and generators; ``mlkit.registry.DATASETS`` maps names to them.

Each loader and reader module registers its datasets and formats itself; the registry
imports every module of this package (no list to edit when a reader is added).
"""

from ._containers import MultiInstanceDataset, MultiLabelDataset, MultiViewDataset, Views
from .catalog import describe, fetch_dataset, register_dataset, verify_dataset
from .synthetic import make_mssboost_synthetic

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

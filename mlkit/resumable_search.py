"""Kept so that ``mlkit.resumable_search`` stays importable: the resumable grid search is
:mod:`mlkit.runner.grid`."""

from .runner.grid import (CHECKPOINT_SUFFIX, ResumableGridSearchCV,  # noqa: F401
                          read_checkpoint)

__all__ = ["ResumableGridSearchCV", "read_checkpoint", "CHECKPOINT_SUFFIX"]

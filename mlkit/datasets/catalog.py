"""Dataset records: a name, its loader, its files (path + SHA-256 + download URL), its kind.

A real dataset is registered with :func:`register_dataset` and the :class:`RemoteFile` list
of its files, which also enter the one pooch registry of data files
(:data:`mlkit.datasets._fetch.REGISTRY`); its loader calls :func:`fetch` (cache ->
``MLKIT_DATA_MIRROR`` -> public URL, through pooch, verified by SHA-256) and parses the
files with a format reader.
"""

from .._errors import DataError
from ..registry import DATASETS, FORMATS
from ._fetch import RemoteFile, fetch, get_data_home, register, verify

__all__ = ["register_dataset", "fetch_dataset", "verify_dataset", "describe", "RemoteFile"]


def register_dataset(name, loader, *, kind, synthetic, summary="", files=(), **meta):
    """Register ``loader`` under ``name`` with its files (added to the pooch registry of
    :mod:`mlkit.datasets._fetch`) and metadata."""
    files = tuple(files)
    for remote in files:
        register(remote)
    return DATASETS.register(name, loader, summary=summary, kind=kind, synthetic=synthetic,
                             files=files, **meta)


def fetch_dataset(name, *, force=False, data_home=None):
    """Fetch and verify every file of ``name``; the local paths (empty for generated data)."""
    return [fetch(f, data_home, force=force) for f in DATASETS.entry(name).meta.get("files", ())]


def verify_dataset(name, *, data_home=None):
    """Verify the cached files of ``name`` against their SHA-256; their paths."""
    home = get_data_home(data_home)
    paths = []
    for f in DATASETS.entry(name).meta.get("files", ()):
        path = home / f.path
        if not path.is_file():
            raise DataError(f"{name}: {path} is not downloaded; run `mlkit data fetch {name}`")
        paths.append(verify(path, f.sha256))
    return paths


def describe(name, fmt=None, **reader_params):
    """Lines describing a dataset (or a file read with format ``fmt``, with the reader's
    ``reader_params``, e.g. ``xml=`` for Mulan): provenance, files, counts."""
    if fmt is not None:
        from pathlib import Path

        from .._errors import DataError

        if not Path(name).exists():
            raise DataError(f"{name}: no such file")
        data = FORMATS.get(fmt)(name, **reader_params)
        lines = [f"{name} (format {fmt})"]
    else:
        entry = DATASETS.entry(name)
        data = entry.obj()
        lines = [f"{name}: {entry.summary}",
                 f"kind: {entry.meta.get('kind')}, "
                 f"{'synthetic' if entry.meta.get('synthetic') else 'real'} data"]
        for f in entry.meta.get("files", ()):
            lines.append(f"file: {f.path} sha256={f.sha256}"
                         + (f" url={f.url}" if f.url else ""))
    lines.append(f"provenance: {data.provenance}")
    lines += [f"{k}: {v}" for k, v in data.statistics().items()]
    if getattr(data, "views", None) is not None:      # multi-view: per-class and per-view counts
        lines += _multiview_lines(data)
    return lines


def _multiview_lines(data):
    """'class <name>: <count>' per class (a 1-D target) and 'view <name>: <dim>-D' per view."""
    import numpy as np

    lines = []
    if data.y.ndim == 1:
        classes, counts = np.unique(data.y, return_counts=True)
        names = data.class_names
        labels = [str(names[c]) if names is not None else str(c) for c in classes]
        lines += [f"{_prefixed('class', s)}: {int(k)}" for s, k in zip(labels, counts)]
    lines += [f"{_prefixed('view', str(name))}: {X.shape[1]}-D"
              for name, X in zip(data.view_names, data.views)]
    return lines


def _prefixed(word, name):
    """'class 3' for '3', but 'class 3' (not 'class class 3') for 'class 3'."""
    return name if name.startswith(word) else f"{word} {name}"

"""What ``mlkit list`` and ``mlkit data list`` print, without importing every module each time.

Listing the registries needs every module of mlkit and of its plugins imported (each
registers its own entries: :func:`mlkit.registry.load_plugins`), which pulls in
scikit-learn, SciPy, pandas and matplotlib: seconds of CPU before a line is printed. The
listing (name, summary and the metadata the lists show, per registry) is therefore kept in
the user cache folder, under a key that changes whenever anything that registers an entry
could have changed: mlkit's version, the size and modification time of every file of the
package, of every config of the configs folder (:func:`mlkit._paths.configs_dir`) and of
every file of a distribution that declares an ``mlkit.plugins`` entry point. On a miss (or
when the cache folder cannot be written) the registries are loaded as before. The cache
folder is ``$MLKIT_CACHE`` or the user cache folder (``~/.cache/mlkit/listing`` on Linux).
"""

import hashlib
import json
import logging
import os
from importlib.metadata import entry_points
from pathlib import Path

__all__ = ["listing", "KINDS"]

logger = logging.getLogger(__name__)

#: the registries the lists show, by the name ``mlkit list`` takes
KINDS = ("methods", "datasets", "targets", "formats", "metrics")
#: the metadata of an entry the lists print
_META = ("synthetic", "kind")
_PACKAGE = Path(__file__).resolve().parent
#: listings kept in the cache folder (the newest; older ones are removed on a write)
KEEP = 8


def _stats(files, base):
    return [(Path(f).relative_to(base).as_posix() if base else str(f),
             os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in files if os.path.isfile(f)]


def _key():
    from . import __version__
    from ._errors import MlkitError
    from ._paths import configs_dir

    h = hashlib.sha256(f"mlkit {__version__}\n".encode())
    package = sorted(p for p in _PACKAGE.rglob("*") if p.suffix in (".py", ".yaml")
                     and "__pycache__" not in p.parts)
    h.update(json.dumps(_stats(package, _PACKAGE)).encode())
    try:
        configs = configs_dir()
        h.update(str(configs.resolve()).encode())
        h.update(json.dumps(_stats(sorted(configs.glob("*/*.yaml")), configs)).encode())
    except MlkitError:
        h.update(b"no configs")
    for ep in sorted(entry_points(group="mlkit.plugins"), key=lambda e: (e.name, e.value)):
        h.update(f"{ep.name}={ep.value}".encode())
        dist = getattr(ep, "dist", None)
        if dist is not None:
            h.update(f"{dist.metadata['Name']} {dist.version}".encode())
            files = [dist.locate_file(f) for f in (dist.files or ())
                     if str(f).endswith((".py", ".yaml"))]
            h.update(json.dumps(_stats(sorted(map(str, files)), None)).encode())
    return h.hexdigest()[:20]


def _cache_dir():
    from platformdirs import user_cache_dir

    return Path(os.environ.get("MLKIT_CACHE") or user_cache_dir("mlkit", appauthor=False))


def _load():
    """{kind: [[name, summary, meta], ...]} from the registries themselves."""
    from . import registry

    tables = {"methods": registry.METHODS, "datasets": registry.DATASETS,
              "targets": registry.TARGETS, "formats": registry.FORMATS,
              "metrics": registry.METRICS}
    return {kind: [[e.name, e.summary, {k: e.meta[k] for k in _META if k in e.meta}]
                   for e in tables[kind].entries()] for kind in KINDS}


def listing():
    """{kind: [(name, summary, meta)]} of every list, from the cache when it is current (and
    from the registries themselves when this process has loaded them already: they then
    also hold what was registered at run time)."""
    from . import registry

    if registry._loaded:
        return _load()
    try:
        path = _cache_dir() / "listing" / f"{_key()}.json"
    except Exception as exc:            # e.g. a plugin's broken metadata: no cache
        logger.debug("listing cache key: %s", exc)
        return _load()
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(cached, dict) and set(cached) == set(KINDS):
            return cached
    except (OSError, ValueError):
        pass
    found = _load()
    _store(path, found)
    return found


def _store(path, found):
    """Write the listing under its key, keeping the :data:`KEEP` most recently written
    others: one per install sharing the cache folder (a clone and a virtual environment
    have different keys; keeping only the last would make each evict the other's, and
    every other call a miss)."""
    from ._io import write_json
    from ._errors import MlkitError

    try:
        others = [p for p in path.parent.glob("*.json") if p != path]
        others.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in others[KEEP - 1:]:
            old.unlink(missing_ok=True)
        write_json(path, found)
    except (OSError, MlkitError) as exc:    # a cache only: the list is printed anyway
        logger.debug("listing cache not written: %s", exc)

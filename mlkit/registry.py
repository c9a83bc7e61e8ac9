"""Name -> method, dataset, data format, metric, target and claim registries.

Every name a config or the CLI may use is looked up here, so an unknown name always gets the
same kind of error, listing the closest registered names. Every module registers its own
entries when imported, and :func:`load_plugins` imports every module of the packages
``mlkit.methods``, ``mlkit.datasets`` and ``mlkit.papers`` (package discovery: no list to
edit when a method, reader or paper is added). Third-party packages add theirs through the
``mlkit.plugins`` entry-point group: each entry point names a module whose import registers
its entries::

    [project.entry-points."mlkit.plugins"]
    mytool = "mytool.mlkit_plugin"
"""

import importlib
import logging
import pkgutil
import re
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from ._errors import UnknownNameError, did_you_mean

__all__ = [
    "Entry", "Registry", "METHODS", "DATASETS", "FORMATS", "METRICS", "RENDERERS", "TARGETS",
    "CLAIMS", "load_plugins", "all_estimators", "after_load",
]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "mlkit.plugins"
#: modules imported first; then every module of the packages below
_BUILTIN_MODULES = ("mlkit.metrics", "mlkit.targets", "mlkit.report.generic")
_DISCOVERED_PACKAGES = ("mlkit.methods", "mlkit.datasets", "mlkit.papers")


@dataclass(frozen=True)
class Entry:
    """One registered object with a one-line summary and free-form metadata."""

    name: str
    obj: Any
    summary: str = ""
    meta: dict = field(default_factory=dict)


def _plain(text):
    """A docstring's first line without its reST markup, for ``mlkit list``: a role
    (``:func:`~mod.name``` -> ``name``) and double backquotes are dropped."""
    text = re.sub(r":[a-z]+(?::[a-z]+)?:`~?([^`<]*?)(?:\s*<[^>]*>)?`",
                  lambda m: m.group(1).rpartition(".")[2] if "~" in m.group(0) else m.group(1),
                  text)
    return text.replace("``", "")


class Registry:
    """A name -> :class:`Entry` mapping for one kind of object ("method", "dataset", ...)."""

    def __init__(self, kind, plural=None):
        self.kind = kind
        self.plural = plural or kind + "s"
        self._entries = {}

    def register(self, name, obj=None, *, summary="", **meta):
        """Register ``obj`` under ``name``; usable as a decorator when ``obj`` is omitted."""

        def _add(o):
            if name in self._entries and self._entries[name].obj is not o:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            doc = summary or _plain((getattr(o, "__doc__", None) or "").strip().split("\n")[0])
            self._entries[name] = Entry(name, o, doc, dict(meta))
            return o

        return _add if obj is None else _add(obj)

    def entry(self, name):
        load_plugins()
        try:
            return self._entries[name]
        except KeyError:
            known = sorted(self._entries)
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}{did_you_mean(name, known)}; "
                f"known {self.plural}: {', '.join(known) if known else '(none)'}"
            ) from None

    def get(self, name):
        return self.entry(name).obj

    def names(self):
        load_plugins()
        return sorted(self._entries)

    def entries(self):
        load_plugins()
        return [self._entries[n] for n in sorted(self._entries)]

    def peek(self, name):
        """The object registered under ``name`` or None, without loading plugins."""
        entry = self._entries.get(name)
        return None if entry is None else entry.obj

    def __contains__(self, name):
        load_plugins()
        return name in self._entries


METHODS = Registry("method")
DATASETS = Registry("dataset")
FORMATS = Registry("data format")
METRICS = Registry("metric")
RENDERERS = Registry("renderer")
TARGETS = Registry("target")
CLAIMS = Registry("paper", plural="papers with claims")

_loaded = False
_after_load = []


def after_load(fn):
    """Call ``fn()`` once every module and plugin is imported (e.g. to register the targets
    of the config folders that plugins added); usable as a decorator."""
    _after_load.append(fn)
    return fn


def load_plugins():
    """Import the built-in modules, then every ``mlkit.plugins`` entry point (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True          # set first: the modules imported below look names up too
    try:
        for module in _BUILTIN_MODULES:
            importlib.import_module(module)
        for package in _DISCOVERED_PACKAGES:
            for module in _package_modules(package):
                importlib.import_module(module)
    except BaseException:
        _loaded = False     # a failed import is retried on the next look-up
        raise
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            ep.load()
        except Exception as exc:  # a broken plugin must not take the CLI down
            logger.warning("mlkit plugin %r (%s) failed to load: %s", ep.name, ep.value, exc)
    for fn in _after_load:
        fn()


def _package_modules(package):
    """Every module below ``package`` (itself first), in a stable order."""
    pkg = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
        names.append(info.name)
    return sorted(names)


def all_estimators():
    """(name, class) of every registered method, for the common estimator tests."""
    return [(e.name, e.obj) for e in METHODS.entries()]

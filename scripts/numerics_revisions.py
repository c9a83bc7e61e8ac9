"""Keep tests/numerics_revisions.json in step with the estimators' sources.

Every registered mlkit method has a ``numerics_revision`` (an int class attribute) that goes
into the key of its run records: a change that alters its numbers must bump it, so records
made before the change are never reused. ``tests/test_numerics_revisions.py`` fails when an
estimator's source (its class's modules) changed but its revision did not. After bumping
the revision, record the new source hash::

    python scripts/numerics_revisions.py

A change that provably leaves every number as it was (a docstring, a rename) may keep the
revision: say so explicitly, per method::

    python scripts/numerics_revisions.py --same-numbers mssboost nsboost

Last line: ``updated=<n> unchanged=<m>``.
"""

import argparse
import hashlib
import inspect
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "tests" / "numerics_revisions.json"


def _numeric(name):
    """Whether module ``name`` computes numbers (the methods, the kernel helpers, the model
    selection and metrics some methods use inside their fit: MSSBoost's settings, on the
    runner's grid search), as opposed to the registries, errors and I/O every module
    imports. The rest of the runner (splits, seeds) is not hashed: a change there changes
    every record and is a runner change."""
    return (name in ("mlkit.kernels", "mlkit.metrics", "mlkit.papers.mssboost.selection",
                     "mlkit.runner.grid")
            or name.startswith("mlkit.methods."))


def _imported(module):
    """The numeric mlkit modules whose names ``module`` binds (modules, or their functions
    and classes)."""
    out = set()
    for value in vars(module).values():
        name = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", None)
        if isinstance(name, str) and _numeric(name) and name in sys.modules:
            out.add(name)
    return out


def source_modules(cls):
    """The mlkit modules that define ``cls`` and its bases and the numeric mlkit modules they
    import, transitively (e.g. an inner solver, the kernel helpers), sorted."""
    modules = {k.__module__ for k in cls.__mro__ if k.__module__.startswith("mlkit.")}
    todo = list(modules)
    while todo:
        for name in _imported(sys.modules[todo.pop()]) - modules:
            modules.add(name)
            todo.append(name)
    return sorted(modules)


def source_hash(cls):
    """SHA-256 of the sources of :func:`source_modules`: a change in any of them can change
    the method's numbers."""
    digest = hashlib.sha256()
    for name in source_modules(cls):
        digest.update(name.encode())
        digest.update(inspect.getsource(sys.modules[name]).encode())
    return digest.hexdigest()


def current():
    """{method name: (numerics_revision, source hash)} of every built-in registered method."""
    from mlkit.registry import METHODS

    return {e.name: (int(getattr(e.obj, "numerics_revision", 0)), source_hash(e.obj))
            for e in METHODS.entries() if e.obj.__module__.startswith("mlkit.")}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--same-numbers", nargs="*", default=(), metavar="METHOD",
                        help="methods whose source changed without changing their numbers")
    args = parser.parse_args(argv)
    known = json.loads(FILE.read_text()) if FILE.is_file() else {}
    updated = unchanged = 0
    for name, (rev, digest) in sorted(current().items()):
        old = known.get(name)
        if old == {"revision": rev, "source": digest}:
            unchanged += 1
            continue
        if old is not None and old["revision"] == rev and name not in args.same_numbers:
            print(f"{name}: source changed but numerics_revision is still {rev}: bump it, or "
                  f"pass --same-numbers {name} if no number can change", file=sys.stderr)
            continue
        known[name] = {"revision": rev, "source": digest}
        updated += 1
    FILE.write_text(json.dumps(dict(sorted(known.items())), indent=1) + "\n")
    print(f"updated={updated} unchanged={unchanged}")


if __name__ == "__main__":
    main()

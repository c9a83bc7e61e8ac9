"""Regression runs: re-run the ``--quick`` form of targets and compare their headline
figures with the references committed under ``results/reference/<paper>/<artifact>.json``.

A reference file holds ``{"target": ..., "figures": {name: {"value": v, "abs_tol": t}}}``.
Same config + seed gives the same numbers, so tolerances only absorb floating-point
differences between machines and library versions.
"""

import math
import tempfile
from pathlib import Path

import pandas as pd

from ._errors import MlkitError
from ._io import read_json, write_json
from .registry import TARGETS
from .targets import reproduce, resolve_target, results_root

__all__ = ["reference_path", "regress", "DEFAULT_ABS_TOL"]

DEFAULT_ABS_TOL = 0.02


def reference_path(target):
    return results_root() / "reference" / target.paper / f"{target.artifact}.json"


def _compare(reference, figures):
    rows = []
    for name, ref in sorted(reference["figures"].items()):
        got = figures.get(name)
        tol = ref.get("abs_tol", DEFAULT_ABS_TOL)
        if got is None:
            ok = False
        else:
            ok = math.isclose(got, ref["value"], abs_tol=tol) or (
                math.isnan(got) and math.isnan(ref["value"]))
        rows.append({"figure": name, "reference": ref["value"], "now": got, "tolerance": tol,
                     "status": "ok" if ok else "MOVED"})
    return rows


def regress(targets=(), *, update=False, fast_only=False, jobs=1, progress=False):
    """Compare (or with ``update`` write) the references; (text table, all ok)."""
    if targets:
        chosen = [resolve_target(t) for t in targets]
    else:
        chosen = [TARGETS.get(n) for n in TARGETS.names()]
        chosen = [t for t in chosen if update or reference_path(t).is_file()]
    if fast_only:
        chosen = [t for t in chosen if t.fast]
    if not chosen:
        raise MlkitError("no target has a reference in results/reference/; write one with "
                         "`mlkit regress --update TARGET`")
    rows, ok = [], True
    for target in chosen:
        ref_file = reference_path(target)
        if not update and not ref_file.is_file():
            raise MlkitError(f"{target.name} has no reference ({ref_file}); write one with "
                             f"`mlkit regress --update {target.name}`")
        with tempfile.TemporaryDirectory(prefix="mlkit-regress-") as tmp:
            rendered, _, _ = reproduce(target, quick=True, jobs=jobs, force=True,
                                       out=Path(tmp), progress=progress)
        if update:
            write_json(ref_file, {"target": target.name, "quick": True, "figures": {
                k: {"value": v, "abs_tol": DEFAULT_ABS_TOL} for k, v in rendered.figures.items()}})
            rows.append({"target": target.name, "figure": "(all)", "status": f"wrote {ref_file}"})
            continue
        for row in _compare(read_json(ref_file), rendered.figures):
            ok &= row["status"] == "ok"
            rows.append({"target": target.name, **row})
    return pd.DataFrame(rows).to_markdown(index=False), ok

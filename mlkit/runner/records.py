"""Reading what the runs recorded: every record of a folder, the records of one invocation
(its manifest), and how far a long run has got (:func:`run_status`)."""

import logging
from pathlib import Path

import numpy as np

from .._errors import MlkitError
from .._io import read_json
from ..manifest import invocation_keys, runs_dir_of
from ..store import RunStore
from .grid import read_checkpoint
from .keys import _plan, checkpoint_path, planned_runs

__all__ = ["load_records", "manifest_records", "run_status"]

logger = logging.getLogger(__name__)


def load_records(out_dir, keys=None, include=None):
    """The run records saved in ``out_dir`` (its table and its ``runs/`` files:
    :class:`mlkit.store.RunStore`; for plots and claims, no retraining), in the order of
    their record files' paths.

    ``keys``: only the records with these run keys (those of one invocation, as its manifest
    names them), so records left by earlier settings never mix in. ``include``: read only
    the files it accepts (``include(path) -> bool``).
    """
    records = RunStore(out_dir, include=include).records()
    return [r for r in records if keys is None or r.get("key") in keys]


def manifest_records(out_dir, include=None):
    """The records of the invocation whose ``manifest.json`` is in ``out_dir``: those of its
    runs' folder whose keys have the digest it keeps
    (:func:`mlkit.manifest.invocation_keys`): all of them, or those at the runs its config
    plans. When the folder's records have changed since (a later invocation with other
    settings rewrote some), it no longer holds exactly that invocation's runs: then every
    record it holds, said in the log."""
    manifest = read_json(Path(out_dir) / "manifest.json")
    folder = runs_dir_of(manifest, out_dir)
    store = RunStore(folder, include=include)
    records = store.records()
    # all of them, or those at the runs its config plans (records of other settings, e.g.
    # more repetitions or a method dropped since, may be there too)
    keys = invocation_keys(manifest, {r.get("key") for r in records})
    if keys is None:
        planned = [store.get(path) for path in _manifest_plan(manifest, folder)]
        keys = invocation_keys(manifest, {r.get("key") for r in planned if r is not None})
    if keys is None:
        logger.warning("%s: its runs' records changed since its manifest was written; "
                       "read every record its runs' folder holds", out_dir)
        return records
    return [r for r in records if r.get("key") in keys]


def _manifest_plan(manifest, folder):
    """The record paths (in ``folder``) of the runs the config a manifest stores plans on
    the datasets it ran; none when that config no longer reads as one."""
    from ..config import ExperimentSpec

    try:
        spec = ExperimentSpec.model_validate(manifest["config"])
        return [path for _, path in planned_runs(spec, folder,
                                                 datasets=set(manifest.get("datasets") or {}))]
    except (KeyError, TypeError, ValueError, MlkitError):
        return []


def run_status(spec, out_dir, datasets=None, methods=None):
    """How far a long run has got, per (dataset, method), from its records alone: a list of
    dicts with ``dataset``, ``method``, ``recorded`` and ``planned`` run counts,
    ``mean_fit_s`` (the mean fit time of the recorded runs, None without any),
    ``mean_cpu_s`` (their mean CPU time of fitting and predicting, None when no record has
    it: older records kept wall time only) and
    ``left_s`` (``mean_fit_s`` times the runs left, less the fit seconds their grid search
    checkpoints hold: an estimate, None when unknown).
    A record counts only when its key is the one the config and methods make now.
    ``datasets`` / ``methods``: only these (display names)."""
    rows = {}
    store = RunStore(out_dir)
    for ds, method, _, key, path in _plan(spec, out_dir, datasets, methods):
        row = rows.setdefault((ds.display, method.display), {
            "dataset": ds.display, "method": method.display, "recorded": 0, "planned": 0,
            "fit_s": [], "cpu_s": [], "checkpointed_s": 0.0})
        row["planned"] += 1
        rec = store.get(path) or {}
        if rec.get("key") != key:                # not recorded: part done in a checkpoint?
            row["checkpointed_s"] += _checkpointed_seconds(checkpoint_path(path), key)
        else:
            row["recorded"] += 1
            timings = rec.get("timings", {})
            row["fit_s"].append(float(timings.get("fit_s", np.nan)))
            row["cpu_s"].append(float(timings.get("cpu_s", np.nan)))
    out = []
    for row in rows.values():
        times = [t for t in row.pop("fit_s") if np.isfinite(t)]
        cpu = [t for t in row.pop("cpu_s") if np.isfinite(t)]
        mean = float(np.mean(times)) if times else None
        left = row["planned"] - row["recorded"]
        done = row.pop("checkpointed_s")
        out.append({**row, "mean_fit_s": mean,
                    "mean_cpu_s": float(np.mean(cpu)) if cpu else None,
                    "left_s": 0.0 if left == 0 else (max(mean * left - done, 0.0)
                                                     if mean is not None else None)})
    return out


def _checkpointed_seconds(path, key):
    """Fit seconds of the grid search folds that the checkpoint ``path`` of the run with
    this key holds (0 without one, or with one made under another key)."""
    try:
        made_under = str(read_json(path)["key"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0
    if not made_under.startswith(f"{key}:"):
        return 0.0
    return float(sum(c["fit_s"] for c in read_checkpoint(path).values()))

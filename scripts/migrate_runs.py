"""Fold every target's committed run records into its table and drop the manifests' runs
index (the layout of :mod:`mlkit.store`): nothing is recomputed.

For every results folder with per-run record files (``runs/<dataset>/<method>/*.json``):

1. read every file, write the table (:func:`mlkit.store.write_table`) to a scratch file and
   read it back: every record must come back equal to the JSON it came from (``==``, and
   the same canonical JSON text, which also holds NaN to NaN and 1 apart from 1.0), else
   the migration stops before anything is changed;
2. fold them (:func:`mlkit.store.fold_runs`: table written atomically, read back and
   checked again, files removed) and check the folder's records once more against step 1.

Then every ``manifest.json`` that still lists its runs (``"runs"``) is rewritten with what
identifies them instead (:func:`mlkit.manifest.runs_index`: count, digest of the keys, total
fit + predict seconds, the number REPRODUCTION.md shows): its runs must all be in their
folder's records, and the index computed from those records must equal the one computed
from the list it replaces. Everything else in the manifest is kept as it is.

Usage::

    python scripts/migrate_runs.py [--results results] [--dry-run]

then ``mlkit report --check`` (REPRODUCTION.md unchanged) and a re-render of a few targets
in a fresh clone (0 runs computed, tables byte-identical).
"""

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

from mlkit._io import read_json, write_json
from mlkit.manifest import invocation_keys, runs_dir_of, runs_index
from mlkit.store import RunStore, _loose, fold_runs, read_table, write_table


def _canonical(value):
    return json.dumps(value, sort_keys=True)


def _has_nan(value):
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_nan(v) for v in value)
    return False


def _differences(expected, got):
    """Runs whose record in ``got`` ({run: record}) is not the one in ``expected``."""
    bad = sorted(set(expected) ^ set(got))
    for run in set(expected) & set(got):
        a, b = expected[run], got[run]
        if _canonical(a) != _canonical(b) or (not _has_nan(a) and a != b):
            bad.append(run)
    return bad


def migrate_folder(folder, dry_run=False):
    """Fold ``folder``'s record files after checking the round trip; return the number of
    records folded."""
    loose = _loose(Path(folder) / "runs")
    if not loose:
        return 0
    files = {run: entry[1] for run, entry in loose.items()}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / "runs.csv.gz"
        write_table(scratch, {run: entry[:2] for run, entry in loose.items()})
        back = {run: rec for run, (_, rec) in read_table(scratch).items()}
    bad = _differences(files, back)
    if bad:
        sys.exit(f"{folder}: {len(bad)} records do not read back equal, e.g. {bad[:3]}; "
                 "nothing changed")
    if dry_run:
        return len(files)
    if (Path(folder) / "runs.csv.gz").is_file():
        sys.exit(f"{folder}: already has a table; fold it with `mlkit fold`")
    fold_runs(folder)
    stored = {run: rec for run, (_, rec) in RunStore(folder).entries().items()}
    bad = _differences(files, stored)
    if bad:
        sys.exit(f"{folder}: {len(bad)} records differ after the fold, e.g. {bad[:3]}; "
                 "restore the folder from git")
    return len(files)


def migrate_manifest(path, dry_run=False):
    """Replace the runs list of the manifest ``path`` by its index; True when rewritten."""
    manifest = read_json(path)
    runs = manifest.get("runs")
    if runs is None:
        return False
    keys = {r["key"] for r in runs}
    folder = runs_dir_of(manifest, path.parent)
    records = [r for r in RunStore(folder).records() if r.get("key") in keys]
    if len(records) != len(runs) or {r["key"] for r in records} != keys:
        sys.exit(f"{path}: {len(runs)} runs listed, {len(records)} of them recorded in "
                 f"{folder}; nothing changed")
    # what the page showed from the list, computed as it did
    shown = sum((x.get("fit_s") or 0) + (x.get("predict_s") or 0) for x in runs)
    index = runs_index(records)
    if index["runs_count"] != len(runs) or index["runs_fit_predict_s"] != shown:
        sys.exit(f"{path}: the index of its records ({index}) is not the list's "
                 f"({len(runs)} runs, {shown} s); nothing changed")
    new = {k: v for k, v in manifest.items() if k != "runs"}
    new.update(index)
    if invocation_keys(new, keys) != keys:
        sys.exit(f"{path}: the new index does not name its runs")
    if not dry_run:
        write_json(path, new)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", type=Path, default=Path("results"))
    ap.add_argument("--dry-run", action="store_true",
                    help="check every round trip, change nothing")
    args = ap.parse_args(argv)
    if not args.results.is_dir():
        sys.exit(f"no results folder {args.results}")
    folders = sorted({p.parent.parent.parent.parent
                      for p in args.results.glob("*/*/runs/*/*/*.json")})
    total = 0
    for folder in folders:
        n = migrate_folder(folder, args.dry_run)
        total += n
        print(f"{folder}: {n} records {'checked' if args.dry_run else 'folded'}")
    rewritten = [p for p in sorted(args.results.glob("*/*/manifest.json"))
                 if migrate_manifest(p, args.dry_run)]
    print(f"{total} records in {len(folders)} tables; {len(rewritten)} manifests "
          f"{'to rewrite' if args.dry_run else 'rewritten'} without their runs list")


if __name__ == "__main__":
    main()

"""The run records of a results folder: one compressed table, and one file per run while
runs are going.

A run's record is written the moment the run finishes to a file of its own,
``runs/<dataset>/<method>/r<repeat>-f<fold>.json`` (temporary file, then rename: concurrent
runs never share a file, an interrupted one loses nothing). :func:`fold_runs` folds those
files into the folder's table, ``runs.csv.gz`` beside its ``manifest.json``, and removes
them: the form the records travel in through git (one file per target, not one per run).
:class:`RunStore` reads both, the per-run file winning over the table's row of the same run
when it was written later.

The table is a gzip-compressed CSV, one row per run, sorted by run: ``run`` (the record's
path below ``runs/`` without ``.json``, e.g. ``mssboost-synthetic/RSBag/r00-f00``),
``written_ns`` (when its file was written, ns since the epoch), the fields of :data:`FLAT`
as columns of their own (empty when the record has none) and ``record``, the rest of the
record as JSON text: a record read back is equal to the JSON it came from. Its bytes
depend on its rows alone (no time stamp in the gzip header), so folding the same records
on any machine gives the same file.
"""

import contextlib
import csv
import gzip
import hashlib
import io
import json
import logging
import os
import zlib
from pathlib import Path

from ._errors import MlkitError
from ._io import atomic_path, read_json

__all__ = ["TABLE_NAME", "FLAT", "RunStore", "fold_runs", "keys_digest", "read_table",
           "write_table", "run_id"]

logger = logging.getLogger(__name__)

#: the table of a results folder's folded run records (beside its manifest.json)
TABLE_NAME = "runs.csv.gz"
#: the folder of the per-run files (and the grid searches' checkpoints beside them)
RUNS_DIR = "runs"
#: held (flock) while a folder's records are folded: one fold at a time
LOCK_NAME = ".runs.lock"

#: the record fields that are columns of their own (what identifies a run and the data it
#: ran on), with the type a value needs to go there; any other value (an older record's
#: string ``numerics_revision``, say) stays in the ``record`` column
FLAT = {"key": str, "data_sha": str, "dataset": str, "method": str, "method_name": str,
        "repeat": int, "fold": int, "split_seed": int, "mlkit_version": str}
COLUMNS = ("run", "written_ns", *FLAT, "record")


def keys_digest(keys):
    """SHA-256 (hex) of a set of run keys: what a manifest keeps to name its runs.

    >>> keys_digest(["b", "a"]) == keys_digest({"a", "b"})
    True
    """
    return hashlib.sha256("\n".join(sorted(set(keys))).encode()).hexdigest()


def run_id(runs_dir, path):
    """The run a per-run file ``path`` below ``runs_dir`` holds: its relative path without
    ``.json`` (``dataset/method/r00-f00``)."""
    rel = Path(path).relative_to(runs_dir).as_posix()
    return rel[:-len(".json")] if rel.endswith(".json") else rel


def _order(run):
    """The sort key of a run: its record file's path parts (the order of the records read
    from files before the table existed)."""
    *dirs, name = run.split("/")
    return (*dirs, name + ".json")


def _row(run, written_ns, record):
    row = {"run": run, "written_ns": str(int(written_ns))}
    rest = dict(record)
    for name, kind in FLAT.items():
        value = rest.get(name)
        # a value goes into its column only when reading it back gives it exactly (an
        # empty field reads as "absent", so an empty string stays in the JSON)
        if type(value) is kind and value != "":
            row[name] = str(rest.pop(name))
        else:
            row[name] = ""
    row["record"] = json.dumps(rest, sort_keys=True, separators=(",", ":"))
    return row


def _from_row(row):
    record = json.loads(row["record"])
    for name, kind in FLAT.items():
        if row[name] != "":
            record[name] = kind(row[name])
    return int(row["written_ns"]), record


def write_table(path, entries):
    """Write ``entries`` ({run: (written_ns, record)}) to the table ``path``, atomically
    (temporary file, then rename); the same entries give the same bytes."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for run in sorted(entries, key=_order):
        writer.writerow(_row(run, *entries[run]))
    data = gzip.compress(buf.getvalue().encode("utf-8"), compresslevel=9, mtime=0)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


@contextlib.contextmanager
def _large_fields():
    """csv's field size limit raised for the JSON column (a record of HFSS's Table 3 is
    ~100 KB, csv's default limit 128 KB), restored after."""
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, 2**31 - 1))
    try:
        yield
    finally:
        csv.field_size_limit(old)


def read_table(path):
    """{run: (written_ns, record)} of the table ``path``; a damaged table is one
    :class:`MlkitError` naming it."""
    try:
        text = gzip.decompress(Path(path).read_bytes()).decode("utf-8")
        with _large_fields():
            reader = csv.DictReader(io.StringIO(text))
            if tuple(reader.fieldnames or ()) != COLUMNS:
                raise ValueError(f"columns {reader.fieldnames}, expected {list(COLUMNS)}")
            return {row["run"]: _from_row(row) for row in reader}
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error, ValueError,
            TypeError, KeyError) as exc:
        raise MlkitError(f"{path}: not a readable table of run records "
                         f"({type(exc).__name__}: {exc}); restore it from git") from None


def _loose(runs_dir, include=None):
    """{run: (written_ns, record, path, stat)} of the per-run files below ``runs_dir``
    (an unreadable one is skipped: it is being replaced, or damaged and recomputed)."""
    out = {}
    if not runs_dir.is_dir():
        return out
    for path in sorted(runs_dir.glob("*/*/*.json")):
        if include is not None and not include(path):
            continue
        try:
            stat = path.stat()
            record = read_json(path)
        except (OSError, ValueError):
            continue
        if isinstance(record, dict):
            out[run_id(runs_dir, path)] = (stat.st_mtime_ns, record, path, stat)
    return out


def unreadable_records(folder):
    """[(path, reason)] of the per-run files below ``folder``'s ``runs/`` that do not read as
    a record (damaged: mlkit writes every file whole, so a half-written one is never there).
    The store skips them (their runs are recomputed); a reader that must not miss a run,
    e.g. a plot, says so instead."""
    bad = []
    for path in sorted((Path(folder) / RUNS_DIR).glob("*/*/*.json")):
        try:
            record = read_json(path)
        except (OSError, ValueError) as exc:
            bad.append((path, f"{type(exc).__name__}: {exc}"))
            continue
        if not isinstance(record, dict):
            bad.append((path, f"a JSON {type(record).__name__}, not a record"))
    return bad


def _merge(table, loose):
    """{run: (written_ns, record)}: the table's rows, each replaced by its run's file when
    that was written at the same time or later."""
    merged = dict(table)
    for run, (written, record, *_) in loose.items():
        if run not in merged or written >= merged[run][0]:
            merged[run] = (written, record)
    return merged


class RunStore:
    """The run records of one results folder: its table (:data:`TABLE_NAME`) and the
    per-run files below its ``runs/`` (read first, so a fold going on meanwhile loses no
    record to the reader: a file it removes is in the table read after).

    Parameters
    ----------
    folder : path
        The folder (where ``mlkit reproduce`` puts a target's ``manifest.json``).
    include : callable, optional
        ``include(path) -> bool``: read only the files it accepts (e.g. those git tracks).
    """

    def __init__(self, folder, include=None):
        self.folder = Path(folder)
        self.include = include
        self._entries = None

    @property
    def table_path(self):
        return self.folder / TABLE_NAME

    @property
    def runs_dir(self):
        return self.folder / RUNS_DIR

    def entries(self):
        """{run: (written_ns, record)}, read once."""
        if self._entries is None:
            loose = _loose(self.runs_dir, self.include)
            table = {}
            if self.table_path.is_file() and (self.include is None
                                              or self.include(self.table_path)):
                table = read_table(self.table_path)
            self._entries = _merge(table, loose)
        return self._entries

    def records(self):
        """Every record, in the order of their file paths."""
        entries = self.entries()
        return [entries[run][1] for run in sorted(entries, key=_order)]

    def get(self, path):
        """The record of the run whose per-run file is ``path`` (from the file or the
        table), or None."""
        try:
            run = run_id(self.runs_dir, path)
        except ValueError:                      # not below this folder's runs/
            return None
        entry = self.entries().get(run)
        return None if entry is None else entry[1]


@contextlib.contextmanager
def _folding(folder):
    """Hold the fold lock of ``folder`` (an exclusive ``flock`` on its :data:`LOCK_NAME`;
    released when the process ends, however it ends)."""
    path = Path(folder) / LOCK_NAME
    with open(path, "a+b") as fh:
        try:
            import fcntl
        except ImportError:                      # Windows
            import msvcrt

            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_LOCK, 1)
            try:
                yield
            finally:
                fh.seek(0)
                msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
            return
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _same(a, b):
    """Two JSON values equal as JSON (NaN equal to NaN, 1 not equal to 1.0)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _remove_folded(path, stat):
    """Remove the per-run file ``path`` if it is still the file that was folded (``stat``):
    a run that rewrote it since keeps its new record."""
    hold = path.with_name(f".{path.name}.folded")
    try:
        os.replace(path, hold)
    except OSError:
        return False
    now = hold.stat()
    if (now.st_ino, now.st_mtime_ns, now.st_size) == (stat.st_ino, stat.st_mtime_ns,
                                                       stat.st_size):
        hold.unlink()
        return True
    try:                                  # rewritten since: put the newer record back
        os.link(hold, path)
    except FileExistsError:               # ... unless an even newer one is there
        pass
    hold.unlink()
    return False


def fold_runs(folder):
    """Fold the per-run files of ``folder`` into its table and remove them; return how
    many were folded (0: none to fold, the table is left as it is).

    The new table is written beside the old one and renamed onto it, read back and checked
    against the records it was made from before any file goes (a difference is an
    :class:`MlkitError` and removes nothing); a file rewritten meanwhile by a run is kept.
    Two folds of one folder wait for each other. Grid search checkpoints
    (``.cv-checkpoint``) stay where they are.
    """
    store = RunStore(folder)
    if not store.runs_dir.is_dir():
        return 0
    with _folding(folder):
        loose = _loose(store.runs_dir)
        if not loose:
            return 0
        table = read_table(store.table_path) if store.table_path.is_file() else {}
        merged = _merge(table, loose)
        write_table(store.table_path, merged)
        back = read_table(store.table_path)
        bad = [run for run in merged
               if run not in back or not _same(back[run][1], merged[run][1])]
        if bad or len(back) != len(merged):
            raise MlkitError(f"{store.table_path}: the table written does not read back as "
                             f"the records it was made from ({len(bad)} differ, e.g. "
                             f"{bad[:1]}); the per-run files are kept")
        removed = sum(_remove_folded(path, stat) for *_, path, stat in loose.values())
    logger.info("%s: %d run records folded into %s (%d runs)", folder, removed,
                TABLE_NAME, len(merged))
    return removed

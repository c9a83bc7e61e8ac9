"""Atomic file output: every file mlkit writes appears whole or not at all, and a file whose
new bytes are those it already holds is not touched (a re-render of unchanged results
rewrites nothing). A folder that cannot be written is one :class:`~mlkit._errors.MlkitError`
line naming it and the fix."""

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ._errors import MlkitError

__all__ = ["atomic_path", "write_text", "write_json", "read_json", "recording_writes",
           "as_json", "unwritable", "check_writable"]

_RECORDERS = []         # the lists of recording_writes() blocks


def unwritable(path, exc, *, folder=False):
    """The one-line error for ``path`` (a file, or with ``folder`` a folder to write into)
    that cannot be written because of ``exc``."""
    path = Path(path)
    start = path if folder else path.parent
    blocker = next((p for p in (start, *start.parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        why = f"{blocker} is a file, not a folder"
    elif isinstance(exc, PermissionError) or (blocker is not None and not _writable(blocker)):
        why = f"{blocker} is not writable (permission denied)"
    else:
        why = exc.strerror or type(exc).__name__
    return MlkitError(f"cannot write {'into ' if folder else ''}{path}: {why}; choose a writable folder (--out DIR, or "
                      "`mlkit --results DIR` / MLKIT_RESULTS for the results root)")


def _writable(folder):
    return os.access(folder, os.W_OK | os.X_OK)


def check_writable(folder):
    """Raise the :func:`unwritable` error now when files cannot be written below ``folder``
    (a file where a folder must go, or a folder without write permission), before any
    work whose outputs would be lost."""
    folder = Path(folder)
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is None:
        return
    if not existing.is_dir():
        raise unwritable(folder, NotADirectoryError(), folder=True)
    if not _writable(existing):
        raise unwritable(folder, PermissionError(), folder=True)


def _same_bytes(a, b):
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                chunk = fa.read(1 << 20)
                if chunk != fb.read(1 << 20):
                    return False
                if not chunk:
                    return True
    except OSError:
        return False


def _file_mode(path):
    """The permission bits ``path`` should get: those it has if it exists, else what ``open``
    would give a new file under the process umask (``mkstemp`` makes its file 0600, which
    would leave every result unreadable to the other users of a shared results folder)."""
    try:
        return Path(path).stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask():
    """The process umask, read without changing it where the system says it (Linux's
    /proc/self/status): setting it to probe it would, for that moment, change the mode of
    files other threads create (the threading backend's runs)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0)
    os.umask(umask)
    return umask


@contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; on success rename it onto ``path``, unless
    ``path`` already holds exactly those bytes (then it is left untouched, its time too).

    The temporary file lives in the same directory, so the final ``os.replace`` is atomic
    on POSIX and Windows. On error the temporary file is removed and ``path`` is untouched.
    A folder that cannot be created or written is an :class:`MlkitError` naming it.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as exc:
        raise unwritable(path, exc) from None
    os.close(fd)
    try:
        yield Path(tmp)
        if _same_bytes(tmp, path):
            Path(tmp).unlink()
            return
        os.chmod(tmp, _file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    for written in _RECORDERS:
        written.append(path)


@contextmanager
def recording_writes():
    """Yield a list that collects the paths :func:`atomic_path` replaces within the block
    (those whose bytes changed)."""
    written = []
    _RECORDERS.append(written)
    try:
        yield written
    finally:
        _RECORDERS.remove(written)


def write_text(path, text):
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot store {type(obj).__name__} in JSON")


def write_json(path, obj):
    return write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def as_json(obj):
    """``obj`` as :func:`write_json` then :func:`read_json` give it back (to compare it with
    a stored file)."""
    return json.loads(json.dumps(obj, sort_keys=True, default=_json_default))


def read_json(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)

"""The one text-line reader of the format readers: plain or gzipped, UTF-8, LF or CRLF."""

import gzip
from pathlib import Path

from .._errors import DataError

__all__ = ["read_bytes", "read_lines"]

_GZIP_MAGIC = b"\x1f\x8b"


def read_bytes(path):
    """The bytes of the file ``path``; a missing or unreadable file is a ``DataError``
    naming it."""
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: missing (no such file)") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read the file ({exc.strerror or exc})") from None


def read_lines(path):
    """The lines of a text file (plain or gzip-compressed; LF or CRLF line ends), without
    the trailing blank lines.

    Raises
    ------
    DataError
        One line naming the file: missing, unreadable, corrupt or truncated gzip data, not
        UTF-8 text (with the line), or empty.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> _ = p.write_bytes(b"1 2\\r\\n3 4\\r\\n\\r\\n")
    >>> read_lines(p)
    ['1 2', '3 4']
    """
    path = Path(path)
    raw = read_bytes(path)
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError) as exc:
            raise DataError(f"{path}: corrupt or truncated gzip data ({exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise DataError(f"{path}, line {line}: not UTF-8 text ({exc.reason})") from None
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise DataError(f"{path}: the file is empty")
    return lines

"""Download and cache data files, verified by their SHA-256.

Modelled on scikit-learn's ``_fetch_remote`` and on pooch: a :class:`RemoteFile` names a
file by its path inside the data home and its checksum; :func:`fetch` returns the cached
copy when it is intact, and otherwise tries the mirror (``MLKIT_DATA_MIRROR``) and then the
file's public URL. Every copy is written to a temporary file beside its destination and only
moved into place once its checksum matches, so the data home never holds a partial or
corrupt file written by mlkit.
"""

import hashlib
import http.client
import logging
import os
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import platformdirs

from .. import __version__
from .._errors import DataError
from .._io import atomic_path

__all__ = ["RemoteFile", "fetch", "get_data_home", "mirror_location", "sha256sum", "verify"]

logger = logging.getLogger(__name__)

DATA_ENV = "MLKIT_DATA"
MIRROR_ENV = "MLKIT_DATA_MIRROR"

_TIMEOUT = 60  # seconds, per HTTP request
_RETRIES = 2  # extra attempts after a network error
_RETRY_DELAY = 1.0  # seconds between attempts
_CHUNK = 1 << 20  # bytes read at a time when hashing or copying


def get_data_home(data_home=None):
    """Return the folder where downloaded data files are cached, creating it.

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        The folder to use. When None, the environment variable ``MLKIT_DATA`` is used,
        and when that is unset or empty, ``platformdirs.user_cache_dir("mlkit")``.

    Returns
    -------
    pathlib.Path
        The data home, which exists on return.
    """
    if data_home is None:
        data_home = os.environ.get(DATA_ENV) or platformdirs.user_cache_dir("mlkit")
    path = Path(data_home).expanduser()
    if path.exists() and not path.is_dir():
        raise DataError(f"{DATA_ENV}={data_home} names a file, not a folder; set it to a "
                        "folder for the downloaded data (it is created if missing)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"data home {path} cannot be created ({exc}); set {DATA_ENV} to a "
                        "writable folder") from None
    return path


@dataclass(frozen=True)
class RemoteFile:
    """A data file known by its location and checksum.

    Parameters
    ----------
    path : str
        Relative POSIX path of the file inside the data home and inside a mirror,
        e.g. ``"mi/musk1/clean1.data"``.
    sha256 : str
        Expected SHA-256 of the file, in hexadecimal.
    url : str or None, default=None
        The file's public home. None when only a mirror can provide the file.
    """

    path: str
    sha256: str
    url: str | None = None

    def __post_init__(self):
        parts = PurePosixPath(self.path).parts
        if not parts or parts[0] == "/" or ".." in parts or "\\" in self.path:
            raise ValueError(f"RemoteFile.path must be a relative POSIX path, got {self.path!r}")


def sha256sum(path):
    """Return the SHA-256 of a file, read in chunks.

    Parameters
    ----------
    path : str or os.PathLike
        The file to hash.

    Returns
    -------
    str
        The hexadecimal digest.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _mismatch(expected, actual):
    """Describe a checksum mismatch by both hashes."""
    return f"checksum mismatch (expected sha256 {expected.lower()}, got {actual})"


def verify(path, sha256):
    """Check that a file has the expected SHA-256.

    Parameters
    ----------
    path : str or os.PathLike
        The file to check.
    sha256 : str
        The expected hexadecimal digest (case-insensitive).

    Returns
    -------
    pathlib.Path
        ``path``, when its checksum matches.

    Raises
    ------
    DataError
        When the checksum differs; the message names the file and both hashes.
    """
    path = Path(path)
    actual = sha256sum(path)
    if actual != sha256.lower():
        raise DataError(f"{path}: {_mismatch(sha256, actual)}")
    return path


def mirror_location():
    """Return the data mirror named by ``MLKIT_DATA_MIRROR``.

    Returns
    -------
    str or None
        A local folder, a ``file://`` URL or an http(s) URL base; None when the variable
        is unset or empty.
    """
    return os.environ.get(MIRROR_ENV, "").strip() or None


def _is_http(source):
    """Whether ``source`` is an http(s) URL."""
    return urllib.parse.urlsplit(source).scheme.lower() in ("http", "https")


def _local_path(source):
    """The local path named by a folder path or a ``file://`` URL."""
    if source.lower().startswith("file://"):
        return Path(urllib.request.url2pathname(urllib.parse.urlsplit(source).path))
    return Path(source).expanduser()


def _mirror_source(mirror, path):
    """Where ``path`` lives in ``mirror``: a URL for an http(s) mirror, else a local path."""
    if _is_http(mirror):
        return mirror.rstrip("/") + "/" + urllib.parse.quote(path)
    return str(_local_path(mirror) / path)


def _sources(remote):
    """The places ``remote`` can be copied from, in the order they are tried."""
    sources = []
    mirror = mirror_location()
    if mirror is not None:
        sources.append(_mirror_source(mirror, remote.path))
    if remote.url:
        sources.append(remote.url)
    return sources


def _download(url, target):
    """Stream ``url`` into ``target``, retrying network errors and HTTP 5xx responses."""
    request = urllib.request.Request(url, headers={"User-Agent": f"mlkit/{__version__}"})
    for attempt in range(_RETRIES + 1):
        try:
            with urllib.request.urlopen(request, timeout=_TIMEOUT) as response:
                with open(target, "wb") as out:
                    shutil.copyfileobj(response, out, _CHUNK)
            return
        except urllib.error.HTTPError as exc:
            if exc.code < 500 or attempt == _RETRIES:
                raise
            exc.close()
            error = exc
        except (OSError, http.client.HTTPException) as exc:
            if attempt == _RETRIES:
                raise
            error = exc
        logger.info(
            "downloading %s failed (%s), retrying in %g s", url, _reason(error), _RETRY_DELAY
        )
        time.sleep(_RETRY_DELAY)


def _copy(source, target):
    """Copy ``source`` (an http(s) URL, a ``file://`` URL or a local path) into ``target``."""
    if _is_http(source):
        logger.info("downloading %s", source)
        _download(source, target)
    else:
        logger.info("copying %s", source)
        shutil.copyfile(_local_path(source), target)


def _fetch_from(source, remote, dest):
    """Copy ``remote`` from ``source`` onto ``dest``, moving it into place only if verified."""
    with atomic_path(dest) as tmp:
        _copy(source, tmp)
        actual = sha256sum(tmp)
        if actual != remote.sha256.lower():
            raise DataError(_mismatch(remote.sha256, actual))


def _reason(exc):
    """A short, one-line account of why a source failed."""
    if isinstance(exc, DataError):
        return str(exc)
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, FileNotFoundError):
        return "file not found"
    if isinstance(exc, urllib.error.URLError):
        return f"network error ({exc.reason})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _failure(remote, dest, failures):
    """The error raised when no source could provide ``remote``."""
    if failures:
        tried = "; ".join(f"{source}: {reason}" for source, reason in failures)
        what = f"tried {tried}"
    else:
        what = f"no source is known ({MIRROR_ENV} is not set and the file has no public URL)"
    return DataError(
        f"cannot fetch {remote.path}: {what}. To fix it, set {MIRROR_ENV} to a folder or "
        f"URL that holds {remote.path}, or place the file at {dest}."
    )


def fetch(remote, data_home=None, *, force=False):
    """Return the verified local copy of a remote file, fetching it when needed.

    The cached copy ``get_data_home(data_home) / remote.path`` is returned when its checksum
    matches. Otherwise the file is copied from the mirror (``MLKIT_DATA_MIRROR``), then from
    ``remote.url``; the first source whose copy has the expected checksum wins.

    Parameters
    ----------
    remote : RemoteFile
        The file to fetch.
    data_home : str or os.PathLike, optional
        The cache folder; see :func:`get_data_home`.
    force : bool, default=False
        Fetch the file again even when the cached copy is intact.

    Returns
    -------
    pathlib.Path
        The local file, whose checksum matches ``remote.sha256``.

    Raises
    ------
    DataError
        When no source provides the file with the expected checksum. The message lists
        every source tried and why it failed, and how to provide the file.
    """
    dest = get_data_home(data_home) / remote.path
    if dest.is_file() and not force:
        if sha256sum(dest) == remote.sha256.lower():
            return dest
        logger.warning("cached copy of %s is corrupt, fetching it again", dest)
    failures = []
    for source in _sources(remote):
        try:
            _fetch_from(source, remote, dest)
        except (DataError, OSError, http.client.HTTPException) as exc:
            logger.info("could not fetch %s from %s: %s", remote.path, source, _reason(exc))
            failures.append((source, _reason(exc)))
        else:
            return dest
    raise _failure(remote, dest, failures)

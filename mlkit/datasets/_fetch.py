"""Download and cache data files, verified by their SHA-256, through pooch.

One registry, :data:`REGISTRY` (a :class:`pooch.Pooch`), maps every data file mlkit knows
(its path inside the data home) to its SHA-256 (``REGISTRY.registry``) and to the URL that
downloads the file itself (``REGISTRY.urls``, for files with a public raw location). Datasets
fill it with :func:`register` (``register_dataset(..., files=[...])`` does it for them).

:func:`fetch` returns the cached copy in the data home (``MLKIT_DATA``, default the user
cache, :func:`pooch.os_cache`) when its checksum matches. Otherwise pooch fetches the file
first from the mirror named by ``MLKIT_DATA_MIRROR`` (a local folder, a ``file://`` URL or
an http(s) URL base with the layout of the registry, used as pooch's ``base_url``) and then
from the file's public URL. Pooch streams every copy into a temporary file beside its
destination and moves it into place only once its hash matches, so the data home never
holds a partial or corrupt file written by mlkit. Every failure is one
:class:`~mlkit._errors.DataError` line naming the file, the sources tried and why each
failed.
"""

import contextlib
import logging
import os
import re
import shutil
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pooch
import requests

from .. import __version__
from .._errors import DataError

__all__ = ["REGISTRY", "RemoteFile", "fetch", "get_data_home", "mirror_location", "offline",
           "register", "sha256sum", "verify"]

logger = logging.getLogger(__name__)
# pooch prints every download on stderr at INFO level; mlkit logs its own fetches instead
pooch.get_logger().setLevel(logging.WARNING)

DATA_ENV = "MLKIT_DATA"
MIRROR_ENV = "MLKIT_DATA_MIRROR"

_TIMEOUT = 60  # seconds, per HTTP request
_RETRIES = 2  # extra attempts after a network error or an HTTP 5xx answer
_RETRY_DELAY = 1.0  # seconds between attempts
_CHUNK = 1 << 20  # bytes read at a time when hashing or copying

#: The one registry of data files: ``REGISTRY.registry`` maps a path inside the data home to
#: ``"sha256:<hex>"`` and ``REGISTRY.urls`` maps it to the URL of the file itself (absent when
#: only a mirror can provide the file). :func:`fetch` reads it through a :class:`pooch.Pooch`
#: per source that shares these two dicts; ``REGISTRY.path`` is the default data home (the
#: ``MLKIT_DATA`` override is resolved at each call by :func:`get_data_home`).
REGISTRY = pooch.create(path=pooch.os_cache("mlkit"), base_url="", registry={}, urls={},
                        retry_if_failed=0)


def get_data_home(data_home=None):
    """Return the folder where downloaded data files are cached, creating it.

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        The folder to use. When None, the environment variable ``MLKIT_DATA`` is used,
        and when that is unset or empty, the user cache ``pooch.os_cache("mlkit")``
        (``pooch.os_cache("mlkit")``, the per-user cache folder).

    Returns
    -------
    pathlib.Path
        The data home, which exists on return.
    """
    if data_home is None:  # pooch's env override: MLKIT_DATA when set and not empty
        data_home = pooch.create(path=pooch.os_cache("mlkit"), base_url="", env=DATA_ENV).path
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
        A URL that downloads the file itself (not a landing page); None when only a
        mirror can provide the file.
    """

    path: str
    sha256: str
    url: str | None = None

    def __post_init__(self):
        parts = PurePosixPath(self.path).parts
        if not parts or parts[0] == "/" or ".." in parts or "\\" in self.path:
            raise ValueError(f"RemoteFile.path must be a relative POSIX path, got {self.path!r}")


def register(remote):
    """Add ``remote`` to :data:`REGISTRY`; registering the same file twice is a no-op.

    Parameters
    ----------
    remote : RemoteFile

    Raises
    ------
    ValueError
        When ``remote.path`` is already registered with another SHA-256 or URL.
    """
    known = f"sha256:{remote.sha256.lower()}"
    old_hash = REGISTRY.registry.get(remote.path)
    old_url = REGISTRY.urls.get(remote.path)
    if old_hash is not None and (old_hash != known or old_url != remote.url):
        raise ValueError(f"{remote.path} is registered twice: {old_hash} at {old_url} and "
                         f"{known} at {remote.url}")
    REGISTRY.registry[remote.path] = known
    if remote.url:
        REGISTRY.urls[remote.path] = remote.url
    return remote


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
    return pooch.file_hash(str(path), alg="sha256")


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


def _download(url, target):
    """Stream ``url`` into ``target`` with pooch's HTTP downloader.

    Network errors, truncated transfers and HTTP 5xx answers are retried ``_RETRIES``
    times; other HTTP errors (404, 403, ...) are raised at once.
    """
    download = pooch.HTTPDownloader(timeout=_TIMEOUT, progressbar=False,
                                    headers={"User-Agent": f"mlkit/{__version__}"})
    for attempt in range(_RETRIES + 1):
        try:
            download(url, str(target), None)
            return
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if status < 500 or attempt == _RETRIES:
                raise
            error = exc
        except requests.RequestException as exc:
            if attempt == _RETRIES:
                raise
            error = exc
        logger.info("downloading %s failed (%s), retrying in %g s", url, _reason(error),
                    _RETRY_DELAY)
        time.sleep(_RETRY_DELAY)


class _Downloader:
    """A pooch downloader for http(s) URLs, ``file://`` URLs and local paths.

    It records the SHA-256 of what it wrote, so that a hash mismatch found by pooch can be
    reported with both hashes.
    """

    def __init__(self):
        self.sha256 = None

    def __call__(self, url, output_file, pup, check_only=False):
        if check_only:
            return _is_http(url) or _local_path(url).is_file()
        if _is_http(url):
            logger.info("downloading %s", url)
            _download(url, output_file)
        else:
            logger.info("copying %s", url)
            shutil.copyfile(_local_path(url), output_file)
        self.sha256 = sha256sum(output_file)
        return None


def _mirror_base(mirror):
    """The mirror as a pooch ``base_url``: an URL base, or a folder path ending in '/'."""
    if _is_http(mirror) or mirror.lower().startswith("file://"):
        return mirror
    return _local_path(mirror).as_posix()


def _sources(remote, home):
    """(where, pooch) pairs that can provide ``remote``, in the order they are tried.

    Each pooch shares :data:`REGISTRY`'s registry: the mirror's has the mirror as
    ``base_url`` and no per-file URLs, the public one resolves the file by ``REGISTRY.urls``.
    """
    sources = []
    mirror = mirror_location()
    if mirror is not None:
        pup = pooch.create(path=home, base_url=_mirror_base(mirror),
                           registry=REGISTRY.registry, urls={}, retry_if_failed=0)
        sources.append((pup.get_url(remote.path), pup))
    if remote.url:
        pup = pooch.create(path=home, base_url="", registry=REGISTRY.registry,
                           urls=REGISTRY.urls, retry_if_failed=0)
        sources.append((pup.get_url(remote.path), pup))
    return sources


_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")


def _reason(exc):
    """A short, one-line account of why a source failed."""
    if isinstance(exc, DataError):
        return str(exc)
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code} {exc.response.reason}"
    if isinstance(exc, FileNotFoundError):
        return "file not found"
    if isinstance(exc, requests.exceptions.ChunkedEncodingError):
        return "truncated download (the connection closed before the whole file arrived)"
    if isinstance(exc, requests.Timeout):
        return "network error (timed out)"
    if isinstance(exc, requests.ConnectionError):
        found = _ERRNO.search(str(exc))
        return f"network error ({found.group(1).strip() if found else 'connection failed'})"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _failure(remote, dest, failures):
    """The one-line error raised when no source could provide ``remote``."""
    if failures:
        parts = ["tried " + "; ".join(f"{where}: {why}" for where, why in failures)]
    else:
        parts = [f"no source is known ({MIRROR_ENV} is not set)"]
    if not remote.url:
        parts.append("the file has no public download URL, only a mirror can provide it")
    return DataError(
        f"cannot fetch {remote.path}: {'; '.join(parts)}. To fix it, set {MIRROR_ENV} to a "
        f"folder or URL that holds {remote.path}, or place the file at {dest}."
    )


def _fetch_into(remote, home):
    """Fetch ``remote`` into ``home`` from the first source that provides it intact.

    Returns whether it was fetched and the failures ``[(where, why), ...]``.
    """
    failures = []
    for where, pup in _sources(remote, home):
        downloader = _Downloader()
        try:
            pup.fetch(remote.path, downloader=downloader, progressbar=False)
        except (ValueError, OSError, requests.RequestException) as exc:
            if isinstance(exc, ValueError) and not isinstance(exc, DataError) and (
                    downloader.sha256 is not None):
                exc = DataError(_mismatch(remote.sha256, downloader.sha256))
            logger.info("could not fetch %s from %s: %s", remote.path, where, _reason(exc))
            failures.append((where, _reason(exc)))
        else:
            return True, failures
    return False, failures


_OFFLINE = []     # the reasons of the offline() blocks the program is in (innermost last)


@contextlib.contextmanager
def offline(reason):
    """Within the block :func:`fetch` writes and downloads nothing: it returns the intact
    cached copy, or the intact copy of a mirror that is a local folder, and otherwise raises
    a :class:`~mlkit._errors.DataError` (``missing``) that ends with ``reason`` (e.g. what
    reads only: ``mlkit verify``)."""
    _OFFLINE.append(reason)
    try:
        yield
    finally:
        _OFFLINE.pop()


def _offline_copy(remote, dest):
    """In an :func:`offline` block: the intact local copy of ``remote`` (cache, or a mirror
    that is a local folder), or the missing-file DataError."""
    mirror = mirror_location()
    if mirror is not None and not _is_http(mirror):
        local = _local_path(mirror) / remote.path
        if local.is_file() and sha256sum(local) == remote.sha256.lower():
            return local
    where = "" if dest.is_file() else " (not downloaded)"
    err = DataError(f"{remote.path} has no intact copy in the data home {dest.parent}{where}"
                    f"; {_OFFLINE[-1]}")
    err.missing = True
    return err


def _writable(folder):
    return os.access(folder, os.W_OK | os.X_OK)


def fetch(remote, data_home=None, *, force=False):
    """Return the verified local copy of a remote file, fetching it when needed.

    The cached copy ``get_data_home(data_home) / remote.path`` is returned when its checksum
    matches. Otherwise pooch fetches the file from the mirror (``MLKIT_DATA_MIRROR``), then
    from ``remote.url``; the first source whose copy has the expected checksum wins.

    Parameters
    ----------
    remote : RemoteFile
        The file to fetch; it is added to :data:`REGISTRY` if it is not there yet.
    data_home : str or os.PathLike, optional
        The cache folder; see :func:`get_data_home`.
    force : bool, default=False
        Fetch the file again even when the cached copy is intact (which is kept if the
        new fetch fails).

    Returns
    -------
    pathlib.Path
        The local file, whose checksum matches ``remote.sha256``.

    Raises
    ------
    DataError
        When no source provides the file with the expected checksum. The one-line message
        lists every source tried and why it failed, and how to provide the file.
    """
    register(remote)
    if _OFFLINE:                            # not created: an offline block writes nothing
        home = Path(data_home or os.environ.get(DATA_ENV) or REGISTRY.path).expanduser()
    else:
        home = get_data_home(data_home)
    dest = home / remote.path
    if dest.is_file() and not force:
        if sha256sum(dest) == remote.sha256.lower():
            return dest
        if not _OFFLINE:
            logger.warning("cached copy of %s is corrupt, fetching it again", dest)
    if _OFFLINE:
        found = _offline_copy(remote, dest)
        if isinstance(found, DataError):
            raise found
        return found
    if not _writable(home):
        raise DataError(f"cannot fetch {remote.path}: the data home {home} is not writable "
                        f"(permission denied); set {DATA_ENV} to a writable folder (intact "
                        "files already in it are read where they are)")
    if force and dest.is_file():
        # pooch keeps an intact cached file: fetch into a scratch home, then swap it in
        dest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".fetch-", dir=home) as scratch:
            done, failures = _fetch_into(remote, Path(scratch))
            if done:
                os.replace(Path(scratch) / remote.path, dest)
    else:
        done, failures = _fetch_into(remote, home)
    if not done:
        raise _failure(remote, dest, failures)
    return dest

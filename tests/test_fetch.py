"""The download/cache layer: data home, checksums, mirrors (folder, file://, HTTP) and URLs."""

import functools
import hashlib
import http.server
import logging
import socket
import threading

import pytest

from mlkit._errors import DataError
from mlkit.datasets import _fetch
from mlkit.datasets._fetch import (
    RemoteFile,
    fetch,
    get_data_home,
    mirror_location,
    sha256sum,
    verify,
)

CONTENT = b"0.1,0.2,1\n0.3,0.4,0\n" * 100
SHA = hashlib.sha256(CONTENT).hexdigest()
REL = "mi/musk1/clean1.data"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv("MLKIT_DATA", raising=False)
    monkeypatch.delenv("MLKIT_DATA_MIRROR", raising=False)
    monkeypatch.setattr(_fetch, "_RETRY_DELAY", 0)


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


@pytest.fixture
def mirror(tmp_path):
    """A mirror folder holding the good file at REL."""
    root = tmp_path / "mirror"
    (root / REL).parent.mkdir(parents=True)
    (root / REL).write_bytes(CONTENT)
    return root


def files_under(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; answers 503 to the first ``fail_first`` requests; logs nothing."""

    def do_GET(self):
        self.server.requests.append(self.path)
        if len(self.server.requests) <= self.server.fail_first:
            self.send_error(503, "try again")
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    """A real HTTP server on 127.0.0.1 serving ``tmp_path / "www"``."""
    root = tmp_path / "www"
    (root / REL).parent.mkdir(parents=True)
    (root / REL).write_bytes(CONTENT)
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root))
    )
    httpd.requests = []
    httpd.fail_first = 0
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()


# --- data home and mirror location --------------------------------------------------------


def test_data_home_precedence(tmp_path, monkeypatch):
    monkeypatch.setattr(_fetch.platformdirs, "user_cache_dir", lambda app: str(tmp_path / app))
    assert get_data_home() == tmp_path / "mlkit"
    assert (tmp_path / "mlkit").is_dir()

    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert (tmp_path / "env").is_dir()

    assert get_data_home(tmp_path / "arg" / "deep") == tmp_path / "arg" / "deep"
    assert (tmp_path / "arg" / "deep").is_dir()


def test_empty_data_env_falls_back_to_default(tmp_path, monkeypatch):
    monkeypatch.setattr(_fetch.platformdirs, "user_cache_dir", lambda app: str(tmp_path / app))
    monkeypatch.setenv("MLKIT_DATA", "")
    assert get_data_home() == tmp_path / "mlkit"


def test_mirror_location(monkeypatch):
    assert mirror_location() is None
    monkeypatch.setenv("MLKIT_DATA_MIRROR", "")
    assert mirror_location() is None
    monkeypatch.setenv("MLKIT_DATA_MIRROR", "https://example.org/data")
    assert mirror_location() == "https://example.org/data"


# --- checksums ---------------------------------------------------------------------------


def test_sha256sum_and_verify(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(CONTENT)
    assert sha256sum(path) == SHA
    assert verify(path, SHA.upper()) == path
    wrong = "0" * 64
    with pytest.raises(DataError) as info:
        verify(path, wrong)
    message = str(info.value)
    assert "f.bin" in message and wrong in message and SHA in message


@pytest.mark.parametrize("bad", ["", "/abs/file", "../up/file", "a/../../b", "a\\b"])
def test_remote_path_must_be_relative_posix(bad):
    with pytest.raises(ValueError, match="relative POSIX"):
        RemoteFile(bad, SHA)


# --- fetch from local mirrors -----------------------------------------------------------


def test_fetch_from_mirror_folder(home, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    path = fetch(RemoteFile(REL, SHA), home)
    assert path == home / REL
    assert path.read_bytes() == CONTENT
    assert files_under(home) == [REL]


def test_fetch_uses_data_env_when_no_home_given(tmp_path, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "envhome"))
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    assert fetch(RemoteFile(REL, SHA)) == tmp_path / "envhome" / REL


def test_fetch_from_file_url_mirror(home, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", mirror.as_uri())
    assert fetch(RemoteFile(REL, SHA), home).read_bytes() == CONTENT


def test_cached_copy_reused_without_mirror(home, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    remote = RemoteFile(REL, SHA)
    first = fetch(remote, home)
    (mirror / REL).unlink()
    mtime = first.stat().st_mtime_ns
    assert fetch(remote, home) == first
    assert first.stat().st_mtime_ns == mtime
    monkeypatch.delenv("MLKIT_DATA_MIRROR")
    assert fetch(remote, home).read_bytes() == CONTENT


def test_corrupt_cached_copy_is_fetched_again(home, mirror, monkeypatch, caplog):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    (home / REL).parent.mkdir(parents=True)
    (home / REL).write_bytes(b"truncated")
    with caplog.at_level(logging.WARNING, logger="mlkit.datasets._fetch"):
        path = fetch(RemoteFile(REL, SHA), home)
    assert path.read_bytes() == CONTENT
    assert any("corrupt" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)
    assert files_under(home) == [REL]


def test_force_fetches_again(home, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    remote = RemoteFile(REL, SHA)
    fetch(remote, home)
    (mirror / REL).unlink()
    with pytest.raises(DataError, match="file not found"):
        fetch(remote, home, force=True)
    # the intact copy survives a failed forced fetch
    assert (home / REL).read_bytes() == CONTENT
    (mirror / REL).write_bytes(CONTENT)
    assert fetch(remote, home, force=True).read_bytes() == CONTENT


def test_wrong_hash_in_mirror(home, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    wrong = "ab" * 32
    with pytest.raises(DataError) as info:
        fetch(RemoteFile(REL, wrong), home)
    message = str(info.value)
    assert wrong in message and SHA in message
    assert str(mirror / REL) in message
    assert files_under(home) == []


def test_missing_everywhere_lists_sources(home, tmp_path, monkeypatch):
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(empty))
    url = (tmp_path / "nowhere" / "clean1.data").as_uri()
    with pytest.raises(DataError) as info:
        fetch(RemoteFile(REL, SHA, url=url), home)
    message = str(info.value)
    assert str(empty / REL) in message and url in message
    assert message.count("file not found") == 2
    assert "MLKIT_DATA_MIRROR" in message and str(home / REL) in message
    assert "\n" not in message
    assert files_under(home) == []


def test_no_source_at_all(home):
    with pytest.raises(DataError, match="no source is known") as info:
        fetch(RemoteFile(REL, SHA), home)
    assert "MLKIT_DATA_MIRROR" in str(info.value)
    assert str(home / REL) in str(info.value)


# --- fetch over HTTP ------------------------------------------------------------------


def test_fetch_from_http_mirror(home, server, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", server.base + "/")
    path = fetch(RemoteFile(REL, SHA), home)
    assert path.read_bytes() == CONTENT
    assert server.requests == ["/" + REL]
    assert files_under(home) == [REL]


def test_fetch_from_http_url(home, server):
    path = fetch(RemoteFile(REL, SHA, url=f"{server.base}/{REL}"), home)
    assert path.read_bytes() == CONTENT
    assert server.requests == ["/" + REL]


def test_bad_mirror_falls_back_to_url(home, tmp_path, server, monkeypatch):
    bad = tmp_path / "bad-mirror"
    (bad / REL).parent.mkdir(parents=True)
    (bad / REL).write_bytes(b"not the data")
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(bad))
    path = fetch(RemoteFile(REL, SHA, url=f"{server.base}/{REL}"), home)
    assert path.read_bytes() == CONTENT
    assert files_under(home) == [REL]


def test_http_404_is_not_retried(home, server, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", server.base)
    with pytest.raises(DataError, match="HTTP 404") as info:
        fetch(RemoteFile("mi/absent.data", SHA), home)
    assert f"{server.base}/mi/absent.data" in str(info.value)
    assert server.requests == ["/mi/absent.data"]
    assert files_under(home) == []


def test_http_server_errors_are_retried(home, server):
    server.fail_first = 2
    path = fetch(RemoteFile(REL, SHA, url=f"{server.base}/{REL}"), home)
    assert path.read_bytes() == CONTENT
    assert len(server.requests) == 3


def test_http_retries_give_up(home, server):
    server.fail_first = 10
    with pytest.raises(DataError, match="HTTP 503"):
        fetch(RemoteFile(REL, SHA, url=f"{server.base}/{REL}"), home)
    assert len(server.requests) == 3
    assert files_under(home) == []


def test_unreachable_host_is_reported(home):
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/{REL}"
    with pytest.raises(DataError, match="network error") as info:
        fetch(RemoteFile(REL, SHA, url=url), home)
    assert url in str(info.value)
    assert files_under(home) == []

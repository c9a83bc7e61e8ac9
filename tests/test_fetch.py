"""The download/cache layer (pooch): data home, registry, checksums, mirrors, URLs, errors."""

import functools
import hashlib
import http.server
import logging
import os
import re
import socket
import threading
from pathlib import Path, PurePosixPath

import pytest

from mlkit import registry
from mlkit._errors import DataError
from mlkit.datasets import _fetch
from mlkit.datasets._fetch import (
    REGISTRY,
    RemoteFile,
    fetch,
    get_data_home,
    mirror_location,
    register,
    sha256sum,
    verify,
)

CONTENT = b"0.1,0.2,1\n0.3,0.4,0\n" * 100
SHA = hashlib.sha256(CONTENT).hexdigest()
REL = "toy/fetch/clean1.data"
REAL_MIRROR = os.environ.get("MLKIT_DATA_MIRROR")  # read before clean_env removes it
RAW_URL = re.compile(r"https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/\S+")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv("MLKIT_DATA", raising=False)
    monkeypatch.delenv("MLKIT_DATA_MIRROR", raising=False)
    monkeypatch.setattr(_fetch, "_RETRY_DELAY", 0)
    # each test sees the real registry but leaves no trace in it
    monkeypatch.setattr(REGISTRY, "registry", dict(REGISTRY.registry))
    monkeypatch.setattr(REGISTRY, "urls", dict(REGISTRY.urls))


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


def error_of(remote, home):
    """The DataError message of a failing fetch, checked to be one line."""
    with pytest.raises(DataError) as info:
        fetch(remote, home)
    message = str(info.value)
    assert "\n" not in message and remote.path in message
    return message


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; answers 503 to the first ``fail_first`` requests, or cuts every
    answer short when ``truncate`` is set; logs nothing."""

    def do_GET(self):
        self.server.requests.append(self.path)
        if len(self.server.requests) <= self.server.fail_first:
            self.send_error(503, "try again")
            return
        if self.server.truncate:
            self.send_response(200)
            self.send_header("Content-Length", str(len(CONTENT)))
            self.end_headers()
            self.wfile.write(CONTENT[: len(CONTENT) // 3])
            self.close_connection = True
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
    httpd.truncate = False
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()


# --- data home and mirror location --------------------------------------------------------


def test_data_home_precedence(tmp_path, monkeypatch):
    monkeypatch.setattr(_fetch.pooch, "os_cache", lambda app: tmp_path / app)
    assert get_data_home() == tmp_path / "mlkit"
    assert (tmp_path / "mlkit").is_dir()

    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert (tmp_path / "env").is_dir()

    assert get_data_home(tmp_path / "arg" / "deep") == tmp_path / "arg" / "deep"
    assert (tmp_path / "arg" / "deep").is_dir()


def test_empty_data_env_falls_back_to_default(tmp_path, monkeypatch):
    monkeypatch.setattr(_fetch.pooch, "os_cache", lambda app: tmp_path / app)
    monkeypatch.setenv("MLKIT_DATA", "")
    assert get_data_home() == tmp_path / "mlkit"


def test_default_data_home_is_the_user_cache():
    import platformdirs

    assert REGISTRY.path == Path(platformdirs.user_cache_dir("mlkit"))


def test_data_env_naming_a_file_is_one_line(tmp_path, monkeypatch):
    not_a_folder = tmp_path / "afile"
    not_a_folder.write_text("x")
    monkeypatch.setenv("MLKIT_DATA", str(not_a_folder))
    with pytest.raises(DataError, match="names a file, not a folder") as info:
        fetch(RemoteFile(REL, SHA))
    assert "\n" not in str(info.value)


def test_mirror_location(monkeypatch):
    assert mirror_location() is None
    monkeypatch.setenv("MLKIT_DATA_MIRROR", "")
    assert mirror_location() is None
    monkeypatch.setenv("MLKIT_DATA_MIRROR", "https://example.org/data")
    assert mirror_location() == "https://example.org/data"


# --- checksums and the registry -----------------------------------------------------------


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


def test_register_fills_the_pooch_registry_once():
    url = "https://example.org/x/clean1.data"
    register(RemoteFile(REL, SHA.upper(), url))
    register(RemoteFile(REL, SHA, url))  # the same file again: a no-op
    assert REGISTRY.registry[REL] == f"sha256:{SHA}"
    assert REGISTRY.urls[REL] == url
    with pytest.raises(ValueError, match="registered twice"):
        register(RemoteFile(REL, "ab" * 32, url))
    with pytest.raises(ValueError, match="registered twice"):
        register(RemoteFile(REL, SHA, "https://example.org/other"))
    assert REGISTRY.registry[REL] == f"sha256:{SHA}"


# --- fetch from local mirrors -----------------------------------------------------------


def test_fetch_from_mirror_folder(home, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    path = fetch(RemoteFile(REL, SHA), home)
    assert path == home / REL
    assert path.read_bytes() == CONTENT
    assert files_under(home) == [REL]
    assert REGISTRY.registry[REL] == f"sha256:{SHA}" and REL not in REGISTRY.urls


def test_fetch_uses_data_env_when_no_home_given(tmp_path, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "envhome"))
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    assert fetch(RemoteFile(REL, SHA)) == tmp_path / "envhome" / REL


def test_fetch_from_file_url_mirror(home, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", mirror.as_uri())
    assert fetch(RemoteFile(REL, SHA), home).read_bytes() == CONTENT


def test_cached_copy_reused_without_copying_again(home, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    remote = RemoteFile(REL, SHA)
    first = fetch(remote, home)
    copies = []
    monkeypatch.setattr(_fetch._Downloader, "__call__",
                        lambda self, *args, **kw: copies.append(args))
    (mirror / REL).unlink()
    mtime = first.stat().st_mtime_ns
    assert fetch(remote, home) == first
    assert first.stat().st_mtime_ns == mtime and copies == []
    monkeypatch.delenv("MLKIT_DATA_MIRROR")
    assert fetch(remote, home).read_bytes() == CONTENT
    assert copies == []


def test_corrupt_cached_copy_is_fetched_again(home, mirror, monkeypatch, caplog):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    (home / REL).parent.mkdir(parents=True)
    (home / REL).write_bytes(CONTENT[:-7])  # a truncated earlier copy
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
    # the intact copy survives a failed forced fetch, and no scratch folder is left
    assert (home / REL).read_bytes() == CONTENT
    assert files_under(home) == [REL] and sorted(os.listdir(home)) == ["toy"]
    (mirror / REL).write_bytes(CONTENT)
    before = (home / REL).stat().st_ino
    assert fetch(remote, home, force=True).read_bytes() == CONTENT
    assert (home / REL).stat().st_ino != before  # a new copy was moved into place


def test_checksum_mismatch_names_file_and_both_hashes(home, mirror, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    wrong = "ab" * 32
    message = error_of(RemoteFile(REL, wrong), home)
    assert f"checksum mismatch (expected sha256 {wrong}, got {SHA})" in message
    assert str(mirror / REL) in message
    assert files_under(home) == []


def test_missing_mirror_file(home, tmp_path, monkeypatch):
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(empty))
    message = error_of(RemoteFile(REL, SHA), home)
    assert f"{empty / REL}: file not found" in message
    assert "only a mirror can provide it" in message
    assert "MLKIT_DATA_MIRROR" in message and str(home / REL) in message
    assert files_under(home) == []


def test_missing_everywhere_lists_sources(home, tmp_path, monkeypatch):
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(empty))
    url = (tmp_path / "nowhere" / "clean1.data").as_uri()
    message = error_of(RemoteFile(REL, SHA, url=url), home)
    assert str(empty / REL) in message and url in message
    assert message.count("file not found") == 2
    assert "only a mirror" not in message
    assert files_under(home) == []


def test_no_source_at_all(home):
    message = error_of(RemoteFile(REL, SHA), home)
    assert "no source is known" in message and "only a mirror can provide it" in message
    assert "MLKIT_DATA_MIRROR" in message and str(home / REL) in message


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
    message = error_of(RemoteFile("toy/absent.data", SHA), home)
    assert f"{server.base}/toy/absent.data: HTTP 404" in message
    assert server.requests == ["/toy/absent.data"]
    assert files_under(home) == []


def test_http_server_errors_are_retried(home, server):
    server.fail_first = 2
    path = fetch(RemoteFile(REL, SHA, url=f"{server.base}/{REL}"), home)
    assert path.read_bytes() == CONTENT
    assert len(server.requests) == 3


def test_http_retries_give_up(home, server):
    server.fail_first = 10
    assert "HTTP 503" in error_of(RemoteFile(REL, SHA, url=f"{server.base}/{REL}"), home)
    assert len(server.requests) == 3
    assert files_under(home) == []


def test_truncated_download_is_reported(home, server):
    server.truncate = True
    message = error_of(RemoteFile(REL, SHA, url=f"{server.base}/{REL}"), home)
    assert "truncated download" in message
    assert len(server.requests) == 3  # retried, then given up
    assert files_under(home) == []


def test_unreachable_host_is_reported(home):
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/{REL}"
    message = error_of(RemoteFile(REL, SHA, url=url), home)
    assert f"{url}: network error (" in message
    assert files_under(home) == []


# --- the registered files ----------------------------------------------------------------


@pytest.fixture
def data_mirror():
    """The shared real datasets (MLKIT_DATA_MIRROR as the tests started), or skip."""
    if not REAL_MIRROR or not Path(REAL_MIRROR).is_dir():
        pytest.skip("MLKIT_DATA_MIRROR does not name a folder with the real datasets "
                    "(CI sets it to ../shared/data)")
    return Path(REAL_MIRROR)


def registered_files():
    registry.load_plugins()
    return {f.path: f for name in sorted(registry.DATASETS._entries)
            for f in registry.DATASETS.entry(name).meta.get("files", ())}


def test_every_registered_file_is_in_the_pooch_registry():
    files = registered_files()
    assert len(files) > 50
    for path, remote in files.items():
        assert REGISTRY.registry[path] == f"sha256:{remote.sha256.lower()}"
        assert REGISTRY.urls.get(path) == remote.url


def test_urls_download_the_file_itself_pinned_to_a_commit():
    files = registered_files()
    for path, remote in files.items():
        if remote.url is None:
            continue
        assert RAW_URL.fullmatch(remote.url), f"{path}: {remote.url} is not a pinned raw URL"
        assert PurePosixPath(remote.url).name == PurePosixPath(path).name, path
    no_url = sorted(p for p, f in files.items() if f.url is None)
    assert no_url == ["mi/corel/crosscheck/corel_dogs.csv", "mi/musk2/musk2.csv"] + [
        f"multilabel/corel16k/Corel16k{k:03d}-test.arff.gz" for k in range(1, 11)]


def test_real_mirror_files_verify(data_mirror):
    for path, remote in registered_files().items():
        assert verify(data_mirror / path, remote.sha256) == data_mirror / path


def test_fetch_real_file_from_the_mirror_folder(data_mirror, home, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(data_mirror))
    remote = registered_files()["mi/musk1/clean1.data"]
    assert remote.url.startswith("https://raw.githubusercontent.com/macarbonneau/MILSurvey/")
    path = fetch(remote, home)
    assert path.read_bytes() == (data_mirror / remote.path).read_bytes()

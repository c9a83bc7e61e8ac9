"""The lists of `mlkit list` / `mlkit data list` from the cache are the registries' own, and
the cache follows every change of what registers an entry."""

import json
import os
import shutil
import subprocess
import sys

from mlkit import _listing, registry

from .conftest import CONFIGS


def _fresh(monkeypatch):
    """As in a new process: the registries not loaded yet."""
    monkeypatch.setattr(registry, "_loaded", False)


def test_a_cached_listing_is_the_registries_own(tmp_path, monkeypatch):
    monkeypatch.setenv("MLKIT_CACHE", str(tmp_path))
    registry.load_plugins()
    truth = json.loads(json.dumps(_listing._load()))
    _fresh(monkeypatch)
    assert _listing.listing() == truth                    # a miss: loaded, then stored
    (stored,) = (tmp_path / "listing").glob("*.json")
    assert json.loads(stored.read_text()) == truth
    monkeypatch.setattr(_listing, "_load", lambda: (_ for _ in ()).throw(AssertionError))
    _fresh(monkeypatch)
    assert _listing.listing() == truth                    # a hit: nothing imported
    assert len(truth["targets"]) >= 32 and any(n == "corel10" for n, *_ in truth["datasets"])


def test_the_cache_key_follows_the_configs(tmp_path, monkeypatch):
    configs = tmp_path / "configs"
    shutil.copytree(CONFIGS, configs)
    monkeypatch.setenv("MLKIT_CONFIGS", str(configs))
    before = _listing._key()
    assert _listing._key() == before
    extra = configs / "mssboost" / "fig4.yaml"
    extra.write_text(extra.read_text() + "\n")             # size and time change
    assert _listing._key() != before
    shutil.copy(configs / "mssboost" / "fig4.yaml", configs / "mssboost" / "fig9.yaml")
    assert len({before, _listing._key()}) == 2


def test_the_cli_lists_from_the_cache_in_a_new_process(tmp_path):
    env = {**os.environ, "MLKIT_CACHE": str(tmp_path)}
    cmd = [sys.executable, "-m", "mlkit.cli", "data", "list"]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    check = ("import sys, runpy; sys.argv = ['mlkit', 'data', 'list']\n"
             "try:\n    runpy.run_module('mlkit.cli', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "assert 'sklearn' not in sys.modules and 'scipy.stats' not in sys.modules, "
             "'a cached list imports no estimator'\n")
    second = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True,
                            text=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first and "corel10 " in first


def test_installs_sharing_the_cache_do_not_evict_each_other(tmp_path, monkeypatch):
    """A clone and a virtual environment (different keys) both stay cached; only listings
    beyond the newest KEEP are removed."""
    monkeypatch.setenv("MLKIT_CACHE", str(tmp_path))
    folder = tmp_path / "listing"
    found = {kind: [] for kind in _listing.KINDS}
    for i in range(_listing.KEEP + 3):
        _listing._store(folder / f"key{i:02d}.json", found)
        os.utime(folder / f"key{i:02d}.json", ns=(i * 10**9, i * 10**9))
    kept = sorted(p.name for p in folder.glob("*.json"))
    assert kept == [f"key{i:02d}.json" for i in range(3, _listing.KEEP + 3)]
    _listing._store(folder / "key05.json", found)          # rewriting one removes no other
    assert len(list(folder.glob("*.json"))) == _listing.KEEP

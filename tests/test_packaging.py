"""A wheel built from the clone carries every target's config and finds them from anywhere."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mlkit import _paths

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
#: what a build reads from the clone (pyproject.toml, setup.py, MANIFEST.in and the trees)
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "mlkit", "configs")


def _copy_sources(dest):
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__",
                                                                            "*.pyc"))
        else:
            shutil.copy2(src, dest / name)


def test_the_wheel_carries_every_config(tmp_path):
    """`pip wheel` of a copy of the sources (not the clone itself: a build leaves build/
    behind) holds mlkit/_configs/<paper>/<artifact>.yaml for every configs/**/*.yaml,
    byte for byte."""
    src = tmp_path / "src"
    src.mkdir()
    _copy_sources(src)
    out = tmp_path / "wheel"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(out), str(src)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = out.glob("mlkit-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        configs = sorted(CONFIGS.rglob("*.yaml"))
        assert len(configs) >= 32
        for path in configs:
            packaged = f"mlkit/_configs/{path.relative_to(CONFIGS).as_posix()}"
            assert packaged in names, f"{packaged} not in {wheel.name}"
            assert zf.read(packaged) == path.read_bytes()
        assert {n for n in names if n.startswith("mlkit/_configs/")} == {
            f"mlkit/_configs/{p.relative_to(CONFIGS).as_posix()}" for p in configs}


def test_the_packaged_configs_are_read_outside_a_clone(tmp_path, monkeypatch):
    """An installed package (no clone around it) reads mlkit/_configs; a clone reads its own
    configs/ (never a stale copy), and MLKIT_CONFIGS beats both."""
    packaged = tmp_path / "site" / "mlkit" / "_configs"
    (packaged / "p").mkdir(parents=True)
    monkeypatch.delenv("MLKIT_CONFIGS", raising=False)
    monkeypatch.setattr(_paths, "PACKAGED_CONFIGS", packaged)
    assert _paths.configs_dir() == ROOT / "configs"            # running from the clone
    monkeypatch.setattr(_paths, "clone_root", lambda start=None: None)
    assert _paths.configs_dir() == packaged
    monkeypatch.setenv("MLKIT_CONFIGS", str(tmp_path))
    assert _paths.configs_dir() == tmp_path


def test_results_root_order(tmp_path, monkeypatch):
    """--results, then MLKIT_RESULTS, then the clone the working folder is in, then the
    clone mlkit runs from, then the user data folder."""
    monkeypatch.delenv("MLKIT_RESULTS", raising=False)
    clone = tmp_path / "clone"
    (clone / "configs").mkdir(parents=True)
    (clone / "pyproject.toml").write_text('[project]\nname = "mlkit"\n')
    (clone / "sub").mkdir()
    monkeypatch.chdir(clone / "sub")
    assert _paths.results_root_origin()[0] == clone / "results"
    monkeypatch.chdir(tmp_path)
    assert _paths.results_root() == ROOT / "results"           # mlkit's own clone
    monkeypatch.setattr(_paths, "clone_root", lambda start=None: None)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    root, origin = _paths.results_root_origin()
    assert "user data folder" in origin and root.name == "results"
    if sys.platform.startswith("linux"):
        assert root == tmp_path / "xdg" / "mlkit" / "results"
    monkeypatch.setenv("MLKIT_RESULTS", str(tmp_path / "env"))
    assert _paths.results_root() == tmp_path / "env"
    with _paths.using_results(tmp_path / "opt"):
        assert _paths.results_root() == tmp_path / "opt"
        assert os.environ["MLKIT_RESULTS"] == str(tmp_path / "opt")
    assert os.environ["MLKIT_RESULTS"] == str(tmp_path / "env")

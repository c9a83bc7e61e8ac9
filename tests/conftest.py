import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"


@pytest.fixture
def results(tmp_path, monkeypatch):
    """A private results root (MLKIT_RESULTS) so tests never write into the repo."""
    root = tmp_path / "results"
    monkeypatch.setenv("MLKIT_RESULTS", str(root))
    return root


@pytest.fixture
def data_mirror():
    """The shared real datasets (MLKIT_DATA_MIRROR), or skip with the reason."""
    mirror = os.environ.get("MLKIT_DATA_MIRROR")
    if not mirror or not Path(mirror).is_dir():
        pytest.skip("MLKIT_DATA_MIRROR does not name a folder with the real datasets "
                    "(CI sets it to ../shared/data)")
    return Path(mirror)

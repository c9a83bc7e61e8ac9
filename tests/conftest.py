import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"


@pytest.fixture(autouse=True)
def _empty_model_memos():
    """Every test starts with this process's memos of learned models empty (a fit in one
    test is never a memo hit in another)."""
    from mlkit.methods._memo import FITTED
    from mlkit.methods.mi.reduced import CONSTRUCTIONS
    from mlkit.methods.multimodal._base import LEARNED

    for memo in (FITTED, CONSTRUCTIONS, LEARNED):
        memo.clear()


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


#: the comparison-frame columns that hold a table's numbers as it shows them
SHOWN = ["table", "keys", "quantity", "paper_shown", "ours_shown", "paper", "paper_spread",
         "ours", "ours_spread"]


def assert_comparison_matches_tables(out_dir):
    """The ``comparison.csv`` a render wrote in ``out_dir`` holds exactly the paper and ours
    cells of the tables it wrote there (read back as displayed), row for row."""
    import pandas as pd

    from mlkit.report.comparison import FILE, read_comparison, tables_comparison
    from mlkit.report.reproduction_cells import table_rows

    out_dir = Path(out_dir)
    frame = read_comparison(out_dir / FILE)
    tables = {p.stem: table_rows(p) for p in out_dir.glob("*.csv") if p.name != FILE}
    read = tables_comparison(tables)
    pd.testing.assert_frame_equal(frame[SHOWN], read[SHOWN], obj=str(out_dir))
    return frame

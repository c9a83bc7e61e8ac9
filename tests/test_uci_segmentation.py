"""UCI Image Segmentation as a two-view set: the text reader and the catalog entry."""

import numpy as np
import pytest

from mlkit._errors import DataError
from mlkit.datasets.uci_segmentation import (SEGMENTATION_COUNTS, load_uci_segmentation,
                                             read_uci_segmentation)
from mlkit.registry import DATASETS

HEADER = ",".join(f"A{k}" for k in range(1, 20))


def _row(cls, base):
    return ",".join([cls] + [str(base + k) for k in range(19)])


def _write(tmp_path, lines, name="seg.data"):
    path = tmp_path / name
    path.write_text("\n".join([";;; comment", "", *lines]) + "\n")
    return path


def test_reads_two_views_and_classes(tmp_path):
    path = _write(tmp_path, [HEADER, _row("SKY", 0.5), _row("BRICKFACE", 1), _row("GRASS", 2)])
    data = read_uci_segmentation(path)
    assert data.view_names == ["shape-edge", "colour"]
    assert [X.shape for X in data.views] == [(3, 9), (3, 10)]
    np.testing.assert_array_equal(data.views[0][0], 0.5 + np.arange(9))
    np.testing.assert_array_equal(data.views[1][2], 2 + np.arange(9, 19))
    np.testing.assert_array_equal(data.y, [1, 0, 6])
    assert data.class_names[:2] == ["brickface", "sky"] and data.synthetic is False


ERRORS = {
    "short-row": ([HEADER, "SKY,1,2,3"], "line 4: expected CLASS and 19 values, got 4"),
    "bad-class": ([HEADER, _row("SEA", 0)], "unknown class 'SEA'"),
    "bad-value": ([HEADER, _row("SKY", 0).replace(",3,", ",x,", 1)], "not a number"),
    "nan": ([HEADER, _row("SKY", 0).replace(",3,", ",nan,", 1)], "NaN or infinite"),
    "no-rows": ([HEADER], "no data rows"),
    "no-header": (["a,b"], "expected a header of 19 attribute names"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_bad_files_give_one_clear_line(tmp_path, case):
    lines, expected = ERRORS[case]
    path = _write(tmp_path, lines)
    with pytest.raises(DataError) as info:
        read_uci_segmentation(path)
    message = str(info.value)
    assert expected in message and str(path) in message and "\n" not in message


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_uci_segmentation(tmp_path / "absent.data")


def test_mirror_files_have_the_verified_counts(data_mirror, monkeypatch, tmp_path):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(data_mirror))
    folder = data_mirror / "multiview" / "uci_segmentation"
    train = read_uci_segmentation(folder / "segmentation.data")
    test = read_uci_segmentation(folder / "segmentation.test")
    assert np.bincount(train.y).tolist() == [30] * 7
    assert np.bincount(test.y).tolist() == [300] * 7
    entry = DATASETS.entry("uci-segmentation")
    assert entry.meta["kind"] == "multi-view" and entry.meta["synthetic"] is False
    assert [f.path for f in entry.meta["files"]] == [
        "multiview/uci_segmentation/segmentation.data",
        "multiview/uci_segmentation/segmentation.test"]
    data = load_uci_segmentation(data_home=tmp_path)
    assert len(data.y) == SEGMENTATION_COUNTS.samples == 2310
    assert tuple(X.shape[1] for X in data.views) == SEGMENTATION_COUNTS.dims == (9, 10)
    assert tuple(np.bincount(data.y).tolist()) == SEGMENTATION_COUNTS.class_counts
    assert np.all(data.views[0][:, 2] == 9)                  # REGION-PIXEL-COUNT is constant
    assert len(data.splits["train"]) == 210 and len(data.splits["test"]) == 2100
    np.testing.assert_array_equal(data.views[1][:210], train.views[1])
    assert data.checksums == {f.path: f.sha256 for f in entry.meta["files"]}

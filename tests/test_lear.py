"""The LEAR ``.hvecs`` reader and the registered corel5k-lear set: counts checked on the
mirror's files, one-line errors on truncated or corrupt files, by name and by path."""

import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from mlkit._errors import DataError
from mlkit.datasets import load_dataset
from mlkit.datasets.lear import read_hvecs, read_lear


def _write_hvecs(path, rows, dim=None):
    rows = np.asarray(rows, dtype="<u2")
    d = rows.shape[1] if dim is None else dim
    out = np.column_stack([np.full(len(rows), d, dtype="<u2"), rows])
    path.write_bytes(out.astype("<u2").tobytes())
    return path


def _tiny_folder(tmp_path):
    """A 3 + 2 image LEAR folder with 4-D features and 3 keywords."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "toy_dictionary.txt").write_text("sky\nwater\ntree\n")
    for part, X, Y in (("train", [[1, 2, 3, 4], [0, 0, 5, 1], [9, 9, 9, 9]],
                        [[1, 0, 0], [0, 1, 1], [1, 1, 0]]),
                       ("test", [[7, 0, 0, 1], [2, 2, 2, 2]], [[0, 0, 1], [1, 0, 0]])):
        _write_hvecs(folder / f"toy_{part}_DenseHue.hvecs", X)
        _write_hvecs(folder / f"toy_{part}_annot.hvecs", Y)
        (folder / f"toy_{part}_list.txt").write_text(
            "".join(f"{part}/{i}\n" for i in range(len(X))))
    return folder


def test_hvecs_rows_round_trip(tmp_path):
    rows = np.array([[0, 1, 65535], [4, 5, 6]])
    np.testing.assert_array_equal(read_hvecs(_write_hvecs(tmp_path / "a.hvecs", rows)), rows)


@pytest.mark.parametrize("cut, match", [(1, "not a whole number of uint16"),
                                        (2, r"truncated: row 2 has 2 of its 3 values"),
                                        (6, r"truncated: row 2 has 0 of its 3 values")])
def test_truncated_files_are_one_line_errors(tmp_path, cut, match):
    path = _write_hvecs(tmp_path / "a.hvecs", [[1, 2, 3], [4, 5, 6]])
    path.write_bytes(path.read_bytes()[:-cut])
    with pytest.raises(DataError, match=match) as err:
        read_hvecs(path)
    assert "\n" not in str(err.value)


def test_corrupt_dimension_and_empty_files(tmp_path):
    path = _write_hvecs(tmp_path / "a.hvecs", [[1, 2, 3], [4, 5, 6]])
    raw = bytearray(path.read_bytes())
    raw[8] = 7                                     # row 2's dimension: 3 -> 7
    path.write_bytes(bytes(raw))
    with pytest.raises(DataError, match="row 2 declares dimension 7, expected 3"):
        read_hvecs(path)
    with pytest.raises(DataError, match="row 1 declares dimension 3, expected 5"):
        read_hvecs(_write_hvecs(tmp_path / "b.hvecs", [[1, 2, 3]]), dim=5)
    (tmp_path / "c.hvecs").write_bytes(b"")
    with pytest.raises(DataError, match="empty file"):
        read_hvecs(tmp_path / "c.hvecs")
    with pytest.raises(DataError, match="no such file"):
        read_hvecs(tmp_path / "absent.hvecs")


def test_folder_reader_keeps_the_split_and_checks_the_parts(tmp_path):
    folder = _tiny_folder(tmp_path)
    data = load_dataset(path=folder, format="lear-hvecs")
    assert data.X.shape == (5, 4) and data.Y.shape == (5, 3)
    assert data.label_names == ["sky", "water", "tree"] and data.name == "toy"
    assert data.splits["train"].tolist() == [0, 1, 2] and data.splits["test"].tolist() == [3, 4]
    np.testing.assert_array_equal(data.X[3], [7, 0, 0, 1])
    assert data.Y[:, 2].tolist() == [0, 1, 0, 1, 0]
    # a list file one row short
    (folder / "toy_test_list.txt").write_text("test/0\n")
    with pytest.raises(DataError, match="2 feature rows, 2 annotation rows and 1 image ids"):
        read_lear(folder)
    (folder / "toy_test_list.txt").write_text("test/0\ntest/1\n")
    # an annotation row with 4 keywords for a 3-keyword dictionary
    _write_hvecs(folder / "toy_test_annot.hvecs", [[0, 0, 1, 0], [1, 0, 0, 0]])
    with pytest.raises(DataError, match="declares dimension 4, expected 3"):
        read_lear(folder)
    with pytest.raises(DataError, match="not a folder"):
        read_lear(folder / "toy_dictionary.txt")


def test_cli_reports_a_corrupt_file_in_one_line(tmp_path):
    from mlkit.cli import cli

    folder = _tiny_folder(tmp_path)
    path = folder / "toy_train_DenseHue.hvecs"
    path.write_bytes(path.read_bytes()[:-4])
    result = CliRunner().invoke(cli, ["data", "info", str(folder), "--format", "lear-hvecs"])
    assert result.exit_code != 0
    assert "truncated: row 3 has 2 of its 4 values" in result.output
    assert "Traceback" not in result.output


def test_mirror_files_have_the_verified_counts(data_mirror, monkeypatch, tmp_path):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(data_mirror))
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "home"))
    data = load_dataset("corel5k-lear")
    assert data.X.shape == (4999, 100) and data.Y.shape == (4999, 260)
    assert len(data.splits["train"]) == 4500 and len(data.splits["test"]) == 499
    assert data.Y.sum(axis=1).mean() == pytest.approx(3.40, abs=0.005)
    assert data.Y.sum(axis=0).min() >= 1                   # every keyword used (README)
    assert data.label_names[:3] == ["city", "mountain", "sky"]
    top = load_dataset("corel5k-lear", params={"max_labels": 39})
    counts = top.Y.sum(axis=0)
    assert top.n_labels == 39 and (counts.min(), counts.max()) == (107, 1120)
    hel = load_dataset("corel5k-lear", params={"max_labels": 39, "features": "hellinger"})
    np.testing.assert_allclose((hel.X ** 2).sum(axis=1), 1.0)
    np.testing.assert_allclose(hel.X[0] ** 2 * data.X[0].sum(), data.X[0])
    np.testing.assert_array_equal(hel.Y, top.Y)
    with pytest.raises(ValueError, match="features must be one of counts, hellinger"):
        load_dataset("corel5k-lear", params={"features": "l2"})
    by_path = load_dataset(path=data_mirror / "multilabel" / "corel5k_lear",
                           format="lear-hvecs")
    np.testing.assert_array_equal(by_path.X, data.X)
    np.testing.assert_array_equal(by_path.Y, data.Y)


def test_a_corrupt_cached_file_fails_the_checksum(data_mirror, monkeypatch, tmp_path):
    """A file that differs from the pinned SHA-256 is never read as the registered set."""
    src = data_mirror / "multilabel" / "corel5k_lear"
    mirror = tmp_path / "mirror" / "multilabel" / "corel5k_lear"
    shutil.copytree(src, mirror)
    target = mirror / "corel5k_test_annot.hvecs"
    target.chmod(0o644)
    target.write_bytes(target.read_bytes()[:-2])
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "home"))
    with pytest.raises(DataError, match="(?i)sha-?256|checksum"):
        load_dataset("corel5k-lear")

"""NUS-WIDE and MIR Flickr readers on small fixture files written in the official layouts."""

import numpy as np
import pytest

from mlkit._errors import DataError
from mlkit.datasets import load_dataset
from mlkit.datasets.mirflickr import (MIRFLICKR_CONCEPTS, load_mirflickr, read_mir_flickr,
                                      read_vec)
from mlkit.datasets.nuswide import (NUS_ANIMAL_CONCEPTS, NUS_FEATURES, load_nus_animal,
                                    read_feature_matrix, read_nus_wide)
from mlkit.registry import DATASETS, FORMATS

DIMS = {f: d for f, (_, d) in NUS_FEATURES.items()}
ANIMALS = list(NUS_ANIMAL_CONCEPTS.values())


def _write_matrix(path, X, *, integer=False):
    """Official style: space-separated, each row ending with a space."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = "%d" if integer else "%.6f"
    path.write_text("".join(" ".join(fmt % v for v in row) + " \n" for row in X))


def _write_labels(path, col):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{int(v)}\n" for v in col))


def _feature_name(feature, part):
    stem = NUS_FEATURES[feature][0]
    if feature == "bow":
        return "BoW_int.dat" if part is None else f"BoW_{part}_int.dat"
    return f"Normalized_{stem}.dat" if part is None else f"{part}_Normalized_{stem}.dat"


def write_nus(root, Y, concepts, *, part=None, seed=0):
    """Write NUS-WIDE files for labels Y (n, L); return the views written."""
    rng = np.random.default_rng(seed)
    views = {}
    for f, d in DIMS.items():
        X = rng.integers(0, 9, (len(Y), d)) if f == "bow" else rng.random((len(Y), d))
        X = np.round(X, 6)
        _write_matrix(root / "Low_Level_Features" / _feature_name(f, part), X,
                      integer=f == "bow")
        views[f] = X
    for j, c in enumerate(concepts):
        sub = "AllLabels" if part is None else "TrainTestLabels"
        name = f"Labels_{c}.txt" if part is None else f"Labels_{c}_{part}.txt"
        _write_labels(root / "Groundtruth" / sub / name, Y[:, j])
    return views


def _animal_labels(n, seed):
    """Rows 0..n-1: class (row mod 12) alone, every 5th row also a second animal, every 7th
    row no animal."""
    Y = np.zeros((n, 12), dtype=int)
    Y[np.arange(n), np.arange(n) % 12] = 1
    Y[::5, (np.arange(n)[::5] + 1) % 12] = 1
    Y[::7] = 0
    return Y


@pytest.fixture
def nus_all(tmp_path):
    Y = _animal_labels(40, 0)
    views = write_nus(tmp_path / "nus-wide", Y, ANIMALS)
    return tmp_path, Y, views


def test_nus_animal_single_label_rows_and_values(nus_all):
    home, Y, views = nus_all
    data = load_nus_animal(data_home=home)
    keep = np.flatnonzero(Y.sum(axis=1) == 1)
    assert data.name == "nus-animal" and not data.synthetic
    assert data.class_names == list(NUS_ANIMAL_CONCEPTS)
    assert [X.shape[1] for X in data.views] == [500, 64, 225, 144, 73, 128]
    np.testing.assert_array_equal(data.y, np.argmax(Y[keep], axis=1))
    for X, f in zip(data.views, NUS_FEATURES):
        np.testing.assert_allclose(X, views[f][keep])
    assert data.splits == {}
    assert len(data.inputs[[0, 1]]) == 2


def test_nus_animal_is_registered(nus_all, monkeypatch):
    home, Y, _ = nus_all
    monkeypatch.setenv("MLKIT_DATA", str(home))
    entry = DATASETS.entry("nus-animal")
    assert entry.meta["kind"] == "multi-view" and entry.meta["synthetic"] is False
    data = load_dataset("nus-animal", params={"features": ["ch", "wt"]})
    assert data.view_names == ["colour histogram", "wavelet texture"]
    assert len(data) == int((Y.sum(axis=1) == 1).sum())


def test_nus_wide_format_multilabel_and_split_layout(tmp_path):
    concepts = ["animal", "sky"]
    rng = np.random.default_rng(1)
    Ytr, Yte = rng.integers(0, 2, (9, 2)), rng.integers(0, 2, (6, 2))
    vtr = write_nus(tmp_path, Ytr, concepts, part="Train", seed=1)
    vte = write_nus(tmp_path, Yte, concepts, part="Test", seed=2)
    assert "nus-wide" in FORMATS
    data = load_dataset(path=tmp_path, format="nus-wide", params={"features": ["edh"]})
    assert data.class_names == concepts      # found from the label files, sorted
    np.testing.assert_array_equal(data.y, np.vstack([Ytr, Yte]))
    np.testing.assert_allclose(data.views[0], np.vstack([vtr["edh"], vte["edh"]]))
    np.testing.assert_array_equal(data.splits["train"], np.arange(9))
    np.testing.assert_array_equal(data.splits["test"], np.arange(9, 15))


def test_nus_missing_files_one_line_naming_them(tmp_path):
    with pytest.raises(DataError) as err:
        load_nus_animal(data_home=tmp_path)
    msg = str(err.value)
    assert "\n" not in msg
    assert str(tmp_path / "nus-wide") in msg
    for needed in ("Low_Level_Features/Normalized_CH.dat", "Low_Level_Features/BoW_int.dat",
                   "Groundtruth/AllLabels/Labels_whales.txt"):
        assert needed in msg
    Y = _animal_labels(20, 0)
    write_nus(tmp_path / "nus-wide", Y, ANIMALS)
    (tmp_path / "nus-wide" / "Low_Level_Features" / "Normalized_WT.dat").unlink()
    with pytest.raises(DataError, match="Normalized_WT.dat"):
        load_nus_animal(data_home=tmp_path)


def _set_token(lines, row, value):
    tokens = lines[row].split()
    tokens[0] = value
    lines[row] = " ".join(tokens)


@pytest.mark.parametrize("corrupt, where", [
    (lambda ls: ls.__setitem__(1, ls[1] + " 0.5"), r"line 2: 65 values, expected 64"),
    (lambda ls: ls.__setitem__(2, ""), r"line 3: 0 values, expected 64"),
    (lambda ls: _set_token(ls, 2, "abc"), r"line 3: value 1 'abc' is not a number"),
    (lambda ls: _set_token(ls, 1, "nan"), r"line 2: value 1 'nan' is NaN or infinite"),
    (lambda ls: ls.append(ls[0]), r"41 lines, expected 40"),
])
def test_nus_malformed_feature_file(nus_all, corrupt, where):
    home, _, _ = nus_all
    path = home / "nus-wide" / "Low_Level_Features" / "Normalized_CH.dat"
    lines = path.read_text().splitlines()
    corrupt(lines)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=where) as err:
        load_nus_animal(data_home=home, features=["ch"])
    assert "Normalized_CH.dat" in str(err.value) and "\n" not in str(err.value)


def test_nus_malformed_label_files(nus_all):
    home, _, _ = nus_all
    path = home / "nus-wide" / "Groundtruth" / "AllLabels" / "Labels_tiger.txt"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(DataError, match=r"Labels_tiger.txt: 39 lines, expected 40"):
        load_nus_animal(data_home=home)
    lines[3] = "2"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"Labels_tiger.txt, line 4: label '2' is not 0 or 1"):
        load_nus_animal(data_home=home)


def test_read_feature_matrix_subset_rows_and_checks(tmp_path):
    path = tmp_path / "m.dat"
    X = np.arange(12.0).reshape(4, 3)
    _write_matrix(path, X)
    np.testing.assert_array_equal(read_feature_matrix(path), X)
    np.testing.assert_array_equal(read_feature_matrix(path, rows=[3, 1], n_rows=4), X[[3, 1]])
    with pytest.raises(DataError, match="4 lines, expected 5"):
        read_feature_matrix(path, n_rows=5)
    with pytest.raises(DataError, match="line 1: 3 values, expected 2"):
        read_feature_matrix(path, dim=2)


# -- MIR Flickr --------------------------------------------------------------------------------


def _write_vec(path, X, head, data):
    """LEAR vec layout: per record a dimension header then the values."""
    rec = np.dtype([("d", head), ("v", data, (X.shape[1],))])
    arr = np.zeros(len(X), dtype=rec)
    arr["d"], arr["v"] = X.shape[1], X
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(arr.tobytes())


def write_mir(root, n, concepts, *, seed=0, vocab=(("sky", 60), ("dog", 55), ("rare", 3))):
    """Write MIR Flickr files (features, annotations, official tag files) for n images."""
    rng = np.random.default_rng(seed)
    sift = rng.integers(0, 50, (n, 7)).astype(float)
    gist = np.round(rng.random((n, 5)), 6)
    _write_vec(root / "features" / "DenseSift.hvecs", sift, "<u2", "<u2")
    _write_matrix(root / "features" / "Gist.txt", gist)
    Y = rng.integers(0, 2, (n, len(concepts)))
    for j, c in enumerate(concepts):
        path = root / "annotations" / f"{c}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{i + 1}\n" for i in np.flatnonzero(Y[:, j])))
    (root / "annotations" / "README.txt").write_text("the annotations\n")
    doc = root / "mirflickr" / "doc"
    doc.mkdir(parents=True, exist_ok=True)
    (doc / "common_tags.txt").write_text("".join(f"{t} {c}\n" for t, c in vocab))
    tags = root / "mirflickr" / "meta" / "tags"
    tags.mkdir(parents=True, exist_ok=True)
    T = rng.integers(0, 2, (n, len(vocab)))
    for i in range(n):
        words = [t for (t, _), on in zip(vocab, T[i]) if on] + ["other"]
        (tags / f"tags{i + 1}.txt").write_text("\n".join(words) + "\n")
    return sift, gist, T, Y


def test_read_vec_formats_and_truncation(tmp_path):
    X = np.arange(12, dtype=float).reshape(3, 4)
    for ext, head, data in ((".fvec", "<u4", "<f4"), (".hvecs", "<u2", "<u2"),
                            (".hvecs32", "<u4", "<u4"), (".dvec", "<u4", "<f8")):
        _write_vec(tmp_path / f"x{ext}", X, head, data)
        np.testing.assert_array_equal(read_vec(tmp_path / f"x{ext}"), X)
    raw = (tmp_path / "x.fvec").read_bytes()
    (tmp_path / "t.fvec").write_bytes(raw[:-3])
    with pytest.raises(DataError, match=r"t.fvec: .* truncated"):
        read_vec(tmp_path / "t.fvec")
    bad = bytearray(raw)
    bad[20:24] = np.array([5], "<u4").tobytes()      # record 2 header
    (tmp_path / "b.fvec").write_bytes(bytes(bad))
    with pytest.raises(DataError, match="record 2 declares dimension 5"):
        read_vec(tmp_path / "b.fvec")


def test_mir_flickr_format_reads_views_tags_and_labels(tmp_path):
    concepts = ["clouds", "dog", "dog_r1"]
    sift, gist, T, Y = write_mir(tmp_path, 11, concepts)
    data = read_mir_flickr(tmp_path)
    assert data.class_names == concepts and data.view_names == ["DenseSift", "Gist", "tags"]
    np.testing.assert_array_equal(data.y, Y)
    np.testing.assert_array_equal(data.views[0], sift)
    np.testing.assert_allclose(data.views[1], gist)
    np.testing.assert_array_equal(data.views[2], T[:, :2])   # "rare" is used < 50 times
    few = read_mir_flickr(tmp_path, views=["tags"], min_tag_count=1, n_images=11)
    np.testing.assert_array_equal(few.views[0], T)


def test_mir_flickr_registered(tmp_path):
    write_mir(tmp_path, 5, ["sea"])
    assert DATASETS.entry("mirflickr").meta["kind"] == "multi-view"
    data = load_dataset(path=tmp_path, format="mir-flickr", params={"views": ["Gist"]})
    assert data.y.shape == (5, 1) and data.views[0].shape == (5, 5)


def test_mirflickr_dataset_checks_counts_and_missing_files(tmp_path):
    with pytest.raises(DataError) as err:
        load_mirflickr(data_home=tmp_path)
    msg = str(err.value)
    assert "\n" not in msg and str(tmp_path / "mirflickr") in msg
    assert "features/DenseSift" in msg and "annotations/<concept>.txt for 38 concepts" in msg
    write_mir(tmp_path / "mirflickr", 6, MIRFLICKR_CONCEPTS)
    (tmp_path / "mirflickr" / "annotations" / "water.txt").unlink()
    with pytest.raises(DataError, match=r"put annotations/water.txt there") as err:
        load_mirflickr(data_home=tmp_path)
    assert "features/" not in str(err.value)
    write_mir(tmp_path / "mirflickr", 6, MIRFLICKR_CONCEPTS)
    with pytest.raises(DataError, match=r"DenseSift.hvecs: 6 records, expected 25000"):
        load_mirflickr(data_home=tmp_path)


def _append_to_line(path, row, text):
    lines = path.read_text().splitlines()
    lines[row] += text
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("corrupt, where", [
    (lambda root: (root / "annotations" / "dog.txt").write_text("3\n12\n"),
     r"dog.txt, line 2: image id '12' is not an integer in 1..11"),
    (lambda root: (root / "annotations" / "dog.txt").write_text("3\nx\n"),
     r"dog.txt, line 2: value 1 'x' is not a number"),
    (lambda root: _append_to_line(root / "features" / "Gist.txt", 2, " 1"),
     r"Gist.txt, line 3: 6 values, expected 5"),
    (lambda root: (root / "features" / "Gist.txt").write_text("0 1 2 3 4\n"),
     r"Gist.txt: 1 lines, expected 11"),
    (lambda root: (root / "mirflickr" / "meta" / "tags" / "tags4.txt").unlink(),
     r"tags4.txt: missing"),
    (lambda root: (root / "features" / "Gist.txt").unlink(), r"features/Gist"),
])
def test_mir_flickr_malformed_files(tmp_path, corrupt, where):
    write_mir(tmp_path, 11, ["clouds", "dog"])
    corrupt(tmp_path)
    with pytest.raises(DataError, match=where) as err:
        read_mir_flickr(tmp_path)
    assert "\n" not in str(err.value)


def test_read_feature_matrix_parses_floats_exactly(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 7)) * 10.0 ** rng.integers(-12, 12, (50, 7))
    path = tmp_path / "f.dat"
    path.write_text("".join(" ".join(repr(float(v)) for v in row) + " \n" for row in X))
    np.testing.assert_array_equal(read_feature_matrix(path, dim=7), X)
    np.testing.assert_array_equal(read_feature_matrix(path, rows=[4, 2]), X[[4, 2]])


def test_nus_wide_single_label_over_chosen_concepts(nus_all):
    home, Y, views = nus_all
    data = read_nus_wide(home / "nus-wide", concepts=["cat", "dog"], features=["wt"],
                         single_label=True)
    sub = Y[:, [ANIMALS.index("cat"), ANIMALS.index("dog")]]
    keep = np.flatnonzero(sub.sum(axis=1) == 1)
    np.testing.assert_array_equal(data.y, np.argmax(sub[keep], axis=1))
    np.testing.assert_allclose(data.views[0], views["wt"][keep])
    assert data.class_names == ["cat", "dog"] and data.stratify is data.y

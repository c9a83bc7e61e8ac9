"""The ``mat-views`` reader (multi-view MATLAB v5) and the real multi-view catalog."""

import numpy as np
import pytest
import scipy.io as sio

from mlkit._errors import DataError
from mlkit.datasets._containers import Views
from mlkit.datasets.catalog import describe
from mlkit.datasets.mat_views import (MV_COUNTS, load_leaves100, read_mat_view_files,
                                      read_mat_views)
from mlkit.registry import DATASETS, FORMATS


def _cell(mats, orientation):
    cell = np.empty((len(mats), 1) if orientation == "column" else (1, len(mats)), dtype=object)
    for v, X in enumerate(mats):
        cell.flat[v] = X
    return cell


def _views(n=12, dims=(3, 5), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, d)) for d in dims]


@pytest.mark.parametrize("orientation", ["column", "row"])
@pytest.mark.parametrize("label_key", ["y", "Y"])
def test_reads_both_orientations_and_label_names(tmp_path, orientation, label_key):
    mats = _views()
    mats[1] = (mats[1] * 10).astype(np.uint16)          # integer views are cast to float
    y = np.repeat([1, 2, 3], 4).astype(np.uint8)[:, None]
    path = tmp_path / "f.mat"
    sio.savemat(path, {"X": _cell(mats, orientation), label_key: y})
    data = FORMATS.get("mat-views")(path)
    assert len(data.views) == 2 and data.view_names == ["view 1", "view 2"]
    for got, want in zip(data.views, mats):
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, want.astype(float))
    np.testing.assert_array_equal(data.y, y.ravel() - 1)
    assert isinstance(data.inputs, Views) and data.inputs.dims == [3, 5]
    assert data.synthetic is False


@pytest.mark.parametrize("key", ["view_names", "names"])
def test_view_names_from_the_file(tmp_path, key):
    path = tmp_path / "f.mat"
    names = np.empty((1, 2), dtype=object)
    names[0, 0], names[0, 1] = "colour", "texture"
    sio.savemat(path, {"X": _cell(_views(), "row"), "y": np.ones((12, 1)), key: names})
    assert read_mat_views(path).view_names == ["colour", "texture"]


def test_describe_prints_samples_classes_and_views(tmp_path):
    path = tmp_path / "f.mat"
    y = np.array([1] * 5 + [2] * 7)[:, None]
    sio.savemat(path, {"X": _cell(_views(), "column"), "y": y})
    lines = describe(str(path), "mat-views")
    assert "examples: 12" in lines
    assert "class 1: 5" in lines and "class 2: 7" in lines
    assert "view 1: 3-D" in lines and "view 2: 5-D" in lines


def _bad_files(tmp_path):
    good = {"X": _cell(_views(), "column"), "y": np.ones((12, 1))}
    cases = {}

    def write(name, variables):
        path = tmp_path / f"{name}.mat"
        sio.savemat(path, variables)
        cases[name] = path

    write("unequal-rows", {"X": _cell([np.ones((12, 2)), np.ones((11, 2))], "column"),
                           "y": np.ones((12, 1))})
    write("no-labels", {"X": good["X"]})
    write("label-count", {"X": good["X"], "y": np.ones((10, 1))})
    write("not-a-cell", {"X": np.ones((12, 3)), "y": np.ones((12, 1))})
    write("zero-label", {"X": good["X"], "y": np.zeros((12, 1))})
    write("nan-view", {"X": _cell([np.full((12, 2), np.nan)], "column"), "y": np.ones((12, 1))})
    write("no-X", {"y": np.ones((12, 1))})
    full = tmp_path / "full.mat"
    sio.savemat(full, good)
    raw = full.read_bytes()
    truncated = tmp_path / "truncated.mat"
    truncated.write_bytes(raw[: len(raw) // 2])
    cases["truncated"] = truncated
    garbage = tmp_path / "garbage.mat"
    garbage.write_bytes(b"this is not a MATLAB file\n" * 20)
    cases["garbage"] = garbage
    return cases


EXPECTED = {
    "unequal-rows": "different numbers of rows [12, 11]",
    "no-labels": "neither 'y' nor 'Y'",
    "label-count": "10 labels in 'y' for 12 samples",
    "not-a-cell": "'X' must be a cell array",
    "zero-label": "1-based integer class ids",
    "nan-view": "NaN or infinity",
    "no-X": "no variable 'X'",
    "truncated": "truncated or corrupt",
    "garbage": "truncated or corrupt",
}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_corrupt_files_give_one_clear_line(tmp_path, case):
    path = _bad_files(tmp_path)[case]
    with pytest.raises(DataError) as info:
        read_mat_views(path)
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert EXPECTED[case] in message and str(path) in message and "\n" not in message


# -- one view per file (Corel MPEG-7 layout) ------------------------------------------------
def _view_files(tmp_path, mats, keys=None):
    paths = []
    for v, X in enumerate(mats):
        path = tmp_path / f"v{v}.mat"
        sio.savemat(path, {(keys or [f"view{v}_all"] * len(mats))[v]: X})
        paths.append(path)
    return paths


def test_one_view_per_file_with_labels_from_row_blocks(tmp_path):
    mats = _views(n=12, dims=(3, 5))
    mats[0] = (mats[0] * 10).astype(np.int16)
    paths = _view_files(tmp_path, mats, keys=["a_all", "b_all"])
    data = read_mat_view_files(paths, rows_per_class=4, name="toy")
    assert data.name == "toy" and data.view_names == ["a_all", "b_all"]
    for got, want in zip(data.views, mats):
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, want.astype(float))
    np.testing.assert_array_equal(data.y, np.repeat([0, 1, 2], 4))
    assert data.class_names == ["1", "2", "3"] and data.synthetic is False
    named = read_mat_view_files(paths, rows_per_class=6, view_names=["A", "B"])
    assert named.view_names == ["A", "B"] and np.bincount(named.y).tolist() == [6, 6]


VIEW_FILE_ERRORS = {
    "unequal-rows": ([np.ones((12, 2)), np.ones((11, 2))], 4, "different numbers of rows [12, 11]"),
    "not-a-multiple": ([np.ones((12, 2)), np.ones((12, 3))], 5,
                       "not a multiple of rows_per_class=5"),
    "nan": ([np.full((12, 2), np.nan)], 4, "NaN or infinity"),
    "not-2d": ([np.ones((12, 2, 2))], 4, "2-D numeric matrix"),
    "two-variables": (None, 4, "exactly one variable"),
    "garbage": (None, 4, "truncated or corrupt"),
}


@pytest.mark.parametrize("case", sorted(VIEW_FILE_ERRORS))
def test_view_file_errors_give_one_clear_line(tmp_path, case):
    mats, rows_per_class, expected = VIEW_FILE_ERRORS[case]
    if case == "two-variables":
        paths = [tmp_path / "two.mat"]
        sio.savemat(paths[0], {"a": np.ones((12, 2)), "b": np.ones((12, 2))})
    elif case == "garbage":
        paths = [tmp_path / "garbage.mat"]
        paths[0].write_bytes(b"this is not a MATLAB file\n" * 20)
    else:
        paths = _view_files(tmp_path, mats)
    with pytest.raises(DataError) as info:
        read_mat_view_files(paths, rows_per_class=rows_per_class)
    message = str(info.value)
    assert expected in message and "\n" not in message
    assert str(tmp_path) in message


# -- real data -------------------------------------------------------------------------------
_MPEG7 = ("csd", "scd", "cld", "ehd", "dcd")
#: name -> the mirror files (one ``X``/``y`` file, or one file per view in view order).
MIRROR_FILES = {
    "mfeat": ("uci_mfeat/Handwritten.mat",),
    "msrc-v1": ("msrc_v1/MSRC-v5.mat",),
    "scene15": ("scene15/Scene-15.mat",),
    "leaves100": ("leaves100/100Leaves.mat",),
    "wikipedia": ("wikipedia/Wiki_fea.mat",),
    "corel1k-mpeg7": tuple(f"corel_mpeg7/corel1k/{v}_corel1k.mat" for v in _MPEG7),
    "corel10k-mpeg7": tuple(f"corel_mpeg7/corel10k/{v}_entire.mat" for v in _MPEG7),
}


def _read_mirror(data_mirror, name):
    paths = [data_mirror / "multiview" / f for f in MIRROR_FILES[name]]
    if len(paths) == 1:
        return read_mat_views(paths[0])
    return read_mat_view_files(paths, rows_per_class=100)


@pytest.mark.parametrize("name", sorted(MIRROR_FILES))
def test_every_mirror_file_reads_with_the_verified_counts(data_mirror, name):
    data = _read_mirror(data_mirror, name)
    expected = MV_COUNTS[name]
    assert len(data.y) == expected.samples
    assert tuple(X.shape[1] for X in data.views) == expected.dims
    assert tuple(np.bincount(data.y).tolist()) == expected.class_counts


def test_every_mirror_mat_file_is_catalogued(data_mirror):
    found = {p.relative_to(data_mirror / "multiview").as_posix()
             for p in (data_mirror / "multiview").rglob("*.mat")}
    assert found == {f for files in MIRROR_FILES.values() for f in files}


@pytest.mark.parametrize("name", sorted(MIRROR_FILES))
def test_catalog_entries_load_through_the_fetch_layer(data_mirror, monkeypatch, tmp_path, name):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(data_mirror))
    entry = DATASETS.entry(name)
    assert entry.meta["kind"] == "multi-view" and entry.meta["synthetic"] is False
    remotes = entry.meta["files"]
    assert [r.path for r in remotes] == ["multiview/" + f for f in MIRROR_FILES[name]]
    data = entry.obj(data_home=tmp_path)
    assert data.synthetic is False and data.checksums == {r.path: r.sha256 for r in remotes}
    expected = MV_COUNTS[name]
    assert len(data.view_names) == len(expected.dims)
    assert len(data.class_names) == len(expected.class_counts)
    assert tuple(np.bincount(data.y).tolist()) == expected.class_counts


def test_wikipedia_views_are_named_by_shape(data_mirror, monkeypatch, tmp_path):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(data_mirror))
    data = DATASETS.entry("wikipedia").obj(data_home=tmp_path)
    assert [X.shape[1] for X in data.views] == [128, 10]
    assert data.view_names[0].startswith("image") and data.view_names[1].startswith("text")
    assert data.class_names[0] == "art" and data.class_names[-1] == "warfare"


def test_leaves100_class_subset_is_seeded_and_relabelled(data_mirror, monkeypatch, tmp_path):
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(data_mirror))
    a = load_leaves100(n_classes=19, class_seed=3, data_home=tmp_path)
    b = load_leaves100(n_classes=19, class_seed=3, data_home=tmp_path)
    c = load_leaves100(n_classes=19, class_seed=4, data_home=tmp_path)
    assert len(a.y) == 19 * 16 and np.bincount(a.y).tolist() == [16] * 19
    assert a.class_names == b.class_names != c.class_names
    chosen = np.sort(np.random.default_rng(3).choice(100, 19, replace=False))
    assert a.class_names == [f"species {k + 1}" for k in chosen]
    full = load_leaves100(data_home=tmp_path)
    rows = np.flatnonzero(np.isin(full.y, chosen))
    np.testing.assert_array_equal(a.views[2], full.views[2][rows])

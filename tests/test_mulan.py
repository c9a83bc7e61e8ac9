"""Mulan reader (dense, sparse, gzipped ARFF + XML, .mat), the real Mulan datasets with the
data README's verified counts, and the TRECVID-style generator."""

import gzip
from dataclasses import replace

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from click.testing import CliRunner
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import mlkit.datasets.mulan  # noqa: F401  (registers the "mulan" format)
import mlkit.datasets.mulan_catalog as catalog
from mlkit._errors import DataError
from mlkit.cli import cli
from mlkit.datasets.mulan import find_label_xml, read_mulan
from mlkit.papers.mssboost.data import LSCOM_LITE_LABELS, make_trecvid_style
from mlkit.registry import DATASETS, FORMATS

# -- hand-written files ------------------------------------------------------------------------

XML = """<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
<label name="sky"></label>
<label name="my label"></label>
</labels>
"""

# labels are not last and the XML lists them in another order than the ARFF
HEADER = """% a comment
@relation toy
@attribute f1 numeric
@attribute 'my label' {0,1}
@attribute f2 REAL
@attribute f3 {0,1}
@attribute sky {0,1}

@data
"""
DENSE_ROWS = "0.5,1,2,0,0\n% a comment row\n-1.25,0,0,1,1\n0,1,3e2,1,1\n0,0,0,0,0\n"
SPARSE_ROWS = "{0 0.5,1 1,2 2}\n{0 -1.25,3 1,4 1}\n{1 1,2 3e2,3 1,4 1}\n{}\n"
EXPECTED_X = np.array([[0.5, 2, 0], [-1.25, 0, 1], [0, 300, 1], [0, 0, 0]])
EXPECTED_Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]], dtype=np.int8)  # 'my label', sky


def write_toy(folder, rows, arff_name="toy-train.arff", header=HEADER, xml=XML):
    """Write ``toy.xml`` and an ARFF file; the ARFF's path."""
    (folder / "toy.xml").write_text(xml)
    path = folder / arff_name
    path.write_text(header + rows)
    return path


def test_dense_arff_gives_the_exact_matrices(tmp_path):
    d = read_mulan(write_toy(tmp_path, DENSE_ROWS))
    assert isinstance(d.X, np.ndarray) and d.Y.dtype == np.int8
    np.testing.assert_array_equal(d.X, EXPECTED_X)
    np.testing.assert_array_equal(d.Y, EXPECTED_Y)
    assert d.label_names == ["my label", "sky"]  # the ARFF's order, not the XML's
    assert d.feature_names == ["f1", "f2", "f3"]
    assert d.name == "toy-train" and not d.synthetic
    assert set(d.checksums) == {"toy-train.arff", "toy.xml"}


def test_sparse_arff_stays_csr_and_equals_dense(tmp_path):
    d = read_mulan(write_toy(tmp_path, SPARSE_ROWS))
    assert sp.issparse(d.X) and d.X.format == "csr" and d.X.nnz == 6
    np.testing.assert_array_equal(d.X.toarray(), EXPECTED_X)
    np.testing.assert_array_equal(d.Y, EXPECTED_Y)


def test_gzipped_arff_and_explicit_xml(tmp_path):
    plain = write_toy(tmp_path, SPARSE_ROWS)
    gz = tmp_path / "elsewhere.arff.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    d = read_mulan(gz, xml=tmp_path / "toy.xml")
    np.testing.assert_array_equal(d.X.toarray(), EXPECTED_X)
    np.testing.assert_array_equal(d.Y, EXPECTED_Y)


@pytest.mark.parametrize("arff, xml", [("scene-train.arff", "scene.xml"),
                                       ("Corel5k-train-sparse.arff", "Corel5k.xml"),
                                       ("Corel16k001-test.arff.gz", "Corel16k001.xml"),
                                       ("emotions.arff", "emotions.xml")])
def test_label_file_found_by_the_mulan_naming_convention(tmp_path, arff, xml):
    (tmp_path / xml).write_text(XML)
    assert find_label_xml(tmp_path / arff) == tmp_path / xml


def test_missing_label_file_lists_the_names_tried(tmp_path):
    path = tmp_path / "data-test.arff"
    path.write_text(HEADER + DENSE_ROWS)
    with pytest.raises(DataError, match=r"tried data-test\.xml, data\.xml.*xml=") as err:
        read_mulan(path)
    assert str(path) in str(err.value)


def test_mat_layout_is_transposed_and_named_by_the_xml(tmp_path):
    (tmp_path / "toy.xml").write_text(XML)
    target = np.array([[1, 0, 1], [0, 0, 1]], dtype=np.uint8)  # L x n
    data = np.array([[1, 0], [0, 0], [1, 1]], dtype=np.uint8)
    scipy.io.savemat(tmp_path / "toy1.mat", {"data": data, "target": target})
    d = read_mulan(tmp_path / "toy1.mat", xml=tmp_path / "toy.xml")
    np.testing.assert_array_equal(d.X, data)
    np.testing.assert_array_equal(d.Y, target.T)
    assert d.label_names == ["sky", "my label"]
    scipy.io.savemat(tmp_path / "bad.mat", {"data": data, "target": target.T})
    with pytest.raises(DataError, match=r"bad\.mat: 'target' has shape \(3, 2\), expected"):
        read_mulan(tmp_path / "bad.mat", xml=tmp_path / "toy.xml")
    with pytest.raises(DataError, match="pass the Mulan XML label file"):
        read_mulan(tmp_path / "toy1.mat")


# -- every error names the file and the line ---------------------------------------------------

BAD_FILES = {
    "too few values (truncated)": (
        DENSE_ROWS + "1,0,2", r"toy-train\.arff: line 15: 3 values where the header declares "
                              r"5 attributes \(the row is incomplete"),
    "sparse row cut mid-row": (
        SPARSE_ROWS + "{0 1,2 ", r"toy-train\.arff: line 14: sparse row is cut mid-row"),
    "sparse index out of range": (
        "{0 1,5 1}\n", r"line 10: sparse index 5 is out of range: the header declares 5"),
    "non-numeric value": (
        "0.5,1,abc,0,0\n", r"line 10: attribute 'f2' \(index 2\): non-numeric value 'abc' "
                           r"where REAL is declared"),
    "label outside {0,1}": (
        DENSE_ROWS + "1,2,0,0,1\n", r"line 15: label 'my label' has value 2, outside \{0,1\}"),
    "sparse label outside {0,1}": (
        "{4 3}\n", r"line 10: label 'sky' has value 3, outside \{0,1\}"),
    "missing value": (
        "0.5,1,?,0,0\n", r"line 10: attribute 'f2' \(index 2\): missing value '\?'; missing "
                         r"values are not supported"),
    "NaN": ("0.5,1,2,0,0\nnan,1,2,0,0\n", r"line 11: attribute 'f1' is nan; NaN and infinite "
                                          r"values are not supported"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_malformed_data_is_a_data_error_with_the_line(tmp_path, case):
    rows, message = BAD_FILES[case]
    path = write_toy(tmp_path, rows)
    with pytest.raises(DataError, match=message) as err:
        read_mulan(path)
    assert str(path) in str(err.value)


def test_header_without_data_is_truncated(tmp_path):
    path = write_toy(tmp_path, "", header=HEADER.replace("@data\n", ""))
    with pytest.raises(DataError, match=r"no @data line after 7 lines; the file is truncated"):
        read_mulan(path)


def test_label_missing_from_the_header_names_the_xml_line(tmp_path):
    xml = XML.replace('<label name="my label">', '<label name="cloud">')
    path = write_toy(tmp_path, DENSE_ROWS, xml=xml)
    with pytest.raises(DataError, match=r"toy\.xml: line 4: label 'cloud' is not an attribute "
                                        r"in the header of .*toy-train\.arff"):
        read_mulan(path)


def test_nominal_feature_is_unsupported(tmp_path):
    header = HEADER.replace("@attribute f3 {0,1}", "@attribute f3 {red,green}")
    path = write_toy(tmp_path, DENSE_ROWS, header=header)
    with pytest.raises(DataError, match=r"line 6: feature 'f3' is nominal \{red,green\}: "
                                        r"nominal features are unsupported"):
        read_mulan(path)


# -- CLI -------------------------------------------------------------------------------------------

def test_cli_data_info_reads_a_mulan_file(tmp_path):
    path = write_toy(tmp_path, DENSE_ROWS)
    result = CliRunner().invoke(cli, ["data", "info", str(path), "--format", "mulan"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for expected in ("examples: 4", "features: 3", "labels: 2", "cardinality: 1.0",
                     "density: 0.5"):
        assert expected in lines
    assert "real data" in result.output
    assert "mulan" in FORMATS.names()


def test_cli_data_info_reports_the_bad_line(tmp_path):
    path = write_toy(tmp_path, "0.5,1,?,0,0\n")
    result = CliRunner().invoke(cli, ["data", "info", str(path), "--format", "mulan"])
    assert result.exit_code == 2
    assert "line 10" in result.output and "missing value" in result.output


# -- the real datasets -----------------------------------------------------------------------------

@pytest.fixture
def mirror_home(data_mirror, tmp_path, monkeypatch):
    """Fetch from the shared mirror into a private data home."""
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "home"))
    return data_mirror / "multilabel"


# name, params, n, d, L, n_train, n_test (data README)
README_COUNTS = [
    ("scene", {}, 2407, 294, 6, 1211, 1196),
    ("emotions", {}, 593, 72, 6, 391, 202),
    ("corel5k", {}, 5000, 499, 374, 4500, 500),
    ("corel16k", {}, 13766, 500, 153, 12022, 1744),
    ("corel16k", {"sample": 2}, 13761, 500, 164, 11978, 1783),
    ("corel16k", {"sample": 3}, 13760, 500, 154, 12043, 1717),
    ("corel16k", {"sample": 4}, 13837, 500, 162, 12091, 1746),
    ("corel16k", {"sample": 5}, 13847, 500, 160, 12106, 1741),
    ("corel16k", {"sample": 6}, 13859, 500, 162, 12122, 1737),
    ("corel16k", {"sample": 7}, 13915, 500, 174, 12168, 1747),
    ("corel16k", {"sample": 8}, 13864, 500, 168, 12140, 1724),
    ("corel16k", {"sample": 9}, 13884, 500, 173, 12083, 1801),
    ("corel16k", {"sample": 10}, 13618, 500, 144, 11857, 1761),
]


@pytest.mark.parametrize("name, params, n, d, L, n_train, n_test", README_COUNTS)
def test_real_dataset_has_the_readme_counts(mirror_home, name, params, n, d, L, n_train,
                                            n_test):
    data = DATASETS.get(name)(**params)
    assert (data.X.shape, data.Y.shape) == ((n, d), (n, L))
    assert (len(data.splits["train"]), len(data.splits["test"])) == (n_train, n_test)
    assert np.array_equal(np.sort(np.concatenate(list(data.splits.values()))), np.arange(n))
    assert not data.synthetic and data.source and "real data" in data.provenance
    assert (data.Y.sum(axis=1) > 0).all()  # README: no example has zero labels
    entry = DATASETS.entry(name)
    assert entry.meta["kind"] == "multilabel" and entry.meta["synthetic"] is False
    assert all(len(f.sha256) == 64 for f in entry.meta["files"])


def test_predefined_splits_are_the_train_and_test_files(mirror_home):
    data = catalog.load_scene()
    train = read_mulan(mirror_home / "scene" / "scene-train.arff")
    test = read_mulan(mirror_home / "scene" / "scene-test.arff")
    np.testing.assert_array_equal(data.X[data.splits["train"]], train.X)
    np.testing.assert_array_equal(data.Y[data.splits["test"]], test.Y)
    assert data.label_names == ["Beach", "Sunset", "FallFoliage", "Field", "Mountain", "Urban"]


def test_corel16k_test_split_is_the_mulan_test_file(mirror_home):
    data = catalog.load_corel16k(sample=2)
    test = read_mulan(mirror_home / "corel16k" / "Corel16k002-test.arff.gz")
    assert data.splits["test"][0] == 5241  # the README's test block start
    np.testing.assert_array_equal(data.X[data.splits["test"]].toarray(), test.X)
    np.testing.assert_array_equal(data.Y[data.splits["test"]], test.Y)
    assert data.label_names == test.label_names and sp.issparse(data.X)
    with pytest.raises(ValueError, match="1..10"):
        catalog.load_corel16k(sample=11)


def test_corel5k_is_csr_and_its_sparse_and_dense_files_agree(mirror_home):
    data = catalog.load_corel5k()
    assert sp.issparse(data.X) and data.X.format == "csr"
    dense = read_mulan(mirror_home / "corel5k" / "Corel5k-test.arff")
    np.testing.assert_array_equal(data.X[data.splits["test"]].toarray(), dense.X)
    np.testing.assert_array_equal(data.Y[data.splits["test"]], dense.Y)


def test_emotions_feature_groups_by_attribute_name(mirror_home):
    data = catalog.load_emotions()
    groups = data.feature_groups
    assert groups == {"timbre": slice(0, 64), "rhythm": slice(64, 72)}
    assert all(f.startswith("BH") for f in data.feature_names[groups["rhythm"]])
    assert not any(f.startswith("BH") for f in data.feature_names[groups["timbre"]])


def test_count_mismatch_is_a_data_error_expected_vs_got(mirror_home, monkeypatch):
    monkeypatch.setattr(catalog, "_EMOTIONS_COUNTS", replace(catalog._EMOTIONS_COUNTS, n=600))
    with pytest.raises(DataError, match=r"emotions: expected n=600 \(data README\), got 593"):
        catalog.load_emotions()


def test_label_restriction_keeps_the_most_frequent_labels(mirror_home):
    full = catalog.load_corel5k()
    top = catalog.load_corel5k(max_labels=39)
    counts = full.Y.sum(axis=0)
    kept = [full.label_names.index(name) for name in top.label_names]
    assert len(kept) == 39 and kept == sorted(kept)  # original order
    assert counts[kept].min() >= np.delete(counts, kept).max()
    np.testing.assert_array_equal(top.Y, full.Y[:, kept])
    frequent = catalog.load_scene(min_positives=400)
    assert (frequent.Y.sum(axis=0) >= 400).all() and frequent.n_labels < 6
    assert catalog.restrict_labels(full) is full
    with pytest.raises(ValueError, match="max_labels"):
        catalog.restrict_labels(full, max_labels=0)


# -- TRECVID-style generator -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def trec():
    return make_trecvid_style(random_state=0)


def test_trecvid_style_has_the_trec_shape_and_blocks(trec):
    assert trec.X.shape == (6525, 343) and trec.Y.shape == (6525, 39) and trec.synthetic
    widths = {g: s.stop - s.start for g, s in trec.feature_groups.items()}
    assert widths == {"color_correlogram": 166, "color_moments": 81, "cooccurrence_texture": 96}
    assert trec.label_names == list(LSCOM_LITE_LABELS) and len(set(trec.label_names)) == 39
    assert (trec.X >= 0).all()
    for s in trec.feature_groups.values():  # histograms
        np.testing.assert_allclose(trec.X[:, s].sum(axis=1), 1.0)
    assert "synthetic" in trec.provenance and "trecvid-style" in DATASETS.names()


def test_trecvid_style_is_deterministic(trec):
    again = make_trecvid_style(random_state=0)
    np.testing.assert_array_equal(again.X, trec.X)
    np.testing.assert_array_equal(again.Y, trec.Y)
    assert not np.array_equal(make_trecvid_style(random_state=1).Y, trec.Y)


def test_trecvid_style_labels_are_skewed_and_correlated(trec):
    freq = np.sort(trec.Y.mean(axis=0))[::-1]
    assert freq[0] == pytest.approx(0.4, abs=1e-3) and freq[-1] == pytest.approx(0.005, abs=1e-3)
    assert freq[4] < 0.1  # Zipf-like: a few frequent labels, a long tail of rare ones
    corr = np.corrcoef(trec.Y.T.astype(float))[np.triu_indices(39, 1)]
    assert (corr > 0.1).sum() >= 40 and corr.max() > 0.3 and corr.mean() > 0


def test_trecvid_style_scale_shrinks_examples_and_blocks():
    small = make_trecvid_style(scale=0.1, n_labels=10, random_state=3)
    assert small.X.shape == (652, 17 + 8 + 10) and small.Y.shape == (652, 10)
    assert (small.Y.sum(axis=0) >= 1).all()
    with pytest.raises(ValueError, match="scale"):
        make_trecvid_style(scale=0)


def _mean_ap(model, X, Y):
    """Mean AP over labels of per-label models on a fixed 75/25 split."""
    test = np.arange(len(Y)) % 4 == 0
    aps = []
    for y in Y.T:
        scores = model().fit(X[~test], y[~test]).decision_function(X[test])
        aps.append(average_precision_score(y[test], scores))
    return float(np.mean(aps))


def test_trecvid_style_is_learnable_but_not_trivial():
    data = make_trecvid_style(scale=0.5, random_state=0)
    X = StandardScaler().fit_transform(data.X)
    mean_ap = _mean_ap(lambda: LogisticRegression(C=0.1, max_iter=500), X, data.Y)
    assert 0.3 < mean_ap < 0.7  # chance level is the mean label frequency, about 0.05


@pytest.mark.slow
def test_trecvid_style_rbf_svm_mean_ap_near_the_trec_baseline(trec):
    assert 0.3 < _mean_ap(lambda: SVC(kernel="rbf", gamma="scale"), trec.X, trec.Y) < 0.6

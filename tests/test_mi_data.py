"""Multi-instance data: the five file readers, the SparseMI catalogue and its Fig. 2 generators.

The counts below are copied from ``shared/data/mi/README.md`` (not from the catalogue), so a
loader that drifts from the published numbers fails here.
"""

import hashlib
import urllib.error

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import mlkit.datasets.mi_catalog as mi_catalog
import mlkit.datasets.mi_formats as mi_formats
import mlkit.papers.sparsemi.data as sparsemi_data
from mlkit._errors import DataError
from mlkit.cli import cli
from mlkit.datasets import _fetch, verify_dataset
from mlkit.registry import DATASETS, FORMATS

# name: (bags, bags per class code, instances, dimension, smallest / largest bag), README 1-4
README_COUNTS = {
    "musk1": (92, [45, 47], 476, 166, (2, 40)),
    "musk2": (102, [63, 39], 6598, 166, (1, 1044)),
    "corel20": (2000, [100] * 20, 7947, 9, (2, 13)),
    "corel10": (1000, [100] * 10, 4306, 9, None),
    "corel-african": (2000, [1900, 100], 7947, 9, (2, 13)),
    "corel-dogs": (2000, [1900, 100], 7947, 9, (2, 13)),
    "corel-beach": (2000, [1900, 100], 7947, 9, (2, 13)),
    "tst1": (400, [200, 200], 3224, 66552, None),
    "tst2": (400, [200, 200], 3344, 66153, None),
    "tst3": (400, [200, 200], 3246, 66144, None),
    "tst4": (400, [200, 200], 3391, 67085, None),
    "tst7": (400, [200, 200], 3367, 66823, None),
    "tst9": (400, [200, 200], 3300, 66627, None),
    "tst10": (400, [200, 200], 3453, 66082, None),
}
TST = [n for n in README_COUNTS if n.startswith("tst")]
FORMAT_NAMES = ["musk", "mil-csv", "mill", "corel-csv", "mi-svm"]


@pytest.fixture
def mirror(data_mirror, tmp_path, monkeypatch):
    """The shared data as mirror, and an empty private data home."""
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(data_mirror))
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "home"))
    return data_mirror


def load(name):
    return DATASETS.get(name)()


# -- the named real sets ---------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(README_COUNTS))
def test_named_set_has_the_readme_counts(mirror, name):
    bags, per_class, instances, dim, sizes = README_COUNTS[name]
    d = load(name)
    assert len(d.y) == bags and d.instances.shape == (instances, dim)
    assert np.bincount(d.y).tolist() == per_class
    assert len(d.class_names) == len(per_class)
    assert not d.synthetic and d.source and name in d.provenance
    if sizes is not None:
        assert (np.diff(d.offsets).min(), np.diff(d.offsets).max()) == sizes
    entry = DATASETS.entry(name)
    assert entry.meta["kind"] == "multi-instance" and entry.meta["synthetic"] is False
    assert d.checksums == {f.path: f.sha256 for f in entry.meta["files"]}


def test_catalogue_hashes_match_the_mirrors_sha256sums(mirror):
    sums = {}
    for line in (mirror / "mi" / "SHA256SUMS").read_text().splitlines():
        sha, rel = line.split()
        sums["mi/" + rel.removeprefix("./")] = sha
    for name in README_COUNTS:
        for f in DATASETS.entry(name).meta["files"]:
            assert sums[f.path] == f.sha256, f.path
            assert f.url is None or f.url.startswith("https://raw.githubusercontent.com/")


def test_bag_sizes_and_means_match_the_readme(mirror):
    for name, mean in [("musk1", 5.17), ("musk2", 64.69), ("corel20", 3.97)]:
        assert np.diff(load(name).offsets).mean() == pytest.approx(mean, abs=0.005)
    musk2 = load("musk2")
    assert np.bincount(musk2.instance_labels).tolist() == [5581, 1017]


@pytest.mark.parametrize("name", TST)
def test_tst_is_csr_never_dense(mirror, monkeypatch, name):
    def densify(*args, **kwargs):
        raise AssertionError("a TST matrix was densified")

    for method in ("toarray", "todense"):
        monkeypatch.setattr(sp.csr_matrix, method, densify)
    d = load(name)
    assert sp.issparse(d.instances) and d.instances.format == "csr"
    assert d.instances.has_canonical_format
    nnz_per_instance = d.instances.nnz / d.instances.shape[0]
    assert 16.5 < nnz_per_instance < 18      # "about 17 non-zeros per instance"
    sizes = np.diff(d.offsets)
    assert sizes.min() >= 1 and sizes.max() <= 20 and 8.0 < sizes.mean() < 8.7
    # bags trecK_data_1..200 positive, 201..400 negative
    assert d.y[:200].all() and not d.y[200:].any()
    assert d.bag_ids[0].endswith("_data_1") and d.bag_ids[-1].endswith("_data_400")


def test_corel10_is_the_first_ten_classes_of_corel20(mirror):
    c20, c10 = load("corel20"), load("corel10")
    assert c10.class_names == c20.class_names[:10] == [
        "African", "Beach", "Historical", "Buses", "Dinosaurs", "Elephants", "Flowers",
        "Horses", "Mountains", "Food"]
    np.testing.assert_array_equal(c10.bag_ids, np.arange(1, 1001))
    np.testing.assert_array_equal(c10.instances, c20.instances[:c10.offsets[-1]])
    np.testing.assert_array_equal(c20.y, np.repeat(np.arange(20), 100))


def _bags_of(data, mask):
    return data.subset(np.flatnonzero(mask)).instances


def test_corel_crosschecks_support_the_inferred_blocks(mirror):
    """README 3(b) and caveat: mil's Dogs positives = block 10, MIProblems' 'Beach' = block 3."""
    c20 = load("corel20")
    for name, block in [("corel-dogs", 10), ("corel-beach", 3), ("corel-african", 0)]:
        d = load(name)
        # the copies differ by float32 rounding (< 1e-6), not by content
        np.testing.assert_allclose(_bags_of(d, d.y == 1), _bags_of(c20, c20.y == block),
                                   atol=1e-5, err_msg=name)
        np.testing.assert_allclose(_bags_of(d, d.y == 0), _bags_of(c20, c20.y != block),
                                   atol=1e-5, err_msg=name)


def test_count_mismatch_says_expected_and_got(mirror, monkeypatch):
    wrong = mi_catalog.MICounts(93, 476, 166, (45, 48))
    monkeypatch.setitem(mi_catalog.MI_COUNTS, "musk1", wrong)
    with pytest.raises(DataError, match=r"musk1: .*bags: expected 93, got 92.*"
                                        r"bags_per_class: expected \(45, 48\), got \(45, 47\)"):
        load("musk1")


def test_corrupted_mirror_copy_is_a_checksum_error(data_mirror, tmp_path, monkeypatch):
    bad_mirror = tmp_path / "mirror"
    (bad_mirror / "mi" / "musk1").mkdir(parents=True)
    content = bytearray((data_mirror / "mi" / "musk1" / "clean1.data").read_bytes())
    content[100] ^= 1
    (bad_mirror / "mi" / "musk1" / "clean1.data").write_bytes(bytes(content))
    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(bad_mirror))
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "home"))

    def offline(url, target):
        raise urllib.error.URLError("offline (test)")

    monkeypatch.setattr(_fetch, "_download", offline)
    actual = hashlib.sha256(bytes(content)).hexdigest()
    with pytest.raises(DataError, match=f"checksum mismatch .*got {actual}"):
        load("musk1")
    assert not (tmp_path / "home" / "mi" / "musk1" / "clean1.data").exists()


def test_corrupted_cached_copy_fails_verification(mirror, tmp_path):
    load("tst3")
    cached = tmp_path / "home" / "mi" / "tst" / "sparse_trec3.data"
    cached.chmod(0o644)
    with open(cached, "ab") as fh:
        fh.write(b"Bag_x+1,trec3_data_401,0,1:1\n")
    with pytest.raises(DataError, match="sparse_trec3.data: checksum mismatch"):
        verify_dataset("tst3")


# -- readers on hand-written files -----------------------------------------------------------
def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_formats_are_registered():
    assert set(FORMAT_NAMES) <= set(FORMATS.names())


def test_musk_reader(tmp_path):
    path = write(tmp_path, "m.data", "MUSK-1,1_1+1,1,2,1.\nMUSK-1,1_1+2,3,4,1.\n"
                                     "NON-MUSK-a,a_1+1,5,6,0.\n")
    d = FORMATS.get("musk")(path)
    np.testing.assert_array_equal(d.instances, [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(d.offsets, [0, 2, 3])
    assert d.y.tolist() == [1, 0] and d.bag_ids.tolist() == ["MUSK-1", "NON-MUSK-a"]
    assert d.class_names == ["0", "1"] and d.instance_labels is None


def test_mil_csv_reader_groups_bags_and_keeps_instance_labels(tmp_path):
    # CRLF; bag 7 is split in two runs; bag 3 has one positive instance
    text = "0,7,1.5,2\r\n1,3,0.5,-1\r\n0,3,1e1,0\r\n0,7,3,4\r\n0,9,0,0\r\n"
    d = FORMATS.get("mil-csv")(write(tmp_path, "b.csv", text))
    assert d.bag_ids.tolist() == [7, 3, 9]
    np.testing.assert_array_equal(d.offsets, [0, 2, 4, 5])
    np.testing.assert_array_equal(d.instances, [[1.5, 2], [3, 4], [0.5, -1], [10, 0], [0, 0]])
    assert d.y.tolist() == [0, 1, 0] and d.instance_labels.tolist() == [0, 0, 1, 0, 0]
    assert d.class_names == ["0", "1"]


def test_mil_csv_reader_multiclass_and_pm1_labels(tmp_path):
    d = FORMATS.get("mil-csv")(write(tmp_path, "c.csv", "2,a,1\n2,a,2\n5,b,3\n3,c,4\n"))
    assert d.class_names == ["2", "3", "5"] and d.y.tolist() == [0, 2, 1]
    d = FORMATS.get("mil-csv")(write(tmp_path, "p.csv", "-1,a,1\n1,a,2\n-1,b,3\n"))
    assert d.class_names == ["-1", "1"] and d.y.tolist() == [1, 0]


def test_mill_reader(tmp_path):
    text = ("Bag_1+1,t_data_1,1,2:1.5e-01,5:2\n"
            "Bag_1+2,t_data_1,0,1:3\n"
            "Bag_2+1,t_data_2,0\n"
            "Bag_2+2,t_data_2,0,4:-1.0e+00\n")
    d = FORMATS.get("mill")(write(tmp_path, "s.data", text))
    assert sp.issparse(d.instances) and d.instances.format == "csr"
    assert d.instances.shape == (4, 5) and d.instances.nnz == 4
    np.testing.assert_array_equal(d.instances.toarray(), [[0, 0.15, 0, 0, 2], [3, 0, 0, 0, 0],
                                                          [0, 0, 0, 0, 0], [0, 0, 0, -1, 0]])
    np.testing.assert_array_equal(d.offsets, [0, 2, 4])
    assert d.y.tolist() == [1, 0] and d.instance_labels.tolist() == [1, 0, 0, 0]
    assert d.bag_ids.tolist() == ["t_data_1", "t_data_2"]
    assert FORMATS.get("mill")(write(tmp_path, "s.data", text), n_features=9).instances.shape \
        == (4, 9)


@pytest.fixture
def corel_folder(tmp_path):
    folder = tmp_path / "Toy"
    folder.mkdir()
    write(folder, "data.csv", "1\t2\t3\t4\t5\n0.5\t0.25\t0\t-1\t2\n")
    write(folder, "bagids.csv", "1\n1\n2\n3\n3\n")
    write(folder, "labels.csv", "0\n1\n0\n0\n0\n")
    return folder


def test_corel_csv_reader_takes_the_folder_or_the_data_file(corel_folder):
    for path in (corel_folder, corel_folder / "data.csv"):
        d = FORMATS.get("corel-csv")(path)
        np.testing.assert_array_equal(d.instances, [[1, 0.5], [2, 0.25], [3, 0], [4, -1], [5, 2]])
        np.testing.assert_array_equal(d.offsets, [0, 2, 3, 5])
        assert d.bag_ids.tolist() == [1, 2, 3] and d.y.tolist() == [1, 0, 0]
        assert d.instance_labels.tolist() == [0, 1, 0, 0, 0] and d.name == "Toy"


SVM_BODY = ("1:10:1 1:0.5 3:2\n"
            "2:10:-1 2:1\n"
            "3:11:-1 3:-4e-1\n")


@pytest.mark.parametrize("header", ["", "3 4\n"])
def test_mi_svm_reader_with_and_without_header(tmp_path, header):
    d = FORMATS.get("mi-svm")(write(tmp_path, "a.svm", header + SVM_BODY))
    assert d.instances.format == "csr"
    assert d.instances.shape == (3, 4 if header else 3)
    np.testing.assert_array_equal(d.instances.toarray()[:, :3], [[0.5, 0, 2], [0, 1, 0],
                                                                 [0, 0, -0.4]])
    np.testing.assert_array_equal(d.offsets, [0, 2, 3])
    assert d.bag_ids.tolist() == [10, 11] and d.y.tolist() == [1, 0]
    assert d.class_names == ["-1", "1"] and d.instance_labels.tolist() == [1, 0, 0]


def test_mi_svm_n_features_sets_the_dimension(tmp_path):
    d = FORMATS.get("mi-svm")(write(tmp_path, "a.svm", SVM_BODY), n_features=10)
    assert d.instances.shape == (3, 10)


def test_mi_svm_drops_written_out_zeros(tmp_path):
    d = FORMATS.get("mi-svm")(write(tmp_path, "z.svm", "1:10:+1 1:0 2:1.5\n"
                                                         "2:10:-1 1:0.0 3:0\n"
                                                         "3:11:-1 2:-0 3:2\n"))
    X = d.instances
    assert sp.issparse(X) and X.format == "csr" and X.nnz == 2
    assert np.all(X.data != 0)
    np.testing.assert_array_equal(X.toarray(), [[0, 1.5, 0], [0, 0, 0], [0, 0, 2]])


@pytest.mark.parametrize("header", ["", "3 3\n"])
def test_mi_svm_fully_written_rows_give_dense_instances(tmp_path, header):
    text = header + ("1:10:+1 1:0.5 2:0 3:2\n"
                     "2:10:-1 1:1 2:3 3:0\n"
                     "3:11:-1 3:-1 1:0 2:4\n")          # any order, zeros written out
    d = FORMATS.get("mi-svm")(write(tmp_path, "dense.svm", text))
    assert isinstance(d.instances, np.ndarray) and not sp.issparse(d.instances)
    np.testing.assert_array_equal(d.instances, [[0.5, 0, 2], [1, 3, 0], [0, 4, -1]])
    # one value missing from one row: not dense data, so CSR
    partial = FORMATS.get("mi-svm")(write(tmp_path, "partial.svm", text.replace(" 2:3", "")))
    assert sp.issparse(partial.instances)


# -- malformed input -------------------------------------------------------------------------
MUSK_OK = "M-1,c1,1,2,1.\nM-1,c2,3,4,1.\n"
MIL_OK = "0,1,1,2\n1,1,3,4\n"
MILL_OK = "i1,b1,1,1:0.5\ni2,b1,0,2:1\n"

MALFORMED = [
    # (format, file text, what the message must say)
    ("musk", MUSK_OK + "M-2,c1,5,6\n", r"line 3: too few fields \(4, line 1 has 5"),
    ("musk", MUSK_OK + "M-2,c1,5,x,0.\n", r"line 3, field 4: value 'x' is not a number"),
    ("musk", MUSK_OK + "M-1,c3,5,6,0.\n",
     r"line 3: bag 'M-1' mixes labels 1 and 0; the label is a bag label"),
    ("musk", MUSK_OK + "M-2,c1,5,6,2.\n", r"line 3: class '2.' is not 0 or 1"),
    ("musk", MUSK_OK + "M-2,c1,nan,6,0.\n", r"line 3, field 3: value 'nan' is NaN or infinite"),
    ("mil-csv", MIL_OK + "0,2,5\n", r"line 3: too few fields"),
    ("mil-csv", MIL_OK + "0,2,5,6,7\n", r"line 3: too many fields \(5, line 1 has 4"),
    ("mil-csv", MIL_OK + "0,2,5,abc\n", r"line 3, field 4: value 'abc' is not a number"),
    ("mil-csv", MIL_OK + "0,2,5,NaN\n", r"line 3, field 4: value 'NaN' is NaN"),
    ("mil-csv", MIL_OK + "0,2,5,\n", r"line 3, field 4: value '' is not a number"),
    ("mil-csv", MIL_OK + "0.5,2,5,6\n", r"line 3: label 0.5 is not an integer"),
    ("mil-csv", "2,a,1\n3,a,2\n5,b,3\n", r"line 2: bag 'a' mixes labels 2 and 3; with more than "
                                            r"two classes"),
    ("mil-csv", MIL_OK + "\n0,2,5,6\n", r"line 3: too few fields \(1"),
    ("mil-csv", "0,1\n", r"line 1: 2 field\(s\), the format needs at least 3"),
    ("mill", MILL_OK + "i3,b2,0,0:1.5\n", r"line 3: feature index 0 < 1"),
    ("mill", MILL_OK + "i3,b2,0,-2:1.5\n", r"line 3: feature index -2 < 1"),
    ("mill", MILL_OK + "i3,b2\n", r"line 3: 2 field\(s\); a MILL line needs"),
    ("mill", MILL_OK + "i3,b2,0,7:nan\n", r"line 3: value 'nan' is NaN or infinite"),
    ("mill", MILL_OK + "i3,b2,0,7:1e-1x\n", r"line 3: value '1e-1x' is not a number"),
    ("mill", MILL_OK + "i3,b2,0,1.5:2\n", r"line 3: feature index '1.5' is not a number"),
    ("mill", MILL_OK + "i3,b2,0,4\n", r"line 3: malformed feature '4' \(expected index:value"),
    ("mill", MILL_OK + "i3,b2,0,4:1,4:2\n", r"line 3: feature index 4 appears twice"),
    ("mill", MILL_OK + "i3,b2,x,4:1\n", r"line 3, field 3: label 'x' is not a number"),
    ("mi-svm", "3 4\n" + SVM_BODY.replace("3:2", "5:2"), r"line 2: feature index 5 is out "
                                                         r"of range 1\.\.4"),
    ("mi-svm", "4 4\n" + SVM_BODY, r"line 1: header announces 4 instances, the file has 3"),
    ("mi-svm", SVM_BODY + "4:12:0 1:1\n", r"line 4: label '0' is not \+1 or -1"),
    ("mi-svm", SVM_BODY + "4:12 1:1\n", r"line 4: expected inst_id:bag_id:label"),
    ("mi-svm", SVM_BODY + "4:12:1 0:1\n", r"line 4: feature index 0 < 1"),
    ("mi-svm", SVM_BODY + "4:12:1 2:inf\n", r"line 4: value 'inf' is NaN or infinite"),
]


@pytest.mark.parametrize("fmt, text, message", MALFORMED)
def test_malformed_input_names_file_line_and_problem(tmp_path, fmt, text, message):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(DataError, match=f"bad.txt, {message}"):
        FORMATS.get(fmt)(path)


def test_mi_svm_header_dimension_conflicts_with_n_features(tmp_path):
    with pytest.raises(DataError, match="a.svm, line 1: header dimension 4 != n_features=9"):
        FORMATS.get("mi-svm")(write(tmp_path, "a.svm", "3 4\n" + SVM_BODY), n_features=9)


def test_mill_index_beyond_n_features(tmp_path):
    with pytest.raises(DataError, match=r"s.data, line 2: feature index 2 is out of range 1\.\.1"):
        FORMATS.get("mill")(write(tmp_path, "s.data", MILL_OK), n_features=1)


@pytest.mark.parametrize("fmt", ["musk", "mil-csv", "mill", "mi-svm"])
@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_file(tmp_path, fmt, text):
    with pytest.raises(DataError, match="empty.txt: the file is empty"):
        FORMATS.get(fmt)(write(tmp_path, "empty.txt", text))


def test_undecodable_file_names_the_line(tmp_path):
    path = tmp_path / "bin.csv"
    path.write_bytes(b"0,1,1,2\n0,1,\xff\xfe,3\n")
    with pytest.raises(DataError, match="bin.csv, line 2: not UTF-8 text"):
        FORMATS.get("mil-csv")(path)


def test_corel_csv_malformed(corel_folder):
    read = FORMATS.get("corel-csv")
    (corel_folder / "data.csv").write_text("1\t2\t3\t4\t5\n0.5\t0.25\t0\t-1\n")
    with pytest.raises(DataError, match=r"data.csv, line 2: too few fields \(4, line 1 has 5"):
        read(corel_folder)
    (corel_folder / "data.csv").write_text("1\t2\t3\t4\t5\n0.5\t0.25\tx\t-1\t2\n")
    with pytest.raises(DataError, match=r"data.csv, line 2, field 3: value 'x' is not a number"):
        read(corel_folder)
    (corel_folder / "data.csv").write_text("1\t2\t3\t4\t5\n")
    (corel_folder / "bagids.csv").write_text("1\n1\n2\n3\n")
    with pytest.raises(DataError, match="bagids.csv: 4 lines, expected one bag id per instance "
                                        r"\(5 instances"):
        read(corel_folder)
    (corel_folder / "bagids.csv").write_text("1\n1\n2\n3\n3.5\n")
    with pytest.raises(DataError, match="bagids.csv, line 5: bag id 3.5 is not an integer"):
        read(corel_folder)
    (corel_folder / "data.csv").write_text("")
    with pytest.raises(DataError, match="data.csv: the file is empty"):
        read(corel_folder / "data.csv")
    (corel_folder / "labels.csv").unlink()
    with pytest.raises(DataError, match="labels.csv: missing; the corel-csv layout needs"):
        read(corel_folder)


def test_cli_data_info_on_a_users_file(tmp_path):
    path = write(tmp_path, "mine.csv", "0,7,1.5,2\n1,3,0.5,-1\n0,3,1,0\n0,7,3,4\n0,9,0,0\n")
    result = CliRunner().invoke(cli, ["data", "info", str(path), "--format", "mil-csv"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "bags: 3" in lines and "instances: 5" in lines and "dimension: 2" in lines
    bad = write(tmp_path, "bad.csv", "0,7,1.5,2\n1,3,0.5\n")
    result = CliRunner().invoke(cli, ["data", "info", str(bad), "--format", "mil-csv"])
    assert result.exit_code == 2 and "bad.csv, line 2: too few fields" in result.output


# -- the Fig. 2 generators -------------------------------------------------------------------
@pytest.mark.parametrize("make", [sparsemi_data.make_sparsemi_binary,
                                  sparsemi_data.make_sparsemi_3class])
def test_generators_are_deterministic_and_registered(make):
    a, b, c = make(random_state=3), make(random_state=3), make(random_state=4)
    np.testing.assert_array_equal(a.instances, b.instances)
    np.testing.assert_array_equal(a.offsets, b.offsets)
    assert a.instances.shape != c.instances.shape or not np.allclose(a.instances, c.instances)
    assert a.synthetic and "reconstructed" in a.source and "Fu et al." in make.__doc__
    entry = DATASETS.entry(a.name)
    assert entry.obj is make and entry.meta["synthetic"] is True
    sizes = np.diff(a.offsets)
    assert sizes.min() >= 2 and sizes.max() <= 8
    with pytest.raises(ValueError, match="bag_size"):
        make(bag_size=(3, 2))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_generator_centre_versus_ring(seed):
    d = sparsemi_data.make_sparsemi_binary(random_state=seed)
    assert np.bincount(d.y).tolist() == [20, 20]
    centre = d.instance_labels.astype(bool)
    radius = np.linalg.norm(d.instances, axis=1)
    assert radius[centre].max() < 1.0 < radius[~centre].min()
    assert np.abs(radius[~centre] - 2.0).max() < 1.0
    # a positive bag holds at least one centre instance, a negative bag none
    np.testing.assert_array_equal(np.maximum.reduceat(d.instance_labels, d.offsets[:-1]), d.y)
    # so "a single XV in the center is sufficient": bag label = any instance near the centre
    np.testing.assert_array_equal(np.maximum.reduceat(radius < 1.0, d.offsets[:-1]), d.y)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_3class_generator_follows_the_paper(seed):
    d = sparsemi_data.make_sparsemi_3class(random_state=seed)
    means = np.array([[-2, 2], [2, 2], [2, -2], [-2, -2]])
    dist = np.linalg.norm(d.instances[:, None, :] - means[None], axis=2)
    component = dist.argmin(axis=1)
    assert dist.min(axis=1).max() < 4 * 0.25 * np.sqrt(2)
    expected_label = np.select([component == 0, component == 2], [0, 1], default=2)
    np.testing.assert_array_equal(d.instance_labels, expected_label)
    bag_of = np.repeat(np.arange(len(d.y)), np.diff(d.offsets))
    has = {k: np.bincount(bag_of, weights=component == k, minlength=len(d.y)) > 0
           for k in range(4)}
    # class 1 bags: >= 1 from mu_1, none from mu_3; class 2 the reverse; class 3 only mu_2/mu_4
    assert has[0][d.y == 0].all() and not has[2][d.y == 0].any()
    assert has[2][d.y == 1].all() and not has[0][d.y == 1].any()
    assert not (has[0] | has[2])[d.y == 2].any()
    assert np.bincount(d.y).tolist() == [20, 20, 20]



def test_cli_data_info_on_a_named_set(mirror):
    result = CliRunner().invoke(cli, ["data", "info", "tst1"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "bags: 400" in lines and "instances: 3224" in lines and "dimension: 66552" in lines
    assert ("file: mi/tst/sparse_trec1.data sha256=edf6fabe59ab6044f8884d17279b67c05f3ef2eab79bf"
            "599d5537e8fb261954f url=https://raw.githubusercontent.com/dipgi2005/"
            "fuzzyKnnMultiinstanceDip2016/07c1a91863913b9a85a3f071ec7012b110a2356d/"
            "sparse_trec1.data"
            in lines)
    assert any(line.startswith("provenance: tst1 (real data: Andrews et al. 2002")
               for line in lines)

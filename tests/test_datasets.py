"""Data containers, the synthetic generator, and the data CLI on a checksummed dataset."""

import hashlib

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from mlkit import registry
from mlkit.cli import cli
from mlkit.datasets import (MultiInstanceDataset, MultiLabelDataset, MultiViewDataset,
                            make_mssboost_synthetic, register_dataset)
from mlkit.datasets._fetch import RemoteFile, fetch


def test_synthetic_matches_the_papers_description():
    d = make_mssboost_synthetic(random_state=0)
    assert d.X.shape == (1000, 2) and d.Y.shape == (1000, 3) and d.synthetic
    counts = d.Y.sum(axis=0)
    # expected 200 / 200 / 400 positives (Sec. 6.1); binomial sd about 13 / 15
    assert np.all(np.abs(counts - [200, 200, 400]) < 50)
    assert (d.Y.sum(axis=1) > 1).any() and (d.Y.sum(axis=1) == 0).any()
    # all three labels share the same x-range: one stump is everyone's right boundary
    xr = [(d.X[d.Y[:, l] > 0, 0].min(), d.X[d.Y[:, l] > 0, 0].max()) for l in range(3)]
    assert np.ptp([r[1] for r in xr]) < 0.25 and np.ptp([r[0] for r in xr]) < 0.25
    np.testing.assert_array_equal(make_mssboost_synthetic(random_state=0).X, d.X)
    assert "synthetic" in d.provenance


def test_synthetic_five_shared_stumps_describe_all_labels():
    """5 axis-parallel cuts (x = +-a, y = -2a, 0, 2a) bound every label's region."""
    d = make_mssboost_synthetic(n_samples=5000, random_state=1)
    a = 1.128
    boxes = [((-a, a), (0, 2 * a)), ((-a, a), (-2 * a, 0)), ((-a, a), (-2 * a, 2 * a))]
    for l, ((x0, x1), (y0, y1)) in enumerate(boxes):
        pos = d.X[d.Y[:, l] > 0]
        assert pos[:, 0].min() >= x0 and pos[:, 0].max() <= x1
        assert pos[:, 1].min() >= y0 - 1e-9 and pos[:, 1].max() <= y1 + 1e-9


def test_synthetic_rejects_bad_parameters():
    with pytest.raises(ValueError, match="label_noise"):
        make_mssboost_synthetic(label_noise=0.7)


def test_containers_subset_and_check_shapes():
    ml = MultiLabelDataset(name="t", X=sp.random(10, 4, density=0.5, format="csr"),
                           Y=np.eye(10, 2))
    sub = ml.subset([1, 3])
    assert sp.issparse(sub.X) and sub.X.shape == (2, 4) and sub.Y.shape == (2, 2)
    with pytest.raises(ValueError, match="does not match"):
        MultiLabelDataset(name="t", X=np.zeros((3, 2)), Y=np.zeros((4, 2)))
    mi = MultiInstanceDataset(name="b", instances=np.arange(12.0).reshape(6, 2),
                              offsets=[0, 2, 3, 6], y=[1, -1, 1])
    sub = mi.subset([2, 0])
    np.testing.assert_array_equal(sub.offsets, [0, 3, 5])
    np.testing.assert_array_equal(sub.bags[0], [[6, 7], [8, 9], [10, 11]])
    scores = np.arange(6.0)
    np.testing.assert_array_equal(np.maximum.reduceat(scores, mi.offsets[:-1]), [1, 2, 5])
    with pytest.raises(ValueError, match="bag 1 has 0 instances"):
        MultiInstanceDataset(name="b", instances=np.zeros((3, 2)), offsets=[0, 2, 2, 3],
                             y=[1, 1, -1])
    mv = MultiViewDataset(name="v", views=[np.zeros((4, 2)), np.zeros((4, 3))], y=[0, 1, 0, 1])
    assert mv.statistics()["view dimensions"] == [2, 3]
    with pytest.raises(ValueError, match="view 1 has 3 rows"):
        MultiViewDataset(name="v", views=[np.zeros((4, 2)), np.zeros((3, 3))], y=[0, 1, 0, 1])


@pytest.fixture
def checksummed_dataset(tmp_path, monkeypatch):
    """A real-style dataset whose one file lives in a mirror folder."""
    mirror = tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    content = "\n".join(f"{i},{i % 2}" for i in range(20)).encode()
    (mirror / "toy" / "toy.csv").write_bytes(content)
    remote = RemoteFile("toy/toy.csv", hashlib.sha256(content).hexdigest())

    def load_toy():
        path = fetch(remote)
        arr = np.loadtxt(path, delimiter=",")
        return MultiLabelDataset(name="toy", X=arr[:, :1], Y=arr[:, 1:], source="a test file")

    monkeypatch.setenv("MLKIT_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "home"))
    registry.load_plugins()
    monkeypatch.setattr(registry.DATASETS, "_entries", dict(registry.DATASETS._entries))
    register_dataset("toy", load_toy, kind="multilabel", synthetic=False, summary="toy",
                     files=[remote])
    return tmp_path, remote


def test_data_fetch_verify_info(checksummed_dataset):
    tmp_path, remote = checksummed_dataset
    runner = CliRunner()
    res = runner.invoke(cli, ["data", "verify", "toy"])
    assert res.exit_code == 2 and "not downloaded" in res.stderr
    res = runner.invoke(cli, ["data", "fetch", "toy"])
    assert res.exit_code == 0 and "toy.csv" in res.stdout
    assert runner.invoke(cli, ["data", "verify", "toy"]).exit_code == 0
    info = runner.invoke(cli, ["data", "info", "toy"])
    assert "examples: 20" in info.stdout and "real data" in info.stdout
    assert remote.sha256 in info.stdout
    listing = runner.invoke(cli, ["data", "list"]).stdout
    assert "toy" in listing and "mssboost-synthetic" in listing


def test_checksum_mismatch_is_a_clear_error(checksummed_dataset):
    tmp_path, remote = checksummed_dataset
    runner = CliRunner()
    assert runner.invoke(cli, ["data", "fetch", "toy"]).exit_code == 0
    cached = tmp_path / "home" / "toy" / "toy.csv"
    cached.write_text("tampered")
    res = runner.invoke(cli, ["data", "verify", "toy"])
    assert res.exit_code == 2
    assert "checksum mismatch" in res.stderr and remote.sha256 in res.stderr
    assert "Traceback" not in res.output
    (tmp_path / "mirror" / "toy" / "toy.csv").write_text("also tampered")
    res = runner.invoke(cli, ["data", "fetch", "toy"])
    assert res.exit_code == 2 and remote.sha256 in res.stderr

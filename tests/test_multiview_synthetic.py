"""The multi-view generator and the emotions-views substitute."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score

from mlkit.papers.lm3fe.data import load_emotions_views
from mlkit.datasets.multiview_synthetic import make_multiview_synthetic
from mlkit.registry import DATASETS


def test_shapes_classes_and_provenance():
    data = make_multiview_synthetic(120, n_classes=3, view_dims=[5, 7, 9], n_informative=2)
    assert [X.shape for X in data.views] == [(120, 5), (120, 7), (120, 9)]
    assert data.synthetic and data.y.shape == (120,)
    np.testing.assert_array_equal(np.bincount(data.y), [40, 40, 40])
    assert data.inputs.dims == [5, 7, 9] and len(data.inputs[:10]) == 10
    ml = make_multiview_synthetic(100, n_classes=5, view_dims=[6, 8], n_informative=[3, 1],
                                  multilabel=True, label_density=0.2)
    assert ml.y.shape == (100, 5) and set(np.unique(ml.y)) <= {0, 1}
    assert ml.y.sum(axis=1).min() >= 1                 # every sample has a label
    assert 0.15 < ml.y.mean() < 0.35
    entry = DATASETS.entry("multiview-synthetic")
    assert entry.meta["synthetic"] is True and entry.meta["kind"] == "multi-view"


def test_determinism_under_random_state():
    a = make_multiview_synthetic(50, random_state=3, multilabel=True)
    b = make_multiview_synthetic(50, random_state=3, multilabel=True)
    c = make_multiview_synthetic(50, random_state=4, multilabel=True)
    for Xa, Xb in zip(a.views, b.views):
        np.testing.assert_array_equal(Xa, Xb)
    np.testing.assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.views[0], c.views[0])


def test_informative_columns_separate_the_classes():
    data = make_multiview_synthetic(400, n_classes=4, view_dims=[12, 12], n_informative=3,
                                    random_state=0)
    clf = LogisticRegression(max_iter=500)
    for X, k in zip(data.views, (3, 3)):
        informative = cross_val_score(clf, X[:, :k], data.y, cv=4).mean()
        noise = cross_val_score(clf, X[:, k:k + 3], data.y, cv=4).mean()
        assert informative > 0.7                 # 4 classes: chance is 0.25
        assert noise < 0.35
        assert informative > noise + 0.35
    # noise columns are independent of the class: class means agree within sampling error
    means = np.array([data.views[0][data.y == c, 3:].mean(axis=0) for c in range(4)])
    assert np.abs(means).max() < 0.5


def test_multilabel_informative_columns_track_each_label():
    data = make_multiview_synthetic(600, n_classes=3, view_dims=[10], n_informative=4,
                                    multilabel=True, random_state=1)
    X = data.views[0]
    clf = LogisticRegression(max_iter=500)
    for label in range(3):
        y = data.y[:, label]
        assert cross_val_score(clf, X[:, :4], y, cv=3).mean() > \
            cross_val_score(clf, X[:, 4:8], y, cv=3).mean() + 0.1


@pytest.mark.parametrize("kwargs", [
    {"n_informative": [2, 2]},                         # 3 views, 2 values
    {"view_dims": [3], "n_informative": 4},            # more informative than columns
    {"n_classes": 1},
    {"multilabel": True, "label_density": 1.0},
    {"n_samples": 5},
])
def test_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        make_multiview_synthetic(**kwargs)


def test_emotions_views_real_counts(data_mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path))
    data = load_emotions_views()
    assert data.view_names == ["timbre", "rhythm"]
    assert [X.shape for X in data.views] == [(593, 64), (593, 8)]
    assert data.y.shape == (593, 6) and not data.synthetic
    assert abs(data.y.sum(axis=1).mean() - 1.8685) < 1e-3
    assert len(data.splits["train"]) == 391 and len(data.splits["test"]) == 202
    assert "substitute" in data.source and "MIR Flickr" in data.source
    # the split is by attribute name: rhythm = the beat-histogram (BH*) attributes
    from mlkit.datasets.mulan_catalog import load_emotions
    emo = load_emotions()
    names = np.array(emo.feature_names)
    rhythm = np.char.startswith(names.astype(str), "BH")
    assert rhythm.sum() == 8
    np.testing.assert_array_equal(data.views[1], emo.X[:, rhythm])
    np.testing.assert_array_equal(data.views[0], emo.X[:, ~rhythm])
    assert DATASETS.entry("emotions-views").meta["kind"] == "multi-view"

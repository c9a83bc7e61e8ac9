"""The shared-concepts generator (MSSBoost's sharing hypothesis under control) and the
mssboost/sharing gaps."""

import numpy as np
import pytest

from mlkit.datasets import load_dataset
from mlkit.papers.mssboost.data import make_shared_concepts, within_group_phi


def test_positive_rate_is_exact_and_the_data_are_labelled_synthetic():
    d = make_shared_concepts(400, n_labels=6, n_concepts=2, positive_rate=0.25)
    assert d.synthetic and d.X.shape == (400, 30) and d.Y.shape == (400, 6)
    assert d.Y.sum(axis=0).tolist() == [100] * 6
    assert d.label_names[:3] == ["c1.l1", "c2.l1", "c1.l2"]
    assert "synthetic" in d.source
    assert load_dataset("shared-concepts", params={"n_samples": 400, "n_labels": 6,
                                                   "n_concepts": 2,
                                                   "positive_rate": 0.25}).Y.tolist() \
        == d.Y.tolist()


def test_strength_sets_the_within_group_cooccurrence_and_nothing_else():
    phis, X0 = [], None
    for s in (0.0, 0.25, 0.5, 0.75, 1.0):
        d = make_shared_concepts(2000, cooccurrence=s)
        X0 = d.X if X0 is None else X0
        np.testing.assert_array_equal(d.X, X0)            # the same examples at every s
        phi_in, phi_out = within_group_phi(d, 3)
        assert abs(phi_out) < 0.05                        # groups stay independent
        phis.append(phi_in)
    assert abs(phis[0]) < 0.05 and np.all(np.diff(phis) > 0.05)
    # without noise, s = 1 makes a group's labels one label
    d = make_shared_concepts(500, cooccurrence=1.0, noise=0.0)
    for k in range(3):
        group = d.Y[:, k::3]
        assert (group == group[:, :1]).all()


def test_within_group_phi_against_a_direct_count():
    Y = np.array([[1, 1, 0, 0], [1, 1, 1, 0], [0, 0, 1, 1], [0, 1, 0, 1]])
    d = type("D", (), {"Y": Y})()
    same, other = within_group_phi(d, 2)            # groups {0, 2} and {1, 3}
    phi = np.corrcoef(Y.T.astype(float))
    assert same == pytest.approx((phi[0, 2] + phi[1, 3]) / 2)
    assert other == pytest.approx(np.mean([phi[0, 1], phi[0, 3], phi[1, 2], phi[2, 3]]))


@pytest.mark.parametrize("kw, match", [({"cooccurrence": 1.5}, "cooccurrence"),
                                       ({"noise": -1}, "noise"),
                                       ({"positive_rate": 1.0}, "positive_rate"),
                                       ({"n_concepts": 20}, "n_concepts")])
def test_bad_parameters_say_which(kw, match):
    with pytest.raises(ValueError, match=match):
        make_shared_concepts(100, **kw)


def test_paired_gap_is_the_mean_of_the_per_split_differences():
    from mlkit.papers.mssboost.renderers.sharing import paired_gap
    from mlkit.runner.result import runs_frame
    from mlkit.stats import mean_confidence_interval

    a, b = [0.5, 0.6, 0.55, 0.7], [0.4, 0.58, 0.5, 0.61]
    recs = [{"dataset": "D", "method": m, "repeat": r, "fold": 0, "metrics": {"mean_ap": v}}
            for m, vals in (("MSSBoost", a), ("RSBag", b)) for r, v in enumerate(vals)]
    recs.append({"dataset": "D", "method": "MSSBoost", "repeat": 9, "fold": 0,
                 "metrics": {"mean_ap": 0.0}})            # unpaired: left out
    mean, half, p = paired_gap(runs_frame(recs), "D", "MSSBoost", "RSBag")
    diffs = np.subtract(a, b)
    assert (mean, half) == pytest.approx(mean_confidence_interval(diffs))
    assert 0 < p < 0.05

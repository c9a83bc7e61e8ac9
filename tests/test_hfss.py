"""HFSS (Gao & Fan, MIR 2005): goodness, bestK, OOB curves, PCA, inputs, scikit-learn use."""

import json

import numpy as np
import pytest
from joblib import parallel_backend
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from mlkit.datasets._containers import Views
from mlkit.methods._sampling import bootstrap
from mlkit.methods.hfss import (HFSS, HFSSOneShotSVM, best_prefix, fit_weak_svm,
                                oob_accuracy, vote_scores)
from mlkit.registry import DATASETS, METHODS


def _planted(n_per_class=40, n_classes=2, seed=0):
    """View 0 separates the classes well, view 1 weakly, view 2 is pure noise."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(n_classes), n_per_class)
    centres = rng.normal(size=(n_classes, 2)) * 0 + np.eye(n_classes, 2) * 4.0
    strong = centres[y] + rng.normal(size=(len(y), 2))
    weak = 0.7 * np.eye(n_classes, 3)[y] + rng.normal(size=(len(y), 3))
    noise = rng.normal(size=(len(y), 5))
    return Views([strong, weak, noise], ["strong", "weak", "noise"]), y


def _brute_votes(views, y, est):
    """Per model (rounds i, subspaces j inside): the decision values on all samples and the
    OOB mask, from the bootstraps regenerated with the fitted problem's seed and SVMs fitted
    on the duplicated rows as drawn (no weights)."""
    (problem,) = est.problems_
    y01 = (y == est.classes_[1]).astype(int)
    y_pm = 2.0 * y01 - 1
    n = len(y)
    decisions, oob = [], []
    for i in range(est.n_rounds):
        for j in range(len(views.views)):
            Z = StandardScaler().fit_transform(views.views[j])
            s = bootstrap(n, np.random.default_rng([problem.seed, i, j]), y=y01)
            svm = LinearSVC(C=1.0, tol=est.tol, max_iter=100000, random_state=0)
            svm.fit(Z[s], y_pm[s])
            decisions.append(svm.decision_function(Z))
            mask = np.ones(n, dtype=bool)
            mask[s] = False
            oob.append(mask)
    return np.array(decisions).T, np.array(oob).T, y_pm


def _loop_accuracy(decisions, oob, y_pm, prior_sign):
    """1 - mean 0-1 loss of the OOB majority vote, sample by sample (ties: summed decision
    values, then the larger class); samples with no OOB member skipped."""
    correct, counted = 0, 0
    for n in range(len(y_pm)):
        members = np.flatnonzero(oob[n])
        if members.size == 0:
            continue
        votes = np.sign(decisions[n, members]).sum()
        if votes == 0:
            total = decisions[n, members].sum()
            votes = np.sign(total) if total != 0 else prior_sign
        correct += int(np.sign(votes) == y_pm[n])
        counted += 1
    return correct / counted


@pytest.fixture(scope="module")
def tiny():
    views, y = _planted(n_per_class=15)
    est = HFSS(n_rounds=4, selection="all", tol=1e-10, max_iter=100000, random_state=3)
    est.fit(views, y)
    return views, y, est, _brute_votes(views, y, est)


def test_goodness_equals_brute_force(tiny):
    views, y, est, (D, oob, y_pm) = tiny
    k = len(views.views)
    prior = est.problems_[0].prior_sign
    for j in range(k):
        cols = np.arange(j, D.shape[1], k)          # subspace j's models
        expected = _loop_accuracy(D[:, cols], oob[:, cols], y_pm, prior)
        assert est.goodness_[0, j] == pytest.approx(expected)


def test_oob_curve_is_the_growing_ensemble_and_ends_at_the_full_one(tiny):
    views, y, est, (D, oob, y_pm) = tiny
    prior = est.problems_[0].prior_sign
    assert len(est.oob_curve_) == est.n_rounds * len(views.views)
    for m in (1, 2, 5, D.shape[1]):
        assert est.oob_curve_[m - 1] == pytest.approx(
            _loop_accuracy(D[:, :m], oob[:, :m], y_pm, prior))
    assert est.oob_curve_[-1] == pytest.approx(est.oob_score_all_)
    assert est.oob_score_ == est.oob_score_all_          # selection="all"


def test_weighted_distinct_rows_fit_the_linearsvc_of_the_same_problem():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    w = rng.integers(1, 4, 40).astype(float)
    est = HFSS()
    coef, b = fit_weak_svm(X, y, w, est)
    svm = LinearSVC(C=1.0, random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(coef, svm.coef_.ravel())
    assert b == svm.intercept_[0]
    # and the weighted problem is the duplicated one (same optimum up to the tolerance)
    rows = np.repeat(np.arange(40), w.astype(int))
    tight = HFSS(tol=1e-12, max_iter=100000)
    dup = LinearSVC(C=1.0, tol=1e-12, max_iter=100000).fit(X[rows], y[rows])
    np.testing.assert_allclose(fit_weak_svm(X, y, w, tight)[0], dup.coef_.ravel(), atol=1e-6)


@pytest.mark.parametrize("dual", [False, True])
def test_sparse_weak_svm_is_the_linearsvc_of_the_csr_matrix(dual):
    """A sparse subspace goes to liblinear as its CSR matrix: bit for bit LinearSVC's fit
    (primal: more rows than features; dual: fewer)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    n, d = (60, 8) if not dual else (12, 30)
    X = sp.random(n, d, density=0.3, random_state=4, format="csr")
    y = np.where(X[:, 0].toarray().ravel() + 0.3 * rng.normal(size=n) > 0.1, 1.0, -1.0)
    w = rng.integers(1, 4, n).astype(float)
    coef, b = fit_weak_svm(X, y, w, HFSS())
    svm = LinearSVC(C=1.0, dual=dual, random_state=0).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(coef, svm.coef_.ravel())
    assert b == svm.intercept_[0]
    # a CSC matrix (not liblinear's layout) takes LinearSVC itself: the same numbers
    np.testing.assert_array_equal(fit_weak_svm(X.tocsc(), y, w, HFSS())[0], coef)


@pytest.mark.parametrize("vote, tie_break", [("majority", "decision"), ("majority", "prior"),
                                             ("decision", "decision")])
@pytest.mark.parametrize("prior_sign", [-1, 1])
@pytest.mark.parametrize("no_oob", ["skip", "error"])
def test_oob_accuracy_is_the_per_sample_vote_rule(vote, tie_break, prior_sign, no_oob):
    """oob_accuracy against a sample-by-sample count with vote_scores on scalars: many tied
    vote sums, zero decision sums, samples without OOB members."""
    rng = np.random.default_rng(5)
    shape = (40, 7)
    count = rng.integers(0, 4, shape)
    vote_sum = np.where(count > 0, rng.integers(-2, 3, shape), 0).astype(float)
    dec_sum = np.where(rng.random(shape) < 0.2, 0.0, rng.normal(size=shape))
    y_pm = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    got = oob_accuracy(vote_sum, dec_sum, count, y_pm, prior_sign, vote=vote,
                       tie_break=tie_break, no_oob=no_oob)
    for e in range(shape[1]):
        correct = counted = 0
        for i in range(shape[0]):
            if count[i, e] == 0:
                counted += no_oob == "error"
                continue
            score = vote_scores(np.float64(vote_sum[i, e]), np.float64(dec_sum[i, e]),
                                prior_sign, vote=vote, tie_break=tie_break)
            correct += int((score > 0) == (y_pm[i] > 0))
            counted += 1
        assert got[e] == correct / counted


def test_bestk_curves_and_no_oob_count_equal_a_per_sample_count():
    """Goodness, forward curve, bestK, both OOB curves and the samples without an OOB member
    recomputed sample by sample from the fitted weak SVMs and the regenerated bootstraps."""
    views, y = _planted(n_per_class=20, seed=12)
    est = HFSS(n_rounds=3, random_state=2).fit(views, y)
    (p,) = est.problems_
    assert p.bestk < 3                            # the noise subspace is left out
    y_pm = np.where(y == est.classes_[1], 1.0, -1.0)
    n, R, k = len(y), est.n_rounds, len(views.views)
    D, oob = np.empty((n, R, k)), np.empty((n, R, k), dtype=bool)
    for j in range(k):
        Z = p.transforms[j].transform(views.views[j])
        for i in range(R):
            D[:, i, j] = Z @ p.coef[j][i] + p.intercept[j][i]
            s = bootstrap(n, np.random.default_rng([p.seed, i, j]), y=(y_pm > 0).astype(int))
            oob[:, i, j] = ~np.isin(np.arange(n), s)

    def acc(subspaces, n_models=None):           # members (i, j), rounds outside
        cols = [(i, j) for i in range(R) for j in range(k) if j in subspaces][:n_models]
        dec = np.column_stack([D[:, i, j] for i, j in cols])
        mask = np.column_stack([oob[:, i, j] for i, j in cols])
        return _loop_accuracy(dec, mask, y_pm, p.prior_sign)

    np.testing.assert_allclose(p.goodness, [acc([j]) for j in range(k)], rtol=0, atol=1e-12)
    assert list(p.order) == sorted(range(k), key=lambda j: (-p.goodness[j], j))
    forward = [acc(p.order[:m]) for m in range(1, k + 1)]
    np.testing.assert_allclose(p.forward_curve, forward, rtol=0, atol=1e-12)
    assert p.bestk == int(np.argmax(forward)) + 1
    chosen = sorted(p.order[:p.bestk])
    np.testing.assert_array_equal(p.selected, chosen)
    np.testing.assert_allclose(p.oob_curve,
                               [acc(chosen, m) for m in range(1, R * len(chosen) + 1)],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(p.oob_curve_all, [acc(range(k), m) for m in range(1, R * k + 1)],
                               rtol=0, atol=1e-12)
    assert p.n_no_oob == int(sum(not oob[s][:, chosen].any() for s in range(n)))
    assert p.n_no_oob > 0                         # 3 rounds: some samples are never OOB


def test_noise_subspace_has_the_lowest_goodness_and_is_left_out():
    views, y = _planted(n_per_class=40, n_classes=3, seed=2)
    est = HFSS(n_rounds=10, random_state=0).fit(views, y)
    assert est.goodness_.shape == (3, 3)
    assert np.all(est.goodness_.argmin(axis=1) == 2)
    assert np.all(est.goodness_[:, 0] > est.goodness_[:, 2] + 0.2)
    assert all(2 not in sel for sel in est.selected_)
    assert np.all(est.bestk_ == [len(s) for s in est.selected_])
    # bestK is the argmax of the forward curve and the OOB score its maximum
    for p, curve in zip(est.problems_, est.forward_curves_):
        assert p.bestk == int(np.argmax(curve)) + 1
        assert p.oob_score == pytest.approx(curve.max())
        assert list(p.order[:p.bestk]) == sorted(p.order[:p.bestk], key=lambda j: -p.goodness[j])


def test_bestk_curve_equals_a_refit_on_the_chosen_subspaces():
    views, y = _planted(n_per_class=30, seed=4)
    full = HFSS(n_rounds=6, random_state=7).fit(views, y)
    chosen = list(full.selected_[0])
    assert len(chosen) < 3
    refit = HFSS(n_rounds=6, selection="all", subspaces=chosen, random_state=7).fit(views, y)
    np.testing.assert_array_equal(refit.oob_curve_, full.oob_curve_)
    by_name = HFSS(n_rounds=6, selection="all", random_state=7,
                   subspaces=[views.names[j] for j in chosen]).fit(views, y)
    np.testing.assert_array_equal(by_name.decision_function(views), full.decision_function(views))


def test_pca_keeps_at_least_95_percent_of_each_subspace_variance():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 30)
    latent = rng.normal(size=(90, 2))
    correlated = latent @ rng.normal(size=(2, 8)) + 0.05 * rng.normal(size=(90, 8)) + y[:, None]
    views = [correlated, rng.normal(size=(90, 4)) * [5, 1, 1, 0.1]]
    est = HFSS(n_rounds=3, pca_variance=0.95, random_state=0).fit(views, y)
    for p, dims in zip(est.problems_, est.dims_pca_):
        for j, d in zip(p.subspaces, dims):
            ratio = p.transforms[j].pca.explained_variance_ratio_
            assert d == len(ratio) and ratio.sum() >= 0.95
            assert d == 1 or ratio[:-1].sum() < 0.95           # the fewest components
    assert np.all(est.dims_pca_[:, 0] <= 3) and np.all(est.dims_pca_ <= [8, 4])
    extras = est.run_record_extras()
    json.dumps(extras)
    assert extras["dims_before_pca"] == [8, 4]
    assert extras["problems"][0]["dims_after_pca"] == est.dims_pca_[0].tolist()


def test_views_dict_and_matrix_with_view_columns_give_identical_results():
    views, y = _planted(n_per_class=20, n_classes=3, seed=5)
    X = np.hstack(views.views)
    columns = {"strong": [0, 1], "weak": slice(2, 5), "noise": list(range(5, 10))}
    a = HFSS(n_rounds=4, random_state=1).fit(views, y)
    b = HFSS(n_rounds=4, random_state=1, view_columns=columns).fit(X, y)
    c = HFSS(n_rounds=4, random_state=1).fit(dict(zip(views.names, views.views)), y)
    for other in (b, c):
        np.testing.assert_array_equal(a.goodness_, other.goodness_)
        np.testing.assert_array_equal(a.oob_curve_, other.oob_curve_)
        assert a.view_names_ == other.view_names_
    np.testing.assert_array_equal(a.decision_function(views), b.decision_function(X))


def test_staged_and_forward_scores_end_at_the_chosen_ensemble():
    views, y = _planted(n_per_class=30, seed=6)
    est = HFSS(n_rounds=5, random_state=0).fit(views[::2], y[::2])
    test_views, test_y = views[1::2], y[1::2]
    staged = est.staged_score(test_views, test_y)
    assert len(staged) == len(est.oob_curve_) == 5 * est.bestk_[0]
    assert staged[-1] == pytest.approx(est.score(test_views, test_y))
    forward = est.forward_score(test_views, test_y)
    assert forward.shape == (3,)
    assert forward[est.bestk_[0] - 1] == pytest.approx(est.score(test_views, test_y))
    assert est.problem_scores(test_views, test_y) == pytest.approx(
        [est.score(test_views, test_y)])
    assert est.problem_scores(test_views, test_y, ensemble="all") == pytest.approx([forward[-1]])
    views3, y3 = _planted(n_per_class=20, n_classes=3, seed=6)
    est3 = HFSS(n_rounds=4, random_state=0).fit(views3, y3)
    staged3 = est3.staged_score(views3, y3)
    assert staged3.shape == (4,) == est3.oob_curve_.shape
    assert staged3[-1] == pytest.approx(est3.score(views3, y3))
    per_problem = est3.problem_scores(views3, y3)
    for q, (a, b) in enumerate(est3.pairs_):
        rows = np.isin(y3, [a, b])
        alone = HFSS(n_rounds=4).fit(views3[rows], y3[rows])
        alone.problems_ = [est3.problems_[q]]              # the same fitted problem, alone
        assert per_problem[q] == pytest.approx(alone.score(views3[rows], y3[rows]))


def test_forward_stages_are_the_goodness_sorted_prefixes():
    """stages="forward" changes what staged_decision_function yields, nothing of the fit:
    stage k is the ensemble of the k best subspaces, recomputed here from the fitted weak SVMs
    of those subspaces alone (binary: their summed votes; several classes: one-vs-one)."""
    views, y = _planted(n_per_class=30, seed=6)
    test_views, test_y = views[1::2], y[1::2]
    bagging = HFSS(n_rounds=5, random_state=0).fit(views[::2], y[::2])
    forward = HFSS(n_rounds=5, random_state=0, stages="forward").fit(views[::2], y[::2])
    np.testing.assert_array_equal(bagging.decision_function(test_views),
                                  forward.decision_function(test_views))
    stages = list(forward.staged_decision_function(test_views))
    assert len(stages) == 3 == len(bagging.forward_curve_)
    order = forward.problems_[0].order
    for k, d in enumerate(stages, start=1):
        # the prefix's own ensemble: HFSS restricted to the k best subspaces keeps their
        # bootstrap seeds and weak SVMs (the subspaces parameter)
        alone = HFSS(n_rounds=5, random_state=0, selection="all",
                     subspaces=sorted(int(j) for j in order[:k])).fit(views[::2], y[::2])
        np.testing.assert_array_equal(forward.predict_from_scores(d),
                                      alone.predict(test_views))
    # the accuracy of each stage's labels is forward_score, and the labels of the stages
    # come from predict_from_scores, as predict's do
    acc = [np.mean(forward.predict_from_scores(d) == test_y) for d in stages]
    np.testing.assert_allclose(acc, bagging.forward_score(test_views, test_y))
    np.testing.assert_array_equal(
        forward.predict_from_scores(forward.decision_function(test_views)),
        forward.predict(test_views))
    views3, y3 = _planted(n_per_class=20, n_classes=3, seed=6)
    est3 = HFSS(n_rounds=4, random_state=0, stages="forward").fit(views3, y3)
    stages3 = list(est3.staged_decision_function(views3))
    assert len(stages3) == 3 and stages3[0].shape == (len(y3), 3)
    np.testing.assert_allclose([np.mean(est3.predict_from_scores(d) == y3) for d in stages3],
                               est3.forward_score(views3, y3))


def test_best_prefix_tie_rules_on_a_constructed_oob_curve():
    # OOB goodness of the prefixes k = 1..6: the maximum 1.0 is reached at k = 2, 4 and 5
    curve = [0.90, 1.00, 0.97, 1.00, 1.00, 0.99]
    assert best_prefix(curve, "shortest") == 2
    assert best_prefix(curve, "longest") == 5
    # a unique maximum is bestK under either rule; NaN prefixes are never chosen
    assert best_prefix([0.8, np.nan, 0.95, 0.9], "shortest") == 3
    assert best_prefix([0.8, np.nan, 0.95, 0.9], "longest") == 3
    assert best_prefix([np.nan, 0.7, 0.7, np.nan], "longest") == 3
    assert best_prefix([np.nan, np.nan], "shortest") == 2


def test_bestk_tie_rule_picks_the_shortest_or_longest_tied_prefix_of_the_fit():
    # separable classes in every view: most prefixes reach 100% OOB
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 25)
    views = Views([6.0 * y[:, None] + rng.normal(size=(50, d)) for d in (2, 3, 2, 4)],
                  ["a", "b", "c", "d"])
    short = HFSS(n_rounds=5, bestk_ties="shortest", random_state=0).fit(views, y)
    long = HFSS(n_rounds=5, bestk_ties="longest", random_state=0).fit(views, y)
    curve = short.forward_curves_[0]
    assert np.array_equal(curve, long.forward_curves_[0])     # the same weak SVMs
    tied = np.flatnonzero(curve == curve.max()) + 1
    assert len(tied) >= 2                                     # the case the rule decides
    assert short.bestk_[0] == tied[0] and long.bestk_[0] == tied[-1]
    order = short.problems_[0].order
    assert sorted(long.selected_[0]) == sorted(order[:tied[-1]])
    assert long.oob_score_ == pytest.approx(curve[tied[-1] - 1])
    assert short.oob_score_ == pytest.approx(long.oob_score_)


def test_problem_forward_scores_are_the_prefix_ensembles_test_accuracies():
    views3, y3 = _planted(n_per_class=20, n_classes=3, seed=6)
    est = HFSS(n_rounds=4, random_state=0).fit(views3[::2], y3[::2])
    F = est.problem_forward_scores(views3[1::2], y3[1::2])
    assert F.shape == (3, 3)
    chosen = est.problem_scores(views3[1::2], y3[1::2])
    full = est.problem_scores(views3[1::2], y3[1::2], ensemble="all")
    for q, k in enumerate(est.bestk_):
        assert F[q, k - 1] == pytest.approx(chosen[q])    # bestK's prefix is the chosen one
        assert F[q, -1] == pytest.approx(full[q])         # the whole queue: the full ensemble
    extra = est.test_record_extras(views3[1::2], y3[1::2])
    assert np.allclose(extra["problem_forward_test"], F)
    assert extra["problem_test"] == pytest.approx(list(chosen))


def test_vote_rule_ties_and_prior():
    vs = np.array([3.0, -1.0, 0.0, 0.0, 0.0])
    ds = np.array([-9.0, 5.0, 0.2, -0.3, 0.0])
    assert np.array_equal(np.sign(vote_scores(vs, ds, 1)), [1, -1, 1, -1, 1])
    assert np.array_equal(np.sign(vote_scores(vs, ds, -1)), [1, -1, 1, -1, -1])
    assert np.array_equal(np.sign(vote_scores(vs, ds, -1, tie_break="prior")),
                          [1, -1, -1, -1, -1])
    assert np.array_equal(np.sign(vote_scores(vs, ds, 1, vote="decision")), [-1, 1, 1, -1, 1])


def test_sklearn_basics():
    views, y = _planted(n_per_class=20, n_classes=3, seed=8)
    labels = np.array(["cat", "dog", "eel"])[y]
    est = HFSS(n_rounds=3, random_state=0)
    params = est.get_params()
    with pytest.raises(NotFittedError):
        est.predict(views)
    assert est.fit(views, labels) is est
    assert est.get_params() == params
    assert set(est.predict(views)) <= set(labels) and est.score(views, labels) > 0.8
    assert est.decision_function(views).shape == (60, 3)
    again = clone(est).fit(views, labels)
    np.testing.assert_array_equal(again.decision_function(views), est.decision_function(views))
    with parallel_backend("threading"):         # the same results whatever n_jobs is
        parallel = clone(est).set_params(n_jobs=2).fit(views, labels)
    np.testing.assert_array_equal(parallel.decision_function(views),
                                  est.decision_function(views))
    binary = HFSS(n_rounds=3, random_state=0).fit(views[y < 2], y[y < 2])
    assert binary.decision_function(views).shape == (60,)
    assert len(est.pairs_) == 3 and est.goodness_.shape == (3, 3)
    with pytest.raises(ValueError, match="only one class"):
        HFSS(n_rounds=2).fit(views, np.zeros(60))
    bad = [v.copy() for v in views.views]
    bad[1][4, 0] = np.nan
    with pytest.raises(ValueError, match="view 1 contains NaN"):
        HFSS(n_rounds=2).fit(bad, y)
    with pytest.raises(ValueError, match="fitted on views of dimensions"):
        est.predict([v[:, :1] for v in views.views])
    with pytest.raises(ValueError, match="not a view name"):
        HFSS(n_rounds=2, subspaces=["colour"]).fit(views, y)
    with pytest.raises(ValueError, match="60 samples"):
        HFSS(n_rounds=2).fit(views, y[:10])


def test_sparse_views_stay_sparse():
    import scipy.sparse as sp

    views, y = _planted(n_per_class=20, seed=11)
    sparse = [sp.csr_matrix(np.where(np.abs(X) > 1, X, 0.0)) for X in views.views]
    est = HFSS(n_rounds=3, random_state=0).fit(sparse, y)
    assert all(sp.issparse(p.transforms[0].transform(sparse[0])) for p in est.problems_)
    dense = HFSS(n_rounds=3, random_state=0, scaling="none").fit([X.toarray() for X in sparse], y)
    same = HFSS(n_rounds=3, random_state=0, scaling="none").fit(sparse, y)
    np.testing.assert_allclose(same.decision_function(sparse), dense.decision_function(
        [X.toarray() for X in sparse]), atol=1e-6)
    with pytest.raises(TypeError, match="pca_variance needs dense views"):
        HFSS(n_rounds=2, pca_variance=0.95).fit(sparse, y)


def test_grid_search_and_cross_validation_on_views():
    views, y = _planted(n_per_class=24, seed=9)
    scores = cross_val_score(HFSS(n_rounds=3, random_state=0), views, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.8
    grid = GridSearchCV(HFSS(n_rounds=3, random_state=0),
                        {"selection": ["bestk", "all"]}, cv=3).fit(views, y)
    assert grid.best_params_["selection"] in ("bestk", "all")
    assert grid.predict(views).shape == (48,)


def test_one_shot_svm_is_one_linear_svm_on_the_concatenation():
    views, y = _planted(n_per_class=25, seed=10)
    X = np.hstack(views.views)
    est = HFSSOneShotSVM().fit(views, y)
    Z = StandardScaler().fit(X)
    svm = LinearSVC(C=1.0, random_state=0).fit(Z.transform(X), y)
    np.testing.assert_allclose(est.decision_function(views), svm.decision_function(Z.transform(X)))
    views3, y3 = _planted(n_per_class=20, n_classes=3, seed=10)
    assert HFSSOneShotSVM().fit(views3, y3).score(views3, y3) > 0.8


def test_registered():
    for name, cls in (("hfss", HFSS), ("hfss-svm", HFSSOneShotSVM)):
        entry = METHODS.entry(name)
        assert entry.obj is cls and entry.meta["family"] == "multi-view"
        assert entry.meta["paper"] == "hfss" and cls.numerics_revision == 1


def test_synthetic_generator_has_the_papers_layout():
    from scipy.stats import f_oneway

    from mlkit.papers.hfss.data import HFSS_CLASSES, make_hfss_synthetic

    data = make_hfss_synthetic(random_state=1)
    assert data.synthetic is True and len(data.y) == 14267
    assert [X.shape[1] for X in data.views] == [3, 4, 3, 4, 2, 30, 30, 2, 5]
    assert sum(X.shape[1] for X in data.views) == 83
    assert data.view_names[0] == "RGB mean" and data.view_names[8] == "Tamura angle histogram"
    assert np.bincount(data.y).tolist() == [k for _, k in HFSS_CLASSES]
    assert data.class_names[3] == "sea water" and data.class_names[18] == "remnant"
    np.testing.assert_array_equal(make_hfss_synthetic(random_state=1).views[0], data.views[0])
    assert not np.array_equal(make_hfss_synthetic(random_state=2).views[0], data.views[0])
    # #5 carries no class information, #1 and #3 much
    F = [f_oneway(*[X[data.y == c] for c in range(19)]).statistic.max()
         for X in (data.views[4], data.views[0], data.views[2])]
    assert F[0] < 3 < 30 < min(F[1:])
    small = make_hfss_synthetic(size_scale=0.02)
    assert np.bincount(small.y).min() == 10
    entry = DATASETS.entry("hfss-synthetic")
    assert entry.meta["synthetic"] is True and entry.meta["kind"] == "multi-view"

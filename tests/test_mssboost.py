"""The mathematics of RSBag / NSBoost / MSSBoost (Yan et al. 2007) checked directly."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import optimize, stats
from scipy.special import expit

from mlkit.datasets import make_mssboost_synthetic
from mlkit.methods import MSSBoost, NSBoost, RSBag
from mlkit.methods._base_models import fit_subspace_model, make_base_learner
from mlkit.methods._sampling import balanced_bootstrap, random_subspace
from mlkit.methods.mssboost import (MIN_WEIGHT, JointLossSearch, _newton_terms,
                                    chi2_significant, joint_loss, newton_step)

STUMPS = dict(base_learner="stump", rd=0.1, rf=0.5)


@pytest.fixture(scope="module")
def synthetic():
    d = make_mssboost_synthetic(random_state=0)
    return d.X[:750], d.Y[:750], d.X[750:], d.Y[750:]


def _problem(seed, n=120, k=5, n_labels=4):
    rng = np.random.default_rng(seed)
    H = np.clip(rng.normal(size=(n, k)), -1, 1)
    Y = np.where(rng.random((n, n_labels)) < 0.35, 1.0, -1.0)
    F = rng.normal(scale=0.8, size=(n, n_labels))
    return H, Y, F


def _loss_kl(F, Y, h, l, a):
    """Loss of label l alone after F_l += a h (Eqn 1 restricted to one label)."""
    return np.logaddexp(0, -Y[:, l] * (F[:, l] + a * h)).sum()


def _newton_inputs(F, Y):
    P = expit(F)
    return np.maximum(P * (1 - P), MIN_WEIGHT), (Y + 1) / 2 - P


@pytest.mark.parametrize("seed", range(3))
def test_newton_step_equals_closed_form(seed):
    H, Y, F = _problem(seed)
    W, Z = _newton_inputs(F, Y)
    alpha = newton_step(H, W, Z)
    for k in range(H.shape[1]):
        for l in range(Y.shape[1]):
            h = H[:, [k]]
            closed = np.linalg.solve(h.T @ np.diag(W[:, l]) @ h, h.T @ Z[:, l])  # Eqn 2
            assert alpha[k, l] == pytest.approx(closed.item(), rel=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_newton_step_is_minus_gradient_over_curvature(seed):
    """Proposition 1: H^T Z is minus the derivative and H^T W H the second derivative of the
    joint loss at alpha = 0; checked by central finite differences."""
    H, Y, F = _problem(seed)
    W, Z = _newton_inputs(F, Y)
    alpha = newton_step(H, W, Z)
    eps = 1e-4
    for k in range(H.shape[1]):
        for l in range(Y.shape[1]):
            f = lambda a: _loss_kl(F, Y, H[:, k], l, a)   # noqa: E731
            g = (f(eps) - f(-eps)) / (2 * eps)
            c = (f(eps) - 2 * f(0) + f(-eps)) / eps**2
            assert -g == pytest.approx(H[:, k] @ Z[:, l], rel=1e-6)
            assert c == pytest.approx(H[:, k] ** 2 @ W[:, l], rel=1e-4)
            assert alpha[k, l] == pytest.approx(-g / c, rel=1e-4)


def test_repeated_newton_steps_reach_the_numerical_line_search():
    H, Y, F = _problem(7)
    k, l = 2, 1
    h = H[:, k]
    total, F_l = 0.0, F.copy()
    for _ in range(30):
        W, Z = _newton_inputs(F_l, Y)
        step = newton_step(h[:, None], W[:, [l]], Z[:, [l]])[0, 0]
        total += step
        F_l[:, l] = F[:, l] + total * h
    best = optimize.minimize_scalar(lambda a: _loss_kl(F, Y, h, l, a), bracket=(-5, 5),
                                    options={"xtol": 1e-12}).x
    assert total == pytest.approx(best, abs=1e-6)


def test_softplus_is_stable_and_exact():
    from mlkit.methods.mssboost import _softplus
    x = np.array([-1000.0, -30.0, -1.0, 0.0, 1e-12, 1.0, 30.0, 1000.0])
    expected = np.array([0.0, np.log1p(np.exp(-30.0)), np.log1p(np.exp(-1.0)), np.log(2.0),
                         np.log(2.0) + 5e-13, 1.0 + np.log1p(np.exp(-1.0)),
                         30.0 + np.log1p(np.exp(-30.0)), 1000.0])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        np.testing.assert_allclose(_softplus(x), expected, rtol=1e-14, atol=1e-300)
        np.testing.assert_allclose(_softplus(x), np.logaddexp(0.0, x), rtol=1e-14)
        y = x.copy()
        assert _softplus(y, out=y) is y
    np.testing.assert_allclose(y, expected, rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize("seed", range(3))
def test_joint_loss_equals_explicit_sum(seed, monkeypatch):
    H, Y, F = _problem(seed)
    rng = np.random.default_rng(seed)
    alpha = rng.normal(size=(H.shape[1], Y.shape[1]))
    alpha[rng.random(alpha.shape) < 0.3] = 0.0
    expected = [sum(_loss_kl(F, Y, H[:, k], l, alpha[k, l]) for l in range(Y.shape[1]))
                for k in range(H.shape[1])]
    np.testing.assert_allclose(joint_loss(F, Y, H, alpha), expected, rtol=1e-12)
    # the blocked evaluation gives the same numbers with tiny blocks
    monkeypatch.setattr("mlkit.methods.mssboost._LOSS_BLOCK", 1)
    np.testing.assert_allclose(joint_loss(F, Y, H, alpha), expected, rtol=1e-12)


def test_chi2_filter_matches_scipy_contingency():
    H, Y, _ = _problem(3, n=200)
    H[:, 0] = np.where(Y[:, 0] > 0, 0.7, -0.2)          # strongly associated with label 0
    sig = chi2_significant(H, Y, 0.025)
    for k in range(H.shape[1]):
        for l in range(Y.shape[1]):
            table = np.array([[np.sum((H[:, k] > 0) & (Y[:, l] > 0)),
                               np.sum((H[:, k] > 0) & (Y[:, l] < 0))],
                              [np.sum((H[:, k] <= 0) & (Y[:, l] > 0)),
                               np.sum((H[:, k] <= 0) & (Y[:, l] < 0))]])
            p = stats.chi2_contingency(table, correction=False).pvalue
            assert sig[k, l] == (p < 0.025)
    assert sig[0, 0]


def test_chi2_constant_model_never_significant():
    H, Y, _ = _problem(1)
    H[:, 1] = 0.5
    assert not chi2_significant(H, Y).any(axis=1)[1]


def _reference_boosting(X, Y01, n_estimators, seeds, sharing, chi2=False, F0=0.0,
                        newton_steps=1):
    """Algorithm 2 written as the paper states it: loops over candidates and labels;
    ``newton_steps`` > 1 repeats the Newton step of each alpha_l, a step kept only when it
    lowers label l's loss."""
    Y = 2.0 * Y01 - 1
    n, L = Y.shape
    learner = make_base_learner("stump", gamma=0.05, C=1.0, random_state=None)

    def learn(label, seed):
        return fit_subspace_model(X, Y[:, label] > 0, label, rd=0.1, rf=0.5, learner=learner,
                                  bound="clip", seed=seed)

    pool = [learn(l, seeds[l]) for l in range(L)]
    F = np.zeros((n, L)) + F0
    chosen, alphas = [], []
    for t in range(n_estimators):
        best = None
        for k, h in enumerate(pool):
            hx = h.predict(X)
            a = np.zeros(L)
            for l in range(L):
                if not sharing and l != h.label:
                    continue
                p = expit(F[:, l])
                w = np.maximum(p * (1 - p), 1e-6)
                z = (Y[:, l] + 1) / 2 - p
                a[l] = (hx @ z) / (w @ hx**2)
                for _ in range(newton_steps - 1):
                    p = expit(F[:, l] + a[l] * hx)
                    w = np.maximum(p * (1 - p), 1e-6)
                    trial = a[l] + (hx @ ((Y[:, l] + 1) / 2 - p)) / (w @ hx**2)
                    if _loss_kl(F, Y, hx, l, trial) < _loss_kl(F, Y, hx, l, a[l]):
                        a[l] = trial
                if chi2:
                    table = [[np.sum((hx > 0) & (Y[:, l] > 0)), np.sum((hx > 0) & (Y[:, l] < 0))],
                             [np.sum((hx <= 0) & (Y[:, l] > 0)), np.sum((hx <= 0) & (Y[:, l] < 0))]]
                    if np.min(np.sum(table, 0)) == 0 or np.min(np.sum(table, 1)) == 0 or \
                            stats.chi2_contingency(table, correction=False).pvalue >= 0.025:
                        a[l] = 0
            loss = sum(_loss_kl(F, Y, hx, l, a[l]) for l in range(L))
            if best is None or loss < best[0] - 1e-12:
                best = (loss, k, a, hx)
        _, k, a, hx = best
        F += hx[:, None] * a
        chosen.append(pool[k])
        alphas.append(a)
        pool[k] = learn(pool[k].label, seeds[L + t])
    return chosen, np.array(alphas)


@pytest.mark.parametrize("cls,sharing,chi2,init", [
    (MSSBoost, True, False, "zero"), (NSBoost, False, False, "zero"),
    (MSSBoost, True, True, "zero"), (MSSBoost, True, True, "prior"),
    (NSBoost, False, False, "prior")])
def test_boosting_equals_the_papers_loops(synthetic, cls, sharing, chi2, init):
    X, Y, _, _ = synthetic
    model = cls(6, random_state=3, chi2_filter=chi2, init=init, **STUMPS).fit(X, Y)
    seeds = np.random.RandomState(3).randint(np.iinfo(np.int32).max, size=3 + 6)
    pos = (Y > 0).mean(axis=0)
    F0 = 0.0 if init == "zero" else np.log(pos / (1 - pos))
    chosen, alphas = _reference_boosting(X, Y, 6, seeds, sharing, chi2, F0)
    np.testing.assert_allclose(model.alphas_, alphas, rtol=1e-9, atol=1e-12)
    assert [h.label for h in chosen] == list(model.estimator_labels_)
    for a, b in zip(chosen, model.estimators_):
        np.testing.assert_array_equal(a.samples, b.samples)


@pytest.mark.parametrize("cls,sharing", [(MSSBoost, True), (NSBoost, False)])
def test_repeated_newton_steps_equal_the_papers_loop_with_them(synthetic, cls, sharing):
    X, Y, _, _ = synthetic
    model = cls(6, random_state=3, newton_steps=4, **STUMPS).fit(X, Y)
    seeds = np.random.RandomState(3).randint(np.iinfo(np.int32).max, size=3 + 6)
    chosen, alphas = _reference_boosting(X, Y, 6, seeds, sharing, newton_steps=4)
    # a last step of ~1e-8 lowers the loss by ~1e-16 of it: whether it is kept is rounding
    np.testing.assert_allclose(model.alphas_, alphas, rtol=1e-6, atol=1e-12)
    assert [h.label for h in chosen] == list(model.estimator_labels_)
    one = cls(6, random_state=3, **STUMPS).fit(X, Y)
    assert not np.allclose(model.alphas_, one.alphas_)          # the steps do something


def test_more_newton_steps_reach_each_labels_line_search_and_never_raise_its_loss():
    from mlkit.methods.mssboost import _more_newton_steps

    H, Y, F = _problem(11)
    W, Z = _newton_inputs(F, Y)
    mask = np.ones((H.shape[1], Y.shape[1]), dtype=bool)
    mask[1, 2] = False
    first = np.where(mask, newton_step(H, W, Z), 0.0)
    y_star = (Y + 1) / 2
    many = _more_newton_steps(F, y_star, H, first, mask, None, 40)
    two = _more_newton_steps(F, y_star, H, first, mask, None, 1)
    assert many[1, 2] == 0 and two[1, 2] == 0
    for k in range(H.shape[1]):
        for l in range(Y.shape[1]):
            if not mask[k, l]:
                continue
            f = lambda a: _loss_kl(F, Y, H[:, k], l, a)   # noqa: E731
            best = optimize.minimize_scalar(f, bracket=(-5, 5), options={"xtol": 1e-12}).x
            assert many[k, l] == pytest.approx(best, abs=1e-6)
            assert f(two[k, l]) <= f(first[k, l]) + 1e-12
    # weighted sums: v_i counts example i v_i times (up to a last step of ~1e-7, whose
    # ~1e-13 loss decrease is within the rounding of either sum: kept on one side only)
    v = np.random.default_rng(0).integers(1, 4, size=len(F)).astype(float)
    rows = np.repeat(np.arange(len(F)), v.astype(int))
    Wv, Zv = _newton_inputs(F[rows], Y[rows])
    a0 = newton_step(H[rows], Wv, Zv)
    np.testing.assert_allclose(
        _more_newton_steps(F, y_star, H, a0, np.ones_like(mask), v, 2),
        _more_newton_steps(F[rows], y_star[rows], H[rows], a0, np.ones_like(mask), None, 2),
        rtol=0, atol=1e-6)


@pytest.mark.parametrize("cls", [MSSBoost, NSBoost])
@pytest.mark.parametrize("seed", range(4))
def test_joint_loss_never_increases(synthetic, cls, seed):
    X, Y, _, _ = synthetic
    model = cls(25, random_state=seed, **STUMPS).fit(X, Y)
    assert np.all(np.diff(model.train_loss_) <= 1e-9)
    # and train_loss_ is the joint loss of the fitted decision values
    F = model.decision_function(X)
    Ypm = 2.0 * Y - 1
    assert model.train_loss_[-1] == pytest.approx(np.logaddexp(0, -Ypm * F).sum())


def test_nsboost_weights_only_its_own_label(synthetic):
    X, Y, _, _ = synthetic
    model = NSBoost(20, random_state=0, **STUMPS).fit(X, Y)
    own = np.eye(3, dtype=bool)[model.estimator_labels_]
    assert np.all(model.alphas_[~own] == 0)
    assert np.all(model.alphas_[own] != 0)


def test_mssboost_shares_models_across_labels(synthetic):
    X, Y, _, _ = synthetic
    model = MSSBoost(20, random_state=0, **STUMPS).fit(X, Y)
    assert (np.count_nonzero(model.alphas_, axis=1) > 1).mean() > 0.5


def test_rsbag_equals_round_robin_bagging(synthetic):
    X, Y, Xt, _ = synthetic
    T = 9
    model = RSBag(T, random_state=5, **STUMPS).fit(X, Y)
    seeds = np.random.RandomState(5).randint(np.iinfo(np.int32).max, size=T)
    learner = make_base_learner("stump", gamma=0.05, C=1.0, random_state=None)
    F = np.zeros((len(Xt), 3))
    for t in range(T):
        label = t % 3                                   # l = ((t - 1) mod L) + 1, 1-based
        h = fit_subspace_model(X, Y[:, label] > 0, label, rd=0.1, rf=0.5, learner=learner,
                               bound="clip", seed=seeds[t])
        F[:, label] += h.predict(Xt)
    np.testing.assert_allclose(model.decision_function(Xt), F)
    np.testing.assert_array_equal(model.alphas_.sum(axis=1), 1)


@pytest.mark.parametrize("cls,kw", [(RSBag, {}), (NSBoost, {}), (MSSBoost, {}),
                                    (MSSBoost, {"init": "prior"})])
def test_staged_decision_function_ends_at_decision_function(synthetic, cls, kw):
    X, Y, Xt, _ = synthetic
    model = cls(7, random_state=0, **kw, **STUMPS).fit(X, Y)
    stages = list(model.staged_decision_function(Xt))
    assert len(stages) == 7
    np.testing.assert_allclose(stages[-1], model.decision_function(Xt))
    np.testing.assert_allclose(stages[0], model.base_predictions(Xt)[:, :1] * model.alphas_[0]
                               + getattr(model, "init_score_", 0.0))


def test_prior_init_is_the_best_constant_start(synthetic):
    """init="prior" starts each F_l at the constant minimising label l's logistic loss (the
    log-odds); its initial joint loss is below the paper's F = 0 start, and the loss then
    never increases."""
    X, Y, _, _ = synthetic
    prior = MSSBoost(10, init="prior", random_state=0, **STUMPS).fit(X, Y)
    zero = MSSBoost(10, random_state=0, **STUMPS).fit(X, Y)
    Ypm = 2.0 * Y - 1
    for l in range(Y.shape[1]):
        best = optimize.minimize_scalar(lambda c: np.logaddexp(0, -Ypm[:, l] * c).sum()).x
        assert prior.init_score_[l] == pytest.approx(best, abs=1e-5)
    assert prior.train_loss_[0] < zero.train_loss_[0] == pytest.approx(Y.size * np.log(2))
    assert np.all(np.diff(prior.train_loss_) <= 1e-9)
    np.testing.assert_array_equal(zero.init_score_, 0.0)


def test_base_models_are_bounded_and_sampled_as_specified(synthetic):
    X, Y, _, _ = synthetic
    model = MSSBoost(5, random_state=0, base_learner="svm", rd=0.2, rf=0.5, gamma=1.0,
                     score_bound="clip").fit(X, Y)
    H = model.base_predictions(X)
    assert np.abs(H).max() <= 1
    for h in model.estimators_:
        assert len(h.samples) == 150                 # N * rd = 750 * 0.2
        assert (Y[h.samples, h.label] > 0).sum() == 75   # balanced: half positives
        assert len(h.features) == 1
    assert model.model_size_ == sum(h.estimator.support_vectors_.shape[0] for h in
                                    model.estimators_)


def test_balanced_bootstrap_and_subspace():
    rng = np.random.default_rng(0)
    pos = rng.random(1000) < 0.05
    idx = balanced_bootstrap(pos, 100, rng)
    assert len(idx) == 100 and pos[idx].sum() == 50
    feats = random_subspace(343, 0.1, rng)
    assert len(feats) == 34 and len(np.unique(feats)) == 34


def test_sparse_input_equals_dense(synthetic):
    X, Y, Xt, _ = synthetic
    kw = dict(base_learner="svm", rd=0.2, rf=0.5, gamma=1.0, random_state=0)
    dense = MSSBoost(6, **kw).fit(X, Y).decision_function(Xt)
    sparse = MSSBoost(6, **kw).fit(sp.csr_matrix(X), Y).decision_function(sp.csr_matrix(Xt))
    np.testing.assert_allclose(dense, sparse, rtol=1e-10)


def test_n_jobs_never_changes_the_result(synthetic):
    X, Y, Xt, _ = synthetic
    a = MSSBoost(8, n_jobs=1, random_state=0, **STUMPS).fit(X, Y).decision_function(Xt)
    b = MSSBoost(8, n_jobs=2, random_state=0, **STUMPS).fit(X, Y).decision_function(Xt)
    np.testing.assert_array_equal(a, b)


def test_predict_answers_in_the_encoding_of_fit(synthetic):
    X, Y, Xt, _ = synthetic
    p01 = MSSBoost(5, random_state=0, **STUMPS).fit(X, Y).predict(Xt)
    ppm = MSSBoost(5, random_state=0, **STUMPS).fit(X, 2 * Y - 1).predict(Xt)
    assert set(np.unique(p01)) <= {0, 1} and set(np.unique(ppm)) <= {-1, 1}
    np.testing.assert_array_equal(2 * p01 - 1, ppm)
    y = np.where(Y[:, 2] > 0, "in", "out")
    pred = MSSBoost(5, random_state=0, **STUMPS).fit(X, y).predict(Xt)
    assert set(pred) <= {"in", "out"}


def test_mssboost_beats_nsboost_and_rsbag_with_few_models(synthetic):
    """The paper's Fig. 3/4 finding: with few models, sharing gives a lower test error."""
    from mlkit.metrics import hamming_error

    X, Y, Xt, Yt = synthetic
    err = {cls.__name__: np.mean([hamming_error(Yt, cls(8, random_state=s, **STUMPS)
                                                .fit(X, Y).decision_function(Xt))
                                  for s in range(5)])
           for cls in (RSBag, NSBoost, MSSBoost)}
    assert err["MSSBoost"] < err["NSBoost"] and err["MSSBoost"] < err["RSBag"]


def test_blas_svm_scores_equal_libsvm():
    """The base models' RBF-SVM scores from one BLAS product equal SVC.decision_function."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 8))
    y = X[:, 0] + X[:, 1] ** 2 > 1
    learner = make_base_learner("svm", gamma=0.3, C=2.0, random_state=None)
    for Xin in (X, sp.csr_matrix(X)):
        h = fit_subspace_model(Xin, y, 0, rd=0.5, rf=0.5, learner=learner, bound="clip", seed=1)
        ref = h.estimator.decision_function(Xin[:, h.features])
        np.testing.assert_allclose(h.raw_score(Xin), ref, rtol=1e-9, atol=1e-9)


# -- the synthetic generator against the paper's sentence (claim 3) -------------------------
def _stump(v, threshold):
    return np.where(v > threshold, 1.0, -1.0)


def test_no_three_stumps_reach_the_bayes_error_of_any_label():
    """The other half of Sec. 1's sentence: without sharing a label needs 4 stumps. Every
    function of any 3 axis-parallel stumps (thresholds on a 0.25 grid containing the boxes'
    edges; each of the 8 cells the 3 stumps make predicts its majority, the best any
    combination of them can do) leaves at least 4 points of error on every label, where the
    Bayes error is 0 (no label noise) and the 5 shared stumps reach it (test below)."""
    import itertools

    d = make_mssboost_synthetic(n_samples=6000, label_noise=0.0, random_state=3)
    x, y = d.X[:, 0], d.X[:, 1]
    H = np.vstack([x > t for t in np.arange(-1.75, 1.8, 0.25)]
                  + [y > t for t in np.arange(-2.25, 2.3, 0.25)]).astype(np.int64)
    triples = np.array(list(itertools.combinations(range(len(H)), 3)))
    cells = (4 * H[triples[:, 0]] + 2 * H[triples[:, 1]] + H[triples[:, 2]]
             + 8 * np.arange(len(triples))[:, None]).ravel()
    total = np.bincount(cells, minlength=8 * len(triples)).reshape(-1, 8)
    for label in range(3):
        pos = np.bincount(cells, weights=np.tile(d.Y[:, label], len(triples)),
                          minlength=8 * len(triples)).reshape(-1, 8)
        best = np.minimum(pos, total - pos).sum(axis=1).min() / len(x)
        assert best > 0.04, (label, best)


@pytest.mark.parametrize("noise", [0.0, 0.1])
def test_five_shared_stumps_are_bayes_and_each_label_needs_four(noise):
    """Sec. 1 of the paper: without sharing each label needs 4 axis-parallel stumps (12 in
    all), with sharing 5 suffice. The 5 stumps x > -1, x > 1, y > -2, y > 0, y > 2, combined
    additively with weights +-1 (F_l = sum_j a_lj h_j - 3, positive only when all four of the
    label's sides agree), reach the Bayes error (the flip rate) on every label; dropping any
    one of a label's 4 stumps leaves a side open and costs at least 3 points of error."""
    d = make_mssboost_synthetic(n_samples=40000, label_noise=noise, random_state=3)
    x, y = d.X[:, 0], d.X[:, 1]
    h = np.column_stack([_stump(x, -1), _stump(x, 1), _stump(y, -2), _stump(y, 0),
                         _stump(y, 2)])
    # label l's weights on the 5 shared stumps: inside means x > -1, x < 1, and its y-range
    A = np.array([[1, -1, 0, 1, -1],        # label 1: y in [0, 2]
                  [1, -1, 1, -1, 0],        # label 2: y in [-2, 0]
                  [1, -1, 1, 0, -1]],       # label 3: y in [-2, 2]
                 dtype=float)
    F = h @ A.T - 3
    err = (np.sign(F) != 2 * d.Y - 1).mean(axis=0)
    np.testing.assert_allclose(err, noise, atol=0.008)
    for l in range(3):
        for j in np.flatnonzero(A[l]):
            a = A[l].copy()
            a[j] = 0
            dropped = (np.sign(h @ a - 2) != 2 * d.Y[:, l] - 1).mean()
            assert dropped > noise + 0.03      # a strip of >= 5% of the area, times 1 - 2 noise


def test_synthetic_boxes_keep_the_papers_counts_and_overlaps():
    d = make_mssboost_synthetic(n_samples=20000, random_state=0)
    np.testing.assert_allclose(d.Y.mean(axis=0), [0.2, 0.2, 0.4], atol=0.01)
    both = d.Y.sum(axis=1)
    assert (both == 0).mean() > 0.5 and (both == 2).mean() > 0.3   # none / several labels
    old = make_mssboost_synthetic(n_samples=20000, shape="ellipse", random_state=0)
    np.testing.assert_array_equal(old.X, d.X)
    np.testing.assert_allclose(old.Y.mean(axis=0), [0.2, 0.2, 0.4], atol=0.01)
    with pytest.raises(ValueError, match="shape"):
        make_mssboost_synthetic(shape="circle")


# -- engineering: the same numbers, faster ---------------------------------------------------
def test_incremental_chi2_filter_equals_full_recomputation():
    from mlkit.methods.mssboost import Chi2Filter

    H, Y, _ = _problem(4, n=300, k=8, n_labels=5)
    Y[:, 0] = np.where(H[:, 0] > 0.2, 1.0, -1.0)
    filt = Chi2Filter(H, Y, 0.025)
    np.testing.assert_array_equal(filt.significant, chi2_significant(H, Y, 0.025))
    rng = np.random.default_rng(0)
    for _ in range(25):
        k = rng.integers(H.shape[1])
        H[:, k] = np.clip(rng.normal(size=len(H)) + 0.8 * Y[:, rng.integers(5)], -1, 1)
        filt.update(k, H[:, k])
        np.testing.assert_array_equal(filt.significant, chi2_significant(H, Y, 0.025))


def test_parallel_pool_gives_the_same_svm_model(synthetic):
    X, Y, Xt, _ = synthetic
    kw = dict(base_learner="svm", rd=0.2, rf=0.5, gamma=2.0, chi2_filter=True, random_state=1)
    a = MSSBoost(6, n_jobs=1, **kw).fit(X, Y)
    b = MSSBoost(6, n_jobs=2, **kw).fit(X, Y)
    np.testing.assert_array_equal(a.alphas_, b.alphas_)
    np.testing.assert_array_equal(a.decision_function(Xt), b.decision_function(Xt))
    prof = a.fit_profile_
    assert set(prof) >= {"fit_models", "score_models", "newton", "loss", "chi2", "total"}
    assert sum(v for k, v in prof.items() if k != "total") <= prof["total"] * 1.01
    cpu = a.fit_profile_cpu_
    assert set(cpu) == set(prof)
    assert sum(v for k, v in cpu.items() if k != "total") <= cpu["total"] * 1.01
    assert a.fit_time_curve_.shape == (7, 2) and np.all(np.diff(a.fit_time_curve_[:, 0]) >= 0)


def test_float32_kernel_moves_no_average_precision_by_more_than_1e3():
    """A realistic problem (normalised 120-bin histograms of a 3-D latent scene, 6 correlated
    labels of skewed frequencies), SVM base models: float32 kernels change decision values
    by rounding only, and no label's test AP by more than 1e-3."""
    from mlkit.metrics import average_precision_score

    rng = np.random.default_rng(0)
    n = 1200
    Z = rng.normal(size=(n, 3))
    X = np.exp(Z @ rng.normal(size=(3, 120)) + 0.5 * rng.normal(size=(n, 120)))
    X /= X.sum(axis=1, keepdims=True)
    score = Z @ rng.normal(size=(3, 6)) + 0.3 * Z[:, :1] ** 2 + 0.5 * rng.normal(size=(n, 6))
    Y = (score > np.quantile(score, [0.95, 0.9, 0.85, 0.8, 0.7, 0.6], axis=0).diagonal()).astype(int)
    n = 900
    kw = dict(base_learner="svm", rd=0.2, rf=0.2, gamma=50.0, C=1.0, chi2_filter=True,
              random_state=0)
    aps = {}
    for dtype in ("float64", "float32"):
        model = MSSBoost(20, kernel_dtype=dtype, **kw).fit(X[:n], Y[:n])
        F = model.decision_function(X[n:])
        aps[dtype] = average_precision_score(Y[n:], F)
        if dtype == "float32":
            assert model.estimators_[0].kernel_dtype == "float32"
            np.testing.assert_allclose(F, ref_F, rtol=1e-3, atol=1e-3)
        ref_F = F
    ok = ~np.isnan(aps["float64"])
    assert np.abs(aps["float64"][ok] - aps["float32"][ok]).max() <= 1e-3


# -- approximations, off by default ----------------------------------------------------------
@pytest.mark.parametrize("cls", [MSSBoost, NSBoost])
def test_approximations_at_their_exact_limits_change_nothing(synthetic, cls):
    """shortlist = K evaluates every candidate and selection_subsample = 1 keeps every example
    with weight 1: both are then the exact algorithm."""
    X, Y, _, _ = synthetic
    exact = cls(10, random_state=2, chi2_filter=True, **STUMPS).fit(X, Y)
    for kw in ({"shortlist": 3}, {"selection_subsample": 1.0},
               {"shortlist": 3, "selection_subsample": 1.0}):
        approx = cls(10, random_state=2, chi2_filter=True, **kw, **STUMPS).fit(X, Y)
        np.testing.assert_allclose(approx.alphas_, exact.alphas_, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(approx.train_loss_, exact.train_loss_, rtol=1e-12)


def test_selection_rows_keep_rare_positives_and_are_unbiased():
    from mlkit.methods.mssboost import selection_rows

    rng = np.random.default_rng(0)
    Y = np.where(rng.random((4000, 3)) < [0.01, 0.1, 0.4], 1.0, -1.0)
    rows, w = selection_rows(Y, 0.2, rng, min_positives=100)
    kept = np.zeros(len(Y), dtype=bool)
    kept[rows] = True
    assert kept[Y[:, 0] > 0].all()                       # the rare label keeps every positive
    assert 0.15 < kept.mean() < 0.3
    v = rng.normal(size=len(Y))
    est = [(w * v[rows]).sum() for rows, w in
           (selection_rows(Y, 0.2, np.random.default_rng(s)) for s in range(200))]
    assert np.mean(est) == pytest.approx(v.sum(), abs=4 * np.std(est) / np.sqrt(200))


def test_approximate_selection_agrees_with_the_exact_one_in_most_rounds(synthetic):
    """From the same states (the exact algorithm's path over a fixed pool of 30 stumps), the
    shortlist and the subsample pick the exact choice in most rounds, their pick always lowers
    the loss, and on average gets most of the exact pick's loss decrease."""
    from collections import defaultdict

    from mlkit.methods.mssboost import selection_rows

    X, Y01, _, _ = synthetic
    Y = 2.0 * Y01 - 1
    learner = make_base_learner("stump", gamma=1.0, C=1.0, random_state=None)
    pool = [fit_subspace_model(X, Y[:, k % 3] > 0, k % 3, rd=0.1, rf=0.5, learner=learner,
                               bound="clip", seed=k) for k in range(30)]
    H = np.column_stack([h.predict(X) for h in pool])
    mask = np.ones((30, 3), dtype=bool)
    y_star = (Y + 1) / 2
    exact = MSSBoost(**STUMPS)
    approx = {"shortlist": MSSBoost(shortlist=5, **STUMPS),
              "subsample": MSSBoost(selection_subsample=0.4, **STUMPS)}
    rows, w = selection_rows(Y, 0.4, np.random.default_rng(12345), min_positives=50)
    for m in (exact, *approx.values()):
        m.fit_profile_, m.fit_profile_cpu_ = defaultdict(float), defaultdict(float)
    F = np.zeros_like(Y)
    agree = {k: 0 for k in approx}
    regret = {k: [] for k in approx}
    for _ in range(20):
        k, alpha, loss = exact._select(F, Y, y_star, H, mask, None, None)
        for name, m in approx.items():
            r, v = (rows, w) if name == "subsample" else (None, None)
            k2, _, loss2 = m._select(F, Y, y_star, H, mask, r, v)
            agree[name] += k2 == k
            current = joint_loss(F, Y, H[:, :1], np.zeros((1, 3)))[0]
            assert loss - 1e-9 <= loss2 < current
            regret[name].append((loss2 - loss) / (current - loss))
        F += H[:, k:k + 1] * alpha
    assert all(a > 10 for a in agree.values()), agree       # a majority of the 20 rounds
    assert all(np.mean(v) < 0.25 for v in regret.values()), regret


# -- Step 2(a) by JointLossSearch: the argmin of Eqn 1, evaluating far less ------------------
def _bench():
    """scripts/bench_mssboost.py: the loss step as it was before JointLossSearch."""
    path = Path(__file__).resolve().parent.parent / "scripts" / "bench_mssboost.py"
    spec = importlib.util.spec_from_file_location("bench_mssboost", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def _eqn1(F, Y, h, a, v=None):
    """Eqn 1 after F_l += a_l h, straight from the formula:
    sum_i v_i sum_l log(1 + exp(-y_il (F_l(x_i) + a_l h(x_i))))."""
    per_example = np.logaddexp(0.0, -Y * (F + np.outer(h, a))).sum(axis=1)
    return per_example.sum() if v is None else per_example @ v


def _search_problem(rng, weighted):
    """Candidates clipped to [-1, 1] (many exactly +-1, as clipped SVM scores), rare and
    common labels, margins up to where p (1 - p) is floored, masked (k, l) pairs (the
    chi-square filter, NSBoost), and a duplicated candidate (an exact tie)."""
    n, K, L = rng.integers(20, 90), rng.integers(3, 12), rng.integers(1, 6)
    H = np.clip(rng.normal(scale=rng.choice([0.3, 1.0, 3.0]), size=(n, K)), -1, 1)
    H[:, 1] = H[:, 0]
    Y = np.where(rng.random((n, L)) < rng.choice([0.1, 0.4]), 1.0, -1.0)
    F = rng.normal(scale=rng.choice([0.1, 2.0, 20.0]), size=(n, L))
    mask = rng.random((K, L)) < 0.7
    mask[1] = mask[0]
    v = rng.random(n) * 3 if weighted else None
    return F, Y, H, mask, v


def _steps(F, Y, H, mask, v):
    """alpha (Eqn 2, zero outside mask), H^T Z and (H^2)^T W, as MSSBoost computes them."""
    P = expit(F)
    num, den = _newton_terms(H, np.maximum(P * (1 - P), MIN_WEIGHT), (Y + 1) / 2 - P, v)
    return np.divide(num, den, out=np.zeros_like(num), where=(den > 0) & mask), num, den


@pytest.mark.parametrize("weighted", [False, True])
def test_joint_loss_search_equals_eqn1(weighted):
    """Every candidate's loss from the search equals Eqn 1 evaluated directly, round after
    round (with what it kept from earlier rounds), with and without example weights."""
    rng = np.random.default_rng(11 + weighted)
    for _ in range(20):
        F, Y, H, mask, v = _search_problem(rng, weighted)
        search = JointLossSearch(Y, v)
        for _ in range(5):
            alpha, num, den = _steps(F, Y, H, mask, v)
            for k in range(H.shape[1]):
                got_k, loss = search.argmin(F, H, alpha, num, den, candidates=np.array([k]))
                assert got_k == k
                assert loss == pytest.approx(_eqn1(F, Y, H[:, k], alpha[k], v), rel=1e-12)
            k = search.argmin(F, H, alpha, num, den)[0]
            F = F + H[:, [k]] * alpha[k]
            j = rng.integers(H.shape[1])
            H[:, j] = np.clip(rng.normal(size=len(H)), -1, 1)


@pytest.mark.parametrize("weighted", [False, True])
def test_joint_loss_search_pruning_never_changes_the_argmin(weighted, monkeypatch):
    """Over random problems and consecutive rounds the search selects what the argmin of
    every candidate's loss selects (the lowest index on exact ties), with the same loss,
    while evaluating well under half of the candidates."""
    import mlkit.methods.mssboost as mss

    evaluated = []
    full_changes = mss._loss_changes

    def counting(neg_margin, YT, HT, alpha, kk, ll, base, v):
        evaluated.append(kk[0])
        return full_changes(neg_margin, YT, HT, alpha, kk, ll, base, v)

    rng = np.random.default_rng(5 + weighted)
    rounds = candidates = 0
    for trial in range(150):
        F, Y, H, mask, v = _search_problem(rng, weighted)
        if trial % 10 == 0:
            mask[:] = False                                   # nothing may move: k = 0
        search = JointLossSearch(Y, v)
        for _ in range(4):
            alpha, num, den = _steps(F, Y, H, mask, v)
            full = joint_loss(F, Y, H, alpha, v)
            direct = [_eqn1(F, Y, H[:, k], alpha[k], v) for k in range(H.shape[1])]
            monkeypatch.setattr(mss, "_loss_changes", counting)
            k, loss = search.argmin(F, H, alpha, num, den)
            monkeypatch.setattr(mss, "_loss_changes", full_changes)
            assert k == np.argmin(full) and k != 1               # candidate 1 duplicates 0
            assert loss == full[k]             # the same operations in the same order
            assert loss == pytest.approx(min(direct), rel=1e-12)
            F = F + H[:, [k]] * alpha[k]
            H[:, rng.integers(2, H.shape[1])] = np.clip(rng.normal(size=len(H)), -1, 1)
            rounds += 1
            candidates += H.shape[1]
    assert len(evaluated) < 0.4 * candidates, (len(evaluated), candidates)


@pytest.mark.parametrize("bound", ["clip", "tanh"])
def test_joint_loss_lower_bound_holds_and_is_second_order(bound):
    """The search's bound on D_kl (the change of label l's loss when F_l += alpha_kl h_k)
    never exceeds the change computed from Eqn 1, for any alpha, R_k = max|h| = 1 (clip) or
    below (tanh), margins where W is floored; and for small alpha it agrees with the change
    to third order: 0 <= D - bound <= c R |alpha|^3 + 1e-6 sum_i v_i h_i^2 alpha^2 + rounding."""
    rng = np.random.default_rng(2)
    squash = (lambda s: np.clip(s, -1, 1)) if bound == "clip" else np.tanh
    for trial in range(40):
        n, K, L = 60, 6, 4
        H = squash(rng.normal(scale=2.0, size=(n, K)))
        Y = np.where(rng.random((n, L)) < 0.3, 1.0, -1.0)
        F = rng.normal(scale=[0.5, 3.0, 15.0, 30.0], size=(n, L))
        v = rng.random(n) * 2 if trial % 2 else None
        vv = np.ones(n) if v is None else v
        alpha, num, den = _steps(F, Y, H, np.ones((K, L), dtype=bool), v)
        small = rng.normal(scale=1e-3, size=alpha.shape)
        large = rng.normal(scale=4.0, size=alpha.shape)
        for a in (alpha, small, large):
            search = JointLossSearch(Y, v)
            search._update(F, H, a)
            lower = search._lower_bounds(a, num, den)
            current = vv @ np.logaddexp(0.0, -Y * F)
            exact = np.array([[vv @ np.logaddexp(0.0, -Y[:, l] * (F[:, l] + a[k, l] * H[:, k]))
                               - current[l] for l in range(L)] for k in range(K)])
            scale = 1e-12 * current.sum()
            assert np.all(lower <= exact + scale)
            if a is small:
                R = np.abs(H).max(axis=0)[:, None]
                sq = ((H * H).T @ vv)[:, None]
                assert np.all(exact - lower <= den * R * np.abs(a) ** 3
                              + 1.01 * MIN_WEIGHT * sq * a ** 2 + 1e-8 * den * a ** 2 + scale)


@pytest.mark.parametrize("cls,kw", [
    (MSSBoost, {}), (MSSBoost, {"chi2_filter": True}), (MSSBoost, {"init": "prior"}),
    (NSBoost, {"chi2_filter": True}), (MSSBoost, {"shortlist": 4}),
    (MSSBoost, {"selection_subsample": 0.5}), (NSBoost, {"selection_subsample": 0.5})])
def test_boosting_selects_as_the_full_evaluation(synthetic, cls, kw):
    """MSSBoost/NSBoost with JointLossSearch against the same estimators selecting by the
    joint loss of every candidate, as before it (scripts/bench_mssboost.py's
    ReferenceSearch): the same models, weights and training losses."""
    reference = type("Reference" + cls.__name__, (cls,),
                     {"_loss_search": _bench().ReferenceSearch})
    X, Y, _, _ = synthetic
    fast = cls(15, random_state=4, **kw, **STUMPS).fit(X, Y)
    slow = reference(15, random_state=4, **kw, **STUMPS).fit(X, Y)
    np.testing.assert_array_equal(fast.estimator_labels_, slow.estimator_labels_)
    for a, b in zip(fast.estimators_, slow.estimators_):
        np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(fast.alphas_, slow.alphas_)
    np.testing.assert_allclose(fast.train_loss_, slow.train_loss_, rtol=1e-14)


def test_svm_boosting_selects_as_the_full_evaluation():
    """The same on the kind of problem Table 2 runs: clipped RBF-SVM scores (mostly +-1),
    rare labels, the chi-square filter; bit for bit."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 12))
    score = X[:, :6] + 0.5 * X[:, 6:] + rng.normal(scale=0.5, size=(500, 6))
    Y = (score > np.quantile(score, [0.97, 0.95, 0.9, 0.8, 0.7, 0.5], axis=0).diagonal())
    kw = dict(base_learner="svm", rd=0.3, rf=0.5, gamma=1.0, C=10.0, chi2_filter=True,
              random_state=0)
    fast = MSSBoost(25, **kw).fit(X, Y.astype(int))
    slow = _bench().ReferenceMSSBoost(25, **kw).fit(X, Y.astype(int))
    np.testing.assert_array_equal(fast.estimator_labels_, slow.estimator_labels_)
    np.testing.assert_array_equal(fast.alphas_, slow.alphas_)
    np.testing.assert_array_equal(fast.train_loss_, slow.train_loss_)


def test_bench_reference_loss_is_eqn1():
    """The bench's reference (the loss step before JointLossSearch) is Eqn 1 too."""
    rng = np.random.default_rng(8)
    F, Y, H, mask, v = _search_problem(rng, weighted=True)
    alpha = _steps(F, Y, H, mask, v)[0]
    direct = [_eqn1(F, Y, H[:, k], alpha[k], v) for k in range(H.shape[1])]
    np.testing.assert_allclose(_bench().reference_joint_loss(F, Y, H, alpha, v), direct,
                               rtol=1e-12)

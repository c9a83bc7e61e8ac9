"""Baseline, Bagging and Subspace of MSSBoost's Table 2 against their definitions."""

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from mlkit.methods import BaggingSVM, BaselineSVM, RSBag, Subspace
from mlkit.methods._sampling import fit_on_sample


def _data(seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    Y = np.column_stack([X[:, 0] > 0.3, X[:, 1] + X[:, 2] > 0, X[:, 3] > 0.8]).astype(int)
    return X, Y


def test_baseline_is_one_svm_per_label():
    X, Y = _data()
    F = BaselineSVM(gamma=0.2, C=2.0).fit(X, Y).decision_function(X)
    for l in range(Y.shape[1]):
        ref = SVC(kernel="rbf", gamma=0.2, C=2.0).fit(X, Y[:, l]).decision_function(X)
        np.testing.assert_allclose(F[:, l], ref, rtol=1e-10)


def test_bagging_averages_svms_on_bootstraps_of_n_draws():
    X, Y = _data()
    model = BaggingSVM(4, gamma=0.2, random_state=3).fit(X, Y)
    # the shared bootstrap (N draws), seeded from random_state as the class does
    rng = np.random.default_rng(np.random.RandomState(3).randint(np.iinfo(np.int32).max))
    F = np.zeros(Y.shape)
    for l in range(Y.shape[1]):
        for _ in range(4):
            s = rng.integers(0, len(X), len(X))
            assert np.ptp(Y[s, l]) > 0            # both classes drawn (none redrawn here)
            F[:, l] += SVC(gamma=0.2).fit(X[s], Y[s, l]).decision_function(X) / 4
    # duplicates are folded into sample weights (the same SVM problem): equal up to the
    # stopping tolerance of libsvm (tol=1e-3); test_fit_on_sample_* checks it exactly
    np.testing.assert_allclose(model.decision_function(X), F, atol=5e-3)
    assert all(len(m) == 4 for m in model.estimators_)
    assert model.model_size_ == sum(svc.n_support_.sum() * 6 for m in model.estimators_
                                    for svc in m)
    # each support vector is stored once
    for m in model.estimators_:
        for svc in m:
            assert len(np.unique(svc.support_vectors_, axis=0)) == len(svc.support_vectors_)


def test_fit_on_sample_equals_fitting_the_duplicated_rows():
    """An SVM on a bootstrap with its draws folded into sample weights is the SVM on the
    duplicated rows: same decision function (at a tight solver tolerance)."""
    X, Y = _data(n=150)
    rng = np.random.default_rng(0)
    samples = rng.integers(0, len(X), size=400)
    features = np.array([0, 2, 3])
    dup = SVC(gamma=0.3, C=0.7, tol=1e-10).fit(X[samples][:, features], Y[samples, 0])
    folded = fit_on_sample(SVC(gamma=0.3, C=0.7, tol=1e-10), X, Y[:, 0], samples, features)
    np.testing.assert_allclose(folded.decision_function(X[:, features]),
                               dup.decision_function(X[:, features]), rtol=1e-6, atol=1e-7)
    assert len(folded.support_) < len(dup.support_)
    # sparse X: the same model
    folded_sp = fit_on_sample(SVC(gamma=0.3, C=0.7, tol=1e-10), sp.csr_matrix(X), Y[:, 0],
                              samples, features)
    np.testing.assert_allclose(folded_sp.decision_function(sp.csr_matrix(X[:, features])),
                               dup.decision_function(X[:, features]), rtol=1e-6, atol=1e-7)
    # learners without that equivalence get the rows as drawn: a tree, an SVC whose
    # gamma="scale" or class_weight depends on the multiplicities, a learner without
    # sample_weight
    tree = fit_on_sample(DecisionTreeClassifier(max_depth=1), X, Y[:, 0], samples)
    assert tree.tree_.n_node_samples[0] == len(samples)
    for svc in (SVC(gamma="scale"), SVC(gamma=0.3, class_weight="balanced")):
        ref = clone(svc).fit(X[samples], Y[samples, 0]).decision_function(X)
        np.testing.assert_allclose(fit_on_sample(svc, X, Y[:, 0], samples).decision_function(X),
                                   ref)
    knn = fit_on_sample(KNeighborsClassifier(3), X, Y[:, 0], samples)
    assert knn.n_samples_fit_ == len(samples)


def test_subspace_is_rsbag_with_one_model_per_label():
    X, Y = _data()
    kw = dict(base_learner="svm", rd=0.3, rf=0.5, gamma=0.2, random_state=1)
    a = Subspace(**kw).fit(X, Y)
    b = RSBag(n_estimators=Y.shape[1], **kw).fit(X, Y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X))
    assert list(a.estimator_labels_) == [0, 1, 2]


def test_baselines_take_sparse_input():
    X, Y = _data()
    dense = BaselineSVM(gamma=0.2).fit(X, Y).decision_function(X)
    sparse = BaselineSVM(gamma=0.2).fit(sp.csr_matrix(X), Y).decision_function(sp.csr_matrix(X))
    np.testing.assert_allclose(dense, sparse, rtol=1e-8)


def test_bagging_redraws_bootstraps_that_miss_a_rare_class():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    Y = np.zeros((100, 2), dtype=int)
    Y[:3, 0] = 1                       # 3 positives: many N-draw bootstraps miss them all
    Y[:50, 1] = 1
    for seed in range(20):
        model = BaggingSVM(5, gamma=0.2, random_state=seed).fit(X, Y)
        assert model.decision_function(X).shape == (100, 2)


def test_fit_cpu_seconds_are_recorded_by_the_baselines_and_the_ensembles():
    """Each estimator counts its own fit's CPU seconds for the run record (Table 2's training
    time on a shared machine)."""
    import time

    from mlkit.methods import BaselineSVM, MSSBoost

    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 5))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.3]).astype(int)
    for est in (BaselineSVM(gamma=0.5), MSSBoost(6, rd=0.3, rf=0.6, gamma=0.5,
                                                  random_state=0)):
        cpu = time.process_time()
        est.fit(X, Y)
        spent = time.process_time() - cpu
        own = est.run_record_extras()["fit_cpu_s"]
        assert 0 < own <= spent + 1e-3

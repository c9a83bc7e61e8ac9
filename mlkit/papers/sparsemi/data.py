"""SparseMI's own data: the generators of its illustrations (Fu, Lu, Ting & Zhang, TNNLS 2013).

``sparsemi-toy`` is the toy problem of Fig. 1 (Sec. III); ``sparsemi-binary`` and
``sparsemi-3class`` are the two 2-D problems of Fig. 2 (Sec. V-A). All three are synthetic
(``synthetic=True``), their unstated counts and coordinates reconstructed as each docstring
says. The real benchmarks (MUSK, COREL, TST) are shared readers of
:mod:`mlkit.datasets.mi_catalog`.

References
----------
.. [1] Z. Fu, G. Lu, K. M. Ting and D. Zhang, "Learning sparse kernel classifiers for
   multi-instance classification", IEEE Trans. Neural Netw. Learn. Syst., 24(9),
   pp. 1377-1389, 2013.
"""

import numpy as np

from ...datasets._containers import MultiInstanceDataset
from ...datasets.catalog import register_dataset

__all__ = ["make_sparsemi_toy", "make_sparsemi_binary", "make_sparsemi_3class",
           "SPARSEMI_3CLASS_MEANS", "SPARSEMI_3CLASS_SIGMA"]

PAPER = "sparsemi"


# -- the Fig. 1 toy data ------------------------------------------------------------------
def make_sparsemi_toy(n_bags_per_class=10, *, bag_size=3, random_state=0):
    """The toy MI problem of SparseMI's Fig. 1 (Fu et al. 2013, Sec. III) [1]_.

    The paper: 10 positive and 10 negative bags of 3 instances in 2-D, each positive bag
    with 1 positive and 2 negative instances, the instances linearly separable; it gives no
    coordinates, so they are generated here (our choice, seeded): positive instances from
    N((1.5, 1.5), 0.35^2 I), negative instances from N((-1, -1), 0.7^2 I) rejected unless
    x_1 + x_2 < 0.5 (the positives are redrawn until x_1 + x_2 > 1.5), so the line
    x_1 + x_2 = 1 separates the instances.

    Returns
    -------
    MultiInstanceDataset
        ``y`` 1 for positive bags; ``instance_labels`` 1 for the positive instances.
    """
    rng = np.random.default_rng(random_state)

    def draw(n, mean, sd, keep):
        out = np.empty((0, 2))
        while len(out) < n:
            x = rng.normal(mean, sd, size=(2 * n, 2))
            out = np.vstack([out, x[keep(x)]])
        return out[:n]

    n_bags = 2 * n_bags_per_class
    n_pos = n_bags_per_class
    pos = draw(n_pos, 1.5, 0.35, lambda x: x.sum(axis=1) > 1.5)
    neg = draw(n_bags * bag_size - n_pos, -1.0, 0.7, lambda x: x.sum(axis=1) < 0.5)
    X = np.empty((n_bags * bag_size, 2))
    labels = np.zeros(n_bags * bag_size, dtype=np.int64)
    first = np.arange(n_pos) * bag_size                   # instance 0 of each positive bag
    X[first], labels[first] = pos, 1
    rest = np.setdiff1d(np.arange(len(X)), first)
    X[rest] = neg
    y = np.repeat([1, 0], n_bags_per_class)
    return MultiInstanceDataset(
        name="sparsemi-toy", instances=X, offsets=np.arange(n_bags + 1) * bag_size, y=y,
        instance_labels=labels, class_names=["negative", "positive"], synthetic=True,
        source="SparseMI Fig. 1-style toy generator (Fu et al. 2013, Sec. III), reconstructed",
        descr=make_sparsemi_toy.__doc__)


register_dataset("sparsemi-toy", make_sparsemi_toy, kind="multi-instance", synthetic=True,
                 paper=PAPER, summary="SparseMI Fig. 1 toy: 10+10 bags of 3 2-D instances "
                                      "(Fu et al. 2013)")


# -- Fig. 2 synthetic problems -----------------------------------------------------------------
#: Centres of the four Gaussians of Fig. 2(b), Sec. V-A of [1]: mu_1 .. mu_4.
SPARSEMI_3CLASS_MEANS = np.array([[-2.0, 2.0], [2.0, 2.0], [2.0, -2.0], [-2.0, -2.0]])
#: Their common standard deviation, sigma = 0.25 (Sec. V-A of [1]).
SPARSEMI_3CLASS_SIGMA = 0.25


def _check_generator_args(n_bags_per_class, bag_size):
    """ValueError for a non-positive bag count or an empty or invalid bag-size range."""
    if int(n_bags_per_class) < 1:
        raise ValueError(f"n_bags_per_class must be at least 1, got {n_bags_per_class}")
    low, high = bag_size
    if not 1 <= low <= high:
        raise ValueError(f"bag_size must be (low, high) with 1 <= low <= high, got {bag_size}")


def _witness_layout(rng, y, bag_size, has_witness):
    """Bag offsets and, per instance, whether it is a witness (shuffled within its bag).

    A bag of class c with ``has_witness[c]`` holds 1..ceil(n_b / 2) witnesses (uniform).
    """
    sizes = rng.integers(bag_size[0], bag_size[1] + 1, len(y))
    n_witness = np.where(has_witness[y], rng.integers(1, (sizes + 1) // 2 + 1), 0)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    bag_of = np.repeat(np.arange(len(y)), sizes)
    rank = np.arange(offsets[-1]) - offsets[bag_of]
    witness = rank < n_witness[bag_of]
    shuffle = np.lexsort((rng.random(offsets[-1]), bag_of))
    return offsets, bag_of, witness[shuffle]


def make_sparsemi_binary(n_bags_per_class=20, *, bag_size=(2, 8), radius=2.0, sigma=0.25,
                         random_state=0):
    """The binary 2-D MI problem of SparseMI's Fig. 2(a) (Fu et al. 2013, Sec. V-A) [1]_.

    The paper: "each positive bag contains at least one instance in the center, whereas
    each negative bag contains only instances on the surrounding circle"; a single
    expansion vector at the centre separates the classes. It gives no counts, bag sizes or
    radius, so those are reconstructed (our choices, the defaults): ``n_bags_per_class``
    positive then as many negative bags, bag sizes uniform in ``bag_size``, a positive bag
    holding 1..ceil(n_b / 2) centre instances drawn from N(0, sigma^2 I) at random
    positions; every other instance lies on the circle of radius ``radius`` (uniform angle,
    radial noise N(0, sigma^2)).

    Parameters
    ----------
    n_bags_per_class : int, default=20
    bag_size : (int, int), default=(2, 8)
        Smallest and largest bag size.
    radius : float, default=2.0
    sigma : float, default=0.25
        Spread of the centre cluster and of the ring.
    random_state : int, default=0

    Returns
    -------
    MultiInstanceDataset
        ``synthetic=True``; ``y`` 1 for positive bags; ``instance_labels`` 1 for centre
        instances, 0 for ring instances.
    """
    _check_generator_args(n_bags_per_class, bag_size)
    rng = np.random.default_rng(random_state)
    y = np.repeat([1, 0], int(n_bags_per_class))
    offsets, _, centre = _witness_layout(rng, y, bag_size, np.array([False, True]))
    n = offsets[-1]
    angle = rng.uniform(0.0, 2 * np.pi, n)
    ring = (radius + sigma * rng.standard_normal(n))[:, None] * np.column_stack(
        [np.cos(angle), np.sin(angle)])
    X = np.where(centre[:, None], sigma * rng.standard_normal((n, 2)), ring)
    return MultiInstanceDataset(
        name="sparsemi-binary", instances=X, offsets=offsets, y=y,
        instance_labels=centre.astype(np.int64), class_names=["negative", "positive"], synthetic=True,
        source="SparseMI Fig. 2(a)-style generator (Fu et al. 2013, Sec. V-A), reconstructed",
        descr=make_sparsemi_binary.__doc__)


def make_sparsemi_3class(n_bags_per_class=20, *, bag_size=(2, 8), random_state=0):
    """The 3-class 2-D MI problem of SparseMI's Fig. 2(b) (Fu et al. 2013, Sec. V-A) [1]_.

    As in the paper, instances come from four Gaussians N(mu_i, sigma^2 I) with
    mu_1 = (-2, 2), mu_2 = (2, 2), mu_3 = (2, -2), mu_4 = (-2, -2) and sigma = 0.25
    (:data:`SPARSEMI_3CLASS_MEANS`); bags of class 3 hold only instances from mu_2 and
    mu_4, each bag of class 1 at least one from mu_1 and each bag of class 2 at least one
    from mu_3, so two expansion vectors, at mu_1 and mu_3, suffice. Reconstructed (the
    paper gives none of them): the bag counts, bag sizes uniform in ``bag_size``, 1..ceil(
    n_b / 2) witnesses per class-1/2 bag, and the other instances drawn from mu_2 or mu_4
    with equal probability.

    Parameters
    ----------
    n_bags_per_class : int, default=20
    bag_size : (int, int), default=(2, 8)
    random_state : int, default=0

    Returns
    -------
    MultiInstanceDataset
        ``synthetic=True``; ``y`` 0, 1, 2 for the paper's classes 1, 2, 3;
        ``instance_labels`` 0 (from mu_1), 1 (from mu_3) or 2 (from mu_2 or mu_4).
    """
    _check_generator_args(n_bags_per_class, bag_size)
    rng = np.random.default_rng(random_state)
    y = np.repeat([0, 1, 2], int(n_bags_per_class))
    offsets, bag_of, witness = _witness_layout(rng, y, bag_size, np.array([True, True, False]))
    n = offsets[-1]
    background = rng.choice([1, 3], size=n)  # mu_2 or mu_4
    # witnesses of class 1 come from mu_1, of class 2 from mu_3 (class 3 has none)
    component = np.where(witness, np.array([0, 2, 0])[y[bag_of]], background)
    X = SPARSEMI_3CLASS_MEANS[component] + SPARSEMI_3CLASS_SIGMA * rng.standard_normal((n, 2))
    instance_labels = np.select([component == 0, component == 2], [0, 1], default=2)
    return MultiInstanceDataset(
        name="sparsemi-3class", instances=X, offsets=offsets, y=y,
        instance_labels=instance_labels, class_names=["class 1", "class 2", "class 3"],
        synthetic=True,
        source="SparseMI Fig. 2(b)-style generator (Fu et al. 2013, Sec. V-A), reconstructed",
        descr=make_sparsemi_3class.__doc__)


register_dataset("sparsemi-binary", make_sparsemi_binary, kind="multi-instance",
                 synthetic=True, paper=PAPER,
                 summary="SparseMI Fig. 2(a)-style 2-D binary MI: centre vs ring (Fu et al. 2013)")
register_dataset("sparsemi-3class", make_sparsemi_3class, kind="multi-instance",
                 synthetic=True, paper=PAPER,
                 summary="SparseMI Fig. 2(b)-style 2-D 3-class MI: 4 Gaussians (Fu et al. 2013)")

"""The train/test splits of a protocol (``holdout``, ``cv``, ``predefined``, ``labelled``),
each with its own seed, and the one K-fold splitter every inner search draws its folds from."""

import zlib
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold, StratifiedShuffleSplit

from .._errors import DataError, MlkitError

__all__ = ["Split", "make_splits", "cv_splitter", "cv_folds", "method_seed",
           "folds_per_repeat", "check_classes"]


@dataclass(frozen=True)
class Split:
    """One train/test split: its repeat and fold numbers, indices and seed; ``validation``:
    the rows a method's grid is chosen on (the ``labelled`` protocol with
    ``validation_size > 0``), else None."""

    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray
    seed: int
    validation: object = None

    @property
    def name(self):
        return f"r{self.repeat:02d}-f{self.fold:02d}"


def folds_per_repeat(spec, dataset):
    """Splits per repetition of ``dataset`` (a display label) in ``spec``: ``n_folds`` when
    its protocol is k-fold CV, else 1."""
    ds = next((d for d in spec.datasets if d.display == dataset), None)
    protocol = spec.protocol if ds is None else ds.protocol_over(spec.protocol)
    return protocol.n_folds if protocol.split == "cv" else 1


def _seed(entropy, *spawn_key):
    from numpy.random import SeedSequence

    return int(SeedSequence(entropy, spawn_key=tuple(spawn_key)).generate_state(1)[0])


def method_seed(split_seed, method_label):
    """The seed of one method on one split: stable when other methods are added or removed."""
    return _seed(split_seed, zlib.crc32(method_label.encode()))


def _stratified_take(labels, frac, rng):
    """Rows (positions into ``labels``) holding ``round(frac * count)`` of every class, at
    least one of a class with two or more members, never all of a class (when it can)."""
    take = []
    for c in np.unique(labels):
        rows = rng.permutation(np.flatnonzero(labels == c))
        k = int(np.clip(np.round(frac * len(rows)), min(1, len(rows) - 1), len(rows) - 1)) \
            if len(rows) > 1 else 0
        take.append(rows[:k])
    return np.sort(np.concatenate(take)).astype(np.int64)


def _groups(target):
    """(rows, description) of every class of a 1-D target, or of every label's positives and
    negatives of a 2-D 0/1 target (the description has a ``{}`` for the count)."""
    target = np.asarray(target)
    if target.ndim == 2:            # (rows, what they are) per label: positives, negatives
        return [(np.flatnonzero((target[:, j] > 0) == positive),
                 f"label {j} has {{}} {'positives' if positive else 'negatives'}")
                for j in range(target.shape[1]) for positive in (True, False)]
    return [(np.flatnonzero(target == c), f"class {c} has {{}} samples")
            for c in np.unique(target)]


def _draw_labelled(target, n_labelled, rng, name, *, where="in the training part",
                   field="n_labelled", fix="lower n_labelled or test_size"):
    """Positions of the labelled samples among ``target`` (the training part's targets):
    ``n_labelled`` per class (1-D target), or ``n_labelled`` positives and as many negatives
    per label, united (2-D 0/1 target). A class or label with too few -> MlkitError (its
    text names ``where`` the rows were drawn from, the ``field`` and the ``fix``)."""
    picks = []
    for rows, what in _groups(target):
        if len(rows) < n_labelled:
            raise MlkitError(f"{name}: {what.format(len(rows))} {where}, fewer "
                             f"than {field}={n_labelled}; {fix}")
        picks.append(rng.choice(rows, n_labelled, replace=False))
    return np.unique(np.concatenate(picks))


def _labelled_splits(data, protocol):
    """The ``labelled`` protocol's splits (see :class:`mlkit.config.ProtocolSpec`): every
    repeat a random train/test division (stratified for a 1-D target), ``n_labelled`` drawn
    per class (or positives and negatives per label) from the training part, and the test
    part divided into validation (``validation_size``; none when 0) and scored rows; with
    ``n_test``, the scored rows are ``n_test`` per class (or positives and negatives per
    label) drawn from the rows outside the labelled draw and the validation part, and with
    ``n_test`` and ``validation_size: 0`` the labelled draw is from the whole dataset."""
    if protocol.n_labelled is None:
        raise MlkitError(f"{data.name}: split: labelled needs n_labelled (labelled samples per "
                         "class, or positives per label of a multi-label target)")
    target = np.asarray(data.target)
    single = target.ndim == 1
    n = len(data)
    n_lab, n_test = protocol.n_labelled, protocol.n_test
    with_val = protocol.validation_size > 0
    if n_test is not None:
        for rows, what in _groups(target):
            if len(rows) < n_lab + n_test:
                raise MlkitError(f"{data.name}: {what.format(len(rows))}, fewer than "
                                 f"n_labelled + n_test = {n_lab} + {n_test}; lower them")
    splits = []
    for r in range(protocol.repeats):
        seed = _seed(protocol.seed, r)
        rng = np.random.default_rng(seed)
        val = None
        if n_test is not None and not with_val:     # both draws from the whole dataset
            train = _draw_labelled(target, n_lab, rng, data.name, where="in the dataset")
            test = None
        else:
            if single:
                test = _stratified_take(target, protocol.test_size, rng)
            else:
                test = np.sort(rng.permutation(n)[:int(round(protocol.test_size * n))])
            pool = np.setdiff1d(np.arange(n), test)
            train = pool[_draw_labelled(target[pool], n_lab, rng, data.name)]
            if with_val and single:
                val = test[_stratified_take(target[test], protocol.validation_size, rng)]
            elif with_val:
                k = max(1, int(round(protocol.validation_size * len(test))))
                val = np.sort(rng.permutation(test)[:k])
        if n_test is None:
            scored = test if val is None else np.setdiff1d(test, val)
        else:
            used = train if val is None else np.concatenate([train, val])
            rest = np.setdiff1d(np.arange(n), used)
            scored = rest[_draw_labelled(
                target[rest], n_test, rng, data.name, field="n_test",
                where="outside the labelled draw and the validation part",
                fix="lower n_test, n_labelled or validation_size")]
        splits.append(Split(r, 0, train, scored, _seed(seed, 0), validation=val))
    return splits


def cv_splitter(n_folds, random_state, stratified=False):
    """The one K-fold splitter of mlkit (shuffled, seeded): ``StratifiedKFold`` when
    ``stratified``, else ``KFold``. The runner's ``cv`` protocol, its inner grid searches,
    MSSBoost's selection and HFSS's pair rule all draw their folds here."""
    cls = StratifiedKFold if stratified else KFold
    return cls(n_splits=n_folds, shuffle=True, random_state=random_state)


def cv_folds(n, n_folds, random_state, stratify=None):
    """[(train, test)] index arrays of :func:`cv_splitter`'s folds of ``n`` rows, stratified
    by the labels ``stratify`` when given."""
    splitter = cv_splitter(n_folds, random_state, stratified=stratify is not None)
    return list(splitter.split(np.zeros((n, 1)), stratify))


def make_splits(data, protocol):
    """All train/test splits of a protocol, each with its own seed (numpy SeedSequence).

    ``holdout`` redraws a random split every repeat; ``cv`` makes ``n_folds`` folds per repeat
    with a fresh shuffle; ``predefined`` uses the dataset's own ``splits['train'/'test']``;
    ``labelled`` draws few labelled training samples and a validation part (see
    :class:`mlkit.config.ProtocolSpec`).
    """
    n = len(data)
    if protocol.split == "labelled":
        return _labelled_splits(data, protocol)
    strat = data.stratify if protocol.stratify else None
    if protocol.split == "predefined":
        if not {"train", "test"} <= set(data.splits):
            raise MlkitError(f"dataset {data.name} has no predefined train/test split; use "
                             "protocol.split: holdout or cv")
        return [Split(r, 0, np.asarray(data.splits["train"]), np.asarray(data.splits["test"]),
                      _seed(protocol.seed, r)) for r in range(protocol.repeats)]
    if protocol.split == "cv":
        _check_folds(data, protocol.n_folds, strat)
    splits = []
    for r in range(protocol.repeats):
        seed = _seed(protocol.seed, r)
        rs = seed % (2**31)
        if protocol.split == "holdout":
            cls = StratifiedShuffleSplit if strat is not None else ShuffleSplit
            folds = cls(n_splits=1, test_size=protocol.test_size, random_state=rs).split(
                np.zeros((n, 1)), strat)
        else:
            folds = cv_folds(n, protocol.n_folds, rs, stratify=strat)
        for f, (tr, te) in enumerate(folds):
            splits.append(Split(r, f, tr, te, _seed(seed, f)))
    return splits


def _check_folds(data, n_folds, strat):
    """A ``cv`` protocol the data cannot give as one :class:`DataError`: more folds than
    samples, or (stratified) than the members of a class (a stratified fold holds some of
    every class)."""
    n = len(data)
    if n_folds > n:
        raise DataError(f"{data.name}: protocol.n_folds={n_folds} is more than its {n} "
                        f"samples; lower n_folds to at most {n}")
    if strat is None:
        return
    classes, counts = np.unique(np.asarray(strat), return_counts=True, axis=0)
    if counts.min() < n_folds:
        c = classes[int(np.argmin(counts))]
        raise DataError(f"{data.name}: class {_shown_label(c)} has {int(counts.min())} samples, fewer "
                        f"than protocol.n_folds={n_folds} (each stratified fold needs one of "
                        f"every class); lower n_folds to {int(counts.min())} or set "
                        "protocol.stratify: false")


def _shown_label(value):
    """A class label as a user wrote it (``1``, ``'cat'``), not numpy's repr."""
    value = value.item() if isinstance(value, np.generic) else value
    return repr(value) if isinstance(value, str) else str(value)


def _check_classes(data):
    """A single-label dataset with one class cannot train a classifier: a DataError."""
    target = np.asarray(data.target) if not isinstance(data.target, list) else None
    if target is None or target.ndim != 1:
        return
    classes = np.unique(target)
    if len(classes) < 2:
        raise DataError(f"{data.name}: every one of its {len(target)} samples has class "
                        f"{_shown_label(classes[0]) if len(classes) else '(none)'}; a classifier needs "
                        "at least two classes (check the label column or the file)")

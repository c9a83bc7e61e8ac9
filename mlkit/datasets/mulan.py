"""Mulan multi-label files: ARFF (dense, sparse, gzipped) with the XML label list, and the
MATLAB ``.mat`` layout (``data`` n x d, ``target`` L x n) of the MLC_toolbox copies.

A Mulan data set is an ARFF file whose label attributes are named by a companion XML file
(namespace ``http://mulan.sourceforge.net/labels``, one ``<label name="..."/>`` per label).
Labels are matched by name and kept in the ARFF's attribute order; every other attribute is
a feature. Features must be numeric or binary nominal ``{0,1}``; labels take values in
{0, 1}. Sparse ARFF rows (``{index value, ...}``, 0-based indices, omitted entries are 0)
give a ``scipy.sparse`` CSR feature matrix that is never densified; Y is always dense int8.
Every malformed input raises :class:`~mlkit._errors.DataError` naming the file and line.

References
----------
.. [1] G. Tsoumakas, E. Spyromitros-Xioufis, J. Vilcek, I. Vlahavas, "Mulan: A Java Library
   for Multi-Label Learning", Journal of Machine Learning Research 12:2411-2414, 2011.
"""

import logging
import re
import xml.parsers.expat
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from .._errors import DataError
from ._text import read_lines
from ..registry import FORMATS
from ._containers import MultiLabelDataset
from ._fetch import sha256sum

__all__ = ["read_mulan", "read_mulan_arff", "read_mulan_mat", "read_label_xml",
           "find_label_xml"]

logger = logging.getLogger(__name__)

_NUMERIC_TYPES = frozenset({"numeric", "real", "integer"})
_SPLIT_SUFFIX = re.compile(r"-(train|test|sparse)$", re.IGNORECASE)


@dataclass(frozen=True)
class _Attribute:
    """One ``@attribute`` declaration: its name, kind and line in the ARFF file."""

    name: str
    kind: str  # "numeric", "binary" ({0,1}), "nominal" or another ARFF type
    line: int
    declared: str


@dataclass(frozen=True)
class _Layout:
    """Where each ARFF attribute goes: a feature column, a label column, or neither (-1)."""

    features: list
    labels: list
    feature_col: np.ndarray
    label_col: np.ndarray
    binary: np.ndarray  # per attribute: values must be 0 or 1


# -- XML label list -----------------------------------------------------------------------------

def read_label_xml(path):
    """Read the label names of a Mulan XML label file.

    Parameters
    ----------
    path : str or os.PathLike
        The XML file. Nested (hierarchical) ``<label>`` elements are read in document order.

    Returns
    -------
    list of (str, int)
        Each label's name and the line of its ``<label>`` element.

    Raises
    ------
    DataError
        When the file is not well-formed XML, a ``<label>`` has no name, a name repeats, or
        there is no label at all.
    """
    path = Path(path)
    labels = []
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")

    def start(tag, attrs):
        if tag.rsplit(" ", 1)[-1] != "label":
            return
        line = parser.CurrentLineNumber
        if "name" not in attrs:
            raise DataError(f"{path}: line {line}: <label> element without a name attribute")
        labels.append((attrs["name"], line))

    parser.StartElementHandler = start
    try:
        with open(path, "rb") as fh:
            parser.ParseFile(fh)
    except xml.parsers.expat.ExpatError as exc:
        raise DataError(f"{path}: line {exc.lineno}: not well-formed XML "
                        f"({xml.parsers.expat.errors.messages[exc.code]})") from None
    _check_label_names(path, labels)
    return labels


def _check_label_names(path, labels):
    """Refuse an empty label list and repeated label names."""
    if not labels:
        raise DataError(f"{path}: no <label name=...> element; not a Mulan label file")
    first = {}
    for name, line in labels:
        if name in first:
            raise DataError(f"{path}: line {line}: label {name!r} repeats line {first[name]}")
        first[name] = line


def find_label_xml(path):
    """Find the XML label file of a Mulan ARFF file by the Mulan naming convention.

    ``scene-train.arff`` -> ``scene.xml``, ``Corel5k-train-sparse.arff`` -> ``Corel5k.xml``,
    ``Corel16k001-test.arff.gz`` -> ``Corel16k001.xml``: the ``-train``, ``-test`` and
    ``-sparse`` suffixes are removed one at a time and the first existing ``<stem>.xml``
    beside the ARFF file wins.

    Parameters
    ----------
    path : str or os.PathLike
        The ARFF file (``.arff`` or ``.arff.gz``).

    Returns
    -------
    pathlib.Path
        The XML file.

    Raises
    ------
    DataError
        When none of the candidate names exists; the message lists them.
    """
    path = Path(path)
    stem = re.sub(r"(\.arff)?(\.gz)?$", "", path.name, flags=re.IGNORECASE)
    candidates = [path.with_name(stem + ".xml")]
    while _SPLIT_SUFFIX.search(stem):
        stem = _SPLIT_SUFFIX.sub("", stem)
        candidates.append(path.with_name(stem + ".xml"))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(c.name for c in candidates)
    raise DataError(f"{path}: no Mulan label file beside it (tried {tried}); "
                    f"pass the XML file as xml=...")


# -- ARFF header --------------------------------------------------------------------------------

def _split_name(path, lineno, text):
    """Split ``name type`` where the name may be quoted with ' or "."""
    if text[:1] in ("'", '"'):
        end = text.find(text[0], 1)
        if end < 0:
            raise DataError(f"{path}: line {lineno}: unterminated quoted attribute name")
        return text[1:end], text[end + 1:].strip()
    parts = text.split(None, 1)
    if len(parts) < 2:
        raise DataError(f"{path}: line {lineno}: @attribute needs a name and a type")
    return parts[0], parts[1].strip()


def _parse_attribute(path, lineno, line):
    """One ``@attribute`` line as an :class:`_Attribute`."""
    name, declared = _split_name(path, lineno, line[len("@attribute"):].strip())
    if declared.startswith("{"):
        if not declared.endswith("}"):
            raise DataError(f"{path}: line {lineno}: nominal values of {name!r} lack the "
                            f"closing '}}'")
        values = {v.strip().strip("'\"") for v in declared[1:-1].split(",")}
        kind = "binary" if values == {"0", "1"} else "nominal"
    else:
        word = declared.split()[0].lower()
        kind = "numeric" if word in _NUMERIC_TYPES else word
    return _Attribute(name, kind, lineno, declared)


def _parse_header(path, lines):
    """The attributes and the index of the ``@data`` line."""
    attributes = []
    for i, raw in enumerate(lines):
        line = raw.strip()
        keyword = line[:10].lower()
        if keyword.startswith("@attribute"):
            attributes.append(_parse_attribute(path, i + 1, line))
        elif keyword.startswith("@data"):
            if not attributes:
                raise DataError(f"{path}: line {i + 1}: @data before any @attribute")
            return attributes, i
    raise DataError(f"{path}: no @data line after {len(lines)} lines; "
                    f"the file is truncated or not ARFF")


def _layout(path, attributes, labels, xml_path):
    """Assign each attribute to the features or the labels, refusing unsupported types."""
    index = {}
    for j, a in enumerate(attributes):
        if a.name in index:
            raise DataError(f"{path}: line {a.line}: attribute {a.name!r} is declared twice")
        index[a.name] = j
    for name, line in labels:
        if name not in index:
            raise DataError(f"{xml_path}: line {line}: label {name!r} is not an attribute "
                            f"in the header of {path}")
    label_idx = sorted(index[name] for name, _ in labels)
    is_label = np.zeros(len(attributes), dtype=bool)
    is_label[label_idx] = True
    _check_labels_last(path, attributes, is_label, xml_path)
    for j, a in enumerate(attributes):
        _check_kind(path, a, is_label[j])
    feature_col = np.where(is_label, -1, np.cumsum(~is_label) - 1)
    label_col = np.where(is_label, np.cumsum(is_label) - 1, -1)
    return _Layout(features=[a.name for a, lab in zip(attributes, is_label) if not lab],
                   labels=[attributes[j].name for j in label_idx],
                   feature_col=feature_col, label_col=label_col,
                   binary=np.array([a.kind == "binary" for a in attributes]) | is_label)


def _check_labels_last(path, attributes, is_label, xml_path):
    """Mulan puts the labels last: nominal {0,1} attributes after the last label, or between
    the numeric features and the first label, that the XML does not list are labels it
    misses (they would silently become features)."""
    first = int(np.argmax(is_label))
    last = len(is_label) - 1 - int(np.argmax(is_label[::-1]))
    after = [a for a in attributes[last + 1:] if a.kind == "binary"]
    if after:
        raise DataError(f"{path}: line {after[0].line}: the nominal {{0,1}} attribute "
                        f"{after[0].name!r} comes after the labels but {xml_path} does not "
                        "list it as a label; Mulan puts the labels last: add it to the XML")
    numeric = [j for j in range(first) if attributes[j].kind == "numeric"]
    if numeric and numeric[-1] + 1 < first:
        gap = attributes[numeric[-1] + 1:first]
        raise DataError(f"{path}: line {gap[0].line}: the nominal {{0,1}} attribute(s) "
                        f"{', '.join(repr(a.name) for a in gap[:5])} sit between the numeric "
                        f"features and the labels but {xml_path} does not list them: labels "
                        "the XML misses? Add them to the XML")


def _check_kind(path, attribute, is_label):
    """Features: numeric or binary nominal; labels: binary nominal or numeric 0/1."""
    if attribute.kind in ("numeric", "binary"):
        return
    what = "label" if is_label else "feature"
    if attribute.kind == "nominal":
        fix = ("Mulan labels are nominal {0,1}" if is_label else
               "nominal features are unsupported; only numeric and binary {0,1} features "
               "are read (one-hot encode it first)")
        raise DataError(f"{path}: line {attribute.line}: {what} {attribute.name!r} is nominal "
                        f"{attribute.declared}: {fix}")
    raise DataError(f"{path}: line {attribute.line}: {what} {attribute.name!r} has type "
                    f"{attribute.declared!r}, which is unsupported (only numeric and {{0,1}})")


# -- ARFF data ------------------------------------------------------------------------------------

def _data_rows(lines, start):
    """(line number, text) of every data row after the ``@data`` line."""
    for i in range(start + 1, len(lines)):
        text = lines[i].strip()
        if text and not text.startswith("%"):
            yield i + 1, text


def _bad_value(path, lineno, column, text, attributes):
    """The error for a value that does not parse as a number."""
    name = attributes[column].name
    where = f"{path}: line {lineno}: attribute {name!r} (index {column})"
    if text.strip() == "?":
        return DataError(f"{where}: missing value '?'; missing values are not supported")
    return DataError(f"{where}: non-numeric value {text.strip()!r} where "
                     f"{attributes[column].declared} is declared")


def _parse_number(path, lineno, column, text, attributes):
    """One numeric value, or a DataError naming the line and attribute."""
    try:
        return float(text)
    except ValueError:
        raise _bad_value(path, lineno, column, text, attributes) from None


def _dense_row(path, lineno, parts, attributes):
    """The values of one dense row; on failure, the value that does not parse is named."""
    try:
        return np.array(parts, dtype=np.float64)
    except ValueError:
        return np.array([_parse_number(path, lineno, j, part, attributes)
                         for j, part in enumerate(parts)])


def _parse_dense(path, rows, attributes):
    """The (n, n_attributes) float matrix and the line of each row of a dense ARFF file."""
    n_attr = len(attributes)
    values, line_of = [], []
    for lineno, text in rows:
        parts = text.split(",")
        if len(parts) != n_attr:
            raise DataError(f"{path}: line {lineno}: {len(parts)} values where the header "
                            f"declares {n_attr} attributes"
                            + (" (the row is incomplete: is the file truncated?)"
                               if len(parts) < n_attr else ""))
        values.append(_dense_row(path, lineno, parts, attributes))
        line_of.append(lineno)
    return np.vstack(values), np.array(line_of)


def _sparse_entry(path, lineno, entry, attributes):
    """One ``index value`` entry of a sparse row."""
    n_attr = len(attributes)
    parts = entry.split()
    if len(parts) != 2:
        raise DataError(f"{path}: line {lineno}: malformed sparse entry {entry.strip()!r}; "
                        f"expected 'index value'")
    try:
        j = int(parts[0])
    except ValueError:
        raise DataError(f"{path}: line {lineno}: sparse index {parts[0]!r} is not an "
                        f"integer") from None
    if not 0 <= j < n_attr:
        raise DataError(f"{path}: line {lineno}: sparse index {j} is out of range: the header "
                        f"declares {n_attr} attributes (indices 0..{n_attr - 1})")
    return j, _parse_number(path, lineno, j, parts[1], attributes)


def _parse_sparse_row(path, lineno, text, attributes):
    """The (attribute indices, values) of one ``{index value, ...}`` row."""
    if not text.startswith("{"):
        raise DataError(f"{path}: line {lineno}: dense row in a sparse ARFF file")
    if not text.endswith("}"):
        raise DataError(f"{path}: line {lineno}: sparse row is cut mid-row (no closing '}}'): "
                        f"is the file truncated?")
    inner = text[1:-1].strip()
    entries = [_sparse_entry(path, lineno, e, attributes) for e in inner.split(",")] \
        if inner else []
    cols = [j for j, _ in entries]
    if any(b <= a for a, b in zip(cols, cols[1:])):
        raise DataError(f"{path}: line {lineno}: sparse indices are not strictly increasing")
    return cols, [v for _, v in entries]


def _parse_sparse(path, rows, attributes):
    """COO triplets (row, attribute, value) and the line of each row of a sparse ARFF file."""
    row_ids, cols, vals, line_of = [], [], [], []
    for r, (lineno, text) in enumerate(rows):
        c, v = _parse_sparse_row(path, lineno, text, attributes)
        row_ids.extend([r] * len(c))
        cols.extend(c)
        vals.extend(v)
        line_of.append(lineno)
    return (np.array(row_ids, dtype=np.int64), np.array(cols, dtype=np.int64),
            np.array(vals, dtype=np.float64), np.array(line_of))


def _check_values(path, rows, cols, vals, line_of, attributes, layout):
    """Refuse NaN/infinite values and values outside {0,1} in labels and binary features."""
    bad = ~np.isfinite(vals)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise DataError(f"{path}: line {line_of[rows[k]]}: attribute "
                        f"{attributes[cols[k]].name!r} is {vals[k]}; NaN and infinite values "
                        f"are not supported")
    bad = layout.binary[cols] & (vals != 0) & (vals != 1)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        what = "label" if layout.label_col[cols[k]] >= 0 else "binary feature"
        raise DataError(f"{path}: line {line_of[rows[k]]}: {what} "
                        f"{attributes[cols[k]].name!r} has value {vals[k]:g}, outside {{0,1}}")


def _sparse_to_xy(path, n, triplets, attributes, layout):
    """CSR features and dense int8 labels from sparse-row COO triplets."""
    rows, cols, vals, line_of = triplets
    _check_values(path, rows, cols, vals, line_of, attributes, layout)
    feat = layout.feature_col[cols] >= 0
    X = sp.csr_matrix((vals[feat], (rows[feat], layout.feature_col[cols[feat]])),
                      shape=(n, len(layout.features)))
    X.eliminate_zeros()
    Y = np.zeros((n, len(layout.labels)), dtype=np.int8)
    Y[rows[~feat], layout.label_col[cols[~feat]]] = vals[~feat]
    return X, Y


def _dense_to_xy(path, values, line_of, attributes, layout):
    """Dense features and int8 labels from a dense value matrix."""
    suspect = ~np.isfinite(values) | (layout.binary & (values != 0) & (values != 1))
    rows, cols = np.nonzero(suspect)
    _check_values(path, rows, cols, values[rows, cols], line_of, attributes, layout)
    X = values[:, layout.feature_col >= 0]
    Y = values[:, layout.label_col >= 0].astype(np.int8)
    return X, Y


def read_mulan_arff(path, xml=None, *, name=None):
    """Read a Mulan ARFF file (dense, sparse or gzipped) and its XML label list.

    Parameters
    ----------
    path : str or os.PathLike
        The ARFF file; gzip-compressed files are recognised by their content.
    xml : str or os.PathLike, optional
        The XML label file. By default it is found beside ``path`` by the Mulan naming
        convention (:func:`find_label_xml`).
    name : str, optional
        The container's name; by default the file name without its extensions.

    Returns
    -------
    MultiLabelDataset
        X is a dense float64 array for dense ARFF and a CSR matrix for sparse ARFF (it is
        never densified); Y is dense int8. ``synthetic=False``.

    Raises
    ------
    DataError
        Naming the file and line: a label of the XML file missing from the ARFF header, a
        truncated file (missing ``@data``, a row with too few values, a sparse row cut
        mid-row), a sparse index out of range, a non-numeric value of a numeric attribute,
        a label value outside {0,1}, a nominal (non-binary) feature, a missing ``?`` or a
        NaN value.
    """
    path = Path(path)
    xml_path = Path(xml) if xml is not None else find_label_xml(path)
    lines = read_lines(path)
    attributes, data_line = _parse_header(path, lines)
    layout = _layout(path, attributes, read_label_xml(xml_path), xml_path)
    rows = list(_data_rows(lines, data_line))
    if not rows:
        raise DataError(f"{path}: no data rows after @data (line {data_line + 1})")
    if rows[0][1].startswith("{"):
        triplets = _parse_sparse(path, rows, attributes)
        X, Y = _sparse_to_xy(path, len(rows), triplets, attributes, layout)
    else:
        values, line_of = _parse_dense(path, rows, attributes)
        X, Y = _dense_to_xy(path, values, line_of, attributes, layout)
    logger.info("read %s: %d examples, %d features, %d labels (%s)", path, X.shape[0],
                X.shape[1], Y.shape[1], "sparse" if sp.issparse(X) else "dense")
    return _container(path, xml_path, X, Y, layout.labels, layout.features, name)


def _container(path, xml_path, X, Y, label_names, feature_names, name):
    """A MultiLabelDataset for a user's Mulan file, with the files' checksums."""
    stem = re.sub(r"(\.arff|\.mat)?(\.gz)?$", "", path.name, flags=re.IGNORECASE)
    return MultiLabelDataset(
        name=name or stem, X=X, Y=Y, label_names=label_names, feature_names=feature_names,
        source=f"Mulan file {path} (labels from {xml_path.name})", synthetic=False,
        checksums={p.name: sha256sum(p) for p in (path, xml_path)},
    )


# -- .mat layout -------------------------------------------------------------------------------

def _mat_variable(path, mat, key, ndim=2):
    """A required 2-D variable of a loaded ``.mat`` file."""
    if key not in mat:
        found = sorted(k for k in mat if not k.startswith("__"))
        raise DataError(f"{path}: no variable {key!r} (found: {', '.join(found) or 'none'}); "
                        f"expected 'data' (n x d) and 'target' (L x n)")
    value = mat[key]
    if value.ndim != ndim:
        raise DataError(f"{path}: {key!r} has {value.ndim} dimensions, expected {ndim}")
    return value


def read_mulan_mat(path, xml, *, name=None):
    """Read the MATLAB layout of a Mulan data set: ``data`` (n x d), ``target`` (L x n).

    This is the layout of the MLC_toolbox copies (e.g. ``corel16k1.mat``). The file has no
    label names; they are read from the Mulan XML label file, whose order is the order of
    the rows of ``target``.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.mat`` file (MATLAB v5, read with :func:`scipy.io.loadmat`).
    xml : str or os.PathLike
        The XML label file.
    name : str, optional
        The container's name; by default the file name without its extension.

    Returns
    -------
    MultiLabelDataset
        X as stored (dense float64, or CSR when ``data`` is stored sparse); Y = ``target.T``
        as dense int8.

    Raises
    ------
    DataError
        When a variable is missing, the shapes disagree with each other or with the number
        of XML labels, ``target`` has a value outside {0,1}, or ``data`` is not finite.
    """
    path, xml_path = Path(path), Path(xml)
    try:
        mat = scipy.io.loadmat(path)
    except (ValueError, OSError) as exc:
        raise DataError(f"{path}: cannot read it as a MATLAB file ({exc})") from None
    data, target = _mat_variable(path, mat, "data"), _mat_variable(path, mat, "target")
    labels = read_label_xml(xml_path)
    n = data.shape[0]
    if target.shape != (len(labels), n):
        raise DataError(f"{path}: 'target' has shape {target.shape}, expected (L, n) = "
                        f"({len(labels)}, {n}): {len(labels)} labels in {xml_path.name} and "
                        f"{n} rows of 'data'")
    Y = _mat_labels(path, target)
    X = data.astype(np.float64).tocsr() if sp.issparse(data) else data.astype(np.float64)
    finite = X.data if sp.issparse(X) else X
    if not np.isfinite(finite).all():
        raise DataError(f"{path}: 'data' holds NaN or infinite values, which are not supported")
    features = [f"Att{j + 1}" for j in range(X.shape[1])]
    return _container(path, xml_path, X, Y, [label for label, _ in labels], features, name)


def _mat_labels(path, target):
    """``target`` (L x n, 0/1) as a dense int8 (n, L) matrix."""
    target = target.toarray() if sp.issparse(target) else np.asarray(target)
    bad = (target != 0) & (target != 1)
    if bad.any():
        label, example = np.argwhere(bad)[0]
        raise DataError(f"{path}: 'target' has value {target[label, example]} (label row "
                        f"{label}, example {example}), outside {{0,1}}")
    return np.ascontiguousarray(target.T, dtype=np.int8)


def read_mulan(path, xml=None, *, name=None):
    """Read a Mulan data set: an ARFF file (dense, sparse, gzipped) or a ``.mat`` file.

    Parameters
    ----------
    path : str or os.PathLike
        ``.mat`` files are read with :func:`read_mulan_mat`, anything else with
        :func:`read_mulan_arff`.
    xml : str or os.PathLike, optional
        The XML label file; required for ``.mat`` files, found by the Mulan naming
        convention for ARFF files when omitted.
    name : str, optional
        The container's name.

    Returns
    -------
    MultiLabelDataset
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file" + (" (it is a folder)" if path.is_dir() else "")
                        + "; give the path of a Mulan .arff, .arff.gz or .mat file")
    if xml is not None and not Path(xml).is_file():
        raise DataError(f"{xml}: no such Mulan label XML file; give its path as xml=..., or "
                        "leave xml out to find it beside the ARFF file")
    if path.suffix.lower() == ".mat":
        if xml is None:
            raise DataError(f"{path}: a .mat file has no label names; pass the Mulan XML "
                            f"label file as xml=...")
        return read_mulan_mat(path, xml, name=name)
    return read_mulan_arff(path, xml, name=name)


FORMATS.register("mulan", read_mulan,
                 summary="Mulan multi-label ARFF (dense, sparse, .gz) + XML labels, or .mat")

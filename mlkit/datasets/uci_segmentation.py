"""``uci-segmentation``: UCI Image Segmentation as a two-view set (shape/edge and colour).

UCI ML Repository dataset #50 (Brodley, Vision Group, UMass 1990; CC BY 4.0): 2310 3x3
regions of 7 outdoor images, 330 per class (brickface, sky, foliage, cement, window, path,
grass), with 19 continuous attributes in two natural groups (``shared/data/multiview/
README.md``): region shape and edge statistics (attributes 1-9; attribute 3,
REGION-PIXEL-COUNT, is the constant 9) and colour means (attributes 10-19).

The UCI files ``segmentation.data`` (210 rows) and ``segmentation.test`` (2100 rows) are
comma-separated text: lines starting ``;;;`` are comments, one header line names the
attributes, then ``CLASS,v1,...,v19`` per region. :func:`read_uci_segmentation` parses one
such file; the loader joins both, keeping UCI's predefined split in ``splits``.
"""

from dataclasses import replace
from pathlib import Path

import numpy as np

from .._errors import DataError
from ._containers import MultiViewDataset, with_test_part
from ._fetch import RemoteFile, fetch
from .catalog import register_dataset
from .mat_views import MVCounts, _check_counts

__all__ = ["read_uci_segmentation", "load_uci_segmentation", "SEGMENTATION_CLASSES",
           "SEGMENTATION_VIEWS", "SEGMENTATION_COUNTS"]

#: The classes in the order of the UCI ``.names`` file; label c is the c-th.
SEGMENTATION_CLASSES = ("BRICKFACE", "SKY", "FOLIAGE", "CEMENT", "WINDOW", "PATH", "GRASS")
#: The two attribute groups: (name, first column, end column), 0-based over the 19 attributes.
SEGMENTATION_VIEWS = (("shape-edge", 0, 9), ("colour", 9, 19))
_N_ATTRIBUTES = 19

_URL = ("https://raw.githubusercontent.com/newtonlb/ProjetoAM/"
        "0ec4ab9d39f10362448a519804dfe3fc2e7d908f/")
_TRAIN = RemoteFile("multiview/uci_segmentation/segmentation.data",
                    "b4226a708f25d44fbbe4eae36f0d66326bc46393534c2a0d2b9267ae1302002f",
                    _URL + "segmentation.data")
_TEST = RemoteFile("multiview/uci_segmentation/segmentation.test",
                   "3b5aa7c3559fdc3a165e97d321809b81292084adfc112645e250d90321203685",
                   _URL + "segmentation.test")

#: The counts verified in ``shared/data/multiview/README.md``.
SEGMENTATION_COUNTS = MVCounts(2310, (9, 10), (330,) * 7)


def _error(path, what):
    return DataError(f"{path}: {what}")


def read_uci_segmentation(path, *, name=None):
    """Read one UCI Image Segmentation file (``segmentation.data`` or ``.test``).

    Parameters
    ----------
    path : str or os.PathLike
    name : str, optional
        The dataset name (default: the file name).

    Returns
    -------
    MultiViewDataset
        Views ``[shape-edge (n, 9), colour (n, 10)]`` (float64), ``y`` 0-based in the order
        of :data:`SEGMENTATION_CLASSES`, ``class_names`` lower-case class names.

    Raises
    ------
    DataError
        A missing file, no header line, a row without 1 + 19 fields, an unknown class, a
        value that is not a finite number, or no data rows; the message names the line.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise _error(path, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _error(path, f"not a readable ASCII text file: {exc}") from None
    code = {c: k for k, c in enumerate(SEGMENTATION_CLASSES)}
    header, rows, labels = None, [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith(";"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if header is None:
            if len(fields) != _N_ATTRIBUTES:
                raise _error(path, f"line {lineno}: expected a header of {_N_ATTRIBUTES} "
                                   f"attribute names, got {len(fields)} fields")
            header = fields
            continue
        if len(fields) != 1 + _N_ATTRIBUTES:
            raise _error(path, f"line {lineno}: expected CLASS and {_N_ATTRIBUTES} values, "
                               f"got {len(fields)} fields")
        if fields[0].upper() not in code:
            raise _error(path, f"line {lineno}: unknown class {fields[0]!r} (expected one of "
                               f"{', '.join(SEGMENTATION_CLASSES)})")
        try:
            values = [float(f) for f in fields[1:]]
        except ValueError:
            raise _error(path, f"line {lineno}: a value is not a number") from None
        if not np.isfinite(values).all():
            raise _error(path, f"line {lineno}: a value is NaN or infinite")
        rows.append(values)
        labels.append(code[fields[0].upper()])
    if not rows:
        raise _error(path, "no data rows")
    X = np.asarray(rows, dtype=np.float64)
    return MultiViewDataset(
        name=name or path.name,
        views=[np.ascontiguousarray(X[:, a:b]) for _, a, b in SEGMENTATION_VIEWS],
        view_names=[v for v, _, _ in SEGMENTATION_VIEWS], y=np.asarray(labels, dtype=np.int64),
        class_names=[c.lower() for c in SEGMENTATION_CLASSES], source=str(path),
        synthetic=False)


def load_uci_segmentation(*, data_home=None):
    """UCI Image Segmentation: 2310 regions, 7 classes x 330, views shape-edge (9-D,
    attributes 1-9, attribute 3 constant) and colour (10-D, attributes 10-19).

    Rows are ``segmentation.data`` (210, 30 per class) then ``segmentation.test`` (2100,
    300 per class); ``splits`` holds that predefined train/test split.

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiViewDataset
    """
    train = read_uci_segmentation(fetch(_TRAIN, data_home), name="uci-segmentation")
    test = read_uci_segmentation(fetch(_TEST, data_home), name="uci-segmentation")
    data = with_test_part(train, test)
    data = replace(data, name="uci-segmentation", descr=load_uci_segmentation.__doc__,
                   source="UCI Image Segmentation #50 (Brodley 1990, CC BY 4.0), "
                          "segmentation.{data,test} of newtonlb/ProjetoAM@0ec4ab9",
                   checksums={_TRAIN.path: _TRAIN.sha256, _TEST.path: _TEST.sha256},
                   synthetic=False)
    return _check_counts(data, SEGMENTATION_COUNTS)


register_dataset("uci-segmentation", load_uci_segmentation, kind="multi-view", synthetic=False,
                 summary="UCI Image Segmentation: 2310 regions, 7 classes x 330, 2 views "
                         "(shape/edge 9-D, colour 10-D)",
                 files=[_TRAIN, _TEST], paper="hfss", counts=SEGMENTATION_COUNTS)

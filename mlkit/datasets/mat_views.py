"""Multi-view MATLAB v5 files (format ``mat-views``) and the real multi-view catalog.

The reader takes the layout shared by the public multi-view collections
(``shared/data/multiview/README.md``): a cell array ``X`` with one N x d_v matrix per view
(the cell may be (V, 1) or (1, V)), labels ``y`` or ``Y`` as 1-based class ids (returned
0-based) and, optionally, a cell of strings ``view_names`` or ``names``. Every malformed file
raises one :class:`~mlkit._errors.DataError` line naming the file and what is wrong.

A second layout, one view per file (:func:`read_mat_view_files`), reads several ``.mat``
files that each hold one N x d matrix, with labels from the row order (``rows_per_class``
consecutive rows per class), as in the Corel MPEG-7 descriptor files.

The catalog registers real sets (``synthetic=False``, kind "multi-view"), fetched by
SHA-256 and checked against the counts published in the data README: ``mfeat``,
``msrc-v1``, ``scene15``, ``leaves100`` (with a seeded class subset, ``n_classes``),
``wikipedia``, ``corel1k-mpeg7`` and ``corel10k-mpeg7``.
"""

import logging
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import scipy.io as sio

from .._errors import DataError
from ..registry import FORMATS
from ._containers import MultiViewDataset
from ._fetch import RemoteFile, fetch
from .catalog import register_dataset

__all__ = ["read_mat_views", "read_mat_view_files", "load_mfeat", "load_msrc_v1",
           "load_scene15", "load_leaves100", "load_wikipedia", "load_corel1k_mpeg7",
           "load_corel10k_mpeg7", "MV_COUNTS", "MVCounts"]

logger = logging.getLogger(__name__)

_LABEL_KEYS = ("y", "Y")
_NAME_KEYS = ("view_names", "names")


def _error(path, what):
    return DataError(f"{path}: {what}")


def _loadmat(path):
    try:
        return sio.loadmat(str(path))
    except FileNotFoundError:
        raise _error(path, "no such file") from None
    except Exception as exc:  # scipy raises ValueError, TypeError, OSError, MatReadError ...
        detail = str(exc).strip().split("\n")[0] or type(exc).__name__
        raise _error(path, f"not a readable MATLAB v5 file (truncated or corrupt?): "
                           f"{detail}") from None


def _cell_strings(cell, path, key):
    """The strings of a MATLAB cell (or char matrix) of view names."""
    arr = np.asarray(cell)
    if arr.dtype.kind == "U":      # a char matrix: one name per row
        return [str(s).strip() for s in arr.ravel()]
    if arr.dtype != object:
        raise _error(path, f"variable {key!r} must be a cell array of strings, got a "
                           f"{arr.dtype} array")
    names = []
    for item in arr.ravel():
        item = np.asarray(item)
        if item.dtype.kind != "U" or item.size > 1:
            raise _error(path, f"variable {key!r} must be a cell array of strings; an entry "
                               f"is a {item.dtype} array of shape {item.shape}")
        names.append(str(item.ravel()[0]) if item.size else "")
    return names


def read_mat_views(path, *, view_names=None, name=None):
    """Read a multi-view MATLAB v5 file: cell ``X`` of per-view matrices, labels ``y``/``Y``.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.mat`` file (MATLAB v5, as written by MATLAB ``save`` or ``scipy.io.savemat``).
    view_names : list of str, optional
        Names of the views; by default the file's ``view_names`` or ``names`` cell, else
        "view 1", "view 2", ...
    name : str, optional
        The dataset name (default: the file name without extension).

    Returns
    -------
    MultiViewDataset
        Float64 views (rows = samples), ``y`` 0-based int64 (file id - 1), ``class_names``
        the file's ids as strings ("1", "2", ...).

    Raises
    ------
    DataError
        An unreadable or truncated file, no cell ``X``, a view that is not a 2-D numeric
        matrix or holds NaN/infinity, views with different numbers of rows, no labels, a
        label count different from the rows, or labels that are not integers >= 1.
    """
    path = Path(path)
    m = _loadmat(path)
    if "X" not in m:
        found = sorted(k for k in m if not k.startswith("__"))
        raise _error(path, f"no variable 'X' (the cell array of views); found {found}")
    cell = m["X"]
    if not isinstance(cell, np.ndarray) or cell.dtype != object:
        raise _error(path, f"'X' must be a cell array with one matrix per view, got a "
                           f"{getattr(cell, 'dtype', type(cell).__name__)} array of shape "
                           f"{getattr(cell, 'shape', '?')}")
    if cell.ndim != 2 or min(cell.shape) != 1 or cell.size == 0:
        raise _error(path, f"'X' must be a (V, 1) or (1, V) cell array, got shape {cell.shape}")
    views = []
    for v, X in enumerate(cell.ravel()):
        X = np.asarray(X)
        if X.ndim != 2 or X.dtype.kind not in "biuf" or X.size == 0:
            raise _error(path, f"view {v} of 'X' must be a non-empty 2-D numeric matrix, got a "
                               f"{X.dtype} array of shape {X.shape}")
        X = X.astype(np.float64)
        if not np.isfinite(X).all():
            raise _error(path, f"view {v} of 'X' contains NaN or infinity")
        views.append(X)
    rows = [X.shape[0] for X in views]
    if len(set(rows)) != 1:
        raise _error(path, f"the views have different numbers of rows {rows}; every view must "
                           "describe the same samples")
    key = next((k for k in _LABEL_KEYS if k in m), None)
    if key is None:
        raise _error(path, "no labels: the file has neither 'y' nor 'Y'")
    y = np.asarray(m[key])
    if y.dtype.kind not in "biuf" or y.ndim > 2 or (y.ndim == 2 and min(y.shape) > 1):
        raise _error(path, f"labels {key!r} must be a numeric vector, got a {y.dtype} array of "
                           f"shape {y.shape}")
    y = y.ravel()
    if len(y) != rows[0]:
        raise _error(path, f"{len(y)} labels in {key!r} for {rows[0]} samples (rows of the views)")
    if not np.isfinite(y.astype(float)).all() or np.any(y != np.round(y)) or y.min() < 1:
        raise _error(path, f"labels {key!r} must be 1-based integer class ids (1..C)")
    y = y.astype(np.int64) - 1
    if view_names is None:
        nkey = next((k for k in _NAME_KEYS if k in m), None)
        view_names = _cell_strings(m[nkey], path, nkey) if nkey else None
    if view_names is not None and len(view_names) != len(views):
        raise _error(path, f"{len(view_names)} view names for {len(views)} views")
    n_classes = int(y.max()) + 1
    return MultiViewDataset(
        name=name or path.stem, views=views, view_names=view_names, y=y,
        class_names=[str(c + 1) for c in range(n_classes)], source=str(path), synthetic=False)


def read_mat_view_files(paths, *, rows_per_class, view_names=None, name=None):
    """Read one view per MATLAB v5 file; labels from the row order.

    Each file holds exactly one variable, an N x d numeric matrix (rows = samples); the
    files must agree on N. The samples are sorted by class in contiguous blocks of
    ``rows_per_class`` rows, so the label of row i is ``i // rows_per_class``.

    Parameters
    ----------
    paths : list of str or os.PathLike
        One ``.mat`` file per view, in view order.
    rows_per_class : int
    view_names : list of str, optional
        Default: each file's variable name.
    name : str, optional
        The dataset name (default: the first file's parent folder name).

    Returns
    -------
    MultiViewDataset
        Float64 views, ``y`` 0-based int64, ``class_names`` "1".."C".

    Raises
    ------
    DataError
        An unreadable file, a file without exactly one variable, a variable that is not a
        non-empty 2-D numeric matrix or holds NaN/infinity, files with different numbers of
        rows, or a row count that is not a multiple of ``rows_per_class``.
    """
    paths = [Path(p) for p in paths]
    if not paths:
        raise DataError("read_mat_view_files: no files given")
    rows_per_class = int(rows_per_class)
    if rows_per_class < 1:
        raise DataError(f"read_mat_view_files: rows_per_class must be >= 1, got {rows_per_class}")
    views, keys = [], []
    for path in paths:
        m = _loadmat(path)
        found = sorted(k for k in m if not k.startswith("__"))
        if len(found) != 1:
            raise _error(path, f"expected exactly one variable (the N x d view), found {found}")
        X = np.asarray(m[found[0]])
        if X.ndim != 2 or X.dtype.kind not in "biuf" or X.size == 0:
            raise _error(path, f"variable {found[0]!r} must be a non-empty 2-D numeric matrix, "
                               f"got a {X.dtype} array of shape {X.shape}")
        X = X.astype(np.float64)
        if not np.isfinite(X).all():
            raise _error(path, f"variable {found[0]!r} contains NaN or infinity")
        views.append(X)
        keys.append(found[0])
    rows = [X.shape[0] for X in views]
    if len(set(rows)) != 1:
        raise DataError(f"{paths[0].parent}: the view files have different numbers of rows "
                        f"{rows}; every view must describe the same samples")
    if rows[0] % rows_per_class:
        raise DataError(f"{paths[0].parent}: {rows[0]} rows is not a multiple of "
                        f"rows_per_class={rows_per_class}")
    if view_names is not None and len(view_names) != len(views):
        raise DataError(f"{paths[0].parent}: {len(view_names)} view names for "
                        f"{len(views)} views")
    y = np.arange(rows[0], dtype=np.int64) // rows_per_class
    n_classes = rows[0] // rows_per_class
    return MultiViewDataset(
        name=name or paths[0].parent.name, views=views,
        view_names=list(view_names) if view_names is not None else keys, y=y,
        class_names=[str(c + 1) for c in range(n_classes)],
        source="; ".join(str(p) for p in paths), synthetic=False)


# -- the catalog -----------------------------------------------------------------------------
_CZ = "https://github.com/ChuanbinZhang/Multi-view-datasets"
_COMPLETER = "https://github.com/XLearning-SCU/2021-CVPR-Completer"
_MFEAT = RemoteFile("multiview/uci_mfeat/Handwritten.mat",
                    "6092a69891afa22785bffd5a4348f52d49a764aa5d40751ec2c4dc0f6ed48a44",
                    "https://raw.githubusercontent.com/ChuanbinZhang/Multi-view-datasets/"
                    "03ead31e6538322e4e0701c3c28a01595c1a015d/Handwritten.mat")
_MSRC = RemoteFile("multiview/msrc_v1/MSRC-v5.mat",
                   "3b3adfad0b4e484cef1c1ecd64ec887ddde9f7655ed638e2fee1f047ae2c9ff0",
                   "https://raw.githubusercontent.com/ChuanbinZhang/Multi-view-datasets/"
                   "03ead31e6538322e4e0701c3c28a01595c1a015d/MSRC-v5.mat")
_LEAVES = RemoteFile("multiview/leaves100/100Leaves.mat",
                     "4af6d9f6588a720df763580d273dc08014476ac5f64570b0bada8b63b9952f45",
                     "https://raw.githubusercontent.com/ChuanbinZhang/Multi-view-datasets/"
                     "03ead31e6538322e4e0701c3c28a01595c1a015d/100Leaves.mat")
_SCENE = RemoteFile("multiview/scene15/Scene-15.mat",
                    "ec33b5e1f53eea04ccacc8b7bdfc6091ed490b04214eb41fd83c05a0a173221f",
                    "https://raw.githubusercontent.com/XLearning-SCU/2021-CVPR-Completer/"
                    "ad37110046234341dab63b0ed0c862680a69e27a/data/Scene-15.mat")
_WIKI = RemoteFile("multiview/wikipedia/Wiki_fea.mat",
                   "a2c7ef0392f14be20c74ce2e809830d13288009172da8caea26e10e96db0b5e1",
                   "https://raw.githubusercontent.com/UeharaSetsuYu/Multi-view-Datasets/"
                   "03e5a826bd0659e1e5dab71864c81b589fe12f05/Wiki_fea.mat")
_FSECBIR = ("https://raw.githubusercontent.com/anju-j/FSeCBIR/"
            "73d0486700d17cccf99199a1f6b5fc445bf8e9d1/data/dataset/")
#: MPEG-7 descriptors in the README's order: Color Structure, Scalable Color, Color Layout,
#: Edge Histogram, Dominant Color.
COREL_MPEG7_VIEWS = ("CSD", "SCD", "CLD", "EHD", "DCD")
_COREL1K = tuple(RemoteFile(f"multiview/corel_mpeg7/corel1k/{v}_corel1k.mat", sha,
                            f"{_FSECBIR}corel1kfeature/{v}_corel1k.mat")
                 for v, sha in (
    ("csd", "dc4f164fdaa0e454b15a3aa0f7e937d5f0760abd5bed17d11d1a071144ee4da5"),
    ("scd", "3faeb72d4f3088297dd22dc54ccd12d5db3e790fc54563a78e81ac04dfc0df7f"),
    ("cld", "af2f5d0c22b66126cfa5b88016141abda3d252c826f29830b026d3f9f30c1ae9"),
    ("ehd", "c4e0abfe6bfba27b6e058cfd8c558b1104ebfe20611a02e04334c565b973d20a"),
    ("dcd", "e0d5158c983f41ae72a42195267d1689a441d5a809cd3bfc25529ac18858d867")))
_COREL10K = tuple(RemoteFile(f"multiview/corel_mpeg7/corel10k/{v}_entire.mat", sha,
                             f"{_FSECBIR}entire/{v}_entire.mat")
                  for v, sha in (
    ("csd", "5c2cc7a48e399b93bf70d4c006faa40577a38b38ad90ed013b6d5eb73f60e6f2"),
    ("scd", "66b3b2851af7c8beea10c6ab10f2ae12c6f332f363135cb2a804f35e11562956"),
    ("cld", "5e249ba715f732e2aa98117df1c84b68fea542f93c6e44afd2f341270c1b0b55"),
    ("ehd", "e0e2dfd473a0f4f4adfcc7acd64f433f996b114271fa3f714337dc2df50b1f52"),
    ("dcd", "f94c1d59ed8ce589171d40ab822b892454a8184fd7e6d09a8d9ae653453ea0ba")))


@dataclass(frozen=True)
class MVCounts:
    """The published counts of a multi-view set: samples, view dimensions, class sizes."""

    samples: int
    dims: tuple
    class_counts: tuple


#: The counts verified in ``shared/data/multiview/README.md``.
MV_COUNTS = {
    "mfeat": MVCounts(2000, (216, 76, 64, 6, 240, 47), (200,) * 10),
    "msrc-v1": MVCounts(210, (24, 576, 512, 256, 254), (30,) * 7),
    "scene15": MVCounts(4485, (20, 59, 40), (241, 360, 328, 260, 308, 374, 410, 292, 356,
                                              215, 216, 311, 210, 289, 315)),
    "leaves100": MVCounts(1600, (64, 64, 64), (16,) * 100),
    "wikipedia": MVCounts(2866, (128, 10), (172, 360, 340, 333, 267, 236, 237, 185, 285, 451)),
    "corel1k-mpeg7": MVCounts(1000, (128, 128, 120, 80, 58), (100,) * 10),
    "corel10k-mpeg7": MVCounts(10000, (128, 128, 120, 80, 58), (100,) * 100),
}

MFEAT_VIEWS = ("fac", "fou", "kar", "mor", "pix", "zer")
MSRC_VIEWS = ("CM", "HOG", "GIST", "LBP", "CENTRIST")
#: Inferred from the dimensions only (README section 4): not documented by the source.
SCENE15_VIEWS = ("GIST-20 (inferred)", "LBP-59 (inferred)", "PHOG-40 (inferred)")
#: The source repo's README order; unverified (view 1's scale suggests margin, shape, texture).
LEAVES_VIEWS = ("SD (unverified)", "FSM (unverified)", "TH (unverified)")
#: By shape (README): the file's ``view_meaning`` names them the other way round.
WIKIPEDIA_VIEWS = ("image SIFT BoW 128", "text LDA 10")
#: The file's ``class_meaning``, in label order.
WIKIPEDIA_CLASSES = ("art", "biology", "geography", "history", "literature", "media", "music",
                     "royalty", "sport", "warfare")


def _check_counts(data, expected):
    """Raise DataError unless ``data`` has the ``expected`` :class:`MVCounts`."""
    got = MVCounts(len(data.y), tuple(X.shape[1] for X in data.views),
                   tuple(np.bincount(data.y, minlength=len(expected.class_counts)).tolist()))
    wrong = [f"{f}: expected {getattr(expected, f)}, got {getattr(got, f)}"
             for f in ("samples", "dims", "class_counts")
             if getattr(expected, f) != getattr(got, f)]
    if wrong:
        raise DataError(f"{data.name}: the data do not match the published counts "
                        f"({'; '.join(wrong)}); the file may be a different version")
    return data


def _load(name, remote, view_names, class_names, source, descr, data_home):
    path = fetch(remote, data_home)
    data = read_mat_views(path, view_names=list(view_names), name=name)
    data = replace(data, source=source, descr=descr, checksums={remote.path: remote.sha256},
                   class_names=list(class_names), synthetic=False)
    return _check_counts(data, MV_COUNTS[name])


def load_mfeat(*, data_home=None):
    """UCI Multiple Features (mfeat) handwritten digits: 2000 samples, 10 classes, 6 views.

    ``Handwritten.mat`` (ChuanbinZhang/Multi-view-datasets): views fac 216, fou 76, kar 64,
    mor 6, pix 240, zer 47; 200 samples per digit; class c is digit c.

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiViewDataset
    """
    return _load("mfeat", _MFEAT, MFEAT_VIEWS, [str(d) for d in range(10)],
                 "UCI Multiple Features (Duin), Handwritten.mat of ChuanbinZhang/"
                 "Multi-view-datasets", load_mfeat.__doc__, data_home)


def load_msrc_v1(*, data_home=None):
    """MSRC-v1 object images: 210 samples, 7 classes x 30, 5 views (CM, HOG, GIST, LBP,
    CENTRIST).

    The class order of the file is not documented (the usual classes are tree, building,
    airplane, cow, face, car, bicycle), so the classes are named "class 1".."class 7".

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiViewDataset
    """
    return _load("msrc-v1", _MSRC, MSRC_VIEWS, [f"class {c}" for c in range(1, 8)],
                 "MSRC-v1 (Microsoft Research Cambridge), MSRC-v5.mat of ChuanbinZhang/"
                 "Multi-view-datasets", load_msrc_v1.__doc__, data_home)


def load_scene15(*, data_home=None):
    """Scene-15 (Lazebnik et al. 2006): 4485 images, 15 classes, 3 views of dims 20, 59, 40.

    The file (COMPLETER's ``data/Scene-15.mat``) has no feature or class names; the view
    names GIST / LBP / PHOG are inferred from the dimensions and marked so.

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiViewDataset
    """
    return _load("scene15", _SCENE, SCENE15_VIEWS, [f"class {c}" for c in range(1, 16)],
                 "Scene-15 (Lazebnik et al. 2006), Scene-15.mat of XLearning-SCU/"
                 "2021-CVPR-Completer", load_scene15.__doc__, data_home)


def load_leaves100(*, n_classes=None, class_seed=0, data_home=None):
    """One-hundred plant species leaves (Mallah et al. 2013): 1600 samples, 3 views of 64-D.

    With ``n_classes`` an int, a seeded subset of the species is kept: the classes
    ``sorted(numpy.random.default_rng(class_seed).choice(100, n_classes, replace=False))``,
    relabelled 0..n_classes-1 in that order (``class_names`` keep the species numbers).
    The HFSS configs use 19 classes, the paper's count. The view names are the source's and
    unverified (README section 3).

    Parameters
    ----------
    n_classes : int or None, default=None
        None keeps all 100 species.
    class_seed : int, default=0
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiViewDataset
    """
    data = _load("leaves100", _LEAVES, LEAVES_VIEWS, [f"species {c}" for c in range(1, 101)],
                 "UCI 100 plant species leaves (Mallah, Cope, Orwell 2013), 100Leaves.mat of "
                 "ChuanbinZhang/Multi-view-datasets", load_leaves100.__doc__, data_home)
    if n_classes is None:
        return data
    n_classes = int(n_classes)
    if not 2 <= n_classes <= 100:
        raise ValueError(f"leaves100: n_classes must be in 2..100 or None, got {n_classes}")
    chosen = np.sort(np.random.default_rng(class_seed).choice(100, n_classes, replace=False))
    code = np.full(100, -1)
    code[chosen] = np.arange(n_classes)
    rows = np.flatnonzero(code[data.y] >= 0)
    sub = data.subset(rows)
    return replace(sub, y=code[sub.y], class_names=[data.class_names[c] for c in chosen],
                   name=f"leaves100-{n_classes}",
                   source=data.source + f"; {n_classes} species drawn with seed {class_seed}")


def load_wikipedia(*, data_home=None):
    """Wikipedia feature articles (Rasiwasia et al., ACM MM 2010): 2866 samples, 10 classes,
    2 views: image SIFT bag of words (128-D) and text LDA topics (10-D).

    ``Wiki_fea.mat`` of UeharaSetsuYu/Multi-view-Datasets. The view names follow the shapes
    (the file's ``view_meaning`` has them swapped); class names are the file's
    ``class_meaning`` (art .. warfare), classes of 172-451 articles.

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiViewDataset
    """
    return _load("wikipedia", _WIKI, WIKIPEDIA_VIEWS, WIKIPEDIA_CLASSES,
                 "Wikipedia articles (Rasiwasia et al. 2010), Wiki_fea.mat of "
                 "UeharaSetsuYu/Multi-view-Datasets@03e5a82", load_wikipedia.__doc__, data_home)


def _load_corel(name, remotes, n_classes, source, descr, data_home):
    paths = [fetch(r, data_home) for r in remotes]
    data = read_mat_view_files(paths, rows_per_class=100, view_names=list(COREL_MPEG7_VIEWS),
                               name=name)
    data = replace(data, source=source, descr=descr,
                   checksums={r.path: r.sha256 for r in remotes},
                   class_names=[f"category {c}" for c in range(1, n_classes + 1)],
                   synthetic=False)
    return _check_counts(data, MV_COUNTS[name])


def load_corel1k_mpeg7(*, data_home=None):
    """Wang's Corel-1k images with five MPEG-7 descriptors: 1000 samples, 10 categories x 100,
    views CSD 128, SCD 128, CLD 120, EHD 80, DCD 58 (Manjunath et al. 2001).

    One ``.mat`` per descriptor (anju-j/FSeCBIR, MIT); no label variable: rows are sorted by
    category, 100 each, so the label is ``row // 100``. Category names are not in the files.

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiViewDataset
    """
    return _load_corel("corel1k-mpeg7", _COREL1K, 10,
                       "Corel-1k (Wang) MPEG-7 CSD/SCD/CLD/EHD/DCD, "
                       "anju-j/FSeCBIR@73d0486 data/dataset/corel1kfeature",
                       load_corel1k_mpeg7.__doc__, data_home)


def load_corel10k_mpeg7(*, data_home=None):
    """Corel-10k images with five MPEG-7 descriptors: 10000 samples, 100 categories x 100,
    views CSD 128, SCD 128, CLD 120, EHD 80, DCD 58 (Manjunath et al. 2001).

    One ``.mat`` per descriptor (anju-j/FSeCBIR, MIT); labels ``row // 100``.

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiViewDataset
    """
    return _load_corel("corel10k-mpeg7", _COREL10K, 100,
                       "Corel-10k MPEG-7 CSD/SCD/CLD/EHD/DCD, "
                       "anju-j/FSeCBIR@73d0486 data/dataset/entire",
                       load_corel10k_mpeg7.__doc__, data_home)


FORMATS.register("mat-views", read_mat_views,
                 summary="MATLAB v5 multi-view: cell X of N x d_v views, 1-based labels y or Y")


def _register(name, loader, remote, summary):
    files = list(remote) if isinstance(remote, tuple) else [remote]
    register_dataset(name, loader, kind="multi-view", synthetic=False, summary=summary,
                     files=files, paper="hfss", counts=MV_COUNTS[name])


_register("mfeat", load_mfeat, _MFEAT,
          "UCI Multiple Features digits: 2000 samples, 10 classes, 6 views (fac..zer)")
_register("msrc-v1", load_msrc_v1, _MSRC,
          "MSRC-v1 objects: 210 samples, 7 classes, 5 views (CM, HOG, GIST, LBP, CENTRIST)")
_register("scene15", load_scene15, _SCENE,
          "Scene-15: 4485 images, 15 classes, 3 views (20/59/40-D, names inferred)")
_register("leaves100", load_leaves100, _LEAVES,
          "100 plant species leaves: 1600 samples, 3 x 64-D views; n_classes draws a subset")
_register("wikipedia", load_wikipedia, _WIKI,
          "Wikipedia articles (Rasiwasia et al. 2010): 2866 samples, 10 classes, 2 views "
          "(image SIFT BoW 128, text LDA 10)")
_register("corel1k-mpeg7", load_corel1k_mpeg7, _COREL1K,
          "Corel-1k (Wang) with 5 MPEG-7 views (CSD, SCD, CLD, EHD, DCD): 1000 images, "
          "10 classes x 100")
_register("corel10k-mpeg7", load_corel10k_mpeg7, _COREL10K,
          "Corel-10k with 5 MPEG-7 views (CSD, SCD, CLD, EHD, DCD): 10000 images, "
          "100 classes x 100")

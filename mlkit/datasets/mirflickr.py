"""MIR Flickr 25k (Huiskes & Lew 2008) with precomputed features, and the ``mirflickr``
collection of LM3FE.

MIR Flickr 25k is 25,000 Flickr images; the official annotation archive
``mirflickr25k_annotations_v080.zip`` holds one file per concept, ``<concept>.txt`` (the 24
"potential labels") and ``<concept>_r1.txt`` (14 "relevant" variants), each listing the
1-based ids of the images showing the concept, one per line: the 38 concepts of Guillaumin
et al. (2010) and LM3FE. LM3FE (Sec. V-A) names SIFT words, GIST and tags without their
source; mlkit takes (a reconstruction) the features of Guillaumin, Verbeek & Schmid (CVPR
2010): 1000-D dense-SIFT bag of visual words, 512-D GIST and the
457-D binary vector of the tags used at least 50 times. Those features were distributed by
LEAR (INRIA) in the binary "vec" formats of their TagProp data (read by LEAR's
``vec_read.m``: every record is a dimension header followed by that many values;
``.fvec`` uint32 + float32, ``.hvecs`` uint16 + uint16, ``.hvecs32`` uint32 + uint32,
``.dvec`` uint32 + float64, little-endian), file stems ``DenseSift``, ``Gist``, ...
The tags come with the images (``mirflickr25k.zip``): ``mirflickr/meta/tags/tags<i>.txt``
(the processed tags of image i, one per line) and ``mirflickr/doc/common_tags.txt``
(``tag count`` per line, most frequent first).

Layout read here (one documented layout)::

    FOLDER/
      annotations/<concept>.txt       1-based image ids, one per line (official archive;
                                      README.txt there is ignored)
      features/<View>.<ext>           one record per image, in image order 1..n:
                                      ext .txt/.dat (whitespace-separated text, one image
                                      per line) or .fvec/.hvecs/.hvecs32/.dvec (LEAR vec)
      mirflickr/meta/tags/tags<i>.txt and mirflickr/doc/common_tags.txt
                                      (official image archive; used for the view "tags"
                                      when no features/tags.<ext> exists)

The view "tags" is the 0/1 indicator of the tags listed in ``common_tags.txt`` with a
count of at least ``min_tag_count`` (50: Guillaumin et al.'s 457 tags), in that file's
order. Every malformed file raises :class:`~mlkit._errors.DataError` naming the file and
the line (or the record): ragged rows, non-numeric values, a truncated binary file, an
image id outside 1..n, feature files with different numbers of images, a missing file.

References
----------
.. [1] M. J. Huiskes, M. S. Lew, "The MIR Flickr retrieval evaluation", ACM MIR 2008.
.. [2] M. Guillaumin, J. Verbeek, C. Schmid, "Multimodal semi-supervised learning for image
   classification", CVPR 2010.
.. [3] Y. Luo, Y. Wen, D. Tao, J. Gui, C. Xu, "Large margin multi-modal multi-task feature
   extraction for image classification", IEEE Trans. Image Process. 25(1):414-427, 2016.
"""

from pathlib import Path

import numpy as np

from .._errors import DataError
from ..registry import FORMATS
from ._containers import MultiViewDataset
from ._fetch import get_data_home
from .catalog import register_dataset
from ._text import read_lines
from .nuswide import _error, _parse_rows, read_feature_matrix

__all__ = ["read_mir_flickr", "load_mirflickr", "read_vec", "MIRFLICKR_CONCEPTS",
           "MIRFLICKR_VIEWS"]

#: The 38 concepts of MIR Flickr 25k (annotation file names): 24 potential labels and the
#: 14 "_r1" (relevant) variants.
MIRFLICKR_CONCEPTS = (
    "animals", "baby", "baby_r1", "bird", "bird_r1", "car", "car_r1", "clouds", "clouds_r1",
    "dog", "dog_r1", "female", "female_r1", "flower", "flower_r1", "food", "indoor", "lake",
    "male", "male_r1", "night", "night_r1", "people", "people_r1", "plant_life", "portrait",
    "portrait_r1", "river", "river_r1", "sea", "sea_r1", "sky", "structures", "sunset",
    "transport", "tree", "tree_r1", "water",
)
#: LM3FE's views (Guillaumin et al. 2010 features) and their expected dimensions.
MIRFLICKR_VIEWS = {"DenseSift": 1000, "Gist": 512, "tags": 457}
_N_IMAGES = 25000
_TEXT_EXT = (".txt", ".dat")
#: LEAR vec extensions -> (header dtype, data dtype), as in LEAR's vec_read.m.
_VEC_EXT = {".fvec": ("<u4", "<f4"), ".fvecs": ("<u4", "<f4"),
            ".dvec": ("<u4", "<f8"), ".dvecs": ("<u4", "<f8"),
            ".hvec": ("<u2", "<u2"), ".hvecs": ("<u2", "<u2"),
            ".hvec32": ("<u4", "<u4"), ".hvecs32": ("<u4", "<u4")}
_MIR_HOME = "https://press.liacs.nl/mirflickr/"


def read_vec(path):
    """A LEAR "vec" binary file (``.fvec``, ``.hvecs``, ``.hvecs32``, ``.dvec``) as float64.

    Every record is a dimension d (header type) followed by d values (data type); all
    records must have the dimension of the first one.

    Raises
    ------
    DataError
        An unknown extension, an empty or truncated file (its size is not a multiple of the
        record size), a record with another dimension (named by its 1-based number).
    """
    path = Path(path)
    ext = path.suffix.lower()
    if ext not in _VEC_EXT:
        raise _error(path, None, f"unknown vec extension {ext!r} (one of "
                                 f"{', '.join(sorted(_VEC_EXT))})")
    head, data = (np.dtype(t) for t in _VEC_EXT[ext])
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise _error(path, None, "missing") from None
    if len(raw) < head.itemsize:
        raise _error(path, None, "the file is empty")
    d = int(np.frombuffer(raw, dtype=head, count=1)[0])
    record = np.dtype([("d", head), ("v", data, (d,))])
    if d == 0 or len(raw) % record.itemsize:
        raise _error(path, None, f"{len(raw)} bytes is not a whole number of records of "
                                 f"dimension {d} ({record.itemsize} bytes each): truncated "
                                 "or not a vec file")
    recs = np.frombuffer(raw, dtype=record)
    bad = np.flatnonzero(recs["d"] != d)
    if bad.size:
        raise _error(path, None, f"record {bad[0] + 1} declares dimension "
                                 f"{recs['d'][bad[0]]}, record 1 declares {d}")
    values = recs["v"].astype(np.float64)
    if not np.isfinite(values).all():
        i = int(np.flatnonzero(~np.isfinite(values).all(axis=1))[0])
        raise _error(path, None, f"record {i + 1} holds a NaN or infinite value")
    return values


def _view_file(root, view):
    """The file of ``view`` under features/, or None."""
    for ext in _TEXT_EXT + tuple(_VEC_EXT):
        f = root / "features" / f"{view}{ext}"
        if f.is_file():
            return f
    return None


def _read_view(path, n_images):
    X = read_vec(path) if path.suffix.lower() in _VEC_EXT else read_feature_matrix(path)
    if n_images is not None and X.shape[0] != n_images:
        unit = "records" if path.suffix.lower() in _VEC_EXT else "lines"
        raise _error(path, None, f"{X.shape[0]} {unit}, expected {n_images} (one per image)")
    return X


def _tag_vocabulary(path, min_count):
    """The tags of ``common_tags.txt`` (``tag count`` per line) used >= min_count times."""
    lines = read_lines(path)
    tags, counts = [], []
    for i, line in enumerate(lines, 1):
        fields = line.split()
        if len(fields) != 2:
            raise _error(path, i, f"{len(fields)} fields, expected 'tag count'")
        try:
            counts.append(int(fields[1]))
        except ValueError:
            raise _error(path, i, f"count {fields[1]!r} is not an integer") from None
        tags.append(fields[0])
    return [t for t, c in zip(tags, counts) if c >= min_count]


def _read_tags(root, n_images, min_count):
    """The 0/1 tag matrix from the official per-image tag files."""
    vocab_file = root / "mirflickr" / "doc" / "common_tags.txt"
    vocab = _tag_vocabulary(vocab_file, min_count)
    if not vocab:
        raise _error(vocab_file, None, f"no tag is used at least {min_count} times")
    index = {t: j for j, t in enumerate(vocab)}
    folder = root / "mirflickr" / "meta" / "tags"
    X = np.zeros((n_images, len(vocab)))
    for i in range(n_images):
        f = folder / f"tags{i + 1}.txt"
        try:
            words = f.read_text(encoding="utf-8").split()
        except FileNotFoundError:
            raise _error(f, None, f"missing (one tag file per image, tags1.txt .. "
                                  f"tags{n_images}.txt)") from None
        except UnicodeDecodeError:
            raise _error(f, None, "not UTF-8 text") from None
        cols = [index[w] for w in words if w in index]
        X[i, cols] = 1.0
    return X


def _read_annotation(path, n_images):
    """The 0-based rows listed (1-based) in an annotation file."""
    lines = read_lines(path)
    ids = _parse_rows(lines, np.arange(1, len(lines) + 1), 1, path)[:, 0]
    bad = np.flatnonzero((ids != np.round(ids)) | (ids < 1) | (ids > n_images))
    if bad.size:
        raise _error(path, int(bad[0]) + 1, f"image id {lines[bad[0]].strip()!r} is not an "
                                            f"integer in 1..{n_images}")
    return ids.astype(np.int64) - 1


def _missing(root, views, concepts, what):
    """One line naming the files that are missing and where they go."""
    need = [f"features/{v}.<txt|fvec|hvecs|hvecs32>" for v in views
            if v != "tags" and _view_file(root, v) is None]
    if "tags" in views and _view_file(root, "tags") is None and not (
            (root / "mirflickr" / "doc" / "common_tags.txt").is_file()
            and (root / "mirflickr" / "meta" / "tags").is_dir()):
        need.append("mirflickr/meta/tags/tags<i>.txt and mirflickr/doc/common_tags.txt "
                    "(or features/tags.<ext>)")
    if concepts is None:
        need.append("annotations/<concept>.txt")
    else:
        absent = [c for c in concepts if not (root / "annotations" / f"{c}.txt").is_file()]
        if len(absent) > 4:
            need.append(f"annotations/<concept>.txt for {len(absent)} concepts "
                        f"({', '.join(absent[:3])}, ..., {absent[-1]})")
        else:
            need += [f"annotations/{c}.txt" for c in absent]
    return (f"{what}: MIR Flickr files missing in {root}; put {', '.join(need)} there "
            f"(images, tags and annotations from {_MIR_HOME}, e.g. "
            f"mirflickr25k_annotations_v080.zip; features in image order 1..n)")


def read_mir_flickr(path, *, views=tuple(MIRFLICKR_VIEWS), concepts=None, min_tag_count=50,
                    n_images=None, name=None):
    """Read a MIR Flickr folder in the layout of the module docstring.

    Parameters
    ----------
    path : str or os.PathLike
        The folder holding ``annotations/``, ``features/`` (and ``mirflickr/`` for tags).
    views : list of str, default=("DenseSift", "Gist", "tags")
        View names: file stems under ``features/``; "tags" may instead come from the
        official tag files.
    concepts : list of str, optional
        Annotation file stems (default every ``annotations/*.txt`` but README, sorted).
    min_tag_count : int, default=50
        The view "tags" keeps the tags of ``common_tags.txt`` used at least this often.
    n_images : int, optional
        The number of images every view must have (default: that of the first view).
    name : str, optional

    Returns
    -------
    MultiViewDataset
        Multi-label: y is the 0/1 matrix (n_images, n_concepts), ``class_names`` the
        concepts.
    """
    root = Path(path).expanduser()
    views = [views] if isinstance(views, str) else list(views)
    if not views:
        raise ValueError("views must name at least one view")
    name = name or root.name
    if concepts is None:
        found = sorted(f.stem for f in (root / "annotations").glob("*.txt")
                       if f.stem.lower() != "readme")
        concepts = found or None
    else:
        concepts = [concepts] if isinstance(concepts, str) else list(concepts)
    files = {v: _view_file(root, v) for v in views}
    missing = [v for v, f in files.items() if f is None and v != "tags"]
    tags_from_meta = "tags" in views and files.get("tags") is None
    if tags_from_meta and not ((root / "mirflickr" / "doc" / "common_tags.txt").is_file()
                               and (root / "mirflickr" / "meta" / "tags").is_dir()):
        missing.append("tags")
    if missing or concepts is None or not all((root / "annotations" / f"{c}.txt").is_file()
                                              for c in concepts):
        raise _missing_files(_missing(root, views, concepts, name))
    matrices = {}
    for v in views:
        if files[v] is not None:
            matrices[v] = _read_view(files[v], n_images)
            n_images = matrices[v].shape[0]
    if tags_from_meta:
        if n_images is None:
            raise DataError(f"{name}: the number of images is unknown (give n_images or a "
                            "feature file) to read the per-image tag files")
        matrices["tags"] = _read_tags(root, n_images, min_tag_count)
    Y = np.zeros((n_images, len(concepts)), dtype=np.int8)
    for j, c in enumerate(concepts):
        Y[_read_annotation(root / "annotations" / f"{c}.txt", n_images), j] = 1
    return MultiViewDataset(
        name=name, views=[matrices[v] for v in views], view_names=list(views), y=Y,
        class_names=list(concepts), synthetic=False, descr=read_mir_flickr.__doc__,
        source=f"MIR Flickr (Huiskes & Lew 2008), {len(concepts)} concepts, views "
               f"{', '.join(views)}, read from {root}")


def load_mirflickr(*, views=tuple(MIRFLICKR_VIEWS), min_tag_count=50, data_home=None):
    """MIR Flickr 25k as in LM3FE (Luo et al. 2016, Sec. V-A): 25,000 images, 38 concepts.

    Multi-label; views (Guillaumin et al. 2010's features, a reconstruction) dense-SIFT
    BoVW (1000-D), GIST (512-D) and the 457 tags used at least 50 times. Read from
    ``<data home>/mirflickr/`` (``MLKIT_DATA``) in the layout of :func:`read_mir_flickr`;
    the files are not redistributed by mlkit, so a missing file is a one-line error saying
    which files to put where. The counts are checked: 25,000 images, the 38 concepts of
    :data:`MIRFLICKR_CONCEPTS`, and the dimensions of :data:`MIRFLICKR_VIEWS` for the views
    named there. No split is stored: the paper halves the images at random (the protocol's).

    Parameters
    ----------
    views : list of str, default=("DenseSift", "Gist", "tags")
    min_tag_count : int, default=50
    data_home : str, optional

    Returns
    -------
    MultiViewDataset
    """
    root = get_data_home(data_home) / "mirflickr"
    data = read_mir_flickr(root, views=views, concepts=list(MIRFLICKR_CONCEPTS),
                           min_tag_count=min_tag_count, n_images=_N_IMAGES, name="mirflickr")
    for v, X in zip(data.view_names, data.views):
        expected = MIRFLICKR_VIEWS.get(v)
        if expected is not None and (v != "tags" or min_tag_count == 50) \
                and X.shape[1] != expected:
            raise DataError(f"mirflickr: view {v} has {X.shape[1]} features, expected "
                            f"{expected} (Guillaumin et al. 2010); the files may be another "
                            "feature set")
    data.source = ("MIR Flickr 25k (Huiskes & Lew 2008) as in LM3FE (Luo et al. 2016): 38 "
                   "concepts, Guillaumin et al. 2010 features")
    data.descr = load_mirflickr.__doc__
    return data


FORMATS.register("mir-flickr", read_mir_flickr,
                 summary="MIR Flickr folder: annotations/<concept>.txt (1-based ids) + "
                         "features/<view>.<txt|fvec|hvecs|hvecs32> (multi-view, multi-label)")
register_dataset("mirflickr", load_mirflickr, kind="multi-view", synthetic=False,
                 paper="lm3fe",
                 summary="MIR Flickr 25k (LM3FE, Luo et al. 2016): 25,000 images, 38 "
                         "concepts, SIFT BoVW + GIST + tags; files from <data home>/mirflickr/")


def _missing_files(message):
    """A DataError saying files are absent from the data home (``missing``: the runner skips
    a ``when_present`` dataset on it, and on nothing else)."""
    err = DataError(message)
    err.missing = True
    return err

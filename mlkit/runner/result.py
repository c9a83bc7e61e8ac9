"""What a run of a spec returns: :class:`RunResult` (the datasets, every record, timings,
and the runs as one data frame, :func:`runs_frame`) and the caption notes of a ``--quick``
or partial run."""

from dataclasses import dataclass, field

import pandas as pd

__all__ = ["RunResult", "QUICK_NOTE", "WARNINGS_LOG", "runs_frame", "runs_by", "runs_of",
           "rows_of", "as_runs_frame", "RUN_COLUMNS"]

#: the columns every runs frame starts with (a record's split and method)
RUN_COLUMNS = ("dataset", "method", "method_name", "repeat", "fold", "split_seed",
               "random_state", "n_train", "n_test", "params", "chosen")
#: the record entries whose items become columns of their own
_SPREAD = ("metrics", "timings", "model", "test_extras")
#: the record entries a frame leaves out (where and how a run was computed)
_LEFT_OUT = ("key", "data_sha", "mlkit_version", "compute_kernels", "numerics_revision")


def runs_frame(records):
    """The runs of ``records`` as one data frame, one row per run, in the records' order:
    :data:`RUN_COLUMNS` (``params`` and ``chosen`` as dicts, ``{}`` when a run chose
    nothing), then each metric, each timing (``fit_s``, ``predict_s``, ``cpu_s``) and each
    of the estimator's extras (its ``model`` and ``test_extras`` items, and any other entry
    its record keeps, e.g. ``curves``) as a column of its own; a name two of them share
    is the first's (metrics first), the other's keeps its entry's prefix
    (``model.accuracy``). A value a run does not have is missing
    (NaN, or None for an object column). The last column, ``record``, is each run's
    record itself (for the helpers that read a run as a whole)."""
    rows, owners = [], {}
    for rec in records:
        row = {c: rec.get(c) for c in RUN_COLUMNS}
        row["params"], row["chosen"] = dict(rec.get("params") or {}), dict(
            rec.get("chosen") or {})
        for part in _SPREAD:
            for name, value in (rec.get(part) or {}).items():
                owners.setdefault(name, set()).add(part)
                row[(part, name)] = value
        for name, value in rec.items():
            if name not in RUN_COLUMNS and name not in _SPREAD and name not in _LEFT_OUT:
                owners.setdefault(name, set()).add("")
                row[("", name)] = value
        row["record"] = rec
        rows.append(row)
    extra = list(dict.fromkeys(k for row in rows for k in row if isinstance(k, tuple)))
    extra.sort(key=lambda k: (_SPREAD + ("",)).index(k[0]))     # stable: first seen first

    def name(key):          # the first entry (in _SPREAD order) holding a name keeps it
        part, item = key
        first = min(owners[item], key=(_SPREAD + ("",)).index)
        clash = part != first or item in RUN_COLUMNS or item == "record"
        return f"{part or 'record'}.{item}" if clash else item

    columns = list(RUN_COLUMNS) + [name(k) for k in extra] + ["record"]
    data = [[row.get(c) for c in RUN_COLUMNS] + [row.get(k) for k in extra] + [row["record"]]
            for row in rows]
    return pd.DataFrame(data, columns=columns)


#: the file beside a target's run records where each run's estimator warnings go
#: (:class:`mlkit._progress.WarningLog`)
WARNINGS_LOG = "warnings.log"


#: said after the data of a ``--quick`` run, in every caption and summary
QUICK_NOTE = (" [--quick settings: fewer splits and smaller grids than the paper's protocol; "
              "indicative only, spreads not comparable]")


def runs_by(frame, keys=("dataset", "method")):
    """{group key: [records]} of a runs frame (:func:`runs_frame`) grouped by ``keys``
    (pandas ``groupby``; a key is a tuple when ``keys`` is a sequence), the records of each group in
    the frame's order, for the helpers that read runs as records."""
    if frame.empty:
        return {}
    by = keys if isinstance(keys, str) else list(keys)
    return {k: g["record"].tolist() for k, g in frame.groupby(by, sort=False)}


def as_runs_frame(runs):
    """``runs`` as a runs frame: a data frame as it is, run records (a list of dicts)
    through :func:`runs_frame`, for the helpers that take either."""
    return runs if isinstance(runs, pd.DataFrame) else runs_frame(list(runs))


def rows_of(frame, dataset=None, method=None):
    """The rows of the runs frame ``frame`` (:func:`runs_frame`) of the runs on ``dataset`` by
    ``method`` (None: any), selected with pandas, in the frame's order."""
    mask = pd.Series(True, index=frame.index)
    if dataset is not None:
        mask &= frame["dataset"] == dataset
    if method is not None:
        mask &= frame["method"] == method
    return frame.loc[mask]


def runs_of(frame, dataset=None, method=None):
    """The records of the runs of ``frame`` (:func:`runs_frame`) on ``dataset`` by
    ``method`` (None: any): the ``record`` column of :func:`rows_of`."""
    return rows_of(frame, dataset, method)["record"].tolist()


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
    # (records, their count, runs_frame(records)) of the last ``frame``
    _frame: object = field(default=None, init=False, repr=False, compare=False)

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

    @property
    def frame(self):
        """The runs as one data frame (:func:`runs_frame`), built once from the records
        (again when records were added since)."""
        cached = self._frame
        if cached is None or cached[0] is not self.records or cached[1] != len(self.records):
            cached = (self.records, len(self.records), runs_frame(self.records))
            self._frame = cached
        return cached[2]

    def records_of(self, dataset=None, method=None):
        """The records of ``dataset`` by ``method`` (:func:`runs_of` of :attr:`frame`), sorted
        by split."""
        return sorted(runs_of(self.frame, dataset, method),
                      key=lambda r: (r["dataset"], r["method"], r["repeat"], r["fold"]))

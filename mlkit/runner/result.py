"""What a run of a spec returns: :class:`RunResult` (the datasets, every record, timings)
and the caption notes of a ``--quick`` or partial run."""

from dataclasses import dataclass, field

__all__ = ["RunResult", "QUICK_NOTE", "WARNINGS_LOG"]


#: the file beside a target's run records where each run's estimator warnings go
#: (:class:`mlkit._progress.WarningLog`)
WARNINGS_LOG = "warnings.log"


#: said after the data of a ``--quick`` run, in every caption and summary
QUICK_NOTE = (" [--quick settings: fewer splits and smaller grids than the paper's protocol; "
              "indicative only, spreads not comparable]")


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

    def records_of(self, dataset=None, method=None):
        """Records filtered by dataset label and method label, sorted by split."""
        out = [r for r in self.records if (dataset is None or r["dataset"] == dataset)
               and (method is None or r["method"] == method)]
        return sorted(out, key=lambda r: (r["dataset"], r["method"], r["repeat"], r["fold"]))

"""Whose data a result row ran on: the paper's own, a real substitute or a synthetic stand-in.

Decided from the target's config (a dataset with no ``role:``, or marked ``when_present``,
is the paper's own data; one with a ``role:`` stands in for the data it names) and the
loaded data's ``synthetic`` flag (the manifest's, else the dataset registry's). The
renderers label each row of their comparison frame with it
(:mod:`mlkit.report.comparison`) and ``mlkit report`` shows it (:class:`DataLine`).
"""

from dataclasses import dataclass
from typing import Optional

from ..registry import DATASETS, METRICS

__all__ = ["DataLine", "data_lines", "row_lines", "row_role", "percent_quantities",
           "PAPER_DATA", "SUBSTITUTE_DATA", "PAPER_ROLE", "SUBSTITUTE_ROLE", "SYNTHETIC_ROLE",
           "DATA_ROLES"]

#: the two kinds of cells ``mlkit report`` counts apart
PAPER_DATA, SUBSTITUTE_DATA = "paper's data", "substitute data"

#: a comparison row's ``data_role``: the paper's own real data, a real substitute (or a
#: row over several kinds of data), a synthetic generator (a stand-in, or the paper's own
#: generator rebuilt from its text: our reconstruction, not the paper's data)
PAPER_ROLE, SUBSTITUTE_ROLE, SYNTHETIC_ROLE = "paper's data", "substitute", "synthetic"
DATA_ROLES = (PAPER_ROLE, SUBSTITUTE_ROLE, SYNTHETIC_ROLE)


@dataclass(frozen=True)
class DataLine:
    """One dataset of a target's runs as the page says it.

    ``paper_own``: the paper's own data (``when_present``, or no ``role:`` in the config);
    else it stands in for the data its ``role`` names. ``reference``: a dataset with no role
    in a target whose other datasets have roles, and with no paper number of its own: shown
    for reference, neither the paper's data nor a stand-in. ``absent``: a ``when_present``
    dataset that the target's (finished) runs skipped, its files not being at hand."""

    label: str
    name: Optional[str]
    role: Optional[str]
    synthetic: bool
    paper_own: bool
    absent: bool = False
    reference: bool = False

    @property
    def data(self):
        """PAPER_DATA for the paper's own real data only: a generator rebuilt from the
        paper's text is our reconstruction, counted with the stand-ins."""
        return PAPER_DATA if self.paper_own and not self.synthetic else SUBSTITUTE_DATA

    @property
    def kind(self):
        """What the data is, in a few words (the overview column)."""
        if self.paper_own:
            if self.absent:
                return "the paper's data not run (files absent)"
            return ("synthetic, reconstructed from the paper's text" if self.synthetic
                    else "the paper's data")
        if self.reference:
            return "synthetic, for reference" if self.synthetic else "real, for reference"
        return "synthetic stand-in" if self.synthetic else "real substitute"

    @property
    def text(self):
        source = f" ({self.name})" if self.name and self.name != self.label else ""
        if self.paper_own:
            if self.absent:
                kind = "the paper's data: not run (files absent)"
            elif self.synthetic:
                kind = ("synthetic, reconstructed from the paper's text (counted with the "
                        "stand-ins)")
            else:
                kind = "the paper's data"
        elif self.reference:
            kind = (f"{'synthetic' if self.synthetic else 'real'}, for reference (no role: "
                    "it stands in for no data the paper reports)")
        else:
            kind = (f"synthetic, in the role of {_role(self.role)}" if self.synthetic else
                    f"real substitute in the role of {_role(self.role)}")
        return f"`{self.label}`{source}: {kind}"

    def names(self):
        return {self.label, self.name} - {None}


def _role(role):
    return "the paper's own data" if role.lower() == "paper" else f"`{role}`"


def data_lines(spec, run_spec, manifest):
    """[DataLine] of the datasets the target's runs use: synthetic or real (the loaded data's
    flag from the manifest, else the dataset registry's, of the dataset it is a view of when
    its ``params`` name a registered ``source``), the paper's own or a stand-in (the config)."""
    loaded = (manifest or {}).get("datasets", {})
    roles = any(d.role for d in run_spec.datasets)
    scopes = set(spec.reported) | set(run_spec.reported)
    lines = []
    for d in run_spec.datasets:
        label = d.display
        if label in loaded and "synthetic" in loaded[label]:
            synthetic = bool(loaded[label]["synthetic"])
        elif d.name is not None:
            source = d.params.get("source")
            name = source if isinstance(source, str) and source in DATASETS else d.name
            synthetic = bool(DATASETS.entry(name).meta.get("synthetic", False))
        else:
            synthetic = False       # a user's own file
        reference = (d.role is None and not d.when_present and roles
                     and not {label, d.name} & scopes)
        paper_own = bool(d.when_present) or (d.role is None and not reference)
        absent = bool(d.when_present) and manifest is not None and label not in loaded
        lines.append(DataLine(label, d.name, d.role, synthetic, paper_own, absent, reference))
    return lines


def row_lines(keys, lines):
    """The datasets a table row names by its key values ``keys`` (a key equal to a
    dataset's label or registry name, else to its first word: "msrc-v1" is the row of
    "msrc-v1 n=4"); [] when it names none."""
    for key in keys:
        key = str(key).strip()
        hit = [x for x in lines if key in x.names()] or \
            [x for x in lines if key and key.split()[0] in {n.split()[0] for n in x.names()}]
        if hit:
            return hit
    return []


def row_role(keys, lines):
    """The ``data_role`` of a table row (every dataset of the target when it names none):
    PAPER_ROLE only when each of its datasets is the paper's real data, SYNTHETIC_ROLE when
    each is synthetic, else SUBSTITUTE_ROLE."""
    mine = row_lines(keys, lines) or lines
    if mine and all(x.data == PAPER_DATA for x in mine):
        return PAPER_ROLE
    if mine and all(x.synthetic for x in mine):
        return SYNTHETIC_ROLE
    return SUBSTITUTE_ROLE


def percent_quantities(spec, run_spec):
    """The quantities the target's config puts on a percentage scale: the metric labels of
    a renderer whose options scale the metrics by 100 (``report.scale: 100``)."""
    scale = getattr(spec.options, "scale", None) if spec is not None else None
    if not isinstance(scale, (int, float)) or float(scale) != 100.0:
        return set()
    return {METRICS.entry(m).meta.get("label", m) for m in run_spec.metrics if m in METRICS}

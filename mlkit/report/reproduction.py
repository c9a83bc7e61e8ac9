"""The reproduction report: ``REPRODUCTION.md`` built from the saved results, never by training.

For every registered target of every paper it reads what ``mlkit reproduce`` left in
``results/<paper>/<artifact>/`` (``-quick/`` for ``--quick``): ``summary.json`` (the
headline figures), ``comparison.csv`` (every paper number beside ours, the target's
comparison frame, :mod:`~mlkit.report.comparison`; the cells are compared by
:mod:`~mlkit.report.reproduction_cells`; results rendered before renders wrote it have
their tables read back instead), the tables it links, the PNG figures and
``manifest.json`` (versions, machine, git revision, wall time; the run records, in the
table and files of :mod:`mlkit.store`, say how much of a long run is done); it runs the
paper's claims (those of ``mlkit verify``) and renders the page with
:mod:`~mlkit.report.reproduction_page`.
What it reads is a :class:`~mlkit.report.reproduction_view.ResultsView`: in a git checkout,
the committed files only.

Only full runs count: a target with ``--quick`` results alone is shown, labelled "quick", and
never counted as reproduced; so is a claim whose verdict says it was measured on quick
results ("quick results in ...", the claims' convention).

The data of every row is said, from the config (:class:`DataLine`): a dataset with no
``role:``, or marked ``when_present: true``, is the paper's own data (a ``when_present`` one
the runs skipped is "not run (files absent)"); one with a ``role:`` stands in for the data
that role names (a real substitute, or a synthetic stand-in). Cells on the paper's data and
cells on stand-ins are counted apart: the second compare different data.
"""

import difflib
import importlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .._errors import MlkitError
from .._io import read_json, write_text
from ..runner import planned_runs
from ..store import RunStore
from ..registry import CLAIMS, TARGETS
from ..targets import outdated_runs, results_root, target_spec
from ..verify import claims_of, diagnosis_of, evaluate, verdict
from .comparison import FILE as COMPARISON, read_comparison, tables_comparison
from .data_roles import PAPER_DATA, SUBSTITUTE_DATA, DataLine, data_lines, percent_quantities
from .reproduction_cells import Cell, compare_cell, frame_cells, read_cells, table_rows
from .reproduction_view import ResultsView

__all__ = ["Cell", "DataLine", "TableReport", "TargetReport", "ClaimReport", "PaperReport",
           "ResultsView", "FULL", "QUICK", "NOT_RUN", "PAPER_DATA", "SUBSTITUTE_DATA", "collect",
           "compare_cell", "read_cells",
           "summary_numbers", "build_page", "default_page_path", "check_page", "report",
           "README_ROW", "readme_row", "readme_with_row"]

FULL, QUICK, NOT_RUN = "full run", "quick run only", "not run"


# -- what the page shows -----------------------------------------------------------------
@dataclass(frozen=True)
class TableReport:
    """One table of a target: the file shown as its link, its key columns, its cells."""

    path: Path
    keys: tuple
    cells: tuple


@dataclass
class TargetReport:
    name: str
    paper: str
    artifact: str
    title: str
    status: str
    out_dir: Optional[Path] = None
    tables: list = field(default_factory=list)      # [TableReport]
    figures: list = field(default_factory=list)     # paths of the PNG figures
    data: list = field(default_factory=list)        # one line per dataset (DataLine.text)
    kinds: list = field(default_factory=list)       # the kinds of data, in order
    headline: dict = field(default_factory=dict)    # summary.json figures
    manifest: Optional[dict] = None
    progress: Optional[tuple] = None                # (runs recorded, runs planned), not full
    # (runs of the saved results still planned, runs planned now) when the config or a
    # method's numbers changed since the results were made: shown, not counted
    outdated: Optional[tuple] = None
    partial: bool = False                           # rendered with --partial (runs missing)
    comparison: Optional[Path] = None               # its comparison.csv, when saved

    @property
    def cells(self):
        return [c for t in self.tables for c in t.cells]

    @property
    def counted(self):
        """The cells that count: those with a paper number on a scale, of a full run."""
        return [c for c in self.cells if c.within is not None] \
            if self.status == FULL and not self.outdated else []

    def counted_on(self, data):
        return [c for c in self.counted if c.data == data]


@dataclass(frozen=True)
class ClaimReport:
    number: str
    statement: str
    verdict: str            # PASS, FAIL, NOT RUN, ERROR
    measured: str
    quick: bool = False
    #: {status, text, targets} of the claims YAML for a verdict other than PASS, or None
    diagnosis: Optional[dict] = None

    @property
    def passed(self):
        return self.verdict == "PASS" and not self.quick


@dataclass
class PaperReport:
    paper: str
    title: str
    targets: list
    claims: list

    @property
    def reproduced(self):
        return sum(t.status == FULL and not t.outdated for t in self.targets)

    @property
    def quick_only(self):
        return sum(t.status == QUICK for t in self.targets)

    @property
    def cells(self):
        return [c for t in self.targets for c in t.counted]

    def cells_on(self, data):
        return [c for c in self.cells if c.data == data]


# -- targets ------------------------------------------------------------------------------

def _recorded_runs(target, run_spec, view):
    """(runs whose record the view holds under their current key, runs planned) of a target
    not run in full, or None when none is recorded (a long run resumes from them)."""
    folder = view.root / target.paper / target.config_artifact
    plan = planned_runs(run_spec, folder)
    store = RunStore(folder, include=view.has)
    done = sum((store.get(path) or {}).get("key") == key for key, path in plan)
    return (done, len(plan)) if done else None


def _outdated(target, manifest, quick, out_dir, view):
    """:func:`mlkit.targets.outdated_runs` (the records read through ``view``), None when
    the config cannot be read."""
    try:
        return outdated_runs(target, manifest, quick, out_dir=out_dir, include=view.has)
    except MlkitError:
        return None


def _target_report(target, view):
    out, status = view.target_dir(target, quick=False), FULL
    if out is None:
        out, status = view.target_dir(target, quick=True), QUICK
    if out is None:
        status = NOT_RUN
    rep = TargetReport(target.name, target.paper, target.artifact, target.summary, status, out)
    try:
        spec, run_spec = target_spec(target)
    except MlkitError as exc:        # shown with the configs folder as it is in the clone
        where = str(target.config_path.parent.parent) + os.sep
        spec = run_spec = None
        rep.data = [f"config error: {str(exc).replace(where, 'configs/')}"]
    if out is not None:
        rep.manifest = read_json(out / "manifest.json")
        rep.headline = read_json(out / "summary.json").get("figures", {})
        rep.partial = bool(rep.manifest.get("runs_missing"))
        if run_spec is not None:
            rep.outdated = _outdated(target, rep.manifest, status == QUICK, out, view)
    if (status != FULL or rep.outdated) and run_spec is not None:
        rep.progress = _recorded_runs(target, run_spec, view)
    lines = data_lines(spec, run_spec, rep.manifest) if run_spec is not None else []
    if run_spec is not None:
        rep.data = [x.text for x in lines]
        rep.kinds = list(dict.fromkeys(x.kind for x in lines))
    if out is not None:
        percent = percent_quantities(spec, run_spec) if run_spec is not None else set()
        rep.tables = _tables(out, view, lines, percent)
        if view.has(out / COMPARISON):
            rep.comparison = out / COMPARISON
        rep.figures = [p for p in sorted(out.glob("*.png")) if view.has(p)]
    return rep


def _tables(out, view, lines, percent):
    """[TableReport] of a target's results folder ``out``: its ``table`` first, then every
    other table with paper numbers, by name, their cells from ``comparison.csv``. Results
    rendered before renders wrote it have their tables read back instead
    (:func:`~mlkit.report.reproduction_cells.table_rows`)."""
    csvs = [p for p in out.glob("*.csv") if view.has(p) and p.name != COMPARISON]
    if view.has(out / COMPARISON):
        frame = read_comparison(out / COMPARISON)
    else:
        frame = tables_comparison({p.stem: table_rows(p) for p in csvs}, lines=lines,
                                  percent=percent)
    cells = frame_cells(frame)
    reports = []
    for csv_path in sorted(csvs, key=lambda p: (p.stem != "table", p.name)):
        keys, mine = cells.get(csv_path.stem, ((), ()))
        if csv_path.stem == "table" or mine:
            md = csv_path.with_suffix(".md")
            reports.append(TableReport(md if view.has(md) else csv_path, tuple(keys),
                                       tuple(mine)))
    return reports


# -- claims -------------------------------------------------------------------------------
_VERDICT = {True: "PASS", False: "FAIL", None: "NOT RUN"}


def root_shower(roots, shown_root):
    """A function writing every results root of ``roots`` in a text as ``shown_root`` (and
    the text on one line): one pass, longest root first, so a replaced path is never
    rewritten again (the shown root may itself contain a shorter root, e.g.
    ``../../work/main/results`` holds ``/work/main/results``)."""
    pattern = re.compile("|".join(re.escape(r) for r in sorted(roots, key=len, reverse=True)))
    return lambda text: pattern.sub(lambda _: shown_root, " ".join(str(text).split()))


def _claim_reports(paper, shown_root, roots):
    """The claims of ``paper`` (``mlkit verify``), the results folders ``roots`` they may
    print shown as ``shown_root`` (the page's relative link to results/)."""
    if CLAIMS.peek(paper) is None:
        return []

    shown = root_shower(roots, shown_root)

    out = []
    # claim by claim, in ``mlkit verify``'s order, so one that cannot read its results (a
    # user error, e.g. its dataset is not at hand) is an ERROR line, not a missing page
    for claim in sorted(claims_of(paper), key=lambda c: (len(c.number), c.number)):
        try:
            res = evaluate(claim)
        except MlkitError as exc:
            out.append(ClaimReport(claim.number, claim.statement, "ERROR", shown(exc)))
            continue
        measured = shown(res.measured)
        quick = res.passed is not None and "quick results in" in measured
        status = verdict(res)
        diag = diagnosis_of(paper, claim.number, status)
        out.append(ClaimReport(claim.number, claim.statement, _VERDICT[res.passed], measured,
                               quick, None if diag is None else dict(diag)))
    return out


def _paper_title(paper):
    """The paper's citation: the first phrase of its package's docstring, else its name."""
    try:
        doc = importlib.import_module(f"mlkit.papers.{paper}").__doc__ or ""
    except ImportError:
        doc = ""
    first = " ".join(doc.strip().split("\n\n")[0].split())
    return re.split(r":\s", first, maxsplit=1)[0].strip() if first else paper


def collect(papers=None, *, view=None, page_dir=None):
    """[:class:`PaperReport`] of ``papers`` (default: every paper with a target or a claim),
    read through ``view`` (a :class:`ResultsView`); paths in claims are shown relative to
    ``page_dir``."""
    view = view or ResultsView()
    targets = [TARGETS.get(n) for n in TARGETS.names()]
    if papers is None:
        papers = sorted({t.paper for t in targets} | set(CLAIMS.names()))
    page_dir = Path(page_dir) if page_dir is not None else view.root.resolve().parent
    shown = Path(os.path.relpath(view.root.resolve(), page_dir.resolve())).as_posix()
    reports = []
    with view.for_claims() as claims_root:
        roots = sorted({claims_root, str(view.root.resolve())}, key=len, reverse=True)
        for paper in papers:
            mine = [_target_report(t, view) for t in targets if t.paper == paper]
            claims = _claim_reports(paper, shown, roots)
            reports.append(PaperReport(paper, _paper_title(paper), mine, claims))
    return reports


# -- the page -----------------------------------------------------------------------------
def summary_numbers(reports):
    """{paper: (targets run in full, targets, cells on the paper's data within, such cells,
    cells on substitute data within, such cells, claims passing, claims)} and the same for
    "all"."""
    out = {}
    for r in reports:
        own, other = r.cells_on(PAPER_DATA), r.cells_on(SUBSTITUTE_DATA)
        out[r.paper] = (r.reproduced, len(r.targets), sum(c.within for c in own), len(own),
                        sum(c.within for c in other), len(other),
                        sum(c.passed for c in r.claims), len(r.claims))
    out["all"] = tuple(sum(v[i] for v in out.values()) for i in range(8))
    return out


def default_page_path(view=None):
    """``REPRODUCTION.md`` beside the results folder (the project root)."""
    root = (view.root if view is not None else results_root()).resolve()
    return root.parent / "REPRODUCTION.md"


def build_page(papers=None, *, view=None, page_path=None):
    """(the page's Markdown text, [PaperReport])."""
    from .reproduction_page import render_page

    view = view or ResultsView()
    page_path = Path(page_path) if page_path is not None else default_page_path(view)
    reports = collect(papers, view=view, page_dir=page_path.parent)
    return render_page(reports, view, page_path.parent), reports


def check_page(page_path, text):
    """None when the file at ``page_path`` holds ``text``, else one line saying what differs."""
    page_path = Path(page_path)
    if not page_path.is_file():
        return f"{page_path} does not exist"
    old = page_path.read_text(encoding="utf-8")
    if old == text:
        return None
    old_lines, new_lines = old.splitlines(), text.splitlines()
    for n, (a, b) in enumerate(zip(old_lines, new_lines), 1):
        if a != b:
            break
    else:
        n = min(len(old_lines), len(new_lines)) + 1
    got = old_lines[n - 1] if n <= len(old_lines) else "(end of file)"
    want = new_lines[n - 1] if n <= len(new_lines) else "(end of file)"
    changed = sum(1 for d in difflib.unified_diff(old_lines, new_lines, n=0, lineterm="")
                  if d[:1] in "+-" and not d.startswith(("+++", "---")))
    return (f"{page_path} differs from what the saved results give at line {n} ({changed} "
            f"changed line{'s' if changed != 1 else ''}): it has {_clip(got)!r}, the results "
            f"give {_clip(want)!r}")


def _clip(text, width=60):
    return text if len(text) <= width else text[:width - 3] + "..."


# -- the README's status row --------------------------------------------------------------
README_ROW = "| **[Reproduction report](REPRODUCTION.md)**"


def readme_row(numbers):
    """The README status-table row linking the page, with its summary ``numbers`` (those of
    :func:`summary_numbers`)."""
    t, nt, c, nc, s, ns, p, npass = numbers
    return (f"{README_ROW}: every target, paper vs ours | all | {t} of {nt} targets run in "
            f"full; cells within spread: {c} of {nc} (paper's data), {s} of {ns} "
            f"(substitutes); {p} of {npass} claims passing |")


def readme_with_row(readme_text, row):
    """``readme_text`` with its reproduction-report row replaced by ``row`` (unchanged when
    it has no such row)."""
    lines = readme_text.split("\n")
    return "\n".join(row if line.startswith(README_ROW) else line for line in lines)


def report(out=None, *, check=False, untracked=False):
    """Write (or with ``check`` compare) the page at ``out`` (default: REPRODUCTION.md beside
    the results folder, and then the README's status row beside it too). Returns (summary
    line, [the files written or checked], [problems]): with ``check``, one line per file
    that differs."""
    view = ResultsView(untracked=untracked)
    page = Path(out) if out is not None else default_page_path(view)
    text, reports = build_page(view=view, page_path=page)
    numbers = summary_numbers(reports)["all"]
    t, nt, c, nc, s, ns, p, npass = numbers
    line = (f"{t}/{nt} targets run in full, cells within spread {c}/{nc} on the paper's data "
            f"and {s}/{ns} on substitute data, {p}/{npass} claims passing")
    files = [(page, text)]
    readme = page.parent / "README.md"
    if out is None and readme.is_file():
        old = readme.read_text(encoding="utf-8")
        new = readme_with_row(old, readme_row(numbers))
        if new != old or check:
            files.append((readme, new))
    if check:
        problems = [msg for msg in (check_page(path, want) for path, want in files) if msg]
        return line, [path for path, _ in files], problems
    for path, want in files:
        write_text(path, want)
    return line, [path for path, _ in files], []

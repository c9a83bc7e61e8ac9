"""The Markdown of ``REPRODUCTION.md`` from the reports of :mod:`mlkit.report.reproduction`.

Everything on the page comes from the saved results and the registries, in a fixed order
(papers and targets by name, claims by number), and nothing from the machine or the moment
the page is built, so the same results give the same page everywhere.
"""

import hashlib
import json
import os
import re
from pathlib import Path

from .reproduction import FULL, NOT_RUN, PAPER_DATA, QUICK, SUBSTITUTE_DATA, summary_numbers

__all__ = ["render_page"]

OUTSIDE = "✗"
_ESCAPES = str.maketrans({"|": r"\|", "<": "&lt;", "~": r"\~", "*": r"\*", "\n": " "})


def _md(text):
    """A table cell's text, safe in a GitHub Markdown table."""
    return str(text).translate(_ESCAPES)


def _link(path, page_dir):
    return Path(os.path.relpath(Path(path).resolve(), page_dir.resolve())).as_posix()


def _anchor(name):
    return name.replace("/", "-")


#: the most words a table cell of the page holds; a longer text is cut there and given in
#: full in a note below its table
CELL_WORDS = 40


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    notes = []
    for row in rows:
        cells = []
        for cell in row:
            words = str(cell).split()
            if len(words) > CELL_WORDS:
                notes.append(str(cell))
                cell = " ".join(words[:CELL_WORDS - 10]) + f" … (note {len(notes)})"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    if notes:
        lines += [""] + [f"{k}. {text}" for k, text in enumerate(notes, 1)]
    return lines


def _ratio(k, n):
    return f"{k} / {n}"


def _claims_note(claims):
    counts = {}
    for c in claims:
        key = c.verdict + (" on quick results" if c.quick else "")
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items()) if k != "PASS")


def _summary(reports):
    nums = summary_numbers(reports)
    rows = []
    for r in reports:
        t, nt, c, nc, s, ns, p, npass = nums[r.paper]
        quick = f" ({r.quick_only} quick only)" if r.quick_only else ""
        note = _claims_note(r.claims)
        rows.append([f"[`{r.paper}`](#{_anchor(r.paper)}): {_md(r.title)}",
                     _ratio(t, nt) + quick, _ratio(c, nc), _ratio(s, ns),
                     _ratio(p, npass) + (f" ({note})" if note else "")])
    t, nt, c, nc, s, ns, p, npass = nums["all"]
    rows.append(["**all papers**", f"**{_ratio(t, nt)}**", f"**{_ratio(c, nc)}**",
                 f"**{_ratio(s, ns)}**", f"**{_ratio(p, npass)}**"])
    lines = ["## Summary", ""]
    lines += _table(["paper", "targets run in full",
                     "cells on the paper's data within spread",
                     "cells on substitute data within spread", "claims passing"], rows)
    lines += [
        "",
        "* **targets run in full**: registered targets (`mlkit list targets`) with results of "
        "the full protocol, whatever their numbers say. Results of the `--quick` settings alone are shown, labelled "
        "*quick*, and never counted.",
        "* **cells on the paper's data within spread**: the table cells of full runs where "
        "the paper prints a number and our row ran on the paper's own real data (a config "
        "dataset with no `role:`, or marked `when_present`: the paper's data, run when its "
        "files are at hand). This column is the reproduction proper. A generator rebuilt "
        "from the paper's text is our reconstruction, not the paper's data: its rows count "
        "with the stand-ins. (In a target whose datasets have "
        "roles, one without a role and without a paper number of its own is shown *for "
        "reference*.)",
        "* **cells on substitute data within spread**: the same for rows that ran on a stand-in "
        "(a config dataset whose `role:` names the paper's data it stands in for: a real "
        "substitute, or a synthetic generator in its role), set beside the paper's number "
        "on *its* data. They compare different data, so they are counted apart and say how "
        "close a stand-in comes, not whether the paper reproduces. A row naming no dataset "
        "counts here unless every dataset of its target is the paper's.",
        "* **within spread**: ours is at most the paper's ± spread away; where the paper gives "
        "no spread, 2 points on the scale of the paper's number, decided from the column "
        "and the paper's number, never from ours: ±2 on a percentage (a `%` in the column "
        "or the config's `report.scale: 100`), ±0.02 on a fraction (the paper prints a "
        "number within [-1, 1] with decimals), exact (ours rounded to units) for a whole "
        "number (a count or an index, where ±2 could not fail), not counted for a count the "
        "data or config fixes (`#data`, `#label`, `#models`) or a time in seconds (the "
        "paper's hardware; the claims judge speed as ratios measured here), and not counted "
        "for any other number (a decimal above 1 in its own unit, e.g. a mean dimension): its "
        f"difference is shown. {OUTSIDE} marks a difference outside the tolerance.",
        "* **claims passing**: the verdicts of `mlkit verify PAPER` that PASS on full "
        "results, of all the paper's claims (a verdict on quick results is labelled and not "
        "counted).",
    ]
    return lines


def _cells_cell(t):
    if t.status == NOT_RUN:
        return "-"
    cells = [c for c in t.cells if c.within is not None]
    if t.outdated:
        return (f"{'partial' if t.partial else 'outdated'}, not counted" if cells
                else "no paper numbers")
    if not cells:
        return "no paper numbers" if not t.cells else "none counted"
    parts = []
    for data, name in ((PAPER_DATA, "paper's data"), (SUBSTITUTE_DATA, "substitute")):
        mine = [c for c in cells if c.data == data]
        if mine:
            parts.append(f"{_ratio(sum(c.within for c in mine), len(mine))} ({name})")
    text = "; ".join(parts)
    return text + " (quick)" if t.status == QUICK else text


def _status(t):
    if t.partial and t.outdated:        # a --partial render: the progress says it all
        return f"**partial**; {_progress(t)}" if t.progress else _outdated(t)
    text = {FULL: "full run", QUICK: "*quick* run only", NOT_RUN: "not run"}[t.status]
    if t.outdated:
        text += f", {_outdated(t)}"
    return text + (f"; {_progress(t)}" if t.progress else "")


def _outdated(t):
    """Saved results whose runs are not (all) the ones the config and methods make now."""
    kept, planned = t.outdated
    if t.partial:
        return (f"**partial** (rendered from the {kept:,} of its {planned:,} runs recorded so "
                "far; shown, not counted)")
    return (f"**outdated** (the config or a method's numbers changed since: {kept:,} of its "
            f"{planned:,} runs planned now are in it; shown, not counted)")


def _progress(t):
    """How much of a target's full run its committed records hold (it resumes from them)."""
    done, total = t.progress
    return f"full run in progress: {done:,} of {total:,} runs recorded"


#: the end of a sentence: a full stop (not of an abbreviation) or a semicolon, then a space
_SENTENCE_END = re.compile(r"(?<!\bFig)(?<!\bEq)(?<!\bSec)(?<!\bvs)(?<!\bal)(?<!\be\.g)"
                           r"(?<!\bi\.e)(?<!\bNo)[.;] ")

#: the most words a bullet of the page's opening quotes from a diagnosis
_BRIEF_WORDS = 40


def _brief(text, words=_BRIEF_WORDS):
    """The first sentence of ``text``, cut to ``words`` words."""
    text = " ".join(str(text).split())
    end = _SENTENCE_END.search(text)
    if end:
        text = text[:end.start() + 1].rstrip(";")
    cut = text.split()
    return " ".join(cut[:words]) + (" …" if len(cut) > words else "")


def _verdict_shown(c):
    verdict = f"**{c.verdict}**" if c.verdict in ("FAIL", "ERROR") else c.verdict
    return verdict + (" (*quick*)" if c.quick else "")


def _glance(report):
    """Three to six bullets for one paper: what reproduces, what does not and why (the
    claims' diagnoses), what is still to be run."""
    claims = report.claims
    passing = [c for c in claims if c.passed]
    failing = [c for c in claims if c.verdict in ("FAIL", "ERROR") and not c.quick]
    pending = [c for c in claims if c not in passing and c not in failing]
    bullets = []
    if passing:
        bullets.append("Reproduces: " + "; ".join(f"claim {c.number} ({_md(_brief(c.statement, 15))})"
                                                   for c in passing) + ".")
    # at most six bullets: the cells and targets lines, what passes, what has no verdict,
    # and the failing claims in the rest (one line naming those that do not fit)
    room = 4 - bool(passing) - bool(pending)
    shown = failing if len(failing) <= room else failing[:room - 1]
    for c in shown:
        d = c.diagnosis or {}
        status = d.get("status", "untested")
        reason = _md(_brief(d.get("text", "no diagnosis written yet")))
        bullets.append(f"Does not reproduce: claim {c.number} ({_md(_brief(c.statement, 15))}). "
                       f"Why ({'tested' if status == 'tested' else 'untested belief'}): "
                       f"{reason}")
    rest = failing[len(shown):]
    if rest:
        bullets.append("Also failing: claims " + ", ".join(c.number for c in rest)
                       + " (see the claims below).")
    if pending:
        bullets.append("No verdict yet: claims " + ", ".join(c.number for c in pending)
                       + " (their results are missing, outdated or partial: being rerun).")
    cells = {d: [c for t in report.targets for c in t.counted_on(d)]
             for d in (PAPER_DATA, SUBSTITUTE_DATA)}
    counts = [f"{sum(c.within for c in cells[d])} of {len(cells[d])} {name}"
              for d, name in ((PAPER_DATA, "on the paper's data"),
                              (SUBSTITUTE_DATA, "on substitute data")) if cells[d]]
    bullets.insert(0, "Table cells within the paper's spread: "
                   + ("; ".join(counts) if counts else "none counted yet") + ".")
    runs = [t for t in report.targets if t.status == FULL and not t.outdated]
    stale = [t for t in report.targets if t.outdated or t.progress]
    bullets.append(f"{len(runs)} of {len(report.targets)} targets have current full results"
                   + (f"; {len(stale)} outdated or in progress ("
                      + ", ".join(f"`{t.artifact}`" for t in stale) + ")" if stale else "")
                   + ".")
    if len(bullets) > 6:                  # the target count stays the last
        bullets = bullets[:5] + bullets[-1:]
    return [f"* {b}" for b in bullets]


#: the most words of a claim's measured text the page shows (the rest: ``mlkit verify``)
MEASURED_WORDS = 60


def _measured(c, paper):
    """A claim's measured text, cut to :data:`MEASURED_WORDS` words (``mlkit verify`` prints
    it whole)."""
    words = str(c.measured).split()
    if len(words) <= MEASURED_WORDS:
        return _md(c.measured)
    return (_md(" ".join(words[:MEASURED_WORDS])) + f" … (in full: `mlkit verify {paper}`, "
            f"{len(words)} words)")


def _claims(paper, claims):
    lines = [f"### Claims (`mlkit verify {paper}`)", ""]
    if not claims:
        return lines + ["The paper has no registered claims.", ""]
    rows = []
    for c in claims:
        d = c.diagnosis
        rows.append([c.number, _verdict_shown(c), _md(c.statement),
                     "-" if d is None else d.get("status", "untested")])
    lines += _table(["claim", "verdict", "statement", "diagnosis"], rows) + [""]
    for c in claims:         # the long measured text and diagnosis below the table
        lines += [f"* **Claim {c.number}** ({_verdict_shown(c)}). Measured: "
                  f"{_measured(c, paper)}"]
        d = c.diagnosis
        if d is not None:
            targets = ", ".join(f"`{t}`" for t in d.get("targets", []))
            lines += [f"  * Diagnosis ({d.get('status', 'untested')}): {_md(d.get('text', ''))}"
                      + (f" Targets: {targets}." if targets else "")]
    return lines + [""]


def _cells_table(table):
    rows = []
    for c in table.cells:
        diff = _md(c.difference) or "not compared"
        if c.within is False:
            diff = f"**{diff}** {OUTSIDE}"
        data = {PAPER_DATA: "paper's", SUBSTITUTE_DATA: "substitute"}.get(c.data, "-")
        rows.append([_md(k) for k in c.keys] + [_md(c.quantity), data, _md(c.paper),
                                                _md(c.ours), diff, _md(c.tolerance)])
    return _table([_md(k) for k in table.keys] + ["quantity", "data", "paper", "ours",
                                                 "ours − paper", "allowed"], rows)


#: a table of at most this many paper-vs-ours cells is shown on the page; a longer one is
#: counted there and read in full in the target's table.md and comparison.csv
INLINE_CELLS = 12


def _cells_count(table):
    """One line for a table too long for the page: its cells within, outside and not
    compared against the paper's number."""
    parts = []
    for data, name in ((PAPER_DATA, "on the paper's data"), (SUBSTITUTE_DATA, "on substitute "
                                                                               "data")):
        mine = [c for c in table.cells if c.data == data and c.within is not None]
        if mine:
            parts.append(f"{sum(c.within for c in mine)} of {len(mine)} {name}")
    compared = sum(c.within is not None for c in table.cells)
    within = ("within the paper's spread: " + "; ".join(parts)) if parts else \
        "none compared"
    rest = len(table.cells) - compared
    return (f"{len(table.cells)} paper numbers beside ours, {within}"
            + (f"; {rest} not compared" if rest else "") + ".")


def _links(t, table, page_dir):
    """The table's Markdown file and the target's comparison.csv, as links."""
    links = [f"[{table.path.name}]({_link(table.path, page_dir)})"]
    if t.comparison is not None:
        links.append(f"[{t.comparison.name}]({_link(t.comparison, page_dir)})")
    return " and ".join(links)


def _digest(figures):
    """The first 12 hex digits of the SHA-256 of ``figures`` (sorted JSON): the page names
    the headline values it does not show, so ``mlkit report --check`` sees them change."""
    return hashlib.sha256(json.dumps(figures, sort_keys=True).encode()).hexdigest()[:12]


def _grouped(data):
    """The data lines (`label` (dataset): what it is) with the datasets said alike in one
    line: "`a`, `b` (dataset): what they are", in the order they first come."""
    groups = {}
    for line in data:
        m = re.match(r"(`[^`]*`)(.*)", line)
        label, rest = (m.group(1), m.group(2)) if m else ("", line)
        groups.setdefault(rest, []).append(label)
    return [", ".join(x for x in labels if x) + rest for rest, labels in groups.items()]


def _target(t, page_dir):
    lines = [f'<a id="{_anchor(t.name)}"></a>', "",
             f"### `{t.name}`: {_md(t.title)}" if t.title else f"### `{t.name}`", ""]
    progress = (f" {_progress(t).capitalize()}; `mlkit reproduce {t.name}` resumes from them."
                if t.progress else "")
    if t.status == NOT_RUN:
        lines += [f"Status: **not run** (`mlkit reproduce {t.name}`).{progress}", ""]
    else:
        quick = " (the `--quick` settings: shown, not counted)" if t.status == QUICK else ""
        tables = ", ".join(f"[{x.path.name}]({_link(x.path, page_dir)})" for x in t.tables)
        status = f"**{t.status}**{quick}"
        if t.partial and t.outdated:     # a --partial render: not a full run's results
            status = _outdated(t) + quick
        elif t.outdated:
            status += f", {_outdated(t)}"
        lines += [f"Status: {status}. Results: "
                  f"[`{_link(t.out_dir, page_dir)}/`]({_link(t.out_dir, page_dir)})"
                  + (f"; full table: {tables}" if tables else "") + "." + progress, ""]
    if t.data:
        lines += ["Data: " + "; ".join(_grouped(t.data)) + ".", ""]
    if t.status == NOT_RUN:
        return lines
    for table in t.tables:
        if len(table.cells) > INLINE_CELLS:
            lines += [f"Paper vs ours, cell by cell, in {_links(t, table, page_dir)}: "
                      + _cells_count(table), ""]
        elif table.cells:
            title = f"From [{table.path.name}]({_link(table.path, page_dir)}):" \
                if len(t.tables) > 1 else ""
            lines += ([title, ""] if title else []) + _cells_table(table) + [""]
    if not t.cells:
        lines += ["The paper prints no number for this target: ours are in its table.", ""]
    for png in t.figures:
        lines += [f"![{t.name}: {png.name}]({_link(png, page_dir)})", ""]
    summary = t.out_dir / "summary.json" if t.out_dir is not None else None
    if t.headline and summary is not None:
        lines += [f"Headline figures ({len(t.headline)}, what `mlkit verify` and `mlkit "
                  f"regress` read): [summary.json]({_link(summary, page_dir)}), SHA-256 of "
                  f"their values `{_digest(t.headline)}`.", ""]
    return lines


def _paper(r, page_dir):
    lines = [f'<a id="{_anchor(r.paper)}"></a>', "", f"## `{r.paper}`: {_md(r.title)}", ""]
    rows = [[f"[`{t.artifact}`](#{_anchor(t.name)})", _md(t.title), _status(t), _cells_cell(t),
             _md("; ".join(t.kinds))] for t in r.targets]
    lines += _table(["target", "title", "status", "cells within spread", "data"], rows) + [""]
    lines += _claims(r.paper, r.claims)
    for t in r.targets:
        lines += _target(t, page_dir)
    return lines


def format_seconds(s):
    """A duration for people: '12.3 s', '4 min 5 s', '6 h 7 min' ('-' for None)."""
    if s is None:
        return "-"
    s = float(s)
    if s < 59.95:
        return f"{s:.1f} s"
    seconds = int(round(s))                 # rounded first: never '4 min 60 s'
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    minutes = int(round(s / 60))
    return f"{minutes // 60} h {minutes % 60} min"


def _environment(reports):
    ran = [t for r in reports for t in r.targets if t.manifest is not None]
    lines = ["## Environment of the runs", ""]
    if not ran:
        return lines + ["No target has saved results yet.", ""]
    rows, versions, machines = [], {}, {}
    for t in ran:
        m = t.manifest
        rev = m.get("git_revision") or "-"
        rev = rev[:12] + ("+dirty" if rev.endswith("+dirty") else "") if rev != "-" else rev
        machine = m.get("machine") or {}
        where = ", ".join(x for x in (machine.get("platform"),
                                      f"{machine['cpus']} cpus" if machine.get("cpus") else "",
                                      machine.get("cpu"), *(machine.get("blas") or []),
                                      f"numpy exp {machine['simd']}" if machine.get("simd")
                                      else "")
                          if x) or "-"
        if len(m.get("run_machines") or {}) > 1:     # a long run resumed elsewhere
            where += (f"; its runs were computed on {len(m['run_machines'])} machines "
                      "(`run_machines` in its manifest)")
        runs, run_time = _runs_and_time(m)
        machine_no = machines.setdefault(where, len(machines) + 1)
        rows.append([f"[`{t.name}`](#{_anchor(t.name)})", _status(t), m.get("finished_at", "-"),
                     f"`{rev}`", str(runs), format_seconds(run_time) if runs else "-",
                     format_seconds(m.get("wall_time_s")), f"M{machine_no}"])
        key = json.dumps(m.get("versions") or {}, sort_keys=True)
        versions.setdefault(key, []).append(t.name)
    lines += _table(["target", "status", "finished", "git revision", "runs",
                     "fit + predict time of its runs", "wall time of the last invocation",
                     "machine"], rows)
    lines += ["", "Machines:", ""]
    lines += _table(["machine", "what it was"], [[f"M{k}", _md(where)]
                                                 for where, k in machines.items()])
    lines += ["", "Package versions:", ""]
    vrows = []
    for key, names in sorted(versions.items(), key=lambda kv: kv[1]):
        pkgs = ", ".join(f"{k} {v}" for k, v in sorted(json.loads(key).items())) or "-"
        vrows.append([_md(pkgs), ", ".join(f"`{n}`" for n in names)])
    lines += _table(["versions", "targets"], vrows) + [""]
    return lines


def _runs_and_time(manifest):
    """(number of runs, their fit + predict seconds) of a manifest: what it keeps of them
    (:func:`mlkit.manifest.runs_index`), or from the list of runs a manifest written before
    the records were folded has."""
    if manifest.get("runs") is None:
        return manifest.get("runs_count") or 0, manifest.get("runs_fit_predict_s") or 0
    runs = manifest["runs"]
    return len(runs), sum((x.get("fit_s") or 0) + (x.get("predict_s") or 0) for x in runs)


def render_page(reports, view, page_dir):
    """The whole page (a string ending in one newline)."""
    page_dir = Path(page_dir)
    results = _link(view.root, page_dir)
    lines = [
        "# Reproduction report", "",
        "What reproduces and what does not: every registered table and figure of the papers "
        "mlkit implements, the paper's number beside ours with their difference, and the "
        "papers' claims checked on our results. Built by `mlkit report` from the results "
        f"saved under [`{results}/`]({results}) (nothing is retrained; in a git checkout "
        "only the files git tracks are read). CI runs `mlkit report --check`, which fails "
        "when this page differs from what those results give; regenerate it with "
        "`mlkit report`.", ""]
    lines += ["## At a glance", ""]
    for r in reports:
        lines += [f"**[`{r.paper}`](#{_anchor(r.paper)})**: {_md(r.title)}", ""]
        lines += _glance(r) + [""]
    lines += _summary(reports) + [""]
    for r in reports:
        lines += _paper(r, page_dir)
    lines += _environment(reports)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"

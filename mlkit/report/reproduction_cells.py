"""The cells of a result table that carry a paper number, and how far ours is from it.

A render pairs the paper and ours columns of the tables it writes (below) into its
comparison frame (:mod:`mlkit.report.comparison`); ``mlkit report`` compares each of its
rows with :func:`compare_cell` (:func:`frame_cells`). :func:`table_rows` reads a rendered
table back, only for results rendered before renders wrote their frame.

**Which columns pair.** A column is the paper's or ours by a marker, the word ``paper`` or
``ours``: either its last parenthesised part starts with it (``accuracy (paper)``,
``positives (ours, of 1000)``, ``Mean-AP 20 (ours 4) (paper)``), or the header starts with it
(``paper %``, ``ours % (per problem)``). The rest is the quantity (``accuracy``, ``%``) and a
qualifier: what follows the marker in its parentheses (``of 1000``), or, after a leading
marker, a trailing parenthesised part (``per problem``). A paper column pairs with the ours
column of the same quantity and qualifier; failing that (a paper column without qualifier),
with the first ours column of the same quantity, left to right (``paper %`` with
``ours % (per problem)``, not ``ours % (multi-class)``). The key columns of a row are the
unmarked columns left of the first paired paper column.

**What counts as within.** A pair whose paper entry is a number (optionally ``± spread``) is
compared as displayed. Ours is within when it is at most the paper's spread away. Where the
paper gives no spread, the tolerance is 2 points on the scale of the *paper's* number, which
the column and the paper's number decide, never ours:

* a percentage (the column's header has ``%``, or the target's config says so: the
  ``metric-table`` renderer's ``report.scale: 100``): ±2;
* a fraction (the paper prints a number within [-1, 1] with decimals, e.g. ``0.449``): ±0.02;
* a whole number (the paper prints no decimals: a count, an index, a value in units): ours
  must match it, rounded to units (``exact``), since ±2 on an index of 1..5 could not fail;
* any other number (a decimal above 1 in its own unit: a mean of counts, seconds) has no
  scale for "2 points": the difference is shown, the cell is not counted.
"""

import dataclasses
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pandas as pd

from .data_roles import PAPER_DATA, SUBSTITUTE_DATA
from .tables import format_number

__all__ = ["Cell", "compare_cell", "shown_number", "paper_scale", "column_side", "pair_columns",
           "read_cells", "table_rows", "frame_cells", "describes_setup",
           "PAPER_DATA", "SUBSTITUTE_DATA"]

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_CELL = re.compile(rf"^\s*({_NUM})\s*(?:±\s*({_NUM}))?\s*$")


@dataclass(frozen=True)
class Cell:
    """One paper number beside ours. ``within``: True/False, or None when the paper's entry
    is not a number (``"> 20"``) or has no scale for "2 points": shown, not counted.
    ``data``: whether the row ran on the paper's own data or on a stand-in for it."""

    keys: tuple
    quantity: str
    paper: str
    ours: str
    difference: str = ""
    tolerance: str = ""
    within: Optional[bool] = None
    data: str = ""          # PAPER_DATA or SUBSTITUTE_DATA (set by the report), "" unknown


def shown_number(text):
    """(value, spread or None, decimals shown) of a displayed cell, or None if not a number."""
    m = _CELL.match(text or "")
    if not m:
        return None
    value = float(m.group(1))
    if not math.isfinite(value):
        return None
    decimals = len(m.group(1).split(".")[1]) if "." in m.group(1) and "e" not in \
        m.group(1).lower() else 0
    return value, (float(m.group(2)) if m.group(2) else None), decimals


PERCENT, FRACTION, WHOLE, UNSCALED = "percent", "fraction", "whole number", "no scale"
_TOLERANCE = {PERCENT: (2.0, "±2 (2 points)"), FRACTION: (0.02, "±0.02 (2 points)"),
              WHOLE: (0.5, "exact (whole number)"),
              UNSCALED: (None, "not counted (no scale for 2 points)")}


def paper_scale(paper, percent=False):
    """The scale of a paper number given without spread: PERCENT when its column is a
    percentage (``percent``), else from the number as the paper prints it: FRACTION (within
    [-1, 1], with decimals), WHOLE (no decimals), UNSCALED (any other); None when it is not
    a number."""
    p = shown_number(paper)
    if p is None:
        return None
    if percent:
        return PERCENT
    if "e" in paper.lower():
        return UNSCALED
    if p[2] and abs(p[0]) <= 1:
        return FRACTION
    return WHOLE if p[2] == 0 else UNSCALED


def compare_cell(paper, ours, percent=False):
    """(difference text, tolerance text, within) of a paper cell and ours, as displayed;
    ``percent``: the column is a percentage. within is None when the paper's entry is not a
    number, or is one with no scale for "2 points" (shown, not counted).

    >>> compare_cell("0.449 ± 0.003", "0.456 ± 0.004")
    ('+0.007', '±0.003 (paper)', False)
    >>> compare_cell("87.07", "86.10 ± 1.20", percent=True)
    ('-0.97', '±2 (2 points)', True)
    >>> compare_cell("0.449", "1.3")
    ('+0.851', '±0.02 (2 points)', False)
    >>> compare_cell("3", "2")
    ('-1', 'exact (whole number)', False)
    >>> compare_cell("24.27", "227.289")
    ('+203.019', 'not counted (no scale for 2 points)', None)
    >>> compare_cell("> 20", "13")
    ('', '', None)
    """
    p, o = shown_number(paper), shown_number(ours)
    if p is None:
        return "", "", None
    if p[1] is not None:
        tol, tol_text = p[1], f"±{paper.split('±')[1].strip()} (paper)"
    else:
        tol, tol_text = _TOLERANCE[paper_scale(paper, percent)]
    if o is None:
        return "not measured", tol_text, (False if tol is not None else None)
    decimals = max(p[2], o[2])
    diff = round(o[0] - p[0], decimals)
    text = f"{diff:+.{decimals}f}" if diff != 0 else f"{0:.{decimals}f}"
    if tol is None:
        return text, tol_text, None
    return text, tol_text, bool(abs(o[0] - p[0]) <= tol * (1 + 1e-9) + 1e-12)


def _shown(raw):
    """A CSV cell as the Markdown table shows it (``format_number``, as ``write_table``)."""
    raw = raw.strip()
    if raw == "":
        return "-"
    try:
        return format_number(float(raw))
    except ValueError:
        return raw


def _md_rows(md_path):
    """(header, rows) of the Markdown table ``write_table`` wrote, cells as displayed; None
    when it is not one plain pipe table (then the CSV is read instead)."""
    lines = [line.strip() for line in Path(md_path).read_text(encoding="utf-8").splitlines()]
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), None)
    if start is None:
        return None
    body = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        body.append([cell.strip() for cell in line[1:-1].split("|")])
    header, rows = body[0], body[2:]
    if any(len(row) != len(header) for row in rows):
        return None                 # a cell holding "|": the CSV says where cells end
    return header, rows


def _csv_rows(csv_path):
    with open(csv_path, encoding="utf-8") as fh:
        first = fh.readline()
    df = pd.read_csv(csv_path, skiprows=1 if first.startswith("#") else 0, dtype=str,
                     keep_default_na=False)
    return list(df.columns), [[_shown(v) for v in row] for row in df.itertuples(index=False)]


_MARK = re.compile(r"^(paper|ours)\b[,:]?\s*(.*)$", re.S)
_TRAILING = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$", re.S)


def column_side(header):
    """("paper" or "ours", quantity, qualifier) of a marked column header, else None.

    >>> column_side("positives (paper, of 1000)")
    ('paper', 'positives', 'of 1000')
    >>> column_side("Mean-AP 20 (ours 4) (ours)")
    ('ours', 'Mean-AP 20 (ours 4)', '')
    >>> column_side("ours % (per problem)")
    ('ours', '%', 'per problem')
    >>> column_side("paper's size") is None
    True
    """
    header = " ".join(str(header).split())
    trailing = _TRAILING.match(header)
    if trailing:
        mark = _MARK.match(trailing.group(2).strip())
        if mark:
            return mark.group(1), trailing.group(1).strip(), mark.group(2).strip()
    mark = _MARK.match(header)
    if mark and mark.group(2) and not mark.group(2).startswith("'"):
        rest = _TRAILING.match(mark.group(2))
        if rest and rest.group(1):
            return mark.group(1), rest.group(1).strip(), rest.group(2).strip()
        return mark.group(1), mark.group(2).strip(), ""
    return None


def pair_columns(columns):
    """[(paper column, ours column, quantity shown)] of a table's header (the rule in the
    module docstring), in the order of the paper columns."""
    sides = {c: column_side(c) for c in columns}
    ours = [(c, s) for c, s in sides.items() if s and s[0] == "ours"]
    pairs = []
    for col, side in sides.items():
        if not side or side[0] != "paper":
            continue
        _, quantity, qualifier = side
        same = [c for c, s in ours if s[1] == quantity]
        exact = [c for c in same if sides[c][2] == qualifier]
        match = exact[0] if exact else (same[0] if same and not qualifier else None)
        if match is None:
            continue
        shown = qualifier or sides[match][2]
        pairs.append((col, match, f"{quantity} ({shown})" if shown else quantity))
    return pairs


#: what a cell of a "#..." quantity (a count the data or the config fixes: #data, #label,
#: #models) or of seconds (a timing on the paper's hardware: ``train s``) says instead of a
#: tolerance: shown, not counted (the claims judge speed as ratios measured here)
NOT_A_RESULT = "not counted (a setting, data size or timing)"


def describes_setup(quantity):
    """True for a quantity that describes the setup rather than a result: a count marked
    ``#`` (fixed by the data or the config) or a time in seconds (hardware-bound).

    >>> [describes_setup(q) for q in ("#models", "train s", "Mean-AP", "models to best")]
    [True, True, False, False]
    """
    q = quantity.strip()
    return q.startswith("#") or q == "s" or q.endswith(" s") or q.endswith(" s/run")


def table_rows(csv_path):
    """The table ``write_table`` wrote at ``csv_path`` read back as displayed (a data frame
    of strings): its Markdown beside it, else the CSV formatted as the Markdown would be.
    Only for results rendered before renders wrote their comparison frame."""
    md = Path(csv_path).with_suffix(".md")
    parsed = _md_rows(md) if md.is_file() else None
    columns, rows = parsed if parsed is not None else _csv_rows(csv_path)
    return pd.DataFrame(rows, columns=columns, dtype=object)


def frame_cells(frame):
    """{table name: (key column names, [Cell])} of a comparison frame
    (:mod:`mlkit.report.comparison`), tables and cells in the frame's order: each cell as
    its table shows it, compared by :func:`compare_cell` (a ``%`` unit is a percentage),
    its data the paper's when its ``data_role`` is."""
    out = {}
    for row in frame.itertuples(index=False):
        keys = json.loads(row.keys)
        diff, tol, within = compare_cell(row.paper_shown, row.ours_shown,
                                         percent=row.unit == "%")
        if describes_setup(row.quantity) and tol:
            tol, within = NOT_A_RESULT, None
        data = PAPER_DATA if row.data_role == PAPER_DATA else SUBSTITUTE_DATA
        names, cells = out.setdefault(row.table, (list(keys), []))
        cells.append(Cell(tuple(keys.values()), row.quantity, row.paper_shown,
                          row.ours_shown, diff, tol, within, data))
    return out


def read_cells(csv_path, percent=(), lines=()):
    """(key column names, [Cell]) of one rendered table read back (:func:`table_rows`):
    ``percent``, the quantities the target's config puts on a percentage scale (besides
    those whose header has "%"); ``lines``, the target's datasets
    (:class:`~mlkit.report.data_roles.DataLine`) that say each cell's data."""
    from .comparison import table_comparison

    table = table_rows(csv_path)
    frame = table_comparison(table, Path(csv_path).stem, lines=lines, percent=percent)
    names, cells = frame_cells(frame).get(Path(csv_path).stem, ([], []))
    if not lines:               # no datasets given: whose data the rows ran on is unknown
        cells = [dataclasses.replace(c, data="") for c in cells]
    if not cells:
        pairs = pair_columns(list(table.columns))
        if not pairs:
            return [], []
        first = list(table.columns).index(pairs[0][0])
        names = [c for c in table.columns[:first] if column_side(c) is None]
    return names, cells

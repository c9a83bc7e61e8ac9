"""The cells of a result table that carry a paper number, and how far ours is from it.

Every renderer writes its table with ``write_table`` and names its columns ``X (paper...)`` and
``X (ours...)``; a cell pair whose paper entry is a number (optionally ``± spread``) is
compared as displayed: ours is within when it is at most the paper's spread away, or, where
the paper gives none, 2 points in the table's displayed scale (2 on a percentage or count
scale, 0.02 where both numbers are fractions in [0, 1]).
"""

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pandas as pd

from .tables import format_number

__all__ = ["Cell", "compare_cell", "read_cells"]

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_CELL = re.compile(rf"^\s*({_NUM})\s*(?:±\s*({_NUM}))?\s*$")


@dataclass(frozen=True)
class Cell:
    """One paper number beside ours. ``within``: True/False, or None when the paper's entry
    is not a number (``"> 20"``), which is shown but not counted."""

    keys: tuple
    quantity: str
    paper: str
    ours: str
    difference: str = ""
    tolerance: str = ""
    within: Optional[bool] = None


def _number(text):
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


def compare_cell(paper, ours):
    """(difference text, tolerance text, within) of a paper cell and ours, as displayed;
    within is None when the paper's entry is not a number (nothing to compare).

    >>> compare_cell("0.449 ± 0.003", "0.456 ± 0.004")
    ('+0.007', '±0.003 (paper)', False)
    >>> compare_cell("87.07", "86.10 ± 1.20")
    ('-0.97', '±2 (2 points)', True)
    >>> compare_cell("> 20", "13")
    ('', '', None)
    """
    p, o = _number(paper), _number(ours)
    if p is None:
        return "", "", None
    if p[1] is not None:
        tol, tol_text = p[1], f"±{paper.split('±')[1].strip()} (paper)"
    elif max(abs(p[0]), abs(o[0]) if o else 0.0) <= 1 and (p[2] or (o and o[2])):
        tol, tol_text = 0.02, "±0.02 (2 points)"
    else:
        tol, tol_text = 2.0, "±2 (2 points)"
    if o is None:
        return "not measured", tol_text, False
    decimals = max(p[2], o[2])
    diff = round(o[0] - p[0], decimals)
    text = f"{diff:+.{decimals}f}" if diff != 0 else f"{0:.{decimals}f}"
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


def read_cells(csv_path):
    """(key column names, [Cell]) of one table: its Markdown (the cells as displayed) beside
    the CSV ``write_table`` wrote, else the CSV formatted as the Markdown would be."""
    md = Path(csv_path).with_suffix(".md")
    parsed = _md_rows(md) if md.is_file() else None
    columns, rows = parsed if parsed is not None else _csv_rows(csv_path)
    marked = [i for i, c in enumerate(columns) if "(paper" in c or "(ours" in c]
    keys = columns[:marked[0]] if marked else []
    index = {c: i for i, c in enumerate(columns)}
    pairs = [(c, c.replace("(paper", "(ours", 1)) for c in columns if "(paper" in c]
    pairs = [(p, o) for p, o in pairs if o in index]
    cells = []
    for row in rows:
        key = tuple(row[index[k]] for k in keys)
        for p_col, o_col in pairs:
            paper, ours = row[index[p_col]], row[index[o_col]]
            if paper in ("-", ""):
                continue
            diff, tol, within = compare_cell(paper, ours)
            quantity = p_col.replace("(paper, ", "(").replace(" (paper)", "")
            cells.append(Cell(key, quantity, paper, ours, diff, tol, within))
    return keys, cells

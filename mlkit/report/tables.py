"""Result tables written as Markdown, CSV and LaTeX, each with its caption."""

import math
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .._io import write_text

__all__ = ["write_table", "format_mean_ci", "format_number", "collecting_tables"]


def format_number(value, digits=3):
    """A table cell: '-' for a missing value, integers as such, floats to ``digits`` places."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)) or (isinstance(value, float) and value.is_integer()
                                                and abs(value) >= 1):
        return f"{int(value):d}"
    return f"{value:.{digits}f}"


def format_mean_ci(mean, half_width, digits=3):
    """'0.456 ± 0.003', or the mean alone when the interval is undefined; a string (e.g. a
    paper's "-" or "n/a") is kept as written."""
    if isinstance(mean, str):
        return mean
    if mean is None or math.isnan(mean):
        return "-"
    if half_width is None or (isinstance(half_width, float) and math.isnan(half_width)):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {half_width:.{digits}f}"


_COLLECTORS = []         # the dicts of open collecting_tables() blocks


@contextmanager
def collecting_tables():
    """Yield a dict that collects {name: data frame} of every table :func:`write_table`
    writes within the block (what :mod:`mlkit.report.comparison` builds its frame from)."""
    tables = {}
    _COLLECTORS.append(tables)
    try:
        yield tables
    finally:
        _COLLECTORS.remove(tables)


def _latex_escape(text):
    out = str(text)
    for a, b in [("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"),
                 ("#", r"\#"), ("<", r"$<$"), (">", r"$>$"), ("±", r"$\pm$"),
                 ("≥", r"$\geq$"), ("≤", r"$\leq$")]:
        out = out.replace(a, b)
    return out


def write_table(df, out_dir, caption, name="table"):
    """Write ``df`` as ``<name>.md``, ``<name>.csv`` and ``<name>.tex`` (atomically).

    The caption (which must name the data's provenance) heads the Markdown file, is the
    LaTeX ``\\caption`` and a ``#`` comment line of the CSV. Returns the Markdown text.
    Within a :func:`collecting_tables` block, ``df`` is also handed to the block.
    """
    out_dir = Path(out_dir)
    for tables in _COLLECTORS:
        tables[name] = df.copy()
    cells = df.map(format_number) if hasattr(df, "map") else df.applymap(format_number)
    md = f"{caption}\n\n{cells.to_markdown(index=False, disable_numparse=True)}\n"
    write_text(out_dir / f"{name}.md", md)
    write_text(out_dir / f"{name}.csv", f"# {caption}\n" + df.to_csv(index=False))
    cols = "l" * len(df.columns)
    lines = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{cols}}}", r"\hline",
             " & ".join(_latex_escape(c) for c in df.columns) + r" \\", r"\hline"]
    lines += [" & ".join(_latex_escape(v) for v in row) + r" \\" for row in cells.values.tolist()]
    lines += [r"\hline", r"\end{tabular}", rf"\caption{{{_latex_escape(caption)}}}",
              r"\end{table}", ""]
    write_text(out_dir / f"{name}.tex", "\n".join(lines))
    return md

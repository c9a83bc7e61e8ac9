"""A target's comparison frame: every number the paper prints beside ours, one row each.

Every render writes it as ``comparison.csv`` beside its tables; ``mlkit report`` builds
``REPRODUCTION.md`` from it (never by reading the rendered tables back). Its columns
(:data:`COLUMNS`, checked by :func:`validate_comparison`):

* ``dataset``: the datasets the row names (labels, ``"; "``-joined; empty when it names none:
  the row is over every dataset of the target); ``method``: the row's method (empty when the
  table has no ``method`` column);
* ``quantity``: what is compared (``Mean-AP``, ``accuracy (per problem)``), ``unit``: ``%``
  for a percentage (the column says ``%`` or the config's ``report.scale: 100``), ``s`` for
  a time in seconds, else empty (the quantity's own unit: a fraction, a count, ...);
* ``paper``, ``paper_spread``, ``ours``, ``ours_spread``: the numbers as the table shows
  them (NaN where the entry is not a number, e.g. the paper's ``"> 20"``, or has no spread);
* ``n``: the runs behind ours: the table's ``runs`` column where it has one, else the runs
  of the row's dataset and method when it names one of each (missing otherwise: a row over
  several datasets or methods, or a paper row without runs);
* ``data_role``: whose data the row ran on (:mod:`mlkit.report.data_roles`): the paper's
  data, a real substitute, or synthetic.

and, so the report shows each cell exactly as its table does, ``table`` (the table's file
name, without suffix), ``keys`` (the row's key columns as a JSON object: the columns left
of its first paper number) and ``paper_shown`` / ``ours_shown`` (the cells as displayed).

The frame is built from the very data frames the renderer writes as tables
(:func:`~mlkit.report.tables.write_table` hands each to :func:`collecting_tables`), its
paper and ours columns paired as :func:`~mlkit.report.reproduction_cells.pair_columns`
says; a renderer may instead return its own frame in ``Rendered.comparison``.
"""

import json
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from .._errors import MlkitError
from .._io import write_text
from .data_roles import DATA_ROLES, data_lines, percent_quantities, row_lines, row_role
from .reproduction_cells import column_side, pair_columns, shown_number
from .tables import collecting_tables, format_number

__all__ = ["COLUMNS", "SHOWN_COLUMNS", "FILE", "comparison_frame", "validate_comparison",
           "table_comparison", "tables_comparison", "write_comparison", "read_comparison",
           "collecting_tables", "render_with_comparison", "target_lines"]

#: the comparison frame's columns, in order
COLUMNS = ("dataset", "method", "quantity", "unit", "paper", "paper_spread", "ours",
           "ours_spread", "n", "data_role")
#: the columns that say where a row comes from and how its cells are shown
SHOWN_COLUMNS = ("table", "keys", "paper_shown", "ours_shown")
#: the file every render writes it to
FILE = "comparison.csv"

_FLOATS = ("paper", "paper_spread", "ours", "ours_spread")
_TEXTS = ("dataset", "method", "quantity", "unit", "data_role") + SHOWN_COLUMNS
UNITS = ("", "%", "s")


def comparison_frame(rows=()):
    """The comparison frame of ``rows`` (dicts with the keys of :data:`COLUMNS` and
    :data:`SHOWN_COLUMNS`), its columns in order and of their dtypes."""
    df = pd.DataFrame(list(rows), columns=list(COLUMNS + SHOWN_COLUMNS))
    for c in _TEXTS:
        df[c] = df[c].fillna("").astype(str).astype(object)
    for c in _FLOATS:
        df[c] = pd.to_numeric(df[c]).astype("float64")
    df["n"] = pd.array(df["n"].tolist(), dtype="Int64")
    return df


def validate_comparison(df, where="comparison frame"):
    """Raise :class:`MlkitError` (one line saying what is wrong) unless ``df`` is a
    comparison frame: the columns of :data:`COLUMNS` then :data:`SHOWN_COLUMNS`, text
    columns of strings, numbers as floats, ``n`` as nullable integers, a known ``unit`` and
    ``data_role``. Returns ``df``."""
    want = list(COLUMNS + SHOWN_COLUMNS)
    if list(df.columns) != want:
        missing = [c for c in want if c not in df.columns]
        extra = [c for c in df.columns if c not in want]
        raise MlkitError(f"{where}: columns must be {', '.join(want)}"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + (f"; unexpected {', '.join(map(str, extra))}" if extra else "")
                         + ("" if missing or extra else "; they are in another order"))
    for c in _FLOATS:
        if df[c].dtype != np.float64:
            raise MlkitError(f"{where}: column {c!r} must be float64, not {df[c].dtype}")
    if str(df["n"].dtype) != "Int64":
        raise MlkitError(f"{where}: column 'n' must be Int64 (nullable integers), "
                         f"not {df['n'].dtype}")
    for c in _TEXTS:
        bad = [v for v in df[c] if not isinstance(v, str)]
        if bad:
            raise MlkitError(f"{where}: column {c!r} must hold strings, not {bad[0]!r}")
    for c, allowed in (("unit", UNITS), ("data_role", DATA_ROLES)):
        bad = sorted(set(df[c]) - set(allowed))
        if bad:
            raise MlkitError(f"{where}: column {c!r} holds {bad[0]!r}; it must be one of "
                             + ", ".join(repr(a) for a in allowed))
    for c in ("paper", "ours"):
        bad = [(s, v) for s, v in zip(df[f"{c}_shown"], df[c]) if not _same(s, v)]
        if bad:
            raise MlkitError(f"{where}: {c!r} is {bad[0][1]!r} where {c}_shown shows "
                             f"{bad[0][0]!r}")
    return df


def _same(shown, value):
    """Whether ``value`` is the number the cell text ``shown`` displays (NaN: none)."""
    number = shown_number(shown)
    return np.isnan(value) if number is None else number[0] == value


def _unit(quantity, percent):
    if percent:
        return "%"
    q = quantity.strip()
    return "s" if q == "s" or q.endswith(" s") or q.endswith(" s/run") else ""


def table_comparison(table, name="table", *, lines=(), percent=(), counts=None):
    """The comparison rows (a frame) of one table: ``table`` is the data frame written as
    ``<name>.md/.csv/.tex`` (cells shown as :func:`~mlkit.report.tables.format_number`
    shows them), ``lines`` the target's :class:`~mlkit.report.data_roles.DataLine` s (for
    ``dataset`` and ``data_role``), ``percent`` the quantities its config puts on a
    percentage scale (besides those whose header has ``%``), ``counts`` the number of runs
    per (dataset, method) (for ``n`` where the table has no ``runs`` column). A row whose
    paper entry is empty or ``-`` has no paper number: it gives no comparison row."""
    columns = [str(c) for c in table.columns]
    pairs = pair_columns(columns)
    if not pairs:
        return comparison_frame()
    first = columns.index(pairs[0][0])
    keys = [c for c in columns[:first] if column_side(c) is None]
    shown = table.astype(object).map(format_number) if hasattr(table, "map") else \
        table.astype(object).applymap(format_number)
    shown.columns = columns
    lines = list(lines)
    out = []
    for raw, row in zip(table.itertuples(index=False), shown.itertuples(index=False)):
        row = dict(zip(columns, (str(v).strip() for v in row)))
        raw = dict(zip(columns, raw))
        key = {k: row[k] for k in keys}
        named = row_lines(key.values(), lines)
        runs = raw.get("runs")
        if "runs" in raw:
            n = int(runs) if isinstance(runs, (int, float, np.integer, np.floating)) \
                and np.isfinite(runs) else None
        else:
            n = (counts or {}).get((named[0].label, key.get("method"))) \
                if len(named) == 1 and key.get("method") else None
        for p_col, o_col, quantity in pairs:
            paper, ours = row[p_col], row[o_col]
            if paper in ("-", ""):
                continue
            is_percent = "%" in p_col or "%" in o_col or column_side(p_col)[1] in percent
            p = shown_number(paper) or (np.nan, None, 0)
            o = shown_number(ours) or (np.nan, None, 0)
            out.append({
                "dataset": "; ".join(x.label for x in named), "method": key.get("method", ""),
                "quantity": quantity, "unit": _unit(quantity, is_percent),
                "paper": p[0], "paper_spread": np.nan if p[1] is None else p[1],
                "ours": o[0], "ours_spread": np.nan if o[1] is None else o[1], "n": n,
                "data_role": row_role(key.values(), lines), "table": name,
                "keys": json.dumps(key, ensure_ascii=False), "paper_shown": paper,
                "ours_shown": ours})
    return comparison_frame(out)


def target_lines(result, spec):
    """The :class:`~mlkit.report.data_roles.DataLine` s of a render's datasets (as
    ``mlkit report`` reads them from its config and manifest)."""
    loaded = {label: {"synthetic": bool(getattr(d, "synthetic", False))}
              for label, d in result.datasets.items()}
    return data_lines(spec, result.spec, {"datasets": loaded})


def tables_comparison(tables, *, lines=(), percent=(), counts=None):
    """The comparison frame of ``tables`` ({name: data frame} written as tables), the
    ``table`` table first, then by name (the order ``mlkit report`` shows them in)."""
    names = sorted(tables, key=lambda n: (n != "table", n))
    frames = [table_comparison(tables[n], n, lines=lines, percent=percent, counts=counts)
              for n in names]
    frames = [f for f in frames if len(f)]
    return comparison_frame() if not frames else \
        comparison_frame(pd.concat(frames, ignore_index=True).to_dict("records"))


def write_comparison(df, out_dir):
    """Validate ``df`` and write it as ``<out_dir>/comparison.csv`` (atomically; unchanged
    bytes leave the file untouched). Returns its path."""
    validate_comparison(df, f"{Path(out_dir) / FILE}")
    return write_text(Path(out_dir) / FILE, df.to_csv(index=False))


def read_comparison(path):
    """The comparison frame saved at ``path`` (validated)."""
    try:
        df = pd.read_csv(path, dtype={c: str for c in _TEXTS}, keep_default_na=False,
                         na_values={c: [""] for c in _FLOATS + ("n",)})
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise MlkitError(f"{path}: cannot read the comparison frame "
                         f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
                         ) from None
    try:
        df = comparison_frame(df.to_dict("records")) if list(df.columns) == list(
            COLUMNS + SHOWN_COLUMNS) else df
    except (TypeError, ValueError) as exc:
        raise MlkitError(f"{path}: not a comparison frame ({exc})") from None
    return validate_comparison(df, str(path))


def render_with_comparison(fn, result, out_dir, spec):
    """Run the renderer ``fn(result, out_dir, spec)`` and write its comparison frame
    (``Rendered.comparison``, else the frame of the tables it wrote) as ``comparison.csv``;
    returns its :class:`~mlkit.targets.Rendered` with the frame and the file."""
    with collecting_tables() as tables:
        rendered = fn(result, Path(out_dir), spec)
    frame = getattr(rendered, "comparison", None)
    if frame is None:
        runs = result.frame
        counts = {k: int(v) for k, v in runs.groupby(["dataset", "method"]).size().items()} \
            if len(runs) else {}
        frame = tables_comparison(tables, lines=target_lines(result, spec),
                                  percent=percent_quantities(spec, result.spec),
                                  counts=counts)
    path = write_comparison(frame, out_dir)
    rendered.comparison = frame
    if path not in [Path(f) for f in rendered.files]:
        rendered.files = list(rendered.files) + [path]
    return rendered

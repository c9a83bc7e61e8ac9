"""The comparison frame (mlkit.report.comparison): its columns and dtypes, how a table's
paper and ours columns become its rows, and the page built from it."""

import json

import numpy as np
import pandas as pd
import pytest

from mlkit._errors import MlkitError
from mlkit.report.comparison import (COLUMNS, FILE, SHOWN_COLUMNS, comparison_frame,
                                     read_comparison, table_comparison, tables_comparison,
                                     validate_comparison, write_comparison)
from mlkit.report.data_roles import DataLine
from mlkit.report.reproduction_cells import table_rows
from mlkit.report.tables import collecting_tables, write_table

LINES = [DataLine("synth", "mssboost-synthetic", None, True, True),
         DataLine("scene", "scene", "Consumer", False, False),
         DataLine("musk1", "musk1", None, False, True)]

TABLE = pd.DataFrame([
    {"dataset": "synth", "method": "A", "score (paper)": "0.250 ± 0.010",
     "score (ours)": "0.262 ± 0.004", "models (paper)": "> 20", "models (ours)": 13,
     "runs": 10},
    {"dataset": "scene", "method": "A", "score (paper)": 70.0, "score (ours)": 73.0,
     "models (paper)": None, "models (ours)": 4, "runs": 10},
    {"dataset": "musk1", "method": "B", "score (paper)": 0.5, "score (ours)": "-",
     "models (paper)": None, "models (ours)": 3, "runs": 0},
    {"dataset": "(all)", "method": "C", "score (paper)": "-", "score (ours)": 0.1,
     "models (paper)": None, "models (ours)": None, "runs": None}])


def _frame():
    return table_comparison(TABLE, lines=LINES, percent={"score"})


def test_a_tables_pairs_become_one_row_each_with_its_numbers_and_data():
    df = validate_comparison(_frame())
    assert list(df.columns) == list(COLUMNS + SHOWN_COLUMNS)
    # the last row has no paper number, missing paper cells give no row
    assert df[["dataset", "method", "quantity"]].values.tolist() == [
        ["synth", "A", "score"], ["synth", "A", "models"], ["scene", "A", "score"],
        ["musk1", "B", "score"]]
    first = df.iloc[0]
    assert (first.paper, first.paper_spread, first.ours, first.ours_spread) == (
        0.25, 0.01, 0.262, 0.004)
    assert (first.unit, first.n, first.data_role) == ("%", 10, "synthetic")
    # "> 20" is shown, not a number; ours missing is NaN
    assert np.isnan(df.iloc[1].paper) and df.iloc[1].paper_shown == "> 20"
    assert df.iloc[1].unit == "" and df.iloc[1].ours == 13
    assert np.isnan(df.iloc[3].ours) and df.iloc[3].ours_shown == "-"
    # a real substitute, the paper's own real data
    assert df.data_role.tolist()[2:] == ["substitute", "paper's data"]
    assert json.loads(df.iloc[2]["keys"]) == {"dataset": "scene", "method": "A"}
    # cells shown as the Markdown table shows them
    assert df.iloc[2].paper_shown == "70" and df.iloc[2].ours_shown == "73"


def test_a_row_naming_no_dataset_is_over_every_dataset_of_the_target():
    df = table_comparison(pd.DataFrame([{"method": "A", "acc (paper)": 0.5,
                                         "acc (ours)": 0.4}]), lines=LINES)
    assert df.dataset.tolist() == [""] and df.data_role.tolist() == ["substitute"]
    only_paper = [LINES[2]]
    df = table_comparison(pd.DataFrame([{"method": "A", "acc (paper)": 0.5,
                                         "acc (ours)": 0.4}]), lines=only_paper)
    assert df.data_role.tolist() == ["paper's data"]
    times = table_comparison(pd.DataFrame([{"method": "A", "train s (paper)": 94,
                                            "train s (ours)": 3.2}]))
    assert times.unit.tolist() == ["s"]


def test_the_validator_names_what_is_wrong():
    good = _frame()
    with pytest.raises(MlkitError, match="missing n"):
        validate_comparison(good.drop(columns="n"))
    with pytest.raises(MlkitError, match="another order"):
        validate_comparison(good[list(reversed(good.columns))])
    bad = good.copy()
    bad["paper"] = bad["paper"].astype(str)
    with pytest.raises(MlkitError, match="'paper' must be float64"):
        validate_comparison(bad)
    bad = good.copy()
    bad["n"] = bad["n"].astype("float64")
    with pytest.raises(MlkitError, match="'n' must be Int64"):
        validate_comparison(bad)
    for col, value, said in (("unit", "percent", "'unit' holds 'percent'"),
                             ("data_role", "paper", "'data_role' holds 'paper'"),
                             ("quantity", 3, "'quantity' must hold strings")):
        bad = good.copy()
        bad.loc[0, col] = value
        with pytest.raises(MlkitError, match=said):
            validate_comparison(bad)
    bad = good.copy()
    bad.loc[0, "ours"] = 0.3                       # not the number its cell shows
    with pytest.raises(MlkitError, match="'ours' is 0.3 where ours_shown shows"):
        validate_comparison(bad)
    assert validate_comparison(comparison_frame()).empty


def test_written_and_read_back_it_is_the_same_frame(tmp_path):
    df = _frame()
    path = write_comparison(df, tmp_path)
    assert path == tmp_path / FILE
    back = read_comparison(path)
    pd.testing.assert_frame_equal(back, df)
    mtime = path.stat().st_mtime_ns
    write_comparison(df, tmp_path)                  # same bytes: untouched
    assert path.stat().st_mtime_ns == mtime
    (tmp_path / "bad.csv").write_text("dataset,method\nx,y\n")
    with pytest.raises(MlkitError, match="columns must be"):
        read_comparison(tmp_path / "bad.csv")


def test_the_frame_of_written_tables_equals_the_tables_read_back(tmp_path):
    """What a render collects (the data frames it writes) and what its files say are the
    same cells: the frame carries the tables' numbers."""
    curve = pd.DataFrame([{"x": 1, "y": 0.5}])
    with collecting_tables() as tables:
        write_table(TABLE, tmp_path, "caption")
        write_table(curve, tmp_path, "caption", name="curve")
    assert sorted(tables) == ["curve", "table"]
    frame = tables_comparison(tables, lines=LINES, percent={"score"})
    read = tables_comparison({"table": table_rows(tmp_path / "table.csv"),
                              "curve": table_rows(tmp_path / "curve.csv")},
                             lines=LINES, percent={"score"})
    pd.testing.assert_frame_equal(frame.drop(columns="n"), read.drop(columns="n"))
    assert frame.n.tolist() == [10, 10, 10, 0]


def test_every_committed_frame_holds_its_targets_table_cells():
    """Each target's committed comparison.csv against its committed tables read back: the
    same cells, numbers and data roles a known kind."""
    from .conftest import ROOT, assert_comparison_matches_tables

    frames = sorted((ROOT / "results").glob("*/*/" + FILE))
    if not frames:
        pytest.skip("no committed results in this checkout")
    for path in frames:
        frame = assert_comparison_matches_tables(path.parent)
        assert set(frame.data_role) <= {"paper's data", "substitute", "synthetic"}


def test_n_is_the_tables_runs_else_the_runs_of_the_rows_dataset_and_method():
    table = TABLE.drop(columns="runs")
    counts = {("synth", "A"): 20, ("scene", "A"): 7}
    df = table_comparison(table, lines=LINES, counts=counts)
    assert df.n.tolist()[:3] == [20, 20, 7] and df.n.isna().tolist()[3]   # musk1 B: no runs
    no_method = table_comparison(table.drop(columns="method"), lines=LINES, counts=counts)
    assert no_method.n.isna().all()


def test_a_renderers_own_frame_is_validated_and_written(tmp_path):
    from mlkit.report.comparison import render_with_comparison
    from mlkit.targets import Rendered

    rendered = render_with_comparison(lambda *a: Rendered("t", comparison=_frame()), None,
                                      tmp_path, None)
    assert rendered.files == [tmp_path / FILE]
    pd.testing.assert_frame_equal(read_comparison(tmp_path / FILE), _frame())
    bad = _frame().drop(columns="unit")
    with pytest.raises(MlkitError, match="missing unit"):
        render_with_comparison(lambda *a: Rendered("t", comparison=bad), None, tmp_path, None)
    (tmp_path / FILE).write_text('dataset,method\n"x\n')
    with pytest.raises(MlkitError, match="cannot read the comparison frame"):
        read_comparison(tmp_path / FILE)

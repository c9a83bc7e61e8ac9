"""`mlkit report`: REPRODUCTION.md from a small results tree made here (a fixture paper with a
full run, a quick-only run and a target never run), and `--check` failing when the results
change under the page."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from mlkit._errors import MlkitError
from mlkit.cli import cli
from mlkit.registry import CLAIMS, TARGETS, Entry
from mlkit.report.reproduction import (README_ROW, Cell, ResultsView, build_page,
                                       compare_cell, read_cells, readme_row, summary_numbers)
from mlkit.report.tables import write_table
from mlkit.targets import Target, resolve_target, saved_results
from mlkit.verify import Claim, ClaimResult

from .conftest import CONFIGS

PAPER = "reprotoy"

CONFIG = """
paper: reprotoy
artifact: {artifact}
title: "{title}"
datasets:
  - {{name: mssboost-synthetic, label: synth}}
  - {{name: scene, role: Consumer}}
  - {{name: corel5k}}
  - {{name: musk1}}
  - {{name: nus-animal, role: NUS-WIDE, when_present: true}}
methods:
  - {{name: rsbag, label: A}}
  - {{name: rsbag, label: B}}
metrics: [hamming_error]
reported:
  synth: {{A: {{hamming_error: 0.25}}}}
  musk1: {{A: {{hamming_error: 0.5}}}}
"""

TITLES = {"table1": "Toy Table 1", "fig1": "Toy Fig. 1", "fig2": "Toy Fig. 2"}


RAN = {"synth", "scene", "corel5k", "musk1"}        # nus-animal: absent (when_present)


def _planned_keys(target, quick=False):
    """The run keys the toy target's config plans now (a manifest holding exactly these is
    current, any other is outdated)."""
    from mlkit.experiment import planned_runs
    from mlkit.targets import target_spec

    return [key for key, _ in planned_runs(target_spec(resolve_target(target), quick=quick)[1],
                                           "unused", datasets=RAN)]


def _manifest(target, keys=("k1", "k2")):
    runs = [{"key": k, "fit_s": (1.5, 2.0)[i] if i < 2 else 0.0,
             "predict_s": 0.5 if i == 0 else 0.0} for i, k in enumerate(keys)]
    return {"target": target, "quick": False, "git_revision": "0123456789abcdef0123+dirty",
            "versions": {"python": "3.11.7", "numpy": "2.4.6"},
            "machine": {"platform": "Linux-test", "cpus": 2},
            "finished_at": "2026-11-23T12:00:00+00:00", "wall_time_s": 75.0,
            "runs": runs,
            "datasets": {"synth": {"synthetic": True}, "scene": {"synthetic": False},
                         "corel5k": {"synthetic": False}, "musk1": {"synthetic": False}}}


def _write_result(out, target, rows, figures, png=False, records=False):
    out.mkdir(parents=True)
    keys = _planned_keys(target)
    if records:     # the run records, and the manifest naming them as a run from the
        for i, key in enumerate(keys[:2]):          # project root stores them
            rec = out / "runs" / "synth" / "A" / f"r0{i}-f00.json"
            rec.parent.mkdir(parents=True, exist_ok=True)
            rec.write_text(json.dumps({"key": key, "metrics": {}}))
    write_table(pd.DataFrame(rows), out, f"{target}, paper vs ours. Data: toy.")
    (out / "summary.json").write_text(json.dumps(
        {"target": target, "quick": out.name.endswith("-quick"), "provenance": "toy",
         "figures": figures}, indent=2, sort_keys=True))
    manifest = _manifest(target, keys)
    if records:
        manifest["runs_dir"] = f"results/{target}"
    (out / "manifest.json").write_text(json.dumps(manifest))
    if png:
        (out / f"{target.split('/')[1]}.png").write_bytes(b"\x89PNG\r\n\x1a\n")


def _claim(number, artifact, threshold=None, error=False):
    def check():
        if error:
            raise MlkitError("dataset corel5k is not at hand")
        records, out_dir, quick = saved_results(resolve_target(f"{PAPER}/{artifact}"))
        if records is None:
            return ClaimResult(None, f"no saved results: run `mlkit reproduce "
                                     f"{PAPER}/{artifact}` first")
        score = json.loads((out_dir / "summary.json").read_text())["figures"]["score.synth.A"]
        return ClaimResult(score <= threshold, f"score {score:.3f} (paper <= {threshold}) "
                           f"[{'quick' if quick else 'full'} results in {out_dir}]")
    return Claim(PAPER, str(number), f"claim on {artifact}", check)


def _records_claim(number):
    def check():
        records, out_dir, quick = saved_results(resolve_target(f"{PAPER}/table1"))
        return ClaimResult(len(records) == 2, f"{len(records)} run records "
                           f"[{'quick' if quick else 'full'} results in {out_dir}]")
    return Claim(PAPER, str(number), "claim on table1's run records", check)


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """configs/ and results/ of the fixture paper under tmp_path, registered for the test."""
    TARGETS.names()                     # load the shipped registries first
    configs = tmp_path / "configs"
    (configs / PAPER).mkdir(parents=True)
    for artifact, title in TITLES.items():
        (configs / PAPER / f"{artifact}.yaml").write_text(
            CONFIG.format(artifact=artifact, title=title))
        target = Target(PAPER, artifact, configs, title)
        monkeypatch.setitem(TARGETS._entries, target.name, Entry(target.name, target, title))
    claims = [_claim(1, "table1", 0.3), _claim(2, "fig1", 0.3), _claim(3, "fig2", 0.3),
              _claim(4, "table1", error=True), _records_claim(5)]
    monkeypatch.setitem(CLAIMS._entries, PAPER, Entry(PAPER, claims))
    results = tmp_path / "results"
    monkeypatch.setenv("MLKIT_RESULTS", str(results))
    rows = [
        {"dataset": "synth", "method": "A", "score (paper)": "0.250 ± 0.010",
         "score (ours)": "0.262 ± 0.004", "models (paper)": "> 20", "models (ours)": 13,
         "positives (paper)": 200, "positives (ours)": 197},
        {"dataset": "synth", "method": "B", "score (paper)": 0.3,
         "score (ours)": "0.310 ± 0.020", "models (paper)": None, "models (ours)": 9},
        {"dataset": "scene", "method": "A", "score (paper)": 70.0, "score (ours)": 73.0,
         "models (paper)": None, "models (ours)": 4},
        {"dataset": "musk1", "method": "A", "score (paper)": "0.500 ± 0.010",
         "score (ours)": "0.505", "models (paper)": None, "models (ours)": 3},
    ]
    _write_result(results / PAPER / "table1", f"{PAPER}/table1", rows,
                  {"score.synth.A": 0.262, "score.synth.B": 0.31}, png=True, records=True)
    _write_result(results / PAPER / "fig1-quick", f"{PAPER}/fig1",
                  [{"method": "A", "score % (paper)": "87.07",
                    "score % (ours)": "86.10 ± 1.20"}],
                  {"score.synth.A": 0.2})
    return tmp_path


def _page(root, **kw):
    text, reports = build_page([PAPER], view=ResultsView(root / "results", untracked=True),
                               page_path=root / "REPRODUCTION.md", **kw)
    return text, reports


def _section(text, name):
    start = text.index(f'<a id="{name.replace("/", "-")}"></a>')
    end = text.find('<a id="', start + 1)
    return text[start:end if end > 0 else None]


def test_compare_cell_spread_and_two_points():
    # the paper's spread where it gives one
    assert compare_cell("0.449 ± 0.003", "0.451 ± 0.010") == ("+0.002", "±0.003 (paper)", True)
    assert compare_cell("0.449 ± 0.003", "0.456")[2] is False
    # 2 points: 0.02 on a fraction scale, 2 on a percentage scale
    assert compare_cell("0.300", "0.319")[1:] == ("±0.02 (2 points)", True)
    assert compare_cell("0.300", "0.321")[2] is False
    assert compare_cell("87.07", "85.07 ± 3.00", percent=True) == ("-2.00", "±2 (2 points)",
                                                                  True)
    # equal: no sign; a paper marker is shown, not compared; ours missing counts against
    assert compare_cell("0.39", "0.39") == ("0.00", "±0.02 (2 points)", True)
    assert compare_cell("> 20", "13") == ("", "", None)
    assert compare_cell("0.5", "-") == ("not measured", "±0.02 (2 points)", False)


def test_the_scale_comes_from_the_paper_never_from_ours():
    # a fraction-scale paper number beside an out-of-scale ours (a unit slip, a diverged
    # run) is outside, whatever ours is
    for ours in ("1.3", "2.4", "0.47", "45"):
        assert compare_cell("0.449", ours)[1:] == ("±0.02 (2 points)", False)
    # a percentage below 1 (the column says %) gets 2 points, not 0.02
    assert compare_cell("0.85", "2.5", percent=True)[1:] == ("±2 (2 points)", True)
    assert compare_cell("0.85", "2.9", percent=True)[2] is False
    # whole numbers (counts, indices): exact, ours rounded to units; ±2 on an index of
    # 1..5 could not fail
    assert compare_cell("3", "2") == ("-1", "exact (whole number)", False)
    assert compare_cell("3", "5")[2] is False and compare_cell("3", "1")[2] is False
    assert compare_cell("3", "3") == ("0", "exact (whole number)", True)
    assert compare_cell("200", "197")[2] is False and compare_cell("6525", "6525")[2] is True
    assert compare_cell("11", "11.4")[2] is True and compare_cell("11", "11.6")[2] is False
    # other numbers in their own unit: the difference, not counted
    assert compare_cell("3.18", "1.644") == ("-1.536", "not counted (no scale for 2 points)",
                                             None)
    assert compare_cell("24.27", "-")[2] is None


def test_the_config_scale_makes_a_column_a_percentage(tmp_path):
    write_table(pd.DataFrame([{"d": "x", "accuracy (paper)": 70.0, "accuracy (ours)": 71.5}]),
                tmp_path, "caption")
    (cell,) = read_cells(tmp_path / "table.csv", percent={"accuracy"})[1]
    assert (cell.paper, cell.ours, cell.tolerance, cell.within) == ("70", "71.500",
                                                                    "±2 (2 points)", True)
    (cell,) = read_cells(tmp_path / "table.csv")[1]
    assert (cell.tolerance, cell.within) == ("exact (whole number)", False)


def test_paper_and_ours_columns_pair_by_a_leading_or_trailing_marker(tmp_path):
    # hfss/table3's header: "paper %" beside "ours % (per problem)" and "ours % (multi-class)"
    write_table(pd.DataFrame([
        {"dataset": "mfeat n=100", "paper's size": "100 (50+50)",
         "train per problem (ours)": "50+50", "method": "bestK", "paper %": "91.54 ± 7.09",
         "ours % (per problem)": "99.10 ± 1.20", "ours % (multi-class)": "97.00 ± 0.50",
         "repetitions": 5},
        {"dataset": "mfeat n=100", "paper's size": "100 (50+50)",
         "train per problem (ours)": "50+50", "method": "full", "paper %": "89.05",
         "ours % (per problem)": "90.00", "ours % (multi-class)": "80.00", "repetitions": 5}]),
        tmp_path, "caption")
    keys, cells = read_cells(tmp_path / "table.csv")
    assert keys == ["dataset", "paper's size", "method"]
    assert cells == [
        Cell(("mfeat n=100", "100 (50+50)", "bestK"), "% (per problem)", "91.54 ± 7.09",
             "99.10 ± 1.20", "+7.56", "±7.09 (paper)", False),
        Cell(("mfeat n=100", "100 (50+50)", "full"), "% (per problem)", "89.05", "90.00",
             "+0.95", "±2 (2 points)", True)]
    # the same qualifier pairs first; a marker ends the header or starts it
    from mlkit.report.reproduction_cells import pair_columns
    assert pair_columns(["positives (paper, of 1000)", "positives in test set (ours)",
                         "positives (ours, of 1000)"]) == [
        ("positives (paper, of 1000)", "positives (ours, of 1000)", "positives (of 1000)")]
    assert pair_columns(["Mean-AP 20 (ours 4) (paper)", "Mean-AP 20 (ours 4) (ours)",
                         "best % (ours)"]) == [
        ("Mean-AP 20 (ours 4) (paper)", "Mean-AP 20 (ours 4) (ours)", "Mean-AP 20 (ours 4)")]
    assert pair_columns(["paper's size", "dims (paper)", "bestK dims, no PCA (ours)"]) == []


def test_page_status_differences_claims_and_environment(toy):
    text, reports = _page(toy)
    (rep,) = reports
    status = {t.artifact: t.status for t in rep.targets}
    assert status == {"table1": "full run", "fig1": "quick run only", "fig2": "not run"}

    # summary: 1 of 3 targets (quick never counts); cells on the paper's data (musk1: real,
    # no role) 1 of 1; on substitute data 1 of 4: scene (role Consumer) and synth (a
    # generator rebuilt from the paper's text counts with the stand-ins); 2 of 5 claims
    assert summary_numbers(reports)[PAPER] == (1, 3, 1, 1, 1, 4, 2, 5)
    summary = text[text.index("## Summary"):text.index('<a id="reprotoy">')]
    assert ("| cells on the paper's data within spread | cells on substitute data within "
            "spread |") in summary
    assert "| 1 / 3 (1 quick only) | 1 / 1 | 1 / 4 |" in summary
    assert "2 / 5 (1 ERROR, 1 NOT RUN, 1 PASS on quick results)" in summary
    assert "**cells on substitute data within spread**: the same for rows" in summary

    overview = text[text.index('<a id="reprotoy">'):text.index("### Claims")]
    assert ("| [`table1`](#reprotoy-table1) | Toy Table 1 | full run | 1 / 1 (paper's data); "
            "1 / 4 (substitute) | synthetic, reconstructed from the paper's text; real "
            "substitute; real, for reference; the paper's data; the paper's data not run "
            "(files absent) |") in overview
    assert "| *quick* run only | 1 / 1 (substitute) (quick) |" in overview
    assert "| [`fig2`](#reprotoy-fig2) | Toy Fig. 2 | not run | - |" in overview

    table1 = _section(text, f"{PAPER}/table1")
    # the paper's ± is the tolerance: +0.012 is outside 0.010, marked
    assert ("| synth | A | score | substitute | 0.250 ± 0.010 | 0.262 ± 0.004 | **+0.012** ✗ "
            "| ±0.010 (paper) |") in table1
    assert ("| musk1 | A | score | paper's | 0.500 ± 0.010 | 0.505 | +0.005 "
            "| ±0.010 (paper) |") in table1
    # a count on synthetic data is compared exactly too (counted with the stand-ins)
    assert ("| synth | A | positives | substitute | 200 | 197 | **-3** ✗ "
            "| exact (whole number) |") in table1
    # no spread: 2 points on the scale of the paper's number (0.02 for fractions), exact
    # for a whole number; a row on a stand-in is shown as such
    assert ("| synth | B | score | substitute | 0.300 | 0.310 ± 0.020 | +0.010 "
            "| ±0.02 (2 points) |") in table1
    assert ("| scene | A | score | substitute | 70 | 73 | **+3** ✗ "
            "| exact (whole number) |") in table1
    assert "| synth | A | models | substitute | > 20 | 13 | not compared |  |" in table1
    assert "| synth | B | models |" not in table1           # the paper gives no number
    assert "![reprotoy/table1: table1.png](results/reprotoy/table1/table1.png)" in table1
    assert "[table.md](results/reprotoy/table1/table.md)" in table1
    assert ("Data: `synth` (mssboost-synthetic): synthetic, reconstructed from the paper's "
            "text (counted with the stand-ins); `scene`: real substitute in the role of `Consumer`; "
            "`corel5k`: real, for reference (no role: it stands in for no data the paper "
            "reports); `musk1`: the paper's data; `nus-animal`: the paper's data: not run (files "
            "absent).") in table1
    # summary.json's figures: linked, not inlined
    assert ("Headline figures (2, what `mlkit verify` and `mlkit regress` read): "
            "[summary.json](results/reprotoy/table1/summary.json), SHA-256 of their values "
            "`") in table1
    assert "`score.synth.A`" not in table1

    fig1 = _section(text, f"{PAPER}/fig1")
    assert "Status: **quick run only** (the `--quick` settings: shown, not counted)" in fig1
    assert "results/reprotoy/fig1-quick/" in fig1
    assert "| A | score % | substitute | 87.07 | 86.10 ± 1.20 | -0.97 | ±2 (2 points) |" in fig1
    fig2 = _section(text, f"{PAPER}/fig2")
    assert "Status: **not run** (`mlkit reproduce reprotoy/fig2`)." in fig2
    assert "`nus-animal`: the paper's data." in fig2       # not run: nothing is absent yet
    assert "| quantity |" not in fig2

    claims = text[text.index("### Claims (`mlkit verify reprotoy`)"):]
    claims = claims[:claims.index("<a id=")]
    # the table: verdict, statement and the diagnosis's status; the measured text below it
    assert "| 1 | PASS | claim on table1 | - |" in claims
    assert ("* **Claim 1** (PASS). Measured: score 0.262 (paper &lt;= 0.3) [full results in "
            "results/reprotoy/table1]") in claims
    assert "| 2 | PASS (*quick*) | claim on fig1 |" in claims
    assert "| 3 | NOT RUN | claim on fig2 | untested |" in claims
    assert "* **Claim 3** (NOT RUN). Measured: no saved results" in claims
    assert "| 4 | **ERROR** | claim on table1 |" in claims
    assert "* **Claim 4** (**ERROR**). Measured: dataset corel5k is not at hand" in claims
    assert ("* **Claim 5** (PASS). Measured: 2 run records [full results in "
            "results/reprotoy/table1]") in claims

    env = text[text.index("## Environment of the runs"):]
    assert "`0123456789ab+dirty`" in env and "Linux-test, 2 cpus" in env
    assert "| 8 | 4.0 s | 1 min 15 s | M1 |" in env            # runs, fit+predict, wall time
    assert "| M1 | Linux-test, 2 cpus |" in env                  # each machine said once
    assert "numpy 2.4.6, python 3.11.7 | `reprotoy/fig1`, `reprotoy/table1` |" in env
    # nothing of the moment or machine the page is built on: the same results, the same page
    assert _page(toy)[0] == text
    assert str(toy) not in text and "/tmp" not in text      # links and paths are relative


def test_environment_names_cpu_blas_and_a_run_spread_over_machines(toy):
    """A manifest that records its CPU and BLAS kernels shows them; one whose runs were
    computed on several machines (a long run resumed elsewhere) says so."""
    path = next((toy / "results").rglob("manifest.json"))
    manifest = json.loads(path.read_text())
    manifest["machine"].update(cpu="Test CPU", blas=["openblas 0.3.30 Haswell"])
    manifest["run_machines"] = {"Test CPU; openblas 0.3.30 Haswell": 1,
                                "Other CPU; openblas 0.3.30 SkylakeX": 1}
    path.write_text(json.dumps(manifest))
    env = _page(toy)[0].split("## Environment of the runs")[1]
    assert "Linux-test, 2 cpus, Test CPU, openblas 0.3.30 Haswell; its runs were computed " \
           "on 2 machines (`run_machines` in its manifest)" in env


def test_setup_counts_and_timings_are_shown_not_counted(tmp_path):
    """A "#..." count (fixed by the data or the config) and a time in seconds (the paper's
    hardware) describe the setup: shown with their difference, never counted; a measured
    whole number (models to best) is still compared exactly."""
    write_table(pd.DataFrame([{"method": "A", "#models (paper)": 39, "#models (ours)": 39,
                               "train s (paper)": 94, "train s (ours)": 32.4,
                               "models to best (paper)": 5, "models to best (ours)": 17}]),
                tmp_path, "caption")
    _, cells = read_cells(tmp_path / "table.csv")
    by = {c.quantity: c for c in cells}
    assert by["#models"].within is None and by["train s"].within is None
    assert by["#models"].tolerance.startswith("not counted (a setting")
    assert by["train s"].difference == "-61.600"
    assert by["models to best"].within is False


def test_a_cell_holding_a_pipe_is_read_from_the_csv(tmp_path):
    write_table(pd.DataFrame([{"method": "A|B", "n (paper)": 10.0, "n (ours)": 13}]),
                tmp_path, "caption")
    keys, cells = read_cells(tmp_path / "table.csv")
    assert keys == ["method"]
    assert cells == [Cell(("A|B",), "n", "10", "13", "+3", "exact (whole number)", False)]


def test_a_failing_claim_is_shown_and_not_counted(toy):
    summary = toy / "results" / PAPER / "table1" / "summary.json"
    data = json.loads(summary.read_text())
    data["figures"]["score.synth.A"] = 0.5
    summary.write_text(json.dumps(data))
    text, reports = _page(toy)
    assert "* **Claim 1** (**FAIL**). Measured: score 0.500" in text
    assert summary_numbers(reports)[PAPER][6:] == (1, 5)    # claim 5 alone passes now


def test_check_fails_after_a_summary_is_edited(toy):
    page = toy / "REPRODUCTION.md"
    runner = CliRunner()
    wrote = runner.invoke(cli, ["report", "--out", str(page)])
    assert wrote.exit_code == 0, wrote.output
    assert f"wrote {page}" in wrote.stdout and "## Summary" in page.read_text()
    same = runner.invoke(cli, ["report", "--out", str(page), "--check"])
    assert same.exit_code == 0, same.output
    assert "up to date" in same.stdout

    summary = toy / "results" / PAPER / "table1" / "summary.json"
    data = json.loads(summary.read_text())
    data["figures"]["score.synth.B"] = 0.35
    summary.write_text(json.dumps(data))
    changed = runner.invoke(cli, ["report", "--out", str(page), "--check"])
    assert changed.exit_code == 1
    message = changed.stderr.strip()
    assert "\n" not in message
    assert "differs from what the saved results give" in message
    # the page links summary.json and names its values' digest: an edited value shows
    assert "'Headline figures (2, what" in message and "regenerate with `mlkit report`" in message

    page.unlink()
    missing = runner.invoke(cli, ["report", "--out", str(page), "--check"])
    assert missing.exit_code == 1 and "does not exist" in missing.stderr


def test_check_fails_when_a_table_changes_under_the_page(toy):
    text = _page(toy)[0]
    table = toy / "results" / PAPER / "table1" / "table.md"     # the table as displayed
    assert "| 73 " in table.read_text()
    table.write_text(table.read_text().replace("| 73 ", "| 71 "))
    changed = _page(toy)[0]
    assert changed != text
    assert "| scene | A | score | substitute | 70 | 71 | **+1** ✗ | exact (whole number) |" \
        in changed


def test_the_readme_row_follows_the_page(toy):
    readme = toy / "README.md"
    readme.write_text(f"| paper | short name | status |\n|---|---|---|\n{README_ROW}: old |\n")
    runner = CliRunner()
    res = runner.invoke(cli, ["report"])                  # default: beside results/
    assert res.exit_code == 0, res.output
    assert (toy / "REPRODUCTION.md").is_file()
    row = readme.read_text().splitlines()[2]
    assert row.startswith(README_ROW) and " of " in row and "targets run in full" in row
    readme.write_text(readme.read_text().replace(row, f"{README_ROW}: stale |"))
    stale = runner.invoke(cli, ["report", "--check"])
    assert stale.exit_code == 1 and "README.md differs" in stale.stderr


def test_readme_row_numbers():
    row = readme_row((4, 25, 7, 16, 3, 40, 0, 16))
    assert ("| all | 4 of 25 targets run in full; cells within spread: 7 of 16 (paper's data), "
            "3 of 40 (substitutes); 0 of 16 claims passing |") in row
    assert len(row.split("|")[-2].split()) <= 25           # a README cell: one short fact


def test_the_page_does_not_depend_on_the_current_directory(toy, monkeypatch):
    # the manifest stores runs_dir as the run saw it from the project root
    # ("results/reprotoy/table1"); the claims read the records beside the manifest
    pages = []
    for cwd in (toy, toy / "results" / PAPER, toy.parent):
        monkeypatch.chdir(cwd)
        pages.append(_page(toy)[0])
    assert pages[0] == pages[1] == pages[2]
    assert "* **Claim 5** (PASS). Measured: 2 run records" in pages[0]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_in_a_git_checkout_only_committed_results_count(toy):
    root = toy / "results"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], cwd=root, check=True)
    untracked = root / PAPER / "table1" / "runs" / "synth" / "A" / "r01-f00.json"
    subprocess.run(git + ["add", f"{PAPER}/table1"], cwd=root, check=True)
    subprocess.run(git + ["rm", "-q", "--cached", str(untracked.relative_to(root))], cwd=root,
                   check=True)
    subprocess.run(git + ["commit", "-q", "-m", "full results"], cwd=root, check=True)
    # fig1-quick is not committed (quick outputs are git-ignored in the project), nor is one
    # of table1's run records, though the manifest lists its key
    text, reports = build_page([PAPER], view=ResultsView(root),
                               page_path=toy / "REPRODUCTION.md")
    assert {t.artifact: t.status for t in reports[0].targets}["fig1"] == "not run"
    assert "| 2 | NOT RUN | claim on fig1 |" in text
    assert "| 1 | PASS | claim on table1 |" in text
    assert "* **Claim 5** (**FAIL**). Measured: 1 run records [full " in text
    local = _page(toy)[1]                                # --untracked: every file
    assert {t.artifact: t.status for t in local[0].targets}["fig1"] == "quick run only"


def test_no_results_folder_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MLKIT_RESULTS", str(tmp_path / "nowhere"))
    res = CliRunner().invoke(cli, ["report", "--check"])
    assert res.exit_code == 2
    assert "no results folder" in res.stderr and "\n" not in res.stderr.strip()


# -- #11: the run records of a manifest are found from its own folder, never the CWD ------
def _records_tree(root, runs_dir_as_stored, out_name="fig", runs_parent=None):
    """A manifest in root/p/<out_name> whose records (keys k1, k2) sit where the stored
    runs_dir says, relative to the directory the run was made in (root.parent)."""
    out = root / "p" / out_name
    runs = (runs_parent or root.parent) / runs_dir_as_stored / "runs" / "d" / "m"
    runs.mkdir(parents=True)
    out.mkdir(parents=True, exist_ok=True)
    for key in ("k1", "k2", "old"):
        (runs / f"{key}.json").write_text(json.dumps({"key": key}))
    (out / "manifest.json").write_text(json.dumps(
        {"runs_dir": str(runs_dir_as_stored), "runs": [{"key": "k1"}, {"key": "k2"}]}))
    return out


@pytest.mark.parametrize("stored, out_name", [
    ("results/p/table", "fig"),            # a target drawn from a sibling artifact's runs
    ("results/p/fig", "fig"),              # its own runs
    ("results/p/fig-quick", "fig-quick"),
    ("results/p/fig/runs-of-table", "fig"),   # --out with a runs_of target
])
def test_manifest_records_do_not_depend_on_the_current_directory(tmp_path, monkeypatch,
                                                                  stored, out_name):
    from mlkit.experiment import manifest_records
    from mlkit.manifest import runs_dir_of

    out = _records_tree(tmp_path / "results", stored, out_name)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd in (tmp_path, elsewhere):
        monkeypatch.chdir(cwd)
        assert sorted(r["key"] for r in manifest_records(out)) == ["k1", "k2"]
    # a copy of the results elsewhere reads its own records, not those the path once named
    copy = tmp_path / "copy" / "results"
    shutil.copytree(tmp_path / "results", copy)
    assert runs_dir_of(json.loads((out / "manifest.json").read_text()),
                       copy / "p" / out_name) == copy / Path(stored).relative_to("results")
    # an absolute path stored by a run with MLKIT_RESULTS=/abs/results reads the same way
    assert runs_dir_of({"runs_dir": str(tmp_path / stored)}, copy / "p" / out_name) == \
        copy / Path(stored).relative_to("results")
    assert runs_dir_of({"runs_dir": None}, out) == out


def test_a_manifest_finds_its_records_after_its_folder_is_renamed(tmp_path):
    """build_manifest stores the records' folder relative to the manifest's own, so a
    renamed or moved results folder reads its own records, never its namesake's."""
    from types import SimpleNamespace

    from mlkit.config import load_spec
    from mlkit.manifest import build_manifest, runs_dir_of

    spec = load_spec(CONFIGS / "mssboost" / "fig4.yaml")
    result = SimpleNamespace(records=[], datasets={}, computed=0, reused=0, wall_time=0.0)
    for out, runs in ((tmp_path / "results/p/fig", tmp_path / "results/p/fig"),
                      (tmp_path / "results/p/fig", tmp_path / "results/p/table"),
                      (tmp_path / "out", tmp_path / "out/runs-of-table")):
        manifest = build_manifest(spec, result, runs_dir=runs, out_dir=out)
        assert runs_dir_of(manifest, out) == runs
        moved = tmp_path / "moved" / "somewhere" / "fig-backup"
        expected = moved / Path(manifest["runs_dir_relative"])
        assert runs_dir_of(manifest, moved) == Path(os.path.normpath(expected))
    manifest = build_manifest(spec, result, runs_dir=tmp_path / "results/p/fig",
                              out_dir=tmp_path / "results/p/fig")
    assert manifest["runs_dir_relative"] == "."
    assert runs_dir_of(manifest, tmp_path / "fig-backup") == tmp_path / "fig-backup"


def test_a_rerender_keeps_the_wall_time_of_the_full_run_it_renders():
    from types import SimpleNamespace

    from mlkit.manifest import full_run_wall_time

    recs = [{"key": "a"}, {"key": "b"}]
    full = SimpleNamespace(records=recs, computed=2, reused=0, wall_time=900.0)
    assert full_run_wall_time(full) == 900.0
    first = {"runs": recs, "wall_time_s": 900.0, "runs_reused": 0}
    render = SimpleNamespace(records=recs, computed=0, reused=2, wall_time=0.5)
    assert full_run_wall_time(render, first) == 900.0            # carried over
    again = {"runs": recs, "wall_time_s": 0.5, "runs_reused": 2, "full_run_wall_time_s": 900.0}
    assert full_run_wall_time(render, again) == 900.0            # and again
    partial = SimpleNamespace(records=recs, computed=1, reused=1, wall_time=400.0)
    assert full_run_wall_time(partial, first) is None            # part computed now
    other = SimpleNamespace(records=[{"key": "a"}, {"key": "c"}], computed=0, reused=2,
                            wall_time=0.5)
    assert full_run_wall_time(other, first) is None              # other runs
    assert full_run_wall_time(render, None) is None


def test_results_roots_are_shown_once_even_when_the_shown_root_contains_one():
    from mlkit.report.reproduction import root_shower

    shown = root_shower(["/tmp/mlkit-report-x", "/work/main/results"], "../../work/main/results")
    text = "see /tmp/mlkit-report-x/hfss/baseline and\n /work/main/results/lm3fe/table1"
    assert shown(text) == ("see ../../work/main/results/hfss/baseline and "
                           "../../work/main/results/lm3fe/table1")


def test_a_long_run_not_finished_shows_how_many_of_its_runs_are_recorded(toy):
    from mlkit.experiment import planned_runs
    from mlkit.targets import target_spec

    target = resolve_target(f"{PAPER}/fig2")
    plan = planned_runs(target_spec(target)[1], toy / "results" / PAPER / "fig2")
    assert len(plan) == 5 * 2                    # 5 datasets x 2 methods, one holdout split
    for key, path in plan[:3]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"key": key, "metrics": {}}))
    plan[2][1].write_text(json.dumps({"key": "stale", "metrics": {}}))   # another key
    text, reports = _page(toy)
    assert [t.progress for t in reports[0].targets if t.artifact == "fig2"] == [(2, 10)]
    assert "| not run; full run in progress: 2 of 10 runs recorded |" in text
    assert ("Status: **not run** (`mlkit reproduce reprotoy/fig2`). Full run in progress: 2 "
            "of 10 runs recorded; `mlkit reproduce reprotoy/fig2` resumes from them.") in text


def test_results_of_another_config_or_revision_are_outdated_and_not_counted(toy):
    manifest_path = toy / "results" / PAPER / "table1" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["runs"] = manifest["runs"][:5] + [{"key": "old", "fit_s": 1.0, "predict_s": 0.0}]
    manifest_path.write_text(json.dumps(manifest))
    text, reports = _page(toy)
    table1 = next(t for t in reports[0].targets if t.artifact == "table1")
    # the toy's methods A and B are the same run (labels are not in the key): 4 distinct runs
    assert table1.outdated == (3, 4) and table1.counted == []
    assert summary_numbers(reports)[PAPER][:6] == (0, 3, 0, 0, 0, 0)
    assert ("full run, **outdated** (the config or a method's numbers changed since: 3 of its "
            "4 runs planned now are in it; shown, not counted)") in text
    assert "| outdated, not counted |" in text


def test_a_partial_render_is_shown_as_partial_and_not_counted(toy):
    manifest_path = toy / "results" / PAPER / "table1" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["runs"], manifest["runs_missing"] = manifest["runs"][:3], 5
    manifest_path.write_text(json.dumps(manifest))
    text, reports = _page(toy)
    table1 = next(t for t in reports[0].targets if t.artifact == "table1")
    assert table1.partial and table1.counted == []
    assert "Status: **partial** (rendered from the 2 of its 4 runs recorded so far" in text
    assert "**full run**, **partial**" not in text      # a partial render is no full run
    assert "| partial, not counted |" in text


@pytest.mark.parametrize("seconds, text", [
    (None, "-"), (12.34, "12.3 s"), (59.94, "59.9 s"), (59.96, "1 min 0 s"),
    (245.0, "4 min 5 s"), (2279.6, "38 min 0 s"), (3599.6, "1 h 0 min"),
    (22020.0, "6 h 7 min"), (14398.0, "4 h 0 min")])
def test_durations_read_as_people_write_them(seconds, text):
    """Rounded before splitting: never '37 min 60 s' or '3 h 60 min'."""
    from mlkit.report.reproduction_page import format_seconds

    assert format_seconds(seconds) == text


def test_the_page_opens_with_each_papers_bullets_and_no_cell_exceeds_40_words():
    """REPRODUCTION.md reads in five minutes: an "At a glance" section with three to six
    bullets per paper before the summary table, and no table cell over CELL_WORDS words
    (a longer text is cut and given in full in a note below its table)."""
    import re

    from mlkit.report.reproduction_page import CELL_WORDS, _table

    lines = _table(["a", "b"], [["short", " ".join(["word"] * 50)]])
    assert lines[2] == "| short | " + " ".join(["word"] * (CELL_WORDS - 10)) + " … (note 1) |"
    assert lines[-1] == "1. " + " ".join(["word"] * 50)
    page = (Path(__file__).resolve().parents[1] / "REPRODUCTION.md").read_text()
    glance = page[page.index("## At a glance"):page.index("## Summary")]
    for block in glance.split("**[`")[1:]:
        assert 3 <= sum(line.startswith("* ") for line in block.splitlines()) <= 6
    for line in page.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            for cell in re.split(r"(?<!\\)\|", line)[1:-1]:
                assert len(cell.split()) <= CELL_WORDS, cell[:80]


def test_the_page_reads_each_targets_comparison_frame(toy):
    """Results with their comparison frame (what every render writes) give the page the
    tables read back give (results rendered before it); the cells are then the frame's,
    whatever the tables' files say."""
    from mlkit.report.comparison import FILE, read_comparison, tables_comparison, \
        write_comparison
    from mlkit.report.data_roles import data_lines, percent_quantities
    from mlkit.report.reproduction_cells import table_rows
    from mlkit.targets import target_spec

    before, _ = _page(toy)
    for out in sorted((toy / "results" / PAPER).iterdir()):
        spec, run_spec = target_spec(resolve_target(f"{PAPER}/{out.name.split('-')[0]}"))
        lines = data_lines(spec, run_spec, json.loads((out / "manifest.json").read_text()))
        frame = tables_comparison({"table": table_rows(out / "table.csv")}, lines=lines,
                                  percent=percent_quantities(spec, run_spec))
        write_comparison(frame, out)
    assert _page(toy)[0] == before
    table = toy / "results" / PAPER / "table1"
    md = (table / "table.md").read_text()
    (table / "table.md").write_text(md.replace("0.262 ± 0.004", "0.900 ± 0.004"))
    assert _page(toy)[0] == before
    frame = read_comparison(table / FILE)
    frame.loc[frame.ours_shown == "0.262 ± 0.004", ["ours", "ours_shown"]] = \
        [0.9, "0.900 ± 0.004"]
    write_comparison(frame, table)
    after = _section(_page(toy)[0], f"{PAPER}/table1")
    assert "0.900 ± 0.004" in after and "0.262 ± 0.004" not in after


def _cells_over(page, words):
    import re

    return [cell for line in page.splitlines()
            if line.startswith("|") and not line.startswith("|---")
            for cell in re.split(r"(?<!\\)\|", line)[1:-1] if len(cell.split()) > words]


def test_the_page_the_committed_results_give_reads_in_five_minutes(tmp_path):
    """The page ``mlkit report`` makes from the committed results (not the committed page,
    which may lag them): the bullets, then the summary table, no table cell over
    CELL_WORDS words."""
    from mlkit.report.reproduction_page import CELL_WORDS

    root = Path(__file__).resolve().parents[1]
    if not any((root / "results").glob("*/*/summary.json")):
        pytest.skip("no committed results under results/ to build the page from")
    page, _ = build_page(view=ResultsView(root / "results"),
                         page_path=root / "REPRODUCTION.md")
    assert page.index("## At a glance") < page.index("## Summary") < page.index('<a id="')
    assert not _cells_over(page, CELL_WORDS)
    assert "<details>" not in page          # no inlined headline figures


def test_a_long_table_is_counted_and_linked_not_inlined(toy, monkeypatch):
    from mlkit.report import reproduction_page

    monkeypatch.setattr(reproduction_page, "INLINE_CELLS", 3)
    table1 = _section(_page(toy)[0], f"{PAPER}/table1")
    assert "| synth | A | score |" not in table1
    assert ("Paper vs ours, cell by cell, in [table.md](results/reprotoy/table1/table.md): "
            "6 paper numbers beside ours, within the paper's spread: 1 of 1 on the paper's "
            "data; 1 of 4 on substitute data; 1 not compared.") in table1
    assert not _cells_over(_page(toy)[0], reproduction_page.CELL_WORDS)

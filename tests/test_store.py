"""The run record store (mlkit.store): one compressed table per results folder, per-run files
while runs go, the fold between them, and what reads them (manifests, a fresh clone)."""

import csv
import gzip
import json
import math
import multiprocessing
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mlkit._errors import MlkitError
from mlkit._io import write_json
from mlkit.experiment import load_records, manifest_records
from mlkit.manifest import invocation_keys, runs_index
from mlkit.store import (FLAT, TABLE_NAME, RunStore, _remove_folded, fold_runs, keys_digest,
                         read_table, run_id, write_table)

ROOT = Path(__file__).resolve().parents[1]


def _record(i, **extra):
    return {"key": f"k{i:03d}", "data_sha": "d" * 8, "dataset": "synth", "method": "A",
            "method_name": "a", "repeat": i, "fold": 0, "split_seed": 2**32 - 1 - i,
            "mlkit_version": "0.1.0", "numerics_revision": 1,
            "metrics": {"accuracy": 0.1 * i, "mean_ap": 1 / 3},
            "timings": {"fit_s": 0.5 + i, "predict_s": 0.25, "cpu_s": 0.7},
            "model": {"n_xv": i, "path": [[1.0, 2.5], [-0.0, 1e-300]]}, **extra}


def _canonical(value):
    return json.dumps(value, sort_keys=True)


def _write_run(folder, i, record=None):
    path = Path(folder) / "runs" / "synth" / "A" / f"r{i:02d}-f00.json"
    write_json(path, _record(i) if record is None else record)
    return path


# -- the table --------------------------------------------------------------------------------
ODD_RECORDS = [
    _record(0),
    # no data fingerprint (records made before they kept one) and a string revision
    {k: v for k, v in _record(1, numerics_revision="mikernel-2").items() if k != "data_sha"},
    # a None, an empty string, a bool, a float that looks like an int, unicode, NaN
    _record(2, data_sha="", random_state=None, key="", fold=True, n_xv=3.0,
            chosen={"gamma": float("nan")}, note="é ≤ 1\n\"quoted\", comma"),
    # a flat field of another type stays in the JSON, as it was
    _record(3, repeat="3", dataset=7),
    # one field longer than csv's default limit (128 KB)
    _record(4, curves={"mean_ap": [0.123456789 * k for k in range(20000)]}),
]


def test_every_record_reads_back_as_the_json_it_came_from(tmp_path):
    table = tmp_path / TABLE_NAME
    entries = {f"synth/A/r{i:02d}-f00": (1000 + i, rec) for i, rec in enumerate(ODD_RECORDS)}
    limit = csv.field_size_limit()
    write_table(table, entries)
    back = read_table(table)
    assert csv.field_size_limit() == limit                  # restored after reading
    assert set(back) == set(entries)
    for run, (written, rec) in entries.items():
        got_written, got = back[run]
        assert got_written == written
        assert _canonical(got) == _canonical(rec)           # 1 is not 1.0, NaN is NaN
        assert set(got) == set(rec)                         # absent stays absent
        if run != "synth/A/r02-f00":                        # the one holding a NaN
            assert got == rec
    assert math.isnan(back["synth/A/r02-f00"][1]["chosen"]["gamma"])
    assert type(back["synth/A/r02-f00"][1]["fold"]) is bool
    assert back["synth/A/r03-f00"][1]["repeat"] == "3"


def test_the_key_fields_are_columns_and_the_rest_one_json_text(tmp_path):
    table = write_table(tmp_path / TABLE_NAME, {"synth/A/r00-f00": (5, _record(0))})
    rows = list(csv.DictReader(gzip.decompress(table.read_bytes()).decode().splitlines()))
    assert [tuple(r) for r in rows] == [("run", "written_ns", *FLAT, "record")]
    row = rows[0]
    assert (row["key"], row["repeat"], row["split_seed"]) == ("k000", "0", str(2**32 - 1))
    rest = json.loads(row["record"])
    assert not set(FLAT) & set(rest) and rest["metrics"] == _record(0)["metrics"]


def test_the_same_records_give_the_same_bytes(tmp_path):
    entries = {f"synth/A/r{i:02d}-f00": (i, _record(i)) for i in range(5)}
    a = write_table(tmp_path / "a" / TABLE_NAME, entries).read_bytes()
    b = write_table(tmp_path / "b" / TABLE_NAME, dict(reversed(entries.items()))).read_bytes()
    assert a == b and a[4:8] == b"\0\0\0\0"                 # no time in the gzip header


@pytest.mark.parametrize("damage", [b"not gzip at all", gzip.compress(b"a,b\n1,2\n"),
                                    gzip.compress(b"\xff\xfe")])
def test_a_damaged_table_is_one_error_naming_it(tmp_path, damage):
    (tmp_path / TABLE_NAME).write_bytes(damage)
    with pytest.raises(MlkitError, match=f"{TABLE_NAME}: not a readable table") as exc:
        load_records(tmp_path)
    assert "\n" not in str(exc.value)


def test_a_damaged_table_is_one_line_from_the_command_line(tmp_path):
    _write_run(tmp_path, 0)
    (tmp_path / TABLE_NAME).write_bytes(b"garbage")
    res = subprocess.run(["mlkit", "plot", "curves", str(tmp_path)], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "not a readable table" in res.stderr
    assert "Traceback" not in res.stderr


# -- the fold ---------------------------------------------------------------------------------
def test_fold_moves_the_files_into_the_table_and_every_read_stays_the_same(tmp_path):
    paths = [_write_run(tmp_path, i) for i in range(4)]
    checkpoint = paths[0].with_suffix(".cv-checkpoint")
    checkpoint.write_text("{}")
    before = load_records(tmp_path)
    assert fold_runs(tmp_path) == 4
    assert not list((tmp_path / "runs").rglob("*.json")) and checkpoint.is_file()
    assert load_records(tmp_path) == before == [_record(i) for i in range(4)]
    assert RunStore(tmp_path).get(paths[2]) == _record(2)
    assert RunStore(tmp_path).get(tmp_path / "elsewhere.json") is None
    table = (tmp_path / TABLE_NAME).read_bytes()
    assert fold_runs(tmp_path) == 0 and (tmp_path / TABLE_NAME).read_bytes() == table
    # a later run's file goes into the table beside the others
    _write_run(tmp_path, 9)
    assert fold_runs(tmp_path) == 1
    assert [r["repeat"] for r in load_records(tmp_path)] == [0, 1, 2, 3, 9]


def test_a_file_written_after_the_tables_row_wins_and_an_older_one_loses(tmp_path):
    path = _write_run(tmp_path, 0)
    fold_runs(tmp_path)
    written = read_table(tmp_path / TABLE_NAME)["synth/A/r00-f00"][0]
    newer = _record(0, key="recomputed")
    _write_run(tmp_path, 0, newer)
    os.utime(path, ns=(written + 10, written + 10))
    assert load_records(tmp_path) == [newer]
    os.utime(path, ns=(written - 10, written - 10))       # older than the table's row
    assert load_records(tmp_path) == [_record(0)]
    fold_runs(tmp_path)                                   # the older file goes, the row stays
    assert not path.exists() and load_records(tmp_path) == [_record(0)]
    _write_run(tmp_path, 0, newer)
    os.utime(path, ns=(written + 10, written + 10))
    fold_runs(tmp_path)
    assert load_records(tmp_path) == [newer]


def test_a_file_rewritten_during_a_fold_is_kept(tmp_path):
    path = _write_run(tmp_path, 0)
    folded = path.stat()
    _write_run(tmp_path, 0, _record(0, key="rewritten"))   # a new file (atomic replace)
    assert not _remove_folded(path, folded)
    assert json.loads(path.read_text())["key"] == "rewritten"
    assert not list(path.parent.glob(".*"))                # no hold file left
    assert _remove_folded(path, path.stat()) and not path.exists()


def _writer_and_folder(folder, first, count):
    for i in range(first, first + count):
        _write_run(folder, i)
        if i % 3 == 0:
            fold_runs(folder)
    fold_runs(folder)


def test_concurrent_writers_and_folds_lose_no_record(tmp_path):
    ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    procs = [ctx.Process(target=_writer_and_folder, args=(tmp_path, 30 * k, 30))
             for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    fold_runs(tmp_path)
    assert [r["repeat"] for r in load_records(tmp_path)] == list(range(90))
    assert not list((tmp_path / "runs").rglob("*.json"))


def test_run_ids_are_the_record_paths_below_runs(tmp_path):
    assert run_id(tmp_path / "runs", tmp_path / "runs" / "d" / "m" / "r00-f01.json") == \
        "d/m/r00-f01"


# -- manifests ---------------------------------------------------------------------------------
def test_a_manifest_names_its_runs_by_count_and_key_digest():
    recs = [_record(i) for i in (2, 0, 1)]
    index = runs_index(recs)
    assert index == {"runs_count": 3, "runs_keys_sha256": keys_digest(["k000", "k001", "k002"]),
                     "runs_fit_predict_s": sum(0.5 + i + 0.25 for i in range(3))}
    keys = {"k000", "k001", "k002"}
    assert invocation_keys(index, keys | {"stale"}, keys) == keys
    assert invocation_keys(index, keys - {"k000"}) is None
    # a manifest from before the fold lists its runs
    assert invocation_keys({"runs": [{"key": "x"}, {"key": "y"}]}) == {"x", "y"}


def test_manifest_records_are_the_invocations_among_other_records(results):
    from mlkit.targets import reproduce, resolve_target

    target = resolve_target("mssboost/fig4")
    overrides = ["protocol.repeats=2", "methods.RSBag.params.n_estimators=3",
                 "methods.NSBoost.params.n_estimators=3",
                 "methods.MSSBoost.params.n_estimators=3",
                 "methods.MSSBoost (intercept).params.n_estimators=3"]
    _, out, first = reproduce(target, overrides=overrides)
    assert first.computed == 8 and TABLE_NAME in os.listdir(out)
    assert not list((out / "runs").rglob("*.json"))       # folded: full and complete
    manifest = json.loads((out / "manifest.json").read_text())
    assert "runs" not in manifest and manifest["runs_count"] == 8
    assert manifest["runs_fit_predict_s"] == pytest.approx(sum(
        r["timings"]["fit_s"] + r["timings"]["predict_s"] for r in first.records))
    # one repetition less: the table keeps the second's records, the manifest does not
    _, _, second = reproduce(target, overrides=["protocol.repeats=1", *overrides[1:]])
    assert (second.computed, second.reused) == (0, 4)
    assert len(load_records(out)) == 8
    assert sorted(r["key"] for r in manifest_records(out)) == \
        sorted(r["key"] for r in second.records)


# -- a fresh clone -----------------------------------------------------------------------------
def _committed(folder):
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", folder], cwd=ROOT,
                             capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not a git checkout")
    return [p for p in out.decode().split("\0") if p]


def test_a_fresh_clone_of_mssboost_fig4_computes_nothing(results):
    """The committed folder of mssboost/fig4 alone, as a clone has it: its table holds every
    run, so the full reproduction computes 0 runs and renders the committed table."""
    from mlkit.targets import reproduce, resolve_target

    files = _committed("results/mssboost/fig4")
    if not any(f.endswith(TABLE_NAME) for f in files):
        pytest.skip("results/mssboost/fig4 has no committed table yet")
    assert len([f for f in files if f.endswith(".json") and "/runs/" in f]) == 0
    for rel in files:
        dst = results / Path(rel).relative_to("results")
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, dst)
    table = (results / "mssboost" / "fig4" / TABLE_NAME).read_bytes()
    _, out, result = reproduce(resolve_target("mssboost/fig4"))
    assert (result.computed, result.reused) == (0, 80)
    for name in ("table.md", "table.csv"):
        assert (out / name).read_bytes() == (ROOT / "results/mssboost/fig4" / name).read_bytes()
    assert (out / TABLE_NAME).read_bytes() == table           # nothing to fold, untouched


def test_the_repository_holds_under_100_run_record_files():
    files = _committed("results")
    if not any(f.endswith(TABLE_NAME) for f in files):
        pytest.skip("run records not migrated yet")
    assert len([f for f in files if "/runs/" in f and f.endswith(".json")]) < 100
    for manifest in (f for f in files if f.endswith("/manifest.json")):
        assert "runs" not in json.loads((ROOT / manifest).read_text()), manifest


# -- the migration -----------------------------------------------------------------------------
def test_migration_folds_and_rewrites_an_old_manifest_without_changing_a_number(results):
    import importlib.util

    from mlkit.report.reproduction_page import _runs_and_time
    from mlkit.targets import reproduce, resolve_target

    _, out, res = reproduce(resolve_target("mssboost/fig4"), quick=True)   # not folded
    # the manifest as it was before the fold: with the list of runs
    manifest = json.loads((out / "manifest.json").read_text())
    old = {k: v for k, v in manifest.items()
           if k not in ("runs_count", "runs_keys_sha256", "runs_fit_predict_s")}
    old["runs"] = [{"dataset": r["dataset"], "method": r["method"], "repeat": r["repeat"],
                    "fold": r["fold"], "key": r["key"], "fit_s": r["timings"]["fit_s"],
                    "predict_s": r["timings"]["predict_s"]}
                   for r in sorted(res.records, key=lambda r: (r["dataset"], r["method"],
                                                               r["repeat"], r["fold"]))]
    write_json(out / "manifest.json", old)
    shown = _runs_and_time(old)
    records = manifest_records(out)
    spec = importlib.util.spec_from_file_location("migrate_runs",
                                                  ROOT / "scripts" / "migrate_runs.py")
    migrate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migrate)
    migrate.main(["--results", str(results)])
    new = json.loads((out / "manifest.json").read_text())
    assert "runs" not in new and _runs_and_time(new) == shown
    assert {k: v for k, v in new.items() if not k.startswith("runs_")} == \
        {k: v for k, v in old.items() if not k.startswith("runs")}
    assert not list((out / "runs").rglob("*.json"))
    assert manifest_records(out) == records

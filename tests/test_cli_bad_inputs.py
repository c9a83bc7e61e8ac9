"""Bad inputs a new user met, each one ``mlkit: error:`` line naming the file or option and
the fix, exit status 2, nothing written (the contract of tests/test_cli_errors.py)."""

import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from mlkit.cli import cli

from .test_cli_errors import FIG4, config_variant, invoke, tree, user_error


@pytest.fixture(autouse=True)
def sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("MLKIT_RESULTS", str(tmp_path / "results"))
    monkeypatch.delenv("MLKIT_CONFIGS", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def one_error_line(tmp_path, args):
    """user_error's contract where results exist already: exit 2, one error line, no
    traceback, no file added or changed."""
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = invoke(args)
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mlkit: error: "), result.stderr
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    return lines[0]


def _mil_csv(path, labels, per_bag=3, seed=0):
    """A mil-csv file (label,bag,f1..f3), one bag per entry of ``labels``."""
    rng = np.random.default_rng(seed)
    rows = [",".join([str(lab), str(b), *(f"{v:.3f}" for v in rng.normal(size=3))])
            for b, lab in enumerate(labels) for _ in range(per_bag)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _mi_config(tmp_path, data, protocol, grid="", name="mi.yaml"):
    text = (f"paper: mine\nartifact: t\ndataset: {{path: {data}, format: mil-csv}}\n"
            f"methods:\n  - name: mi-kernel\n    label: MIK\n    params: {{C: 1.0}}\n{grid}"
            f"protocol: {protocol}\nmetrics: [accuracy]\n")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_data_info_xml_naming_a_missing_file(tmp_path):
    arff = tmp_path / "x.arff"
    arff.write_text("@relation x\n", encoding="utf-8")
    line = user_error(tmp_path, ["data", "info", arff, "--format", "mulan", "--xml",
                                 tmp_path / "nope.xml"])
    assert "--xml" in line and "nope.xml" in line and "does not exist" in line


def test_a_grid_with_an_empty_list(tmp_path):
    path, at = config_variant(tmp_path, "params: {n_estimators: 20, base_learner: stump, rd: "
                              "0.1, rf: 0.5}\n  - name: nsboost",
                              "params: {n_estimators: 20, base_learner: stump, rd: 0.1, rf: "
                              "0.5}\n    grid: {rd: []}\n  - name: nsboost")
    line = user_error(tmp_path, ["train", "--config", path, "--out", tmp_path / "out"])
    assert f"bad.yaml:{at + 1}:" in line and "grid.rd" in line and "at least 1 item" in line


def test_more_folds_than_samples(tmp_path):
    data = _mil_csv(tmp_path / "mi.csv", [0] * 10 + [1] * 10)
    path = _mi_config(tmp_path, data.name, "{split: cv, n_folds: 50, repeats: 1, seed: 0}")
    line = user_error(tmp_path, ["train", "--config", path, "--out", tmp_path / "out"])
    assert "protocol.n_folds=50" in line and "20 samples" in line and "lower n_folds" in line


def test_more_stratified_folds_than_members_of_a_class(tmp_path):
    data = _mil_csv(tmp_path / "mi.csv", [1] * 2 + [0] * 18)
    path = _mi_config(tmp_path, data.name,
                      "{split: cv, n_folds: 5, stratify: true, repeats: 1, seed: 0}")
    line = user_error(tmp_path, ["train", "--config", path, "--out", tmp_path / "out"])
    assert "class 1 has 2 samples" in line and "n_folds=5" in line
    assert "stratify: false" in line


def test_a_one_class_dataset_is_a_data_error_not_a_failed_run(tmp_path):
    data = _mil_csv(tmp_path / "one.csv", [1] * 20)
    path = _mi_config(tmp_path, data.name, "{split: holdout, test_size: 0.25, repeats: 1, "
                                           "seed: 0}")
    line = user_error(tmp_path, ["train", "--config", path, "--out", tmp_path / "out"])
    assert "one.csv" in line and "class 1" in line and "at least two classes" in line


def test_a_read_only_results_folder(tmp_path, monkeypatch):
    """Said before any run is computed (simulated: the tests may run as root)."""
    import mlkit._io as io_mod

    ro = tmp_path / "ro"
    ro.mkdir()
    real = io_mod._writable
    monkeypatch.setattr(io_mod, "_writable",
                        lambda p: False if os.path.abspath(p) == str(ro) else real(p))
    line = user_error(tmp_path, ["--results", ro, "reproduce", "mssboost/fig4", "--quick"])
    assert f"cannot write into {ro}/mssboost/fig4-quick" in line
    assert "not writable" in line and "--results DIR" in line


def test_out_inside_a_path_that_is_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    line = user_error(tmp_path, ["reproduce", "mssboost/fig4", "--quick", "--out",
                                 tmp_path / "afile" / "sub"])
    assert "afile is a file, not a folder" in line and "--out DIR" in line


@pytest.mark.parametrize("after", [False, True])
def test_results_option_naming_a_file(tmp_path, after):
    (tmp_path / "afile").write_text("x")
    option = ["--results", tmp_path / "afile"]
    line = user_error(tmp_path, ["verify", "mssboost", *option] if after
                      else [*option, "verify", "mssboost"])
    assert "--results" in line and "is a file" in line


def test_results_option_after_the_subcommand(tmp_path):
    """`mlkit reproduce T --results DIR` writes there and `mlkit verify P --results DIR`
    reads there and says so, as `mlkit --results DIR ...` does."""
    root = tmp_path / "elsewhere"
    res = invoke(["reproduce", "mssboost/fig4", "--quick", "--results", root])
    assert res.exit_code == 0, res.output
    assert (root / "mssboost" / "fig4-quick" / "manifest.json").is_file()
    assert not (tmp_path / "results").exists()             # not the MLKIT_RESULTS root
    res = invoke(["verify", "mssboost", "--json", "--results", root])
    assert res.exit_code == 1
    assert res.stderr.splitlines() == [f"mlkit: reading results from {root} (--results)"]
    rows = {r["claim"]: r for r in json.loads(res.stdout)}
    assert rows["3"]["verdict"] in ("PASS", "FAIL")        # fig4-quick was read


def test_a_key_given_twice_in_a_config(tmp_path):
    path, at = config_variant(tmp_path, "metrics: [hamming_error]",
                              "metrics: [hamming_error]\nprotocol: {split: holdout, "
                              "test_size: 0.5, repeats: 1, seed: 0}")
    line = user_error(tmp_path, ["train", "--config", path, "--out", tmp_path / "out"])
    first = next(i for i, s in enumerate(FIG4.read_text().splitlines(), 1)
                 if s.startswith("protocol:"))
    assert f"bad.yaml:{at + 1}: key 'protocol' is given twice (first at line {first})" in line


def test_a_corrupt_run_record_stops_plot_curves(tmp_path):
    assert invoke(["reproduce", "mssboost/fig4", "--quick"]).exit_code == 0
    record = sorted((tmp_path / "results" / "mssboost" / "fig4-quick" / "runs").rglob(
        "*.json"))[0]
    record.write_text("{bad", encoding="utf-8")
    line = one_error_line(tmp_path, ["plot", "curves", "mssboost/fig4"])
    assert str(record) in line and "not a readable run record" in line
    assert "mlkit reproduce" in line


@pytest.mark.parametrize("args, words", [
    (["data", "fetch", "nus-animal"], ("nus-animal has no file mlkit can download",
                                       "data home")),
    (["data", "verify", "trecvid-style"], ("trecvid-style is generated", "nothing to verify")),
])
def test_fetch_or_verify_of_a_dataset_without_files(tmp_path, args, words):
    line = user_error(tmp_path, args)
    for word in words:
        assert word in line


@pytest.mark.parametrize("command", ["reproduce", "fold"])
def test_all_with_a_target(tmp_path, command):
    line = user_error(tmp_path, [command, "--all", "mssboost/fig4", "--quick"]
                      + (["--status"] if command == "reproduce" else []))
    assert "--all" in line and "either" in line


def test_a_missing_arff_is_said_as_missing(tmp_path):
    line = user_error(tmp_path, ["data", "info", tmp_path / "nothere.arff", "--format",
                                 "mulan"])
    assert "nothere.arff: no such file" in line and "label file" not in line
    path = _mi_config(tmp_path, "gone.arff", "{split: holdout, test_size: 0.5, repeats: 1}")
    path.write_text(path.read_text().replace("format: mil-csv", "format: mulan"))
    line = user_error(tmp_path, ["train", "--config", path, "--out", tmp_path / "out"])
    assert "gone.arff: no such file" in line and "label file" not in line


def test_a_read_only_data_home_asks_for_a_writable_one(tmp_path, monkeypatch):
    import mlkit.datasets._fetch as fetch_mod

    home = tmp_path / "ro-data"
    home.mkdir()
    monkeypatch.setenv("MLKIT_DATA", str(home))
    monkeypatch.setattr(fetch_mod, "_writable", lambda p: os.path.abspath(p) != str(home))
    line = user_error(tmp_path, ["data", "fetch", "scene"])
    assert "not writable" in line and "set MLKIT_DATA to a writable folder" in line
    assert "MLKIT_DATA_MIRROR" not in line


def test_status_does_not_count_private_data_as_pending(tmp_path):
    res = CliRunner().invoke(cli, ["reproduce", "lm3fe/table1", "--status"])
    assert res.exit_code == 0, res.output
    table = [s for s in res.stdout.splitlines() if s.startswith("nus-animal")]
    assert table == []
    assert "not counted: nus-animal n=4, nus-animal n=6, nus-animal n=8" in res.stdout
    assert "private in the paper" in res.stdout
    assert tree(tmp_path) == []                            # --status writes nothing


def test_verify_downloads_nothing_and_names_its_root(tmp_path, monkeypatch):
    """Without any data copy, a claim that reads the data is NOT RUN and says why; no data
    home is created, nothing is fetched."""
    monkeypatch.delenv("MLKIT_DATA_MIRROR", raising=False)
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "data"))
    import mlkit.datasets._fetch as fetch_mod

    monkeypatch.setattr(fetch_mod, "_fetch_into", lambda *a: pytest.fail("verify fetched"))
    assert invoke(["reproduce", "mssboost/fig4", "--quick"]).exit_code == 0
    before = tree(tmp_path)
    res = invoke(["verify", "mssboost", "--json"])
    assert res.exit_code == 1
    rows = {r["claim"]: r for r in json.loads(res.stdout)}
    assert rows["3"]["verdict"] in ("PASS", "FAIL")        # fig4-quick was read
    assert res.stderr.splitlines() == [
        f"mlkit: reading results from {tmp_path / 'results'} (MLKIT_RESULTS)"]
    assert tree(tmp_path) == before and not (tmp_path / "data").exists()

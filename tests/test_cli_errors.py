"""User errors at the command line: one line on stderr, exit status 2, nothing written.

The contract (see ``mlkit/cli.py``): every bad input -- a bad config, an unknown name, a bad
``--set`` -- is reported as ONE line on stderr that starts with ``mlkit: error:`` and names
what is wrong and where (file, line, key) with the closest valid name when there is one; the
exit status is 2, no traceback is shown, and no results folder is created. The estimators
themselves reject bad labels with a ``ValueError`` that says why.
"""

import os
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mlkit.cli import cli

ROOT = Path(__file__).resolve().parents[1]
FIG4 = ROOT / "configs" / "mssboost" / "fig4.yaml"

#: Small settings that make fig4 train in about a second (the positive control).
FAST = ("--set", "protocol.repeats=1",
        "--set", "methods.RSBag.params.n_estimators=3",
        "--set", "methods.NSBoost.params.n_estimators=3",
        "--set", "methods.MSSBoost.params.n_estimators=3")


# -- helpers --------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def sandbox(tmp_path, monkeypatch):
    """Results go to tmp_path/results (MLKIT_RESULTS) and the working folder is tmp_path, so
    a stray write can never land in the repository and is always visible to ``tree``."""
    monkeypatch.setenv("MLKIT_RESULTS", str(tmp_path / "results"))
    monkeypatch.delenv("MLKIT_CONFIGS", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def tree(root):
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob("*"))


def invoke(args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=True)


def user_error(tmp_path, args):
    """Run the CLI on a bad input; check the contract; return the one error line."""
    before = tree(tmp_path)
    result = invoke(args)
    output = result.output + result.stderr
    assert "Traceback" not in output
    # an uncaught exception would be swallowed by CliRunner: it must be a clean exit
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{result.stderr}"
    line = lines[0]
    assert line.startswith("mlkit: error: "), line
    assert result.stdout == "", result.stdout
    # nothing written: no results root, no --out folder, no new file anywhere in tmp_path
    assert not (tmp_path / "results").exists()
    assert not (tmp_path / "out").exists()
    assert tree(tmp_path) == before
    return line


def config_variant(tmp_path, old, new, name="bad.yaml"):
    """fig4.yaml with the first ``old`` replaced by ``new``; returns (path, line of new)."""
    text = FIG4.read_text(encoding="utf-8")
    assert old in text, f"fig4.yaml no longer contains {old!r}; update the test"
    text = text.replace(old, new, 1)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    start = text.index(new)
    return path, text.count("\n", 0, start) + new[:1].count("\n") + 1


def replace_top_level(tmp_path, key, new_line, name="bad.yaml"):
    """fig4.yaml with its top-level ``key:`` line replaced by ``new_line``."""
    lines = FIG4.read_text(encoding="utf-8").splitlines(keepends=True)
    idx = next(i for i, s in enumerate(lines) if s.startswith(f"{key}:"))
    lines[idx] = new_line + "\n"
    path = tmp_path / name
    path.write_text("".join(lines), encoding="utf-8")
    return path, idx + 1


# -- positive control -------------------------------------------------------------------------
def test_valid_config_trains(tmp_path):
    """fig4 with small settings runs and writes its results: the error tests below are not
    passing because every invocation fails."""
    result = invoke(["train", "--config", FIG4, *FAST, "--out", tmp_path / "out"])
    assert result.exit_code == 0, result.output + result.stderr
    assert "Traceback" not in result.output
    assert f"results: {tmp_path / 'out'}" in result.stdout
    assert (tmp_path / "out" / "manifest.json").is_file()
    assert (tmp_path / "out" / "table.csv").is_file()


def test_valid_config_copy_trains_with_default_out(tmp_path):
    """The unaltered copy written by config_variant is valid too (results under
    MLKIT_RESULTS), so a failure of a variant is due to its one edit."""
    path, _ = config_variant(tmp_path, "curves: true", "curves: true", name="ok.yaml")
    result = invoke(["train", "--config", path, *FAST])
    assert result.exit_code == 0, result.output + result.stderr
    assert (tmp_path / "results" / "mssboost" / "fig4-train" / "manifest.json").is_file()


# -- 1. the config file itself ----------------------------------------------------------------
def test_config_missing(tmp_path):
    line = user_error(tmp_path, ["train", "--config", tmp_path / "nope.yaml",
                                 "--out", tmp_path / "out"])
    assert "nope.yaml" in line
    assert "not found" in line


def test_config_unreadable(tmp_path):
    path = tmp_path / "secret.yaml"
    path.write_text(FIG4.read_text(encoding="utf-8"), encoding="utf-8")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as root: a chmod 000 file is still readable")
        line = user_error(tmp_path, ["train", "--config", path, "--out", tmp_path / "out"])
    finally:
        path.chmod(0o644)
    assert "secret.yaml" in line
    assert "cannot read" in line


def test_config_unreadable_simulated(tmp_path, monkeypatch):
    """The same code path as a chmod 000 file, also when the tests run as root."""
    path = tmp_path / "secret.yaml"
    path.write_text(FIG4.read_text(encoding="utf-8"), encoding="utf-8")
    real_read_text = Path.read_text

    def read_text(self, *args, **kwargs):
        if self.name == "secret.yaml":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    line = user_error(tmp_path, ["train", "--config", path, "--out", tmp_path / "out"])
    assert "secret.yaml" in line
    assert "cannot read" in line
    assert "Permission denied" in line


def test_config_is_a_directory(tmp_path):
    folder = tmp_path / "configs_dir"
    folder.mkdir()
    line = user_error(tmp_path, ["train", "--config", folder, "--out", tmp_path / "out"])
    assert "configs_dir" in line
    assert "directory" in line


# -- 2. malformed YAML ------------------------------------------------------------------------
def test_malformed_yaml_mismatched_bracket(tmp_path):
    path, lineno = replace_top_level(
        tmp_path, "protocol", "protocol: {split: holdout, test_size: 0.25, repeats: 2, seed: 0]")
    line = user_error(tmp_path, ["train", "--config", path])
    assert f"{path}:{lineno}:" in line
    assert "malformed YAML" in line


def test_malformed_yaml_unclosed_bracket_names_its_line(tmp_path):
    """A flow mapping opened on line N and never closed: the message must point at line N
    (PyYAML only notices at the next key, a few lines further down)."""
    path, lineno = config_variant(tmp_path, "params: {n_samples: 1000, random_state: 0}",
                                  "params: {n_samples: 1000, random_state: 0")
    line = user_error(tmp_path, ["train", "--config", path])
    assert "malformed YAML" in line
    assert str(path) in line
    assert f"{path}:{lineno}" in line or f"line {lineno}" in line, (lineno, line)


def test_malformed_yaml_bad_indentation(tmp_path):
    path, lineno = config_variant(tmp_path, "artifact: fig4\n", "artifact: fig4\n  oops: 1\n")
    line = user_error(tmp_path, ["train", "--config", path])
    assert f"{path}:{lineno + 1}:" in line
    assert "malformed YAML" in line


def test_config_not_a_mapping(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- paper: mssboost\n- artifact: fig4\n", encoding="utf-8")
    line = user_error(tmp_path, ["train", "--config", path])
    assert "list.yaml" in line
    assert "mapping" in line


# -- 3. unknown keys -------------------------------------------------------------------------
def test_unknown_top_level_key(tmp_path):
    path, lineno = config_variant(tmp_path, "\nprotocol:", "\nprotocl:")
    line = user_error(tmp_path, ["train", "--config", path])
    assert f"{path}:{lineno}:" in line
    assert "'protocl'" in line
    assert "did you mean 'protocol'" in line


def test_unknown_nested_key(tmp_path):
    path, lineno = replace_top_level(tmp_path, "protocol", "protocol: {repeat: 3}")
    line = user_error(tmp_path, ["train", "--config", path])
    assert f"{path}:{lineno}:" in line
    assert "'repeat'" in line
    assert "did you mean 'repeats'" in line


def test_unknown_method_parameter(tmp_path):
    path, lineno = config_variant(tmp_path, "rd: 0.1", "rdd: 0.1")
    line = user_error(tmp_path, ["train", "--config", path])
    assert f"{path}:{lineno}:" in line
    assert "'rdd'" in line
    assert "did you mean 'rd'" in line


def test_unknown_dataset_parameter(tmp_path):
    path, lineno = config_variant(tmp_path, "n_samples: 1000", "n_sample: 1000")
    line = user_error(tmp_path, ["train", "--config", path])
    assert f"{path}:{lineno}:" in line
    assert "'n_sample'" in line
    assert "did you mean 'n_samples'" in line


# -- 4. wrong types and ranges ---------------------------------------------------------------
@pytest.mark.parametrize("old, new, key, shown", [
    ("repeats: 20", "repeats: many", "repeats", "'many'"),
    ("test_size: 0.25", "test_size: 1.5", "test_size", "1.5"),
    ("repeats: 20", "repeats: 0", "repeats", "0"),
    ("split: holdout", "split: bootstrap", "split", "'bootstrap'"),
    ("rd: 0.1", "rd: 1.5", "rd", "1.5"),
    ("rf: 0.5", "rf: 0", "rf", "0"),
    ("n_estimators: 20", "n_estimators: -3", "n_estimators", "-3"),
    ("base_learner: stump", "base_learner: tree", "base_learner", "tree"),
], ids=["repeats-type", "test_size-range", "repeats-range", "split-choice", "rd-range",
        "rf-range", "n_estimators-range", "base_learner-choice"])
def test_bad_value(tmp_path, old, new, key, shown):
    path, lineno = config_variant(tmp_path, old, new)
    line = user_error(tmp_path, ["train", "--config", path])
    assert f"{path}:{lineno}:" in line
    assert key in line
    assert shown in line


# -- 5. unknown names ------------------------------------------------------------------------
@pytest.mark.parametrize("old, new, kind, suggestion", [
    ("- name: mssboost\n", "- name: mssbost\n", "method", "mssboost"),
    ("name: mssboost-synthetic", "name: mssboost-synthetc", "dataset", "mssboost-synthetic"),
    ("metrics: [hamming_error]", "metrics: [hamming_eror]", "metric", "hamming_error"),
], ids=["method", "dataset", "metric"])
def test_unknown_name_in_config(tmp_path, old, new, kind, suggestion):
    path, _ = config_variant(tmp_path, old, new)
    bad = re.search(r"(mssbost|mssboost-synthetc|hamming_eror)", new).group(1)
    line = user_error(tmp_path, ["train", "--config", path])
    assert str(path) in line
    assert f"unknown {kind} {bad!r}" in line
    assert f"did you mean {suggestion!r}" in line


def test_unknown_dataset_of_reproduce_datasets(tmp_path):
    """``reproduce --datasets`` names the target's datasets as its table does; a name it
    lacks is an error before anything is loaded or computed."""
    line = user_error(tmp_path, ["reproduce", "sparsemi/fig3", "--datasets", "tst1,tst11",
                                 "--out", tmp_path / "out"])
    assert "--datasets: sparsemi/fig3 has no dataset 'tst11' (did you mean 'tst1'" in line
    assert "its datasets: musk1, musk2, corel10, corel20, tst1" in line
    assert not (tmp_path / "out").exists()


def test_reproduce_status_names_unknown_datasets(tmp_path):
    line = user_error(tmp_path, ["reproduce", "sparsemi/fig3", "--status", "--datasets",
                                 "musk3", "--out", tmp_path / "out"])
    assert "--datasets: sparsemi/fig3 has no dataset 'musk3' (did you mean 'musk2'" in line


@pytest.mark.parametrize("status", [[], ["--status"]])
def test_unknown_method_of_reproduce_methods(tmp_path, status):
    line = user_error(tmp_path, ["reproduce", "sparsemi/table1", *status, "--methods",
                                 "MI-Kernel,MI-Kernal", "--out", tmp_path / "out"])
    assert "--methods: sparsemi/table1 has no method 'MI-Kernal' (did you mean 'MI-Kernel'" \
        in line
    assert "its methods: mi-SVM, MI-SVM, MI-Kernel, MILES, SparseMI, RS (10)" in line
    assert not (tmp_path / "out").exists()


def test_unknown_metric_without_suggestion_lists_known(tmp_path):
    path, _ = config_variant(tmp_path, "metrics: [hamming_error]", "metrics: [zzzqqq]")
    line = user_error(tmp_path, ["train", "--config", path])
    assert "unknown metric 'zzzqqq'" in line
    assert "known metrics:" in line and "hamming_error" in line


# -- 6. --set ----------------------------------------------------------------------------
def test_set_without_equals(tmp_path):
    line = user_error(tmp_path, ["train", "--config", FIG4, "--set", "protocol.repeats",
                                 "--out", tmp_path / "out"])
    assert "--set 'protocol.repeats'" in line
    assert "key.path=value" in line


def test_set_unknown_key_path(tmp_path):
    line = user_error(tmp_path, ["train", "--config", FIG4, "--set", "protocol.repat=2",
                                 "--out", tmp_path / "out"])
    assert "'repat'" in line
    assert "did you mean 'repeats'" in line


def test_set_unknown_method(tmp_path):
    line = user_error(tmp_path, ["train", "--config", FIG4,
                                 "--set", "methods.Foo.params.rd=0.2", "--out", tmp_path / "out"])
    assert "no method 'Foo'" in line
    for label in ("RSBag", "NSBoost", "MSSBoost"):
        assert label in line


def test_set_method_index_out_of_range(tmp_path):
    line = user_error(tmp_path, ["train", "--config", FIG4,
                                 "--set", "methods.7.params.rd=0.2", "--out", tmp_path / "out"])
    assert "methods[7]" in line
    assert "4 methods" in line


def test_set_into_a_scalar(tmp_path):
    line = user_error(tmp_path, ["train", "--config", FIG4, "--set", "paper.x=1",
                                 "--out", tmp_path / "out"])
    assert "--set paper.x=1" in line
    assert "not a mapping" in line


def test_set_unknown_method_parameter(tmp_path):
    line = user_error(tmp_path, ["train", "--config", FIG4,
                                 "--set", "methods.MSSBoost.params.rdd=0.2",
                                 "--out", tmp_path / "out"])
    assert "'rdd'" in line
    assert "did you mean 'rd'" in line


def test_set_bad_value_is_not_blamed_on_a_file_line(tmp_path):
    """A bad value given with --set must not be reported at the line of the file that holds
    the (valid) value it replaced."""
    lineno = next(i for i, s in enumerate(FIG4.read_text().splitlines(), 1)
                  if s.startswith("protocol:"))
    line = user_error(tmp_path, ["train", "--config", FIG4, "--set", "protocol.repeats=many",
                                 "--out", tmp_path / "out"])
    assert "protocol.repeats" in line and "'many'" in line
    assert f"{FIG4}:{lineno}:" not in line, line


# -- 7. reproduce ----------------------------------------------------------------------------
def test_reproduce_unknown_target(tmp_path):
    line = user_error(tmp_path, ["reproduce", "mssboost/fig44", "--out", tmp_path / "out"])
    assert "unknown target 'mssboost/fig44'" in line
    assert "did you mean 'mssboost/fig4'" in line


def test_reproduce_unknown_bare_target(tmp_path):
    line = user_error(tmp_path, ["reproduce", "fig44"])
    assert "unknown target 'fig44'" in line
    assert "'fig4'" in line


def test_reproduce_without_target(tmp_path):
    line = user_error(tmp_path, ["reproduce"])
    assert "target" in line
    assert "--all" in line


def test_reproduce_ambiguous_bare_target(tmp_path, monkeypatch):
    from mlkit.registry import TARGETS, Entry, load_plugins
    from mlkit.targets import Rendered, Target

    load_plugins()
    other = Target("otherpaper", "fig4", render=lambda result, out: Rendered(""),
                   summary="a second paper's fig4")
    monkeypatch.setitem(TARGETS._entries, other.name, Entry(other.name, other, other.summary))
    line = user_error(tmp_path, ["reproduce", "fig4", "--out", tmp_path / "out"])
    assert "'fig4' is ambiguous" in line
    assert "mssboost/fig4" in line and "otherpaper/fig4" in line


def test_reproduce_out_with_two_targets(tmp_path):
    line = user_error(tmp_path, ["reproduce", "mssboost/fig1", "mssboost/fig4",
                                 "--out", tmp_path / "out"])
    assert "--out" in line


# -- 8. plot / data / verify -----------------------------------------------------------------
def test_plot_curves_unknown_target(tmp_path):
    line = user_error(tmp_path, ["plot", "curves", "mssboost/fig44", "--out", tmp_path / "out"])
    assert "unknown target 'mssboost/fig44'" in line
    assert "did you mean 'mssboost/fig4'" in line


def test_plot_curves_empty_folder(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    line = user_error(tmp_path, ["plot", "curves", folder, "--out", tmp_path / "out"])
    assert str(folder) in line
    assert "no saved learning curves" in line


def test_plot_curves_target_not_run(tmp_path):
    line = user_error(tmp_path, ["plot", "curves", "mssboost/fig4"])
    assert "no saved results for mssboost/fig4" in line
    assert "mlkit reproduce mssboost/fig4" in line


def test_data_info_unknown_dataset(tmp_path):
    line = user_error(tmp_path, ["data", "info", "mssboost-synthetc"])
    assert "unknown dataset 'mssboost-synthetc'" in line
    assert "did you mean 'mssboost-synthetic'" in line


def test_verify_unknown_paper(tmp_path):
    line = user_error(tmp_path, ["verify", "mssbost"])
    assert "'mssbost'" in line
    assert "did you mean 'mssboost'" in line


def test_verify_unknown_paper_message_reads_well(tmp_path):
    """The registry pluralises its kind by appending 's': for CLAIMS ("paper with claims")
    that gives 'known paper with claimss'."""
    line = user_error(tmp_path, ["verify", "mssbost"])
    assert "claimss" not in line, line


# -- 9. estimators: bad labels ---------------------------------------------------------------
def _xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    return X, Y


def _nan_at_3(Y, value):
    Y = Y.astype(float)
    Y[3, 1] = value
    return Y


@pytest.mark.parametrize("make_y, match", [
    (lambda Y: Y[:30], r"X has 40 samples but Y has 30 rows"),
    (lambda Y: Y[:30, 0], r"X has 40 samples but y has 30"),
    (lambda Y: np.arange(40) % 3, r"3 classes"),
    (lambda Y: _nan_at_3(Y, np.nan), r"NaN"),
    (lambda Y: _nan_at_3(Y, np.inf), r"infinity"),
    (lambda Y: 2 * Y, r"0/1 or -1/\+1 labels.*\[2(\.0)?\]"),
    (lambda Y: np.column_stack([Y[:, 0], np.ones(40, int)]),
     r"label column\(s\) \[1\] have only one class"),
    (lambda Y: np.column_stack([2 * Y[:, 0] - 1, -np.ones(40)]),
     r"label column\(s\) \[1\] have only one class"),
    (lambda Y: np.zeros(40), r"only one class"),
    (lambda Y: np.zeros((40, 0)), r"0 labels"),
    (lambda Y: np.zeros((40, 2, 1)), r"shape \(n_samples, n_labels\)"),
], ids=["rows", "rows-1d", "1d-3-classes", "nan", "inf", "values-0-2", "one-class-01",
        "one-class-pm1", "1d-one-class", "no-labels", "3d"])
@pytest.mark.parametrize("name", ["MSSBoost", "NSBoost", "RSBag"])
def test_estimator_rejects_bad_labels(name, make_y, match):
    from mlkit import methods

    X, Y = _xy()
    est = getattr(methods, name)(n_estimators=2, base_learner="stump", rd=0.5, rf=0.5,
                                 random_state=0)
    with pytest.raises(ValueError, match=match):
        est.fit(X, make_y(Y))


# -- the "one shape" issue's bad inputs ------------------------------------------------------
@pytest.mark.parametrize("args, match", [
    (["--jobs", "0"], r"--jobs 0: give a positive number"),
    (["--backend", "nosuch"], r"--backend 'nosuch' is not a joblib backend.*loky"),
    (["--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1"],
     r"--scheduler tcp://127.0.0.1:9: cannot connect within 1 s"),
])
def test_bad_parallel_options_are_one_line(tmp_path, args, match):
    line = user_error(tmp_path, ["reproduce", "mssboost/fig1", *args])
    assert re.search(match, line), line


def test_data_home_naming_a_file(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("MLKIT_DATA", str(tmp_path / "afile"))
    line = user_error(tmp_path, ["data", "fetch", "musk1"])
    assert "MLKIT_DATA=" in line and "names a file, not a folder" in line


def test_an_invalid_value_from_the_quick_block_names_its_line(tmp_path):
    cfg = tmp_path / "c.yaml"
    text = FIG4.read_text().replace("quick:\n  protocol: {repeats: 5}",
                                    "quick:\n  protocol: {repeats: -3}")
    cfg.write_text(text)
    quick_line = text.splitlines().index("  protocol: {repeats: -3}") + 1
    line = user_error(tmp_path, ["train", "--config", cfg, "--quick"])
    assert f"c.yaml:{quick_line} (quick: block" in line and "greater than or equal to 1" in line


def test_data_info_on_a_missing_path(tmp_path):
    line = user_error(tmp_path, ["data", "info", tmp_path / "nope.arff", "--format", "mulan"])
    assert line.endswith("nope.arff: no such file")


def test_a_mulan_xml_missing_the_last_label(tmp_path):
    arff = tmp_path / "toy.arff"
    arff.write_text("@relation toy\n@attribute f1 numeric\n@attribute a {0,1}\n"
                    "@attribute b {0,1}\n@data\n0.5,1,0\n1.5,0,1\n")
    xml = tmp_path / "labels.xml"
    xml.write_text('<?xml version="1.0"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">'
                   '<label name="a"></label></labels>\n')
    line = user_error(tmp_path, ["data", "info", arff, "--format", "mulan", "--xml", xml])
    assert "'b' comes after the labels" in line and "does not list it" in line
    xml.write_text(xml.read_text().replace('<label name="a"></label>',
                                           '<label name="a"></label><label name="b"></label>'))
    ok = invoke(["data", "info", arff, "--format", "mulan", "--xml", xml])
    assert ok.exit_code == 0 and "labels: 2" in ok.output


def test_a_failure_inside_a_method_exits_1_with_the_traceback_in_a_log(tmp_path, monkeypatch):
    from mlkit.methods.mssboost import MSSBoost

    monkeypatch.setattr(MSSBoost, "fit", lambda self, X, Y: 1 / 0)
    result = invoke(["train", "--config", FIG4, *FAST, "--out", tmp_path / "o"])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "MSSBoost on mssboost-synthetic, split r00-f00 failed: " \
        "ZeroDivisionError" in lines[0]
    log = tmp_path / "o" / "errors.log"
    assert str(log) in lines[0] and "Traceback" in log.read_text()
    # the runs of the other methods were finished and kept
    assert list((tmp_path / "o" / "runs").rglob("*.json"))


def _cmdline(pid):
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="ignore")
    except OSError:                 # it ended between the listing and the read
        return ""


def _alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children(pid):
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find worker processes")
@pytest.mark.parametrize("sig, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_stops_the_command_and_leaves_no_worker_behind(tmp_path, sig, code):
    import signal
    import subprocess
    import sys
    import time

    # 200 repeats (about a minute on two free cores): the command is still running when the
    # signal comes, however late a loaded machine starts the workers
    cmd = [sys.executable, "-c", "from mlkit.cli import main; main()", "train", "--config",
           str(FIG4), "--set", "protocol.repeats=200", "--jobs", "2",
           "--out", str(tmp_path / "o")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers, deadline = [], time.time() + 60
    while time.time() < deadline and not workers:
        time.sleep(0.2)
        workers = [c for c in _children(proc.pid) if "loky" in _cmdline(c)]
    assert workers, "the runs never started in parallel workers"
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "interrupted; the runs finished so far are saved" in err
    # the workers go within seconds; a loaded machine may need longer to schedule them
    deadline = time.time() + 30
    while time.time() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.5)
    alive = [w for w in workers if _alive(w)]
    assert not alive, f"workers still alive 30 s after {sig}: {alive}"


def test_a_signal_inside_a_long_c_call_stops_the_command_within_the_grace(tmp_path):
    """A Python signal handler waits for a C call to return (liblinear at C = 1e8 takes
    minutes): the watcher thread ends the command with 143 a grace period after SIGTERM."""
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import signal, sys, numpy as np\n"
        "from threadpoolctl import threadpool_limits\n"
        "from mlkit.cli import _stop_if_stuck\n"
        "def handler(signum, frame):\n"
        "    raise KeyboardInterrupt(signum)\n"
        "signal.signal(signal.SIGTERM, handler)\n"
        "keep = _stop_if_stuck(1.0)\n"
        "a = np.random.default_rng(0).random((4000, 4000))\n"
        "print('ready', flush=True)\n"
        "with threadpool_limits(1):\n"
        "    np.linalg.svd(a)                  # one C call of tens of seconds\n"
        "print('the C call returned first', flush=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    sent = time.time()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "interrupted; the runs finished so far are saved" in err
    assert "returned first" not in out
    assert time.time() - sent < 15

"""End to end through the CLI: reproduce, resume, verify, plot, regress, train."""

import json
import subprocess

import pytest
from click.testing import CliRunner

from mlkit.cli import cli
from mlkit.manifest import git_revision, machine_name

from .conftest import CONFIGS


def _invoke(*args):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


def test_reproduce_fig4_quick_writes_everything_and_reruns_nothing(results):
    first = _invoke("reproduce", "mssboost/fig4", "--quick")
    assert first.exit_code == 0, first.output
    out = results / "mssboost" / "fig4-quick"
    for name in ("table.md", "table.csv", "table.tex", "fig4.png", "fig4.pdf",
                 "manifest.json", "summary.json"):
        assert (out / name).is_file(), name
    text = first.stdout
    assert "models to best (paper)" in text and "models to best (ours)" in text
    assert "synthetic data" in text                       # provenance in the caption
    # the terminal shows the caption in short and says where the whole one is
    caption = text.split("\n\n")[0].split("\n")[-1]
    assert caption.startswith("Fig. 4: test Hamming error") and len(caption) < 400, caption
    assert "Data: synthetic data: mssboost-synthetic." in caption
    assert "[--quick settings: indicative only]" in caption
    assert caption.endswith(f"{out / 'table.md'})")
    assert caption.split(" Data:")[0] in (out / "table.md").read_text()
    assert "20 runs computed, 0 reused" in text
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["protocol"]["repeats"] == 5 and manifest["quick"]
    assert {"versions", "git_revision", "machine", "seed", "runs_count", "runs_keys_sha256",
            "wall_time_s"} <= set(manifest)
    assert manifest["runs_count"] == 20 and "runs" not in manifest
    # where the runs were computed: CPU and BLAS kernels, per record and summed up
    assert manifest["machine"]["cpu"] and manifest["machine"]["blas"]
    assert sum(manifest["run_machines"].values()) == 20
    record = json.loads(next((out.parent / "fig4-quick" / "runs").rglob("*.json")).read_text())
    assert record["compute_kernels"]["cpu"] == manifest["machine"]["cpu"]
    assert machine_name(record["compute_kernels"]) in manifest["run_machines"]
    assert record["compute_kernels"]["simd"] in machine_name(record["compute_kernels"])
    assert "synthetic" in (out / "table.tex").read_text()
    table = (out / "table.md").read_text()
    second = _invoke("reproduce", "mssboost/fig4", "--quick")
    assert "0 runs computed, 20 reused" in second.stdout
    assert (out / "table.md").read_text() == table         # the same numbers from the records


def test_reproduce_status_reports_progress_without_computing(results):
    before = _invoke("reproduce", "mssboost/fig4", "--quick", "--status", "--jobs", "2")
    assert before.exit_code == 0, before.output
    assert "== mssboost/fig4 (quick): 0 of 20 runs recorded" in before.stdout
    assert "fit time left: unknown (no run recorded yet for 4 dataset/method pairs)" \
        in before.stdout
    assert not (results / "mssboost" / "fig4-quick").exists()      # nothing computed
    _invoke("reproduce", "mssboost/fig4", "--quick")
    next((results / "mssboost" / "fig4-quick" / "runs").rglob("*.json")).unlink()
    after = _invoke("reproduce", "mssboost/fig4", "--quick", "--status", "--jobs", "2")
    assert "19 of 20 runs recorded" in after.stdout
    assert "4/5" in after.stdout and "of wall time at --jobs 2" in after.stdout
    assert "unknown for" not in after.stdout


def test_reproduce_methods_computes_one_method_and_reads_the_rest(results):
    """``--methods`` (like ``--datasets``): only those methods' runs are computed; the
    outputs are partial until the others are run, and a full run then reuses them."""
    part = _invoke("reproduce", "mssboost/fig4", "--quick", "--methods", "MSSBoost")
    assert part.exit_code == 0, part.output
    assert "5 runs computed, 0 reused, 15 not recorded yet (partial)" in part.stdout
    runs = results / "mssboost" / "fig4-quick" / "runs"
    assert {p.parent.name.split("-")[0] for p in runs.rglob("*.json")} == {"MSSBoost"}
    status = _invoke("reproduce", "mssboost/fig4", "--quick", "--status")
    assert "5 of 20 runs recorded" in status.stdout
    whole = _invoke("reproduce", "mssboost/fig4", "--quick")
    assert "15 runs computed, 5 reused" in whole.stdout


def test_a_bare_artifact_name_works_when_one_paper_has_it():
    from mlkit.targets import resolve_target

    assert resolve_target("fig8").name == "mssboost/fig8"
    ambiguous = _invoke("reproduce", "fig4", "--quick")     # mssboost, sparsemi and hfss
    assert ambiguous.exit_code == 2 and "ambiguous" in ambiguous.stderr


def _claim_line(stdout, n):
    return next(x for x in stdout.splitlines() if f"claim {n}:" in x)


def test_verify_reports_claim_3_with_numbers(results):
    missing = _invoke("verify", "mssboost")
    assert missing.exit_code == 1 and "NOT RUN" in _claim_line(missing.stdout, 3)
    _invoke("reproduce", "mssboost/fig4", "--quick")
    res = _invoke("verify", "mssboost")
    assert "models to best error: MSSBoost" in res.stdout
    assert res.exit_code == 1        # the claims of Table 2 have not been run here
    # the verdict follows the saved numbers: the paper's pattern passes, its reverse fails
    summary = results / "mssboost" / "fig4-quick" / "summary.json"
    data = json.loads(summary.read_text())
    figs = data["figures"]
    figs.update({"models_to_best.MSSBoost": 5, "models_to_best.NSBoost": 12,
                 "models_to_best.RSBag": 20, "error@5.MSSBoost": 0.1,
                 "error@5.NSBoost": 0.2, "error@5.RSBag": 0.3})
    summary.write_text(json.dumps(data))
    assert _claim_line(_invoke("verify", "mssboost").stdout, 3).startswith("PASS")
    figs.update({"models_to_best.MSSBoost": 15})
    summary.write_text(json.dumps(data))
    assert _claim_line(_invoke("verify", "mssboost").stdout, 3).startswith("FAIL")


def test_plot_curves_from_saved_results_without_retraining(results):
    _invoke("reproduce", "mssboost/fig4", "--quick")
    out = results / "mssboost" / "fig4-quick"
    runs_before = {p: p.stat().st_mtime_ns for p in out.glob("runs/*/*/*.json")}
    res = _invoke("plot", "curves", str(out))
    assert res.exit_code == 0, res.output
    assert (out / "curves_hamming_error.png").is_file()
    assert (out / "curves_hamming_error.pdf").is_file()
    assert runs_before == {p: p.stat().st_mtime_ns for p in out.glob("runs/*/*/*.json")}
    by_target = _invoke("plot", "curves", "mssboost/fig4")
    assert by_target.exit_code == 0, by_target.output


def test_fig1_and_fig3(results):
    res = _invoke("reproduce", "mssboost/fig1", "mssboost/fig3")
    assert res.exit_code == 0, res.output
    assert (results / "mssboost" / "fig1" / "fig1.png").is_file()
    assert (results / "mssboost" / "fig3" / "fig3.pdf").is_file()
    assert "positives (paper, of 1000)" in res.stdout
    assert "Test Hamming error at T = 8" in res.stdout


def test_regress_passes_on_the_committed_references_and_fails_when_a_number_moves(
        results, tmp_path, monkeypatch):
    from .conftest import ROOT

    ref_src = ROOT / "results" / "reference" / "mssboost" / "fig4.json"
    assert ref_src.is_file(), "the fig4 reference must be committed"
    ref = results / "reference" / "mssboost" / "fig4.json"
    ref.parent.mkdir(parents=True)
    ref.write_text(ref_src.read_text())
    ok = _invoke("regress", "mssboost/fig4")
    assert ok.exit_code == 0, ok.output
    data = json.loads(ref.read_text())
    name = next(iter(data["figures"]))
    data["figures"][name]["value"] += 1.0
    ref.write_text(json.dumps(data))
    moved = _invoke("regress", "mssboost/fig4")
    assert moved.exit_code == 1
    assert "MOVED" in moved.stdout and name in moved.stdout


def test_train_writes_a_metrics_table_with_curves(results, tmp_path):
    # the generic metric table instead of fig4's own renderer (and its options)
    res = _invoke("train", "--config", str(CONFIGS / "mssboost" / "fig4.yaml"), "--quick",
                  "--out", str(tmp_path / "t"), "--seed", "3", "--jobs", "2",
                  "--set", "render=metric-table", "--set", "report={}")
    assert res.exit_code == 0, res.output
    assert "error (ours)" in res.stdout
    assert (tmp_path / "t" / "curves_hamming_error.png").is_file()
    manifest = json.loads((tmp_path / "t" / "manifest.json").read_text())
    assert manifest["seed"] == 3


@pytest.mark.parametrize("kind", ["methods", "datasets", "targets", "metrics"])
def test_list_shows_what_is_implemented(kind):
    res = _invoke("list", kind)
    assert res.exit_code == 0
    expected = {"methods": ["mssboost", "nsboost", "rsbag"],
                "datasets": ["mssboost-synthetic"],
                "targets": ["mssboost/fig1", "mssboost/fig3", "mssboost/fig4"],
                "metrics": ["mean_ap", "hamming_error"]}[kind]
    for name in expected:
        assert name in res.stdout


def test_help_everywhere():
    for args in ([], ["train"], ["reproduce"], ["plot"], ["plot", "curves"], ["data"],
                 ["data", "info"], ["data", "fetch"], ["data", "verify"], ["data", "list"],
                 ["verify"], ["regress"], ["list"]):
        res = _invoke(*args, "--help")
        assert res.exit_code == 0 and "Usage:" in res.stdout, args
    assert _invoke("--version").stdout.startswith("mlkit, version")


@pytest.mark.slow
def test_full_fig4_reproduction(results):
    res = _invoke("reproduce", "mssboost/fig4")
    assert res.exit_code == 0
    assert "60 runs computed, 0 reused" in res.stdout
    assert "MSSBoost" in (results / "mssboost" / "fig4" / "table.md").read_text()


def test_git_revision_is_dirty_for_source_changes_only(tmp_path):
    """A render rewrites its tracked outputs before the manifest is built: those must not
    mark the revision '+dirty'; an uncommitted change to the code or configs must."""
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       cwd=tmp_path, check=True, capture_output=True)
    for name in ("mlkit/a.py", "configs/a.yaml", "results/p/table.md", "REPRODUCTION.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "init")
    (tmp_path / "results/p/table.md").write_text("y\n")
    (tmp_path / "REPRODUCTION.md").write_text("y\n")
    rev = git_revision(tmp_path)
    assert rev is not None and not rev.endswith("+dirty")
    (tmp_path / "configs/a.yaml").write_text("y\n")
    assert git_revision(tmp_path).endswith("+dirty")


def test_the_terminal_shows_a_long_caption_in_short(tmp_path):
    """Tables whole; a caption paragraph as its first sentence, the data's kinds, the --quick
    note and where the whole caption is; a short paragraph as it is."""
    from types import SimpleNamespace as NS

    from mlkit.cli import TERMINAL_CAPTION, _terminal_text

    (tmp_path / "table.md").write_text("x")
    table = "| a | b |\n|:--|:--|\n| " + "1 | 2 |\n| " * 200 + "3 | 4 |"
    caption = ("Table 9: a long caption (one sentence). Data: d1 (real data: a source) ; "
               + "More notes. " * 40)
    result = NS(quick=True, datasets={
        "d1": NS(provenance="d1 (real data: UCI, somewhere)"),
        "d1 n=4": NS(provenance="d1 (real data: UCI, somewhere)"),
        "toy": NS(provenance="toy[classes 1, 2] (synthetic data: our generator)")})
    shown = _terminal_text(f"{caption}\n\n{table}\n\nA short note.", tmp_path, result)
    first, rest = shown.split("\n\n", 1)
    assert first == ("Table 9: a long caption (one sentence). Data: real data: d1; synthetic "
                     "data: toy. [--quick settings: indicative only] (Whole caption, with each "
                     f"dataset's source and the notes: {tmp_path / 'table.md'})")
    assert rest == f"{table}\n\nA short note."
    short = "Fig. 1: short. Data: toy (synthetic data)."
    assert len(short) <= TERMINAL_CAPTION
    assert _terminal_text(f"{short}\n\n{table}", tmp_path, result) == f"{short}\n\n{table}"

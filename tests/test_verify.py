"""`mlkit verify PAPER --json` and the papers' claims YAML: one object per claim with its
verdict and, unless it passes, the diagnosis the claims YAML gives; exit 1 unless every claim
passes, 2 (one line) for a bad claims YAML."""

import json

import pytest
from click.testing import CliRunner

from mlkit.cli import cli
from mlkit.verify import (VERDICTS, ClaimResult, _diagnosis, claims_file, claims_of,
                          claims_path, verdict)

PAPERS = ("mssboost", "sparsemi", "hfss", "lm3fe")


def _json(*args):
    res = CliRunner().invoke(cli, ["verify", *args])
    return res, (json.loads(res.stdout) if res.stdout.strip() else None)


@pytest.mark.parametrize("paper", PAPERS)
def test_every_claims_yaml_is_valid_and_names_only_claims_and_targets(paper):
    parsed = claims_file(paper)
    assert claims_path(paper).name == "claims.yaml" and claims_path(paper).is_file()
    assert 0 < parsed.alpha < 1
    numbers = {c.number for c in claims_of(paper)}
    assert set(parsed.claims) == numbers             # every claim has an entry
    for entry in parsed.claims.values():
        assert entry.targets and all(t.startswith(f"{paper}/") for t in entry.targets)


@pytest.mark.parametrize("paper", ["hfss", "lm3fe", "mssboost", "sparsemi"])
def test_json_on_the_committed_results_has_a_diagnosis_for_every_failure(paper):
    """The committed results: every claim has a verdict, every FAIL its diagnosis from the
    claims YAML (none left at the placeholder), every PASS none, a claim whose results are
    outdated or missing (a rerun under way) says which targets to run; exit status 1 when
    a claim does not pass, and the text output says the same verdicts."""
    res, rows = _json(paper, "--json")
    parsed = claims_file(paper)
    assert [r["claim"] for r in rows] == sorted(parsed.claims, key=lambda c: (len(c), c))
    for row in rows:
        assert list(row) == ["claim", "verdict", "statement", "measured", "diagnosis"]
        assert row["verdict"] in VERDICTS
        if row["verdict"] == "PASS":
            assert row["diagnosis"] is None
            continue
        d = row["diagnosis"]
        assert list(d) == ["status", "text", "targets"]
        if row["verdict"] == "FAIL":
            assert d == parsed.claims[row["claim"]].diagnosis.model_dump()
            assert "no diagnosis written yet" not in d["text"]
        else:
            assert d["text"].startswith("not judged") and d["status"] == "untested"
    # exit 0 only when every claim passes
    assert res.exit_code == (0 if all(r["verdict"] == "PASS" for r in rows) else 1), res.stderr
    text = CliRunner().invoke(cli, ["verify", paper])
    assert text.exit_code == res.exit_code
    for row in rows:
        assert f"{row['verdict']:<7} claim {row['claim']}: " in text.stdout


def test_verdicts_and_their_diagnoses():
    entry = claims_file("sparsemi").claims["2"]
    assert verdict(ClaimResult(True, "")) == "PASS"
    assert verdict(ClaimResult(False, "")) == "FAIL"
    assert verdict(ClaimResult(None, "")) == "NOT RUN"
    assert verdict(ClaimResult(None, "", outdated=True)) == "NO VERDICT"
    assert _diagnosis("PASS", entry, "x") is None
    assert _diagnosis("FAIL", entry, "x")["text"] == " ".join(entry.diagnosis.text.split())
    missing = _diagnosis("NOT RUN", entry, "x")
    assert missing["status"] == "untested" and missing["targets"] == entry.targets
    assert "`mlkit reproduce sparsemi/table1`" in missing["text"]
    assert "outdated or partial" in _diagnosis("NO VERDICT", entry, "x")["text"]
    assert "no diagnosis written yet (add one to x)" in _diagnosis("FAIL", None, "x")["text"]


def test_not_run_claims_exit_1_with_the_targets_to_run(results):
    """Without saved results every claim is NOT RUN, says which targets to run, and the
    command exits 1 (as for a FAIL)."""
    res, rows = _json("lm3fe", "--json")
    assert res.exit_code == 1
    assert {r["verdict"] for r in rows} == {"NOT RUN"}
    assert rows[3]["diagnosis"]["targets"][0] == "lm3fe/objective"


@pytest.mark.parametrize("text, message", [
    ("alpha: 2\n", r"claims.yaml:1: alpha: Input should be less than 1; got 2"),
    ("claims:\n  '1':\n    diagnosis: {status: maybe, text: t}\n",
     r"claims.yaml:3: claims.1.diagnosis.status: Input should be 'tested' or 'untested'"),
    ("claims:\n  '9': {targets: [sparsemi/table1]}\n",
     r"claims.yaml:2: claim 9 is not a claim of sparsemi \(its claims: 1, 2, 3, 4, 5\)"),
    ("claims:\n  '1': {targets: [sparsemi/tabel1]}\n",
     r"claim 1 names target 'sparsemi/tabel1', which is not a target"),
    ("claims: {'1': {target: []}}\n", r"claims.1.target: Extra inputs are not permitted"),
    ("alpha: [\n", r"claims.yaml:\d: malformed YAML"),
])
def test_a_bad_claims_yaml_is_one_line_and_exit_2(tmp_path, monkeypatch, text, message):
    import re

    path = tmp_path / "claims.yaml"
    path.write_text(text)
    monkeypatch.setattr("mlkit.verify.claims_path", lambda paper: path)
    res, _ = _json("sparsemi", "--json")
    assert res.exit_code == 2
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert re.search(message, res.stderr), res.stderr


def test_help_documents_the_exit_status():
    res = CliRunner().invoke(cli, ["verify", "--help"])
    assert "Exit status: 0 when every claim passes; 1 when a claim FAILs" in \
        " ".join(res.stdout.split())
    assert "--json" in res.stdout

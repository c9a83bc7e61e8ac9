"""A re-render keeps the provenance of the runs it renders and rewrites no unchanged file."""

import json

from click.testing import CliRunner

from mlkit import manifest as manifest_mod
from mlkit._io import recording_writes, write_text
from mlkit.cli import cli


def _files(folder):
    """{name: (bytes, mtime_ns)} of every file below ``folder``."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_rerender_keeps_the_runs_provenance_and_touches_no_file(results, monkeypatch):
    first = CliRunner().invoke(cli, ["reproduce", "mssboost/fig4", "--quick"])
    assert first.exit_code == 0, first.output
    out = results / "mssboost" / "fig4-quick"
    made = json.loads((out / "manifest.json").read_text())
    before = _files(out)
    # another revision on another machine renders the same runs
    monkeypatch.setattr(manifest_mod, "git_revision", lambda root=None: "f" * 40)
    monkeypatch.setattr(manifest_mod.platform, "platform", lambda: "Elsewhere-1.0")
    again = CliRunner().invoke(cli, ["reproduce", "mssboost/fig4", "--quick"])
    assert again.exit_code == 0, again.output
    assert "0 runs computed, 20 reused" in again.stdout
    assert _files(out) == before                   # byte-identical: not even touched
    # an output that changed (here: deleted) is rewritten; the manifest then names the new
    # render, but the runs keep the revision, machine and time that computed them
    (out / "table.md").unlink()
    third = CliRunner().invoke(cli, ["reproduce", "mssboost/fig4", "--quick"])
    assert third.exit_code == 0, third.output
    assert (out / "table.md").read_bytes() == before["table.md"][0]
    kept = json.loads((out / "manifest.json").read_text())
    for key in manifest_mod.COMPUTED_BY:
        assert kept[key] == made[key], key
    assert kept["machine"]["platform"] != "Elsewhere-1.0"
    assert kept["rendered"]["git_revision"] == "f" * 40
    assert kept["runs_computed"] == 20 and kept["runs_reused"] == 0


def test_computing_runs_stamps_the_manifest_with_this_invocation(results, monkeypatch):
    assert CliRunner().invoke(cli, ["reproduce", "mssboost/fig4", "--quick"]).exit_code == 0
    out = results / "mssboost" / "fig4-quick"
    monkeypatch.setattr(manifest_mod, "git_revision", lambda root=None: "e" * 40)
    next((out / "runs").rglob("*.json")).unlink()          # one run to compute again
    res = CliRunner().invoke(cli, ["reproduce", "mssboost/fig4", "--quick"])
    assert "1 runs computed, 19 reused" in res.stdout
    m = json.loads((out / "manifest.json").read_text())
    assert m["git_revision"] == "e" * 40 and m["runs_computed"] == 1


def test_an_identical_write_leaves_the_file_alone(tmp_path):
    path = write_text(tmp_path / "a.txt", "same")
    stamp = path.stat().st_mtime_ns
    with recording_writes() as changed:
        write_text(path, "same")
        assert changed == [] and path.stat().st_mtime_ns == stamp
        write_text(path, "other")
    assert changed == [path] and path.read_text() == "other"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]    # no temporary file left

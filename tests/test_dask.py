"""Scale-out on Dask: a target reproduced on a process-based distributed.LocalCluster (two
worker processes, as `dask scheduler` + `dask worker --nthreads 1` give) has the local
run's tables, figures' numbers and run records."""

import json

import pytest
from click.testing import CliRunner

from mlkit.cli import cli

distributed = pytest.importorskip("dask.distributed")


def _reproduce(*args):
    res = CliRunner().invoke(cli, ["reproduce", "mssboost/fig4", "--quick", *args])
    assert res.exit_code == 0, res.output + res.stderr
    return res


def _records(folder):
    """{run file: (key, metrics, curves)} of a results folder's run records."""
    out = {}
    for path in sorted((folder / "runs").rglob("*.json")):
        rec = json.loads(path.read_text())
        out[path.relative_to(folder).as_posix()] = (rec["key"], rec["metrics"], rec["curves"])
    return out


def test_a_target_on_a_two_worker_process_cluster_equals_the_local_run(tmp_path, results):
    local, remote = tmp_path / "local", tmp_path / "dask"
    _reproduce("--out", str(local))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            res = _reproduce("--out", str(remote), "--jobs", "2",
                             "--scheduler", cluster.scheduler_address)
            # the runs did go to the two worker processes (not this one)
            workers = client.scheduler_info()["workers"]
            assert len(workers) == 2
    assert "20 runs computed, 0 reused" in res.stdout
    for name in ("table.md", "table.csv", "table.tex"):
        assert (remote / name).read_text() == (local / name).read_text(), name
    assert json.loads((remote / "summary.json").read_text())["figures"] == \
        json.loads((local / "summary.json").read_text())["figures"]
    assert _records(remote) == _records(local) and len(_records(local)) == 20

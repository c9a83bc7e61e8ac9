"""Progress off a terminal and the estimators' warnings: one line at a steady interval, one
summary line, each run's warnings in the target's warnings.log."""

import io
import re
import warnings

from click.testing import CliRunner
from sklearn.exceptions import ConvergenceWarning

from mlkit._progress import ProgressLines, WarningLog, collect_warnings, progress_reporter
from mlkit.cli import cli
from mlkit.runner import fit as runner_fit


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_lines_at_a_steady_interval_with_an_eta():
    clock, out = _Clock(), io.StringIO()
    bar = ProgressLines(10, "p/t", stream=out, interval=60, clock=clock)
    clock.now = 30
    assert not bar.tick() and out.getvalue() == ""          # not yet an interval
    clock.now = 61
    assert bar.tick()
    assert out.getvalue() == ("mlkit: p/t: 0/10 runs done, 1 min 1 s elapsed, ETA unknown "
                              "(no run finished yet)\n")
    bar.update(4)
    clock.now = 100
    assert not bar.tick()                                    # 39 s after the last line
    clock.now = 121
    assert bar.tick()
    # 4 runs in 121 s: 6 left take 6 * 30.25 s
    assert out.getvalue().splitlines()[-1] == ("mlkit: p/t: 4/10 runs done, 2 min 1 s "
                                               "elapsed, ETA 3 min 2 s")


def test_off_a_terminal_the_reporter_is_lines_on_a_terminal_a_bar():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    lines = progress_reporter(3, "x", stream=io.StringIO())
    try:
        assert isinstance(lines, ProgressLines)
    finally:
        lines.close()
    bar = progress_reporter(3, "x", stream=Tty())
    assert not isinstance(bar, ProgressLines)
    bar.close()


def test_warnings_are_collected_not_printed_and_errors_stay_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with collect_warnings() as found:
            warnings.warn("did not converge\nmore text", ConvergenceWarning)
        assert found == [("ConvergenceWarning", "did not converge")]
        try:
            with collect_warnings():
                warnings.warn("overflow", RuntimeWarning)
        except RuntimeWarning:
            pass
        else:
            raise AssertionError("a warning filtered as an error must still raise")


def test_a_reproduction_off_a_terminal_prints_progress_lines_and_one_warning_summary(
        results, monkeypatch, tmp_path):
    real = runner_fit._fit_and_score_run

    def warns(*args, **kwargs):
        warnings.warn("lbfgs failed to converge (status=1)", ConvergenceWarning)
        return real(*args, **kwargs)

    monkeypatch.setattr(runner_fit, "_fit_and_score_run", warns)
    monkeypatch.setenv("MLKIT_PROGRESS_INTERVAL", "0.02")
    res = CliRunner().invoke(cli, ["reproduce", "mssboost/fig4", "--quick"])
    assert res.exit_code == 0, res.output
    err = res.stderr.splitlines()
    progress = [s for s in err if "runs done" in s]
    assert progress, res.stderr
    assert all(re.fullmatch(r"mlkit: mssboost/fig4: \d+/20 runs done, [\d.]+ s elapsed, "
                            r"ETA .+", s) for s in progress), progress
    log = results / "mssboost" / "fig4-quick" / "warnings.log"
    summary = [s for s in err if "estimator warnings" in s]
    assert summary == [f"mlkit: warning: mssboost/fig4: 20 estimator warnings in 20 runs "
                       f"(ConvergenceWarning x20); each run's are in {log}"]
    assert not [s for s in err if "lbfgs failed" in s]       # no raw warning line
    lines = log.read_text().splitlines()
    assert lines[0].startswith("== mssboost/fig4, ") and len(lines) == 21
    assert lines[1].startswith("mssboost-synthetic / ") and lines[1].endswith(
        ": ConvergenceWarning x1: lbfgs failed to converge (status=1)")


def test_warning_log_summary_counts_kinds(tmp_path):
    log = WarningLog(tmp_path / "w.log", "p/t")
    assert log.summary() is None
    log.add("a", [("UserWarning", "u"), ("ConvergenceWarning", "c"), ("ConvergenceWarning",
                                                                      "c")])
    log.add("b", [("ConvergenceWarning", "d")])
    log.add("c", [])
    assert log.summary() == (f"p/t: 4 estimator warnings in 2 runs (ConvergenceWarning x3, "
                             f"UserWarning x1); each run's are in {tmp_path / 'w.log'}")
    assert (tmp_path / "w.log").read_text().splitlines()[1:] == [
        "a: ConvergenceWarning x2: c", "a: UserWarning x1: u", "b: ConvergenceWarning x1: d"]

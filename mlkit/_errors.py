"""User-facing errors: the CLI prints their message on one line and exits with status 2."""

import difflib

__all__ = ["MlkitError", "ConfigError", "DataError", "UnknownNameError", "SolverError",
           "RunFailed", "closest"]


class MlkitError(Exception):
    """An error caused by the user's input (config, data, names), not by a bug in mlkit."""


class ConfigError(MlkitError, ValueError):
    """A config file that cannot be read, parsed or validated."""


class DataError(MlkitError, ValueError):
    """A data file that is missing, corrupt, truncated, or fails its checksum or counts."""


class SolverError(RuntimeError):
    """A numerical solver gave up on a problem (e.g. every HiGHS method on an LP). Raised by
    the estimators; the runner reports it with the run it happened in."""


class RunFailed(Exception):
    """A run raised inside its estimator: a bug (in mlkit or the data's fit to the method),
    not a user error. The CLI prints one line naming the run and where the traceback went,
    and exits with status 1; the runs finished before it are saved."""

    def __init__(self, message, traceback_text=""):
        super().__init__(message)
        self.traceback_text = traceback_text


class UnknownNameError(MlkitError, KeyError):
    """A method, dataset, metric or target name that is not registered."""

    def __str__(self):  # KeyError would quote the message
        return str(self.args[0])


def closest(name, candidates, n=3):
    """The registered names closest to ``name``, best first (difflib ratio >= 0.4)."""
    candidates = list(candidates)
    found = difflib.get_close_matches(str(name), candidates, n=n, cutoff=0.4)
    if not found:
        lowered = str(name).lower()
        found = [c for c in candidates if lowered in c.lower() or c.lower() in lowered][:n]
    return found


def did_you_mean(name, candidates):
    """' (did you mean 'x'?)' or '' when nothing is close."""
    found = closest(name, candidates)
    if not found:
        return ""
    return " (did you mean " + " or ".join(repr(f) for f in found) + "?)"

"""Where mlkit finds its configs and keeps its results, from a clone or from an installed wheel.

*Configs* (:func:`configs_dir`): ``$MLKIT_CONFIGS``; else the clone's ``configs/`` when the
package runs from its clone (an editable install, ``PYTHONPATH``); else the copy a built
wheel ships as package data (``mlkit/_configs``, made by the build hook in ``setup.py``).

*Results* (:func:`results_root`), the one folder every command reads and writes: the
``--results DIR`` option (:func:`using_results`); else ``$MLKIT_RESULTS``; else the
``results/`` of the mlkit clone holding the current folder, or of the clone the package runs
from; else a per-user folder (``platformdirs.user_data_dir("mlkit")/results``, e.g.
``~/.local/share/mlkit/results`` on Linux).
"""

import contextlib
import os
from pathlib import Path

from ._errors import MlkitError

__all__ = ["RESULTS_ENV", "CONFIGS_ENV", "clone_root", "configs_dir", "results_root",
           "results_root_origin", "using_results", "shown_path"]

RESULTS_ENV = "MLKIT_RESULTS"
CONFIGS_ENV = "MLKIT_CONFIGS"
#: the configs a built wheel carries (``setup.py`` copies ``configs/`` there)
PACKAGED_CONFIGS = Path(__file__).resolve().parent / "_configs"

_override = []          # the --results of the running command (innermost last)


def _is_clone(folder):
    """Whether ``folder`` is the root of an mlkit source tree: its ``pyproject.toml`` names
    the project ``mlkit`` and it has a ``configs/`` folder."""
    project = folder / "pyproject.toml"
    if not (project.is_file() and (folder / "configs").is_dir()):
        return False
    try:
        text = project.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return any(line.replace(" ", "") == 'name="mlkit"' for line in text.splitlines())


def clone_root(start=None):
    """The root of the mlkit clone holding ``start`` (a folder; default: the one the package
    runs from), or None when it lies in none."""
    if start is None:
        folder = Path(__file__).resolve().parents[1]
        return folder if _is_clone(folder) else None
    start = Path(start).resolve()
    for folder in (start, *start.parents):
        if _is_clone(folder):
            return folder
    return None


def configs_dir():
    """The folder of the targets' configs (see the module docstring for the order)."""
    env = os.environ.get(CONFIGS_ENV)
    if env:
        path = Path(env)
        if not path.is_dir():
            raise MlkitError(f"{CONFIGS_ENV}={env} is not a folder; point it at a folder of "
                             "<paper>/<artifact>.yaml configs or unset it")
        return path
    clone = clone_root()
    if clone is not None:
        return clone / "configs"
    if PACKAGED_CONFIGS.is_dir():
        return PACKAGED_CONFIGS
    raise MlkitError(f"no configs: this mlkit install carries none ({PACKAGED_CONFIGS} is "
                     "missing); reinstall it from a wheel built from the clone (pip install "
                     f"mlkit/ or pip wheel mlkit/), or set {CONFIGS_ENV} to a configs folder")


def _user_results():
    try:
        from platformdirs import user_data_dir
    except ImportError:                          # pooch depends on it; be safe anyway
        return Path.home() / ".local" / "share" / "mlkit" / "results"
    return Path(user_data_dir("mlkit", appauthor=False)) / "results"


def results_root_origin():
    """(the results root, where it comes from: ``--results``, ``MLKIT_RESULTS``, ``the
    clone at ...``, ``the user data folder``)."""
    if _override:
        return Path(_override[-1]), "--results"
    env = os.environ.get(RESULTS_ENV)
    if env:
        return Path(env), RESULTS_ENV
    clone = clone_root(Path.cwd()) or clone_root()
    if clone is not None:
        return clone / "results", f"the clone {clone}"
    return _user_results(), "the user data folder; --results or MLKIT_RESULTS names another"


def results_root():
    """The folder of every target's results (see the module docstring for the order)."""
    return results_root_origin()[0]


@contextlib.contextmanager
def using_results(path):
    """Within the block, :func:`results_root` is ``path`` (the ``--results`` option); child
    processes see it as ``MLKIT_RESULTS``."""
    path = Path(path)
    old = os.environ.get(RESULTS_ENV)
    _override.append(path)
    os.environ[RESULTS_ENV] = str(path)
    try:
        yield path
    finally:
        _override.pop()
        if old is None:
            os.environ.pop(RESULTS_ENV, None)
        else:
            os.environ[RESULTS_ENV] = old


def shown_path(path):
    """``path`` as a manifest stores it: relative to the folder holding the results root
    (``results/mssboost/fig4``) when it lies below it, so that the same run gives the same
    manifest from any working folder; else as given."""
    path = Path(path)
    base = Path(os.path.abspath(results_root())).parent
    try:
        return Path(os.path.abspath(path)).relative_to(base).as_posix()
    except ValueError:
        return str(path)

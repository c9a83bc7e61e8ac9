"""The manifest stored beside every result: what ran, with what, where, and how long."""

import functools
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from . import __version__
from ._paths import shown_path
from .store import keys_digest

__all__ = ["build_manifest", "compute_kernels", "full_run_wall_time", "git_revision",
           "invocation_keys", "machine_name", "package_versions", "runs_dir_of", "runs_index"]

_PACKAGES = ("numpy", "scipy", "scikit-learn", "pandas", "matplotlib", "joblib", "pydantic",
             "click", "pyyaml", "dask", "distributed")


def package_versions():
    out = {"python": platform.python_version(), "mlkit": __version__}
    for name in _PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


def _cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _numpy_simd():
    """The SIMD target numpy dispatches float64 ``exp`` to on this CPU (e.g. "X86_V3", AVX2;
    "X86_V4" with AVX-512): the Gaussian kernels' exponentials round by it."""
    try:
        from numpy.lib.introspect import opt_func_info

        return opt_func_info(func_name="^exp$", signature="float64")["exp"]["dd"]["current"]
    except Exception:                        # numpy < 2.0 or no such entry
        return None


@functools.lru_cache(maxsize=1)
def compute_kernels():
    """What decides the last bits of a run's floating point on this machine: the CPU model,
    each BLAS library with the kernel family it picked for this CPU (e.g. "openblas 0.3.30
    Haswell") and the SIMD target of numpy's ``exp`` (``simd``; two "AMD EPYC" machines with
    the same BLAS kernels gave SparseMI objectives that differ in the 12th digit). The same
    config and seed give the same numbers where these agree; on another CPU the kernels round
    differently, and a fit that is chaotic in rounding (a greedy reduced set, a near-tie in a
    grid search) may then pick another point. Cached: one library scan per process."""
    try:
        import numpy  # noqa: F401  (load the BLAS libraries the runs use before the scan)
        import scipy.linalg  # noqa: F401
        from threadpoolctl import threadpool_info
        blas = sorted({" ".join(str(x) for x in (i.get("internal_api"), i.get("version"),
                                                  i.get("architecture")) if x)
                       for i in threadpool_info() if i.get("user_api") == "blas"})
    except Exception:                        # threadpoolctl cannot inspect this platform
        blas = []
    return {"cpu": _cpu_model(), "blas": blas, "simd": _numpy_simd()}


def machine_name(kernels):
    """One line naming a :func:`compute_kernels` result ("not recorded" for None), as
    ``run_machines`` counts them."""
    if not kernels:
        return "not recorded"
    simd = kernels.get("simd")
    return "; ".join([kernels.get("cpu") or "?", *kernels.get("blas", []),
                      *([f"numpy exp {simd}"] if simd else [])])


#: the paths whose uncommitted changes make a revision '+dirty': the code and configs that
#: determine a result, not the outputs (results/, REPRODUCTION.md) a render itself rewrites
#: before its manifest is built
SOURCE_PATHS = ("mlkit", "configs", "pyproject.toml")


def git_revision(root=None):
    """The git commit of mlkit's source tree ('+dirty' when its :data:`SOURCE_PATHS` have
    uncommitted changes), or None outside a git checkout."""
    root = Path(__file__).resolve().parents[1] if root is None else Path(root)
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                *SOURCE_PATHS],
                               cwd=root, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return rev + ("+dirty" if dirty else "")


def runs_index(records):
    """What a manifest says of the runs of its invocation: their number (``runs_count``),
    a digest of their keys (``runs_keys_sha256``, :func:`mlkit.store.keys_digest`) and the
    sum of their fit and predict seconds (``runs_fit_predict_s``). The records themselves
    are in the table of the runs' folder (:mod:`mlkit.store`)."""
    ordered = sorted(records, key=lambda r: (r["dataset"], r["method"], r["repeat"],
                                             r["fold"]))
    return {"runs_count": len(ordered),
            "runs_keys_sha256": keys_digest(r["key"] for r in ordered),
            "runs_fit_predict_s": sum((r["timings"].get("fit_s") or 0)
                                      + (r["timings"].get("predict_s") or 0)
                                      for r in ordered)}


def invocation_keys(manifest, *candidates):
    """The run keys of the invocation whose ``manifest`` this is: the first of the
    ``candidates`` (sets of keys) whose digest is the manifest's ``runs_keys_sha256``
    (a manifest written before the records were folded lists its runs: their keys), or
    None when none is.

    >>> m = {"runs_count": 2, "runs_keys_sha256": keys_digest(["a", "b"])}
    >>> invocation_keys(m, {"a", "b", "c"}, {"a", "b"}) == {"a", "b"}
    True
    >>> invocation_keys(m, {"a"}) is None
    True
    """
    if manifest.get("runs") is not None:
        return {r["key"] for r in manifest["runs"]}
    want = manifest.get("runs_keys_sha256")
    for keys in candidates:
        keys = set(keys)
        if len(keys) == manifest.get("runs_count") and keys_digest(keys) == want:
            return keys
    return None


def full_run_wall_time(result, previous=None):
    """Wall seconds of the invocation that computed every run of ``result``: this one's when
    it reused none; else the value a previous manifest of the same runs (same keys) carried,
    so a re-render keeps the time of the full run it renders; else None."""
    if not result.reused:
        return result.wall_time
    if previous is None or result.computed:
        return None
    keys = [r["key"] for r in result.records]
    if len(set(keys)) != len(keys) or invocation_keys(previous, keys) != set(keys):
        return None
    if previous.get("full_run_wall_time_s") is not None:
        return previous["full_run_wall_time_s"]
    return previous.get("wall_time_s") if not previous.get("runs_reused") else None


#: what a manifest says of the invocation that computed its runs: a re-render that computes
#: none of them keeps these from the manifest it replaces (:func:`build_manifest`)
COMPUTED_BY = ("git_revision", "versions", "machine", "command", "finished_at", "config_file",
               "runs_dir", "runs_computed", "runs_reused", "wall_time_s")


def _renders_same_runs(result, previous):
    """Whether ``result`` computed nothing and reuses exactly the runs of the manifest
    ``previous`` (same run keys)."""
    if previous is None or result.computed or not result.records:
        return False
    keys = [r["key"] for r in result.records]
    return len(set(keys)) == len(keys) and invocation_keys(previous, keys) == set(keys)


def rendering(command=None):
    """The ``rendered`` block of a manifest: the revision, versions and time of the render
    that wrote its outputs (the runs' own are the manifest's top-level fields)."""
    return {"git_revision": git_revision(), "mlkit": __version__,
            "command": command or " ".join(sys.argv),
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def build_manifest(spec, result, *, quick=False, command=None, runs_dir=None, out_dir=None,
                   extra=None, previous=None):
    """A JSON-able dict: resolved config, seed, versions, git revision, machine, the
    machines its runs were computed on and what identifies the runs (:func:`runs_index`;
    each run's record, with its wall and CPU times, is in the store of the runs' folder,
    :mod:`mlkit.store`). With both ``runs_dir`` and ``out_dir`` (where the manifest
    goes), ``runs_dir_relative`` is the records' folder relative to the manifest's, which
    :func:`runs_dir_of` follows.
    ``previous``: the manifest this one replaces (for :func:`full_run_wall_time`).

    Provenance is that of the runs: when ``result`` computed nothing and renders exactly
    the runs of ``previous``, the fields of :data:`COMPUTED_BY` (git revision, versions,
    machine, command, time, ...) are kept from ``previous``, so a re-render never stamps
    numbers with a revision that did not compute them; ``rendered`` (:func:`rendering`)
    names the render itself."""
    relative = None
    same_runs = _renders_same_runs(result, previous)
    if runs_dir is not None and out_dir is not None:
        relative = Path(os.path.relpath(os.path.abspath(runs_dir),
                                        os.path.abspath(out_dir))).as_posix()
    manifest = {
        "target": spec.target,
        "config_file": spec.source,
        "quick": quick,
        "config": spec.resolved(),
        "seed": spec.protocol.seed,
        "datasets": {label: {"name": d.name, "provenance": d.provenance,
                             "synthetic": d.synthetic, "checksums": d.checksums}
                     for label, d in result.datasets.items()},
        "versions": package_versions(),
        "git_revision": git_revision(),
        "machine": {"platform": platform.platform(), "processor": platform.machine(),
                    "cpus": os.cpu_count(), "hostname": platform.node(), **compute_kernels()},
        # the machines its runs were computed on (a long run may span several; records
        # made before they kept this are "not recorded")
        "run_machines": _run_machines(result.records),
        "command": command or " ".join(sys.argv),
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "runs_dir": None if runs_dir is None else shown_path(runs_dir),
        "runs_dir_relative": relative,
        "runs_computed": result.computed,
        "runs_reused": result.reused,
        "wall_time_s": result.wall_time,
        "full_run_wall_time_s": full_run_wall_time(result, previous),
        **runs_index(result.records),
        **(extra or {}),
        "rendered": rendering(command),
    }
    if same_runs:
        manifest.update({k: previous[k] for k in COMPUTED_BY if k in previous})
    return manifest


def _run_machines(records):
    counts = {}
    for r in records:
        name = machine_name(r.get("compute_kernels"))
        counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def runs_dir_of(manifest, out_dir):
    """The folder holding the run records of the invocation whose ``manifest`` is in
    ``out_dir``, found from ``out_dir`` itself, whatever the current directory.

    ``manifest["runs_dir"]`` is the path the run used (relative to the directory it ran in,
    e.g. ``results/hfss/baseline``, or absolute); only its last names are read. Every writer
    (``mlkit reproduce``, ``mlkit train``) puts the records in one of three places, all
    named from the manifest's own folder: that folder itself; its ``runs-of-<artifact>``
    subfolder (``--out`` with a target drawn from another artifact's runs); or the sibling
    folder of that artifact (``results/<paper>/<artifact>[-quick]``). So a copy, a clone or
    a view of the results reads the records beside it, never those of the current directory.
    A manifest that stores ``runs_dir_relative`` (the records' folder relative to its own,
    e.g. ``.`` or ``../table2``) is followed exactly: a renamed or moved results folder
    still finds its own records; the name rule above serves older manifests.
    """
    out_dir = Path(out_dir)
    relative = manifest.get("runs_dir_relative")
    if relative:              # written with the manifest: exact, however the folder moved
        return Path(os.path.normpath(out_dir / relative))
    stored = manifest.get("runs_dir")
    if not stored:
        return out_dir
    here = Path(os.path.abspath(out_dir))        # absolute, symlinks kept: "." has a name
    name = Path(str(stored)).name
    if name.startswith("runs-of-"):
        return out_dir / name
    if name == here.name or name in ("", ".", ".."):
        return out_dir
    return here.parent / name

"""Targets: a paper's table or figure = its config file + the renderer the config names.

Every ``configs/<paper>/<artifact>.yaml`` is the target ``paper/artifact`` (a plugin adds its
own folder with :func:`register_config_folder`). ``mlkit reproduce mssboost/fig4`` loads the
config, runs it with :func:`mlkit.runner.run` (or, for a config with ``runs_of:``, the
runs of that other artifact of the paper, so a figure drawn from a table's runs trains
nothing twice), hands the records to the renderer the config names (``render:``, default
the generic ``metric-table``), and writes ``manifest.json`` and ``summary.json`` (the
target's headline figures, read by ``mlkit regress``, ``mlkit verify`` and ``mlkit report``)
into ``results/<paper>/<artifact>/``; a full target whose runs are all recorded then folds
its runs' per-run record files into their folder's table (:func:`mlkit.store.fold_runs`).
Renderers never train: every fit is a run.

A paper package registers its renderers::

    @register_renderer("mypaper/table1", options=Table1Options)
    def render_table1(result, out_dir, spec):
        ...
        return Rendered(text, figures, files)

``result`` holds the runs (:class:`mlkit.runner.RunResult`; ``result.spec`` is the config
they were run from), ``spec`` is the target's own config (its ``reported:`` numbers, and
``spec.options``, its ``report:`` block validated by ``options``, a pydantic model).
"""

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ._errors import MlkitError, UnknownNameError, did_you_mean
from ._io import as_json, check_writable, read_json, recording_writes, write_json
from ._paths import results_root
from .config import configs_dir, load_spec, read_target_header
from .runner import load_records, manifest_records, planned_runs, run
from .manifest import build_manifest, invocation_keys, runs_dir_of
from .registry import RENDERERS, TARGETS, after_load
from .store import fold_runs
from .report.comparison import render_with_comparison

__all__ = ["Target", "Rendered", "Renderer", "register_renderer", "register_config_folder",
           "resolve_target", "results_root", "results_dir", "reproduce", "execute",
           "saved_results", "target_spec", "split_overrides"]

logger = logging.getLogger(__name__)


@dataclass
class Rendered:
    """What a renderer returns: the text to print (its table, paper vs ours), its headline
    figures as {name: number}, the files it wrote and its comparison frame (None: the
    frame of the tables it wrote; :mod:`mlkit.report.comparison`)."""

    text: str
    figures: dict = field(default_factory=dict)
    files: list = field(default_factory=list)
    comparison: object = None


@dataclass(frozen=True)
class Renderer:
    """A registered renderer: ``fn(result, out_dir, spec) -> Rendered`` and the pydantic
    model of its ``report:`` options (None: it takes none)."""

    name: str
    fn: Callable
    options: Optional[type] = None


def register_renderer(name, *, options=None, summary=""):
    """Decorator: register ``fn(result, out_dir, spec) -> Rendered`` as renderer ``name``
    (by convention ``paper/artifact`` for a paper's own renderer)."""

    def deco(fn):
        RENDERERS.register(name, Renderer(name, fn, options), summary=summary or (
            (fn.__doc__ or "").strip().split("\n")[0]))
        return fn

    return deco


@dataclass(frozen=True)
class Target:
    """``paper/artifact``: a config file and what its header says. ``folder`` is the config
    root it came from (None: the shipped ``configs/``, looked up when used, so
    ``MLKIT_CONFIGS`` can point elsewhere)."""

    paper: str
    artifact: str
    folder: Optional[Path] = None
    summary: str = ""
    render: str = "metric-table"
    runs_of: str = ""
    fast: bool = False

    @property
    def name(self):
        return f"{self.paper}/{self.artifact}"

    @property
    def config_path(self):
        return (self.folder or configs_dir()) / self.paper / f"{self.artifact}.yaml"

    @property
    def config_artifact(self):
        """The artifact whose runs this target renders (itself unless ``runs_of``)."""
        return self.runs_of or self.artifact

    @property
    def runs_config_path(self):
        return self.config_path.parent / f"{self.config_artifact}.yaml"


_FOLDERS = []


def register_config_folder(folder):
    """Make every ``<folder>/<paper>/<artifact>.yaml`` a target (a plugin's configs)."""
    folder = Path(folder)
    if folder not in _FOLDERS:
        _FOLDERS.append(folder)
        _discover(folder, folder)


def _discover(folder, recorded):
    for path in sorted(Path(folder).glob("*/*.yaml")):
        head = read_target_header(path)
        paper, artifact = path.parent.name, path.stem
        if paper.startswith(".") or artifact.startswith("."):
            continue
        name = f"{paper}/{artifact}"
        if name in TARGETS._entries:
            continue
        title = head.get("title") or ""
        TARGETS.register(name, Target(paper, artifact, recorded, str(title),
                                      head.get("render") or "metric-table",
                                      head.get("runs_of") or "", bool(head.get("fast"))),
                         summary=str(title))


@after_load
def _discover_shipped_configs():
    try:
        _discover(configs_dir(), None)
    except MlkitError as exc:       # installed without the clone's configs folder
        logger.debug("no shipped configs: %s", exc)


def resolve_target(name):
    """``paper/artifact``, or a bare artifact name when exactly one paper has it."""
    names = TARGETS.names()
    if name in names:
        return TARGETS.get(name)
    matches = [n for n in names if n.split("/", 1)[1] == name]
    if len(matches) == 1:
        return TARGETS.get(matches[0])
    if len(matches) > 1:
        raise MlkitError(f"target {name!r} is ambiguous: {', '.join(matches)}; "
                         "name it as paper/artifact")
    bare = sorted({n.split("/", 1)[1] for n in names})
    raise UnknownNameError(f"unknown target {name!r}{did_you_mean(name, names + bare)}; "
                           f"known targets: {', '.join(names)}")


def results_dir(target, *, quick=False, out=None, runs=False):
    """Where a target's outputs go (``runs=True``: where its run records live, which is the
    folder of the artifact it renders the runs of)."""
    artifact = target.config_artifact if runs else target.artifact
    if out is not None:
        return Path(out) / ("runs-of-" + artifact if runs and target.runs_of else "")
    return results_root() / target.paper / (artifact + ("-quick" if quick else ""))


#: the saved results read since the last :func:`reads_of_saved_results` (for the claims:
#: a verdict on results that are no longer current is not given)
_READS = []


def saved_results(target):
    """(records, out_dir, quick) of the newest saved results of ``target``: the full run when
    present, else the ``--quick`` one; (None, None, None) when neither exists."""
    out, quick = saved_results_dir(target)
    if out is None:
        return None, None, None
    _READS.append((target, out, quick))
    return manifest_records(out), out, quick


def saved_results_dir(target):
    """(out_dir, quick) of the results :func:`saved_results` reads, or (None, None)."""
    for quick in (False, True):
        out = results_dir(target, quick=quick)
        if (out / "summary.json").is_file() and (out / "manifest.json").is_file():
            return out, quick
    return None, None


def reads_of_saved_results():
    """[(target, out_dir, quick)] read by :func:`saved_results` since the last call."""
    reads = list(_READS)
    _READS.clear()
    return reads


def outdated_runs(target, manifest, quick, out_dir=None, include=None):
    """(runs of the saved results still planned, runs planned now) when the saved results are
    not exactly the runs the target's config and methods make now (a config or numerics
    revision changed since, or the results were made by another config, e.g. ``mlkit train
    --out`` with a part of it); None when they are. A dataset skipped because its files were
    absent (``when_present``) is not planned.

    The manifest names its runs by a digest of their keys
    (:func:`mlkit.manifest.invocation_keys`): when it is not the digest of the runs planned
    now, the saved runs are found among the records of its runs' folder (the manifest is in
    ``out_dir``, default the target's results folder; ``include``: read only the files it
    accepts); when they are no longer all there, the first number counts the records there
    that are planned now (at most as many as the manifest's runs)."""
    run_spec = target_spec(target, quick=quick)[1]
    ran = set(manifest.get("datasets", {}))
    present = {d.display for d in run_spec.datasets if d.display in ran or not d.when_present}
    planned = {key for key, _ in planned_runs(run_spec, "unused", datasets=present)}
    saved = invocation_keys(manifest, planned)
    if saved is None:
        out_dir = results_dir(target, quick=quick) if out_dir is None else Path(out_dir)
        stored = {r.get("key") for r in load_records(runs_dir_of(manifest, out_dir),
                                                     include=include)}
        saved = invocation_keys(manifest, stored, stored & planned)
        if saved is None:
            return min(len(stored & planned), manifest.get("runs_count", 0)), len(planned)
    if saved == planned:
        return None
    return len(saved & planned), len(planned)


def split_overrides(overrides):
    """(--set items for the target's own config: ``report.*`` / ``reported.*``, the rest for
    the config of its runs)."""
    own = tuple(o for o in overrides if o.split("=", 1)[0].split(".")[0] in ("report",
                                                                             "reported"))
    return own, tuple(o for o in overrides if o not in own)


def target_spec(target, *, quick=False, overrides=()):
    """(the target's own spec, the spec of the runs it renders)."""
    own, rest = split_overrides(overrides) if target.runs_of else (overrides, ())
    spec = load_spec(target.config_path, quick=quick, overrides=own)
    expected = f"{target.paper}/{target.artifact}"
    if spec.target != expected:
        raise MlkitError(f"{target.config_path}: names {spec.target}, expected {expected}")
    if not spec.runs_of:
        return spec, spec
    if spec.runs_of != target.runs_of:
        raise MlkitError(f"{target.config_path}: runs_of changed while loading")
    runs_path = target.runs_config_path
    if not runs_path.is_file():
        raise MlkitError(f"{target.config_path}: runs_of: {spec.runs_of} names no config "
                         f"{runs_path}")
    run_spec = load_spec(runs_path, quick=quick, overrides=rest)
    if run_spec.runs_of:
        raise MlkitError(f"{target.config_path}: runs_of: {spec.runs_of}, which itself renders "
                         "the runs of another artifact; name that one")
    return spec, run_spec


def check_part_names(target_name, run_spec, datasets=None, methods=None):
    """Raise :class:`UnknownNameError` (with the closest name) for a ``--datasets`` or
    ``--methods`` name that is not one of ``run_spec``'s datasets or methods (as its table
    names them)."""
    for option, names, known in (
            ("datasets", datasets, [d.display for d in run_spec.datasets]),
            ("methods", methods, [m.display for m in run_spec.methods])):
        for name in names or ():
            if name not in known:
                raise UnknownNameError(f"--{option}: {target_name} has no {option[:-1]} "
                                       f"{name!r}{did_you_mean(name, known)}; its {option}: "
                                       f"{', '.join(known)}")


def part_filter(datasets=None, methods=None):
    """``compute_only`` of :func:`mlkit.runner.run` for ``--datasets`` / ``--methods``
    (None when neither is given)."""
    if not datasets and not methods:
        return None
    ds_set, m_set = set(datasets or ()), set(methods or ())
    return lambda ds, method, split: ((not ds_set or ds in ds_set)
                                      and (not m_set or method in m_set))


def execute(spec, run_spec, out_dir, runs_dir, *, quick=False, jobs=1, force=False,
            backend=None, scheduler=None, connect_timeout=10.0, progress=False, command=None,
            partial=False, datasets=None, methods=None):
    """Run ``run_spec`` (records in ``runs_dir``), render with ``spec``'s renderer into
    ``out_dir`` and write its summary and manifest; return (Rendered, RunResult). What
    ``mlkit reproduce`` and ``mlkit train`` both do. ``datasets`` / ``methods``: compute
    only the runs of these datasets / methods (display names); the rest is read from its
    records. When every run of ``run_spec`` is recorded, the per-run record files of
    ``runs_dir`` are then folded into its table (:func:`mlkit.store.fold_runs`): the form
    full results are committed in. A run still missing some keeps them, as a run in
    progress does, and so do ``--quick`` results (never committed; ``mlkit fold --quick``
    folds them)."""
    renderer = RENDERERS.get(spec.render)
    check_part_names(spec.target, run_spec, datasets, methods)
    for folder in (runs_dir, out_dir):      # said now, not after the runs
        check_writable(folder)
    compute_only = part_filter(datasets, methods)
    result = run(run_spec, runs_dir, jobs=jobs, force=force, backend=backend,
                 scheduler=scheduler, connect_timeout=connect_timeout, progress=progress,
                 compute=not partial, compute_only=compute_only)
    result.quick = quick
    if partial and not result.records:
        raise MlkitError(f"{spec.target}: no run recorded yet in {runs_dir}: nothing to render "
                         "(run it without --partial)")
    with recording_writes() as changed:
        rendered = render_with_comparison(renderer.fn, result, Path(out_dir), spec)
        write_json(Path(out_dir) / "summary.json", {
            "target": spec.target, "quick": quick, "partial": bool(result.missing),
            "provenance": result.provenance, "figures": rendered.figures})
    try:
        previous = read_json(Path(out_dir) / "manifest.json")
    except (OSError, ValueError):
        previous = None
    manifest = build_manifest(
        run_spec, result, quick=quick, command=command, runs_dir=runs_dir, out_dir=out_dir,
        previous=previous, extra={"target_config": spec.resolved() if spec is not run_spec else None,
               "files": sorted(str(Path(f).name) for f in rendered.files),
               "runs_missing": result.missing})
    # unchanged outputs of the same runs: the manifest stays as it is (its render too)
    if changed or previous is None or _but_render(as_json(manifest)) != _but_render(previous):
        write_json(Path(out_dir) / "manifest.json", manifest)
    if not (result.missing or quick):
        fold_runs(runs_dir)
    return rendered, result


def _but_render(manifest):
    return {k: v for k, v in manifest.items() if k != "rendered"}


def reproduce(target, *, quick=False, jobs=1, force=False, out=None, backend=None,
              scheduler=None, connect_timeout=10.0, progress=False, overrides=(),
              command=None, partial=False, datasets=None, methods=None):
    """Run and render one target; return (Rendered, out_dir, RunResult). ``partial``:
    compute nothing, render the runs recorded so far (they say so). ``datasets`` /
    ``methods``: compute only these datasets' / methods' runs, render with every run
    recorded (partial while others are missing)."""
    spec, run_spec = target_spec(target, quick=quick, overrides=overrides)
    out_dir = results_dir(target, quick=quick, out=out)
    runs_dir = results_dir(target, quick=quick, out=out, runs=True)
    rendered, result = execute(spec, run_spec, out_dir, runs_dir, quick=quick, jobs=jobs,
                               force=force, backend=backend, scheduler=scheduler,
                               connect_timeout=connect_timeout, progress=progress,
                               command=command, partial=partial, datasets=datasets,
                               methods=methods)
    return rendered, out_dir, result


def read_summary(out_dir):
    return read_json(Path(out_dir) / "summary.json")

"""Targets: a paper's table or figure = its config file + the function that renders it.

``mlkit reproduce mssboost/fig4`` loads ``configs/mssboost/fig4.yaml``, runs it with
:func:`mlkit.experiment.run`, hands the records to the target's ``render`` function, and
writes ``manifest.json`` and ``summary.json`` (the target's headline figures, used by
``mlkit regress`` and ``mlkit verify``) into ``results/<paper>/<artifact>/``.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ._errors import MlkitError, UnknownNameError, did_you_mean
from ._io import read_json, write_json
from .config import configs_dir, load_spec
from .experiment import manifest_records, run
from .manifest import build_manifest
from .registry import TARGETS

__all__ = ["Target", "Rendered", "register_target", "resolve_target", "results_root",
           "results_dir", "reproduce", "saved_results"]


@dataclass
class Rendered:
    """What a target's render function returns: the text to print (its table, paper vs
    ours), its headline figures as {name: number}, and the files it wrote."""

    text: str
    figures: dict = field(default_factory=dict)
    files: list = field(default_factory=list)


@dataclass(frozen=True)
class Target:
    paper: str
    artifact: str
    render: Callable
    summary: str = ""
    fast: bool = False          # quick form cheap enough for CI's regression run
    runs_of: str = ""           # another artifact whose config and runs this one renders

    @property
    def name(self):
        return f"{self.paper}/{self.artifact}"

    @property
    def config_artifact(self):
        return self.runs_of or self.artifact

    @property
    def config_path(self):
        return configs_dir() / self.paper / f"{self.config_artifact}.yaml"


def register_target(paper, artifact, render, summary="", *, fast=False, runs_of=""):
    """Register ``paper/artifact``; its config is ``configs/<paper>/<artifact>.yaml``, or
    that of ``runs_of`` when the target renders another artifact's runs (e.g. a figure drawn
    from the runs of a table): then both share one ``runs/`` folder and nothing is computed
    twice."""
    t = Target(paper, artifact, render, summary, fast, runs_of)
    TARGETS.register(t.name, t, summary=summary)
    return t


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


def results_root():
    """``$MLKIT_RESULTS`` or ``./results``."""
    return Path(os.environ.get("MLKIT_RESULTS") or "results")


def results_dir(target, *, quick=False, out=None, runs=False):
    """Where a target's outputs go (``runs=True``: where its run records live, which is the
    folder of the artifact it renders the runs of)."""
    artifact = target.config_artifact if runs else target.artifact
    if out is not None:
        return Path(out) / ("runs-of-" + artifact if runs and target.runs_of else "")
    return results_root() / target.paper / (artifact + ("-quick" if quick else ""))


def saved_results(target):
    """(records, out_dir, quick) of the newest saved results of ``target``: the full run when
    present, else the ``--quick`` one; (None, None, None) when neither exists."""
    for quick in (False, True):
        out = results_dir(target, quick=quick)
        if (out / "summary.json").is_file() and (out / "manifest.json").is_file():
            return manifest_records(out), out, quick
    return None, None, None


def reproduce(target, *, quick=False, jobs=1, force=False, out=None, backend=None,
              scheduler=None, progress=False, overrides=(), command=None):
    """Run and render one target; return (Rendered, out_dir, RunResult)."""
    spec = load_spec(target.config_path, quick=quick, overrides=overrides)
    expected = f"{target.paper}/{target.config_artifact}"
    if spec.target != expected:
        raise MlkitError(f"{target.config_path}: names {spec.target}, expected {expected}")
    out_dir = results_dir(target, quick=quick, out=out)
    runs_dir = results_dir(target, quick=quick, out=out, runs=True)
    result = run(spec, runs_dir, jobs=jobs, force=force, backend=backend, scheduler=scheduler,
                 progress=progress)
    rendered = target.render(result, out_dir)
    write_json(out_dir / "summary.json", {"target": target.name, "quick": quick,
                                          "provenance": result.provenance,
                                          "figures": rendered.figures})
    write_json(out_dir / "manifest.json",
               build_manifest(spec, result, quick=quick, command=command, runs_dir=runs_dir,
                              extra={"files": sorted(str(Path(f).name) for f in rendered.files)}))
    return rendered, out_dir, result


def read_summary(out_dir):
    return read_json(Path(out_dir) / "summary.json")

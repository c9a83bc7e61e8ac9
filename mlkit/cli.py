"""The ``mlkit`` command line: thin wrappers that parse, check names, call, and print.

Every user error (a bad config, an unknown name, a corrupt file) is printed as one line on
stderr and exits with status 2; a failed regression or claim exits with status 1.
"""

import logging
import sys
from pathlib import Path

import click

from . import __version__
from ._errors import MlkitError

logger = logging.getLogger("mlkit")

KINDS = ("methods", "datasets", "targets", "formats", "metrics")


class _Group(click.Group):
    """A click group that turns MlkitError into one line on stderr and exit status 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except MlkitError as exc:
            click.echo(f"mlkit: error: {exc}", err=True)
            ctx.exit(2)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx is not None else "mlkit"
            click.echo(f"mlkit: error: {exc.format_message()} (see `{where} --help`)", err=True)
            ctx.exit(2)


def _progress(ctx):
    """Progress of the runs on stderr unless --quiet: a bar on a terminal, else a line at a
    steady interval (mlkit._progress)."""
    return ctx.obj.get("verbosity", 0) >= 0


def _say_root(ctx):
    """One line on stderr naming the results root a reading command reads, and why."""
    from ._paths import results_root_origin

    root, origin = results_root_origin()
    if ctx.obj.get("verbosity", 0) >= 0:
        click.echo(f"mlkit: reading results from {root} ({origin})", err=True)
    return root


def _say_warnings(ctx, result):
    """The one line summing up the estimators' warnings of the runs computed (on stderr)."""
    if result.warnings and ctx.obj.get("verbosity", 0) >= 0:
        click.echo(f"mlkit: warning: {result.warnings}", err=True)


def _say(ctx, text=""):
    if ctx.obj.get("verbosity", 0) >= 0:
        click.echo(text)


#: a paragraph of a renderer's text longer than this (characters) is a caption the terminal
#: shows in short; the whole caption, with every dataset's source and the notes, is in the
#: target's table.md
TERMINAL_CAPTION = 300


def _terminal_text(text, out_dir, result):
    """A renderer's text as a reproduction prints it: its tables whole; a paragraph longer
    than :data:`TERMINAL_CAPTION` characters (the caption) as its first sentence, the kind
    of each dataset the runs read (from ``result``), the --quick note in short, and where
    the whole caption is."""
    import re

    where = Path(out_dir) / "table.md"
    where = str(where) if where.is_file() else "the target's table.md"
    kinds = {}
    for data in result.datasets.values():
        match = re.match(r"\s*(.+?) \((real data|synthetic data)\b", str(data.provenance))
        name = re.sub(r"\[.*?\]", "", match.group(1)) if match else None   # set[classes ...]
        if match and name not in kinds.setdefault(match.group(2), []):
            kinds[match.group(2)].append(name)
    named = "; ".join(f"{kind}: {', '.join(names[:8])}"
                      + (f" and {len(names) - 8} more" if len(names) > 8 else "")
                      for kind, names in kinds.items())
    blocks = []
    for block in text.split("\n\n"):
        if len(block) <= TERMINAL_CAPTION or block.lstrip().startswith("|"):
            blocks.append(block)
            continue
        first = re.match(r"(.{20,}?[.;])\s+(?=[A-Z\[(])", block, flags=re.S)
        head = first.group(1) if first and len(first.group(1)) <= 200 else \
            block[:200].rsplit(None, 1)[0].rstrip(",;:([ ") + " …"
        short = head + (f" Data: {named}." if named else "")
        if result.quick:
            short += " [--quick settings: indicative only]"
        blocks.append(f"{short} (Whole caption, with each dataset's source and the notes: "
                      f"{where})")
    return "\n\n".join(blocks)


_jobs = click.option("--jobs", "-j", default=1, show_default=True, type=int,
                     help="Runs in parallel (joblib n_jobs; -1 = all cores): N uses N cores, "
                          "each run with one BLAS/OpenMP thread (Dask: start workers with --nthreads 1, "
                          "as BLAS limits are per process). Never changes the numbers.")
_out = click.option("--out", type=click.Path(file_okay=False, path_type=Path),
                    help="Output folder (default: results/<paper>/<artifact>[-quick]).")
_force = click.option("--force", is_flag=True, help="Recompute runs that already have a record.")
_backend = click.option("--backend", type=str, default=None,
                        help="joblib backend for the runs: loky (default), threading, dask, ...")
_scheduler = click.option("--scheduler", type=str, default=None,
                          help="Dask scheduler address (implies --backend dask).")
_connect_timeout = click.option("--connect-timeout", type=click.FloatRange(min=0.1),
                                default=10.0, show_default=True,
                                help="Seconds to wait for the Dask --scheduler.")
_set = click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
                    help="Override a config key, e.g. methods.MSSBoost.params.rd=0.2 "
                         "(repeatable).")


def _use_results(ctx, param, results):
    """Make ``results`` the results root for the rest of the command (``--results DIR``,
    given before the subcommand or after it; after wins)."""
    if results is None:
        return None
    from ._paths import using_results

    if results.exists() and not results.is_dir():
        raise MlkitError(f"--results {results}: is a file; name a folder (it is created "
                         "if missing)")
    ctx.with_resource(using_results(results.absolute()))
    return results


_RESULTS_HELP = ("The results root every command reads and writes (default: $MLKIT_RESULTS; "
                 "else results/ of the mlkit clone you are in or mlkit runs from; else "
                 "the user data folder, e.g. ~/.local/share/mlkit/results).")
#: ``--results DIR`` after a subcommand too (``mlkit reproduce mssboost/fig4 --results DIR``)
_results = click.option("--results", type=click.Path(path_type=Path), default=None,
                        metavar="DIR", expose_value=False, callback=_use_results,
                        help="The results root to read and write (as `mlkit --results DIR`).")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="mlkit")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and where results went.")
@click.option("--results", "results", type=click.Path(path_type=Path), default=None,
              metavar="DIR", help=_RESULTS_HELP)
@click.pass_context
def cli(ctx, verbose, quiet, results):
    """Reproduce the tables and figures of four learning papers from YAML configs.

    \b
    mlkit list                         what is implemented
    mlkit reproduce mssboost/fig4      run a paper's figure or table (paper vs ours)
    mlkit train --config FILE          run any experiment config
    mlkit verify mssboost              check the paper's claims on saved results
    mlkit report                       REPRODUCTION.md: every target and claim, paper vs ours

    \b
    Exit status: 0 success; 1 a result is not what it should be (a claim that does not
    PASS, a regression out of tolerance, a report out of date, a run that failed inside
    its method); 2 a user error (bad option, config, name, data or results folder: one
    `mlkit: error:` line); 130/143 interrupted (the runs finished so far are saved).
    """
    ctx.ensure_object(dict)
    _use_results(ctx, None, results)
    ctx.obj["verbosity"] = -1 if quiet else verbose
    level = logging.WARNING - 10 * min(verbose, 2) if not quiet else logging.ERROR
    logging.basicConfig(level=level, format="mlkit: %(levelname)s: %(message)s")


# -- list ---------------------------------------------------------------------------------
@cli.command("list")
@click.argument("kind", required=False, type=click.Choice(KINDS))
def list_cmd(kind):
    """List what is implemented: methods, datasets, targets, formats, metrics."""
    from ._listing import listing

    tables = listing()
    for name in [kind] if kind else KINDS:
        entries = tables[name]
        click.echo(f"{name}:")
        if not entries:
            click.echo("  (none)")
        width = max((len(e[0]) for e in entries), default=0)
        for entry_name, summary, meta in entries:
            extra = ""
            if name == "datasets":
                extra = " [synthetic]" if meta.get("synthetic") else " [real]"
            click.echo(f"  {entry_name:<{width}}  {summary}{extra}")


# -- train / reproduce -------------------------------------------------------------------
@cli.command()
@click.option("--config", "config_path", required=True, type=Path,
              help="Experiment config (YAML).")
@_set
@click.option("--seed", type=int, default=None, help="Replace protocol.seed.")
@click.option("--quick", is_flag=True, help="Apply the config's quick: block.")
@_jobs
@_out
@_force
@_backend
@_scheduler
@_connect_timeout
@_results
@click.pass_context
def train(ctx, config_path, overrides, seed, quick, jobs, out, force, backend, scheduler,
          connect_timeout):
    """Run every method of a config on its datasets and protocol; write its table (the
    config's renderer, the generic metric table by default) and manifest."""
    from .config import load_spec
    from .targets import execute, results_root

    spec = load_spec(config_path, overrides=overrides, quick=quick, seed=seed)
    if spec.runs_of:
        raise MlkitError(f"{config_path}: renders the runs of {spec.runs_of}; use `mlkit "
                         f"reproduce {spec.paper}/{spec.artifact}`")
    if not spec.methods:
        raise MlkitError(f"{config_path}: no methods to train")
    # not the folder of `reproduce`: a train with other settings must not mix into a target
    out = out or results_root() / spec.paper / (spec.artifact + "-train"
                                                  + ("-quick" if quick else ""))
    rendered, result = _guarded(ctx, out, lambda: execute(
        spec, spec, out, out, quick=quick, jobs=jobs, force=force, backend=backend,
        scheduler=scheduler, connect_timeout=connect_timeout, progress=_progress(ctx),
        command=" ".join(sys.argv)))
    _say(ctx, _terminal_text(rendered.text, out, result))
    _say(ctx, f"{result.computed} runs computed, {result.reused} reused, "
              f"{result.wall_time:.1f} s")
    _say_warnings(ctx, result)
    click.echo(f"results: {out}")


@cli.command()
@click.argument("targets", nargs=-1)
@click.option("--all", "all_targets", is_flag=True, help="Every registered target.")
@click.option("--quick", is_flag=True, help="The smaller settings of each config's quick: block.")
@click.option("--partial", is_flag=True,
              help="Compute nothing: render a long run's results so far from the runs it has "
                   "recorded (the outputs say how many of the protocol's runs they hold; "
                   "claims give no verdict on them).")
@click.option("--datasets", "datasets", metavar="NAME[,NAME...]",
              help="Compute only the runs of these datasets (as the target's table names "
                   "them, e.g. tst1,tst2); the rest of the target is read from its records "
                   "and the outputs are partial while some are missing, as with --partial.")
@click.option("--methods", "methods", metavar="NAME[,NAME...]",
              help="Compute only the runs of these methods (as the target's table names "
                   "them, e.g. 'MI-Kernel,RS (10)'); with --datasets, only their runs on those "
                   "datasets. As with --datasets, the rest is read from its records.")
@click.option("--status", is_flag=True,
              help="Compute nothing: how far a long run has got, per dataset and method (runs "
                   "recorded of those planned, their mean fit and CPU time, and the fit time "
                   "left, estimated from them).")
@_set
@_jobs
@_force
@_out
@_backend
@_scheduler
@_connect_timeout
@_results
@click.pass_context
def reproduce(ctx, targets, all_targets, quick, partial, datasets, methods, status, overrides,
              jobs, force, out, backend, scheduler, connect_timeout):
    """Reproduce paper tables/figures: TARGET is paper/artifact (mssboost/fig4) or a bare
    artifact name when only one paper has it."""
    from .registry import TARGETS
    from .targets import reproduce as run_target
    from .targets import resolve_target, results_dir

    if all_targets and targets:
        raise MlkitError(f"--all and targets ({' '.join(targets)}) together: give either the "
                         "targets or --all")
    if all_targets:
        targets = TARGETS.names()
    if not targets:
        raise MlkitError("name at least one target (see `mlkit list targets`) or use --all")
    resolved = [resolve_target(t) for t in targets]
    names = _name_list(datasets)
    method_names = _name_list(methods)
    if out is not None and len(resolved) > 1:
        raise MlkitError("--out takes one target; leave it out to use results/<paper>/...")
    if status:
        for target in resolved:
            _print_status(target, quick=quick, out=out, overrides=overrides, datasets=names,
                          methods=method_names, jobs=jobs)
        return
    forced = set()      # --force recomputes each shared runs folder once (table2, figs 5-8)
    for target in resolved:
        runs_dir = results_dir(target, quick=quick, out=out, runs=True)
        rendered, out_dir, result = _guarded(ctx, runs_dir, lambda: run_target(
            target, quick=quick, jobs=jobs, force=force and runs_dir not in forced, out=out,
            backend=backend, scheduler=scheduler, connect_timeout=connect_timeout,
            progress=_progress(ctx), overrides=overrides, command=" ".join(sys.argv),
            partial=partial, datasets=names, methods=method_names))
        forced.add(runs_dir)
        _say(ctx, f"== {target.name}{' (quick)' if quick else ''}")
        _say(ctx, _terminal_text(rendered.text, out_dir, result))
        _say(ctx, f"{result.computed} runs computed, {result.reused} reused, "
                  + (f"{result.missing} not recorded yet (partial), " if result.missing else "")
                  + f"{result.wall_time:.1f} s")
        _say_warnings(ctx, result)
        click.echo(f"results: {out_dir}")


def _name_list(option):
    """``a,b`` -> ['a', 'b']; None when the option is not given."""
    return [n.strip() for n in option.split(",") if n.strip()] if option else None


def _print_status(target, *, quick, out, overrides, datasets, methods, jobs):
    """``mlkit reproduce --status``: a table of :func:`mlkit.runner.run_status`."""
    from .runner import run_status
    from .report.reproduction_page import format_seconds
    from .targets import check_part_names, results_dir, target_spec

    run_spec = target_spec(target, quick=quick, overrides=overrides)[1]
    check_part_names(target.name, run_spec, datasets, methods)
    rows = run_status(run_spec, results_dir(target, quick=quick, out=out, runs=True),
                      datasets=datasets, methods=methods)
    # a dataset used only when its files are there (private in the paper) with no run
    # recorded: not pending work a resume could do, so not counted
    optional = {d.display: d.name for d in run_spec.datasets if d.when_present}
    idle = {r["dataset"] for r in rows if r["dataset"] in optional} - {
        r["dataset"] for r in rows if r["dataset"] in optional and r["recorded"]}
    rows = [r for r in rows if r["dataset"] not in idle]
    done, planned = sum(r["recorded"] for r in rows), sum(r["planned"] for r in rows)
    unknown = [r for r in rows if r["left_s"] is None]
    left = sum(r["left_s"] for r in rows if r["left_s"] is not None)
    header = ["dataset", "method", "recorded", "mean fit", "mean CPU", "fit time left"]
    table = [[r["dataset"], r["method"], f"{r['recorded']}/{r['planned']}",
              format_seconds(r["mean_fit_s"]), format_seconds(r["mean_cpu_s"]),
              "?" if r["left_s"] is None else format_seconds(r["left_s"])] for r in rows]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *table)]
    click.echo(f"== {target.name}{' (quick)' if quick else ''}: {done:,} of {planned:,} runs "
               "recorded")
    for line in [header, *table]:
        click.echo("  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip())
    if idle:
        names = sorted({optional[d] for d in idle})
        click.echo(f"not counted: {', '.join(sorted(idle))}, no run recorded; their data "
                   f"({', '.join(names)}) are private in the paper and run only when their "
                   "files are in the data home (when_present; see `mlkit data info "
                   f"{names[0]}`)")
    if done < planned:
        jobs_n = max(int(jobs), 1)
        if left > 0:
            estimate = f"at least {format_seconds(left)}"
            if jobs_n > 1:
                estimate += (f" (about {format_seconds(left / jobs_n)} of wall time at "
                             f"--jobs {jobs_n})")
            if unknown:
                estimate += (f"; unknown for {len(unknown)} dataset/method pairs with no "
                             "run recorded yet")
        else:
            estimate = f"unknown (no run recorded yet for {len(unknown)} dataset/method pairs)"
        click.echo(f"fit time left: {estimate}; resume with `mlkit reproduce {target.name} "
                   "--jobs N`")


def _guarded(ctx, log_dir, fn):
    """``fn()``; a run that fails inside its method (a bug, not a user error) becomes one
    line naming the run and the log file holding its traceback, and exit status 1."""
    from ._errors import RunFailed
    from ._io import write_text

    try:
        return fn()
    except RunFailed as exc:
        log = Path(log_dir) / "errors.log"
        write_text(log, f"{exc}\n\n{exc.traceback_text}")
        click.echo(f"mlkit: run failed: {exc} (traceback in {log}; the runs finished "
                   "before it are saved, a rerun computes only the rest)", err=True)
        ctx.exit(1)


# -- fold ---------------------------------------------------------------------------------
@cli.command("fold")
@click.argument("sources", nargs=-1)
@click.option("--all", "all_targets", is_flag=True, help="Every registered target.")
@click.option("--quick", is_flag=True, help="The targets' --quick results.")
@_results
def fold_cmd(sources, all_targets, quick):
    """Fold the per-run record files of targets (or results folders) into their table.

    A target's runs are kept one file each while they are going and folded into the table
    runs.csv.gz beside its manifest when a render has them all (`mlkit reproduce`); this
    folds them now, e.g. a long run's so far. SOURCE is a target (paper/artifact) or a
    results folder.
    """
    from .registry import TARGETS
    from .store import TABLE_NAME, fold_runs
    from .targets import resolve_target, results_dir

    if all_targets and sources:
        raise MlkitError("--all and sources together: give either the targets or folders, "
                         "or --all")
    if all_targets:
        sources = TARGETS.names()
    if not sources:
        raise MlkitError("name at least one target or results folder, or use --all")
    folders = []
    for source in sources:
        path = Path(source)
        folder = path if path.is_dir() else results_dir(resolve_target(source), quick=quick,
                                                        runs=True)
        if folder not in folders:
            folders.append(folder)
    for folder in folders:
        if not folder.is_dir():
            continue
        n = fold_runs(folder)
        if n:
            click.echo(f"folded {n} run record files into {folder / TABLE_NAME}")


# -- plot -----------------------------------------------------------------------------------
@cli.group()
def plot():
    """Figures from saved results (no retraining)."""


@plot.command("curves")
@click.argument("source")
@click.option("--metric", default=None, help="Metric to plot (default: every curve saved).")
@_out
@_results
@click.pass_context
def plot_curves_cmd(ctx, source, metric, out):
    """Learning curves from a results folder or a target's saved results (a target's are read
    from the results root, named on stderr; `mlkit --help` for --results): one figure per
    metric (curves_<metric>.png/.pdf, titled by the target), its caption (the data's
    provenance) in curves_<metric>.md beside it, and the paper's value of the metric as a
    hollow "paper" marker at the last stage where the target's config reports one. Exit
    status 2 when there is nothing to plot."""
    from ._io import read_json
    from .runner import load_records, manifest_records
    from .manifest import runs_dir_of
    from .report.style import data_kind
    from .report.summaries import metric_name, plot_curves
    from .store import unreadable_records
    from .targets import resolve_target, saved_results, saved_results_dir

    path = Path(source)
    target = None
    if path.is_dir():
        out_dir = path
    else:
        out_dir = saved_results_dir(resolve_target(source))[0]
        if out_dir is None:
            raise MlkitError(f"no saved results for {source}; run `mlkit reproduce {source}` "
                             "first")
    runs = runs_dir_of(read_json(out_dir / "manifest.json"), out_dir) \
        if (out_dir / "manifest.json").is_file() else out_dir
    damaged = unreadable_records(runs)
    if damaged:
        bad, why = damaged[0]
        more = f" (and {len(damaged) - 1} more)" if len(damaged) > 1 else ""
        raise MlkitError(f"{bad}: not a readable run record ({why}){more}; a plot would "
                         "miss its run: delete it and rerun the target's `mlkit reproduce` "
                         "to recompute it")
    if path.is_dir():
        records = manifest_records(path) if (path / "manifest.json").is_file() \
            else load_records(path)
    else:
        target = resolve_target(source)
        records, out_dir, _ = saved_results(target)
        if records is None:
            raise MlkitError(f"no saved results for {source}; run `mlkit reproduce {source}` "
                             "first")
        _say_root(ctx)
    curved = [r for r in records if r.get("curves")]
    if not curved:
        raise MlkitError(f"{out_dir}: no saved learning curves (runs need `curves: true`)")
    metrics = [metric] if metric else sorted({m for r in curved for m in r["curves"]})
    provenance, kinds, manifest = "", set(), {}
    if (out_dir / "manifest.json").is_file():
        manifest = read_json(out_dir / "manifest.json")
        datasets = manifest["datasets"].values()
        provenance = "; ".join(d["provenance"] for d in datasets)
        kinds = {data_kind(d["provenance"]) for d in datasets}
    spec = _curves_target_spec(target, manifest)
    sets = sorted({r["dataset"] for r in curved})
    written = []
    for m in metrics:
        if not any(m in r["curves"] for r in curved):
            raise MlkitError(f"no curve of metric {m!r} in {out_dir}")
        paper = {}
        if spec is not None and len(sets) == 1:
            for method in sorted({r["method"] for r in curved}):
                pv = spec.paper_value(sets[0], method, m)
                if pv is not None and isinstance(pv.value, (int, float)):
                    paper[method] = float(pv.value)
        title = (spec.title if spec is not None and spec.title else
                 f"{metric_name(m)} vs number of base models ({out_dir.name})")
        caption = f"Data: {provenance}." if provenance else ""
        caption += (" Hollow markers: the paper's values (the config's reported numbers)."
                    if paper else " The config reports no paper value of this metric.")
        written += plot_curves(curved, m, out or out_dir, f"curves_{m}", caption=caption.strip(),
                               title=title, paper=paper,
                               data=f"ours ({kinds.pop()})" if len(kinds) == 1 else None)
    for p in written:
        click.echo(f"wrote {p}")


def _curves_target_spec(target, manifest):
    """The config of ``target`` (or of the target the manifest's config names), or None:
    where `plot curves` finds the title and the paper's values."""
    from .targets import resolve_target, target_spec

    if target is None:
        config = manifest.get("config") or {}
        if not (config.get("paper") and config.get("artifact")):
            return None
        try:
            target = resolve_target(f"{config['paper']}/{config['artifact']}")
        except MlkitError:
            return None
    return target_spec(target)[0]


# -- data -----------------------------------------------------------------------------------
@cli.group()
def data():
    """Datasets: list, describe, download and verify."""


@data.command("list")
def data_list():
    """Registered datasets, real or synthetic."""
    from ._listing import listing

    for name, summary, meta in listing()["datasets"]:
        kind = "synthetic" if meta.get("synthetic") else "real"
        click.echo(f"{name:<22} {kind:<9} {meta.get('kind', ''):<11} {summary}")


@data.command("info")
@click.argument("name")
@click.option("--format", "fmt", default=None, help="Read NAME as a file in this format.")
@click.option("--xml", "xml", default=None, type=click.Path(exists=True, dir_okay=False),
              help="With --format mulan: the label XML (default: found beside the ARFF).")
def data_info(name, fmt, xml):
    """Counts and provenance of a dataset, or of your own file with --format."""
    from .datasets import describe

    if xml is not None and fmt != "mulan":
        raise MlkitError("--xml goes with --format mulan")
    for line in describe(name, fmt, **({"xml": xml} if xml else {})):
        click.echo(line)


@data.command("fetch")
@click.argument("names", nargs=-1, required=True)
@click.option("--force", is_flag=True, help="Download again even when the cache is intact.")
def data_fetch(names, force):
    """Download datasets (from MLKIT_DATA_MIRROR first) and verify their SHA-256."""
    from .datasets import fetch_dataset

    for name in names:
        _has_files(name, "download")
    for name in names:
        for path in fetch_dataset(name, force=force):
            click.echo(f"ok {path}")


@data.command("verify")
@click.argument("names", nargs=-1, required=True)
def data_verify(names):
    """Check the cached files of datasets against their SHA-256."""
    from .datasets import verify_dataset

    for name in names:
        _has_files(name, "verify")
    for name in names:
        for path in verify_dataset(name):
            click.echo(f"ok {path}")


def _has_files(name, what):
    """A dataset with no registered files (generated, or read from a folder its owners
    distribute) is a user error for `data fetch` / `data verify`, said with what to do."""
    from .registry import DATASETS

    entry = DATASETS.entry(name)
    if entry.meta.get("files"):
        return
    if entry.meta.get("synthetic"):
        raise MlkitError(f"{name} is generated (synthetic data): there is nothing to {what}; "
                         f"`mlkit data info {name}` shows it")
    raise MlkitError(f"{name} has no file mlkit can {what}: its data come from their owners "
                     f"({entry.summary}); place them in the data home (MLKIT_DATA) as "
                     f"`mlkit data info {name}` says")


# -- verify / regress -----------------------------------------------------------------------
@cli.command("verify")
@click.argument("paper")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list of {claim, verdict, statement, measured, diagnosis} "
                   "instead (diagnosis: null for a PASS, else {status: tested|untested, "
                   "text, targets} from the paper's claims YAML).")
@_results
@click.pass_context
def verify_cmd(ctx, paper, as_json):
    """Check a paper's claims against saved results: PASS / FAIL / NOT RUN / NO VERDICT
    (outdated or partial results) with the numbers measured. A "beats", "better" or "worse"
    is a paired test at the paper's level (``alpha`` of its claims YAML); ties are ties.
    Read-only: it reads the saved results of the results root (named on stderr; see
    `mlkit --help` for --results) and local data files, and downloads, trains and writes
    nothing; a claim that needs a data file not on this machine is NOT RUN and says which.

    Exit status: 0 when every claim passes; 1 when a claim FAILs, is NOT RUN or has NO
    VERDICT; 2 on a user error (unknown paper, unreadable results or claims YAML).
    """
    from .verify import report

    rows = report(paper)
    _say_root(ctx)
    if as_json:
        import json

        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        for row in rows:
            click.echo(f"{row['verdict']:<7} claim {row['claim']}: {row['statement']}")
            click.echo(f"        {row['measured']}")
    if any(row["verdict"] != "PASS" for row in rows):
        ctx.exit(1)


@cli.command()
@click.argument("targets", nargs=-1)
@click.option("--update", is_flag=True,
              help="Write the references from a fresh --quick run instead of comparing.")
@click.option("--fast", is_flag=True, help="Only the targets marked fast (what CI runs).")
@_jobs
@_results
@click.pass_context
def regress(ctx, targets, update, fast, jobs):
    """Re-run the --quick form of targets with a reference in results/reference/ and fail
    (exit 1) when a number leaves its tolerance."""
    from .regress import regress as run_regress

    table, ok = run_regress(targets, update=update, fast_only=fast, jobs=jobs,
                            progress=_progress(ctx))
    click.echo(table)
    if not ok:
        ctx.exit(1)


@cli.command("report")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The page to write or check (default: REPRODUCTION.md beside results/).")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 when the page differs from what the results give.")
@click.option("--untracked", is_flag=True,
              help="Also read results git does not track (e.g. --quick runs): a local look, "
                   "not the committed page.")
@_results
@click.pass_context
def report_cmd(ctx, out, check, untracked):
    """Write REPRODUCTION.md from the saved results (no retraining): per paper, every target
    paper vs ours with the difference, its figure and data, the claims, the environment.
    It reads the results root (named on stderr; `mlkit --help` for --results).

    Exit status: 0 written (or, with --check, up to date); 1 with --check when the page
    differs from what the results give; 2 on a user error (e.g. no results folder).
    """
    from .report.reproduction import report

    line, files, problems = report(out, check=check, untracked=untracked)
    if problems:
        click.echo(f"mlkit: {problems[0]}; regenerate with `mlkit report` and commit",
                   err=True)
        ctx.exit(1)
    _say_root(ctx)
    _say(ctx, line)
    for path in files:
        click.echo(f"{'up to date' if check else 'wrote'} {path}")


#: Seconds a signal may wait for the main thread to leave a C call (a Python handler runs
#: only between bytecodes: liblinear at C = 1e8 holds it for minutes) before the command
#: stops without it
SIGNAL_GRACE_S = 5.0
_INTERRUPTED = "mlkit: interrupted; the runs finished so far are saved"


def _stop_if_stuck(grace):
    """Watch for SIGINT/SIGTERM from a thread, through the wakeup fd the interpreter's C-level
    handler writes at once: when the main thread has not ended the command ``grace`` seconds
    later (it is inside a long C call), stop the workers and exit 130/143 from here. Nothing
    finished is lost: records and outputs are written whole (temporary file, then rename),
    so only the run in progress goes."""
    import os
    import signal
    import socket
    import threading
    import time

    reader, writer = socket.socketpair()
    writer.setblocking(False)
    try:
        signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    except ValueError:                          # not the main thread: no watch
        reader.close()
        writer.close()
        return None
    codes = {signal.SIGINT: 130, signal.SIGTERM: 143}

    def watch():
        while True:
            got = reader.recv(1)
            if not got:
                return
            if got[0] in codes:
                time.sleep(grace)               # the main thread's turn to stop cleanly
                try:
                    _stop_workers()
                finally:
                    sys.stderr.write(_INTERRUPTED + "\n")
                    sys.stderr.flush()
                    os._exit(codes[got[0]])

    threading.Thread(target=watch, name="mlkit-signal-watch", daemon=True).start()
    return reader, writer                       # kept open for the life of the command


def main():
    """The console entry point: SIGINT exits 130 and SIGTERM 143, after stopping the
    parallel workers (the runs finished so far are saved: each record is written when its
    run ends); within :data:`SIGNAL_GRACE_S` seconds even when the signal finds the main
    thread inside a long C call (see :func:`_stop_if_stuck`)."""
    import signal

    def _terminate(signum, frame):
        raise KeyboardInterrupt(signum)

    signal.signal(signal.SIGTERM, _terminate)
    _watch = _stop_if_stuck(SIGNAL_GRACE_S)  # noqa: F841  (its socket pair stays open)
    try:
        code = cli(prog_name="mlkit", standalone_mode=False)
    except click.Abort as exc:          # click turns KeyboardInterrupt into Abort
        _stop_workers()
        cause = exc.__cause__ or exc.__context__
        term = isinstance(cause, KeyboardInterrupt) and cause.args == (signal.SIGTERM,)
        click.echo(_INTERRUPTED, err=True)
        sys.exit(143 if term else 130)
    except click.UsageError as exc:     # a bad option of `mlkit` itself: one line too
        where = exc.ctx.command_path if exc.ctx is not None else "mlkit"
        click.echo(f"mlkit: error: {exc.format_message()} (see `{where} --help`)", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def _stop_workers():
    """Kill joblib's reusable loky workers, so no worker outlives the command."""
    from joblib.externals.loky import reusable_executor

    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=False, kill_workers=True)


if __name__ == "__main__":  # pragma: no cover
    main()

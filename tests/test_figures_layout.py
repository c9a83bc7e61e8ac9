"""Every registered figure target's figure, drawn from its committed records as a reader
sees it: no two text elements overlap, no text or legend leaves the figure, no legend
covers data (a line, a marker or a bar) and no caption paragraph sits in the image (it
belongs in the target's table.md). Nothing is trained: each renderer is handed the runs
already recorded under results/ (the files it writes go to a temporary folder, and the
PNG/PDF are not encoded). A target whose runs are still partly missing (a rerun under
way) is drawn from the runs recorded so far, as ``mlkit reproduce --partial`` draws it:
the layout is checked whatever the state of the committed results, and every figure
target is covered (:func:`test_every_figure_target_is_covered`).

A figure that fails today is an ``xfail(strict=True)`` naming its defect, so that the
case flags as soon as the figure is fixed and the mark must go.
"""

import itertools
import os
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest

import mlkit.report.figures as figures_mod
from .test_figures import _overlap  # the one bounding-box overlap test

REPO = Path(__file__).resolve().parents[1]

#: target -> {figure name (its file stem): defect} of the figures that fail today
_CAPTION = "caption paragraph in the image (it belongs in table.md)"
KNOWN = {
}


def _defect(target, name):
    return KNOWN.get(target, {}).get(name)


def _is_figure_target(target):
    """A registered target that is a figure: its committed results hold a PNG, or it is
    one of its paper's figures (its title starts "Fig. <n>:"), committed or not yet."""
    folder = REPO / "results" / target.paper / target.artifact
    return any(folder.glob("*.png")) or bool(re.match(r"Fig\. \d+:", target.summary))


def _figure_targets():
    """The names of every registered figure target (:func:`_is_figure_target`)."""
    from mlkit.registry import TARGETS

    return [name for name in sorted(TARGETS.names()) if _is_figure_target(TARGETS.get(name))]


_RUNS = {}


def _render(name, tmp):
    """{figure name: Figure} the renderer of ``name`` draws from the committed records."""
    from mlkit.experiment import run
    from mlkit.registry import RENDERERS
    from mlkit.targets import resolve_target, target_spec

    target = resolve_target(name)
    spec, run_spec = target_spec(target)
    artifact = target.config_artifact
    runs_dir = REPO / "results" / target.paper / artifact
    if runs_dir not in _RUNS:             # several figures drawn from one table's runs
        _RUNS[runs_dir] = run(run_spec, runs_dir, compute=False)
    result = _RUNS[runs_dir]
    # partly missing runs (a rerun under way) are drawn as recorded so far; all missing
    # is a figure target with no committed results to draw, which must not pass unseen
    assert result.records or not result.missing, \
        f"{name}: none of its {result.missing} runs recorded in {runs_dir} to draw from"
    kept = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(figures_mod, "KEEP_OPEN", kept)
        mp.setattr(figures_mod, "_write_files", lambda fig, out_dir, stem: [])
        RENDERERS.get(spec.render).fn(result, Path(tmp), spec)
    return {f.get_label(): f for f in kept}


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """``get(target)`` -> {figure name: Figure}, drawn when first asked for; the figures
    of the target asked for before are closed then (the cases come target by target)."""
    import matplotlib.pyplot as plt

    cache = {}

    def close():
        for figs in cache.values():
            for f in figs.values():
                plt.close(f)
        cache.clear()

    def get(name):
        if name not in cache:
            close()
            cache[name] = _render(name, tmp_path_factory.mktemp(name.replace("/", "-")))
        return cache[name]

    yield get
    close()


# -- what a reader sees -------------------------------------------------------------------
def _ticklabels(axis):
    ticks = axis._update_ticks()
    return [lab for t in ticks for lab in (t.label1, t.label2)
            if lab.get_visible() and lab.get_text()]


def _texts(fig):
    """(name, artist) of every text element a reader sees (a legend is one element)."""
    items = [("title" if t is fig._suptitle else f"figure text {t.get_text()[:40]!r}", t)
             for t in fig.texts if t.get_visible() and t.get_text()]
    items += [(f"figure legend {i}", leg) for i, leg in enumerate(fig.legends)]
    for a, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        for key, t in (("title", ax.title), ("left title", ax._left_title),
                       ("right title", ax._right_title), ("xlabel", ax.xaxis.label),
                       ("ylabel", ax.yaxis.label)):
            if t.get_visible() and t.get_text():
                items.append((f"axes {a} {key} {t.get_text()!r}", t))
        if ax.axison:
            for nm, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
                if not axis.get_visible():
                    continue
                items += [(f"axes {a} {nm}tick {t.get_text()!r}", t)
                          for t in _ticklabels(axis)]
                off = axis.get_offset_text()
                if off.get_visible() and off.get_text():
                    items.append((f"axes {a} {nm} offset {off.get_text()!r}", off))
        items += [(f"axes {a} text {t.get_text()[:40]!r}", t) for t in ax.texts
                  if t.get_visible() and t.get_text()]
        if ax.get_legend() is not None:
            items.append((f"axes {a} legend", ax.get_legend()))
    return items


def _data_points(ax, renderer):
    """Display coordinates of the data drawn in ``ax``: line vertices (segments densified
    every ~2 px), scatter markers and the corners and centres of bars."""
    pts = []
    for line in ax.lines:
        if not line.get_visible():
            continue
        xy = np.asarray(line.get_xydata(), dtype=float)
        xy = xy[np.isfinite(xy).all(axis=1)]
        if not len(xy):
            continue
        d = line.get_transform().transform(xy)
        if len(d) > 1 and line.get_linestyle() not in ("None", "none", ""):
            dense = [d[:1]]
            for p, q in zip(d[:-1], d[1:]):
                n = int(min(200, max(1, np.hypot(*(q - p)) // 2)))
                dense.append(p + (q - p) * np.linspace(0, 1, n + 1)[1:, None])
            d = np.vstack(dense)
        pts.append(d)
    for coll in ax.collections:
        if isinstance(coll, matplotlib.collections.PathCollection) and coll.get_visible():
            off = coll.get_offsets()
            if len(off):
                pts.append(coll.get_offset_transform().transform(np.asarray(off, float)))
    for container in ax.containers:
        if isinstance(container, matplotlib.container.BarContainer):
            for patch in container.patches:
                b = patch.get_window_extent(renderer)
                if b.width > 0 and b.height > 0:
                    xs, ys = np.linspace(b.x0, b.x1, 5), np.linspace(b.y0, b.y1, 9)
                    pts.append(np.array([(x, y) for x in xs for y in ys]))
    return np.vstack(pts) if pts else np.empty((0, 2))


def _drawn_points(ax):
    """Display coordinates of the vertices of the lines and the markers of ``ax`` (what
    must lie inside its frame: a clipped point is a value the reader cannot see)."""
    pts = [np.empty((0, 2))]
    for line in ax.lines:
        if line.get_visible():
            xy = np.asarray(line.get_xydata(), dtype=float)
            pts.append(line.get_transform().transform(xy[np.isfinite(xy).all(axis=1)]))
    for coll in ax.collections:
        if isinstance(coll, matplotlib.collections.PathCollection) and coll.get_visible():
            off = np.asarray(coll.get_offsets(), float)
            if len(off):
                pts.append(coll.get_offset_transform().transform(off))
    return np.vstack(pts)


def _legends(fig):
    out = [(f"figure legend {i}", leg, None) for i, leg in enumerate(fig.legends)]
    out += [(f"axes {a} legend", ax.get_legend(), ax) for a, ax in enumerate(fig.axes)
            if ax.get_legend() is not None]
    return out


def _problems(fig):
    """Every layout defect of ``fig``, as readable lines."""
    fig.draw_without_rendering()          # lays out and places every artist, no pixels
    renderer = fig.canvas.get_renderer()
    problems = []
    boxes = [(n, t.get_window_extent(renderer)) for n, t in _texts(fig)]
    page = fig.bbox
    for n, box in boxes:
        if not (box.x0 >= page.x0 - 0.5 and box.x1 <= page.x1 + 0.5
                and box.y0 >= page.y0 - 0.5 and box.y1 <= page.y1 + 0.5):
            problems.append(f"{n} leaves the figure")
    for (n1, b1), (n2, b2) in itertools.combinations(boxes, 2):
        if _overlap(b1, b2):
            problems.append(f"{n1} overlaps {n2}")
    data = {}
    for n, leg, _ in _legends(fig):
        box = leg.get_window_extent(renderer)
        for a, ax in enumerate(fig.axes):
            if not ax.get_visible():
                continue
            if a not in data:
                data[a] = _data_points(ax, renderer)
            pts = data[a]
            inside = ((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1)
                      & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1))
            # only what is drawn: data clipped by the axes frame is not seen
            frame = ax.get_window_extent(renderer)
            inside &= ((pts[:, 0] >= frame.x0) & (pts[:, 0] <= frame.x1)
                       & (pts[:, 1] >= frame.y0) & (pts[:, 1] <= frame.y1))
            if inside.any():
                problems.append(f"{n} covers {int(inside.sum())} data points of axes {a}")
    for a, ax in enumerate(fig.axes):
        if ax.get_visible() and ax.axison:
            pts = _drawn_points(ax)
            frame = ax.get_window_extent(renderer).padded(1.0)
            out = ~((pts[:, 0] >= frame.x0) & (pts[:, 0] <= frame.x1)
                    & (pts[:, 1] >= frame.y0) & (pts[:, 1] <= frame.y1))
            if out.any():
                problems.append(f"axes {a}: {int(out.sum())} data points clipped by its frame")
    for t in fig.texts:
        text = t.get_text()
        if len(text) > 150:
            problems.append(f"caption paragraph in the image ({len(text)} characters: "
                            f"{text[:50]!r}...)")
    return problems


def _cases():
    os.environ.setdefault("MPLBACKEND", "Agg")
    cases = []
    for target in _figure_targets():
        stems = sorted(p.stem for p in (REPO / "results" / target).glob("*.png"))
        for stem in stems:
            marks = []
            defect = _defect(target, stem)
            if defect:
                marks.append(pytest.mark.xfail(reason=defect, strict=True))
            cases.append(pytest.param(target, stem, marks=marks, id=f"{target}:{stem}"))
    return cases


def test_every_figure_target_is_covered():
    """The layout cases cover every registered figure target (a new figure target without
    a committed figure to check fails here), and nothing else."""
    from mlkit.registry import TARGETS

    covered = sorted({case.values[0] for case in _cases()})
    figure_targets = _figure_targets()
    assert covered == figure_targets, (
        f"figure targets without a committed PNG to check: "
        f"{sorted(set(figure_targets) - set(covered))}")
    assert "sparsemi/fig3" in covered and len(covered) > 10
    assert not any(_is_figure_target(TARGETS.get(n)) for n in TARGETS.names()
                   if n not in covered)


@pytest.mark.parametrize(("target", "name"), _cases())
def test_figure_reads_cleanly(data_mirror, drawn, target, name):
    figs = drawn(target)
    assert name in figs, f"{target} drew {sorted(figs)}, not its committed {name}.png"
    problems = _problems(figs[name])
    assert not problems, f"{target} {name}: " + "; ".join(problems[:8])


#: what each SparseMI figure draws of the paper (its legend label starts with it) and
#: what its table.md caption says about the paper's values
SPARSEMI_PAPER = {
    "fig1": (None, "no paper values are drawn"),
    "fig2": ("final XVs (paper", "drawn as hollow diamonds"),
    "fig3": ("paper (Table I", "are the paper's own numbers for that setting"),
    "fig4": ("paper: accuracy stable", "the grey band"),
}


@pytest.mark.parametrize("fig", sorted(SPARSEMI_PAPER))
def test_sparsemi_figures_draw_the_paper_beside_ours(data_mirror, drawn, fig):
    """The paper's values where it gives any (else the caption says it gives none), a
    one-line title in the image and the full caption in the target's table.md."""
    figure = drawn(f"sparsemi/{fig}")[fig]
    label, said = SPARSEMI_PAPER[fig]
    labels = [lab for ax in figure.axes for lab in ax.get_legend_handles_labels()[1]]
    if label is None:
        assert not any(lab.startswith("paper") for lab in labels)
    else:
        assert any(lab.startswith(label) for lab in labels), labels
    texts = [t.get_text() for t in figure.texts if t.get_text()]
    assert texts == [figure._suptitle.get_text()] and "\n" not in texts[0]
    caption = (REPO / "results" / "sparsemi" / fig / "table.md").read_text().split("\n")[0]
    assert said in caption and "Data:" in caption


def _paper_lines(figure):
    """(axes index, line) of every artist labelled as the paper's (legend label "paper...")."""
    return [(a, line) for a, ax in enumerate(figure.axes) for line in ax.lines
            if line.get_label().startswith("paper")]


def test_mssboost_fig4_draws_where_the_paper_says_each_curve_is_at_its_best(data_mirror, drawn):
    """Sec. 6.1: MSSBoost at its best with 5 models, NSBoost with at least 12, RSBag not
    within 20 (fig4.yaml reported): dashed lines in each method's colour."""
    from matplotlib.colors import to_hex

    from mlkit.report.style import method_colour

    figure = drawn("mssboost/fig4")["fig4"]
    lines = {line.get_label(): line for _, line in _paper_lines(figure)}
    assert set(lines) == {"paper: MSSBoost best at 5", "paper: NSBoost best at ≥ 12",
                          "paper: RSBag not best within 20"}
    for label, x in (("paper: MSSBoost best at 5", 5), ("paper: NSBoost best at ≥ 12", 12),
                     ("paper: RSBag not best within 20", 20)):
        assert lines[label].get_xdata()[0] == x and lines[label].get_linestyle() == "--"
        method = label.split()[1]
        assert to_hex(lines[label].get_color()) == to_hex(method_colour(method))
    (ax,) = figure.axes
    assert ax.get_ylabel() == "Hamming error"
    assert "Hamming error" in figure._suptitle.get_text()
    colours = {line.get_label(): to_hex(line.get_color()) for line in ax.lines
               if not line.get_label().startswith(("paper", "_"))}
    assert colours["MSSBoost"] != colours["MSSBoost (intercept)"]
    assert "synthetic" in figure.legends[0].get_title().get_text()


def test_mssboost_fig5_draws_the_papers_table2_values_each_in_the_legend(data_mirror, drawn):
    """The paper's Baseline (a dashed line) and its three ensembles at T = 100 (hollow
    diamonds at t = 100) of Table 2 for the collection in the same role, each in the
    legend."""
    figure = drawn("mssboost/fig5")["fig5"]
    legend = [ax.get_legend() for ax in figure.axes if ax.get_legend() is not None][0]
    names = [t.get_text() for t in legend.get_texts()]
    for method in ("Baseline", "RSBag", "NSBoost", "MSSBoost"):
        assert any(n.startswith(f"paper: {method} (Table 2") for n in names), names
    assert "paper" in legend.get_title().get_text()
    by_panel = {figure.axes[a].get_title(): [] for a, _ in _paper_lines(figure)}
    for a, line in _paper_lines(figure):
        by_panel[figure.axes[a].get_title()].append(line)
    # Table 2 of the paper: TREC Baseline .449, MSSBoost .456; Consumer Baseline .339
    for title, (base, mss) in (("corel5k-top39 (TREC role)", (0.449, 0.456)),
                               ("scene (Consumer role)", (0.339, 0.341))):
        lines = {line.get_label(): line for line in by_panel[title]}
        assert lines["paper: Baseline (Table 2)"].get_ydata()[0] == pytest.approx(base)
        assert lines["paper: Baseline (Table 2)"].get_linestyle() == "--"
        mark = lines["paper: MSSBoost (Table 2, T = 100)"]
        assert mark.get_xydata().tolist() == [[100.0, pytest.approx(mss)]]
        assert mark.get_markerfacecolor() == "none"
    # Sec. 6.2.3 on TREC: 36 / 54 / 60 models for a Mean-AP of 0.38 (MSSBoost / NSBoost /
    # RSBag), hollow circles on the TREC-role panels only
    points = {title: sorted(tuple(line.get_xydata()[0]) for line in lines
                            if line.get_label() == "paper: models to reach 0.38 (Sec. 6.2.3)")
              for title, lines in by_panel.items()}
    assert points["corel5k-top39 (TREC role)"] == [(36, 0.38), (54, 0.38), (60, 0.38)]
    assert points["scene (Consumer role)"] == []


def test_mssboost_fig6_draws_the_papers_speedups_and_every_bar_style(data_mirror, drawn):
    """Sec. 6.2.3: 20x / 35x (TREC) and 30x / 60x (Consumer) at 100% / 90% of the
    Baseline's Mean-AP, hollow diamonds in the speed-up panel; the legend names the
    @100% bars even when no run reaches 100%."""
    figure = drawn("mssboost/fig6")["fig6"]
    values = sorted(line.get_ydata()[0] for _, line in _paper_lines(figure))
    assert values == sorted([20, 35] * 3 + [30, 60])
    names = [t.get_text() for t in figure.legends[0].get_texts()]
    assert {"Baseline", "MSSBoost @100%", "MSSBoost @90%"} <= set(names)
    assert "paper" in figure.legends[0].get_title().get_text()


def test_mssboost_fig7_draws_the_papers_label_counts_and_explains_its_divider(data_mirror,
                                                                              drawn):
    """Sec. 6.2.3: MSSBoost above NSBoost on 30/39 labels and above RSBag on 34/39 (hollow
    diamonds, in percent); the divider only when both regions hold labels, and then in the
    legend."""
    figure = drawn("mssboost/fig7")["fig7"]
    values = sorted(line.get_ydata()[0] for _, line in _paper_lines(figure))
    assert values == pytest.approx([100 * 30 / 39, 100 * 34 / 39])
    ax = figure.axes[0]
    dividers = [line for line in ax.lines if line.get_label().startswith("left | right")]
    shares = "all of the" in ax.get_xlabel() or "none of the" in ax.get_xlabel()
    assert len(dividers) == (0 if shares else 1)
    names = [t.get_text() for t in figure.legends[0].get_texts()]
    assert all(line.get_label() in names for line in dividers)


def test_mssboost_fig8_has_a_colour_key_axis_titles_and_distinct_columns(data_mirror, drawn):
    """The matrix's colours in a legend, both axes titled, every column named once, and
    a caption that promises no paper numbers (the paper's Fig. 8 gives none)."""
    figure = drawn("mssboost/fig8")["fig8"]
    ax = figure.axes[0]
    names = [t.get_text() for t in figure.legends[0].get_texts()]
    assert names[:2] == ["positive weight", "negative weight"]
    assert ax.get_xlabel() and ax.get_ylabel()
    columns = [t.get_text() for t in ax.get_xticklabels()]
    assert len(set(columns)) == len(columns)
    assert not _paper_lines(figure)
    caption = (REPO / "results" / "mssboost" / "fig8" / "table.md").read_text().split("\n")[0]
    assert "gives no numbers" in caption and "numbers are shown beside" not in caption


def test_mssboost_fig3_has_a_key_of_its_label_colours(data_mirror, drawn):
    """Each label's colour (its points in (a), its predicted region in (b, c)) is named in
    the legend, with the unlabelled points and both kinds of boundary."""
    from matplotlib.colors import to_hex

    from mlkit.papers.mssboost.renderers.synthetic import LABEL_COLOURS

    figure = drawn("mssboost/fig3")["fig3"]
    (legend,) = figure.legends
    names = [t.get_text() for t in legend.get_texts()]
    assert names == ["Label 1", "Label 2", "Label 3", "no label", "base model boundary",
                     "true label boundary"]
    fills = {to_hex(p.get_facecolor()) for p in legend.findobj(matplotlib.patches.Rectangle)}
    assert {to_hex(c) for c in LABEL_COLOURS} <= fills

"""Every figure of MSSBoost's quick targets, drawn as a reader sees it: no text artist
(title, axis label, tick label, legend, annotation, caption) overlaps another or leaves
the figure, every line and bar lies inside its axes, and one method has one colour."""

import itertools
import shutil

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

import mlkit.report.figures as figures_mod
from mlkit.cli import cli
from mlkit.report.figures import METHOD_COLOURS, method_colour

from .conftest import CONFIGS

SYNTHETIC = ("fig1", "fig3", "fig4")
TABLE2 = ("fig5", "fig6", "fig7", "fig8")


def _invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _tiny_configs(root):
    """configs/ with table2.yaml shrunk to seconds (as tests/test_mssboost_targets.py's
    ``tiny_table2``): a 6-label TRECVID-style set in the TREC role, T=12, 2 repetitions."""
    shutil.copytree(CONFIGS, root)
    path = root / "mssboost" / "table2.yaml"
    spec = yaml.safe_load(path.read_text())
    spec.pop("quick")
    spec["datasets"] = [{"name": "trecvid-style", "label": "TRECVID-style", "role": "TREC",
                         "params": {"random_state": 0, "scale": 0.12, "n_labels": 6},
                         "method_params": {"*": {"gamma": 1.0, "rd": 0.3, "rf": 0.5}}}]
    for m in spec["methods"]:
        if "n_estimators" in m["params"]:
            m["params"]["n_estimators"] = 2 if m["label"] == "Bagging" else 12
    spec["protocol"]["repeats"] = 2
    path.write_text(yaml.safe_dump(spec))
    for fig, report in (("fig7", {"dataset": "TRECVID-style"}),
                        ("fig8", {"dataset": "TRECVID-style", "models": 10})):
        p = root / "mssboost" / f"{fig}.yaml"
        cfg = yaml.safe_load(p.read_text())
        cfg["report"] = report
        p.write_text(yaml.safe_dump(cfg))


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """{figure name: the matplotlib Figure saved by the renderer}, kept open."""
    tmp = tmp_path_factory.mktemp("figures")
    _tiny_configs(tmp / "configs")
    kept = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLKIT_RESULTS", str(tmp / "results"))
        mp.setattr(figures_mod, "KEEP_OPEN", kept)
        res = _invoke("reproduce", *(f"mssboost/{f}" for f in SYNTHETIC), "--quick")
        assert res.exit_code == 0, res.output
        res = _invoke("plot", "curves", str(tmp / "results" / "mssboost" / "fig4-quick"))
        assert res.exit_code == 0, res.output
        mp.setattr("mlkit.targets.configs_dir", lambda: tmp / "configs")
        for fig in ("table2",) + TABLE2:
            res = _invoke("reproduce", f"mssboost/{fig}")
            assert res.exit_code == 0, res.output
    out = {f.get_label(): f for f in kept}
    yield out
    import matplotlib.pyplot as plt

    for f in kept:
        plt.close(f)


def _ticklabels(axis):
    """The tick labels matplotlib draws on ``axis`` (within its view, non-empty)."""
    ticks = axis._update_ticks()
    return [lab for t in ticks for lab in (t.label1, t.label2)
            if lab.get_visible() and lab.get_text()]


def _texts(fig):
    """(name, Text or Legend) of every text a reader sees on ``fig``."""
    items = [(f"caption {i}", t) for i, t in enumerate(fig.texts) if t.get_text()]
    for a, ax in enumerate(fig.axes):
        for key, t in (("title", ax.title), ("left title", ax._left_title),
                       ("right title", ax._right_title), ("xlabel", ax.xaxis.label),
                       ("ylabel", ax.yaxis.label)):
            if t.get_visible() and t.get_text():
                items.append((f"axes {a} {key} {t.get_text()!r}", t))
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if not ax.axison:            # a legend cell (style.legend_cell) shows no ticks
                continue
            items += [(f"axes {a} {name}tick {t.get_text()!r}", t) for t in _ticklabels(axis)]
        items += [(f"axes {a} text {t.get_text()!r}", t) for t in ax.texts
                  if t.get_visible() and t.get_text()]
        if ax.get_legend() is not None:
            items.append((f"axes {a} legend", ax.get_legend()))
    return items


def _overlap(a, b, tol=0.5):
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > tol) and (min(a.y1, b.y1) - max(a.y0, b.y0) > tol)


@pytest.mark.parametrize("name", SYNTHETIC + TABLE2 + ("curves_hamming_error",))
def test_no_text_overlaps_another_or_leaves_the_figure(drawn, name):
    fig = drawn[name]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(n, t.get_window_extent(renderer)) for n, t in _texts(fig)]
    # it says what it shows: a caption (older renderers) or the style's one-line title
    assert any(n.startswith("caption") for n, _ in boxes) or fig._suptitle is not None
    page = fig.bbox
    for n, box in boxes:
        assert (box.x0 >= page.x0 - 0.5 and box.x1 <= page.x1 + 0.5 and box.y0 >= page.y0 - 0.5
                and box.y1 <= page.y1 + 0.5), f"{name}: {n} runs past the figure's edge"
    clashes = [(n1, n2) for (n1, b1), (n2, b2) in itertools.combinations(boxes, 2)
               if _overlap(b1, b2)]
    assert not clashes, f"{name}: overlapping texts {clashes[:5]}"


@pytest.mark.parametrize("name", SYNTHETIC + TABLE2 + ("curves_hamming_error",))
def test_lines_and_bars_lie_inside_their_axes(drawn, name):
    fig = drawn[name]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for a, ax in enumerate(fig.axes):
        if not ax.get_visible() or not ax.axison:
            continue
        frame = ax.get_window_extent(renderer).padded(1.0)
        for line in ax.lines:
            xy = np.asarray(line.get_xydata(), dtype=float)
            xy = xy[np.isfinite(xy).all(axis=1)]
            pts = line.get_transform().transform(xy)
            inside = ((pts[:, 0] >= frame.x0) & (pts[:, 0] <= frame.x1)
                      & (pts[:, 1] >= frame.y0) & (pts[:, 1] <= frame.y1))
            assert inside.all(), (f"{name}, axes {a}: line {line.get_label()!r} leaves the "
                                  f"axes at {xy[~inside][:3].tolist()} (xlim {ax.get_xlim()}, "
                                  f"ylim {ax.get_ylim()})")
        for patch in ax.patches:
            box = patch.get_window_extent(renderer)
            assert (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0
                    and box.y1 <= frame.y1), f"{name}, axes {a}: patch {patch} outside the axes"


def _method_lines(fig):
    for ax in fig.axes:
        for line in ax.lines:
            if line.get_label() in METHOD_COLOURS:
                yield line.get_label(), line.get_color()


def test_each_method_has_one_colour_in_every_figure(drawn):
    from matplotlib.colors import to_hex

    seen = {}
    for name in ("fig4", "curves_hamming_error", "fig5", "fig7"):
        for method, colour in _method_lines(drawn[name]):
            seen.setdefault(method, set()).add(to_hex(colour))
            assert to_hex(colour) == to_hex(method_colour(method)), (name, method)
    assert {"RSBag", "NSBoost", "MSSBoost"} <= set(seen)
    assert all(len(c) == 1 for c in seen.values()), seen
    # the methods of one paper have distinct colours (two papers may share one)
    mss = ("MSSBoost", "RSBag", "NSBoost", "Bagging", "Subspace", "Baseline")
    colours = [to_hex(METHOD_COLOURS[m]) for m in mss]
    assert len(set(colours)) == len(colours)
    assert method_colour("some new method") == method_colour("some new method")


def test_counts_of_models_get_integer_ticks(drawn):
    for name in ("fig4", "curves_hamming_error", "fig5"):
        for ax in drawn[name].axes:
            if not ax.axison:            # a legend cell (style.legend_cell)
                continue
            locs = [x for x in ax.get_xticks() if ax.get_xlim()[0] <= x <= ax.get_xlim()[1]]
            assert locs and np.allclose(locs, np.round(locs)), (name, locs)


def test_saving_the_same_figure_twice_writes_the_same_bytes(tmp_path):
    """No timestamp in the files: a re-render of unchanged results changes nothing in git."""
    from mlkit.report import new_figure, save_figure

    def draw(out):
        fig, axes = new_figure(1)
        axes[0].plot([0, 1, 2], [1, 0, 2])
        return save_figure(fig, out, "fig", caption="toy (synthetic data)")

    first = {p.suffix: p.read_bytes() for p in draw(tmp_path / "a")}
    second = {p.suffix: p.read_bytes() for p in draw(tmp_path / "b")}
    assert set(first) == {".png", ".pdf"} and first == second
    assert b"/CreationDate" not in first[".pdf"]      # else equal only within one second

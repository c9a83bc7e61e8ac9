"""The figure style (mlkit.report.style) and the layout checks of test_figures_layout:
each check fails on a figure drawn with the defect it looks for."""

import matplotlib
import numpy as np
import pytest
from matplotlib.colors import to_hex

from mlkit.report import style
from mlkit.report.style import (METHOD_COLOURS, OKABE_ITO, PAPER_LABEL, figure_legend,
                                method_colour, panel_grid, paper_kw, save_styled, styled)

from .test_figures_layout import _problems


@pytest.fixture
def close_all():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def test_every_method_colour_is_colour_blind_safe_and_distinct_within_a_paper():
    palette = {to_hex(c) for c in OKABE_ITO.values()}
    assert {to_hex(c) for c in METHOD_COLOURS.values()} <= palette
    papers = {
        "mssboost": ["MSSBoost", "RSBag", "NSBoost", "Bagging", "Subspace", "Baseline",
                     "MSSBoost (intercept)"],
        "sparsemi": ["SparseMI", "MI-Kernel", "MILES", "mi-SVM", "MI-SVM", "RS", "RSVM"],
        "sparsemi fig3": ["SparseMI random", "SparseMI kmeans", "SparseMI svm"],
        "hfss": ["HFSS (all)", "HFSS (bestK)", "HFSS (bestK+PCA)", "HFSS (forward)",
                 "One-shot SVM", "bestK", "full ensemble"],
        "lm3fe": ["LM3FS", "SSMVFS", "MTFS", "RFS", "TMFS", "CAT", "BSF"],
    }
    for paper, methods in papers.items():
        colours = [to_hex(method_colour(m)) for m in methods]
        assert len(set(colours)) == len(colours), paper


def test_a_variant_takes_its_base_methods_colour():
    assert method_colour("SparseMI random t=0") == method_colour("SparseMI random")
    assert method_colour("RS (10)") == method_colour("RS") == method_colour("RS (100)")
    assert method_colour("SparseMI (50)") == method_colour("SparseMI")
    assert method_colour("HFSS (bestK)") != method_colour("HFSS (all)")   # names, not sizes
    assert method_colour("a new method") == method_colour("a new method")


def test_the_papers_values_are_hollow_and_labelled_paper():
    kw = paper_kw("#0072B2")
    assert kw["mfc"] == "none" and kw["ls"] == "none" and kw["label"] == PAPER_LABEL
    assert paper_kw(kind="line")["ls"] == "--"
    assert paper_kw(label="paper (Table I)")["label"] == "paper (Table I)"
    with pytest.raises(ValueError, match="starts with 'paper'"):
        paper_kw(label="Table I")


def test_ours_label_says_which_data():
    assert style.ours_label(provenance="toy (synthetic data: gen)") == "ours (synthetic data)"
    assert style.ours_label(provenance="musk1 (real data: UCI)") == "ours (paper's data)"
    assert style.ours_label(provenance="x (real data: y)", substitute=True) == \
        "ours (substitute data)"


def test_panels_come_in_a_grid(close_all):
    fig, axes = panel_grid(5)
    assert len(axes) == 5 and len(fig.axes) == 5
    rows = {round(ax.get_position().y0, 3) for ax in axes}
    assert len(rows) == 2                         # 3 + 2, not a strip of five
    w, _ = fig.get_size_inches()
    assert w == style.DOUBLE_COLUMN
    fig, axes = panel_grid(4, width=style.SINGLE_COLUMN)
    assert len({round(ax.get_position().x0, 3) for ax in axes}) == 2


def test_a_title_is_one_line_and_no_caption_goes_into_the_image(tmp_path, close_all):
    fig, (ax,) = panel_grid(1)
    ax.plot([0, 1], [0, 1])
    with pytest.raises(ValueError, match="one line"):
        save_styled(fig, tmp_path, "f", title="two\nlines")
    fig, (ax,) = panel_grid(1)
    ax.plot([0, 1], [0, 1])
    paths = save_styled(fig, tmp_path, "f", title="Fig. 9: a title")
    assert sorted(p.suffix for p in paths) == [".pdf", ".png"]


@styled
def _styled_font_size():
    fig, (ax,) = panel_grid(1)
    return ax.title.get_fontsize(), ax.xaxis.label.get_fontsize()


def test_styled_renderers_get_the_styles_fonts(close_all):
    before = dict(matplotlib.rcParams)
    with matplotlib.rc_context({"axes.titlesize": 15, "axes.labelsize": 13}):
        assert _styled_font_size() == (style.RC["axes.titlesize"], style.RC["axes.labelsize"])
        assert matplotlib.rcParams["axes.titlesize"] == 15         # restored after it
    assert dict(matplotlib.rcParams) == before


# -- the checks of test_figures_layout fail on the defects they look for ----------------
def test_the_check_sees_overlapping_texts(close_all):
    fig, (ax,) = panel_grid(1)
    ax.plot([0, 1], [0, 1])
    ax.text(0.5, 0.5, "some words", transform=ax.transAxes)
    ax.text(0.5, 0.5, "other words", transform=ax.transAxes)
    assert any("overlaps" in p for p in _problems(fig))


def test_the_check_sees_text_leaving_the_figure(close_all):
    fig, (ax,) = panel_grid(1)
    ax.set_title("a title far too long for this figure " * 4)
    assert any("leaves the figure" in p for p in _problems(fig))


def test_the_check_sees_a_legend_over_the_data(close_all):
    fig, (ax,) = panel_grid(1)
    x = np.linspace(0, 1, 50)
    ax.plot(x, np.ones_like(x), label="a flat line under the legend")
    ax.set_ylim(0, 1.05)
    ax.legend(loc="upper center")
    assert any("covers" in p for p in _problems(fig))
    fig, (ax,) = panel_grid(1)
    ax.bar([0, 1, 2], [1, 1, 1], label="bars")
    ax.legend(loc="center")
    assert any("covers" in p for p in _problems(fig))


def test_the_check_passes_a_legend_outside_the_panels(close_all):
    fig, axes = panel_grid(2)
    for ax in axes:
        ax.plot([0, 1], [0, 1], label="a line")
        ax.scatter([0.2], [0.8], label="a point")
    figure_legend(fig)
    fig.suptitle("Fig. 0: one line")
    assert _problems(fig) == []


def test_the_check_sees_a_caption_in_the_image(close_all):
    fig, (ax,) = panel_grid(1)
    fig.text(0.5, 0.01, "Data: " + "a long provenance, " * 12, fontsize=2)
    assert any("caption" in p for p in _problems(fig))


def _curve_records():
    rng = np.random.default_rng(0)
    return [{"method": m, "dataset": "toy", "curves": {"hamming_error": list(
        0.4 / np.arange(1, 9) + 0.05 * k + 0.01 * rng.random(8))}}
        for k, m in enumerate(("MSSBoost", "NSBoost")) for _ in range(3)]


def test_plot_curves_has_a_title_the_metrics_name_and_the_paper_marker(tmp_path, monkeypatch):
    import mlkit.report.figures as figures_mod
    from mlkit.report.summaries import plot_curves

    kept = []
    monkeypatch.setattr(figures_mod, "KEEP_OPEN", kept)
    files = plot_curves(_curve_records(), "hamming_error", tmp_path, "curves",
                        caption="Data: toy (synthetic data: a test).", paper={"NSBoost": 0.2},
                        data="ours (synthetic data)")
    assert sorted(p.name for p in files) == ["curves.md", "curves.pdf", "curves.png"]
    (fig,) = kept
    (ax,) = fig.axes
    assert ax.get_ylabel() == "Hamming error"
    assert fig._suptitle.get_text() == "Hamming error vs number of base models"
    (mark,) = [line for line in ax.lines if line.get_label() == PAPER_LABEL]
    assert mark.get_xydata().tolist() == [[8.0, 0.2]]
    assert to_hex(mark.get_markeredgecolor()) == to_hex(method_colour("NSBoost"))
    assert [t.get_text() for t in fig.texts] == [fig._suptitle.get_text()]   # no caption
    assert (tmp_path / "curves.md").read_text().splitlines()[2] == \
        "Data: toy (synthetic data: a test)."
    assert _problems(fig) == []
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_plot_curves_cli_titles_by_the_target_and_says_when_no_paper_value(tmp_path):
    from click.testing import CliRunner

    from mlkit._io import write_json
    from mlkit.cli import cli

    runs = tmp_path / "runs"
    for i, r in enumerate(_curve_records()):
        write_json(runs / "runs" / "toy" / r["method"] / f"r{i:02d}-f00.json",
                   dict(r, key=f"k{i}", repeat=i, fold=0, metrics={}))
    res = CliRunner().invoke(cli, ["plot", "curves", str(runs)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    md = (runs / "curves_hamming_error.md").read_text()
    assert md.startswith("Hamming error vs number of base models (runs)")
    assert "reports no paper value" in md


def test_compared_panels_get_one_y_range(close_all):
    fig, axes = panel_grid(2, sharey=False)
    axes[0].plot([0, 1], [60, 70])
    axes[1].plot([0, 1], [80, 99])
    lo, hi = style.shared_ylim(axes, hi=100)
    assert axes[0].get_ylim() == axes[1].get_ylim() == (lo, hi)
    assert lo < 60 and hi == 100


def test_the_check_sees_data_clipped_by_the_frame(close_all):
    fig, (ax,) = panel_grid(1)
    ax.plot([0, 1, 2], [0, 5, 1])
    ax.set_ylim(0, 2)
    assert any("clipped" in p for p in _problems(fig))


def test_the_papers_number_of_models_is_a_dashed_line_at_that_number(close_all):
    """"5", ">= 12" and "> 20" (of a 20-model curve) as the paper writes them; a text
    without a number draws nothing."""
    import matplotlib.pyplot as plt

    from mlkit.report.summaries import paper_models_line

    fig, ax = plt.subplots()
    ax.plot(np.arange(1, 21), np.linspace(0.4, 0.1, 20))
    five = paper_models_line(ax, "MSSBoost", "5", 20)
    twelve = paper_models_line(ax, "NSBoost", ">= 12", 20)
    beyond = paper_models_line(ax, "RSBag", "> 20", 20)
    assert paper_models_line(ax, "RSBag", "not reported", 20) is None
    assert [line.get_xdata()[0] for line in (five, twelve, beyond)] == [5, 12, 20]
    assert five.get_label() == "paper: MSSBoost best at 5"
    assert twelve.get_label() == "paper: NSBoost best at ≥ 12"
    assert beyond.get_label() == "paper: RSBag not best within 20"
    assert {line.get_linestyle() for line in (five, twelve, beyond)} == {"--"}
    assert to_hex(twelve.get_color()) == to_hex(method_colour("NSBoost"))
    arrows = [line for line in ax.lines if line.get_marker() == ">"]
    assert len(arrows) == 1 and ax.get_xlim()[1] >= 20.7     # the arrow inside the frame

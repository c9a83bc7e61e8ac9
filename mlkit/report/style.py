"""The one figure style of mlkit: sizes, fonts, one colour per method, the paper's marks,
panels in grids, legends outside the data, and a one-line title (the caption goes to the
target's ``table.md``, never into the image).

A renderer draws inside :func:`styled` (fonts and line widths of :data:`RC`), lays its
panels out with :func:`panel_grid`, draws the paper's values with :func:`paper_kw` (hollow
markers or dashed lines labelled :data:`PAPER_LABEL`), labels its own lines with
:func:`ours_label` (which data they ran on), puts one legend beside the grid with
:func:`figure_legend` and saves with :func:`save_styled` (title only)::

    @register_renderer("paper/fig9")
    @styled
    def render_fig9(result, out_dir, spec):
        fig, axes = panel_grid(4, ncols=2)
        ...
        files = save_styled(fig, out_dir, "fig9", title="Fig. 9: ...")
        write_table(df, out_dir, caption)       # the full caption lives here
"""

import functools
import hashlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["SINGLE_COLUMN", "DOUBLE_COLUMN", "RC", "OKABE_ITO", "METHOD_COLOURS",
           "PAPER_LABEL", "method_colour", "styled", "panel_grid", "paper_kw", "ours_label",
           "data_kind", "figure_legend", "legend_cell", "shared_ylim", "save_styled"]

#: Widths (inches) of a single-column and a double-column figure of a two-column paper.
SINGLE_COLUMN = 3.4
DOUBLE_COLUMN = 7.0

#: Fonts and strokes of every styled figure (8 pt text, 7 pt ticks and legends: readable
#: at print size, where matplotlib's 10 pt default is drawn on a 6.4 in figure).
RC = {
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7,
    "ytick.labelsize": 7, "legend.fontsize": 7, "figure.titlesize": 9,
    "legend.frameon": False, "axes.spines.top": False, "axes.spines.right": False,
    "lines.linewidth": 1.3, "lines.markersize": 4, "axes.linewidth": 0.8,
    "hatch.linewidth": 0.6, "savefig.dpi": 150, "figure.dpi": 100,
}

#: Okabe & Ito (2008), "Color universal design": distinguishable under the common colour
#: vision deficiencies. Yellow is left out of the method colours (too light on white).
OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky blue": "#56B4E9",
    "bluish green": "#009E73", "yellow": "#F0E442", "blue": "#0072B2",
    "vermillion": "#D55E00", "reddish purple": "#CC79A7", "grey": "#999999",
}
_C = OKABE_ITO

#: The colour of every method a paper names, the same in every figure. Methods of one
#: paper have distinct colours; two papers may reuse a colour (their methods never share a
#: figure). A feature-selection / feature-transformation pair of one method (LM3FS /
#: LM3FT, ...) shares its colour: the renderer tells them apart by line style. Variants
#: of a label ("SparseMI random t=0", "RS (10)") take the colour of their base label, see
#: :func:`method_colour`.
METHOD_COLOURS = {
    # MSSBoost (Yan et al. 2007)
    "MSSBoost": _C["blue"], "RSBag": _C["orange"], "NSBoost": _C["bluish green"],
    "Bagging": _C["vermillion"], "Subspace": _C["reddish purple"], "Baseline": _C["black"],
    "MSSBoost (intercept)": _C["sky blue"],   # MSSBoost started at the labels' log-odds
    # SparseMI (Fu et al. 2013); Fig. 3's initialisation schemes
    "SparseMI": _C["blue"], "MI-Kernel": _C["orange"], "MILES": _C["bluish green"],
    "mi-SVM": _C["vermillion"], "MI-SVM": _C["reddish purple"], "RS": _C["sky blue"],
    "RSVM": _C["grey"], "SparseMI random": _C["blue"], "SparseMI kmeans": _C["orange"],
    "SparseMI svm": _C["bluish green"], "SparseMI literal step": _C["vermillion"],
    # HFSS (Gao et al. 2005)
    "HFSS (all)": _C["blue"], "HFSS (bestK)": _C["orange"], "HFSS (bestK+PCA)": _C["bluish green"],
    "HFSS (forward)": _C["reddish purple"], "One-shot SVM": _C["grey"], "bestK": _C["vermillion"],
    "full ensemble": _C["black"],
    # LM3FE (multi-view feature extraction)
    "LM3FS": _C["vermillion"], "LM3FT": _C["vermillion"], "LM3FE": _C["vermillion"],
    "SSMVFS": _C["blue"], "SSMVFT": _C["blue"], "MTFS": _C["bluish green"],
    "MTFT": _C["bluish green"], "RFS": _C["orange"], "RFT": _C["orange"],
    "TMFS": _C["reddish purple"], "CAT": _C["sky blue"], "BSF": _C["grey"],
}
_FALLBACK = (_C["blue"], _C["orange"], _C["bluish green"], _C["vermillion"],
             _C["reddish purple"], _C["sky blue"], _C["grey"], _C["black"])

#: The legend label of the paper's values in every figure.
PAPER_LABEL = "paper"


def _base_label(label):
    """'SparseMI random t=0' -> 'SparseMI random'; 'RS (10)' -> 'RS'."""
    label = str(label)
    for suffix in (" t=0",):
        if label.endswith(suffix):
            return label[: -len(suffix)]
    if label.endswith(")") and " (" in label and label not in METHOD_COLOURS:
        head, tail = label.rsplit(" (", 1)
        if tail[:-1].replace(".", "").isdigit():
            return head
    return label


def method_colour(label):
    """The one colour of method ``label`` in every figure: :data:`METHOD_COLOURS` of the
    label or its base label, else a colour of the palette chosen by a hash of the name (the
    same in every process)."""
    for name in (str(label), _base_label(label)):
        if name in METHOD_COLOURS:
            return METHOD_COLOURS[name]
    digest = hashlib.sha256(str(label).encode()).digest()
    return _FALLBACK[int.from_bytes(digest[:4], "big") % len(_FALLBACK)]


def styled(render):
    """Run the renderer ``render`` with the fonts and strokes of :data:`RC` (matplotlib
    reads them when an artist is made, so the figure keeps them once drawn)."""
    @functools.wraps(render)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(RC):
            return render(*args, **kwargs)
    return wrapper


def panel_grid(n, *, ncols=None, width=DOUBLE_COLUMN, panel_height=2.2, sharey=False,
               sharex=False, **kw):
    """A figure of ``n`` panels in a grid (never a long strip): ``ncols`` columns (default
    up to 3 for a double-column width, 2 for a single one), rows as needed, ``width``
    inches wide, each row ``panel_height`` high; unused cells are removed. Constrained
    layout keeps every label inside the figure. Returns (fig, flat list of n axes)."""
    if ncols is None:
        ncols = min(n, 3 if width > SINGLE_COLUMN else 2)
    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    fig, grid = plt.subplots(nrows, ncols, figsize=(width, panel_height * nrows),
                             squeeze=False, sharey=sharey, sharex=sharex, layout="constrained",
                             **kw)
    axes = list(grid.ravel())
    for ax in axes[n:]:
        ax.remove()
    return fig, axes[:n]


def paper_kw(colour="black", *, kind="marker", label=PAPER_LABEL):
    """Keyword arguments of ``ax.plot`` for the paper's values: hollow markers (``kind=
    "marker"``, points the paper's tables give) or a dashed line (``"line"``, a curve the
    paper draws), in the method's ``colour``, labelled :data:`PAPER_LABEL` (``label``
    may say more, e.g. "paper (Table I)"; it starts with "paper")."""
    if not label.startswith(PAPER_LABEL):
        raise ValueError(f"a paper value's label starts with {PAPER_LABEL!r}, not {label!r}")
    if kind == "line":
        return dict(ls="--", lw=1.2, color=colour, label=label, zorder=4)
    return dict(ls="none", marker="D", ms=5, mfc="none", mec=colour, mew=1.3,
                label=label, zorder=5)


def data_kind(provenance, *, substitute=False):
    """What a dataset's provenance line says the runs ran on: "paper's data", "substitute
    data" (``substitute``: not the paper's set, e.g. a stand-in for one that is not public)
    or "synthetic data"."""
    if "synthetic" in str(provenance).split(":", 1)[0]:
        return "synthetic data"
    return "substitute data" if substitute else "paper's data"


def ours_label(what="ours", *, provenance="", substitute=False):
    """The legend label of our values: 'ours (paper's data)', 'ours (synthetic data)', ..."""
    return f"{what} ({data_kind(provenance, substitute=substitute)})"


def figure_legend(fig, axes=None, *, loc="outside lower center", ncols=None, handles=None,
                  labels=None, title=None):
    """One legend for the whole figure, outside the panels (it covers no data): the
    distinct labels of ``axes`` (default all) or the ``handles`` / ``labels`` given;
    ``title`` says which data the lines ran on (:func:`data_kind`)."""
    if handles is None:
        seen = {}
        for ax in axes if axes is not None else fig.axes:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab and not lab.startswith("_") and lab not in seen:
                    seen[lab] = h
        labels, handles = list(seen), list(seen.values())
    if not handles:
        return None
    ncols = ncols or min(len(handles), 4)
    return fig.legend(handles, labels, loc=loc, ncols=ncols, title=title)


def legend_cell(ax, handles, labels, *, title=None, ncols=1):
    """Use the spare grid cell ``ax`` for the figure's legend (it holds no data)."""
    ax.set_axis_off()
    return ax.legend(handles, labels, loc="center", ncols=ncols, title=title)


def shared_ylim(axes, lo=None, hi=None, pad=0.05):
    """One y range for panels that are compared: the union of their data limits (widened
    by ``pad`` of the span, clipped to [lo, hi] when given)."""
    bottoms, tops = zip(*(ax.dataLim.intervaly for ax in axes))
    b, t = float(np.nanmin(bottoms)), float(np.nanmax(tops))
    span = (t - b) or 1.0
    b, t = b - pad * span, t + pad * span
    if lo is not None:
        b = max(b, lo)
    if hi is not None:
        t = min(t, hi)
    for ax in axes:
        ax.set_ylim(b, t)
    return b, t


def save_styled(fig, out_dir, name, *, title):
    """Save ``fig`` as ``<name>.png`` / ``.pdf`` with the one-line ``title`` on top (no
    caption in the image: the caller writes it to the target's ``table.md``)."""
    from .figures import save_figure

    if "\n" in title:
        raise ValueError(f"figure title {title!r}: one line only (the caption goes to table.md)")
    fig.suptitle(title)
    return save_figure(fig, out_dir, name, layout=False)

"""Figures saved as PNG and PDF with the non-interactive Agg backend.

One method is drawn in one colour in every figure (:func:`method_colour`, of
:mod:`mlkit.report.style`, which also holds the figure style of new renderers).
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import MaxNLocator  # noqa: E402

from .._io import atomic_path  # noqa: E402
from .style import METHOD_COLOURS, method_colour  # noqa: E402,F401  (one colour per method)

__all__ = ["new_figure", "save_figure", "method_colour", "integer_ticks", "KEEP_OPEN"]

#: When a list, :func:`save_figure` appends each figure to it and leaves it open (tests
#: inspect the drawn artists); when None (production) figures are closed once saved.
KEEP_OPEN = None


def integer_ticks(axis):
    """Integer-only ticks on ``axis`` (``ax.xaxis``/``ax.yaxis``), for counts of models."""
    axis.set_major_locator(MaxNLocator(integer=True))


def new_figure(ncols=1, *, width=4.2, height=3.4, **kw):
    """A figure with ``ncols`` side-by-side axes of the given size each."""
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False, **kw)
    return fig, axes[0]


def _add_caption(fig, caption):
    """Write ``caption`` under the axes, wrapped to the figure's width, and lay the figure
    out so that nothing (tick labels, x labels, the caption) overlaps. The figure grows
    by the caption's height, so a long caption never shrinks the axes."""
    import textwrap

    width_in, height_in = fig.get_size_inches()
    fontsize = 6.5
    # ~0.55 em per character on average for the default sans-serif font
    chars = max(30, int(width_in * 72 / (0.55 * fontsize)) - 4)
    text = "\n".join(textwrap.wrap(caption, chars))
    cap = fig.text(0.5, 0.0, text, ha="center", va="bottom", fontsize=fontsize)
    fig.draw_without_rendering()          # places the text; no pixels needed to measure it
    cap_in = cap.get_window_extent(fig.canvas.get_renderer()).height / fig.dpi + 0.08
    fig.set_size_inches(width_in, height_in + cap_in)
    cap.set_y(0.04 / (height_in + cap_in))
    # lay out the axes in the original height above the caption
    fig.tight_layout(rect=(0, cap_in / (height_in + cap_in), 1, 1))


def save_figure(fig, out_dir, name, caption=None, *, layout=True):
    """Save ``fig`` as ``<name>.png`` (150 dpi) and ``<name>.pdf`` atomically; close it.
    The files carry no timestamp: re-rendering the same figure rewrites the same bytes.

    ``caption`` (the data's provenance) is written under the axes in small type, with
    the layout shrunk so that it overlaps no tick or axis label. ``layout=False``: the
    figure lays itself out (constrained layout, :func:`mlkit.report.style.panel_grid`).
    """
    out_dir = Path(out_dir)
    if caption:
        _add_caption(fig, caption)
    elif layout:
        fig.tight_layout()
    paths = _write_files(fig, out_dir, name)
    if KEEP_OPEN is not None:
        fig.set_label(name)
        KEEP_OPEN.append(fig)
    else:
        plt.close(fig)
    return paths


def _write_files(fig, out_dir, name):
    """Write ``<name>.png`` and ``<name>.pdf`` atomically; return their paths."""
    paths = []
    for ext in ("png", "pdf"):
        target = out_dir / f"{name}.{ext}"
        # no creation date in the PDF: the same figure gives the same bytes on a re-render
        meta = {"CreationDate": None} if ext == "pdf" else None
        with atomic_path(target) as tmp:
            fig.savefig(tmp, format=ext, dpi=150, metadata=meta)
        paths.append(target)
    return paths

"""Figures saved as PNG and PDF with the non-interactive Agg backend."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from .._io import atomic_path  # noqa: E402

__all__ = ["new_figure", "save_figure"]


def new_figure(ncols=1, *, width=4.2, height=3.4, **kw):
    """A figure with ``ncols`` side-by-side axes of the given size each."""
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False, **kw)
    return fig, axes[0]


def save_figure(fig, out_dir, name, caption=None):
    """Save ``fig`` as ``<name>.png`` (150 dpi) and ``<name>.pdf`` atomically; close it.

    ``caption`` (the data's provenance) is written under the axes in small type.
    """
    out_dir = Path(out_dir)
    if caption:
        fig.text(0.5, 0.005, caption, ha="center", va="bottom", fontsize=6.5, wrap=True)
        fig.tight_layout(rect=(0, 0.06, 1, 1))
    else:
        fig.tight_layout()
    paths = []
    for ext in ("png", "pdf"):
        target = out_dir / f"{name}.{ext}"
        with atomic_path(target) as tmp:
            fig.savefig(tmp, format=ext, dpi=150)
        paths.append(target)
    plt.close(fig)
    return paths

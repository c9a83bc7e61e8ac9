"""Tables (Markdown, CSV, LaTeX) and figures (PNG, PDF) with the paper's numbers beside ours."""

from .figures import new_figure, save_figure
from .tables import format_mean_ci, write_table

__all__ = ["write_table", "format_mean_ci", "save_figure", "new_figure"]

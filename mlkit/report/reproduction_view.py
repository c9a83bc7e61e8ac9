"""Which files under the results folder the reproduction report reads: in a git checkout
the files git tracks (what the committed results give, the same on every machine: ``--quick``
outputs are git-ignored), else every file; the claims see the same files, run records
included (:meth:`ResultsView.for_claims`)."""

import contextlib
import subprocess
import tempfile
from pathlib import Path

from .._errors import MlkitError
from .._paths import results_root, using_results

__all__ = ["ResultsView"]


class ResultsView:
    """The results root and the files of it the page may read: in a git checkout the files
    git tracks (what the committed results give), else (or with ``untracked``) every file."""

    def __init__(self, root=None, *, untracked=False):
        self.root = Path(root) if root is not None else results_root()
        if not self.root.is_dir():
            raise MlkitError(f"no results folder {self.root}: run `mlkit report` from the "
                             "project root or set MLKIT_RESULTS")
        self._base = self.root.resolve()
        self.tracked = None if untracked else _git_tracked(self._base)

    def has(self, path):
        path = Path(path)
        if not path.is_file():
            return False
        if self.tracked is None:
            return True
        try:
            return path.resolve().relative_to(self._base).as_posix() in self.tracked
        except ValueError:
            return False

    def target_dir(self, target, quick):
        out = self.root / target.paper / (target.artifact + ("-quick" if quick else ""))
        return out if self.has(out / "summary.json") and self.has(out / "manifest.json") \
            else None

    @contextlib.contextmanager
    def for_claims(self):
        """MLKIT_RESULTS pointing at a view of the results holding only the files the page may
        read (the claims find their results with ``saved_results`` and their run records from
        each manifest's own folder, :func:`mlkit.manifest.runs_dir_of`); yields the path the
        claims will print, to be shown as the results root. In a git checkout the view is a
        folder tree of links to the tracked files alone, so an untracked run record never
        reaches a claim."""
        if self.tracked is None:
            with using_results(self._base):
                yield str(self._base)
            return
        with tempfile.TemporaryDirectory(prefix="mlkit-report-") as tmp:
            for rel in sorted(self.tracked):
                src = self._base / rel
                if not src.is_file():
                    continue            # tracked, deleted in the working tree
                dst = Path(tmp, rel)
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.symlink_to(src)
            with using_results(tmp):
                yield tmp


def _git_tracked(base):
    """Paths (relative to ``base``) of the files git tracks below it, or None outside git."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", "."], cwd=base,
                             capture_output=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return {p for p in out.decode("utf-8", "surrogateescape").split("\0") if p}

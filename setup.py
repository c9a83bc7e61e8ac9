"""Build hook: ship the top-level ``configs/`` inside the package.

The configs stay where users edit them (``configs/<paper>/<artifact>.yaml`` of the clone);
a built wheel (``pip wheel .``, ``pip install .``) carries a copy of every one of them as
package data ``mlkit/_configs/<paper>/<artifact>.yaml``, which :func:`mlkit.config.configs_dir`
reads when mlkit does not run from its clone. Everything else is in ``pyproject.toml``.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
CONFIGS = ROOT / "configs"
#: where the copies go inside the package (mlkit.config.PACKAGED_CONFIGS)
PACKAGED = Path("mlkit") / "_configs"


class BuildPyWithConfigs(build_py):
    """``build_py``, then a copy of every ``configs/**/*.yaml`` into ``mlkit/_configs/``.

    An editable install reads the clone's ``configs/`` itself, so it gets no copy (a copy
    would go stale as soon as a config is edited)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for path in sorted(CONFIGS.rglob("*.yaml")):
            dest = Path(self.build_lib) / PACKAGED / path.relative_to(CONFIGS)
            self.mkpath(str(dest.parent))
            self.copy_file(str(path), str(dest))

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        return outputs + [str(Path(self.build_lib) / PACKAGED / p.relative_to(CONFIGS))
                          for p in sorted(CONFIGS.rglob("*.yaml"))]


setup(cmdclass={"build_py": BuildPyWithConfigs})

"""mlkit: reference implementations of four learning papers, reproduced from YAML configs.

The estimators are importable without the CLI::

    from mlkit.methods import MSSBoost, NSBoost, RSBag
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mlkit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]

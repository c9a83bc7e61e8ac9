"""Sphinx configuration of mlkit's documentation: the reference page (docs/reference.md,
through myst-parser), the API pages built from the numpydoc docstrings (autodoc +
autosummary + numpydoc) and the command line (sphinx-click).

Build, with warnings as errors (``pip install -e ".[docs]"``)::

    sphinx-build -W --keep-going -b html docs docs/_build/html
"""

import inspect
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

import mlkit  # noqa: E402

project = "mlkit"
author = "mlkit developers"
copyright = "mlkit developers"
version = release = getattr(mlkit, "__version__", "0.1.0")

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_click",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
# "--config" stays two hyphens (option names in the CLI pages and the reference)
smartquotes = False

# autodoc / autosummary: one page per public object, written under api/generated/ at build
# time (not committed)
autosummary_generate = True
autosummary_imported_members = False
# miSVM and MISVM differ only in case: distinct file names on case-insensitive file systems
autosummary_filename_map = {"mlkit.methods.miSVM": "mlkit.methods.miSVM-instance-level"}
autodoc_typehints = "none"          # numpydoc's Parameters sections carry the types

# numpydoc: the class pages list their methods through the autosummary template, so
# numpydoc adds no member tables of its own
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()

# myst-parser: docs/reference.md as written for GitHub; "#data" style links need anchors
myst_heading_anchors = 3

html_theme = "alabaster"
html_static_path = []
html_title = "mlkit"


def _skip_foreign(app, what, name, obj, skip, options):
    """Document the methods mlkit defines (its own or those of its base classes), not those
    a class inherits from scikit-learn (``get_params``, ``score``, the generated
    ``set_*_request``): their pages are scikit-learn's."""
    if what != "class" or skip:
        return None
    target = getattr(obj, "fget", obj)
    module = getattr(target, "__module__", None) or ""
    if callable(target) or isinstance(obj, property):
        return None if module.startswith("mlkit") else True
    return None


_CITED = re.compile(r"\[([A-Za-z0-9]+)\]_")
_DEFINED = re.compile(r"^\.\. \[([A-Za-z0-9]+)\]")


def _module_references(module_name):
    """{label: lines} of the ``.. [label]`` entries in a module docstring's References."""
    doc = inspect.getdoc(sys.modules.get(module_name)) or ""
    entries, label = {}, None
    for line in doc.splitlines():
        match = _DEFINED.match(line)
        if match:
            label = match.group(1)
            entries[label] = [line]
        elif label and line.startswith("   "):
            entries[label].append(line)
        else:
            label = None
    return entries


def _add_module_references(app, what, name, obj, options, lines):
    """Many classes and functions cite their module's references (``[1]_``, listed once in
    the module docstring); add the cited entries to the object's own References section so
    that its page (and numpydoc) has them."""
    cited = [label for line in lines for label in _CITED.findall(line)]
    defined = {m.group(1) for line in lines if (m := _DEFINED.match(line))}
    missing = list(dict.fromkeys(label for label in cited if label not in defined))
    if not missing:
        return
    target = getattr(obj, "fget", obj)            # a property's docstring is its getter's
    module = getattr(target, "__module__", None) or name.rpartition(".")[0]
    entries = _module_references(module)
    add = [line for label in missing if label in entries for line in entries[label] + [""]]
    if not add:
        return
    if "References" in lines:
        at = lines.index("References") + 2
        lines[at:at] = add
    else:
        lines.extend(["", "References", "----------", *add])


_PARENT_LINK = re.compile(r"\[([^\]]+)\]\(\.\./([^)#]+)[^)]*\)")


def _unlink_parent_files(app, docname, source):
    """docs/reference.md links to files of the repository outside docs/ (right on GitHub);
    here they are named, not linked."""
    source[0] = _PARENT_LINK.sub(r"\1 (``\2`` in the repository)", source[0])


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign)
    # before numpydoc (priority 500), which renames the citations it finds defined
    app.connect("autodoc-process-docstring", _add_module_references, priority=400)
    app.connect("source-read", _unlink_parent_files)

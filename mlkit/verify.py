"""Each paper's claims as functions of saved results, checked by ``mlkit verify PAPER``.

A paper module registers its claims with :func:`register_claim`; each claim function takes
nothing, reads the saved results it needs (through :func:`mlkit.targets.saved_results`) and
returns a :class:`ClaimResult`: passed True/False, or None when the results it needs have
not been produced yet, with the measured numbers in ``measured``.
"""

from dataclasses import dataclass
from typing import Callable

from .registry import CLAIMS

__all__ = ["Claim", "ClaimResult", "register_claim", "claims_of", "check", "evaluate"]


@dataclass(frozen=True)
class ClaimResult:
    passed: object          # True, False, or None (not checked: results missing)
    measured: str


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
    """``claim.check()``, with no verdict (passed=None) when any saved results it read are
    not the runs their target's config and methods make now (outdated by a config or
    numerics revision change, or partial: made by another config): the numbers are still
    shown."""
    from ._errors import MlkitError
    from ._io import read_json
    from .targets import outdated_runs, reads_of_saved_results

    reads_of_saved_results()
    result = claim.check()
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
                             f"rerun to update) | {result.measured}")


def check(paper):
    """[(Claim, ClaimResult)] for every claim of ``paper``, by claim number."""
    claims = sorted(claims_of(paper), key=lambda c: (len(c.number), c.number))
    return [(c, evaluate(c)) for c in claims]

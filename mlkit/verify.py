"""Each paper's claims as functions of saved results, checked by ``mlkit verify PAPER``.

A paper module registers its claims with :func:`register_claim`; each claim function takes
nothing, reads the saved results it needs (through :func:`mlkit.targets.saved_results`) and
returns a :class:`ClaimResult`: passed True/False, or None when the results it needs have
not been produced yet, with the measured numbers in ``measured``.
"""

from dataclasses import dataclass
from typing import Callable

from .registry import CLAIMS

__all__ = ["Claim", "ClaimResult", "register_claim", "claims_of", "check"]


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


def check(paper):
    """[(Claim, ClaimResult)] for every claim of ``paper``, by claim number."""
    claims = sorted(claims_of(paper), key=lambda c: (len(c.number), c.number))
    return [(c, c.check()) for c in claims]

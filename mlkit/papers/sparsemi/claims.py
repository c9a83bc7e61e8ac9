"""Claims of SparseMI (spec-sparsemi "Claims to check") from saved results; thresholds from
the configs' ``thresholds:``. A claim whose results are missing is NOT RUN (passed=None)."""

import numpy as np
from scipy import stats

from ...targets import read_summary, resolve_target, saved_results, target_spec
from ...verify import ClaimResult, register_claim

PAPER = "sparsemi"


def _saved(artifact):
    target = resolve_target(f"{PAPER}/{artifact}")
    records, out_dir, quick = saved_results(target)
    if records is None:
        return None, None, None, None
    return target, records, out_dir, quick


def _missing(artifact):
    return ClaimResult(None, f"no saved results: run `mlkit reproduce {PAPER}/{artifact}` "
                             "(or with --quick) first")


def _acc(records, dataset, method):
    recs = sorted((r for r in records if r["dataset"] == dataset and r["method"] == method),
                  key=lambda r: (r["repeat"], r["fold"]))
    return np.array([100 * r["metrics"]["accuracy"] for r in recs])


def paired_worse(a, b, alpha):
    """True when ``a`` is significantly below ``b`` (paired t-test, two-sided, level alpha;
    with fewer than 2 pairs: a plain comparison of means)."""
    if len(a) != len(b) or len(a) == 0:
        return False
    if len(a) < 2 or np.allclose(a, b):
        return bool(a.mean() < b.mean()) if len(a) < 2 else False
    p = stats.ttest_rel(a, b).pvalue
    return bool(p < alpha and a.mean() < b.mean())


def _tag(out_dir, quick):
    return f" [{'quick' if quick else 'full'} results in {out_dir}]"


@register_claim(PAPER, 1, "SparseMI (tuned N_XV) is within 0.4 points of MI-Kernel (except "
                "MUSK2, -1.7) with far fewer XVs")
def claim_1():
    """Pass when, on every Table I set, SparseMI's mean accuracy is at least MI-Kernel's minus
    ``mikernel_gap`` (``mikernel_gap_musk2`` on MUSK2) and it uses fewer XVs."""
    target, records, out_dir, quick = _saved("table1")
    if target is None:
        return _missing("table1")
    th = target_spec(target)[0].thresholds
    parts, ok = [], True
    for ds in sorted({r["dataset"] for r in records}):
        s, k = _acc(records, ds, "SparseMI"), _acc(records, ds, "MI-Kernel")
        if not len(s) or not len(k):
            continue
        gap = th["mikernel_gap_musk2"] if ds == "musk2" else th["mikernel_gap"]
        nx = [np.mean([r["model"].get("n_xv", np.nan) for r in records
                       if r["dataset"] == ds and r["method"] == m])
              for m in ("SparseMI", "MI-Kernel")]
        ok &= bool(s.mean() >= k.mean() - gap and nx[0] < nx[1])
        parts.append(f"{ds}: {s.mean():.2f} vs {k.mean():.2f} ({nx[0]:.0f} vs {nx[1]:.0f} XVs)")
    if not parts:
        return _missing("table1")
    return ClaimResult(ok, "SparseMI vs MI-Kernel: " + "; ".join(parts) + _tag(out_dir, quick))


@register_claim(PAPER, 4, "The objective never increases; Fig. 2: the XVs move to the centre "
                "(binary) and to mu1, mu3 (3-class)")
def claim_4():
    """Pass when every recorded objective of fig2 is non-increasing and the final XVs lie
    within ``xv_distance`` (fig2.yaml's ``thresholds:``) of the paper's positions: the centre
    for the binary problem, mu1 = (-2, 2) and mu3 = (2, -2) (in some order) for the 3-class
    one. The accuracy-vs-iteration part of the claim needs fig4 (not built yet)."""
    target, records, out_dir, quick = _saved("fig2")
    if target is None:
        return _missing("fig2")
    th = target_spec(target)[0].thresholds
    figs = read_summary(out_dir)["figures"]
    goals = {"sparsemi-binary": np.array([[0.0, 0.0]]),
             "sparsemi-3class": np.array([[-2.0, 2.0], [2.0, -2.0]])}
    ok, parts = True, []
    for ds, goal in goals.items():
        if f"final_xvs.{ds}" not in figs:
            continue
        final = np.asarray(figs[f"final_xvs.{ds}"])
        # each goal matched by its nearest final XV
        dist = np.linalg.norm(final[None, :, :] - goal[:, None, :], axis=2).min(axis=1).max()
        mono = figs[f"monotone.{ds}"]
        ok &= bool(mono and dist <= th["xv_distance"])
        parts.append(f"{ds}: objective {'non-increasing' if mono else 'INCREASES'}, final XVs "
                     f"{np.round(final, 2).tolist()} ({dist:.2f} from the paper's positions)")
    if not parts:
        return _missing("fig2")
    return ClaimResult(ok, "; ".join(parts) + _tag(out_dir, quick))

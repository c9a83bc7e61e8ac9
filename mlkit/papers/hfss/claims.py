"""The claims of Gao & Fan (MIR 2005) checked on saved runs (``mlkit verify hfss``), on the
real grouped-feature datasets only (hfss-synthetic is reported, never judged). Thresholds are
the ``thresholds:`` of the configs named in each claim. A "raises accuracy" or "best" is a
two-sided paired t-test at the level ``alpha`` of ``claims.yaml`` (the paper states none:
0.05): over the one-vs-one problems of a run (claim 1), or over the repetitions (claim 4);
a difference that is not significant is a tie."""

import functools

import numpy as np

from ..._io import read_json
from ...config import DatasetSpec, ProtocolSpec
from ...registry import DATASETS
from ...stats import paired_ttest, run_values
from ...targets import resolve_target, saved_results, target_spec
from ...verify import ClaimResult, paper_alpha, register_claim
from .renderers import (BESTK, FULL, PCA, _by, curves_of, ensemble_summary,
                        oob_test_pairs, problem_average_accuracy, roughness)

PAPER = "hfss"


def _source(d):
    """The registered dataset a config's dataset draws from (hfss-subset: its ``source``)."""
    return (d.params or {}).get("source", d.name) if d.name == "hfss-subset" else d.name


def training_size(d, protocol):
    """Table 3's size of a dataset row: the training samples of one one-vs-one problem
    (2 x ``n_labelled`` of the labelled protocol; an hfss-subset's ``per_class`` kept
    samples, split 50/50, in configs made before it)."""
    p = d.protocol_over(protocol)
    if p.split == "labelled" and p.n_labelled is not None:
        return 2 * p.n_labelled
    return int(d.params["per_class"])


def real_datasets(out_dir):
    """Labels of the real (not synthetic) datasets of a saved run, from its manifest."""
    out = []
    for raw in read_json(out_dir / "manifest.json")["config"]["datasets"]:
        d = DatasetSpec.model_validate(raw)
        if not DATASETS.entry(_source(d)).meta.get("synthetic", False):
            out.append(d.display)
    return out


def _runs(artifact):
    records, out_dir, quick = saved_results(resolve_target(f"{PAPER}/{artifact}"))
    return records, out_dir, quick


def _claim(*artifacts, thresholds_of):
    """Decorate ``fn(runs: {artifact: (records, out_dir)}, thresholds) -> (ok, parts)``."""
    def decorate(fn):
        @functools.wraps(fn)
        def claim():
            runs, where = {}, []
            for art in artifacts:
                records, out_dir, quick = _runs(art)
                if records is None:
                    return ClaimResult(None, f"no saved results: run `mlkit reproduce "
                                             f"hfss/{art}` (or with --quick) first")
                runs[art] = (records, out_dir)
                where.append(f"{art}: {'quick' if quick else 'full'} results in {out_dir}")
            th = target_spec(resolve_target(f"{PAPER}/{thresholds_of}"))[0].thresholds
            ok, parts = fn(runs, th)
            if not parts:
                return ClaimResult(None, "no real dataset in the saved runs (synthetic data "
                                         f"are reported, not judged) [{'; '.join(where)}]")
            return ClaimResult(bool(ok), " | ".join(parts) + f" [{'; '.join(where)}]")
        return claim
    return decorate


def problem_oob(records, key="oob_accuracy"):
    """{(repeat, fold, classes): OOB accuracy %} of every one-vs-one problem of the runs
    ``records``: the key that pairs a problem with the same problem of another ensemble."""
    return {(r["repeat"], r["fold"], tuple(p["classes"])): 100 * float(p[key])
            for r in records for p in r["model"]["problems"] if p[key] is not None}


def gain_verdict(best, full, alpha):
    """Claim 1's "raises accuracy" on one dataset: ``(verdict, PairedTest)``, the verdict
    True when bestK's OOB accuracy is significantly above the full ensemble's (paired t over
    the one-vs-one problems), False when not, None (not judged) when the full ensemble is
    at 100% on every problem: there is no room to raise it."""
    a, b = problem_oob(best), problem_oob(full, "oob_accuracy_all")
    test = paired_ttest(a, b, alpha=alpha, missing="drop")
    if b and min(b.values()) >= 100 - 1e-9:
        return None, test
    return test.better, test


def run_accuracy(record):
    """A table3 run's test accuracy (%): the mean over its one-vs-one problems when the run
    recorded them (``problem_test``, the paper's statistic), else its multi-class accuracy."""
    problems = [v for v in record.get("test_extras", {}).get("problem_test", [])
                if v is not None]
    return 100 * (float(np.mean(problems)) if problems else record["metrics"]["accuracy"])


def roughness_ratio(best, full):
    """bestK's curve roughness over the full ensemble's: NaN when either curve is missing
    (not judged); a flat full curve (0) makes any rough bestK curve infinitely rougher and
    two flat curves equally smooth (1)."""
    if best is None or full is None or np.isnan(best) or np.isnan(full):
        return float("nan")
    if full > 0:
        return best / full
    return float("inf") if best > 0 else 1.0


def _tail(curve):
    """The part of an OOB curve the smoothness test reads: its last two thirds, NaN dropped
    (the start :func:`roughness` is given)."""
    c = np.asarray(curve, float)
    c = c[len(c) // 3:]
    return c[~np.isnan(c)]


def smoothness_verdict(full_curve, best_curve, max_ratio):
    """Claim 1's smoothness part on one problem (Fig. 3 vs Fig. 6 OOB curves, each read over
    its last two thirds): ``(verdict, text)``, the verdict True / False, or None (not judged,
    the text says why, with the numbers):

    - a curve missing: not judged (said);
    - the full ensemble's curve flat at the ceiling (OOB 100% at every point read): not
      judged, there is no room to smooth (any wiggle of bestK would give an infinite ratio
      that says nothing about the paper's claim);
    - otherwise bestK's roughness over the full ensemble's (:func:`roughness_ratio`; a flat
      full curve below 100% beside a rough bestK curve is infinitely rougher: FAIL) must be
      at most ``max_ratio``."""
    if full_curve is None or best_curve is None:
        missing = " and ".join(m for m, c in (("all", full_curve), ("bestK", best_curve))
                               if c is None)
        return None, f"curve roughness not judged (no Fig. 3 curve of {missing})"
    full_tail, best_tail = _tail(full_curve), _tail(best_curve)
    r_full, r_best = roughness(full_tail), roughness(best_tail)
    if full_tail.size > 1 and np.all(full_tail >= 1 - 1e-12):
        return None, ("curve roughness not judged (the full ensemble's curve is flat at 100%: "
                      f"no room to smooth; roughness all {100 * r_full:.2f}, bestK "
                      f"{100 * r_best:.2f} pts)")
    if full_tail.size > 1 and r_full == 0 and r_best == 0:
        return None, ("curve roughness not judged (both curves flat: nothing to smooth, "
                      "so no evidence either way)")
    ratio = roughness_ratio(r_best, r_full)
    if np.isnan(ratio):
        return None, "curve roughness not judged (a curve has fewer than 2 points)"
    ok = bool(ratio <= max_ratio)
    return ok, (f"curve roughness bestK/all {ratio:.2f} (all {100 * r_full:.2f}, bestK "
                f"{100 * r_best:.2f} pts; <= {max_ratio:g})")


@register_claim(PAPER, 1, "bestK (inter-subspace) selection raises accuracy over the full "
                "ensemble while cutting dimensionality a lot, and makes the bagging curve "
                "smoother")
@_claim("baseline", "fig3", thresholds_of="bestk")
def claim_1(runs, th):
    """Per real dataset: the accuracy gain (bestK significantly above the full ensemble,
    :func:`gain_verdict`, by at least ``min_gain`` points) and the dimensionality cut
    (baseline's runs) and the smoothness (fig3's curves, :func:`smoothness_verdict`). A
    dataset whose gain or smoothness is not judged is decided on the other parts, and says
    so; when no dataset's smoothness can be judged, the verdict text says the claim was
    decided on the gain and the cut only."""
    records, out_dir = runs["baseline"]
    curves, _ = runs["fig3"]
    ok, parts, judged = True, [], 0
    for ds in real_datasets(out_dir):
        full, best = _by(records, ds, FULL), _by(records, ds, BESTK)
        if not full or not best:
            continue
        f, b = ensemble_summary(full), ensemble_summary(best)
        gain = b["oob"][0] - f["oob_all"][0]
        raised, test = gain_verdict(best, full, paper_alpha(PAPER))
        cut = 100 * (1 - b["dims"] / b["total"])
        curve = {m: curves_of(_by(curves, ds, m)[0])[0] if _by(curves, ds, m) else None
                 for m in (FULL, BESTK)}
        smooth, smooth_text = smoothness_verdict(curve[FULL], curve[BESTK],
                                                 th["max_roughness_ratio"])
        judged += smooth is not None
        this = (raised is not False and gain >= th["min_gain"]
                and cut >= th["min_dim_reduction"] and smooth is not False)
        ok &= this
        on = [part for part, v in (("gain", raised), ("smoothness", smooth)) if v is None]
        parts.append(f"{ds}: OOB {f['oob_all'][0]:.2f} -> {b['oob'][0]:.2f} ({gain:+.2f} pts, "
                     f">= {th['min_gain']:g}; paired t over {test.n} problems: "
                     f"{test.verdict()}"
                     + ("; not judged: the full ensemble is at 100% on every problem"
                        if raised is None else "")
                     + f"); dims {b['total']:.0f} -> {b['dims']:.1f} "
                     f"(-{cut:.1f}%, >= {th['min_dim_reduction']:g}%); {smooth_text} "
                     f"{'PASS' if this else 'FAIL'}"
                     + (f" (without {' and '.join(on)})" if on else ""))
    if parts and not judged:
        parts.append("smoothness not judged on any real dataset: the claim is decided on the "
                     "accuracy gain and the dimensionality cut only")
    return ok, parts


@register_claim(PAPER, 2, "Adding PCA inside subspaces cuts dimensionality further at about the "
                "same accuracy")
@_claim("baseline", thresholds_of="table2")
def claim_2(runs, th):
    records, out_dir = runs["baseline"]
    ok, parts = True, []
    for ds in real_datasets(out_dir):
        best, pca = _by(records, ds, BESTK), _by(records, ds, PCA)
        if not best or not pca:
            continue
        b, p = ensemble_summary(best), ensemble_summary(pca)
        cut = 100 * (1 - p["dims"] / b["dims"])
        drop = b["oob"][0] - p["oob"][0]
        this = cut >= th["min_dim_cut"] and drop <= th["max_accuracy_drop"]
        ok &= this
        parts.append(f"{ds}: dims {b['dims']:.1f} -> {p['dims']:.1f} (-{cut:.1f}%, >= "
                     f"{th['min_dim_cut']:g}%); OOB {b['oob'][0]:.2f} -> {p['oob'][0]:.2f} "
                     f"(drop {drop:.2f} <= {th['max_accuracy_drop']:g}) "
                     f"{'PASS' if this else 'FAIL'}")
    return ok, parts


@register_claim(PAPER, 3, "OOB accuracy tracks test accuracy closely (its maximum picks the best "
                "test subset in Fig. 5)")
@_claim("fig3", thresholds_of="fig3")
def claim_3(runs, th):
    records, out_dir = runs["fig3"]
    oob, test = [], []
    for ds in real_datasets(out_dir):
        for m in (FULL, BESTK, PCA):
            for rec in _by(records, ds, m):
                o, t = curves_of(rec)
                if t.size:
                    oob.append(100 * o[-1])
                    test.append(100 * t[-1])
    if not oob:
        return True, []                 # no real dataset: not judged
    if len(oob) < 3:
        return False, [f"only {len(oob)} problems with test curves"]
    oob, test = np.array(oob), np.array(test)
    r = float(np.corrcoef(oob, test)[0, 1]) if oob.std() > 0 and test.std() > 0 else float("nan")
    gap = float(np.mean(np.abs(oob - test)))
    ok = (not np.isnan(r) and r >= th["min_correlation"]) and gap <= th["max_gap"]
    parts = []
    for ds in real_datasets(out_dir):
        for rec in _by(records, ds, "HFSS (forward)"):
            fo = np.asarray(rec["model"]["problems"][0]["forward_curve"], float)
            ft = np.asarray(rec.get("curves", {}).get("hfss_accuracy", []), float)
            if ft.size:
                k = int(np.nanargmax(fo))
                loss = 100 * (ft.max() - ft[k])
                ok_k = loss <= th["max_gap"]
                ok &= ok_k
                parts.append(f"{ds} Fig. 5: OOB max at k={k + 1}, test max at "
                             f"k={int(np.argmax(ft)) + 1}; test accuracy there {100 * ft[k]:.2f}"
                             f" vs best {100 * ft.max():.2f} ({loss:.2f} pts <= "
                             f"{th['max_gap']:g})")
    base, base_dir, _ = _runs("baseline")
    if base is not None:                 # per-problem test accuracy, when the runner keeps it
        for ds in real_datasets(base_dir):
            for m in (FULL, BESTK, PCA):
                xy = oob_test_pairs(_by(base, ds, m))
                if len(xy) >= 3 and xy[:, 0].std() > 0 and xy[:, 1].std() > 0:
                    rp = float(np.corrcoef(xy[:, 0], xy[:, 1])[0, 1])
                    ok &= rp >= th["min_correlation"]
                    parts.append(f"{ds} {m}: r(OOB, test) over {len(xy)} one-vs-one "
                                 f"problems = {rp:.3f}")
    parts.insert(0, f"{len(oob)} problems (one per real dataset x ensemble): Pearson r(OOB, test) "
                 f"= {r:.3f} (>= {th['min_correlation']:g}), mean |OOB - test| = {gap:.2f} "
                 f"points (<= {th['max_gap']:g})")
    return ok, parts


@register_claim(PAPER, 4, "With few training samples the bestK ensemble is best at every size; "
                "accuracy falls as the sample shrinks, the one-shot SVM fastest")
@_claim("table3", thresholds_of="table3")
def claim_4(runs, th):
    """Per real source and training size: bestK the best, i.e. no other method
    significantly above it (paired t over the repetitions of each run's test accuracy:
    the mean over its one-vs-one problems when recorded, else the multi-class accuracy;
    a tie counts, as a paper's bold marks ties); and, with several sizes, every method's
    accuracy falls (within ``fall_tolerance``) as the size shrinks (table3.yaml)."""
    records, out_dir = runs["table3"]
    cfg = read_json(out_dir / "manifest.json")["config"]
    protocol = ProtocolSpec.model_validate(cfg["protocol"])
    ok, parts = True, []
    by_source = {}
    for raw in cfg["datasets"]:
        d = DatasetSpec.model_validate(raw)
        if d.display in real_datasets(out_dir):
            by_source.setdefault(_source(d), []).append(
                (training_size(d, protocol), d.display))
    for src, sizes in sorted(by_source.items()):
        sizes.sort(reverse=True)
        acc, kinds = {}, set()
        for n, label in sizes:
            for m in sorted({r["method"] for r in _by(records, label)}):
                recs = _by(records, label, m)
                pp = problem_average_accuracy(recs)     # the paper's statistic, if recorded
                kinds.add("per-problem" if pp else "multi-class")
                acc.setdefault(m, []).append(
                    pp[0] if pp else 100 * np.mean([r["metrics"]["accuracy"] for r in recs]))
        best = [max(acc, key=lambda m: acc[m][i]) for i in range(len(sizes))]
        margin = min(acc["bestK"][i] - max(acc[m][i] for m in acc if m != "bestK")
                     for i in range(len(sizes)))
        vs = [{m: paired_ttest(run_values(_by(records, label, "bestK"), run_accuracy),
                               run_values(_by(records, label, m), run_accuracy),
                               alpha=paper_alpha(PAPER), missing="drop")
               for m in acc if m != "bestK"} for _, label in sizes]
        top = all(not t.worse for tests in vs for t in tests.values())
        if len(sizes) > 1:
            falls = {m: v[0] - v[-1] for m, v in acc.items()}
            mono = all(np.all(np.diff(v) <= th["fall_tolerance"]) for v in acc.values())
            trend = "falls " + ", ".join(f"{m} {v:.2f}" for m, v in falls.items()) + \
                f"; monotone {mono}"
        else:       # one size: nothing can fall; only the margin is judged
            mono, trend = True, "falls/monotone not judged (one size)"
        this = top and mono
        ok &= this
        parts.append(f"{src} sizes {[n for n, _ in sizes]} ({'/'.join(sorted(kinds))} test "
                     "acc. %: " + "; ".join(f"{m} " + "/".join(f"{v:.2f}" for v in vals)
                                            for m, vals in acc.items())
                     + f"): best mean {best}, bestK margin {margin:+.2f}; bestK vs "
                     + "; ".join(f"{n}: " + ", ".join(f"{m} {t.verdict()}"
                                                      for m, t in tests.items())
                                 for (n, _), tests in zip(sizes, vs))
                     + f" (best: none significantly above bestK: {'yes' if top else 'no'}); "
                     f"{trend} "
                     f"{'PASS' if this else 'FAIL'}")
    return ok, parts

"""The claims of Gao & Fan (MIR 2005) checked on saved runs (``mlkit verify hfss``), on the
real grouped-feature datasets only (hfss-synthetic is reported, never judged). Thresholds are
the ``thresholds:`` of the configs named in each claim. A "raises accuracy" or "best" is a
two-sided paired t-test at the level ``alpha`` of ``claims.yaml`` (the paper states none:
0.05): over the one-vs-one problems of a run (claim 1), or over the repetitions (claim 4);
a difference that is not significant is a tie."""

import functools

import numpy as np
import scipy.stats as _st

from ..._io import read_json
from ...config import DatasetSpec, ProtocolSpec
from ...registry import DATASETS
from ...runner.result import rows_of, runs_by, runs_frame
from ...stats import paired_ttest, run_values
from ...targets import resolve_target, saved_results, target_spec
from ...verify import ClaimResult, paper_alpha, register_claim
from ...methods.hfss import best_prefix
from .renderers import (BESTK, BESTK_LONGEST, FULL, ONE_SHOT, PCA, curves_of,
                        ensemble_summary, problem_average_accuracy, roughness)

PAPER = "hfss"
#: Table 3's bestK rows: the shortest tied prefix (judged, the estimator's default) and the
#: longest (reported beside it; Algorithm 2 does not say which)
BESTK_T3, BESTK_T3_LONGEST = "bestK", "bestK (longest ties)"


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
            return ClaimResult(None if ok is None else bool(ok),
                               " | ".join(parts) + f" [{'; '.join(where)}]")
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


def _run_accuracy(run):
    """:func:`run_accuracy` of a run's row of a runs frame."""
    return run_accuracy(run["record"])


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
    records_by, curves_by = runs_by(runs_frame(records)), runs_by(runs_frame(curves))
    ok, parts, judged = True, [], 0
    for ds in real_datasets(out_dir):
        full, best = records_by.get((ds, FULL), []), records_by.get((ds, BESTK), [])
        if not full or not best:
            continue
        f, b = ensemble_summary(full), ensemble_summary(best)
        gain = b["oob"][0] - f["oob_all"][0]
        raised, test = gain_verdict(best, full, paper_alpha(PAPER))
        cut = 100 * (1 - b["dims"] / b["total"])
        curve = {m: curves_of(curves_by[(ds, m)][0])[0] if (ds, m) in curves_by else None
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
    records_by = runs_by(runs_frame(records))
    ok, parts = True, []
    for ds in real_datasets(out_dir):
        best, pca = records_by.get((ds, BESTK), []), records_by.get((ds, PCA), [])
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


def _problem_keys(record):
    """(repeat, fold, q) of every one-vs-one problem q of a run: the key that matches a
    problem across the methods of the same runs (all follow the pairs' order)."""
    return [(record["repeat"], record["fold"], q)
            for q in range(len(record.get("test_extras", {}).get("problem_test", [])))]


def problem_tests(records):
    """{(repeat, fold, q): test accuracy %} of every problem the runs recorded one for."""
    return {k: 100 * float(v) for r in records
            for k, v in zip(_problem_keys(r), r["test_extras"]["problem_test"])
            if v is not None}


def problem_oob_test(records):
    """{(repeat, fold, q): (OOB %, test %)} of the chosen ensemble of every problem."""
    out = {}
    for r in records:
        tests = r.get("test_extras", {}).get("problem_test", [])
        for k, p, t in zip(_problem_keys(r), r["model"]["problems"], tests):
            if t is not None and p["oob_accuracy"] is not None:
                out[k] = (100 * float(p["oob_accuracy"]), 100 * float(t))
    return out


def correlations(x, y):
    """(Pearson r, Spearman rho) of two samples (scipy.stats); NaN when fewer than 3 pairs
    or either side is constant."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    return float(_st.pearsonr(x, y)[0]), float(_st.spearmanr(x, y)[0])


def prefix_regrets(forward_oob, forward_test):
    """Fig. 5 on one problem, in points: the test accuracy lost by the prefix Algorithm 2
    picks (its OOB argmax, :func:`mlkit.methods.hfss.best_prefix`, under either tie rule)
    against the best prefix on the test set, and by a prefix drawn uniformly at random
    (its expectation: the best minus the mean over the prefixes)."""
    test = 100 * np.asarray(forward_test, float)
    best = float(np.nanmax(test))
    return {"shortest": best - float(test[best_prefix(forward_oob, "shortest") - 1]),
            "longest": best - float(test[best_prefix(forward_oob, "longest") - 1]),
            "random": best - float(np.nanmean(test))}


def problem_regrets(records):
    """{(repeat, fold, q): :func:`prefix_regrets`} of runs that recorded every prefix's
    per-problem test accuracy (``problem_forward_test``)."""
    out = {}
    for r in records:
        fwd = r.get("test_extras", {}).get("problem_forward_test")
        if not fwd:
            continue
        for k, p, t in zip(_problem_keys(r), r["model"]["problems"], fwd):
            if t is not None:
                out[k] = prefix_regrets(p["forward_curve"], t)
    return out


def _corr_text(xy, th):
    """Claim 3's correlation part on a group of problems: ``(verdict, text)``, None when
    fewer than ``min_problems`` or a side is constant."""
    if not xy:
        return None, "none"
    o, t = np.array(list(xy.values()), float).T
    r, rho = correlations(o, t)
    gap = float(np.mean(np.abs(o - t)))
    text = f"{len(o)} problems: r {r:.3f}, rho {rho:.3f}, mean |OOB - test| {gap:.2f}"
    if len(o) < th["min_problems"] or np.isnan(r):
        return None, text + " (not judged)"
    ok = r >= th["min_correlation"] and rho >= th["min_correlation"] and gap <= th["max_gap"]
    return bool(ok), text


@register_claim(PAPER, 3, "OOB accuracy tracks test accuracy closely (its maximum picks the best "
                "test subset in Fig. 5)")
@_claim("baseline", "fig3", thresholds_of="baseline")
def claim_3(runs, th):
    """Within each real dataset, over all its one-vs-one problems (baseline's runs): per
    ensemble, the Pearson r and Spearman rho of the problems' OOB and test accuracies, both
    at least ``min_correlation``, with a mean |OOB - test| of at most ``max_gap`` points; and
    Fig. 5 on every problem: the test accuracy lost by the OOB-argmax prefix (bestK, the
    shortest tied prefix) against the best prefix, at most ``max_gap`` points on average and
    significantly below a random prefix's (paired t over the problems). Problems at the
    ceiling (the one-shot SVM's test accuracy >= ``ceiling`` %: no room for the test side
    to vary) are reported apart, with their own numbers; the verdict reads the problems
    below it, and a dataset with fewer than ``min_problems`` of them is not judged. Fig. 3's
    one problem per dataset is reported (its Fig. 5 OOB and test maxima), not judged."""
    records, out_dir = runs["baseline"]
    records_by = runs_by(runs_frame(records))
    alpha = paper_alpha(PAPER)
    ok, parts, judged = True, [], 0
    for ds in real_datasets(out_dir):
        shot = problem_tests(records_by.get((ds, ONE_SHOT), []))
        if not shot:
            continue
        high = {k for k, v in shot.items() if v >= th["ceiling"]}
        texts, verdicts = [], []
        for m in (FULL, BESTK, PCA, BESTK_LONGEST):
            xy = problem_oob_test(records_by.get((ds, m), []))
            if not xy:
                continue
            v, below = _corr_text({k: v for k, v in xy.items() if k not in high}, th)
            _, at = _corr_text({k: v for k, v in xy.items() if k in high}, th)
            if m != BESTK_LONGEST:
                verdicts.append(v)
            texts.append(f"{m}: below the ceiling {below}; at the ceiling {at}")
        reg = problem_regrets(records_by.get((ds, BESTK_LONGEST), []))
        if reg:
            low = {k: v for k, v in reg.items() if k not in high}
            for group, g in (("below the ceiling", low),
                             ("at the ceiling", {k: v for k, v in reg.items() if k in high})):
                if not g:
                    texts.append(f"Fig. 5 regret {group}: no problem")
                    continue
                mean = {rule: float(np.mean([v[rule] for v in g.values()]))
                        for rule in ("shortest", "longest", "random")}
                t = paired_ttest({k: v["shortest"] for k, v in g.items()},
                                 {k: v["random"] for k, v in g.items()}, alpha=alpha,
                                 greater_is_better=False)
                texts.append(f"Fig. 5 regret {group} ({len(g)} problems, points lost vs the "
                             f"best prefix): OOB argmax shortest {mean['shortest']:.2f}, "
                             f"longest {mean['longest']:.2f}, random prefix "
                             f"{mean['random']:.2f}; shortest vs random {t.verdict()}")
                if group == "below the ceiling":
                    verdicts.append(None if len(g) < th["min_problems"] else
                                    bool(mean["shortest"] <= th["max_gap"] and t.better))
        else:
            texts.append("Fig. 5 regret: no run recorded every prefix's test accuracy")
        if any(v is None for v in verdicts) or not verdicts:
            parts.append(f"{ds} ({len(shot)} problems, {len(high)} at the ceiling): "
                         + "; ".join(texts) + " NOT JUDGED (too few problems below the "
                         "ceiling or a constant side)")
            continue
        this = all(verdicts)
        judged += 1
        ok &= this
        parts.append(f"{ds} ({len(shot)} problems, {len(high)} at the ceiling): "
                     + "; ".join(texts) + f" {'PASS' if this else 'FAIL'}")
    curves, curve_dir = runs["fig3"]
    curves_by = runs_by(runs_frame(curves))
    for ds in real_datasets(curve_dir):
        for rec in curves_by.get((ds, "HFSS (forward)"), []):
            fo = np.asarray(rec["model"]["problems"][0]["forward_curve"], float)
            ft = np.asarray(rec.get("curves", {}).get("accuracy", []), float)
            if ft.size:
                k = best_prefix(fo, "shortest")
                parts.append(f"{ds} Fig. 5 (one problem, reported): OOB max at k={k}, test "
                             f"max at k={int(np.argmax(ft)) + 1}; test there "
                             f"{100 * ft[k - 1]:.2f} vs best {100 * ft.max():.2f}")
    if parts and not judged:
        return None, parts
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
    frame = runs_frame(records)
    records_by = runs_by(frame)
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
            for m in sorted(frame.loc[frame["dataset"] == label, "method"].unique()):
                recs = records_by[(label, m)]
                pp = problem_average_accuracy(recs)     # the paper's statistic, if recorded
                kinds.add("per-problem" if pp else "multi-class")
                acc.setdefault(m, []).append(
                    pp[0] if pp else 100 * np.mean([r["metrics"]["accuracy"] for r in recs]))
        if BESTK_T3 not in acc or any(len(v) != len(sizes) for v in acc.values()):
            parts.append(f"{src}: not every method has runs at every size (not judged)")
            continue
        rules = [m for m in (BESTK_T3, BESTK_T3_LONGEST) if m in acc]
        rivals = [m for m in acc if m not in rules]
        per_rule = {}
        for rule in rules:
            ms = rivals + [rule]
            best = [max(ms, key=lambda m: acc[m][i]) for i in range(len(sizes))]
            margin = min(acc[rule][i] - max(acc[m][i] for m in rivals)
                         for i in range(len(sizes)))
            vs = [{m: paired_ttest(run_values(rows_of(frame, label, rule), _run_accuracy),
                                   run_values(rows_of(frame, label, m), _run_accuracy),
                                   alpha=paper_alpha(PAPER), missing="drop")
                   for m in rivals} for _, label in sizes]
            top = all(not t.worse for tests in vs for t in tests.values())
            if len(sizes) > 1:
                falls = {m: acc[m][0] - acc[m][-1] for m in ms}
                mono = all(np.all(np.diff(acc[m]) <= th["fall_tolerance"]) for m in ms)
                trend = ("falls " + ", ".join(f"{m} {v:.2f}" for m, v in falls.items())
                         + f"; monotone {mono}")
            else:       # one size: nothing can fall; only the margin is judged
                mono, trend = True, "falls/monotone not judged (one size)"
            per_rule[rule] = (top and mono, best, margin, vs, top, trend)
        this = per_rule[BESTK_T3][0]
        ok &= this
        text = (f"{src} sizes {[n for n, _ in sizes]} ({'/'.join(sorted(kinds))} test "
                "acc. %: " + "; ".join(f"{m} " + "/".join(f"{v:.2f}" for v in vals)
                                       for m, vals in acc.items()) + ")")
        for rule in rules:
            passed, best, margin, vs, top, trend = per_rule[rule]
            text += (f"; {rule}{' (judged)' if rule == BESTK_T3 else ' (reported)'}: best "
                     f"mean {best}, margin {margin:+.2f}; vs "
                     + "; ".join(f"{n}: " + ", ".join(f"{m} {t.verdict()}"
                                                      for m, t in tests.items())
                                 for (n, _), tests in zip(sizes, vs))
                     + f" (none significantly above: {'yes' if top else 'no'}); {trend} "
                     f"{'PASS' if passed else 'FAIL'}")
        parts.append(text)
    return ok, parts

"""Claims 1-4 of Luo et al. (TIP 2016), checked on saved runs (``mlkit verify lm3fe``).

Each claim reads the saved results of Tables I-II (``lm3fe/table1``, ``lm3fe/table2``) or
of ``lm3fe/objective`` (the full run when present, else the ``--quick`` one) and the
thresholds of those configs (``thresholds:``). A *cell* is one (dataset, labelled count,
metric): Table I has accuracy and macro-F1 cells in the NUS-WIDE role, Table II mAP cells in
the MIR Flickr role. Table values are each method's mean over the draws at its
validation-chosen setting (selection methods at their chosen percentage); *peaks* are the
maxima over the percentages of the curves of Figs. 2-4. Every "beats", "above" or "below"
between two methods in a cell is a two-sided paired t-test over the draws (matched by
repeat and fold) at the level ``alpha`` of ``claims.yaml`` (the paper states none: 0.05); a
difference that is not significant is a tie. Numbers are printed whether the claim passes
or fails; nothing is tuned to make one pass.
"""

import numpy as np

from ...stats import paired_ttest, run_values
from ...targets import resolve_target, saved_results, target_spec
from ...verify import ClaimResult, paper_alpha, register_claim
from ...runner.result import rows_of, runs_frame
from .renderers import (SELECTION, TRANSFORMATION, cell_values, cells, curve_of,
                        objective_rise, scheme)

PAPER = "lm3fe"
_PAIRS = {"MTFT": "MTFS", "RFT": "RFS", "SSMVFT": "SSMVFS", "LM3FT": "LM3FS"}
#: methods with no row in the paper's Tables I-II (claims about those tables leave them out)
_NOT_IN_PAPER_TABLES = ("TMFS",)


class _Table:
    """The saved runs of one table: per cell (label, metric) each method's draws."""

    def __init__(self, artifact):
        target = resolve_target(f"{PAPER}/{artifact}")
        records, self.out_dir, self.quick = saved_results(target)
        self.saved = records is not None
        self.frame = runs_frame(records or [])
        self.spec, self.run_spec = target_spec(target, quick=bool(self.quick))
        self.thresholds = self.spec.thresholds
        labels = set(self.frame["dataset"])
        self.cells = [c for c in cells(self.run_spec) if c[2] in labels]
        self.metrics = list(self.run_spec.metrics)

    @property
    def missing(self):
        return not self.saved or not self.cells

    def where(self):
        return f"{'quick' if self.quick else 'full'} results in {self.out_dir}"

    def draws(self, label, method, metric):
        return cell_values(self.frame, label, method, metric)

    def runs(self, label, method, metric):
        """{(repeat, fold): value} of ``method``'s draws in one cell."""
        return run_values(rows_of(self.frame, label, method), metric)

    def paired(self, label, a, b, metric):
        """Paired t-test of method ``a`` against ``b`` over the draws of one cell (a draw of
        one method only is left out and counted)."""
        return paired_ttest(self.runs(label, a, metric), self.runs(label, b, metric),
                            alpha=paper_alpha(PAPER), missing="drop")

    def group_runs(self, label, methods, metric):
        """{(repeat, fold): mean of ``methods``' values} over the draws all of them have."""
        runs = [self.runs(label, m, metric) for m in methods]
        keys = set.intersection(*(set(r) for r in runs))
        return {k: float(np.mean([r[k] for r in runs])) for k in sorted(keys)}

    def mean(self, label, method, metric):
        v = self.draws(label, method, metric)
        return float(v.mean()) if len(v) else float("nan")

    def sd(self, label, method, metric):
        v = self.draws(label, method, metric)
        return float(v.std(ddof=1)) if len(v) > 1 else float("nan")

    def curve(self, label, method, metric):
        values, curves = curve_of(self.frame, label, method, metric)
        return (None, None) if values is None else (values, curves.mean(axis=0))

    def chosen_percent(self, method):
        chosen = self.frame.loc[self.frame["method"] == method, "chosen"]
        vals = [c["percent"] for c in chosen if c.get("percent") is not None]
        return float(np.mean(vals)) if vals else float("nan")

    def largest_count(self):
        """Per dataset name, its largest labelled count among the cells."""
        out = {}
        for name, n, _, _ in self.cells:
            out[name] = max(out.get(name, n), n)
        return out

    def name_of(self, label):
        return next(name for name, _, lab, _ in self.cells if lab == label)

    def each(self):
        """(label, count, metric) of every cell."""
        for name, n, label, role in self.cells:
            for metric in self.metrics:
                yield label, n, metric


def _tables(*artifacts):
    """(the saved runs of Tables I and II, None or the NOT RUN result when one of
    ``artifacts`` has none)."""
    tables = {"table1": _Table("table1"), "table2": _Table("table2")}
    for art in artifacts:
        if tables[art].missing:
            return tables["table1"], tables["table2"], ClaimResult(
                None, f"no saved results: run `mlkit reproduce lm3fe/{art}` (or with --quick) "
                      "first")
    return tables["table1"], tables["table2"], None


def peaks_match(peaks, tolerance):
    """Claim 2's "their peaks match LM3FS": every difference within +-tolerance."""
    return all(abs(p) <= tolerance for p in peaks)


def paper_rows(methods):
    """The methods with a row in the paper's Tables I-II (TMFS has none)."""
    return [m for m in methods if m not in _NOT_IN_PAPER_TABLES]


def _frac(flags):
    flags = list(flags)
    return (float(np.mean(flags)) if flags else float("nan")), len(flags)


def _outcomes(tests):
    """"better in b (p <= ..), tied in t (p ..-..), worse in w (p <= ..) of n" over paired
    tests ({cell: PairedTest})."""
    parts = []
    for outcome in ("better", "tie", "worse"):
        ps = sorted(t.p for t in tests.values() if t.outcome == outcome)
        word = "tied" if outcome == "tie" else outcome
        if not ps:
            parts.append(f"{word} in 0")
        elif outcome == "tie":
            parts.append(f"{word} in {len(ps)} (p {ps[0]:.2g}-{ps[-1]:.2g})")
        else:
            parts.append(f"{word} in {len(ps)} (p <= {ps[-1]:.2g})")
    return ", ".join(parts) + f" of {len(tests)}"


def _weakest(tests):
    """The test that decides "significantly above every one of them": a worse one (the most
    significant), else the tie with the largest p, else the better one with the largest p."""
    worse = [t for t in tests if t.worse]
    if worse:
        return min(worse, key=lambda t: t.p)
    return max(tests, key=lambda t: (not t.better, t.p))


def _cell(label, metric):
    return f"{label} {metric}"


@register_claim(PAPER, 1, "CAT beats BSF (paired t-test over the draws); in the NUS-WIDE role "
                "most selection methods match or beat CAT with a small fraction of the features")
def claim1():
    """Pass when CAT is significantly above BSF (paired t over the draws) in at least
    ``min_fraction`` of the cells of Tables I-II, and in at least ``min_fraction`` of the
    NUS-role cells more than half of the selection methods reach CAT's mean minus
    ``tolerance`` at some percentage <= ``small_percent`` (table1.yaml's ``thresholds:``)."""
    nus, mir, missing = _tables("table1")
    if missing:
        return missing
    th = nus.thresholds
    cat_bsf = {_cell(l, m): t.paired(l, "CAT", "BSF", m)
               for t in (nus, mir) if not t.missing for l, _, m in t.each()}
    f_cat, n_cat = _frac(t.better for t in cat_bsf.values())
    most, counts = [], []
    for label, n, metric in nus.each():
        cat = nus.mean(label, "CAT", metric)
        reach = 0
        for s in SELECTION:
            values, mean = nus.curve(label, s, metric)
            if values is None:
                continue
            small = values <= th["small_percent"]
            reach += bool(np.any(mean[small] >= cat - th["tolerance"]))
        counts.append(reach)
        most.append(reach > len(SELECTION) / 2)
    f_most, n_most = _frac(most)
    ok = f_cat >= th["min_fraction"] and f_most >= th["min_fraction"]
    return ClaimResult(ok, (
        f"CAT significantly above BSF in {f_cat:.0%} of {n_cat} cells (NUS + MIR roles; need "
        f">= {th['min_fraction']:.0%}; {_outcomes(cat_bsf)}) | NUS role: selection methods "
        f"reaching CAT - "
        f"{th['tolerance']} at <= {th['small_percent']:g}% of the features, per cell: "
        f"{counts} of {len(SELECTION)}; most of them in {f_most:.0%} of {n_most} cells "
        f"[{nus.where()}]"))


@register_claim(PAPER, 2, "NUS: LM3FS clearly beats RFS ~ SSMVFS > MTFS ~ TMFS; MIR: MTFS, RFS, "
                "SSMVFS close, well above TMFS, their peaks match LM3FS (within the tolerance) at each "
                "dataset's largest count, "
                "and their best percentages are smaller than on NUS")
def claim2():
    """Pass when, in the NUS role, LM3FS is significantly above both RFS and SSMVFS in at
    least ``min_fraction`` of the cells and above the better of them by ``margin`` on
    average, and the draw-by-draw mean of RFS and SSMVFS is significantly above that of
    MTFS and TMFS in at least ``min_fraction`` of the cells (table1.yaml); and, in the MIR
    role, MTFS, RFS and SSMVFS lie within ``close`` of each other on average, each is
    significantly above TMFS in at least ``min_fraction`` of the cells and their lowest above
    TMFS by ``margin`` on average, their peaks are within ``tolerance`` of LM3FS's at each
    dataset's largest count, and their mean chosen percentage is smaller than in the NUS
    role (table2.yaml). Paired t-tests over the draws at ``alpha`` of claims.yaml."""
    nus, mir, missing = _tables("table1", "table2")
    if missing:
        return missing
    tn, tm = nus.thresholds, mir.thresholds
    gaps, beats, order = [], {}, {}
    for label, n, metric in nus.each():
        v = {s: nus.mean(label, s, metric) for s in SELECTION}
        gaps.append(v["LM3FS"] - max(v["RFS"], v["SSMVFS"]))
        vs = [nus.paired(label, "LM3FS", o, metric) for o in ("RFS", "SSMVFS")]
        beats[_cell(label, metric)] = _weakest(vs)
        order[_cell(label, metric)] = paired_ttest(
            nus.group_runs(label, ("RFS", "SSMVFS"), metric),
            nus.group_runs(label, ("MTFS", "TMFS"), metric), alpha=paper_alpha(PAPER),
            missing="drop")
    gap = float(np.mean(gaps))
    f_beats = _frac(t.better for t in beats.values())[0]
    f_order = _frac(t.better for t in order.values())[0]
    ok_nus = gap >= tn["margin"] and f_beats >= tn["min_fraction"] and \
        f_order >= tn["min_fraction"]
    spreads, above, peaks, over_tmfs = [], [], [], {}
    largest = mir.largest_count()
    for label, n, metric in mir.each():
        v = {s: mir.mean(label, s, metric) for s in SELECTION}
        three = [v["MTFS"], v["RFS"], v["SSMVFS"]]
        spreads.append(max(three) - min(three))
        above.append(min(three) - v["TMFS"])
        for s in ("MTFS", "RFS", "SSMVFS"):
            over_tmfs[f"{s} {_cell(label, metric)}"] = mir.paired(label, s, "TMFS", metric)
        if n == largest[mir.name_of(label)]:
            lm = mir.curve(label, "LM3FS", metric)[1]
            for s in ("MTFS", "RFS", "SSMVFS"):
                c = mir.curve(label, s, metric)[1]
                if c is not None and lm is not None:
                    peaks.append(float(c.max() - lm.max()))
    spread, lift = float(np.mean(spreads)), float(np.mean(above))
    f_tmfs = _frac(t.better for t in over_tmfs.values())[0]
    p_nus = np.nanmean([nus.chosen_percent(s) for s in ("MTFS", "RFS", "SSMVFS")])
    p_mir = np.nanmean([mir.chosen_percent(s) for s in ("MTFS", "RFS", "SSMVFS")])
    ok_mir = (spread <= tm["close"] and lift >= tm["margin"] and f_tmfs >= tm["min_fraction"]
              and peaks_match(peaks, tm["tolerance"]) and p_mir < p_nus)
    return ClaimResult(ok_nus and ok_mir, (
        f"NUS role: LM3FS - max(RFS, SSMVFS) = {gap:+.3f} on average (need >= "
        f"{tn['margin']}); LM3FS significantly above both RFS and SSMVFS in {f_beats:.0%} of "
        f"the cells (need >= {tn['min_fraction']:.0%}; against the weaker test: "
        f"{_outcomes(beats)}); mean(RFS, SSMVFS) significantly above mean(MTFS, TMFS) in "
        f"{f_order:.0%} (need >= {tn['min_fraction']:.0%}; {_outcomes(order)}) | "
        f"MIR role: spread of MTFS/RFS/SSMVFS {spread:.3f} (need <= {tm['close']}), their "
        f"lowest - TMFS = {lift:+.3f} (need >= {tm['margin']}), each significantly above TMFS "
        f"in {f_tmfs:.0%} of the (method, cell) pairs (need >= {tm['min_fraction']:.0%}; "
        f"{_outcomes(over_tmfs)}), peaks - LM3FS peak at the "
        f"largest count ({', '.join(f'{k} {v}' for k, v in largest.items())}): "
        f"{[round(p, 3) for p in peaks]} (need |.| <= {tm['tolerance']}); mean "
        f"chosen % of MTFS/RFS/SSMVFS: MIR {p_mir:.1f} vs NUS {p_nus:.1f} (need MIR < NUS) "
        f"[{nus.where()}; {mir.where()}]"))


@register_claim(PAPER, 3, "Transformation beats CAT and its selection form in most cases (not "
                "RFT on MIR, below CAT); LM3FT beats every other transformation; LM3FT's std "
                "is the largest on NUS, LM3FS's the smallest of the selection methods (stds "
                "among the paper's table rows, TMFS left out)")
def claim3():
    """Pass when, in at least ``min_fraction`` of the cases (table1.yaml), each
    transformation is significantly above both CAT and its selection form (RFT on MIR
    left out), RFT is significantly below CAT on MIR, LM3FT is significantly above every
    other transformation, LM3FT's sd is the largest on NUS and LM3FS's the smallest of the
    selection methods. Paired t-tests over the draws at ``alpha`` of claims.yaml."""
    nus, mir, missing = _tables("table1", "table2")
    if missing:
        return missing
    th = nus.thresholds
    beats, best, rft_low = {t: {} for t in TRANSFORMATION}, {}, {}
    for table, role in ((nus, "NUS"), (mir, "MIR")):
        for label, n, metric in table.each():
            cell = _cell(label, metric)
            for t in TRANSFORMATION:
                if role == "MIR" and t == "RFT":
                    rft_low[cell] = table.paired(label, t, "CAT", metric)
                    continue
                vs = [table.paired(label, t, o, metric) for o in ("CAT", _PAIRS[t])]
                beats[t][cell] = _weakest(vs)
            vs = [table.paired(label, "LM3FT", t, metric) for t in TRANSFORMATION
                  if t != "LM3FT"]
            best[cell] = _weakest(vs)
    f_beats = {t: _frac(x.better for x in f.values())[0] for t, f in beats.items()}
    overall = {f"{t} {c}": x for t, f in beats.items() for c, x in f.items()}
    f_all = _frac(x.better for f in beats.values() for x in f.values())
    f_best, n_best = _frac(x.better for x in best.values())
    f_rft = _frac(x.worse for x in rft_low.values())[0]
    methods = paper_rows(m.display for m in nus.run_spec.methods)
    selection = paper_rows(SELECTION)
    sd_top, sd_low = [], []
    for label, n, metric in nus.each():
        sd = {m: nus.sd(label, m, metric) for m in methods}
        sd_top.append(sd["LM3FT"] >= max(sd.values()))
        sd_low.append(sd["LM3FS"] <= min(sd[s] for s in selection))
    f_top, f_low = _frac(sd_top)[0], _frac(sd_low)[0]
    need = th["min_fraction"]
    other = _other_scheme_lm3ft(nus)
    ok = (f_all[0] >= need and f_rft >= need and f_best >= need and f_top >= need
          and f_low >= need)
    return ClaimResult(ok, (
        "transformation significantly above CAT and its selection form: "
        + ", ".join(f"{t} {f:.0%}" for t, f in f_beats.items())
        + f" of the cells, {f_all[0]:.0%} of {f_all[1]} overall (need >= {need:.0%}; against "
        f"the weaker test: {_outcomes(overall)}); RFT "
        f"significantly below CAT on MIR in {f_rft:.0%} ("
        + ", ".join(f"{c} {x.verdict()}" for c, x in rft_low.items())
        + f") | LM3FT significantly above every other transformation in {f_best:.0%} of "
        f"{n_best} cells (against the weakest test: {_outcomes(best)}) | NUS role: LM3FT's "
        f"sd the largest in {f_top:.0%}, LM3FS's the smallest of the selection methods in "
        f"{f_low:.0%} of the cells (TMFS, not in the paper's table, left out) "
        f"[{nus.where()}; {mir.where()}]" + other))


def _other_scheme_lm3ft(nus):
    """Beside claim 3 (judged on the Tables' scheme, the one table1.yaml names): LM3FT of
    the other scheme (lm3fe/ablation's "LM3FT exact scheme", same draws) against the other
    transformations of Table I, cell by cell; "" when that target has no saved runs."""
    runs = runs_frame(saved_results(resolve_target(f"{PAPER}/ablation"))[0] or [])
    runs = runs[runs["method"] == "LM3FT exact scheme"]
    if runs.empty or nus.missing:
        return ""
    best, gaps = {}, []
    for label, n, metric in nus.each():
        mine = run_values(rows_of(runs, label), metric)
        if not mine:
            continue
        vs = [paired_ttest(mine, nus.runs(label, t, metric), alpha=paper_alpha(PAPER),
                           missing="drop") for t in TRANSFORMATION if t != "LM3FT"]
        best[_cell(label, metric)] = _weakest(vs)
        gaps.append(np.mean(list(mine.values())) - nus.mean(label, "LM3FT", metric))
    if not best:
        return ""
    f_best, n_best = _frac(x.better for x in best.values())
    return (f" | beside it, not judged: LM3FT with the exact scheme (lm3fe/ablation) "
            f"significantly above every other transformation in {f_best:.0%} of {n_best} "
            f"NUS-role cells (against the weakest test: {_outcomes(best)}); its mean minus "
            f"the Tables' LM3FT {np.mean(gaps):+.3f}")


def _block_text(runs):
    """Per run: which kinds of block steps raised the objective, and by how much."""
    parts = []
    for r in runs:
        blocks = r["model"].get("block_rises") or {}
        up = ", ".join(f"{k} {b['rises']}/{b['steps']} (max {b['max_rise']:.2g})"
                       for k, b in blocks.items())
        parts.append(f"{r['dataset']} [{up or 'no block trace'}]")
    return "; ".join(parts)


def _recorded(objective):
    """Whether a run's ``objective`` column holds a recorded trace (a non-empty list)."""
    return isinstance(objective, list) and len(objective) > 0


def _worst_block_rise(r):
    """The largest rise of one block step / |O_0| (the outer-iteration rise when the record
    has no block trace)."""
    blocks = r["model"].get("block_rises")
    if not blocks:
        return objective_rise(r["model"]["objective"])
    return max(0.0, max(b["max_rise"] for b in blocks.values()))


@register_claim(PAPER, 4, "The objective does not increase over the outer iterations "
                "(Sec. IV-C), judged on exact block steps (the setting of the paper's "
                "argument); the authors' released scheme's rises are reported beside it")
def claim4():
    """Pass when, on every dataset of ``lm3fe/objective``, no block step (W, each U_v,
    theta) of the exact scheme (``scheme: exact``) raises the objective by more than
    ``max_rise`` x |O_0| (objective.yaml). The released scheme's runs (W restarted from 0,
    sub-solvers stopped at the authors' budget, last iterates) are printed beside it, per
    kind of block step."""
    target = resolve_target(f"{PAPER}/objective")
    records, out_dir, quick = saved_results(target)
    if records is None:
        return ClaimResult(None, "no saved results: run `mlkit reproduce lm3fe/objective` "
                                 "(or with --quick) first")
    spec = target_spec(target, quick=bool(quick))[0]
    th = spec.thresholds
    frame = runs_frame(records)
    frame = frame[frame["method"].isin({m.display for m in spec.methods})]  # config's only
    if "objective" in frame:                           # the runs that recorded an objective
        frame = frame[frame["objective"].map(_recorded)]
    else:
        frame = frame.iloc[:0]
    exact = frame["params"].map(lambda p: p.get("scheme") == "exact")
    runs = frame.loc[exact, "record"].tolist()
    if not runs:
        return ClaimResult(None, f"no run of the exact scheme (scheme: exact) in {out_dir}: "
                                 "the claim is judged on exact block steps")
    rises = {r["dataset"]: _worst_block_rise(r) for r in runs}
    released = frame.loc[~exact, "record"].tolist()
    beside = ""
    if released:
        beside = (f" | beside it, the released scheme ({released[0]['method']}: "
                  f"{scheme(released[0]['params'])}): largest rise over one outer iteration / "
                  "|O_0| " + ", ".join(f"{r['dataset']} "
                                       f"{objective_rise(r['model']['objective']):.2g}"
                                       for r in released)
                  + "; rising block steps: " + _block_text(released))
    more = []
    for art in ("table1", "table2"):
        table = runs_frame(saved_results(resolve_target(f"{PAPER}/{art}"))[0] or [])
        if "objective" in table:
            table = table[table["method"].isin(("LM3FS", "LM3FT"))]
            more += [objective_rise(o) for o in table["objective"] if _recorded(o)]
    worst = max(rises.values())
    ok = worst <= th["max_rise"]
    return ClaimResult(ok, (
        f"scheme judged: {scheme(runs[0]['params'])} | largest rise of one block step / "
        "|O_0|: " + ", ".join(f"{k} {v:.2g}" for k, v in rises.items())
        + f"; worst {worst:.2g} (need <= {th['max_rise']:g}); block steps: {_block_text(runs)}"
        f"{beside} | not judged: the {len(more)} LM3FS/LM3FT runs of Tables I-II "
        f"(safeguarded, monotone by construction), max {max(more + [0.0]):.2g} "
        f"[{'quick' if quick else 'full'} results in {out_dir}]"))

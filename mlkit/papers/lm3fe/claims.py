"""Claims 1-4 of Luo et al. (TIP 2016), checked on saved runs (``mlkit verify lm3fe``).

Each claim reads the saved results of Tables I-II (``lm3fe/table1``, ``lm3fe/table2``) or
of ``lm3fe/objective`` (the full run when present, else the ``--quick`` one) and the
thresholds of those configs (``thresholds:``). A *cell* is one (dataset, labelled count,
metric): Table I has accuracy and macro-F1 cells in the NUS-WIDE role, Table II mAP cells in
the MIR Flickr role. Table values are each method's mean over the draws at its
validation-chosen setting (selection methods at their chosen percentage); *peaks* are the
maxima over the percentages of the curves of Figs. 2-4. Numbers are printed whether the
claim passes or fails; nothing is tuned to make one pass.
"""

import numpy as np

from ...targets import resolve_target, saved_results, target_spec
from ...verify import ClaimResult, register_claim
from .renderers import (SELECTION, TRANSFORMATION, cells, curve_of, objective_rise, scheme,
                        sub_solver_budget, sub_solver_iterations)

PAPER = "lm3fe"
_PAIRS = {"MTFT": "MTFS", "RFT": "RFS", "SSMVFT": "SSMVFS", "LM3FT": "LM3FS"}
#: methods with no row in the paper's Tables I-II (claims about those tables leave them out)
_NOT_IN_PAPER_TABLES = ("TMFS",)


class _Table:
    """The saved runs of one table: per cell (label, metric) each method's draws."""

    def __init__(self, artifact):
        target = resolve_target(f"{PAPER}/{artifact}")
        self.records, self.out_dir, self.quick = saved_results(target)
        self.spec, self.run_spec = target_spec(target, quick=bool(self.quick))
        self.thresholds = self.spec.thresholds
        labels = {r["dataset"] for r in self.records or []}
        self.cells = [c for c in cells(self.run_spec) if c[2] in labels]
        self.metrics = list(self.run_spec.metrics)

    @property
    def missing(self):
        return self.records is None or not self.cells

    def where(self):
        return f"{'quick' if self.quick else 'full'} results in {self.out_dir}"

    def draws(self, label, method, metric):
        return np.array([r["metrics"][metric] for r in self.records
                         if r["dataset"] == label and r["method"] == method], float)

    def mean(self, label, method, metric):
        v = self.draws(label, method, metric)
        return float(v.mean()) if len(v) else float("nan")

    def sd(self, label, method, metric):
        v = self.draws(label, method, metric)
        return float(v.std(ddof=1)) if len(v) > 1 else float("nan")

    def curve(self, label, method, metric):
        values, curves = curve_of(self.records, label, method, metric)
        return (None, None) if values is None else (values, curves.mean(axis=0))

    def chosen_percent(self, method):
        vals = [r.get("chosen", {}).get("percent") for r in self.records
                if r["method"] == method]
        vals = [v for v in vals if v is not None]
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


@register_claim(PAPER, 1, "CAT beats BSF (strictly higher mean); in the NUS-WIDE role most "
                "selection methods match or beat CAT with a small fraction of the features")
def claim1():
    nus, mir, missing = _tables("table1")
    if missing:
        return missing
    th = nus.thresholds
    cat_bsf = [t.mean(l, "CAT", m) > t.mean(l, "BSF", m)
               for t in (nus, mir) if not t.missing for l, _, m in t.each()]
    f_cat, n_cat = _frac(cat_bsf)
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
        f"CAT > BSF in {f_cat:.0%} of {n_cat} cells (NUS + MIR roles; need "
        f">= {th['min_fraction']:.0%}) | NUS role: selection methods reaching CAT - "
        f"{th['tolerance']} at <= {th['small_percent']:g}% of the features, per cell: "
        f"{counts} of {len(SELECTION)}; most of them in {f_most:.0%} of {n_most} cells "
        f"[{nus.where()}]"))


@register_claim(PAPER, 2, "NUS: LM3FS clearly beats RFS ~ SSMVFS > MTFS ~ TMFS; MIR: MTFS, RFS, "
                "SSMVFS close, well above TMFS, their peaks match LM3FS (within the tolerance) at each "
                "dataset's largest count, "
                "and their best percentages are smaller than on NUS")
def claim2():
    nus, mir, missing = _tables("table1", "table2")
    if missing:
        return missing
    tn, tm = nus.thresholds, mir.thresholds
    gaps, order = [], []
    for label, n, metric in nus.each():
        v = {s: nus.mean(label, s, metric) for s in SELECTION}
        gaps.append(v["LM3FS"] - max(v["RFS"], v["SSMVFS"]))
        order.append((v["RFS"] + v["SSMVFS"]) / 2 - (v["MTFS"] + v["TMFS"]) / 2)
    gap, mid = float(np.mean(gaps)), float(np.mean(order))
    ok_nus = gap >= tn["margin"] and mid > 0
    spreads, above, peaks = [], [], []
    largest = mir.largest_count()
    for label, n, metric in mir.each():
        v = {s: mir.mean(label, s, metric) for s in SELECTION}
        three = [v["MTFS"], v["RFS"], v["SSMVFS"]]
        spreads.append(max(three) - min(three))
        above.append(min(three) - v["TMFS"])
        if n == largest[mir.name_of(label)]:
            lm = mir.curve(label, "LM3FS", metric)[1]
            for s in ("MTFS", "RFS", "SSMVFS"):
                c = mir.curve(label, s, metric)[1]
                if c is not None and lm is not None:
                    peaks.append(float(c.max() - lm.max()))
    spread, lift = float(np.mean(spreads)), float(np.mean(above))
    p_nus = np.nanmean([nus.chosen_percent(s) for s in ("MTFS", "RFS", "SSMVFS")])
    p_mir = np.nanmean([mir.chosen_percent(s) for s in ("MTFS", "RFS", "SSMVFS")])
    ok_mir = (spread <= tm["close"] and lift >= tm["margin"]
              and peaks_match(peaks, tm["tolerance"]) and p_mir < p_nus)
    return ClaimResult(ok_nus and ok_mir, (
        f"NUS role: LM3FS - max(RFS, SSMVFS) = {gap:+.3f} on average (need >= "
        f"{tn['margin']}); mean(RFS, SSMVFS) - mean(MTFS, TMFS) = {mid:+.3f} (need > 0) | "
        f"MIR role: spread of MTFS/RFS/SSMVFS {spread:.3f} (need <= {tm['close']}), their "
        f"lowest - TMFS = {lift:+.3f} (need >= {tm['margin']}), peaks - LM3FS peak at the "
        f"largest count ({', '.join(f'{k} {v}' for k, v in largest.items())}): "
        f"{[round(p, 3) for p in peaks]} (need |.| <= {tm['tolerance']}); mean "
        f"chosen % of MTFS/RFS/SSMVFS: MIR {p_mir:.1f} vs NUS {p_nus:.1f} (need MIR < NUS) "
        f"[{nus.where()}; {mir.where()}]"))


@register_claim(PAPER, 3, "Transformation beats CAT and its selection form in most cases (not "
                "RFT on MIR, below CAT); LM3FT beats every other transformation; LM3FT's std "
                "is the largest on NUS, LM3FS's the smallest of the selection methods (stds "
                "among the paper's table rows, TMFS left out)")
def claim3():
    nus, mir, missing = _tables("table1", "table2")
    if missing:
        return missing
    th = nus.thresholds
    beats, best, rft_low = {t: [] for t in TRANSFORMATION}, [], []
    for table, role in ((nus, "NUS"), (mir, "MIR")):
        for label, n, metric in table.each():
            cat = table.mean(label, "CAT", metric)
            v = {t: table.mean(label, t, metric) for t in TRANSFORMATION}
            for t in TRANSFORMATION:
                if role == "MIR" and t == "RFT":
                    rft_low.append(v[t] < cat)
                    continue
                beats[t].append(v[t] >= cat and v[t] >= table.mean(label, _PAIRS[t], metric))
            best.append(all(v["LM3FT"] > v[t] for t in TRANSFORMATION if t != "LM3FT"))
    f_beats = {t: _frac(f)[0] for t, f in beats.items()}
    f_all = _frac([x for f in beats.values() for x in f])
    f_best, n_best = _frac(best)
    f_rft = _frac(rft_low)[0]
    methods = paper_rows(m.display for m in nus.run_spec.methods)
    selection = paper_rows(SELECTION)
    sd_top, sd_low = [], []
    for label, n, metric in nus.each():
        sd = {m: nus.sd(label, m, metric) for m in methods}
        sd_top.append(sd["LM3FT"] >= max(sd.values()))
        sd_low.append(sd["LM3FS"] <= min(sd[s] for s in selection))
    f_top, f_low = _frac(sd_top)[0], _frac(sd_low)[0]
    need = th["min_fraction"]
    ok = (f_all[0] >= need and f_rft >= need and f_best >= need and f_top >= need
          and f_low >= need)
    return ClaimResult(ok, (
        "transformation >= CAT and >= its selection form: "
        + ", ".join(f"{t} {f:.0%}" for t, f in f_beats.items())
        + f" of the cells, {f_all[0]:.0%} of {f_all[1]} overall (need >= {need:.0%}); RFT < "
        f"CAT on MIR in {f_rft:.0%} | LM3FT above every other transformation in {f_best:.0%} "
        f"of {n_best} cells | NUS role: LM3FT's sd the largest in {f_top:.0%}, LM3FS's the "
        f"smallest of the selection methods in {f_low:.0%} of the cells (TMFS, not in "
        f"the paper's table, left out) "
        f"[{nus.where()}; {mir.where()}]"))


@register_claim(PAPER, 4, "The objective does not increase over the outer iterations "
                "(up to the sub-solvers' tolerance), judged on the paper's scheme: every "
                "sub-solver returns its last iterate, the W-step restarts from 0")
def claim4():
    target = resolve_target(f"{PAPER}/objective")
    records, out_dir, quick = saved_results(target)
    if records is None:
        return ClaimResult(None, "no saved results: run `mlkit reproduce lm3fe/objective` "
                                 "(or with --quick) first")
    spec = target_spec(target, quick=bool(quick))[0]
    th = spec.thresholds
    with_objective = [r for r in records if r.get("model", {}).get("objective")]
    if not with_objective:
        return ClaimResult(None, f"no objective in the saved runs [{out_dir}]")
    # judged: the runs whose sub-solvers stop first (the authors' budget), whatever the
    # config's order or labels; the others show how much of a rise early stopping makes
    judged = min(with_objective, key=lambda r: sub_solver_iterations(r["params"]))["method"]
    runs = [r for r in with_objective if r["method"] == judged]
    params = runs[0]["params"]                # the scheme these records ran, not the config's
    if params.get("keep_best", True) or not params.get("w_restart"):
        return ClaimResult(None, f"lm3fe/objective ran {scheme(params)}; the claim is judged "
                                 "only on the paper's scheme (keep_best: false, w_restart: true)")
    rises = {f"{r['dataset']}": objective_rise(r["model"]["objective"]) for r in runs}
    converged = [r for r in with_objective if r["method"] != judged]
    beside = ""
    if converged:
        c_rises = [objective_rise(r["model"]["objective"]) for r in converged]
        over = sum(v > th["max_rise"] for v in c_rises)
        beside = (f" | beside it, {converged[0]['method']} ({sub_solver_budget(converged[0]['params'])}"
                  "): " + ", ".join(f"{r['dataset']} {v:.2g}" for r, v in zip(converged, c_rises))
                  + f" (how much of the rise comes from stopping the sub-solvers early; still "
                  f"above {th['max_rise']:g} on {over} of {len(c_rises)})")
    more = []
    for art in ("table1", "table2"):
        recs = saved_results(resolve_target(f"{PAPER}/{art}"))[0] or []
        more += [objective_rise(r["model"]["objective"]) for r in recs
                 if r["method"] in ("LM3FS", "LM3FT") and r.get("model", {}).get("objective")]
    worst = max(rises.values())
    ok = worst <= th["max_rise"]
    return ClaimResult(ok, (
        f"scheme judged: {scheme(params)} | largest rise of O_k over one outer iteration / "
        "|O_0|: " + ", ".join(f"{k} {v:.2g}" for k, v in rises.items())
        + f"; worst {worst:.2g} (need <= {th['max_rise']:g}){beside} | not judged: the "
        f"{len(more)} LM3FS/LM3FT runs of Tables I-II (safeguarded, monotone by construction), "
        f"max {max(more + [0.0]):.2g} [{'quick' if quick else 'full'} results in {out_dir}]"))

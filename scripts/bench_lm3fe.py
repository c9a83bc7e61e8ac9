"""Benchmark LM3FE (Luo et al., TIP 2016) and its baselines on Scene-15, the largest real
multi-view dataset in the mirror (4485 images, 3 views of 20/59/40 dims, 15 classes).

Measures, in one run:
1. fit time (wall and CPU) and iterations to tolerance of LM3FE and every baseline on a
   class-balanced training subset (``--n-per-class``; RFS/SSMVFS solve N x N systems and TMFS
   fits 15 SVMs per elimination round, so the full 4485 rows are not used), with the held-out
   accuracy; LM3FE's time is also given as a ratio to CAT (no learning) and to MTFS;
2. LM3FE's peak traced memory (tracemalloc) during its fit, and the process's max RSS;
3. the U-step's cost at 3 feature dimensions (Scene-15's features tiled with noise to D),
   with the slope of log time vs log D (the paper's Sec. IV-D: linear), and the vectorised
   U-gradient against a per-task loop (the obvious alternative) at the largest D;
4. one quick pass of every method of Table I (fit + predict, default parameters, one draw,
   one percentage) on msrc-v1 with 6 labelled images per class (the cost of one cell);
5. ``lm3fe_table1_s``: the wall time of the real full ``mlkit reproduce lm3fe/table1``
   (every dataset, count, draw, grid point and percentage of configs/lm3fe/table1.yaml):
   read from the committed full run's manifest (``results/lm3fe/table1/manifest.json``,
   when all of its runs were computed in that one invocation), or, with ``--run-table1``,
   measured now by :func:`measure_table1_seconds` (``--force --jobs 2`` into a temporary
   folder; one BLAS thread per run), which other scripts can import. The machine may be
   shared: its CPU seconds and the load average are printed beside the wall time.

6. RFS's feature ranking against the ``skfeature`` package's RFS (``pip install
   skfeature-chappers``, the maintained fork on PyPI, or ``pip install -e ".[bench]"``;
   skipped, with the reason, when it is not installed) on msrc-v1's concatenated views, the
   same labelled draw and gamma: the Spearman correlation of the per-feature scores ||w^i||
   and the overlap of the top 10%.

Usage: ``python scripts/bench_lm3fe.py [--data /work/shared/data] [--n-per-class 50]
[--run-table1 [--jobs 2] [--table1-only]]`` (the data mirror is ``MLKIT_DATA_MIRROR``,
see the README).
The last line is ``fit_s=... iters=... ustep_slope=... peak_mb=... lm3fe_table1_s=...``
(``--table1-only``: ``lm3fe_table1_s=... lm3fe_table1_cpu_s=...``).

Run time on this machine (2 cores, shared; CPU seconds, the wall time grows with the load):
``--n-per-class 20`` 62 CPU-s (67 s wall) and ``--n-per-class 35`` 71 CPU-s (227 s wall on
the loaded machine), measured; the default (50 per class) about 80 CPU-s, estimated from
those two (SSMVFS's fit and skfeature's RFS, about 17 CPU-s each, dominate). ``--run-table1``
adds the full ``lm3fe/table1`` reproduction: 1,015 s wall with ``--jobs 1`` in its
committed manifest. The peer, skfeature's RFS, comes with ``pip install -e ".[bench]"``.
"""

import argparse
import resource
import time
import tracemalloc
from pathlib import Path

import numpy as np

from mlkit.datasets.mat_views import read_mat_views
from mlkit.kernels import dense_dot
from mlkit.methods.multimodal import (BSF, CAT, LM3FE, LM3FS, LM3FT, MTFS, MTFT, RFS, RFT,
                                      SSMVFS, SSMVFT, TMFS)
from mlkit.methods.multimodal import _losses as L
from mlkit.methods.multimodal._base import LEARNED, normalize_views
from mlkit.methods._validation import check_bag_labels


def _timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def _draw(y, n, seed):
    rng = np.random.default_rng(seed)
    tr = np.concatenate([rng.choice(np.flatnonzero(y == c), n, replace=False)
                         for c in np.unique(y)])
    return tr, np.setdiff1d(np.arange(len(y)), tr)


def _iters(m):
    if hasattr(m, "n_iter_"):
        return m.n_iter_
    if hasattr(m, "objective_"):
        return len(m.objective_)
    return 0


def bench_fits(views, y, n_per_class):
    tr, te = _draw(y, n_per_class, 0)
    methods = [("LM3FE", LM3FE(random_state=0)), ("CAT", CAT()), ("BSF", BSF()),
               ("MTFS", MTFS(percent=20)), ("RFS", RFS(percent=20)),
               ("SSMVFS", SSMVFS(percent=20, max_iter=10)),
               ("TMFS", TMFS(percent=20, step=0.2)),
               ("LM3FS", LM3FS(percent=20, random_state=0)), ("LM3FT", LM3FT(random_state=0))]
    rows = {}
    print(f"Scene-15: {len(tr)} training rows ({n_per_class} per class), {len(te)} test rows")
    print(f"{'method':8s} {'wall_s':>8s} {'cpu_s':>8s} {'iters':>6s} {'test_acc':>8s}")
    for name, est in methods:
        LEARNED._store.clear()          # time every learner (LM3FT would reuse LM3FS's LM3FE)
        _, wall, cpu = _timed(lambda: est.fit(views[tr], y[tr]))
        acc = float(np.mean(est.predict(views[te]) == y[te]))
        rows[name] = (wall, cpu, _iters(est), acc, est)
        print(f"{name:8s} {wall:8.2f} {cpu:8.2f} {_iters(est):6d} {acc:8.3f}", flush=True)
    lm = rows["LM3FE"]
    print(f"LM3FE fit / CAT fit = {lm[0] / max(rows['CAT'][0], 1e-9):.0f}x wall; "
          f"LM3FE / MTFS = {lm[0] / rows['MTFS'][0]:.2f}x wall, {lm[1] / rows['MTFS'][1]:.2f}x cpu")
    print(f"LM3FE objective: {lm[4].objective_[0]:.2f} -> {lm[4].objective_[-1]:.2f} in "
          f"{lm[4].n_iter_} outer iterations; theta = {np.round(lm[4].theta_, 3).tolist()}")
    # peak memory of one LM3FE fit
    tracemalloc.start()
    LM3FE(random_state=0).fit(views[tr], y[tr])
    peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"LM3FE fit peak traced memory {peak:.1f} MB (process max RSS {rss:.0f} MB)")
    return lm[0], lm[2], peak, tr


def bench_ustep(views, y, tr, dims=(2000, 8000, 32000), n_iter=20):
    """Time ``n_iter`` U-step iterations for one modality of dimension D (tol = 0)."""
    base = np.hstack(normalize_views(views[tr].views, "l2"))
    _, Y = check_bag_labels(y[tr], len(tr), None)
    N, C = Y.shape
    rng = np.random.default_rng(0)
    times = []
    for D in dims:
        reps = int(np.ceil(D / base.shape[1]))
        Xv = np.tile(base, reps)[:, :D] + 0.01 * rng.random((N, D))
        Xs = [Xv, base]
        s = L.inf_norms(Xs)
        U = [rng.uniform(size=(D, C)), rng.uniform(size=(base.shape[1], C))]
        theta, W, b = np.array([0.5, 0.5]), rng.normal(size=(C, C)) * 0.1, np.zeros(C)
        best = np.inf
        for _ in range(3):
            _, wall, cpu = _timed(lambda: L.u_step(Xs, Y, s, U, theta, W, b, 0, sigma=0.1,
                                                   gamma_B=1.0, tol=0.0, max_iter=n_iter))
            best = min(best, cpu)
        times.append(best)
        print(f"U-step D={D:5d}: {best / n_iter * 1e3:7.2f} ms/iteration (cpu, best of 3)")
    slope = float(np.polyfit(np.log(dims), np.log(times), 1)[0])
    print(f"U-step slope of log time vs log D: {slope:.2f} (paper: linear)")
    # vectorised gradient vs a per-task loop at the largest D
    G = rng.normal(size=(N, C))

    def loop():
        out = np.zeros((Xv.shape[1], C))
        for c in range(C):                       # task by task: x_i^v w_c^T terms
            out += np.outer(Xv.T @ G[:, c], W[:, c])
        return out

    vec = lambda: dense_dot(Xv.T, G @ W.T)
    np.testing.assert_allclose(vec(), loop(), atol=1e-8)
    tv = min(_timed(vec)[2] for _ in range(5))
    tl = min(_timed(loop)[2] for _ in range(5))
    print(f"U-gradient at D={dims[-1]}: vectorised {tv * 1e3:.2f} ms vs per-task loop "
          f"{tl * 1e3:.2f} ms cpu ({tl / max(tv, 1e-9):.1f}x)")
    return slope


def bench_table1(data_root):
    d = read_mat_views(Path(data_root) / "multiview/msrc_v1/MSRC-v5.mat")
    views, y = d.inputs, d.target
    tr, te = _draw(y, 6, 0)
    methods = [BSF(), CAT(), MTFS(percent=20), RFS(percent=20), SSMVFS(percent=20),
               TMFS(percent=20, step=0.1), LM3FS(percent=20, random_state=0), MTFT(), RFT(),
               SSMVFT(), LM3FT(random_state=0)]
    total_w = total_c = 0.0
    accs = {}
    for est in methods:
        LEARNED._store.clear()
        _, wall, cpu = _timed(lambda: est.fit(views[tr], y[tr]).predict(views[te]))
        total_w += wall
        total_c += cpu
        accs[type(est).__name__] = float(np.mean(est.predict(views[te]) == y[te]))
    print("msrc-v1, 6 labelled per class, one draw, default parameters (20% for selection):")
    print("  " + ", ".join(f"{k} {v:.3f}" for k, v in accs.items()))
    print(f"one pass of the 11 Table I methods: {total_w:.2f} s wall, {total_c:.2f} s cpu")
    return total_w


def compare_rfs_with_skfeature(data_root, n_per_class=8, gamma=0.1):
    """Part 6 (module docstring): our RFS (``rfs_solve``) vs skfeature's ``rfs`` on the same data."""
    try:
        from skfeature.function.sparse_learning_based.RFS import rfs as sk_rfs
    except ImportError as exc:
        print(f"RFS vs skfeature: skipped (skfeature not importable: {exc}; "
              "`pip install skfeature-chappers`)")
        return
    from scipy.stats import spearmanr

    from mlkit.methods.multimodal.baselines import rfs_solve

    d = read_mat_views(Path(data_root) / "multiview/msrc_v1/MSRC-v5.mat")
    tr, _ = _draw(np.asarray(d.target), n_per_class, 0)
    X = np.hstack([np.asarray(v[tr].toarray() if hasattr(v, "toarray") else v[tr], float)
                   for v in d.inputs.views])
    X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    from skfeature.utility.sparse_learning import construct_label_matrix_pan

    from mlkit.methods.multimodal.baselines import rfs_objective

    y = np.asarray(d.target)[tr]
    Y = construct_label_matrix_pan(y).astype(float)      # skfeature's own targets, for both
    (W_ours, _), t_ours, _ = _timed(lambda: rfs_solve(X, Y, gamma, tol=1e-6, max_iter=1000))
    W_sk, t_sk, _ = _timed(lambda: sk_rfs(X, y, mode="raw", gamma=gamma))
    print(f"RFS objective on the same targets ({np.unique(Y).tolist()}): ours "
          f"{rfs_objective(X, Y, W_ours, gamma):.4f}, skfeature "
          f"{rfs_objective(X, Y, W_sk, gamma):.4f}")
    s_ours, s_sk = np.linalg.norm(W_ours, axis=1), np.linalg.norm(W_sk, axis=1)
    k = max(1, int(round(0.1 * X.shape[1])))
    top = len(set(np.argsort(-s_ours)[:k]) & set(np.argsort(-s_sk)[:k])) / k
    rho = spearmanr(s_ours, s_sk).statistic
    print(f"RFS vs skfeature (msrc-v1, {len(y)} labelled, {X.shape[1]} features, gamma "
          f"{gamma:g}): Spearman r of feature scores {rho:.3f}, top-10% overlap {top:.0%}; "
          f"fit {t_ours:.2f} s (ours) vs {t_sk:.2f} s (skfeature)")


def measure_table1_seconds(jobs=2):
    """Run the full ``mlkit reproduce lm3fe/table1 --force --jobs <jobs>`` now, into a
    temporary folder, and return its times.

    Returns a dict: ``wall_s`` (wall seconds of the command), ``cpu_s`` (user + system CPU
    seconds of the command and its worker processes), ``runs_cpu_s`` (the sum of the
    records' own ``cpu_s``), ``runs`` (records written), ``jobs`` and ``load_avg`` (the
    1-minute load average at the start and at the end: other work on the machine inflates
    the wall time, not the CPU time). Raises ``RuntimeError`` with the command's last error
    line when it fails (e.g. the data mirror is not set).
    """
    import os
    import subprocess
    import tempfile

    from mlkit.experiment import load_records

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lm3fe-table1"
        # one BLAS thread per run (the runner limits every run too): the problems are tiny
        env = {**os.environ, "MLKIT_RESULTS": tmp, "OPENBLAS_NUM_THREADS": "1",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        load0 = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(["mlkit", "reproduce", "lm3fe/table1", "--force", "--jobs",
                               str(jobs), "--out", str(out)], env=env, cwd=root,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise RuntimeError(f"mlkit reproduce lm3fe/table1 failed (exit "
                               f"{proc.returncode}): {last}")
        records = load_records(out)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "jobs": jobs, "runs": len(records),
            "runs_cpu_s": sum(r["timings"]["cpu_s"] for r in records),
            "load_avg": (load0, os.getloadavg()[0])}


def full_table1(run, jobs):
    """Wall seconds of the full lm3fe/table1 (see the module docstring, part 5): measured
    now (``run``) or read from the committed manifest; with it, its CPU seconds (NaN when
    read from a manifest, which does not keep them)."""
    import json

    root = Path(__file__).resolve().parents[1]
    if run:
        m = measure_table1_seconds(jobs)
        print(f"full lm3fe/table1, run now (--force --jobs {m['jobs']}): {m['wall_s']:.0f} s "
              f"wall, {m['cpu_s']:.0f} s CPU ({m['runs_cpu_s']:.0f} s in its {m['runs']} "
              f"runs); load average {m['load_avg'][0]:.1f} at the start, "
              f"{m['load_avg'][1]:.1f} at the end")
        return m["wall_s"], m["cpu_s"]
    path = root / "results" / "lm3fe" / "table1" / "manifest.json"
    if not path.is_file():
        print(f"no full lm3fe/table1 manifest at {path}: run `mlkit reproduce lm3fe/table1` "
              "or pass --run-table1")
        return float("nan"), float("nan")
    manifest = json.loads(path.read_text())
    from mlkit.experiment import manifest_records

    records = manifest_records(path.parent)
    full = manifest.get("full_run_wall_time_s")
    wall = float(manifest["wall_time_s"])
    if full is not None:             # the full run this manifest's runs come from
        wall = float(full)
    elif manifest["runs_reused"]:
        # a re-render (or a partial rerun) times only what it computed: not a full table1
        print(f"the committed manifest reused {manifest['runs_reused']} records, so its "
              f"wall time ({wall:.1f} s) is not a full table1's: lm3fe_table1_s=nan; pass "
              "--run-table1 to measure one")
        wall = float("nan")
    how = ("the full run it renders" if full is not None
           else f"{manifest['runs_computed']} runs computed")
    print(f"full lm3fe/table1 (committed manifest, {how}; {manifest['command']}): "
          f"{wall:.0f} s wall")
    fits = sum(r["timings"]["fit_s"] for r in records)
    per = {}
    for r in records:
        per[r["method"]] = per.get(r["method"], 0.0) + r["timings"]["fit_s"]
    print(f"  fit seconds of its runs (grid searches included): {fits:.0f}; by method: "
          + ", ".join(f"{k} {v:.0f}" for k, v in sorted(per.items(), key=lambda kv: -kv[1])))
    return wall, float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/work/shared/data")
    ap.add_argument("--n-per-class", type=int, default=50)
    ap.add_argument("--run-table1", action="store_true",
                    help="time the full lm3fe/table1 now instead of reading its manifest")
    ap.add_argument("--jobs", type=int, default=2, help="--jobs of --run-table1")
    ap.add_argument("--table1-only", action="store_true",
                    help="with --run-table1: measure only the full lm3fe/table1")
    args = ap.parse_args()
    if args.jobs < 1:
        ap.error(f"--jobs {args.jobs}: give a positive number of parallel runs")
    if args.table1_only and not args.run_table1:
        ap.error("--table1-only goes with --run-table1")
    try:
        if args.table1_only:
            wall, cpu = full_table1(True, args.jobs)
            print(f"lm3fe_table1_s={wall:.2f} lm3fe_table1_cpu_s={cpu:.2f}")
            return
        d = read_mat_views(Path(args.data) / "multiview/scene15/Scene-15.mat")
        fit_s, iters, peak, tr = bench_fits(d.inputs, d.target, args.n_per_class)
        slope = bench_ustep(d.inputs, d.target, tr)
        bench_table1(args.data)
        compare_rfs_with_skfeature(args.data)
        table1_s, _ = full_table1(args.run_table1, args.jobs)
    except (OSError, RuntimeError) as exc:
        raise SystemExit(f"bench_lm3fe: {exc}") from None
    print(f"fit_s={fit_s:.2f} iters={iters} ustep_slope={slope:.2f} peak_mb={peak:.1f} "
          f"lm3fe_table1_s={table1_s:.2f}")


if __name__ == "__main__":
    main()

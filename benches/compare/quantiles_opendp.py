#!/usr/bin/env python3
"""Accuracy of private quantiles: OpenDP's make_private_quantile against dpmech's
Quantile, on the same data, candidates and ε.

Data: 10^6 log-normal durations (median e^5 ~ 148 s, sigma = 1.2) clamped to
[0, 3600], drawn once from a fixed seed and written to a file both sides read (raw
little-endian f64), and its first 10^3 records as a second data set (a typical group).
Candidates: the edges of dpmech's grid, 3600 bins of one second over [0, 3600]
(0, 1, ..., 3600) -- the values dpmech can release. For each n in {10^6, 10^3},
eps in {1, 0.1} and q in {0.1, 0.5, 0.9}, both release the q-quantile (RELEASES
times for n = 10^6, SMALL times for n = 10^3; add/remove neighbours, one record per
unit); the script prints the median absolute error in ranks (distance from q*n to the
released value's rank interval) and in seconds (to the exact quantile
x_(ceil(q*n))), side by side, with the mean absolute errors in brackets.

Run from the repository root (needs `pip install 'opendp==0.16.*' numpy`):

    python3 benches/compare/quantiles_opendp.py [--releases 200] [--small 2000] [--data FILE]

dpmech's side is `cargo run --release -p dpmech --example quantile_compare -- DATA RELEASES SMALL`
(only the core crate: the workspace's other members would build DataFusion),
which this script calls. Not part of CI.

With `--side sql` dpmech's side is the private SQL path instead (issue 42 §2):
`cargo run --profile test --features dpmech-datafusion/compare --example quantile_sql -- DATA RELEASES SMALL BINS` (the
DataFusion crate's example, q in {0.5, 0.9}, one record per unit, `BINS` bins over
[0, 3600], default 65536), and `--opendp-step 0.01` gives OpenDP the issue's candidates
(0, 0.01, ..., 3600). `--save-opendp FILE` / `--load-opendp FILE` keep OpenDP's rows
between runs. The issue's table:

    python3 benches/compare/quantiles_opendp.py --side sql --levels 0.5,0.9 \
        --releases 40 --small 200 --opendp-step 0.01

A median over a few hundred releases still spreads by several ranks at ε = 0.1;
`quantiles_exact.py` computes both mechanisms' exact rank-error distributions instead.
"""

import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np
import opendp.prelude as dp

LEVELS = [0.1, 0.5, 0.9]
EPSILONS = [1.0, 0.1]
BINS = 3600
UPPER = 3600.0


def write_data(path):
    rng = np.random.default_rng(2026)
    x = np.minimum(rng.lognormal(mean=5.0, sigma=1.2, size=1_000_000), UPPER)
    x.astype("<f8").tofile(path)


def errors(sorted_x, q, value):
    """(rank error, value error) of a released value."""
    n = len(sorted_x)
    target = q * n
    below = np.searchsorted(sorted_x, value, side="left")
    at_most = np.searchsorted(sorted_x, value, side="right")
    rank = max(below - target, target - at_most, 0.0)
    truth = sorted_x[max(math.ceil(target) - 1, 0)]
    return rank, abs(value - truth), truth


def opendp_side(x, releases, small, step, levels):
    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    count_candidates = int(round(UPPER / step))
    candidates = [j * UPPER / count_candidates for j in range(count_candidates + 1)]
    rows = []
    for data, count in ((x, releases), (x[:1000], small)):
        sorted_x = np.sort(data)
        for eps in EPSILONS:
            for q in levels:
                # eps = 2 max(q, 1-q) / scale for OpenDP's exponential mechanism (Gumbel
                # report-noisy-max on the integerised rank score).
                scale = 2.0 * max(q, 1.0 - q) / eps
                m = dp.m.make_private_quantile(
                    domain, dp.symmetric_distance(), dp.max_divergence(), candidates, q, scale
                )
                assert m.map(1) <= eps * (1 + 1e-12), (m.map(1), eps)
                ranks, seconds = [], []
                for _ in range(count):
                    r, s, truth = errors(sorted_x, q, m(data))
                    ranks.append(r)
                    seconds.append(s)
                rows.append(
                    dict(n=len(data), eps=eps, q=q, truth=float(truth),
                         rank=float(np.median(ranks)), seconds=float(np.median(seconds)),
                         rank_mean=float(np.mean(ranks)), seconds_mean=float(np.mean(seconds)))
                )
                print(f"opendp n={len(data)} eps={eps} q={q}: {rows[-1]}", file=sys.stderr)
    return rows


def dpmech_side(path, releases, small, side, bins):
    if side == "sql":
        command = ["cargo", "run", "--quiet", "--profile", "test", "--features", "dpmech-datafusion/compare", "--example", "quantile_sql", "--", path,
                   str(releases), str(small), str(bins)]
    else:
        command = ["cargo", "run", "--quiet", "--release", "-p", "dpmech", "--example", "quantile_compare", "--",
                   path, str(releases), str(small)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("time"):
            print(line)
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--releases", type=int, default=200)
    parser.add_argument("--small", type=int, default=2000)
    parser.add_argument("--data", default="/tmp/dpmech_durations.f64")
    parser.add_argument("--side", choices=["core", "sql"], default="core")
    parser.add_argument("--bins", type=int, default=65536, help="dpmech's bins on the sql side")
    parser.add_argument("--opendp-step", type=float, default=UPPER / BINS, help="OpenDP's candidate spacing")
    parser.add_argument("--levels", default=",".join(str(q) for q in LEVELS))
    parser.add_argument("--save-opendp")
    parser.add_argument("--load-opendp")
    args = parser.parse_args()
    levels = [float(q) for q in args.levels.split(",")]
    if not os.path.exists(args.data):
        write_data(args.data)
    x = np.fromfile(args.data, dtype="<f8")
    if args.load_opendp:
        with open(args.load_opendp) as f:
            theirs = json.load(f)
    else:
        theirs = opendp_side(x, args.releases, args.small, args.opendp_step, levels)
        if args.save_opendp:
            with open(args.save_opendp, "w") as f:
                json.dump(theirs, f)
    ours = {(r["n"], r["eps"], r["q"]): r
            for r in dpmech_side(args.data, args.releases, args.small, args.side, args.bins)}
    ours_grid = f"{args.bins} bins (SQL)" if args.side == "sql" else f"{BINS} one-second bins"
    print(f"opendp {dp.__version__ if hasattr(dp, '__version__') else ''}: {args.releases} releases per row "
          f"at n = 10^6, {args.small} at n = 10^3; OpenDP candidates every {args.opendp_step} s, dpmech "
          f"{ours_grid}; median absolute error (mean in brackets)")
    print("| n | ε | q | truth (s) | OpenDP ranks | dpmech ranks | OpenDP s | dpmech s |")
    print("|---|---|---|---|---|---|---|---|")
    for t in theirs:
        o = ours.get((t["n"], t["eps"], t["q"]))
        if o is None:
            continue
        print(f"| {t['n']} | {t['eps']} | {t['q']} | {t['truth']:.2f} "
              f"| {t['rank']:.1f} ({t['rank_mean']:.2f}) | {o['rank']:.1f} ({o['rank_mean']:.2f}) "
              f"| {t['seconds']:.2f} ({t['seconds_mean']:.2f}) | {o['seconds']:.2f} ({o['seconds_mean']:.2f}) |")


if __name__ == "__main__":
    main()

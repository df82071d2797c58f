#!/usr/bin/env python3
"""The exact rank-error distributions of OpenDP's make_private_quantile and of dpmech's
SQL quantile on the data of `quantiles_opendp.py`, computed, not sampled.

Both mechanisms are fully determined by their candidates, their scores and their
scale, so the probability of every candidate can be computed from the data:

* OpenDP: the exponential mechanism (Gumbel report-noisy-max) over the candidates
  0, step, 2·step, ..., 3600, score |(1 − q)·#(x < c) − q·#(x > c)|, scale
  2·max(q, 1 − q)/ε (the scale `quantiles_opendp.py` passes, whose privacy map OpenDP
  checks to be ε):  P(c) ∝ exp(−score(c)/scale).
* dpmech: permute-and-flip over the B + 1 edges of B bins on [0, 3600], score
  |L_j − q·n| (L_j = #(x < e_j)), coin probability p_j = exp(−gap_j/scale) with
  scale = 2(Δu + g)/ε, Δu = max(q, 1 − q), g the selector's score grid
  (2^⌊log₂(Δu·2⁻²⁰)⌋). With each candidate's arrival time uniform on [0, 1]
  (a uniform permutation), j is selected iff its coin shows heads and every earlier
  coin tails:  P(j) = p_j ∫₀¹ ∏_{k≠j} (1 − t·p_k) dt  (Gauss–Legendre on
  geometric panels; the script prints the total mass as a check).

Candidates whose gap exceeds 60 scales (weight below e⁻⁶⁰) are left out. The rank
error of a released value v is the one both comparison scripts use:
max(#(x < v) − qn, qn − #(x ≤ v), 0).

For each (n, ε, q) the script prints each mechanism's median, mean and 90th
percentile of the rank error, and the 5 %–95 % range of the median of R independent
releases (20 000 simulated sets of R draws from the exact distribution, seed 42): the
spread a measured median over R releases has.

    python3 benches/compare/quantiles_exact.py [--data FILE] [--bins 1048576] \
        [--opendp-step 0.01] [--releases 200]

Needs numpy only (the data file is written by `quantiles_opendp.py`'s generator when
missing, which imports opendp).
"""

import argparse
import math
import os

import numpy as np

UPPER = 3600.0
EPSILONS = [1.0, 0.1]
LEVELS = [0.5, 0.9]


def rank_errors(sorted_x, values, q):
    """The rank error of each released value (see the module doc)."""
    target = q * len(sorted_x)
    below = np.searchsorted(sorted_x, values, side="left")
    at_most = np.searchsorted(sorted_x, values, side="right")
    return np.maximum(np.maximum(below - target, target - at_most), 0.0)


def opendp_distribution(sorted_x, q, eps, step):
    """(rank errors, probabilities) of OpenDP's exponential mechanism."""
    count = int(round(UPPER / step))
    candidates = np.arange(count + 1) * (UPPER / count)
    n = len(sorted_x)
    lt = np.searchsorted(sorted_x, candidates, side="left")
    gt = n - np.searchsorted(sorted_x, candidates, side="right")
    score = np.abs((1.0 - q) * lt - q * gt)
    scale = 2.0 * max(q, 1.0 - q) / eps
    gap = score - score.min()
    keep = gap < 60.0 * scale
    weight = np.exp(-gap[keep] / scale)
    return rank_errors(sorted_x, candidates[keep], q), weight / weight.sum()


def dpmech_distribution(sorted_x, q, eps, bins):
    """(rank errors, probabilities, total mass) of dpmech's permute-and-flip over edges."""
    edges = np.arange(bins + 1) * (UPPER / bins)
    n = len(sorted_x)
    below = np.searchsorted(sorted_x, edges, side="left")
    sensitivity = max(q, 1.0 - q)
    grid = 2.0 ** math.floor(math.log2(sensitivity * 2.0**-20))
    scale = 2.0 * (sensitivity + grid) / eps
    gap = np.abs(below - q * n)
    gap = gap - gap.min()
    keep = gap < 60.0 * scale
    p = np.exp(-gap[keep] / scale)
    prob = np.zeros_like(p)
    nodes, weights = quadrature()
    for t, w in zip(nodes, weights):
        log_tails = np.log1p(-t * p)
        prob += w * np.exp(log_tails.sum() - log_tails)
    prob *= p
    return rank_errors(sorted_x, edges[keep], q), prob / prob.sum(), prob.sum()


def quadrature():
    """Nodes and weights on [0, 1]: 40 Gauss–Legendre nodes on each of the panels
    [0, 2⁻²⁴], [2⁻²⁴, 2⁻²³], …, [½, 1] (the integrand falls like exp(−t·Σp), steeply
    when thousands of candidates tie at the best score)."""
    x, w = np.polynomial.legendre.leggauss(40)
    ends = [0.0] + [2.0**-k for k in range(24, -1, -1)]
    nodes = np.concatenate([a + (b - a) * (x + 1.0) / 2.0 for a, b in zip(ends, ends[1:])])
    weights = np.concatenate([w * (b - a) / 2.0 for a, b in zip(ends, ends[1:])])
    return nodes, weights


def summary(errors, prob, releases, rng):
    """Median, mean, p90 and the 5 %–95 % range of a median over `releases` draws."""
    order = np.argsort(errors, kind="stable")
    e, c = errors[order], np.cumsum(prob[order])
    quantile = lambda level: float(e[min(np.searchsorted(c, level), len(e) - 1)])
    draws = rng.choice(errors, size=(20_000, releases), p=prob)
    medians = np.median(draws, axis=1)
    return dict(median=quantile(0.5), mean=float((errors * prob).sum()), p90=quantile(0.9),
                median_lo=float(np.quantile(medians, 0.05)),
                median_hi=float(np.quantile(medians, 0.95)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="/tmp/dpmech_durations.f64")
    parser.add_argument("--bins", type=int, default=1 << 20, help="dpmech's bins (SQL)")
    parser.add_argument("--opendp-step", type=float, default=0.01)
    parser.add_argument("--releases", type=int, default=200, help="R, for the range of a measured median")
    args = parser.parse_args()
    if not os.path.exists(args.data):
        from quantiles_opendp import write_data

        write_data(args.data)
    x = np.fromfile(args.data, dtype="<f8")
    rng = np.random.default_rng(42)
    print(f"exact rank-error distributions: OpenDP candidates every {args.opendp_step} s, "
          f"dpmech {args.bins} bins; median / mean / p90, and [5 %, 95 %] of a median of "
          f"{args.releases} releases")
    print("| n | ε | q | OpenDP | dpmech | OpenDP median of R | dpmech median of R | PF mass |")
    print("|---|---|---|---|---|---|---|---|")
    for data in (x[:1_000_000], x[:1000]):
        sorted_x = np.sort(np.clip(data, 0.0, UPPER))
        for eps in EPSILONS:
            for q in LEVELS:
                theirs = summary(*opendp_distribution(sorted_x, q, eps, args.opendp_step),
                                 args.releases, rng)
                errors, prob, mass = dpmech_distribution(sorted_x, q, eps, args.bins)
                ours = summary(errors, prob, args.releases, rng)
                row = lambda s: f"{s['median']:.0f} / {s['mean']:.2f} / {s['p90']:.0f}"
                spread = lambda s: f"[{s['median_lo']:.1f}, {s['median_hi']:.1f}]"
                print(f"| {len(data)} | {eps} | {q} | {row(theirs)} | {row(ours)} "
                      f"| {spread(theirs)} | {spread(ours)} | {mass:.12f} |")


if __name__ == "__main__":
    main()

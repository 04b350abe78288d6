"""The luck correction with a *sampled* expectation, against the full one (issue 39, item 2).

At a draw the network model's correction is ``w · (v(actual card) − Σ_t c_t/n · v(t))``, the
mean over every card type left in the stock.  The candidate: replace the mean by the average of
v after k cards drawn at random from the same stock (with replacement, from a generator keyed by
(seed, deal, seating, draw), so independent of play): each sampled term still has mean zero, so
the adjusted estimate stays unbiased, and only k + 1 values are needed instead of one per type.

Its variance, in theory: the sampled term adds, at each draw, v(random card) − E v, which is
independent of everything else given the state, so Var(adjusted_k) = Var(adjusted_full) +
Var(full − sampled correction), the second term falling as 1 / k; for one seating, with k = 1,
that term is the full luck's own variance, so the correction removes nothing on average.  No k
does better than the full mean: the efficiency of a sampled correction, even at no CPU at all,
is at most the full correction's variance reduction.

This script measures it: each deal of A − B is replayed under the six seatings by the Python
deal loop (:func:`simkit.runner.python_play.play_one`), and before each draw the model's values
after every type are computed (:func:`simkit.runner.luck.outcome_values`), the full correction
checked against the luck kernel's (:func:`simkit.runner.luck.draw_luck`, to 1e-9), and the
sampled corrections for k = 1, 2, 4 taken from them.

Usage: python experiments/sampled_expectation.py A B SEED DEALS
Prints a Markdown table: per method the variance reduction over plain duplicate with a paired
bootstrap 95 % interval (2,000 resamples of the deals), and the values computed per draw.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from joblib import Parallel, delayed

from simkit.cards import N_COPIES, N_SEATS, N_TYPES
from simkit.engine.layout import S_DECK, S_STOCK_POS
from simkit.policies.registry import parse_policy
from simkit.rng import root_key
from simkit.rules import RuleSet
from simkit.runner.duplicate import SEATINGS, seating_policies
from simkit.runner.luck import VB_WEIGHT, draw_luck, draw_table, new_luck_scratch, outcome_values
from simkit.runner.play import N_RESULT, R_PAYOFF, new_scratch
from simkit.runner.python_play import actors_for, play_one
from simkit.runner.value_model import load_value_model

SAMPLES = (1, 2, 4)


def seating_luck(a: str, b: str, seed: int, deals: int, j: int) -> dict[str, np.ndarray]:
    """Seating j of every deal: A's mean payoff minus B's, and the same of each correction's luck
    (full, kernel, and sampled with k = 1, 2, 4); the values computed per draw."""
    seating = SEATINGS[j]
    specs = seating_policies(parse_policy(a), parse_policy(b), seating)
    actors = actors_for(list(specs))
    labels = [spec.text() for spec in specs]
    is_a = np.array([c == "A" for c in seating])
    block = load_value_model().block
    weight = block[VB_WEIGHT]
    rules = RuleSet().to_array()
    root = root_key(seed)
    scratch, tab = new_scratch(), new_luck_scratch()
    dt, hw, x, h, v = tab.draw, tab.hw, tab.x, tab.h, tab.v
    counts = dt.counts
    values = np.zeros((N_TYPES, N_SEATS))
    out = {name: np.zeros(deals) for name in ("pay", "kernel", "full", *(f"k{k}" for k in SAMPLES))}
    evaluated = draws = 0
    for deal in range(deals):
        luck = {name: np.zeros(N_SEATS) for name in ("kernel", "full", *(f"k{k}" for k in SAMPLES))}
        draw_number = [0]

        def on_draw(s, rules_array, mask, work):
            nonlocal evaluated, draws
            draw_luck(s, rules_array, mask, work, tab, block, luck["kernel"])  # fills the table too
            n = draw_table(s, rules_array, mask, work, dt, hw)
            present = np.flatnonzero(counts[:N_TYPES] > 0)
            for t in present:
                outcome_values(s, t, n, dt, block, x, h, v)
                values[t] = v
            evaluated += present.size
            draws += 1
            actual = s[S_DECK + s[S_STOCK_POS]] // N_COPIES
            p = counts[:N_TYPES] / n
            luck["full"] += weight * (values[actual] - p @ values)
            rng = np.random.default_rng([seed, deal, j, draw_number[0]])
            picks = rng.choice(N_TYPES, size=max(SAMPLES), p=p)
            for k in SAMPLES:
                luck[f"k{k}"] += weight * (values[actual] - values[picks[:k]].mean(axis=0))
            draw_number[0] += 1

        result = np.zeros(N_RESULT, dtype=np.int64)
        play_one(seed, root, deal, 0, actors, rules, scratch, result, labels, on_draw)
        pay = result[R_PAYOFF : R_PAYOFF + N_SEATS].astype(np.float64)
        out["pay"][deal] = pay[is_a].mean() - pay[~is_a].mean()
        for name, value in luck.items():
            out[name][deal] = value[is_a].mean() - value[~is_a].mean()
    out["evaluated"] = np.array([evaluated, draws])
    return out


def main(a: str, b: str, seed: int, deals: int) -> None:
    start = time.perf_counter()
    parts = Parallel(n_jobs=2)(delayed(seating_luck)(a, b, seed, deals, j) for j in range(len(SEATINGS)))
    pay = np.mean([part["pay"] for part in parts], axis=0)
    luck = {name: np.mean([part[name] for part in parts], axis=0) for name in ("kernel", "full", "k1", "k2", "k4")}
    gap = float(np.max(np.abs(luck["kernel"] - luck["full"])))
    assert gap < 1e-9, f"the full correction differs from the luck kernel's by {gap}"
    evaluated, draws = np.sum([part["evaluated"] for part in parts], axis=0)
    rng = np.random.default_rng(seed)
    resamples = rng.integers(0, deals, size=(2000, deals))
    print(f"{a} − {b}, seed {seed}, {deals:,} duplicate deals (6 seatings each), shipped value model; "
          f"{time.perf_counter() - start:.0f} s\n")
    print(f"duplicate mean {pay.mean():+.4f} ± {pay.std(ddof=1) / np.sqrt(deals):.4f}; "
          f"full correction equals the luck kernel's (largest gap {gap:.1e})\n")
    print("| method | adjusted mean ± SE | variance reduction over duplicate [95 %] | values per draw |")
    print("|---|---:|---:|---:|")
    print(f"| plain duplicate | {pay.mean():+.4f} ± {pay.std(ddof=1) / np.sqrt(deals):.4f} | 1 | 0 |")
    for name, label, per_draw in (("full", "full mean (today's `--luck`)", evaluated / draws),
                                  ("k1", "1 sampled card", 1), ("k2", "2 sampled cards", 2),
                                  ("k4", "4 sampled cards", 4)):
        adjusted = pay - luck[name]
        ratio = pay.var(ddof=1) / adjusted.var(ddof=1)
        boot = pay[resamples].var(axis=1, ddof=1) / adjusted[resamples].var(axis=1, ddof=1)
        lo, hi = np.quantile(boot, [0.025, 0.975])
        print(f"| {label} | {adjusted.mean():+.4f} ± {adjusted.std(ddof=1) / np.sqrt(deals):.4f} | "
              f"{ratio:.3f} [{lo:.3f}, {hi:.3f}] | {per_draw + 1:.1f} |")
    for k in SAMPLES:
        extra = (luck["full"] - luck[f"k{k}"]).var(ddof=1) / pay.var(ddof=1)
        print(f"\nk = {k}: the sampled term adds {extra:.3f} of the duplicate variance", end="")
    print()

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))

"""Cheaper designs of a duplicate comparison, measured per CPU-second (issue 39, item 2).

Plain duplicate plays each deal under the six seatings ABB, BAB, BBA, AAB, ABA, BAA.  The
payoffs of a deal sum to zero, so a seating's difference (A's mean payoff minus B's) is 1.5 ×
the lone policy's payoff, signed, and the six-seating mean is ``(1/4) Σ_i (a_i − b_i)``: ``a_i``
A's payoff alone at seat i against two B's (ABB, BAB, BBA), ``b_i`` B's alone at seat i against
two A's (BAA, ABA, AAB).  Each term ``a_i − b_i`` (a complementary *pair* of seatings) is itself
an unbiased duplicate comparison at a third of the CPU.  Three designs are measured here, each
unbiased for the same quantity (the expected six-seating difference):

- **one pair per deal**: seat i drawn uniformly, independently of the deal; ``(3/4)(a_i − b_i)``.
  It pays when the three pairs of a deal are positively correlated (then the second and third
  pair of a deal tell less than a pair of a new deal): efficiency ``3 Var(six) / Var(pair)``.
- **self-play controls**: the pair at seat i, minus B's payoff at seat i in the deal played by
  BBB, plus A's in AAA: ``(3/4)(a_i − B_i − b_i + A_i)``.  Both controls have mean zero averaged
  over the seat, because each deal's payoffs sum to zero; they pay if ``a_i`` follows ``B_i`` (the
  same seat against the same two opponents) more closely than it follows ``b_i``.
- **Horvitz–Thompson sampling of deals**: play deal n with a probability π_n set before its
  play from a cheap predictor z_n of its difference's size, and weight it by 1 / π_n (unbiased
  for the mean over all deals whatever the π_n).  Predictors: the largest payoff of the deal
  played by BBB (its CPU paid for every deal), and the true |difference| (an oracle: the ceiling
  of any predictor, at no CPU).  E[d² | z] is fitted on one half of the deals and used on the
  other (cross-fitted), and the best inclusion rate is taken.

It also counts what sharing the common beginnings of the six seatings would save: the decisions
of a deal's six seatings against those of the tree of their common prefixes (a decision is
shared while the histories are equal and the deciding seat's policy is the same).

CPU is measured per seating as the process CPU time (``time.process_time``, all threads) of
``simulate`` of the deals into a temporary folder, after a 20-deal run of the same seating (the
kernels compiled).  Intervals are bootstrap percentiles over deals (2,000 resamples), the CPU
held fixed.

Usage: python experiments/seating_designs.py A B SEED DEALS [PREFIX_DEALS]
Prints a Markdown table of each design's variance per deal, CPU per deal and efficiency over
plain duplicate (variance × CPU of plain over the design's).
"""

from __future__ import annotations

import sys
import tempfile
import time

import numpy as np

from simkit.cards import N_SEATS
from simkit.deck import deal_deck
from simkit.engine import kernel as E
from simkit.engine.layout import PH_OVER, S_PHASE, S_PLAYER
from simkit.policies.dispatch import builtin_act_state
from simkit.policies.registry import parse_policy
from simkit.rng import root_key, seat_stream, stream_state
from simkit.rules import RuleSet
from simkit.runner.duplicate import SEATINGS
from simkit.runner.play import DECK_RNG, new_scratch
from simkit.runner.python_play import actors_for
from simkit.runner.simulate import simulate
from simkit.specs.base import Execution
from simkit.specs.simulate import SimulateSpec
from simkit.storage.dataset import load_dataset

LONE_A = ("ABB", "BAB", "BBA")  # A alone at seat i
LONE_B = ("BAA", "ABA", "AAB")  # B alone at seat i
PLAYED = SEATINGS + ("AAA", "BBB")
RESAMPLES = 2000


def play_seatings(a: str, b: str, seed: int, deals: int) -> tuple[dict[str, np.ndarray], dict[str, float], float]:
    """Payoffs ``(deals, 3)`` and CPU seconds per deal of every seating of :data:`PLAYED`, and the
    mean number of cards drawn from the stock in a game of the six seatings."""
    payoffs, cpu, draws = {}, {}, []
    columns = [f"payoff_{k}" for k in range(N_SEATS)]
    with tempfile.TemporaryDirectory() as root:
        for seating in PLAYED:
            policies = [a if c == "A" else b for c in seating]
            simulate(SimulateSpec(20, policies, seed, batch_size=20, seating="fixed"), f"{root}/warm-{seating}",
                     Execution(quiet=True))
            start = time.process_time()
            simulate(SimulateSpec(deals, policies, seed, batch_size=min(deals, 10_000), seating="fixed"),
                     f"{root}/{seating}", Execution(quiet=True))
            cpu[seating] = (time.process_time() - start) / deals
            frame = load_dataset(f"{root}/{seating}", columns=columns + ["draws"])
            payoffs[seating] = frame[columns].to_numpy(float)
            if seating in SEATINGS:
                draws.append(float(frame["draws"].mean()))
    return payoffs, cpu, float(np.mean(draws))


def design_rows(payoffs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per deal: the plain six-seating difference, and per seat i the pair term and the term with
    self-play controls (``(deals, 3)`` each), already scaled to estimate the six-seating mean."""
    lone = {s: payoffs[s][:, s.index("A") if s in LONE_A else s.index("B")] for s in LONE_A + LONE_B}
    six = np.mean([1.5 * lone[s] for s in LONE_A] + [-1.5 * lone[s] for s in LONE_B], axis=0)
    pair = np.stack([0.75 * (lone[LONE_A[i]] - lone[LONE_B[i]]) for i in range(N_SEATS)], axis=1)
    controlled = pair - 0.75 * payoffs["BBB"] + 0.75 * payoffs["AAA"]
    return {"six": six, "pair": pair, "controlled": controlled}


def random_seat_variance(terms: np.ndarray) -> float:
    """Variance of ``terms[n, i]`` with i uniform and independent of the deal (rows: deals)."""
    return float(terms.var(axis=0, ddof=1).mean() + terms.mean(axis=0).var())


def horvitz_thompson(d: np.ndarray, predictor: np.ndarray, pilot_cpu: float, plain_cpu: float,
                     seed: int) -> tuple[float, float]:
    """Best efficiency over inclusion rates of sampling deal n with π_n ∝ sqrt(E[d² | bin of
    predictor_n]) (cross-fitted on halves), and the mean inclusion at it."""
    half = np.random.default_rng(seed).random(d.size) < 0.5
    second = np.empty(d.size)
    for fit, use in ((half, ~half), (~half, half)):
        for value in np.unique(predictor):
            cell = fit & (predictor == value)
            second[use & (predictor == value)] = (d[cell] ** 2).mean() if cell.sum() >= 20 else (d[fit] ** 2).mean()
    scale = np.sqrt(np.maximum(second, 1e-9))
    best, rate = 0.0, 1.0
    for c in np.geomspace(1e-3, 1e3, 600):
        pi = np.minimum(1.0, c * scale)
        variance = d.var() + np.mean(d ** 2 * (1 - pi) / pi)  # per deal offered, as N × Var(mean)
        efficiency = d.var() * plain_cpu / (variance * (pilot_cpu + pi.mean() * plain_cpu))
        if efficiency > best:
            best, rate = float(efficiency), float(pi.mean())
    return best, rate


def prefix_share(a: str, b: str, seed: int, deals: int) -> dict[str, float]:
    """Share of each policy's decisions that the tree of the six seatings' common prefixes keeps."""
    actors = {c: actors_for([parse_policy(name)] * N_SEATS)[0] for c, name in (("A", a), ("B", b))}
    rules = RuleSet().to_array()
    root = root_key(seed)
    played = {"A": 0, "B": 0}
    kept = {"A": 0, "B": 0}
    for deal in range(deals):
        nodes = set()
        for seating in SEATINGS:
            s, deck, rngs, mask, obs, work, pwork, ev, ev_n, _, _ = new_scratch()
            deal_deck(root, deal, rngs[DECK_RNG], deck)
            for p in range(N_SEATS):
                stream_state(root, deal, seat_stream(p), rngs[p])
            work[E.EW_CHANCE] = E.CHANCE_OFF
            E.start(s, deck, 0, rules, mask, work, ev, ev_n)
            history: list[int] = []
            while s[S_PHASE] != PH_OVER:
                p = int(s[S_PLAYER])
                who = seating[p]
                actor = actors[who]
                action = int(builtin_act_state(actor.builtin_id, s, obs, mask, actor.params, rngs[p], rules, pwork))
                played[who] += 1
                key = (tuple(history), who)
                if key not in nodes:
                    nodes.add(key)
                    kept[who] += 1
                history.append(action)
                E.apply_legal(s, action, rules, mask, work, ev, ev_n)
    return {who: kept[who] / played[who] for who in played}


def main(a: str, b: str, seed: int, deals: int, prefix_deals: int = 300) -> None:
    wall = time.perf_counter()
    payoffs, cpu, draws = play_seatings(a, b, seed, deals)
    worst = max(float(np.abs(p.sum(axis=1)).max()) for p in payoffs.values())
    assert worst == 0.0, f"a deal's payoffs do not sum to zero (by {worst})"
    rows = design_rows(payoffs)
    six, pair, controlled = rows["six"], rows["pair"], rows["controlled"]
    assert np.allclose(pair.mean(axis=1), six) and np.allclose(controlled.mean(axis=1), six)
    plain_cpu = sum(cpu[s] for s in SEATINGS)
    pair_cpu = plain_cpu / 3  # the three pairs hold the same policies: each is a third on average
    controlled_cpu = pair_cpu + cpu["AAA"] + cpu["BBB"]
    resamples = np.random.default_rng(seed).integers(0, deals, size=(RESAMPLES, deals))

    def efficiency(terms: np.ndarray, design_cpu: float) -> tuple[float, float, float, float]:
        point = six.var(ddof=1) * plain_cpu / (random_seat_variance(terms) * design_cpu)
        boot = [six[r].var(ddof=1) * plain_cpu / (random_seat_variance(terms[r]) * design_cpu) for r in resamples]
        lo, hi = np.quantile(boot, [0.025, 0.975])
        return random_seat_variance(terms), point, float(lo), float(hi)

    print(f"{a} − {b}, seed {seed}, {deals:,} deals under each of ABB BAB BBA AAB ABA BAA AAA BBB; "
          f"{time.perf_counter() - wall:.0f} s\n")
    print("CPU ms per deal: " + ", ".join(f"{s} {cpu[s] * 1e3:.4f}" for s in PLAYED))
    print(f"cards drawn from the stock per game of the six seatings: {draws:.2f}, so plain duplicate spends "
          f"{plain_cpu / 6 / draws * 1e6:.2f} µs of CPU per draw")
    means = pair.mean(axis=0)
    correlation = np.corrcoef(pair.T)
    print(f"pair means by seat {np.round(means, 3).tolist()}, correlations between a deal's pairs "
          f"{correlation[0, 1]:.3f} {correlation[0, 2]:.3f} {correlation[1, 2]:.3f}\n")
    lone_b = [payoffs[s][:, s.index("B")] for s in LONE_B]
    print("correlation of A's payoff alone at seat i with B's there in BBB, and of B's alone with A's in AAA: "
          + ", ".join(f"seat {i} {np.corrcoef(payoffs[LONE_A[i]][:, i], payoffs['BBB'][:, i])[0, 1]:.3f} / "
                      f"{np.corrcoef(lone_b[i], payoffs['AAA'][:, i])[0, 1]:.3f}" for i in range(N_SEATS)) + "\n")
    print("| design | mean ± SE | variance per deal | CPU ms per deal | efficiency over plain [95 %] |")
    print("|---|---:|---:|---:|---:|")
    print(f"| plain duplicate (six seatings) | {six.mean():+.4f} ± {six.std(ddof=1) / np.sqrt(deals):.4f} | "
          f"{six.var(ddof=1):.3f} | {plain_cpu * 1e3:.4f} | 1 |")
    for label, terms, design_cpu in (("one pair per deal", pair, pair_cpu),
                                     ("one pair + self-play controls", controlled, controlled_cpu)):
        variance, point, lo, hi = efficiency(terms, design_cpu)
        print(f"| {label} | (mean over seats {terms.mean():+.4f}) | {variance:.3f} | {design_cpu * 1e3:.4f} | "
              f"{point:.3f} [{lo:.3f}, {hi:.3f}] |")
    bbb = np.digitize(np.abs(payoffs["BBB"]).max(axis=1), [0.01, 1, 2, 4, 6, 8, 12, 16, 24])
    oracle = np.digitize(np.abs(six), [0.01, 0.5, 1, 2, 3, 5, 8])
    for label, predictor, pilot in (("deals sampled by BBB's largest payoff", bbb, cpu["BBB"]),
                                    ("deals sampled by the true |difference| (oracle)", oracle, 0.0)):
        best, rate = horvitz_thompson(six, predictor, pilot, plain_cpu, seed)
        print(f"| {label} | (unbiased by design) | — | {(pilot + rate * plain_cpu) * 1e3:.4f} | "
              f"{best:.3f} (best, {rate:.0%} of deals played) |")
    if prefix_deals:
        share = prefix_share(a, b, seed, prefix_deals)
        print(f"\nshared prefixes of the six seatings ({prefix_deals} deals): the tree keeps "
              f"{share['A']:.1%} of {a}'s decisions and {share['B']:.1%} of {b}'s")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), *(int(x) for x in sys.argv[5:6]))

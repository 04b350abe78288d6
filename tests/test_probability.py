"""Dealt hands and hand-event probabilities: exact combinatorics against brute force and
independent closed forms, Monte Carlo against the exact values, the engine's deals, determinism,
kernels against plain Python, the dealt-hands table, its files and the CLI."""

from __future__ import annotations

import json
import math
from collections import Counter
from fractions import Fraction
from itertools import combinations, pairwise

import numba
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simkit.studies.dealt import deal_table, dealt_hands
from simkit.analysis.exact import EVENTS, count_hands, exact_probability
from simkit.studies.probability import estimate_probability, event_indicators, probability_table
from simkit.analysis.stats import wilson_interval
from simkit.cards import CHE, JIANG, MA, PAO, SHI, XIANG, ZU, card_type
from simkit.cli import main
from simkit.evaluator import evaluate
from simkit.generate import random_group_holdings
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner import simulate
from simkit.runner.play import R_DEALT, play_one
from simkit.storage import load_dataset
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution

QUIET = Execution(quiet=True)

EXACT_NAMES = [name for name, spec in EVENTS.items() if spec.exact]
MC_ONLY_NAMES = [name for name, spec in EVENTS.items() if not spec.exact]
TRIADS = ((JIANG, SHI, XIANG), (CHE, MA, PAO))


# ---------------------------------------------------------------------------
# plain-Python indicators written from the definitions (docs/rules.md §1-§3)
# ---------------------------------------------------------------------------
def py_indicator(name: str, counts, evaluation=None, **p) -> bool:
    n = [int(x) for x in counts]
    jiang = [n[card_type(c, JIANG)] for c in range(4)]
    zu = [n[card_type(c, ZU)] for c in range(4)]
    long_j = all(x >= 2 for x in jiang)
    long_z = all(x >= 2 for x in zu)
    fat_j = sum(x >= 2 for x in jiang) >= 3
    fat_z = sum(x >= 2 for x in zu) >= 3
    plain = any(all(n[card_type(c, r)] >= 2 for r in triad) for c in range(4) for triad in TRIADS)
    simple = {
        "jiang_at_least_k": lambda: sum(jiang) >= p.get("k", 0),
        "pairs_at_least_k": lambda: sum(x >= 2 for x in n) >= p.get("k", 0),
        "zi_at_least_k": lambda: sum(x == 3 for x in n) >= p.get("k", 0),
        "nao_at_least_k": lambda: sum(x == 4 for x in n) >= p.get("k", 0),
        "nao": lambda: any(x == 4 for x in n),
        "long_chariot_jiang": lambda: long_j,
        "long_chariot_zu": lambda: long_z,
        "long_chariot": lambda: long_j or long_z,
        "fat_chariot_jiang": lambda: fat_j,
        "fat_chariot_zu": lambda: fat_z,
        "fat_chariot": lambda: fat_j or fat_z,
        "plain_chariot": lambda: plain,
        "any_chariot": lambda: plain or fat_j or fat_z,
    }
    if name in simple:
        return bool(simple[name]())
    ev = evaluation if evaluation is not None else evaluate(np.array(n), explain_best=False)
    if name in ("complete", "dealer_dealt_complete"):
        return ev.complete
    if name == "dealer_dealt_win":
        return ev.wins
    if name == "hu_at_least_h":
        return ev.complete and ev.hu >= p["h"]
    if name == "min_idle_at_most_m":
        return ev.min_idle <= p["m"]
    raise KeyError(name)


def params_of(name: str, values=None) -> list[dict]:
    spec = EVENTS[name]
    if spec.param is None:
        return [{}]
    vals = range(spec.lo, spec.hi + 1) if values is None else values
    return [{spec.param: v} for v in vals]


# ---------------------------------------------------------------------------
# (1) exact DP against enumeration of physical cards on scaled-down decks
# ---------------------------------------------------------------------------
SMALL_DECKS = [
    # (types, hand size): each a subset of the real types, 4 copies each
    pytest.param((0, 1, 2, 7, 8, 9), 7, id="YJSX-RJSX-7"),  # 将士相 of two colours: 素车, 将
    pytest.param((0, 7, 14, 21, 6), 8, id="4J-YZ-8"),  # 将 长车 / 肥车
    pytest.param((0, 6, 7, 13, 14, 20), 6, id="3J-3Z-6"),  # 肥车 of 将 and of 卒
    pytest.param((3, 4, 5, 13, 20, 27), 6, id="YCMP-3Z-6"),  # 车马炮 素车, 卒 肥车
    pytest.param((6, 13, 20, 27, 25), 8, id="4Z-GM-8"),  # 卒 长车
]


@pytest.mark.parametrize("types, size", SMALL_DECKS)
def test_exact_counts_match_enumeration_of_physical_cards(types, size):
    physical = [t for t in types for _ in range(4)]  # one entry per physical card
    tally = Counter(combinations(physical, size))  # every size-subset of the cards
    assert sum(tally.values()) == math.comb(len(physical), size)
    vectors = []
    weights = []
    for key, w in tally.items():
        v = np.zeros(28, dtype=np.int64)
        for t in key:
            v[t] += 1
        vectors.append(v)
        weights.append(w)
    vectors = np.array(vectors)
    weights = np.array(weights, dtype=np.int64)
    for name in EXACT_NAMES:
        for p in params_of(name):
            brute = sum(w for v, w in zip(vectors, weights) if py_indicator(name, v, **p))
            assert count_hands(name, size, types=types, **p) == brute, (name, p)
            kernel = event_indicators(vectors, [(name, p)])[:, 0]
            assert int(weights @ kernel) == brute, (name, p)


def test_small_deck_events_are_not_all_trivial():
    # the scaled-down decks above really exercise the chariot events
    assert count_hands("plain_chariot", 7, types=(0, 1, 2, 7, 8, 9)) > 0
    assert count_hands("long_chariot_jiang", 8, types=(0, 7, 14, 21, 6)) == 6**4
    assert count_hands("fat_chariot_zu", 6, types=(3, 4, 5, 13, 20, 27)) == 6**3
    assert count_hands("long_chariot_zu", 8, types=(6, 13, 20, 27, 25)) == 6**4


# ---------------------------------------------------------------------------
# (2) 将 counts are hypergeometric
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("seat, n", [(0, 31), (1, 30), (2, 30)])
def test_jiang_at_least_k_is_hypergeometric(seat, n):
    for k in range(17):
        exact = exact_probability("jiang_at_least_k", seat=seat, k=k)
        rational = Fraction(sum(math.comb(16, j) * math.comb(96, n - j) for j in range(k, 17)), math.comb(112, n))
        assert exact == rational
        assert float(exact) == pytest.approx(stats.hypergeom.sf(k - 1, 112, 16, n), rel=1e-9, abs=1e-15)


# ---------------------------------------------------------------------------
# (3) sanity and independent closed forms (inclusion-exclusion)
# ---------------------------------------------------------------------------
def _at_least_two_poly(m: int) -> list[int]:
    """Coefficients of (6x^2 + 4x^3 + x^4)^m: m given types each held >= 2."""
    poly = [1]
    for _ in range(m):
        new = [0] * (len(poly) + 4)
        for i, a in enumerate(poly):
            for c in (2, 3, 4):
                new[i + c] += a * math.comb(4, c)
        poly = new
    return poly


def _all_at_least_two(m: int, n: int) -> int:
    """Hands of n cards holding >= 2 copies of each of m given types."""
    return sum(a * math.comb(112 - 4 * m, n - j) for j, a in enumerate(_at_least_two_poly(m)) if 0 <= n - j)


@pytest.mark.parametrize("seat, n", [(0, 31), (1, 30)])
def test_exact_values_agree_with_inclusion_exclusion(seat, n):
    total = math.comb(112, n)
    # 闹: union over the 28 types of "all 4 copies held"
    nao = sum((-1) ** (j + 1) * math.comb(28, j) * math.comb(112 - 4 * j, n - 4 * j) for j in range(1, n // 4 + 1))
    assert exact_probability("nao", seat) == Fraction(nao, total)
    # 素车: union over the 8 triads (disjoint types) of "each of 3 types held >= 2"
    plain = sum((-1) ** (j + 1) * math.comb(8, j) * _all_at_least_two(3 * j, n) for j in range(1, 9))
    assert exact_probability("plain_chariot", seat) == Fraction(plain, total)
    # 长车: 4 given types >= 2; 将 or 卒: inclusion-exclusion of the two
    long_one = _all_at_least_two(4, n)
    assert exact_probability("long_chariot_jiang", seat) == Fraction(long_one, total)
    assert exact_probability("long_chariot", seat) == Fraction(2 * long_one - _all_at_least_two(8, n), total)
    # 肥车 of 将: exactly 3 colours >= 2 (the 4th < 2) plus all 4
    below_two = [1, 4]  # C(4,0), C(4,1) x
    fat_j = 0
    for j, a in enumerate(_at_least_two_poly(3)):
        for c, b in enumerate(below_two):
            if 0 <= n - j - c:
                fat_j += 4 * a * b * math.comb(96, n - j - c)
    assert exact_probability("fat_chariot_jiang", seat) == Fraction(fat_j + long_one, total)


@pytest.mark.parametrize("seat", [0, 1])
def test_exact_probability_sanity(seat):
    for name in ("jiang_at_least_k", "pairs_at_least_k", "zi_at_least_k", "nao_at_least_k"):
        values = [exact_probability(name, seat, k=k) for k in range(EVENTS[name].hi + 1)]
        assert values[0] == 1
        assert all(a >= b for a, b in pairwise(values))
        assert all(0 <= v <= 1 for v in values)
    # 将 distribution sums to 1
    at_least = [exact_probability("jiang_at_least_k", seat, k=k) for k in range(17)] + [Fraction(0)]
    assert sum(at_least[k] - at_least[k + 1] for k in range(17)) == 1
    # a 31/30-card hand always holds >= 2 pairs; at most 15 (resp. 15) types twice
    assert exact_probability("pairs_at_least_k", seat, k=1) == 1
    assert exact_probability("pairs_at_least_k", seat, k=16) == 0
    assert exact_probability("nao", seat) == exact_probability("nao_at_least_k", seat, k=1)
    # 将 / 卒 symmetry, 长车 => 肥车, unions
    ex = {name: exact_probability(name, seat) for name in EXACT_NAMES if EVENTS[name].param is None}
    assert ex["long_chariot_jiang"] == ex["long_chariot_zu"] and ex["fat_chariot_jiang"] == ex["fat_chariot_zu"]
    assert ex["long_chariot"] <= ex["fat_chariot"]
    assert max(ex["long_chariot_jiang"], ex["long_chariot_zu"]) <= ex["long_chariot"]
    assert ex["long_chariot"] <= ex["long_chariot_jiang"] + ex["long_chariot_zu"]
    assert max(ex["plain_chariot"], ex["fat_chariot"]) <= ex["any_chariot"] <= ex["plain_chariot"] + ex["fat_chariot"]
    # the dealer's extra card makes every monotone event at least as likely
    if seat == 0:
        for name, value in ex.items():
            assert value >= exact_probability(name, 1), name


# ---------------------------------------------------------------------------
# (4) Monte Carlo agrees with the exact values
# ---------------------------------------------------------------------------
MC_EVENTS = [
    *(("jiang_at_least_k", {"k": k}) for k in (2, 4, 6, 8, 10)),
    *(("pairs_at_least_k", {"k": k}) for k in (8, 10, 12)),
    *(("zi_at_least_k", {"k": k}) for k in (1, 2, 3, 4)),
    ("nao_at_least_k", {"k": 2}),
    *((name, {}) for name in EXACT_NAMES if EVENTS[name].param is None),
]
MC_DEALS = 200_000
MC_SEED = 2026


def test_monte_carlo_agrees_with_exact_values():
    table = probability_table(MC_DEALS, seed=MC_SEED, events=MC_EVENTS, seats=(0, 1), confidence=0.99)
    assert len(table) == 2 * len(MC_EVENTS)
    assert table["exact"].notna().all()
    bad = table[(table["exact"] < table["lo"]) | (table["exact"] > table["hi"])]
    assert bad.empty, bad.to_string()
    # and together: sum z^2 against chi-square (a loose check, the events are correlated)
    z2 = float((table["z"] ** 2).sum())
    assert z2 < stats.chi2.ppf(0.999, len(table))


def test_estimate_probability_matches_the_table_row():
    table = probability_table(20_000, seed=4, events=[("jiang_at_least_k", 8), "plain_chariot", "dealer_complete"],
                              batch_size=3_000)
    for event, params, seat in (("jiang_at_least_k", {"k": 8}, 1), ("plain_chariot", {}, 2),
                                ("dealer_complete", {}, 0)):
        r = estimate_probability(event, 20_000, 4, seat=seat, batch_size=3_000, **params)
        row = table[(table.event == r.event) & (table.seat == seat)].iloc[0]
        assert r.hits == row.hits and r.p == row.p and (r.lo, r.hi) == (row.lo, row.hi)
        frame = r.to_frame()
        assert list(frame.columns) == list(table.columns) + ["confidence"] and len(frame) == 1
        assert frame["confidence"].iloc[0] == 0.95
    r = estimate_probability("dealer_complete", 20_000, 4, batch_size=3_000)
    assert r.exact is None and r.z is None
    r = estimate_probability("nao", 20_000, 4, seat=1, batch_size=3_000)
    assert r.exact == pytest.approx(float(exact_probability("nao", 1)))
    assert r.z == pytest.approx((r.p - r.exact) / math.sqrt(r.exact * (1 - r.exact) / 20_000))


def test_same_deals_as_deal_table():
    """Same seed: the event counts of the very hands of simkit.studies.dealt.deal_table."""
    deals, seed, batch = 6_000, 17, 2_500
    table = deal_table(deals, seed=seed, batch_size=batch)
    events = [("jiang_at_least_k", 8), ("pairs_at_least_k", 10), ("zi_at_least_k", 2), "nao", "complete",
              ("min_idle_at_most_m", 4), "dealer_wins"]
    ours = probability_table(deals, seed, events=events, batch_size=batch)
    for seat in range(3):
        s = table[table.seat == seat]
        expect = {
            "jiang_at_least_k(k=8)": int((s.n_jiang >= 8).sum()),
            "pairs_at_least_k(k=10)": int((s.n_pairs >= 10).sum()),
            "zi_at_least_k(k=2)": int((s.n_zi >= 2).sum()),
            "nao": int((s.n_nao >= 1).sum()),
            "complete": int(s.complete.sum()),
            "min_idle_at_most_m(m=4)": int((s.min_idle <= 4).sum()),
        }
        if seat == 0:
            expect["dealer_dealt_win"] = int(s.wins.sum())
        got = ours[ours.seat == seat].set_index("event")["hits"].to_dict()
        assert got == expect


# ---------------------------------------------------------------------------
# (5) the engine's deals; determinism across batch sizes and thread counts
# ---------------------------------------------------------------------------
def test_prob_deals_the_engines_hands():
    """Deal N of --seed S is the engine's deal N: the hands play_one deals, and the events
    prob counts are those of these hands."""
    seed, deals = 31, 400
    hands = dealt_hands(seed, deals)
    ids, params, _ = policy_arrays(parse_policies("random,random,random"))
    rules = RuleSet().to_array()
    for n in (0, 1, 57, 399):
        result = play_one(seed, n, ids, params, rules)[3]
        assert np.array_equal(hands[n], result[R_DEALT : R_DEALT + 84].reshape(3, 28)), n
    assert np.array_equal(dealt_hands(seed, 10, first_deal=57), hands[57:67])
    events = [("jiang_at_least_k", 7), "any_chariot", "nao", ("min_idle_at_most_m", 4), "complete"]
    table = probability_table(deals, seed, events=events, batch_size=150)
    for seat in range(3):
        expect = event_indicators(hands[:, seat], events).sum(axis=0).tolist()
        assert table[table.seat == seat]["hits"].tolist() == expect


def test_deal_table_has_the_features_of_a_simulated_dataset(tmp_path):
    """The same seed deals the same hands in simkit simulate and in the dealt-hands table."""
    seed, deals = 12, 300
    path = simulate(SimulateSpec(deals, "random,random,random", seed, batch_size=120), tmp_path / "run", QUIET)
    columns = {"n_jiang": "jiang", "n_pairs": "pairs", "n_zi": "zi", "n_nao": "nao", "min_idle": "idle"}
    data = load_dataset(path, columns=["deal_id"] + [f"dealt_{c}_{k}" for c in columns.values() for k in range(3)])
    data = data.sort_values("deal_id").reset_index(drop=True)
    table = deal_table(deals, seed)
    for seat in range(3):
        mine = table[table.seat == seat].reset_index(drop=True)
        for ours, theirs in columns.items():
            assert mine[ours].tolist() == data[f"dealt_{theirs}_{seat}"].tolist(), (seat, ours)


def test_results_do_not_depend_on_batch_size_or_thread_count():
    events = [("jiang_at_least_k", 7), "any_chariot", "nao", ("min_idle_at_most_m", 3), "complete"]
    before = numba.get_num_threads()
    runs = {}
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            for batch in (1_000, 3_000):
                runs[threads, batch] = (probability_table(30_000, seed=8, events=events, batch_size=batch),
                                        deal_table(5_000, seed=8, batch_size=batch).drop(columns="batch"))
    finally:
        numba.set_num_threads(before)
    (first, first_table), *others = runs.values()
    for table, hands in others:
        assert table["hits"].tolist() == first["hits"].tolist()
        pd.testing.assert_frame_equal(hands, first_table)
    other = probability_table(30_000, seed=9, events=events, batch_size=3_000)
    assert first["hits"].tolist() != other["hits"].tolist()


# ---------------------------------------------------------------------------
# (6) numba indicators against the plain-Python definitions
# ---------------------------------------------------------------------------
def _random_hands() -> np.ndarray:
    rng = np.random.default_rng(123)
    hands = []
    for i in range(1500):  # uniformly dealt 31- and 30-card hands
        ids = rng.choice(112, size=31 if i % 2 == 0 else 30, replace=False)
        hands.append(np.bincount(ids // 4, minlength=28))
    # counts biased to 2..4 so chariots, 子 and 闹 are common
    hands.extend(rng.choice(5, size=(1500, 28), p=[0.3, 0.15, 0.3, 0.15, 0.1]))
    # holdings built from groups: mostly complete, so hu / wins are exercised
    conc, _, _ = random_group_holdings(500, seed=5, total=(20, 31))
    hands.extend(conc)
    return np.array(hands, dtype=np.int64)


def test_numba_indicators_match_plain_python():
    hands = _random_hands()
    evaluations = [evaluate(h, explain_best=False) for h in hands]
    assert sum(e.complete for e in evaluations) > 100 and sum(e.wins for e in evaluations) > 5
    cases = []
    for name in EVENTS:
        values = {"jiang_at_least_k": (0, 5, 8, 12), "pairs_at_least_k": (3, 10, 14),
                  "zi_at_least_k": (1, 3, 6), "nao_at_least_k": (1, 2, 4),
                  "hu_at_least_h": (0, 10, 48), "min_idle_at_most_m": (0, 2, 5)}.get(name)
        cases.extend((name, p) for p in params_of(name, values))
    got = event_indicators(hands, cases)
    mixed = set()
    for j, (name, p) in enumerate(cases):
        expect = [py_indicator(name, h, e, **p) for h, e in zip(hands, evaluations)]
        assert got[:, j].astype(bool).tolist() == expect, (name, p)
        if 0 < sum(expect) < len(hands):
            mixed.add(name)
    assert mixed == set(EVENTS)  # every event is seen both true and false


# ---------------------------------------------------------------------------
# (7) bad input
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: exact_probability("full_house"), "unknown event 'full_house'; known events: jiang_at_least_k"),
        (lambda: exact_probability("jiang_at_least_k", k=17), "k must be an integer in 0..16, got 17"),
        (lambda: exact_probability("jiang_at_least_k", k=-1), "k must be an integer in 0..16, got -1"),
        (lambda: exact_probability("jiang_at_least_k"), "needs the parameter k (0..16)"),
        (lambda: exact_probability("nao", k=1), "takes no parameters"),
        (lambda: exact_probability("jiang_at_least_k", m=1, k=2), "takes only the parameter k, got m"),
        (lambda: exact_probability("nao", seat=3), "seat must be 0, 1 or 2, got 3"),
        (lambda: exact_probability("nao", seat=-1), "seat must be 0, 1 or 2, got -1"),
        (lambda: exact_probability("dealer_wins"), "has no closed form (Monte Carlo only); exact events: "),
        (lambda: exact_probability("hu_at_least_h", h=10), "has no closed form"),
        (lambda: estimate_probability("dealer_wins", 10, 1, seat=1), "defined for seat 0 only, got seat 1"),
        (lambda: estimate_probability("unknown", 10, 1), "unknown event 'unknown'"),
        (lambda: estimate_probability("nao", 0, 1), "deals must be an integer >= 1, got 0"),
        (lambda: estimate_probability("nao", 10, -5), "seed must be an integer >= 0"),
        (lambda: estimate_probability("nao", 10, 1, seat=5), "seat must be 0, 1 or 2, got 5"),
        (lambda: estimate_probability("nao", 10, 1, batch_size=0), "batch_size must be an integer >= 1"),
        (lambda: estimate_probability("nao", 10, 1, confidence=1.5), "confidence must be in (0, 1)"),
        (lambda: estimate_probability("min_idle_at_most_m", 10, 1, m=32), "m must be an integer in 0..31"),
        (lambda: probability_table(10, 1, events=["nao"], seats=(0, 3)), "seat must be 0, 1 or 2, got 3"),
        (lambda: probability_table(10, 1, events=[("zi_at_least_k", 29)]), "k must be an integer in 0..28"),
        (lambda: probability_table(10, 1, events=[42]), "an event is a name"),
        (lambda: count_hands("nao", 9, types=(0, 1)), "size must be an integer in 0..8"),
        (lambda: count_hands("nao", 2, types=(0, 28)), "types must be type indices 0..27"),
        (lambda: event_indicators(np.full((1, 28), 5), ["nao"]), "hand counts must lie in 0..4"),
    ],
)
def test_bad_input_raises_a_one_line_value_error(call, message):
    with pytest.raises(ValueError) as info:
        call()
    text = str(info.value)
    assert message in text and "\n" not in text


# ---------------------------------------------------------------------------
# (8) the dealt-hands table, its files and the CLI (simkit prob --hands, simkit deals)
# ---------------------------------------------------------------------------
def test_deal_table_columns_and_seeding():
    a = deal_table(3000, seed=5, batch_size=700)
    assert list(a.columns) == ["deal_id", "batch", "seat", "n_cards", "n_jiang", "n_pairs", "n_zi", "n_nao",
                               "min_idle", "complete", "hu", "units", "wins"]
    assert a.groupby("seat")["n_cards"].first().tolist() == [31, 30, 30]
    assert a["batch"].max() == 4 and (a["batch"] == a["deal_id"] // 700).all()
    assert not a.equals(deal_table(3000, seed=6, batch_size=700))
    # the first n deals are the same whatever the total
    pd.testing.assert_frame_equal(deal_table(1000, seed=5, batch_size=700), a[a.deal_id < 1000])


def test_features_match_the_evaluator_on_the_same_deals():
    table = deal_table(50, seed=9, batch_size=50)
    hands = dealt_hands(9, 50)
    for d in range(50):
        for seat in range(3):
            counts = hands[d, seat]
            row = table[(table.deal_id == d) & (table.seat == seat)].iloc[0]
            res = evaluate(counts, explain_best=False)
            assert row.min_idle == res.min_idle and bool(row.complete) == res.complete and bool(row.wins) == res.wins
            assert row.hu == (res.hu if res.complete else -1) and row.units == res.units
            assert row.n_cards == counts.sum() == (31 if seat == 0 else 30)
            assert row.n_jiang == counts[[0, 7, 14, 21]].sum() and row.n_nao == (counts == 4).sum()
            assert row.n_pairs == (counts >= 2).sum() and row.n_zi == (counts == 3).sum()


def test_deal_table_agrees_with_exact_jiang_probability():
    table = deal_table(20_000, seed=3)
    dealer = table[table.seat == 0]
    k = int((dealer.n_jiang >= 8).sum())
    interval = wilson_interval(k, len(dealer), confidence=0.999)
    assert interval.contains(float(exact_probability("jiang_at_least_k", seat=0, k=8)))


def _check_hands_folder(out, deals, seed):
    frame = pd.read_parquet(out / "deals.parquet")
    assert len(frame) == 3 * deals and frame["complete"].dtype == bool
    pd.testing.assert_frame_equal(frame, deal_table(deals, seed))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "dealt_hands" and manifest["seed"] == seed and manifest["deals"] == deals
    assert manifest["batch_size"] == 10_000 and manifest["rules"] == RuleSet().to_dict()
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Wilson" in report and "min_idle.png" in report
    assert f"| {float(exact_probability('jiang_at_least_k', 0, k=8)):.5f} |" in report  # >= 8 将, exact
    for name in ("min_idle.png", "min_idle.svg", "n_jiang.png", "n_jiang.svg"):
        assert (out / name).stat().st_size > 1000
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    return report


def test_cli_deals_is_prob_hands(tmp_path, capsys):
    assert main(["deals", "--deals", "2000", "--seed", "4", "--out", str(tmp_path / "deals")]) == 0
    assert capsys.readouterr().out.startswith("2,000 deals in ")
    report = _check_hands_folder(tmp_path / "deals", 2000, 4)
    assert main(["prob", "nao", "--deals", "2000", "--seed", "4", "--hands", str(tmp_path / "prob")]) == 0
    out = capsys.readouterr().out
    assert "nao" in out and str(tmp_path / "prob" / "report.md") in out
    assert _check_hands_folder(tmp_path / "prob", 2000, 4) == report
    # the table's 闹 count of the dealer is prob's
    dealer = pd.read_parquet(tmp_path / "prob" / "deals.parquet").query("seat == 0")
    assert int((dealer.n_nao >= 1).sum()) == probability_table(2000, 4, events=["nao"], seats=0)["hits"].iloc[0]
    assert main(["deals", "--deals", "0", "--out", str(tmp_path / "bad")]) == 2


def test_former_event_names_read_as_the_new_ones(capsys):
    """``dealer_wins`` read as "the dealer wins the deal": it is now ``dealer_dealt_win`` (a 天胡
    dealt hand), and the old name, kept as an alias, gives the very same row under the new name."""
    from simkit.cli import main

    old = probability_table(3_000, seed=8, events=["dealer_wins", "dealer_complete"], seats=(0,), batch_size=1_000)
    new = probability_table(3_000, seed=8, events=["dealer_dealt_win", "dealer_dealt_complete"], seats=(0,),
                            batch_size=1_000)
    pd.testing.assert_frame_equal(old, new)
    assert list(new.event) == ["dealer_dealt_win", "dealer_dealt_complete"]
    assert main(["prob", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "dealer_dealt_win  (Monte Carlo only, seat 0 (the dealer) only; formerly dealer_wins)" in listed
    assert "not the dealer winning the deal" in listed and "z = (p - exact) / standard error" in listed
    from simkit.analysis.exact import EVENTS

    assert all(f"\n    {spec.description}\n" in listed for spec in EVENTS.values())

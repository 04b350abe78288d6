"""The fast evaluator against the naive oracle on >= 10,000 seeded random holdings per run.

Mix (sizes scale with SIMKIT_RANDOM_HOLDINGS, default 10000):
* uniformly random 31-card holdings (almost all incomplete: min_idle is what is tested),
* uniformly random small holdings (3..16 cards, often complete),
* holdings built from random groups, with and without exposed groups, under random rule
  options (most complete, rich in chariots, 清, 天地, 楼 and pattern wins),
* group-built holdings weighted towards chariots and 清 (many 出 components).
Every field is compared: complete, hu, lou, steps, units, wins, patterns, min_idle.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from helpers import arrays_to_groups
from naive import naive_evaluate
from simkit.evaluator import PATTERN_NAMES, evaluate, evaluate_many, pattern_names
from simkit.evaluator.explain import explained_total
from simkit.generate import random_group_holdings, random_holdings
from simkit.rules import RuleSet

TOTAL = int(os.environ.get("SIMKIT_RANDOM_HOLDINGS", "10000"))
FIELDS = ("complete", "hu", "lou", "steps", "units", "wins", "patterns", "min_idle")


def _random_rules(rng: random.Random) -> RuleSet:
    return RuleSet(
        lou_doubles=rng.random() < 0.8,
        hu_tolerance=rng.choice([2, 2, 0]),
        jiang_in_chariot=rng.random() < 0.3,
        pattern_wins=rng.random() < 0.85,
        steps_count_lou=rng.random() < 0.3,
    )


def _compare(conc: np.ndarray, exp: np.ndarray, chows: np.ndarray, rules_list: list[RuleSet]) -> tuple[int, dict]:
    """Compare fast (batched, per rule set) with naive; return the count and field stats."""
    seen_patterns: set[str] = set()
    n_complete = 0
    by_rules: dict[RuleSet, list[int]] = {}
    for i, rs in enumerate(rules_list):
        by_rules.setdefault(rs, []).append(i)
    for rs, rows in by_rules.items():
        fast = evaluate_many(conc[rows], exp[rows], chows[rows], rs)
        rules_dict = rs.to_dict()
        for k, i in enumerate(rows):
            groups = arrays_to_groups(exp[i], int(chows[i]))
            want = naive_evaluate(conc[i].tolist(), groups, rules_dict)
            got = {
                "complete": bool(fast["complete"][k]),
                "hu": int(fast["hu"][k]) if fast["complete"][k] else None,
                "lou": int(fast["lou"][k]),
                "steps": int(fast["steps"][k]),
                "units": int(fast["units"][k]),
                "wins": bool(fast["wins"][k]),
                "patterns": frozenset(pattern_names(fast["patterns"][k])),
                "min_idle": int(fast["min_idle"][k]),
            }
            for field in FIELDS:
                assert got[field] == want[field], (
                    f"{field}: fast {got[field]!r} != naive {want[field]!r} for concealed "
                    f"{conc[i].tolist()} exposed {groups} rules {rs.to_strings()}"
                )
            n_complete += got["complete"]
            seen_patterns |= got["patterns"]
    return n_complete, {"patterns": seen_patterns}


def test_uniform_31_card_holdings():
    n = TOTAL * 2 // 10
    conc = random_holdings(n, seed=11)
    exp = np.zeros((n, 4, 28), dtype=np.int64)
    chows = np.zeros(n, dtype=np.int64)
    _compare(conc, exp, chows, [RuleSet()] * n)


def test_uniform_small_holdings():
    n = TOTAL * 2 // 10
    rng = random.Random(12)
    conc = np.concatenate([random_holdings(1, seed=1000 + i, n_cards=rng.randint(3, 16)) for i in range(n)])
    exp = np.zeros((n, 4, 28), dtype=np.int64)
    chows = np.zeros(n, dtype=np.int64)
    n_complete, _ = _compare(conc, exp, chows, [RuleSet()] * n)
    assert n_complete >= 1


def test_group_built_holdings_with_exposed_and_rule_options():
    n = TOTAL * 4 // 10
    rng = random.Random(13)
    conc, exp, chows = random_group_holdings(n, seed=13, total=(3, 31), p_exposed=0.25)
    rules = [_random_rules(rng) for _ in range(n)]
    n_complete, stats = _compare(conc, exp, chows, rules)
    assert n_complete == n
    # the sample reaches most patterns (so pattern logic is really compared)
    assert len(stats["patterns"]) >= 10, sorted(stats["patterns"])


def test_chariot_qing_and_step_rich_holdings():
    n = TOTAL - 3 * (TOTAL * 2 // 10) - TOTAL * 4 // 10 + TOTAL * 2 // 10
    rng = random.Random(14)
    # weights: 圆 JSX, 圆 CMP, 卒3, 卒4, pair, 子, 闹, single, chariot, fat chariot, 清
    rich = np.array([4, 4, 3, 2, 15, 20, 6, 6, 15, 15, 12])
    half = n // 2
    conc_a, exp_a, chows_a = random_group_holdings(half, seed=14, total=(6, 31), p_exposed=0.35, weights=rich)
    # many 碰 and 楼: most 子 / 闹 laid exposed
    steps = np.array([2, 2, 1, 1, 6, 30, 8, 4, 4, 4, 6])
    conc_b, exp_b, chows_b = random_group_holdings(n - half, seed=15, total=(12, 31), p_exposed=0.8, weights=steps)
    conc = np.concatenate([conc_a, conc_b])
    exp = np.concatenate([exp_a, exp_b])
    chows = np.concatenate([chows_a, chows_b])
    rules = [_random_rules(rng) for _ in range(n)]
    _, stats = _compare(conc, exp, chows, rules)
    assert len(stats["patterns"]) >= 16, sorted(set(PATTERN_NAMES) - stats["patterns"])


def test_explanation_adds_up_to_hu():
    conc, exp, chows = random_group_holdings(300, seed=15, total=(3, 31), p_exposed=0.0)
    rng = random.Random(15)
    for i in range(conc.shape[0]):
        rules = _random_rules(rng)
        res = evaluate(conc[i], rules=rules)
        assert res.complete
        assert explained_total(res.best) == res.hu, res.best


def test_batch_equals_single_and_thread_count_does_not_matter():
    import numba

    conc, exp, chows = random_group_holdings(3000, seed=16, total=31, p_exposed=0.2)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = evaluate_many(conc, exp, chows)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = evaluate_many(conc, exp, chows)
    finally:
        numba.set_num_threads(before)
    for key in one:
        assert np.array_equal(one[key], many[key]), key


@pytest.mark.parametrize("hand", ["YJ*4 RJ*4 WJ*4 GJ*4 YZ*4 RZ*4 WZ*4 GZ*3"])
def test_worst_case_holding_matches_naive(hand):
    from naive import parse_cards

    counts = parse_cards(hand)
    want = naive_evaluate(counts, [], {})
    got = evaluate(hand)
    assert (got.hu, got.units, frozenset(got.patterns)) == (want["hu"], want["units"], want["patterns"])

"""The fast evaluator against the naive oracle on >= 10,000 seeded random holdings per run.

Mix (sizes scale with SIMKIT_RANDOM_HOLDINGS, default 10000):
* uniformly random 31-card holdings (almost all incomplete: min_idle is what is tested),
* uniformly random small holdings (3..16 cards, often complete),
* holdings built from random groups, with and without exposed groups, under random rule
  options (most complete, rich in chariots, 清, 天地, 楼 and pattern wins),
* group-built holdings weighted towards chariots and 清 (many 出 components),
* group-built holdings rich in 将 (singles on the table and in hand, 将 pairs) and in
  exposed 占 pairs, under rule sets that often switch on zhan_in_chariot and
  single_jiang_cap.
The random rule sets draw every evaluator option (lou_doubles, hu_tolerance,
jiang_in_chariot, pattern_wins, steps_count_lou, zhan_in_chariot, single_jiang_cap).
Every field is compared: complete, hu, lou, steps, units, wins, patterns, min_idle; and the
kernel's shortcut modes too: ``want_patterns=0`` (complete, hu, units, wins, ...) and
``WANT_WINS`` (complete, hu, wins).
"""

from __future__ import annotations

import itertools
import os
import random

import numpy as np
import pytest

from helpers import arrays_to_groups
from naive import naive_evaluate
from simkit.evaluator import PATTERN_NAMES, evaluate, evaluate_many, pattern_names
from simkit.evaluator import kernel as K
from simkit.evaluator.api import evaluate_batch_kernel
from simkit.evaluator.explain import explained_total
from simkit.generate import random_group_holdings, random_holdings
from simkit.exposed import ExposedGroup
from simkit.evaluator.tables import IS_FAT_TYPE
from simkit.rules import RULE_ZHAN_IN_CHARIOT, RuleSet

TOTAL = int(os.environ.get("SIMKIT_RANDOM_HOLDINGS", "10000"))
FIELDS = ("complete", "hu", "lou", "steps", "units", "wins", "patterns", "min_idle")
# what each ``want_patterns`` mode of the kernel guarantees (1 guarantees every field)
MODE_FIELDS = {
    1: FIELDS,
    0: ("complete", "hu", "lou", "steps", "units", "wins", "min_idle"),
    K.WANT_WINS: ("complete", "hu", "wins"),
}


def _random_rules(rng: random.Random, p_zhan: float = 0.3, p_cap: float = 0.3) -> RuleSet:
    return RuleSet(
        lou_doubles=rng.random() < 0.8,
        hu_tolerance=rng.choice([2, 2, 0]),
        jiang_in_chariot=rng.random() < 0.3,
        pattern_wins=rng.random() < 0.85,
        steps_count_lou=rng.random() < 0.3,
        zhan_in_chariot=rng.random() < p_zhan,
        single_jiang_cap=rng.choice([1, 2, 3, 3, 4, 5]) if rng.random() < p_cap else 0,
    )


def _fast_modes(conc: np.ndarray, exp: np.ndarray, chows: np.ndarray, rs: RuleSet) -> dict[int, dict]:
    """The batch kernel's result fields in each ``want_patterns`` mode, naive-shaped lists."""
    results = {}
    for mode in MODE_FIELDS:
        out = np.zeros((conc.shape[0], K.N_OUT), dtype=np.int64)
        evaluate_batch_kernel(conc, exp, chows, rs.to_array(), mode, out)
        results[mode] = [
            {
                "complete": bool(row[K.OUT_COMPLETE]),
                "hu": int(row[K.OUT_HU]) if row[K.OUT_COMPLETE] else None,
                "lou": int(row[K.OUT_LOU]),
                "steps": int(row[K.OUT_STEPS]),
                "units": int(row[K.OUT_UNITS]),
                "wins": bool(row[K.OUT_WINS]),
                "patterns": frozenset(pattern_names(row[K.OUT_PATTERNS])),
                "min_idle": int(row[K.OUT_MIN_IDLE]),
            }
            for row in out
        ]
    return results


def _compare(
    conc: np.ndarray, exp: np.ndarray, chows: np.ndarray, rules_list: list[RuleSet], option_stats: bool = False
) -> tuple[int, dict]:
    """Compare fast (batched, per rule set, every ``want_patterns`` mode) with naive; return
    the number of complete holdings and stats (patterns seen, holdings with 占 / table 将,
    and with ``option_stats`` how often the two newer options changed the naive hu)."""
    seen_patterns: set[str] = set()
    n_complete = 0
    stats = {"zhan_rows": 0, "table_rows": 0, "cap_bites": 0, "zhan_matters": 0}
    by_rules: dict[RuleSet, list[int]] = {}
    for i, rs in enumerate(rules_list):
        by_rules.setdefault(rs, []).append(i)
    for rs, rows in by_rules.items():
        fast = _fast_modes(conc[rows], exp[rows], chows[rows], rs)
        rules_dict = rs.to_dict()
        for k, i in enumerate(rows):
            groups = arrays_to_groups(exp[i], int(chows[i]))
            want = naive_evaluate(conc[i].tolist(), groups, rules_dict)
            for mode, fields in MODE_FIELDS.items():
                got = fast[mode][k]
                for field in fields:
                    assert got[field] == want[field], (
                        f"{field} (want_patterns={mode}): fast {got[field]!r} != naive {want[field]!r} for "
                        f"concealed {conc[i].tolist()} exposed {groups} rules {rs.to_strings()}"
                    )
            n_complete += want["complete"]
            seen_patterns |= want["patterns"]
            stats["zhan_rows"] += bool(exp[i, K.EXP_ZHAN].any())
            stats["table_rows"] += bool(exp[i, K.EXP_TABLE].any())
            if option_stats and want["complete"] and rs.single_jiang_cap:
                uncapped = naive_evaluate(conc[i].tolist(), groups, {**rules_dict, "single_jiang_cap": 0})
                stats["cap_bites"] += uncapped["hu"] != want["hu"]
            if option_stats and want["complete"] and rs.zhan_in_chariot and exp[i, K.EXP_ZHAN].any():
                off = naive_evaluate(conc[i].tolist(), groups, {**rules_dict, "zhan_in_chariot": False})
                stats["zhan_matters"] += off["hu"] != want["hu"]
    stats["patterns"] = seen_patterns
    return n_complete, stats


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


def test_jiang_and_zhan_rich_holdings_under_new_options():
    # rules.md §8 zhan_in_chariot and single_jiang_cap: holdings with many 将 (singles on
    # the table and in hand, 将 pairs, 将 / 卒 chariots) and many exposed 占 pairs, under
    # rule sets where both options are often on
    n = TOTAL * 2 // 10
    rng = random.Random(17)
    # weights: 圆 JSX, 圆 CMP, 卒3, 卒4, pair, 子, 闹, single, chariot, fat chariot, 清
    jiang = np.array([8, 3, 3, 1, 30, 8, 2, 25, 14, 20, 2])
    conc, exp, chows = random_group_holdings(n, seed=17, total=(3, 31), p_exposed=0.4, weights=jiang)
    rules = [_random_rules(rng, p_zhan=0.5, p_cap=0.6) for _ in range(n)]
    n_complete, stats = _compare(conc, exp, chows, rules, option_stats=True)
    assert n_complete == n
    # the sample really exercises both options
    assert stats["zhan_rows"] >= n // 4 and stats["table_rows"] >= n // 4, stats
    assert stats["cap_bites"] >= n // 20, stats
    assert stats["zhan_matters"] >= n // 100, stats


def test_new_options_are_neutral_where_they_cannot_apply():
    # zhan_in_chariot changes nothing without a 占 pair, and a cap of 16 never bites (there
    # are 16 将): the kernel gives byte-identical results and best decompositions
    conc, exp, chows = random_group_holdings(4000, seed=18, total=(3, 31), p_exposed=0.3)
    exp[:, K.EXP_ZHAN] = 0  # (the holdings stay valid: fewer exposed cards)
    base = RuleSet().to_array()
    variants = [RuleSet(zhan_in_chariot=True).to_array(), RuleSet(single_jiang_cap=16).to_array()]
    work = K.new_workspace()
    out_a = np.zeros(K.N_OUT, dtype=np.int64)
    out_b = np.zeros(K.N_OUT, dtype=np.int64)
    choice_a = np.zeros(K.N_CHOICE, dtype=np.int64)
    choice_b = np.zeros(K.N_CHOICE, dtype=np.int64)
    for i in range(conc.shape[0]):
        K.evaluate_kernel(conc[i], exp[i], chows[i], base, 1, out_a, choice_a, work)
        for rules in variants:
            K.evaluate_kernel(conc[i], exp[i], chows[i], rules, 1, out_b, choice_b, work)
            assert np.array_equal(out_a, out_b), (i, rules)
            if rules[RULE_ZHAN_IN_CHARIOT]:
                assert np.array_equal(choice_a, choice_b), i


def test_explanation_adds_up_to_hu():
    conc, exp, chows = random_group_holdings(300, seed=15, total=(3, 31), p_exposed=0.0)
    rng = random.Random(15)
    for i in range(conc.shape[0]):
        rules = _random_rules(rng)
        res = evaluate(conc[i], rules=rules)
        assert res.complete
        assert explained_total(res.best) == res.hu, res.best


def test_explanation_adds_up_to_hu_with_exposed_groups_and_new_options():
    # capped singles are listed "= 0"; 占 pairs join chariots only under zhan_in_chariot
    jiang = np.array([8, 3, 3, 1, 30, 8, 2, 25, 14, 20, 2])
    conc, exp, chows = random_group_holdings(600, seed=19, total=(3, 31), p_exposed=0.4, weights=jiang)
    rng = random.Random(19)
    n_zero_singles = 0
    for i in range(conc.shape[0]):
        rules = _random_rules(rng, p_zhan=0.5, p_cap=0.7)
        # (exposed 圆s left out: each is one "= 1" line whatever it holds)
        groups = [ExposedGroup(kind, types) for kind, types in arrays_to_groups(exp[i], 0)]
        res = evaluate(conc[i], groups, rules=rules)
        assert res.complete
        assert explained_total(res.best) == res.hu, (res.best, res.hu, rules.to_strings())
        n_zero_singles += any(
            line.startswith(("single ", "exposed 将(table) ")) and line.endswith(" = 0") for line in res.best
        )
    assert n_zero_singles >= 20


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
    # the batch reuses one workspace per chunk: each holding alone, with a fresh workspace,
    # must give the same result (catches state left over from the previous holding)
    rules = RuleSet(single_jiang_cap=3, zhan_in_chariot=True)
    batch = evaluate_many(conc, exp, chows, rules)
    rules_array = rules.to_array()
    out = np.zeros(K.N_OUT, dtype=np.int64)
    choice = np.zeros(K.N_CHOICE, dtype=np.int64)
    for i in range(0, len(conc), 3):
        K.evaluate_kernel(conc[i], exp[i], chows[i], rules_array, 1, out, choice, K.new_workspace())
        single = {"complete": bool(out[K.OUT_COMPLETE]), "hu": out[K.OUT_HU], "units": out[K.OUT_UNITS],
                  "wins": bool(out[K.OUT_WINS]), "patterns": out[K.OUT_PATTERNS], "min_idle": out[K.OUT_MIN_IDLE]}
        for key, value in single.items():
            assert batch[key][i] == value, (i, key)


@pytest.mark.parametrize("hand", ["YJ*4 RJ*4 WJ*4 GJ*4 YZ*4 RZ*4 WZ*4 GZ*3"])
def test_worst_case_holding_matches_naive(hand):
    from naive import parse_cards

    counts = parse_cards(hand)
    want = naive_evaluate(counts, [], {})
    got = evaluate(hand)
    assert (got.hu, got.units, frozenset(got.patterns)) == (want["hu"], want["units"], want["patterns"])


# ------------------------------------------------------------ workspace layout


def test_workspace_regions_are_disjoint_and_inside_work_size():
    regions = K.WORK_REGIONS
    # every W_* offset of the kernel is a listed region, at the offset the kernel uses
    offsets = {name: value for name, value in vars(K).items() if name.startswith("W_") and isinstance(value, int)}
    assert set(offsets) == {name for name, _, _ in regions}
    for name, offset, size in regions:
        assert offsets[name] == offset, name
        assert size > 0 and offset >= 0 and offset + size <= K.WORK_SIZE, name
    for i, (name_a, a, size_a) in enumerate(regions):
        for name_b, b, size_b in regions[i + 1 :]:
            assert a + size_a <= b or b + size_b <= a, (name_a, name_b)
    # chained: each region starts where the previous one ends, the last ends at WORK_SIZE
    for (_, a, size_a), (name_b, b, _) in zip(regions, regions[1:]):
        assert b == a + size_a, name_b
    assert regions[-1][1] + regions[-1][2] == K.WORK_SIZE
    # room for what the kernel indexes: up to 5 x 32 将士相 codes (singles 0..4 under the cap)
    # per triad, a (4, N_OPTIONS) list per kind, 120 feature flags per triad, 81 卒 codes
    size = {name: sz for name, _, sz in regions}
    assert K.N_OPTIONS >= K.N_CODES_CAP == 5 * 32
    assert size["W_HU_BY_CODE"] >= K.N_CODES_CAP and size["W_ARG_BY_CODE"] >= K.N_CODES_CAP
    for name in ("W_JSX_CODES", "W_JSX_HUS", "W_JSX_ARGS", "W_CMP_CODES", "W_CMP_HUS", "W_CMP_ARGS"):
        assert size[name] >= 4 * K.N_OPTIONS, name
    assert size["W_JSX_PAT"] >= 4 * 120 and size["W_CMP_PAT"] >= 4 * 120
    assert size["W_ZPAT"] >= 81 and size["W_ZCODES"] >= 81
    assert size["W_BEST"] >= 3 * 16 and size["W_IDX"] >= 4 * 16 * 4
    assert K.new_workspace().shape == (K.WORK_SIZE,)


def test_kernel_writes_only_inside_its_workspace_and_reads_nothing_stale():
    # a workspace with a guard tail: the kernel must leave the tail alone; and a workspace
    # full of garbage must give the same results as a fresh one
    conc, exp, chows = random_group_holdings(1500, seed=20, total=(3, 31), p_exposed=0.3)
    rng = random.Random(20)
    guard = 7777
    work = np.full(K.WORK_SIZE + 512, guard, dtype=np.int64)
    out_a = np.zeros(K.N_OUT, dtype=np.int64)
    out_b = np.zeros(K.N_OUT, dtype=np.int64)
    choice_a = np.zeros(K.N_CHOICE, dtype=np.int64)
    choice_b = np.zeros(K.N_CHOICE, dtype=np.int64)
    garbage = np.random.default_rng(20)
    for i in range(conc.shape[0]):
        rules = _random_rules(rng, p_zhan=0.5, p_cap=0.5).to_array()
        mode = rng.choice([0, 1, K.WANT_WINS])
        K.evaluate_kernel(conc[i], exp[i], chows[i], rules, mode, out_a, choice_a, K.new_workspace())
        work[: K.WORK_SIZE] = garbage.integers(-(1 << 40), 1 << 40, K.WORK_SIZE)
        K.evaluate_kernel(conc[i], exp[i], chows[i], rules, mode, out_b, choice_b, work[: K.WORK_SIZE])
        assert np.array_equal(out_a, out_b) and np.array_equal(choice_a, choice_b), i
        assert (work[K.WORK_SIZE :] == guard).all(), i


def test_cap_keeps_every_jiang_triad_option_that_can_be_best():
    # Under single_jiang_cap the 将士相 options of one 出-bits / offered-class code differ in
    # their concealed singles s; with the rest of the holding adding E = (other singles - cap)
    # an option is worth h - max(0, E + s).  Exhaustively over every triad (counts, exposed
    # state, jiang_in_chariot), the options the kernel keeps must be exactly those that no
    # other option of the code matches or beats for every E.
    from simkit.evaluator.kernel import _singles_dominated, _triad_options
    from simkit.evaluator.tables import TK_JIANG

    hu = np.zeros(K.N_CODES_CAP, dtype=np.int64)
    arg = np.zeros(K.N_CODES_CAP, dtype=np.int64)
    pat = np.zeros(K.N_PAT_CODES, dtype=np.int64)
    # exposed (占, 碰, 楼) per type: none, one 占, two 占, 碰, 楼
    states = [((0, 0, 0), 0), ((1, 0, 0), 2), ((2, 0, 0), 4), ((0, 1, 0), 3), ((0, 0, 1), 4)]
    n_multi = 0
    for counts in itertools.product(range(5), repeat=3):
        for picked in itertools.product(states, repeat=3):
            if any(n + cards > 4 for n, (_, cards) in zip(counts, picked)):
                continue
            conc = np.zeros(28, dtype=np.int64)
            exposed = np.zeros((4, 28), dtype=np.int64)
            conc[:3] = counts
            for i, (rows, _) in enumerate(picked):
                exposed[:3, i] = rows
            for bonus in (0, 1):
                _triad_options(K.Triad(0, TK_JIANG, True, bonus, 1, True), conc, exposed, hu, arg, pat)
                for low in range(K.N_CODES):
                    options = [(int(hu[low | s << 5]), s) for s in range(5) if hu[low | s << 5] > K.NEG]
                    n_multi += len(options) > 1
                    for h, s in options:
                        beaten = any(
                            (h2, s2) != (h, s) and all(h2 - max(0, e + s2) >= h - max(0, e + s) for e in range(-6, 20))
                            for h2, s2 in options
                        )
                        assert bool(_singles_dominated(hu, low | s << 5, h)) == beaten, (counts, picked, low, options)
                    if options:
                        # (they turn out totally ordered: one option per code survives, so
                        # the cap does not lengthen the option lists)
                        assert sum(not _singles_dominated(hu, low | s << 5, h) for h, s in options) == 1
    assert n_multi > 100
    # the criterion must also hold for options that trade hu against singles
    rng = random.Random(21)
    for _ in range(3000):
        hu[:] = K.NEG
        low = rng.randrange(K.N_CODES)
        for s in rng.sample(range(5), rng.randint(1, 5)):
            hu[low | s << 5] = rng.randint(0, 12)
        options = [(int(hu[low | s << 5]), s) for s in range(5) if hu[low | s << 5] > K.NEG]
        for h, s in options:
            beaten = any(
                (h2, s2) != (h, s) and all(h2 - max(0, e + s2) >= h - max(0, e + s) for e in range(-6, 20))
                for h2, s2 in options
            )
            assert bool(_singles_dominated(hu, low | s << 5, h)) == beaten, (low, options)


def _union_of_combinations(work, nz, n_lou, fat_lou, plain_lou, steps) -> int:
    """The pattern union ``_patterns`` computes, by brute force: every combination of one
    code per colour (the Pareto sets it left in the workspace) and one 卒 code."""
    colours = [[int(work[K.W_COLOUR + K.N_LIST * c + i]) for i in range(int(work[K.W_COLOUR_N + c]))]
               for c in range(4)]
    zus = [int(work[K.W_ZCODES + i]) for i in range(nz)]
    union = 0
    for ks in itertools.product(*colours):
        qing = max(sum((k >> r) & 1 for k in ks) for r in range(5))
        smax = max(k >> 7 for k in ks) - 1
        jlevels = sum(((k >> 5) & 3) << (2 * c) for c, k in enumerate(ks))
        jf, jl, jbits = K._chariot_features(jlevels, False)
        for z in zus:
            zf, zl, zbits = K._chariot_features(z, True)
            union |= K._pattern_mask(K.Exposed(n_lou, fat_lou, plain_lou, steps), qing, smax, max(jf, zf),
                                     max(jl, zl), (jbits & zbits) != 0)
    return union


# exposed 楼 / steps the bound is also checked under (not only the holding's own): each
# feature of the holding alone, then with each holding-level feature
LEVEL_FEATURES = [(0, False, False, 0), (1, True, False, 0), (1, False, True, 0), (2, True, True, 0),
                  (0, False, False, 5), (0, False, False, 6), (1, True, False, 5)]


def test_no_pattern_shortcut_fires_only_without_patterns():
    """``_no_pattern_possible`` (the bound ``_patterns`` checks before combining) may answer
    True only when the brute-force union over the combinations is empty, and does so for most
    of those: checked on the workspaces of full evaluations (want_patterns=1), under the
    holding's own 楼 / steps and under each of LEVEL_FEATURES."""
    rich = np.array([4, 4, 3, 2, 15, 20, 6, 6, 15, 15, 12])
    conc_a, exp_a, chows_a = random_group_holdings(300, seed=41, total=(6, 31), p_exposed=0.3)
    conc_b, exp_b, chows_b = random_group_holdings(300, seed=42, total=(12, 31), p_exposed=0.5, weights=rich)
    out = np.zeros(K.N_OUT, dtype=np.int64)
    choice = np.zeros(K.N_CHOICE, dtype=np.int64)
    work = K.new_workspace()
    rules = RuleSet().to_array()
    fired = empty = with_patterns = 0
    for conc, exp, chows in zip(np.concatenate([conc_a, conc_b]), np.concatenate([exp_a, exp_b]),
                                np.concatenate([chows_a, chows_b])):
        K.evaluate_kernel(conc, exp, chows, rules, 1, out, choice, work)
        if out[K.OUT_COMPLETE] != 1 or not (conc >= 3).any() and exp[K.EXP_PENG].sum() + exp[K.EXP_KONG].sum() == 0:
            continue  # incomplete, or no 出 component: _patterns is not called
        nz = _zu_code_count(work)
        own = (int(exp[K.EXP_KONG].sum()), bool((exp[K.EXP_KONG] * IS_FAT_TYPE).sum()),
               bool((exp[K.EXP_KONG] * (1 - IS_FAT_TYPE)).sum()), int(out[K.OUT_STEPS]))
        assert _union_of_combinations(work, nz, *own) == out[K.OUT_PATTERNS]
        for features in [own, *LEVEL_FEATURES]:
            union = _union_of_combinations(work, nz, *features)
            shortcut = bool(K._no_pattern_possible(work, nz, K.Exposed(*features)))
            if union:
                with_patterns += 1
                assert not shortcut, (conc.tolist(), features, union)
            else:
                empty += 1
                fired += shortcut
    assert with_patterns > 500 and empty > 500, (with_patterns, empty)
    assert fired > 0.5 * empty, (fired, empty)


def _zu_code_count(work) -> int:
    """How many 卒 codes ``_patterns`` kept: its Pareto set of the flagged codes, recomputed."""
    pat = work[K.W_ZPAT : K.W_ZPAT + K.N_ZPAT_CODES]
    flagged = np.array([a for a in range(K.N_ZPAT_CODES) if pat[a]], dtype=np.int64)
    kept = np.zeros(max(1, flagged.size), dtype=np.int64)
    n = int(K._pareto(flagged, flagged.size, 1, kept)) if flagged.size else 0
    assert np.array_equal(kept[:n], work[K.W_ZCODES : K.W_ZCODES + n])  # as _patterns left them
    return n

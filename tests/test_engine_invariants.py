"""Random-playout invariant tests of the deal engine (>= 10,000 deals per run).

At every step of every deal (checked in a numba loop written from the rules text, not from
the engine's own legality code):
* the 112 cards are conserved (stock + hands + exposed + dead + active card);
* a discard is a concealed non-将 card of a player holding 31 cards;
* a claim uses cards the claimer holds concealed; the claimer is no 相公; the claimed type
  is not pass-locked for them (rule on); a 吃/占 is only taken when no 碰/发子 claim of an
  undecided player is pending on that card;
* a player holds 30 cards between turns and 31 in a discard phase;
* rules revision (docs/rules.md §5.3, §5.5, §7), from the checker's own record of passes and of
  the card that brought each discard phase: no 吃/占 of a drawn 将 under ``drawn_jiang_chow``
  off; no win through a passed type under ``pass_locks_win``; no claim of a passed type under
  ``pass_locks_type``; no win while flagged can-no-longer-win; a claimer never becomes 相公
  right after its claim (the claim had to leave a discard or a win).
After every deal: every winner holds 31 cards, and its final holding re-scored by the
evaluator gives the recorded hu, units, 楼, 步 and patterns, and wins.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from numba import njit

from simkit.deck import deal_deck
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.evaluator import evaluate, pattern_names
from simkit.exposed import ExposedGroup
from simkit.policies.builtin import POLICY_WORK_SIZE
from simkit.policies.dispatch import builtin_act
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rng import root_key, stream_state
from simkit.rules import (
    RULE_DRAWN_JIANG_CHOW,
    RULE_PASS_LOCKS_TYPE,
    RULE_PASS_LOCKS_WIN,
    RuleSet,
)
from simkit.runner.play import (
    N_RESULT,
    R_DEALT,
    R_HU,
    R_LOU,
    R_PATTERNS,
    R_PAYOFF,
    R_STEPS,
    R_UNITS,
    R_WIN_CONC,
    R_WIN_MELDS,
    R_WIN_NMELDS,
    R_WINNER,
    play_deals,
    record_result,
)

N_DEALS = int(os.environ.get("SIMKIT_ENGINE_DEALS", "10000"))


@njit
def _cards_of(s, p):
    total = 0
    for t in range(28):
        total += s[L.S_CONC + 28 * p + t] + s[L.S_EXPCARDS + 28 * p + t]
    return total


CLAIMS = (L.A_PENG, L.A_KONG, L.A_ZHAN, L.A_CHOW_TRIAD, L.A_CHOW_ZU, L.A_CHOW_ZU + 1, L.A_CHOW_ZU + 2,
          L.A_CHOW_ZU + 3, L.A_CHOW_ZU4)


@njit
def _check_revision(s, action, rules, passed, gain):
    """Error code of the rules-revision checks; ``passed`` (3 x 28) and ``gain`` (3) are the
    checker's own records of passed claims and of the card that brought each discard phase."""
    p = s[L.S_PLAYER]
    if s[L.S_PHASE] == L.PH_DISCARD:
        if action == L.A_WIN:
            if s[L.S_NOWIN + p]:
                return 40
            if rules[RULE_PASS_LOCKS_WIN] and gain[p] >= 0 and passed[p, gain[p]]:
                return 41
        return 0
    t = s[L.S_ACTIVE]
    if action == L.A_PASS or action == L.A_PENG or action == L.A_KONG:
        return 0
    if rules[RULE_PASS_LOCKS_TYPE] and passed[p, t]:
        return 42
    if rules[RULE_DRAWN_JIANG_CHOW] == 0 and s[L.S_SOURCE] == L.SRC_DRAW and t % 7 == 0:
        return 43
    return 0


@njit
def _check_step(s, action, rules):
    """Error code (0 = fine) of taking ``action`` in state s (before it is applied)."""
    if E.card_total(s) != 112:
        return 1
    p = s[L.S_PLAYER]
    if s[L.S_PHASE] == L.PH_DISCARD:
        if _cards_of(s, p) != 31:
            return 2
        if action < 28:
            if action % 7 == 0:
                return 3  # 将 discarded
            if s[L.S_CONC + 28 * p + action] < 1:
                return 4
        elif action != L.A_WIN:
            return 5
        return 0
    if s[L.S_PHASE] != L.PH_CLAIM:
        return 6
    if _cards_of(s, p) != 30:
        return 7
    if action == L.A_PASS:
        return 0
    t = s[L.S_ACTIVE]
    if s[L.S_XIANGGONG + p]:
        return 8
    if rules[RULE_PASS_LOCKS_TYPE] and s[L.S_LOCK + 28 * p + t]:
        return 9
    conc = s[L.S_CONC + 28 * p : L.S_CONC + 28 * (p + 1)]
    colour = t // 7
    rank = t % 7
    if action == L.A_PENG and conc[t] != 2:
        return 10
    if action == L.A_KONG and conc[t] != 3:
        return 11
    if action == L.A_ZHAN and conc[t] < 1:
        return 12
    if action == L.A_CHOW_TRIAD:
        first = colour * 7 + (0 if rank < 3 else 3)
        for x in range(first, first + 3):
            if x != t and conc[x] < 1:
                return 13
    if action >= L.A_CHOW_ZU and action <= L.A_CHOW_ZU4:
        if rank != 6:
            return 14
        for c in range(4):
            if c != colour and (action == L.A_CHOW_ZU4 or c != action - L.A_CHOW_ZU) and conc[c * 7 + 6] < 1:
                return 15
    if action in (L.A_ZHAN, L.A_CHOW_TRIAD, L.A_CHOW_ZU, L.A_CHOW_ZU + 1, L.A_CHOW_ZU + 2, L.A_CHOW_ZU + 3, L.A_CHOW_ZU4):
        # priority: no undecided 碰/发子 player for this card may be waiting
        src = s[L.S_SOURCE_PLAYER]
        for q in range(3):
            if q == p or (s[L.S_SOURCE] == L.SRC_DISCARD and q == src):
                continue
            if (s[L.S_DECIDED] >> q) & 1 or s[L.S_XIANGGONG + q]:
                continue
            if rules[RULE_PASS_LOCKS_TYPE] and s[L.S_LOCK + 28 * q + t]:
                continue
            c = s[L.S_CONC + 28 * q + t]
            if (c == 2 or c == 3) and s[L.S_STAGE] != L.ST_PENG:
                # the 碰 player is skipped only when the claim would leave them stuck
                if E.has_discard(s[L.S_CONC + 28 * q : L.S_CONC + 28 * (q + 1)]) and c == 2:
                    # with 2 copies + another discardable card the 碰 was legal
                    others = 0
                    for x in range(28):
                        if x != t and x % 7 != 0:
                            others += s[L.S_CONC + 28 * q + x]
                    if others > 0:
                        return 16
    return 0


@njit
def _checked_batch(root, n_deals, policy_ids, params, rules, results, errors):
    s = np.zeros(L.N_STATE, dtype=np.int64)
    deck = np.zeros(112, dtype=np.int64)
    rngs = np.zeros((4, 4), dtype=np.uint64)
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    obs = np.zeros(L.N_OBS, dtype=np.int64)
    work = np.zeros(E.ENGINE_WORK_SIZE, dtype=np.int64)
    pwork = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    ev = np.zeros((4096, L.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    passed = np.zeros((3, 28), dtype=np.int64)
    gain = np.zeros(3, dtype=np.int64)
    for d in range(n_deals):
        passed[:, :] = 0
        gain[:] = -1
        ev_n[0] = 0
        deal_deck(root, d, rngs[3], deck)
        for p in range(3):
            stream_state(root, d, 1 + p, rngs[p])
        E.start(s, deck, 0, rules, mask, work, ev, ev_n)
        for _ in range(3000):
            if s[L.S_PHASE] == L.PH_OVER:
                break
            p = s[L.S_PLAYER]
            E.observe(s, p, obs)
            # the observation never shows other players' concealed cards
            for t in range(28):
                if obs[L.O_CONC + t] != s[L.S_CONC + 28 * p + t]:
                    errors[d] = 20
            E.legal_mask(s, rules, mask, work)
            a = builtin_act(policy_ids[p], obs, mask, params[p], rngs[p], rules, pwork)
            code = _check_step(s, a, rules)
            if code == 0:
                code = _check_revision(s, a, rules, passed, gain)
            if code != 0:
                errors[d] = code
                break
            claim_phase = s[L.S_PHASE] == L.PH_CLAIM
            t = s[L.S_ACTIVE]
            first_event = ev_n[0]
            if not E.apply(s, a, rules, mask, work, ev, ev_n):
                errors[d] = 30
                break
            if claim_phase and a == L.A_PASS:
                passed[p, t] = 1
            # the card that brought each later discard phase: a claim or a drawn 将 on the table
            for i in range(first_event, ev_n[0]):
                if ev[i, 0] == L.E_CLAIM or ev[i, 0] == L.E_TABLE:
                    gain[ev[i, 1]] = ev[i, 2]
                if ev[i, 0] == L.E_XIANGGONG and claim_phase and a != L.A_PASS and ev[i, 1] == p:
                    errors[d] = 44  # the claim left its claimer unable to discard or win
            if ev_n[0] > ev.shape[0] - 64:
                ev_n[0] = 0
        if s[L.S_PHASE] != L.PH_OVER:
            errors[d] = 31
        if E.card_total(s) != 112:
            errors[d] = 32
        w = s[L.S_WINNER]
        if w >= 0 and _cards_of(s, w) != 31:
            errors[d] = 33
        record_result(s, deck, results[d])


def _rescore(row: np.ndarray, rules: RuleSet) -> None:
    w = int(row[R_WINNER])
    conc = row[R_WIN_CONC : R_WIN_CONC + 28]
    groups = []
    for k in range(int(row[R_WIN_NMELDS])):
        kind, *types = (int(x) for x in row[R_WIN_MELDS + 5 * k : R_WIN_MELDS + 5 * k + 5])
        groups.append(ExposedGroup(L.MELD_KIND_NAMES[kind], tuple(t for t in types if t >= 0)))
    res = evaluate(conc, groups, rules, explain_best=False)
    n_cards = int(conc.sum()) + sum(g.n_cards for g in groups)
    assert n_cards == 31
    assert res.wins
    assert (res.hu, res.units, res.lou, res.steps) == (row[R_HU], row[R_UNITS], row[R_LOU], row[R_STEPS])
    assert res.patterns == pattern_names(int(row[R_PATTERNS]))
    pay = row[R_PAYOFF : R_PAYOFF + 3]
    assert pay[w] == 2 * res.units and pay.sum() == 0


MIXES = [
    ("random,random,random", 0.3),
    ("greedy,greedy,greedy", 0.3),
    ("patient,greedy,random", 0.2),
    ("greedy,random,patient", 0.2),
    ("expert,greedy,expert", 0.2),
]


def _random_rules(rng: random.Random) -> RuleSet:
    return RuleSet(
        zhan_in_chariot=rng.random() < 0.3,
        single_jiang_cap=rng.choice([0, 0, 3, 1]),
        drawn_jiang_chow=rng.random() < 0.7,
        pass_locks_win=rng.random() < 0.7,
        lou_doubles=rng.random() < 0.8,
        hu_tolerance=rng.choice([2, 0]),
        jiang_in_chariot=rng.random() < 0.3,
        pattern_wins=rng.random() < 0.8,
        steps_count_lou=rng.random() < 0.3,
        drawn_card_chow_by=rng.choice(["drawer", "drawer_then_next"]),
        pass_locks_type=rng.random() < 0.7,
        must_kong=rng.random() < 0.7,
        must_chariot_out=rng.random() < 0.7,
        tianhu=rng.random() < 0.8,
    )


@pytest.mark.parametrize("mix", range(len(MIXES)))
def test_random_playouts_keep_every_invariant(mix):
    policies, share = MIXES[mix]
    rng = random.Random(1000 + mix)
    n_total = int(N_DEALS * share)
    ids, params, _ = policy_arrays(parse_policies(policies))
    n_rule_sets = 5
    wins = 0
    for k in range(n_rule_sets):
        rules = RuleSet() if k == 0 else _random_rules(rng)
        n = n_total // n_rule_sets
        results = np.zeros((n, N_RESULT), dtype=np.int64)
        errors = np.zeros(n, dtype=np.int64)
        _checked_batch(root_key(100 + k), n, ids, params, rules.to_array(), results, errors)
        bad = np.flatnonzero(errors)
        assert bad.size == 0, f"deal {bad[0]}: invariant {errors[bad[0]]} broken under {rules.to_strings()}"
        for row in results[results[:, R_WINNER] >= 0]:
            _rescore(row, rules)
            wins += 1
        # dealt hands recorded: 31 / 30 / 30
        assert (results[:, R_DEALT : R_DEALT + 84].reshape(n, 3, 28).sum(axis=2) == [31, 30, 30]).all()
    if "greedy" in policies:
        assert wins > n_total // 4


REVISION_RULE_SETS = [
    {},
    {"zhan_in_chariot": True},
    {"single_jiang_cap": 3},
    {"drawn_jiang_chow": False},
    {"pass_locks_win": False},
    {"pass_locks_type": False},  # passed types still block wins: claims of them are judged by §5.3
]


@pytest.mark.parametrize("changes", REVISION_RULE_SETS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_rules_revision_options_keep_every_invariant(changes):
    """>= 10,000 deals under the default rules and under each option of the revision flipped."""
    rules = RuleSet(**changes)
    ids, params, _ = policy_arrays(parse_policies("greedy,patient,greedy"))
    n = N_DEALS
    results = np.zeros((n, N_RESULT), dtype=np.int64)
    errors = np.zeros(n, dtype=np.int64)
    _checked_batch(root_key(900), n, ids, params, rules.to_array(), results, errors)
    bad = np.flatnonzero(errors)
    assert bad.size == 0, f"deal {bad[0]}: invariant {errors[bad[0]]} broken under {rules.to_strings()}"
    winners = results[results[:, R_WINNER] >= 0]
    assert len(winners) > n // 4
    for row in winners[:2000]:
        _rescore(row, rules)


def test_mc_playouts_keep_every_invariant():
    """mc (4 rollouts per candidate, to keep it quick) under the default rules and under every
    option of the revision flipped together."""
    ids, params, _ = policy_arrays(parse_policies("mc:4,greedy,random"))
    for rules in (RuleSet(), RuleSet(zhan_in_chariot=True, single_jiang_cap=3, drawn_jiang_chow=False,
                                     pass_locks_win=False, pass_locks_type=False)):
        n = 40
        results = np.zeros((n, N_RESULT), dtype=np.int64)
        errors = np.zeros(n, dtype=np.int64)
        _checked_batch(root_key(55), n, ids, params, rules.to_array(), results, errors)
        bad = np.flatnonzero(errors)
        assert bad.size == 0, f"deal {bad[0]}: invariant {errors[bad[0]]} broken under {rules.to_strings()}"
        for row in results[results[:, R_WINNER] >= 0]:
            _rescore(row, rules)


def test_checked_loop_equals_the_batch_kernel():
    ids, params, _ = policy_arrays(parse_policies("greedy,patient,random"))
    rules = RuleSet()
    results = np.zeros((300, N_RESULT), dtype=np.int64)
    errors = np.zeros(300, dtype=np.int64)
    _checked_batch(root_key(7), 300, ids, params, rules.to_array(), results, errors)
    batch = play_deals(300, 7, ids, params, rules.to_array())
    assert np.array_equal(results[:, :R_DEALT], batch[:, :R_DEALT])

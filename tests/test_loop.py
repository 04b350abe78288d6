"""The one compiled decision loop (:mod:`simkit.engine.loop`), through ``mc``'s rollouts, which
play it with a base-policy dispatcher and a last turn, against a plain Python loop over the
same engine steps (the naive twin: ask the base policy, apply, stop at the end or the turn).

Bugs these catch: a turn limit off by one (``<=`` for ``<``) or ignored, a loop that does not
resume where it stopped, the wrong parameter row handed to a seat (expert's weights to greedy, or
zeros to expert), and a payoff read for the wrong seat."""

from __future__ import annotations

import numpy as np
import pytest

from simkit.cards import N_CARDS, N_SEATS
from simkit.deck import deal_deck
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.engine.loop import InPlay
from simkit.policies import mc as M
from simkit.policies.builtin import POLICY_WORK_SIZE, greedy_state
from simkit.policies.expert import expert_state
from simkit.rng import root_key
from simkit.rules import RuleSet

RULES = RuleSet().to_array()


def _start(seed: int, deal: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first decision of deal ``deal`` of seed ``seed``: (state, legal mask, engine workspace)."""
    deck = np.arange(N_CARDS, dtype=np.int64)
    deal_deck(root_key(seed), deal, np.zeros(4, dtype=np.uint64), deck)
    s = np.zeros(L.N_STATE, dtype=np.int64)
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    work = E.new_engine_workspace()
    E.start(s, deck, deal % N_SEATS, RULES, mask, work, np.zeros((0, L.EVENT_WIDTH), dtype=np.int64),
            np.zeros(1, dtype=np.int64))
    return s, mask, work


def _naive_rollout(s, mask, work, base, last_turn):
    """Play on with the base policy at every seat until the deal ends or reaches ``last_turn``."""
    pwork = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    ev, ev_n = np.zeros((0, L.EVENT_WIDTH), dtype=np.int64), np.zeros(1, dtype=np.int64)
    expert_params = M.expert_base_params()
    greedy_params = np.zeros(8, dtype=np.float64)
    while s[L.S_PHASE] != L.PH_OVER and s[L.S_TURNS] < last_turn:
        p = int(s[L.S_PLAYER])
        if base == M.BASE_EXPERT:
            a = expert_state(s, p, mask, expert_params, RULES, pwork)
        else:
            a = greedy_state(s, p, mask, greedy_params, RULES, pwork, False)
        assert mask[a]
        E.apply_legal(s, a, RULES, mask, work, ev, ev_n)


def _compiled_rollout(s, mask, work, base, me, horizon):
    play = InPlay(s, np.zeros((N_SEATS, 4), dtype=np.uint64), mask, np.zeros(0, dtype=np.int64), work,
                  np.zeros(POLICY_WORK_SIZE, dtype=np.int64), np.zeros((0, L.EVENT_WIDTH), dtype=np.int64),
                  np.zeros(1, dtype=np.int64))
    return M._rollout(M._base_table(base, RULES), play, me, horizon)


@pytest.mark.parametrize("base", [M.BASE_GREEDY, M.BASE_EXPERT])
def test_rollouts_play_the_base_policy_to_the_turn_or_the_end(base):
    ended = cut = 0
    for deal in range(12):
        for horizon in (0, 1, 4, 15):
            s, mask, work = _start(4101 + base, deal)
            first_turn = int(s[L.S_TURNS])
            me = deal % N_SEATS
            twin = (s.copy(), mask.copy(), work.copy())
            payoff = _compiled_rollout(s, mask, work, base, me, horizon)
            _naive_rollout(*twin, base, first_turn + horizon if horizon > 0 else 1 << 40)
            assert np.array_equal(s, twin[0]) and np.array_equal(mask, twin[1])
            assert payoff == s[L.S_PAYOFF + me]
            if s[L.S_PHASE] == L.PH_OVER:
                ended += 1
            else:  # cut short exactly at the horizon, paying nothing yet
                assert horizon > 0 and s[L.S_TURNS] == first_turn + horizon and payoff == 0
                cut += 1
    assert ended >= 12 and cut >= 12  # every deal ends unlimited; short horizons cut many


def test_a_rollout_resumed_after_its_horizon_ends_where_one_unlimited_ends():
    for deal in range(6):
        s, mask, work = _start(4111, deal)
        whole = (s.copy(), mask.copy(), work.copy())
        _compiled_rollout(s, mask, work, M.BASE_GREEDY, 0, 3)
        assert s[L.S_PHASE] != L.PH_OVER
        _compiled_rollout(s, mask, work, M.BASE_GREEDY, 0, 0)
        _compiled_rollout(*whole, M.BASE_GREEDY, 0, 0)
        assert np.array_equal(s, whole[0])

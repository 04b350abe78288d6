"""The belief over hidden cards given the table's play (simkit/runner/belief.py).

Each test names the bug it catches."""

from __future__ import annotations

import math

import numpy as np
import pytest

from naive import naive_belief_weight
from simkit.engine import layout as L
from simkit.engine.position import PositionError, parse_position
from simkit.errors import SimkitError
from simkit.policies.mc import determinise
from simkit.policies.registry import parse_policies
from simkit.replay import log_decisions, replay_jsonl
from simkit.rng import root_key, seed_state
from simkit.rules import RuleSet
from simkit.runner.belief import Evidence, belief_particles, belief_table, replay_weight
from simkit.runner.rollout import OUT_PAYOFF, rollout_policy_arrays, rollouts
from simkit.specs.analyze import AnalyzeSpec
from simkit.specs.base import Execution
from simkit.studies.analyze import analyze_position

RULES = RuleSet()


def _decisions(table: str, seed: int, deal: int):
    return log_decisions(replay_jsonl(seed, deal, table, RULES, dealer=deal % 3, seating="fixed").splitlines())


@pytest.mark.parametrize("table,seed", [("expert,expert,expert", 61001), ("greedy,random,expert", 61002),
                                        ("random,random,random", 61003)])
def test_the_true_cards_replay_to_the_true_state(table, seed):
    """The true hidden cards explain the history: a finite weight, and the replay reaches the
    logged state (every hand, group, passed type and flag).  Catches a wrong dealt-hand rebuild
    (a claim's card counted as the hand's, a table 将 as dealt), a wrong stock order, and a pass
    read where the history shows a claim."""
    ids, params = rollout_policy_arrays(parse_policies(table))
    out = np.zeros(L.N_STATE, dtype=np.int64)
    checked = 0
    for deal in range(2):
        for d in _decisions(table, seed, deal):
            w = replay_weight(belief_table(ids, params, RULES),
                              Evidence(d.position.observation(), d.position.state(), root_key(5), 0.1), d.state, 0, out)
            assert math.isfinite(w), (deal, d.index)
            assert np.array_equal(out[: L.S_DECK], d.state[: L.S_DECK]), (deal, d.index)
            assert np.array_equal(out[L.S_NHIST : L.S_HIST + L.HIST_WIDTH * int(d.state[L.S_NHIST])],
                                  d.state[L.S_NHIST : L.S_HIST + L.HIST_WIDTH * int(d.state[L.S_NHIST])])
            checked += 1
    assert checked > 60


def test_an_expert_table_explains_its_own_play_with_certainty():
    """With noise 0, expert's every decision is expert's choice: the true cards weigh exactly
    log 1 = 0.  Catches a likelihood that asks the policy at the wrong seat or state (the
    player's own seat, the state after the action)."""
    ids, params = rollout_policy_arrays(parse_policies("expert,expert,expert"))
    out = np.zeros(L.N_STATE, dtype=np.int64)
    for d in _decisions("expert,expert,expert", 61004, 0):
        assert replay_weight(belief_table(ids, params, RULES),
                             Evidence(d.position.observation(), d.position.state(), root_key(1), 0.0), d.state, 0,
                             out) == 0.0


@pytest.mark.parametrize("table,seed,noise", [("expert,expert,expert", 61005, 0.1), ("greedy,random,patient", 61006, 0.3),
                                              ("random,random,random", 61007, 0.0)])
def test_the_kernel_agrees_with_a_plain_search(table, seed, noise):
    """On uniform determinisations of logged positions, the kernel's log weight and particle equal
    the plain twin's (tests/naive.py), which explains each move by trying every action.  Catches a
    misread row kind, a wrong 吃 chosen among several, the noise term, the seats' streams."""
    ids, params = rollout_policy_arrays(parse_policies(table))
    rng = seed_state(seed)
    out = np.zeros(L.N_STATE, dtype=np.int64)
    hidden = np.zeros(L.N_STATE, dtype=np.int64)
    finite = compared = 0
    for d in _decisions(table, seed, 1)[::3]:
        obs = d.position.observation()
        for draw in range(6):
            hidden = d.state.copy() if draw == 0 else hidden
            if draw:
                assert determinise(obs, rng, hidden)
            w = replay_weight(belief_table(ids, params, RULES), Evidence(obs, d.position.state(), root_key(seed), noise),
                              hidden, draw, out)
            w_naive, s_naive = naive_belief_weight(d.position, hidden, ids, params, RULES.to_array(), noise,
                                                   root_key(seed), draw)
            assert w == pytest.approx(w_naive, abs=1e-12) or (w == -math.inf and w_naive == -math.inf), (d.index, draw)
            if math.isfinite(w):
                finite += 1
                assert np.array_equal(out[: L.S_DECK], s_naive[: L.S_DECK])
            compared += 1
    assert finite >= 6 and compared >= 30


def _opponents(states: np.ndarray, seat: int) -> np.ndarray:
    return np.concatenate([states[..., L.S_CONC + 28 * q : L.S_CONC + 28 * (q + 1)] for q in range(3) if q != seat],
                          axis=-1)


def test_the_belief_knows_the_opponents_hands_better_than_uniform_draws():
    """Over positions past the opening, the particles' mean holding of each type in the other
    hands is nearer the truth (squared error) than uniform determinisations' are.  Catches a
    chain that ignores the likelihood (accepting every swap: uniform draws again) or one that
    never moves from its start."""
    ids, params = rollout_policy_arrays(parse_policies("expert,expert,expert"))
    belief_error = uniform_error = 0.0
    n = 0
    for deal in range(2):
        for d in _decisions("expert,expert,expert", 61008, deal)[2::3]:
            if len(d.position.history) < 15:
                continue
            true = _opponents(d.state, d.seat)
            drawn = belief_particles(d.position.observation(), d.position.state(), 128, 3, ids, params, RULES, 0.1, 2)
            belief_error += float(((_opponents(drawn.states, d.seat).mean(axis=0) - true) ** 2).sum())
            rng, s = seed_state(d.index), np.zeros(L.N_STATE, dtype=np.int64)
            draws = []
            for _ in range(128):
                determinise(d.position.observation(), rng, s)
                draws.append(_opponents(s, d.seat))
            uniform_error += float(((np.mean(draws, axis=0) - true) ** 2).sum())
            n += 1
    assert n >= 8
    assert belief_error < 0.9 * uniform_error, (belief_error / n, uniform_error / n)


def test_particles_are_the_same_for_any_thread_count():
    """Catches chains that share scratch or streams across threads."""
    d = _decisions("expert,expert,expert", 61009, 0)[20]
    ids, params = rollout_policy_arrays(parse_policies("expert,expert,expert"))
    one = belief_particles(d.position.observation(), d.position.state(), 64, 7, ids, params, RULES, 0.1, 1)
    two = belief_particles(d.position.observation(), d.position.state(), 64, 7, ids, params, RULES, 0.1, 2)
    assert np.array_equal(one.states, two.states) and one.accepted == two.accepted
    assert one.states.shape == (64, L.N_STATE) and 0 < one.acceptance < 1


def test_rollouts_draw_particles_by_their_weights():
    """Two particles, the first of weight 0: every rollout plays the second.  Catches a pick that
    ignores the cumulative weights (or reads them off by one)."""
    d = _decisions("expert,expert,expert", 61010, 0)[12]
    true = d.state
    known = np.stack([np.zeros_like(true), true])
    spec = parse_policies("expert,expert,expert")
    got = rollouts(d.position.observation(), [d.action], [True], 0, 32, 9, spec, RULES, known=known,
                   weights=np.array([0.0, 1.0]))
    alone = rollouts(d.position.observation(), [d.action], [True], 0, 32, 9, spec, RULES, known=true)
    assert np.array_equal(got[:, :, OUT_PAYOFF], alone[:, :, OUT_PAYOFF])


def test_analyze_with_belief_is_reproducible_and_says_so():
    """The analysis with a belief is a pure function of its arguments (any workers) and its table
    says how the hidden cards were drawn.  Catches a belief seeded by thread or time."""
    d = _decisions("expert,expert,expert", 61011, 0)[25]
    spec = AnalyzeSpec(rollouts=64, seed=3, race=False, belief=32)
    one = analyze_position(d.position, spec, Execution(workers=1))
    two = analyze_position(d.position, spec, Execution(workers=2))
    assert one.to_dict() == two.to_dict()
    assert "belief: 32 draws of the hidden cards" in one.table()
    assert one.belief_distinct >= 2


def test_a_history_that_does_not_fit_is_one_line_before_the_rollouts():
    """A position whose history is cut (the draws do not add up to the stock) cannot be explained:
    the belief says so in one line instead of analysing uniform cards."""
    d = _decisions("expert,expert,expert", 61012, 0)[25]
    cut = parse_position(d.position.text().replace("history=", "history=draw:0:RJ:0 ", 1))
    with pytest.raises(SimkitError, match="belief: no hidden cards fit the position's public history"):
        analyze_position(cut, AnalyzeSpec(rollouts=16, belief=16))


def test_the_history_travels_with_the_position():
    """Text and JSON keep the history (the belief reads it); a malformed item is one line."""
    d = _decisions("greedy,greedy,greedy", 61013, 0)[30]
    p = d.position
    assert p.history and parse_position(p.text()) == p and parse_position(p.to_json()) == p
    assert int(p.observation()[L.O_NHIST]) == len(p.history)
    assert "history=" not in p.text(history=False)
    with pytest.raises(PositionError, match="history item 'discard:0:XX:0'"):
        parse_position(p.text(history=False) + "; history=discard:0:XX:0")
    with pytest.raises(PositionError, match="history item 'bogus'"):
        parse_position(p.text(history=False) + "; history=bogus")

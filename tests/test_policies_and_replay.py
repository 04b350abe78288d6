"""Policies (built-in, user @njit plug-ins), determinism of batch play, replay."""

from __future__ import annotations

import json

import numba
import numpy as np
import pytest
from helpers import first_legal
from numba import njit

from simkit.cli import main
from simkit.engine.env import DealError
from simkit.engine import layout as L
from simkit.policies import PolicyError, parse_policies, register_policy, unregister_policy
from simkit.policies.registry import policy_arrays
from simkit.replay import replay_events, replay_jsonl
from simkit.rules import RuleSet
from simkit.runner.play import N_RESULT, R_DEALT, R_ERROR, R_PAYOFF, R_WINNER, play_deals

RULES = RuleSet().to_array()


def _play(policies: str, n: int, seed: int = 1, first: int = 0) -> np.ndarray:  # noqa: D103
    ids, params, user = policy_arrays(parse_policies(policies))
    return play_deals(n, seed, ids, params, RULES, first_deal=first, user_functions=user)


def test_batch_is_identical_with_one_or_many_threads_and_any_split():
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _play("greedy,patient,random", 600)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = _play("greedy,patient,random", 600)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, many)
    split = np.concatenate([_play("greedy,patient,random", 250), _play("greedy,patient,random", 350, first=250)])
    assert np.array_equal(one, split)


def test_same_deal_same_cards_whatever_the_policies():
    a = _play("greedy,greedy,greedy", 50)
    b = _play("random,patient,random", 50)
    assert np.array_equal(a[:, R_DEALT : R_DEALT + 84], b[:, R_DEALT : R_DEALT + 84])


def test_greedy_beats_random_and_payoffs_sum_to_zero():
    res = _play("greedy,random,random", 2000)
    assert res[:, R_ERROR].sum() == 0
    assert (res[:, R_PAYOFF : R_PAYOFF + 3].sum(axis=1) == 0).all()
    assert (res[:, R_WINNER] == 0).mean() > 0.3 and res[:, R_PAYOFF].mean() > 0


def test_mc_plays_legal_deals():
    res = _play("mc:2,3,greedy,greedy", 8)
    assert res[:, R_ERROR].sum() == 0
    assert (res[:, R_PAYOFF : R_PAYOFF + 3].sum(axis=1) == 0).all()


@njit
def _illegal(obs, mask, params, rng, rules, work):
    return L.N_ACTIONS + 5


@pytest.mark.slow  # compiles uncached user-policy kernels (seconds each, in every process)
def test_user_njit_policy_runs_in_the_batch_kernel():
    register_policy("first_legal", first_legal, params=(1.0,))
    try:
        res = _play("first_legal,greedy,first_legal", 300)
        assert res[:, R_ERROR].sum() == 0 and res.shape == (300, N_RESULT)
        again = _play("first_legal,greedy,first_legal", 300)
        assert np.array_equal(res, again)
        # replay of a deal with a user policy equals the batch row
        events = list(replay_events(1, 7, "first_legal,greedy,first_legal"))
        end = events[-1]
        assert end["payoffs"] == res[7, R_PAYOFF : R_PAYOFF + 3].tolist()
    finally:
        unregister_policy("first_legal")
    with pytest.raises(PolicyError, match="unknown policy 'first_legal'"):
        parse_policies("first_legal,greedy,greedy")


def test_illegal_user_action_is_reported_not_played():
    register_policy("illegal", _illegal)
    try:
        ids, params, user = policy_arrays(parse_policies("illegal,greedy,greedy"))
        res = play_deals(5, 1, ids, params, RULES, user_functions=user, check=False)
        assert res[:, R_ERROR].all()
        with pytest.raises(DealError, match=r"deal 0 of seed 1 \(policies by seat: _illegal, greedy, greedy\): "
                                            r"seat 0 \(_illegal\) returned an illegal action"):
            _play("illegal,greedy,greedy", 5)
    finally:
        unregister_policy("illegal")


def test_registry_errors():
    with pytest.raises(PolicyError, match="taken by a built-in"):
        register_policy("greedy", first_legal)
    with pytest.raises(PolicyError, match="@njit"):
        register_policy("plain", lambda *a: 0)
    with pytest.raises(PolicyError, match="need 3 policies"):
        parse_policies("greedy,greedy")
    with pytest.raises(PolicyError, match="unknown policy 'nope'"):
        parse_policies("greedy,nope,greedy")
    assert parse_policies("patient:3,4,greedy,random")[0].params == (3.0, 4.0)


def test_replay_is_byte_identical_and_matches_the_batch():
    text = replay_jsonl(5, 12, "greedy,patient,random")
    assert text == replay_jsonl(5, 12, "greedy,patient,random")
    lines = [json.loads(x) for x in text.splitlines()]
    assert lines[0]["event"] == "deal" and len(lines[0]["stock"]) == 21
    assert lines[-1]["event"] == "end"
    row = _play("greedy,patient,random", 13, seed=5)[12]
    assert lines[-1]["payoffs"] == row[R_PAYOFF : R_PAYOFF + 3].tolist()
    if lines[-1]["result"] == "win":
        assert lines[-1]["winner"] == row[R_WINNER]


def _follow_replay(events):
    """Follow every card of a replayed deal from the deal to the final holdings, from the log
    alone: stock order, discards and claims from concealed cards, dead cards, table 将.
    Returns (concealed counts, exposed groups, exposed card counts, stock used) per seat."""
    from simkit.cards import parse_counts, parse_type

    head = events[0]
    conc = [parse_counts(h) for h in head["hands"]]
    assert [int(h.sum()) for h in conc] == [31 if p == head["dealer"] else 30 for p in range(3)]
    stock = [parse_type(c) for c in head["stock"]]
    assert len(stock) == 21
    exposed = [[], [], []]
    dead = 0
    used = 0
    active = None  # (type, source, player)
    for e in events[1:-1]:
        kind = e["event"]
        if kind in ("discard", "draw") and active is not None:
            dead += 1  # the previous active card went unclaimed
            active = None
        if kind == "discard":
            t = parse_type(e["card"])
            assert not e["card"].endswith("J") and conc[e["player"]][t] >= 1
            conc[e["player"]][t] -= 1
            active = (t, "discard", e["player"])
        elif kind == "draw":
            t = parse_type(e["card"])
            assert used < 21 and stock[used] == t, "a draw must flip the next stock card"
            used += 1
            active = (t, "draw", e["player"])
        elif kind == "claim":
            t = parse_type(e["card"])
            assert active is not None and active[0] == t and e["source"] == active[1]
            cards = [parse_type(c) for c in e["cards"]]
            cards.remove(t)  # the active card; the rest come from the claimer's hand
            for c in cards:
                assert conc[e["player"]][c] >= 1
                conc[e["player"]][c] -= 1
            # a 圆 is named by its cards, 占 / 碰 / 楼 by their one type (simkit score notation)
            members = tuple(sorted(cards + [t])) if e["kind"] == "chow" else (t,)
            assert e["kind"] == "chow" or set(cards) == {t}
            exposed[e["player"]].append((e["kind"], members))
            active = None
        elif kind == "table":
            t = parse_type(e["card"])
            assert active == (t, "draw", e["player"]) and e["card"].endswith("J")
            exposed[e["player"]].append(("table", (t,)))
            active = None
        else:
            assert kind in {"pass", "xianggong", "nowin"}
    if active is not None:
        dead += 1
    sizes = {"chow": 0, "zhan": 2, "peng": 3, "kong": 4, "table": 1}
    n_exposed = [sum(sizes[k] or len(m) for k, m in x) for x in exposed]
    total = sum(int(c.sum()) for c in conc) + sum(n_exposed) + dead + 21 - used
    assert total == 112
    return conc, exposed, n_exposed, used


def test_replay_events_conserve_cards_and_rescore():
    from simkit.cards import parse_counts
    from simkit.evaluator import evaluate
    from simkit.exposed import parse_exposed

    wins = 0
    for deal in range(40):
        events = list(replay_events(9, deal, "greedy,greedy,patient"))
        conc, exposed, n_exposed, used = _follow_replay(events)
        end = events[-1]
        assert end["event"] == "end"
        if end["result"] == "win":
            wins += 1
            w = end["winner"]
            # the final holding in the log is exactly the one the cards followed lead to
            assert (parse_counts(end["concealed"]) == conc[w]).all()
            groups = sorted((g.kind, tuple(sorted(g.types))) for g in parse_exposed(end["exposed"]))
            assert groups == sorted(exposed[w])
            assert int(conc[w].sum()) + n_exposed[w] == 31
            res = evaluate(end["concealed"], end["exposed"])
            assert res.wins and res.hu == end["hu"] and res.units == end["units"]
        else:
            assert used == 21  # 穿牌: the stock ran out
    assert wins >= 20


def test_cli_replay(capsys, tmp_path):
    assert main(["replay", "--seed", "1", "--deal", "0", "--policies", "greedy,random,random"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith('{"event": "deal"')
    assert main(["replay", "--seed", "1", "--deal", "0", "--policies", "greedy,bogus,random"]) == 2
    assert "unknown policy 'bogus'" in capsys.readouterr().err

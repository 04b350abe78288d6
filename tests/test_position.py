"""Positions (simkit.engine.position) and the decisions of a replay log (simkit.replay).

* every decision of random playouts converts to a position whose observation is the engine's
  own (bar the fields a decision does not use), whose legal actions are the engine's, and whose
  text and JSON forms read back equal;
* impossible positions are one-line errors naming what is wrong;
* the determinisations of a position never use a card it says is seen elsewhere;
* a replay log's decisions, applied in order, give back the log; a tampered log is refused at
  the line that the deal does not give.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from simkit.cards import N_COPIES, N_SEATS, N_TYPES
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.engine.env import Game
from simkit.engine.position import (
    Position,
    PositionError,
    action_text,
    decision_kind,
    parse_action,
    parse_position,
    position_from_state,
)
from simkit.policies.mc import determinise
from simkit.replay import LogError, log_decisions, replay_jsonl
from simkit.rng import root_key, stream_state
from simkit.rules import RuleSet

VARIANT = RuleSet(drawn_card_chow_by="drawer_then_next", drawn_jiang_chow=False, pass_locks_win=False)
# fields an observation keeps from an earlier step, which the decision at hand never reads: the
# last claim's source / stage / decisions in a discard phase, the last discard phase's gain in a claim
STALE = {"claim": {L.O_GAIN, L.O_GAIN_TYPE},
         "discard": {L.O_SOURCE, L.O_SOURCE_PLAYER, L.O_STAGE, L.O_DECIDED}}


def _playout_positions(deals: int, seed: int = 11):
    """(state, position, rules) at every decision of random playouts, both rule sets."""
    rng = random.Random(seed)
    for deal in range(deals):
        rules = VARIANT if deal % 2 else RuleSet()
        state = Game(rules).new_initial_state(seed=seed, deal=deal, dealer=deal % 3)
        while not state.is_terminal():
            s = np.array(state.state_array)
            yield state, s, position_from_state(s, rules)
            state.apply(rng.choice(state.legal_actions()))


def test_positions_of_random_playouts_are_the_engine_view():
    n = 0
    kinds = set()
    for state, s, position in _playout_positions(8):
        n += 1
        kinds.add((position.decision, position.stage, position.got))
        obs = np.zeros(L.N_OBS, dtype=np.int64)
        E.observe(s, int(s[L.S_PLAYER]), obs)
        mine = position.observation()
        differ = {int(i) for i in np.flatnonzero(mine[: L.O_NHIST] != obs[: L.O_NHIST])} - STALE[position.decision]
        assert not differ, (position.text(), sorted(differ))
        assert position.legal_actions() == state.legal_actions()
        assert parse_position(position.text()) == position
        assert parse_position(position.to_json()) == position
        for action in position.legal_actions():
            assert parse_action(action_text(action, position), position) == action
    assert n > 300
    assert {k[0] for k in kinds} == {"discard", "claim"} and len(kinds) >= 6


def _position(**changes) -> Position:
    base = parse_position("seat=1; dealer=0; turn=claim; hand=YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*2; "
                          "card=RJ; source=discard; from=0; stock=21")
    return Position(**{**{f: getattr(base, f) for f in base.__dataclass_fields__}, **changes})


CLAIM = "seat=1; dealer=0; turn=claim; hand=YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*2; card=RJ; source=discard; from=0"


@pytest.mark.parametrize(("text", "needle"), [
    (CLAIM + "; stock=20", "stock 20 does not add up"),
    (CLAIM + "; stock=21; dead=RJ*2", "5 copies of RJ are seen"),
    (CLAIM.replace("RJ*2;", "RJ*2 RS;") + "; stock=20", "seat 1 holds 31 concealed + 0 exposed cards; a claim needs 30"),
    (CLAIM + "; stock=21; exposed2=chow:RJ,RS,RC", "is not a 圆"),
    (CLAIM + "; stock=21; exposed2=table:RS", "is not a 将"),
    (CLAIM + "; stock=21; exposed0=kong:GC kong:GM kong:GP kong:GZ kong:WC kong:WM kong:WP kong:WZ",
     "seat 0 shows 32 exposed cards; a hand holds 30"),
    (CLAIM.replace("from=0", "from=1") + "; stock=21", "seat 1 discarded RJ: it has no claim on it"),
    (CLAIM.replace("RJ*2", "GC GM") + "; stock=21", "seat 1 has no claim on RJ"),
    (CLAIM.replace("from=0", "from=2") + "; stock=21; stage=chow", "seat 1 is not asked at the chow stage"),
    (CLAIM + "; stock=21; colour=red", "unknown position field 'colour'"),
    (CLAIM + "; stock=21; tianhu=maybe", "tianhu"),
    (CLAIM + "; stock=twelve", "stock must be a whole number"),
    (CLAIM.replace("card=RJ", "card=XX") + "; stock=21", "card:"),
    ("seat=3; turn=discard; hand=; stock=0", "seat must be a seat 0, 1 or 2"),
    ("seat=0; turn=fold; hand=; stock=0", "turn must be discard or claim"),
    ("{\"seat\": 0", "not valid JSON"),
    ("seat 0", "is not key=value"),
    ("", "got nothing"),
])
def test_impossible_positions_are_one_line_errors(text, needle):
    with pytest.raises(PositionError) as info:
        parse_position(text)
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_discard_phase_needs_31_cards_and_a_discardable_card():
    hand = "YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*3"
    p = parse_position(f"seat=0; dealer=0; turn=discard; hand={hand}; stock=21; got=tianhu")
    assert p.concealed_sizes == (31, 30, 30) and decision_kind(p) in ("discard", "win")
    with pytest.raises(PositionError, match="a discard phase needs 31"):
        parse_position(f"seat=0; dealer=0; turn=discard; hand={hand.replace('RJ*3', 'RJ*2')}; stock=21")
    with pytest.raises(PositionError, match="got=tianhu is the dealer's opening"):
        parse_position(f"seat=0; dealer=1; turn=discard; hand={hand}; stock=21; got=tianhu")


def test_claim_stage_is_derived_as_the_engine_asks():
    # seat 1 holds two RJ: the 碰 player (and also the 吃 player, next of the discarder)
    assert _position().stage == "peng"
    # without the pair, seat 1 is asked only as the 吃 player
    p = parse_position(CLAIM.replace("RJ*2", "RJ RS") + "; stock=21")
    assert p.stage == "chow" and L.A_ZHAN in p.legal_actions()


def test_legal_actions_are_each_positions_own_and_a_returned_list_is_a_copy():
    """Legal actions are computed once per position (issue 37): equal positions give equal lists,
    different positions their own, and mutating a returned list changes no later answer."""
    claim = _position()
    chow = parse_position(CLAIM.replace("RJ*2", "RJ RS") + "; stock=21")
    discard = parse_position("seat=0; dealer=0; turn=discard; hand=YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*3; "
                             "stock=21")
    expected = {id(p): _legal_of(p) for p in (claim, chow, discard)}
    assert len({tuple(v) for v in expected.values()}) == 3
    for p in (claim, chow, discard, claim, chow, discard):
        assert p.legal_actions() == expected[id(p)]
    got = claim.legal_actions()
    got.append(-1)
    got.clear()
    assert claim.legal_actions() == expected[id(claim)] and claim.legal_actions() is not claim.legal_actions()
    assert chow.legal_actions() == expected[id(chow)] and discard.legal_actions() == expected[id(discard)]
    twin = parse_position(claim.text())  # an equal position, its own cache: the same answer
    assert twin == claim and hash(twin) == hash(claim) and twin.legal_actions() == expected[id(claim)]
    assert "_legal" not in repr(claim) and "_legal_cache" not in claim.__dataclass_fields__


def _legal_of(p: Position) -> list[int]:
    """The legal actions straight from the engine, no cache."""
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    E.legal_mask(p.state(), p.rules.to_array(), mask, E.new_engine_workspace())
    return [int(a) for a in np.flatnonzero(mask)]


def test_determinisations_never_use_a_seen_card():
    """Count conservation over the samples: the player's hand, exposed and dead cards stay, the
    others get their public number of cards, and every type adds up to 4 copies."""
    root = root_key(5)
    rng = np.zeros(4, dtype=np.uint64)
    d = np.zeros(L.N_STATE, dtype=np.int64)
    checked = 0
    for k, (_, s, position) in enumerate(_playout_positions(3, seed=21)):
        if k % 7:
            continue
        obs = position.observation()
        seen = position.seen_counts()
        for r in range(20):
            stream_state(root, r, 0, rng)
            assert determinise(obs, rng, d)
            me = position.seat
            conc = d[L.S_CONC : L.S_CONC + N_SEATS * N_TYPES].reshape(N_SEATS, N_TYPES)
            assert (conc[me] == np.array(position.hand)).all()
            assert [int(conc[q].sum()) for q in range(N_SEATS)] == list(position.concealed_sizes)
            stock = np.bincount(d[L.S_DECK + L.N_STATE * 0 + 112 - position.stock : L.S_DECK + 112] // N_COPIES,
                                minlength=N_TYPES)
            hidden = conc.sum(axis=0) - conc[me] + stock
            assert (hidden == position.unseen_counts()).all()
            assert (hidden + seen == N_COPIES).all()
            checked += 1
    assert checked > 100


def test_replay_log_decisions_give_the_log_back():
    text = replay_jsonl(5, 2, "expert,greedy,random")
    lines = text.splitlines()
    decisions = log_decisions(lines)
    assert [d.index for d in decisions] == list(range(len(decisions)))
    header = json.loads(lines[0])
    state = Game(RuleSet.from_dict(header["rules"])).new_initial_state(seed=5, deal=2)
    for d in decisions:  # the same deal, stepped with the logged actions: the same positions
        assert position_from_state(np.array(state.state_array), d.position.rules) == d.position
        assert d.action in d.position.legal_actions()
        state.apply(d.action)
    assert state.is_terminal()
    assert state.returns() == json.loads(lines[-1])["payoffs"]


def test_a_tampered_or_cut_log_is_refused_at_its_line():
    lines = replay_jsonl(5, 2, "expert,greedy,random").splitlines()
    k = next(i for i, line in enumerate(lines) if json.loads(line)["event"] == "draw")
    entry = json.loads(lines[k])
    entry["card"] = "RJ" if entry["card"] != "RJ" else "GC"
    bad = lines[:k] + [json.dumps(entry)] + lines[k + 1 :]
    with pytest.raises(LogError, match=f"line {k + 1}: the log says"):
        log_decisions(bad)
    with pytest.raises(LogError, match="the log ends"):
        log_decisions(lines[: len(lines) // 2])
    with pytest.raises(LogError, match="starts with its deal line"):
        log_decisions(lines[1:])
    with pytest.raises(LogError, match="line 2: not JSON"):
        log_decisions([lines[0], "{oops"])

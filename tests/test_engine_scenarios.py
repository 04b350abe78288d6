"""Hand-built scenarios for the rules of docs/rules.md §5-7 and each rule option."""

from __future__ import annotations

import numpy as np
import pytest

from simkit.cards import parse_type
from simkit.engine import layout as L
from simkit.engine.env import Environment, play_python
from simkit.rules import RuleSet

RC, GJ = parse_type("RC"), parse_type("GJ")
WIN_31 = "YJ*3 RJ*3 WJ*3 GJ*3 YS*2 YX*2 YM*2 YP*2 RS*2 RX*2 RM*2 RP*2 WC WM WP"
WIN_30_NEEDS_WC = "YJ*3 RJ*3 WJ*3 GJ*3 YS*2 YX*2 YM*2 YP*2 RS*2 RX*2 RM*2 RP*2 WM WP"


def env_at(hands, stock="GM GP GS GX", player=0, exposed=("", "", ""), first=False, **rules):
    env = Environment(RuleSet(**rules))
    env.load_position(hands, stock, player=player, exposed=exposed, first_phase=first)
    return env


def kinds(env):
    return [L.decode_action(a)[0] for a in env.legal_actions()]


def test_jiang_is_never_discarded_and_discards_are_concealed_cards():
    env = env_at(["YJ RJ RC YM", "YS", "YX"])
    legal = env.legal_actions()
    assert legal == sorted([parse_type("RC"), parse_type("YM")])
    with pytest.raises(ValueError, match="illegal action"):
        env.apply(parse_type("YJ"))


def test_peng_has_priority_over_chow_and_pass_locks_the_type():
    env = env_at(["RC YM", "RM RP YX", "RC*2 GS"])
    env.apply(RC)
    assert env.current_player() == 2 and kinds(env) == ["pass", "peng"]
    env.apply(L.A_PASS)
    assert env.current_player() == 1 and set(kinds(env)) == {"pass", "chow_triad"}
    assert env.observation(2).pass_locks[2, RC] == 1  # seat 2 knows its own lock ...
    obs = env.observation(0)
    assert obs.pass_locks[2, RC] == 0 and obs.active_card == RC  # ... another seat does not see it
    env.apply(L.A_CHOW_TRIAD)
    assert env.melds(1) == [("chow", (parse_type("RC"), parse_type("RM"), parse_type("RP")))]
    # seat 1 now has a discard phase with 31... cards of its own: it discards YX
    assert env.legal_actions() == [parse_type("YX")]


def test_peng_taken_leaves_no_chow():
    env = env_at(["RC YM", "RM RP YX", "RC*2 GS"])
    env.apply(RC)
    env.apply(L.A_PENG)
    assert env.melds(2) == [("peng", (RC,))] and env.current_player() == 2
    assert env.legal_actions() == [parse_type("GS")]


def test_claim_is_illegal_when_it_leaves_no_discard_and_no_win():
    # seat 2 would hold no concealed card after the 碰 and cannot win: no claim offered
    env = env_at(["RC YM", "YX", "RC*2"])
    env.apply(RC)
    assert env.current_player() != 2 or env.is_over()
    events = env.events()
    assert not any(e[0] == L.E_CLAIM for e in events)


def test_drawer_may_peng_its_drawn_card_and_locked_player_may_not():
    env = env_at(["YS GM", "RC*2 YX", "GS"], stock="RC GP GX")
    env.apply(parse_type("YS"))  # nobody claims YS; seat 1 draws RC
    assert env.current_player() == 1 and "peng" in kinds(env)
    env = env_at(["YS GM", "RC*2 YX", "GS"], stock="RC GP GX", pass_locks_type=False)
    env.apply(parse_type("YS"))
    assert "peng" in kinds(env)


def test_pass_lock_option():
    def run(**rules):
        env = env_at(["RC YM GM", "YX", "RC*2 GS GX"], stock="WS RC WX WM", **rules)
        env.apply(RC)  # seat 2 passes its legal 碰
        env.apply(L.A_PASS)
        # stock: seat 1 draws WS (dead), seat 2 draws RC: may seat 2 碰 its draw?
        return env

    locked = run()
    events = locked.events()
    second = [i for i, e in enumerate(events) if e[0] == L.E_DRAW and e[1] == 2 and e[2] == RC]
    assert len(second) == 1  # seat 2 did draw the second RC ...
    # ... and took no decision on it: no claim and no pass of seat 2 follows that draw
    assert not any(e[0] in (L.E_CLAIM, L.E_PASS) and e[1] == 2 for e in events[second[0]:])
    free = run(pass_locks_type=False)
    assert free.current_player() == 2 and "peng" in kinds(free)


def test_unclaimed_drawn_jiang_goes_to_the_table_then_discard_phase():
    env = env_at(["YS GM", "YX RM", "WX"], stock="GJ GP")
    env.apply(parse_type("YS"))
    assert env.melds(1) == [("table", (GJ,))]
    obs = env.observation(1)
    assert obs.phase == "discard" and obs.exposed[1, 3, GJ] == 1
    assert sorted(env.legal_actions()) == sorted([parse_type("YX"), parse_type("RM")])


def test_xianggong_only_jiang_concealed():
    env = env_at(["YJ RJ", "YX RM", "WX"], stock="GM GP")
    ev = env.events()
    assert [e[0] for e in ev][:2] == [L.E_XIANGGONG, L.E_DRAW] and ev[0][1] == 0
    assert env.observation(1).xianggong.tolist() == [1, 0, 0]


def test_xianggong_one_concealed_card_draws_a_jiang():
    env = env_at(["YS GM", "YM", "WX"], stock="GJ GP")
    env.apply(parse_type("YS"))
    assert env.observation(2).xianggong[1] == 1
    # a 相公 never claims: seat 1 holds RC... give it a later chance
    assert any(e[0] == L.E_XIANGGONG and e[1] == 1 for e in env.events())


def test_xianggong_never_claims():
    # seat 0's 碰 of YJ would give a winning 31-card holding (six fat 楼): legal for a player
    # who is not 相公 ...
    exposed = ("kong:YC kong:WC kong:GC kong:YZ kong:WZ kong:GZ peng:YM", "", "")  # 27 cards
    control = env_at(["YJ*2 RJ WS", "YX RM", "WX"], stock="YJ GP", exposed=exposed)
    control.apply(parse_type("WS"))  # seat 1 draws YJ
    assert control.current_player() == 0 and "peng" in kinds(control)
    # ... but seat 0 holding only 将 in a discard phase it cannot win is 相公 and never claims
    env = env_at(["YJ*2 RJ", "YX RM", "WX"], stock="GP YJ GX", exposed=exposed)
    assert env.observation(1).xianggong[0] == 1
    events = env.events()
    assert any(e[0] == L.E_DRAW and e[2] == parse_type("YJ") for e in events)  # the YJ was drawn
    assert not any(e[0] in (L.E_CLAIM, L.E_PASS) and e[1] == 0 for e in events)


def test_exhausted_deal_pays_nothing():
    env = env_at(["YS GM", "YX", "WX"], stock="")
    env.apply(parse_type("YS"))
    assert env.is_over() and env.returns() == [0, 0, 0]
    assert env.events()[-1][0] == L.E_EXHAUSTED


def test_must_kong_option():
    for must, flag in ((True, 1), (False, 0)):
        env = env_at(["RC YM", "YX", "RC*3 GS"], must_kong=must)
        env.apply(RC)
        assert env.current_player() == 2 and "kong" in kinds(env)
        env.apply(L.A_PASS)
        assert env.observation(2).cannot_win[2] == flag and env.observation(0).cannot_win[2] == 0


def test_must_chariot_out_option():
    for must, chariot, flag in ((True, True, 1), (False, True, 0), (True, False, 0)):
        hand = "RC*2 RM*2 RP*2 GS" if chariot else "RC*2 RM RP*2 GS"
        env = env_at(["RC YM", "YX", hand], must_chariot_out=must)
        env.apply(RC)
        env.apply(L.A_PASS)
        assert env.observation(2).cannot_win[2] == flag


def test_must_chariot_out_jiang_triple_colour():
    # a 碰 of 将 declined while holding >= 2 将 in 3 colours: no longer allowed to win
    env = env_at(["YS YM", "YX", "RJ*2 YJ*2 WJ*2 GS"], stock="RJ GP GX")
    env.apply(parse_type("YS"))  # seat 1 draws RJ; seat 2 holds 2 RJ
    assert env.current_player() == 2 and "peng" in kinds(env)
    env.apply(L.A_PASS)
    assert env.observation(2).cannot_win[2] == 1


def test_drawn_card_chow_by_option():
    for option, next_chows in (("drawer", False), ("drawer_then_next", True)):
        env = env_at(["YS GM", "YX", "RM RP WX"], stock="RC GP", drawn_card_chow_by=option)
        env.apply(parse_type("YS"))  # seat 1 draws RC and cannot use it
        assert (env.current_player() == 2 and "chow_triad" in kinds(env)) == next_chows


def test_tianhu_option():
    env = env_at([WIN_31, "YZ", "GZ"], first=True)
    assert L.A_WIN in env.legal_actions()
    env.apply(L.A_WIN)
    assert env.is_over() and env.returns()[0] > 0
    assert env.state_array[L.S_WIN_KIND] == L.WIN_TIANHU
    env = env_at([WIN_31, "YZ", "GZ"], first=True, tianhu=False)
    assert L.A_WIN not in env.legal_actions()


def test_win_after_chow_of_a_discard_and_payoff():
    env = env_at(["WC YZ", WIN_30_NEEDS_WC, "GZ"])
    env.apply(parse_type("WC"))
    assert env.current_player() == 1 and "chow_triad" in kinds(env)
    env.apply(L.A_CHOW_TRIAD)
    assert L.A_WIN in env.legal_actions()
    env.apply(L.A_WIN)
    u = env.state_array[L.S_UNITS]
    assert u >= 1 and env.returns() == [-u, 2 * u, -u]
    assert env.state_array[L.S_WIN_KIND] == L.WIN_DISCARD


def test_cannot_win_flag_blocks_the_win():
    env = env_at(["WC YZ", WIN_30_NEEDS_WC, "GZ"])
    env._state[L.S_NOWIN + 1] = 1
    env.apply(parse_type("WC"))
    # the chow keeps seat 1 playable (it can discard), but it may not win
    env.apply(L.A_CHOW_TRIAD)
    assert L.A_WIN not in env.legal_actions()


def test_python_policy_tier_two():
    class FirstLegal:
        def act(self, observation, legal_actions):
            assert observation.concealed.sum() == observation.n_concealed[observation.seat]
            return L.A_WIN if L.A_WIN in legal_actions else legal_actions[0]

    env = play_python([FirstLegal(), FirstLegal(), FirstLegal()], seed=3, deal=2)
    assert env.is_over() and sum(env.returns()) == 0


def test_action_encoding_round_trip():
    for a in range(L.N_ACTIONS):
        kind, arg = L.decode_action(a)
        assert L.encode_action(kind, arg) == a
    with pytest.raises(ValueError):
        L.decode_action(L.N_ACTIONS)


def test_observation_hides_other_hands():
    env = Environment()
    env.new_deal(seed=4)
    obs = env.observation(1)
    full = env.state_array
    assert np.array_equal(obs.concealed, full[L.S_CONC + 28 : L.S_CONC + 56])
    assert obs.array.shape == (L.N_OBS,)
    # the observation vector holds exactly one seat's concealed block
    assert obs.n_concealed.tolist() == [31, 30, 30]


# ---- rules revision (docs/rules.md §5.3, §5.5, §7)
JIANG_KONG_EXPOSED = "kong:YC kong:WC kong:GC peng:YM peng:WM peng:GM peng:YP table:YJ"  # 25 cards


def test_claim_that_sets_its_own_cannot_win_flag_must_leave_a_discard():
    # seat 1: RJ*3 RS RX concealed + 25 exposed draws RJ.  吃 RJ RS RX declines the legal 发子
    # (有子不发不能赢) and leaves only 将 concealed: it could neither discard nor win (§5.3)
    env = env_at(["WP GM", "RJ*3 RS RX", "GS"], stock="RJ GP GX", exposed=("", JIANG_KONG_EXPOSED, ""))
    env.apply(parse_type("WP"))
    assert env.current_player() == 1
    assert set(kinds(env)) == {"pass", "kong", "zhan"}
    # without must_kong the same 吃 keeps the win open: 31 cards, three fat 楼, it wins
    env = env_at(["WP GM", "RJ*3 RS RX", "GS"], stock="RJ GP GX", exposed=("", JIANG_KONG_EXPOSED, ""),
                 must_kong=False)
    env.apply(parse_type("WP"))
    assert set(kinds(env)) == {"pass", "kong", "zhan", "chow_triad"}
    env.apply(L.A_CHOW_TRIAD)
    assert env.legal_actions() == [L.A_WIN]


def test_drawn_jiang_chow_option():
    on = env_at(["WP GM", "RS RX YM", "GS"], stock="RJ GP GX")
    on.apply(parse_type("WP"))
    assert on.current_player() == 1 and set(kinds(on)) == {"pass", "chow_triad"}
    off = env_at(["WP GM", "RS RX YM", "GS"], stock="RJ GP GX", drawn_jiang_chow=False)
    off.apply(parse_type("WP"))
    # no decision on the drawn 将: it goes to seat 1's table, seat 1 discards
    assert off.melds(1) == [("table", (parse_type("RJ"),))]
    assert off.current_player() == 1 and sorted(off.legal_actions()) == sorted(
        parse_type(c) for c in ("RS", "RX", "YM"))
    # a drawn 将 the drawer may 发子 is still offered with the option off
    off = env_at(["WP GM", "RJ*3 YM", "GS"], stock="RJ GP GX", drawn_jiang_chow=False)
    off.apply(parse_type("WP"))
    assert set(kinds(off)) == {"pass", "kong"}


PASSED_JIANG_HAND = "RS*2 RX*2 YS*2 YX*2 WS*2 WX*2 GS*2 GX*2 YM*2"  # 18 concealed, all pairs
PASSED_JIANG_EXPOSED = "kong:YC kong:WC kong:GC"  # 12: 30 cards, three fat 楼


def _pass_drawn_jiang(**rules):
    env = env_at(["WP GM", PASSED_JIANG_HAND, "GP"], stock="RJ GJ GX", exposed=("", PASSED_JIANG_EXPOSED, ""),
                 **rules)
    env.apply(parse_type("WP"))  # seat 1 draws RJ and may 吃 it with RS RX
    assert env.current_player() == 1 and set(kinds(env)) == {"pass", "chow_triad"}
    env.apply(L.A_PASS)  # passed: RJ goes to seat 1's table, its discard phase comes through RJ
    assert env.melds(1)[-1] == ("table", (parse_type("RJ"),))
    return env


def test_passed_card_cannot_win():
    # 31 cards, complete, three fat 楼: the holding wins, but it was reached through a passed type
    assert "win" not in kinds(_pass_drawn_jiang())
    assert "win" in kinds(_pass_drawn_jiang(pass_locks_win=False))
    # the lock is recorded even when it locks no claim
    env = _pass_drawn_jiang(pass_locks_type=False)
    assert env.observation(1).pass_locks[1, parse_type("RJ")] == 1 and "win" not in kinds(env)
    env = _pass_drawn_jiang(pass_locks_type=False, pass_locks_win=False)
    assert env.observation(1).pass_locks[1, parse_type("RJ")] == 0 and "win" in kinds(env)


def test_passed_type_claim_must_leave_a_discard_when_it_cannot_win():
    # pass_locks_type off: seat 1 passes a 吃 of RM, then draws the other RM.  吃 again would
    # leave only 将 concealed, and a claimed passed type cannot bring a win (§7), so the
    # claim is illegal (§5.3) unless pass_locks_win is off
    def second_rm(**rules):
        env = env_at(["RM GM", "YJ*4 RJ*4 WJ*4 GJ*4 RC RP", "GS"], stock="RM GP GX",
                     exposed=("", "kong:YC kong:WC kong:GC", ""), pass_locks_type=False, **rules)
        env.apply(parse_type("RM"))
        assert env.current_player() == 1 and set(kinds(env)) == {"pass", "chow_triad"}  # 31 cards: it would win
        env.apply(L.A_PASS)
        return env

    locked = second_rm()
    assert not any(e[0] == L.E_CLAIM for e in locked.events()) and locked.is_over()
    free = second_rm(pass_locks_win=False)
    assert free.current_player() == 1 and set(kinds(free)) == {"pass", "chow_triad"}
    free.apply(L.A_CHOW_TRIAD)
    assert free.legal_actions() == [L.A_WIN]


def test_declined_peng_through_a_zhan_chariot_sets_no_flag_by_default():
    # seat 2 holds RM*2 and RC*2 concealed and a 占 pair of RP: "a chariot through RM" counts
    # the 占 pair only under zhan_in_chariot (§7)
    def decline(**rules):
        env = env_at(["RM GM", "YS", "RM*2 RC*2 GS"], stock="GP GX", exposed=("", "", "zhan:RP"), **rules)
        env.apply(parse_type("RM"))
        assert env.current_player() == 2 and "peng" in kinds(env)
        env.apply(L.A_PASS)
        return env.observation(2).cannot_win[2]

    assert decline() == 0
    assert decline(zhan_in_chariot=True) == 1


# ---- Game / State (OpenSpiel split)
def test_game_is_immutable_and_state_clones_independently():
    import dataclasses

    from simkit.engine.env import NO_PLAYER, Game

    game = Game(RuleSet(tianhu=False), ("greedy", "patient", "random"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        game.rules = RuleSet()
    with pytest.raises(ValueError, match="three policy names"):
        Game(RuleSet(), ("greedy", "greedy"))
    state = game.new_initial_state(seed=3, deal=5)
    assert state.game is game and state.current_player() == 0 and not state.is_terminal()
    copy = state.clone()
    first = state.legal_actions()[0]
    state.apply_action(first)
    assert copy.legal_actions()[0] == first and copy.current_player() == 0  # the clone did not move
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    assert state.current_player() == NO_PLAYER and state.legal_actions() == [] and sum(state.returns()) == 0
    # the same actions replayed on the clone reach the same end
    assert copy.events().shape[0] < state.events().shape[0]


def test_play_python_never_stops_silently(monkeypatch):
    from simkit.engine import env as env_module

    class First:
        def act(self, observation, legal):
            return legal[0]

    state = env_module.play_python([First(), First(), First()], seed=1)
    assert state.is_terminal()
    monkeypatch.setattr(env_module, "MAX_DECISIONS", 3)
    with pytest.raises(env_module.DealError, match=r"^deal 0 of seed 1 \(policies by seat: First, First, First\): "
                       r"the deal did not end within MAX_DECISIONS = 3 decisions$"):
        env_module.play_python([First(), First(), First()], seed=1)

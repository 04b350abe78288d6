"""The ``expert`` policy: legal and deterministic in play, the same on the observation and on
the state, and each of its features checked on a hand-built position (each test names the
feature, the position, and the choice that the feature must change)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy.stats import binom

from simkit.cards import CHE, JIANG, N_RANKS, ZU, parse_type
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.engine.env import Game
from simkit.evaluator import kernel as K
from simkit.policies import expert as X
from simkit.policies.expert import EXPERT_DEFAULTS, X_DANGER_CHOW, X_DANGER_FEED, discard_danger
from simkit.policies.builtin import P_EXPERT, POLICY_WORK_SIZE
from simkit.policies.dispatch import builtin_act, builtin_act_state
from simkit.policies.registry import N_PARAMS, effective_params, param_index, parse_policies, parse_policy, policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import R_ERROR, R_PAYOFF, R_WINNER, play_deals


def _params(**changes) -> np.ndarray:
    params = np.zeros(N_PARAMS)
    values = effective_params(parse_policy("expert"))
    params[: len(values)] = values
    for name, value in changes.items():
        params[param_index("expert", name)] = value
    return params


def _counts(text: str) -> np.ndarray:
    conc = np.zeros(28, dtype=np.int64)
    for token in text.split():
        name, _, count = token.partition("*")
        conc[parse_type(name)] += int(count or 1)
    return conc


def _observation(conc: str, phase: int = L.PH_DISCARD, active: int = -1, stock: int = 10, dead: str = "",
                 exposed: dict | None = None, nowin: bool = False) -> np.ndarray:
    """Seat 0's observation: its concealed cards, the dead cards, exposed 碰s per seat
    (``{seat: "YC YM"}``), both opponents holding 25 concealed cards."""
    obs = np.zeros(L.N_OBS, dtype=np.int64)
    obs[L.O_SEAT] = 0
    obs[L.O_PHASE] = phase
    obs[L.O_ACTIVE] = active
    obs[L.O_STOCK_LEFT] = stock
    obs[L.O_CONC : L.O_CONC + 28] = _counts(conc)
    obs[L.O_DEAD : L.O_DEAD + 28] = _counts(dead)
    for seat, text in (exposed or {}).items():
        pengs = _counts(text)
        obs[L.O_EXP + 112 * seat + 28 * K.EXP_PENG : L.O_EXP + 112 * seat + 28 * (K.EXP_PENG + 1)] = pengs
        obs[L.O_EXPCARDS + 28 * seat : L.O_EXPCARDS + 28 * (seat + 1)] = 3 * pengs
    obs[L.O_NCONC] = int(obs[L.O_CONC : L.O_CONC + 28].sum())
    obs[L.O_NCONC + 1] = 25
    obs[L.O_NCONC + 2] = 25
    obs[L.O_NOWIN] = int(nowin)
    return obs


def _discard_mask(obs: np.ndarray, win: bool = False) -> np.ndarray:
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    for t in range(28):
        mask[t] = obs[L.O_CONC + t] > 0 and t % 7 != 0
    mask[L.A_WIN] = win
    return mask


def _act(obs, mask, params, rules=None) -> int:
    rules = RuleSet().to_array() if rules is None else rules
    work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    action = int(builtin_act(P_EXPERT, obs, mask, params, np.array([1, 2, 3, 4], dtype=np.uint64), rules, work))
    assert mask[action], L.action_name(action)
    return action


def test_registered_with_named_parameters():
    assert parse_policy("expert").name == "expert"
    assert len(X.EXPERT_DEFAULTS) == len(X.EXPERT_PARAM_NAMES) <= N_PARAMS
    assert param_index("expert", "danger") == X.X_DANGER
    assert param_index("expert", "min_units") == X.X_MIN_UNITS
    ids, _, _ = policy_arrays(parse_policies("expert,greedy,expert"))
    assert ids.tolist() == [P_EXPERT, 1, P_EXPERT]


@pytest.mark.parametrize("policies", ["expert,expert,expert", "expert,greedy,random", "patient,expert,mc:2"])
def test_plays_only_legal_actions_and_is_deterministic(policies):
    """R_ERROR marks an illegal action; the same seed gives the same deals."""
    ids, params, _ = policy_arrays(parse_policies(policies))
    n = 20 if "mc" in policies else 400
    for rules in (RuleSet(), RuleSet(zhan_in_chariot=True, single_jiang_cap=3, drawn_jiang_chow=False,
                                     pass_locks_win=False, pass_locks_type=False, must_kong=False)):
        first = play_deals(n, 5, ids, params, rules.to_array())
        assert first[:, R_ERROR].sum() == 0
        assert (first[:, R_WINNER] >= 0).mean() > 0.3
        assert np.array_equal(first, play_deals(n, 5, ids, params, rules.to_array()))
        assert (first[:, R_PAYOFF : R_PAYOFF + 3].sum(axis=1) == 0).all()


def test_observation_and_state_paths_choose_alike():
    """expert_act (observation) and expert_state (the player's view read from the state)."""
    rules = RuleSet().to_array()
    params = _params()
    checked = 0
    for state, s, p, mask, obs in _decision_points(("expert", "greedy", "expert"), 31, 6, rules):
        stream = np.array([1, 2, 3, 4], dtype=np.uint64)
        work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
        by_obs = builtin_act(P_EXPERT, obs, mask, params, stream.copy(), rules, work)
        by_state = builtin_act_state(P_EXPERT, s.copy(), obs, mask, params, stream.copy(), rules, work)
        assert by_obs == by_state
        state.apply_action(int(by_state))
        checked += 1
    assert checked > 100


def _decision_points(policies, seed, deals, rules):
    """(state, state array, player, legal mask, observation) at every decision of deals 0 ..
    deals - 1 of ``seed``; the caller applies the action before asking for the next."""
    game = Game(policies=policies)
    for deal in range(deals):
        state = game.new_initial_state(seed=seed, deal=deal)
        while not state.is_terminal():
            s = np.array(state.state_array)
            p = state.current_player()
            mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
            E.legal_mask(s.copy(), rules, mask, E.new_engine_workspace())
            obs = np.zeros(L.N_OBS, dtype=np.int64)
            E.observe(s, p, obs)
            yield state, s, p, mask, obs


# ---- features on hand-built positions

# 素车 一出 20 + 肥子 6 (red 将士相) + 素车 一出 20 + 车子 6 (yellow 车马炮) = 52 hu: one unit, complete
ONE_UNIT = "RJ*3 RS*2 RX*2 YC*3 YM*2 YP*2"


def test_the_one_unit_position_wins_one_unit():
    conc = _counts(ONE_UNIT)
    out = np.zeros(K.N_OUT, dtype=np.int64)
    K.evaluate_kernel(conc, np.zeros((4, 28), np.int64), 0, RuleSet().to_array(), 1, out,
                      np.zeros(K.N_CHOICE, np.int64), K.new_workspace())
    assert out[K.OUT_HU] == 52 and out[K.OUT_UNITS] == 1


def test_win_small_or_play_on_follows_min_units_and_the_stock():
    """min_units 1 wins the one-unit hand; min_units 2 plays on (discards) while the stock is
    long, and wins once the stock is at most late_stock."""
    obs = _observation(ONE_UNIT, stock=12)
    mask = _discard_mask(obs, win=True)
    assert _act(obs, mask, _params()) == L.A_WIN
    assert _act(obs, mask, _params(min_units=2)) != L.A_WIN
    assert _act(obs, mask, _params(min_units=2, late_stock=12)) == L.A_WIN
    assert _act(obs, mask, _params(min_units=2, late_stock=11)) != L.A_WIN


def test_dead_cards_lower_a_cards_keep_value():
    """Two idle cards alike but for their unseen copies: with the outs weights on, expert keeps
    the one whose copies are still live (a 占 / 碰 can use it) and discards the one whose
    other copies are all dead; with the outs weights at 0 it falls back to the first type."""
    holding = "YP GP RJ RS RX"
    dead = "GP*3"  # no green 炮 left: GP can never be claimed into a group
    obs = _observation(holding, dead=dead)
    mask = _discard_mask(obs)
    assert _act(obs, mask, _params(danger=0)) == parse_type("GP")
    dead = "YP*3"
    obs = _observation(holding, dead=dead)
    assert _act(obs, mask, _params(danger=0)) == parse_type("YP")
    obs = _observation(holding, dead="GP*3")
    assert _act(obs, mask, _params(danger=0, outs_peng=0, outs_chow=0)) == parse_type("YP")


def test_danger_avoids_feeding_a_visible_chariot():
    """YP and GP are alike in the hand; the next player shows 碰s of YC and YM, so a YP feeds
    their 车马炮 chariot.  With danger 0 expert takes the first type (YP); with the danger
    weights on it discards GP."""
    obs = _observation("YP GP RJ RS RX", exposed={1: "YC YM"})
    mask = _discard_mask(obs)
    assert _act(obs, mask, _params(danger=0)) == parse_type("YP")
    assert _act(obs, mask, _params(danger=30, danger_feed=2)) == parse_type("GP")
    # the danger itself: higher for the card next to the shown 碰s
    unseen = np.full(28, 3, dtype=np.int64)
    p = _params()
    yp = X.discard_danger(_danger(obs, L.O_EXP, 0, 60, 25, 25, True, True), parse_type("YP"), unseen, p)
    gp = X.discard_danger(_danger(obs, L.O_EXP, 0, 60, 25, 25, True, True), parse_type("GP"), unseen, p)
    assert yp > gp > 0
    # a card with no unseen copy and no unseen 圆 partner cannot be claimed at all
    unseen[parse_type("GP")] = 0
    unseen[parse_type("GC")] = 0
    unseen[parse_type("GM")] = 0
    assert X.discard_danger(_danger(obs, L.O_EXP, 0, 60, 25, 25, True, True), parse_type("GP"), unseen, p) == 0
    # 相公 opponents claim nothing
    assert X.discard_danger(_danger(obs, L.O_EXP, 0, 60, 25, 25, False, False), parse_type("YP"), unseen, p) == 0


def test_a_player_who_cannot_win_passes_and_discards_safely():
    """Once the player can no longer win (有子不发 / 有车子不出车) only safety counts: it passes a
    claim it would take, and breaks a dead pair (no copy left, its 圆 partners dead too) rather
    than discard a live idle card."""
    holding = "YP RS*2 GJ GS GX"
    dead = "RS*2 RJ*4 RX*4"
    obs = _observation(holding, dead=dead)
    mask = _discard_mask(obs)
    assert _act(obs, mask, _params()) == parse_type("YP")  # the idle card
    obs = _observation(holding, dead=dead, nowin=True)
    assert _act(obs, mask, _params()) == parse_type("RS")
    # a claim: 碰 of YP would be taken when it can win, passed when it cannot
    obs = _observation("YP*2 GS RJ RS RX", phase=L.PH_CLAIM, active=parse_type("YP"))
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    mask[L.A_PASS] = mask[L.A_PENG] = True
    assert _act(obs, mask, _params()) == L.A_PENG
    obs[L.O_NOWIN] = 1
    assert _act(obs, mask, _params()) == L.A_PASS


def test_takes_a_peng_through_a_chariot_it_would_otherwise_pass():
    """Declining a 碰 through a chariot forbids winning (must_chariot_out): with weights that
    dislike the 碰 (pairs dear, idle cards and hu free) expert passes it when the rule is off
    and takes it when the rule is on."""
    obs = _observation("YC*2 YM*2 YP*2 GS", phase=L.PH_CLAIM, active=parse_type("YP"))
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    mask[L.A_PASS] = mask[L.A_PENG] = True
    params = _params(idle=0, pair=500, claim_hu=0, hu=0, outs_peng=0, outs_chow=0)
    assert _act(obs, mask, params, RuleSet(must_chariot_out=False).to_array()) == L.A_PASS
    assert _act(obs, mask, params, RuleSet(must_chariot_out=True).to_array()) == L.A_PENG


def test_takes_a_winning_claim_when_it_reaches_min_units():
    """A 占 of GS completes the one-unit hand (52 hu): the claim that wins is taken."""
    obs = _observation("RJ*3 RS*2 RX*2 YC*3 YM*2 YP*2 GS", phase=L.PH_CLAIM, active=parse_type("GS"))
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    mask[L.A_PASS] = mask[L.A_ZHAN] = True
    assert _act(obs, mask, _params()) == L.A_ZHAN  # 占 GS: complete, 52 hu, wins


def test_a_locked_type_has_no_outs():
    """Passing a claim locks its type (docs/rules.md §7): the part's value drops by its outs."""
    conc = _counts("YP*2 YC")
    unseen = np.full(28, 2, dtype=np.int64)
    no = np.zeros(28, dtype=np.int64)
    lock = np.zeros(28, dtype=np.int64)
    params = _params()
    part = K.part_of(parse_type("YP"))
    free = X.part_value(conc, part, unseen, no, lock, params)
    lock[parse_type("YP")] = 1
    assert X.part_value(conc, part, unseen, no, lock, params) < free


def test_keep_values_follow_their_weights():
    """Breaking a 子 costs hu × its hu + zi; a chariot's value counts at hu × value."""
    unseen = np.full(28, 1, dtype=np.int64)
    no = np.zeros(28, dtype=np.int64)
    params = _params(outs_peng=0, outs_chow=0, partner=0, fat=0, pair=0)
    part = K.part_of(parse_type("YM"))
    zi = X.part_value(_counts("YM*3"), part, unseen, no, no, params)
    pair = X.part_value(_counts("YM*2"), part, unseen, no, no, params)
    assert zi - pair == pytest.approx(params[X.X_HU] * 3 + params[X.X_ZI])
    chariot = X.part_value(_counts("YC*2 YM*2 YP*2"), part, unseen, no, no, params)
    assert chariot == pytest.approx(params[X.X_HU] * 10)


def test_parameters_change_play():
    ids, params, _ = policy_arrays(parse_policies("expert,greedy,expert"))
    base = play_deals(200, 9, ids, params, RuleSet().to_array())
    for name, value in (("idle", 50.0), ("danger", 0.0), ("min_units", 2.0)):
        changed = params.copy()
        changed[0, param_index("expert", name)] = value
        changed[2, param_index("expert", name)] = value
        other = play_deals(200, 9, ids, changed, RuleSet().to_array())
        assert not np.array_equal(base[:, R_PAYOFF : R_PAYOFF + 3], other[:, R_PAYOFF : R_PAYOFF + 3]), name


# ---- naive twin of expert's discard danger (module docstring, written from the definition)

def naive_discard_danger(exp_all, me, d, unseen, n_next, n_other, can_next, can_other, weight_chow, weight_feed):
    """danger(d) without the ``danger`` weight: for each opponent (next, other) that may claim,
    P(it holds >= 2 of the unseen copies of d) × (1 + weight_feed × 出 it shows on d's triad
    partners or d's rank in other colours; for a 卒 or a 将 only the rank), and for the next player
    weight_chow × P(it can 吃 or 占 d): 占 = holds one copy; 吃 = holds one of each triad partner,
    for a 卒 two of the other colours' 卒.  Each unseen card lies in a hand with probability its
    share of the unseen cards, independently (binomial): scipy's binomial tail."""
    n_unseen = int(unseen.sum())
    if n_unseen == 0:
        return 0.0
    colour, rank = divmod(d, N_RANKS)
    total = 0.0
    for k, (n_hand, can) in enumerate(((n_next, can_next), (n_other, can_other))):
        if not can:
            continue
        p = min(1.0, n_hand / n_unseen)
        shown = exp_all[(me + 1 + k) % 3]  # (4, 28) exposed groups of that opponent
        pengs = shown[K.EXP_PENG] + shown[K.EXP_KONG]
        same_rank = [c * N_RANKS + rank for c in range(4) if c != colour]
        first = colour * N_RANKS + (JIANG if rank < CHE else CHE)  # d's triad (将士相 or 车马炮)
        partners = [x for x in range(first, first + 3) if x != d] if rank != ZU else []
        fed = same_rank + (partners if rank != JIANG else [])  # a 将's triad partners do not count
        related = sum(1 for x in fed if pengs[x] > 0)
        total += binom.sf(1, int(unseen[d]), p) * (1.0 + weight_feed * related)
        if k == 0:
            def holds(x):
                return binom.sf(0, int(unseen[x]), p)
            if rank == ZU:
                others = [holds(x) for x in same_rank]
                # at least two of the three other colours' 卒, by enumerating which are held
                p_chow = 0.0
                for held in (set(s) for r in (2, 3) for s in combinations(range(3), r)):
                    term = 1.0
                    for i in range(3):
                        term *= others[i] if i in held else 1.0 - others[i]
                    p_chow += term
            else:
                p_chow = float(np.prod([holds(x) for x in partners]))
            p_zhan = holds(d)
            total += weight_chow * (1.0 - (1.0 - p_chow) * (1.0 - p_zhan))
    return total


def _danger(src, exp_all_at, me, n_unseen, n_next, n_other, can_next, can_other):
    """The :data:`~simkit.policies.expert.DangerContext` that ``discard_danger`` reads (weight
    and cache unused there)."""
    return X.DangerContext(0.0, np.zeros(28), np.zeros(28, dtype=np.int64), src, exp_all_at, me, n_unseen, n_next,
                           n_other, can_next, can_other)


def test_discard_danger_matches_its_naive_twin_on_random_inputs():
    """The compiled danger against the definition on 2,000 random positions (every type, both
    opponents, 相公 flags, shown 碰 / 楼, feed and 吃 weights): catches a wrong binomial tail, a
    wrong seat for "next", a missed related 出 or a wrong 卒 圆 probability."""
    rng = np.random.default_rng(2026)
    params = np.array(EXPERT_DEFAULTS, dtype=np.float64)
    for _ in range(2000):
        me = int(rng.integers(3))
        d = int(rng.integers(28))
        unseen = rng.integers(0, 5, size=28).astype(np.int64)
        exp_all = np.zeros((3, 4, 28), dtype=np.int64)
        exp_all[:, K.EXP_PENG] = rng.random((3, 28)) < 0.1
        exp_all[:, K.EXP_KONG] = rng.random((3, 28)) < 0.03
        n_next, n_other = (int(x) for x in rng.integers(0, 31, size=2))
        can_next, can_other = (bool(x) for x in rng.random(2) < 0.85)
        params[X_DANGER_CHOW], params[X_DANGER_FEED] = rng.uniform(0, 2, size=2)
        src = exp_all.reshape(-1)
        fast = discard_danger(_danger(src, 0, me, int(unseen.sum()), n_next, n_other, can_next, can_other), d, unseen,
                              params)
        slow = naive_discard_danger(exp_all, me, d, unseen, n_next, n_other, can_next, can_other,
                                    params[X_DANGER_CHOW], params[X_DANGER_FEED])
        assert fast == pytest.approx(slow, rel=1e-9, abs=1e-12), (me, d)


def naive_cross_value(conc, unseen, out_comp, hu: float, prospect: float) -> float:
    """Φ's terms across parts, from the module docstring: 肥车 / 长车 of 将 and 卒, 清 (an 出 in
    three colours of one rank, 士 .. 炮) and 天地 (将 and 卒 出 of one colour), each complete
    (``hu`` × value) or one component short (``prospect`` × value)."""
    from simkit.cards import N_COLOURS, PAO, SHI
    from simkit.evaluator.tables import FAT_CHARIOT_VALUE, LONG_CHARIOT_VALUE, QING_VALUE, TIANDI_VALUE

    def kind(colour: int, rank: int) -> str:
        t = colour * N_RANKS + rank
        if conc[t] >= 3 or out_comp[t] > 0:
            return "out"
        if conc[t] == 2:
            return "pair"
        return "live" if (conc[t] == 1 and unseen[t] >= 1) or unseen[t] >= 2 else "none"

    total = 0.0
    for rank in (JIANG, ZU):
        kinds = [kind(c, rank) for c in range(N_COLOURS)]
        comps = sum(k in ("out", "pair") for k in kinds)
        outs = kinds.count("out")
        near = kinds.count("live") > 0
        if comps == 4:
            total += hu * LONG_CHARIOT_VALUE[outs]
        elif comps == 3:
            total += hu * FAT_CHARIOT_VALUE[outs] + (prospect * (LONG_CHARIOT_VALUE[outs] - FAT_CHARIOT_VALUE[outs])
                                                     if near else 0.0)
        elif comps == 2 and near:
            total += prospect * FAT_CHARIOT_VALUE[outs]
    for rank in range(SHI, PAO + 1):
        kinds = [kind(c, rank) for c in range(N_COLOURS)]
        outs = kinds.count("out")
        near = any(k == "pair" and unseen[c * N_RANKS + rank] > 0 for c, k in enumerate(kinds))
        if outs >= 3:
            total += hu * QING_VALUE[outs]
        elif outs == 2 and near:
            total += prospect * QING_VALUE[3]
    for colour in range(N_COLOURS):
        j, z = kind(colour, JIANG), kind(colour, ZU)
        j_near = j == "pair" and unseen[colour * N_RANKS + JIANG] > 0
        z_near = z == "pair" and unseen[colour * N_RANKS + ZU] > 0
        if j == "out" and z == "out":
            total += hu * TIANDI_VALUE
        elif (j == "out" and z_near) or (z == "out" and j_near):
            total += prospect * TIANDI_VALUE
    return total


def test_cross_terms_and_their_change_match_the_naive_twin():
    """Φ's cross terms against the definition on random holdings, and the change a discard
    makes to them (which the compiled code evaluates on the terms that read the discarded type
    only) against the twin before and after, for every held type: catches a term left out of
    the change (a 卒's 天地, a 士's 清), a wrong rank or colour, or a holding not restored."""
    rng = np.random.default_rng(4110)
    params = np.array(EXPERT_DEFAULTS, dtype=np.float64)
    hu, prospect = params[X.X_HU], params[X.X_PROSPECT]
    changes = 0
    for _ in range(1500):
        conc = rng.choice(5, size=28, p=[0.35, 0.2, 0.25, 0.15, 0.05]).astype(np.int64)
        out_comp = (rng.random(28) < 0.08).astype(np.int64)
        unseen = np.maximum(0, 4 - conc - 3 * out_comp - rng.integers(0, 2, size=28)).astype(np.int64)
        assert X.cross_value(conc, unseen, out_comp, params) == pytest.approx(
            naive_cross_value(conc, unseen, out_comp, hu, prospect), rel=1e-12, abs=1e-9)
        for t in np.flatnonzero(conc):
            before = conc.copy()
            fast = X._cross_change(conc, unseen, out_comp, params, int(t))
            assert np.array_equal(conc, before)
            after = conc.copy()
            after[t] -= 1
            slow = naive_cross_value(after, unseen, out_comp, hu, prospect) - naive_cross_value(conc, unseen, out_comp,
                                                                                             hu, prospect)
            assert fast == pytest.approx(slow, rel=1e-12, abs=1e-9), int(t)
            changes += slow != 0.0
    assert changes > 500  # the holdings reach the terms


def test_a_single_claim_decides_as_the_full_search_does():
    """With one claim and no scores asked, expert searches the other parts' best discard only
    when the claim's own part does not decide (the claim's value with its own part's best
    discard is a lower bound); asking for the scores makes it search first.  Both choose alike
    on random holdings rich in pairs and 出 across colours, with weights drawn around expert's
    and a heavy ``prospect`` (the cross terms, which read other parts): catches a bound that
    overestimates (a wrong term, a penalty left out, a strict comparison turned loose) and the
    other parts searched on the holding after the claim instead of before."""
    rng = np.random.default_rng(4111)
    rules = RuleSet(must_chariot_out=True).to_array()
    work = np.zeros(POLICY_WORK_SIZE, np.int64)
    scores = np.zeros(L.N_ACTIONS)
    taken = 0
    for _ in range(3000):
        conc = rng.choice(5, size=28, p=[0.25, 0.1, 0.35, 0.25, 0.05]).astype(np.int64)
        conc[::7] *= rng.random(4) < 0.5  # 将 in about half the colours
        t = int(rng.choice(np.flatnonzero(conc >= 2)))
        obs = _observation("", phase=L.PH_CLAIM, active=t)
        obs[L.O_CONC : L.O_CONC + 28] = conc
        obs[L.O_NCONC] = conc.sum()
        mask = np.zeros(L.N_ACTIONS, np.bool_)
        mask[L.A_PASS] = mask[L.A_PENG] = True
        params = _params() * np.r_[rng.uniform(0.0, 3.0, size=12), 1.0, 0.0, rng.uniform(0.0, 3.0, size=2),
                                   np.ones(N_PARAMS - 16)]
        params[X.X_PROSPECT] *= rng.uniform(1.0, 30.0)
        lazy = X.expert_act(obs, mask, params, rules, work)
        assert lazy == X.expert_act_scores(obs, mask, params, rules, work, scores, np.inf)
        taken += lazy == L.A_PENG
    assert 300 < taken < 2700  # both choices are made


# ---- speed work leaves every decision and every score unchanged (issue 51)

# sha256 of the choices and the scores (expert_act_scores) on the observations of 60 deals of
# expert ×3 (seed 51) under three parameter vectors, recorded at commit 0e5cbaa before the
# speed changes of issue 51 part 3 ("a faster expert")
FROZEN_DECISIONS = "1c52e2d1e56090463a35880e1800fe8d24cc28b5a358eb709e4d943d09ccf4e5"
_FROZEN_PARAMS = (None, "70,4,2,40,10,80,2,4,5,20,0.5,1,2,6,25,1", "60,6,1,30,15,50,3,2,8,35,1,2,1,3,10,2")


def _decisions_digest() -> str:
    import hashlib

    rules = RuleSet().to_array()
    work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    scores = np.zeros(L.N_ACTIONS)
    digest = hashlib.sha256()
    for values in _FROZEN_PARAMS:
        params = np.zeros(N_PARAMS)
        params[:16] = effective_params(parse_policy("expert" if values is None else "expert:" + values))
        for state, s, p, mask, obs in _decision_points(("expert", "expert", "expert"), 51, 20, rules):
            action = X.expert_act_scores(obs, mask, params, rules, work, scores, np.inf)
            assert action == X.expert_state(s.copy(), p, mask, params, rules, work)
            digest.update(np.int64(action).tobytes())
            digest.update(scores.tobytes())
            state.apply_action(int(action))
    return digest.hexdigest()


def test_decisions_and_scores_match_those_frozen_before_the_speed_work():
    """Every choice and every candidate's score, bit for bit, on the positions of real play
    (discards, claims, wins, 相公 and cannot-win seats as they come) with the tuned defaults and
    two other weight vectors: catches a skipped part that had a discard, a pruning or a cached
    value that changes a score, or a reordered sum (a different rounding)."""
    assert _decisions_digest() == FROZEN_DECISIONS


def test_has_discard_matches_its_definition_on_random_holdings():
    """_has_discard against the plain rule (a held type of the part other than a 将), for every
    part of random holdings: catches a wrong part span or a 将 taken as discardable."""
    from simkit.evaluator.tables import N_PARTS

    rng = np.random.default_rng(51)
    for _ in range(300):
        conc = (rng.choice(5, size=28, p=[0.7, 0.1, 0.1, 0.05, 0.05])).astype(np.int64)
        for part in range(N_PARTS):
            members = [t for t in range(28) if K.part_of(t) == part]
            want = any(conc[t] > 0 and t % N_RANKS != JIANG for t in members)
            assert X._has_discard(conc, part) == want, (part, conc.tolist())


# ---- claims decided by local scores (issue 51 item 3): the same choices as the full search


def test_claims_by_local_scores_choose_as_the_full_search_in_real_play():
    """At every decision of real play (seed 5103, expert ×3) under the tuned weights and five
    random weight vectors: expert_state (a claim decided by local scores, _claim_fast) chooses
    as expert_state_margin with an infinite margin (every claim decision takes the full search)
    and as expert_act_scores (the full search, recording): catches a candidate left out or
    scored with a wrong term, the other parts' best discard searched on the holding after the
    claim, a lower bound taken as deciding when it is not, a penalty dropped."""
    rules = RuleSet().to_array()
    work = np.zeros(POLICY_WORK_SIZE, np.int64)
    scores = np.zeros(L.N_ACTIONS)
    rng = np.random.default_rng(5103)
    vectors = [_params()] + [_params() * np.r_[rng.uniform(0.0, 3.0, size=12), 1.0, 0.0, rng.uniform(0.0, 3.0, size=2),
                                               np.ones(N_PARAMS - 16)] for _ in range(5)]
    claims = several = 0
    for params in vectors:
        for state, s, p, mask, obs in _decision_points(("expert", "expert", "expert"), 5103, 20, rules):
            fast = X.expert_state(s.copy(), p, mask, params, rules, work)
            assert fast == X.expert_state_margin(s.copy(), p, mask, params, rules, work, np.inf)
            assert fast == X.expert_act_scores(obs, mask, params, rules, work, scores, np.inf)
            if s[L.S_PHASE] != L.PH_DISCARD:
                claims += 1
                several += mask.sum() > 2
            state.apply_action(int(fast))
    assert claims > 2000 and several > 800  # single and several claims, both searched


def test_part_value_bound_holds_on_random_parts_and_weights():
    """|part_value| <= part_value_bound(params) for random holdings, unseen copies, 出 and locks
    of every part, with random weights up to the largest a spec may give (WEIGHT_MAX): the bound
    the claims' rounding margin rests on; catches a coefficient of Φ that outgrows PART_BOUND."""
    from simkit.evaluator.tables import N_PARTS

    rng = np.random.default_rng(5104)
    worst = 0.0
    for k in range(4000):
        conc = rng.integers(0, 5, size=28).astype(np.int64)
        unseen = np.minimum(rng.integers(0, 5, size=28), 4 - conc).astype(np.int64)
        out_comp = (rng.random(28) < 0.3).astype(np.int64)
        lock = (rng.random(28) < 0.2).astype(np.int64)
        params = np.zeros(N_PARAMS)
        params[:16] = rng.uniform(0.0, 1.0, size=16) * (X.WEIGHT_MAX if k % 2 else 100.0)
        params[rng.random(16) < 0.3] = 0.0  # some weights off: one term may carry the whole value
        bound = X.part_value_bound(params)
        for part in range(N_PARTS):
            value = X.part_value(conc, part, unseen, out_comp, lock, params)
            worst = max(worst, abs(value) / bound if bound > 0 else 0.0)
            assert abs(value) <= bound, (part, conc.tolist(), params[:16].tolist())
    assert worst > 0.005  # the holdings reach values of the bound's order, not only small ones


def test_certified_comparison_leaves_a_near_tie_undecided():
    """_certified_greater on numbers where the full scores (R added) round to a tie that the
    local scores do not show: R = 1e6 makes 0.1 and 0.1 + 1e-11 equal after the sum, so the
    comparison must fall back (UNDECIDED), not answer "greater"; clear cases are decided, and a
    winning claim's constant against a bounded score, and two constants, exactly."""
    r_max = 1.0e6
    assert 1.0e6 + 0.1 == 1.0e6 + (0.1 + 1e-11)  # the tie the full scores make
    greater = X._certified_greater
    assert greater(0.1 + 1e-11, 0.1, False, 0.1, 0.1, False, r_max, X.CERT_EPS) == X.UNDECIDED
    assert greater(0.1, 0.1, False, 0.1, 0.1, False, r_max, X.CERT_EPS) == X.UNDECIDED  # an exact tie too
    assert greater(0.2, 0.2, False, 0.1, 0.1, False, r_max, X.CERT_EPS) == 1
    assert greater(0.1, 0.1, False, 0.2, 0.2, False, r_max, X.CERT_EPS) == 0
    assert greater(X.WIN_KEY + 1, 0.0, True, 5.0, 5.0, False, r_max, X.CERT_EPS) == 1
    assert greater(5.0, 5.0, False, X.WIN_KEY, 0.0, True, r_max, X.CERT_EPS) == 0
    assert greater(X.WIN_KEY + 1, 0.0, True, X.WIN_KEY + 2, 0.0, True, r_max, X.CERT_EPS) == 0
    assert greater(X.WIN_KEY + 2, 0.0, True, X.WIN_KEY + 1, 0.0, True, r_max, X.CERT_EPS) == 1
    assert greater(1.0e6, 0.0, True, 5.0, 5.0, False, r_max, X.CERT_EPS) == X.UNDECIDED  # within R's reach

"""``simkit.engine.kernel.observe`` against a plain-numpy twin of the observation, on one array
reused through whole deals the way the deal loops reuse it.

``observe`` rewrites every word only for a fresh array (zeros, ``O_NHIST_UNKNOWN``); an array
holding an earlier observation of the same deal gets only what changed: the history rows
added since, the exposed blocks of the seats those rows name (claims, table 将), their
concealed counts (claims, discards), the earlier seat's passed types cleared, and the words
that change without a history row.  A missed change (a table 将 left out of the exposed
block, a stale passed-type row of the previous seat, a concealed count not recounted after a
discard) makes the reused array differ from the twin here.
"""

from __future__ import annotations

import numpy as np
import pytest

from simkit.cards import N_SEATS, N_TYPES
from simkit.deck import deal_deck
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.exposed import EXP_BLOCK
from simkit.rng import root_key
from simkit.rules import RuleSet


def naive_observation(s: np.ndarray, p: int) -> np.ndarray:
    """What player p may see, written field by field from the state (docs/engine.md)."""
    o = np.zeros(L.N_OBS, dtype=np.int64)
    o[L.O_SEAT] = p
    o[L.O_PHASE] = s[L.S_PHASE]
    o[L.O_PLAYER] = s[L.S_PLAYER]
    o[L.O_ACTIVE] = s[L.S_ACTIVE]
    o[L.O_SOURCE] = s[L.S_SOURCE]
    o[L.O_SOURCE_PLAYER] = s[L.S_SOURCE_PLAYER]
    o[L.O_STAGE] = s[L.S_STAGE]
    o[L.O_STOCK_LEFT] = 112 - s[L.S_STOCK_POS]
    o[L.O_FIRST] = s[L.S_FIRST]
    o[L.O_DEALER] = s[L.S_DEALER]
    o[L.O_DECIDED] = s[L.S_DECIDED] & (1 << p)
    o[L.O_GAIN] = s[L.S_GAIN]
    o[L.O_GAIN_TYPE] = s[L.S_GAIN_TYPE]
    concealed = s[L.S_CONC : L.S_CONC + N_SEATS * N_TYPES].reshape(N_SEATS, N_TYPES)
    o[L.O_CONC : L.O_CONC + N_TYPES] = concealed[p]
    o[L.O_EXP : L.O_EXP + N_SEATS * EXP_BLOCK] = s[L.S_EXP : L.S_EXP + N_SEATS * EXP_BLOCK]
    o[L.O_EXPCARDS : L.O_EXPCARDS + N_SEATS * N_TYPES] = s[L.S_EXPCARDS : L.S_EXPCARDS + N_SEATS * N_TYPES]
    o[L.O_NCHOW : L.O_NCHOW + N_SEATS] = s[L.S_NCHOW : L.S_NCHOW + N_SEATS]
    o[L.O_NCONC : L.O_NCONC + N_SEATS] = concealed.sum(axis=1)
    o[L.O_DEAD : L.O_DEAD + N_TYPES] = s[L.S_DEAD : L.S_DEAD + N_TYPES]
    o[L.O_LOCK + N_TYPES * p : L.O_LOCK + N_TYPES * (p + 1)] = s[L.S_LOCK + N_TYPES * p : L.S_LOCK + N_TYPES * (p + 1)]
    o[L.O_XIANGGONG : L.O_XIANGGONG + N_SEATS] = s[L.S_XIANGGONG : L.S_XIANGGONG + N_SEATS]
    o[L.O_NOWIN + p] = s[L.S_NOWIN + p]
    n = int(s[L.S_NHIST])
    o[L.O_NHIST] = n
    o[L.O_HIST : L.O_HIST + L.HIST_WIDTH * n] = s[L.S_HIST : L.S_HIST + L.HIST_WIDTH * n]
    return o


RULE_SETS = [RuleSet(), RuleSet(pass_locks_type=False, pass_locks_win=False),
             RuleSet(pass_locks_type=False, drawn_jiang_chow=False, must_kong=False)]


@pytest.mark.parametrize("rules", RULE_SETS, ids=["default", "no-locks", "other-options"])
def test_a_reused_array_matches_the_twin_through_whole_deals(rules):
    """Random legal play (claims taken often: many exposed blocks, table 将, passes); after each
    action zero to three observations by random seats into the one reused array, each equal
    to the twin's.  The first deal marks the garbage array O_NHIST_UNKNOWN (every history row
    cleared); every later deal marks it with new_deal_observation, as the deal loops do (only
    the rows the last deal left are cleared: a mark that clears too few leaves them here)."""
    rng = np.random.default_rng(5)
    rules_array = rules.to_array()
    s = np.zeros(L.N_STATE, dtype=np.int64)
    deck = np.zeros(112, dtype=np.int64)
    stream = np.zeros(4, dtype=np.uint64)
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    work = E.new_engine_workspace()
    ev = np.zeros((0, L.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    obs = rng.integers(-5, 5, L.N_OBS)  # garbage: the first deal's marker makes it a fresh array
    seen = {"claims": 0, "tables": 0, "locked": 0, "seat changes": 0, "checked": 0}
    for deal in range(40):
        deal_deck(root_key(3), deal, stream, deck)
        E.start(s, deck, deal % N_SEATS, rules_array, mask, work, ev, ev_n)
        if deal == 0:
            obs[L.O_NHIST] = L.O_NHIST_UNKNOWN
        else:
            E.new_deal_observation(obs)
            assert obs[L.O_NHIST] > L.MAX_HIST
        while s[L.S_PHASE] != L.PH_OVER:
            for _ in range(rng.integers(0, 4)):
                seat = int(rng.integers(0, N_SEATS)) if rng.random() < 0.5 else int(s[L.S_PLAYER])
                seen["seat changes"] += int(obs[L.O_SEAT] != seat)
                E.observe(s, seat, obs)
                np.testing.assert_array_equal(obs, naive_observation(s, seat))
                seen["checked"] += 1
            legal = np.flatnonzero(mask)
            claims = legal[(legal >= L.A_PENG) & (legal != L.A_PASS) & (legal != L.A_WIN)]
            action = int(rng.choice(claims)) if claims.size and rng.random() < 0.7 else int(rng.choice(legal))
            E.apply_legal(s, action, rules_array, mask, work, ev, ev_n)
        history = s[L.S_HIST : L.S_HIST + L.HIST_WIDTH * s[L.S_NHIST]].reshape(-1, L.HIST_WIDTH)
        seen["claims"] += int((history[:, 0] == L.E_CLAIM).sum())
        seen["tables"] += int((history[:, 0] == L.E_TABLE).sum())
        seen["locked"] += int(s[L.S_LOCK : L.S_LOCK + N_SEATS * N_TYPES].any())
    # the deals reached every kind of change the update relies on
    assert seen["claims"] > 100 and seen["tables"] > 10 and seen["seat changes"] > 1000 and seen["checked"] > 2000
    if rules.pass_locks_type or rules.pass_locks_win:
        assert seen["locked"] > 10


def test_a_fresh_array_after_setup_positions_gets_every_word():
    """zeros (O_NHIST 0) is never taken for an earlier observation: a position set up without
    history (the Python API's ``set_position``) still shows its exposed groups."""
    rng = np.random.default_rng(8)
    s = np.zeros(L.N_STATE, dtype=np.int64)
    s[L.S_EXP : L.S_EXP + N_SEATS * EXP_BLOCK] = rng.integers(0, 2, N_SEATS * EXP_BLOCK)
    s[L.S_CONC : L.S_CONC + N_SEATS * N_TYPES] = rng.integers(0, 3, N_SEATS * N_TYPES)
    for p in range(N_SEATS):
        obs = np.zeros(L.N_OBS, dtype=np.int64)
        E.observe(s, p, obs)
        np.testing.assert_array_equal(obs, naive_observation(s, p))

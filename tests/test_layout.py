"""Memory layouts are built from named sizes: no two regions overlap, every region lies inside
its array (a region placed by hand over another one would corrupt state silently)."""

from __future__ import annotations

from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.evaluator import kernel as K
from simkit.policies import builtin as B


def _assert_disjoint(regions, size):
    spans = sorted((start, start + length, name) for name, start, length in regions)
    assert spans[0][0] >= 0
    for (a0, a1, a), (b0, b1, b) in zip(spans, spans[1:]):
        assert a1 <= b0, f"{a} [{a0}, {a1}) overlaps {b} [{b0}, {b1})"
    assert spans[-1][1] <= size, f"{spans[-1][2]} ends at {spans[-1][1]} > {size}"


def test_engine_workspace_regions_are_disjoint():
    _assert_disjoint(E.ENGINE_WORK_REGIONS, E.ENGINE_WORK_SIZE)
    assert sum(length for _, _, length in E.ENGINE_WORK_REGIONS) == E.ENGINE_WORK_SIZE


def test_policy_workspace_regions_are_disjoint():
    regions = [("eval", 0, K.WORK_SIZE), ("out", B._W_OUT, K.N_OUT), ("choice", B._W_CHOICE, K.N_CHOICE),
               ("conc", B._W_CONC, 28), ("exp", B._W_EXP, 4 * 28), ("used", B._W_USED, 4),
               ("pidle", B._W_PIDLE, 9), ("pdelta", B._W_PDELTA, 9)]
    _assert_disjoint(regions, B.POLICY_WORK_SIZE)


def test_state_and_observation_regions_are_disjoint():
    state = [("conc", L.S_CONC, 3 * 28), ("exp", L.S_EXP, 3 * 4 * 28), ("expcards", L.S_EXPCARDS, 3 * 28),
             ("nchow", L.S_NCHOW, 3), ("dead", L.S_DEAD, 28), ("lock", L.S_LOCK, 3 * 28), ("deck", L.S_DECK, 112),
             ("xianggong", L.S_XIANGGONG, 3), ("nowin", L.S_NOWIN, 3), ("payoff", L.S_PAYOFF, 3),
             ("nmelds", L.S_NMELDS, 3), ("melds", L.S_MELDS, 3 * L.MAX_MELDS * L.MELD_WIDTH),
             ("nhist", L.S_NHIST, 1), ("hist", L.S_HIST, L.MAX_HIST * L.HIST_WIDTH)]
    scalars = ["S_STOCK_POS", "S_PHASE", "S_PLAYER", "S_ACTIVE", "S_ACTIVE_ID", "S_SOURCE", "S_SOURCE_PLAYER",
               "S_STAGE", "S_DECIDED", "S_DEALER", "S_FIRST", "S_GAIN", "S_GAIN_TYPE", "S_TURNS", "S_DRAWS",
               "S_CLAIMS", "S_WINNER", "S_WIN_KIND", "S_HU", "S_LOU", "S_STEPS", "S_UNITS", "S_PATTERNS"]
    state += [(name, getattr(L, name), 1) for name in scalars]
    _assert_disjoint(state, L.N_STATE)
    assert sum(length for _, _, length in state) == L.N_STATE  # every state word is named
    obs = [("conc", L.O_CONC, 28), ("exp", L.O_EXP, 3 * 4 * 28), ("expcards", L.O_EXPCARDS, 3 * 28),
           ("nchow", L.O_NCHOW, 3), ("nconc", L.O_NCONC, 3), ("dead", L.O_DEAD, 28), ("lock", L.O_LOCK, 3 * 28),
           ("xianggong", L.O_XIANGGONG, 3), ("nowin", L.O_NOWIN, 3), ("nhist", L.O_NHIST, 1),
           ("hist", L.O_HIST, L.MAX_HIST * L.HIST_WIDTH)]
    scalars = ["O_SEAT", "O_PHASE", "O_PLAYER", "O_ACTIVE", "O_SOURCE", "O_SOURCE_PLAYER", "O_STAGE",
               "O_STOCK_LEFT", "O_FIRST", "O_DEALER", "O_DECIDED", "O_GAIN", "O_GAIN_TYPE"]
    obs += [(name, getattr(L, name), 1) for name in scalars]
    _assert_disjoint(obs, L.N_OBS)
    assert sum(length for _, _, length in obs) == L.N_OBS

"""Memory layouts are built from named sizes: no two regions overlap, every region lies inside
its array (a region placed by hand over another one would corrupt state silently).

The three kernel scratch layouts (engine ``EW_*``, greedy / patient ``_W_*``, expert ``XW_*``)
come from one builder, :func:`simkit.engine.layout.chain_regions`; the tests read its regions
table (nothing here re-types a region list), and check the words they occupy one by one."""

from __future__ import annotations

import numpy as np
import pytest

from simkit.cards import N_CARDS, N_SEATS, N_TYPES
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.evaluator import kernel as K
from simkit.exposed import EXP_BLOCK
from simkit.policies import builtin as B
from simkit.policies import expert as X

# each kernel scratch layout, the module that unpacks its offsets into named constants, and the
# size of the array it is used in (the scratch each caller allocates)
KERNEL_LAYOUTS = {
    "engine": (E.ENGINE_WORK, E, E.ENGINE_WORK_SIZE),
    "greedy": (B.GREEDY_WORK, B, B.POLICY_WORK_SIZE),
    "expert": (X.EXPERT_WORK, X, B.POLICY_WORK_SIZE),
}


def _assert_disjoint(regions, size):
    spans = sorted((start, start + length, name) for name, start, length in regions)
    assert spans[0][0] >= 0
    for (a0, a1, a), (b0, b1, b) in zip(spans, spans[1:]):
        assert a1 <= b0, f"{a} [{a0}, {a1}) overlaps {b} [{b0}, {b1})"
    assert spans[-1][1] <= size, f"{spans[-1][2]} ends at {spans[-1][1]} > {size}"


def _word_owners(regions, size):
    """How many regions claim each word of an array of ``size`` words (a region outside it
    fails): the layout is exact when every word has one owner."""
    owners = np.zeros(size, dtype=np.int64)
    for name, start, length in regions:
        assert length >= 0, f"{name} has a negative size {length}"
        assert 0 <= start and start + length <= size, f"{name} [{start}, {start + length}) lies outside [0, {size})"
        owners[start : start + length] += 1
    return owners


def _assert_exact_cover(regions, size):
    owners = _word_owners(regions, size)
    doubled = np.flatnonzero(owners > 1)
    free = np.flatnonzero(owners == 0)
    assert doubled.size == 0, f"words {doubled[:5].tolist()} lie in two regions"
    assert free.size == 0, f"words {free[:5].tolist()} lie in no region"


def test_evaluator_workspace_covers_its_array():
    _assert_exact_cover(K.WORK_REGIONS, K.WORK_SIZE)


@pytest.mark.parametrize("name", sorted(KERNEL_LAYOUTS))
def test_kernel_scratch_extends_the_evaluator_workspace_exactly(name):
    """A kernel's scratch starts where the evaluator's workspace (which it passes on as
    ``work[:K.WORK_SIZE]``) ends, and the two together cover its regions' words once each."""
    regions, _, _ = KERNEL_LAYOUTS[name]
    assert regions.base == K.WORK_SIZE, f"{name} starts at {regions.base}, not at K.WORK_SIZE = {K.WORK_SIZE}"
    assert min(start for _, start, _ in regions.table) == K.WORK_SIZE
    _assert_exact_cover(K.WORK_REGIONS + regions.table, regions.size)


@pytest.mark.parametrize("name", sorted(KERNEL_LAYOUTS))
def test_kernel_scratch_fits_the_array_its_callers_allocate(name):
    regions, _, array_size = KERNEL_LAYOUTS[name]
    assert max(start + length for _, start, length in regions.table) <= array_size


@pytest.mark.parametrize("name", sorted(KERNEL_LAYOUTS))
def test_named_offsets_are_the_regions_table(name):
    """The module's offset constants (unpacked from the table in order) name the regions the
    table says: two names swapped in the unpacking would point kernels at another region."""
    regions, module, _ = KERNEL_LAYOUTS[name]
    for region, start, _ in regions.table:
        assert getattr(module, region) == start, f"{module.__name__}.{region} is not its region's offset {start}"


def test_the_checks_catch_a_broken_layout():
    """The checks above are not vacuous: an overlap, a gap and a region off the end fail."""
    good = L.chain_regions([("a", 3), ("b", 2)], base=4)
    _assert_exact_cover((("head", 0, 4),) + good.table, good.size)
    overlap = (("head", 0, 4), ("a", 4, 3), ("b", 6, 3))
    gap = (("head", 0, 4), ("a", 5, 2), ("b", 7, 2))
    off_end = (("head", 0, 4), ("a", 4, 3), ("b", 7, 3))
    for broken, size in ((overlap, 9), (gap, 9), (off_end, 9)):
        with pytest.raises(AssertionError):
            _assert_exact_cover(broken, size)


def test_chain_regions_refuses_bad_regions():
    with pytest.raises(ValueError, match="named twice"):
        L.chain_regions([("a", 1), ("a", 2)])
    with pytest.raises(ValueError, match="negative size"):
        L.chain_regions([("a", -1)])
    with pytest.raises(ValueError, match="base offset"):
        L.chain_regions([("a", 1)], base=-1)


def test_state_and_observation_regions_are_disjoint():
    state = [("conc", L.S_CONC, N_SEATS * N_TYPES), ("exp", L.S_EXP, N_SEATS * EXP_BLOCK),
             ("expcards", L.S_EXPCARDS, N_SEATS * N_TYPES), ("nchow", L.S_NCHOW, N_SEATS), ("dead", L.S_DEAD, N_TYPES),
             ("lock", L.S_LOCK, N_SEATS * N_TYPES), ("deck", L.S_DECK, N_CARDS),
             ("xianggong", L.S_XIANGGONG, N_SEATS), ("nowin", L.S_NOWIN, N_SEATS), ("payoff", L.S_PAYOFF, N_SEATS),
             ("nmelds", L.S_NMELDS, N_SEATS), ("melds", L.S_MELDS, N_SEATS * L.MAX_MELDS * L.MELD_WIDTH),
             ("nhist", L.S_NHIST, 1), ("hist", L.S_HIST, L.MAX_HIST * L.HIST_WIDTH)]
    scalars = ["S_STOCK_POS", "S_PHASE", "S_PLAYER", "S_ACTIVE", "S_ACTIVE_ID", "S_SOURCE", "S_SOURCE_PLAYER",
               "S_STAGE", "S_DECIDED", "S_DEALER", "S_FIRST", "S_GAIN", "S_GAIN_TYPE", "S_TURNS", "S_DRAWS",
               "S_CLAIMS", "S_WINNER", "S_WIN_KIND", "S_HU", "S_LOU", "S_STEPS", "S_UNITS", "S_PATTERNS"]
    state += [(name, getattr(L, name), 1) for name in scalars]
    _assert_disjoint(state, L.N_STATE)
    _assert_exact_cover(state, L.N_STATE)  # every state word is named
    obs = [("conc", L.O_CONC, N_TYPES), ("exp", L.O_EXP, N_SEATS * EXP_BLOCK),
           ("expcards", L.O_EXPCARDS, N_SEATS * N_TYPES), ("nchow", L.O_NCHOW, N_SEATS),
           ("nconc", L.O_NCONC, N_SEATS), ("dead", L.O_DEAD, N_TYPES), ("lock", L.O_LOCK, N_SEATS * N_TYPES),
           ("xianggong", L.O_XIANGGONG, N_SEATS), ("nowin", L.O_NOWIN, N_SEATS), ("nhist", L.O_NHIST, 1),
           ("hist", L.O_HIST, L.MAX_HIST * L.HIST_WIDTH)]
    scalars = ["O_SEAT", "O_PHASE", "O_PLAYER", "O_ACTIVE", "O_SOURCE", "O_SOURCE_PLAYER", "O_STAGE",
               "O_STOCK_LEFT", "O_FIRST", "O_DEALER", "O_DECIDED", "O_GAIN", "O_GAIN_TYPE"]
    obs += [(name, getattr(L, name), 1) for name in scalars]
    _assert_disjoint(obs, L.N_OBS)
    _assert_exact_cover(obs, L.N_OBS)

"""greedy's discard search on part codes (``simkit.evaluator.tables.PART_*``) against brute
force: the tables against the naive minimum of idle cards on every state of every part, and
``best_discard`` / the claim figures against a search that removes each card and recounts the
whole holding with :func:`tests.naive.naive_min_idle`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from simkit.cards import JIANG, N_RANKS
from simkit.evaluator import kernel as K
from simkit.evaluator.tables import (
    KIND_CMP,
    KIND_JSX,
    KIND_ZU,
    MEMBER_INDEX_OF_TYPE,
    NO_DISCARD,
    PART_DISCARD_DELTA,
    PART_IDLE_BY_CODE,
    PART_KIND,
    PART_MEMBERS,
    PART_OF_TYPE,
    PART_REMOVE_DELTA,
    PART_SIZE,
)
from simkit.generate import random_group_holdings, random_holdings
from simkit.policies.builtin import best_discard, keep_value

from naive import naive_min_idle


def _part_holding(part: int, counts) -> np.ndarray:
    conc = np.zeros(28, dtype=np.int64)
    for i, c in enumerate(counts):
        conc[PART_MEMBERS[part, i]] = c
    return conc


@pytest.mark.parametrize("part", [0, 3, 4, 7, 8])  # 将士相, 车马炮 and 卒 parts of two colours
def test_part_tables_equal_brute_force_on_every_state(part):
    size = int(PART_SIZE[part])
    kind = int(PART_KIND[part])
    assert kind == (KIND_ZU if part == 8 else KIND_JSX if part < 4 else KIND_CMP)
    for counts in itertools.product(range(5), repeat=size):
        conc = _part_holding(part, counts)
        code = int(K.part_code(conc, part))
        assert code == sum(c * 5**i for i, c in enumerate(counts))
        idle = naive_min_idle(conc.tolist())
        assert PART_IDLE_BY_CODE[kind, code] == idle, counts
        deltas = []
        for i in range(size):
            t = int(PART_MEMBERS[part, i])
            assert PART_OF_TYPE[t] == part and MEMBER_INDEX_OF_TYPE[t] == i
            if counts[i] == 0 or t % N_RANKS == JIANG:
                assert PART_REMOVE_DELTA[kind, code, i] == NO_DISCARD
                continue
            conc[t] -= 1
            delta = naive_min_idle(conc.tolist()) - idle
            conc[t] += 1
            assert PART_REMOVE_DELTA[kind, code, i] == delta, (counts, i)
            deltas.append(delta)
        assert PART_DISCARD_DELTA[kind, code] == (min(deltas) if deltas else NO_DISCARD)


def naive_best_discard(conc: np.ndarray) -> tuple[int, int]:
    """Remove each card that may be discarded (no 将), recount the whole holding by brute
    force; fewest idle cards, then lowest keep value, then lowest type."""
    best = None
    for t in range(28):
        if conc[t] == 0 or t % N_RANKS == JIANG:
            continue
        conc[t] -= 1
        idle = naive_min_idle(conc.tolist())
        conc[t] += 1
        key = (idle, int(keep_value(conc, t)), t)
        best = key if best is None or key < best else best
    return (-1, NO_DISCARD) if best is None else (best[2], best[0])


def test_best_discard_equals_brute_force_on_random_holdings():
    uniform = random_holdings(150, seed=5)
    sizes = [random_holdings(20, seed=6 + n, n_cards=n) for n in (1, 2, 4, 9, 16, 30)]
    grouped, _, _ = random_group_holdings(150, seed=7, total=(2, 31), p_exposed=0.0)
    holdings = np.concatenate([uniform, *sizes, grouped])
    jiang_only = np.zeros(28, dtype=np.int64)
    jiang_only[[0, 7]] = (2, 1)  # only 将: nothing may be discarded
    holdings = np.vstack([holdings, jiang_only])
    ties = 0
    for conc in holdings:
        conc = np.ascontiguousarray(conc, dtype=np.int64)
        before = conc.copy()
        got = best_discard(conc)
        assert (int(got[0]), int(got[1])) == naive_best_discard(conc), conc.tolist()
        assert np.array_equal(conc, before)  # left unchanged
        idle = [naive_min_idle((conc - np.eye(28, dtype=np.int64)[t]).tolist()) for t in range(28)
                if conc[t] and t % N_RANKS != JIANG]
        ties += idle.count(min(idle)) > 1 if idle else 0
    assert ties > 100  # the keep-value tie-break is exercised, not just the idle count

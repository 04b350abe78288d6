"""Play-out values for the luck of the draws: v(state) = the mean final payoffs of K play-outs
of the deal by the policies at the table, from the full state after the draw.

This is the value model of :mod:`simkit.runner.luck` that the issue text calls "the expected
payoffs of the three seats under the policies at the table", estimated by Monte Carlo instead
of a network: nothing is trained, so nothing can be fitted on the evaluation's deals.  At each
stock draw (the engine paused before it, :data:`simkit.engine.kernel.CHANCE_PAUSE`) the kernel

1. counts ``c_t``, the stock's copies of each type t (``n`` cards in all);
2. for k = 1 .. K shuffles the stock once (its cards sorted, then a Fisher-Yates shuffle from
   stream :data:`simkit.rng.STREAM_PLAYOUT` of (seed, deal)); for every type t present it swaps type t's
   lowest card (a fixed copy) with the order's first card and plays the deal to its end from
   there with the table's policies (on copies of the state, the policies' random streams,
   observation and workspaces); ``v[t]`` is the mean of the K final payoffs per seat;
3. adds ``v[actual type] - sum_t c_t / n * v[t]`` to each seat's luck.

Swapping a fixed copy to the top of a uniform order leaves the other cards in a uniform order,
so each play-out is a fair sample of the deal after that card (``v[t]`` estimates the true
value without bias), and the candidates' stocks differ in two places at most: every candidate
card meets the same later draws (common random numbers), so the differences between the
values, which are all the correction uses, carry far less noise than the values.

The shuffles come from their own stream and start from the stock's cards sorted, so the values
do not depend on the stock's true order, nor on the card actually drawn: for a given stream
state they are fixed numbers, and the correction averages to exactly zero over the card drawn
(``tests/test_playout_value.py`` enumerates it).  ``payoff - luck`` is therefore unbiased for
any K; K only decides how much variance goes (docs/measurements.md measures it against K).

The cost is K x (types in the stock) play-outs per draw: at K = 64 about 2.7 s of CPU per
duplicate deal of expert - greedy, thousands of times the network model's.  It is for close
comparisons where deals are few or dear, not for screening.  Play-outs play the built-in
policies only (the batch kernels).

A play-out model is the block ``[PLAYOUT_MAGIC, K]``; :func:`playout_block` makes it and
:func:`simkit.runner.value_model.load_value_model` makes one for the name ``playouts:K``.

>>> playout_block(16).tolist()
[7310572.0, 16.0]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simkit.cards import N_CARDS, N_COPIES, N_SEATS, N_TYPES
from simkit.engine import kernel as E
from simkit.engine.layout import N_ACTIONS, N_OBS, N_STATE, S_DECK, S_STOCK_POS
from simkit.policies.builtin import POLICY_WORK_SIZE
from simkit.deck import shuffle_kernel
from simkit.engine.loop import InPlay, decide_until_chance
from simkit.runner.play import (
    N_RESULT,
    N_RNGS,
    RNG_WORDS,
    R_PAYOFF,
    record_result,
)

PLAYOUT_MAGIC = 7_310_572.0  # block[0] of a play-out value model (a network block has VALUE_MAGIC)
PB_PLAYOUTS = 1  # block[1]: K, the play-outs per candidate card
MAX_PLAYOUTS = 4096


def playout_block(playouts: int) -> np.ndarray:
    """The value-model block of K = ``playouts`` play-outs per candidate card."""
    if isinstance(playouts, bool) or not isinstance(playouts, (int, np.integer)) or not 1 <= playouts <= MAX_PLAYOUTS:
        raise ValueError(f"play-outs per card must be an integer in 1..{MAX_PLAYOUTS}, got {playouts!r}")
    return np.array([PLAYOUT_MAGIC, float(playouts)], dtype=np.float64)


# the slots of :func:`new_playout_scratch`'s tuple
PS_STATE, PS_WORK, PS_MASK, PS_RNGS, PS_OBS, PS_POLICY_WORK, PS_RESULT = 0, 1, 2, 3, 4, 5, 6
PS_ORDER, PS_VALUES, PS_COUNTS, PS_KEY, PS_STOCK, PS_LOWEST = 7, 8, 9, 10, 11, 12


@njit(cache=True, nogil=True)
def new_playout_scratch():
    """Scratch of :func:`playout_luck`: the play-out's state, engine workspace, legal mask,
    random streams, observation and policy workspace; its result row; the shuffled stock; the
    values per type and seat; the stock's counts per type; the shuffles' random stream; the
    stock sorted; each type's lowest card in the stock."""
    return (np.zeros(N_STATE, dtype=np.int64), np.zeros(E.ENGINE_WORK_SIZE, dtype=np.int64),
            np.zeros(N_ACTIONS, dtype=np.bool_), np.zeros((N_RNGS, RNG_WORDS), dtype=np.uint64),
            np.zeros(N_OBS, dtype=np.int64), np.zeros(POLICY_WORK_SIZE, dtype=np.int64),
            np.zeros(N_RESULT, dtype=np.int64), np.zeros(N_CARDS, dtype=np.int64),
            np.zeros((N_TYPES, N_SEATS), dtype=np.float64), np.zeros(N_TYPES, dtype=np.int64),
            np.zeros(RNG_WORDS, dtype=np.uint64), np.zeros(N_CARDS, dtype=np.int64), np.zeros(N_TYPES, dtype=np.int64))


@njit(nogil=True)
def _play_to_end(act, table, play, ps, order, n, first):
    """One play-out: the state ``s`` before its draw with the stock replaced by ``order``
    (``n`` cards) with ``order[first]`` and ``order[0]`` swapped, played to its end by the
    dispatcher ``act`` on copies (``ps``) of ``play`` (:class:`~simkit.engine.loop.InPlay`),
    seats and rules ``table``; fills ``ps``'s result row; returns 0 or the error that stopped it."""
    s = play.s
    s2, w2, m2, r2 = ps[PS_STATE], ps[PS_WORK], ps[PS_MASK], ps[PS_RNGS]
    o2, p2, res = ps[PS_OBS], ps[PS_POLICY_WORK], ps[PS_RESULT]
    for x in range(N_STATE):
        s2[x] = s[x]
    pos = s[S_STOCK_POS]
    for i in range(n):
        s2[S_DECK + pos + i] = order[i]
    s2[S_DECK + pos] = order[first]
    s2[S_DECK + pos + first] = order[0]
    w2[:] = play.work
    w2[E.EW_CHANCE] = E.CHANCE_OFF
    r2[:, :] = play.rngs
    o2[:] = play.obs
    p2[:] = play.pwork
    E.advance(s2, table.rules, m2, w2, play.ev, play.ev_n)
    error, _ = decide_until_chance(act, table, InPlay(s2, r2, m2, o2, w2, p2, play.ev, play.ev_n), 0)
    record_result(s2, s2[S_DECK : S_DECK + N_CARDS], res)
    return error


@njit(nogil=True)
def playout_luck(act, table, play, ps, playouts, luck):
    """Add to ``luck[seat]`` the correction of the pending draw (phase PH_DRAW, paused) under
    play-out values (see the module docstring); ``ps``: :func:`new_playout_scratch` with its
    random stream keyed to the deal; ``table``, ``play``: the deal's
    :class:`~simkit.engine.loop.Table` and :class:`~simkit.engine.loop.InPlay`.  Returns 0, or
    the error code of a play-out that stopped early (the policies broke a rule: the deal is
    then flagged with it)."""
    s = play.s
    order, values, counts, key = ps[PS_ORDER], ps[PS_VALUES], ps[PS_COUNTS], ps[PS_KEY]
    stock, lowest, res = ps[PS_STOCK], ps[PS_LOWEST], ps[PS_RESULT]
    pos = s[S_STOCK_POS]
    n = N_CARDS - pos
    present = 0
    for t in range(N_TYPES):
        for q in range(N_SEATS):
            values[t, q] = 0.0
    E.chance_outcomes(s, counts)
    for t in range(N_TYPES):
        if counts[t] > 0:
            present += 1
    if present < 2:  # one type left: the draw holds no luck
        return 0
    for i in range(n):  # the stock's cards sorted (insertion sort: n <= STOCK_CARDS)
        card = s[S_DECK + pos + i]
        j = i
        while j > 0 and stock[j - 1] > card:
            stock[j] = stock[j - 1]
            j -= 1
        stock[j] = card
    for i in range(n - 1, -1, -1):  # each type's lowest card: the copy a candidate puts on top
        lowest[stock[i] // N_COPIES] = stock[i]
    for _ in range(playouts):
        for i in range(n):
            order[i] = stock[i]
        shuffle_kernel(key, order[:n])
        for t in range(N_TYPES):
            if counts[t] == 0:
                continue
            first = 0  # where the order put type t's lowest card
            while order[first] != lowest[t]:
                first += 1
            error = _play_to_end(act, table, play, ps, order, n, first)
            if error != 0:
                return error
            for q in range(N_SEATS):
                values[t, q] += res[R_PAYOFF + q]
    actual = s[S_DECK + pos] // N_COPIES
    for q in range(N_SEATS):
        expected = 0.0
        for t in range(N_TYPES):
            expected += counts[t] * values[t, q]
        luck[q] += (values[actual, q] - expected / n) / playouts
    return 0

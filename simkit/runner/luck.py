"""Luck of the draws: per-deal luck corrections for luck-adjusted (AIVAT-style) evaluation.

The chance events of a deal after the shuffle are the stock draws (the deal itself is
cancelled by duplicate play, :mod:`simkit.runner.duplicate`).  Given the full state before a
draw (every hand and the dead cards: what an estimator may see after the deal), the rest of
the stock is a uniformly random order of the cards not yet seen, so the next card is of type t
with probability ``c_t / n`` (``c_t`` copies of t among the ``n`` stock cards).  For a value
function v of the state after a draw (one number per seat), the draw's *correction*

    v(after the actual card) - sum_t c_t / n * v(after a card of type t)

has mean zero given everything before the draw, whatever the policies; so has its sum over
the deal's draws, the deal's **luck** (one number per seat).  ``payoff - luck`` is then an
unbiased estimate of the payoff's mean for any v fixed before the evaluation: v only decides
how much variance goes.  The policies here are deterministic or play their own random
streams, so their decisions need no correction (a known random policy would add one per
decision; not done).

v is a value model's (:mod:`simkit.runner.value_model`): the mean final payoffs of play-outs by
the policies at the table (:mod:`simkit.runner.playout_value`, the name ``playouts:K``), or,
by default (:func:`outcome_values`), a small network's:

* a card that brings a player a win at once (:func:`simkit.engine.kernel.draw_win`: the
  engine's claim order, each player taken to claim and win when it can) is valued at that
  win's payoffs (``VB_EXACT_WINS``);
* any other card at a small network's estimate of each seat's final payoff (one hidden ReLU
  layer over :data:`N_VALUE_FEATURES` standardised features, a network block of
  :mod:`simkit.policies.network` evaluated by its forward pass, :func:`value_features`: for each seat its idle
  cards, claims on the card, expert's hand value Φ and its gain from the best claim, the stock
  cards that would bring it a win at once, flags and position), centred to sum to zero;
* the corrections are multiplied by the model's weight ``VB_WEIGHT``.

The kernels replay deals exactly as :mod:`simkit.runner.play` plays them (the same decks,
random streams and decisions: the result rows are byte-identical), with the engine pausing
before each draw (:data:`simkit.engine.kernel.CHANCE_PAUSE`); runs with a user or Python-tier
policy are replayed likewise by the Python deal loop (:mod:`simkit.runner.python_play`).

>>> import numpy as np
>>> from simkit.policies.registry import parse_policies
>>> results, luck, _, _ = luck_rows(parse_policies("greedy,greedy,random"), seed=7, deals=4,
...                                 block=zero_value_block(exact_wins=True))
>>> results.shape[0], luck.shape
(4, (4, 3))
>>> bool(np.allclose(luck.sum(axis=1), 0.0))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import njit

from simkit.cards import N_CARDS, N_COPIES, N_SEATS, N_TYPES
from simkit.deck import PLAYER_CARDS, STOCK_CARDS, deal_deck
from simkit.engine import kernel as E
from simkit.engine.loop import InPlay, Table, decide_until_chance
from simkit.engine.layout import (
    A_KONG,
    A_PENG,
    MELD_TYPES,
    N_ACTIONS,
    PH_DRAW,
    PH_OVER,
    S_CONC,
    S_DEAD,
    S_DEALER,
    S_DECK,
    S_EXP,
    S_EXPCARDS,
    S_LOCK,
    S_NOWIN,
    S_PHASE,
    S_PLAYER,
    S_STOCK_POS,
    S_XIANGGONG,
    chain_regions,
)
from simkit.evaluator.kernel import N_PARTS, min_idle_kernel
from simkit.errors import SimkitError
from simkit.exposed import EXP_BLOCK, EXP_KONG, EXP_PENG
from simkit.jit import borrowed, hot_kernel, keep_alive, run_chunks, static_function
from simkit.policies.dispatch import (
    basic_act_state,
    builtin_act_state,
    uses_basic_policies,
)
from simkit.policies.expert import EXPERT_DEFAULTS, cross_value, part_value
from simkit.policies.network import (
    MAX_WIDTH,
    NET_LAYERS,
    NET_SCRATCH,
    NET_WIDTHS,
    first_layer,
    head,
    network_forward,
    network_size,
    pack_network,
    shift,
    zero_network,
)
from simkit.policies.registry import PolicySpec, policy_arrays
from simkit.rng import STREAM_PLAYOUT, root_key, seat_stream, stream_state
from simkit.rules import RuleSet
from simkit.runner.duplicate import SEATINGS, seating_policies
from simkit.runner.playout_value import PB_PLAYOUTS, PLAYOUT_MAGIC, PS_KEY, new_playout_scratch, playout_luck
from simkit.runner.python_play import Actor, actors_for, play_one
from simkit.runner.play import (
    CHUNK,
    DECK_RNG,
    N_RESULT,
    R_ERROR,
    R_PAYOFF,
    borrow_scratch,
    new_scratch,
    record_result,
)

# ---- the value model's features of one seat q in the state after a draw (seat-relative: q, then
# q's next player, then the one after)
IDLE_CAP = 7  # fewest idle cards, one-hot 0 .. IDLE_CAP (IDLE_CAP: that many or more)
SEAT_FEATURES = chain_regions((
    ("V_IDLE", IDLE_CAP + 1),  # fewest idle concealed cards (after its best claim of the card, if any)
    ("V_CLAIM", 1),  # may claim the card
    ("V_OUTS_SHARE", 1),  # stock cards (after the draw) that would bring it a win at once / stock size
    ("V_OUTS", 1),  # ... / 4
    ("V_OUT_UNITS", 1),  # their mean units / 5
    ("V_XIANGGONG", 1),
    ("V_NOWIN", 1),
    ("V_DEALER", 1),
    ("V_DRAWER", 1),  # drew the card
    ("V_NEXT_DRAWER", 1),  # the drawer's next player
    ("V_CONCEALED", 1),  # concealed cards / PLAYER_CARDS (30)
    ("V_PHI", 1),  # expert's hand value Φ of its holding / 100 (simkit.policies.expert)
    ("V_PHI_GAIN", 1),  # Φ after its best claim of the card minus Φ now, / 100 (0 without a claim)
))
(V_IDLE, V_CLAIM, V_OUTS_SHARE, V_OUTS, V_OUT_UNITS, V_XIANGGONG, V_NOWIN, V_DEALER, V_DRAWER, V_NEXT_DRAWER,
 V_CONCEALED, V_PHI, V_PHI_GAIN) = SEAT_FEATURES.offsets
N_SEAT_FEATURES = SEAT_FEATURES.size
V_STOCK = N_SEATS * N_SEAT_FEATURES  # stock size after the draw / 21
N_VALUE_FEATURES = V_STOCK + 1


class DrawTable(NamedTuple):
    """The table of a pending draw (one kernel argument; :func:`draw_table` fills it, the value
    model's features read it; the kernels that take it are hot kernels, :func:`simkit.jit.hot_kernel`,
    so reading its fields costs no reference counting): ``counts[t]`` the stock's copies of each type; for each type t
    present ``winner[t]`` / ``units[t]`` (who would win at once on it; -1 / 0) and
    ``asked[t, q]`` (N_TYPES x N_SEATS x 2: 0, or 1 + the fewest idle cards a legal claim of q
    leaves; the claims' action bits); ``idle_now[q]`` each player's fewest idle concealed cards,
    ``phi_now[q]`` its hand value Φ and ``phi_claim[t, q]`` Φ after its best claim of t."""

    counts: np.ndarray
    winner: np.ndarray
    units: np.ndarray
    asked: np.ndarray
    idle_now: np.ndarray
    phi_now: np.ndarray
    phi_claim: np.ndarray


@hot_kernel(cache=True, nogil=True)
def draw_table(s, rules, mask, work, dt, hw):
    """Fill the :class:`DrawTable` ``dt`` of the pending draw (phase PH_DRAW, stock not empty):
    ``counts[t]`` the stock's copies of each type; for each type t present ``winner[t]`` /
    ``units[t]`` (who would win at once on it, :func:`simkit.engine.kernel.draw_win`; -1 / 0) and
    ``asked[t, q]`` (0, or 1 + the fewest idle cards a legal claim of q leaves); ``idle_now[q]``
    each player's fewest idle concealed cards, Φ now and after each claim (``hw``: the Φ scratch
    of :func:`seat_hand_value`).  Returns the stock size.  Reads ``s`` only."""
    counts, winner, units, asked, idle_now, phi_now, phi_claim = dt
    pos = s[S_STOCK_POS]
    E.chance_outcomes(s, counts)
    for t in range(N_TYPES):
        winner[t] = -1
        units[t] = 0
        if counts[t] > 0:
            w, u = E.draw_win(s, t, rules, mask, work, asked[t])
            winner[t] = w
            units[t] = u
    for q in range(N_SEATS):
        idle_now[q] = min_idle_kernel(s[S_CONC + N_TYPES * q : S_CONC + N_TYPES * (q + 1)])
        phi_now[q] = seat_hand_value(s, q, -1, -1, hw)
        for t in range(N_TYPES):
            phi_claim[t, q] = phi_now[q]
            if counts[t] == 0 or asked[t, q, 1] == 0:
                continue
            best = -np.inf
            for a in range(A_PENG, N_ACTIONS):
                if (asked[t, q, 1] >> (a - A_PENG)) & 1:
                    best = max(best, seat_hand_value(s, q, t, a, hw))
            phi_claim[t, q] = best
    return N_CARDS - pos


_PHI_PARAMS = np.array(EXPERT_DEFAULTS, dtype=np.float64)


@njit(cache=True, nogil=True)
def seat_hand_value(s, q, t, action, hw):
    """Expert's hand value Φ (default parameters) of seat q's holding, as q sees it, or (``t``
    >= 0) of the holding after q's claim ``action`` on the turned-over type t.  ``hw``: int64
    scratch (4 x N_TYPES: concealed, unseen, 碰 / 楼 components, the claim's used types)."""
    conc = hw[0]
    unseen = hw[1]
    out_comp = hw[2]
    used = hw[3]
    exp_at = S_EXP + EXP_BLOCK * q
    for x in range(N_TYPES):
        conc[x] = s[S_CONC + N_TYPES * q + x]
        seen = conc[x] + s[S_DEAD + x] + (1 if x == t else 0)
        for r in range(N_SEATS):
            seen += s[S_EXPCARDS + N_TYPES * r + x]
        unseen[x] = max(0, N_COPIES - seen)
        out_comp[x] = s[exp_at + N_TYPES * EXP_PENG + x] + s[exp_at + N_TYPES * EXP_KONG + x]
    lock = s[S_LOCK + N_TYPES * q : S_LOCK + N_TYPES * (q + 1)]
    if t >= 0:
        E.meld_cards(action, t, used)
        for i in range(MELD_TYPES):
            if used[i] >= 0:
                conc[used[i]] -= 1
        if action == A_PENG or action == A_KONG:
            out_comp[t] += 1
    value = cross_value(conc, unseen, out_comp, _PHI_PARAMS)
    for part in range(N_PARTS):
        value += part_value(conc, part, unseen, out_comp, lock, _PHI_PARAMS)
    return value


@hot_kernel(cache=True, nogil=True)
def value_features(s, q, t, n, dt, x):
    """Features ``x`` (N_VALUE_FEATURES) of seat q in the state after the pending draw turned
    over type t (from the draw's table ``dt``, a :class:`DrawTable` :func:`draw_table` filled;
    ``n`` the stock size before it); t = -1: a card that nobody may claim and that brings no win
    (the features every such card shares)."""
    counts, winner, units, asked, idle_now, phi_now, phi_claim = dt
    for i in range(N_VALUE_FEATURES):
        x[i] = 0.0
    drawer = s[S_PLAYER]
    for j in range(N_SEATS):
        r = (q + j) % N_SEATS
        base = j * N_SEAT_FEATURES
        idle = idle_now[r]
        if t >= 0 and asked[t, r, 0] > 0:
            idle = min(idle, asked[t, r, 0] - 1)
            x[base + V_CLAIM] = 1.0
            x[base + V_PHI_GAIN] = max(0.0, phi_claim[t, r] - phi_now[r]) / 100.0
        x[base + V_PHI] = phi_now[r] / 100.0
        x[base + V_IDLE + min(idle, IDLE_CAP)] = 1.0
        outs = 0
        value = 0
        for y in range(N_TYPES):
            c = counts[y] - (1 if y == t else 0)
            if c > 0 and winner[y] == r:
                outs += c
                value += c * units[y]
        if n > 1:
            x[base + V_OUTS_SHARE] = outs / (n - 1)
        x[base + V_OUTS] = outs / 4.0
        if outs > 0:
            x[base + V_OUT_UNITS] = value / outs / 5.0
        x[base + V_XIANGGONG] = s[S_XIANGGONG + r]
        x[base + V_NOWIN] = s[S_NOWIN + r]
        x[base + V_DEALER] = 1.0 if s[S_DEALER] == r else 0.0
        x[base + V_DRAWER] = 1.0 if drawer == r else 0.0
        x[base + V_NEXT_DRAWER] = 1.0 if (drawer + 1) % N_SEATS == r else 0.0
        concealed = 0
        for y in range(N_TYPES):
            concealed += s[S_CONC + N_TYPES * r + y]
        x[base + V_CONCEALED] = concealed / PLAYER_CARDS
    x[V_STOCK] = (n - 1) / STOCK_CARDS


# ---- the value model's block (float64): header (VB_*), then a network block (simkit.policies.network, from
# VB_NET: one hidden ReLU layer over standardised features, or the zero network); the files of the first
# layout (the shipped value.npz) are converted at load (simkit.runner.value_model)
VB_MAGIC = 0  # VALUE_MAGIC
VB_EXACT_WINS = 1  # 1: a card that brings a win at once is valued at the win's payoffs
VB_WEIGHT = 2  # the corrections' weight (a shrinkage fitted with the network, on its training deals)
VB_HEADER = 3
VB_NET = VB_HEADER
VALUE_MAGIC = 7_310_573.0  # 7_310_571: the first layout's (simkit.policies.network.LEGACY_VALUE_MAGIC)


def value_block_size(n_features: int, hidden: int) -> int:
    return VB_HEADER + network_size(n_features, (hidden,) if hidden > 0 else (), True)


def value_block_of(net: np.ndarray, exact_wins: bool = True, weight: float = 1.0) -> np.ndarray:
    """The value block of the network block ``net`` (:func:`simkit.policies.network.pack_network`),
    its corrections multiplied by ``weight``."""
    return np.concatenate([[VALUE_MAGIC, 1.0 if exact_wins else 0.0, float(weight)],
                           np.asarray(net, dtype=np.float64)]).astype(np.float64)


def value_block(mean: np.ndarray, scale: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: float,
                exact_wins: bool = True, weight: float = 1.0) -> np.ndarray:
    """The value block of a network fitted on ``(x - mean) / scale``: w1 (F, H), b1 (H), w2
    (H), b2; the corrections are multiplied by ``weight``."""
    return value_block_of(pack_network([w1, w2], [b1, float(b2)], mean, scale), exact_wins, weight)


def zero_value_block(exact_wins: bool = False) -> np.ndarray:
    """A value model without a network: v = 0 everywhere (but exact wins, with ``exact_wins``)."""
    return value_block_of(zero_network(N_VALUE_FEATURES), exact_wins)


@hot_kernel(cache=True, nogil=True)
def outcome_values(s, t, n, dt, block, x, h, v):
    """``v[q]``: the value model's payoffs in the state after the pending draw turns over type t
    (``dt``: the draw's :class:`DrawTable`; ``x``, ``h``: feature and network scratch):
    the win's payoffs if t brings a win at once (and the model values wins exactly), else each
    seat's network value, centred to sum to zero (a deal's payoffs do).  The whole network per
    seat: :func:`draw_luck` computes the same values incrementally."""
    winner, units = dt.winner, dt.units
    if winner[t] >= 0 and block[VB_EXACT_WINS] == 1.0:
        for q in range(N_SEATS):
            v[q] = 2.0 * units[t] if q == winner[t] else -1.0 * units[t]
        return
    total = 0.0
    for q in range(N_SEATS):
        value_features(s, q, t, n, dt, x)
        v[q] = network_forward(block[VB_NET:], x, h)
        total += v[q]
    for q in range(N_SEATS):
        v[q] -= total / N_SEATS


@hot_kernel(cache=True, nogil=True)
def _claim_values(block, t, q, dt, hb, h):
    """Seat q's network value after type t, from the pre-activation ``hb`` of a card nobody
    claims: only the features of the players who may claim t change (idle cards, claim, Φ gain;
    read from the draw's :class:`DrawTable` ``dt``).
    ``h``: :data:`simkit.policies.network.NET_SCRATCH` floats."""
    asked, idle_now, phi_now, phi_claim = dt.asked, dt.idle_now, dt.phi_now, dt.phi_claim
    net = block[VB_NET:]
    for k in range(int(net[NET_WIDTHS])):
        h[k] = hb[k]
    for r in range(N_SEATS):
        if asked[t, r, 0] == 0:
            continue
        base = ((r - q) % N_SEATS) * N_SEAT_FEATURES
        before = min(idle_now[r], IDLE_CAP)
        after = min(min(idle_now[r], asked[t, r, 0] - 1), IDLE_CAP)
        if after != before:
            shift(net, h, base + V_IDLE + before, 1.0, 0.0)
            shift(net, h, base + V_IDLE + after, 0.0, 1.0)
        shift(net, h, base + V_CLAIM, 0.0, 1.0)
        gain = max(0.0, phi_claim[t, r] - phi_now[r]) / 100.0
        if gain != 0.0:
            shift(net, h, base + V_PHI_GAIN, 0.0, gain)
    return head(net, h, h[MAX_WIDTH:])


@njit(cache=True, nogil=True)
def draw_luck(s, rules, mask, work, tab, block, luck):
    """Add to ``luck[seat]`` the correction of the pending draw: the value after the card that
    will be turned over (``s``'s next stock card) minus its mean over the stock's types, times
    the model's weight.  The values are :func:`outcome_values`', computed incrementally: each
    seat's hidden layer once for a card nobody claims, then per type only the columns of the
    features a claim on it changes."""
    dt, hw, x, h, v, hb, base_value = tab.draw, tab.hw, tab.x, tab.h, tab.v, tab.hb, tab.base_value
    counts, winner, units, asked = dt.counts, dt.winner, dt.units, dt.asked
    n = draw_table(s, rules, mask, work, dt, hw)
    actual = s[S_DECK + s[S_STOCK_POS]] // N_COPIES
    net = block[VB_NET:]
    hidden = int(net[NET_LAYERS])
    if hidden > 0:
        for q in range(N_SEATS):
            value_features(s, q, -1, n, dt, x)
            first_layer(net, x, hb[q])
            base_value[q] = head(net, hb[q], h[MAX_WIDTH:])
    for t in range(N_TYPES):
        if counts[t] == 0:
            continue
        if winner[t] >= 0 and block[VB_EXACT_WINS] == 1.0:
            for q in range(N_SEATS):
                v[q] = 2.0 * units[t] if q == winner[t] else -1.0 * units[t]
        elif hidden == 0:
            for q in range(N_SEATS):
                v[q] = 0.0
        elif winner[t] >= 0:  # a win valued by the network: its outs change too, the whole network
            outcome_values(s, t, n, dt, block, x, h, v)
        else:
            claimed = asked[t, 0, 0] + asked[t, 1, 0] + asked[t, 2, 0] > 0
            total = 0.0
            for q in range(N_SEATS):
                if claimed:
                    v[q] = _claim_values(block, t, q, dt, hb[q], h)
                else:
                    v[q] = base_value[q]
                total += v[q]
            for q in range(N_SEATS):
                v[q] -= total / N_SEATS
        weight = counts[t] / n
        for q in range(N_SEATS):
            luck[q] -= block[VB_WEIGHT] * weight * v[q]
            if t == actual:
                luck[q] += block[VB_WEIGHT] * v[q]


@njit(cache=True, nogil=True)
def draw_record(s, rules, mask, work, tab, rows, n_rows):
    """Append the features of every seat in the state after the pending draw (its actual card),
    unless that card brings a win at once, to ``rows`` (their count in n_rows[0])."""
    dt = tab.draw
    n = draw_table(s, rules, mask, work, dt, tab.hw)
    actual = s[S_DECK + s[S_STOCK_POS]] // N_COPIES
    if dt.winner[actual] >= 0:
        return
    for q in range(N_SEATS):
        if n_rows[0] < rows.shape[0]:
            value_features(s, q, actual, n, dt, rows[n_rows[0], 1:])
            rows[n_rows[0], 0] = q
            n_rows[0] += 1


MAX_VALUE_HIDDEN = MAX_WIDTH  # the widest hidden layer a value block may have


class LuckScratch(NamedTuple):
    """Scratch of the chance steps (:func:`new_luck_scratch`, one per chunk): the draw's
    :class:`DrawTable`, Φ scratch ``hw`` (4 x N_TYPES, :func:`seat_hand_value`), features ``x``,
    the network's scratch ``h``, outcome values ``v``, each seat's hidden layer ``hb`` and value
    ``base_value`` for a card nobody claims, and the play-outs' scratch ``playouts``
    (:func:`simkit.runner.playout_value.new_playout_scratch`)."""

    draw: DrawTable
    hw: np.ndarray
    x: np.ndarray
    h: np.ndarray
    v: np.ndarray
    hb: np.ndarray
    base_value: np.ndarray
    playouts: tuple


@njit(cache=True, nogil=True)
def new_luck_scratch():
    """A :class:`LuckScratch`: stock counts, winner / units / asked per type, idle cards, Φ now
    and after each claim (its :class:`DrawTable`), Φ scratch, features, the network's scratch,
    outcome values, each seat's hidden layer and value for a card nobody claims; last, the
    play-outs' scratch (:func:`simkit.runner.playout_value.new_playout_scratch`)."""
    draw = DrawTable(np.zeros(N_TYPES, dtype=np.int64), np.zeros(N_TYPES, dtype=np.int64),
                     np.zeros(N_TYPES, dtype=np.int64), np.zeros((N_TYPES, N_SEATS, 2), dtype=np.int64),
                     np.zeros(N_SEATS, dtype=np.int64), np.zeros(N_SEATS, dtype=np.float64),
                     np.zeros((N_TYPES, N_SEATS), dtype=np.float64))
    return LuckScratch(draw, np.zeros((4, N_TYPES), dtype=np.int64), np.zeros(N_VALUE_FEATURES, dtype=np.float64),
                       np.zeros(NET_SCRATCH, dtype=np.float64), np.zeros(N_SEATS, dtype=np.float64),
                       np.zeros((N_SEATS, MAX_VALUE_HIDDEN), dtype=np.float64), np.zeros(N_SEATS, dtype=np.float64),
                       new_playout_scratch())


class Chance(NamedTuple):
    """The chance step's arguments (one kernel argument of :func:`play_out` and its steps
    :func:`network_draw` / :func:`playout_draw`): the :class:`LuckScratch` ``tab``, the value
    model's ``block`` (size 0: none), the deal's ``luck`` per seat (added to), and the rows of
    recorded features (capacity 0: none, :func:`draw_record`) with their count ``n_rows[0]``."""

    tab: LuckScratch
    block: np.ndarray
    luck: np.ndarray
    rows: np.ndarray
    n_rows: np.ndarray


class LuckRun(NamedTuple):
    """Deals ``first_deal .. first_deal + deals - 1`` of a fixed-seat run (one kernel argument,
    the same for every chunk; the seats' policies and the rules: a
    :class:`~simkit.engine.loop.Table`): the run's ``root`` key, the ``dealer`` of every deal,
    ``chunk`` deals per chunk, the value model's ``block``, and where each deal's numbers go:
    ``results`` (deals x N_RESULT), ``luck`` (deals x N_SEATS), ``rows`` (deals x
    MAX_ROWS_PER_DEAL x (1 + N_VALUE_FEATURES), or none: deals 0) and ``n_rows`` (deals)."""

    root: np.ndarray
    first_deal: int
    deals: int
    dealer: int
    chunk: int
    block: np.ndarray
    results: np.ndarray
    luck: np.ndarray
    rows: np.ndarray
    n_rows: np.ndarray


@njit(nogil=True, inline="always")
def _play_deal_luck_with(act, draw, run, i, table, play, deck, chance):
    """Play deal ``run.first_deal + i`` of the :class:`LuckRun` ``run`` as
    :func:`simkit.runner.play._play_deal_with` does (the same result row, into
    ``run.results[i]``), pausing before each draw for the chance step ``draw``
    (:func:`play_out`, with the deal's :class:`Chance` ``chance``)."""
    s, rngs, work = play.s, play.rngs, play.work
    root, deal, result, luck = run.root, run.first_deal + i, run.results[i], chance.luck
    deal_deck(root, deal, rngs[DECK_RNG], deck)
    for p in range(N_SEATS):
        stream_state(root, deal, seat_stream(p), rngs[p])
    stream_state(root, deal, STREAM_PLAYOUT, chance.tab.playouts[PS_KEY])
    for q in range(N_SEATS):
        luck[q] = 0.0
    work[E.EW_CHANCE] = E.CHANCE_PAUSE
    E.start(s, deck, run.dealer, table.rules, play.mask, work, play.ev, play.ev_n)
    E.new_deal_observation(play.obs)
    error = play_out(act, draw, table, play, chance)
    record_result(s, deck, result)
    result[R_ERROR] = error


@njit(nogil=True)
def network_draw(act, table, play, chance):
    """The chance step of :func:`play_out` under a network value model: record the seats'
    features after the draw in ``chance.rows`` (capacity > 0, :func:`draw_record`) and add its
    correction to ``chance.luck`` under ``chance.block`` (size > 0, :func:`draw_luck`); returns 0."""
    tab, block, luck, rows, n_rows = chance
    if rows.shape[0] > 0:
        draw_record(play.s, table.rules, play.mask, play.work, tab, rows, n_rows)
    if block.size > 0:
        draw_luck(play.s, table.rules, play.mask, play.work, tab, block, luck)
    return 0


@njit(nogil=True)
def playout_draw(act, table, play, chance):
    """The chance step of :func:`play_out` under play-out values (``chance.block``
    :func:`simkit.runner.playout_value.playout_block`; the stream ``chance.tab.playouts[PS_KEY]`` keyed to the
    deal by the caller): :func:`simkit.runner.playout_value.playout_luck`."""
    return playout_luck(act, table, play, chance.tab.playouts, int(chance.block[PB_PLAYOUTS]), chance.luck)


NETWORK_DRAW = static_function(network_draw)
PLAYOUT_DRAW = static_function(playout_draw)


@njit(nogil=True, inline="always")
def play_out(act, draw, table, play, chance):
    """Play ``play.s`` to its end with the dispatcher ``act``
    (:func:`simkit.engine.loop.decide_until_chance`); where the engine pauses before a draw
    (``work[EW_CHANCE]`` CHANCE_PAUSE, set by the caller) call the chance step ``draw`` (a
    static function: :data:`NETWORK_DRAW`, a network model's correction and recorded features,
    or :data:`PLAYOUT_DRAW`, play-out values; numba compiles this once per step, so the
    play-outs are compiled only where they are used), with the deal's :class:`Chance`
    ``chance``.  Returns 0, or the error code that stopped the deal; leaves the pause off."""
    error = 0
    decisions = 0
    s = play.s
    while s[S_PHASE] != PH_OVER:
        if s[S_PHASE] == PH_DRAW:  # paused before a draw
            error = draw(act, table, play, chance)
            if error != 0:
                break
            E.advance(s, table.rules, play.mask, play.work, play.ev, play.ev_n)
            continue
        error, decisions = decide_until_chance(act, table, play, decisions)
        if error != 0:
            break
    play.work[E.EW_CHANCE] = E.CHANCE_OFF
    return error


MAX_ROWS_PER_DEAL = N_SEATS * STOCK_CARDS  # draw_record: three rows per draw
PLAYOUT_CHUNK = 2  # deals per chunk under play-out values (each takes seconds: many chunks keep the threads busy)


def is_playout_block(block: np.ndarray | None) -> bool:
    """Is ``block`` a play-out value model (:mod:`simkit.runner.playout_value`)?"""
    return block is not None and block.size > 0 and block[0] == PLAYOUT_MAGIC


@njit(nogil=True, inline="always")
def _luck_chunk_with(act, draw, k, table, run):
    """Chunk k (``run.chunk`` deals) of the fixed-seat :class:`LuckRun` ``run`` played by
    ``table`` (a :class:`~simkit.engine.loop.Table`) with the dispatcher ``act`` and the chance
    step ``draw`` (``run.rows``: per deal, MAX_ROWS_PER_DEAL rows of draw_record, or none)."""
    owners = new_scratch()
    s, deck, rngs, mask, obs, work, pwork, ev, ev_n, _, _ = borrow_scratch(owners)
    table = Table(borrowed(table.policy_ids), borrowed(table.params), borrowed(table.seat_of), borrowed(table.rules))
    tab = new_luck_scratch()
    no_rows = np.zeros((0, N_VALUE_FEATURES + 1), dtype=np.float64)
    block, luck, rows, n_rows = run.block, run.luck, run.rows, run.n_rows
    play = InPlay(s, rngs, mask, obs, work, pwork, ev, ev_n)
    for i in range(k * run.chunk, min(run.deals, (k + 1) * run.chunk)):
        deal_rows = rows[i] if rows.shape[0] > 0 else no_rows
        _play_deal_luck_with(act, draw, run, i, table, play, deck, Chance(tab, block, luck[i], deal_rows,
                                                                           n_rows[i : i + 1]))
    keep_alive(owners)


_BUILTIN_ACT = static_function(builtin_act_state)
_BASIC_ACT = static_function(basic_act_state)


@njit(cache=True, nogil=True)
def _luck_chunk(k, table, run):
    """Chunk k of the :class:`LuckRun` ``run`` under a network value model (or none)."""
    _luck_chunk_with(_BUILTIN_ACT, NETWORK_DRAW, k, table, run)


@njit(cache=True, nogil=True)
def _luck_chunk_basic(k, table, run):
    """:func:`_luck_chunk` for runs of random / greedy / patient only (compiles without mc and expert)."""
    _luck_chunk_with(_BASIC_ACT, NETWORK_DRAW, k, table, run)


@njit(cache=True, nogil=True)
def _playout_chunk(k, table, run):
    """:func:`_luck_chunk` under play-out values."""
    _luck_chunk_with(_BUILTIN_ACT, PLAYOUT_DRAW, k, table, run)


@njit(cache=True, nogil=True)
def _playout_chunk_basic(k, table, run):
    """:func:`_playout_chunk` for runs of random / greedy / patient only."""
    _luck_chunk_with(_BASIC_ACT, PLAYOUT_DRAW, k, table, run)


def _luck_rows_python(actors: Sequence[Actor], labels: Sequence[str], seed: int, rules_array: np.ndarray,
                      run: LuckRun) -> None:
    """:func:`luck_rows` for actors the kernels cannot play: the Python deal loop, paused before
    each draw for :func:`draw_luck` / :func:`draw_record` (filling the :class:`LuckRun`'s
    ``results``, ``luck``, ``rows`` and ``n_rows`` in place; ``run.root`` is ``seed``'s)."""
    scratch = new_scratch()
    tab = new_luck_scratch()
    root, first_deal, dealer, block = run.root, run.first_deal, run.dealer, run.block
    results, luck, rows, n_rows = run.results, run.luck, run.rows, run.n_rows
    for i in range(results.shape[0]):
        deal_luck, deal_rows, deal_n = luck[i], (rows[i] if rows.shape[0] > 0 else None), n_rows[i : i + 1]

        def on_draw(s: np.ndarray, rules: np.ndarray, mask: np.ndarray, work: np.ndarray) -> None:
            if deal_rows is not None:
                draw_record(s, rules, mask, work, tab, deal_rows, deal_n)
            if block.size > 0:
                draw_luck(s, rules, mask, work, tab, block, deal_luck)

        play_one(seed, root, first_deal + i, dealer, actors, rules_array, scratch, results[i], labels, on_draw)


def luck_rows(policies: Sequence[PolicySpec], seed: int, deals: int, block: np.ndarray | None = None,
              rules: RuleSet | None = None, first_deal: int = 0, dealer: int = 0,
              record: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Result rows ``(deals, N_RESULT)`` of deals ``first_deal ..`` of a fixed-seat run (seat p
    plays ``policies[p]``: the rows ``simulate`` writes with seating fixed), their luck
    ``(deals, 3)`` under the value model ``block`` (zeros without one), and with ``record`` the
    value features after each draw ``(deals, MAX_ROWS_PER_DEAL, 1 + N_VALUE_FEATURES)`` (column
    0: the seat) and their counts ``(deals,)``.  Runs with a user or Python-tier policy, which
    the luck kernels do not compile, are replayed by the Python deal loop
    (:func:`simkit.runner.python_play.play_one`) with the same corrections: the same rows and
    luck as the kernels give (``tests/test_luck.py``), more slowly."""
    rules = rules or RuleSet()
    if record and is_playout_block(block):
        raise ValueError("value features are recorded under a network value model or none, not play-out values")
    results = np.zeros((deals, N_RESULT), dtype=np.int64)
    luck = np.zeros((deals, N_SEATS), dtype=np.float64)
    rows = np.zeros((deals if record else 0, MAX_ROWS_PER_DEAL, 1 + N_VALUE_FEATURES), dtype=np.float64)
    n_rows = np.zeros(deals, dtype=np.int64)
    block = np.zeros(0, dtype=np.float64) if block is None else np.ascontiguousarray(block, dtype=np.float64)
    root = root_key(seed)
    rules_array = rules.to_array()
    actors = actors_for(list(policies))
    if any(actor.builtin_id < 0 for actor in actors):
        if is_playout_block(block):
            names = ", ".join(spec.text() for spec, actor in zip(policies, actors) if actor.builtin_id < 0)
            raise SimkitError(f"play-out values play the built-in policies only, not {names}: use the network value "
                              "model for this comparison")
        run = LuckRun(root, first_deal, deals, dealer, 0, block, results, luck, rows, n_rows)
        _luck_rows_python(actors, [spec.text() for spec in policies], seed, rules_array, run)
        return results, luck, rows, n_rows
    ids, params, _ = policy_arrays(list(policies))
    if is_playout_block(block):
        kernel, chunk = (_playout_chunk_basic if uses_basic_policies(ids) else _playout_chunk), PLAYOUT_CHUNK
    else:
        kernel, chunk = (_luck_chunk_basic if uses_basic_policies(ids) else _luck_chunk), CHUNK
    table = Table(ids, params, np.arange(N_SEATS, dtype=np.int64), rules_array)  # fixed seats
    run = LuckRun(root, int(first_deal), int(deals), int(dealer), chunk, block, results, luck, rows, n_rows)
    run_chunks(kernel, [(k, table, run) for k in range((deals + chunk - 1) // chunk)])
    return results, luck, rows, n_rows


def duplicate_luck(policy_a: PolicySpec, policy_b: PolicySpec, seed: int, deals: int, block: np.ndarray,
                   rules: RuleSet | None = None, first_deal: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Deals ``first_deal ..`` of a duplicate comparison of A and B replayed under each seating
    (:data:`simkit.runner.duplicate.SEATINGS` order): per deal and seating, A's mean payoff minus
    B's, and the same of the luck under ``block``; two ``(deals, 6)`` arrays."""
    payoff_differences, luck_differences = [], []
    for seating in SEATINGS:
        results, luck, _, _ = luck_rows(seating_policies(policy_a, policy_b, seating), seed, deals, block, rules,
                                        first_deal)
        pay = results[:, R_PAYOFF : R_PAYOFF + N_SEATS].astype(np.float64)
        is_a = np.array([c == "A" for c in seating])
        payoff_differences.append(pay[:, is_a].mean(axis=1) - pay[:, ~is_a].mean(axis=1))
        luck_differences.append(luck[:, is_a].mean(axis=1) - luck[:, ~is_a].mean(axis=1))
    return np.stack(payoff_differences, axis=1), np.stack(luck_differences, axis=1)

"""The belief over the hidden cards of a played position: card layouts drawn in proportion to how
likely the table's policies were to play what the player saw (issue 38's opponent evidence).

In 四色牌 every drawn card is shown, so what a player cannot see is the other seats' *dealt*
hands (their concealed cards now follow from them and the public history) and the order of the
rest of the stock.  A uniform determinisation (:func:`simkit.policies.mc.determinise`) gives the
opponents hands that may never have played as they did: a hand that would have 碰'd a discard
the seat let go, or kept the card it threw.  Their actions are evidence.

**Likelihood of a layout** (:func:`replay_weight`).  From a full state consistent with the
position, the whole deal is rebuilt (the dealt hands: each seat's concealed cards now, plus what
it discarded, plus the concealed cards of its exposed groups; the stock: the drawn cards in the
order the history shows them, then the layout's remaining stock) and the public history replayed
from the deal's start, move by move:

* the action every decision took is read from the history (a discard, a win, a claim; a decision
  that left no row was a pass, since passes are not recorded; a 吃 whose 圆 the history does not
  name is the one whose group the position shows);
* at each decision of another seat with a choice, that seat's table policy decides too (drawing
  from the chain's streams ``belief_seat_stream(seat)``); the observed action has probability
  ``(1 - noise) * [the policy chose it] + noise / (legal actions)``: the policy, except that with
  probability ``noise`` the seat plays any legal action (a policy that is not quite the table's,
  a person);
* a layout whose replay contradicts the history (an action illegal with those cards, a row the
  deal does not make) has likelihood 0.

The replay ends at the position; the engine state it reaches is the layout's *particle*, which
also holds what the player cannot see and a uniform determinisation gets wrong: the other seats'
passed types and lost rights to win.

**Sampling** (:func:`belief_particles`).  Importance weights on uniform layouts collapse within a
few discards (at 20-60 history rows 32,768 uniform candidates kept 2-4 effective ones), so the
belief is drawn by Metropolis chains instead: each starts at a uniform layout the history allows
(stream ``(S, chain, STREAM_BELIEF)``) and proposes swaps of two hidden cards between two of the
three hidden places (the other two hands and the stock), uniformly; a swap is symmetric, so it is
accepted with probability min(1, likelihood ratio).  After :data:`BELIEF_BURN` proposals a chain
keeps one particle every :data:`BELIEF_THIN`.  Rollouts (:mod:`simkit.runner.rollout`) then play
from particles drawn uniformly, each with its stock reordered.

A belief is a pure function of (position, policies, rules, seed, particles, noise), the same for
any number of threads (one chain per unit of work).
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np
from numba import njit

from simkit.cards import N_CARDS, N_COPIES, N_SEATS, N_TYPES
from simkit.deck import DEALER_CARDS, PLAYER_CARDS
from simkit.engine import kernel as E
from simkit.engine.loop import InPlay, Table
from simkit.engine.layout import (
    A_CHOW_TRIAD,
    A_CHOW_ZU4,
    A_KONG,
    A_PASS,
    A_PENG,
    A_WIN,
    A_ZHAN,
    E_CLAIM,
    E_DISCARD,
    E_DRAW,
    E_TABLE,
    E_WIN,
    HIST_WIDTH,
    M_CHOW,
    M_KONG,
    M_PENG,
    M_ZHAN,
    MAX_MELDS,
    MELD_TYPES,
    MELD_WIDTH,
    N_STATE,
    O_ACTIVE,
    O_DEALER,
    O_HIST,
    O_NCONC,
    O_NHIST,
    O_PHASE,
    O_SEAT,
    O_STAGE,
    O_STOCK_LEFT,
    PH_CLAIM,
    PH_DISCARD,
    PH_OVER,
    S_ACTIVE,
    S_CONC,
    S_DECK,
    S_EXPCARDS,
    S_HIST,
    S_MELDS,
    S_NHIST,
    S_NMELDS,
    S_PHASE,
    S_PLAYER,
    S_STAGE,
)
from simkit.jit import borrowed, keep_alive, run_chunks, static_function
from simkit.policies.dispatch import builtin_act_state, fast_act_state, uses_fast_policies
from simkit.policies.mc import determinise
from simkit.rng import STREAM_BELIEF, belief_seat_stream, next_below, root_key, stream_state
from simkit.rules import RuleSet
from simkit.runner.play import borrow_scratch, new_scratch
from simkit.runner.rollout import NumbaThreads

STOCK_CARDS = N_CARDS - DEALER_CARDS - 2 * PLAYER_CARDS  # 21
BELIEF_CHAINS = 32  # Metropolis chains of a belief (the threads' unit of work)
BELIEF_BURN = 3000  # swaps proposed before a chain's first particle
BELIEF_THIN = 16  # swaps proposed between a chain's particles
MAX_STARTS = 1000  # uniform determinisations a chain tries for a start the history allows
UNIFORM_STEPS = 1 << 53  # u < p with u = next_below(UNIFORM_STEPS): probability p
MAX_REPLAY_STEPS = 4 * N_CARDS + 64  # more decisions than any deal has (a guard, never reached)


# ---- the kernels' grouped arguments (issue 53: short signatures); the table's policies and rules
# come as a :class:`~simkit.engine.loop.Table` (seat q plays ``policy_ids[q]`` with
# ``params[seat_of[q]]``) and the replay's state and scratch as an :class:`~simkit.engine.loop.InPlay`
class Evidence(NamedTuple):
    """What a belief explains (one kernel argument): the observation ``obs`` of the position with
    its public history, the ``template`` state holding its exposed groups in the order they were
    laid, the ``root`` key of the chains' random streams, and the ``noise`` (the chance, in
    [0, 1], that a seat plays any legal action instead of its policy's)."""

    obs: np.ndarray
    template: np.ndarray
    root: np.ndarray
    noise: float


class Chains(NamedTuple):
    """The Metropolis chains of a belief (one kernel argument): ``burn`` steps, then one particle
    every ``thin``; where they go: ``states`` (chains x per chain rows of N_STATE) with their log
    weights ``logw``, and each chain's accepted and proposed swaps ``moves`` (chains x 2)."""

    burn: int
    thin: int
    states: np.ndarray
    logw: np.ndarray
    moves: np.ndarray


class ReplayScratch(NamedTuple):
    """The scratch of a replay that the deal loop's :class:`~simkit.engine.loop.InPlay` lacks: the
    rebuilt ``deck`` (N_CARDS ids), the dealt hands ``init`` (N_SEATS x N_TYPES counts) and a
    meld's types ``used`` (MELD_TYPES)."""

    deck: np.ndarray
    init: np.ndarray
    used: np.ndarray


@njit(cache=True, nogil=True)
def dealt_counts(obs, d, init):
    """Each seat's dealt hand (``init``: 3 x 28 counts) implied by the determinisation ``d`` of
    ``obs`` and the public history: concealed now + discarded + exposed - the claimed cards and
    table 将 (each came from outside the hand).  False when a count goes negative or a hand has
    the wrong size."""
    for p in range(N_SEATS):
        for t in range(N_TYPES):
            init[N_TYPES * p + t] = d[S_CONC + N_TYPES * p + t] + d[S_EXPCARDS + N_TYPES * p + t]
    for h in range(obs[O_NHIST]):
        row = O_HIST + HIST_WIDTH * h
        kind, p, t = obs[row], obs[row + 1], obs[row + 2]
        if kind == E_DISCARD:
            init[N_TYPES * p + t] += 1
        elif kind == E_CLAIM or kind == E_TABLE:
            init[N_TYPES * p + t] -= 1
    dealer = obs[O_DEALER]
    for p in range(N_SEATS):
        size = 0
        for t in range(N_TYPES):
            if init[N_TYPES * p + t] < 0:
                return False
            size += init[N_TYPES * p + t]
        if size != (DEALER_CARDS if p == dealer else PLAYER_CARDS):
            return False
    return True


@njit(cache=True, nogil=True)
def rebuilt_deck(obs, d, init, deck):
    """The deck of the whole deal (``deck``: 112 card ids) from the dealt hands ``init``, the
    drawn cards of the history in order and the rest of ``d``'s stock; False if some type would
    have more than four copies or the draws do not add up."""
    copies = np.zeros(N_TYPES, dtype=np.int64)
    dealer = obs[O_DEALER]
    pos = 0
    for k in range(N_SEATS):
        seat = (dealer + k) % N_SEATS
        for t in range(N_TYPES):
            for _ in range(init[N_TYPES * seat + t]):
                deck[pos] = t * N_COPIES + copies[t]
                copies[t] += 1
                pos += 1
    stock_left = obs[O_STOCK_LEFT]
    drawn = 0
    for h in range(obs[O_NHIST]):
        row = O_HIST + HIST_WIDTH * h
        if obs[row] == E_DRAW:
            t = obs[row + 2]
            if pos >= N_CARDS or copies[t] >= N_COPIES:
                return False
            deck[pos] = t * N_COPIES + copies[t]
            copies[t] += 1
            pos += 1
            drawn += 1
    if drawn + stock_left != STOCK_CARDS:
        return False
    for i in range(N_CARDS - stock_left, N_CARDS):
        t = d[S_DECK + i] // N_COPIES
        if pos >= N_CARDS or copies[t] >= N_COPIES:
            return False
        deck[pos] = t * N_COPIES + copies[t]
        copies[t] += 1
        pos += 1
    return pos == N_CARDS



@njit(cache=True, nogil=True)
def _chow_matches(action, t, template, q, k, used):
    """Whether the 圆 that chow ``action`` on ``t`` lays is meld ``k`` of seat ``q`` in ``template``."""
    E.meld_cards(action, t, used)
    base = S_MELDS + (q * MAX_MELDS + k) * MELD_WIDTH
    if k >= MAX_MELDS or template[base] != M_CHOW:
        return False
    for x in range(N_TYPES):  # compare as counts per type
        mine = 1 if x == t else 0
        for i in range(MELD_TYPES):
            if used[i] == x:
                mine += 1
        theirs = 0
        for i in range(MELD_TYPES):
            if template[base + 1 + i] == x:
                theirs += 1
        if mine != theirs:
            return False
    return True


@njit(cache=True, nogil=True)
def logged_action(s, obs, template, mask, used):
    """The action the decision of state ``s`` took, read from the public history of ``obs`` (the
    row the replay has reached); -1 when the history contradicts the replay."""
    h = s[S_NHIST]
    q = s[S_PLAYER]
    if h >= obs[O_NHIST]:  # a decision after the last row, before the position's: a pass
        return A_PASS if s[S_PHASE] == PH_CLAIM else -1
    row = O_HIST + HIST_WIDTH * h
    kind, p, t, detail = obs[row], obs[row + 1], obs[row + 2], obs[row + 3]
    if s[S_PHASE] == PH_DISCARD:
        if p != q:
            return -1
        if kind == E_WIN:
            return A_WIN
        if kind == E_DISCARD:
            return t
        return -1
    if p != q or (kind != E_CLAIM and kind != E_WIN):
        return A_PASS
    if kind == E_WIN:
        return A_WIN
    if t != s[S_ACTIVE]:
        return -1
    if detail == M_PENG:
        return A_PENG
    if detail == M_KONG:
        return A_KONG
    if detail == M_ZHAN:
        return A_ZHAN
    k = s[S_NMELDS + q]
    for a in range(A_CHOW_TRIAD, A_CHOW_ZU4 + 1):
        if mask[a] and _chow_matches(a, t, template, q, k, used):
            return a
    return -1


@njit(nogil=True, inline="always")
def _replay_with(act, table, evidence, c, play, d, scratch):
    """The log weight of the hidden cards of ``d`` (a full state consistent with
    ``evidence.obs``, an :class:`Evidence`), ``table``'s policies (a
    :class:`~simkit.engine.loop.Table`) drawing from candidate ``c``'s streams; the particle left
    in ``play.s`` (``play``: an :class:`~simkit.engine.loop.InPlay`, its event log empty;
    ``scratch``: a :class:`ReplayScratch`)."""
    policy_ids, params, seat_of, rules = table
    obs, template, root, noise = evidence
    s, rngs, mask, obs2, work, pwork, ev, ev_n = play
    deck, init, used = scratch
    if not dealt_counts(obs, d, init) or not rebuilt_deck(obs, d, init, deck):
        return -math.inf
    me = obs[O_SEAT]
    for p in range(N_SEATS):
        stream_state(root, c, belief_seat_stream(p), rngs[p])
    ev_n[0] = 0
    E.new_deal_observation(obs2)
    E.start(s, deck, obs[O_DEALER], rules, mask, work, ev, ev_n)
    nh = obs[O_NHIST]
    logw = 0.0
    for _ in range(MAX_REPLAY_STEPS):
        phase = s[S_PHASE]
        if phase == PH_OVER:
            return -math.inf
        q = s[S_PLAYER]
        if (s[S_NHIST] == nh and q == me and phase == obs[O_PHASE] and s[S_ACTIVE] == obs[O_ACTIVE]
                and (phase != PH_CLAIM or s[S_STAGE] == obs[O_STAGE])):
            for x in range(N_SEATS * N_TYPES):  # the replay must hold the determinisation's hands
                if s[S_CONC + x] != d[S_CONC + x]:
                    return -math.inf
            return logw
        n = E.legal_mask(s, rules, mask, work)
        a = logged_action(s, obs, template, mask, used)
        if a < 0 or not mask[a]:
            return -math.inf
        if q != me and n >= 2:
            choice = act(policy_ids[q], s, obs2, mask, params[seat_of[q]], rngs[q], rules, pwork)
            f = noise / n + (1.0 - noise) * (1.0 if choice == a else 0.0)
            if f <= 0.0:
                return -math.inf
            logw += math.log(f)
        h0 = s[S_NHIST]
        E.apply_legal(s, a, rules, mask, work, ev, ev_n)
        if s[S_NHIST] > nh:
            return -math.inf
        for h in range(h0, s[S_NHIST]):
            for i in range(HIST_WIDTH):
                if s[S_HIST + HIST_WIDTH * h + i] != obs[O_HIST + HIST_WIDTH * h + i]:
                    return -math.inf
    return -math.inf


@njit(cache=True, nogil=True)
def _location_card(d, loc, seat, index, stock_from):
    """The type of card ``index`` of a hidden location: seat ``seat``'s concealed hand (loc 0, 1)
    or the stock (loc 2, from deck index ``stock_from``)."""
    if loc == 2:
        return d[S_DECK + stock_from + index] // N_COPIES
    for t in range(N_TYPES):
        n = d[S_CONC + N_TYPES * seat + t]
        if index < n:
            return t
        index -= n
    return -1


@njit(cache=True, nogil=True)
def _put_card(d, loc, seat, index, stock_from, old, new):
    """Replace card ``index`` (of type ``old``) of a hidden location by a card of type ``new``."""
    if loc == 2:
        d[S_DECK + stock_from + index] = new * N_COPIES
    else:
        d[S_CONC + N_TYPES * seat + old] -= 1
        d[S_CONC + N_TYPES * seat + new] += 1


@njit(nogil=True, inline="always")
def _chain_with(act, k, table, evidence, chains):
    """Chain ``k`` of the :class:`Chains` ``chains`` explaining the :class:`Evidence` ``evidence``
    by ``table``'s policies (a :class:`~simkit.engine.loop.Table`): ``states.shape[0] // chains``
    particles into ``states[k * n ..]``, its accepted and proposed swaps into ``moves[k]``
    (module docstring)."""
    owners = new_scratch()
    s, deck, rngs, mask, obs2, work, pwork, ev, ev_n, _, _ = borrow_scratch(owners)  # ev: no event log
    obs, template, root = borrowed(evidence.obs), borrowed(evidence.template), evidence.root
    evidence = Evidence(obs, template, root, evidence.noise)
    table = Table(borrowed(table.policy_ids), borrowed(table.params), borrowed(table.seat_of), borrowed(table.rules))
    burn, thin, states, logw, moves = chains
    play = InPlay(s, rngs, mask, obs2, work, pwork, ev, ev_n)
    per_chain = states.shape[0] // moves.shape[0]
    d = np.zeros(N_STATE, dtype=np.int64)
    cur = np.zeros(N_STATE, dtype=np.int64)
    cur_s = np.zeros(N_STATE, dtype=np.int64)
    scratch = ReplayScratch(deck, np.zeros(N_SEATS * N_TYPES, dtype=np.int64), np.zeros(MELD_TYPES, dtype=np.int64))
    chooser = np.zeros(4, dtype=np.uint64)
    stream_state(root, k, STREAM_BELIEF, chooser)
    me = obs[O_SEAT]
    seat_a = (me + 1) % N_SEATS
    seat_b = (me + 2) % N_SEATS
    stock_left = obs[O_STOCK_LEFT]
    stock_from = N_CARDS - stock_left
    lw = -math.inf
    for _ in range(MAX_STARTS):  # a start the history allows
        if not determinise(obs, chooser, d):
            break
        lw = _replay_with(act, table, evidence, k, play, d, scratch)
        if lw > -math.inf:
            break
    if lw == -math.inf:
        for j in range(per_chain):
            logw[k * per_chain + j] = -math.inf
        keep_alive(owners)
        return
    for x in range(N_STATE):
        cur[x] = d[x]
        cur_s[x] = s[x]
    sizes = np.zeros(3, dtype=np.int64)
    steps = burn + thin * per_chain
    saved = 0
    for step in range(1, steps + 1):
        sizes[0] = obs[O_NCONC + seat_a]
        sizes[1] = obs[O_NCONC + seat_b]
        sizes[2] = stock_left
        pair = next_below(chooser, 3)
        x = 0 if pair < 2 else 1
        y = 1 if pair == 0 else 2
        if sizes[x] > 0 and sizes[y] > 0:
            i = next_below(chooser, sizes[x])
            j = next_below(chooser, sizes[y])
            tx = _location_card(cur, x, seat_a if x == 0 else seat_b, i, stock_from)
            ty = _location_card(cur, y, seat_b if y == 1 else seat_a, j, stock_from)
            if tx != ty:
                moves[k, 1] += 1
                for z in range(N_STATE):
                    d[z] = cur[z]
                _put_card(d, x, seat_a if x == 0 else seat_b, i, stock_from, tx, ty)
                _put_card(d, y, seat_b if y == 1 else seat_a, j, stock_from, ty, tx)
                lw2 = _replay_with(act, table, evidence, k, play, d, scratch)
                if lw2 > -math.inf and next_below(chooser, UNIFORM_STEPS) < math.exp(min(0.0, lw2 - lw)) * UNIFORM_STEPS:
                    moves[k, 0] += 1
                    lw = lw2
                    for z in range(N_STATE):
                        cur[z] = d[z]
                        cur_s[z] = s[z]
        if step > burn and (step - burn) % thin == 0 and saved < per_chain:
            row = k * per_chain + saved
            for z in range(N_STATE):
                states[row, z] = cur_s[z]
            logw[row] = lw
            saved += 1
    keep_alive(owners)


_BUILTIN_ACT = static_function(builtin_act_state)
_FAST_ACT = static_function(fast_act_state)


@njit(cache=True, nogil=True)
def _chain(k, table, evidence, chains):
    """Chain ``k`` (:func:`_chain_with`, the built-in policies)."""
    _chain_with(_BUILTIN_ACT, k, table, evidence, chains)


@njit(cache=True, nogil=True)
def _chain_fast(k, table, evidence, chains):
    """:func:`_chain` for random / greedy / patient / expert tables (compiles without mc and learned)."""
    _chain_with(_FAST_ACT, k, table, evidence, chains)


def belief_table(policy_ids: np.ndarray, params: np.ndarray, rules: RuleSet) -> Table:
    """The :class:`~simkit.engine.loop.Table` of a belief's kernels: seat q plays ``policy_ids[q]``
    with ``params[q]``, under ``rules``."""
    return Table(np.ascontiguousarray(policy_ids, dtype=np.int64), np.ascontiguousarray(params, dtype=np.float64),
                 np.arange(N_SEATS, dtype=np.int64), rules.to_array())


@njit(cache=True, nogil=True)
def replay_weight(table, evidence, d, c, out):
    """The log likelihood of the hidden cards of one determinisation ``d`` (chain ``c``'s policy
    streams; ``table``: :func:`belief_table`, ``evidence``: an :class:`Evidence`), the particle
    written to ``out``: what the tests check against a plain replay."""
    owners = new_scratch()
    s, deck, rngs, mask, obs2, work, pwork, ev, ev_n, _, _ = borrow_scratch(owners)
    scratch = ReplayScratch(deck, np.zeros(N_SEATS * N_TYPES, dtype=np.int64), np.zeros(MELD_TYPES, dtype=np.int64))
    w = _replay_with(_BUILTIN_ACT, table, evidence, c, InPlay(s, rngs, mask, obs2, work, pwork, ev, ev_n), d, scratch)
    for x in range(N_STATE):
        out[x] = s[x]
    keep_alive(owners)
    return w


@dataclasses.dataclass(frozen=True)
class Belief:
    """Particles of the belief (:func:`belief_particles`): ``states`` (n x N_STATE, engine
    states at the position, equally weighted; rows of failed chains removed), their log
    weights, and the chains' ``accepted`` / ``proposed`` swaps."""

    states: np.ndarray
    logw: np.ndarray
    accepted: int
    proposed: int
    chains: int
    failed_chains: int

    @property
    def acceptance(self) -> float:
        return self.accepted / self.proposed if self.proposed else math.nan

    @property
    def distinct(self) -> int:
        """Distinct hidden-card assignments among the particles (the concealed hands and stock)."""
        hidden = np.concatenate([self.states[:, S_CONC : S_CONC + N_SEATS * N_TYPES],
                                 np.sort(self.states[:, S_DECK : S_DECK + N_CARDS], axis=1)], axis=1)
        return int(np.unique(hidden, axis=0).shape[0]) if hidden.size else 0


def belief_particles(obs: np.ndarray, template: np.ndarray, particles: int, seed: int, policy_ids: np.ndarray,
                     params: np.ndarray, rules: RuleSet, noise: float, workers: int = 1, chains: int = BELIEF_CHAINS,
                     burn: int = BELIEF_BURN, thin: int = BELIEF_THIN) -> Belief:
    """``particles`` draws (rounded up to a multiple of ``chains``) from the belief over the hidden
    cards of the position ``obs`` (an observation with its public history), the table's policies
    (one id and parameter row per seat) explaining the other seats' play: ``chains`` Metropolis
    chains of card swaps, ``burn`` steps each, then one particle every ``thin`` steps (module
    docstring).  ``template``: an engine state holding the position's exposed groups in the order
    they were laid (:meth:`simkit.engine.position.Position.state`); ``noise``: the chance, in
    [0, 1], that a seat plays any legal action instead of its policy's.  Checked by the caller
    (:func:`simkit.studies.analyze.analyze_position`); the same for any ``workers``."""
    per_chain = -(-int(particles) // int(chains))
    states = np.zeros((per_chain * int(chains), N_STATE), dtype=np.int64)
    logw = np.full(per_chain * int(chains), -np.inf, dtype=np.float64)
    moves = np.zeros((int(chains), 2), dtype=np.int64)
    evidence = Evidence(np.ascontiguousarray(obs, dtype=np.int64), np.ascontiguousarray(template, dtype=np.int64),
                        root_key(int(seed)), float(noise))
    table = belief_table(policy_ids, params, rules)
    calls = [(k, table, evidence, Chains(int(burn), int(thin), states, logw, moves)) for k in range(int(chains))]
    with NumbaThreads(workers):
        run_chunks(_chain_fast if uses_fast_policies(policy_ids) else _chain, calls)
    ok = np.isfinite(logw)
    failed = int(chains) - int(ok.reshape(int(chains), per_chain).any(axis=1).sum())
    return Belief(states=states[ok], logw=logw[ok], accepted=int(moves[:, 0].sum()), proposed=int(moves[:, 1].sum()),
                  chains=int(chains), failed_chains=failed)

"""Playing whole deals inside one compiled call, alone or in parallel batches: the loop that
asks the policies for every decision of the engine (so it sits above both, in the runner).

Seeding (:mod:`simkit.rng`): deal number N of a run with seed S draws from xoshiro streams
keyed by (S, N) only: stream 0 shuffles the deck (:func:`simkit.deck.deal_deck`), stream 1 + p
drives seat p's policy.  So a deal is a pure function of (rules, policies, S, N), whatever
batch, thread, process or machine plays it, and ``simkit replay`` can replay deal N alone.
:func:`play_decks` plays decks prepared elsewhere (deal N's policy streams, the same play loop),
e.g. the fixed-hand decks of ``simkit equity`` (:mod:`simkit.runner.equity`).

Sessions (docs/rules.md §8 ``next_dealer``): with session length K, deal N belongs to session
N // K at position N % K.  The first deal of a session is dealt by seat 0; the dealer of each
next deal follows from the previous deal's result: the winner deals, and after 穿牌 the next
seat (``winner_else_next``) or the same dealer (``winner_else_same``).  Seats keep their
policies across a session.  Seeding does not depend on K, so deal N has the same deck (and
the same policy streams) whatever K: only who deals it changes.  K = 1 is independent deals,
all dealt by seat 0.  A session is played in order on one numba thread; sessions (in chunks
of whole sessions) run in parallel.

Seating (``seating``: :data:`SEATING_FIXED`, :data:`SEATING_ROTATE`, :data:`SEATING_ALL`): the
run's policies are a list P0, P1, P2; under the seating j (a row of :data:`PERMUTATIONS`) seat
s plays P[PERMUTATIONS[j, s]].  Seatings 0, 1, 2 rotate: seat s plays P[(s + j) mod 3] (so
policy k sits at seat (k - j) mod 3: every policy moves one seat down per step); 3, 4, 5
reflect: seat s plays P[(j - s) mod 3].  ``fixed`` plays seating 0 (seat k plays Pk) in every
deal; ``rotate`` plays deal N under seating (N // K) mod 3 (K the session length: a session
keeps its seating, seats are players across it; K = 1: N mod 3); ``all`` plays every deal
six times, once per seating, as rows 6·i + j.  The permutation is applied per deal inside the
kernels (the deal loop hands seat s ``policy_ids[perm[s]]`` and the row ``params[perm[s]]``), so
the cards of deal N are unchanged, and the random streams stay keyed by seat: stream 1 + s of
(S, N) drives whichever policy sits at seat s.  A row is therefore exactly the deal N of a
fixed-seat run of the policies as seated (``simkit replay`` with those policies), rotating
equal policies changes nothing, and a row depends on (S, N, seating) only, never on batches,
workers or threads.

Policies: the play loop asks a policy dispatcher for every decision, a jitted function that
the generic kernels (``_play_*_with``) take as their first argument, so numba compiles them
once per dispatcher and calls the policies directly (no indirection).  The built-in kernels
(:data:`BUILTIN_KERNELS`) are module-level wrappers with
:func:`~simkit.policies.dispatch.builtin_act_state`, cached on disk; the kernels of user
``@njit`` policies come from the factory :func:`make_play_kernels` (closures over a
dispatcher that reaches them, :func:`make_user_act`), compiled in each process that plays
them (:func:`user_kernels`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, NamedTuple

import numpy as np
from numba import njit

from simkit.cards import N_CARDS, N_SEATS, N_TYPES
from simkit.deck import deal_counts_kernel, deal_deck
from simkit.jit import borrowed, is_cached, keep_alive, run_chunks, static_function
from simkit.engine import kernel as E
from simkit.engine.env import MAX_DECISIONS, DealError, deal_error_text, max_decisions_text
from simkit.engine.loop import (
    ERR_ILLEGAL_ACTION,
    ERR_MAX_DECISIONS,
    ERR_SEAT,
    ERR_UNKNOWN_POLICY,
    NO_SUCH_POLICY,
    InPlay,
    Table,
    decide_until_chance,
)
from simkit.engine.layout import (
    EVENT_WIDTH,
    MAX_MELDS,
    MELD_WIDTH,
    N_ACTIONS,
    N_OBS,
    N_STATE,
    PH_OVER,
    S_CLAIMS,
    S_CONC,
    S_DEALER,
    S_DRAWS,
    S_HU,
    S_LOU,
    S_MELDS,
    S_NMELDS,
    S_NOWIN,
    S_PATTERNS,
    S_PAYOFF,
    S_PHASE,
    S_PLAYER,
    S_STEPS,
    S_STOCK_POS,
    S_TURNS,
    S_UNITS,
    S_WIN_KIND,
    S_WINNER,
    S_XIANGGONG,
)
from simkit.policies.builtin import POLICY_WORK_SIZE
from simkit.policies.dispatch import (
    BUILTIN_POLICIES,
    basic_act_state,
    builtin_act_state,
    uses_basic_policies,
)
from simkit.policies.registry import USER_SLOT_BASE, PolicyError, builtin_policy_name, policy_source_digest
from simkit.rng import root_key, seat_stream, stream_state
from simkit.rules import RULE_NEXT_DEALER

# ---- result row of one deal
R_WINNER = 0
R_WIN_KIND = 1
R_HU = 2
R_LOU = 3
R_STEPS = 4
R_UNITS = 5
R_PATTERNS = 6
R_PAYOFF = 7  # N_SEATS
R_TURNS = R_PAYOFF + N_SEATS
R_DRAWS = R_TURNS + 1
R_CLAIMS = R_DRAWS + 1
R_STOCK_LEFT = R_CLAIMS + 1
R_XIANGGONG = R_STOCK_LEFT + 1  # N_SEATS
R_NOWIN = R_XIANGGONG + N_SEATS  # N_SEATS
R_DEALER = R_NOWIN + N_SEATS
R_ERROR = R_DEALER + 1  # 0, or why the deal stopped before its end: ERR_* + ERR_SEAT * (the seat to act)
R_DEALT = R_ERROR + 1  # N_SEATS x N_TYPES dealt counts
R_WIN_CONC = R_DEALT + N_SEATS * N_TYPES  # N_TYPES winner's final concealed counts
R_WIN_NMELDS = R_WIN_CONC + N_TYPES
R_WIN_MELDS = R_WIN_NMELDS + 1  # MAX_MELDS x MELD_WIDTH
N_RESULT = R_WIN_MELDS + MAX_MELDS * MELD_WIDTH

# ---- R_ERROR: a deal that stopped before its end (every deal loop; never a recorded result:
# check_rows raises DealError for it): ERR_* + ERR_SEAT * seat, simkit.engine.loop's codes.
ERROR_TEXTS = {ERR_ILLEGAL_ACTION: "returned an illegal action", ERR_UNKNOWN_POLICY: "has an unknown policy id"}

# ---- the random states of a deal's scratch (rngs[k], xoshiro256 states of RNG_WORDS words; the
# streams they are seeded from are simkit.rng's registry): seat p draws from rngs[p] (stream
# seat_stream(p) of (seed, deal)); rngs[DECK_RNG] (a row, not a stream) shuffles the deck with
# STREAM_CARDS
DECK_RNG = N_SEATS
N_RNGS = N_SEATS + 1
RNG_WORDS = 4

# ---- seatings (module docstring): seat s plays policy PERMUTATIONS[j, s] under seating j
SEATING_FIXED = 0
SEATING_ROTATE = 1
SEATING_ALL = 2
SEATING_CODES = {"fixed": SEATING_FIXED, "rotate": SEATING_ROTATE, "all": SEATING_ALL}
PERMUTATIONS = np.array([[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [1, 0, 2], [2, 1, 0]], dtype=np.int64)


def rows_per_deal(seating: int) -> int:
    """Result rows per deal: 6 under :data:`SEATING_ALL` (one per seating), else 1."""
    return 6 if seating == SEATING_ALL else 1


@njit(cache=True, nogil=True)
def seating_index(seating, deal, row_in_deal, session_length):
    """The row of :data:`PERMUTATIONS` deal number ``deal`` is played under: 0 for fixed
    seats, (deal // session_length) mod 3 for rotated ones, ``row_in_deal`` (0..5) for all."""
    if seating == SEATING_ROTATE:
        return (deal // session_length) % N_SEATS
    if seating == SEATING_ALL:
        return row_in_deal
    return 0


@njit(cache=True, nogil=True)
def _seat_policies(policy_ids, j, ids, seat_of):
    """The policies of seating j by seat: ``ids[s] = policy_ids[perm[s]]`` and ``seat_of[s] =
    perm[s]``, the row of the run's ``params`` seat s plays with (read in place, not copied:
    a ``learned`` policy's row holds its whole model)."""
    for s in range(N_SEATS):
        ids[s] = policy_ids[PERMUTATIONS[j, s]]
        seat_of[s] = PERMUTATIONS[j, s]


@njit(cache=True, nogil=True)
def record_result(s, deck, result):
    result[:] = 0
    w = s[S_WINNER]
    result[R_WINNER] = w
    result[R_WIN_KIND] = s[S_WIN_KIND]
    result[R_HU] = s[S_HU]
    result[R_LOU] = s[S_LOU]
    result[R_STEPS] = s[S_STEPS]
    result[R_UNITS] = s[S_UNITS]
    result[R_PATTERNS] = s[S_PATTERNS]
    result[R_TURNS] = s[S_TURNS]
    result[R_DRAWS] = s[S_DRAWS]
    result[R_CLAIMS] = s[S_CLAIMS]
    result[R_STOCK_LEFT] = N_CARDS - s[S_STOCK_POS]
    result[R_DEALER] = s[S_DEALER]
    for p in range(N_SEATS):
        result[R_PAYOFF + p] = s[S_PAYOFF + p]
        result[R_XIANGGONG + p] = s[S_XIANGGONG + p]
        result[R_NOWIN + p] = s[S_NOWIN + p]
    deal_counts_kernel(deck, s[S_DEALER], result[R_DEALT : R_DEALT + N_SEATS * N_TYPES])
    if w >= 0:
        for t in range(N_TYPES):
            result[R_WIN_CONC + t] = s[S_CONC + N_TYPES * w + t]
        n = s[S_NMELDS + w]
        result[R_WIN_NMELDS] = n
        for i in range(n * MELD_WIDTH):
            result[R_WIN_MELDS + i] = s[S_MELDS + w * MAX_MELDS * MELD_WIDTH + i]
    else:
        result[R_WIN_NMELDS] = 0



@njit(cache=True, nogil=True)
def new_scratch():
    """The scratch arrays of one chunk of deals: state, deck, the four random streams, legal
    mask, observation, engine and policy workspaces, an empty event log and its count, the
    seats' policy ids and their rows of the run's parameters."""
    return (np.zeros(N_STATE, dtype=np.int64), np.zeros(N_CARDS, dtype=np.int64),
            np.zeros((N_RNGS, RNG_WORDS), dtype=np.uint64),
            np.zeros(N_ACTIONS, dtype=np.bool_), np.zeros(N_OBS, dtype=np.int64),
            np.zeros(E.ENGINE_WORK_SIZE, dtype=np.int64), np.zeros(POLICY_WORK_SIZE, dtype=np.int64),
            np.zeros((0, EVENT_WIDTH), dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.zeros(N_SEATS, dtype=np.int64), np.zeros(N_SEATS, dtype=np.int64))


@njit(cache=True, nogil=True, inline="always")
def borrow_scratch(owners):
    """:func:`simkit.jit.borrowed` views of :func:`new_scratch`'s arrays: the chunk loops pass
    them down every call chain without reference counting; the chunk keeps ``owners`` alive
    (:func:`simkit.jit.keep_alive`) until its loop is over."""
    s, deck, rngs, mask, obs, work, pwork, ev, ev_n, ids, seat_of = owners
    return (borrowed(s), borrowed(deck), borrowed(rngs), borrowed(mask), borrowed(obs), borrowed(work),
            borrowed(pwork), borrowed(ev), borrowed(ev_n), borrowed(ids), borrowed(seat_of))


@njit(nogil=True, inline="always")
def _play_deck_with(act, root, deal, dealer, table, play, deck, result):
    """Play the prepared ``deck`` as deal number ``deal`` (the policies draw from the streams
    1 + p of (root, deal)), asking the policy dispatcher ``act`` for every decision; fill
    ``result``; seats and rules: ``table`` (:class:`~simkit.engine.loop.Table`), scratch: ``play`` (:class:`~simkit.engine.loop.InPlay`);
    a deal that stops before its end (an illegal action, an unknown policy id,
    :data:`MAX_DECISIONS` reached) is flagged in ``R_ERROR`` (``ERR_*``).  ``act`` is a jitted
    function passed as an argument
    (:class:`simkit.jit.static_function`; numba compiles this once per dispatcher):
    :func:`simkit.policies.dispatch.builtin_act_state` in the cached built-in kernels, a
    user dispatcher in those of :func:`make_play_kernels`."""
    s = play.s
    for p in range(N_SEATS):
        stream_state(root, deal, seat_stream(p), play.rngs[p])
    E.start(s, deck, dealer, table.rules, play.mask, play.work, play.ev, play.ev_n)
    E.new_deal_observation(play.obs)  # a new deal: observe rewrites every word once
    # the engine pauses before no draw here (E.start leaves work[EW_CHANCE] off): the loop runs to the end
    error, _ = decide_until_chance(act, table, play, 0)
    if error == 0 and s[S_PHASE] != PH_OVER:  # never: a deal not over is flagged, not recorded as one
        error = ERR_MAX_DECISIONS + ERR_SEAT * s[S_PLAYER]
    record_result(s, deck, result)
    result[R_ERROR] = error


@njit(nogil=True, inline="always")
def _play_deal_with(act, root, deal, dealer, table, play, deck, result):
    """Play deal number ``deal`` to the end: shuffle its deck (:func:`simkit.deck.deal_deck`),
    then play it (:func:`_play_deck_with`); fill ``result``.  Inlined into the deal kernel
    (``_play_deal``, the ``play_deal`` of :func:`make_play_kernels`), which the chunk kernels
    call."""
    deal_deck(root, deal, play.rngs[DECK_RNG], deck)
    _play_deck_with(act, root, deal, dealer, table, play, deck, result)


CHUNK = 256


class Deals(NamedTuple):
    """Which deals a batch plays (one kernel argument): deal numbers ``first_deal`` ..
    ``first_deal + n_deals - 1`` of the run keyed ``root`` (:func:`simkit.rng.root_key`), dealt
    by ``dealer`` (with ``session_length`` K > 1: the dealer of each session's first deal),
    under ``seating`` (:data:`SEATING_FIXED`, :data:`SEATING_ROTATE`, :data:`SEATING_ALL`).
    Build it with :func:`deals_of` (Python ints, so that every batch has the one kernel type)."""

    root: np.ndarray
    first_deal: int
    n_deals: int
    dealer: int
    seating: int
    session_length: int


class Lineup(NamedTuple):
    """The run's policies and rules (one kernel argument): ``policy_ids`` and ``params`` list
    the run's policies P0, P1, P2 (int64 ids, float64 parameter rows; seated per deal by its
    seating), ``rules`` the rule array."""

    policy_ids: np.ndarray
    params: np.ndarray
    rules: np.ndarray


def deals_of(root, first_deal: int, n_deals: int, dealer: int = 0, seating: int = SEATING_FIXED,
             session_length: int = 1) -> Deals:
    """:class:`Deals` with its numbers as Python ints (one kernel type whatever the caller's
    integers)."""
    return Deals(root, int(first_deal), int(n_deals), int(dealer), int(seating), int(session_length))


def lineup_of(policy_ids, params, rules) -> Lineup:
    """:class:`Lineup` with the arrays as the kernels take them (int64 ids, contiguous float64
    parameters)."""
    return Lineup(np.asarray(policy_ids, dtype=np.int64), np.ascontiguousarray(params, dtype=np.float64), rules)


@njit(nogil=True, inline="always")
def _play_decks_chunk_with(act, k, deals, decks, lineup, results):
    """Play chunk k (CHUNK deals) of prepared decks: decks[i] as deal ``deals.first_deal + i``
    (:class:`Deals`: its root and dealer; seats fixed), by the policies of ``lineup``
    (:class:`Lineup`)."""
    owners = new_scratch()
    s, deck, rngs, mask, obs, work, pwork, ev, ev_n, _, seat_of = borrow_scratch(owners)
    root, first_deal, _, dealer, _, _ = deals
    policy_ids, params, rules = lineup
    decks, results = borrowed(decks), borrowed(results)
    policy_ids, params, rules = borrowed(policy_ids), borrowed(params), borrowed(rules)
    for p in range(N_SEATS):
        seat_of[p] = p
    table = Table(policy_ids, params, seat_of, rules)
    play = InPlay(s, rngs, mask, obs, work, pwork, ev, ev_n)
    for i in range(k * CHUNK, min(decks.shape[0], (k + 1) * CHUNK)):
        deck[:] = decks[i]
        _play_deck_with(act, root, first_deal + i, dealer, table, play, deck, results[i])
    keep_alive(owners)


@njit(nogil=True, inline="always")
def _play_chunk_with(play_deal, k, deals, lineup, results):
    """Play chunk k (CHUNK rows: deals, or with seating all deal-seatings) of the batch
    ``deals`` (:class:`Deals`, independent deals) by the policies of ``lineup``
    (:class:`Lineup`) with one set of scratch arrays; each row under its seating
    (:func:`seating_index`), by the deal kernel ``play_deal`` (a
    :class:`~simkit.jit.static_function`)."""
    owners = new_scratch()
    s, deck, rngs, mask, obs, work, pwork, ev, ev_n, ids, seat_of = borrow_scratch(owners)
    root, first_deal, n_deals, dealer, seating, _ = deals
    policy_ids, params, rules = lineup
    policy_ids, params, rules, results = borrowed(policy_ids), borrowed(params), borrowed(rules), borrowed(results)
    per_deal = 6 if seating == SEATING_ALL else 1
    table = Table(ids, params, seat_of, rules)  # ids and seat_of are set per row, in place
    play = InPlay(s, rngs, mask, obs, work, pwork, ev, ev_n)
    for i in range(k * CHUNK, min(n_deals * per_deal, (k + 1) * CHUNK)):
        deal = first_deal + i // per_deal
        _seat_policies(policy_ids, seating_index(seating, deal, i % per_deal, 1), ids, seat_of)
        play_deal(root, deal, dealer, table, play, deck, results[i])
    keep_alive(owners)


@njit(cache=True, nogil=True)
def next_dealer(result, dealer, rules):
    """Dealer of the deal after one whose result row is ``result`` (docs/rules.md §8 next_dealer):
    the winner; after 穿牌 the next seat (winner_else_next, 0) or the same one (winner_else_same)."""
    w = result[R_WINNER]
    if w >= 0:
        return w
    if rules[RULE_NEXT_DEALER] == 0:
        return (dealer + 1) % N_SEATS
    return dealer



@njit(nogil=True, inline="always")
def _play_session_chunk_with(play_deal, k, deals, lineup, results):
    """Play chunk k of whole sessions of the batch ``deals`` (:class:`Deals`:
    ``max(1, CHUNK // session_length)`` sessions of ``session_length`` deals; ``first_deal``
    starts a session; the last session may be cut at ``n_deals``; ``dealer`` deals each
    session's first deal) with one set of scratch arrays, each session's deals in order: a
    deal's dealer needs the previous deal's winner.  With seating all, each session is played
    once per seating (deal i's row under seating j: 6·i + j).  ``play_deal``, ``lineup``: as
    :func:`_play_chunk_with`."""
    owners = new_scratch()
    s, deck, rngs, mask, obs, work, pwork, ev, ev_n, ids, seat_of = borrow_scratch(owners)
    root, first_deal, n_deals, first_dealer, seating, session_length = deals
    policy_ids, params, rules = lineup
    policy_ids, params, rules, results = borrowed(policy_ids), borrowed(params), borrowed(rules), borrowed(results)
    per_deal = 6 if seating == SEATING_ALL else 1
    span = max(1, CHUNK // session_length) * session_length
    table = Table(ids, params, seat_of, rules)  # ids and seat_of are set per row, in place
    play = InPlay(s, rngs, mask, obs, work, pwork, ev, ev_n)
    for j in range(per_deal):
        dealer = first_dealer
        for i in range(k * span, min(n_deals, (k + 1) * span)):
            if i % session_length == 0:
                dealer = first_dealer
            else:
                dealer = next_dealer(results[(i - 1) * per_deal + j], dealer, rules)
            deal = first_deal + i
            _seat_policies(policy_ids, seating_index(seating, deal, j, session_length), ids, seat_of)
            play_deal(root, deal, dealer, table, play, deck, results[i * per_deal + j])
    keep_alive(owners)


# ---- the chunks of a batch, run on numba.get_num_threads() Python threads (simkit.jit.run_chunks):
# not njit(parallel=True), whose prange loop compiles everything it calls twice more (the loop
# body as a gufunc, then the kernel), about a fifth of a cold ``simkit demo``; the chunks, and
# so the rows, are the same whatever the threads (each deal depends on (seed, deal) only).


def _batch_runner(chunk: Callable) -> Callable:
    def play_batch(deals, lineup, results):
        """Chunks of the independent deals ``deals`` (:class:`Deals`) on numba threads."""
        n_rows = deals.n_deals * rows_per_deal(deals.seating)
        run_chunks(chunk, [(k, deals, lineup, results) for k in range((n_rows + CHUNK - 1) // CHUNK)])

    return play_batch


def _sessions_runner(chunk: Callable) -> Callable:
    def play_sessions(deals, lineup, results):
        """Chunks of whole sessions of ``deals`` (:class:`Deals`) on numba threads."""
        span = max(1, CHUNK // deals.session_length) * deals.session_length
        run_chunks(chunk, [(k, deals, lineup, results) for k in range((deals.n_deals + span - 1) // span)])

    return play_sessions


def _decks_runner(chunk: Callable) -> Callable:
    def play_decks(deals, decks, lineup, results):
        """Chunks of prepared decks on numba threads (``deals``: their root, first deal number
        and dealer)."""
        run_chunks(chunk, [(k, deals, decks, lineup, results) for k in range((decks.shape[0] + CHUNK - 1) // CHUNK)])

    return play_decks


class PlayKernels(NamedTuple):
    """The kernels of one policy dispatcher: ``play_deal`` (one deal, compiled), and
    ``play_batch``, ``play_sessions``, ``play_decks`` (Python functions running compiled
    chunk kernels on numba threads)."""

    play_deal: Callable
    play_batch: Callable
    play_sessions: Callable
    play_decks: Callable


# ---- the built-in kernels: the generic kernels above with the built-in dispatcher, cached on disk

_BUILTIN_ACT = static_function(builtin_act_state)


@njit(cache=True, nogil=True)
def _play_deal(root, deal, dealer, table, play, deck, result):
    _play_deal_with(_BUILTIN_ACT, root, deal, dealer, table, play, deck, result)


_BUILTIN_DEAL = static_function(_play_deal)


@njit(cache=True, nogil=True)
def _play_chunk(k, deals, lineup, results):
    _play_chunk_with(_BUILTIN_DEAL, k, deals, lineup, results)


@njit(cache=True, nogil=True)
def _play_session_chunk(k, deals, lineup, results):
    _play_session_chunk_with(_BUILTIN_DEAL, k, deals, lineup, results)


@njit(cache=True, nogil=True)
def _play_decks_chunk(k, deals, decks, lineup, results):
    _play_decks_chunk_with(_BUILTIN_ACT, k, deals, decks, lineup, results)


BUILTIN_KERNELS = PlayKernels(_play_deal, _batch_runner(_play_chunk), _sessions_runner(_play_session_chunk),
                              _decks_runner(_play_decks_chunk))


# ---- the same kernels with the switch of random / greedy / patient only
# (:func:`~simkit.policies.dispatch.basic_act_state`): runs without mc or expert compile these,
# without the two largest policies.  Cached wrappers at module level, like the four above
# (numba caches no closure).

_BASIC_ACT = static_function(basic_act_state)


@njit(cache=True, nogil=True)
def _play_deal_basic(root, deal, dealer, table, play, deck, result):
    _play_deal_with(_BASIC_ACT, root, deal, dealer, table, play, deck, result)


_BASIC_DEAL = static_function(_play_deal_basic)


@njit(cache=True, nogil=True)
def _play_chunk_basic(k, deals, lineup, results):
    _play_chunk_with(_BASIC_DEAL, k, deals, lineup, results)


@njit(cache=True, nogil=True)
def _play_session_chunk_basic(k, deals, lineup, results):
    _play_session_chunk_with(_BASIC_DEAL, k, deals, lineup, results)


@njit(cache=True, nogil=True)
def _play_decks_chunk_basic(k, deals, decks, lineup, results):
    _play_decks_chunk_with(_BASIC_ACT, k, deals, decks, lineup, results)


BASIC_KERNELS = PlayKernels(_play_deal_basic, _batch_runner(_play_chunk_basic),
                            _sessions_runner(_play_session_chunk_basic), _decks_runner(_play_decks_chunk_basic))


# ---- kernels of user policies: built by a factory that takes the dispatcher


@njit(cache=True, nogil=True)
def _empty_user_slot(obs, mask, params, rng, rules, work):
    return -1  # never called: the dispatcher answers NO_SUCH_POLICY for an empty slot


def make_user_act(user_functions: tuple, basic: bool = False) -> Callable:
    """Policy dispatcher for a run with user policies (one optional ``@njit`` function per
    slot, called for the policy ids ``USER_SLOT_BASE + slot``,
    :func:`~simkit.policies.registry.policy_arrays`; built-in ids go to
    :func:`~simkit.policies.dispatch.builtin_act_state`, or with ``basic`` (the run's
    built-in policies are random / greedy / patient only) to
    :func:`~simkit.policies.dispatch.basic_act_state`, which compiles without mc and expert).
    A closure over the functions: a user policy gets player p's observation
    (:func:`simkit.engine.kernel.observe`)."""
    f0, f1, f2 = (fn if fn is not None else _empty_user_slot for fn in user_functions)
    has0, has1, has2 = (fn is not None for fn in user_functions)  # frozen into the closure
    builtin = basic_act_state if basic else builtin_act_state

    @njit(nogil=True)
    def act(policy_id, s, obs, mask, params, rng, rules, work):
        if policy_id < USER_SLOT_BASE:
            return builtin(policy_id, s, obs, mask, params, rng, rules, work)
        p = s[S_PLAYER]
        if policy_id == USER_SLOT_BASE and has0:
            E.observe(s, p, obs)
            action = f0(obs, mask, params, rng, rules, work)
        elif policy_id == USER_SLOT_BASE + 1 and has1:
            E.observe(s, p, obs)
            action = f1(obs, mask, params, rng, rules, work)
        elif policy_id == USER_SLOT_BASE + 2 and has2:
            E.observe(s, p, obs)
            action = f2(obs, mask, params, rng, rules, work)
        else:
            return NO_SUCH_POLICY
        return action if action >= 0 else -1  # a negative choice is illegal, never NO_SUCH_POLICY

    return act


def make_play_kernels(act: Callable) -> PlayKernels:
    """The kernels of the policy dispatcher ``act`` (an ``@njit`` function with the signature
    of :func:`~simkit.policies.dispatch.builtin_act_state`), built as closures over it: the
    numba way to specialise jitted code on a function (a jitted function called from a
    closure is frozen into it, as a global would be), with the same generic kernels
    (``_play_*_with``) as the built-in ones and so the same rows.

    Compiled in each process, never cached on disk: numba keys a closure's cache entry on a
    pickle of its cell contents, and a dispatcher pickles with a random per-process id (its
    ``uuid``), so a cache entry would never be found again in another process while every
    process added one to the index (and all closures of this factory share one index file,
    keyed by name and line).  :func:`user_kernels` keeps the kernels of the last few user
    policies of this process, keyed by their source digests."""
    act = static_function(act)

    @njit(nogil=True)
    def play_deal(root, deal, dealer, table, play, deck, result):
        _play_deal_with(act, root, deal, dealer, table, play, deck, result)

    deal = static_function(play_deal)

    @njit(nogil=True)
    def play_chunk(k, deals, lineup, results):
        _play_chunk_with(deal, k, deals, lineup, results)

    @njit(nogil=True)
    def play_session_chunk(k, deals, lineup, results):
        _play_session_chunk_with(deal, k, deals, lineup, results)

    @njit(nogil=True)
    def play_decks_chunk(k, deals, decks, lineup, results):
        _play_decks_chunk_with(act, k, deals, decks, lineup, results)

    return PlayKernels(play_deal, _batch_runner(play_chunk), _sessions_runner(play_session_chunk),
                       _decks_runner(play_decks_chunk))


USER_KERNELS_KEPT = 8  # user_kernels keeps the kernels of this many user-policy combinations
_USER_KERNELS: OrderedDict[tuple, PlayKernels] = OrderedDict()
_USER_KERNELS_LOCK = threading.Lock()


def user_kernels(user_functions: tuple, basic: bool = False) -> PlayKernels | None:
    """None for built-in policies only; else the kernels of :func:`make_play_kernels` for a
    dispatcher reaching the user policies (:func:`make_user_act`; ``basic``: the other
    policies are random / greedy / patient only).  Kept for the last
    :data:`USER_KERNELS_KEPT` combinations, keyed by each seat's
    :func:`~simkit.policies.registry.policy_source_digest` (not the function object: an
    edited, re-imported policy gets new kernels, an unchanged one keeps its kernels)."""
    if all(fn is None for fn in user_functions):
        return None
    key = (bool(basic),) + tuple(None if fn is None else policy_source_digest(fn) for fn in user_functions)
    with _USER_KERNELS_LOCK:
        kernels = _USER_KERNELS.get(key)
        if kernels is not None:
            _USER_KERNELS.move_to_end(key)
            return kernels
        kernels = make_play_kernels(make_user_act(tuple(user_functions), bool(basic)))
        _USER_KERNELS[key] = kernels
        while len(_USER_KERNELS) > USER_KERNELS_KEPT:
            _USER_KERNELS.popitem(last=False)
        return kernels


def kernels_for(user_functions: tuple = (None, None, None), policy_ids=None) -> PlayKernels:
    """The kernels that play with these user functions by seat; when there are none,
    :data:`BASIC_KERNELS` if every policy id is random / greedy / patient, else
    :data:`BUILTIN_KERNELS` (the same rows: only what gets compiled differs).  User kernels
    likewise use the basic switch when the run's built-in policies are random / greedy /
    patient only."""
    builtin_ids = [] if policy_ids is None else [i for i in policy_ids if int(i) < USER_SLOT_BASE]
    basic = policy_ids is not None and uses_basic_policies(builtin_ids)
    kernels = user_kernels(tuple(user_functions), basic)
    if kernels is not None:
        return kernels
    return BASIC_KERNELS if basic else BUILTIN_KERNELS


def check_policy_ids(policy_ids, user_functions: tuple = (None, None, None)) -> np.ndarray:
    """``policy_ids`` as the kernels take them (int64, one per seat), each a built-in policy's
    id (:data:`~simkit.policies.dispatch.BUILTIN_POLICIES`) or ``USER_SLOT_BASE + k`` of a
    user function given in slot k; a one-line :class:`~simkit.policies.registry.PolicyError`
    otherwise, before any kernel runs (the kernels would stop every deal on it)."""
    ids = np.asarray(policy_ids, dtype=np.int64)
    if ids.shape != (N_SEATS,):
        raise PolicyError(f"policy_ids must hold {N_SEATS} ids (one per policy), got shape {ids.shape}")
    for k, i in enumerate(ids.tolist()):
        slot = i - USER_SLOT_BASE
        if i in BUILTIN_POLICIES or (0 <= slot < len(user_functions) and user_functions[slot] is not None):
            continue
        raise PolicyError(f"policy {k}: unknown policy id {i} (built-in ids {list(BUILTIN_POLICIES)}, user "
                          f"policies {USER_SLOT_BASE} + their slot in user_functions)")
    return ids


def policy_labels(policy_ids, user_functions: tuple = (None, None, None)) -> list[str]:
    """A name per policy id, for messages: the built-in policy's name, a user function's
    name, or ``id N``."""
    labels = []
    for i in np.asarray(policy_ids).tolist():
        slot = i - USER_SLOT_BASE
        if 0 <= slot < len(user_functions) and user_functions[slot] is not None:
            fn = user_functions[slot]
            labels.append(getattr(getattr(fn, "py_func", fn), "__name__", f"user policy {slot}"))
        else:
            labels.append(builtin_policy_name(i) or f"id {i}")
    return labels


def check_rows(rows: np.ndarray, seed: int, policies, first_deal: int = 0, seating: int = SEATING_FIXED,
               session_length: int = 1) -> np.ndarray:
    """``rows`` when no deal of them stopped before its end; else a one-line
    :class:`~simkit.engine.env.DealError` naming the first such deal, the seed, the policies by
    seat and why (``R_ERROR``): a deal with an illegal action, an unknown policy id or
    :data:`MAX_DECISIONS` decisions is never a result.  ``policies``: the run's policies P0, P1,
    P2 (texts), seated as :func:`play_deals` seats them (``first_deal``, ``seating``,
    ``session_length`` as given there)."""
    bad = np.flatnonzero(rows[:, R_ERROR])
    if bad.size == 0:
        return rows
    per_deal = rows_per_deal(seating)
    i = int(bad[0])
    deal = int(first_deal) + i // per_deal
    j = int(seating_index(int(seating), deal, i % per_deal, int(session_length)))
    seated = [str(policies[int(PERMUTATIONS[j, s])]) for s in range(N_SEATS)]
    code, seat = int(rows[i, R_ERROR]) % ERR_SEAT, int(rows[i, R_ERROR]) // ERR_SEAT
    if code == ERR_MAX_DECISIONS:
        why = max_decisions_text(MAX_DECISIONS)
    else:
        why = f"seat {seat} ({seated[seat] if 0 <= seat < N_SEATS else '?'}) {ERROR_TEXTS.get(code, 'failed')}"
    more = f" ({bad.size} deals of these {rows.shape[0] // per_deal} stopped)" if bad.size > 1 else ""
    raise DealError(deal_error_text(seed, deal, seated, why) + more)


def play_deals(
    n_deals: int,
    seed: int,
    policy_ids: np.ndarray,
    params: np.ndarray,
    rules_array: np.ndarray,
    first_deal: int = 0,
    dealer: int = 0,
    user_functions: tuple = (None, None, None),
    session_length: int = 1,
    seating: int = SEATING_FIXED,
    check: bool = True,
    policies=None,
) -> np.ndarray:
    """Result rows (n_deals · rows per deal, N_RESULT) of deals first_deal .. first_deal + n_deals - 1.

    ``policy_ids`` are checked before any kernel runs (:func:`check_policy_ids`).  A deal that
    stops before its end is a one-line :class:`~simkit.engine.env.DealError`
    (:func:`check_rows`; ``policies``: the names it gives, by default from the ids); only with
    ``check`` False are its rows returned, flagged in ``R_ERROR``.

    ``session_length`` K = 1: independent deals, each dealt by ``dealer``.  K > 1: deals in
    sessions of K (``first_deal`` must start one, i.e. be a multiple of K; the last session is
    cut at ``n_deals``); the first deal of a session is dealt by ``dealer``, the next ones by
    the rule option ``next_dealer`` (result column ``R_DEALER``).  ``seating`` (module
    docstring): ``policy_ids`` and ``params`` list the run's policies P0, P1, P2, which sit at
    seat s as P[PERMUTATIONS[j, s]] in a row of seating j; :data:`SEATING_ALL` gives 6 rows per
    deal (deal i's under seating j is row 6·i + j)."""
    session_length = int(session_length)
    if session_length < 1:
        raise ValueError(f"session_length must be >= 1, got {session_length}")
    if first_deal % session_length:
        raise ValueError(f"first_deal {first_deal} does not start a session of {session_length} deals")
    seating = int(seating)
    if seating not in (SEATING_FIXED, SEATING_ROTATE, SEATING_ALL):
        raise ValueError(f"seating must be one of {sorted(SEATING_CODES.values())}, got {seating}")
    results = np.zeros((n_deals * rows_per_deal(seating), N_RESULT), dtype=np.int64)
    ids = check_policy_ids(policy_ids, user_functions)
    kernels = kernels_for(user_functions, ids)
    deals = deals_of(root_key(seed), first_deal, n_deals, dealer, seating, session_length)
    play = kernels.play_batch if session_length == 1 else kernels.play_sessions
    play(deals, lineup_of(ids, params, rules_array), results)
    if check:
        check_rows(results, seed, policy_labels(ids, user_functions) if policies is None else policies, first_deal,
                   seating, session_length)
    return results


def play_decks(
    decks: np.ndarray,
    seed: int,
    policy_ids: np.ndarray,
    params: np.ndarray,
    rules_array: np.ndarray,
    first_deal: int = 0,
    dealer: int = 0,
    user_functions: tuple = (None, None, None),
    check: bool = True,
    policies=None,
) -> np.ndarray:
    """Result rows (n, N_RESULT) of prepared decks (n, N_CARDS): ``decks[i]`` is played as deal
    number ``first_deal + i`` of ``seed`` (the policies draw from that deal's streams), dealt
    by ``dealer``.  With ``decks[i]`` the deck of :func:`simkit.deck.deal_deck` the row is
    exactly :func:`play_deals`'s; other deck sources (a fixed hand, :mod:`simkit.runner.equity`)
    reuse the same play loop.  ``check``, ``policies``: as :func:`play_deals`."""
    decks = np.ascontiguousarray(decks, dtype=np.int64)
    if decks.ndim != 2 or decks.shape[1] != N_CARDS:
        raise ValueError(f"decks must have shape (n, {N_CARDS}), got {decks.shape}")
    results = np.zeros((decks.shape[0], N_RESULT), dtype=np.int64)
    ids = check_policy_ids(policy_ids, user_functions)
    kernels_for(user_functions, ids).play_decks(deals_of(root_key(seed), first_deal, decks.shape[0], dealer), decks,
                                                lineup_of(ids, params, rules_array), results)
    if check:
        check_rows(results, seed, policy_labels(ids, user_functions) if policies is None else policies,
                   int(first_deal))
    return results


def session_dealer(
    seed: int,
    deal: int,
    lineup: Lineup,
    session_length: int,
    user_functions: tuple = (None, None, None),
    first_dealer: int = 0,
    policies=None,
) -> int:
    """Who deals deal number ``deal`` in sessions of ``session_length``: plays the session's
    earlier deals (no event logs) and applies ``next_dealer`` to the last of them.  The
    policies (``lineup``, a :class:`Lineup` of policy ids, parameter rows and the rule array)
    are by seat (a session keeps its seating: pass them as seated; ``policies``: their names
    for a :class:`~simkit.engine.env.DealError`, as :func:`play_deals`)."""
    policy_ids, params, rules_array = lineup
    session_length = int(session_length)
    if session_length < 1:
        raise ValueError(f"session_length must be >= 1, got {session_length}")
    start = deal - deal % session_length
    if start == deal:
        return int(first_dealer)
    rows = play_deals(deal - start, seed, policy_ids, params, rules_array, first_deal=start, dealer=first_dealer,
                      user_functions=user_functions, session_length=session_length, policies=policies)
    return int(next_dealer(rows[-1], int(rows[-1, R_DEALER]), rules_array))


def deal_kernels_cached(deal: int, policy_ids, session_length: int = 1,
                        user_functions: tuple = (None, None, None)) -> bool:
    """Whether :func:`play_one` (and, for a deal inside a session, :func:`session_dealer`) would
    load its compiled kernels from numba's cache rather than compile them: built-in policies
    only (user kernels are compiled in each process) and the cached builds present
    (:func:`simkit.jit.is_cached`).  ``simkit replay`` interprets the deal otherwise."""
    if any(fn is not None for fn in user_functions):
        return False
    basic = uses_basic_policies(policy_ids)
    kernels = [_play_deal_basic if basic else _play_deal]
    if session_length > 1 and deal % session_length:
        kernels.append(_play_session_chunk_basic if basic else _play_session_chunk)
    return all(is_cached(kernel) for kernel in kernels)


def play_one(
    seed: int,
    deal: int,
    policy_ids: np.ndarray,
    params: np.ndarray,
    rules_array: np.ndarray,
    dealer: int = 0,
    user_functions: tuple = (None, None, None),
    event_capacity: int = 8192,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Play one deal with its event log: (final state, deck, events, result row).  The row's
    ``R_ERROR`` says whether the deal stopped before its end (:func:`check_rows` raises for it)."""
    policy_ids = check_policy_ids(policy_ids, user_functions)
    kernels = kernels_for(user_functions, policy_ids)
    s = np.zeros(N_STATE, dtype=np.int64)
    deck = np.zeros(N_CARDS, dtype=np.int64)
    rngs = np.zeros((N_RNGS, RNG_WORDS), dtype=np.uint64)
    mask = np.zeros(N_ACTIONS, dtype=np.bool_)
    obs = np.zeros(N_OBS, dtype=np.int64)
    ev = np.zeros((event_capacity, EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    result = np.zeros(N_RESULT, dtype=np.int64)
    table = Table(np.asarray(policy_ids, dtype=np.int64), np.ascontiguousarray(params, dtype=np.float64),
                  np.arange(N_SEATS, dtype=np.int64), rules_array)
    play = InPlay(s, rngs, mask, obs, E.new_engine_workspace(), np.zeros(POLICY_WORK_SIZE, dtype=np.int64), ev, ev_n)
    kernels.play_deal(root_key(seed), deal, dealer, table, play, deck, result)
    return s, deck, ev[: ev_n[0]].copy(), result

"""Rollouts of a position: every candidate action played out over the same determinisations.

Determinisation ``r`` of a run with seed ``S`` is a pure function of ``(S, r)``: the hidden
cards (the other concealed hands and the stock order) are dealt from the unseen ones by
:func:`simkit.policies.mc.determinise` with the random stream ``(S, r, 0)``, and the rollout
policies draw from the streams ``(S, r, 1 + seat)``.  Every candidate action is applied to the
same determinisation and played out with the same streams (common random numbers), so the
differences between actions are paired; and any split of the determinisations over threads
gives the same numbers.

With a value model (:mod:`simkit.runner.value_model`) each rollout also carries the luck of
the player's draws (:func:`simkit.runner.luck.draw_luck`, mean zero for any model): payoff
minus luck estimates the same expectation with less variance when the model is good.

Each rollout gives one row of :data:`N_ROLLOUT_OUT` numbers (``OUT_*``): the player's payoff
(牌), whether it won, whether another seat won, the units of its win (0 otherwise), its luck,
and the error code of a rollout that stopped before its end (0).

From a *known* state (``known``: the whole engine state, every hand as it is, as a replay log
records it) a rollout keeps every hand and resamples only the order of the stock's remaining
cards, with the same stream ``(S, r, STREAM_CARDS)``: no policy sees the stock, so given
everything dealt and played so far its order is uniform, and these rollouts estimate the
action values of the true state (the review's losses against a reference,
:mod:`simkit.studies.review`).  The candidate :data:`POLICY_DECIDES` applies no action: the
seat's own policy decides, giving the state's value under the table's policies.  Several known
states (the particles of a belief, :mod:`simkit.runner.belief`) with cumulative weights: rollout
``r`` plays from the particle a uniform of the stream ``(S, r, STREAM_BELIEF_PICK)`` picks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numba
import numpy as np
from numba import njit

from simkit.cards import N_CARDS, N_SEATS
from simkit.deck import shuffle_kernel
from simkit.engine import kernel as E
from simkit.engine.loop import ERR_SEAT, InPlay, Table
from simkit.engine.layout import (
    N_ACTIONS,
    N_STATE,
    O_SEAT,
    S_DECK,
    S_PAYOFF,
    S_STOCK_POS,
    S_UNITS,
    S_WINNER,
)
from simkit.jit import borrowed, keep_alive, run_chunks, static_function
from simkit.policies.dispatch import (
    builtin_act_state,
    expert_act_state,
    fast_act_state,
    uses_expert_only,
    uses_fast_policies,
)
from simkit.policies.mc import determinise, sharpen_hand
from simkit.policies.registry import PolicyError, PolicySpec, policy_arrays
from simkit.rng import STREAM_BELIEF_PICK, STREAM_CARDS, next_below, root_key, seat_stream, stream_state
from simkit.rules import RuleSet
from simkit.runner.luck import (
    NETWORK_DRAW,
    Chance,
    N_VALUE_FEATURES,
    new_luck_scratch,
    play_out,
)
from simkit.runner.play import (
    DECK_RNG,
    borrow_scratch,
    new_scratch,
)

OUT_PAYOFF = 0  # the player's payoff (牌)
OUT_WIN = 1  # 1: the player won
OUT_LOSS = 2  # 1: another seat won
OUT_UNITS = 3  # the units of the player's win (0 when it did not win)
OUT_LUCK = 4  # the luck of the draws for the player (0 without a value model)
OUT_ERROR = 5  # 0, or why the rollout stopped early (ERR_* + ERR_SEAT * seat; -1: no determinisation)
N_ROLLOUT_OUT = 6
NO_DETERMINISATION = -1
POLICY_DECIDES = -1  # a candidate that applies no action: the seat's policy decides (the state's value)
ROLLOUT_CHUNK = 8  # determinisations per call of the chunk kernel (the threads' unit of work)
UNIFORM_STEPS = 1 << 53  # a uniform in [0, 1) is next_below(UNIFORM_STEPS) / UNIFORM_STEPS


class Rollouts(NamedTuple):
    """The rollouts of one position (one kernel argument, the same for every chunk; the table's
    policies and rules come apart, a :class:`~simkit.engine.loop.Table`): the observation ``obs``
    of the player to act; the ``known`` states (P x N_STATE, P = 0: none) whose stock order alone
    is resampled and their cumulative weights ``cum`` (P); the candidate actions ``cands`` and
    which are ``alive``; determinisations ``first .. first + count - 1`` of the streams under
    ``root``; the value model's ``block`` (size 0: no luck); ``sharpen`` hill-climbing steps per
    other hand; ``out`` (candidates x count x N_ROLLOUT_OUT) the rows written."""

    obs: np.ndarray
    known: np.ndarray
    cum: np.ndarray
    cands: np.ndarray
    alive: np.ndarray
    first: int
    count: int
    root: np.ndarray
    block: np.ndarray
    sharpen: int
    out: np.ndarray


@njit(nogil=True, inline="always")
def _rollouts_with(act, draw, k, table, job):
    """Determinisations ``job.first + k * ROLLOUT_CHUNK ..`` (at most ROLLOUT_CHUNK, below
    ``first + count``) of the :class:`Rollouts` ``job``, played by ``table``'s policies (a
    :class:`~simkit.engine.loop.Table`): fill ``out[i, r - first]`` for every alive candidate i.
    ``sharpen`` > 0: that many hill-climbing steps make each other hand closer to complete (mc's
    opponent model).  ``known`` (P x N_STATE, P = 0: none): states whose stock order alone is
    resampled, the true one (P = 1) or belief particles drawn by the cumulative weights ``cum``.
    ``draw``: the chance step under a value model (``block`` not empty), :data:`NETWORK_DRAW`; or
    :data:`_NO_DRAW` for kernels only called without one (they compile without its code)."""
    owners = new_scratch()
    s, deck, rngs, mask, obs2, work, pwork, ev, ev_n, _, _ = borrow_scratch(owners)
    obs, cands, alive, block = borrowed(job.obs), borrowed(job.cands), borrowed(job.alive), borrowed(job.block)
    known, cum, out = job.known, job.cum, job.out
    first, count, root, sharpen = job.first, job.count, job.root, job.sharpen
    rules = borrowed(table.rules)
    tab = new_luck_scratch()
    luck = np.zeros(N_SEATS, dtype=np.float64)
    no_rows = np.zeros((0, N_VALUE_FEATURES + 1), dtype=np.float64)
    no_count = np.zeros(1, dtype=np.int64)
    d = np.zeros(N_STATE, dtype=np.int64)
    me = obs[O_SEAT]
    table = Table(borrowed(table.policy_ids), borrowed(table.params), borrowed(table.seat_of), rules)
    play = InPlay(s, rngs, mask, obs2, work, pwork, ev, ev_n)
    chance = Chance(tab, block, luck, no_rows, no_count)
    lo = k * ROLLOUT_CHUNK
    for j in range(lo, min(count, lo + ROLLOUT_CHUNK)):
        r = first + j
        stream_state(root, r, STREAM_CARDS, rngs[DECK_RNG])
        if known.shape[0] > 0:
            pick = 0
            if known.shape[0] > 1:
                stream_state(root, r, STREAM_BELIEF_PICK, rngs[DECK_RNG])
                u = next_below(rngs[DECK_RNG], UNIFORM_STEPS) / UNIFORM_STEPS
                pick = min(np.searchsorted(cum, u, side="right"), known.shape[0] - 1)
                stream_state(root, r, STREAM_CARDS, rngs[DECK_RNG])
            for x in range(N_STATE):
                d[x] = known[pick, x]
            shuffle_kernel(rngs[DECK_RNG], d[S_DECK + d[S_STOCK_POS] : S_DECK + N_CARDS])
            found = True
        else:
            found = determinise(obs, rngs[DECK_RNG], d)
        if found and sharpen > 0 and known.shape[0] == 0:
            for p in range(N_SEATS):
                if p != me:
                    sharpen_hand(d, p, rngs[DECK_RNG], sharpen)
        for i in range(cands.shape[0]):
            if not alive[i]:
                continue
            row = out[i, j]
            for c in range(N_ROLLOUT_OUT):
                row[c] = 0.0
            if not found:
                row[OUT_ERROR] = NO_DETERMINISATION
                continue
            for x in range(N_STATE):  # not a slice copy (see simkit.engine.kernel._claim_keeps_playable)
                s[x] = d[x]
            E.legal_mask(s, rules, mask, work)
            a = cands[i]
            if a != POLICY_DECIDES and (a < 0 or a >= N_ACTIONS or not mask[a]):
                row[OUT_ERROR] = ERR_SEAT * me + 1  # the candidate is not legal here
                continue
            for p in range(N_SEATS):
                stream_state(root, r, seat_stream(p), rngs[p])
                luck[p] = 0.0
            work[E.EW_CHANCE] = E.CHANCE_PAUSE if block.size > 0 else E.CHANCE_OFF
            E.new_deal_observation(obs2)
            if a != POLICY_DECIDES:
                E.apply_legal(s, a, rules, mask, work, ev, ev_n)
            error = play_out(act, draw, table, play, chance)
            winner = s[S_WINNER]
            row[OUT_PAYOFF] = s[S_PAYOFF + me]
            row[OUT_WIN] = 1.0 if winner == me else 0.0
            row[OUT_LOSS] = 1.0 if winner >= 0 and winner != me else 0.0
            row[OUT_UNITS] = s[S_UNITS] if winner == me else 0.0
            row[OUT_LUCK] = luck[me]
            row[OUT_ERROR] = error
    keep_alive(owners)


_BUILTIN_ACT = static_function(builtin_act_state)
_FAST_ACT = static_function(fast_act_state)


@njit(nogil=True)
def _no_draw(act, table, play, chance):
    """The chance step of rollouts without a value model: never called (the engine pauses before
    a draw only under one), so that their kernels compile without the value model's code."""
    return 0


_NO_DRAW = static_function(_no_draw)
_EXPERT_ACT = static_function(expert_act_state)


@njit(cache=True, nogil=True)
def _rollout_chunk(k, table, job):
    """Chunk k of the :class:`Rollouts` ``job`` played by ``table``
    (:func:`_rollouts_with`, the built-in policies)."""
    _rollouts_with(_BUILTIN_ACT, NETWORK_DRAW, k, table, job)


@njit(cache=True, nogil=True)
def _rollout_chunk_fast(k, table, job):
    """:func:`_rollout_chunk` for rollouts by random / greedy / patient / expert (compiles without mc and
    learned)."""
    _rollouts_with(_FAST_ACT, NETWORK_DRAW, k, table, job)


@njit(cache=True, nogil=True)
def _rollout_chunk_plain(k, table, job):
    """:func:`_rollout_chunk` without a value model (``job.block`` empty): compiles without its
    code, over half of a rollout kernel's compile time."""
    _rollouts_with(_BUILTIN_ACT, _NO_DRAW, k, table, job)


@njit(cache=True, nogil=True)
def _rollout_chunk_fast_plain(k, table, job):
    """:func:`_rollout_chunk_fast` without a value model (``job.block`` empty)."""
    _rollouts_with(_FAST_ACT, _NO_DRAW, k, table, job)


@njit(cache=True, nogil=True)
def _rollout_chunk_expert(k, table, job):
    """:func:`_rollout_chunk` for rollouts by expert alone (compiles expert only)."""
    _rollouts_with(_EXPERT_ACT, NETWORK_DRAW, k, table, job)


@njit(cache=True, nogil=True)
def _rollout_chunk_expert_plain(k, table, job):
    """:func:`_rollout_chunk_expert` without a value model (``job.block`` empty): the default hint,
    ``analyze`` and ``review``."""
    _rollouts_with(_EXPERT_ACT, _NO_DRAW, k, table, job)


def _rollout_kernel(policy_ids, block: np.ndarray):
    """The chunk kernel that plays these rollouts and compiles the least: expert alone, or
    without mc and learned, when no seat plays the others; without the value model's code when
    there is none (the same numbers whichever)."""
    if uses_expert_only(policy_ids):
        return _rollout_chunk_expert if block.size > 0 else _rollout_chunk_expert_plain
    if uses_fast_policies(policy_ids):
        return _rollout_chunk_fast if block.size > 0 else _rollout_chunk_fast_plain
    return _rollout_chunk if block.size > 0 else _rollout_chunk_plain


class NumbaThreads:
    """numba's thread count set for a block, then restored."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, min(int(workers), numba.config.NUMBA_NUM_THREADS))

    def __enter__(self) -> None:
        self.saved = numba.get_num_threads()
        numba.set_num_threads(self.workers)

    def __exit__(self, *exc: object) -> None:
        numba.set_num_threads(self.saved)


def rollout_policy_arrays(policy: PolicySpec | Sequence[PolicySpec]) -> tuple[np.ndarray, np.ndarray]:
    """Policy ids and parameter rows of a rollout policy at every seat (or of one policy per
    seat); a user or Python policy is refused in one line (the rollouts run in one compiled
    kernel)."""
    seated = list(policy) if isinstance(policy, (list, tuple)) else [policy] * N_SEATS
    if len(seated) != N_SEATS:
        raise PolicyError(f"rollouts take one policy, or one per seat ({N_SEATS}), got {len(seated)}")
    try:
        ids, params, user = policy_arrays(seated)
    except PolicyError as exc:
        raise PolicyError(f"rollouts play built-in policies only: {exc}") from None
    for spec, fn in zip(seated, user):
        if fn is not None:
            raise PolicyError(f"rollouts play built-in policies only; {spec.text()} is a user policy")
    return ids, params


def rollouts(obs: np.ndarray, candidates: Sequence[int], alive: Sequence[bool], first: int, count: int, seed: int,
             policy: PolicySpec | Sequence[PolicySpec], rules: RuleSet, block: np.ndarray | None = None,
             workers: int = 1, sharpen: int = 0, known: np.ndarray | None = None,
             weights: np.ndarray | None = None) -> np.ndarray:
    """Determinisations ``first .. first + count - 1`` of the position ``obs`` (an observation
    array of the player to act), each candidate action applied and played out by ``policy`` at
    every seat: an array ``(len(candidates), count, N_ROLLOUT_OUT)`` (rows of candidates not
    ``alive`` are zero).  ``block``: a value model's block (:mod:`simkit.runner.luck`), or None
    for no luck.  ``sharpen``: mc's opponent model, that many hill-climbing steps per other hand
    (0: uniform determinisations).  ``policy``: one for every seat, or one per seat.  ``known``:
    the true engine state (the module docstring): every hand kept, the stock reordered (no
    ``sharpen``); or belief particles ``(P, N_STATE)`` (:mod:`simkit.runner.belief`) with their
    cumulative ``weights`` (P): determinisation r plays from the particle a uniform of the
    stream ``(S, r, STREAM_BELIEF_PICK)`` picks, its stock reordered.  The same arguments give
    the same array for any ``workers`` (threads)."""
    ids, params = rollout_policy_arrays(policy)
    known = np.zeros((0, N_STATE), dtype=np.int64) if known is None else np.ascontiguousarray(known, dtype=np.int64)
    if known.ndim == 1:
        known = known.reshape(1, -1)
    if known.ndim != 2 or known.shape[1] != N_STATE:
        raise ValueError(f"known must be engine states of {N_STATE} numbers, got shape {known.shape}")
    cum = np.ones(known.shape[0], dtype=np.float64) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    if cum.shape != (known.shape[0],):
        raise ValueError(f"weights must give one cumulative weight per known state ({known.shape[0]}), got {cum.shape}")
    cands = np.asarray(candidates, dtype=np.int64)
    live = np.asarray(alive, dtype=np.bool_)
    out = np.zeros((len(cands), int(count), N_ROLLOUT_OUT), dtype=np.float64)
    block = np.zeros(0, dtype=np.float64) if block is None else np.ascontiguousarray(block, dtype=np.float64)
    root = root_key(int(seed))
    obs = np.ascontiguousarray(obs, dtype=np.int64)
    table = Table(ids, params, np.arange(N_SEATS, dtype=np.int64), rules.to_array())  # fixed seats
    job = Rollouts(obs, known, cum, cands, live, int(first), int(count), root, block, int(sharpen), out)
    calls = [(k, table, job) for k in range((int(count) + ROLLOUT_CHUNK - 1) // ROLLOUT_CHUNK)]
    with NumbaThreads(workers):
        run_chunks(_rollout_kernel(ids, block), calls)
    return out

"""Self-play data for ``simkit train``: deals played by a base policy (``expert``, or the
previous generation's model), and at sampled decisions every candidate action *rolled out*:
the deal copied, the candidate applied, and the copy played to its end by the base policy at
every seat.  Each candidate gives a row: its afterstate features (the acting player's
observation only, :func:`simkit.policies.learned.action_features`) and its **advantage**, the
acting seat's final payoff (牌) after the candidate minus its payoff after the base policy's
own choice, in the *same* deal (same hidden cards, same stock order).

That is DouZero's Monte Carlo value target, Q(s, a) = the payoff that follows action a, with
two changes that make it learnable from a laptop's data: the state's baseline is subtracted
(the argmax over actions does not change), and every action of a decision is played out on
the same cards (common random numbers), so most of the luck of the deal cancels within a
decision.  The hidden cards of the rollout are the deal's true ones; the model sees only the
observation, so fitting it averages the advantage over everything the player cannot see
(a model of E[advantage | observation]).

Deal N of a generation is a pure function of (seed, N, base policy, sampling rate): the deck
and the policies' streams are those of every simkit run (:mod:`simkit.rng`); which decisions
are sampled and which candidates are rolled out draws from the stream ``simkit.rng.STREAM_SAMPLE`` of
(seed, N); so the rows do not depend on threads or chunks.  A decision is sampled (with
probability ``rate``) when it has two or more legal actions and no legal win (a legal win is
always declared); up to :data:`MAX_CANDIDATES` candidates are rolled out: the base choice and
others drawn uniformly without replacement.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from simkit.cards import N_CARDS, N_SEATS
from simkit.deck import deal_deck
from simkit.engine import kernel as E
from simkit.engine.env import MAX_DECISIONS
from simkit.engine.layout import A_WIN, N_ACTIONS, N_OBS, N_STATE, PH_OVER, S_PAYOFF, \
    S_PHASE, S_PLAYER
from simkit.engine.loop import InPlay, Table, choose, decide_until_chance
from simkit.jit import run_chunks, static_function
from simkit.policies.builtin import POLICY_WORK_SIZE
from simkit.policies.dispatch import builtin_act_state
from simkit.policies.learned import N_FEATURES, action_features
from simkit.rng import STREAM_SAMPLE, next_below, root_key, seat_stream, stream_state
from simkit.runner.play import DECK_RNG, N_RNGS, RNG_WORDS, check_policy_ids

MAX_CANDIDATES = 8  # candidates rolled out per sampled decision (the base choice + 7 others)
MAX_SAMPLES_PER_DEAL = 24  # sampled decisions kept per deal
RATE_SCALE = 1 << 30  # the sampling rate is compared with a uniform draw of this resolution
CHUNK = 16


_BUILTIN_ACT = static_function(builtin_act_state)
SEATS_IN_ORDER = np.arange(N_SEATS, dtype=np.int64)  # seat p plays ids[p] with params[p]


class SampleRows(NamedTuple):
    """Where the sampled decisions go (one kernel argument), a row per candidate: ``x`` its
    features, ``y`` its advantage over the base choice, ``group`` its decision's number in the
    deal."""

    x: np.ndarray
    y: np.ndarray
    group: np.ndarray


@njit(cache=True, nogil=True)
def _rollout(table, play, copy, action):
    """The acting seat's payoff when ``action`` is taken in ``play.s`` and the deal is played
    out by the base policies (``table``), on the arrays of ``copy`` (``play``'s state and
    streams are untouched), by the deal loop every play-out uses
    (:func:`simkit.engine.loop.decide_until_chance`, no chance pauses); -1e9 if a policy
    failed or the decision cap was reached."""
    s = play.s
    p = s[S_PLAYER]
    s2 = copy.s
    s2[:] = s
    copy.mask[:] = play.mask
    copy.work[:] = play.work
    copy.rngs[:] = play.rngs
    E.apply_legal(s2, action, table.rules, copy.mask, copy.work, copy.ev, copy.ev_n)
    E.new_deal_observation(copy.obs)
    error, _ = decide_until_chance(_BUILTIN_ACT, table, copy, 0)
    if error != 0 or s2[S_PHASE] != PH_OVER:
        return -1.0e9
    return float(s2[S_PAYOFF + p])


@njit(cache=True, nogil=True)
def _record_deal(root, deal, table, rate_bits, feature_model, scratch, out, lo):
    """Play deal ``deal`` with the base policies (``table``: seat p plays ``ids[p]`` with row
    ``params[p]``), rolling out the candidates of sampled decisions into rows ``lo, lo + 1, ...``
    of ``out`` (:class:`SampleRows`: features, advantage, the decision's number in the deal);
    returns (rows, error: 0, 1 a policy failed, 2 the decision cap)."""
    play, copy, deck, sample_rng, candidates, payoff, row = scratch
    s, mask, rngs = play.s, play.mask, play.rngs
    rules = table.rules
    deal_deck(root, deal, rngs[DECK_RNG], deck)
    for p in range(N_SEATS):
        stream_state(root, deal, seat_stream(p), rngs[p])
    stream_state(root, deal, STREAM_SAMPLE, sample_rng)
    E.start(s, deck, 0, rules, mask, play.work, play.ev, play.ev_n)
    E.new_deal_observation(play.obs)
    n = 0
    n_samples = 0
    for _ in range(MAX_DECISIONS):
        if s[S_PHASE] == PH_OVER:
            return n, 0
        p = s[S_PLAYER]
        # the deal loop's own step (simkit.engine.loop.choose), with a sample taken between the
        # choice and its application
        action = choose(_BUILTIN_ACT, table, play)
        if action < 0:
            return n, 1
        n_legal = 0
        for a in range(N_ACTIONS):
            if mask[a]:
                n_legal += 1
        if (n_legal >= 2 and not mask[A_WIN] and n_samples < MAX_SAMPLES_PER_DEAL
                and next_below(sample_rng, RATE_SCALE) < rate_bits):
            # the candidates: the base choice first, then others in a random order
            m = 0
            candidates[m] = action
            m += 1
            for a in range(N_ACTIONS):
                if mask[a] and a != action:
                    candidates[m] = a
                    m += 1
            for i in range(1, m - 1):  # shuffle candidates[1:m] (Fisher-Yates)
                j = i + next_below(sample_rng, m - i)
                c = candidates[i]
                candidates[i] = candidates[j]
                candidates[j] = c
            if m > MAX_CANDIDATES:
                m = MAX_CANDIDATES
            ok = True
            for i in range(m):
                payoff[i] = _rollout(table, play, copy, candidates[i])
                if payoff[i] < -1.0e8:
                    ok = False
            if not ok:
                return n, 1
            E.observe(s, p, play.obs)
            for i in range(m):
                action_features(play.obs, mask, candidates[i], feature_model, rules, play.pwork, row)
                for f in range(N_FEATURES):
                    out.x[lo + n, f] = row[f]
                out.y[lo + n] = payoff[i] - payoff[0]
                out.group[lo + n] = n_samples
                n += 1
            n_samples += 1
        E.apply_legal(s, action, rules, mask, play.work, play.ev, play.ev_n)
    if s[S_PHASE] == PH_OVER:
        return n, 0
    return n, 2


ROWS_PER_DEAL = MAX_SAMPLES_PER_DEAL * MAX_CANDIDATES


@njit(cache=True, nogil=True)
def _in_play():
    """A state in play and its scratch (:class:`~simkit.engine.loop.InPlay`), for self-play:
    no event log."""
    return InPlay(np.zeros(N_STATE, dtype=np.int64), np.zeros((N_RNGS, RNG_WORDS), dtype=np.uint64),
                  np.zeros(N_ACTIONS, dtype=np.bool_), np.zeros(N_OBS, dtype=np.int64),
                  np.zeros(E.ENGINE_WORK_SIZE, dtype=np.int64), np.zeros(POLICY_WORK_SIZE, dtype=np.int64),
                  np.zeros((0, 6), dtype=np.int64), np.zeros(1, dtype=np.int64))


@njit(cache=True, nogil=True)
def _record_chunk(k, root, first_deal, n_deals, table, rate_bits, feature_model, out, counts, errors):
    """Deals ``first_deal + i`` for i in chunk k: rows i·ROWS_PER_DEAL ... of ``out``'s arrays."""
    play = _in_play()
    # the copy a candidate is rolled out on shares the deal's policy workspace and event log
    copy = InPlay(np.zeros(N_STATE, dtype=np.int64), np.zeros((N_RNGS, RNG_WORDS), dtype=np.uint64),
                  np.zeros(N_ACTIONS, dtype=np.bool_), np.zeros(N_OBS, dtype=np.int64),
                  np.zeros(E.ENGINE_WORK_SIZE, dtype=np.int64), play.pwork, play.ev, play.ev_n)
    scratch = (play, copy, np.zeros(N_CARDS, dtype=np.int64), np.zeros(RNG_WORDS, dtype=np.uint64),
               np.zeros(N_ACTIONS, dtype=np.int64), np.zeros(N_ACTIONS, dtype=np.float64),
               np.zeros(N_FEATURES, dtype=np.int64))
    for i in range(k * CHUNK, min(n_deals, (k + 1) * CHUNK)):
        got, error = _record_deal(root, first_deal + i, table, rate_bits, feature_model, scratch, out,
                                  i * ROWS_PER_DEAL)
        counts[i] = got
        errors[i] = error


def record_selfplay(first_deal: int, n_deals: int, seed: int, ids: np.ndarray, params: np.ndarray,
                    rules_array: np.ndarray, rate: float, feature_model: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features ``uint8`` (rows, N_FEATURES), advantages ``float32``, decision key ``int64``
    (deal × MAX_SAMPLES_PER_DEAL + the decision's number: the rows of one decision share it))
    of deals ``first_deal`` .. ``first_deal + n_deals - 1`` in deal order, on numba's threads
    (the rows do not depend on them)."""
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"the sampling rate must be in (0, 1], got {rate}")
    ids = check_policy_ids(ids)
    x = np.zeros((n_deals * ROWS_PER_DEAL, N_FEATURES), dtype=np.uint8)
    y = np.zeros(n_deals * ROWS_PER_DEAL, dtype=np.float32)
    group = np.zeros(n_deals * ROWS_PER_DEAL, dtype=np.int64)
    counts = np.zeros(n_deals, dtype=np.int64)
    errors = np.zeros(n_deals, dtype=np.int64)
    root = root_key(seed)
    bits = int(round(rate * RATE_SCALE))
    params = np.ascontiguousarray(params, dtype=np.float64)
    table = Table(ids, params, SEATS_IN_ORDER, rules_array)
    out = SampleRows(x, y, group)
    run_chunks(_record_chunk, [(k, root, int(first_deal), int(n_deals), table, bits,
                                np.ascontiguousarray(feature_model, dtype=np.float64), out, counts, errors)
                               for k in range((n_deals + CHUNK - 1) // CHUNK)])
    bad = np.flatnonzero(errors)
    if bad.size:
        raise RuntimeError(f"self-play deal {first_deal + int(bad[0])} of seed {seed} stopped before its end "
                           f"(code {int(errors[bad[0]])})")
    keep = (np.arange(ROWS_PER_DEAL)[None, :] < counts[:, None]).ravel()
    deal_of_row = np.repeat(np.arange(first_deal, first_deal + n_deals, dtype=np.int64), ROWS_PER_DEAL)[keep]
    return x[keep], y[keep], deal_of_row * MAX_SAMPLES_PER_DEAL + group[keep]

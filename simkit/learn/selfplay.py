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


@njit(cache=True, nogil=True)
def _finish(s, ids, params, rules, rngs, mask, obs, work, pwork, ev, ev_n):
    """Play state ``s`` to the end with the seats' policies, by the deal loop every play-out
    uses (:func:`simkit.engine.loop.decide_until_chance`, no chance pauses); False if a policy
    failed or the decision cap was reached."""
    E.new_deal_observation(obs)
    error, _ = decide_until_chance(_BUILTIN_ACT, Table(ids, params, SEATS_IN_ORDER, rules),
                                   InPlay(s, rngs, mask, obs, work, pwork, ev, ev_n), 0)
    return error == 0 and s[S_PHASE] == PH_OVER


@njit(cache=True, nogil=True)
def _rollout(s, mask, work, action, ids, params, rules, rngs, s2, mask2, work2, rngs2, obs2, pwork, ev, ev_n):
    """The acting seat's payoff when ``action`` is taken in ``s`` and the deal is played out by
    the base policies (on copies: ``s`` and its streams are untouched); -1e9 on failure."""
    p = s[S_PLAYER]
    s2[:] = s
    mask2[:] = mask
    work2[:] = work
    rngs2[:] = rngs
    E.apply_legal(s2, action, rules, mask2, work2, ev, ev_n)
    if not _finish(s2, ids, params, rules, rngs2, mask2, obs2, work2, pwork, ev, ev_n):
        return -1.0e9
    return float(s2[S_PAYOFF + p])


@njit(cache=True, nogil=True)
def _record_deal(root, deal, ids, params, rules, rate_bits, feature_model, scratch, pwork, ev, ev_n, row, x, y, group,
                 lo):
    """Play deal ``deal`` with the base policies (seat p: ``ids[p]``, row ``params[p]``),
    rolling out the candidates of sampled decisions into rows ``lo, lo + 1, ...`` of ``x``
    (features) / ``y`` (advantage) / ``group`` (the decision's number in the deal); returns
    (rows, error: 0, 1 a policy failed, 2 the decision cap)."""
    s, deck, rngs, mask, obs, work, s2, mask2, work2, rngs2, obs2, sample_rng, candidates, payoff = scratch
    deal_deck(root, deal, rngs[DECK_RNG], deck)
    for p in range(N_SEATS):
        stream_state(root, deal, seat_stream(p), rngs[p])
    stream_state(root, deal, STREAM_SAMPLE, sample_rng)
    E.start(s, deck, 0, rules, mask, work, ev, ev_n)
    E.new_deal_observation(obs)
    table = Table(ids, params, SEATS_IN_ORDER, rules)
    play = InPlay(s, rngs, mask, obs, work, pwork, ev, ev_n)
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
                payoff[i] = _rollout(s, mask, work, candidates[i], ids, params, rules, rngs, s2, mask2, work2, rngs2,
                                     obs2, pwork, ev, ev_n)
                if payoff[i] < -1.0e8:
                    ok = False
            if not ok:
                return n, 1
            E.observe(s, p, obs)
            for i in range(m):
                action_features(obs, mask, candidates[i], feature_model, rules, pwork, row)
                for f in range(N_FEATURES):
                    x[lo + n, f] = row[f]
                y[lo + n] = payoff[i] - payoff[0]
                group[lo + n] = n_samples
                n += 1
            n_samples += 1
        E.apply_legal(s, action, rules, mask, work, ev, ev_n)
    if s[S_PHASE] == PH_OVER:
        return n, 0
    return n, 2


ROWS_PER_DEAL = MAX_SAMPLES_PER_DEAL * MAX_CANDIDATES


@njit(cache=True, nogil=True)
def _record_chunk(k, root, first_deal, n_deals, ids, params, rules, rate_bits, feature_model, x, y, group, counts,
                  errors):
    """Deals ``first_deal + i`` for i in chunk k: rows i·ROWS_PER_DEAL ... of x / y / group."""
    scratch = (np.zeros(N_STATE, dtype=np.int64), np.zeros(N_CARDS, dtype=np.int64),
               np.zeros((N_RNGS, RNG_WORDS), dtype=np.uint64), np.zeros(N_ACTIONS, dtype=np.bool_),
               np.zeros(N_OBS, dtype=np.int64), np.zeros(E.ENGINE_WORK_SIZE, dtype=np.int64),
               np.zeros(N_STATE, dtype=np.int64), np.zeros(N_ACTIONS, dtype=np.bool_),
               np.zeros(E.ENGINE_WORK_SIZE, dtype=np.int64), np.zeros((N_RNGS, RNG_WORDS), dtype=np.uint64),
               np.zeros(N_OBS, dtype=np.int64), np.zeros(RNG_WORDS, dtype=np.uint64),
               np.zeros(N_ACTIONS, dtype=np.int64), np.zeros(N_ACTIONS, dtype=np.float64))
    pwork = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
    ev = np.zeros((0, 6), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    row = np.zeros(N_FEATURES, dtype=np.int64)
    for i in range(k * CHUNK, min(n_deals, (k + 1) * CHUNK)):
        got, error = _record_deal(root, first_deal + i, ids, params, rules, rate_bits, feature_model, scratch, pwork,
                                  ev, ev_n, row, x, y, group, i * ROWS_PER_DEAL)
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
    run_chunks(_record_chunk, [(k, root, int(first_deal), int(n_deals), ids, params, rules_array, bits,
                                np.ascontiguousarray(feature_model, dtype=np.float64), x, y, group, counts, errors)
                               for k in range((n_deals + CHUNK - 1) // CHUNK)])
    bad = np.flatnonzero(errors)
    if bad.size:
        raise RuntimeError(f"self-play deal {first_deal + int(bad[0])} of seed {seed} stopped before its end "
                           f"(code {int(errors[bad[0]])})")
    keep = (np.arange(ROWS_PER_DEAL)[None, :] < counts[:, None]).ravel()
    deal_of_row = np.repeat(np.arange(first_deal, first_deal + n_deals, dtype=np.int64), ROWS_PER_DEAL)[keep]
    return x[keep], y[keep], deal_of_row * MAX_SAMPLES_PER_DEAL + group[keep]

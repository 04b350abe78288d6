"""A small counter-free PRNG for numba kernels: xoshiro256** on a uint64[4] state array.

Kernels never use numba's global ``np.random`` (its state is per thread, so results would
depend on scheduling).  States are seeded from ``numpy.random.SeedSequence``, which makes a
run a pure function of its seed.

Per-deal seeding: a run has a root seed S (:func:`root_key`).  Deal number N (0, 1, 2, ...)
draws from independent xoshiro streams derived from ``SeedSequence(S)`` and N only
(:func:`stream_state`).  Every stream of simkit is named here, in one registry
(:data:`STREAMS`), and every kernel passes one of these names (tests/test_rng_streams.py):

============================  ==========================================================
stream                        draws
============================  ==========================================================
:data:`STREAM_CARDS` (0)      deal N's deck order (:func:`simkit.deck.deal_deck`); in an
                              analysis, determinisation N's hidden cards
:func:`seat_stream` (p) (1+p)  seat p's policy (``random``, ``mc``, a user's policy)
:data:`STREAM_SAMPLE` (8)     self-play: which decisions are sampled and rolled out
:data:`STREAM_PLAYOUT` (9)    play-out values: the play-outs' stocks
:data:`STREAM_BELIEF` (10)    belief candidate N's hidden cards (:mod:`simkit.runner.belief`)
:func:`belief_seat_stream`     seat p's policy replaying belief candidate N
(p) (11+p)
:data:`STREAM_BELIEF_PICK`    which belief particle rollout N plays from
(14)
:data:`STREAM_REFERENCE`      a review's search reference deciding decision N itself
(15)                          (:mod:`simkit.studies.reference`)
============================  ==========================================================

So a deal is a pure function of (rules, policies, S, N), whatever batch, thread, process or
machine plays it, and the same deal N has the same cards whatever the policies, which is what
duplicate (seat-rotated) comparisons need.  A comparison of design ``pairs`` plays each of its
three pairs of seatings on the deals of a seed of its own (:func:`seating_pair_seed`, derived
from S here and nowhere else).  A review against a reference rolls deal (S', N) of a log out
with a seed of its own too (:func:`deal_review_seed`, derived from the review's seed, S' and N):
decision k of every deal reviewed with one review seed draws other numbers, so the reviews of
different deals are independent, as the intervals over deals of ``simkit calibrate`` assume.

>>> state = seed_state(2026)
>>> a = next_below(state, 112)
>>> 0 <= a < 112
True
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

import simkit.jit  # noqa: F401  - how simkit's kernels compile, before any of them does

_MASK = (1 << 64) - 1

# ---- the streams of (seed, N): the one registry (module docstring)
STREAM_CARDS = 0  # deal N's deck order; determinisation N's hidden cards
STREAM_SEAT = 1  # STREAM_SEAT + p: seat p's policy (p = 0, 1, 2: streams 1-3)
STREAM_SAMPLE = 8  # self-play's decision sampling and candidate draws
STREAM_PLAYOUT = 9  # the stocks of play-out values
STREAM_BELIEF = 10  # belief candidate N's hidden cards
STREAM_BELIEF_SEAT = 11  # STREAM_BELIEF_SEAT + p: seat p's policy replaying candidate N (streams 11-13)
STREAM_BELIEF_PICK = 14  # which belief particle rollout N plays from
STREAM_REFERENCE = 15  # a review's search reference deciding decision N itself (its determinisations)
STREAMS = {"cards": STREAM_CARDS, "seat 0": STREAM_SEAT, "seat 1": STREAM_SEAT + 1, "seat 2": STREAM_SEAT + 2,
           "sample": STREAM_SAMPLE, "playout": STREAM_PLAYOUT, "belief": STREAM_BELIEF,
           "belief seat 0": STREAM_BELIEF_SEAT, "belief seat 1": STREAM_BELIEF_SEAT + 1,
           "belief seat 2": STREAM_BELIEF_SEAT + 2, "belief pick": STREAM_BELIEF_PICK,
           "reference": STREAM_REFERENCE}


def seed_state(seed: int | np.random.SeedSequence) -> np.ndarray:
    """xoshiro256** state (uint64[4]) from an int seed or a ``SeedSequence``."""
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    state = seq.generate_state(4, dtype=np.uint64)
    if not state.any():  # the all-zero state is a fixed point
        state[0] = 1
    return state


@njit(cache=True, nogil=True)
def _rotl(x, k):
    return (x << uint64(k)) | (x >> uint64(64 - k))


@njit(cache=True, nogil=True)
def next_u64(state):
    """Next 64-bit output; advances ``state`` in place."""
    s0 = state[0]
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    result = _rotl(s1 * uint64(5), 7) * uint64(9)
    t = s1 << uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return result


@njit(cache=True, nogil=True)
def next_below(state, n):
    """Uniform integer in [0, n) without modulo bias (rejection sampling), n >= 1."""
    bound = uint64(n)
    # reject the top partial block of 2**64 so each residue is equally likely
    limit = uint64(0xFFFFFFFFFFFFFFFF) - (uint64(0xFFFFFFFFFFFFFFFF) % bound + uint64(1)) % bound
    while True:
        x = next_u64(state)
        if x <= limit:
            return np.int64(x % bound)


def root_key(seed: int) -> np.ndarray:
    """The 4 uint64 root words of a run seed."""
    if int(seed) < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return np.random.SeedSequence(int(seed)).generate_state(4, dtype=np.uint64)


PAIR_SEED_KEY = 0x5E47  # the key of the seeds of a pairs-design comparison's seating pairs


def seating_pair_seed(seed: int, pair: int) -> int:
    """The seed whose deals seating pair ``pair`` (0, 1, 2) of a ``pairs``-design comparison of
    seed ``seed`` plays: pair 0 plays the comparison's own deals, pairs 1 and 2 those of a seed
    derived from (``seed``, ``pair``) by ``SeedSequence`` (62 bits, so a valid seed anywhere).

    >>> seating_pair_seed(7, 0), seating_pair_seed(7, 1) == seating_pair_seed(7, 1) != seating_pair_seed(7, 2)
    (7, True)
    """
    if int(seed) < 0 or pair not in (0, 1, 2):
        raise ValueError(f"a seating pair's seed needs seed >= 0 and pair 0, 1 or 2, got {seed}, {pair}")
    if pair == 0:
        return int(seed)
    words = np.random.SeedSequence([int(seed), PAIR_SEED_KEY, int(pair)]).generate_state(1, dtype=np.uint64)
    return int(words[0] >> np.uint64(2))


REVIEW_SEED_KEY = 0x5EED  # the key of the seeds of a review's rollouts of one deal


def deal_review_seed(seed: int, deal_seed: int, deal: int) -> int:
    """The seed of the rollouts with which a review of seed ``seed`` rolls out deal ``deal`` of
    seed ``deal_seed`` (a replay log's deal line names both): derived from the three by
    ``SeedSequence`` (62 bits, so a valid seed anywhere).  Decision k's rollouts are then keyed by
    (``seed``, the deal, k): two deals reviewed with one seed draw independent numbers, and the
    same deal reviewed again the same ones, whatever else was reviewed or on how many threads.

    >>> deal_review_seed(0, 5, 1) == deal_review_seed(0, 5, 1) != deal_review_seed(0, 5, 2) != deal_review_seed(0, 6, 2)
    True
    """
    for name, value in (("seed", seed), ("deal_seed", deal_seed), ("deal", deal)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < 0:
            raise ValueError(f"a review's rollout seed needs integers >= 0, got {name} {value!r}")
    words = np.random.SeedSequence([int(seed), REVIEW_SEED_KEY, int(deal_seed), int(deal)]).generate_state(
        1, dtype=np.uint64)
    return int(words[0] >> np.uint64(2))


@njit(cache=True, nogil=True)
def _splitmix(x):
    z = x + uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> uint64(27))) * uint64(0x94D049BB133111EB)
    return z ^ (z >> uint64(31))


@njit(cache=True, nogil=True, inline="always")
def seat_stream(seat):
    """The stream of seat ``seat``'s policy (:data:`STREAM_SEAT` + seat).

    >>> [seat_stream(p) for p in range(3)] == [STREAMS["seat 0"], STREAMS["seat 1"], STREAMS["seat 2"]]
    True
    """
    return STREAM_SEAT + seat


@njit(cache=True, nogil=True, inline="always")
def belief_seat_stream(seat):
    """The stream of seat ``seat``'s policy replaying a belief candidate
    (:data:`STREAM_BELIEF_SEAT` + seat).

    >>> [belief_seat_stream(p) for p in range(3)] == [STREAMS[f"belief seat {p}"] for p in range(3)]
    True
    """
    return STREAM_BELIEF_SEAT + seat


@njit(cache=True, nogil=True)
def stream_state(root, deal, stream, out):
    """xoshiro state of (root, deal, stream): a keyed hash, never all zero."""
    key = _splitmix(uint64(deal) * uint64(0xD1B54A32D192ED03) + _splitmix(uint64(stream) + uint64(0x632BE59BD9B4E019)))
    for i in range(4):
        out[i] = _splitmix(root[i] ^ _splitmix(key + uint64(i)))
    if out[0] == 0 and out[1] == 0 and out[2] == 0 and out[3] == 0:
        out[0] = uint64(1)

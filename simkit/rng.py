"""A small counter-free PRNG for numba kernels: xoshiro256** on a uint64[4] state array.

Kernels never use numba's global ``np.random`` (its state is per thread, so results would
depend on scheduling).  Every batch of deals gets its own state, seeded from
``numpy.random.SeedSequence``, which makes a run a pure function of its seed.

>>> state = seed_state(2026)
>>> a = next_below(state, 112)
>>> 0 <= a < 112
True
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

_MASK = (1 << 64) - 1


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

"""Features of one holding's 28-count vector: the one kernel behind every dealt-hand statistic.

:func:`hand_features` fills ``feats[F_*]``; ``level`` says how much to compute:

* ``LEVEL_COUNTS``: the counts only (F_JIANG .. F_CHARIOTS);
* ``LEVEL_IDLE``: and the fewest idle cards (F_MIN_IDLE);
* ``LEVEL_EVAL``: and the evaluator's verdict on the holding, all cards concealed and nothing
  exposed (F_COMPLETE, F_HU, F_UNITS, F_WINS).

Fields beyond ``level`` are left as they were.  Its callers: the dealt-hand statistics and
event probabilities (:mod:`simkit.studies.dealt`, :mod:`simkit.studies.probability`,
``simkit prob`` / ``simkit deals``) and the ``dealt_*`` columns of a simulation dataset
(:mod:`simkit.runner.batch`).

>>> import numpy as np
>>> feats = np.zeros(N_FEATURES, dtype=np.int64)
>>> hand = np.zeros(28, dtype=np.int64); hand[[0, 7, 14]] = 2; hand[1:3] = 2; hand[5] = 4
>>> hand_features(hand, LEVEL_IDLE, np.zeros(1, dtype=np.int64), *feature_scratch(), feats)
>>> dict(zip(FEATURE_NAMES[:F_MIN_IDLE + 1], feats[:F_MIN_IDLE + 1].tolist()))
{'jiang': 6, 'pairs': 6, 'zi': 0, 'nao': 1, 'jiang2': 3, 'zu2': 0, 'triads': 1, 'chariots': 2, 'min_idle': 0}
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simkit.cards import CHE, JIANG, N_COLOURS, N_RANKS, N_TYPES, ZU
from simkit.evaluator import kernel as K

# ---- feature indices
F_JIANG = 0  # 将 cards (any colour)
F_PAIRS = 1  # types held >= 2 times
F_ZI = 2  # types held exactly 3 times (子)
F_NAO = 3  # types held 4 times (闹)
F_JIANG2 = 4  # colours whose 将 is held >= 2 times
F_ZU2 = 5  # colours whose 卒 is held >= 2 times
F_TRIADS = 6  # same-colour triads (将士相 / 车马炮) held >= 2 each: 素车 components (0..8)
F_CHARIOTS = 7  # chariot sets: F_TRIADS, + 1 for >= 3 colours of 将 held >= 2, + 1 for 卒 likewise
F_MIN_IDLE = 8  # fewest idle cards over all decompositions (0 iff complete)
F_COMPLETE = 9  # 1 when complete
F_HU = 10  # hu, -1 when incomplete
F_UNITS = 11  # units a win would score
F_WINS = 12  # 1 when complete with units >= 1 (or a pattern win)
N_FEATURES = 13
FEATURE_NAMES = ("jiang", "pairs", "zi", "nao", "jiang2", "zu2", "triads", "chariots", "min_idle", "complete", "hu",
                 "units", "wins")

# ---- levels
LEVEL_COUNTS = 0
LEVEL_IDLE = 1
LEVEL_EVAL = 2

# ---- type layout: type = N_RANKS * colour + rank (simkit.cards)
_TRIAD_FIRST_RANKS = (JIANG, CHE)  # 将士相, 车马炮


@njit(cache=True, nogil=True)
def feature_scratch():
    """Scratch arrays of :func:`hand_features`: (exposed, out, choice, work) of the evaluator."""
    return (np.zeros((K.N_EXP_ROWS, N_TYPES), dtype=np.int64), np.zeros(K.N_OUT, dtype=np.int64),
            np.zeros(K.N_CHOICE, dtype=np.int64), np.zeros(K.WORK_SIZE, dtype=np.int64))


@njit(cache=True, nogil=True)
def hand_features(counts, level, rules, exposed, out, choice, work, feats):
    """Fill ``feats`` (N_FEATURES) with the features of the 28-count vector ``counts`` up to
    ``level``.  ``rules`` (``RuleSet.to_array()``) is read at ``LEVEL_EVAL`` only; ``exposed``
    must be all zero; the scratch arrays come from :func:`feature_scratch`."""
    jiang = 0
    pairs = 0
    zi = 0
    nao = 0
    jiang2 = 0
    zu2 = 0
    for t in range(N_TYPES):
        c = counts[t]
        if c >= 2:
            pairs += 1
        if c == 3:
            zi += 1
        if c == 4:
            nao += 1
        rank = t % N_RANKS
        if rank == JIANG:
            jiang += c
            if c >= 2:
                jiang2 += 1
        elif rank == ZU and c >= 2:
            zu2 += 1
    triads = 0
    for colour in range(N_COLOURS):
        for first_rank in _TRIAD_FIRST_RANKS:
            first = N_RANKS * colour + first_rank
            if counts[first] >= 2 and counts[first + 1] >= 2 and counts[first + 2] >= 2:
                triads += 1
    feats[F_JIANG] = jiang
    feats[F_PAIRS] = pairs
    feats[F_ZI] = zi
    feats[F_NAO] = nao
    feats[F_JIANG2] = jiang2
    feats[F_ZU2] = zu2
    feats[F_TRIADS] = triads
    feats[F_CHARIOTS] = triads + (1 if jiang2 >= 3 else 0) + (1 if zu2 >= 3 else 0)
    if level == LEVEL_IDLE:
        feats[F_MIN_IDLE] = K.min_idle_kernel(counts)
    elif level >= LEVEL_EVAL:
        K.evaluate_kernel(counts, exposed, 0, rules, 0, out, choice, work)
        feats[F_MIN_IDLE] = out[K.OUT_MIN_IDLE]
        feats[F_COMPLETE] = out[K.OUT_COMPLETE]
        feats[F_HU] = out[K.OUT_HU]
        feats[F_UNITS] = out[K.OUT_UNITS]
        feats[F_WINS] = out[K.OUT_WINS]

"""Public, validating wrappers of the evaluator kernel.

>>> result = evaluate("RJ*3 RS*2 RX*2")
>>> result.complete, result.hu, result.units
(True, 26, 0)
>>> evaluate("RM RP").min_idle
2
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np
from numba import njit, prange

from simkit.cards import N_TYPES, check_counts, format_counts, parse_counts
from simkit.errors import CardError
from simkit.evaluator import kernel as K
from simkit.evaluator.explain import explain
from simkit.evaluator.patterns import pattern_names
from simkit.exposed import ExposedGroup, check_copies, exposed_arrays, format_exposed, parse_exposed
from simkit.rules import RuleSet


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """Result of :func:`evaluate` (docs/rules.md §4, §6).

    Attributes:
        complete: the concealed cards split into groups with no idle card.
        hu: maximal hu over decompositions and chariot choices; ``None`` when incomplete.
        lou: number of 楼 (exposed 4-of-a-kind) groups, L.
        steps: number of 步 (碰, plus 楼 under ``steps_count_lou``).
        units: U, the 牌 a win would score (formula and pattern floors); 0 when incomplete.
        wins: complete and ``units >= 1`` (the 31-card condition belongs to the engine).
        patterns: names of the pattern wins / 小甲 patterns some complete decomposition has.
        min_idle: fewest idle cards over all decompositions (0 iff complete).
        best: the maximal-hu decomposition, one ``'<item> <cards> = <hu>'`` line per item.
        concealed / exposed / rules: the input, in ``simkit score`` notation.
    """

    complete: bool
    hu: int | None
    lou: int
    steps: int
    units: int
    wins: bool
    patterns: tuple[str, ...]
    min_idle: int
    best: tuple[str, ...] | None
    concealed: str
    exposed: str
    rules: RuleSet

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible mapping (the ``simkit score`` output)."""
        return {
            "hand": self.concealed,
            "exposed": self.exposed,
            "complete": self.complete,
            "hu": self.hu,
            "lou": self.lou,
            "steps": self.steps,
            "units": self.units,
            "wins": self.wins,
            "patterns": list(self.patterns),
            "min_idle": self.min_idle,
            "best": list(self.best) if self.best is not None else None,
            "rules": self.rules.to_dict(),
        }


def _as_counts(hand: str | Sequence[int] | np.ndarray) -> np.ndarray:
    if isinstance(hand, str):
        return parse_counts(hand)
    return check_counts(hand)


def _as_groups(exposed: str | Sequence[ExposedGroup] | None) -> list[ExposedGroup]:
    if exposed is None:
        return []
    if isinstance(exposed, str):
        return parse_exposed(exposed)
    groups = list(exposed)
    for g in groups:
        if not isinstance(g, ExposedGroup):
            raise CardError(f"exposed groups must be ExposedGroup values, got {type(g).__name__}")
    return groups


def evaluate(
    hand: str | Sequence[int] | np.ndarray,
    exposed: str | Sequence[ExposedGroup] | None = None,
    rules: RuleSet | None = None,
    explain_best: bool = True,
) -> Evaluation:
    """Score a holding: concealed ``hand`` (text or 28 counts) plus ``exposed`` groups.

    >>> evaluate("YJ RJ WJ").hu
    3
    >>> evaluate("RC*3 RM RP").best
    ('圆 RC RM RP = 1', 'pair RC*2 = 0')
    """
    rules = rules if rules is not None else RuleSet()
    counts = _as_counts(hand)
    groups = _as_groups(exposed)
    check_copies(counts, groups)
    exp, n_chow = exposed_arrays(groups)
    rules_array = rules.to_array()
    out = np.zeros(K.N_OUT, dtype=np.int64)
    choice = np.zeros(K.N_CHOICE, dtype=np.int64)
    K.evaluate_kernel(counts, exp, n_chow, rules_array, 1, out, choice, K.new_workspace())
    complete = bool(out[K.OUT_COMPLETE])
    best = tuple(explain(counts, groups, rules_array, choice)) if complete and explain_best else None
    return Evaluation(
        complete=complete,
        hu=int(out[K.OUT_HU]) if complete else None,
        lou=int(out[K.OUT_LOU]),
        steps=int(out[K.OUT_STEPS]),
        units=int(out[K.OUT_UNITS]),
        wins=bool(out[K.OUT_WINS]),
        patterns=pattern_names(out[K.OUT_PATTERNS]),
        min_idle=int(out[K.OUT_MIN_IDLE]),
        best=best,
        concealed=format_counts(counts),
        exposed=format_exposed(groups),
        rules=rules,
    )


def min_idle(hand: str | Sequence[int] | np.ndarray) -> int:
    """Fewest idle cards of a concealed holding over all decompositions (0 iff complete).

    >>> min_idle("RJ RS RX RM"), min_idle("YZ RZ WZ")
    (1, 0)
    """
    return int(K.min_idle_kernel(_as_counts(hand)))


@njit(cache=True, parallel=True)
def evaluate_batch_kernel(conc, exposed, n_chow, rules, want_patterns, out):
    n = conc.shape[0]
    chunk = 1024
    n_chunks = (n + chunk - 1) // chunk
    for k in prange(n_chunks):
        choice = np.empty(K.N_CHOICE, dtype=np.int64)
        work = np.empty(K.WORK_SIZE, dtype=np.int64)
        for i in range(k * chunk, min(n, (k + 1) * chunk)):
            K.evaluate_kernel(conc[i], exposed[i], n_chow[i], rules, want_patterns, out[i], choice, work)


def evaluate_many(
    concealed: np.ndarray,
    exposed: np.ndarray | None = None,
    n_chow: np.ndarray | None = None,
    rules: RuleSet | None = None,
    patterns: bool = True,
) -> dict[str, np.ndarray]:
    """Evaluate N holdings in parallel (numba threads).

    ``concealed``: (N, 28) counts; ``exposed``: (N, 4, 28) counts of 占 / 碰 / 楼 / table 将
    (see :func:`simkit.exposed.exposed_arrays`); ``n_chow``: (N,) exposed 圆s.  Returns arrays
    ``complete, hu (-1 if incomplete), lou, steps, units, wins, patterns (bit mask), min_idle``.

    >>> res = evaluate_many(np.stack([parse_counts("RJ RS RX"), parse_counts("RM RP")]))
    >>> res["hu"].tolist(), res["min_idle"].tolist()
    ([1, -1], [0, 2])
    """
    rules = rules if rules is not None else RuleSet()
    conc = np.ascontiguousarray(concealed, dtype=np.int64)
    if conc.ndim != 2 or conc.shape[1] != N_TYPES:
        raise CardError(f"concealed must have shape (N, {N_TYPES}), got {conc.shape}")
    n = conc.shape[0]
    exp = np.zeros((n, K.N_EXP_ROWS, N_TYPES), dtype=np.int64) if exposed is None else np.ascontiguousarray(exposed, dtype=np.int64)
    if exp.shape != (n, K.N_EXP_ROWS, N_TYPES):
        raise CardError(f"exposed must have shape ({n}, {K.N_EXP_ROWS}, {N_TYPES}), got {exp.shape}")
    chows = np.zeros(n, dtype=np.int64) if n_chow is None else np.ascontiguousarray(n_chow, dtype=np.int64)
    if chows.shape != (n,):
        raise CardError(f"n_chow must have shape ({n},), got {chows.shape}")
    if (conc < 0).any() or (exp < 0).any() or (chows < 0).any():
        raise CardError("negative counts in a holding")
    exposed_cards = 2 * exp[:, K.EXP_ZHAN] + 3 * exp[:, K.EXP_PENG] + 4 * exp[:, K.EXP_KONG] + exp[:, K.EXP_TABLE]
    if ((conc + exposed_cards) > 4).any():
        row, t = np.argwhere((conc + exposed_cards) > 4)[0]
        raise CardError(f"holding {row}: more than 4 copies of type {t}")
    out = np.zeros((n, K.N_OUT), dtype=np.int64)
    evaluate_batch_kernel(conc, exp, chows, rules.to_array(), 1 if patterns else 0, out)
    return {
        "complete": out[:, K.OUT_COMPLETE].astype(bool),
        "hu": out[:, K.OUT_HU],
        "lou": out[:, K.OUT_LOU],
        "steps": out[:, K.OUT_STEPS],
        "units": out[:, K.OUT_UNITS],
        "wins": out[:, K.OUT_WINS].astype(bool),
        "patterns": out[:, K.OUT_PATTERNS],
        "min_idle": out[:, K.OUT_MIN_IDLE],
    }

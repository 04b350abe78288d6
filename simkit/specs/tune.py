"""The spec of a tune (``simkit tune``, :func:`simkit.studies.tuning.tune`): the policy and
the parameters SPSA tunes, the opponent pool, the budget, the SPSA constants and the
validation, each default declared here.

Its identity (:meth:`TuneSpec.identity`) is what ``OUT/tune.json`` has held since tuning began
(``kind`` ``simkit.tune``, the policy by name with its starting values, the ranges by name and
index, the pool with every parameter, the *resolved* SPSA constants and the source digests of
the user policies), so a tune folder written by an earlier version resumes.

>>> spec = TuneSpec("patient:6", "min_units=1:8", "greedy", budget=6_000, iteration_deals=100)
>>> spec.iterations, spec.start[0], spec.identity()["spsa"]["A"]
(10, 6.0, 1.0)
>>> TuneSpec("patient:6", {"min_units": (1, 5)}, "greedy", budget=6_000)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.errors.SimkitError: params: the starting value of 'min_units', 6, lies outside its range 1:5
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from simkit.errors import SimkitError
from simkit.policies.registry import (N_PARAMS, PolicyError, PolicySpec, effective_params, param_index,
                                      parse_policy_list, policy_sources)
from simkit.rules import RuleSet
from simkit.specs.base import RunSpec, as_policy, as_rules, check_float, check_int, field, policy_text

SEATS = 3
PLAYS_PER_DEAL = 2 * SEATS  # θ+ and θ-, each with the candidate at each of the 3 seats
DEFAULT_C = 0.2
DEFAULT_FIRST_GAIN = 0.1  # a_0 when a is not given
DEFAULT_A_FRACTION = 0.1  # A = 10% of the iterations when A is not given


@dataclasses.dataclass(frozen=True)
class ParameterRange:
    """A tuned parameter: its name as given, its index in the policy's ``params`` and its
    range [lo, hi] in real units."""

    name: str
    index: int
    lo: float
    hi: float

    def to_unit(self, value: float) -> float:
        """Real value -> normalised coordinate in [0, 1] (unclipped)."""
        return (float(value) - self.lo) / (self.hi - self.lo)

    def to_real(self, x: float) -> float:
        """Normalised coordinate -> real value.

        >>> ParameterRange("min_units", 0, 1.0, 8.0).to_real(0.5)
        4.5
        """
        return self.lo + float(x) * (self.hi - self.lo)

    def to_dict(self) -> dict:
        """The range as a tune's identity stores it."""
        return {"name": self.name, "index": self.index, "lo": self.lo, "hi": self.hi}


@dataclasses.dataclass(frozen=True)
class SpsaSettings:
    """SPSA gain constants: a_k = a / (A + k + 1)^alpha, c_k = c / (k + 1)^gamma, in
    normalised coordinates.  ``a`` None: 0.1 · (A + 1)^alpha (a_0 = 0.1); ``A`` None: 10% of
    the iterations (:meth:`resolved`).

    >>> s = SpsaSettings().resolved(100)
    >>> s.A, round(s.gains(0)[0], 6), s.gains(0)[1]
    (10.0, 0.1, 0.2)
    """

    a: float | None = None
    c: float = DEFAULT_C
    A: float | None = None
    alpha: float = 0.602
    gamma: float = 0.101

    def __post_init__(self) -> None:
        for name in ("a", "c", "A", "alpha", "gamma"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SimkitError(f"spsa {name} must be a finite number, got {value!r}", parameters=("spsa",))
        if self.a is not None and self.a <= 0:
            raise SimkitError(f"spsa a must be > 0, got {self.a}", parameters=("spsa",))
        if not 0 < self.c <= 0.5:
            raise SimkitError(f"spsa c must lie in (0, 0.5] (a fraction of each range), got {self.c}",
                              parameters=("spsa",))
        if self.A is not None and self.A < 0:
            raise SimkitError(f"spsa A must be >= 0, got {self.A}", parameters=("spsa",))
        if self.alpha <= 0 or self.gamma < 0:
            raise SimkitError(f"spsa alpha must be > 0 and gamma >= 0, got {self.alpha}, {self.gamma}",
                              parameters=("spsa",))

    def resolved(self, iterations: int) -> "SpsaSettings":
        """The constants of a run of ``iterations`` iterations, defaults filled in."""
        big_a = float(self.A) if self.A is not None else DEFAULT_A_FRACTION * int(iterations)
        a = float(self.a) if self.a is not None else DEFAULT_FIRST_GAIN * (big_a + 1.0) ** self.alpha
        return SpsaSettings(a, float(self.c), big_a, float(self.alpha), float(self.gamma))

    def gains(self, k: int) -> tuple[float, float]:
        """(a_k, c_k) of iteration k (resolved settings only)."""
        if self.a is None or self.A is None:
            raise ValueError("gains of unresolved SPSA settings (call resolved(iterations) first)")
        return self.a / (self.A + k + 1.0) ** self.alpha, self.c / (k + 1.0) ** self.gamma

    def to_dict(self) -> dict:
        return {"a": self.a, "c": self.c, "A": self.A, "alpha": self.alpha, "gamma": self.gamma}


def parse_ranges(text: str) -> dict[str, tuple[float, float]]:
    """``NAME=LO:HI,NAME=LO:HI`` -> {name: (lo, hi)} (the command line's ``--params``).

    >>> parse_ranges("min_units=1:8, late_stock=0:20")
    {'min_units': (1.0, 8.0), 'late_stock': (0.0, 20.0)}
    """
    ranges: dict[str, tuple[float, float]] = {}
    for piece in (p.strip() for p in str(text).split(",")):
        name, sep, bounds = piece.partition("=")
        lo_text, colon, hi_text = bounds.partition(":")
        try:
            if not (sep and colon and name.strip()):
                raise ValueError
            lo, hi = float(lo_text), float(hi_text)
        except ValueError:
            raise SimkitError(f"params takes NAME=LO:HI,NAME=LO:HI, got {piece!r}", parameters=("params",)) from None
        if name.strip() in ranges:
            raise SimkitError(f"params names {name.strip()!r} twice", parameters=("params",))
        ranges[name.strip()] = (lo, hi)
    return ranges


def parse_pool(text: str | Sequence[str | PolicySpec]) -> tuple[PolicySpec, ...]:
    """The opponent pool: comma-separated policy specs, as the registry parses a list of
    policies (:func:`~simkit.policies.registry.parse_policy_list`: named parameters, and a
    number after a spec with positional parameters is one more of them).

    >>> [s.text() for s in parse_pool("greedy,patient:3,6,random")]
    ['greedy', 'patient:3,6', 'random']
    """
    return parse_policy_list(text)


def _as_mapping(params: Any) -> Any:
    """``params`` as {name: bounds}: text is parsed, ranges already made are taken back."""
    if isinstance(params, str):
        return parse_ranges(params)
    if isinstance(params, (tuple, list)) and params and all(isinstance(r, ParameterRange) for r in params):
        return {r.name: (r.lo, r.hi) for r in params}
    return params


def _ranges(spec: PolicySpec, params: Any) -> tuple[ParameterRange, ...]:
    params = _as_mapping(params)
    if not isinstance(params, Mapping) or not params:
        raise SimkitError("params must name at least one parameter to tune: {name: (lo, hi)}", parameters=("params",))
    out: list[ParameterRange] = []
    for name, bounds in params.items():
        index = param_index(spec.name, str(name))
        try:
            lo, hi = (float(v) for v in bounds)
        except (TypeError, ValueError):
            raise SimkitError(f"params: the range of {name!r} must be two numbers (lo, hi), got {bounds!r}",
                              parameters=("params",)) from None
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
            raise SimkitError(f"params: the range of {name!r} needs finite lo < hi, got {lo:g}:{hi:g}",
                              parameters=("params",))
        if any(r.index == index for r in out):
            raise SimkitError(f"params: {name!r} is the same parameter (p{index}) as another one given",
                              parameters=("params",))
        out.append(ParameterRange(str(name), index, lo, hi))
    return tuple(out)


def _start(spec: PolicySpec, ranges: Sequence[ParameterRange]) -> tuple[float, ...]:
    values = [float(v) for v in effective_params(spec)]
    width = max(len(values), max(r.index for r in ranges) + 1)
    if width > N_PARAMS:
        raise PolicyError(f"policy {spec.name!r}: at most {N_PARAMS} parameters")
    start = values + [0.0] * (width - len(values))
    for r in ranges:
        if not r.lo <= start[r.index] <= r.hi:
            raise SimkitError(f"params: the starting value of {r.name!r}, {start[r.index]:g}, lies outside its range "
                              f"{r.lo:g}:{r.hi:g}", parameters=("params",))
    return tuple(start)


@dataclasses.dataclass(frozen=True)
class TuneSpec(RunSpec):
    """Tune ``params`` of ``policy`` (its parameters as given are the start) against the pool
    ``against`` with SPSA, spending ``budget`` deals played (6 per deal of an iteration of
    ``iteration_deals``), then validate tuned against start on ``validate_deals`` new duplicate
    deals (in batches of ``batch_size``), reported at ``confidence``.

    ``params``: {name: (lo, hi)} (names of the policy's parameters, or ``p<i>``), or the
    command line's text ``NAME=LO:HI,...``; normalised to :class:`ParameterRange` s.
    ``against``: policies, or their comma-separated text.  ``spsa``: :class:`SpsaSettings` (or a
    mapping of its constants; None: the defaults).  ``tail``: the share of the last iterates
    averaged into the tuned values."""

    KIND = "tune"

    policy: PolicySpec | str
    params: Any
    against: Any
    budget: int
    seed: int = 0
    iteration_deals: int = 200
    validate_deals: int = 5_000
    confidence: float = field(0.95, identity=False)
    rules: RuleSet | None = None
    spsa: SpsaSettings | None = SpsaSettings()
    tail: float = 0.25
    batch_size: int = 5_000

    def check(self) -> None:
        self._set("policy", as_policy(self.policy))
        self._set("params", _ranges(self.policy, self.params))
        _start(self.policy, self.params)
        self._set("against", parse_pool(self.against))
        if not self.against:
            raise SimkitError("against: the opponent pool is empty (give one or more policies)",
                              parameters=("against",))
        check_int(self, "seed", 0)
        check_int(self, "budget", 1)
        check_int(self, "iteration_deals", 1)
        if self.iteration_deals < len(self.against):
            raise SimkitError(f"iteration_deals {self.iteration_deals} is smaller than the pool ({len(self.against)} "
                              "opponents): each opponent needs a deal per iteration", parameters=("iteration_deals",))
        if self.iterations < 1:
            per_iteration = PLAYS_PER_DEAL * self.iteration_deals
            raise SimkitError(f"budget {self.budget:,} is too small for one iteration: an iteration plays "
                              f"{per_iteration:,} deals (iteration_deals {self.iteration_deals} x 3 seats x 2 "
                              "perturbations)", parameters=("budget",))
        check_int(self, "validate_deals", 2)
        check_int(self, "batch_size", 1)
        check_float(self, "confidence", 0.0, 1.0, open_lo=True, open_hi=True)
        check_float(self, "tail", 0.0, 1.0, open_lo=True)
        self._set("rules", as_rules(self.rules))
        if self.spsa is None:
            self._set("spsa", SpsaSettings())
        elif isinstance(self.spsa, Mapping):
            self._set("spsa", SpsaSettings(**self.spsa))
        elif not isinstance(self.spsa, SpsaSettings):
            raise SimkitError(f"spsa must be SpsaSettings or a mapping of its constants, got {self.spsa!r}",
                              parameters=("spsa",))

    @property
    def pool(self) -> tuple[PolicySpec, ...]:
        """The opponent pool (``against``, parsed)."""
        return self.against

    @property
    def start(self) -> tuple[float, ...]:
        """The policy's parameters where the tune starts (every one, defaults filled in)."""
        return _start(self.policy, self.params)

    @property
    def iterations(self) -> int:
        """The SPSA iterations the budget pays for (6 plays per deal of an iteration)."""
        return self.budget // (PLAYS_PER_DEAL * self.iteration_deals)

    @property
    def settings(self) -> SpsaSettings:
        """The SPSA constants of this run, defaults resolved for its iterations."""
        return self.spsa.resolved(self.iterations)

    def identity(self) -> dict[str, Any]:
        """What ``tune.json`` holds (and ``state.json`` beside its trajectory), as read back."""
        identity = {
            "kind": "simkit.tune", "policy": self.policy.name, "start": list(self.start),
            "params": [r.to_dict() for r in self.params],
            "pool": [policy_text(p) for p in self.against], "seed": self.seed, "budget": self.budget,
            "iteration_deals": self.iteration_deals, "rules": self.rules.to_dict(),
            "spsa": self.settings.to_dict(), "tail": self.tail, "validate_deals": self.validate_deals,
            "batch_size": self.batch_size,
            "policy_sources": [list(x) for x in policy_sources([self.policy, *self.against])],
        }
        return json.loads(json.dumps(identity))  # as read back from tune.json (lists, not tuples)

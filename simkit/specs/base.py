"""What every run spec shares: a frozen, validated description of one run, its defaults
declared once, and its identity.

A *run spec* (one class per run kind, in this package) is a frozen dataclass: what a run plays
and measures (policies, deals, seed, rules, ...), each field with its default.  Constructing one
normalises its fields (a policy's text becomes a :class:`~simkit.policies.registry.PolicySpec`,
``rules=None`` the default :class:`~simkit.rules.RuleSet`, sequences tuples) and validates them:
a bad value is a one-line :class:`~simkit.errors.SimkitError` naming the field, before any work.

Its *identity* (:meth:`RunSpec.identity`) is the spec serialised to JSON-ready values, the
fields that decide the run's content only (a field declared with ``identity=False`` — how a
result is summarised, say the confidence level of its intervals — is not in it): what a run
folder stores and what :func:`simkit.storage.runs.check_run_identity` compares when the run
resumes.  Each kind keeps the field names and value forms its folders held before specs, so
folders written by earlier versions resume (tests check each kind against a stored identity).

How a run is *executed* — worker processes, the Dask backend, progress on the terminal —
never changes its result and is not part of the spec: :class:`Execution`.

>>> import dataclasses
>>> @dataclasses.dataclass(frozen=True)
... class Toy(RunSpec):
...     KIND = "toy"
...     deals: int = 100
...     confidence: float = field(0.95, identity=False)
...     def check(self):
...         check_positive_int(self, "deals")
>>> Toy(deals=5).identity()
{'deals': 5}
>>> Toy(deals=0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.errors.SimkitError: deals must be a whole number >= 1, got 0
>>> Toy.defaults()
{'deals': 100, 'confidence': 0.95}
"""

from __future__ import annotations

import dataclasses
import enum
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any, ClassVar

from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec, effective_params, parse_policy
from simkit.rules import RuleSet

IDENTITY = "identity"  # a field's metadata key: False keeps the field out of the identity


def field(default: Any = dataclasses.MISSING, *, identity: bool = True, factory: Any = dataclasses.MISSING):
    """A spec field with its default (declared here, once) and whether it is part of the run's
    identity (``identity=False``: how the result is read or summarised, not what is played)."""
    if factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=factory, metadata={IDENTITY: identity})
    return dataclasses.field(default=default, metadata={IDENTITY: identity})


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """The base of every run kind's spec (module docstring).  A subclass declares its fields
    with their defaults, sets :attr:`KIND` (its name in :data:`simkit.storage.runs.RUN_KINDS`)
    and implements :meth:`check` (normalise with :meth:`_set`, validate with the ``check_*``
    helpers); :meth:`identity` may add what a kind's folders stored beside the fields."""

    KIND: ClassVar[str] = ""

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:  # pragma: no cover - every kind overrides it
        """Normalise and validate the fields (a one-line error naming the first bad one)."""

    def _set(self, name: str, value: Any) -> None:
        """Normalise field ``name`` of this frozen spec (inside :meth:`check` only)."""
        object.__setattr__(self, name, value)

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Each field's default, by name: the one place the kind declares it (the command
        line's options and the experiment files' keys are checked against these)."""
        out = {}
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
        return out

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def identity_fields(self) -> tuple[str, ...]:
        """The fields that decide the run's content, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(self) if f.metadata.get(IDENTITY, True))

    def identity(self) -> dict[str, Any]:
        """The run's identity: its identity fields serialised (:func:`to_json_value`)."""
        return {name: to_json_value(getattr(self, name)) for name in self.identity_fields()}

    def to_dict(self) -> dict[str, Any]:
        """Every field serialised (JSON-ready), identity or not."""
        return {f.name: to_json_value(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def replace(self, **changes: Any) -> "RunSpec":
        """A copy with ``changes`` (validated again)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any], where: str = "") -> "RunSpec":
        """The spec of ``mapping``'s keys (an experiment file's table, a stored spec): an
        unknown key is a one-line error naming it and the known ones."""
        known = cls.field_names()
        unknown = [key for key in mapping if key not in known]
        if unknown:
            place = f"{where}: " if where else ""
            raise SimkitError(f"{place}unknown key {unknown[0]!r} for {cls.KIND or cls.__name__} "
                              f"(known: {', '.join(known)})", parameters=(str(unknown[0]),))
        return cls(**dict(mapping))


@dataclasses.dataclass(frozen=True)
class Execution:
    """How a run is executed, which never changes its result: ``workers`` processes (or Dask
    workers), the ``backend`` (``local`` or ``dask``; ``scheduler``: a Dask scheduler's address,
    else a local cluster of ``workers``) and whether progress is shown (``quiet``: no progress
    bar or line; :mod:`simkit.progress` decides how a shown one looks)."""

    workers: int = 1
    backend: str = "local"
    scheduler: str | None = None
    quiet: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 1:
            raise SimkitError(f"workers must be a whole number >= 1, got {self.workers!r}", parameters=("workers",))
        if self.backend not in ("local", "dask"):
            raise SimkitError(f"backend must be local or dask, got {self.backend!r}", parameters=("backend",))


def to_json_value(value: Any) -> Any:
    """``value`` as stored in an identity: a policy as its text with every parameter
    (:func:`policy_text`), rules as their mapping, tuples as lists, paths as strings, enums by
    value; numbers, strings, None and mappings as they are (recursively).

    >>> to_json_value((1, (2.5, None), {"a": PurePath("x")}))
    [1, [2.5, None], {'a': 'x'}]
    """
    if isinstance(value, PolicySpec):
        return policy_text(value)
    if isinstance(value, RuleSet):
        return value.to_dict()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return os.fspath(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    return value


def policy_text(spec: PolicySpec) -> str:
    """A policy as identities store it: its name with every parameter, defaults included
    (``patient:3.0,...``), so a default changed later is a different run."""
    return PolicySpec(spec.name, effective_params(spec)).text()


def as_policy(value: str | PolicySpec, name: str = "policy") -> PolicySpec:
    """``value`` as a :class:`PolicySpec` (a text is parsed: an unknown name or bad parameter
    is the parser's one-line error)."""
    if isinstance(value, PolicySpec):
        return value
    if not isinstance(value, str):
        raise SimkitError(f"{name} must be a policy name, got {value!r}", parameters=(name,))
    return parse_policy(value)


def as_rules(value: RuleSet | Mapping[str, Any] | None) -> RuleSet:
    """``value`` as a :class:`RuleSet` (None: the default rules; a mapping: its options)."""
    if value is None:
        return RuleSet()
    if isinstance(value, RuleSet):
        return value
    if isinstance(value, Mapping):
        return RuleSet.from_dict(value)
    raise SimkitError(f"rules must be a RuleSet or a mapping of rule options, got {type(value).__name__}",
                      parameters=("rules",))


def _is_whole(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int)


def check_int(spec: RunSpec, name: str, lo: int = 0, hi: int | None = None, allow_none: bool = False) -> None:
    """Field ``name`` is a whole number in [lo, hi] (numpy integers become ints)."""
    value = getattr(spec, name)
    if value is None and allow_none:
        return
    if hasattr(value, "__index__") and not isinstance(value, bool):
        value = int(value.__index__())
        spec._set(name, value)
    if not _is_whole(value) or value < lo or (hi is not None and value > hi):
        bound = f">= {lo}" if hi is None else f"in {lo}..{hi}"
        raise SimkitError(f"{name} must be a whole number {bound}, got {value!r}", parameters=(name,))


def check_positive_int(spec: RunSpec, name: str, allow_none: bool = False) -> None:
    """Field ``name`` is a whole number >= 1."""
    check_int(spec, name, 1, allow_none=allow_none)


def check_float(spec: RunSpec, name: str, lo: float | None = None, hi: float | None = None,
                open_lo: bool = False, open_hi: bool = False, allow_none: bool = False) -> None:
    """Field ``name`` is a finite number within its bounds (stored as a float)."""
    value = getattr(spec, name)
    if value is None and allow_none:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(float(value))
    if ok:
        v = float(value)
        ok = not ((lo is not None and (v < lo or (open_lo and v == lo)))
                  or (hi is not None and (v > hi or (open_hi and v == hi))))
    if not ok:
        low = "" if lo is None else f"{lo} {'<' if open_lo else '<='} "
        high = "" if hi is None else f" {'<' if open_hi else '<='} {hi}"
        raise SimkitError(f"{name} must be a finite number{' with ' + low + name + high if low or high else ''}, "
                          f"got {value!r}", parameters=(name,))
    spec._set(name, float(value))


def check_choice(spec: RunSpec, name: str, choices: Sequence[str], allow_none: bool = False) -> None:
    """Field ``name`` is one of ``choices``."""
    value = getattr(spec, name)
    if value is None and allow_none:
        return
    if not isinstance(value, str) or value not in choices:
        raise SimkitError(f"{name} must be one of {', '.join(choices)}, got {value!r}", parameters=(name,))


def check_bool(spec: RunSpec, name: str) -> None:
    """Field ``name`` is True or False."""
    value = getattr(spec, name)
    if not isinstance(value, bool):
        raise SimkitError(f"{name} must be true or false, got {value!r}", parameters=(name,))

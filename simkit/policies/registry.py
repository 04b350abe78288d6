"""Policies by name, and the tier-1 plug-in API for user ``@njit`` policies.

Tier 1 — a numba policy runs inside the batch kernel at full speed::

    from numba import njit
    from simkit.engine.layout import A_WIN, N_ACTIONS
    from simkit.policies import register_policy

    @njit
    def first_legal(obs, mask, params, rng, rules, work):
        if mask[A_WIN]:
            return A_WIN
        for a in range(N_ACTIONS):
            if mask[a]:
                return a
        return -1

    register_policy("first_legal", first_legal, params=())

The signature is the one of :mod:`simkit.policies.builtin`; ``params`` is a float64 array
(the defaults given at registration, or those of a :class:`PolicySpec`).  Runs that use a
user policy are compiled without numba's on-disk cache (the kernels are specialised on the
user's function), the first call pays the compile time.

Tier 2 — Python classes with ``act(observation, legal_actions)`` run through
:class:`simkit.engine.env.Environment` (see :func:`simkit.engine.env.play_python`).
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import numpy as np

from simkit.errors import SimkitError
from simkit.policies.builtin import P_GREEDY, P_MC, P_PATIENT, P_RANDOM

N_PARAMS = 8
USER_SLOT_BASE = 100  # policy ids of user policies in a run: 100, 101, 102 (one per seat)


class PolicyError(SimkitError):
    """An unknown policy name or bad policy parameters."""


@dataclasses.dataclass(frozen=True)
class PolicySpec:
    """A named policy and its parameters."""

    name: str
    params: tuple[float, ...] = ()

    def text(self) -> str:
        return self.name if not self.params else f"{self.name}:{','.join(f'{p:g}' for p in self.params)}"


@dataclasses.dataclass(frozen=True)
class _Entry:
    builtin_id: int  # -1 for user policies
    defaults: tuple[float, ...]
    function: Callable | None
    doc: str


_REGISTRY: dict[str, _Entry] = {
    "random": _Entry(P_RANDOM, (), None, "uniform over legal actions, always takes a legal win"),
    "greedy": _Entry(P_GREEDY, (), None, "one-ply evaluator heuristic"),
    "patient": _Entry(P_PATIENT, (2.0, 6.0, 1.0), None,
                      "hu-maximiser: wins with >= p0 units unless <= p1 stock cards left; 碰 costing <= p2 idle"),
    "mc": _Entry(P_MC, (16.0, 4.0, 1.5, 0.0, 0.0), None,
                 "determinised Monte Carlo, greedy rollouts: p0 rollouts, p1 candidates, leaves greedy at t > p2"),
}


def register_policy(name: str, function: Callable, params: Sequence[float] = (), doc: str = "") -> None:
    """Register a user ``@njit`` policy under ``name`` (see the module docstring)."""
    if not name or not name.replace("_", "").isalnum():
        raise PolicyError(f"policy name {name!r} must be alphanumeric (underscores allowed)")
    if name in _REGISTRY and _REGISTRY[name].builtin_id >= 0:
        raise PolicyError(f"policy name {name!r} is taken by a built-in policy")
    if not hasattr(function, "py_func"):
        raise PolicyError(f"policy {name!r} must be a numba @njit function")
    if len(params) > N_PARAMS:
        raise PolicyError(f"policy {name!r}: at most {N_PARAMS} parameters")
    _REGISTRY[name] = _Entry(-1, tuple(float(p) for p in params), function, doc)


def unregister_policy(name: str) -> None:
    """Remove a user policy."""
    entry = _REGISTRY.get(name)
    if entry is None or entry.builtin_id >= 0:
        raise PolicyError(f"no user policy named {name!r}")
    del _REGISTRY[name]


def policy_names() -> list[str]:
    """Names of all registered policies."""
    return sorted(_REGISTRY)


def parse_policy(text: str) -> PolicySpec:
    """``name`` or ``name:p0,p1,...``.

    >>> parse_policy("patient:3,4")
    PolicySpec(name='patient', params=(3.0, 4.0))
    """
    name, _, raw = text.strip().partition(":")
    if name not in _REGISTRY:
        raise PolicyError(f"unknown policy {name!r} (known: {', '.join(policy_names())})")
    params: tuple[float, ...] = ()
    if raw:
        try:
            params = tuple(float(x) for x in raw.split(","))
        except ValueError:
            raise PolicyError(f"policy {text!r}: parameters must be numbers") from None
    if len(params) > N_PARAMS:
        raise PolicyError(f"policy {text!r}: at most {N_PARAMS} parameters")
    return PolicySpec(name, params)


def parse_policies(text: str | Sequence[str | PolicySpec]) -> tuple[PolicySpec, PolicySpec, PolicySpec]:
    """Three policies, one per seat: ``"greedy,random,random"`` or a sequence."""
    items = [x for x in text.split(",")] if isinstance(text, str) else list(text)
    # "patient:3,4" contains commas: re-join parameter pieces that follow a name:...
    if isinstance(text, str):
        merged: list[str] = []
        for piece in items:
            if merged and ":" in merged[-1] and piece.strip() and _is_number(piece):
                merged[-1] += "," + piece
            else:
                merged.append(piece)
        items = merged
    specs = [x if isinstance(x, PolicySpec) else parse_policy(x) for x in items]
    if len(specs) != 3:
        raise PolicyError(f"need 3 policies (one per seat), got {len(specs)}")
    return specs[0], specs[1], specs[2]


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def policy_arrays(specs: Sequence[PolicySpec]) -> tuple[np.ndarray, np.ndarray, tuple[Callable | None, ...]]:
    """(policy ids (3,), params (3, N_PARAMS), user functions by seat or None)."""
    ids = np.zeros(3, dtype=np.int64)
    params = np.zeros((3, N_PARAMS), dtype=np.float64)
    user: list[Callable | None] = [None, None, None]
    for seat, spec in enumerate(specs):
        values = effective_params(spec)
        params[seat, : len(values)] = values
        entry = _REGISTRY[spec.name]
        if entry.builtin_id >= 0:
            ids[seat] = entry.builtin_id
        else:
            ids[seat] = USER_SLOT_BASE + seat
            user[seat] = entry.function
    return ids, params, tuple(user)


def effective_params(spec: PolicySpec) -> tuple[float, ...]:
    """The parameters a spec runs with (defaults filled in)."""
    entry = _REGISTRY.get(spec.name)
    if entry is None:
        raise PolicyError(f"unknown policy {spec.name!r} (known: {', '.join(policy_names())})")
    values = list(entry.defaults)
    for i, p in enumerate(spec.params):
        if i < len(values):
            values[i] = p
        else:
            values.append(p)
    return tuple(values)

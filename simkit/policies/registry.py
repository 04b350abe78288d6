"""Policies by name or by import path, and the plug-in API for user ``@njit`` policies.

A user policy is an ``@njit`` function with the signature of :mod:`simkit.policies.builtin`::

    # mypolicies.py (importable: on sys.path / PYTHONPATH, or installed)
    from numba import njit
    from simkit.engine.layout import A_WIN, N_ACTIONS

    @njit
    def first_legal(obs, mask, params, rng, rules, work):
        if mask[A_WIN]:
            return A_WIN
        for a in range(N_ACTIONS):
            if mask[a]:
                return a
        return -1

**By import path** (everywhere a policy is named: ``simkit simulate --policies``, ``compare``,
``replay``, ``equity``, experiment files, the Python API): ``package.module:function`` or
``package.module:function:p0,p1,...`` or ``package.module:function:p0=1:p3=2`` (``params``
is then that float64 array; a policy by import path has no defaults, missing parameters are
0).  The module is imported with
:mod:`importlib` (the command line, like ``python -m``, also looks in the current folder);
a module that fails to import, a missing attribute, a function that is not ``@njit`` or that
does not take the six parameters is a one-line :class:`PolicyError` when the spec is parsed,
before any work.  Worker processes (``--workers K``, Dask) receive the spec text and import
the module themselves, so a policy by import path runs at any scale; the module must be
importable on every worker.

**By name** (sugar for one process): ``register_policy("first_legal", first_legal,
params=())`` makes ``first_legal`` a policy name in this process.  Worker processes do not
know it, so runs with a registered policy stay in this process (``simkit simulate`` says so).

Either way the policy runs inside the batch kernel at full speed: the runner builds the batch
kernels for it from a factory (:func:`simkit.runner.play.make_play_kernels`), compiled once
per process and policy source.  A dataset's identity records :func:`policy_source_digest`
of each user policy (its source and that of the user functions it calls), so that resuming
a run after the policy was edited is refused.

**Parameters** of a built-in policy: one table per policy (:class:`Param` rows: name, default,
range), named ``NAME:key=value:key=value`` (``expert:danger=20:claim_hu=40``, ``mc:rollouts=8``)
or given by position (``mc:16,4,1.5,0,0,0,0``, kept for compatibility); the comma separates
only the policies of a list.  An unknown name, NaN, inf or a value out of range is a one-line
:class:`PolicyError` naming the policy and the parameter (:func:`check_params`, run by every
:class:`PolicySpec`).

Tier 2 — Python classes with ``act(observation, legal_actions)`` run through
:class:`simkit.engine.env.Environment` (see :func:`simkit.engine.env.play_python`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import inspect
import marshal
import math
import os
import re
import sys
import types
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numba
import numpy as np
from numba.core.registry import CPUDispatcher

from simkit.cards import N_SEATS
from simkit.deck import STOCK_CARDS
from simkit.errors import ModelRulesWarning, SimkitError
from simkit.policies.builtin import P_EXPERT, P_GREEDY, P_LEARNED, P_MC, P_PATIENT, P_RANDOM
from simkit.policies.expert import EXPERT_PARAMS
from simkit.policies.learned import MODEL_OFFSET
from simkit.policies.mc import MC_PARAMS
from simkit.policies.model import LoadedModel, load_model, rules_difference

N_PARAMS = 16  # parameters per policy (the width of the params array every policy receives)
assert N_PARAMS == MODEL_OFFSET  # a learned policy's model block follows its N_PARAMS parameters
LEARNED = "learned"  # ``learned:PATH`` plays the model file PATH (plain ``learned`` is no built-in: it played as expert)
USER_SLOT_BASE = 100  # policy ids of a run's distinct user policies: 100, 101, 102 (in order of first seat)
POLICY_ARGUMENTS = ("obs", "mask", "params", "rng", "rules", "work")
_MODULE_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


class PolicyError(SimkitError):
    """An unknown policy name, a policy module that cannot be imported, a function that is
    no policy, or bad policy parameters."""


@dataclasses.dataclass(frozen=True)
class Param:
    """One parameter of a built-in policy: its name, default and valid range [lo, hi] (``(lo,
    hi]`` when ``lo_open``), whole numbers only when ``integer``."""

    name: str
    default: float
    lo: float
    hi: float
    integer: bool = False
    lo_open: bool = False

    def range_text(self) -> str:
        kind = "a whole number" if self.integer else "a number"
        return f"{kind} in {'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}]"

    def problem(self, value: float) -> str | None:
        """Why ``value`` is not valid for this parameter; None when it is."""
        if not math.isfinite(value):
            return f"{self.name} = {value:g} is not a finite number"
        if value < self.lo or value > self.hi or (self.lo_open and value == self.lo) or (
                self.integer and value != int(value)):
            return f"{self.name} = {value:g} is out of range: it is {self.range_text()}"
        return None


def param_table(rows: Sequence[tuple], **defaults: float) -> tuple[Param, ...]:
    """The :class:`Param` rows of a policy module's table (``(name, default, lo, hi)`` or
    ``(name, default, lo, hi, kind)``, kind ``real`` / ``int`` / ``positive``), with
    ``defaults`` by name replacing the table's (a preset such as ``search``)."""
    table = []
    for row in rows:
        name, default, lo, hi = row[:4]
        kind = row[4] if len(row) > 4 else "real"
        table.append(Param(name, float(defaults.pop(name, default)), float(lo), float(hi), integer=kind == "int",
                           lo_open=kind == "positive"))
    if defaults:
        raise ValueError(f"no parameters {sorted(defaults)} in the table")
    return tuple(table)


@dataclasses.dataclass(frozen=True)
class PolicySpec:
    """A policy (a name, or an import path ``package.module:function``) and its parameters
    (by position: ``params[i]`` is the policy's parameter i).  Values that are not finite,
    too many, or (for a built-in policy) out of a parameter's range are a one-line
    :class:`PolicyError` here, whoever makes the spec."""

    name: str
    params: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        try:
            values = tuple(float(p) for p in self.params)
        except (TypeError, ValueError):
            raise PolicyError(f"policy {self.name!r}: parameters must be numbers, got {self.params!r}") from None
        object.__setattr__(self, "params", values)
        check_params(self.name, values)

    def text(self) -> str:
        """``name`` or ``name:p0,p1,...`` (positional: the form recorded in datasets)."""
        return self.name if not self.params else f"{self.name}:{','.join(f'{p:g}' for p in self.params)}"

    def named_text(self) -> str:
        """``name`` or ``name:key=value:key=value``: the parameters given that differ from the
        policy's defaults, by name (an equivalent spec, short enough for a label).

        >>> PolicySpec("patient", (3.0, 6.0)).named_text()
        'patient:min_units=3'
        """
        table = param_table_of(self.name) or ()
        named = [f"{k}={v:g}" for i, (k, v) in enumerate(self.named_params().items())
                 if i >= len(table) or v != table[i].default]
        return ":".join([self.name] + named)

    def named_params(self) -> dict[str, float]:
        """The parameters given, by name (``p<i>`` where a policy names none)."""
        names = param_names(self.name)
        return {names[i] if i < len(names) else f"p{i}": v for i, v in enumerate(self.params)}

    @property
    def is_import_path(self) -> bool:
        """Whether the policy is named by import path (``package.module:function``)."""
        return is_import_path(self.name)


@dataclasses.dataclass(frozen=True)
class _Entry:
    builtin_id: int  # -1 for user policies
    defaults: tuple[float, ...]
    function: Callable | None
    doc: str
    python: Any = None  # a Python-tier policy: a class (made with the spec's parameters) or an object
    table: tuple[Param, ...] | None = None  # a built-in's parameters (None: any p0 .. p15, finite)

    @property
    def param_names(self) -> tuple[str, ...]:
        """Names of params[0], params[1], ... (``p<i>`` works too)."""
        return tuple(p.name for p in self.table or ())


def _builtin(policy_id: int, table: tuple[Param, ...], doc: str) -> _Entry:
    return _Entry(policy_id, tuple(p.default for p in table), None, doc, table=table)


# patient's parameters (the policy is builtin.greedy_like with patient True): (name, default, lo, hi)
PATIENT_PARAMS = (("min_units", 2.0, 0.0, 1000.0), ("late_stock", 6.0, 0.0, STOCK_CARDS),
                  ("peng_slack", 1.0, 0.0, 100.0))

_REGISTRY: dict[str, _Entry] = {
    "random": _builtin(P_RANDOM, (), "uniform over legal actions, always takes a legal win"),
    "greedy": _builtin(P_GREEDY, (), "one-ply evaluator heuristic"),
    "patient": _builtin(P_PATIENT, param_table(PATIENT_PARAMS),
                        "hu-maximiser: wins with >= min_units units unless <= late_stock stock cards left; 碰 costing "
                        "<= peng_slack idle"),
    "mc": _builtin(P_MC, param_table(MC_PARAMS),
                   "determinised Monte Carlo, greedy rollouts (expert: base 1): races candidates at claim decisions, "
                   "leaves greedy's choice at t > z"),
    # the strong search bot (issue 51): mc over expert at every decision with a choice, every legal
    # candidate, determinisations sharpened towards complete opponent hands, raced at every doubling
    # from 32 up to 512, a choice leaving expert's confirmed on 256 fresh determinisations
    "search": _builtin(P_MC, param_table(MC_PARAMS, rollouts=512, candidates=28, z=1, search_mode=0, sharpen=20,
                                         race=32, focus=0, base=1, recut=1, confirm=256),
                       "mc over expert: every decision, every candidate, sharpened determinisations, raced, "
                       "confirmed on fresh ones"),
    "expert": _builtin(P_EXPERT, param_table(EXPERT_PARAMS),
                       "hand-value heuristic: outs, pairs, 子, chariot/清/天地 prospects, locks, discard danger"),
    # not a built-in name: the family of ``learned:PATH`` (a model file of simkit train's); plain
    # ``learned`` played the shipped model, which decides exactly as expert (issue 51), so it is
    # refused (:func:`_entry`) and left out of :func:`policy_names` / :func:`builtin_names`
    LEARNED: _builtin(P_LEARNED, (), "value network fitted to self-play returns (simkit train): learned:PATH plays "
                                     "the model file PATH"),
}
LEARNED_REFUSED = (f"policy {LEARNED!r} is no longer a built-in policy (it played the shipped model, which decides "
                   f"exactly as expert); play a model of your own as {LEARNED}:PATH, made by simkit train")


def learned_model_path(name: str) -> str | None:
    """The model file a ``learned:PATH`` policy name plays (PATH); None for any other name
    (plain ``learned`` included: it is no built-in policy, :data:`LEARNED_REFUSED`).

    >>> learned_model_path("learned:models/mine.npz"), learned_model_path("expert"), learned_model_path("learned")
    ('models/mine.npz', None, None)
    """
    if name.startswith(LEARNED + ":") and name[len(LEARNED) + 1 :]:
        return name[len(LEARNED) + 1 :]
    return None


def learned_model(name: str) -> LoadedModel | None:
    """The checked model of a ``learned`` policy name (a one-line error naming the file when
    it is missing, truncated, foreign or of another layout); None for any other name."""
    path = learned_model_path(name)
    return None if path is None else load_model(path)


_WARNED_RULES: set[tuple[str, tuple[str, ...]]] = set()


def warn_model_rules(specs: Sequence[PolicySpec], rules_dict: dict) -> list[str]:
    """Warn (:class:`~simkit.errors.ModelRulesWarning`, one line, once per model and rule set in
    a process) for each ``learned`` policy of ``specs`` whose model was trained for other rules
    than ``rules_dict``; returns the warnings' texts."""
    texts = []
    for spec in specs:
        model = learned_model(spec.name)
        if model is None:
            continue
        changed = tuple(rules_difference(model.rules, rules_dict))
        if changed:
            text = (f"policy {spec.name}: its model was trained for other rules than this run's "
                    f"({', '.join(changed)}); it plays them untrained (simkit train --rule ... makes a model for them)")
            texts.append(text)
            if (spec.name, changed) not in _WARNED_RULES:
                _WARNED_RULES.add((spec.name, changed))
                warnings.warn(text, ModelRulesWarning, stacklevel=2)
    return texts


def _base_name(name: str) -> str:
    """The registry name of a policy name (``learned`` for ``learned:PATH``)."""
    return LEARNED if learned_model_path(name) is not None else name
MC_PARAM_NAMES = _REGISTRY["mc"].param_names


def _is_jitted(function: Any) -> bool:
    """A numba ``@njit`` function (a plain function when numba's JIT is disabled)."""
    if numba.config.DISABLE_JIT:
        return isinstance(function, types.FunctionType)
    return isinstance(function, CPUDispatcher)


def is_python_tier(obj: Any) -> bool:
    """A Python-tier policy: a class whose instances have ``act(observation, legal_actions)``,
    or such an object (not a function)."""
    if isinstance(obj, type):
        return callable(getattr(obj, "act", None))
    return not isinstance(obj, (types.FunctionType, CPUDispatcher)) and callable(getattr(obj, "act", None))


def check_policy_function(label: str, function: Any) -> None:
    """One-line :class:`PolicyError` unless ``function`` is an ``@njit`` function taking the
    six parameters ``(obs, mask, params, rng, rules, work)`` (any names)."""
    if not _is_jitted(function):
        what = type(function).__name__
        raise PolicyError(f"policy {label!r} must be a numba @njit function or a Python policy (a class with "
                          f"act(observation, legal_actions)), got a {what}")
    py_func = getattr(function, "py_func", function)
    try:
        signature = inspect.signature(py_func)
    except (TypeError, ValueError):
        raise PolicyError(f"policy {label!r}: cannot read the function's signature") from None
    kinds = [p.kind for p in signature.parameters.values()]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(kinds) != len(POLICY_ARGUMENTS) or any(k not in positional for k in kinds):
        raise PolicyError(f"policy {label!r}: the function takes {py_func.__name__}{signature}, a policy takes "
                          f"6 parameters ({', '.join(POLICY_ARGUMENTS)})")


def register_policy(name: str, function: Callable, params: Sequence[float] = (), doc: str = "") -> None:
    """Register a user ``@njit`` policy under ``name`` (in this process: see the module docstring)."""
    if not name or not name.replace("_", "").isalnum():
        raise PolicyError(f"policy name {name!r} must be alphanumeric (underscores allowed)")
    if name in _REGISTRY and _REGISTRY[name].builtin_id >= 0:
        raise PolicyError(f"policy name {name!r} is taken by a built-in policy")
    check_policy_function(name, function)
    PolicySpec(name, tuple(params))  # finite numbers, at most N_PARAMS (one-line PolicyError)
    _REGISTRY[name] = _Entry(-1, tuple(float(p) for p in params), function, doc)


def unregister_policy(name: str) -> None:
    """Remove a user policy."""
    entry = _REGISTRY.get(name)
    if entry is None or entry.builtin_id >= 0:
        raise PolicyError(f"no user policy named {name!r}")
    del _REGISTRY[name]


def policy_names() -> list[str]:
    """Names of all policies offered by name: the built-in ones (:func:`builtin_names`) and
    those registered in this process (``learned``, the family of ``learned:PATH``, is no name
    of its own)."""
    return sorted(name for name in _REGISTRY if name != LEARNED)


def builtin_names() -> tuple[str, ...]:
    """The names of simkit's built-in policies, presets such as ``search`` (which shares mc's
    id) included, ``learned`` not (it plays a model file, ``learned:PATH``): what a policy named
    where only built-in policies are taken (a replay log's deal line) may be, with or without
    parameters.

    >>> builtin_names()
    ('expert', 'greedy', 'mc', 'patient', 'random', 'search')
    """
    return tuple(sorted(name for name, entry in _REGISTRY.items() if entry.builtin_id >= 0 and name != LEARNED))


def builtin_policy_name(policy_id: int) -> str | None:
    """The name of the built-in policy with this id (``mc`` for mc's id, which ``search``
    shares); None for any other id.

    >>> builtin_policy_name(P_GREEDY), builtin_policy_name(99)
    ('greedy', None)
    """
    return next((name for name, entry in _REGISTRY.items() if entry.builtin_id == int(policy_id) >= 0), None)


def param_names(name: str) -> tuple[str, ...]:
    """Names of a policy's parameters, in order (() for a user policy: ``p<i>`` only).

    >>> param_names("patient")
    ('min_units', 'late_stock', 'peng_slack')
    """
    entry = _REGISTRY.get(_base_name(name))
    return entry.param_names if entry is not None else ()


def param_table_of(name: str) -> tuple[Param, ...] | None:
    """A built-in policy's parameter table (names, defaults, ranges); None for a user policy."""
    entry = _REGISTRY.get(_base_name(name))
    return entry.table if entry is not None else None


def _size(name: str) -> int:
    """How many parameters a policy takes."""
    table = param_table_of(name)
    return N_PARAMS if table is None else len(table)


def param_index(name: str, parameter: str) -> int:
    """The index in ``params`` of a policy's parameter, by its name or as ``p<i>``.

    >>> param_index("patient", "late_stock"), param_index("patient", "p2")
    (1, 2)
    """
    entry = _entry(name)
    if parameter in entry.param_names:
        return entry.param_names.index(parameter)
    if re.fullmatch(r"p\d+", parameter) and int(parameter[1:]) < _size(name):
        return int(parameter[1:])
    if entry.table is not None:
        known = ", ".join(entry.param_names) if entry.param_names else "none: it takes no parameters"
        raise PolicyError(f"policy {name!r} has no parameter {parameter!r} (its parameters: {known})")
    raise PolicyError(f"policy {name!r} has no parameter {parameter!r} (a user policy's are p0 .. p{N_PARAMS - 1})")


def check_params(name: str, values: Sequence[float]) -> None:
    """A one-line :class:`PolicyError` naming the policy and the parameter unless every value
    is a finite number, there are at most as many as the policy takes, and (for a built-in
    policy) each is in its parameter's range (:class:`Param`)."""
    table = param_table_of(name)
    size = _size(name)
    if len(values) > size:
        if table is not None:
            takes = "no parameters" if not table else f"{len(table)} parameters ({', '.join(p.name for p in table)})"
            raise PolicyError(f"policy {name!r} takes {takes}, got {len(values)}")
        raise PolicyError(f"policy {name!r}: at most {N_PARAMS} parameters, got {len(values)}")
    for i, value in enumerate(values):
        if table is not None:
            problem = table[i].problem(value)
        else:
            problem = None if math.isfinite(value) else f"p{i} = {value:g} is not a finite number"
        if problem is not None:
            raise PolicyError(f"policy {name!r}: {problem}", parameters=("policies",))


def is_import_path(name: str) -> bool:
    """``package.module:function`` (no parameters): a policy named by import path.

    >>> is_import_path("experiments.user_policy_example:cautious"), is_import_path("patient")
    (True, False)
    """
    module, sep, function = name.partition(":")
    if learned_model_path(name) is not None:
        return False
    return bool(sep) and _MODULE_PATH.fullmatch(module) is not None and function.isidentifier()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def import_policy(name: str) -> Any:
    """The ``@njit`` function (or the Python-tier class or object, :func:`is_python_tier`) of
    the import path ``package.module:function``, checked
    (:func:`check_policy_function`); a one-line :class:`PolicyError` otherwise.  Imported on
    every call (Python keeps the module in ``sys.modules``), so a worker process imports it
    itself."""
    module_name, _, attribute = name.partition(":")
    if not is_import_path(name):
        raise PolicyError(f"policy {name!r}: an import path is package.module:function")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - ImportError, or whatever the module raised on import
        raise PolicyError(f"policy {name!r}: cannot import module {module_name!r} ({_one_line(exc)})") from None
    try:
        function = getattr(module, attribute)
    except AttributeError:
        raise PolicyError(f"policy {name!r}: module {module_name!r} has no attribute {attribute!r}") from None
    if is_python_tier(function):
        return function
    check_policy_function(name, function)
    return function


def _entry(name: str) -> _Entry:
    """The registry entry of a policy name, or the entry of an import path (imported now);
    a ``learned:PATH`` name's model file is checked now; plain ``learned`` is refused in one
    line (:data:`LEARNED_REFUSED`)."""
    if name.strip() == LEARNED:
        raise PolicyError(LEARNED_REFUSED)
    entry = _REGISTRY.get(_base_name(name))
    if entry is not None:
        learned_model(name)
        return entry
    if is_import_path(name):
        function = import_policy(name)
        doc = (getattr(function, "__doc__", None) or "").strip().split("\n")[0]
        if is_python_tier(function):
            return _Entry(-1, (), None, doc, python=function)
        return _Entry(-1, (), function, doc)
    raise PolicyError(f"unknown policy {name!r} (known: {', '.join(policy_names())}; {LEARNED}:PATH, a model file "
                      "of simkit train's; or a user policy by import path, package.module:function)")


def _split(text: str) -> tuple[str, str]:
    """(policy name or import path, raw parameter text) of one spec."""
    text = text.strip()
    head, _, rest = text.partition(":")
    if head.strip() == LEARNED and rest.strip():
        return f"{LEARNED}:{rest.strip()}", ""  # learned:PATH (the rest is the path: no parameters)
    if head not in _REGISTRY and rest:
        function, _, raw = rest.partition(":")
        if function.strip().isidentifier():
            return f"{head.strip()}:{function.strip()}", raw
    return head, rest


def _number(text: str, spec: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise PolicyError(f"policy {spec!r}: {what} {text.strip()!r} is not a number") from None


def _named_values(name: str, spec: str, raw: str) -> tuple[float, ...]:
    """The parameters of ``key=value:key=value`` (by position: the policy's defaults, 0 for a
    user policy's, up to the last one named)."""
    given: dict[int, float] = {}
    for piece in raw.split(":"):
        key, sep, value = piece.partition("=")
        key = key.strip()
        if not sep or not key:
            raise PolicyError(f"policy {spec!r}: {piece!r} is not key=value (named parameters: "
                              f"{name}:key=value:key=value; positional: {name}:v0,v1,...; do not mix them)")
        index = param_index(name, key)
        if index in given:
            raise PolicyError(f"policy {spec!r}: parameter {key!r} is given twice")
        given[index] = _number(value, spec, f"parameter {key}:")
    defaults = list(_entry(name).defaults)
    values = [defaults[i] if i < len(defaults) else 0.0 for i in range(max(given) + 1)]
    for i, v in given.items():
        values[i] = v
    return tuple(values)


def parse_policy(text: str) -> PolicySpec:
    """``name``, ``name:key=value:key=value`` (named parameters; ``p<i>`` names parameter i),
    ``name:p0,p1,...`` (positional), ``package.module:function`` or
    ``package.module:function:...`` with parameters (the module is imported and the function
    checked now).  An unknown name, a value that is not a finite number or is out of the
    parameter's range: a one-line :class:`PolicyError` naming the policy and the parameter.

    >>> parse_policy("patient:3,4")
    PolicySpec(name='patient', params=(3.0, 4.0))
    >>> parse_policy("patient:late_stock=4") == parse_policy("patient:2,4")
    True
    >>> parse_policy("simkit.bench:greedy_by_import:1")
    PolicySpec(name='simkit.bench:greedy_by_import', params=(1.0,))
    """
    name, raw = _split(text)
    _entry(name)
    params: tuple[float, ...] = ()
    if "=" in raw and "," in raw:
        raise PolicyError(f"policy {text.strip()!r} mixes positional and named parameters (named: "
                          f"{name}:key=value:key=value; positional: {name}:v0,v1,...)")
    if raw.strip():
        if "=" in raw:
            params = _named_values(name, text.strip(), raw)
        else:
            params = tuple(_number(x, text.strip(), "parameter" if not x.strip().isidentifier() else
                                   "parameter (named parameters are key=value)") for x in raw.split(","))
    elif raw or text.strip().endswith(":"):
        raise PolicyError(f"policy {text.strip()!r}: no parameters after ':'")
    return PolicySpec(name, params)


def _has_params(piece: str) -> bool:
    """Whether a spec piece already holds positional parameters (so a following number is one
    more: ``mc:16,4,1.5``); named parameters never take a comma."""
    raw = _split(piece)[1]
    return bool(raw) and "=" not in raw


def parse_policies(text: str | Sequence[str | PolicySpec]) -> tuple[PolicySpec, PolicySpec, PolicySpec]:
    """Three policies, one per seat: ``"greedy,random,random"`` or a sequence."""
    specs = parse_policy_list(text)
    if len(specs) != N_SEATS:
        raise PolicyError(f"need {N_SEATS} policies (one per seat), got {len(specs)}")
    return specs[0], specs[1], specs[2]


def parse_policy_list(text: str | Sequence[str | PolicySpec]) -> tuple[PolicySpec, ...]:
    """Any number of policies: comma-separated specs (``"greedy,patient:3,6,expert:danger=20"``:
    a number after a spec with positional parameters is one more of them) or a sequence.

    >>> [s.text() for s in parse_policy_list("greedy,patient:3,6,random")]
    ['greedy', 'patient:3,6', 'random']
    """
    items = [x for x in text.split(",")] if isinstance(text, str) else list(text)
    # "patient:3,4" contains commas: re-join parameter pieces that follow a name:... (or a
    # package.module:function:...) that already has parameters
    if isinstance(text, str):
        merged: list[str] = []
        for piece in items:
            if merged and _has_params(merged[-1]) and piece.strip() and is_number(piece):
                merged[-1] += "," + piece
            else:
                merged.append(piece)
        items = merged
        for before, piece in zip(items, items[1:]):
            if is_number(piece) and "=" in _split(before)[1]:
                raise PolicyError(f"{piece.strip()!r} after {before.strip()!r}: a number cannot follow named "
                                  "parameters (name them all, joined by ':'); ',' separates the policies")
            if "=" in piece and ":" not in piece:
                raise PolicyError(f"{piece.strip()!r} after {before.strip()!r}: named parameters are joined by ':' "
                                  f"(e.g. expert:danger=20:claim_hu=40); ',' separates the policies")
    return tuple(x if isinstance(x, PolicySpec) else parse_policy(x) for x in items)


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a float (a parameter after a policy spec)."""
    try:
        float(text)
        return True
    except ValueError:
        return False


def policy_arrays(specs: Sequence[PolicySpec]) -> tuple[np.ndarray, np.ndarray, tuple[Callable | None, ...]]:
    """(policy ids (3,), params (3, N_PARAMS + the largest model block: a ``learned``
    policy's row holds its model after its parameters), user functions by slot).

    The distinct user functions of ``specs``, in order of first appearance, fill the slots
    0, 1, 2 (None where unused) and get the policy ids ``USER_SLOT_BASE + slot``: the same
    user policy at any seat (as in the seatings of a comparison) uses the same slot, and so
    the same compiled kernels (:func:`simkit.runner.play.user_kernels`)."""
    ids = np.zeros(N_SEATS, dtype=np.int64)
    models = [learned_model(spec.name) for spec in specs]
    width = N_PARAMS + max((m.block.size for m in models if m is not None), default=0)
    params = np.zeros((N_SEATS, width), dtype=np.float64)
    user: list[Callable] = []
    for seat, spec in enumerate(specs):
        model = models[seat]
        if model is not None:
            params[seat, N_PARAMS : N_PARAMS + model.block.size] = model.block
        entry = _entry(spec.name)
        if entry.python is not None:
            raise PolicyError(f"policy {spec.name!r} is a Python policy: it cannot run in a compiled kernel (simulate, "
                              "compare and tournament play it in Python; replay and equity need compiled policies)")
        values = _with_defaults(entry, spec)
        params[seat, : len(values)] = values
        if entry.builtin_id >= 0:
            ids[seat] = entry.builtin_id
        else:
            slot = next((k for k, fn in enumerate(user) if fn is entry.function), len(user))
            if slot == len(user):
                user.append(entry.function)  # type: ignore[arg-type]
            ids[seat] = USER_SLOT_BASE + slot
    return ids, params, tuple(user) + (None,) * (N_SEATS - len(user))


def _with_defaults(entry: _Entry, spec: PolicySpec) -> tuple[float, ...]:
    values = list(entry.defaults)
    for i, p in enumerate(spec.params):
        if i < len(values):
            values[i] = p
        else:
            values.append(p)
    return tuple(values)


def effective_params(spec: PolicySpec) -> tuple[float, ...]:
    """The parameters a spec runs with (defaults filled in)."""
    return _with_defaults(_entry(spec.name), spec)


def params_by_name(spec: PolicySpec) -> dict[str, float]:
    """Every parameter a spec runs with (defaults filled in), by name (``p<i>`` for a user
    policy's): what manifests record next to the positional ``policies`` texts.

    >>> params_by_name(parse_policy("patient:min_units=3"))
    {'min_units': 3.0, 'late_stock': 6.0, 'peng_slack': 1.0}
    """
    return PolicySpec(spec.name, effective_params(spec)).named_params()


def policy_label(spec: PolicySpec | str) -> str:
    """A policy's label in tables, plots and dataset columns: its name alone when it plays with
    its default parameters, else ``name:key=value:key=value`` of only the parameters that differ
    from the defaults, in the policy's parameter order (``p<i>`` for a user policy's); an
    equivalent spec (:func:`parse_policy` reads it back).  Manifests keep the full vector
    (``policies``, :func:`params_by_name`).

    >>> policy_label("expert"), policy_label("patient:3,6,1"), policy_label("patient:peng_slack=2:min_units=3")
    ('expert', 'patient:min_units=3', 'patient:min_units=3:peng_slack=2')
    >>> policy_label(PolicySpec("expert", effective_params(parse_policy("expert"))))
    'expert'
    """
    spec = parse_policy(spec) if isinstance(spec, str) else spec
    entry = _entry(spec.name)
    values = _with_defaults(entry, spec)
    names = param_names(spec.name)
    differing = [f"{names[i] if i < len(names) else f'p{i}'}={v:g}" for i, v in enumerate(values)
                 if i >= len(entry.defaults) or v != entry.defaults[i]]
    return ":".join([spec.name] + differing)


def label_of_text(text: str) -> str:
    """:func:`policy_label` of a policy text a file records (a manifest's or an identity's
    positional ``name:p0,p1,...``); the text itself when it cannot be read (a model file that is
    gone).  A user policy (by import path) is never imported here: it has no defaults, so its
    label names every parameter given.

    >>> label_of_text("patient:3,6,1"), label_of_text("mymodule:policy:1,2"), label_of_text("mymodule:policy")
    ('patient:min_units=3', 'mymodule:policy:p0=1:p1=2', 'mymodule:policy')
    """
    name, raw = _split(str(text))
    if _REGISTRY.get(_base_name(name)) is None:  # by import path (or unknown): read as text, nothing imported
        try:
            values = [float(x) for x in raw.split(",")] if raw.strip() else []
        except ValueError:
            return str(text)
        return ":".join([name] + [f"p{i}={v:g}" for i, v in enumerate(values)])
    try:
        return policy_label(parse_policy(str(text)))
    except SimkitError:
        return str(text)


def is_python_policy(spec: PolicySpec) -> bool:
    """A Python-tier policy (by import path): played by :mod:`simkit.runner.python_play`."""
    return _entry(spec.name).python is not None


def python_policy_object(spec: PolicySpec) -> Any:
    """The object that plays a Python-tier spec: its class made with the spec's parameters
    (``Class(*params)``), or the module's object itself (which then takes no parameters)."""
    target = _entry(spec.name).python
    if target is None:
        raise PolicyError(f"policy {spec.name!r} is not a Python policy")
    if isinstance(target, type):
        try:
            return target(*spec.params)
        except Exception as exc:  # noqa: BLE001 - the user's constructor
            raise PolicyError(f"policy {spec.text()!r}: {target.__name__}{tuple(spec.params)} failed "
                              f"({_one_line(exc)})") from None
    if spec.params:
        raise PolicyError(f"policy {spec.name!r} is an object, not a class: it takes no parameters")
    return target


def is_user_policy(spec: PolicySpec) -> bool:
    """A user policy (by import path, or registered by name), not a built-in one."""
    return _entry(spec.name).builtin_id < 0


# ---- source digests of user policies

_NOT_USER_CODE = ("simkit", "numba", "numpy", "llvmlite", "builtins")  # top-level packages not followed


def _user_module(name: str | None) -> bool:
    return bool(name) and name.partition(".")[0] not in _NOT_USER_CODE


def _constant_text(value: Any, depth: int = 0) -> str | None:
    """A stable text of a constant numba would freeze into the compiled code; None otherwise."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, np.generic)):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, tuple) and depth < 4:
        items = [_constant_text(v, depth + 1) for v in value]
        return None if None in items else f"tuple ({', '.join(items)})"  # type: ignore[arg-type]
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return f"array {data.dtype.str} {data.shape} {hashlib.sha256(data.tobytes()).hexdigest()}"
    return None


def _code_names(code: types.CodeType) -> list[str]:
    """Global and attribute names a code object and its nested code objects use."""
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(_code_names(const))
    return names


def _references(py_func: types.FunctionType) -> Iterator[tuple[str, Any]]:
    """(label, value) of what a function reaches through its globals (``name`` and, for a
    user module, ``name.attribute``) and its closure, sorted by label."""
    names = sorted(set(_code_names(py_func.__code__)))
    found: dict[str, Any] = {}
    scope = py_func.__globals__
    for name in names:
        if name not in scope:
            continue
        value = scope[name]
        found[name] = value
        if isinstance(value, types.ModuleType) and _user_module(value.__name__):
            for attribute in names:
                if hasattr(value, attribute):
                    found[f"{name}.{attribute}"] = getattr(value, attribute)
    for name, cell in zip(py_func.__code__.co_freevars, py_func.__closure__ or ()):
        try:
            found[f"<closure> {name}"] = cell.cell_contents
        except ValueError:  # an empty cell
            found[f"<closure> {name}"] = None
    return iter(sorted(found.items()))


def _function_source(py_func: types.FunctionType) -> str:
    try:
        return inspect.getsource(py_func)
    except (OSError, TypeError):  # no source file (a REPL, exec): the compiled code instead
        return "code " + hashlib.sha256(marshal.dumps(py_func.__code__)).hexdigest()


def _source_lines(function: Any) -> list[str]:
    """What :func:`policy_source_digest` hashes, in a deterministic order: each user
    function's qualified name and source (the policy first, then depth-first the user
    functions it reaches, each once), and what each one refers to: constants by value,
    simkit / numba / numpy functions and modules by name (they are simkit's version, not the
    policy's source)."""
    lines: list[str] = []
    seen: set[str] = set()

    def visit(obj: Any) -> None:
        if not isinstance(obj, (types.FunctionType, CPUDispatcher)) and is_python_tier(obj):
            # a Python policy: its class, its module's source and that of the modules of its
            # own source tree it imports (its helpers), each by name and text
            cls = obj if isinstance(obj, type) else type(obj)
            lines.append(f"class {cls.__module__}:{cls.__qualname__}")
            lines.extend(f"module {name}\n{text}" for name, text in _module_sources(cls.__module__))
            return
        py_func = getattr(obj, "py_func", obj)
        key = f"{py_func.__module__}:{py_func.__qualname__}"
        if key in seen:
            return
        seen.add(key)
        lines.append(f"def {key}\n{_function_source(py_func)}")
        for label, value in _references(py_func):
            inner = getattr(value, "py_func", value)
            if isinstance(inner, types.FunctionType):
                if _user_module(inner.__module__):
                    lines.append(f"ref {label} -> {inner.__module__}:{inner.__qualname__}")
                    visit(value)
                else:
                    lines.append(f"ref {label} -> {inner.__module__}:{inner.__qualname__}")
            elif isinstance(value, types.ModuleType):
                lines.append(f"ref {label} -> module {value.__name__}")
            else:
                text = _constant_text(value)
                if text is not None:
                    lines.append(f"const {label} = {text}")

    visit(function)
    return lines


def _module_root(module: types.ModuleType) -> Path | None:
    """The folder a module's source tree starts in: for ``pkg.sub.mod`` the folder holding
    ``pkg``, for a top-level module its own folder; None without a source file."""
    file = getattr(module, "__file__", None)
    if not file:
        return None
    path = Path(file).resolve()
    depth = module.__name__.count(".") + (1 if path.name == "__init__.py" else 0)
    return path.parents[depth]


def _module_text(module: types.ModuleType) -> str:
    try:
        return inspect.getsource(module)
    except (OSError, TypeError):  # no source (a compiled-only module): its file's bytes, or nothing
        file = getattr(module, "__file__", None)
        return "bytes " + hashlib.sha256(Path(file).read_bytes()).hexdigest() if file else "no source"


def _module_sources(name: str) -> list[tuple[str, str]]:
    """(module name, source) of module ``name`` and of every module of its own source tree
    (:func:`_module_root`: the same top-level folder, so not the standard library,
    site-packages or simkit) that it imports, directly or through those modules: the modules
    whose global names it holds, or whose functions and classes it imported by name.  Sorted
    by name."""
    start = sys.modules.get(name)
    if start is None:
        return [(name, "not imported")]
    root = _module_root(start)
    found: dict[str, str] = {}
    todo = [start]
    while todo:
        module = todo.pop()
        if module.__name__ in found:
            continue
        found[module.__name__] = _module_text(module)
        for value in list(vars(module).values()):
            if isinstance(value, types.ModuleType):
                other = value
            else:
                other = sys.modules.get(getattr(value, "__module__", None) or "") if callable(value) else None
            if (other is None or other.__name__ in found or not _user_module(other.__name__)
                    or root is None or _module_root(other) != root):
                continue
            todo.append(other)
    return sorted(found.items())


@functools.lru_cache(maxsize=64)
def _digest_of(function: Any) -> str:
    text = "\n\0".join(_source_lines(function))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def policy_source_digest(function: Any) -> str:
    """16 hex digits of sha256 over a user policy's source: the function's own
    (``inspect.getsource`` of its ``py_func``), the sources of the user functions it calls
    (followed through its globals and closure, recursively; functions of simkit, numba and
    numpy are recorded by name only), and the values of the constants it reads (numba freezes
    global constants into the compiled code).  Deterministic: the same files give the same
    digest in every process and on every machine.  An edit of the policy, or of a helper of
    the user's it calls, changes it; a comment or blank line changes it too (it hashes text).
    Cached per function object: a module edited in a running process counts once re-imported
    (``importlib.reload``).

    A Python policy (a class with ``act``, :func:`is_python_tier`) is hashed by its module's
    whole source and that of every module of its own source tree it imports (a helper module
    beside it, the other modules of its package; never the standard library, site-packages or
    simkit), so editing a helper its ``act`` calls changes the digest too."""
    return _digest_of(function)


def policy_sources(specs: Sequence[PolicySpec]) -> tuple[tuple[str, str], ...]:
    """(policy name or import path, :func:`policy_source_digest`) of each distinct user
    policy of ``specs``, and (name, ``model sha256:…``) of each ``learned`` policy (its model
    file's digest), sorted by name; () when all are built-in without a model."""
    found: dict[str, str] = {}
    for spec in specs:
        entry = _entry(spec.name)
        model = learned_model(spec.name)
        if model is not None:
            found[spec.name] = f"model sha256:{model.digest}"
        elif entry.builtin_id < 0 and spec.name not in found:
            found[spec.name] = policy_source_digest(entry.function if entry.python is None else entry.python)
    return tuple(sorted(found.items()))


def require_policy_sources(specs: Sequence[PolicySpec], recorded: Sequence[tuple[str, str]],
                           started: str = "the run") -> None:
    """In the process that plays (a Dask worker imports the user policies itself): the
    :func:`policy_sources` of ``specs`` here must be ``recorded``, those where ``started``
    began; else a one-line :class:`SimkitError` naming the policy and both digests.

    >>> require_policy_sources([PolicySpec("greedy")], ())
    """
    try:
        here = policy_sources(specs)
    except PolicyError as exc:  # a worker without the policy's module: say where, in one line
        raise PolicyError(f"{exc} in this process ({os.getpid()}, where {started} plays its tasks: a Dask worker "
                          "needs each user policy's module importable, installed or on its PYTHONPATH)") from None
    theirs = dict(recorded)
    for name, digest in here:
        if theirs.get(name) != digest:
            raise SimkitError(f"policy {name} differs in this process ({os.getpid()}) from {started}'s: source "
                              f"digest {digest} here, {theirs.get(name)} where {started} started (edited since, or "
                              "another version on this worker)")

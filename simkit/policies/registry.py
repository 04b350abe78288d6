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
``package.module:function:p0,p1,...`` (``params`` is then that float64 array; a policy by
import path has no defaults, missing parameters are 0).  The module is imported with
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
import re
import types
from typing import Any, Callable, Iterator, Sequence

import numba
import numpy as np
from numba.core.registry import CPUDispatcher

from simkit.errors import SimkitError
from simkit.policies.builtin import P_EXPERT, P_GREEDY, P_MC, P_PATIENT, P_RANDOM
from simkit.policies.expert import EXPERT_DEFAULTS, EXPERT_PARAM_NAMES

N_PARAMS = 16  # parameters per policy (the width of the params array every policy receives)
USER_SLOT_BASE = 100  # policy ids of a run's distinct user policies: 100, 101, 102 (in order of first seat)
POLICY_ARGUMENTS = ("obs", "mask", "params", "rng", "rules", "work")
_MODULE_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


class PolicyError(SimkitError):
    """An unknown policy name, a policy module that cannot be imported, a function that is
    no policy, or bad policy parameters."""


@dataclasses.dataclass(frozen=True)
class PolicySpec:
    """A policy (a name, or an import path ``package.module:function``) and its parameters."""

    name: str
    params: tuple[float, ...] = ()

    def text(self) -> str:
        return self.name if not self.params else f"{self.name}:{','.join(f'{p:g}' for p in self.params)}"

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
    param_names: tuple[str, ...] = ()  # names of params[0], params[1], ... (``p<i>`` always works too)


MC_PARAM_NAMES = ("rollouts", "candidates", "z", "search_mode", "sharpen", "race", "focus", "horizon", "base")

_REGISTRY: dict[str, _Entry] = {
    "random": _Entry(P_RANDOM, (), None, "uniform over legal actions, always takes a legal win"),
    "greedy": _Entry(P_GREEDY, (), None, "one-ply evaluator heuristic"),
    "patient": _Entry(P_PATIENT, (2.0, 6.0, 1.0), None,
                      "hu-maximiser: wins with >= p0 units unless <= p1 stock cards left; 碰 costing <= p2 idle",
                      param_names=("min_units", "late_stock", "peng_slack")),
    "mc": _Entry(P_MC, (12.0, 4.0, 1.0, 1.0, 0.0, 3.0, 1.0, 0.0, 0.0), None,
                 "determinised Monte Carlo, greedy rollouts (expert: base 1): races candidates at claim decisions, "
                 "leaves greedy's choice at t > z",
                 param_names=MC_PARAM_NAMES),
    # the strong search bot: mc with expert as its baseline choice and rollout policy, 48
    # determinisations raced after 4, every claim option searched (issue 14's tuned search)
    "search": _Entry(P_MC, (48.0, 4.0, 1.0, 1.0, 0.0, 4.0, 0.0, 0.0, 1.0), None,
                     "mc tuned: expert as base and in rollouts, 48 determinisations raced after 4, claims searched",
                     param_names=MC_PARAM_NAMES),
    "expert": _Entry(P_EXPERT, EXPERT_DEFAULTS, None,
                     "hand-value heuristic: outs, pairs, 子, chariot/清/天地 prospects, locks, discard danger",
                     param_names=EXPERT_PARAM_NAMES),
}


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


def param_index(name: str, parameter: str) -> int:
    """The index in ``params`` of a policy's parameter, by its name or as ``p<i>``.

    >>> param_index("patient", "late_stock"), param_index("patient", "p2")
    (1, 2)
    """
    entry = _entry(name)
    if parameter in entry.param_names:
        return entry.param_names.index(parameter)
    if re.fullmatch(r"p\d+", parameter) and int(parameter[1:]) < N_PARAMS:
        return int(parameter[1:])
    known = ", ".join(entry.param_names) if entry.param_names else "none"
    raise PolicyError(f"policy {name!r} has no parameter {parameter!r} (named: {known}; or p0 .. p{N_PARAMS - 1})")


def is_import_path(name: str) -> bool:
    """``package.module:function`` (no parameters): a policy named by import path.

    >>> is_import_path("experiments.user_policy_example:cautious"), is_import_path("patient")
    (True, False)
    """
    module, sep, function = name.partition(":")
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
    """The registry entry of a policy name, or the entry of an import path (imported now)."""
    entry = _REGISTRY.get(name)
    if entry is not None:
        return entry
    if is_import_path(name):
        function = import_policy(name)
        doc = (getattr(function, "__doc__", None) or "").strip().split("\n")[0]
        if is_python_tier(function):
            return _Entry(-1, (), None, doc, python=function)
        return _Entry(-1, (), function, doc)
    raise PolicyError(f"unknown policy {name!r} (known: {', '.join(policy_names())}; "
                      "or a user policy by import path, package.module:function)")


def _split(text: str) -> tuple[str, str]:
    """(policy name or import path, raw parameter text) of one spec."""
    text = text.strip()
    head, _, rest = text.partition(":")
    if head not in _REGISTRY and rest:
        function, _, raw = rest.partition(":")
        if function.strip().isidentifier():
            return f"{head.strip()}:{function.strip()}", raw
    return head, rest


def parse_policy(text: str) -> PolicySpec:
    """``name``, ``name:p0,p1,...``, ``package.module:function`` or
    ``package.module:function:p0,p1,...`` (the module is imported and the function checked
    now: one-line :class:`PolicyError`).

    >>> parse_policy("patient:3,4")
    PolicySpec(name='patient', params=(3.0, 4.0))
    >>> parse_policy("simkit.bench:greedy_by_import:1")
    PolicySpec(name='simkit.bench:greedy_by_import', params=(1.0,))
    """
    name, raw = _split(text)
    _entry(name)
    params: tuple[float, ...] = ()
    if raw:
        try:
            params = tuple(float(x) for x in raw.split(","))
        except ValueError:
            raise PolicyError(f"policy {text!r}: parameters must be numbers") from None
    if len(params) > N_PARAMS:
        raise PolicyError(f"policy {text!r}: at most {N_PARAMS} parameters")
    return PolicySpec(name, params)


def _has_params(piece: str) -> bool:
    """Whether a spec piece already holds parameters (so a following number is one more)."""
    return bool(_split(piece)[1])


def parse_policies(text: str | Sequence[str | PolicySpec]) -> tuple[PolicySpec, PolicySpec, PolicySpec]:
    """Three policies, one per seat: ``"greedy,random,random"`` or a sequence."""
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
    specs = [x if isinstance(x, PolicySpec) else parse_policy(x) for x in items]
    if len(specs) != 3:
        raise PolicyError(f"need 3 policies (one per seat), got {len(specs)}")
    return specs[0], specs[1], specs[2]


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a float (a parameter after a policy spec)."""
    try:
        float(text)
        return True
    except ValueError:
        return False


def policy_arrays(specs: Sequence[PolicySpec]) -> tuple[np.ndarray, np.ndarray, tuple[Callable | None, ...]]:
    """(policy ids (3,), params (3, N_PARAMS), user functions by slot).

    The distinct user functions of ``specs``, in order of first appearance, fill the slots
    0, 1, 2 (None where unused) and get the policy ids ``USER_SLOT_BASE + slot``: the same
    user policy at any seat (as in the seatings of a comparison) uses the same slot, and so
    the same compiled kernels (:func:`simkit.runner.play.user_kernels`)."""
    ids = np.zeros(3, dtype=np.int64)
    params = np.zeros((3, N_PARAMS), dtype=np.float64)
    user: list[Callable] = []
    for seat, spec in enumerate(specs):
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
    return ids, params, tuple(user) + (None,) * (3 - len(user))


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
            cls = obj if isinstance(obj, type) else type(obj)  # a Python policy: its class's source
            lines.append(f"class {cls.__module__}:{cls.__qualname__}\n{inspect.getsource(cls)}")
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
    (``importlib.reload``)."""
    return _digest_of(function)


def policy_sources(specs: Sequence[PolicySpec]) -> tuple[tuple[str, str], ...]:
    """(policy name or import path, :func:`policy_source_digest`) of each distinct user
    policy of ``specs``, sorted by name; () when all are built-in."""
    found: dict[str, str] = {}
    for spec in specs:
        entry = _entry(spec.name)
        if entry.builtin_id < 0 and spec.name not in found:
            found[spec.name] = policy_source_digest(entry.function if entry.python is None else entry.python)
    return tuple(sorted(found.items()))

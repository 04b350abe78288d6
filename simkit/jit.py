"""How simkit's numba kernels are compiled: one version of each kernel, whatever constants its
callers pass.  Imported by the package itself (``simkit/__init__.py``), so it holds in every
process before any kernel compiles.

Numba compiles a jitted function once per distinct tuple of argument *types*, and inside
jitted code a constant argument is typed as a literal of its value: ``greedy_state(..., True)``
and ``greedy_state(..., False)`` are two types, ``evaluate_kernel(..., K.WANT_WINS, ...)`` and
``evaluate_kernel(..., 1, ...)`` two more, and a counter that starts at 0 is first typed as
``Literal[int](0)`` while type inference iterates, which compiles the callee once more.  Each
version is compiled separately and re-optimises everything it calls, and each version of a
caller multiplies its callees' versions: before this module a cold ``simkit replay`` compiled
``_best_claim`` 8 times, ``evaluate_kernel`` 3 times and ``_pareto`` 6 times.

:func:`plain_calls` makes numba type the arguments of every call to a simkit kernel from
jitted code as their plain types (``int64``, ``bool``: :func:`numba.core.types.unliteral`),
so each kernel compiles once (tests/test_compile.py checks it).  Nothing else changes: a
literal argument is converted to its plain type at the call, as a value from Python is, and
the results are the same bytes (the constants only enabled constant folding).  Kernels of
other packages (a user's policy, say) are left as numba compiles them.

:func:`run_chunks` runs a ``nogil`` kernel over chunks on Python threads: simkit's batch
kernels use it instead of ``njit(parallel=True)``, whose ``prange`` loop compiles everything
the loop body calls twice more (as a gufunc, then the kernel around it).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numba
from numba.core import types
from numba.core.dispatcher import Dispatcher

PACKAGE_PREFIX = "simkit."


def _is_simkit_kernel(dispatcher: Dispatcher) -> bool:
    return getattr(dispatcher.py_func, "__module__", "").startswith(PACKAGE_PREFIX)


def plain_calls() -> None:
    """Type the arguments of calls to simkit kernels from jitted code as plain types (see the
    module docstring).  Idempotent."""
    if getattr(Dispatcher.get_call_template, "_simkit_plain_calls", False):
        return
    original = Dispatcher.get_call_template

    def get_call_template(self, args, kws):
        if _is_simkit_kernel(self):
            args = tuple(types.unliteral(a) for a in args)
            kws = {k: types.unliteral(v) for k, v in kws.items()}
        return original(self, args, kws)

    get_call_template._simkit_plain_calls = True  # type: ignore[attr-defined]
    get_call_template.__doc__ = original.__doc__
    Dispatcher.get_call_template = get_call_template


def run_chunks(chunk: Callable, calls: list[tuple]) -> None:
    """``chunk(*args)`` for every ``args`` of ``calls``, on ``numba.get_num_threads()`` Python
    threads (in order on this one when that is 1).  ``chunk`` is a ``nogil`` kernel whose
    calls write disjoint outputs, so the result does not depend on the threads."""
    threads = min(numba.get_num_threads(), len(calls))
    if threads <= 1:
        for args in calls:
            chunk(*args)
        return
    with ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(chunk, *args) for args in calls]:
            future.result()


plain_calls()

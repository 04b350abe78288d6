"""How simkit's numba kernels are compiled: one version of each kernel, whatever constants its
callers pass.  Imported by the lowest kernel modules (:mod:`simkit.rng`, which the deck, the
engine, the policies and the runner import, and :mod:`simkit.evaluator.kernel`), so it holds
before any of their kernels compiles, while ``import simkit`` alone (the CLI's start) still
loads no numba.  Without it nothing changes but the number of compiled versions.

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

:class:`static_function` passes a jitted function as an argument to jitted code (numba's
"functions as arguments": the callee is compiled for that function and calls it directly)
without the address numba gives the argument's value, which would keep the caller out of
numba's on-disk cache.

:func:`hot_kernel` compiles a kernel without numba's reference counting (see there).
"""

from __future__ import annotations

import queue
import signal
import sys
import threading
import time
from typing import Callable

import numba
from numba.core import cgutils, event, types
from numba.core.dispatcher import Dispatcher
from numba.core.imputils import lower_constant
from numba.extending import intrinsic, models, register_model, typeof_impl

from simkit.kernel_cache import use_source_keyed_cache

PACKAGE_PREFIX = "simkit."

# ---- kernels compiled without reference counting (:func:`hot_kernel`)
#
# numba gives every array a reference count (its ``meminfo``): a compiled function increments
# it for each array argument on entry and decrements it on exit, and does the same for every
# slice or reshape it makes, each a call into numba's runtime (NRT) and, for an array with an
# owner, an atomic update.  numba's pruning removes only some of these pairs, and on the
# engine → policy → evaluator call chains, thousands of small calls a deal, they cost a large
# share of the time.  ``njit(_nrt=False)`` (a private numba option, used by numba's own tests)
# compiles a function without any of them.  That is safe exactly when the function creates no
# array that outlives it and hands none back:
#
# * it allocates no array (``np.zeros`` / ``np.empty`` / ``np.full``, ``.copy()``, array
#   arithmetic) and returns no array, not even a view (its caller would release a reference
#   that was never taken);
# * it takes only arrays its caller owns and keeps alive for the call: its arguments, slices
#   and reshapes of them, global constant arrays;
# * it calls only kernels that allocate and return no array either (or ``inline="always"``
#   ones, compiled as part of it, that only return views).
#
# numba enforces the first and the last point at the first compile: under ``_nrt=False`` it
# refuses an allocation (``np.zeros``: "No implementation of function ...", also inside a
# kernel it calls) and the return of any array but an argument ("Only accept returning of
# array passed into the function as argument", also from a kernel it calls), so a broken
# contract is a typing error, not a leak or a dangling view (tests/test_jit.py).
HOT_KERNEL_OPTIONS = {"_nrt": False}


def _nrt_option_supported() -> bool:
    """Does this numba accept the ``_nrt`` jit option?  numba checks a function's options
    only when it first compiles it (``KeyError: Unrecognized options``), too late for a
    decorator to fall back, so this asks the CPU target's option parser up front."""
    try:
        from numba.core.compiler import Flags
        from numba.core.registry import cpu_target

        flags = Flags()
        cpu_target.options.parse_as_flags(flags, dict(HOT_KERNEL_OPTIONS))
        return getattr(flags, "nrt", None) is False
    except Exception:  # noqa: BLE001 - whatever the failure: a plain njit
        return False


NRT_OPTION_SUPPORTED = _nrt_option_supported()


def hot_kernel(function: Callable | None = None, **options):
    """``numba.njit(**options)`` that compiles without reference counting
    (:data:`HOT_KERNEL_OPTIONS`): for kernels that take arrays their caller owns, allocate no
    array and return none (the comment above).  Where this numba does not take the option
    (:data:`NRT_OPTION_SUPPORTED` false) it is a plain ``njit(**options)``: the same results,
    only slower.  With ``NUMBA_DISABLE_JIT`` the Python function, as with ``njit``.  Use as
    ``@hot_kernel(cache=True, nogil=True)`` or bare ``@hot_kernel``."""
    if NRT_OPTION_SUPPORTED:
        options = {**options, **HOT_KERNEL_OPTIONS}
    decorator = numba.njit(**options)
    return decorator if function is None else decorator(function)


def interpreting() -> bool:
    """Whether this process runs the kernels as plain Python (``NUMBA_DISABLE_JIT=1``)."""
    return bool(numba.config.DISABLE_JIT)


def is_cached(dispatcher) -> bool:
    """Whether numba's on-disk cache holds a build of ``dispatcher`` (an ``njit(cache=True)``
    kernel) for its current source and this CPU, so that calling it loads machine code instead
    of compiling.  It reads the cache index numba itself reads (its private API: anything
    unexpected, a kernel without a cache, or no JIT at all answer False).  Like numba, it sees
    only the kernel's own file, but simkit's kernels are cached under the digest of all of
    simkit's sources (:mod:`simkit.kernel_cache`), so a build from other sources is never seen.

    >>> from simkit.rng import next_below
    >>> isinstance(is_cached(next_below), bool)
    True
    """
    if interpreting():
        return False
    try:
        index = dispatcher._cache._cache_file._load_index()
        magic = dispatcher.targetctx.codegen().magic_tuple()
        return any(key[1] == magic for key in index)
    except Exception:  # noqa: BLE001 - no cache, another numba: say "not cached"
        return False


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


class _Job:
    """The calls of one :func:`run_chunks`, taken in order by the pool's threads."""

    def __init__(self, chunk: Callable, calls: list[tuple], workers: int) -> None:
        self.chunk = chunk
        self.calls = calls
        self.next = 0
        self.cancelled = False
        self.error: BaseException | None = None
        self.running = workers
        self.lock = threading.Lock()
        self.done = threading.Event()

    def work(self) -> None:
        try:
            while True:
                with self.lock:
                    if self.cancelled or self.next >= len(self.calls):
                        return
                    args = self.calls[self.next]
                    self.next += 1
                self.chunk(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            with self.lock:
                self.error = self.error or exc
                self.cancelled = True
        finally:
            with self.lock:
                self.running -= 1
                if self.running == 0:
                    self.done.set()


class _Pool:
    """Daemon threads, started once per process, that run :class:`_Job` s.

    Daemon threads started once, not a ThreadPoolExecutor per call: a Ctrl-C that lands
    while an executor starts a thread can leave a worker that no one stops, and the process
    then hangs at exit instead of ending.  The threads block SIGINT and SIGTERM, so that the
    main thread receives them."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def _loop(self) -> None:
        # signals go to the main thread, which alone can act on them
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        while True:
            self._jobs.get().work()

    def run(self, job: _Job, workers: int) -> None:
        with self._lock:
            while len(self._threads) < workers:
                thread = threading.Thread(target=self._loop, name="simkit-chunks", daemon=True)
                thread.start()
                self._threads.append(thread)
        for _ in range(workers):
            self._jobs.put(job)
        try:
            job.done.wait()
        except BaseException:
            # the threads stop after their current chunk: wait for that (a fraction of a
            # second), so that no thread is inside a kernel when the interpreter exits
            job.cancelled = True
            job.done.wait()
            raise
        if job.error is not None:
            raise job.error


_POOL = _Pool()


def run_chunks(chunk: Callable, calls: list[tuple]) -> None:
    """``chunk(*args)`` for every ``args`` of ``calls``, on ``numba.get_num_threads()``
    threads (in order on this one when that is 1).  ``chunk`` is a ``nogil`` kernel whose
    calls write disjoint outputs, so the result does not depend on the threads.

    A kernel not yet compiled (or loaded from the cache) in this process runs its first call
    on this thread: compiling in a worker thread would make Ctrl-C wait for the compilation.
    An interrupt stops the run after the chunks being played (the others are skipped)."""
    calls = list(calls)
    if calls and not getattr(chunk, "signatures", True):
        chunk(*calls.pop(0))
    workers = min(numba.get_num_threads(), len(calls))
    if workers <= 1:
        for args in calls:
            chunk(*args)
        return
    _POOL.run(_Job(chunk, calls, workers), workers)


plain_calls()
use_source_keyed_cache()  # before any simkit kernel is made: its cache folder is keyed by the sources' digest


@intrinsic
def _borrowed(typingctx, array):
    """``array`` itself, as a view that numba does not reference-count (jitted code only).

    Every array numba passes to a compiled function, and every slice or reshape it makes, costs
    a call to increment and one to decrement its owner's reference count (atomic): on the
    engine → policy → evaluator call chains `perf` put about a quarter of the compiled code's
    samples in them.  A view without an owner (a null ``meminfo``, as :func:`numba.carray`
    makes) skips the atomic updates: greedy × 3 plays 4–7 % more deals/s.  Use it only on arrays that
    outlive every use of the view: the scratch arrays a chunk kernel allocates for its own
    loop, and the arguments of the kernel, which its caller holds until it returns."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        view = cgutils.create_struct_proxy(signature.return_type)(context, builder, value=args[0])
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()

    return array(array), codegen


if numba.config.DISABLE_JIT:  # plain Python (the no-JIT tests): the array itself

    def borrowed(array):
        return array

else:
    borrowed = _borrowed


@numba.njit(nogil=True)
def keep_alive(*arrays):
    """Nothing: a use of ``arrays`` that keeps them (and the :func:`borrowed` views of them)
    alive up to this call, since numba releases an array after its last use."""
    return None


class StaticFunctionType(types.Dispatcher):
    """The numba type of a :class:`static_function`: a dispatcher type (calls resolve and
    compile as calls of the function itself) whose value is a null pointer."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        super().__init__(dispatcher)
        py_func = dispatcher.py_func
        self.name = f"static_function({py_func.__module__}.{py_func.__qualname__}, {id(dispatcher):#x})"


register_model(StaticFunctionType)(models.OpaqueModel)


@lower_constant(StaticFunctionType)
def _lower_static_function(context, builder, ty, pyval):
    # numba lowers a dispatcher value as the address of the Python object (a "dynamic
    # global", which makes a function uncacheable once it survives optimisation, as it does
    # when passed to a call that is not inlined); jitted code only ever calls this one
    return context.get_constant_null(types.voidptr)


class static_function:  # noqa: N801 - used like a decorator-made function
    """A jitted function ``dispatcher`` to pass as an argument to jitted code: the callee is
    compiled for it (one version per function) and calls it directly, as with a dispatcher
    passed as such, but the value carries no address, so that a cached kernel may pass it
    (numba refuses to cache code holding a Python object's address).  Jitted code may only
    call it.  Called from Python (or with the JIT disabled) it calls ``dispatcher``."""

    def __init__(self, dispatcher: Callable) -> None:
        self.dispatcher = dispatcher

    def __call__(self, *args):
        return self.dispatcher(*args)

    def __repr__(self) -> str:
        return f"static_function({self.dispatcher!r})"


@typeof_impl.register(static_function)
def _typeof_static_function(value: static_function, context) -> StaticFunctionType:
    return StaticFunctionType(value.dispatcher)


# ---- the "compiling kernels" note of simkit simulate / demo (and simkit compile's timings)


class CompileTimer(event.Listener):
    """Seconds numba spends compiling while installed (outermost compilations only), and a
    callback at the first one: compilations on the thread that made it (``simkit play``
    compiles the bots' and the hint's kernels on a thread of their own meanwhile).

    >>> with CompileTimer() as timer:
    ...     pass
    >>> timer.seconds, timer.compiled
    (0.0, False)
    """

    def __init__(self, on_first: Callable[[], None] | None = None) -> None:
        self.seconds = 0.0
        self.compiled = False
        self._depth = 0
        self._start = 0.0
        self._on_first = on_first
        self._thread = threading.get_ident()

    def on_start(self, ev: event.Event) -> None:
        if threading.get_ident() != self._thread:
            return
        if self._depth == 0:
            self._start = time.perf_counter()
            if not self.compiled and self._on_first is not None:
                self._on_first()
            self.compiled = True
        self._depth += 1

    def on_end(self, ev: event.Event) -> None:
        if threading.get_ident() != self._thread:
            return
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._start

    def __enter__(self) -> "CompileTimer":
        event.register("numba:compile", self)
        return self

    def __exit__(self, *exc) -> None:
        event.unregister("numba:compile", self)


def compile_note(quiet: bool = False) -> CompileTimer:
    """A :class:`CompileTimer` that writes ``simkit: compiling kernels (first run; cached
    afterwards)`` on stderr when compiling starts; finish the line with :func:`end_note`."""

    def first() -> None:
        if not quiet:
            sys.stderr.write("simkit: compiling kernels (first run; cached afterwards) ...")
            sys.stderr.flush()

    return CompileTimer(first)


def end_note(timer: CompileTimer, quiet: bool = False) -> None:
    """Close the line :func:`compile_note` opened with the compile time."""
    if timer.compiled and not quiet:
        sys.stderr.write(f" {timer.seconds:.0f} s\n")
        sys.stderr.flush()

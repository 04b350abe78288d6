"""Compile simkit's numba kernels ahead of their first use: ``simkit compile [--all]``, and
the "compiling kernels" note of ``simkit simulate`` / ``simkit demo``.

Numba compiles a kernel on its first call and caches the machine code next to the source
(``__pycache__``, or ``NUMBA_CACHE_DIR``), so only the first run of a command on a machine
pays for it.  Each target below runs the smallest real workload of a command (one deal, one
holding), so that exactly the kernels (and argument types) of the real runs get compiled and
cached; later runs, and worker processes, load them from the cache.

>>> sorted(TARGETS)[:3]
['deals', 'dealt-hands', 'environment']
"""

from __future__ import annotations

import sys
import tempfile
import time
from typing import Callable, Sequence

import numpy as np
from numba.core import event

from simkit.analysis.dealt import deal_table
from simkit.analysis.probability import probability_table
from simkit.engine.env import Environment
from simkit.evaluator import evaluate, evaluate_many, min_idle
from simkit.evaluator.score import score_records
from simkit.generate import random_group_holdings, random_holdings
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import play_decks, play_one
from simkit.runner.simulate import simulate


class CompileTimer(event.Listener):
    """Seconds numba spends compiling while installed (outermost compilations only), and a
    callback at the first one.

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

    def on_start(self, ev: event.Event) -> None:
        if self._depth == 0:
            self._start = time.perf_counter()
            if not self.compiled and self._on_first is not None:
                self._on_first()
            self.compiled = True
        self._depth += 1

    def on_end(self, ev: event.Event) -> None:
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


def _builtin(policies: str | Sequence) -> bool:
    return all(fn is None for fn in policy_arrays(parse_policies(policies))[2])


def warm_simulate(policies: str | Sequence = "greedy,patient,random", rules: RuleSet | None = None,
                  session_length: int = 1, seating: str | None = None) -> None:
    """One deal of ``simkit simulate`` (into a temporary folder, then removed): the deal
    kernels, the batch table's kernels.  Runs with user policies compile uncached kernels of
    their own: nothing to warm for them."""
    if not _builtin(policies):
        return
    with tempfile.TemporaryDirectory(prefix="simkit-warm-") as tmp:
        simulate(min(2, session_length), policies, 0, f"{tmp}/run", rules, batch_size=session_length,
                 quiet=True, session_length=session_length, seating=seating)


def _score() -> None:
    evaluate("RJ*3 RS*2 RX*2", "peng:RC", RuleSet())
    min_idle("RJ RS")
    score_records([(1, {"hand": "RJ*3 RS*2 RX*2", "exposed": "peng:RC"})], RuleSet(), "warm")


def _replay() -> None:
    ids, params, user = policy_arrays(parse_policies("greedy,patient,random"))
    play_one(0, 0, ids, params, RuleSet().to_array())


def _equity() -> None:
    ids, params, _ = policy_arrays(parse_policies("greedy,patient,random"))
    play_decks(np.arange(112, dtype=np.int64)[None, :], 0, ids, params, RuleSet().to_array())


def _environment() -> None:
    env = Environment()
    env.new_deal(seed=0, deal=0)
    while not env.is_over():
        env.observation(env.current_player())
        env.apply(env.legal_actions()[0])


def _generate() -> None:
    random_holdings(1, seed=0)
    random_group_holdings(1, seed=0)
    evaluate_many(random_holdings(2, seed=0))


# name -> (what it compiles, workload); the defaults are the README's commands
TARGETS: dict[str, tuple[str, Callable[[], None]]] = {
    "score": ("simkit score: the evaluator, single and batched", _score),
    "replay": ("simkit replay: one deal with its event log", _replay),
    "deals": ("simkit simulate / compare / demo: batches of deals, their table",
              lambda: warm_simulate("greedy,patient,random")),
    "sessions": ("simkit simulate --session-length K", lambda: warm_simulate("greedy,patient,random", session_length=2)),
    "dealt-hands": ("simkit demo / deals / prob --hands: dealt-hand features", lambda: deal_table(1, 0, 1)),
    "prob": ("simkit prob: dealt-hand events", lambda: probability_table(1, 0, batch_size=1)),
    "equity": ("simkit equity: prepared decks", _equity),
    "environment": ("simkit.engine.env.Environment (Python API)", _environment),
    "generate": ("random holdings, evaluate_many (tests, benchmarks)", _generate),
}
DEFAULT_TARGETS = ("score", "replay", "deals", "dealt-hands")


def warm(targets: Sequence[str] = DEFAULT_TARGETS, out=None) -> float:
    """Compile (or load from the cache) the kernels of ``targets`` (names of :data:`TARGETS`),
    one line per target on ``out``; returns the seconds spent compiling."""
    total = 0.0
    for name in targets:
        what, workload = TARGETS[name]
        t0 = time.perf_counter()
        with CompileTimer() as timer:
            workload()
        wall = time.perf_counter() - t0
        total += timer.seconds
        if out is not None:
            state = f"compiled in {timer.seconds:.1f} s" if timer.compiled else "cached"
            print(f"{name:12s} {state:20s} ({wall:.1f} s)  {what}", file=out, flush=True)
    return total

"""Compilation: one compiled version per kernel (simkit/jit.py), ``simkit compile`` and the
"compiling kernels" note (simkit/warmup.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import njit, types

from simkit.cli import main
from simkit.warmup import TARGETS, CompileTimer, compile_note, end_note
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution

QUIET = Execution(quiet=True)


def _in_simkit(function):
    """``function`` as if defined in a simkit module (simkit.jit only touches those)."""
    function.__module__ = "simkit._test_compile"
    return function


def test_calls_between_simkit_kernels_compile_once():
    @njit
    @_in_simkit
    def inner(x, k, flag):
        return x + k if flag else x - k

    @njit
    @_in_simkit
    def outer(x):
        total = 0
        for i in range(3):  # a counter that starts as the literal 0
            total += inner(x, i, True)
        return total + inner(x, 2, False) + inner(x, 7, x > 0)

    assert outer(5) == outer.py_func(5)
    assert inner.signatures == [(types.int64, types.int64, types.boolean)]


def test_other_kernels_keep_numba_literal_dispatch():
    @njit
    def inner(x, k):
        return x + k

    @njit
    def outer(x):
        return inner(x, 1) + inner(x, 2)

    outer(1)
    assert len(inner.signatures) == 2  # numba's own behaviour, untouched


def test_compile_timer_counts_outermost_compilations():
    @njit
    def f(x):
        return x * 2

    seen = []
    with CompileTimer(on_first=lambda: seen.append(1)) as timer:
        f(3)
        f(4)
    assert timer.compiled and timer.seconds > 0 and seen == [1]
    with CompileTimer() as again:
        f(5)
    assert not again.compiled and again.seconds == 0.0


def test_compile_timer_ignores_other_threads():
    """``simkit play`` compiles the bots' and the hint's kernels on a thread of its own while the
    hint's note times the main thread's: a compilation there is not the note's (nor does it
    unbalance the timer's nesting)."""
    import threading

    @njit
    def elsewhere(x):
        return x + 1

    @njit
    def here(x):
        return x - 1

    with CompileTimer() as timer:
        thread = threading.Thread(target=elsewhere, args=(1,))
        thread.start()
        thread.join()
        assert not timer.compiled and timer.seconds == 0.0
        here(1)
    assert timer.compiled and timer.seconds > 0


def test_compile_note(capsys):
    @njit
    def g(x):
        return x + 1

    with compile_note() as timer:
        g(1)
    end_note(timer)
    err = capsys.readouterr().err
    assert err.startswith("simkit: compiling kernels (first run; cached afterwards) ...") and err.endswith(" s\n")
    with compile_note() as timer:
        g(2)
    end_note(timer)
    assert capsys.readouterr().err == ""


def test_compile_command(capsys):
    assert main(["compile", "score"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("score ") and out[-1].startswith("compiled in ")
    assert main(["compile", "nonsense"]) == 2
    assert "unknown compile target 'nonsense'" in capsys.readouterr().err


def test_every_target_runs():
    for name, (what, workload) in TARGETS.items():
        assert what
        workload()


def test_simulate_cli_warms_first(tmp_path, capsys):
    """The CLI's warm-up changes nothing in the run (same files as without it)."""
    assert main(["simulate", "--deals", "30", "--policies", "greedy,random,patient", "--seed", "3",
                 "--out", str(tmp_path / "a"), "--batch-size", "10", "--quiet"]) == 0
    from simkit.runner import simulate
    from simkit.storage import load_dataset

    simulate(SimulateSpec(30, "greedy,random,patient", 3, batch_size=10), tmp_path / "b", QUIET)
    a = load_dataset(tmp_path / "a")
    b = load_dataset(tmp_path / "b")
    assert a.equals(b)


@pytest.mark.slow  # a cold compile in a subprocess
def test_cold_replay_compiles_each_kernel_once(tmp_path):
    """From an empty cache: after a replay with every built-in policy, no simkit kernel has
    two compiled versions (a literal argument or a second array layout would add one)."""
    script = textwrap.dedent("""
        import io, json, sys, contextlib
        from numba.core.registry import CPUDispatcher
        from simkit.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            main(["replay", "--seed", "7", "--deal", "42", "--policies", "greedy,patient,mc",
                  "--engine", "compiled"])
        found = {}
        for name, module in list(sys.modules.items()):
            if name.startswith("simkit"):
                for attr, obj in vars(module).items():
                    if isinstance(obj, CPUDispatcher):
                        found[f"{name}.{attr}"] = [str(s) for s in obj.signatures]
        print(json.dumps(found))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    signatures = json.loads(proc.stdout.splitlines()[-1])
    assert len([k for k, v in signatures.items() if v]) > 30  # compiled here, not loaded
    assert {k: v for k, v in signatures.items() if len(v) > 1} == {}
    assert [k for k, v in signatures.items() if any("Literal" in s for s in v)] == []


def test_every_kernel_module_loads_jit_first():
    """simkit.jit must be active before any kernel compiles: every module that defines a
    kernel imports it, directly or through the modules it imports (at module level)."""
    from test_architecture import imports_of, simkit_modules

    modules = simkit_modules()
    graph = {name: {imp.target for imp in imports_of(name, path, modules) if not imp.in_function}
             for name, path in modules.items()}

    def reaches_jit(name: str, seen: set) -> bool:
        if name == "simkit.jit":
            return True
        seen.add(name)
        return any(reaches_jit(t, seen) for t in graph.get(name, ()) if t not in seen)

    missing = [name for name, path in modules.items()
               if "@njit" in path.read_text(encoding="utf-8") and not reaches_jit(name, set())]
    assert missing == []


def test_basic_and_full_policy_switches_play_the_same_rows():
    """The deal kernels of random / greedy / patient runs (BASIC_KERNELS, which do not compile
    mc and expert) give the rows of the full switch's kernels: batches, sessions in every
    seating, prepared decks and one deal with its event log."""
    from simkit.policies.registry import parse_policies, policy_arrays
    from simkit.rules import RuleSet
    from simkit.rng import root_key
    from simkit.engine.kernel import new_engine_workspace
    from simkit.engine.layout import EVENT_WIDTH, N_ACTIONS, N_OBS, N_STATE
    from simkit.policies.builtin import POLICY_WORK_SIZE
    from simkit.runner.play import (
        BASIC_KERNELS,
        BUILTIN_KERNELS,
        N_RESULT,
        SEATING_ALL,
        SEATING_ROTATE,
        InPlay,
        Table,
        deals_of,
        kernels_for,
        lineup_of,
    )

    ids, params, user = policy_arrays(parse_policies("greedy,patient:1,4,2,random"))
    assert kernels_for(user, ids) is BASIC_KERNELS
    assert kernels_for(user, policy_arrays(parse_policies("greedy,expert,random"))[0]) is BUILTIN_KERNELS
    assert kernels_for(user, policy_arrays(parse_policies("mc,greedy,random"))[0]) is BUILTIN_KERNELS
    rules = RuleSet.from_strings(["tianhu=off"]).to_array()
    root = root_key(11)
    for kernels in (BASIC_KERNELS, BUILTIN_KERNELS):
        rows = np.zeros((3, 40 * 6, N_RESULT), dtype=np.int64)
        lineup = lineup_of(ids, params, rules)
        kernels.play_batch(deals_of(root, 5, 40, 1, SEATING_ROTATE), lineup, rows[0, :40])
        kernels.play_sessions(deals_of(root, 0, 40, 0, SEATING_ALL, 4), lineup, rows[1])
        decks = np.array([np.random.default_rng(k).permutation(112) for k in range(40)], dtype=np.int64)
        kernels.play_decks(deals_of(root, 0, 40, 2), decks, lineup, rows[2, :40])
        if kernels is BASIC_KERNELS:
            basic = rows
    assert np.array_equal(basic, rows)
    assert (basic[1, :, 0] >= 0).sum() > 100  # real deals with winners, not empty rows
    logs = []
    for kernels in (BASIC_KERNELS, BUILTIN_KERNELS):  # one deal with its event log (replay's kernel)
        s, deck, rngs = np.zeros(N_STATE, np.int64), np.zeros(112, np.int64), np.zeros((4, 4), np.uint64)
        ev, ev_n, result = np.zeros((4096, EVENT_WIDTH), np.int64), np.zeros(1, np.int64), np.zeros(N_RESULT, np.int64)
        kernels.play_deal(root, 9, 1, Table(ids, params, np.arange(3), rules),
                          InPlay(s, rngs, np.zeros(N_ACTIONS, np.bool_), np.zeros(N_OBS, np.int64),
                                 new_engine_workspace(), np.zeros(POLICY_WORK_SIZE, np.int64), ev, ev_n),
                          deck, result)
        logs.append((ev[: ev_n[0]].copy(), result.copy(), s.copy()))
    assert logs[0][0].shape[0] > 20
    for a, b in zip(*logs):
        assert np.array_equal(a, b)

"""``simkit replay`` without compiling: when numba's cache lacks the deal kernels, the replay runs
the kernels' Python source (``NUMBA_DISABLE_JIT``) in a child process, which must give the same
bytes as the compiled kernels for every policy, rule set, seating and session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from simkit.replay import replay_is_cached, replay_jsonl
from simkit.rules import RuleSet

# (seed, deal, policies, rules, session length, seating, seating index): every built-in
# policy, non-default rules, a deal inside a session (earlier deals replayed), a seating-all row
CASES = [
    (7, 42, "greedy,random,mc", [], 1, None, 0),
    (1, 0, "greedy,patient,expert", [], 1, None, 0),
    (3, 5, "expert,expert,random", ["lou_doubles=off", "hu_tolerance=0", "drawn_jiang_chow=off"], 1, None, 0),
    (5, 4, "greedy,patient:1,6,2,random", ["next_dealer=winner_else_same"], 3, "fixed", 0),
    (2, 2, "greedy,expert,patient", ["single_jiang_cap=2", "pass_locks_win=off"], 1, "all", 4),
    (11, 9, "random,random,greedy", ["must_kong=off", "tianhu=off", "drawn_card_chow_by=drawer_then_next"], 1,
     "rotate", 0),
]

INTERPRETED = textwrap.dedent("""
    import json, sys
    import numpy as np
    from simkit.replay import replay_jsonl
    from simkit.rules import RuleSet
    out = []
    with np.errstate(over="ignore"):
        for seed, deal, policies, rules, k, seating, j in json.loads(sys.argv[1]):
            out.append(replay_jsonl(seed, deal, policies, RuleSet.from_strings(rules), session_length=k,
                                    seating=seating, seating_index=j))
    print(json.dumps(out))
""")


def _compiled(case) -> str:
    seed, deal, policies, rules, k, seating, j = case
    return replay_jsonl(seed, deal, policies, RuleSet.from_strings(rules), session_length=k, seating=seating,
                        seating_index=j)


def test_interpreted_replays_equal_compiled_ones():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", INTERPRETED, json.dumps(CASES)], capture_output=True, text=True,
                          env=env, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    interpreted = json.loads(proc.stdout.splitlines()[-1])
    for case, text in zip(CASES, interpreted, strict=True):
        assert text == _compiled(case), case
        assert len(text.splitlines()) > 10  # a whole deal, not an empty log on both sides


def test_cold_cache_replay_interprets_and_compiles_nothing(tmp_path):
    """From an empty numba cache, ``simkit replay`` (``--engine auto``) says the kernels are not
    cached, writes the compiled kernels' bytes, and leaves the cache empty: it compiled nothing."""
    cache = tmp_path / "cache"
    script = textwrap.dedent("""
        import sys
        from simkit.replay import replay_is_cached
        from simkit.cli import main
        print("cached" if replay_is_cached(42, "greedy,random,mc") else "not cached", file=sys.stderr)
        sys.exit(main(["replay", "--seed", "7", "--deal", "42", "--policies", "greedy,random,mc"]))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False,
                          timeout=300, encoding="utf-8")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.splitlines()[0] == "not cached"
    assert proc.stdout == _compiled(CASES[0])
    assert [p.name for p in Path(cache).rglob("*.nb[ic]")] == []


def test_replay_is_cached_after_a_compiled_replay():
    text = _compiled((1, 3, "greedy,greedy,greedy", [], 1, None, 0))  # compiles (or loads) and caches the kernel
    assert text
    assert replay_is_cached(3, "greedy,greedy,greedy")
    # a user policy's kernels are compiled in each process: never cached
    assert not replay_is_cached(3, "greedy,simkit.bench:greedy_by_import,greedy")


def test_cli_engines_agree(capsys):
    from simkit.cli import main

    args = ["replay", "--seed", "4", "--deal", "8", "--policies", "patient,expert,greedy", "--rule", "tianhu=off"]
    assert main([*args, "--engine", "compiled"]) == 0
    compiled = capsys.readouterr().out
    assert main([*args, "--engine", "interpreted"]) == 0
    interpreted = capsys.readouterr()
    assert interpreted.out == compiled and interpreted.err == ""
    assert main([*args[:-2], "--rule", "tianhu=maybe", "--engine", "interpreted"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "tianhu" in err

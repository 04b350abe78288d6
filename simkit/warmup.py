"""Compile simkit's numba kernels ahead of their first use: ``simkit compile [--all]``, and
the "compiling kernels" note of ``simkit simulate`` / ``simkit demo``.

Numba compiles a kernel on its first call and caches the machine code next to the source
(``__pycache__``, or ``NUMBA_CACHE_DIR``), so only the first run of a command on a machine
pays for it.  Each target below runs the smallest real workload of a command (one deal, one
holding), so that exactly the kernels (and argument types) of the real runs get compiled and
cached; later runs, and worker processes, load them from the cache.

>>> sorted(TARGETS)[:3]
['analyze', 'deals', 'dealt-hands']
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from simkit.studies.dealt import deal_table
from simkit.studies.probability import probability_table
from simkit.studies.table import table_setup, warm_first_decision, warm_hint, warm_table
from simkit.engine.env import Environment
from simkit.engine.position import parse_position
from simkit.replay import log_decisions, replay_jsonl
from simkit.specs.analyze import AnalyzeSpec
from simkit.studies.analyze import analyze_position
from simkit.evaluator import evaluate, evaluate_many, min_idle
from simkit.evaluator.score import score_records
from simkit.generate import random_group_holdings, random_holdings
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.jit import CompileTimer, compile_note, end_note  # noqa: F401 - re-exported: the note lives in simkit.jit
from simkit.runner.play import play_decks, play_one
from simkit.runner.simulate import warm_simulate


def _score() -> None:
    evaluate("RJ*3 RS*2 RX*2", "peng:RC", RuleSet())
    min_idle("RJ RS")
    score_records([(1, {"hand": "RJ*3 RS*2 RX*2", "exposed": "peng:RC"})], RuleSet(), "warm")


# each workload runs with random / greedy / patient and again with mc and expert: the deal
# kernels of the two switches (simkit.policies.dispatch) are compiled separately
BASIC = "greedy,patient,random"
EVERY_KIND = "expert,mc,random"


def _replay() -> None:
    for policies in (BASIC, EVERY_KIND):
        ids, params, user = policy_arrays(parse_policies(policies))
        play_one(0, 0, ids, params, RuleSet().to_array())


def _equity() -> None:
    for policies in (BASIC, EVERY_KIND):
        ids, params, _ = policy_arrays(parse_policies(policies))
        play_decks(np.arange(112, dtype=np.int64)[None, :], 0, ids, params, RuleSet().to_array())


def _environment() -> None:
    env = Environment()
    env.new_deal(seed=0, deal=0)
    while not env.is_over():
        env.observation(env.current_player())
        env.apply(env.legal_actions()[0])


def _analyze() -> None:
    position = parse_position("seat=1; dealer=0; turn=claim; hand=YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*2; card=RJ; "
                              "from=0; stock=21")
    analyze_position(position, AnalyzeSpec(rollouts=1))
    log_decisions(replay_jsonl(0, 0, BASIC).splitlines())


def _play() -> None:
    setup = table_setup(seat=0, seed=0, log=None)  # the default bots and hint
    position = warm_first_decision(setup)
    warm_table(setup.bots, setup.rules)
    warm_hint(setup, position)


def _generate() -> None:
    random_holdings(1, seed=0)
    random_group_holdings(1, seed=0)
    evaluate_many(random_holdings(2, seed=0))


# name -> (what it compiles, workload); the defaults are the README's commands
TARGETS: dict[str, tuple[str, Callable[[], None]]] = {
    "score": ("simkit score: the evaluator, single and batched", _score),
    "replay": ("simkit replay: one deal with its event log", _replay),
    "deals": ("simkit simulate / compare / demo: batches of deals, their table",
              lambda: [warm_simulate(policies) for policies in (BASIC, EVERY_KIND)]),
    "sessions": ("simkit simulate --session-length K",
                 lambda: [warm_simulate(policies, session_length=2) for policies in (BASIC, EVERY_KIND)]),
    "dealt-hands": ("simkit demo / deals / prob --hands: dealt-hand features", lambda: deal_table(1, 0, 1)),
    "prob": ("simkit prob: dealt-hand events", lambda: probability_table(1, 0, batch_size=1)),
    "equity": ("simkit equity: prepared decks", _equity),
    "environment": ("simkit.engine.env.Environment (Python API)", _environment),
    "generate": ("random holdings, evaluate_many (tests, benchmarks)", _generate),
    "analyze": ("simkit analyze / review: rollouts of a position by the fast bots, logs followed", _analyze),
    "play": ("simkit play: the table with the default bots (expert), a hint", _play),
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

"""Benchmarks: ``simkit bench evaluator`` (evaluations per second), ``simkit bench engine``
(whole deals per second, one row per built-in policy), ``simkit bench score`` (``simkit score
--jsonl`` lines per second), ``simkit bench parquet`` (``simulate`` to a Parquet dataset) and
``simkit bench all --markdown`` (docs/benchmarks.md: the hardware and one table per workload).

Every figure is **CPU time of the measuring thread** (:func:`time.thread_time`), never wall
clock: on a busy machine a wall clock measures the neighbours, CPU time measures the work.
The work runs on that thread: one numba thread (:func:`simkit.jit.run_chunks` then plays the
chunks in order on the calling thread, and the evaluator's ``prange`` kernel runs on the
caller: :func:`bench_evaluator` compares the thread's CPU time with the process's and refuses
to report when the work ran elsewhere); pyarrow writes on the calling thread too (the Parquet
table shows the process's CPU time next to the thread's).  Each kernel
runs once untimed first (compiled, or loaded from numba's cache: compile time is never
counted), then the best of a few timed runs is kept (the engine's rows in interleaved rounds,
every row once per round, so that a slow stretch of the machine weighs on all rows alike).
Throughput is measured, never asserted in tests.

``bench engine`` plays every built-in policy of the registry
(:func:`simkit.policies.registry.builtin_names`, so a new built-in gets its row without an
edit here; ``learned``, which plays a model file of the user's, is none) three times at the table, on the same deals of the same seed.  Policies of mc's
family (``mc``, ``search``) and any built-in slower than :data:`SLOW_DEALS_PER_S` in a short
probe play one seat against greedy × 2 on ``deals // SLOW_SHARE`` deals, and their row says
so.  It also plays :func:`greedy_by_import`, a user policy named by import path
(``simkit.bench:greedy_by_import``) that does greedy's work from the observation: its ratio to
the built-in greedy is the cost of the plug-in path (the observation copy, the user
dispatcher), with the same decisions (the same result rows: each row carries a digest of
its rows).  Every row gives its ratio to greedy × 3 of the same run.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numba
import numpy as np
import pyarrow
from numba import njit

import simkit
from simkit.cards import parse_counts
from simkit.errors import SimkitError
from simkit.evaluator import kernel as K
from simkit.evaluator.api import evaluate_batch_kernel
from simkit.evaluator.score import score_record, score_records
from simkit.generate import random_group_holdings, random_holdings, random_score_records
from simkit.engine.layout import N_ACTIONS
from simkit.policies.builtin import P_MC, POLICY_WORK_SIZE, greedy_like
from simkit.policies.registry import N_PARAMS, builtin_names, parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import R_WINNER, play_deals
from simkit.runner.python_play import actors_for, play_deals_python
from simkit.runner.simulate import simulate
from simkit.specs.base import Execution
from simkit.specs.simulate import SimulateSpec
from simkit.storage.paths import check_out_file

TARGETS = ("evaluator", "engine", "score", "parquet", "all")
# sizes of each workload (``bench all``: about a minute of CPU, under 3 minutes on a busy 2-core
# machine once the kernels are compiled)
DEFAULTS = {"holdings": 200_000, "deals": 20_000, "lines": 20_000, "parquet_deals": 100_000}
MINIMUM = {"holdings": 1_000, "deals": 100, "lines": 100}
MAXIMUM = {"holdings": 100_000_000, "deals": 100_000_000, "lines": 10_000_000}  # what fits in memory
SEED_LIMIT = 2**63  # seeds are 0 .. 2**63 - 1 here (any simkit seed, with room for seed + 1)

SLOW_SHARE = 100  # a slow policy's row plays deals // SLOW_SHARE deals (at least SLOW_MIN_DEALS)
SLOW_MIN_DEALS = 10
SLOW_DEALS_PER_S = 500.0  # below this rate (× 3, in a 4-deal probe) a built-in counts as slow
PROBE_DEALS = 4
REFERENCE = "greedy"  # the row every ratio is taken to (× 3)
ENGINE_ROUNDS = 5  # interleaved rounds of the engine's fast rows (each keeps its best round)


# ---- timing: CPU time of this thread

MIN_CHECKED_SECONDS = 0.05  # process CPU below which the evaluator bench does not compare thread and process time


def cpu_seconds(function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    """(CPU seconds of the calling thread spent in ``function(*args, **kwargs)``, its result)."""
    t0 = time.thread_time()
    result = function(*args, **kwargs)
    return time.thread_time() - t0, result


def best_of(repeats: int, function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    """The fewest CPU seconds of ``repeats`` runs, and the last run's result."""
    best, result = float("inf"), None
    for _ in range(max(1, repeats)):
        seconds, result = cpu_seconds(function, *args, **kwargs)
        best = min(best, seconds)
    return max(best, 1e-9), result


@contextlib.contextmanager
def _one_numba_thread() -> Iterator[None]:
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


# ---- the machine


def _cpuinfo() -> tuple[str, bool]:
    """(CPU model, whether /proc/cpuinfo shows the hypervisor flag: a virtual machine)."""
    model, virtual = platform.processor() or platform.machine(), False
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model in ("", platform.processor(), platform.machine()):
                    model = value.strip()
                elif key.strip() == "flags" and "hypervisor" in value.split():
                    virtual = True
    except OSError:
        pass
    return model, virtual


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None


def _git_commit() -> str | None:
    """The checkout's commit (short hash, "+ uncommitted changes" when the code differs from it:
    simkit/ or pyproject.toml), if simkit runs from a git checkout and git is installed."""
    root = Path(simkit.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "simkit", "pyproject.toml"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head} + uncommitted changes" if dirty else head


def hardware() -> dict[str, Any]:
    """CPU model, logical cores, virtual machine or not, OS, Python, numpy, numba, pyarrow."""
    model, virtual = _cpuinfo()
    return {
        "cpu": model,
        "logical_cores": os.cpu_count(),
        "virtual_machine": virtual,
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "pyarrow": pyarrow.__version__,
    }


def machine() -> dict[str, Any]:
    """What the figures depend on: :func:`hardware`, simkit's version and git commit, the date
    (UTC) and the load average."""
    return {
        **hardware(),
        "simkit": simkit.__version__,
        "commit": _git_commit(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load_average": _load(),
    }


def hardware_line(info: dict[str, Any] | None = None) -> str:
    """One line describing the machine the figures come from (:func:`hardware`)."""
    m = info if info is not None else hardware()
    vm = ", virtual machine" if m["virtual_machine"] else ""
    return (f"{m['cpu']}; {m['logical_cores']} logical cores{vm}; {m['os']}; Python {m['python']}; "
            f"numpy {m['numpy']}; numba {m['numba']}")


# ---- arguments


def check_arguments(target: str, holdings: int | None = None, deals: int | None = None, lines: int | None = None,
                    seed: int = 2026, as_json: bool = False, markdown: bool = False,
                    out: str | os.PathLike | None = None) -> dict[str, int]:
    """The sizes a run will use (defaults filled in), once every argument is known good; a
    one-line :class:`SimkitError` naming the bad one otherwise.  Nothing is timed or written."""
    if target not in TARGETS:
        raise SimkitError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < SEED_LIMIT:
        raise SimkitError(f"seed must be an integer in 0 .. 2**63 - 1, got {seed!r}", parameters=("seed",))
    if as_json and markdown:
        raise SimkitError("json and markdown exclude each other: give one", parameters=("json", "markdown"))
    if markdown and target != "all":
        raise SimkitError(f"markdown needs target all (one page with every workload), got {target}",
                          parameters=("markdown",))
    sizes = dict(DEFAULTS)
    for name, value in (("holdings", holdings), ("deals", deals), ("lines", lines)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
                not MINIMUM[name] <= value <= MAXIMUM[name]:
            raise SimkitError(f"{name} must be an integer in {MINIMUM[name]:,} .. {MAXIMUM[name]:,}, got {value!r}",
                              parameters=(name,))
        sizes[name] = int(value)
    if target == "parquet" and deals is not None:
        sizes["parquet_deals"] = int(deals)
    if out is not None:
        check_out_file(out, "out")
    return sizes


# ---- the evaluator


def _evaluate_batch(conc: np.ndarray, exp: np.ndarray, chows: np.ndarray, rules_array: np.ndarray) -> np.ndarray:
    """Evaluate every holding (patterns included): the batch kernel of
    :func:`simkit.evaluator.evaluate_many`, on one numba thread (its work then runs on this
    thread: :func:`bench_evaluator` checks it)."""
    out = np.zeros((conc.shape[0], K.N_OUT), dtype=np.int64)
    evaluate_batch_kernel(conc, exp, chows, rules_array, 1, out)
    return out


def bench_evaluator(n: int = DEFAULTS["holdings"], seed: int = 2026, repeats: int = 3) -> dict:
    """Evaluations per CPU second on one thread: uniform and complete 31-card holdings, and the
    hardest holding known (all sixteen 将 and fifteen 卒)."""
    rules_array = RuleSet().to_array()
    cases = []
    corpora = (
        ("uniform random 31-card holdings", random_holdings(n, seed=seed),
         np.zeros((n, K.N_EXP_ROWS, 28), dtype=np.int64), np.zeros(n, dtype=np.int64)),
        ("random complete 31-card holdings (15 % exposed)",
         *random_group_holdings(n, seed=seed + 1, total=31, p_exposed=0.15)),
    )
    hard = np.repeat(parse_counts("YJ*4 RJ*4 WJ*4 GJ*4 YZ*4 RZ*4 WZ*4 GZ*3")[None, :], 2_000, axis=0)
    corpora += (("all sixteen 将 + fifteen 卒 (the slowest known)", hard,
                 np.zeros((hard.shape[0], K.N_EXP_ROWS, 28), dtype=np.int64), np.zeros(hard.shape[0], dtype=np.int64)),)
    with _one_numba_thread():
        for label, conc, exp, chows in corpora:
            _evaluate_batch(conc[:10], exp[:10], chows[:10], rules_array)  # compiled / loaded, untimed
            p0, t0 = time.process_time(), time.thread_time()
            seconds, out = best_of(repeats, _evaluate_batch, conc, exp, chows, rules_array)
            process_seconds, thread_seconds = time.process_time() - p0, time.thread_time() - t0
            # numba's threading layer ran the work elsewhere (a ratio of two clock readings of a few
            # milliseconds says nothing: another thread's tick decides it, so short runs are not checked)
            if process_seconds > MIN_CHECKED_SECONDS and thread_seconds < 0.8 * process_seconds:
                raise SimkitError("the evaluator's batch kernel ran on other threads than this one: its CPU time "
                                  "cannot be measured here (try NUMBA_THREADING_LAYER=omp)")
            cases.append({
                "holdings": label,
                "count": int(conc.shape[0]),
                "complete": int(out[:, K.OUT_COMPLETE].sum()),
                "hu_sum": int(out[:, K.OUT_HU][out[:, K.OUT_COMPLETE] == 1].sum()),  # a checksum of the results
                "cpu_s": seconds,
                "evals_per_s": conc.shape[0] / seconds,
            })
    return {"workload": "evaluator", "threads": 1, "cases": cases}


def format_evaluator_report(res: dict) -> str:
    """Human-readable lines of :func:`bench_evaluator`."""
    lines = ["evaluator, one thread, CPU time:"]
    for c in res["cases"]:
        lines.append(f"  {c['holdings']}: {c['evals_per_s']:,.0f} evals/s ({c['count']:,} holdings, "
                     f"{c['complete']:,} complete), {1e6 / c['evals_per_s']:.2f} us each")
    return "\n".join(lines)


# ---- the engine


@njit(nogil=True)
def greedy_by_import(obs, mask, params, rng, rules, work):
    """A user policy (by import path: ``simkit.bench:greedy_by_import``) that plays exactly
    as the built-in ``greedy``, from the observation a user policy gets."""
    return greedy_like(obs, mask, params, rules, work, False)


USER_GREEDY = "simkit.bench:greedy_by_import"


class GreedyInPython:
    """A Python-tier policy (by import path: ``simkit.bench:GreedyInPython``): greedy's choices,
    asked from Python through ``act(observation, legal_actions)``."""

    def __init__(self) -> None:
        self.rules = RuleSet().to_array()
        self.work = np.zeros(POLICY_WORK_SIZE, dtype=np.int64)
        self.params = np.zeros(N_PARAMS)

    def act(self, observation, legal_actions) -> int:
        mask = np.zeros(N_ACTIONS, dtype=np.bool_)
        mask[legal_actions] = True
        return int(greedy_like(observation.array, mask, self.params, self.rules, self.work, False))


PYTHON_GREEDY = "simkit.bench:GreedyInPython"
PYTHON_SHARE = 20  # the Python-tier row plays deals // PYTHON_SHARE deals


def builtin_policies() -> list[str]:
    """The registry's built-in policy names (:func:`~simkit.policies.registry.builtin_names`:
    ``learned``, which plays a model file, is none), greedy (the reference) first, then by name."""
    return sorted(builtin_names(), key=lambda n: (n != REFERENCE, n))


def _play(deals: int, seed: int, arrays: tuple, rules_array: np.ndarray) -> np.ndarray:
    ids, params, user = arrays
    return play_deals(deals, seed, ids, params, rules_array, user_functions=user)


def _engine_setup(name: str, n: int, seed: int) -> dict:
    """A row's policies, deals and label, its kernels compiled or loaded (untimed): × 3, or one
    seat against greedy × 2 on fewer deals for a slow policy (mc's family, or slow in a probe)."""
    label = "greedy by import path" if name == USER_GREEDY else name
    rules_array = RuleSet().to_array()
    three = policy_arrays(parse_policies([name] * 3))
    _play(2, seed, three, rules_array)  # compiled / loaded, untimed
    probe, _ = cpu_seconds(_play, PROBE_DEALS, seed, three, rules_array)
    slow = bool((three[0] == P_MC).any()) or PROBE_DEALS / max(probe, 1e-9) < SLOW_DEALS_PER_S
    if slow:
        arrays = policy_arrays(parse_policies([name, REFERENCE, REFERENCE]))
        _play(2, seed, arrays, rules_array)
        return {"policy": f"{label} vs {REFERENCE} ×2", "policies": f"{name},{REFERENCE},{REFERENCE}",
                "deals": max(SLOW_MIN_DEALS, n // SLOW_SHARE), "arrays": arrays, "rules": rules_array, "slow": True}
    return {"policy": f"{label} ×3", "policies": ",".join([name] * 3), "deals": n, "arrays": three,
            "rules": rules_array, "slow": False}


def _engine_rows(names: list[str], n: int, seed: int, repeats: int) -> list[dict]:
    """The rows of ``names``, timed in interleaved rounds: each round plays every fast row once,
    in turn, and a row keeps its fewest CPU seconds over the rounds (so that a slow stretch of
    the machine, or the first rows of a process, which ran up to a third slower than the same
    row later in the same process on the 2-core VM, weigh on every row alike, not on the first
    ones); a slow row is timed once."""
    setups = [_engine_setup(name, n, seed) for name in names]
    best = [float("inf")] * len(setups)
    rows: list[Any] = [None] * len(setups)
    runs = [0] * len(setups)
    for round_number in range(max(1, repeats)):
        for i, setup in enumerate(setups):
            if setup["slow"] and round_number > 0:
                continue
            seconds, rows[i] = cpu_seconds(_play, setup["deals"], seed, setup["arrays"], setup["rules"])
            best[i] = min(best[i], max(seconds, 1e-9))
            runs[i] += 1
    return [{"policy": setup["policy"], "policies": setup["policies"], "deals": setup["deals"], "cpu_s": seconds,
             "deals_per_s": setup["deals"] / seconds, "won": float((result[:, R_WINNER] >= 0).mean()), "runs": count,
             "rows_sha256": hashlib.sha256(np.ascontiguousarray(result).tobytes()).hexdigest()[:16]}
            for setup, seconds, result, count in zip(setups, best, rows, runs)]


def _python_row(n: int, seed: int) -> dict:
    """greedy as a Python-tier policy in one seat, against greedy × 2, played by the Python loop
    (:func:`simkit.runner.python_play.play_deals_python`) on ``n // PYTHON_SHARE`` deals."""
    rules_array = RuleSet().to_array()
    text = f"{PYTHON_GREEDY},{REFERENCE},{REFERENCE}"
    actors = actors_for(parse_policies(text))
    play_deals_python(2, seed, actors, rules_array)  # compiled / loaded, untimed
    deals = max(SLOW_MIN_DEALS, n // PYTHON_SHARE)
    seconds, rows = cpu_seconds(play_deals_python, deals, seed, actors, rules_array)
    seconds = max(seconds, 1e-9)
    return {"policy": f"greedy in Python vs {REFERENCE} ×2", "policies": text, "deals": deals, "cpu_s": seconds,
            "deals_per_s": deals / seconds, "won": float((rows[:, R_WINNER] >= 0).mean()), "runs": 1,
            "rows_sha256": hashlib.sha256(np.ascontiguousarray(rows).tobytes()).hexdigest()[:16]}


def bench_engine(n: int = DEFAULTS["deals"], seed: int = 2026, repeats: int = ENGINE_ROUNDS) -> dict:
    """Whole deals per CPU second on one thread: each built-in policy × 3 (slow ones: one seat
    vs greedy × 2 on fewer deals), greedy by import path × 3, and greedy as a Python-tier policy
    in one seat; ratios to greedy × 3."""
    with _one_numba_thread():
        rows = _engine_rows(builtin_policies() + [USER_GREEDY], n, seed, repeats)
        rows.append(_python_row(n, seed))
    reference = next(r for r in rows if r["policies"] == ",".join([REFERENCE] * 3))
    for r in rows:
        r["vs_greedy"] = r["deals_per_s"] / reference["deals_per_s"]
    return {"workload": "engine", "threads": 1, "seed": seed, "rows": rows}


def format_engine_report(res: dict) -> str:
    """Human-readable lines of :func:`bench_engine`."""
    lines = ["engine, whole deals, one thread, CPU time:"]
    for r in res["rows"]:
        lines.append(f"  {r['policy']:28s} {r['deals_per_s']:>10,.0f} deals/s  {r['vs_greedy']:>7.3g} × greedy ×3  "
                     f"({r['deals']:,} deals, {r['cpu_s']:.2f} CPU s, {r['won']:.1%} won, rows {r['rows_sha256']})")
    return "\n".join(lines)


# ---- simkit score --jsonl

SCORE_CORPORA = (
    ("uniform", 0.0),  # uniformly random 31-card holdings: rarely complete
    ("mixed", 0.5),  # half of them built from random groups: about half complete, explained
)


def _score_lines(lines: list[str], base: RuleSet) -> str:
    """What ``simkit score --jsonl`` does with a file's lines (JSON decoding included)."""
    return score_records([(k + 1, json.loads(line)) for k, line in enumerate(lines)], base, "bench")


def _score_one_at_a_time(lines: list[str], base: RuleSet) -> str:
    return "".join(json.dumps(score_record(json.loads(line), base), ensure_ascii=False) + "\n" for line in lines)


def bench_score(n: int = DEFAULTS["lines"], seed: int = 2026, repeats: int = 3, reference: int = 1_000) -> dict:
    """``simkit score --jsonl`` lines per CPU second (:func:`simkit.evaluator.score.score_records`,
    JSON decoding included, no process start) on random 31-card holdings with random exposed
    groups and per-line rule sets (:func:`simkit.generate.random_score_records`), and the
    one-line-at-a-time reference (:func:`simkit.evaluator.score.score_record`) on the first
    ``reference`` lines, whose output the batched path must match byte for byte."""
    base = RuleSet()
    corpora = []
    for label, grouped in SCORE_CORPORA:
        lines = [json.dumps(r, ensure_ascii=False) for r in random_score_records(n, seed, grouped=grouped)]
        _score_lines(lines[:10], base)  # compiled / loaded, untimed (both paths)
        _score_one_at_a_time(lines[:10], base)
        seconds, text = best_of(repeats, _score_lines, lines, base)
        m = min(reference, n)
        ref_seconds, ref = cpu_seconds(_score_one_at_a_time, lines[:m], base)
        if "".join(text.splitlines(keepends=True)[:m]) != ref:
            raise AssertionError("batched scoring differs from the one-line reference")
        corpora.append({
            "corpus": label,
            "lines": n,
            "complete": sum(1 for line in text.splitlines() if line.split('"complete": ', 1)[1].startswith("t")),
            "cpu_s": seconds,
            "lines_per_s": n / seconds,
            "reference_lines": m,
            "reference_lines_per_s": m / max(ref_seconds, 1e-9),
        })
    return {"workload": "score", "threads": 1, "corpora": corpora}


def format_score_report(res: dict) -> str:
    """Human-readable lines of :func:`bench_score`."""
    lines = ["simkit score --jsonl (in process, JSON decoding included), one thread, CPU time:"]
    for f in res["corpora"]:
        lines.append(
            f"  {f['corpus']:8s} {f['lines_per_s']:>10,.0f} lines/s batched ({f['lines']:,} lines, {f['complete']:,} "
            f"complete); one line at a time: {f['reference_lines_per_s']:,.0f} lines/s "
            f"({f['lines_per_s'] / f['reference_lines_per_s']:.1f}x)"
        )
    return "\n".join(lines)


# ---- simulate to Parquet

PARQUET_POLICIES = "greedy,greedy,greedy"


def bench_parquet(n: int = DEFAULTS["parquet_deals"], seed: int = 2026) -> dict:
    """``simulate`` of ``n`` deals of greedy × 3 into a new Parquet dataset (one worker, one
    numba thread: play, rows, Parquet files, manifest), in CPU seconds of this thread, and the
    process's CPU seconds (pyarrow may use threads of its own: the two should be close)."""
    with _one_numba_thread(), tempfile.TemporaryDirectory(prefix="simkit-bench-") as tmp:
        simulate(SimulateSpec(200, PARQUET_POLICIES, seed), Path(tmp) / "warm", Execution(quiet=True))  # compiled / loaded, untimed
        out = Path(tmp) / "run"
        p0 = time.process_time()
        seconds, _ = cpu_seconds(simulate, SimulateSpec(n, PARQUET_POLICIES, seed), out, Execution(quiet=True))
        process_seconds = time.process_time() - p0
        files = sorted(out.rglob("*.parquet"))
        size = sum(f.stat().st_size for f in files)
    return {"workload": "parquet", "threads": 1, "rows": [{
        "policies": PARQUET_POLICIES, "deals": n, "cpu_s": seconds, "deals_per_s": n / max(seconds, 1e-9),
        "process_cpu_s": process_seconds, "files": len(files), "bytes": size}]}


def format_parquet_report(res: dict) -> str:
    """Human-readable lines of :func:`bench_parquet`."""
    r = res["rows"][0]
    return (f"simulate to Parquet, one worker, one thread, CPU time:\n  {r['policies']}: {r['deals']:,} deals in "
            f"{r['cpu_s']:.2f} CPU s = {r['deals_per_s']:,.0f} deals/s (process CPU {r['process_cpu_s']:.2f} s; "
            f"{r['files']} Parquet files, {r['bytes'] / 1e6:.1f} MB)")


# ---- everything, and the Markdown page


def bench_all(sizes: dict[str, int] | None = None, seed: int = 2026) -> dict:
    """Every workload at the sizes of ``sizes`` (default :data:`DEFAULTS`), with the machine."""
    s = dict(DEFAULTS, **(sizes or {}))
    load_before = _load()
    res = {
        "machine": machine(),
        "evaluator": bench_evaluator(s["holdings"], seed),
        "engine": bench_engine(s["deals"], seed),
        "score": bench_score(s["lines"], seed),
        "parquet": bench_parquet(s["parquet_deals"], seed),
    }
    res["machine"]["load_average"] = [load_before, _load()]
    return res


def _table(header: list[str], rows: list[list[str]], numeric: bool = True) -> list[str]:
    align = ["---" if k == 0 or not numeric else "---:" for k in range(len(header))]
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"] + \
        ["| " + " | ".join(r) + " |" for r in rows]


def _shared_note(m: dict[str, Any]) -> str:
    """A sentence on the machine: virtual or not, its cores, and whether it was shared (a load
    average above three quarters of the logical cores, before or after the run)."""
    load = m.get("load_average")
    loads = [x for x in (load if isinstance(load, list) else [load]) if x is not None]
    kind = "a virtual machine" if m.get("virtual_machine") else "a machine"
    cores = m.get("logical_cores")
    load_text = f"load average {', then '.join(f'{x:.1f}' for x in loads)}" if loads else ""
    if loads and cores and max(loads) > 0.75 * cores:
        return (f"The figures come from {kind} with {cores} logical cores that was shared while they ran "
                f"({load_text}): CPU time leaves out the time other jobs held the cores, but they still share "
                "the caches and memory bandwidth, so a quiet machine of the same kind is likely somewhat faster, and "
                "repeated runs can differ by tens of percent: compare rows within one page (the ratio column).")
    return f"The figures come from {kind} with {cores} logical cores" + (f" ({load_text})." if loads else ".")


def format_markdown(res: dict) -> str:
    """docs/benchmarks.md: how the figures were made, the machine, one table per workload."""
    m = res["machine"]
    commit = f", commit {m['commit']}" if m.get("commit") else ""
    out = [
        "# Benchmarks",
        "",
        f"Made by `simkit bench all --markdown --out docs/benchmarks.md` on {m['date']} (simkit {m['simkit']}"
        f"{commit}). Regenerate it with that command; these are the project's only speed figures.",
        "",
        "Every figure is **CPU time of the measuring thread** (`time.thread_time`), never wall clock, with one "
        "numba thread; each kernel ran once untimed first (compile time is not counted), then the best of a few "
        "runs is kept (the engine's rows in interleaved rounds: every row once per round). " + _shared_note(m),
        "",
        "## Machine",
        "",
    ]
    out += _table(["what", "this run"], [
        ["CPU", m["cpu"]],
        ["logical cores", str(m["logical_cores"])],
        ["virtual machine", "yes (hypervisor flag in /proc/cpuinfo)" if m["virtual_machine"] else "no"],
        ["OS", m["os"]],
        ["Python", m["python"]],
        ["numpy", m["numpy"]],
        ["numba", m["numba"]],
        ["pyarrow", m["pyarrow"]],
    ], numeric=False)
    out += ["", "## Evaluator", "", "Holdings evaluated (best decomposition, hu, 楼, units, patterns) by the batch kernel of "
            "`evaluate_many`, one thread.", ""]
    out += _table(["holdings", "count", "complete", "CPU s", "evaluations/s", "µs per evaluation"], [
        [c["holdings"], f"{c['count']:,}", f"{c['complete']:,}", f"{c['cpu_s']:.3f}", f"{c['evals_per_s']:,.0f}",
         f"{1e6 / c['evals_per_s']:.2f}"] for c in res["evaluator"]["cases"]])
    eng = res["engine"]
    out += ["", "## Engine", "", f"Whole deals (deals 0 .. N − 1 of seed {eng['seed']}, the default rules), every "
            "built-in policy of the registry. Policies of mc's family are slow: they play one seat against "
            "greedy ×2 on fewer deals. `greedy by import path` is `simkit.bench:greedy_by_import`, a user policy "
            "that decides as greedy does: its ratio is the cost of the plug-in path (its result rows are greedy ×3's). "
            "`greedy in Python` is `simkit.bench:GreedyInPython`, the same choices asked through the Python tier "
            "(`act(observation, legal_actions)`), in one seat on a twentieth of the deals. "
            "The digest of the result rows changes only when decisions change.", ""]
    out += _table(["policies", "deals", "CPU s", "deals/s", "÷ greedy ×3", "result rows (sha256)"], [
        [r["policy"], f"{r['deals']:,}", f"{r['cpu_s']:.3f}", f"{r['deals_per_s']:,.0f}", f"{r['vs_greedy']:.3g}",
         f"`{r['rows_sha256']}`"] for r in eng["rows"]])
    out += ["", "## simkit score --jsonl", "", "Lines of `simkit score --jsonl` per second, in process (JSON decoding "
            "and encoding included, no process start): random 31-card holdings with random exposed groups and "
            "per-line rule sets; batched, and one line at a time (the first 1,000 lines, which must match the "
            "batched output byte for byte).", ""]
    out += _table(["corpus", "lines", "complete", "CPU s", "lines/s batched", "lines/s one at a time"], [
        [f["corpus"], f"{f['lines']:,}", f"{f['complete']:,}", f"{f['cpu_s']:.3f}", f"{f['lines_per_s']:,.0f}",
         f"{f['reference_lines_per_s']:,.0f}"] for f in res["score"]["corpora"]])
    out += ["", "## simulate to Parquet", "", "`simulate` into a new dataset folder, one worker: play, result rows, "
            "Parquet files and manifest (process CPU time, pyarrow's threads included, in brackets).", ""]
    out += _table(["policies", "deals", "CPU s", "deals/s", "Parquet files", "MB"], [
        [r["policies"], f"{r['deals']:,}", f"{r['cpu_s']:.2f} ({r['process_cpu_s']:.2f})", f"{r['deals_per_s']:,.0f}",
         str(r["files"]), f"{r['bytes'] / 1e6:.1f}"] for r in res["parquet"]["rows"]])
    return "\n".join(out) + "\n"


def format_all_report(res: dict) -> str:
    """Human-readable lines of :func:`bench_all`."""
    return "\n".join([f"hardware: {hardware_line(res['machine'])}", format_evaluator_report(res["evaluator"]),
                      format_engine_report(res["engine"]), format_score_report(res["score"]),
                      format_parquet_report(res["parquet"])])


def run_bench(target: str, holdings: int | None = None, deals: int | None = None, lines: int | None = None,
              seed: int = 2026, as_json: bool = False, markdown: bool = False,
              out: str | os.PathLike | None = None) -> str:
    """``simkit bench TARGET``: the text (report lines, JSON or Markdown) of one benchmark, or
    of all (``target="all"``).  Every argument is checked first (:func:`check_arguments`)."""
    sizes = check_arguments(target, holdings, deals, lines, seed, as_json, markdown, out)
    if target == "all":
        res = bench_all(sizes, seed)
    else:
        single = {
            "evaluator": lambda: bench_evaluator(sizes["holdings"], seed),
            "engine": lambda: bench_engine(sizes["deals"], seed),
            "score": lambda: bench_score(sizes["lines"], seed),
            "parquet": lambda: bench_parquet(sizes["parquet_deals"], seed),
        }[target]
        res = {"machine": machine(), target: single()}
    if as_json:
        return json.dumps(res, indent=2, ensure_ascii=False) + "\n"
    if markdown:
        return format_markdown(res)
    if target == "all":
        return format_all_report(res) + "\n"
    formatter = {"evaluator": format_evaluator_report, "engine": format_engine_report,
                 "score": format_score_report, "parquet": format_parquet_report}[target]
    return f"hardware: {hardware_line(res['machine'])}\n{formatter(res[target])}\n"

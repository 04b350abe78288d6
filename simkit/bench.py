"""Benchmarks: ``simkit bench evaluator`` (evaluations per second, single thread),
``simkit bench engine`` (whole deals per second) and ``simkit bench score`` (``simkit score
--jsonl`` lines per second).

Throughput is measured, never asserted in tests; the figures go in the closing notes.

``bench engine`` also plays :func:`greedy_by_import`, a user policy named by import path
(``simkit.bench:greedy_by_import``) that does greedy's work on the observation, and reports
its rate as a fraction of the built-in greedy's: the cost of the plug-in path (the
observation copy, the user dispatcher), with the same decisions.
"""

from __future__ import annotations

import json
import os
import platform
import time

import numba
import numpy as np
from numba import njit

from simkit.cards import parse_counts
from simkit.evaluator import kernel as K
from simkit.evaluator.api import evaluate_batch_kernel
from simkit.evaluator.score import score_record, score_records
from simkit.generate import random_group_holdings, random_holdings, random_score_records
from simkit.policies.builtin import greedy_like
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner.play import R_WINNER, play_deals


def hardware_line() -> str:
    """One line describing the machine the figures come from."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{cpu}; {os.cpu_count()} logical cores; Python {platform.python_version()}; "
        f"numba {numba.__version__}; numpy {np.__version__}"
    )


def _throughput(conc, exp, chows, rules_array, repeats: int) -> tuple[float, int]:
    out = np.zeros((conc.shape[0], K.N_OUT), dtype=np.int64)
    evaluate_batch_kernel(conc[:10], exp[:10], chows[:10], rules_array, 1, out[:10])  # compile / warm
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        evaluate_batch_kernel(conc, exp, chows, rules_array, 1, out)
        best = min(best, time.perf_counter() - t0)
    return conc.shape[0] / best, int(out[:, K.OUT_COMPLETE].sum())


def _worst_single(conc, exp, chows, rules_array, n: int) -> tuple[float, int]:
    """Slowest single evaluation (Python-level timing, dispatch overhead included)."""
    out = np.zeros(K.N_OUT, dtype=np.int64)
    choice = np.zeros(K.N_CHOICE, dtype=np.int64)
    work = K.new_workspace()
    K.evaluate_kernel(conc[0], exp[0], chows[0], rules_array, 1, out, choice, work)
    worst = 0.0
    worst_index = 0
    for i in range(min(n, conc.shape[0])):
        t0 = time.perf_counter_ns()
        K.evaluate_kernel(conc[i], exp[i], chows[i], rules_array, 1, out, choice, work)
        dt = time.perf_counter_ns() - t0
        if dt > worst:
            worst = dt
            worst_index = i
    return worst / 1e3, worst_index


def bench_evaluator(n: int = 200_000, seed: int = 2026, repeats: int = 3) -> dict:
    """Evaluations/s on one thread for uniform and for complete 31-card holdings."""
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        rules_array = RuleSet().to_array()
        uniform = random_holdings(n, seed=seed)
        zeros_exp = np.zeros((n, K.N_EXP_ROWS, 28), dtype=np.int64)
        zeros_chow = np.zeros(n, dtype=np.int64)
        rate_u, complete_u = _throughput(uniform, zeros_exp, zeros_chow, rules_array, repeats)
        worst_u, _ = _worst_single(uniform, zeros_exp, zeros_chow, rules_array, 20_000)
        conc, exp, chows = random_group_holdings(n, seed=seed + 1, total=31, p_exposed=0.15)
        rate_c, complete_c = _throughput(conc, exp, chows, rules_array, repeats)
        worst_c, _ = _worst_single(conc, exp, chows, rules_array, 20_000)
        hard = parse_counts("YJ*4 RJ*4 WJ*4 GJ*4 YZ*4 RZ*4 WZ*4 GZ*3")[None, :]
        hard_exp = np.zeros((1, K.N_EXP_ROWS, 28), dtype=np.int64)
        hard_chow = np.zeros(1, dtype=np.int64)
        reps = 2000
        many = np.repeat(hard, reps, axis=0)
        rate_h, _ = _throughput(many, np.repeat(hard_exp, reps, axis=0), np.repeat(hard_chow, reps), rules_array, repeats)
    finally:
        numba.set_num_threads(previous)
    return {
        "hardware": hardware_line(),
        "threads": 1,
        "uniform_31": {"holdings": n, "complete": complete_u, "evals_per_s": rate_u, "worst_us": worst_u},
        "complete_31": {"holdings": n, "complete": complete_c, "evals_per_s": rate_c, "worst_us": worst_c},
        "all_jiang_15_zu": {"us_per_eval": 1e6 / rate_h},
    }


def format_evaluator_report(res: dict) -> str:
    """Human-readable lines of :func:`bench_evaluator`."""
    u = res["uniform_31"]
    c = res["complete_31"]
    return "\n".join(
        [
            f"hardware: {res['hardware']}",
            "evaluator, 1 thread:",
            f"  (a) uniform random 31-card holdings: {u['evals_per_s']:,.0f} evals/s "
            f"({u['holdings']:,} holdings, {u['complete']} complete), worst single {u['worst_us']:.1f} us",
            f"  (b) random complete 31-card holdings: {c['evals_per_s']:,.0f} evals/s "
            f"({c['holdings']:,} holdings, {c['complete']:,} complete), worst single {c['worst_us']:.1f} us",
            f"  all sixteen 将 + fifteen 卒: {res['all_jiang_15_zu']['us_per_eval']:.1f} us per evaluation",
        ]
    )


@njit(nogil=True)
def greedy_by_import(obs, mask, params, rng, rules, work):
    """A user policy (by import path: ``simkit.bench:greedy_by_import``) that plays exactly
    as the built-in ``greedy``, from the observation a user policy gets."""
    return greedy_like(obs, mask, params, rules, work, False)


USER_GREEDY = "simkit.bench:greedy_by_import"
ENGINE_MIXES = (
    ("random x3", "random,random,random"),
    ("greedy x3", "greedy,greedy,greedy"),
    ("greedy via import path x3", f"{USER_GREEDY},{USER_GREEDY},{USER_GREEDY}"),
    ("patient x3", "patient,patient,patient"),
    ("mc vs greedy x2", "mc,greedy,greedy"),
)


def bench_engine(n: int = 20_000, seed: int = 2026, repeats: int = 2) -> dict:
    """Deals/s on one thread for several policy mixes (mc on n // 200 deals)."""
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    rules_array = RuleSet().to_array()
    figures = {}
    try:
        for label, text in ENGINE_MIXES:
            ids, params, user = policy_arrays(parse_policies(text))
            deals = max(20, n // 200) if "mc" in text else n
            play_deals(5, seed, ids, params, rules_array, user_functions=user)  # compile / warm
            best = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter()
                res = play_deals(deals, seed, ids, params, rules_array, user_functions=user)
                best = min(best, time.perf_counter() - t0)
            figures[label] = {"deals": deals, "deals_per_s": deals / best,
                              "win_rate": float((res[:, R_WINNER] >= 0).mean())}
    finally:
        numba.set_num_threads(previous)
    return {"hardware": hardware_line(), "threads": 1, "mixes": figures}


def format_engine_report(res: dict) -> str:
    """Human-readable lines of :func:`bench_engine`."""
    lines = [f"hardware: {res['hardware']}", "engine, whole deals, 1 thread:"]
    mixes = res["mixes"]
    for label, f in mixes.items():
        line = f"  {label:26s} {f['deals_per_s']:>12,.0f} deals/s  ({f['deals']:,} deals, {f['win_rate']:.1%} won)"
        if label == "greedy via import path x3" and "greedy x3" in mixes:
            line += f", {f['deals_per_s'] / mixes['greedy x3']['deals_per_s']:.0%} of the built-in greedy's rate"
        lines.append(line)
    return "\n".join(lines)


SCORE_CORPORA = (
    ("uniform", 0.0),  # uniformly random 31-card holdings: rarely complete
    ("mixed", 0.5),  # half of them built from random groups: about half complete, explained
)


def _score_lines(lines: list[str], base: RuleSet) -> str:
    """What ``simkit score --jsonl`` does with a file's lines (JSON decoding included)."""
    return score_records([(k + 1, json.loads(line)) for k, line in enumerate(lines)], base, "bench")


def bench_score(n: int = 20_000, seed: int = 2026, repeats: int = 3, reference: int = 1_000) -> dict:
    """``simkit score --jsonl`` lines/s (:func:`simkit.evaluator.score.score_records`, JSON
    decoding included, no process start) on random 31-card holdings with random exposed groups
    and per-line rule sets (:func:`simkit.generate.random_score_records`), and the one-line-
    at-a-time reference (:func:`simkit.evaluator.score.score_record`) on the first
    ``reference`` lines, whose output the batched path must match byte for byte."""
    base = RuleSet()
    figures = {}
    for label, grouped in SCORE_CORPORA:
        lines = [json.dumps(r, ensure_ascii=False) for r in random_score_records(n, seed, grouped=grouped)]
        _score_lines(lines[:10], base)  # compile / warm
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            text = _score_lines(lines, base)
            best = min(best, time.perf_counter() - t0)
        m = min(reference, n)
        t0 = time.perf_counter()
        ref = "".join(json.dumps(score_record(json.loads(line), base), ensure_ascii=False) + "\n" for line in lines[:m])
        ref_time = time.perf_counter() - t0
        head = "".join(text.splitlines(keepends=True)[:m])
        if head != ref:
            raise AssertionError("batched scoring differs from the one-line reference")
        figures[label] = {
            "lines": n,
            "complete": sum(1 for line in text.splitlines() if line.split('"complete": ', 1)[1].startswith("t")),
            "lines_per_s": n / best,
            "reference_lines": m,
            "reference_lines_per_s": m / ref_time,
        }
    return {"hardware": hardware_line(), "threads": 1, "corpora": figures}


def format_score_report(res: dict) -> str:
    """Human-readable lines of :func:`bench_score`."""
    lines = [f"hardware: {res['hardware']}", "simkit score --jsonl (in process, JSON decoding included), 1 thread:"]
    for label, f in res["corpora"].items():
        lines.append(
            f"  {label:8s} {f['lines_per_s']:>10,.0f} lines/s batched ({f['lines']:,} lines, {f['complete']:,} "
            f"complete); one line at a time: {f['reference_lines_per_s']:,.0f} lines/s "
            f"({f['lines_per_s'] / f['reference_lines_per_s']:.1f}x)"
        )
    return "\n".join(lines)

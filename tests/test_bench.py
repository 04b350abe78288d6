"""``simkit bench``: CPU time of the measuring thread, a row for every built-in policy, the
Markdown page of ``bench all``, and one-line errors before any work.

The engine tests replace ``play_deals`` with a stand-in that advances a fake thread clock by a
known cost per deal, so the figures are known exactly and nothing compiles."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from simkit import bench
from simkit.cli import main
from simkit.policies import registry
from simkit.policies.builtin import P_GREEDY, P_MC, P_PATIENT
from simkit.runner.play import N_RESULT, R_WINNER


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---- bad arguments: one line, status 2, before any work, nothing written


def _no_work(*args, **kwargs):
    raise AssertionError("a benchmark ran before the arguments were checked")


@pytest.mark.parametrize("argv, word", [
    (["engine", "--seed", "-1"], "--seed"),
    (["engine", "--deals", "0"], "--deals"),
    (["engine", "--deals", "99999999999999999999"], "--deals"),
    (["score", "--lines", "5"], "--lines"),
    (["evaluator", "--holdings", "10"], "--holdings"),
    (["engine", "--json", "--markdown"], "--markdown"),
    (["engine", "--markdown"], "--markdown"),
    (["all", "--markdown", "--out", "TMP/no/such/folder/benchmarks.md"], "--out"),
    (["all", "--markdown", "--out", "TMP"], "--out"),
])
def test_bad_arguments_are_one_line_before_any_work(capsys, monkeypatch, tmp_path, argv, word):
    """Catches a check made after the timings (the stand-ins raise), a traceback or a
    multi-line message, a wrong exit status, and output written for a refused command."""
    for name in ("bench_evaluator", "bench_engine", "bench_score", "bench_parquet", "bench_all"):
        monkeypatch.setattr(bench, name, _no_work)
    argv = [a.replace("TMP", str(tmp_path)) for a in argv]
    code, out, err = run(capsys, "bench", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("simkit: error: ") and word in err
    assert list(tmp_path.iterdir()) == []


# ---- the engine rows: fake thread clock, fake play


class FakeThreadClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


COST = {"greedy": 1e-4, "other": 2.5e-4, "user": 1.25e-4, "mc": 4e-3, "slowpoke": 1e-2,
        "python": 5e-4}  # CPU seconds per deal


def _fake_play(clock, played):
    def play_deals(n_deals, seed, ids, params, rules_array, user_functions=(None, None, None), **kwargs):
        ids = np.asarray(ids)
        if (params[:, 0] == 99).any():
            cost = COST["slowpoke"]
        elif (ids == P_MC).any():
            cost = COST["mc"]
        elif (ids >= registry.USER_SLOT_BASE).any():
            cost = COST["user"]
        elif (ids == P_GREEDY).all():
            cost = COST["greedy"]
        else:
            cost = COST["other"]
        clock.now += n_deals * cost
        played.append((n_deals, seed, tuple(ids)))
        rows = np.zeros((n_deals, N_RESULT), dtype=np.int64)
        rows[:, R_WINNER] = -1
        return rows

    return play_deals


def _fake_play_python(clock, played):
    def play_deals_python(n_deals, seed, actors, rules_array, **kwargs):
        assert isinstance(actors[0].python, bench.GreedyInPython) and actors[1].python is None
        clock.now += n_deals * COST["python"]
        played.append((n_deals, seed, "python"))
        rows = np.zeros((n_deals, N_RESULT), dtype=np.int64)
        rows[:, R_WINNER] = -1
        return rows

    return play_deals_python


@pytest.fixture
def fake_engine(monkeypatch):
    clock, played = FakeThreadClock(), []
    monkeypatch.setattr(bench.time, "thread_time", clock)
    monkeypatch.setattr(bench, "play_deals", _fake_play(clock, played))
    monkeypatch.setattr(bench, "play_deals_python", _fake_play_python(clock, played))
    return played


def test_engine_times_thread_cpu_and_gives_a_row_per_builtin_policy(fake_engine, monkeypatch):
    """Catches wall-clock timing (the figures would not be the fake clock's), a fixed list of
    policies (the two policies added to the registry here get no row), a row for ``learned`` (no
    built-in: it played exactly as expert), a slow policy played × 3
    or labelled as × 3, and a ratio taken to anything but greedy × 3."""
    monkeypatch.setitem(registry._REGISTRY, "greedy2", registry._REGISTRY["greedy"])
    slow = registry._builtin(P_PATIENT, registry.param_table(registry.PATIENT_PARAMS, min_units=99), "a slow one")
    monkeypatch.setitem(registry._REGISTRY, "slowpoke", slow)
    n = 2_000
    res = bench.bench_engine(n=n, seed=5, repeats=2)
    rows = {r["policy"]: r for r in res["rows"]}
    builtins = list(registry.builtin_names())
    assert {"greedy2", "slowpoke", "expert", "mc", "search", "random", "patient"} <= set(builtins)
    assert "learned" not in builtins  # it played exactly as expert: no row (issue 51)
    expected = {f"{name} vs greedy ×2" if name in ("mc", "search", "slowpoke") else f"{name} ×3" for name in builtins}
    assert set(rows) == expected | {"greedy by import path ×3", "greedy in Python vs greedy ×2"}
    assert res["rows"][0]["policy"] == "greedy ×3"
    python = rows.pop("greedy in Python vs greedy ×2")
    assert python["deals"] == n // bench.PYTHON_SHARE and python["policies"] == f"{bench.PYTHON_GREEDY},greedy,greedy"
    assert python["deals_per_s"] == pytest.approx(1 / COST["python"])
    assert python["vs_greedy"] == pytest.approx(COST["greedy"] / COST["python"])
    for label, r in rows.items():
        name = label.split(" ")[0]
        cost = (COST["slowpoke"] if name == "slowpoke" else COST["mc"] if name in ("mc", "search") else
                COST["user"] if label.startswith("greedy by import") else
                COST["greedy"] if name in ("greedy", "greedy2") else COST["other"])
        slow_row = " vs " in label
        assert r["deals"] == (n // bench.SLOW_SHARE if slow_row else n)
        assert r["cpu_s"] == pytest.approx(r["deals"] * cost)
        assert r["deals_per_s"] == pytest.approx(1 / cost)
        assert r["vs_greedy"] == pytest.approx(COST["greedy"] / cost)
        assert r["policies"] == (f"{name},greedy,greedy" if slow_row else
                                 ",".join([bench.USER_GREEDY if label.startswith("greedy by import") else name] * 3))
    timed = [p for p in fake_engine if p[0] in (n, n // bench.SLOW_SHARE) and p[2] != "python"]
    assert {seed for _, seed, _ in fake_engine} == {5}
    assert len(timed) == 2 * (len(rows) - 3) + 3  # fast rows: best of 2, slow rows: 1 run


def test_bench_all_markdown_is_one_page_with_the_machine_and_one_table_per_workload(fake_engine, monkeypatch,
                                                                                      tmp_path, capsys):
    """Catches a missing hardware fact (CPU, cores, OS, Python, numpy, numba), a missing date,
    a workload without its table or with two, and --out that prints instead of writing."""
    monkeypatch.setattr(bench, "bench_evaluator", lambda n, seed: {"workload": "evaluator", "cases": [
        {"holdings": "uniform", "count": n, "complete": 3, "cpu_s": 0.5, "evals_per_s": n / 0.5}]})
    monkeypatch.setattr(bench, "bench_score", lambda n, seed: {"workload": "score", "corpora": [
        {"corpus": "mixed", "lines": n, "complete": 7, "cpu_s": 0.25, "lines_per_s": n / 0.25,
         "reference_lines": 1000, "reference_lines_per_s": 999.0}]})
    monkeypatch.setattr(bench, "bench_parquet", lambda n, seed: {"workload": "parquet", "rows": [
        {"policies": "greedy,greedy,greedy", "deals": n, "cpu_s": 2.0, "deals_per_s": n / 2.0, "process_cpu_s": 2.1,
         "files": 10, "bytes": 5_000_000}]})
    out = tmp_path / "benchmarks.md"
    code, printed, err = run(capsys, "bench", "all", "--markdown", "--deals", "1000", "--out", str(out))
    assert code == 0 and printed == "" and err == ""
    page = out.read_text(encoding="utf-8")
    hw = bench.hardware()
    for fact in ("cpu", "os", "python", "numpy", "numba"):
        assert f"| {hw[fact]} |" in page, fact
    assert f"| logical cores | {hw['logical_cores']} |" in page
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", page)
    assert "`simkit bench all --markdown" in page and "time.thread_time" in page
    sections = re.split(r"^## ", page, flags=re.M)[1:]
    assert [s.split("\n", 1)[0] for s in sections] == ["Machine", "Evaluator", "Engine", "simkit score --jsonl",
                                                       "simulate to Parquet"]
    for s in sections:  # exactly one table (one header separator row) per section
        assert len(re.findall(r"^\| -", s, flags=re.M)) == 1, s[:40]
    engine = sections[2]
    assert "| greedy ×3 | 1,000 |" in engine and "| mc vs greedy ×2 | 10 |" in engine
    assert "| greedy by import path ×3 |" in engine and "| greedy in Python vs greedy ×2 | 50 |" in engine


def test_shared_machine_is_said_from_the_load_average():
    """Catches a page that hides a loaded (shared) machine, or calls a quiet one shared."""
    busy = bench._shared_note({"load_average": [3.5, 4.0], "logical_cores": 2, "virtual_machine": True})
    quiet = bench._shared_note({"load_average": [0.2, 0.3], "logical_cores": 8, "virtual_machine": False})
    assert "shared" in busy and "virtual machine" in busy and "2 logical cores" in busy
    assert "shared" not in quiet and "8 logical cores" in quiet


def test_json_output_is_the_figures(fake_engine, capsys):
    code, out, _ = run(capsys, "bench", "engine", "--deals", "500", "--json")
    res = json.loads(out)
    assert code == 0 and res["machine"]["cpu"] == bench.hardware()["cpu"]
    assert res["engine"]["rows"][0]["policy"] == "greedy ×3" and res["engine"]["rows"][0]["deals"] == 500


# ---- the evaluator, for real (small)


def test_evaluator_bench_counts_what_evaluate_many_counts():
    """Catches the benchmark timing a call that evaluates the wrong holdings (exposed groups
    of another row, another rule set): its complete counts and hu must be the evaluator's."""
    from simkit.evaluator import evaluate_many
    from simkit.generate import random_group_holdings, random_holdings

    res = bench.bench_evaluator(n=1_000, seed=11, repeats=1)
    uniform, grouped, hard = res["cases"]
    assert uniform["count"] == grouped["count"] == 1_000
    for case, arrays in ((uniform, (random_holdings(1_000, seed=11),)),
                         (grouped, random_group_holdings(1_000, seed=12, total=31, p_exposed=0.15))):
        ref = evaluate_many(*arrays)
        assert case["complete"] == int(ref["complete"].sum())
        assert case["hu_sum"] == int(ref["hu"][ref["complete"]].sum())
    assert hard["complete"] == hard["count"]  # 16 将 + 15 卒 is complete
    assert all(c["evals_per_s"] > 0 for c in res["cases"])


def test_greedy_in_python_plays_greedy():
    """The Python-tier row measures greedy's choices: catches a ``GreedyInPython`` that reads
    the wrong rules, parameters or observation (its rows would differ from greedy × 3's)."""
    from simkit.policies.registry import parse_policies, policy_arrays
    from simkit.rules import RuleSet
    from simkit.runner.play import play_deals
    from simkit.runner.python_play import actors_for, play_deals_python

    rules = RuleSet().to_array()
    rows = play_deals_python(40, 3, actors_for(parse_policies(f"{bench.PYTHON_GREEDY},greedy,greedy")), rules)
    ids, params, user = policy_arrays(parse_policies("greedy,greedy,greedy"))
    assert np.array_equal(rows, play_deals(40, 3, ids, params, rules, user_functions=user))

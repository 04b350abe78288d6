"""``simkit tune`` (:mod:`simkit.studies.tuning`): SPSA on a known objective, determinism,
resume after an interruption, refusal of another run's folder, bad input, the budget
accounting (every deal of an iteration played exactly 6 times, θ+ and θ- on the same deals,
no deal reused), user policies by import path (compiled and Python-tier), the command line,
and (slow) the done-when run: a mistuned ``patient`` tuned back to at least its default
strength, validated with intervals."""

from __future__ import annotations

import importlib
import json
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from helpers import module_on_path
from simkit.studies import tuning as T
from simkit.studies.compare import compare, load_comparison
from simkit.studies.tuning import (
    PLAYS_PER_DEAL,
    SpsaSettings,
    TuneSpec,
    parse_pool,
    parse_ranges,
    perturbation,
    spsa_step,
    tune,
    validation_seed,
)
from simkit.specs.base import Execution
from simkit.cli import main
from simkit.errors import DegenerateDataWarning, SimkitError
from simkit.policies import PolicyError
from simkit.policies.registry import param_index
from simkit.runner.duplicate import read_comparison
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec
from simkit.storage import DatasetError

MODULE = "simkit_test_tuning_policies"  # written into a temporary folder put on sys.path
POLICY_SOURCE = '''\
from numba import njit

from simkit.policies.builtin import greedy_like


@njit
def patient_copy(obs, mask, params, rng, rules, work):
    """Exactly patient (params[0] = min_units), from the observation a user policy gets."""
    return greedy_like(obs, mask, params, rules, work, True)


class Picky:
    """A Python-tier policy: always a legal win, else the legal action at position p0."""

    made = []  # p0 of every instance, in order: the points the Python loop played

    def __init__(self, p0=0.0):
        self.p0 = p0
        Picky.made.append(float(p0))

    def act(self, observation, legal_actions):
        from simkit.engine.layout import A_WIN

        if A_WIN in legal_actions:
            return A_WIN
        return legal_actions[min(int(self.p0), len(legal_actions) - 1)]
'''
SMALL = dict(iteration_deals=30, validate_deals=10, batch_size=10)
QUIET = Execution(quiet=True)


@pytest.fixture(scope="module")
def policy_module(tmp_path_factory):
    for _ in module_on_path(tmp_path_factory.mktemp("tune_policies"), MODULE, POLICY_SOURCE):
        yield MODULE


@pytest.fixture(autouse=True)
def _no_degenerate_warnings():
    """The tiny validations of the fast tests may compare equal policies (constant differences)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        yield


def _small_tune(out, seed=1, budget=PLAYS_PER_DEAL * 30 * 5, on_iteration=None, **kw):
    spec = TuneSpec("patient:6", {"min_units": (1, 8), "late_stock": (0, 12)}, ["greedy", "random"], budget,
                    seed=seed, **dict(SMALL, **kw))
    return tune(spec, out, QUIET, on_iteration=on_iteration)


# ---- the SPSA core


def test_spsa_climbs_a_noisy_concave_objective_to_its_interior_optimum():
    """Catches a wrong sign (minimising), gains that do not decay, or a perturbation that is
    not used in the gradient estimate."""
    optimum = np.array([0.3, 0.75, 0.5])
    settings = SpsaSettings().resolved(400)
    noise = np.random.default_rng(5)
    x = np.array([0.9, 0.1, 0.95])
    for k in range(400):
        a_k, c_k = settings.gains(k)
        delta = perturbation(3, k, 3)
        f = [-4.0 * np.sum((np.clip(x + s * c_k * delta, 0, 1) - optimum) ** 2) + noise.normal(0, 0.05)
             for s in (1, -1)]
        _, x = spsa_step(x, delta, f[0], f[1], a_k, c_k)
    assert np.abs(x - optimum).max() < 0.08, x


def test_gains_and_perturbations():
    s = SpsaSettings(a=1.0, c=0.1, A=5, alpha=0.602, gamma=0.101)
    assert s.gains(0) == pytest.approx((1.0 / 6 ** 0.602, 0.1))
    assert s.gains(9) == pytest.approx((1.0 / 15 ** 0.602, 0.1 / 10 ** 0.101))
    default = SpsaSettings().resolved(200)
    assert default.A == 20 and default.gains(0)[0] == pytest.approx(0.1)  # a_0 = 0.1 by default
    # Δ: ±1, a pure function of (seed, iteration), different across iterations and seeds
    draws = np.array([perturbation(4, k, 8) for k in range(50)])
    assert set(np.unique(draws)) == {-1.0, 1.0}
    assert np.array_equal(draws[7], perturbation(4, 7, 8))
    assert not np.array_equal(draws[7], draws[8]) and not np.array_equal(draws[7], perturbation(5, 7, 8))
    assert abs(draws.mean()) < 0.15
    assert validation_seed(3) != 3 and validation_seed(3) == validation_seed(3) != validation_seed(4)


def test_parsers():
    assert parse_ranges("p0=1:8") == {"p0": (1.0, 8.0)}
    assert [s.text() for s in parse_pool("patient:2,6,1,greedy,random")] == ["patient:2,6,1", "greedy", "random"]
    # the registry's list parser: named parameters, and its one-line refusals of a mixed list
    pool = parse_pool("expert:danger=20,patient:min_units=3:peng_slack=2,greedy")
    assert [s.name for s in pool] == ["expert", "patient", "greedy"] and pool[0].named_params()["danger"] == 20.0
    assert pool[1].named_params() == {"min_units": 3.0, "late_stock": 6.0, "peng_slack": 2.0}
    with pytest.raises(SimkitError, match="a number cannot follow named parameters"):
        parse_pool("expert:danger=20,5,greedy")
    with pytest.raises(SimkitError, match="named parameters are joined by ':'"):
        parse_pool("patient:min_units=3,late_stock=4,greedy")
    for bad in ("min_units", "min_units=1", "min_units=a:b", "=1:2", "x=1:2,x=2:3"):
        with pytest.raises(SimkitError, match="params"):
            parse_ranges(bad)


# ---- runs


def test_the_same_seed_gives_the_same_trajectory(tmp_path, capsys):
    a = _small_tune(tmp_path / "a")
    assert capsys.readouterr().err == ""  # Execution(quiet=True): no progress, no validation line
    b = _small_tune(tmp_path / "b")
    other = _small_tune(tmp_path / "c", seed=2)
    pd.testing.assert_frame_equal(a.trajectory, b.trajectory)
    assert a.tuned == b.tuned and a.validation.test.mean == b.validation.test.mean
    assert not a.trajectory["f_plus"].equals(other.trajectory["f_plus"])
    assert a.iterations == 5 and len(a.trajectory) == 5
    assert (tmp_path / "a" / "report.md").exists() and (tmp_path / "a" / "tuning_convergence.png").exists()
    frame = a.to_frame()
    assert frame["parameter"].tolist() == ["min_units", "late_stock"]
    assert frame["tuned"].tolist() == list(a.tuned)
    # the trajectory follows the documented recursion, in real units: each iteration starts where
    # the last one ended, x_{k+1} = clip(x_k + (hi - lo) a_k (f+ - f-) / (2 c_k) Δ_k, lo, hi)
    traj = a.trajectory
    for name, (lo, hi), start in zip(("min_units", "late_stock"), ((1, 8), (0, 12)), a.start):
        before = [start] + traj[name].tolist()[:-1]
        assert traj[f"{name}_before"].tolist() == pytest.approx(before)
        step = (hi - lo) * traj["a_k"] * (traj["f_plus"] - traj["f_minus"]) / (2 * traj["c_k"]) * traj[f"{name}_delta"]
        assert traj[name].tolist() == pytest.approx(np.clip(traj[f"{name}_before"] + step, lo, hi).tolist())
    # tuned = mean of the iterates over the last 25 % of the 5 iterations (ceil: 2), last = the last iterate
    assert list(a.tuned) == pytest.approx(traj[["min_units", "late_stock"]].iloc[-2:].mean().tolist())
    assert list(a.last) == pytest.approx(traj[["min_units", "late_stock"]].iloc[-1].tolist())


class _Stop(Exception):
    pass


def test_an_interrupted_run_resumes_to_the_same_result(tmp_path):
    whole = _small_tune(tmp_path / "whole")
    seen = []

    def stop_after_three(record):
        seen.append(record["iteration"])
        if len(seen) == 3:
            raise _Stop

    with pytest.raises(_Stop):
        _small_tune(tmp_path / "part", on_iteration=stop_after_three)
    state = json.loads((tmp_path / "part" / T.STATE_FILE).read_text(encoding="utf-8"))
    assert len(state["iterations"]) == 3 and not (tmp_path / "part" / "report.md").exists()
    resumed_iterations = []
    resumed = _small_tune(tmp_path / "part", on_iteration=lambda r: resumed_iterations.append(r["iteration"]))
    assert resumed_iterations == [3, 4]  # the first three are read back, not played again
    pd.testing.assert_frame_equal(resumed.trajectory, whole.trajectory)
    assert resumed.tuned == whole.tuned and resumed.last == whole.last
    assert resumed.validation.test.mean == whole.validation.test.mean
    # a finished run re-run plays nothing and gives the same result
    again = _small_tune(tmp_path / "part", on_iteration=lambda r: pytest.fail("played again"))
    pd.testing.assert_frame_equal(again.trajectory, whole.trajectory)


# ---- folders written before the run specs (issue 53): what the old code (7a6833d) wrote

# tune.json's rules and identities as the code before TuneSpec wrote them (pasted from the files of
# the two tunes of _old_specs, run at 7a6833d)
OLD_RULES = {"lou_doubles": True, "hu_tolerance": 2, "jiang_in_chariot": False, "pattern_wins": True,
             "steps_count_lou": False, "drawn_card_chow_by": "drawer", "pass_locks_type": True, "must_kong": True,
             "must_chariot_out": True, "tianhu": True, "next_dealer": "winner_else_next", "zhan_in_chariot": False,
             "single_jiang_cap": 0, "drawn_jiang_chow": True, "pass_locks_win": True}
OLD_IDENTITIES = [
    {"kind": "simkit.tune", "policy": "patient", "start": [6.0, 6.0, 1.0],
     "params": [{"name": "min_units", "index": 0, "lo": 1.0, "hi": 8.0},
                {"name": "late_stock", "index": 1, "lo": 0.0, "hi": 12.0}],
     "pool": ["greedy", "random"], "seed": 1, "budget": 360, "iteration_deals": 30, "rules": OLD_RULES,
     "spsa": {"a": 0.11160074919907668, "c": 0.2, "A": 0.2, "alpha": 0.602, "gamma": 0.101}, "tail": 0.25,
     "validate_deals": 10, "batch_size": 10, "policy_sources": []},
    {"kind": "simkit.tune", "policy": "patient", "start": [6.0, 6.0, 1.0],
     "params": [{"name": "min_units", "index": 0, "lo": 1.0, "hi": 8.0}], "pool": ["greedy", "patient:2,6,1"],
     "seed": 2, "budget": 180, "iteration_deals": 30, "rules": OLD_RULES,
     "spsa": {"a": 0.1068993044916333, "c": 0.1, "A": 0.1, "alpha": 0.7, "gamma": 0.101}, "tail": 0.5,
     "validate_deals": 10, "batch_size": 10, "policy_sources": []},
]
# the first tune's first iteration as its state.json held it, and its tuned values
OLD_FIRST_RECORD = {"iteration": 0, "first_deal": 0, "plays": 180, "a_k": 0.1, "c_k": 0.2, "delta": [-1.0, -1.0],
                    "x": [0.7142857142857143, 0.5], "x_plus": [0.5142857142857142, 0.3],
                    "x_minus": [0.9142857142857144, 0.7], "f_plus": 0.3888888888888889, "f_minus": 0.5888888888888889,
                    "gradient": [0.5, 0.5], "x_next": [0.7642857142857143, 0.55]}
OLD_TUNED = (6.263128068942637, 6.748923310384052)


def _old_specs() -> list[TuneSpec]:
    return [TuneSpec("patient:6", {"min_units": (1, 8), "late_stock": (0, 12)}, ["greedy", "random"],
                     PLAYS_PER_DEAL * 30 * 2, seed=1, **SMALL),
            TuneSpec("patient:6", "min_units=1:8", "greedy,patient:2,6,1", PLAYS_PER_DEAL * 30, seed=2,
                     spsa={"c": 0.1, "alpha": 0.7}, tail=0.5, confidence=0.9, **SMALL)]


@pytest.mark.parametrize("which", [0, 1])
def test_the_specs_identity_is_what_old_tune_folders_hold(which):
    """Catches an identity that is the generic serialisation of the spec (the policy's full text,
    unresolved SPSA constants, no kind or policy sources) or drops or renames a key: old folders
    would then be refused as another tuning's."""
    assert _old_specs()[which].identity() == OLD_IDENTITIES[which]


def test_an_old_tune_folder_resumes_to_the_old_result(tmp_path):
    """A folder the old code wrote, stopped after its first iteration (its tune.json and
    state.json, as written through the same checked writer), resumes with the spec: the first
    iteration is read back, not played again, and the tuned values are the old run's."""
    from simkit.storage.files import write_checked_json

    write_checked_json(tmp_path / T.TUNE_FILE, OLD_IDENTITIES[0])
    write_checked_json(tmp_path / T.STATE_FILE, {"identity": OLD_IDENTITIES[0], "iterations": [OLD_FIRST_RECORD]})
    played = []
    result = tune(_old_specs()[0], tmp_path, QUIET, on_iteration=lambda r: played.append(r["iteration"]))
    assert played == [1]
    assert result.tuned == OLD_TUNED
    assert result.trajectory.iloc[0]["f_plus"] == OLD_FIRST_RECORD["f_plus"]


@pytest.mark.parametrize("change, word", [(dict(seed=9), "seed"), (dict(budget=PLAYS_PER_DEAL * 30 * 6), "budget"),
                                          (dict(iteration_deals=40), "iteration_deals")])
def test_another_tune_in_the_folder_is_refused_in_one_line(tmp_path, change, word):
    _small_tune(tmp_path, budget=PLAYS_PER_DEAL * 30 * 2)
    kw = dict(dict(budget=PLAYS_PER_DEAL * 30 * 2), **change)
    with pytest.raises(DatasetError) as info:
        _small_tune(tmp_path, **kw)
    assert "holds another tuning" in str(info.value) and word in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(DatasetError, match="params"):
        tune(TuneSpec("patient:6", {"min_units": (1, 9), "late_stock": (0, 12)}, ["greedy", "random"],
                      PLAYS_PER_DEAL * 30 * 2, seed=1, **SMALL), tmp_path, QUIET)


@pytest.mark.parametrize("policy, params, against, budget, words", [
    ("patient:6", {"nope": (0, 1)}, ["greedy"], 10_000, ["'nope'", "min_units"]),
    ("patient:6", {"p16": (0, 1)}, ["greedy"], 10_000, ["'p16'"]),
    ("patient:6", {"min_units": (8, 1)}, ["greedy"], 10_000, ["params", "'min_units'", "lo < hi"]),
    ("patient:6", {"min_units": (3, 3)}, ["greedy"], 10_000, ["'min_units'", "lo < hi"]),
    ("patient:6", {"min_units": (1, 5)}, ["greedy"], 10_000, ["'min_units'", "6", "outside"]),
    ("patient", {}, ["greedy"], 10_000, ["params"]),
    ("patient:6", {"min_units": (1, 8)}, [], 10_000, ["against", "empty"]),
    ("patient:6", {"min_units": (1, 8)}, ["greedy"], PLAYS_PER_DEAL * 30 - 1, ["budget", "too small"]),
    ("patient:6", {"min_units": (1, 8)}, ["nosuchpolicy"], 10_000, ["nosuchpolicy"]),
])
def test_bad_input_is_one_line_naming_the_parameter_before_anything_is_written(tmp_path, policy, params, against,
                                                                                 budget, words):
    out = tmp_path / "never"
    with pytest.raises(SimkitError) as info:
        tune(TuneSpec(policy, params, against, budget, **SMALL), out, QUIET)
    text = str(info.value)
    assert "\n" not in text and all(w in text for w in words), text
    assert not out.exists()


def test_unknown_parameter_is_a_policy_error(tmp_path):
    with pytest.raises(PolicyError, match="'late'"):
        tune(TuneSpec("patient", {"late": (0, 1)}, "greedy", 10_000, **SMALL), tmp_path / "x", QUIET)


def test_the_budget_is_counted_exactly(tmp_path, monkeypatch):
    """Every deal of iteration k (k·m .. (k+1)·m - 1) is played 6 times (θ+ and θ-, the candidate
    at each seat), no deal is used by two iterations, and the plays add up to the budget used."""
    calls = []
    original = T.play_deals

    def counting(n, seed, ids, params, rules, first_deal=0, **kw):
        calls.append((first_deal, n, params.copy()))
        return original(n, seed, ids, params, rules, first_deal=first_deal, **kw)

    monkeypatch.setattr(T, "play_deals", counting)
    m, iterations = 30, 4
    budget = PLAYS_PER_DEAL * m * iterations + PLAYS_PER_DEAL * m - 1  # one play short of a 5th iteration
    result = _small_tune(tmp_path, budget=budget)
    assert result.iterations == iterations and result.plays == PLAYS_PER_DEAL * m * iterations
    counts = np.zeros(m * iterations + m, dtype=int)
    for first, n, _ in calls:
        counts[first: first + n] += 1
    assert counts[: m * iterations].tolist() == [PLAYS_PER_DEAL] * (m * iterations)
    assert counts[m * iterations:].sum() == 0
    assert sum(n for _, n, _ in calls) == result.plays == result.trajectory["plays"].sum()
    # both pool members get half of every block, at every seat
    assert sorted({(first % m, n) for first, n, _ in calls}) == [(0, 15), (15, 15)]


def test_a_user_policy_by_import_path_is_tuned_toward_its_known_optimum(tmp_path, policy_module):
    """patient_copy is patient (its p0 is min_units): against greedy, fewer units win more (as
    measured for patient: min_units 1 > 2 > ... > 7), so from p0 = 6 SPSA must go down."""
    result = tune(TuneSpec(f"{policy_module}:patient_copy:6,6,1", {"p0": (1, 8)}, "greedy", PLAYS_PER_DEAL * 100 * 40,
                           seed=4, iteration_deals=100, validate_deals=300, batch_size=300), tmp_path, QUIET)
    assert result.tuned[0] < 3.0, result.tuned
    assert result.validation.bootstrap.lo > 0  # tuned beats the start on new deals
    assert result.tuned_policy.name == f"{policy_module}:patient_copy"


def test_a_python_tier_policy_is_tuned_in_the_python_loop(tmp_path, policy_module):
    picky = importlib.import_module(policy_module).Picky
    picky.made.clear()
    result = tune(TuneSpec(f"{policy_module}:Picky:0", {"p0": (0, 10)}, "greedy", PLAYS_PER_DEAL * 6, seed=1,
                           iteration_deals=6, validate_deals=4, batch_size=4), tmp_path, QUIET)
    assert result.iterations == 1 and result.plays == 36
    # the Python loop made the class itself at θ+ and θ- (real units: 10 · clip(0 ± c_0 Δ_0, 0, 1),
    # c_0 = 0.2, so 2 and 0), then the validation at tuned and at the start 0
    delta = perturbation(1, 0, 1)[0]
    row = result.trajectory.iloc[0]
    assert (row["p0_plus"], row["p0_minus"]) == pytest.approx((2.0, 0.0) if delta > 0 else (0.0, 2.0))
    assert 2.0 in picky.made and set(picky.made) <= {2.0, 0.0, result.tuned[0]}
    # one SPSA step from 0: tuned = clip(10 · a_0 (f+ - f-) / (2 c_0) Δ_0, 0, 10), a_0 = 0.1 by default
    expected = float(np.clip(10 * 0.1 * (row["f_plus"] - row["f_minus"]) / (2 * 0.2) * delta, 0, 10))
    assert result.tuned[0] == pytest.approx(expected) and result.tuned == result.last


# ---- command line


def test_the_command_line_tunes_and_reports(tmp_path, capsys):
    out = tmp_path / "cli"
    code = main(["tune", "patient:6", "--params", "min_units=1:8", "--against", "greedy,patient:2,6,1",
                 "--budget", str(PLAYS_PER_DEAL * 30 * 3), "--iteration-deals", "30", "--validate-deals", "10",
                 "--seed", "2", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0
    # the iterations' progress (simkit.progress: off a terminal a line at most every 10 s, and the last)
    assert "tune 1/3 iterations" in captured.err and "tune 3/3 iterations" in captured.err, captured.err
    assert "min_units " in captured.err and "strength " in captured.err
    assert "tuned patient: min_units = " in captured.out and "validation (new deals" in captured.out
    identity = json.loads((out / T.TUNE_FILE).read_text(encoding="utf-8"))
    assert identity["pool"] == ["greedy", "patient:2,6,1"] and identity["params"][0]["name"] == "min_units"
    assert "![tuning convergence]" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("argv, words", [
    (["--params", "min_units=8:1", "--budget", "10000"], ["--params", "'min_units'"]),
    (["--params", "min_units=1:8", "--budget", "10"], ["--budget 10", "too small"]),
    (["--params", "min_units=1:8", "--budget", "10000", "--iteration-deals", "0"], ["--iteration-deals"]),
    (["--params", "min_units=1:8", "--budget", "10000", "--spsa", "c=2"], ["--spsa c"]),
    (["--params", "min_units=1:8", "--budget", "10000", "--spsa", "x=2"], ["--spsa", "x=2"]),
])
def test_command_line_errors_are_one_line_with_flags(tmp_path, capsys, argv, words):
    code = main(["tune", "patient:6", "--against", "greedy", "--out", str(tmp_path / "x"), *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and all(w in err for w in words), err


# ---- done when


@pytest.mark.slow
def test_a_mistuned_patient_is_tuned_back_to_at_least_its_default_strength(tmp_path, capsys):
    """patient with min_units 6 (wins too rarely), tuned on min_units in 1..8 against greedy and
    patient: the tuned policy beats the mistuned one on new deals (interval above 0) and is not
    significantly worse than the default patient (interval reaches 0 or above).  About 15 s of
    play on one core here, once the kernels are compiled."""
    start = time.perf_counter()
    out = tmp_path / "tune"
    code = main(["tune", "patient:6", "--params", "min_units=1:8", "--against", "greedy,patient", "--budget", "120000",
                 "--seed", "11", "--validate-deals", "3000", "--out", str(out), "--quiet"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    tuned = read_comparison(out / "validation")["policy_a"]  # the tuned policy the validation played
    against_start = load_comparison(out / "validation")
    assert against_start.bootstrap.lo > 0, against_start.text()
    against_default = compare(CompareSpec(tuned, "patient", deals=3000, seed=validation_seed(11) + 1, batch_size=3000),
                              out / "vs-default", Execution(quiet=True))
    assert against_default.bootstrap.hi >= 0, against_default.text()
    print(f"{tuned}; vs start {against_start.test.mean:+.4f} [{against_start.bootstrap.lo:+.4f}, "
          f"{against_start.bootstrap.hi:+.4f}]; vs default {against_default.test.mean:+.4f} "
          f"[{against_default.bootstrap.lo:+.4f}, {against_default.bootstrap.hi:+.4f}]; "
          f"{time.perf_counter() - start:.1f} s", file=sys.__stderr__)


def test_a_whole_number_parameter_is_tuned_in_whole_numbers(tmp_path, monkeypatch):
    """mc's ``race`` takes whole numbers only: SPSA's probes and the tuned value land on whole
    numbers inside the range given (a probe at race = 3.6 was refused by the policy's range check,
    stopping the run after it had started its folder)."""
    played = []
    real = T._spec_at

    def spy(*args):
        spec = real(*args)
        played.append(spec.params[param_index("mc", "race")])
        return spec

    monkeypatch.setattr(T, "_spec_at", spy)
    result = tune(TuneSpec("mc:rollouts=2", {"race": (1, 4)}, ["greedy", "random"], PLAYS_PER_DEAL * 30 * 3, seed=3,
                           **SMALL), tmp_path / "t", QUIET)
    assert played and all(v == int(v) and 1 <= v <= 4 for v in played)
    assert result.tuned[0] == int(result.tuned[0])

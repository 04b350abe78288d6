"""Dataset summaries, duplicate comparisons, experiment files and plots."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simkit.studies.compare import compare, load_comparison, seating_differences
from simkit.analysis.summary import (
    dealer_advantage,
    distributions,
    pattern_frequencies,
    tail_probabilities,
    win_kinds,
    win_rates,
    win_rates_by_policy,
)
from simkit.cli import main
from simkit.errors import DegenerateDataWarning, SimkitError
from simkit.evaluator import pattern_names
from simkit.experiment import ExperimentError, parse_experiment, run_experiment
from simkit.runner import simulate
from simkit.runner.duplicate import SEATINGS, seating_dir
from simkit.storage import load_dataset
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec

QUIET = Execution(quiet=True)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return simulate(SimulateSpec(3000, "greedy,patient,greedy", 11, batch_size=1000), tmp_path_factory.mktemp("ds"),
                    QUIET)


def test_dealer_advantage_matches_a_direct_t_test(dataset):
    df = load_dataset(dataset)
    adv = dealer_advantage(df).set_index("measure")
    winner = df["winner"].to_numpy()
    x = (winner == 0).astype(float) - ((winner == 1) | (winner == 2)).astype(float) / 2
    test = stats.ttest_1samp(x, 0.0)
    ci = test.confidence_interval(0.95)
    assert adv.loc["win rate", "difference"] == pytest.approx(x.mean())
    assert adv.loc["win rate", "p_value"] == pytest.approx(test.pvalue)
    assert (adv.loc["win rate", "difference_lo"], adv.loc["win rate", "difference_hi"]) == pytest.approx((ci.low, ci.high))
    pay = df[["payoff_0", "payoff_1", "payoff_2"]].to_numpy(dtype=float)
    y = pay[:, 0] - (pay[:, 1] + pay[:, 2]) / 2
    assert adv.loc["mean payoff", "difference"] == pytest.approx(y.mean())
    assert adv.loc["mean payoff", "t"] == pytest.approx(stats.ttest_1samp(y, 0.0).statistic)
    # the dealer column is honoured: relabelling seats moves the advantage with it
    moved = df.copy()
    moved["dealer"] = 1
    assert dealer_advantage(moved).set_index("measure").loc["win rate", "dealer"] == pytest.approx((winner == 1).mean())


def test_win_rates_by_policy_pools_seats(dataset):
    df = load_dataset(dataset)
    table = win_rates_by_policy(df).set_index("policy")
    greedy = table.loc["greedy"]
    assert greedy["seat_deals"] == 2 * len(df)
    # seats rotated (the default for different policies): greedy's seats are read from policy_k
    at = np.stack([df[f"policy_{k}"].astype(str).to_numpy() == "greedy" for k in range(3)], axis=1)
    assert (at.sum(axis=1) == 2).all() and not at[:, 0].all()
    assert greedy["wins"] == int(at[np.arange(len(df)), df["winner"].clip(lower=0)][df["winner"] >= 0].sum())
    pay = df[["payoff_0", "payoff_1", "payoff_2"]].to_numpy(dtype=float)
    assert greedy["mean_payoff"] == pytest.approx((np.where(at, pay, 0).sum(axis=1) / 2).mean())
    assert greedy["dealt_share"] == pytest.approx(1 / 3, abs=0.001) and not table["confounded"].any()
    seats = win_rates(df)
    assert seats["wins"].sum() + int((df["winner"] < 0).sum()) == len(df)


def test_distributions_tails_patterns_and_endings_hand_worked():
    # five deals worked by hand: four wins (hu 20, 48, 100, 60; units 1, 5, 12, 2; lou 0, 1, 2, 0)
    # and one 穿牌; two_lou holds in the third win only
    names = pattern_names((1 << 18) - 1)
    df = pd.DataFrame({
        "winner": [0, 1, -1, 2, 0], "hu": [20, 48, -1, 100, 60], "units": [1, 5, 0, 12, 2],
        "lou": [0, 1, 0, 2, 0], "steps": [1, 2, 0, 5, 3], "turns": [10, 20, 30, 40, 50],
        "draws": [0, 1, 2, 3, 4], "claims": [5, 5, 5, 5, 5],
        "win_kind": ["discard", "draw", "none", "discard", "tianhu"],
        **{f"pattern_{p}": [False, False, False, p == "two_lou", False] for p in names},
    })
    dist = distributions(df).set_index("column")
    assert dist.loc["hu", "n"] == 4 and dist.loc["turns", "n"] == 5
    assert dist.loc["hu", "mean"] == 57.0 and dist.loc["hu", "q50"] == 54.0 and dist.loc["hu", "max"] == 100
    assert dist.loc["turns", "q50"] == 30.0 and dist.loc["turns", "q95"] == 48.0  # 40 + 0.8 * 10
    tails = tail_probabilities(df).set_index("event")
    assert tails.loc["小甲 (units >= 5)", "hits"] == 2 and tails.loc["大甲 (units >= 10)", "p"] == 0.25
    assert tails.loc["楼 >= 1", "hits"] == 2 and tails.loc["hu >= 48", "hits"] == 3
    assert tails.loc["hu >= 100", "hits"] == 1
    patterns = pattern_frequencies(df).set_index("pattern")
    assert patterns.loc["two_lou", "hits"] == 1 and patterns.loc["two_lou", "wins"] == 4
    assert patterns["hits"].sum() == 1
    # Wilson 95 % intervals of 1 / 4 (two_lou) and 0 / 4 (every other pattern), by statsmodels;
    # worked by hand: [0.0456, 0.6994] and [0, 0.4899]
    from statsmodels.stats.proportion import proportion_confint

    one, none = proportion_confint(1, 4, alpha=0.05, method="wilson"), proportion_confint(0, 4, alpha=0.05, method="wilson")
    assert one == pytest.approx((0.0456, 0.6994), abs=1e-4) and none == pytest.approx((0.0, 0.4899), abs=1e-4)
    for name, row in patterns.iterrows():
        assert (row["p"], row["lo"], row["hi"]) == pytest.approx((0.25, *one) if name == "two_lou" else (0.0, *none)), name
    kinds = win_kinds(df).set_index("win_kind")
    assert kinds["hits"].tolist() == [2, 1, 0, 1, 1]  # discard, draw, table, tianhu, none


def test_distributions_on_a_dataset(dataset):
    df = load_dataset(dataset)
    dist = distributions(df).set_index("column")
    assert dist.loc["hu", "n"] == int((df["winner"] >= 0).sum()) and dist.loc["turns", "n"] == len(df)
    kinds = win_kinds(df).set_index("win_kind")
    assert kinds["hits"].sum() == len(df)


def test_duplicate_seatings_share_the_deals_and_identical_policies_tie(tmp_path):
    out = tmp_path / "same"
    # every per-deal difference is 0: no bootstrap interval (NaN, with a warning), not a fake [0, 0]
    with pytest.warns(DegenerateDataWarning, match="constant"):
        result = compare(CompareSpec("greedy", "greedy", deals=300, seed=4, batch_size=100), out, Execution(quiet=True))
    assert np.isnan(result.bootstrap.lo) and np.isnan(result.bootstrap.hi) and result.bootstrap.estimate == 0.0
    # each game's A seats and B seats differ, but over the six seatings of a deal they cancel exactly
    assert np.abs(result.per_seating).sum() > 0
    assert np.allclose(result.per_seating.mean(axis=1), 0.0, atol=1e-12)
    dealt = [load_dataset(seating_dir(out, s), columns=["dealt_jiang_0", "dealt_idle_2"]) for s in SEATINGS]
    assert all(d.equals(dealt[0]) for d in dealt)


def test_compare_is_resumable_refuses_another_comparison_and_differences_are_right(tmp_path):
    out = tmp_path / "cmp"
    first = compare(CompareSpec("greedy", "random", deals=400, seed=9, batch_size=100), out, Execution(quiet=True))
    again = load_comparison(out)
    assert np.array_equal(first.per_seating, again.per_seating)
    assert first.test.mean > 0 and first.bootstrap.lo > 0 and first.bootstrap.method == "BCa bootstrap"
    # by hand for one seating: AAB -> (payoff_0 + payoff_1) / 2 - payoff_2
    df = load_dataset(seating_dir(out, "AAB"), columns=["payoff_0", "payoff_1", "payoff_2"])
    manual = (df["payoff_0"] + df["payoff_1"]) / 2 - df["payoff_2"]
    assert np.allclose(seating_differences(out)[:, SEATINGS.index("AAB")], manual)
    with pytest.raises(SimkitError, match="holds another comparison"):
        compare(CompareSpec("greedy", "patient", deals=400, seed=9, batch_size=100), out, Execution(quiet=True))


def test_sequential_comparison_stops_and_does_not_depend_on_batching(tmp_path):
    a = compare(CompareSpec("greedy", "random", deals=3000, seed=2, batch_size=100, sprt=(0.5, 0.05, 0.05)),
                tmp_path / "a", Execution(quiet=True))
    b = compare(CompareSpec("greedy", "random", deals=3000, seed=2, batch_size=250, sprt=(0.5, 0.05, 0.05)),
                tmp_path / "b", Execution(quiet=True))
    assert a.sprt.decision == "accept_h1" == b.sprt.decision
    assert a.sprt.n == b.sprt.n == a.deals < 3000
    assert np.array_equal(a.per_seating, b.per_seating)
    assert a.deals_computed < 3000  # stopped early: later batches never simulated


EXPERIMENT = """
name = "tiny"
title = "Tiny experiment"
description = "Used by the tests."
seed = 3
batch_size = 200

[[simulation]]
label = "greedy"
policies = "greedy,greedy,greedy"
deals = 400

[[simulation]]
label = "no lou doubles"
policies = "greedy,greedy,greedy"
deals = 400
rules = ["lou_doubles=off"]
details = false

[[comparison]]
a = "greedy"
b = "patient"
deals = 200
"""


def test_experiment_runs_resumes_and_writes_report(tmp_path):
    file = tmp_path / "tiny.toml"
    file.write_text(EXPERIMENT, encoding="utf-8")
    report = run_experiment(file, tmp_path / "reports", tmp_path / "data", execution=Execution(quiet=True))
    text = report.read_text(encoding="utf-8")
    assert "# Tiny experiment" in text and "lou_doubles=off" in text and "Pairwise duplicate comparisons" in text
    assert "Changes of each simulation against the one in column *against*" in text
    assert "| no lou doubles | greedy |" in text  # compared with the first simulation by default
    for stem in ("variants_exhausted", "variants_hu", "comparison_forest", "greedy_hu_distribution",
                 "greedy_payoff_by_policy", "greedy_win_rate_by_seat", "comparison_convergence_0"):
        for ext in ("png", "svg"):
            assert (report.parent / f"{stem}.{ext}").stat().st_size > 0, stem
        assert (report.parent / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
        assert f"({stem}.png)" in text
    batch = tmp_path / "data" / "sim-greedy" / "batch-000000.parquet"
    stamp = batch.stat().st_mtime_ns
    run_experiment(file, tmp_path / "reports", tmp_path / "data", execution=Execution(quiet=True))
    assert batch.stat().st_mtime_ns == stamp  # resumed: nothing recomputed


@pytest.mark.parametrize("text, message", [
    ('name = "x"\n[[simulation]]\npolicies = "greedy,greedy,greedy"\n', "missing required key 'deals'"),
    ('name = "x"\nseeds = 1\n[[simulation]]\npolicies = "greedy,greedy,greedy"\ndeals = 5\n', "unknown key 'seeds'"),
    ('name = "x"\n[[simulation]]\npolicies = "greedy,nobody,greedy"\ndeals = 5\n', "nobody"),
    ('name = "x"\n[[simulation]]\npolicies = "greedy,greedy,greedy"\ndeals = "5"\n', "'deals' must be int"),
    ('name = "x"\n[[simulation]]\npolicies = "greedy,greedy,greedy"\ndeals = 5\nrules = {lou_doubles = 3}\n', "lou_doubles"),
    ('name = "x"\n[[comparison]]\na = "greedy"\nb = "random"\ndeals = 9\nsprt = [1, 2]\n', "sprt"),
    ('name = "x"\n', "nothing to run"),
    ('name = "a b"\n[[simulation]]\npolicies = "greedy,greedy,greedy"\ndeals = 5\n', "plain folder name"),
    ('name = \n', "not valid TOML"),
    ('name = "x"\n[[simulation]]\npolicies = "greedy,greedy,greedy"\ndeals = 5\nbaseline = "later"\n', "baseline"),
])
def test_malformed_experiment_files_are_refused_in_one_line(text, message):
    with pytest.raises(ExperimentError, match=message) as info:
        parse_experiment(text)
    assert "\n" not in str(info.value)


def test_cli_compare_and_experiment_errors(tmp_path, capsys):
    assert main(["compare", "greedy", "random", "--sprt", "0.1,0.05", "--out", str(tmp_path / "c")]) == 2
    assert "--sprt takes delta,alpha,beta" in capsys.readouterr().err
    assert main(["compare", "greedy", "nobody", "--deals", "10", "--out", str(tmp_path / "d")]) == 2
    assert "nobody" in capsys.readouterr().err
    assert main(["experiment", "run", str(tmp_path / "missing.toml")]) == 2
    err = capsys.readouterr().err
    assert "cannot read" in err and err.count("\n") == 1


def test_cli_compare_writes_a_report(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["compare", "greedy", "random", "--deals", "200", "--batch-size", "100", "--seed", "3",
                 "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "greedy - random" in printed and "bootstrap" in printed
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "comparison_forest.png" in report and (out / "comparison_forest.svg").exists()


def test_experiment_probabilities_section_and_cli_prob(tmp_path, capsys):
    file = tmp_path / "p.toml"
    file.write_text('name = "p"\nseed = 3\nbatch_size = 1000\n[[probabilities]]\ndeals = 4000\nseats = [0]\n'
                    'events = ["nao", "dealer_wins", "jiang_at_least_k:8"]\n', encoding="utf-8")
    report = run_experiment(file, tmp_path / "reports", tmp_path / "data", execution=Execution(quiet=True))
    text = report.read_text(encoding="utf-8")
    assert "| nao | 0 |" in text and "jiang_at_least_k(k=8)" in text and "probability_convergence_0.png" in text
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "b"\n[[probabilities]]\ndeals = 10\nevents = ["bogus"]\n', encoding="utf-8")
    with pytest.raises(ExperimentError, match="unknown event 'bogus'"):
        run_experiment(bad, tmp_path / "reports", tmp_path / "data", execution=Execution(quiet=True))
    out = tmp_path / "t.csv"
    assert main(["prob", "nao", "jiang_at_least_k:k=8", "--deals", "3000", "--seat", "1", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert table["event"].tolist() == ["nao", "jiang_at_least_k(k=8)"] and (table["seat"] == 1).all()
    capsys.readouterr()
    assert main(["prob", "nao:k=x"]) == 2
    assert "must be an integer" in capsys.readouterr().err

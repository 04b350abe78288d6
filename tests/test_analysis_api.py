"""The analysis API as the scientific Python stack expects it (issue 12, part 5).

* summaries return DataFrames or frozen result objects with ``.to_frame()``;
* plot functions draw on ``ax=`` and return the Axes; nothing selects a matplotlib backend;
* ``confidence`` is honoured everywhere: intervals against scipy / statsmodels at 0.9 and 0.99,
  and no "95%" text in what is built at another level;
* library errors name Python parameters, not CLI flags (the CLI writes its flags);
* the bootstrap of constant data is NaN with a warning (also in tests/test_stats.py).
"""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simkit.analysis import results as R
from simkit.analysis import stats as S
from simkit.analysis import summary
from simkit.studies.compare import compare, write_comparison_report
from simkit.studies.dealt import deal_table
from simkit.studies.equity import EquityResult, SeatOutcome, hu_plot, quantile_interval, welch_test
from simkit.analysis.plots import (
    convergence_plot,
    dealt_distribution_plot,
    forest_plot,
    hu_distribution_plot,
    payoff_by_policy_plot,
    save_figure,
    sprt_llr_plot,
    win_rate_by_seat_plot,
)
from simkit.studies.probability import ProbabilityTable, estimate_probability, probability_table
from simkit.analysis.report import dealt_hands_text, write_report
from simkit.cli import main
from simkit.errors import DegenerateDataWarning, SimkitError
from simkit.experiment import run_experiment
from simkit.experiment.run import _paired_change_lines, _variant_row
from simkit.experiment.spec import SimulationEntry
from simkit.rules import RuleSet
from simkit.runner import simulate
from simkit.runner.equity import run_equity
from simkit.storage import load_dataset
from simkit.storage.paths import check_out_dir
from simkit.specs.simulate import SimulateSpec
from simkit.specs.equity import EquitySpec
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec

QUIET = Execution(quiet=True)

ROOT = pathlib.Path(__file__).resolve().parent.parent
LEVEL_TEXT = re.compile(r"\b95 ?%")  # "95%" or "95 %": the default level written out


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    return simulate(SimulateSpec(900, "greedy,patient,random", 3, batch_size=300), tmp_path_factory.mktemp("api"),
                    QUIET)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    return simulate(SimulateSpec(300, "greedy,greedy,greedy", 3, batch_size=150, session_length=3),
                    tmp_path_factory.mktemp("api_sessions"), QUIET)


@pytest.fixture(scope="module")
def frame(dataset):
    return load_dataset(dataset)


# ----------------------------------------------------------------------------- result objects


def _results_of_every_public_summary(frame: pd.DataFrame) -> dict[str, object]:
    differences = np.random.default_rng(1).normal(0.2, 1.0, 300)
    return {
        "win_rates": summary.win_rates(frame), "win_rates_by_policy": summary.win_rates_by_policy(frame),
        "dealer_advantage": summary.dealer_advantage(frame),
        "dealer_advantage_by_policy": summary.dealer_advantage_by_policy(frame),
        "seat_balance": summary.seat_balance(frame), "distributions": summary.distributions(frame),
        "tail_probabilities": summary.tail_probabilities(frame), "pattern_frequencies": summary.pattern_frequencies(frame),
        "win_kinds": summary.win_kinds(frame), "exhausted_rate": summary.exhausted_rate(frame),
        "hu_distribution": summary.hu_distribution(frame),
        "session_seat_results": summary.session_seat_results(frame),
        "first_winner_dealing": summary.first_winner_dealing(frame),
        "session_dealer_advantage": summary.session_dealer_advantage(frame),
        "wilson_interval": S.wilson_interval(30, 100), "mean_interval": S.mean_interval(differences),
        "paired_bootstrap_interval": S.paired_bootstrap_interval(differences, resamples=500),
        "two_proportion_test": S.two_proportion_test(30, 100, 20, 100), "equal_rates_test": S.equal_rates_test([5, 6, 7]),
        "paired_mean_test": S.paired_mean_test(differences),
        "duplicate_variance_reduction": S.duplicate_variance_reduction(np.stack([differences, -differences], axis=1)),
        "wald_boundaries": S.wald_boundaries(0.05, 0.05), "convergence_curve": S.convergence_curve(differences),
        "proportion_convergence": S.proportion_convergence(differences > 0),
        "quantile_interval": quantile_interval(differences, 0.5), "welch_test": welch_test(differences, -differences),
    }


def test_every_summary_is_a_frame_or_a_frozen_result_with_to_frame(frame):
    for name, result in _results_of_every_public_summary(frame).items():
        assert not isinstance(result, (tuple, dict)), name
        if isinstance(result, pd.DataFrame):
            continue
        assert isinstance(result, R.Result) and dataclasses.is_dataclass(result), name
        table = result.to_frame()
        assert isinstance(table, pd.DataFrame) and len(table) == 1, name
        fields = [f.name for f in dataclasses.fields(result) if f.metadata.get("frame", True)]
        assert list(table.columns) == fields, name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(result, fields[0], 0)


def test_interval_fields_and_frames_concatenate():
    intervals = [S.wilson_interval(30, 100, 0.9), S.mean_interval([1.0, 2.0, 4.0], 0.99)]
    table = pd.concat([i.to_frame() for i in intervals], ignore_index=True)
    assert table[["method", "confidence", "n"]].values.tolist() == [["Wilson", 0.9, 100], ["t", 0.99, 3]]
    assert table["estimate"].tolist() == [0.3, pytest.approx(7 / 3)]


def test_comparison_probability_and_equity_results_are_frozen_with_frames(tmp_path):
    result = compare(CompareSpec("greedy", "random", deals=120, seed=2, batch_size=60), tmp_path / "c",
                     Execution(quiet=True))
    assert isinstance(result.test, R.MeanTest) and isinstance(result.bootstrap, R.Interval)
    assert isinstance(result.variance, R.VarianceReduction)
    row = result.to_frame()
    assert row[["label", "n", "confidence"]].values.tolist() == [["greedy - random", 120, 0.95]]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.deals_computed = 0
    estimate = estimate_probability("nao", 500, 1)
    assert estimate.to_frame()["event"].tolist() == ["nao"]
    batches = probability_table(500, 1, events=["nao"], seats=[0], batch_size=100, with_batches=True)
    assert isinstance(batches, ProbabilityTable) and batches.per_batch["nao"].shape == (5, 3)
    assert batches.to_frame().equals(probability_table(500, 1, events=["nao"], seats=[0], batch_size=100))
    assert {f.name for f in dataclasses.fields(EquityResult)} >= {"confidence"}
    assert issubclass(SeatOutcome, R.Result)


# ----------------------------------------------------------------------------- plots


def _plot_calls(frame: pd.DataFrame) -> dict[str, object]:
    curve = S.convergence_curve(np.random.default_rng(2).normal(size=200))
    rows = pd.DataFrame({"label": ["a - b"], "estimate": [0.1], "lo": [0.0], "hi": [0.2], "n": [10]})
    dealt = deal_table(30, seed=1)
    return {
        "hu_distribution_plot": lambda ax: hu_distribution_plot(frame.loc[frame.winner >= 0, "hu"].to_numpy(), ax=ax),
        "win_rate_by_seat_plot": lambda ax: win_rate_by_seat_plot(summary.win_rates(frame), ax=ax),
        "payoff_by_policy_plot": lambda ax: payoff_by_policy_plot(summary.win_rates_by_policy(frame), ax=ax),
        "convergence_plot": lambda ax: convergence_plot(curve, "mean", "running mean", ax=ax),
        "forest_plot": lambda ax: forest_plot(rows, "difference", "forest", ax=ax),
        "sprt_llr_plot": lambda ax: sprt_llr_plot(np.linspace(0.0, 3.0, 50), -2.9, 2.9, "llr", ax=ax, min_n=10,
                                                  decision="accept_h1"),
        "dealt_distribution_plot": lambda ax: dealt_distribution_plot(dealt, "n_jiang", "jiang", "dealt", ax=ax),
    }


def test_plot_functions_draw_on_the_given_axes_and_return_it(frame, tmp_path):
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    for name, draw in _plot_calls(frame).items():
        figure = Figure()
        ax = figure.add_subplot()
        assert draw(ax) is ax, name
        assert ax.has_data() and ax.get_title(), name
        own = draw(None)  # a figure of its own, made without pyplot
        assert isinstance(own, Axes) and isinstance(own.figure, Figure) and own.figure is not figure, name
        path = save_figure(own.figure, tmp_path, name)
        assert path == tmp_path / f"{name}.png" and path.read_bytes()[:4] == b"\x89PNG", name
        assert (tmp_path / f"{name}.svg").stat().st_size > 0, name


def test_equity_hu_plot_takes_ax():
    from matplotlib.figure import Figure

    from simkit.studies.equity import equity

    hand = "YJ*3 YS YX YC*3 RJ*3 RS RX RC*3 WJ*3 WS WX WC*3 GJ*3 GS GX YZ*2"
    result = equity(EquitySpec(hand, seat=0, policies="greedy,greedy,greedy", deals=20, seed=1, baseline=False,
                               confidence=0.975))
    ax = Figure().add_subplot()
    assert hu_plot(result, ax=ax) is ax and hu_plot(result).figure is not ax.figure
    assert "intervals at 97.5%" in result.text()  # was f"{0.975:.0%}": "98%"


_NO_BACKEND_SCRIPT = r"""
import json, sys
import matplotlib

def refuse(*args, **kwargs):
    raise AssertionError(f"matplotlib.use{args} called")

matplotlib.use = refuse
before = dict.__getitem__(matplotlib.rcParams, "backend")
import simkit, simkit.analysis, simkit.analysis.plots, simkit.analysis.report, simkit.studies.compare
import simkit.studies.equity, simkit.experiment, simkit.cli
from simkit.analysis.plots import forest_plot, save_figure
import pandas as pd
rows = pd.DataFrame({"label": ["a"], "estimate": [0.1], "lo": [0.0], "hi": [0.2], "n": [10]})
save_figure(forest_plot(rows, "x", "t").figure, sys.argv[1], "forest")
after = dict.__getitem__(matplotlib.rcParams, "backend")
print(json.dumps({"before": str(before), "after": str(after), "pyplot": "matplotlib.pyplot" in sys.modules}))
"""


@pytest.mark.parametrize("backend", ["template", None])
def test_importing_and_plotting_select_no_backend(tmp_path, backend):
    """``matplotlib.use`` is never called (it raises here) and the backend the user set, or the
    unresolved automatic one, is left as it was: simkit imports no pyplot."""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    if backend is not None:
        env["MPLBACKEND"] = backend
    done = subprocess.run([sys.executable, "-c", _NO_BACKEND_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["before"] == seen["after"] and not seen["pyplot"], seen
    if backend is not None:
        assert seen["after"] == backend
    assert (tmp_path / "forest.png").read_bytes()[:4] == b"\x89PNG"


def test_no_module_of_simkit_calls_matplotlib_use_or_imports_pyplot():
    for path in (ROOT / "simkit").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "use":
                assert not (isinstance(node.func.value, ast.Name) and node.func.value.id == "matplotlib"), path
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
                assert not any(n and "pyplot" in n for n in names), path


# ----------------------------------------------------------------------------- confidence


@pytest.mark.parametrize("confidence", [0.9, 0.99])
def test_summary_intervals_match_scipy_and_statsmodels_at_other_levels(frame, confidence):
    from statsmodels.stats.proportion import proportion_confint

    rates = summary.win_rates(frame, confidence).set_index("seat")
    default = summary.win_rates(frame).set_index("seat")
    for seat in range(3):
        wins, n = int((frame["winner"] == seat).sum()), len(frame)
        lo, hi = proportion_confint(wins, n, alpha=1 - confidence, method="wilson")
        assert (rates.loc[seat, "win_rate_lo"], rates.loc[seat, "win_rate_hi"]) == pytest.approx((lo, hi), rel=1e-9)
        pay = frame[f"payoff_{seat}"].to_numpy(dtype=float)
        t_lo, t_hi = stats.t.interval(confidence, n - 1, loc=pay.mean(), scale=stats.sem(pay))
        assert (rates.loc[seat, "mean_payoff_lo"], rates.loc[seat, "mean_payoff_hi"]) == pytest.approx((t_lo, t_hi))
        wider = confidence > 0.95
        width = rates.loc[seat, "win_rate_hi"] - rates.loc[seat, "win_rate_lo"]
        assert (width > default.loc[seat, "win_rate_hi"] - default.loc[seat, "win_rate_lo"]) == wider
    rate = summary.exhausted_rate(frame, confidence)
    lo, hi = proportion_confint(int((frame["winner"] < 0).sum()), len(frame), alpha=1 - confidence, method="wilson")
    assert (rate.lo, rate.hi, rate.confidence) == (pytest.approx(lo), pytest.approx(hi), confidence)
    hu = summary.hu_distribution(frame, confidence)
    won = frame[frame["winner"] >= 0]
    lo, hi = proportion_confint(int((won["units"] >= 5).sum()), len(won), alpha=1 - confidence, method="wilson")
    assert (hu.p_xiaojia_lo, hu.p_xiaojia_hi) == (pytest.approx(lo), pytest.approx(hi))
    test = S.paired_mean_test(frame["payoff_0"].to_numpy(dtype=float), confidence)
    reference = stats.ttest_1samp(frame["payoff_0"].to_numpy(dtype=float), 0.0).confidence_interval(confidence)
    assert (test.lo, test.hi) == (pytest.approx(reference.low), pytest.approx(reference.high))
    median = quantile_interval(np.arange(1, 101), 0.5, confidence)
    ranks = stats.binom.ppf([(1 - confidence) / 2, (1 + confidence) / 2], 100, 0.5)
    assert (median.lo, median.hi) == (ranks[0], ranks[1] + 1)


@pytest.mark.parametrize("confidence", [0.9, 0.99])
def test_experiment_hu_intervals_use_the_normal_quantile_of_the_level(frame, confidence):
    """The experiment table's mean-hu interval and the Welch change in mean hu had 1.96 built in."""
    entry = SimulationEntry(label="x", policies="greedy,patient,random", deals=len(frame), seed=3, rules=RuleSet(),
                            details=False)
    row = _variant_row(entry, frame, confidence)
    hu = frame.loc[frame["winner"] >= 0, "hu"].to_numpy(dtype=float)
    z = stats.norm.ppf((1 + confidence) / 2)
    se = hu.std(ddof=1) / math.sqrt(hu.size)
    assert (row["hu_lo"], row["hu_hi"]) == (pytest.approx(hu.mean() - z * se), pytest.approx(hu.mean() + z * se))
    assert (row["exhausted_lo"], row["exhausted_hi"]) == pytest.approx(
        (S.wilson_interval(int((frame["winner"] < 0).sum()), len(frame), confidence).lo,
         S.wilson_interval(int((frame["winner"] < 0).sum()), len(frame), confidence).hi))
    a, b = hu[: hu.size // 2], hu[hu.size // 2:]
    paired = [{"entry": entry, "exhausted": np.zeros(3), "dealer_x": np.zeros(3), "xiaojia": np.zeros(3), "hu": b},
              {"entry": dataclasses.replace(entry, label="y", seed=4), "exhausted": np.zeros(3),
               "dealer_x": np.zeros(3), "xiaojia": np.zeros(3), "hu": a}]
    lines = _paired_change_lines(paired, confidence)
    level = f"{round(100 * confidence)}%"
    assert f"({level})" in lines[0] and not LEVEL_TEXT.search("\n".join(lines))
    d, half = a.mean() - b.mean(), z * math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert f"{d:+.2f} [{d - half:+.2f}, {d + half:+.2f}]" in "\n".join(lines)


def test_changes_are_measured_against_each_simulations_baseline():
    """Each simulation is compared with its ``baseline`` (default the first simulation, "" none),
    paired per deal: a bug comparing everything with the first simulation, or dropping the
    P(小甲 win) column, fails here."""
    base = SimulationEntry(label="mixed", policies="greedy,patient,random", deals=4, seed=3, rules=RuleSet(),
                           details=False)
    weak = dataclasses.replace(base, label="greedy x3", baseline="")
    strong = dataclasses.replace(base, label="expert x3", baseline="greedy x3")
    other = dataclasses.replace(base, label="patient x3")  # default: against the first

    def arrays(entry, xiaojia):
        return {"entry": entry, "exhausted": np.zeros(4), "dealer_x": np.zeros(4),
                "xiaojia": np.array(xiaojia, dtype=float), "hu": np.array([10.0, 20.0, 30.0]),
                "hu_x": np.array([10.0, 20.0, 30.0, 0.0]), "won": np.array([1.0, 1.0, 1.0, 0.0])}

    paired = [arrays(base, [0, 0, 0, 0]), arrays(weak, [0, 1, 0, 0]), arrays(strong, [1, 1, 0, 1]),
              arrays(other, [0, 0, 1, 0])]
    text = "\n".join(_paired_change_lines(paired))
    rows = [line for line in text.splitlines() if line.startswith("| ") and "simulation" not in line]
    assert [row.split(" | ")[:2] for row in rows] == [["| expert x3", "greedy x3"], ["| patient x3", "mixed"]]
    d = np.array([1.0, 0.0, 0.0, 1.0])  # expert x3 minus greedy x3, per deal
    half = stats.t.ppf(0.975, 3) * d.std(ddof=1) / 2.0
    assert f"+0.5000 [{0.5 - half:+.4f}, {0.5 + half:+.4f}]" in rows[0]
    assert "+0.2500" in rows[1]
    assert _paired_change_lines(paired[:1]) == []


@pytest.mark.parametrize("confidence, level", [(0.9, "90%"), (0.99, "99%")])
def test_reports_state_their_level_and_never_95_at_another(dataset, sessions, tmp_path, confidence, level):
    text = write_report(dataset, tmp_path / "r", confidence=confidence).read_text(encoding="utf-8")
    assert f"Intervals are {level}:" in text and f"win rate [{level} Wilson]" in text
    assert f"mean payoff 牌 [{level} t]" in text and f"probability [{level} Wilson]" in text
    assert not LEVEL_TEXT.search(text), LEVEL_TEXT.search(text)
    text = write_report(sessions, tmp_path / "s", confidence=confidence).read_text(encoding="utf-8")
    assert f"share dealt [{level}] (vs 1/3)" in text and f"mean session payoff 牌 [{level} t]" in text
    assert not LEVEL_TEXT.search(text)
    # the default level keeps the text of the committed reports
    text = write_report(dataset, tmp_path / "d").read_text(encoding="utf-8")
    assert "Intervals are 95%:" in text and "win rate [95% Wilson]" in text
    dealt = dealt_hands_text(deal_table(200, seed=1), 1, 100, RuleSet(), confidence)
    assert f"({level} Wilson intervals)" in dealt and f"| {level} interval |" in dealt
    # the only 95% left is the 95th percentile of idle cards, not an interval
    assert [line for line in dealt.splitlines() if LEVEL_TEXT.search(line)] == [
        "| seat | hands | mean idle cards | idle 5% / 50% / 95% | mean 将 | mean pairs | mean 子 |"]


def test_comparison_at_another_level_matches_scipy_and_says_so(tmp_path):
    result = compare(CompareSpec("greedy", "random", deals=200, seed=5, batch_size=100, confidence=0.9), tmp_path / "c",
                     Execution(quiet=True))
    d = result.per_seating.mean(axis=1)
    reference = stats.ttest_1samp(d, 0.0).confidence_interval(0.9)
    assert (result.test.lo, result.test.hi) == (pytest.approx(reference.low), pytest.approx(reference.high))
    default = compare(CompareSpec("greedy", "random", deals=200, seed=5, batch_size=100), tmp_path / "c",
                      Execution(quiet=True))
    assert result.bootstrap.width < default.bootstrap.width and result.test.hi < default.test.hi
    assert result.bootstrap.confidence == 0.9 and "90% paired bootstrap (BCa)" in result.text()
    text = write_comparison_report(result, tmp_path / "c").read_text(encoding="utf-8")
    assert "| 90% bootstrap (BCa) | 90% t |" in text and "90% paired bootstrap" in text
    assert not LEVEL_TEXT.search(text + result.text())


def test_experiment_report_at_another_level_has_no_95(tmp_path):
    file = tmp_path / "e.toml"
    file.write_text('name = "e"\nseed = 3\nbatch_size = 200\n'
                    '[[simulation]]\nlabel = "a"\npolicies = "greedy,greedy,greedy"\ndeals = 200\n'
                    '[[simulation]]\nlabel = "b"\npolicies = "greedy,greedy,greedy"\ndeals = 200\n'
                    'rules = ["lou_doubles=off"]\ndetails = false\n'
                    '[[comparison]]\na = "greedy"\nb = "patient"\ndeals = 100\n'
                    '[[probabilities]]\ndeals = 1000\nseats = [0]\nevents = ["nao", "jiang_at_least_k:8"]\n',
                    encoding="utf-8")
    text = run_experiment(file, tmp_path / "reports", tmp_path / "data", execution=Execution(quiet=True), confidence=0.9).read_text(
        encoding="utf-8")
    for phrase in ("Intervals 90%:", "column *against* (90%)", "90% bootstrap (BCa)", "Monte Carlo [90% Wilson]",
                   "win rate [90% Wilson]"):
        assert phrase in text, phrase
    assert not LEVEL_TEXT.search(text), LEVEL_TEXT.search(text)


def test_plot_labels_and_terminal_text_follow_the_level(frame):
    ax = win_rate_by_seat_plot(summary.win_rates(frame, 0.9), confidence=0.9)
    assert "90% Wilson" in ax.get_ylabel()
    ax = convergence_plot(S.proportion_convergence(frame["winner"].to_numpy() == 0, 0.99), "rate", "t", confidence=0.99)
    assert [t.get_text() for t in ax.get_legend().get_texts()][0] == "99% interval"
    ax = payoff_by_policy_plot(summary.win_rates_by_policy(frame, 0.9), confidence=0.9)
    assert "90% interval" in ax.get_xlabel()
    assert R.format_level(0.975) == "97.5%"  # EquityResult.text wrote f"{0.975:.0%}" = "98%"


def test_confidence_is_checked():
    for bad in (0.0, 1.0, 1.5, float("nan"), True):
        with pytest.raises(ValueError, match="confidence"):
            S.wilson_interval(1, 2, bad)
    with pytest.raises(ValueError, match="confidence"):
        summary.win_rates(pd.DataFrame({"winner": [0], **{f"payoff_{k}": [0] for k in range(3)},
                                        **{f"policy_{k}": ["g"] for k in range(3)}}), 1.0)


def test_cli_confidence_options(dataset, tmp_path, capsys):
    assert main(["report", str(dataset), "--out", str(tmp_path / "r"), "--confidence", "0.9"]) == 0
    assert "Intervals are 90%" in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert main(["report", str(dataset), "--out", str(tmp_path / "x"), "--confidence", "95"]) == 2
    assert "--confidence must lie strictly between 0 and 1, got 95.0" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("kwargs, message, flag_message", [
    ({"deals": 0}, "deals must be a whole number >= 1, got 0", "--deals must be an integer >= 1, got 0"),
    ({"seed": -1}, "seed must be a whole number >= 0, got -1", "--seed must be an integer >= 0, got -1"),
    ({"batch_size": 0}, "batch_size must be a whole number >= 1, got 0", "--batch-size must be an integer >= 1, got 0"),
    ({"session_length": 0}, "session_length must be a whole number in 1..32767, got 0",
     "--session-length must be in 1..32767, got 0"),
    ({"workers": 0}, "workers must be a whole number >= 1, got 0", "--workers must be an integer >= 1, got 0"),
    ({"backend": "spark"}, "backend must be local or dask, got 'spark'", None),
    ({"scheduler": "tcp://x:1"}, "scheduler needs backend='dask', got backend='local'",
     "--scheduler needs --backend dask, got --backend local"),
])
def test_library_errors_name_parameters_and_the_cli_names_flags(tmp_path, capsys, kwargs, message, flag_message):
    args = {"deals": 10, "policies": "greedy,greedy,greedy", "seed": 1, **kwargs}
    how = {key: args.pop(key) for key in ("workers", "backend", "scheduler") if key in args}
    with pytest.raises(SimkitError) as info:
        simulate(SimulateSpec(**args), tmp_path / "d", Execution(quiet=True, **how))
    assert str(info.value) == message and not re.search(r"(?<![\w-])--[a-z]", str(info.value))
    assert info.value.parameters[0] == next(iter(kwargs))
    if flag_message is not None:
        flags = {"deals": "--deals", "seed": "--seed", "batch_size": "--batch-size", "session_length": "--session-length",
                 "workers": "--workers", "scheduler": "--scheduler"}
        argv = ["simulate", "--deals", "10", "--policies", "greedy,greedy,greedy", "--seed", "1",
                "--out", str(tmp_path / "c"), "--quiet"]
        for key, value in kwargs.items():
            argv += [flags[key], str(value)]
        assert main(argv) == 2
        assert capsys.readouterr().err.strip() == f"simkit: error: {flag_message}"


def test_other_library_errors_name_parameters(tmp_path):
    with pytest.raises(SimkitError, match=r"^out is empty") as info:
        check_out_dir("")
    assert info.value.parameters == ("out",)
    with pytest.raises(SimkitError, match=r"^workers must be a whole number >= 1, got 0$") as info:
        run_equity(EquitySpec("YJ*3 YS YX YC*3 RJ*3 RS RX RC*3 WJ*3 WS WX WC*3 GJ*3 GS GX YZ*2", 0,
                              "greedy,greedy,greedy", 10, 1), tmp_path / "e", Execution(workers=0))
    assert info.value.parameters == ("workers",)
    simulate(SimulateSpec(10, "greedy,greedy,greedy", 1), tmp_path / "s", QUIET)
    with pytest.raises(SimkitError, match=r"its seed is 1, this run's is 2 \(use another folder for out\)$"):
        simulate(SimulateSpec(10, "greedy,greedy,greedy", 2), tmp_path / "s", QUIET)


def test_no_library_raise_quotes_a_cli_flag():
    """Every string of every ``raise`` outside the command line (simkit/cli.py, simkit/cliargs.py)
    is free of ``--flag``."""
    flag = re.compile(r"(?<![\w-])--[a-z]")
    found = []
    for path in (ROOT / "simkit").rglob("*.py"):
        if path.name in ("cli.py", "cliargs.py", "__main__.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise):
                for part in ast.walk(node):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str) and flag.search(part.value):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {part.value!r}")
    assert not found, found


def test_bootstrap_of_constant_data_is_nan_with_a_warning_in_a_comparison_table():
    with pytest.warns(DegenerateDataWarning):
        interval = S.paired_bootstrap_interval(np.zeros(50), 0.9, resamples=200)
    frame = interval.to_frame()
    assert frame[["lo", "hi"]].isna().all(axis=None) and frame["confidence"].iloc[0] == 0.9
    assert not interval.contains(0.0)

"""Hand equity (``simkit equity``, :mod:`simkit.studies.equity`, :mod:`simkit.runner.equity`)
and dealt-hand probabilities given a hand (``simkit prob --given``), issue 12 §3.

Sanity: a 天胡 hand wins every deal for the dealer; equity averaged over random dealt hands is
the unconditional rate of ``simkit simulate``; results do not depend on threads or batch size; a
resumed run rewrites the same bytes; bad input is a one-line error.  Conditional probabilities:
exact values against scipy's hypergeometric and against enumeration of physical cards, Monte
Carlo against exact values, and the same hands as the equity deals."""

from __future__ import annotations

import dataclasses
import math
import pathlib
import re
from fractions import Fraction
from itertools import combinations

import numba
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from simkit.analysis import exact as P
from simkit.studies.conditional import conditional_table
from simkit.studies.dealt import dealt_hands
from simkit.studies.equity import EquityResult, equity, quantile_interval, welch_test
from simkit.analysis.summary import win_rates
from simkit.cards import N_TYPES, format_counts, parse_counts
from simkit.cli import main
from simkit.deck import deal_deck, fixed_hand_cards, fixed_hand_deck, fixed_hand_decks, seat_block
from simkit.errors import SimkitError
from simkit.evaluator import evaluate
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rng import root_key
from simkit.rules import RuleSet
from simkit.runner import simulate
from simkit.runner.equity import equity_decks, play_equity
from simkit.runner.play import R_DEALT, R_ERROR, play_deals, play_decks
from simkit.storage import load_dataset
from simkit.storage.dataset import batch_path
from simkit.specs.simulate import SimulateSpec
from simkit.specs.equity import EquitySpec
from simkit.specs.base import Execution

QUIET = Execution(quiet=True)

# 31 cards that win on the deal (天胡): 4 x (圆 将士相, pair 将, 子 车) ... (``simkit score``: wins, U = 1)
TIANHU = "YJ*3 YS YX YC*3 RJ*3 RS RX RC*3 WJ*3 WS WX WC*3 GJ*3 GS GX YZ*2"
# the README's example: the dealer's hand of deal 21 of seed 7
EXAMPLE = "YJ*3 YS*2 YX YC YM YP RC*2 RM RP*2 RZ WJ WS*3 WX WC WM WP GJ GS GX GC GM*2 GZ*2"
GREEDY = "greedy,greedy,greedy"
MIXED = "greedy,patient,random"


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("simkit: error: "), err
    return err


# ---------------------------------------------------------------------------- the deck


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_the_fixed_hand_is_the_seats_dealt_hand(seat):
    hand = dealt_hands(4, 1)[0, seat]
    decks = equity_decks(hand, seat, seed=9, n_deals=50)
    start, size = seat_block(seat)
    hand_ids, rest_ids = fixed_hand_cards(hand)
    for deck in decks:
        assert sorted(deck.tolist()) == list(range(112))
        assert deck[start : start + size].tolist() == hand_ids.tolist()
    assert len({tuple(d) for d in decks}) == 50
    # deal N's deck is a function of (seed, N, hand, seat) only: not of where a batch starts
    assert np.array_equal(equity_decks(hand, seat, seed=9, n_deals=10, first_deal=40), decks[40:])
    rng = np.zeros(4, dtype=np.uint64)
    one = np.zeros(112, dtype=np.int64)
    fixed_hand_deck(root_key(9), 7, seat, hand_ids, rest_ids, rng, one)
    assert np.array_equal(one, decks[7])
    # the engine deals it to that seat (seat 0 dealing)
    rows = play_equity(EquitySpec(hand, seat, MIXED, seed=9), 30)
    assert (rows[:, R_DEALT + 28 * seat : R_DEALT + 28 * (seat + 1)] == hand).all()
    assert (rows[:, R_ERROR] == 0).all()


def test_the_rest_is_shuffled_uniformly():
    """Each unseen card is equally likely in each of the other 81 positions (chi-square)."""
    hand = dealt_hands(5, 1)[0, 0]
    hand_ids, rest_ids = fixed_hand_cards(hand)
    decks = np.zeros((8100, 112), dtype=np.int64)
    fixed_hand_decks(root_key(3), 0, 0, hand_ids, rest_ids, decks)
    card = int(rest_ids[0])
    where = np.argmax(decks == card, axis=1)
    assert where.min() >= 31
    assert stats.chisquare(np.bincount(where - 31, minlength=81)).pvalue > 1e-4


def test_prepared_decks_play_as_the_ordinary_deals():
    """play_decks on the ordinary decks gives play_deals' rows: one play loop for both."""
    ids, params, _ = policy_arrays(parse_policies(MIXED))
    rules = RuleSet().to_array()
    decks = np.zeros((300, 112), dtype=np.int64)
    rng = np.zeros(4, dtype=np.uint64)
    for i in range(300):
        deal_deck(root_key(6), 50 + i, rng, decks[i])
    assert np.array_equal(play_decks(decks, 6, ids, params, rules, first_deal=50),
                          play_deals(300, 6, ids, params, rules, first_deal=50))


# ---------------------------------------------------------------------------- sanity


def test_a_tianhu_hand_wins_every_deal_for_the_dealer(tmp_path):
    scored = evaluate(TIANHU)
    assert int(parse_counts(TIANHU).sum()) == 31 and scored.complete and scored.wins
    result = equity(EquitySpec(TIANHU, seat=0, policies=GREEDY, deals=300, seed=3, batch_size=100), tmp_path)
    assert result.win_rate == 1.0 and result.wins == 300 and result.win_rate_lo > 0.98
    assert result.mean_payoff == 2 * scored.units
    frame = load_dataset(tmp_path / "equity", columns=["winner", "win_kind", "dealer"])
    assert (frame["winner"] == 0).all() and set(frame["win_kind"].astype(str)) == {"tianhu"}
    assert (frame["dealer"] == 0).all()
    row = result.to_frame().set_index("measure").loc["win rate"]
    assert row["difference"] > 0.5 and row["p_value"] < 1e-10


def test_equity_over_random_hands_is_the_unconditional_rate(tmp_path):
    """The mean of per-hand equities over dealt hands estimates the unconditional win rate:
    the difference (Welch: 300 hand means of 20 deals each, independent seeds, against 20,000
    ordinary deals of simulate) has an interval that holds 0."""
    hands = dealt_hands(2024, 300)[:, 0]
    per_hand = np.array([equity(EquitySpec(h, 0, GREEDY, deals=20, seed=1000 + i, baseline=False)).win_rate
                         for i, h in enumerate(hands)])
    data = simulate(SimulateSpec(20_000, GREEDY, 11), tmp_path / "base", QUIET)
    rate = win_rates(data).set_index("seat").loc[0]
    unconditional = (load_dataset(data, columns=["winner"])["winner"] == 0).to_numpy(dtype=float)
    test = welch_test(per_hand, unconditional)
    assert test.lo < 0 < test.hi, (per_hand.mean(), rate["win_rate"], test)
    assert abs(per_hand.mean() - rate["win_rate"]) < 0.05


def test_the_baseline_is_simulate_with_the_same_seed(tmp_path):
    result = equity(EquitySpec(EXAMPLE, seat=0, policies=MIXED, deals=400, seed=7, batch_size=150), tmp_path)
    frame = result.to_frame().set_index("measure")
    base = win_rates(tmp_path / "baseline").set_index("seat").loc[0]
    # seat 0 plays greedy in every baseline deal, as in the equity deals (no rotated seating)
    assert set(load_dataset(tmp_path / "baseline", columns=["policy_0"])["policy_0"].astype(str)) == {"greedy"}
    assert frame.loc["win rate", "baseline"] == pytest.approx(base["win_rate"])
    assert frame.loc["mean payoff", "baseline"] == pytest.approx(base["mean_payoff"])
    other = simulate(SimulateSpec(400, MIXED, 7, batch_size=150, seating="fixed"), tmp_path / "again", QUIET)
    for b in range(3):
        assert batch_path(other, b).read_bytes() == batch_path(tmp_path / "baseline", b).read_bytes()
    # the summaries read the equity dataset (simulate's row format)
    rates = win_rates(tmp_path / "equity").set_index("seat").loc[0]
    assert rates["win_rate"] == pytest.approx(result.win_rate)
    assert rates["policy"] == "greedy"
    # every figure of the four main rows, recounted from the two datasets' rows with statsmodels'
    # intervals: Wilson for rates, t for means, Newcombe for a difference of rates, Welch for means
    from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    cols = ["winner", "payoff_0", "hu", "units"]
    eq, bl = (load_dataset(tmp_path / name, columns=cols) for name in ("equity", "baseline"))
    wins = [(d["winner"] == 0).to_numpy() for d in (eq, bl)]
    big = [w & (d["units"].fillna(0) >= 5).to_numpy() for w, d in zip(wins, (eq, bl))]
    pay = [d["payoff_0"].to_numpy(dtype=float) for d in (eq, bl)]
    hu = [d["hu"][w].to_numpy(dtype=float) for w, d in zip(wins, (eq, bl))]
    for measure, hits in (("win rate", wins), ("P(小甲)", big)):
        row = frame.loc[measure]
        (k1, n1), (k2, n2) = ((int(h.sum()), h.size) for h in hits)
        assert (row["estimate"], row["baseline"], row["difference"]) == pytest.approx((k1 / n1, k2 / n2, k1 / n1 - k2 / n2))
        assert (row["lo"], row["hi"]) == pytest.approx(proportion_confint(k1, n1, method="wilson"), abs=1e-9)
        assert (row["baseline_lo"], row["baseline_hi"]) == pytest.approx(proportion_confint(k2, n2, method="wilson"), abs=1e-9)
        newcombe = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
        assert (row["difference_lo"], row["difference_hi"]) == pytest.approx(newcombe, abs=1e-9), measure
    for measure, values in (("mean payoff", pay), ("hu mean (wins)", hu)):
        row = frame.loc[measure]
        assert (row["estimate"], row["baseline"]) == pytest.approx((values[0].mean(), values[1].mean()))
        assert (row["lo"], row["hi"]) == pytest.approx(DescrStatsW(values[0]).tconfint_mean())
        assert (row["baseline_lo"], row["baseline_hi"]) == pytest.approx(DescrStatsW(values[1]).tconfint_mean())
        welch = CompareMeans(DescrStatsW(values[0]), DescrStatsW(values[1])).tconfint_diff(usevar="unequal")
        assert row["difference"] == pytest.approx(values[0].mean() - values[1].mean())
        assert (row["difference_lo"], row["difference_hi"]) == pytest.approx(welch), measure


def test_result_object(tmp_path):
    result = equity(EquitySpec(EXAMPLE, seat=0, policies=GREEDY, deals=200, seed=1))
    assert isinstance(result, EquityResult) and result.hand == format_counts(parse_counts(EXAMPLE))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.deals = 3
    frame = result.to_frame()
    assert list(frame.columns) == ["measure", "n", "estimate", "lo", "hi", "baseline", "baseline_lo", "baseline_hi",
                                   "difference", "difference_lo", "difference_hi", "p_value", "method"]
    assert frame["measure"].tolist()[:4] == ["win rate", "mean payoff", "P(小甲)", "hu mean (wins)"]
    assert result.p_xiaojia <= result.win_rate and result.equity.deals == 200
    assert "win rate" in result.text()
    assert equity(EquitySpec(EXAMPLE, seat=0, policies=GREEDY, deals=200, seed=1, baseline=False)).baseline is None


# ---------------------------------------------------------------------------- determinism, resume


def _dataset_bytes(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("batch-*.parquet"))}


def test_same_results_for_any_thread_count_or_batch_size(tmp_path):
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = equity(EquitySpec(EXAMPLE, seat=0, policies=MIXED, deals=600, seed=4, batch_size=250), tmp_path / "t1")
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = equity(EquitySpec(EXAMPLE, seat=0, policies=MIXED, deals=600, seed=4, batch_size=250), tmp_path / "t2")
    finally:
        numba.set_num_threads(threads)
    assert _dataset_bytes(tmp_path / "t1" / "equity") == _dataset_bytes(tmp_path / "t2" / "equity")
    other = equity(EquitySpec(EXAMPLE, seat=0, policies=MIXED, deals=600, seed=4, batch_size=100), tmp_path / "b")
    memory = equity(EquitySpec(EXAMPLE, seat=0, policies=MIXED, deals=600, seed=4, batch_size=600))
    pd.testing.assert_frame_equal(one.to_frame(), two.to_frame())
    pd.testing.assert_frame_equal(one.to_frame(), other.to_frame())
    pd.testing.assert_frame_equal(one.to_frame(), memory.to_frame())
    a = load_dataset(tmp_path / "t1" / "equity").drop(columns="batch")
    b = load_dataset(tmp_path / "b" / "equity").drop(columns="batch")
    pd.testing.assert_frame_equal(a, b)


def test_resume_after_deleting_or_damaging_a_batch_gives_the_same_bytes(tmp_path):
    args = dict(seat=2, policies=MIXED, deals=500, seed=8, batch_size=200, baseline=False)
    hand = dealt_hands(3, 1)[0, 2]
    first = equity(EquitySpec(hand, **args), tmp_path)
    before = _dataset_bytes(tmp_path / "equity")
    assert len(before) == 3
    batch_path(tmp_path / "equity", 1).unlink()
    damaged = batch_path(tmp_path / "equity", 2)
    damaged.write_bytes(damaged.read_bytes()[:-40])
    again = equity(EquitySpec(hand, **args), tmp_path)
    assert _dataset_bytes(tmp_path / "equity") == before
    pd.testing.assert_frame_equal(first.to_frame(), again.to_frame())
    # another hand (or seat) is another run: refused, nothing changed
    other = dealt_hands(3, 2)[1, 2]
    with pytest.raises(SimkitError, match="holds another equity run"):
        equity(EquitySpec(other, **args), tmp_path)
    assert _dataset_bytes(tmp_path / "equity") == before


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("hand, seat, message", [
    ("YJ*3 YS", 0, "the dealer's (seat 0) dealt hand has 31 cards, got 4"),
    (TIANHU, 1, "seat 1's dealt hand has 30 cards, got 31"),
    (TIANHU.replace("YZ*2", "YZ XQ"), 0, "unknown card 'XQ'"),
    (TIANHU.replace("YZ*2", "YJ*2"), 0, "5 copies of YJ"),
    ("", 0, "no hand given"),
    (TIANHU, 3, "seat must be 0, 1 or 2"),
])
def test_bad_input_is_a_one_line_error(capsys, hand, seat, message):
    with pytest.raises(SimkitError, match=message.replace("(", r"\(").replace(")", r"\)")):
        equity(EquitySpec(hand, seat=seat, policies=GREEDY, deals=10, seed=0))
    err = _one_line_error(capsys, ["equity", hand, "--seat", str(seat), "--policies", GREEDY, "--deals", "10"])
    assert message in err


def test_bad_run_arguments_are_one_line_errors(capsys, tmp_path):
    for argv, message in (
        (["--policies", "greedy,nosuch,greedy", "--deals", "10"], "nosuch"),
        (["--policies", GREEDY, "--deals", "0"], "deals"),
        (["--policies", GREEDY, "--deals", "10", "--seed", "-1"], "seed"),
        (["--policies", GREEDY, "--deals", "10", "--confidence", "1.5"], "confidence"),
    ):
        assert message in _one_line_error(capsys, ["equity", EXAMPLE, *argv])
    (tmp_path / "file").write_text("x")
    _one_line_error(capsys, ["equity", EXAMPLE, "--policies", GREEDY, "--deals", "10", "--out", str(tmp_path / "file")])


def test_cli_equity_writes_its_outputs(capsys, tmp_path):
    out = tmp_path / "eq"
    assert main(["equity", EXAMPLE, "--policies", GREEDY, "--deals", "300", "--seed", "7", "--out", str(out),
                 "--batch-size", "100"]) == 0
    text = capsys.readouterr().out
    assert "hand equity of seat 0 (dealer)" in text and "win rate" in text and "P(小甲)" in text
    table = pd.read_csv(out / "equity.csv")
    assert table["measure"].iloc[0] == "win rate" and not math.isnan(table["difference"].iloc[0])
    assert (out / "hu_distribution.png").is_file() and (out / "hu_distribution.svg").is_file()
    assert len(load_dataset(out / "equity")) == 300 and len(load_dataset(out / "baseline")) == 300


def test_the_readme_example_hand_runs(capsys):
    """The README's equity example is what it says it is: the dealer's dealt hand of deal 2289
    of seed 7 (a good hand: it wins most of its deals), and the command runs."""
    readme = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    hand = re.search(r'HAND="([^"]+)"', readme).group(1)
    assert "deal 2289 of seed 7" in readme
    np.testing.assert_array_equal(parse_counts(hand), dealt_hands(7, 1, first_deal=2289)[0, 0])
    assert main(["equity", hand, "--policies", GREEDY, "--deals", "200", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    win_rate = float(re.search(r"^ *win rate +200 +([0-9.]+) ", out, re.M).group(1))
    assert win_rate > 0.6, out


# ---------------------------------------------------------------------------- the statistics


def test_welch_and_quantile_intervals():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.3, 1.0, 200), rng.normal(0.0, 2.0, 150)
    ours = welch_test(a, b)
    ref = stats.ttest_ind(a, b, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert ours.p_value == pytest.approx(ref.pvalue) and ours.lo == pytest.approx(ci.low)
    assert ours.hi == pytest.approx(ci.high) and ours.dof == pytest.approx(ref.df)
    # order-statistic interval of the median of a continuous sample covers it >= 95 %
    covered = 0
    for _ in range(400):
        covered += quantile_interval(rng.exponential(1.0, 60), 0.5).contains(math.log(2))
    assert covered / 400 > 0.92


# ---------------------------------------------------------------------------- prob --given


def _hypergeometric_jiang(given_counts, seat, k) -> Fraction:
    """P(seat holds >= k 将 | my hand): the 将 among the unseen cards, dealt without replacement."""
    unseen = 112 - int(given_counts.sum())
    jiang = 16 - int(sum(given_counts[t] for t in range(0, N_TYPES, 7)))
    n = 31 if seat == 0 else 30
    total = math.comb(unseen, n)
    return Fraction(sum(math.comb(jiang, j) * math.comb(unseen - jiang, n - j) for j in range(k, min(jiang, n) + 1)),
                    total)


@pytest.mark.parametrize("given_seat, seat", [(0, 1), (0, 2), (1, 0), (2, 1)])
def test_jiang_given_my_hand_is_hypergeometric(given_seat, seat):
    counts = dealt_hands(17, 1)[0, given_seat]
    for k in (0, 1, 3, 5, 8, 12):
        exact = P.conditional_probability("jiang_at_least_k", counts, given_seat, seat=seat, k=k)
        assert exact == _hypergeometric_jiang(counts, seat, k)
        unseen = 112 - int(counts.sum())
        jiang = 16 - int(counts[0::7].sum())
        assert float(exact) == pytest.approx(stats.hypergeom.sf(k - 1, unseen, jiang, 31 if seat == 0 else 30),
                                             abs=1e-12)


def test_given_counts_match_enumeration_of_physical_cards():
    """The DP with per-type copies left against enumerating every hand of a small leftover deck."""
    from test_probability import py_indicator

    available = [0] * N_TYPES
    for t, a in ((0, 2), (7, 1), (14, 3), (21, 2), (3, 2), (10, 1), (6, 2), (13, 2), (1, 2), (2, 2)):
        available[t] = a
    cards = [t for t in range(N_TYPES) for _ in range(available[t])]
    for size in (4, 6):
        hands = [np.bincount(combo, minlength=N_TYPES) for combo in
                 (np.array([cards[i] for i in idx]) for idx in combinations(range(len(cards)), size))]
        for name, params in (("jiang_at_least_k", {"k": 2}), ("pairs_at_least_k", {"k": 2}), ("zi_at_least_k", {"k": 1}),
                             ("fat_chariot_jiang", {}), ("long_chariot_jiang", {}), ("plain_chariot", {}),
                             ("any_chariot", {}), ("nao", {})):
            spec, value = P.EVENTS[name], params.get("k", P.EVENTS[name].fixed)
            brute = sum(bool(py_indicator(name, h, **params)) for h in hands)
            assert P.count_available(spec.code, value, size, tuple(available)) == brute, (name, size)


def test_given_monte_carlo_agrees_with_exact_and_with_the_equity_deals(tmp_path):
    counts = dealt_hands(23, 1)[0, 0]
    events = [("jiang_at_least_k", 6), ("pairs_at_least_k", 9), "nao", "fat_chariot", "plain_chariot",
              "any_chariot", ("zi_at_least_k", 2), "complete"]
    table = conditional_table(counts, 0, deals=20_000, seed=5, events=events)
    exact_rows = table[table["exact"].notna()]
    assert len(exact_rows) == 14 and len(table) == 16
    assert (exact_rows["z"].abs() < 4).all(), exact_rows
    inside = ((exact_rows["lo"] <= exact_rows["exact"]) & (exact_rows["exact"] <= exact_rows["hi"])).mean()
    assert inside >= 0.75
    # the hands counted are those of the equity deals of the same seed
    equity(EquitySpec(counts, seat=0, policies=GREEDY, deals=3000, seed=5, baseline=False), tmp_path)
    dealt = load_dataset(tmp_path / "equity", columns=["dealt_jiang_1", "dealt_jiang_2"])
    small = conditional_table(counts, 0, deals=3000, seed=5, events=[("jiang_at_least_k", 6)])
    assert small["hits"].tolist() == [int((dealt["dealt_jiang_1"] >= 6).sum()), int((dealt["dealt_jiang_2"] >= 6).sum())]


def test_averaging_the_conditional_over_my_hand_gives_the_unconditional():
    """Σ over my hands of P(my hand) P(event | my hand) = P(event): checked by averaging the
    exact conditional over 300 dealt hands against the exact unconditional value."""
    hands = dealt_hands(31, 300)[:, 0]
    values = np.array([float(P.conditional_probability("jiang_at_least_k", h, 0, seat=1, k=6)) for h in hands])
    exact = float(P.exact_probability("jiang_at_least_k", seat=1, k=6))
    mean, lo, hi = values.mean(), *stats.t.interval(0.999, len(values) - 1, values.mean(), stats.sem(values))
    assert lo <= exact <= hi, (mean, exact)


def test_cli_prob_given(capsys, tmp_path):
    out = tmp_path / "given.csv"
    mine = format_counts(dealt_hands(2, 1)[0, 1])
    assert main(["prob", "jiang_at_least_k:6", "dealer_wins", "--given", mine, "--seat", "1", "--deals", "2000",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "given seat 1's dealt hand" in text
    table = pd.read_csv(out)
    assert table[["event", "seat"]].values.tolist() == [["jiang_at_least_k(k=6)", 0], ["jiang_at_least_k(k=6)", 2],
                                                        ["dealer_dealt_win", 0]]
    assert table["exact"].notna().tolist() == [True, True, False]
    for argv, message in (
        (["--given", "YJ*3"], "31 cards"),
        (["--given", EXAMPLE, "--seat", "0", "--seat", "1"], "--seat"),
        (["--given", EXAMPLE, "--hands", str(tmp_path / "h")], "--hands"),
        (["nosuch", "--given", EXAMPLE], "unknown event"),
    ):
        assert message in _one_line_error(capsys, ["prob", *argv])
    with pytest.raises(ValueError, match="holds the given hand"):
        P.conditional_probability("nao", EXAMPLE, 0, seat=0)
    with pytest.raises(ValueError, match="no closed form"):
        P.conditional_probability("complete", EXAMPLE, 0, seat=1)

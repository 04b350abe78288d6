"""The dealt-hand simulation, its Parquet output and report."""

import json

import numba
import numpy as np
import pandas as pd

from simkit.cli import main
from simkit.handstats import deal_table
from simkit.report import prob_at_least_k_jiang, wilson_interval
from simkit.rules import RuleSet


def test_deal_table_is_a_pure_function_of_seed_and_size():
    a = deal_table(3000, seed=5, batch_size=700)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        b = deal_table(3000, seed=5, batch_size=700)
    finally:
        numba.set_num_threads(before)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(deal_table(3000, seed=6, batch_size=700))
    assert a.groupby("seat")["n_cards"].first().tolist() == [31, 30, 30]


def test_features_match_the_evaluator_on_the_same_deals():
    from simkit.deck import DEALER_CARDS, PLAYER_CARDS, _shuffle_kernel
    from simkit.evaluator import evaluate
    from simkit.cards import ids_to_counts
    from simkit.rng import seed_state

    table = deal_table(50, seed=9, batch_size=50)
    state = seed_state(np.random.SeedSequence(9).spawn(1)[0])
    deck = np.arange(112, dtype=np.int64)
    for d in range(50):
        _shuffle_kernel(state, deck)
        hands = [deck[:DEALER_CARDS], deck[DEALER_CARDS:DEALER_CARDS + PLAYER_CARDS],
                 deck[DEALER_CARDS + PLAYER_CARDS:DEALER_CARDS + 2 * PLAYER_CARDS]]
        for seat, ids in enumerate(hands):
            counts = ids_to_counts(ids)
            row = table[(table.deal_id == d) & (table.seat == seat)].iloc[0]
            res = evaluate(counts, explain_best=False)
            assert row.min_idle == res.min_idle and bool(row.complete) == res.complete
            assert row.n_jiang == counts[[0, 7, 14, 21]].sum() and row.n_nao == (counts == 4).sum()


def test_monte_carlo_agrees_with_exact_jiang_probability():
    table = deal_table(20_000, seed=3)
    dealer = table[table.seat == 0]
    k = int((dealer.n_jiang >= 8).sum())
    lo, hi = wilson_interval(k, len(dealer), confidence=0.999)
    assert lo <= prob_at_least_k_jiang(8) <= hi


def test_wilson_interval_textbook_value():
    # Agresti & Coull (1998) style check: 81 successes of 263 -> about [0.2553, 0.3662]
    lo, hi = wilson_interval(81, 263)
    assert abs(lo - 0.2553) < 5e-4 and abs(hi - 0.3662) < 5e-4


def test_cli_main_job_writes_parquet_and_report(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["deals", "--deals", "2000", "--seed", "4", "--out", str(out)]) == 0
    frame = pd.read_parquet(out / "deals.parquet")
    assert len(frame) == 6000 and frame["complete"].dtype == bool
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 4 and manifest["deals"] == 2000 and manifest["rules"] == RuleSet().to_dict()
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Wilson" in report and "min_idle.png" in report
    for name in ("min_idle.png", "min_idle.svg", "n_jiang.png", "n_jiang.svg"):
        assert (out / name).stat().st_size > 1000
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]

"""Play-out values for the luck adjustment (simkit.runner.playout_value, ``--luck playouts:K``).

What each test would catch:

* corrections average to exactly zero over the card drawn: values that depend on the stock's
  true order or on the card drawn (a shuffle that starts from the deck instead of the sorted
  stock, a stream keyed by the card), weights that are not ``c_t / n``;
* the kernel against a slow twin written from the definition (the same shuffles, each
  candidate's play-out by the engine and the policies called one decision at a time from
  Python): a missing 1 / K, another copy of a type on top, the other cards out of place, a
  play-out that shares the table's random streams or observation instead of copies;
* replays with play-outs give the play kernels' rows and luck keyed by deal: a play-out that
  leaks into the real deal (its state, streams, observation), a stream keyed by chunk;
* the names ``playouts[:K]`` and the refusals: a bad K, a Python-tier policy, position rollouts.
"""

from __future__ import annotations

import numpy as np
import pytest

from simkit.cards import N_CARDS, N_COPIES, N_SEATS, N_TYPES
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.engine.layout import N_ACTIONS
from simkit.errors import SimkitError
from simkit.policies.dispatch import builtin_act_state
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rng import STREAM_PLAYOUT, next_below, root_key, stream_state
from simkit.rules import RuleSet
from simkit.runner import luck as luck_module
from simkit.runner.luck import luck_rows
from simkit.runner.play import (BUILTIN_KERNELS, N_RESULT, SEATING_FIXED, InPlay, Table, deals_of, lineup_of,
                                 new_scratch)
from simkit.runner.playout_value import PS_KEY, new_playout_scratch, playout_block, playout_luck
from simkit.runner.value_model import DEFAULT_PLAYOUTS, ValueModelError, load_value_model, value_model_for
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec

from helpers import paused_tables

POLICIES = "greedy,random,patient"  # random: a play-out that shared the table's streams would show


def _paused_tables(seed: int, deals: int, every: int):
    """The whole table (tests/helpers.py) before every ``every``-th draw of POLICIES' deals,
    with the play-out stream each draw's correction uses."""
    tables = paused_tables(POLICIES, seed, deals, RuleSet(), every)
    for table in tables:
        table["key"] = np.zeros(4, dtype=np.uint64)
        stream_state(root_key(seed), table["deal"], STREAM_PLAYOUT, table["key"])
    ids, params, _ = policy_arrays(parse_policies(POLICIES))
    return tables, ids, params, RuleSet().to_array()


def _kernel_luck(table: dict, ids, params, rules, playouts: int) -> np.ndarray:
    s, _, _, _, _, _, _, ev, ev_n, _, seat_of = new_scratch()
    seat_of[:] = np.arange(N_SEATS)
    ps = new_playout_scratch()
    ps[PS_KEY][:] = table["key"]
    luck = np.zeros(N_SEATS)
    play = InPlay(table["s"].copy(), table["rngs"].copy(), np.zeros(N_ACTIONS, dtype=np.bool_), table["obs"].copy(),
                  table["work"].copy(), table["pwork"].copy(), ev, ev_n)
    error = playout_luck(luck_module._BASIC_ACT, Table(ids, params, seat_of, rules), play, ps, playouts, luck)
    assert error == 0
    return luck


def test_corrections_average_to_zero_over_the_card_drawn():
    """Each stock card equally likely next, the same play-out stream: the corrections' mean is 0."""
    tables, ids, params, rules = _paused_tables(seed=12, deals=6, every=4)
    checked = varied = 0
    for table in tables:
        pos = table["s"][L.S_STOCK_POS]
        corrections = []
        for j in range(pos, N_CARDS):  # card j of the stock drawn next
            swapped = dict(table, s=table["s"].copy())
            deck = swapped["s"][L.S_DECK :]
            deck[pos], deck[j] = deck[j], deck[pos]
            corrections.append(_kernel_luck(swapped, ids, params, rules, playouts=2))
        corrections = np.array(corrections)
        assert np.allclose(corrections.mean(axis=0), 0.0, atol=1e-9)
        varied += np.ptp(corrections) > 0.5  # the cards drawn are valued differently: the check has teeth
        checked += 1
    assert checked >= 15 and varied >= checked // 3


def _naive_playout_luck(table: dict, ids, params, rules, playouts: int) -> np.ndarray:
    """The correction from its definition, one play-out at a time from Python."""
    s = table["s"]
    pos = s[L.S_STOCK_POS]
    stock = sorted(int(c) for c in s[L.S_DECK + pos : L.S_DECK + N_CARDS])
    n = len(stock)
    counts = np.bincount([c // N_COPIES for c in stock], minlength=N_TYPES)
    if np.count_nonzero(counts) < 2:
        return np.zeros(N_SEATS)
    key = table["key"].copy()
    values = np.zeros((N_TYPES, N_SEATS))
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    ev, ev_n = np.zeros((0, L.EVENT_WIDTH), dtype=np.int64), np.zeros(1, dtype=np.int64)
    for _ in range(playouts):
        order = list(stock)
        for i in range(n - 1, 0, -1):
            j = int(next_below(key, i + 1))
            order[i], order[j] = order[j], order[i]
        for t in np.flatnonzero(counts):
            lowest = min(card for card in stock if card // N_COPIES == t)
            first = order.index(lowest)
            swapped = list(order)
            swapped[0], swapped[first] = order[first], order[0]
            s2 = s.copy()
            s2[L.S_DECK + pos : L.S_DECK + N_CARDS] = swapped
            rngs, obs, pwork, work = table["rngs"].copy(), table["obs"].copy(), table["pwork"].copy(), table["work"].copy()
            work[E.EW_CHANCE] = E.CHANCE_OFF
            E.advance(s2, rules, mask, work, ev, ev_n)
            while s2[L.S_PHASE] != L.PH_OVER:
                p = s2[L.S_PLAYER]
                action = builtin_act_state(ids[p], s2, obs, mask, params[p], rngs[p], rules, pwork)
                E.apply_legal(s2, action, rules, mask, work, ev, ev_n)
            values[t] += s2[L.S_PAYOFF : L.S_PAYOFF + N_SEATS] / playouts
    actual = s[L.S_DECK + pos] // N_COPIES
    return values[actual] - counts @ values / n


def test_playout_luck_matches_its_naive_twin():
    tables, ids, params, rules = _paused_tables(seed=13, deals=4, every=5)
    assert len(tables) >= 8
    nonzero = 0
    for table in tables:
        expected = _naive_playout_luck(table, ids, params, rules, playouts=3)
        got = _kernel_luck(table, ids, params, rules, playouts=3)
        assert np.allclose(got, expected, atol=1e-9), (got, expected)
        nonzero += np.any(expected != 0.0)
    assert nonzero >= 6  # late draws often change nothing (every candidate ends the same way)


def test_playouts_leave_the_deals_as_played_and_are_keyed_by_deal():
    specs = parse_policies(POLICIES)
    rules = RuleSet()
    results, luck, _, _ = luck_rows(specs, seed=21, deals=24, block=playout_block(2), rules=rules)
    ids, params, _ = policy_arrays(specs)
    expected = np.zeros((24, N_RESULT), dtype=np.int64)
    lineup = lineup_of(ids, params, rules.to_array())
    BUILTIN_KERNELS.play_batch(deals_of(root_key(21), 0, 24, 0, SEATING_FIXED), lineup, expected)
    assert np.array_equal(results, expected)
    assert np.allclose(luck.sum(axis=1), 0.0)  # payoffs sum to zero, so do the values
    assert np.count_nonzero(np.abs(luck).sum(axis=1) > 0.1) >= 12
    later, later_luck, _, _ = luck_rows(specs, seed=21, deals=9, block=playout_block(2), rules=rules, first_deal=15)
    assert np.array_equal(later, results[15:]) and np.array_equal(later_luck, luck[15:])


def test_playout_model_names():
    model = load_value_model("playouts:16")
    assert model.is_playouts and model.hidden == 0 and model.path == "playouts:16"
    assert np.array_equal(model.block, playout_block(16))
    assert value_model_for("playouts:16", seed=5).digest == model.digest  # no training seeds to refuse
    assert load_value_model("playouts").block[1] == DEFAULT_PLAYOUTS
    assert load_value_model("playouts:8").digest != model.digest
    assert not load_value_model().is_playouts
    for bad in ("playouts:0", "playouts:x", "playouts:-3", "playouts:5000"):
        with pytest.raises(ValueModelError, match=f"value model {bad}: .*1..4096"):
            load_value_model(bad)


def test_playouts_refuse_python_policies_and_position_rollouts():
    with pytest.raises(SimkitError, match="play-out values play the built-in policies only, not "
                                          "simkit.bench:GreedyInPython"):
        luck_rows(parse_policies("greedy,simkit.bench:GreedyInPython,random"), seed=1, deals=2,
                  block=playout_block(2))
    with pytest.raises(ValueError, match="not play-out values"):
        luck_rows(parse_policies(POLICIES), seed=1, deals=2, block=playout_block(2), record=True)
    from simkit.engine.position import parse_position
    from simkit.specs.analyze import AnalyzeSpec
    from simkit.studies.analyze import analyze_position

    position = parse_position("seat=1; dealer=0; turn=claim; hand=YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*2; "
                              "card=RJ; source=discard; from=0; stock=21")
    with pytest.raises(SimkitError, match="play-out values adjust comparisons of whole deals"):
        analyze_position(position, AnalyzeSpec(luck="playouts:2"))


def test_an_interrupted_playout_replay_resumes_from_its_last_slice(tmp_path, monkeypatch):
    from simkit.studies import compare as compare_module

    whole = compare_module.compare(CompareSpec("greedy", "random", deals=45, seed=3, luck="playouts:1"),
                                   tmp_path / "whole", Execution(quiet=True))
    calls = []
    real = compare_module.duplicate_luck

    def interrupted(*args, **kwargs):
        calls.append(args[6])  # the slice's first deal
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(compare_module, "duplicate_luck", interrupted)
    with pytest.raises(KeyboardInterrupt):
        compare_module.compare(CompareSpec("greedy", "random", deals=45, seed=3, luck="playouts:1"), tmp_path / "cut",
                               Execution(quiet=True))
    digest = load_value_model("playouts:1").digest[:16]
    assert np.load(tmp_path / "cut" / f"luck-{digest}.npy").shape == (20, 6)  # the first slice was kept
    calls.clear()

    def counted(*args, **kwargs):
        calls.append(args[6])
        return real(*args, **kwargs)

    monkeypatch.setattr(compare_module, "duplicate_luck", counted)
    resumed = compare_module.compare(CompareSpec("greedy", "random", deals=45, seed=3, luck="playouts:1"),
                                     tmp_path / "cut", Execution(quiet=True))
    assert calls == [20, 40]  # first deals replayed: the kept slice was not
    assert np.array_equal(resumed.adjusted.luck, whole.adjusted.luck)
    assert np.any(whole.adjusted.luck != 0.0)

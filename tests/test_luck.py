"""The luck adjustment (simkit.runner.luck, simkit.runner.value_model, compare(luck=...)).

What each test would catch:

* replayed rows equal the play kernels' rows: a pause before a draw that changed a card, a
  decision or a random stream;
* corrections have mean zero by enumeration: a wrong outcome distribution (the player's
  unseen cards instead of the stock, the drawn card left out, weights not summing to 1);
* draw_win against the engine's own claim flow: a claim order, a lock, a decline flag or a
  table 将 that the shortcut gets wrong;
* value_features against a slow twin (the engine's claim flow on a copy, naive_min_idle, Φ
  from the state after each claim): outs that keep the drawn card, Φ's unseen cards that miss
  the turned-over card, a seat feature read for the wrong player;
* the network kernel against scikit-learn's predict: a transposed weight, a missed ReLU or
  standardisation;
* user and Python-tier policies, replayed by the Python deal loop, get the kernels' rows and
  luck: a draw the loop's hook misses or corrects twice;
* v = 0 leaves every figure unchanged; a model trained on the evaluation's seed is refused;
  a bad model file is a one-line error naming it.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from simkit.cards import N_CARDS, N_COPIES
from simkit.engine import kernel as E
from simkit.engine import layout as L
from simkit.policies.registry import parse_policies, parse_policy, policy_arrays
from simkit.rng import root_key
from simkit.rules import RuleSet
from simkit.policies.network import NET_SCRATCH, network_forward
from simkit.runner.luck import (
    N_VALUE_FEATURES,
    VB_EXACT_WINS,
    VB_NET,
    VB_WEIGHT,
    draw_luck,
    duplicate_luck,
    luck_rows,
    new_luck_scratch,
    value_block,
    zero_value_block,
)
from simkit.runner.play import BUILTIN_KERNELS, N_RESULT, SEATING_FIXED, deals_of, lineup_of
from simkit.runner.value_model import (
    ValueModelError,
    check_evaluation_seed,
    load_value_model,
    write_value_model,
)
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec

from helpers import paused_tables


def _random_block(rng: np.random.Generator, hidden: int = 8) -> np.ndarray:
    return value_block(rng.normal(size=N_VALUE_FEATURES), rng.uniform(0.5, 2.0, size=N_VALUE_FEATURES),
                       rng.normal(size=(N_VALUE_FEATURES, hidden)), rng.normal(size=hidden), rng.normal(size=hidden),
                       float(rng.normal()))


@pytest.mark.parametrize("policies", ["expert,greedy,random", "greedy,patient,greedy"])
def test_replayed_rows_equal_the_play_kernels_rows(policies):
    specs = parse_policies(policies)
    rules = RuleSet()
    results, luck, _, _ = luck_rows(specs, seed=31, deals=300, block=_random_block(np.random.default_rng(1)),
                                    rules=rules)
    ids, params, _ = policy_arrays(specs)
    expected = np.zeros((300, N_RESULT), dtype=np.int64)
    lineup = lineup_of(ids, params, rules.to_array())
    BUILTIN_KERNELS.play_batch(deals_of(root_key(31), 0, 300, 0, SEATING_FIXED), lineup, expected)
    assert np.array_equal(results, expected)
    assert np.allclose(luck.sum(axis=1), 0.0)  # centred values: the luck of a deal sums to zero
    assert np.any(luck != 0.0)


def _paused_states(policies: str, seed: int, deals: int, rules: RuleSet, every: int = 3):
    """Copies of the state (and engine workspace) paused before some draws of some deals."""
    return [(table["s"], table["work"]) for table in paused_tables(policies, seed, deals, rules, every)]


@pytest.mark.parametrize("exact_wins", [True, False])
def test_corrections_have_mean_zero_by_enumeration(exact_wins):
    """Each stock card equally likely next: the draw's correction averages to exactly zero."""
    rules = RuleSet()
    rules_array = rules.to_array()
    rng = np.random.default_rng(7)
    block = _random_block(rng)
    block[VB_EXACT_WINS] = 1.0 if exact_wins else 0.0
    tab = new_luck_scratch()
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    checked = varied = 0
    for s, work in _paused_states("expert,greedy,greedy", seed=5, deals=12, rules=rules):
        pos = s[L.S_STOCK_POS]
        corrections = []
        for j in range(pos, N_CARDS):
            s2 = s.copy()
            s2[L.S_DECK + pos], s2[L.S_DECK + j] = s2[L.S_DECK + j], s2[L.S_DECK + pos]
            luck = np.zeros(3)
            draw_luck(s2, rules_array, mask, work.copy(), tab, block, luck)
            corrections.append(luck)
        corrections = np.array(corrections)
        assert np.allclose(corrections.mean(axis=0), 0.0, atol=1e-9)
        varied += np.ptp(corrections) > 0.0  # outcomes valued differently: the check has teeth
        checked += 1
    assert checked >= 30 and varied >= checked // 2


@pytest.mark.parametrize("exact_wins", [True, False])
def test_incremental_corrections_equal_the_whole_network(exact_wins):
    """draw_luck shifts a few first-layer columns per card; outcome_values runs the whole
    network on every card's features: the same corrections."""
    from simkit.runner.luck import draw_table, outcome_values

    rules = RuleSet()
    rules_array = rules.to_array()
    block = _random_block(np.random.default_rng(9), hidden=12)
    block[VB_EXACT_WINS] = 1.0 if exact_wins else 0.0
    block[VB_WEIGHT] = 0.7
    tab = new_luck_scratch()
    dt, hw, x, h, v = tab.draw, tab.hw, tab.x, tab.h, tab.v
    counts, asked = dt.counts, dt.asked
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    claimed = 0
    for s, work in _paused_states("expert,greedy,patient", seed=8, deals=10, rules=rules, every=2):
        luck = np.zeros(3)
        draw_luck(s, rules_array, mask, work.copy(), tab, block, luck)
        n = draw_table(s, rules_array, mask, work.copy(), dt, hw)
        actual = s[L.S_DECK + s[L.S_STOCK_POS]] // N_COPIES
        expected = np.zeros(3)
        for t in np.flatnonzero(counts):
            outcome_values(s, int(t), n, dt, block, x, h, v)
            expected += 0.7 * ((1.0 if t == actual else 0.0) - counts[t] / n) * v
            claimed += int(asked[t, :, 0].sum() > 0)
        assert np.allclose(luck, expected, atol=1e-9)
    assert claimed > 20


def _drawn(s: np.ndarray, work: np.ndarray, t: int, rules: RuleSet) -> tuple:
    """Copies of a paused state and its workspace with a card of type t put on top of the stock
    and drawn by the engine (then asking its claims): ``(s, work, rules array, mask, ev, ev_n,
    draws before)``."""
    rules_array = rules.to_array()
    s = s.copy()
    pos = s[L.S_STOCK_POS]
    j = next(i for i in range(pos, N_CARDS) if s[L.S_DECK + i] // N_COPIES == t)
    s[L.S_DECK + pos], s[L.S_DECK + j] = s[L.S_DECK + j], s[L.S_DECK + pos]
    work = work.copy()
    work[E.EW_CHANCE] = E.CHANCE_OFF
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    ev, ev_n = np.zeros((0, L.EVENT_WIDTH), dtype=np.int64), np.zeros(1, dtype=np.int64)
    draws = s[L.S_DRAWS]
    E.advance(s, rules_array, mask, work, ev, ev_n)
    return s, work, rules_array, mask, ev, ev_n, draws


def _engine_draw_win(s: np.ndarray, work: np.ndarray, t: int, rules: RuleSet) -> tuple[int, int]:
    """Slow twin of simkit.engine.kernel.draw_win: put a card of type t on top of the stock, let
    the engine draw it and ask its claims; at each claim decision try every legal claim (then a
    win) on a copy; pass otherwise, and check the table 将's discard phase."""
    s, work, rules_array, mask, ev, ev_n, draws = _drawn(s, work, t, rules)
    while s[L.S_DRAWS] == draws + 1 and s[L.S_PHASE] == L.PH_CLAIM:
        q = s[L.S_PLAYER]
        E.legal_mask(s, rules_array, mask, work)
        best = 0
        for a in np.flatnonzero(mask):
            if a == L.A_PASS:
                continue
            s2, m2 = s.copy(), mask.copy()
            E.apply_legal(s2, int(a), rules_array, m2, work.copy(), ev, ev_n)
            E.legal_mask(s2, rules_array, m2, work.copy())
            if s2[L.S_PHASE] == L.PH_DISCARD and s2[L.S_PLAYER] == q and m2[L.A_WIN]:
                E.apply_legal(s2, L.A_WIN, rules_array, m2, work.copy(), ev, ev_n)
                best = max(best, int(s2[L.S_UNITS]))
        if best > 0:
            return int(q), best
        E.legal_mask(s, rules_array, mask, work)
        E.apply_legal(s, L.A_PASS, rules_array, mask, work, ev, ev_n)
    if s[L.S_DRAWS] == draws + 1 and s[L.S_PHASE] == L.PH_DISCARD and s[L.S_GAIN] == L.WIN_TABLE:
        E.legal_mask(s, rules_array, mask, work)
        if mask[L.A_WIN]:
            q = s[L.S_PLAYER]
            E.apply_legal(s, L.A_WIN, rules_array, mask, work, ev, ev_n)
            return int(q), int(s[L.S_UNITS])
    return -1, 0


@pytest.mark.parametrize("options", [(), ("pass_locks_type=off",), ("drawn_card_chow_by=drawer_then_next",),
                                     ("drawn_jiang_chow=off",), ("must_kong=on", "must_chariot_out=on")])
def test_draw_win_matches_the_engines_claim_flow(options):
    rules = RuleSet.from_strings(list(options))
    rules_array = rules.to_array()
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    asked = np.zeros((3, 2), dtype=np.int64)
    wins = compared = 0
    for s, work in _paused_states("greedy,patient,greedy", seed=11, deals=40, rules=rules, every=1):
        stock = {s[L.S_DECK + i] // N_COPIES for i in range(s[L.S_STOCK_POS], N_CARDS)}
        for t in sorted(stock):
            expected = _engine_draw_win(s, work, t, rules)
            before = s.copy()
            got = E.draw_win(s, t, rules_array, mask, work.copy(), asked)
            assert np.array_equal(s, before)  # draw_win leaves the state as it found it
            assert (int(got[0]), int(got[1])) == expected, (t, s[L.S_STOCK_POS])
            wins += expected[0] >= 0
            compared += 1
    assert compared > 500 and wins >= 3


def test_network_kernel_equals_sklearn_predict():
    sklearn = pytest.importorskip("sklearn.neural_network")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, N_VALUE_FEATURES))
    y = x[:, 0] * 2 - np.maximum(x[:, 1], 0) + 0.1 * rng.normal(size=400)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    net = sklearn.MLPRegressor(hidden_layer_sizes=(16,), max_iter=50, random_state=0).fit((x - mean) / scale, y)
    block = value_block(mean, scale, net.coefs_[0], net.intercepts_[0], net.coefs_[1].ravel(),
                        float(net.intercepts_[1][0]))
    h = np.zeros(NET_SCRATCH)
    ours = np.array([network_forward(block[VB_NET:], row, h) for row in x])
    assert np.allclose(ours, net.predict((x - mean) / scale), atol=1e-9)


def _model_file(tmp_path, block, seeds=(90001,), name="v.npz"):
    path = tmp_path / name
    write_value_model(path, block, {"seeds": list(seeds), "deals": 0})
    return path


def test_zero_value_model_changes_nothing(tmp_path):
    from simkit.studies.compare import compare

    path = _model_file(tmp_path, zero_value_block(exact_wins=False))
    result = compare(CompareSpec("greedy", "random", deals=60, seed=4, batch_size=30, luck=path), tmp_path / "c",
                     Execution(quiet=True))
    assert result.adjusted is not None
    assert np.all(result.adjusted.luck == 0.0)
    assert result.adjusted.test == result.test and result.adjusted.bootstrap == result.bootstrap
    assert result.adjusted.reduction_factor == 1.0
    text = json.dumps(result.to_json(), allow_nan=False)  # standard JSON: no NaN or Infinity
    assert json.loads(text)["variance_reduction"]["adjusted_vs_duplicate"] == 1.0


def test_a_comparison_reports_its_cpu_and_the_adjustments_efficiency(tmp_path):
    """CPU is what a user pays: compare measures this run's CPU and the plain duplicate part of
    it, and the efficiency of the adjustment is its variance reduction times the duplicate's
    share of the CPU (1 / (variance x CPU) against plain duplicate's: 1.8x fewer deals at 3 times
    the CPU is 0.6)."""
    import dataclasses

    from simkit.studies.compare import compare

    block = _random_block(np.random.default_rng(2))
    block[VB_WEIGHT] = 0.5
    path = _model_file(tmp_path, block)
    result = compare(CompareSpec("greedy", "random", deals=60, seed=4, batch_size=30, luck=path), tmp_path / "c",
                     Execution(quiet=True))
    assert 0 < result.cpu_duplicate < result.cpu_seconds
    payload = json.loads(json.dumps(result.to_json(), allow_nan=False))
    assert payload["cpu_seconds"] == result.cpu_seconds and payload["duplicate"]["standard_error"] > 0
    assert payload["efficiency_vs_duplicate"] == pytest.approx(result.efficiency)
    assert "CPU:" in result.text() and "efficiency of the luck adjustment per CPU-second" in result.text()
    adjusted = dataclasses.replace(result.adjusted, reduction_factor=1.8)
    assert dataclasses.replace(result, adjusted=adjusted, cpu_per_deal_duplicate=1.0,
                               cpu_per_deal_adjustment=2.0).efficiency == pytest.approx(0.6)


def test_the_efficiency_is_what_the_deals_cost_when_played_not_what_a_rerun_reads(tmp_path):
    """A re-run over a finished comparison reads its deals and luck back (almost no CPU): its
    efficiency must still be the one the deals cost when they were played (the folder's CPU
    record), where it used to be computed from the re-run's own CPU (0.07 in a shipped report).
    A folder whose deals were played without a record says the efficiency is not measured."""
    import shutil

    from simkit.studies.compare import CPU_RECORD, compare, read_cpu_record

    block = _random_block(np.random.default_rng(2))
    block[VB_WEIGHT] = 0.5
    path = _model_file(tmp_path, block)
    first = compare(CompareSpec("greedy", "random", deals=60, seed=4, batch_size=30, luck=path), tmp_path / "c",
                    Execution(quiet=True))
    record = read_cpu_record(tmp_path / "c")
    assert sorted(record) == ["duplicate", f"luck-{first_digest(path)}"]
    assert all(entry["deals"] == 60 and entry["seconds"] > 0 for entry in record.values())
    assert first.cpu_per_deal_duplicate == pytest.approx(record["duplicate"]["seconds"] / 60)
    again = compare(CompareSpec("greedy", "random", deals=60, seed=4, batch_size=30, luck=path), tmp_path / "c",
                    Execution(quiet=True))
    assert again.cpu_duplicate < first.cpu_duplicate  # read back, not played
    assert again.efficiency == first.efficiency and math.isfinite(first.efficiency)
    assert read_cpu_record(tmp_path / "c") == record  # nothing new played, nothing added
    shutil.copytree(tmp_path / "c", tmp_path / "old")
    (tmp_path / "old" / CPU_RECORD).unlink()  # as an older simkit left it
    old = compare(CompareSpec("greedy", "random", deals=60, seed=4, batch_size=30, luck=path), tmp_path / "old",
                  Execution(quiet=True))
    assert math.isnan(old.efficiency) and old.to_json()["efficiency_vs_duplicate"] is None
    assert "not measured" in old.text() and "older simkit" in old.text()


def first_digest(path) -> str:
    from simkit.runner.value_model import load_value_model

    return load_value_model(path).digest[:16]


def test_the_cpu_record_adds_only_what_extends_what_it_knows(tmp_path):
    """_record_cpu: from deal 0 it starts an entry; a run that extends exactly the deals it
    covers adds to it; deals it does not know (a gap, or an unknown count) drop the entry."""
    from simkit.storage.files import write_checked_json
    from simkit.studies.compare import _record_cpu, read_cpu_record

    write_checked_json(tmp_path / "comparison.json", {"kind": "simkit.duplicate", "policy_a": "greedy",
                                                      "policy_b": "random", "seed": 1, "deals": 90, "batch_size": 30})
    _record_cpu(tmp_path, "duplicate", 0, 30, 2.0)
    assert read_cpu_record(tmp_path) == {"duplicate": {"deals": 30, "seconds": 2.0}}
    _record_cpu(tmp_path, "duplicate", 30, 30, 5.0)  # nothing new played: unchanged
    _record_cpu(tmp_path, "duplicate", 30, 50, 1.5)
    assert read_cpu_record(tmp_path) == {"duplicate": {"deals": 50, "seconds": 3.5}}
    _record_cpu(tmp_path, "luck-x", 10, 20, 1.0)  # deals 0..9 played without a record: unknown
    assert "luck-x" not in read_cpu_record(tmp_path)
    _record_cpu(tmp_path, "duplicate", 60, 90, 1.0)  # a gap: 50..59 unknown
    assert read_cpu_record(tmp_path) == {}
    _record_cpu(tmp_path, "duplicate", 0, 30, 2.0)
    _record_cpu(tmp_path, "duplicate", -1, 60, 2.0)  # the folder's count could not be read
    assert read_cpu_record(tmp_path) == {}
    (tmp_path / "cpu.json").write_text('{"duplicate": {"deals": "many", "seconds": 1}}')
    assert read_cpu_record(tmp_path) == {}  # malformed: unknown, never guessed


def _cpu_run(tmp_path, folder, seed=4, rng=2):
    from simkit.studies.compare import compare

    block = _random_block(np.random.default_rng(rng))
    block[VB_WEIGHT] = 0.5
    path = _model_file(tmp_path, block, name=f"v{rng}.npz")
    return compare(CompareSpec("greedy", "random", deals=60, seed=seed, batch_size=30, luck=path), tmp_path / folder,
                   Execution(quiet=True))


def _not_measured(result, why: str) -> None:
    assert math.isnan(result.efficiency) and result.to_json()["efficiency_vs_duplicate"] is None
    assert "efficiency of the luck adjustment per CPU-second: not measured" in result.text() and why in result.text()


def test_an_edited_cpu_record_gives_not_measured_never_a_number(tmp_path):
    """cpu.json carries its digest as comparison.json does: with the luck seconds edited to 0 a
    re-run reported an efficiency of 0.54x for 0.006x (issue 50).  An edited record, or one
    whose digest was removed, is not measured (null in JSON), never a number."""
    import shutil

    from simkit.storage.files import JSON_DIGEST
    from simkit.studies.compare import CPU_RECORD

    first = _cpu_run(tmp_path, "c")
    assert math.isfinite(first.efficiency)
    data = json.loads((tmp_path / "c" / CPU_RECORD).read_text())
    for key in data["entries"]:
        if key.startswith("luck-"):
            data["entries"][key]["seconds"] = 0.0
    shutil.copytree(tmp_path / "c", tmp_path / "edited")
    (tmp_path / "edited" / CPU_RECORD).write_text(json.dumps(data))  # the digest no longer matches
    _not_measured(_cpu_run(tmp_path, "edited"), "edited")
    del data[JSON_DIGEST]
    shutil.copytree(tmp_path / "c", tmp_path / "undigested")
    (tmp_path / "undigested" / CPU_RECORD).write_text(json.dumps(data))  # no digest at all
    _not_measured(_cpu_run(tmp_path, "undigested"), "edited")
    assert _cpu_run(tmp_path, "c").efficiency == first.efficiency  # the untouched folder still reads its record


def test_a_cpu_record_from_another_comparison_gives_not_measured(tmp_path):
    """A cpu.json copied from another comparison's folder (its digest intact) is bound to that
    comparison's identity, not this one's: not measured."""
    import shutil

    from simkit.studies.compare import CPU_RECORD

    _cpu_run(tmp_path, "c")
    _cpu_run(tmp_path, "other", seed=5)
    shutil.copy(tmp_path / "other" / CPU_RECORD, tmp_path / "c" / CPU_RECORD)
    _not_measured(_cpu_run(tmp_path, "c"), "another comparison")


def _first_call_burns(monkeypatch, seconds: float):
    """simkit.runner.luck.luck_rows whose first call burns ``seconds`` of CPU, as a first run's
    compilation of the luck kernels does; the process's luck warm-ups forgotten."""
    import time

    from simkit.runner import luck as luck_module
    from simkit.studies import compare as compare_module

    original = luck_module.luck_rows
    calls = []

    def luck_rows(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass
        return original(*args, **kwargs)

    monkeypatch.setattr(luck_module, "luck_rows", luck_rows)
    monkeypatch.setattr(compare_module, "_WARM_LUCK", set())
    return calls


def test_a_first_runs_luck_cpu_does_not_include_compilation(tmp_path, monkeypatch):
    """A first --luck playouts:1 run recorded 25.9 s of luck CPU for 60 deals (compilation) and
    re-runs 1.3-1.5 s, so its folder reported 0.01x for ever (issue 50): the luck kernels are
    compiled (one deal of one seating replayed) before the luck's CPU clock starts.  Here the
    first call of the luck kernels burns 1 s: it must not be in the record."""
    from simkit.studies.compare import read_cpu_record

    calls = _first_call_burns(monkeypatch, 1.0)
    result = _cpu_run(tmp_path, "c", rng=7)
    luck = [entry for key, entry in read_cpu_record(tmp_path / "c").items() if key.startswith("luck-")]
    assert len(luck) == 1 and luck[0]["deals"] == 60 and 0 < luck[0]["seconds"] < 0.5
    assert len(calls) == 7  # the warm-up, then the six seatings
    assert math.isfinite(result.efficiency)


def _compiling_at_call(original, calls: list, at: int):
    """``original`` that counts its calls in ``calls`` and compiles a new numba kernel at call ``at``."""
    import numba

    def wrapped(*args, **kwargs):
        calls.append(1)
        if len(calls) == at:

            @numba.njit
            def fresh(x):
                return x + 1

            fresh(1)
        return original(*args, **kwargs)

    return wrapped


def test_a_kernel_compiled_while_the_luck_clock_runs_leaves_its_cpu_unmeasured(tmp_path, monkeypatch):
    """Compilation the warm-up missed (a kernel compiled inside the luck replay) is never counted
    as the luck's CPU: the record drops the entry and the efficiency is not measured."""
    from simkit.runner import luck as luck_module
    from simkit.studies import compare as compare_module

    calls = []
    # the first call inside the clock (the second: the first is the warm-up) compiles a kernel
    monkeypatch.setattr(luck_module, "luck_rows", _compiling_at_call(luck_module.luck_rows, calls, 2))
    monkeypatch.setattr(compare_module, "_WARM_LUCK", set())
    result = _cpu_run(tmp_path, "c", rng=8)
    assert len(calls) == 7
    assert [key for key in compare_module.read_cpu_record(tmp_path / "c")] == ["duplicate"]
    _not_measured(result, "while kernels compiled")


def test_adjusted_estimate_uses_the_models_luck(tmp_path):
    """A model with corrections: adjusted = plain - mean luck, both from the same deals."""
    from simkit.studies.compare import compare

    block = _random_block(np.random.default_rng(2))
    block[VB_WEIGHT] = 0.5
    path = _model_file(tmp_path, block)
    result = compare(CompareSpec("greedy", "random", deals=60, seed=4, batch_size=30, luck=path), tmp_path / "c",
                     Execution(quiet=True))
    d = result.per_seating.mean(axis=1)
    _, luck = duplicate_luck(parse_policy("greedy"), parse_policy("random"), 4, 60, block)
    assert np.array_equal(result.adjusted.luck, luck)
    assert result.adjusted.test.mean == pytest.approx(float(np.mean(d - luck.mean(axis=1))), abs=1e-12)
    assert result.adjusted.test.mean != pytest.approx(result.test.mean, abs=1e-9)
    payload = result.to_json()
    assert payload["adjusted"]["estimate"] == result.adjusted.test.mean
    import pandas as pd

    from simkit.studies.compare import write_comparison_report
    write_comparison_report(result, tmp_path / "c")
    table = pd.read_parquet(tmp_path / "c" / "luck.parquet")
    assert len(table) == 60 * 6 and np.allclose(table["adjusted"], table["difference"] - table["luck"])
    assert "luck-adjusted" in (tmp_path / "c" / "report.md").read_text()
    assert payload["variance_reduction"]["adjusted_vs_duplicate"] == result.adjusted.reduction_factor


def test_luck_is_kept_and_read_back(tmp_path, monkeypatch):
    """A re-run reads the comparison's luck back instead of replaying it; an SPRT replays each
    batch's new deals once, and its re-run replays nothing."""
    import simkit.studies.compare as C

    path = _model_file(tmp_path, _random_block(np.random.default_rng(5)))
    first = C.compare(CompareSpec("greedy", "random", deals=40, seed=6, batch_size=20, luck=path), tmp_path / "c",
                      Execution(quiet=True))
    replays = []
    real = C.duplicate_luck

    def counting(a, b, seed, deals, block, rules=None, first_deal=0):
        replays.append((deals, first_deal))
        return real(a, b, seed, deals, block, rules, first_deal)

    monkeypatch.setattr(C, "duplicate_luck", counting)
    again = C.compare(CompareSpec("greedy", "random", deals=40, seed=6, batch_size=20, luck=path), tmp_path / "c",
                      Execution(quiet=True))
    assert replays == [] and np.array_equal(again.adjusted.luck, first.adjusted.luck)
    sprt = C.compare(CompareSpec("patient", "greedy", deals=600, seed=6, batch_size=100, luck=path,
                                 sprt=(0.2, 0.05, 0.05), burn_in=150), tmp_path / "s", Execution(quiet=True))
    assert replays and [d for d, _ in replays] == [100] * len(replays)
    assert [f for _, f in replays] == list(range(0, 100 * len(replays), 100))
    replays.clear()
    rerun = C.compare(CompareSpec("patient", "greedy", deals=600, seed=6, batch_size=100, luck=path,
                                  sprt=(0.2, 0.05, 0.05), burn_in=150), tmp_path / "s", Execution(quiet=True))
    assert replays == [] and rerun.sprt.n == sprt.sprt.n and np.array_equal(rerun.adjusted.luck, sprt.adjusted.luck)
    _, luck = real(parse_policy("patient"), parse_policy("greedy"), 6, sprt.deals, load_value_model(path).block)
    assert np.array_equal(sprt.adjusted.luck, luck)


def test_model_trained_on_the_evaluation_seed_is_refused(tmp_path):
    from simkit.studies.compare import compare

    path = _model_file(tmp_path, zero_value_block(), seeds=(4, 90))
    model = load_value_model(path)
    check_evaluation_seed(model, 5)
    with pytest.raises(ValueModelError, match="trained on seed 4, the seed of this evaluation"):
        compare(CompareSpec("greedy", "random", deals=20, seed=4, luck=path), tmp_path / "c", Execution(quiet=True))
    assert not (tmp_path / "c").exists()  # refused before any deal is played


@pytest.mark.parametrize("record", [False, True])
def test_user_and_python_policies_get_the_kernels_luck(record):
    """A run with a user policy or a Python-tier one is replayed by the Python deal loop: with
    policies that play as greedy does, its rows, luck and recorded features equal the luck
    kernel's with greedy (catches a draw the hook misses or corrects twice, luck carried over
    from the deal before, a pause left on)."""
    block = _random_block(np.random.default_rng(3))
    expected = luck_rows(parse_policies("expert,greedy,patient"), seed=21, deals=40, block=block, record=record)
    for stand_in in ("simkit.bench:greedy_by_import", "simkit.bench:GreedyInPython"):
        got = luck_rows(parse_policies(f"expert,{stand_in},patient"), seed=21, deals=40, block=block, record=record)
        for a, b in zip(got, expected):
            assert np.array_equal(a, b), stand_in
    assert np.any(expected[1] != 0.0)  # the luck has values to compare
    if record:
        assert expected[3].sum() > 0  # ... and so have the recorded features


def test_compare_adjusts_a_python_policy(tmp_path):
    """compare(luck=True) with a Python-tier policy: the replay reproduces the stored duplicate
    differences (else compare refuses), and the adjustment is that of greedy's."""
    from simkit.studies.compare import compare

    plain = compare(CompareSpec("greedy", "random", deals=12, seed=3, luck=True), tmp_path / "g", Execution(quiet=True))
    python = compare(CompareSpec("simkit.bench:GreedyInPython", "random", deals=12, seed=3, luck=True), tmp_path / "p",
                     Execution(quiet=True))
    assert plain.adjusted is not None and python.adjusted is not None
    assert np.array_equal(python.adjusted.luck, plain.adjusted.luck)
    assert np.any(plain.adjusted.luck != 0.0)


def test_bad_value_model_files_are_one_line_errors(tmp_path):
    good = _model_file(tmp_path, _random_block(np.random.default_rng(0)))
    data = good.read_bytes()
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(data[: len(data) // 2])
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, weights=np.zeros(3))
    other_layout = tmp_path / "layout.npz"
    meta = json.loads(np.load(good)["meta"][()])
    meta["features"] = meta["features"][:-1]
    np.savez(other_layout, block=np.load(good)["block"], meta=np.array(json.dumps(meta)))
    short = tmp_path / "short.npz"
    np.savez(short, block=np.load(good)["block"][:-5], meta=np.load(good)["meta"])
    learned_model = tmp_path / "learned.npz"
    from simkit.policies.model import BUILTIN_MODEL
    learned_model.write_bytes(BUILTIN_MODEL.read_bytes())
    cases = {tmp_path / "missing.npz": "does not exist", truncated: "truncated", foreign: "is not a simkit model",
             other_layout: "another feature layout", short: "truncated",
             learned_model: "is not a simkit-value-model file"}
    for path, words in cases.items():
        with pytest.raises(ValueModelError) as info:
            load_value_model(path)
        message = str(info.value)
        assert "\n" not in message and str(path) in message and words in message, message
    assert load_value_model(good).hidden == 8


def test_shipped_value_model_loads():
    model = load_value_model()
    assert model.hidden > 0 and model.training_seeds
    assert 0.0 <= model.block[VB_WEIGHT] <= 1.0


def _engine_claims(s: np.ndarray, work: np.ndarray, t: int, rules: RuleSet) -> dict[int, list[np.ndarray]]:
    """The players the engine asks about a drawn card of type t with a legal claim, up to the
    one who would claim it and win (the flow of :func:`_engine_draw_win`): for each, the state
    after each of its legal claims, applied by the engine on a copy."""
    s, work, rules_array, mask, ev, ev_n, draws = _drawn(s, work, t, rules)
    asked: dict[int, list[np.ndarray]] = {}
    while s[L.S_DRAWS] == draws + 1 and s[L.S_PHASE] == L.PH_CLAIM:
        q = int(s[L.S_PLAYER])
        E.legal_mask(s, rules_array, mask, work)
        wins = False
        for a in np.flatnonzero(mask):
            if a == L.A_PASS:
                continue
            s2, m2 = s.copy(), mask.copy()
            E.apply_legal(s2, int(a), rules_array, m2, work.copy(), ev, ev_n)
            asked.setdefault(q, []).append(s2.copy())
            E.legal_mask(s2, rules_array, m2, work.copy())
            if s2[L.S_PHASE] == L.PH_DISCARD and s2[L.S_PLAYER] == q and m2[L.A_WIN]:
                E.apply_legal(s2, L.A_WIN, rules_array, m2, work.copy(), ev, ev_n)
                wins = wins or int(s2[L.S_UNITS]) > 0
        if wins:
            break
        E.legal_mask(s, rules_array, mask, work)
        E.apply_legal(s, L.A_PASS, rules_array, mask, work, ev, ev_n)
    return asked


def _naive_phi(s: np.ndarray, q: int, lock: np.ndarray) -> float:
    """Expert's hand value Φ (default parameters) of seat q's holding in state s, as q sees it:
    what it has not seen is 4 minus its concealed cards, the dead cards and everyone's exposed
    cards; its 出 components are its exposed 碰 and 楼."""
    from simkit.exposed import EXP_BLOCK, EXP_KONG, EXP_PENG
    from simkit.evaluator.kernel import N_PARTS
    from simkit.policies.expert import EXPERT_DEFAULTS, cross_value, part_value

    n_types = L.N_TYPES
    conc = s[L.S_CONC + n_types * q : L.S_CONC + n_types * (q + 1)].copy()
    seen = conc + s[L.S_DEAD : L.S_DEAD + n_types]
    for r in range(3):
        seen = seen + s[L.S_EXPCARDS + n_types * r : L.S_EXPCARDS + n_types * (r + 1)]
    unseen = np.maximum(0, N_COPIES - seen)
    exposed = s[L.S_EXP + EXP_BLOCK * q : L.S_EXP + EXP_BLOCK * (q + 1)].reshape(-1, n_types)
    out_comp = exposed[EXP_PENG] + exposed[EXP_KONG]
    params = np.array(EXPERT_DEFAULTS, dtype=np.float64)
    return float(cross_value(conc, unseen, out_comp, params)
                 + sum(part_value(conc, part, unseen, out_comp, lock, params) for part in range(N_PARTS)))


def _naive_value_features(s: np.ndarray, work: np.ndarray, q: int, t: int, rules: RuleSet) -> np.ndarray:
    """Slow twin of simkit.runner.luck.value_features, from the definitions of its feature
    table: the engine's claim flow on a copy (who is asked, each claim's holding, who wins on
    each stock type), naive_min_idle for idle cards, Φ from the state after each claim."""
    from tests.naive import naive_min_idle
    from simkit.deck import PLAYER_CARDS, STOCK_CARDS
    from simkit.runner import luck as LK

    n_types = L.N_TYPES
    stock = [int(s[L.S_DECK + i]) // N_COPIES for i in range(s[L.S_STOCK_POS], N_CARDS)]
    n = len(stock)
    counts = np.bincount(stock, minlength=n_types)
    wins = {y: _engine_draw_win(s, work, y, rules) for y in set(stock)}
    claims = _engine_claims(s, work, t, rules) if t >= 0 else {}
    after = counts.copy()
    if t >= 0:
        after[t] -= 1
    drawer = int(s[L.S_PLAYER])
    x = np.zeros(N_VALUE_FEATURES)
    for j in range(3):
        r = (q + j) % 3
        base = j * LK.N_SEAT_FEATURES
        lock = s[L.S_LOCK + n_types * r : L.S_LOCK + n_types * (r + 1)]
        conc = s[L.S_CONC + n_types * r : L.S_CONC + n_types * (r + 1)]
        idle = naive_min_idle(list(conc))
        phi = _naive_phi(s, r, lock)
        x[base + LK.V_PHI] = phi / 100.0
        if r in claims:
            idle = min([idle] + [naive_min_idle(list(s2[L.S_CONC + n_types * r : L.S_CONC + n_types * (r + 1)]))
                                 for s2 in claims[r]])
            x[base + LK.V_CLAIM] = 1.0
            best = max(_naive_phi(s2, r, lock) for s2 in claims[r])
            x[base + LK.V_PHI_GAIN] = max(0.0, best - phi) / 100.0
        x[base + LK.V_IDLE + min(idle, LK.IDLE_CAP)] = 1.0
        outs = sum(int(after[y]) for y in wins if wins[y][0] == r)
        units = sum(int(after[y]) * wins[y][1] for y in wins if wins[y][0] == r)
        x[base + LK.V_OUTS_SHARE] = outs / (n - 1) if n > 1 else 0.0
        x[base + LK.V_OUTS] = outs / 4.0
        x[base + LK.V_OUT_UNITS] = units / outs / 5.0 if outs else 0.0
        x[base + LK.V_XIANGGONG] = s[L.S_XIANGGONG + r]
        x[base + LK.V_NOWIN] = s[L.S_NOWIN + r]
        x[base + LK.V_DEALER] = float(s[L.S_DEALER] == r)
        x[base + LK.V_DRAWER] = float(drawer == r)
        x[base + LK.V_NEXT_DRAWER] = float((drawer + 1) % 3 == r)
        x[base + LK.V_CONCEALED] = conc.sum() / PLAYER_CARDS
    x[LK.V_STOCK] = (n - 1) / STOCK_CARDS
    return x


@pytest.mark.parametrize("options", [(), ("pass_locks_type=off", "must_kong=on", "must_chariot_out=on")])
def test_value_features_match_their_naive_twin(options):
    """Every seat's features after every stock type (and after a card nobody claims) of paused
    states equal the twin's, computed from the engine's own claim flow and naive_min_idle."""
    from simkit.runner.luck import V_CLAIM, V_OUTS, V_PHI_GAIN, draw_table, value_features

    rules = RuleSet.from_strings(list(options))
    rules_array = rules.to_array()
    tab = new_luck_scratch()
    dt, hw, x = tab.draw, tab.hw, tab.x
    counts, winner = dt.counts, dt.winner
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    compared = claimed = gained = outs = ready = 0
    for k, (s, work) in enumerate(_paused_states("expert,greedy,patient", seed=12, deals=40, rules=rules, every=1)):
        n = draw_table(s, rules_array, mask, work.copy(), dt, hw)
        # every 25th state, and the first ten in which a stock card would bring someone a win
        if not (k % 25 == 0 or (ready < 10 and (winner[counts > 0] >= 0).any())):
            continue
        ready += int((winner[counts > 0] >= 0).any())
        for t in [-1] + [int(y) for y in np.flatnonzero(counts)]:
            for q in range(3):
                value_features(s, q, t, n, dt, x)
                expected = _naive_value_features(s, work, q, t, rules)
                assert np.allclose(x, expected, atol=1e-9), (t, q, np.flatnonzero(~np.isclose(x, expected)))
                compared += 1
                claimed += int(expected[V_CLAIM] > 0)
                gained += int(expected[V_PHI_GAIN] > 0)
                outs += int(expected[V_OUTS] > 0)
    assert compared > 1000 and claimed > 50 and gained > 20 and outs > 100 and ready >= 10


def test_an_adjustment_of_constant_differences_has_no_efficiency_and_says_why():
    """Two policies that score alike on every deal (learned and expert): the variance reduction,
    and so the efficiency, is undefined, whatever the CPU; the text and the report's column say
    that, not that the CPU is unknown (as the shipped report first said)."""
    import dataclasses
    import warnings

    from simkit.studies.compare import LuckTable, summarise

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = summarise(np.zeros((30, 6)), "learned", "expert", 1, 0.95, adjustment=LuckTable(np.zeros((30, 6)), "m"))
    result = dataclasses.replace(result, cpu_seconds=1.0, cpu_duplicate=0.5, cpu_per_deal_duplicate=0.01,
                                 cpu_per_deal_adjustment=0.02)
    assert math.isnan(result.efficiency)
    cpu_line = [line for line in result.text().splitlines() if "CPU:" in line][0]
    assert "undefined" in cpu_line and "not measured" not in cpu_line


def test_a_kernel_compiled_while_the_duplicate_clock_runs_leaves_its_cpu_unmeasured(tmp_path, monkeypatch):
    """Likewise for the duplicate deals: a kernel compiled while they are played (one the
    warm-up missed) drops their entry from the record, and the efficiency is not measured."""
    from simkit.runner import duplicate as duplicate_module
    from simkit.studies.compare import read_cpu_record

    calls = []
    monkeypatch.setattr(duplicate_module, "simulate", _compiling_at_call(duplicate_module.simulate, calls, 1))
    result = _cpu_run(tmp_path, "c", rng=9)
    assert len(calls) == 6
    assert "duplicate" not in read_cpu_record(tmp_path / "c")
    _not_measured(result, "while kernels compiled")

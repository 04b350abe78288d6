"""Sessions with a rotating dealer (docs/rules.md §8 ``next_dealer``): engine, ``simkit simulate
--session-length``, resume, replay, report."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from helpers import first_legal

from simkit.cli import main
from simkit.policies import register_policy, unregister_policy
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.rules import RuleSet
from simkit.runner import simulate
from simkit.runner.play import R_DEALER, R_DEALT, R_ERROR, R_WINNER, Lineup, play_deals, session_dealer
from simkit.storage import DatasetError, load_dataset, read_manifest
from simkit.storage.dataset import batch_path
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution

POLICIES = "greedy,patient,random"
SEED = 11
K = 12
DEALS = 290  # 24 whole sessions of 12 and a last session cut to 2 deals
BATCH = 96  # 8 sessions per batch: batches 0..2 of 96 deals, batch 3 of 2


def _run(path, session_length=K, **kw):
    kw.setdefault("seating", "fixed")  # seats are players: seat k plays policy k (rotation: tests/test_seating.py)
    execution = Execution(quiet=True, **{k: kw.pop(k) for k in ("workers", "backend", "scheduler") if k in kw})
    return simulate(SimulateSpec(DEALS, POLICIES, SEED, batch_size=BATCH, session_length=session_length, **kw), path,
                    execution)


def _file_bytes(path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.glob("batch-*.parquet"))}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(sessions folder, independent folder) of the same seed and deals, one worker."""
    return _run(tmp_path_factory.mktemp("sessions")), _run(tmp_path_factory.mktemp("independent"), session_length=1)


def _expected_dealers(df: pd.DataFrame, keep_after_exhausted: bool) -> np.ndarray:
    """Slow recomputation of the dealer column from the winner column."""
    winner = df["winner"].tolist()
    position = df["deal_in_session"].tolist()
    dealers = []
    for i in range(len(df)):
        if position[i] == 0:
            dealers.append(0)
        elif winner[i - 1] >= 0:
            dealers.append(winner[i - 1])
        else:
            dealers.append(dealers[-1] if keep_after_exhausted else (dealers[-1] + 1) % 3)
    return np.array(dealers)


def test_session_columns_and_manifest(runs):
    sessions, independent = runs
    df = load_dataset(sessions)
    assert df["deal_id"].tolist() == list(range(DEALS))
    assert str(df["session"].dtype) == "int64" and str(df["deal_in_session"].dtype) == "int16"
    assert (df["session"] == df["deal_id"] // K).all() and (df["deal_in_session"] == df["deal_id"] % K).all()
    assert df["session"].iloc[-1] == DEALS // K and (df["session"] == DEALS // K).sum() == DEALS % K  # cut session
    assert set(df["dealer"]) == {0, 1, 2}
    manifest = read_manifest(sessions)
    assert manifest["session_length"] == K and manifest["batch_size"] == BATCH
    # independent deals: no stored session columns (files as before sessions), derived on load
    ind = load_dataset(independent)
    assert "session" not in ind.columns and (ind["dealer"] == 0).all()
    assert read_manifest(independent)["session_length"] == 1
    # K = 1 keeps the run's identity (config digest in every file) of before sessions
    assert "session_length" not in SimulateSpec(DEALS, POLICIES, SEED).identity()
    derived = load_dataset(independent, columns=["winner", "session", "deal_in_session"])
    assert list(derived.columns) == ["winner", "session", "deal_in_session"]
    assert (derived["session"] == np.arange(DEALS)).all() and (derived["deal_in_session"] == 0).all()


@pytest.mark.parametrize("keep", [False, True], ids=["winner_else_next", "winner_else_same"])
def test_dealer_sequence_obeys_next_dealer(runs, tmp_path, keep):
    if keep:
        path = _run(tmp_path, rules=RuleSet(next_dealer="winner_else_same"))
    else:
        path = runs[0]
    df = load_dataset(path, columns=["deal_in_session", "dealer", "winner"])
    # the check means something: 穿牌 inside sessions, and dealers other than the winner rule alone gives
    later = df["deal_in_session"].to_numpy()[1:] > 0
    assert (df["winner"].to_numpy()[:-1][later] < 0).sum() >= 3
    assert np.array_equal(df["dealer"].to_numpy(), _expected_dealers(df, keep))
    assert np.array_equal(df["dealer"].to_numpy()[df["deal_in_session"].to_numpy() == 0], np.zeros(DEALS // K + 1))


def test_deal_n_has_the_same_cards_whatever_the_session_length(runs):
    ids, params, _ = policy_arrays(parse_policies(POLICIES))
    rules = RuleSet().to_array()
    ses = play_deals(DEALS, SEED, ids, params, rules, session_length=K)
    ind = play_deals(DEALS, SEED, ids, params, rules)
    assert ses[:, R_ERROR].sum() == 0 and (ind[:, R_DEALER] == 0).all()
    dealer = ses[:, R_DEALER]
    assert (dealer != 0).sum() > DEALS // 3
    for n in range(DEALS):
        a = ind[n, R_DEALT : R_DEALT + 84].reshape(3, 28)
        b = ses[n, R_DEALT : R_DEALT + 84].reshape(3, 28)
        for k in range(3):  # the k-th hand dealt (31 cards for k = 0) goes to seat dealer + k
            assert np.array_equal(b[(dealer[n] + k) % 3], a[k]), (n, k)
    # the datasets agree with the engine rows, and their dealt-hand features rotate the same way
    df_s, df_i = load_dataset(runs[0]), load_dataset(runs[1])
    assert np.array_equal(df_s["dealer"].to_numpy(), dealer) and np.array_equal(df_s["winner"].to_numpy(), ses[:, R_WINNER])
    for k in range(3):
        rotated = df_s.to_numpy()[np.arange(DEALS), [df_s.columns.get_loc(f"dealt_jiang_{(d + k) % 3}") for d in dealer]]
        assert np.array_equal(rotated.astype(int), df_i[f"dealt_jiang_{k}"].to_numpy().astype(int))
    # engine: a batch may start at any session and the result is the same; a batch must start one
    tail = play_deals(DEALS - 120, SEED, ids, params, rules, first_deal=120, session_length=K)
    assert np.array_equal(tail, ses[120:])
    with pytest.raises(ValueError, match="does not start a session"):
        play_deals(10, SEED, ids, params, rules, first_deal=5, session_length=K)
    for n in (0, 1, 13, 150, DEALS - 1):
        assert session_dealer(SEED, n, Lineup(ids, params, rules), K) == dealer[n]


@pytest.mark.parametrize("session_length", [K, 1], ids=["sessions", "independent"])
def test_bytes_identical_across_workers_and_after_resume(runs, tmp_path, monkeypatch, session_length):
    reference = _file_bytes(runs[0] if session_length == K else runs[1])
    assert len(reference) == 4
    two = _run(tmp_path / "two", session_length=session_length, workers=2)
    assert _file_bytes(two) == reference
    # crash: some batch files lost; the re-run recomputes exactly those
    resumed = _run(tmp_path / "resumed", session_length=session_length)
    for b in (1, 3):
        batch_path(resumed, b).unlink()
    with pytest.raises(DatasetError, match="batches missing"):
        load_dataset(resumed)
    _run(resumed, session_length=session_length)
    assert _file_bytes(resumed) == reference
    # interrupted while writing: whole files only, and the resume completes the same bytes
    import importlib

    sim_module = importlib.import_module("simkit.runner.simulate")
    real_write = sim_module.write_batch
    calls = {"n": 0}

    def flaky_write(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real_write(*args, **kwargs)

    monkeypatch.setattr(sim_module, "write_batch", flaky_write)
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path / "interrupted", session_length=session_length)
    monkeypatch.setattr(sim_module, "write_batch", real_write)
    assert len(_file_bytes(tmp_path / "interrupted")) == 2
    _run(tmp_path / "interrupted", session_length=session_length)
    assert _file_bytes(tmp_path / "interrupted") == reference


@pytest.mark.slow  # waits out Dask start-up and its timeouts
def test_sessions_on_a_dask_local_cluster(runs, tmp_path):
    pytest.importorskip("dask.distributed", reason="dask is part of the test extra")
    path = _run(tmp_path, backend="dask", workers=2)
    assert _file_bytes(path) == _file_bytes(runs[0])


def test_other_session_length_and_batch_rules(runs, tmp_path, capsys):
    sessions, independent = runs
    with pytest.raises(DatasetError, match="its session_length is 12, this run's is 6"):
        _run(sessions, session_length=6)
    with pytest.raises(DatasetError, match="its session_length is 1, this run's is 12"):
        _run(independent)
    # a batch size that is not a multiple of K is rounded down (at least one session)
    path = simulate(SimulateSpec(30, POLICIES, SEED, batch_size=20, session_length=K, seating="fixed"), tmp_path / "r")
    assert "batch_size 20 -> 12" in capsys.readouterr().err
    assert read_manifest(path)["batch_size"] == 12 and read_manifest(path)["batches"] == 3
    df = load_dataset(path)
    ref = load_dataset(sessions).iloc[:30]
    for col in ("dealer", "winner", "payoff_0", "session", "deal_in_session"):
        assert np.array_equal(df[col].to_numpy(), ref[col].to_numpy()), col
    assert main(["simulate", "--deals", "10", "--policies", POLICIES, "--seed", "1", "--out", str(tmp_path / "x"),
                 "--session-length", "0"]) == 2
    assert "--session-length must be in 1..32767, got 0" in capsys.readouterr().err


def test_replay_with_session_length_reproduces_the_row(runs, tmp_path):
    df = load_dataset(runs[0])
    mid = df[(df["deal_in_session"] > 0) & (df["dealer"] != 0)]
    deals = [int(mid["deal_id"].iloc[0]), int(mid["deal_id"].iloc[-1]), DEALS - 1]
    for deal in deals:
        out = tmp_path / f"deal{deal}.jsonl"
        assert main(["replay", "--seed", str(SEED), "--deal", str(deal), "--policies", POLICIES,
                     "--session-length", str(K), "--seating", "fixed", "--output", str(out)]) == 0
        events = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        head, end = events[0], events[-1]
        row = df.iloc[deal]
        assert head["dealer"] == int(row.dealer) and head["session"] == deal // K and head["deal_in_session"] == deal % K
        assert len(head["hands"][int(row.dealer)].split()) <= 28  # the dealer's 31 cards in type notation
        assert end["payoffs"] == [int(row.payoff_0), int(row.payoff_1), int(row.payoff_2)]
        assert end.get("winner", -1) == int(row.winner)
        if end["result"] == "win":
            assert end["concealed"] == row.winner_concealed and end["exposed"] == row.winner_exposed
    # without --session-length the same deal is the independent deal: seat 0 deals
    text = tmp_path / "ind.jsonl"
    assert main(["replay", "--seed", str(SEED), "--deal", str(deals[0]), "--policies", POLICIES,
                 "--seating", "fixed", "--output", str(text)]) == 0
    head = json.loads(text.read_text(encoding="utf-8").splitlines()[0])
    assert head["dealer"] == 0 and "session" not in head


def test_report_has_a_sessions_section_only_for_sessions(runs, tmp_path):
    from simkit.analysis import report as R
    from simkit.analysis.summary import first_winner_dealing, session_dealer_advantage, session_seat_results

    sessions, independent = runs
    df = load_dataset(sessions, columns=R.REPORT_COLUMNS)
    seats = session_seat_results(df)
    assert seats["dealt"].sum() == DEALS and seats["full_sessions"].iloc[0] == DEALS // K
    assert np.isclose(seats["dealt_share"].sum(), 1.0) and np.isclose(seats["win_rate"].sum(),
                                                                        (df["winner"] >= 0).mean())
    # session payoffs sum to zero over the seats (every deal's payoffs do)
    assert abs(seats["mean_session_payoff"].sum()) < 1e-9
    first = first_winner_dealing(df).set_index("measure")
    assert first.loc["deals dealt after deal 0", "first_winner"] >= 1.0  # the winner deals deal 1
    ind = load_dataset(independent, columns=R.REPORT_COLUMNS)
    adv = session_dealer_advantage(df, ind).set_index(["measure", "deals"])
    assert len(adv) == 10
    first_rows = df["deal_in_session"] == 0
    payoff = df[["payoff_0", "payoff_1", "payoff_2"]].to_numpy()
    x0 = payoff[first_rows.to_numpy(), 0] - payoff[first_rows.to_numpy(), 1:].mean(axis=1)
    assert adv.loc[("mean payoff", "sessions: first deals (seat 0 deals)"), "difference"] == pytest.approx(x0.mean())
    # the first deal of each session is the independent deal itself
    assert np.array_equal(payoff[first_rows.to_numpy()], ind[["payoff_0", "payoff_1", "payoff_2"]].to_numpy()[first_rows.to_numpy()])
    report = R.write_report(sessions, tmp_path / "s").read_text(encoding="utf-8")
    assert "## Sessions (25 sessions of 12 deals)" in report and "Does the deal stay with the winner?" in report
    assert "sessions of 12 deals (next_dealer winner_else_next)" in report
    plain = R.write_report(independent, tmp_path / "i").read_text(encoding="utf-8")
    assert "Sessions" not in plain and "session" not in plain


@pytest.mark.slow  # compiles uncached user-policy kernels (seconds each, in every process)
def test_user_policies_play_sessions():
    register_policy("first_legal_s", first_legal, params=(1.0,))
    try:
        ids, params, user = policy_arrays(parse_policies("first_legal_s,greedy,first_legal_s"))
        rules = RuleSet().to_array()
        res = play_deals(60, 3, ids, params, rules, user_functions=user, session_length=K)
        assert res[:, R_ERROR].sum() == 0
        df = pd.DataFrame({"winner": res[:, R_WINNER], "deal_in_session": np.arange(60) % K})
        assert np.array_equal(res[:, R_DEALER], _expected_dealers(df, False))
        assert session_dealer(3, 59, Lineup(ids, params, rules), K, user) == res[59, R_DEALER]
    finally:
        unregister_policy("first_legal_s")

"""``simkit simulate``: determinism across workers and Dask, resume, refusal, corruption."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from simkit.cli import main
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.replay import replay_events
from simkit.rules import RuleSet
from simkit.runner.play import R_HU, R_PAYOFF, R_UNITS, R_WINNER, SEATING_ROTATE, play_deals
import importlib

from simkit.runner import simulate
from simkit.storage import DatasetError, load_dataset
from simkit.storage.dataset import batch_path
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution

QUIET = Execution(quiet=True)

sim_module = importlib.import_module("simkit.runner.simulate")
POLICIES = "greedy,patient,random"
DEALS = 900
BATCH = 200


def _run(path, **kw):
    execution = Execution(quiet=True, **{k: kw.pop(k) for k in ("workers", "backend", "scheduler") if k in kw})
    return simulate(SimulateSpec(DEALS, POLICIES, 5, batch_size=BATCH, **kw), path, execution)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = _run(tmp_path_factory.mktemp("ref"))
    return load_dataset(path)


def test_dataset_shape_dtypes_and_content(reference):
    df = reference
    assert len(df) == DEALS and df["deal_id"].tolist() == list(range(DEALS))
    assert df["batch"].max() == (DEALS - 1) // BATCH
    # different policies: rotated by default (deal N: seat s plays policy (s + N) mod 3)
    assert isinstance(df["policy_1"].dtype, pd.CategoricalDtype)
    names = ["greedy", "patient", "random"]  # POLICIES by their plain labels (default parameters: none shown)
    for k in range(3):
        assert df[f"policy_{k}"].astype(str).tolist() == [names[(k + n) % 3] for n in range(DEALS)]
    assert (df["seating"] == df["deal_id"] % 3).all()
    assert isinstance(df["win_kind"].dtype, pd.CategoricalDtype)
    assert set(df["win_kind"].astype(str)) <= {"discard", "draw", "table", "tianhu", "none"}
    for col, dtype in (("deal_id", "int64"), ("winner", "int8"), ("hu", "Int16"), ("units", "Int16"),
                       ("lou", "Int8"), ("steps", "Int8"), ("payoff_0", "int16"),
                       ("xianggong_2", "bool"), ("pattern_qing4", "bool"), ("dealt_idle_0", "int8")):
        assert str(df[col].dtype) == dtype, col
    assert (df[["payoff_0", "payoff_1", "payoff_2"]].sum(axis=1) == 0).all()
    assert (df["winner_concealed"].isna() == (df["winner"] < 0)).all()
    for col in ("hu", "units", "lou", "steps"):  # the winner's: null on 穿牌, so a plain mean is over wins
        assert (df[col].isna() == (df["winner"] < 0)).all(), col
    # rows equal a direct batch play of the same deals
    ids, params, _ = policy_arrays(parse_policies(POLICIES))
    rows = play_deals(DEALS, 5, ids, params, RuleSet().to_array(), seating=SEATING_ROTATE)
    assert np.array_equal(df["winner"].to_numpy(), rows[:, R_WINNER])
    assert np.array_equal(df["payoff_2"].to_numpy(), rows[:, R_PAYOFF + 2])
    won = rows[:, R_WINNER] >= 0
    assert 0 < won.sum() < DEALS
    assert df["hu"].to_numpy(dtype=float, na_value=np.nan)[won].tolist() == rows[won, R_HU].tolist()
    assert df["units"].to_numpy(dtype=float, na_value=np.nan)[won].tolist() == rows[won, R_UNITS].tolist()
    # so the plain means over every deal are the play's means over its wins
    assert df["hu"].mean() == pytest.approx(rows[won, R_HU].mean())
    assert df["units"].mean() == pytest.approx(rows[won, R_UNITS].mean())


def test_a_dataset_deal_replays_exactly(reference):
    for deal in (0, 333, 899):
        end = list(replay_events(5, deal, POLICIES))[-1]
        row = reference.iloc[deal]
        assert end["payoffs"] == [int(row.payoff_0), int(row.payoff_1), int(row.payoff_2)]
        if end["result"] == "win":
            assert end["concealed"] == row.winner_concealed and end["exposed"] == row.winner_exposed


def test_same_content_with_two_workers(tmp_path, reference):
    df = load_dataset(_run(tmp_path, workers=2))
    pd.testing.assert_frame_equal(df, reference)


@pytest.mark.slow  # waits out Dask start-up and its timeouts
def test_same_content_on_a_dask_local_cluster(tmp_path, reference):
    pytest.importorskip("dask.distributed", reason="dask is part of the test extra")
    df = load_dataset(_run(tmp_path, backend="dask", workers=2))
    pd.testing.assert_frame_equal(df, reference)


def test_resume_after_interrupt_gives_the_same_dataset(tmp_path, reference, monkeypatch):
    real_write = sim_module.write_batch
    calls = {"n": 0}

    def flaky_write(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real_write(*args, **kwargs)

    monkeypatch.setattr(sim_module, "write_batch", flaky_write)
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["_manifest.json", "batch-000000.parquet", "batch-000001.parquet"]  # whole files only
    monkeypatch.setattr(sim_module, "write_batch", real_write)
    with pytest.raises(DatasetError, match="batches missing"):
        load_dataset(tmp_path)
    _run(tmp_path)
    pd.testing.assert_frame_equal(load_dataset(tmp_path), reference)


def test_other_run_in_the_folder_is_refused(tmp_path):
    _run(tmp_path)
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    with pytest.raises(DatasetError, match="its seed is 5, this run's is 6"):
        simulate(SimulateSpec(DEALS, POLICIES, 6, batch_size=BATCH), tmp_path, QUIET)
    with pytest.raises(DatasetError, match="its rules"):
        simulate(SimulateSpec(DEALS, POLICIES, 5, rules=RuleSet(tianhu=False), batch_size=BATCH), tmp_path, QUIET)
    with pytest.raises(DatasetError, match="its policies"):
        simulate(SimulateSpec(DEALS, "greedy,greedy,greedy", 5, batch_size=BATCH), tmp_path, QUIET)
    after = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    assert before == after  # nothing touched


def test_corrupt_and_foreign_batches_are_detected_and_recomputed(tmp_path, reference, capsys):
    _run(tmp_path)
    victim = batch_path(tmp_path, 2)
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])  # truncated
    foreign = batch_path(tmp_path, 3)
    pd.DataFrame({"x": [1, 2, 3]}).to_parquet(foreign)
    with pytest.raises(DatasetError):
        load_dataset(tmp_path)
    _run(tmp_path)
    err = capsys.readouterr().err
    assert "batch-000002.parquet" in err and "batch-000003.parquet" in err and "recomputing" in err
    pd.testing.assert_frame_equal(load_dataset(tmp_path), reference)


def test_load_errors_are_one_line(tmp_path):
    with pytest.raises(DatasetError, match="no such dataset folder"):
        load_dataset(tmp_path / "nope")
    with pytest.raises(DatasetError, match="not a simkit dataset"):
        load_dataset(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"kind": "other"}))  # the name before schema version 2
    with pytest.raises(DatasetError, match="not a simkit simulation manifest"):
        load_dataset(tmp_path)
    (tmp_path / "manifest.json").unlink()
    (tmp_path / "_manifest.json").write_text(json.dumps({"kind": "other"}))
    with pytest.raises(DatasetError, match="_manifest.json: not a simkit simulation manifest"):
        load_dataset(tmp_path)


def test_cli_simulate_and_bad_input(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["simulate", "--deals", "50", "--policies", "greedy,random,random", "--seed", "1",
                 "--out", str(out), "--batch-size", "20", "--quiet"]) == 0
    assert len(load_dataset(out, columns=["winner"])) == 50
    assert main(["simulate", "--deals", "50", "--policies", "greedy,nobody,random", "--seed", "1",
                 "--out", str(tmp_path / "x")]) == 2
    assert "unknown policy 'nobody'" in capsys.readouterr().err
    assert main(["simulate", "--deals", "0", "--policies", "greedy,random,random", "--seed", "1",
                 "--out", str(tmp_path / "y")]) == 2


def test_report_and_demo_main_job(tmp_path, capsys):
    from PIL import Image  # matplotlib depends on pillow

    from simkit.analysis import exhausted_rate, hu_distribution, win_rates

    assert main(["demo", "--out", str(tmp_path), "--deals", "600"]) == 0
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| 0 | rotated: greedy / patient / random |" in report and "穿牌" in report
    assert "rotated seats" in report and "confounded with seat" not in report  # the demo rotates by default
    for name in ("hu_distribution", "win_rate_by_seat"):
        assert Image.open(tmp_path / f"{name}.png").size[0] > 300
        assert (tmp_path / f"{name}.svg").read_text().lstrip().startswith("<?xml")
    df = load_dataset(tmp_path / "dataset")
    rates = win_rates(df)
    assert rates["wins"].sum() + round(exhausted_rate(df).estimate * len(df)) == len(df)
    # recounted from the winner column; the intervals are Wilson's 95 % (statsmodels' implementation)
    from statsmodels.stats.proportion import proportion_confint

    for seat in range(3):
        wins = int((df["winner"] == seat).sum())
        row = rates.set_index("seat").loc[seat]
        assert row["wins"] == wins and row["win_rate"] == pytest.approx(wins / len(df))
        lo, hi = proportion_confint(wins, len(df), alpha=0.05, method="wilson")
        assert (row["win_rate_lo"], row["win_rate_hi"]) == pytest.approx((lo, hi), abs=1e-9)
    assert hu_distribution(df).wins == rates["wins"].sum()
    assert (tmp_path / "dealt_hands" / "report.md").exists()

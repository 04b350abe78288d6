"""Seating (issue 12 §2): ``simkit simulate --seating fixed|rotate|all`` keeps policy and seat
apart.  Rotation and all six seatings are per-deal permutations inside the kernels: the cards
and the seats' random streams of deal N are unchanged, so a row is the deal N of a fixed-seat
run of the policies as seated; the summaries flag in the same row any figure that mixes seat
and policy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import first_legal

from simkit.analysis.report import write_report
from simkit.analysis.summary import (
    dealer_advantage,
    dealer_advantage_by_policy,
    seat_balance,
    win_rates,
    win_rates_by_policy,
)
from simkit.cli import main
from simkit.experiment.spec import ExperimentError, parse_experiment
from simkit.policies import register_policy, unregister_policy
from simkit.policies.registry import parse_policies, policy_arrays
from simkit.replay import replay_events
from simkit.rules import RuleSet
from simkit.runner import simulate
from simkit.runner.play import (
    PERMUTATIONS,
    R_DEALER,
    R_PAYOFF,
    R_WINNER,
    SEATING_ALL,
    SEATING_ROTATE,
    play_deals,
)
from simkit.storage import DatasetError, load_dataset, read_manifest
from simkit.storage.dataset import MANIFEST, batch_path
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution

QUIET = Execution(quiet=True)

MIXED = "greedy,patient,random"
NAMES = ["greedy", "patient", "random"]  # MIXED by the plain labels its datasets hold
SEED = 21
RULES = RuleSet().to_array()


def _ids(policies: str = MIXED):
    ids, params, _ = policy_arrays(parse_policies(policies))
    return ids, params


def _fixed_rows(j: int, deals: int, session_length: int = 1) -> np.ndarray:
    """Deals 0..deals-1 with fixed seats under seating j: seat s plays NAMES[PERMUTATIONS[j, s]]."""
    ids, params = _ids()
    return play_deals(deals, SEED, ids[PERMUTATIONS[j]], params[PERMUTATIONS[j]], RULES,
                      session_length=session_length)


def _files(path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.glob("batch-*.parquet"))}


@pytest.fixture(scope="module")
def rotated(tmp_path_factory):
    return simulate(SimulateSpec(60, MIXED, SEED, batch_size=25), tmp_path_factory.mktemp("rot") / "d", QUIET)


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    return simulate(SimulateSpec(60, MIXED, SEED, batch_size=25, seating="fixed"), tmp_path_factory.mktemp("fix") / "d",
                    QUIET)


def test_rotation_is_the_default_and_permutes_policies_per_deal(rotated):
    df = load_dataset(rotated)
    assert read_manifest(rotated)["seating"] == "rotate"
    n = df["deal_id"].to_numpy()
    for k in range(3):  # deal N: seat s plays policy (s + N) mod 3
        assert df[f"policy_{k}"].astype(str).tolist() == [NAMES[(k + int(d)) % 3] for d in n]
    assert (df["seating"] == n % 3).all() and str(df["seating"].dtype) == "int8"
    assert (df["dealer"] == 0).all()  # seat 0 deals; the policy at seat 0 changes
    # each row is deal N of a fixed-seat run of the policies as seated (same cards, the seat's stream)
    for j in range(3):
        rows = _fixed_rows(j, 60)
        mine = np.flatnonzero(n % 3 == j)
        assert np.array_equal(df["winner"].to_numpy()[mine], rows[mine, R_WINNER])
        for k in range(3):
            assert np.array_equal(df[f"payoff_{k}"].to_numpy()[mine], rows[mine, R_PAYOFF + k])


def test_dealt_hands_do_not_depend_on_the_seating(rotated, fixed):
    a = load_dataset(rotated, columns=[f"dealt_{x}_{k}" for x in ("jiang", "idle") for k in range(3)])
    b = load_dataset(fixed, columns=list(a.columns))
    pd.testing.assert_frame_equal(a, b)


def test_equal_policies_default_to_fixed_and_rotation_changes_nothing(tmp_path):
    same = "greedy,greedy,greedy"
    default = simulate(SimulateSpec(40, same, SEED, batch_size=15), tmp_path / "default", QUIET)
    explicit = simulate(SimulateSpec(40, same, SEED, batch_size=15, seating="fixed"), tmp_path / "fixed", QUIET)
    assert read_manifest(default)["seating"] == "fixed"
    assert "seating" not in SimulateSpec(40, same, SEED, batch_size=15).identity()
    assert _files(default) == _files(explicit)  # byte for byte: fixed adds nothing to the identity or rows
    assert "seating" not in pd.read_parquet(default).columns
    # rotating three equal policies plays exactly the same deals (streams belong to seats)
    rotated = simulate(SimulateSpec(40, same, SEED, batch_size=15, seating="rotate"), tmp_path / "rot", QUIET)
    a, b = load_dataset(default), load_dataset(rotated)
    assert (b["seating"] == b["deal_id"] % 3).all()
    pd.testing.assert_frame_equal(a, b.drop(columns=["seating"]))


def test_all_plays_every_deal_under_the_six_seatings(tmp_path):
    path = simulate(SimulateSpec(20, MIXED, SEED, batch_size=8, seating="all"), tmp_path / "all", QUIET)
    df = load_dataset(path)
    assert len(df) == 120 and read_manifest(path)["batches"] == 3
    assert (df["deal_id"] == np.repeat(np.arange(20), 6)).all() and (df["seating"] == np.tile(np.arange(6), 20)).all()
    pd.testing.assert_frame_equal(pd.read_parquet(path), df)
    for j in range(6):
        rows = _fixed_rows(j, 20)
        sub = df[df["seating"] == j]
        for k in range(3):
            assert (sub[f"policy_{k}"].astype(str) == NAMES[PERMUTATIONS[j, k]]).all()
            assert np.array_equal(sub[f"payoff_{k}"].to_numpy(), rows[:, R_PAYOFF + k])
        assert np.array_equal(sub["winner"].to_numpy(), rows[:, R_WINNER])
    # a finished dataset resumes as it is: its files (six rows per deal) are verified, not recomputed
    files = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in path.glob("*.parquet")}
    simulate(SimulateSpec(20, MIXED, SEED, batch_size=8, seating="all"), path, QUIET)
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in path.glob("*.parquet")} == files
    # every policy sits at every seat once in each of two seatings of each deal: exactly balanced
    balance = seat_balance(df)
    assert np.allclose(balance[["seat_0_share", "seat_1_share", "seat_2_share"]].to_numpy(), 1 / 3)
    assert not balance["confounded"].any()
    # the same rows whatever the batch size (deal ids, seatings and the rows are per deal)
    other = load_dataset(simulate(SimulateSpec(20, MIXED, SEED, batch_size=7, seating="all"), tmp_path / "all7", QUIET))
    pd.testing.assert_frame_equal(other.drop(columns=["batch"]), df.drop(columns=["batch"]))
    # six rows per deal: the intervals are clustered by deal (same estimates as rows read as deals)
    naive = win_rates_by_policy(df.drop(columns=["deal_id"])).set_index("policy")
    clustered = win_rates_by_policy(df).set_index("policy")
    assert clustered["mean_payoff"].tolist() == pytest.approx(naive["mean_payoff"].tolist())
    assert clustered["win_rate"].tolist() == pytest.approx(naive["win_rate"].tolist())
    assert not np.allclose(clustered["mean_payoff_lo"], naive["mean_payoff_lo"])


def test_a_batch_of_all_with_missing_seatings_is_refused(tmp_path):

    path = simulate(SimulateSpec(10, MIXED, SEED, batch_size=5, seating="all"), tmp_path / "all", QUIET)
    manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    manifest.pop("files")
    manifest.pop("manifest_sha256")  # a dataset without hashes: only the content checks can see it
    (path / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    victim = batch_path(path, 1)
    table = pq.read_table(victim)
    seating = table.column("seating").to_numpy().copy()
    seating[[0, 1]] = seating[[1, 0]]  # two rows of deal 5 swapped: seatings 1, 0, 2, ...
    table = table.set_column(table.schema.get_field_index("seating"), "seating", pa.array(seating))
    pq.write_table(table, victim, compression="zstd", write_page_checksum=True)
    with pytest.raises(DatasetError, match="batch-000001.parquet: its seatings are not 0..5"):
        load_dataset(path, columns=["winner"])


def test_rotation_in_sessions_is_per_session(tmp_path):
    k = 4
    path = simulate(SimulateSpec(26, MIXED, SEED, batch_size=8, session_length=k), tmp_path / "s", QUIET)
    df = load_dataset(path)
    assert (df["seating"] == (df["deal_id"] // k) % 3).all()
    assert (df.groupby("session")["policy_0"].nunique() == 1).all()  # a session keeps its seats
    for j in range(3):
        rows = _fixed_rows(j, 26, session_length=k)
        mine = np.flatnonzero(df["seating"].to_numpy() == j)
        assert np.array_equal(df["dealer"].to_numpy()[mine], rows[mine, R_DEALER])
        assert np.array_equal(df["winner"].to_numpy()[mine], rows[mine, R_WINNER])
    # all six seatings of sessions: each seating's chain of dealers is its own
    every = load_dataset(simulate(SimulateSpec(26, MIXED, SEED, batch_size=8, session_length=k, seating="all"),
                                  tmp_path / "a", QUIET))
    for j in range(6):
        sub = every[every["seating"] == j]
        rows = _fixed_rows(j, 26, session_length=k)
        assert np.array_equal(sub["dealer"].to_numpy(), rows[:, R_DEALER])
        assert np.array_equal(sub["payoff_1"].to_numpy(), rows[:, R_PAYOFF + 1])


def test_another_seating_is_refused_and_part_of_the_digest(rotated, tmp_path, capsys):
    before = {p.name: p.read_bytes() for p in rotated.iterdir()}
    rc = main(["simulate", "--deals", "60", "--policies", MIXED, "--seed", str(SEED), "--batch-size", "25",
               "--out", str(rotated), "--seating", "fixed", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "its seating is 'rotate', this run's is 'fixed' (resume it with seating='rotate', or use another folder " \
           "for --out)" in err[0]
    assert {p.name: p.read_bytes() for p in rotated.iterdir()} == before
    specs = parse_policies(MIXED)
    digests = {s: SimulateSpec(60, specs, SEED, batch_size=25, seating=s).identity() for s in ("rotate", "all")}
    assert digests["rotate"]["seating"] == "rotate" and digests["all"] != digests["rotate"]
    # an edited seating is an edited manifest
    copy = tmp_path / "copy"
    copy.mkdir()
    for name, data in before.items():
        (copy / name).write_bytes(data)
    manifest = json.loads((copy / MANIFEST).read_text(encoding="utf-8"))
    manifest["seating"] = "all"
    (copy / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(DatasetError, match="edited or damaged"):
        load_dataset(copy)
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--deals", "6", "--policies", MIXED, "--seed", "1", "--out", str(tmp_path / "x"),
              "--seating", "sideways"])
    assert info.value.code == 2 and not (tmp_path / "x").exists()
    assert "invalid choice: 'sideways'" in capsys.readouterr().err


def test_summaries_flag_a_confounded_figure_in_its_row(rotated, fixed, tmp_path):
    by_policy = win_rates_by_policy(fixed).set_index("policy")
    assert by_policy["confounded"].all()
    assert by_policy.loc["greedy", "dealt_share"] == 1.0 and by_policy.loc["random", "dealt_share"] == 0.0
    assert dealer_advantage(fixed)["confounded"].all() and win_rates(fixed)["confounded"].all()
    per_policy = dealer_advantage_by_policy(fixed).set_index(["policy", "measure"])
    assert per_policy.loc[("greedy", "win rate"), "note"].startswith("always deals")
    assert np.isnan(per_policy.loc[("random", "mean payoff"), "difference"])
    # rotated: like with like, no flag; each policy deals a third of its seat-deals
    rot = win_rates_by_policy(rotated)
    assert not rot["confounded"].any() and np.allclose(rot["dealt_share"], 1 / 3)
    assert not dealer_advantage(rotated)["confounded"].any() and not win_rates(rotated)["confounded"].any()
    rows = dealer_advantage_by_policy(rotated)
    assert (rows["dealing_n"] == 20).all() and (rows["not_dealing_n"] == 40).all() and (rows["note"] == "").all()
    df = load_dataset(rotated)
    greedy = np.stack([df[f"policy_{k}"].astype(str) == "greedy" for k in range(3)], axis=1)
    deals = greedy[:, 0]  # greedy sits at seat 0, the dealer's
    won = np.where(greedy, np.arange(3)[None, :] == df["winner"].to_numpy()[:, None], False).any(axis=1)
    expected = won[deals].mean() - won[~deals].mean()
    assert rows.set_index(["policy", "measure"]).loc[("greedy", "win rate"), "difference"] == pytest.approx(expected)
    # the report says so in the same row
    text = write_report(fixed, tmp_path / "fixed").read_text(encoding="utf-8")
    flagged = [line for line in text.splitlines() if "confounded with seat" in line]
    assert any(line.startswith("| greedy |") for line in flagged) and any(line.startswith("| win rate |")
                                                                          for line in flagged)
    assert "fixed seats (seat k plays policy k)" in text
    text = write_report(rotated, tmp_path / "rot").read_text(encoding="utf-8")
    assert "confounded with seat**" not in text and "rotated seats" in text and "Dealer advantage per policy" in text


def test_replay_reproduces_rotated_and_all_rows(rotated, tmp_path):
    df = load_dataset(rotated)
    for deal in (1, 2, 59):
        end = list(replay_events(SEED, deal, MIXED))[-1]  # simulate's default seating: rotate
        row = df.iloc[deal]
        assert end["payoffs"] == [int(row.payoff_0), int(row.payoff_1), int(row.payoff_2)]
        head = next(iter(replay_events(SEED, deal, MIXED)))
        assert head["policies"] == [str(p).split(":")[0] for p in (row.policy_0, row.policy_1, row.policy_2)]
    path = simulate(SimulateSpec(4, MIXED, SEED, batch_size=4, seating="all"), tmp_path / "all", QUIET)
    every = load_dataset(path)
    for j in (0, 4):
        out = tmp_path / f"r{j}.jsonl"
        assert main(["replay", "--seed", str(SEED), "--deal", "3", "--policies", MIXED, "--seating", "all",
                     "--seating-index", str(j), "--output", str(out)]) == 0
        end = json.loads(out.read_text(encoding="utf-8").splitlines()[-1])
        row = every[(every["deal_id"] == 3) & (every["seating"] == j)].iloc[0]
        assert end["payoffs"] == [int(row.payoff_0), int(row.payoff_1), int(row.payoff_2)]
    assert main(["replay", "--seed", "1", "--deal", "0", "--policies", MIXED, "--seating-index", "3"]) == 2


@pytest.mark.slow  # compiles uncached user-policy kernels (seconds each, in every process)
def test_user_policies_rotate_with_the_built_in_ones():
    """The user-kernel factory sees the permutation too: a user policy follows its rotation."""
    register_policy("first_legal_seat", first_legal)
    try:
        specs = parse_policies("first_legal_seat,greedy,random")
        ids, params, user = policy_arrays(specs)
        rows = play_deals(30, SEED, ids, params, RULES, user_functions=user, seating=SEATING_ROTATE)
        every = play_deals(5, SEED, ids, params, RULES, user_functions=user, seating=SEATING_ALL)
        assert every.shape[0] == 30
        for j in range(3):
            seated = [specs[int(k)] for k in PERMUTATIONS[j]]
            sids, sparams, suser = policy_arrays(seated)
            ref = play_deals(30, SEED, sids, sparams, RULES, user_functions=suser)
            assert np.array_equal(rows[j::3, R_PAYOFF:R_PAYOFF + 3], ref[j::3, R_PAYOFF:R_PAYOFF + 3])
            assert np.array_equal(every[j::6, R_WINNER], ref[:5, R_WINNER])
    finally:
        unregister_policy("first_legal_seat")


def test_experiment_entries_take_a_seating():
    spec = parse_experiment('name = "x"\n[[simulation]]\npolicies = "greedy,patient,random"\ndeals = 9\n'
                            'seating = "rotate"\n[[simulation]]\nlabel = "f"\npolicies = "greedy,patient,random"\n'
                            'deals = 9\n')
    assert spec.simulations[0].seating == "rotate" and spec.simulations[1].seating is None
    with pytest.raises(ExperimentError, match="'seating' must be fixed, rotate or all"):
        parse_experiment('name = "x"\n[[simulation]]\npolicies = "greedy,greedy,greedy"\ndeals = 9\n'
                         'seating = "sideways"\n')
    text = (Path(__file__).resolve().parent.parent / "experiments" / "policy_comparison.toml").read_text(encoding="utf-8")
    mixed = [s for s in parse_experiment(text).simulations if s.policies == "greedy,patient,random"]
    assert mixed and all(s.seating in ("rotate", None) for s in mixed)

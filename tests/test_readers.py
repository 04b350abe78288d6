"""Datasets other tools read directly (issue 12 §4): the manifest is ``_manifest.json`` (and the
lock and temporary files start with ``.``), so ``pd.read_parquet(folder)``, polars and duckdb
read a dataset folder; the winner's hu / units / 楼 / 步 are null on 穿牌 (nullable ints); datasets
written before (``manifest.json``, schema version 1, -1 / 0 there) are still read the same way
and resumed in their own format."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from simkit.analysis.report import plain_policy_columns
from simkit.analysis.summary import distributions, tail_probabilities
from simkit.evaluator import evaluate
from simkit.policies.registry import label_of_text
from simkit.runner import simulate
from simkit.storage import DatasetError, load_dataset, read_manifest
from simkit.storage.dataset import KIND, LEGACY_MANIFEST, MANIFEST, WINNER_COLUMNS, batch_path, config_digest
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution

QUIET = Execution(quiet=True)

MIXED = "greedy,patient,random"
SEED = 4
DEALS = 90
BATCH = 40


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    return simulate(SimulateSpec(DEALS, MIXED, SEED, batch_size=BATCH), tmp_path_factory.mktemp("fresh") / "d", QUIET)


def test_folder_holds_the_batches_and_an_underscore_manifest(fresh):
    names = sorted(p.name for p in fresh.iterdir())
    assert names == [MANIFEST, "batch-000000.parquet", "batch-000001.parquet", "batch-000002.parquet"]
    assert MANIFEST == "_manifest.json" and read_manifest(fresh)["schema_version"] == 2


@pytest.mark.parametrize("kind", ["rotate", "fixed", "all", "sessions"])
def test_pandas_reads_the_folder_as_load_dataset_does(fresh, tmp_path, kind):
    if kind == "rotate":
        path = fresh
    else:
        extra = {"fixed": {"seating": "fixed"}, "all": {"seating": "all"}, "sessions": {"session_length": 5}}[kind]
        path = simulate(SimulateSpec(30, MIXED, SEED, batch_size=10, **extra), tmp_path / kind, QUIET)
    frame = load_dataset(path)
    direct = pd.read_parquet(path)
    pd.testing.assert_frame_equal(direct, frame)  # same rows, same dtypes (nullable ints, categories)
    for column, dtype in WINNER_COLUMNS.items():
        assert str(direct[column].dtype) == dtype
    # a subset of columns reads the same too
    cols = ["deal_id", "winner", "hu", "policy_0"]
    pd.testing.assert_frame_equal(pd.read_parquet(path, columns=cols), load_dataset(path, columns=cols))


def test_nulls_on_chuanpai_make_plain_means_right(fresh):
    """A plain mean of a winner column over every deal, as pandas / polars / duckdb take it, is
    the true mean over the won deals: checked against values recounted without the winner
    columns (the winner's stored final holding scored again by the evaluator; its units are also
    half the winner's payoff, 2U), with the won deals told apart by the payoffs (穿牌 pays 0)."""
    df = pd.read_parquet(fresh)
    payoffs = df[["payoff_0", "payoff_1", "payoff_2"]].to_numpy()
    won = payoffs.max(axis=1) > 0
    assert won.any() and (~won).any()
    assert ((df["winner"] >= 0).to_numpy() == won).all()
    for column in WINNER_COLUMNS:
        assert (df[column].isna().to_numpy() == ~won).all(), column
    truth = pd.DataFrame([
        {"hu": e.hu, "units": e.units, "lou": e.lou, "steps": e.steps}
        for e in (evaluate(c, x) for c, x in zip(df["winner_concealed"][won], df["winner_exposed"][won]))])
    assert (truth["units"].to_numpy() == payoffs[won].max(axis=1) // 2).all()
    for column in WINNER_COLUMNS:
        assert df[column].mean() == pytest.approx(truth[column].mean()), column
    # the summaries agree with the recount
    dist = distributions(fresh).set_index("column")
    assert dist.loc["hu", "mean"] == pytest.approx(truth["hu"].mean()) and dist.loc["hu", "n"] == won.sum()
    assert tail_probabilities(fresh)["wins"].iloc[0] == won.sum()


def _comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """Values only (categories as text, nullable ints as floats with NaN), for other readers."""
    out = pd.DataFrame(index=range(len(frame)))
    for column in frame.columns:
        values = frame[column]
        if isinstance(values.dtype, pd.CategoricalDtype) or values.dtype == object or str(values.dtype) == "str":
            out[column] = values.astype(object).where(values.notna(), None).astype(str)
        else:
            out[column] = pd.to_numeric(values).astype(float).to_numpy()
    return out


def test_duckdb_reads_the_same_rows(fresh):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    got = con.execute(f"SELECT * FROM read_parquet('{fresh}/*.parquet') ORDER BY deal_id").df()
    expected = load_dataset(fresh)
    assert list(got.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(_comparable(got), _comparable(expected))
    nulls = con.execute(f"SELECT count(*) FROM read_parquet('{fresh}/*.parquet') WHERE hu IS NULL").fetchall()
    assert nulls[0][0] == int((expected["winner"] < 0).sum())


def test_polars_reads_the_same_rows(fresh):
    pl = pytest.importorskip("polars")
    got = pl.read_parquet(f"{fresh}/*.parquet").sort("deal_id")
    expected = load_dataset(fresh)
    assert got.columns == list(expected.columns)
    assert got["hu"].null_count() == int((expected["winner"] < 0).sum())
    pd.testing.assert_frame_equal(_comparable(got.to_pandas()), _comparable(expected))


# -- datasets written before schema version 2 --------------------------------------------------


def _legacy_dataset(path):
    """A dataset as simkit wrote it before schema version 2: ``manifest.json``, version 1 (the
    winner columns -1 / 0 on 穿牌, no pandas metadata), fixed seats.  Written by resuming a
    version-1 manifest, which simkit continues in that format."""
    config = SimulateSpec(DEALS, MIXED, SEED, batch_size=BATCH, seating="fixed", schema_version=1)
    identity = config.identity()
    assert identity["schema_version"] == 1 and "seating" not in identity
    path.mkdir(parents=True)
    manifest = {"kind": KIND, **identity, "session_length": 1, "config_digest": config_digest(identity),
                "batches": config.n_batches, "simkit_version": "0.0-legacy"}
    (path / LEGACY_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    simulate(SimulateSpec(DEALS, MIXED, SEED, batch_size=BATCH, seating="fixed"), path, QUIET)
    return path


def test_a_legacy_dataset_reads_with_nulls_and_resumes_in_its_own_format(tmp_path):
    legacy = _legacy_dataset(tmp_path / "legacy")
    assert sorted(p.name for p in legacy.iterdir())[-1] == LEGACY_MANIFEST and not (legacy / MANIFEST).exists()
    assert read_manifest(legacy)["schema_version"] == 1 and "seating" not in read_manifest(legacy)
    raw = pq.read_table(batch_path(legacy, 0)).to_pandas()  # as stored: -1 / 0, no nulls
    assert raw["hu"].dtype == np.int16 and (raw.loc[raw["winner"] < 0, "hu"] == -1).all()
    # read: nulls on 穿牌, the same frame as a fresh run of the same deals with fixed seats
    fresh = simulate(SimulateSpec(DEALS, MIXED, SEED, batch_size=BATCH, seating="fixed"), tmp_path / "fresh", QUIET)
    old, new = load_dataset(legacy), load_dataset(fresh)
    # its policy columns hold the positional texts of before plain labels; the report's reader relabels them
    assert set(old["policy_1"].astype(str)) == {"patient:2,6,1"} and set(new["policy_1"].astype(str)) == {"patient"}
    pd.testing.assert_frame_equal(plain_policy_columns(old, label_of_text), new)
    pd.testing.assert_frame_equal(load_dataset(legacy, columns=["units", "lou"]),
                                  load_dataset(fresh, columns=["units", "lou"]))
    # resume: a lost batch is recomputed in version 1, under manifest.json, byte for byte
    files = {p.name: p.read_bytes() for p in sorted(legacy.glob("batch-*.parquet"))}
    batch_path(legacy, 1).unlink()
    simulate(SimulateSpec(DEALS, MIXED, SEED, batch_size=BATCH, seating="fixed"), legacy, QUIET)
    assert {p.name: p.read_bytes() for p in sorted(legacy.glob("batch-*.parquet"))} == files
    assert not (legacy / MANIFEST).exists()
    # resuming it with the new default seating (rotate for different policies) is refused in one line
    with pytest.raises(DatasetError, match="its seating is 'fixed', this run's is 'rotate'"):
        simulate(SimulateSpec(DEALS, MIXED, SEED, batch_size=BATCH), legacy, QUIET)
    # a lost manifest is rebuilt from the version-1 batch files
    (legacy / LEGACY_MANIFEST).unlink()
    simulate(SimulateSpec(DEALS, MIXED, SEED, batch_size=BATCH, seating="fixed"), legacy, QUIET)
    assert read_manifest(legacy)["schema_version"] == 1
    pd.testing.assert_frame_equal(plain_policy_columns(load_dataset(legacy), label_of_text), new)


def test_two_manifests_and_future_versions_are_refused(fresh, tmp_path):
    both = tmp_path / "both"
    shutil.copytree(fresh, both)
    shutil.copyfile(both / MANIFEST, both / LEGACY_MANIFEST)
    with pytest.raises(DatasetError, match="also holds manifest.json"):
        load_dataset(both)
    future = tmp_path / "future"
    shutil.copytree(fresh, future)
    manifest = json.loads((future / MANIFEST).read_text(encoding="utf-8"))
    manifest["schema_version"] = 9
    manifest.pop("manifest_sha256")
    (future / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(DatasetError, match="schema_version is 9; this simkit reads versions 1, 2"):
        load_dataset(future)

"""Plain policy labels (issue 40, item 4): a policy with its default parameters is named plainly
(``expert``) in dataset columns, tournament ladders and crosstables, reports and comparisons;
parameters appear only where they differ from the defaults; manifests and identity files keep
the full parameter vector.  A dataset started before plain labels keeps its own (positional)
column values when resumed, so a folder never mixes the two, and its report reads plainly."""

from __future__ import annotations

import importlib
import json

import pandas as pd
import pytest

from simkit.analysis.report import write_report
from simkit.policies.registry import (
    PolicySpec,
    effective_params,
    label_of_text,
    params_by_name,
    parse_policy,
    policy_label,
)
from simkit.runner import simulate
from simkit.storage import load_dataset, read_manifest
from simkit.storage.dataset import MANIFEST, POLICY_LABELS, write_manifest
from simkit.studies.compare import compare, load_comparison
from simkit.studies.tournament import TOURNAMENT_FILE, run_tournament, write_tournament_report
from simkit.specs.simulate import SimulateSpec
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec
from simkit.specs.tournament import TournamentSpec

QUIET = Execution(quiet=True)

spec_module = importlib.import_module("simkit.specs.simulate")  # where a run's policy column labels are made


def _full_text(text: str) -> str:
    spec = parse_policy(text)
    return PolicySpec(spec.name, effective_params(spec)).text()


# ---- the one label function ----------------------------------------------------------------


@pytest.mark.parametrize("text, label", [
    ("expert", "expert"),
    ("greedy", "greedy"),
    ("search", "search"),
    ("mc", "mc"),
    ("patient:2,6,1", "patient"),  # the defaults given by position: still plain
    ("patient:3,6,1", "patient:min_units=3"),
    ("patient:peng_slack=2:min_units=3", "patient:min_units=3:peng_slack=2"),  # the policy's order
    ("expert:danger=20", "expert:danger=20"),
    ("mc:16,4", "mc:rollouts=16"),
    ("mc:rollouts=2", "mc:rollouts=2"),
    ("search:rollouts=2", "search:rollouts=2"),  # a preset: its own defaults, not mc's
    ("simkit.bench:greedy_by_import", "simkit.bench:greedy_by_import"),
    ("simkit.bench:greedy_by_import:1", "simkit.bench:greedy_by_import:p0=1"),
])
def test_a_label_names_only_the_parameters_that_differ(text, label):
    spec = parse_policy(text)
    assert policy_label(spec) == label
    assert policy_label(text) == label
    # the full vector labels the same, and the label is an equivalent spec
    full = PolicySpec(spec.name, effective_params(spec))
    assert policy_label(full) == label
    assert effective_params(parse_policy(label)) == effective_params(spec)
    assert label_of_text(full.text()) == label


def test_a_recorded_text_is_labelled_without_importing_anything():
    assert label_of_text("no_such_module_xyz:policy:1,2") == "no_such_module_xyz:policy:p0=1:p1=2"  # not imported
    assert label_of_text("learned:no/such/model.npz") == "learned:no/such/model.npz"
    assert label_of_text("learned") == "learned"  # an old record of the former built-in: its text, no error


# ---- datasets --------------------------------------------------------------------------------


def test_default_expert_is_plain_in_the_dataset_and_full_in_the_manifest(tmp_path):
    path = simulate(SimulateSpec(6, "expert,expert,expert", 3, batch_size=3), tmp_path / "d", QUIET)
    df = load_dataset(path)
    for k in range(3):
        assert set(df[f"policy_{k}"].astype(str)) == {"expert"}
    assert len(df[df.policy_0 == "expert"]) == 6
    manifest = read_manifest(path)
    assert manifest["policies"] == [_full_text("expert")] * 3  # the full vector, by position
    assert manifest["policies"][0].startswith("expert:57.6,")
    assert manifest["policy_params"] == [params_by_name(parse_policy("expert"))] * 3
    assert manifest[POLICY_LABELS] == ["expert"] * 3
    # the Parquet files read directly hold the plain label too
    assert set(pd.read_parquet(path)["policy_0"].astype(str)) == {"expert"}


def test_a_non_default_parameter_shows_alone(tmp_path):
    path = simulate(SimulateSpec(6, "expert:danger=20,greedy,greedy", 3, batch_size=3), tmp_path / "d", QUIET)
    df = load_dataset(path)
    held = set(df.policy_0.astype(str)) | set(df.policy_1.astype(str)) | set(df.policy_2.astype(str))
    assert held == {"expert:danger=20", "greedy"}  # rotated seats: each column holds both
    manifest = read_manifest(path)
    assert manifest["policies"][0] == _full_text("expert:danger=20")
    assert manifest["policy_params"][0]["danger"] == 20.0


def _old_style(path):
    """Make ``path``'s dataset one written before plain labels: positional texts in the policy
    columns, no ``policy_labels`` in the manifest."""
    manifest = read_manifest(path)
    manifest.pop(POLICY_LABELS)
    write_manifest(path, manifest)


def test_an_old_dataset_resumes_in_its_own_labels_and_reports_plainly(tmp_path, monkeypatch):
    out = tmp_path / "old"
    full = lambda spec: PolicySpec(spec.name, effective_params(spec)).text()  # noqa: E731 - the labels of before
    with monkeypatch.context() as m:
        m.setattr(spec_module, "policy_label", full)
        simulate(SimulateSpec(6, "expert,expert,expert", 5, batch_size=3), out, QUIET, max_batches=1)
    _old_style(out)
    long = _full_text("expert")
    assert set(load_dataset(out, batches=1).policy_0.astype(str)) == {long}
    simulate(SimulateSpec(6, "expert,expert,expert", 5, batch_size=3), out, QUIET)  # resumed: batch 1 written now
    df = load_dataset(out)
    assert len(df) == 6 and set(df.policy_0.astype(str)) == {long}  # one form in the whole folder
    assert POLICY_LABELS not in read_manifest(out)
    report = write_report(out, tmp_path / "report", policy_label=label_of_text).read_text(encoding="utf-8")
    assert "57.6" not in report and "| expert |" in report

    # batch files adopted without their manifest keep their labels too
    (out / MANIFEST).unlink()
    simulate(SimulateSpec(6, "expert,expert,expert", 5, batch_size=3), out, QUIET)
    assert read_manifest(out)[POLICY_LABELS] == [long] * 3
    assert set(load_dataset(out).policy_0.astype(str)) == {long}


# ---- tournaments and comparisons ---------------------------------------------------------------


def test_tournament_labels_are_plain_and_its_identity_keeps_the_vectors(tmp_path):
    out = tmp_path / "t"
    result = run_tournament(TournamentSpec(["expert", "greedy", "patient:min_units=3"], deals=4, seed=2, batch_size=4,
                                           resamples=50), out, Execution(quiet=True))
    labels = ["expert", "greedy", "patient:min_units=3"]
    assert list(result.policies) == labels
    assert set(result.ladder()["policy"]) == set(labels)
    cross = result.crosstable()
    assert list(cross.index) == labels and list(cross.columns) == labels
    assert set(result.gaps()["better"]) | set(result.gaps()["worse"]) <= set(labels)
    identity = json.loads((out / TOURNAMENT_FILE).read_text(encoding="utf-8"))
    assert identity["policies"][0] == _full_text("expert")
    assert identity["policy_params"][0] == params_by_name(parse_policy("expert"))
    report = write_tournament_report(result, out).read_text(encoding="utf-8")
    assert "57.6" not in report and "expert:" not in report and "| expert |" in report.replace("`", "")


def test_a_comparison_names_its_policies_plainly(tmp_path):
    result = compare(CompareSpec("patient:3,6,1", "greedy", deals=4, seed=1, batch_size=4), tmp_path / "c",
                     Execution(quiet=True))
    assert (result.policy_a, result.policy_b) == ("patient:min_units=3", "greedy")
    again = load_comparison(tmp_path / "c")
    assert (again.policy_a, again.policy_b) == ("patient:min_units=3", "greedy")
    stored = json.loads((tmp_path / "c" / "comparison.json").read_text(encoding="utf-8"))
    assert stored["policy_a"] == "patient:3,6,1"

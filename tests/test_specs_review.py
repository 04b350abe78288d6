"""The run specs of ``review``, ``calibrate`` and ``analyze`` (issue 53 item 1): frozen, validated,
each default declared once; a calibration's identity is the one the old code stored, so the
folders it wrote are reused; the review's JSON and the analysis are what the old code gave.

The literal identities below and the files under tests/data/old_calibration/ were written by
the code before the specs (commit 7a6833d: ``simkit.experiment.run._calibration_identity``, and
``simkit experiment run tests/data/old_calibration/experiment.toml``); tests/data/old_review.json
and tests/data/old_analysis.json are what ``simkit review`` and ``simkit analyze`` printed there
(the commands in :func:`test_the_review_json_is_the_old_codes` and
:func:`test_the_analysis_is_the_old_codes`).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from simkit.errors import SimkitError
from simkit.experiment import run as experiment_run
from simkit.experiment.spec import CalibrationEntry, load_experiment
from simkit.policies.registry import PolicySpec, parse_policy, policy_label
from simkit.rules import RuleSet
from simkit.specs.analyze import AnalyzeSpec
from simkit.specs.base import Execution
from simkit.specs.calibrate import CalibrateSpec
from simkit.specs.review import ReviewSpec
from simkit.studies.headline import played_like_table, settings_identity
from simkit.studies.reference import Calibration

DATA = Path(__file__).resolve().parent / "data"
OLD_CALIBRATIONS = DATA / "old_calibration"

_DEFAULT_RULES = {"lou_doubles": True, "hu_tolerance": 2, "jiang_in_chariot": False, "pattern_wins": True,
                  "steps_count_lou": False, "drawn_card_chow_by": "drawer", "pass_locks_type": True, "must_kong": True,
                  "must_chariot_out": True, "tianhu": True, "next_dealer": "winner_else_next",
                  "zhan_in_chariot": False, "single_jiang_cap": 0, "drawn_jiang_chow": True, "pass_locks_win": True}

# written by the old code (7a6833d) for the two [[calibration]] entries of old_calibration/experiment.toml
OLD_IDENTITIES = [
    {"policy": "patient:3,6,1", "reference": "greedy", "seat": 2, "deals": 2, "seed": 77, "first_deal": 1,
     "samples": 3, "rules": dict(_DEFAULT_RULES, hu_tolerance=1), "confidence": 0.95},
    {"policy": "random",
     "reference": "expert:57.6,13.4,0.78,95.9,22.5,88.3,1.4,1.78,6.04,13.7,0.67,0.43,1,0,54.2,1.08",
     "seat": 1, "deals": 2, "seed": 77, "first_deal": 0, "samples": 2, "rules": _DEFAULT_RULES, "confidence": 0.95},
]
OLD_FOLDERS = ["cal-0-patient_min_units_3-vs-greedy", "cal-1-random-vs-expert"]


# ---------------------------------------------------------------------------- calibrate: identity


def test_a_calibrations_identity_is_the_one_the_old_code_stored():
    """The spec's identity equals, key for key and value for value, what the old hand-built
    identity held for the same calibration (policies with every parameter, rules as a mapping,
    the level).  Catches a renamed key, a policy stored as typed, rules in another form."""
    first = CalibrateSpec("patient:min_units=3", reference="greedy", seat=2, deals=2, seed=77, first_deal=1,
                          samples=3, rules=RuleSet.from_strings(["hu_tolerance=1"]))
    second = CalibrateSpec("random", deals=2, seed=77, samples=2)
    assert [first.identity(), second.identity()] == OLD_IDENTITIES
    assert [list(s.identity()) for s in (first, second)] == [list(i) for i in OLD_IDENTITIES]  # the same order
    for name, identity in zip(OLD_FOLDERS, OLD_IDENTITIES):  # the files themselves
        assert json.loads((OLD_CALIBRATIONS / name / "identity.json").read_text(encoding="utf-8")) == identity


def test_an_experiments_entries_become_the_specs_of_their_stored_identities():
    """The experiment builds each entry's spec (its level the run's): the identities the old code
    wrote for the file; a changed level is another calibration.  An entry's keys are the spec's
    fields but the level (the experiment's)."""
    spec = load_experiment(OLD_CALIBRATIONS / "experiment.toml")
    built = [experiment_run._calibration_spec(entry, 0.95) for entry in spec.calibrations]
    assert [b.identity() for b in built] == OLD_IDENTITIES
    assert experiment_run._calibration_spec(spec.calibrations[1], 0.9).identity() != OLD_IDENTITIES[1]
    entry_fields = {f.name for f in dataclasses.fields(CalibrationEntry)}
    assert entry_fields | {"confidence"} == set(CalibrateSpec.field_names())


def test_an_old_calibration_folder_is_read_back_not_played_again(tmp_path, monkeypatch):
    """The folders the old code wrote (identity.json, calibration.json) are reused by the new
    code: no calibration runs, and the report's rows are the stored ones (CPU figures included,
    which a new run would not reproduce)."""
    data = tmp_path / "data"
    for name in OLD_FOLDERS:
        shutil.copytree(OLD_CALIBRATIONS / name, data / name)

    def played_again(*args, **kwargs):
        raise AssertionError("a stored calibration was played again")

    monkeypatch.setattr(experiment_run, "calibrate", played_again)
    spec = load_experiment(OLD_CALIBRATIONS / "experiment.toml")
    for i, (entry, name) in enumerate(zip(spec.calibrations, OLD_FOLDERS)):
        result = experiment_run._calibration(entry, data / name, experiment_run._Steps(
            None, data, data, Execution(quiet=True), 0.95))
        stored = Calibration.from_dict(json.loads((data / name / "calibration.json").read_text(encoding="utf-8")))
        assert result.to_dict() == stored.to_dict() and result.cpu_played.tolist() == stored.cpu_played.tolist()
    report = experiment_run.run_experiment(OLD_CALIBRATIONS / "experiment.toml", reports=tmp_path / "reports",
                                           data=data, execution=Execution(quiet=True))
    assert "| random | expert | 1 | 77 | 2 | +0.500 [-5.853, +6.853] |" in report.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------- the specs' checks


@pytest.mark.parametrize(("make", "field_name"), [
    (lambda: CalibrateSpec("random", deals=1), "deals"),
    (lambda: CalibrateSpec("random", seat=3), "seat"),
    (lambda: CalibrateSpec("random", samples=1), "samples"),
    (lambda: CalibrateSpec("random", first_deal=-1), "first_deal"),
    (lambda: CalibrateSpec("random", confidence=1.0), "confidence"),
    (lambda: CalibrateSpec("random", rules=3), "rules"),
    (lambda: CalibrateSpec("random", reference=7), "reference"),
    (lambda: ReviewSpec(seat=True), "seat"),
    (lambda: ReviewSpec(seat=1, rollouts=0), "rollouts"),
    (lambda: ReviewSpec(seat=1, seed=-1), "seed"),
    (lambda: ReviewSpec(seat=1, samples=1), "samples"),
    (lambda: ReviewSpec(seat=1, belief_noise=1.5), "belief_noise"),
    (lambda: ReviewSpec(seat=1, luck=3), "luck"),
    (lambda: ReviewSpec(seat=1, luck=""), "luck"),
    (lambda: AnalyzeSpec(batch=0), "batch"),
    (lambda: AnalyzeSpec(sharpen=-1), "sharpen"),
    (lambda: AnalyzeSpec(tolerance=-0.1), "tolerance"),
    (lambda: AnalyzeSpec(tolerance=float("inf")), "tolerance"),
    (lambda: AnalyzeSpec(race=1), "race"),
    (lambda: AnalyzeSpec(confirm="yes"), "confirm"),
    (lambda: AnalyzeSpec(actions=[1.5]), "actions"),
    (lambda: AnalyzeSpec(actions=5), "actions"),
    (lambda: AnalyzeSpec(first=-1), "first"),
    (lambda: AnalyzeSpec(confidence=0.0), "confidence"),
])
def test_a_bad_setting_is_one_line_naming_it(make, field_name):
    with pytest.raises(SimkitError) as info:
        make()
    message = str(info.value)
    assert "\n" not in message and message.startswith(field_name), message


def test_the_specs_normalise_their_fields():
    import numpy as np

    spec = ReviewSpec(seat=np.int64(2), policy="patient:min_units=3", reference="greedy", confidence=0.9)
    assert type(spec.seat) is int and spec.seat == 2
    assert isinstance(spec.policy, PolicySpec) and policy_label(spec.policy) == "patient:min_units=3"
    assert spec.reference == parse_policy("greedy") and ReviewSpec(seat=0, reference=None).reference is None
    analysis = spec.analysis(seed=5, first=40)  # each decision's analysis: the review's settings, its own key
    assert (analysis.policy, analysis.rollouts, analysis.confidence, analysis.sharpen, analysis.belief) == (
        spec.policy, spec.rollouts, 0.9, spec.sharpen, spec.belief)
    assert (analysis.seed, analysis.first, analysis.race, analysis.confirm) == (5, 40, True, True)
    assert AnalyzeSpec(actions=[np.int64(3), 1]).actions == (3, 1)
    assert CalibrateSpec("random", rules={"hu_tolerance": 1}).rules == RuleSet.from_strings(["hu_tolerance=1"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.seat = 1


def test_the_library_refuses_what_it_cannot_run(tmp_path):
    from simkit.engine.position import parse_position
    from simkit.studies.analyze import analyze_position
    from simkit.studies.reference import calibrate

    position = parse_position("seat=1; dealer=0; turn=claim; hand=YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*2; "
                              "card=RJ; source=discard; from=0; stock=21")
    with pytest.raises(SimkitError, match="an analysis runs in this process: backend must be local"):
        analyze_position(position, AnalyzeSpec(rollouts=1), Execution(backend="dask"))
    with pytest.raises(SimkitError, match="spec must be a CalibrateSpec"):
        calibrate("random")
    with pytest.raises(SimkitError, match="backend must be local"):
        calibrate(CalibrateSpec("random", deals=2), Execution(backend="dask"))


def test_the_headlines_table_of_the_bots_matches_the_reviews_defaults():
    """The shipped table of the bots is reviewed under settings_identity(reference, samples,
    default rules); with the review's default reference and stock orders a review's headline
    compares with it (a default changed in the spec alone would silently drop the comparison)."""
    defaults = ReviewSpec(seat=1)
    table = played_like_table()
    assert table is not None
    assert table["settings"] == settings_identity(policy_label(defaults.reference), defaults.samples, True) == {
        "reference": "expert", "samples": 64, "rules": "default"}


# ---------------------------------------------------------------------------- the results, as the old code's


def _old_log() -> list[str]:
    from simkit.replay import replay_jsonl

    return replay_jsonl(11, 2, "expert,greedy,patient").splitlines()


def test_the_review_json_is_the_old_codes(tmp_path, capsys):
    """``simkit review LOG --seat 1 --rollouts 32 --seed 1 --samples 8 --json --quiet`` prints
    what the old code printed (tests/data/old_review.json), and the library's call of the spec
    gives the same review."""
    from simkit.cli import main
    from simkit.studies.review import parse_decision_log, review_decisions, review_log_against_reference

    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(_old_log()) + "\n", encoding="utf-8")
    old = json.loads((DATA / "old_review.json").read_text(encoding="utf-8"))
    assert main(["review", str(log), "--seat", "1", "--rollouts", "32", "--seed", "1", "--samples", "8", "--json",
                 "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out) == old
    spec = ReviewSpec(seat=1, rollouts=32, seed=1, samples=8)
    review = review_decisions(parse_decision_log(_old_log()), spec, Execution(quiet=True))
    review = dataclasses.replace(review, reference=review_log_against_reference(log, spec))
    assert json.loads(review.to_json()) == old


def test_the_analysis_is_the_old_codes(capsys):
    """``simkit analyze --log LOG --at 4 --rollouts 128 --seed 3 --no-race --no-confirm
    --tolerance 0.1 --batch 32 --sharpen 5 --json`` (every setting away from its default, the
    inverted flags too) prints what the old code printed (tests/data/old_analysis.json)."""
    from simkit.replay import log_decisions
    from simkit.studies.analyze import analyze_position

    position = log_decisions(_old_log())[4].position
    spec = AnalyzeSpec(rollouts=128, seed=3, race=False, confirm=False, tolerance=0.1, batch=32, sharpen=5)
    old = json.loads((DATA / "old_analysis.json").read_text(encoding="utf-8"))
    assert json.loads(analyze_position(position, spec, Execution(workers=2)).to_json()) == old


# ---------------------------------------------------------------------------- each check's words and edges

@pytest.mark.parametrize(("make", "words", "field_name"), [
    (lambda: ReviewSpec(seat=3), "seat must be 0, 1 or 2, got 3", "seat"),
    (lambda: ReviewSpec(seat=1, reference=7), "reference must be a policy name, got 7", "reference"),
    (lambda: AnalyzeSpec(actions=5), "actions must be a sequence of action ids, got 5", "actions"),
    (lambda: AnalyzeSpec(actions=[3, 1.5]), "actions must be a sequence of action ids, got 1.5 among them", "actions"),
    (lambda: AnalyzeSpec(luck=3), "luck must be true, false, a value-model file's path or a loaded value model, "
                                  "got 3", "luck"),
    (lambda: AnalyzeSpec(belief_noise=-0.1), "belief_noise must be a finite number with 0.0 <= belief_noise <= 1.0, "
                                             "got -0.1", "belief_noise"),
    (lambda: AnalyzeSpec(sharpen=-1), "sharpen must be a whole number >= 0, got -1", "sharpen"),
])
def test_a_bad_setting_is_refused_in_its_own_words_naming_its_field(make, words, field_name):
    with pytest.raises(SimkitError) as info:
        make()
    assert (str(info.value), info.value.parameters) == (words, (field_name,))


class _BlockOnly:
    def block(self):
        return None


class _DescribeOnly:
    def describe(self):
        return "a model"


class _LoadedModel(_BlockOnly, _DescribeOnly):
    pass


class _DescribeNotCallable(_BlockOnly):
    describe = "a model"


def test_a_loaded_value_model_needs_both_block_and_a_callable_describe():
    """The layer tells a loaded model by its duck type; half of it is not a model."""
    model = _LoadedModel()
    assert AnalyzeSpec(luck=model).luck is model
    for half in (_BlockOnly(), _DescribeOnly(), _DescribeNotCallable()):
        with pytest.raises(SimkitError) as info:
            AnalyzeSpec(luck=half)
        assert info.value.parameters == ("luck",) and str(info.value).startswith("luck must be true, false")


def test_the_rollout_settings_edges_are_kept():
    """The fewest stock orders a review takes, no sharpening, no belief noise."""
    spec = ReviewSpec(seat=0, samples=2, sharpen=0, belief_noise=0.0)
    assert (spec.samples, spec.sharpen, spec.belief_noise) == (2, 0, 0.0)
    assert AnalyzeSpec(sharpen=0, belief_noise=1.0).belief_noise == 1.0

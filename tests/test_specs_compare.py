"""The comparison's and the tournament's specs (simkit.specs.compare, simkit.specs.tournament):
their identities are what folders written before specs hold (so those folders resume), and
their fields are validated before any work.

The OLD_* texts are the identity files simkit wrote at commit 7a6833d (before specs) for the
runs named beside them: ``run_duplicate(...)`` and ``run_tournament(...)`` of that commit, their
content pasted on one line each (digest included); :func:`_as_written` gives the file's bytes
(``write_json``: indented by 2, a final newline)."""

from __future__ import annotations

import dataclasses
import json
import types

import numpy as np
import pytest

from simkit.errors import SimkitError
from simkit.experiment.spec import ComparisonEntry, TournamentEntry
from simkit.rules import RuleSet
from simkit.specs.base import Execution
from simkit.specs.compare import CompareSpec, DuplicateSpec
from simkit.specs.tournament import TournamentSpec
from simkit.storage.files import write_checked_json

# run_duplicate("greedy", "random", 20, 3, out, batch_size=10) at 7a6833d
OLD_COMPARISON = '{"kind": "simkit.duplicate", "policy_a": "greedy", "policy_b": "random", "seed": 3, "deals": 20, "batch_size": 10, "rules": {"lou_doubles": true, "hu_tolerance": 2, "jiang_in_chariot": false, "pattern_wins": true, "steps_count_lou": false, "drawn_card_chow_by": "drawer", "pass_locks_type": true, "must_kong": true, "must_chariot_out": true, "tianhu": true, "next_dealer": "winner_else_next", "zhan_in_chariot": false, "single_jiang_cap": 0, "drawn_jiang_chow": true, "pass_locks_win": true}, "seatings": ["ABB", "BAB", "BBA", "AAB", "ABA", "BAA"], "design": "six", "policy_a_params": {}, "policy_b_params": {}, "content_sha256": "7f749afd22b62afd6f2adaa00e592263a3fa920985543f074e1a75566663c536"}'

# run_duplicate("patient:3,6,1", "expert", 30, 12345, out, batch_size=7,
#               rules=RuleSet.from_strings(["lou_doubles=off"]), design="pairs") at 7a6833d
OLD_COMPARISON_PAIRS = '{"kind": "simkit.duplicate", "policy_a": "patient:3,6,1", "policy_b": "expert:57.6,13.4,0.78,95.9,22.5,88.3,1.4,1.78,6.04,13.7,0.67,0.43,1,0,54.2,1.08", "seed": 12345, "deals": 30, "batch_size": 7, "rules": {"lou_doubles": false, "hu_tolerance": 2, "jiang_in_chariot": false, "pattern_wins": true, "steps_count_lou": false, "drawn_card_chow_by": "drawer", "pass_locks_type": true, "must_kong": true, "must_chariot_out": true, "tianhu": true, "next_dealer": "winner_else_next", "zhan_in_chariot": false, "single_jiang_cap": 0, "drawn_jiang_chow": true, "pass_locks_win": true}, "seatings": ["ABB", "BAB", "BBA", "AAB", "ABA", "BAA"], "design": "pairs", "policy_a_params": {"min_units": 3.0, "late_stock": 6.0, "peng_slack": 1.0}, "policy_b_params": {"idle": 57.6, "outs_peng": 13.4, "outs_chow": 0.78, "hu": 95.9, "pair": 22.5, "zi": 88.3, "fat": 1.4, "partner": 1.78, "prospect": 6.04, "danger": 13.7, "danger_chow": 0.67, "danger_feed": 0.43, "min_units": 1.0, "late_stock": 0.0, "claim_hu": 54.2, "danger_late": 1.08}, "content_sha256": "cf8892fcc0981f02178b5f3a180d53f28ebff5ef6b8abf991e09a53b8be93ca7"}'

# run_tournament(["random", "greedy", "patient"], out, deals=40, seed=1, batch_size=20) at 7a6833d
OLD_TOURNAMENT = '{"kind": "simkit.tournament", "policies": ["random", "greedy", "patient:2,6,1"], "deals": 40, "seed": 1, "rules": {"lou_doubles": true, "hu_tolerance": 2, "jiang_in_chariot": false, "pattern_wins": true, "steps_count_lou": false, "drawn_card_chow_by": "drawer", "pass_locks_type": true, "must_kong": true, "must_chariot_out": true, "tianhu": true, "next_dealer": "winner_else_next", "zhan_in_chariot": false, "single_jiang_cap": 0, "drawn_jiang_chow": true, "pass_locks_win": true}, "batch_size": 20, "sprt": null, "design": "six", "policy_params": [{}, {}, {"min_units": 2.0, "late_stock": 6.0, "peng_slack": 1.0}], "content_sha256": "9e4cfe9326b53bba99dc976465103a99f10afd754420384d5548dbb122856ae8"}'

# run_tournament(["expert", "patient:min_units=3"], out, deals=500, seed=7, batch_size=50, sprt=(0.2, 0.05, 0.1),
#                rules=RuleSet.from_strings(["lou_doubles=off"]), design="pairs") at 7a6833d
OLD_TOURNAMENT_SPRT = '{"kind": "simkit.tournament", "policies": ["expert:57.6,13.4,0.78,95.9,22.5,88.3,1.4,1.78,6.04,13.7,0.67,0.43,1,0,54.2,1.08", "patient:3,6,1"], "deals": 500, "seed": 7, "rules": {"lou_doubles": false, "hu_tolerance": 2, "jiang_in_chariot": false, "pattern_wins": true, "steps_count_lou": false, "drawn_card_chow_by": "drawer", "pass_locks_type": true, "must_kong": true, "must_chariot_out": true, "tianhu": true, "next_dealer": "winner_else_next", "zhan_in_chariot": false, "single_jiang_cap": 0, "drawn_jiang_chow": true, "pass_locks_win": true}, "batch_size": 50, "sprt": [0.2, 0.05, 0.1], "design": "pairs", "policy_params": [{"idle": 57.6, "outs_peng": 13.4, "outs_chow": 0.78, "hu": 95.9, "pair": 22.5, "zi": 88.3, "fat": 1.4, "partner": 1.78, "prospect": 6.04, "danger": 13.7, "danger_chow": 0.67, "danger_feed": 0.43, "min_units": 1.0, "late_stock": 0.0, "claim_hu": 54.2, "danger_late": 1.08}, {"min_units": 3.0, "late_stock": 6.0, "peng_slack": 1.0}], "content_sha256": "33463fb8f91e39f98f93ec4e9e71e74af8b281f554f515c6e33365ccae92369a"}'

RECORDED = ("policy_a_params", "policy_b_params", "policy_params", "content_sha256")  # written, not compared
NO_LOU = RuleSet.from_strings(["lou_doubles=off"])


def _as_written(text: str) -> str:
    """An identity file's text as simkit writes it (simkit.storage.files.write_json)."""
    return json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"


def _compared(text: str) -> dict:
    return {k: v for k, v in json.loads(text).items() if k not in RECORDED}


@pytest.mark.parametrize("old, spec", [
    (OLD_COMPARISON, CompareSpec("greedy", "random", deals=20, seed=3, batch_size=10)),
    (OLD_COMPARISON, DuplicateSpec("greedy", "random", deals=20, seed=3, batch_size=10)),
    (OLD_COMPARISON_PAIRS, CompareSpec("patient:3,6,1", "expert", deals=30, seed=12345, batch_size=7, rules=NO_LOU,
                                       design="pairs")),
    (OLD_TOURNAMENT, TournamentSpec(["random", "greedy", "patient"], deals=40, seed=1, batch_size=20)),
    (OLD_TOURNAMENT_SPRT, TournamentSpec(["expert", "patient:min_units=3"], deals=500, seed=7, batch_size=50,
                                         sprt=(0.2, 0.05, 0.1), rules=NO_LOU, design="pairs")),
])
def test_the_identity_is_what_the_old_code_wrote(old, spec):
    """Same keys in the same order (the file's bytes, and the first differing field a refusal
    names), same values; and what is not played (confidence, luck, resamples...) is not in it."""
    identity = spec.identity()
    assert list(identity.items()) == list(_compared(old).items())
    if isinstance(spec, (CompareSpec, TournamentSpec)):
        assert spec.replace(confidence=0.9, burn_in=500).identity() == identity
    assert spec.replace(seed=99).identity() != identity


def test_the_old_digest_is_the_new_files(tmp_path):
    """Written by the new code with its recorded fields, each old identity file is byte for byte
    the old one (its digest included)."""
    for old in (OLD_COMPARISON, OLD_COMPARISON_PAIRS, OLD_TOURNAMENT, OLD_TOURNAMENT_SPRT):
        data = json.loads(old)
        path = tmp_path / "identity.json"
        write_checked_json(path, {k: v for k, v in data.items() if k != "content_sha256"})
        assert path.read_text(encoding="utf-8") == _as_written(old)


def _compare(spec, out):
    from simkit.studies.compare import compare

    return compare(spec, out, Execution(quiet=True)).per_seating


def _tournament(spec, out):
    from simkit.studies.tournament import run_tournament

    return run_tournament(spec, out, Execution(quiet=True)).payoff_ratings


@pytest.mark.parametrize("run, spec, name, old, change, refusal", [
    (_compare, CompareSpec("greedy", "random", deals=20, seed=3, batch_size=10), "comparison.json", OLD_COMPARISON,
     {"seed": 4}, "its seed is 3, this run's is 4"),
    (_tournament, TournamentSpec(["random", "greedy", "patient"], deals=40, seed=1, batch_size=20, resamples=50),
     "tournament.json", OLD_TOURNAMENT, {"deals": 60}, "its deals is 40, this run's is 60"),
])
def test_an_old_folder_resumes_and_a_new_one_writes_the_old_file(tmp_path, run, spec, name, old, change, refusal):
    """A folder holding the identity file the old code wrote is this run's: it resumes (the file
    read, not rewritten) to the figures a new folder gives, whose file is the old one byte for
    byte; another run is refused naming the field."""
    fresh = run(spec, tmp_path / "new")
    assert (tmp_path / "new" / name).read_text(encoding="utf-8") == _as_written(old)
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / name).write_text(_as_written(old), encoding="utf-8")
    np.testing.assert_array_equal(run(spec, folder), fresh)
    assert (folder / name).read_text(encoding="utf-8") == _as_written(old)
    with pytest.raises(SimkitError, match=refusal):
        run(spec.replace(**change), folder)


@pytest.mark.parametrize("changes, field_name", [
    ({"deals": 1}, "deals"), ({"deals": 2.5}, "deals"), ({"seed": -1}, "seed"), ({"batch_size": 0}, "batch_size"),
    ({"confidence": 1.0}, "confidence"), ({"confidence": "x"}, "confidence"), ({"burn_in": 1}, "burn_in"),
    ({"sprt": (0.0, 0.05, 0.05)}, "sprt"), ({"sprt": (0.2, 0.6, 0.5)}, "sprt"), ({"sprt": (0.2, 0.05)}, "sprt"),
    ({"design": "trio"}, "design"), ({"variance_reduction": "cuped"}, "variance_reduction"),
    ({"luck": 3}, "luck"), ({"policy_a": 3}, "policy_a"),
])
def test_a_bad_comparison_field_is_one_line_naming_it(changes, field_name):
    with pytest.raises(SimkitError) as info:
        CompareSpec(**{"policy_a": "greedy", "policy_b": "random", **changes})
    assert str(info.value).startswith(field_name) and "\n" not in str(info.value)


@pytest.mark.parametrize("changes, words", [
    ({"policies": ["greedy"]}, "a tournament needs 2 or more policies, got 1"),
    ({"policies": "greedy,random"}, "policies must be a list"),
    ({"policies": ["greedy", "greedy"]}, "a tournament's policies must differ"),
    ({"deals": 1}, "deals must be a whole number >= 2"), ({"resamples": 0}, "resamples"),
    ({"prior_draws": -0.5}, "prior_draws"), ({"sprt": (0.2, 0.05, 0.95)}, "sprt"),
    ({"luck": True, "design": "pairs"}, "design 'pairs'"),
])
def test_a_bad_tournament_field_is_one_line(changes, words):
    with pytest.raises(SimkitError, match=words.replace("(", r"\(")) as info:
        TournamentSpec(**{"policies": ["greedy", "random"], **changes})
    assert "\n" not in str(info.value)


def test_the_comparison_normalises_its_adjustment():
    assert CompareSpec("greedy", "random").variance_reduction == "none"
    assert CompareSpec("greedy", "random", luck=False).luck is None
    spec = CompareSpec("greedy", "random", luck="m.npz", sprt=[0.2, 0.05, 0.05], deals=np.int64(30))
    assert (spec.variance_reduction, spec.luck, spec.sprt, type(spec.deals)) == ("luck", "m.npz", (0.2, 0.05, 0.05), int)
    assert CompareSpec("greedy", "random", variance_reduction="regression").regression
    for kwargs, words in [({"variance_reduction": "none", "luck": True}, "goes with variance_reduction 'luck'"),
                          ({"variance_reduction": "regression", "sprt": (0.2, 0.05, 0.05)}, "sequential"),
                          ({"variance_reduction": "regression", "design": "pairs"}, "design 'pairs'")]:
        with pytest.raises(SimkitError, match=words):
            CompareSpec("greedy", "random", **kwargs)


def _refusal(**changes) -> SimkitError:
    with pytest.raises(SimkitError) as info:
        CompareSpec(**{"policy_a": "greedy", "policy_b": "random", **changes})
    return info.value


def test_design_pairs_refuses_each_adjustment_in_its_own_words():
    """The message names what adjusts (a value model, or the method by name) and the two
    fields a front end should point at; design 'six' takes both, 'pairs' takes none."""
    luck = _refusal(design="pairs", luck=True)
    assert str(luck) == ("design 'pairs' plays each pair of seatings on deals of its own, and a value model (luck) "
                         "adjusts the six seatings of one deal: use design 'six' for an adjusted comparison")
    assert luck.parameters == ("design", "variance_reduction")
    regression = _refusal(design="pairs", variance_reduction="regression")
    assert "and 'regression' adjusts the six seatings of one deal" in str(regression)
    assert regression.parameters == ("design", "variance_reduction")
    assert CompareSpec("greedy", "random", design="pairs").variance_reduction == "none"
    assert CompareSpec("greedy", "random", design="six", variance_reduction="regression").regression


def test_the_adjustments_that_do_not_go_together_name_both_fields():
    with_model = _refusal(luck="m.npz", variance_reduction="regression")
    assert str(with_model) == "a value model (luck) goes with variance_reduction 'luck', got 'regression'"
    assert with_model.parameters == ("luck", "variance_reduction")
    with_test = _refusal(variance_reduction="regression", sprt=(0.2, 0.05, 0.05))
    assert str(with_test) == ("variance_reduction 'regression' fits on every deal of the comparison, so not with a "
                              "sequential test (sprt): use 'none' or 'luck'")
    assert with_test.parameters == ("variance_reduction", "sprt")
    # 'luck' without a model means the shipped one
    assert CompareSpec("greedy", "random", variance_reduction="luck").luck is True
    assert CompareSpec("greedy", "random", variance_reduction="luck", luck="m.npz").luck == "m.npz"


@pytest.mark.parametrize("sprt", [(0.0, 0.05, 0.05), (0.2, 0.0, 0.05), (0.2, 0.05, 0.0), (0.2, 0.5, 0.5),
                                  (True, 0.05, 0.05), (float("nan"), 0.05, 0.05), (0.2, 0.05), ("0.2", 0.05, 0.05)])
def test_an_sprt_outside_walds_bounds_is_refused(sprt):
    """Each bound of (delta, alpha, beta): a zero delta, an error rate of 0 or with alpha + beta
    = 1, a bool, NaN, two numbers or a text; the message names the field."""
    error = _refusal(sprt=sprt)
    assert str(error).startswith("sprt must be (delta, alpha, beta)") and error.parameters == ("sprt",)


def test_the_sprts_edges_inside_the_bounds_are_kept_as_floats():
    assert CompareSpec("greedy", "random", sprt=(-1, 0.01, 0.98)).sprt == (-1.0, 0.01, 0.98)


def test_luck_takes_a_loaded_model_and_refuses_an_object_that_is_not_one():
    from simkit.runner.value_model import load_value_model

    model = load_value_model()
    assert CompareSpec("greedy", "random", luck=model).luck is model
    for not_a_model in (types.SimpleNamespace(block=model.block), types.SimpleNamespace(digest=model.digest), 1.5):
        error = _refusal(luck=not_a_model)
        assert str(error).startswith("luck must be true, false, a value-model file's path or 'playouts:K'")
        assert error.parameters == ("luck",)


def test_the_comparisons_numeric_edges():
    """deals 2 and burn_in 2 are the least accepted, confidence is open at both ends, a seed
    is >= 0, and a policy that is not a name is refused naming its side."""
    spec = CompareSpec("greedy", "random", deals=2, burn_in=2, confidence=0.5)
    assert (spec.deals, spec.burn_in) == (2, 2)
    for confidence in (0.0, 1.0):
        assert _refusal(confidence=confidence).parameters == ("confidence",)
    assert _refusal(deals=1).parameters == ("deals",)
    assert _refusal(burn_in=1).parameters == ("burn_in",)
    assert _refusal(seed=-1).parameters == ("seed",)
    for side in ("policy_a", "policy_b"):
        error = _refusal(**{side: 3})
        assert (str(error), error.parameters) == (f"{side} must be a policy name, got 3", (side,))


def _tournament_refusal(**changes) -> SimkitError:
    with pytest.raises(SimkitError) as info:
        TournamentSpec(**{"policies": ["greedy", "random"], **changes})
    return info.value


def test_the_tournaments_checks_in_their_words_and_edges():
    """Each refusal names its field (a front end turns it into its flag), the least accepted
    values are accepted, and confidence is open at both ends."""
    not_a_list = _tournament_refusal(policies="greedy,random")
    assert (str(not_a_list), not_a_list.parameters) == (
        "policies must be a list of policies, got 'greedy,random'", ("policies",))
    not_a_name = _tournament_refusal(policies=["greedy", 3])
    assert (str(not_a_name), not_a_name.parameters) == ("policies must be a policy name, got 3", ("policies",))
    assert str(_tournament_refusal(policies=["greedy", "random", "greedy"])) == (
        "a tournament's policies must differ, got greedy, random, greedy")
    for confidence in (0.0, 1.0, 1.5):
        assert _tournament_refusal(confidence=confidence).parameters == ("confidence",)
    assert _tournament_refusal(burn_in=1).parameters == ("burn_in",)
    assert _tournament_refusal(seed=-1).parameters == ("seed",)
    spec = TournamentSpec(["greedy", "random"], burn_in=2, prior_draws=0.5, confidence=0.999, deals=2)
    assert (spec.burn_in, spec.prior_draws, spec.confidence, spec.deals) == (2, 0.5, 0.999, 2)


def test_a_tournaments_rules_and_design_reach_every_pairing():
    rules = {"lou_doubles": False}
    spec = TournamentSpec(["greedy", "random", "patient"], rules=rules, design="pairs")
    assert spec.rules == RuleSet.from_strings(["lou_doubles=off"])
    pairing = spec.pairing(0, 2)
    assert (pairing.rules, pairing.design) == (spec.rules, "pairs")
    assert pairing.identity()["rules"]["lou_doubles"] is False


def test_a_pairing_is_the_comparison_of_its_two_policies():
    spec = TournamentSpec(["random", "greedy", "patient"], deals=40, seed=1, batch_size=20, sprt=(0.2, 0.05, 0.05),
                          luck=True, burn_in=30, confidence=0.9)
    pairing = spec.pairing(1, 2)
    assert pairing == CompareSpec("greedy", "patient", deals=40, seed=1, batch_size=20, sprt=(0.2, 0.05, 0.05),
                                  luck=True, burn_in=30, confidence=0.9)
    assert pairing.variance_reduction == "luck"


@pytest.mark.parametrize("entry, spec, renamed", [
    (ComparisonEntry, CompareSpec, {"a": "policy_a", "b": "policy_b"}),
    (TournamentEntry, TournamentSpec, {}),
])
def test_every_experiment_key_is_a_spec_field(entry, spec, renamed):
    """An experiment file's [[comparison]] and [tournament] keys (the entries' fields) are the
    spec's fields (simkit.experiment.run builds the spec from them)."""
    keys = [renamed.get(f.name, f.name) for f in dataclasses.fields(entry)]
    assert [key for key in keys if key not in spec.field_names()] == []

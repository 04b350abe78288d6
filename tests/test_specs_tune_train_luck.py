"""The run specs of ``simkit tune``, ``simkit train`` and ``simkit luck-model`` (issue 53):
every bad field a one-line error naming it before any work, normalised values, ``replace``
validating again.  Their identities against what the old code wrote are checked in
tests/test_tuning.py and tests/test_training.py, their defaults against the command line's in
tests/test_cli_defaults.py."""

from __future__ import annotations

import pytest

from simkit import defaults as D
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec
from simkit.rules import RuleSet
from simkit.specs.luck_model import LuckModelSpec
from simkit.specs.train import TrainSpec
from simkit.specs.tune import ParameterRange, SpsaSettings, TuneSpec

TUNE = dict(policy="patient:6", params={"min_units": (1, 8)}, against="greedy,random", budget=6_000)


@pytest.mark.parametrize("kind, changes, name", [
    (TuneSpec, {"budget": 0}, "budget"), (TuneSpec, {"budget": 10}, "budget"), (TuneSpec, {"seed": -1}, "seed"),
    (TuneSpec, {"iteration_deals": 1}, "iteration_deals"), (TuneSpec, {"validate_deals": 1}, "validate_deals"),
    (TuneSpec, {"batch_size": 0}, "batch_size"), (TuneSpec, {"confidence": 1.0}, "confidence"),
    (TuneSpec, {"tail": 0}, "tail"), (TuneSpec, {"tail": 1.5}, "tail"), (TuneSpec, {"spsa": {"c": 0.9}}, "spsa"),
    (TuneSpec, {"spsa": 3}, "spsa"), (TuneSpec, {"params": "min_units=8:1"}, "params"),
    (TuneSpec, {"params": {}}, "params"), (TuneSpec, {"against": ()}, "against"), (TuneSpec, {"rules": 5}, "rules"),
    (TrainSpec, {"deals": 4}, "deals"), (TrainSpec, {"rate": 0.0}, "rate"), (TrainSpec, {"hidden": (8,)}, "hidden"),
    (TrainSpec, {"epochs": 0}, "epochs"), (TrainSpec, {"alpha": -0.1}, "alpha"), (TrainSpec, {"generations": 0},
                                                                                       "generations"),
    (TrainSpec, {"check_deals": 1}, "check_deals"), (TrainSpec, {"learning_rate": 0.0}, "learning_rate"),
    (LuckModelSpec, {"seed": True}, "seed"), (LuckModelSpec, {"deals": 9}, "deals"),
    (LuckModelSpec, {"check_deals": 9}, "check_deals"), (LuckModelSpec, {"hidden": 0}, "hidden"),
    (LuckModelSpec, {"epochs": 0}, "epochs"), (LuckModelSpec, {"pairs": [("greedy",)]}, "pairs"),
    (LuckModelSpec, {"pairs": []}, None), (LuckModelSpec, {"pairs": "greedy,random"}, "pairs"),
])
def test_a_bad_field_is_one_line_naming_it(kind, changes, name):
    base = TUNE if kind is TuneSpec else {}
    with pytest.raises(SimkitError) as info:
        kind(**{**base, **changes})
    message = str(info.value)
    assert "\n" not in message
    if name is not None:
        assert message.startswith(name) and name in info.value.parameters, message


def test_tune_fields_are_normalised_and_replace_checks_again():
    spec = TuneSpec(**TUNE)
    assert spec.policy == PolicySpec("patient", (6.0,)) and [p.name for p in spec.against] == ["greedy", "random"]
    assert spec.params == (ParameterRange("min_units", 0, 1.0, 8.0),) and spec.spsa == SpsaSettings()
    assert spec.rules == RuleSet() and spec.iterations == 6_000 // (6 * 200)
    assert TuneSpec(**{**TUNE, "params": "min_units=1:8"}) == spec  # the command line's text, the same spec
    assert spec.replace(seed=4).params == spec.params  # ranges already made are taken back
    with pytest.raises(SimkitError, match="budget"):
        spec.replace(budget=5)
    assert TuneSpec(**{**TUNE, "spsa": {"c": 0.1}}).spsa == SpsaSettings(c=0.1)


def test_the_luck_models_defaults_are_the_shipped_models_settings_declared_once():
    defaults = LuckModelSpec.defaults()
    assert (defaults["deals"], defaults["check_deals"]) == (D.DEFAULT_LUCK_MODEL_DEALS, D.DEFAULT_LUCK_MODEL_CHECK_DEALS)
    spec = LuckModelSpec(pairs=[["expert", "greedy"]])
    assert spec.pairs == ((PolicySpec("expert"), PolicySpec("greedy")),)


def test_unknown_keys_are_refused_naming_them():
    with pytest.raises(SimkitError, match="unknown key 'quiet' for train"):
        TrainSpec.from_mapping({"seed": 1, "quiet": True})
    assert LuckModelSpec.from_mapping({"seed": 2}).seed == 2


# ---- SPSA's constants, the ranges and the start: each check's words and edges ---------------

@pytest.mark.parametrize("name", ["a", "c", "A", "alpha", "gamma"])
@pytest.mark.parametrize("value", [True, "0.1", float("inf"), float("nan")])
def test_every_spsa_constant_must_be_a_finite_number(name, value):
    with pytest.raises(SimkitError) as info:
        SpsaSettings(**{name: value})
    assert str(info.value) == f"spsa {name} must be a finite number, got {value!r}"
    assert info.value.parameters == ("spsa",)


@pytest.mark.parametrize("changes, words", [
    ({"a": 0.0}, "spsa a must be > 0, got 0.0"),
    ({"c": 0.0}, "spsa c must lie in (0, 0.5] (a fraction of each range), got 0.0"),
    ({"c": 0.51}, "spsa c must lie in (0, 0.5] (a fraction of each range), got 0.51"),
    ({"A": -1}, "spsa A must be >= 0, got -1"),
    ({"alpha": 0.0}, "spsa alpha must be > 0 and gamma >= 0, got 0.0, 0.101"),
    ({"gamma": -0.1}, "spsa alpha must be > 0 and gamma >= 0, got 0.602, -0.1"),
])
def test_spsa_constants_out_of_their_ranges_are_refused(changes, words):
    with pytest.raises(SimkitError) as info:
        SpsaSettings(**changes)
    assert (str(info.value), info.value.parameters) == (words, ("spsa",))


def test_spsa_constants_at_their_edges_are_kept_and_resolved():
    edge = SpsaSettings(a=1e-9, c=0.5, A=0, alpha=1e-9, gamma=0.0)
    assert edge.resolved(100) == SpsaSettings(1e-9, 0.5, 0.0, 1e-9, 0.0)
    given = SpsaSettings(a=2.0, A=3, gamma=0.2).resolved(100)  # given values win over the defaults
    assert (given.a, given.A, given.gamma) == (2.0, 3.0, 0.2)


@pytest.mark.parametrize("settings", [SpsaSettings(a=1.0), SpsaSettings(A=1.0), SpsaSettings()])
def test_gains_need_both_constants_resolved(settings):
    with pytest.raises(ValueError, match=r"^gains of unresolved SPSA settings \(call resolved\(iterations\) first\)$"):
        settings.gains(0)


def test_ranges_parse_without_spaces_and_refuse_naming_params():
    from simkit.specs.tune import parse_ranges

    assert parse_ranges("min_units=1:8,late_stock=0:20") == {"min_units": (1.0, 8.0), "late_stock": (0.0, 20.0)}
    for text, words in [("a=b=1:2", "params takes NAME=LO:HI,NAME=LO:HI, got 'a=b=1:2'"),
                        ("p0=1:2,p0=3:4", "params names 'p0' twice")]:
        with pytest.raises(SimkitError) as info:
            parse_ranges(text)
        assert (str(info.value), info.value.parameters) == (words, ("params",))


def test_params_as_anything_but_a_mapping_or_ranges_is_refused_in_one_line():
    for params in ([("min_units", (1, 8))], [], ()):
        with pytest.raises(SimkitError) as info:
            TuneSpec(**{**TUNE, "params": params})
        assert str(info.value) == "params must name at least one parameter to tune: {name: (lo, hi)}"
    with pytest.raises(SimkitError) as info:
        TuneSpec(**{**TUNE, "params": {"min_units": (1,)}})
    assert (str(info.value), info.value.parameters) == (
        "params: the range of 'min_units' must be two numbers (lo, hi), got (1,)", ("params",))
    spec = TuneSpec(**TUNE)
    assert TuneSpec(**{**TUNE, "params": spec.params}) == spec  # ranges already made are taken back


def test_the_start_is_the_policys_values_and_zeros_then_checked_against_each_range():
    """A user policy's parameters not given start at 0 (p5 of a policy given none); a start on
    a range's upper end is inside it; one outside is refused naming params."""
    user = TuneSpec("simkit.bench:greedy_by_import", {"p5": (0, 1)}, "greedy", budget=6_000)
    assert user.start == (0.0,) * 6
    assert TuneSpec("simkit.bench:greedy_by_import", {"p15": (0, 1)}, "greedy", budget=6_000).start == (0.0,) * 16
    assert TuneSpec(**{**TUNE, "policy": "patient:8"}).start[0] == 8.0
    with pytest.raises(SimkitError) as info:
        TuneSpec(**{**TUNE, "policy": "patient:8", "params": {"min_units": (1, 7.5)}})
    assert (str(info.value), info.value.parameters) == (
        "params: the starting value of 'min_units', 8, lies outside its range 1:7.5", ("params",))


@pytest.mark.parametrize("params, words", [
    ({"min_units": (1, float("inf"))}, "params: the range of 'min_units' needs finite lo < hi, got 1:inf"),
    ({"min_units": (float("-inf"), 8)}, "params: the range of 'min_units' needs finite lo < hi, got -inf:8"),
    ({"min_units": (1, 8), "p0": (2, 7)}, "params: 'p0' is the same parameter (p0) as another one given"),
])
def test_a_range_with_one_infinite_end_or_naming_a_parameter_twice_is_refused(params, words):
    """One finite end is not enough; a parameter's name and its pN are one parameter."""
    with pytest.raises(SimkitError) as info:
        TuneSpec(**{**TUNE, "params": params})
    assert (str(info.value), info.value.parameters) == (words, ("params",))


@pytest.mark.parametrize("changes, words, name", [
    ({"budget": 0}, "budget must be a whole number >= 1, got 0", "budget"),
    ({"budget": 1}, "budget 1 is too small for one iteration: an iteration plays 1,200 deals (iteration_deals 200 x 3 "
                    "seats x 2 perturbations)", "budget"),
    ({"iteration_deals": 0}, "iteration_deals must be a whole number >= 1, got 0", "iteration_deals"),
    ({"iteration_deals": 1}, "iteration_deals 1 is smaller than the pool (2 opponents): each opponent needs a deal "
                             "per iteration", "iteration_deals"),
    ({"validate_deals": 1}, "validate_deals must be a whole number >= 2, got 1", "validate_deals"),
    ({"batch_size": 0}, "batch_size must be a whole number >= 1, got 0", "batch_size"),
    ({"confidence": 0.0}, "confidence must be a finite number with 0.0 < confidence < 1.0, got 0.0", "confidence"),
    ({"confidence": -0.5}, "confidence must be a finite number with 0.0 < confidence < 1.0, got -0.5", "confidence"),
])
def test_each_tune_count_is_refused_just_past_its_edge_in_its_own_words(changes, words, name):
    with pytest.raises(SimkitError) as info:
        TuneSpec(**{**TUNE, **changes})
    assert (str(info.value), info.value.parameters) == (words, (name,))


def test_each_tune_count_is_kept_on_its_edge():
    """The smallest budget, iteration deals, validation deals and batch that the checks allow."""
    one_each = TuneSpec(**{**TUNE, "iteration_deals": 2, "budget": 12, "validate_deals": 2, "batch_size": 1})
    assert (one_each.iterations, one_each.validate_deals, one_each.batch_size) == (1, 2, 1)
    alone = TuneSpec(**{**TUNE, "against": "greedy", "iteration_deals": 1, "budget": 6})
    assert alone.iterations == 1 and alone.confidence == TuneSpec(**TUNE).confidence


# ---- training's and the value model's specs: their identities, edges and words ---------------

NO_TIANHU = RuleSet(tianhu=False)  # any rules but the default ones
NO_TIANHU_DICT = {"lou_doubles": True, "hu_tolerance": 2, "jiang_in_chariot": False, "pattern_wins": True,
                  "steps_count_lou": False, "drawn_card_chow_by": "drawer", "pass_locks_type": True, "must_kong": True,
                  "must_chariot_out": True, "tianhu": False, "next_dealer": "winner_else_next",
                  "zhan_in_chariot": False, "single_jiang_cap": 0, "drawn_jiang_chow": True, "pass_locks_win": True}


def test_a_training_runs_identity_is_what_train_json_holds_word_for_word():
    """Every key and value of the identity, written out: a renamed key or a lost setting would
    make earlier training folders refuse to resume (or resume the wrong run)."""
    import numpy as np

    spec = TrainSpec(seed=3, generations=1, deals=np.int64(5), rate=1.0, hidden=[np.int64(1), 256], epochs=1,
                     alpha=0.0, batch_size=1, learning_rate=0.5, check_deals=2, rules=NO_TIANHU)
    assert spec.identity() == {
        "kind": "simkit.train", "seed": 3, "rules": NO_TIANHU_DICT, "features": 444,
        "settings": {"deals": 5, "rate": 1.0, "hidden": [1, 256], "epochs": 1, "alpha": 0.0, "batch_size": 1,
                     "learning_rate": 0.5, "check_deals": 2}}
    assert type(spec.deals) is int and spec.hidden == (1, 256) and all(type(h) is int for h in spec.hidden)
    assert spec.rules == NO_TIANHU and spec.generations == 1


def test_a_value_models_identity_names_a_model_file_by_its_digest_not_its_path():
    """The identity a value-model file records, written out; a learned:PATH policy is named by
    the SHA-256 of its file (computed here from the file's bytes), so moving the file keeps it."""
    import hashlib

    from simkit.policies.model import BUILTIN_MODEL

    digest = hashlib.sha256(BUILTIN_MODEL.read_bytes()).hexdigest()
    spec = LuckModelSpec(seed=11, deals=10, check_deals=10, hidden=256, epochs=1, rules=NO_TIANHU,
                         pairs=[("greedy", "random"), (f"learned:{BUILTIN_MODEL}", "patient:3,6")])
    assert spec.identity() == {
        "seeds": [11], "deals": 10, "check_deals": 10, "hidden": 256, "epochs": 1, "rules": NO_TIANHU_DICT,
        "pairs": [["greedy", "random"], [f"learned (model sha256:{digest})", "patient:3,6"]]}
    assert spec.rules == NO_TIANHU
    assert LuckModelSpec(hidden=1).hidden == 1


WIDTHS = "hidden must be two layer widths in 1..256 (the widest layer a model file holds), "


@pytest.mark.parametrize("kind, changes, words", [
    (TrainSpec, {"deals": "400"}, "deals must be >= 5 per generation, got 400"),
    (TrainSpec, {"deals": 4}, "deals must be >= 5 per generation, got 4"),
    (TrainSpec, {"rate": 1.5}, "rate must be a finite number with 0.0 < rate <= 1.0, got 1.5"),
    (TrainSpec, {"hidden": (8.0, 4)}, WIDTHS + "got (8.0, 4)"),
    (TrainSpec, {"hidden": (0, 4)}, WIDTHS + "got (0, 4)"),
    (TrainSpec, {"hidden": (8, 257)}, WIDTHS + "got (8, 257)"),
    (TrainSpec, {"batch_size": 0}, "batch_size must be a whole number >= 1, got 0"),
    (TrainSpec, {"generations": 0}, "generations must be a whole number >= 1, got 0"),
    (LuckModelSpec, {"pairs": 5}, "pairs must be a sequence of policy pairs (A, B), got 5"),
    (LuckModelSpec, {"pairs": [5]}, "pairs: each pair must be two policies (A, B), got 5"),
    (LuckModelSpec, {"pairs": [("greedy", 5)]}, "pairs must be a policy name, got 5"),
    (LuckModelSpec, {"pairs": [(5, "greedy")]}, "pairs must be a policy name, got 5"),
    (LuckModelSpec, {"pairs": []}, "a value model needs at least one policy pair"),
    (LuckModelSpec, {"hidden": 257}, "hidden must be at most 256 (the widest layer a model file holds), got 257"),
    (LuckModelSpec, {"hidden": 256.5}, "hidden must be a whole number >= 1, got 256.5"),
])
def test_a_training_or_value_model_setting_past_its_edge_is_refused_in_its_own_words(kind, changes, words):
    with pytest.raises(SimkitError) as info:
        kind(**changes)
    assert str(info.value) == words and info.value.parameters == (next(iter(changes)),)

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

"""The run specs' shared machinery (simkit.specs.base): validation, defaults, identity."""

from __future__ import annotations

import dataclasses
import math

import pytest

from simkit.errors import SimkitError
from simkit.policies.registry import parse_policy
from simkit.rules import RuleSet
from simkit.specs.base import (Execution, RunSpec, as_policy, as_rules, check_choice, check_float, check_int,
                               field, policy_text, to_json_value)


@dataclasses.dataclass(frozen=True)
class _Toy(RunSpec):
    KIND = "toy"
    policy: object = "patient"
    deals: int = 10
    level: float = field(0.95, identity=False)
    how: str = "six"
    rules: object = None

    def check(self):
        self._set("policy", as_policy(self.policy))
        self._set("rules", as_rules(self.rules))
        check_int(self, "deals", 1, 1000)
        check_float(self, "level", 0.0, 1.0, open_lo=True, open_hi=True)
        check_choice(self, "how", ("six", "pairs"))


def test_identity_holds_identity_fields_only_with_full_policy_text_and_rules():
    toy = _Toy(deals=5, level=0.9)
    identity = toy.identity()
    assert list(identity) == ["policy", "deals", "how", "rules"]  # level is not the run's content
    assert identity["policy"] == policy_text(parse_policy("patient"))
    assert identity["policy"] != "patient"  # every parameter, so a changed default is another run
    assert identity["rules"] == RuleSet().to_dict()
    assert toy.to_dict()["level"] == 0.9


@pytest.mark.parametrize("changes, field_name", [
    ({"deals": 0}, "deals"), ({"deals": 1001}, "deals"), ({"deals": 2.0}, "deals"), ({"deals": True}, "deals"),
    ({"level": 1.0}, "level"), ({"level": math.nan}, "level"), ({"level": "x"}, "level"),
    ({"how": "seven"}, "how"), ({"policy": "nobody"}, None), ({"policy": 3}, "policy"), ({"rules": 7}, "rules"),
])
def test_bad_fields_are_one_line_errors_naming_the_field(changes, field_name):
    with pytest.raises(SimkitError) as info:
        _Toy(**changes)
    message = str(info.value)
    assert "\n" not in message
    if field_name is not None:
        assert message.startswith(field_name)


def test_numpy_integers_are_normalised_and_replace_validates_again():
    import numpy as np
    toy = _Toy(deals=np.int64(7))
    assert type(toy.deals) is int and toy.deals == 7
    with pytest.raises(SimkitError):
        toy.replace(deals=-1)
    assert toy.replace(deals=8).deals == 8


def test_from_mapping_refuses_an_unknown_key_naming_it():
    assert _Toy.from_mapping({"deals": 3}).deals == 3
    with pytest.raises(SimkitError, match="unknown key 'dealz'.*known: policy, deals"):
        _Toy.from_mapping({"dealz": 3}, "experiment.toml [[toy]] 1")


def test_defaults_are_the_declared_ones():
    assert _Toy.defaults() == {"policy": "patient", "deals": 10, "level": 0.95, "how": "six", "rules": None}


def test_to_json_value_forms():
    from pathlib import PurePath
    assert to_json_value({"a": (1, PurePath("p")), 2: None}) == {"a": [1, "p"], "2": None}


@pytest.mark.parametrize("kwargs", [{"workers": 0}, {"workers": 1.5}, {"workers": True}, {"backend": "ray"}])
def test_execution_refuses_bad_settings(kwargs):
    with pytest.raises(SimkitError):
        Execution(**kwargs)

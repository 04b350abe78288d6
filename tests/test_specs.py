"""The run specs' shared machinery (simkit.specs.base): validation, defaults, identity."""

from __future__ import annotations

import dataclasses
import math

import pytest

from simkit.errors import SimkitError
from simkit.policies.registry import parse_policy
from simkit.rules import RuleSet
from simkit.specs.base import (Execution, RunSpec, as_policy, as_rules, check_bool, check_choice, check_float, check_int,
                               check_positive_int, field, policy_text, to_json_value)


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


@dataclasses.dataclass(frozen=True)
class _Bounds(RunSpec):
    KIND = "bounds"
    share: float = 0.5  # closed [0, 1]
    cap: object = None  # None, or a number in [1, 10]
    count: object = None  # None, or a whole number >= 2

    def check(self):
        check_float(self, "share", 0.0, 1.0)
        check_float(self, "cap", 1.0, 10.0, allow_none=True)
        check_int(self, "count", 2, allow_none=True)


@pytest.mark.parametrize("changes, field_name", [
    ({"deals": 0}, "deals"), ({"level": 1.0}, "level"), ({"how": "seven"}, "how"), ({"policy": 3}, "policy"),
    ({"rules": 7}, "rules"),
])
def test_an_error_names_its_field_for_a_front_end(changes, field_name):
    """The command line maps ``parameters`` to its option: a field left out of them is an error
    the front end cannot point at."""
    with pytest.raises(SimkitError) as info:
        _Toy(**changes)
    assert info.value.parameters == (field_name,)


def test_messages_say_what_is_allowed():
    with pytest.raises(SimkitError, match=r"how must be one of six, pairs, got 'seven'"):
        _Toy(how="seven")
    with pytest.raises(SimkitError, match=r"rules must be a RuleSet or a mapping of rule options, got int"):
        _Toy(rules=7)
    with pytest.raises(SimkitError, match=r"level must be a finite number with 0.0 < level < 1.0, got 0.0"):
        _Toy(level=0.0)
    with pytest.raises(SimkitError, match=r"share must be a finite number with 0.0 <= share <= 1.0, got 1.5"):
        _Bounds(share=1.5)


def test_rules_from_a_mapping_are_those_rules():
    rules = _Toy(rules={"lou_doubles": False}).rules
    assert isinstance(rules, RuleSet) and rules.to_dict()["lou_doubles"] is False and rules != RuleSet()


def test_closed_and_open_bounds_and_none():
    assert _Bounds(share=0.0).share == 0.0 and _Bounds(share=1).share == 1.0  # closed ends pass, as floats
    for bad in (-0.01, 1.01):
        with pytest.raises(SimkitError):
            _Bounds(share=bad)
    assert _Bounds(cap=None).cap is None and _Bounds(count=None).count is None  # None where allowed
    assert _Bounds(cap=10).cap == 10.0 and _Bounds(count=2).count == 2
    for changes in ({"cap": 0.5}, {"cap": 11.0}, {"count": 1}, {"share": None}):
        with pytest.raises(SimkitError):
            _Bounds(**changes)
    assert _Toy(level=0.5).level == 0.5
    with pytest.raises(SimkitError):
        _Toy(level=0.0)  # an open lower end refuses the end itself


@dataclasses.dataclass(frozen=True)
class _Listed(RunSpec):
    KIND = "listed"
    names: tuple = field(factory=lambda: ("a", "b"))
    flag: bool = field(True, identity=False)
    cap: object = None
    deals: int = 5

    def check(self):
        check_bool(self, "flag")
        check_float(self, "cap", lo=1.0, allow_none=True)
        check_int(self, "deals", 1)


def test_fields_carry_their_default_factory_and_identity_flag():
    assert _Listed().names == ("a", "b") and _Listed.defaults()["names"] == ("a", "b")
    assert list(_Listed().identity()) == ["names", "cap", "deals"]  # flag declared identity=False
    assert _Listed.defaults()["flag"] is True


def test_check_bool_and_one_sided_bounds_in_messages():
    with pytest.raises(SimkitError, match=r"^flag must be true or false, got 1$") as info:
        _Listed(flag=1)
    assert info.value.parameters == ("flag",)
    with pytest.raises(SimkitError, match=r"^cap must be a finite number with 1.0 <= cap, got 0.5$"):
        _Listed(cap=0.5)
    with pytest.raises(SimkitError, match=r"^deals must be a whole number >= 1, got 0$"):
        _Listed(deals=0)
    with pytest.raises(SimkitError, match=r"^deals must be a whole number in 1..1000, got 1001$"):
        _Toy(deals=1001)
    assert _Toy(deals=1000).deals == 1000  # the upper end itself passes


def test_a_dataclass_with_to_dict_is_stored_as_its_mapping():
    assert to_json_value(_Listed(deals=3)) == {"names": ["a", "b"], "flag": True, "cap": None, "deals": 3}
    assert to_json_value([RuleSet()]) == [RuleSet().to_dict()]


def test_from_mapping_errors_name_the_key_and_the_place():
    with pytest.raises(SimkitError) as info:
        _Toy.from_mapping({"dealz": 3})
    assert str(info.value).startswith("unknown key 'dealz' for toy (known:") and info.value.parameters == ("dealz",)
    with pytest.raises(SimkitError, match=r"^f.toml: unknown key"):
        _Toy.from_mapping({"dealz": 3}, "f.toml")


def test_execution_accepts_its_settings_and_names_the_bad_one():
    assert Execution(workers=1, backend="local").workers == 1 and Execution(workers=2, backend="dask").backend == "dask"
    for kwargs, name, text in (({"workers": 0}, "workers", "workers must be a whole number >= 1, got 0"),
                               ({"backend": "ray"}, "backend", "backend must be local or dask, got 'ray'")):
        with pytest.raises(SimkitError) as info:
            Execution(**kwargs)
        assert info.value.parameters == (name,) and str(info.value) == text


def test_none_is_refused_where_not_allowed_and_bounds_read_as_given():
    for changes in ({"how": None}, {"deals": None}):
        with pytest.raises(SimkitError):
            _Toy(**changes)

    @dataclasses.dataclass(frozen=True)
    class _Open(RunSpec):
        below: float = 0.0
        anything: float = 0.0

        def check(self):
            check_float(self, "below", hi=2.0)
            check_float(self, "anything")

    with pytest.raises(SimkitError, match=r"^below must be a finite number with below <= 2.0, got 3.0$"):
        _Open(below=3.0)
    with pytest.raises(SimkitError, match=r"^anything must be a finite number, got inf$"):
        _Open(anything=math.inf)


def test_only_a_dataclass_instance_is_stored_by_its_to_dict():
    class NotADataclass:
        def to_dict(self):
            return {"x": 1}

    value = NotADataclass()
    assert to_json_value(value) is value
    assert to_json_value(_Listed) is _Listed  # the class itself is no instance


def test_a_choice_that_may_be_none_and_the_default_lower_bound_zero():
    @dataclasses.dataclass(frozen=True)
    class _Optional(RunSpec):
        how: object = None
        seed: int = 0

        def check(self):
            check_choice(self, "how", ("six", "pairs"), allow_none=True)
            check_int(self, "seed")

    assert _Optional().how is None and _Optional(how="six").how == "six" and _Optional(seed=0).seed == 0
    for changes in ({"how": "seven"}, {"seed": -1}):
        with pytest.raises(SimkitError):
            _Optional(**changes)


def test_a_positive_whole_number_starts_at_one_and_may_be_none_only_when_allowed():
    """check_positive_int: 1 is kept (a numpy integer stored as an int), 0 refused in words
    naming the field; None is refused unless allowed."""
    import numpy as np

    @dataclasses.dataclass(frozen=True)
    class _Counts(RunSpec):
        rollouts: object = 1
        batch: object = None

        def check(self):
            check_positive_int(self, "rollouts")
            check_positive_int(self, "batch", allow_none=True)

    kept = _Counts(rollouts=np.int64(1))
    assert type(kept.rollouts) is int and kept.rollouts == 1 and kept.batch is None
    assert _Counts(batch=1).batch == 1
    for changes, words in [({"rollouts": 0}, "rollouts must be a whole number >= 1, got 0"),
                           ({"rollouts": None}, "rollouts must be a whole number >= 1, got None"),
                           ({"batch": 0}, "batch must be a whole number >= 1, got 0")]:
        with pytest.raises(SimkitError) as info:
            _Counts(**changes)
        assert (str(info.value), info.value.parameters) == (words, (next(iter(changes)),))

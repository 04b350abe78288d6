"""RuleSet: defaults of RULES §8, hashing, JSON / TOML / key=value round trips, errors."""

import dataclasses

import pytest

from simkit.errors import RuleError
from simkit.rules import DrawnCardChowBy, NextDealer, RuleSet


def test_defaults_are_rules_section_8():
    r = RuleSet()
    assert r.lou_doubles is True and r.hu_tolerance == 2 and r.jiang_in_chariot is False
    assert r.pattern_wins is True and r.steps_count_lou is False
    assert r.drawn_card_chow_by is DrawnCardChowBy.DRAWER
    assert r.pass_locks_type and r.must_kong and r.must_chariot_out and r.tianhu
    assert r.next_dealer is NextDealer.WINNER_ELSE_NEXT


def test_frozen_and_hashable():
    r = RuleSet()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.hu_tolerance = 0  # type: ignore[misc]
    assert {r: 1}[RuleSet()] == 1
    assert hash(RuleSet(tianhu=False)) != hash(r) or RuleSet(tianhu=False) != r


ALL_CHANGED = RuleSet(
    lou_doubles=False,
    hu_tolerance=0,
    jiang_in_chariot=True,
    pattern_wins=False,
    steps_count_lou=True,
    drawn_card_chow_by="drawer_then_next",
    pass_locks_type=False,
    must_kong=False,
    must_chariot_out=False,
    tianhu=False,
    next_dealer="winner_else_same",
)


@pytest.mark.parametrize("rules", [RuleSet(), ALL_CHANGED, RuleSet(hu_tolerance=7)])
def test_round_trips(rules):
    assert RuleSet.from_json(rules.to_json()) == rules
    assert RuleSet.from_toml(rules.to_toml()) == rules
    assert RuleSet.from_toml("[rules]\n" + rules.to_toml()) == rules
    assert RuleSet.from_strings(rules.to_strings()) == rules
    assert RuleSet.from_dict(rules.to_dict()) == rules
    assert len(rules.to_array()) == 11


def test_key_value_strings():
    r = RuleSet.from_strings(["lou_doubles=off", "hu_tolerance=0", "drawn_card_chow_by=drawer_then_next"])
    assert r.lou_doubles is False and r.hu_tolerance == 0
    assert r.drawn_card_chow_by is DrawnCardChowBy.DRAWER_THEN_NEXT


@pytest.mark.parametrize(
    "items, message",
    [
        (["colour=red"], "unknown rule option 'colour'"),
        (["lou_doubles"], "not of the form key=value"),
        (["lou_doubles=maybe"], "must be on/off"),
        (["hu_tolerance=-1"], "must lie in 0..49"),
        (["hu_tolerance=two"], "must be an integer"),
        (["next_dealer=loser"], "must be one of"),
    ],
)
def test_bad_options(items, message):
    with pytest.raises(RuleError, match=message):
        RuleSet.from_strings(items)


def test_bad_documents():
    with pytest.raises(RuleError, match="JSON is malformed"):
        RuleSet.from_json("{")
    with pytest.raises(RuleError, match="TOML is malformed"):
        RuleSet.from_toml("lou_doubles = = 1")
    with pytest.raises(RuleError, match="unknown rule option 'x'"):
        RuleSet.from_json('{"x": 1}')
    with pytest.raises(RuleError, match="mapping"):
        RuleSet.from_json("[1, 2]")

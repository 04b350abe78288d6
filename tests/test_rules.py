"""RuleSet: defaults of docs/rules.md §8, hashing, JSON / TOML / key=value round trips, errors,
the rule-set array, ``simkit rules`` and the §8 options table of docs/rules.md."""

import dataclasses
import pathlib
import re

import numpy as np
import pytest

from simkit import rules as rules_module
from simkit.cli import main
from simkit.errors import RuleError
from simkit.rules import N_RULE_FIELDS, OPTION_DOCS, DrawnCardChowBy, NextDealer, RuleSet

RULES_PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def test_defaults_are_rules_section_8():
    r = RuleSet()
    assert r.lou_doubles is True and r.hu_tolerance == 2 and r.jiang_in_chariot is False
    assert r.pattern_wins is True and r.steps_count_lou is False
    assert r.drawn_card_chow_by is DrawnCardChowBy.DRAWER
    assert r.pass_locks_type and r.must_kong and r.must_chariot_out and r.tianhu
    assert r.next_dealer is NextDealer.WINNER_ELSE_NEXT


def test_defaults_of_the_revised_options():
    r = RuleSet()
    assert r.zhan_in_chariot is False
    assert r.single_jiang_cap == 0 and type(r.single_jiang_cap) is int
    assert r.drawn_jiang_chow is True
    assert r.pass_locks_win is True


# one non-default value per option (every option is changed by ALL_CHANGED below)
CHANGED = {
    "lou_doubles": False,
    "hu_tolerance": 0,
    "jiang_in_chariot": True,
    "pattern_wins": False,
    "steps_count_lou": True,
    "drawn_card_chow_by": "drawer_then_next",
    "pass_locks_type": False,
    "must_kong": False,
    "must_chariot_out": False,
    "tianhu": False,
    "next_dealer": "winner_else_same",
    "zhan_in_chariot": True,
    "single_jiang_cap": 3,
    "drawn_jiang_chow": False,
    "pass_locks_win": False,
}
ALL_CHANGED = RuleSet(**CHANGED)


def test_changed_values_cover_every_option():
    assert set(CHANGED) == set(RuleSet.option_names())
    default = RuleSet()
    assert all(getattr(ALL_CHANGED, name) != getattr(default, name) for name in CHANGED)


def test_frozen_and_hashable():
    r = RuleSet()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.hu_tolerance = 0  # type: ignore[misc]
    assert {r: 1}[RuleSet()] == 1
    # equal values hash alike, however they were spelled
    assert hash(RuleSet(tianhu="off")) == hash(RuleSet(tianhu=False))
    assert RuleSet(single_jiang_cap="3") == RuleSet(single_jiang_cap=3)


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_every_option_takes_part_in_equality_and_hashing(name):
    # An option left out of __eq__/__hash__ (e.g. ``field(compare=False)``) would make two
    # different rule sets one key of a dict or set: results run under different rules mixed.
    default, changed = RuleSet(), RuleSet(**{name: CHANGED[name]})
    assert changed != default
    assert len({default, changed}) == 2
    assert {default: "default", changed: "changed"}[changed] == "changed"


@pytest.mark.parametrize(
    "rules",
    [
        RuleSet(),
        ALL_CHANGED,
        RuleSet(hu_tolerance=7),
        RuleSet(zhan_in_chariot=True),
        RuleSet(single_jiang_cap=3),
        RuleSet(single_jiang_cap=16, drawn_jiang_chow=False),
        RuleSet(pass_locks_win=False, pass_locks_type=False),
    ],
)
def test_round_trips(rules):
    assert RuleSet.from_json(rules.to_json()) == rules
    assert RuleSet.from_toml(rules.to_toml()) == rules
    assert RuleSet.from_toml("[rules]\n" + rules.to_toml()) == rules
    assert RuleSet.from_strings(rules.to_strings()) == rules
    assert RuleSet.from_dict(rules.to_dict()) == rules
    assert len(rules.to_array()) == N_RULE_FIELDS == len(RuleSet.option_names())


def test_new_options_as_strings():
    r = RuleSet.from_strings(
        ["zhan_in_chariot=on", "single_jiang_cap=3", "drawn_jiang_chow=off", "pass_locks_win=false"]
    )
    assert r == RuleSet(zhan_in_chariot=True, single_jiang_cap=3, drawn_jiang_chow=False, pass_locks_win=False)
    assert sorted(r.to_strings()) == [
        "drawn_jiang_chow=off", "pass_locks_win=off", "single_jiang_cap=3", "zhan_in_chariot=on",
    ]
    assert RuleSet().to_strings() == []


def _rule_index(name):
    return getattr(rules_module, "RULE_" + name.upper())


def test_rule_indices_are_distinct_and_complete():
    indices = sorted(_rule_index(name) for name in RuleSet.option_names())
    assert indices == list(range(N_RULE_FIELDS))


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_to_array_puts_each_option_at_its_index(name):
    default = RuleSet().to_array()
    changed = RuleSet(**{name: CHANGED[name]}).to_array()
    assert default.dtype == np.int64
    # changing one option changes exactly its own slot
    assert np.flatnonzero(changed != default).tolist() == [_rule_index(name)]


def test_to_array_values_of_the_new_options():
    arr = RuleSet().to_array()
    assert arr[rules_module.RULE_ZHAN_IN_CHARIOT] == 0
    assert arr[rules_module.RULE_SINGLE_JIANG_CAP] == 0
    assert arr[rules_module.RULE_DRAWN_JIANG_CHOW] == 1
    assert arr[rules_module.RULE_PASS_LOCKS_WIN] == 1
    arr = ALL_CHANGED.to_array()
    assert arr[rules_module.RULE_ZHAN_IN_CHARIOT] == 1
    assert arr[rules_module.RULE_SINGLE_JIANG_CAP] == 3
    assert arr[rules_module.RULE_DRAWN_JIANG_CHOW] == 0
    assert arr[rules_module.RULE_PASS_LOCKS_WIN] == 0


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
        (["zhan_in_chariot=2"], "zhan_in_chariot must be on/off"),
        (["pass_locks_win=maybe"], "pass_locks_win must be on/off"),
    ],
)
def test_bad_options(items, message):
    with pytest.raises(RuleError, match=message):
        RuleSet.from_strings(items)


@pytest.mark.parametrize(
    "value, message",
    [
        (-1, "must lie in 0..16, got -1"),
        (17, "must lie in 0..16, got 17"),
        ("x", "must be an integer, got 'x'"),
    ],
)
def test_single_jiang_cap_range(value, message):
    attempts = [
        lambda: RuleSet(single_jiang_cap=value),
        lambda: RuleSet.from_strings([f"single_jiang_cap={value}"]),
        lambda: RuleSet.from_dict({"single_jiang_cap": value}),
    ]
    for attempt in attempts:
        with pytest.raises(RuleError) as info:
            attempt()
        text = str(info.value)
        assert "\n" not in text
        assert "single_jiang_cap" in text and message in text


def test_single_jiang_cap_bounds_accepted():
    assert RuleSet(single_jiang_cap=0).single_jiang_cap == 0
    assert RuleSet.from_strings(["single_jiang_cap=16"]).single_jiang_cap == 16


def test_bad_documents():
    with pytest.raises(RuleError, match="JSON is malformed"):
        RuleSet.from_json("{")
    with pytest.raises(RuleError, match="TOML is malformed"):
        RuleSet.from_toml("lou_doubles = = 1")
    with pytest.raises(RuleError, match="unknown rule option 'x'"):
        RuleSet.from_json('{"x": 1}')
    with pytest.raises(RuleError, match="mapping"):
        RuleSet.from_json("[1, 2]")


# ---------------------------------------------------------------- documentation of options


def test_every_option_is_documented():
    assert set(OPTION_DOCS) == set(RuleSet.option_names())
    for name, texts in OPTION_DOCS.items():
        assert len(texts) == 3 and all(isinstance(t, str) and t.strip() for t in texts), name
        assert not any("\n" in t for t in texts), name


def _rules_cli(capsys, *items):
    argv = ["rules"]
    for item in items:
        argv += ["--rule", item]
    assert main(argv) == 0
    return capsys.readouterr().out


def test_rules_command_documents_every_option(capsys):
    out = _rules_cli(capsys)
    lines = out.splitlines()
    for name in RuleSet.option_names():
        (pos,) = [i for i, line in enumerate(lines) if line.startswith(f"{name} = ")]
        default, other, seed = OPTION_DOCS[name]
        assert lines[pos - 1] == f"# default: {default}; other: {other}; seed: {seed}"
    assert RuleSet.from_toml(out) == RuleSet()


def test_rules_command_round_trips_a_non_default_rule_set(capsys):
    items = ["single_jiang_cap=3", "zhan_in_chariot=on", "pass_locks_win=off", "drawn_jiang_chow=off",
             "next_dealer=winner_else_same", "hu_tolerance=0", "drawn_card_chow_by=drawer_then_next"]
    out = _rules_cli(capsys, *items)
    expected = RuleSet.from_strings(items)
    assert expected != RuleSet()
    assert RuleSet.from_toml(out) == expected
    assert RuleSet.from_toml("[rules]\n" + out) == expected


def test_rules_command_bad_option(capsys):
    assert main(["rules", "--rule", "single_jiang_cap=17"]) != 0
    err = capsys.readouterr().err
    assert "single_jiang_cap" in err and len(err.strip().splitlines()) == 1


def _options_table():
    """Rows of the options table in §8 of docs/rules.md: {option: [cells]}."""
    text = RULES_PAGE.read_text(encoding="utf-8")
    match = re.search(r"^## 8\. .*?$(.*?)^## 9\. ", text, flags=re.M | re.S)
    assert match, "docs/rules.md has no §8 followed by §9"
    header, rows = None, {}
    for line in match.group(1).splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        name = re.fullmatch(r"`(\w+)`", cells[0])
        if name:
            assert name.group(1) not in rows, f"option {name.group(1)} listed twice"
            rows[name.group(1)] = dict(zip(header, cells))
    return header, rows


def test_rules_page_section_8_lists_every_option():
    header, rows = _options_table()
    assert header == ["option", "type", "default", "other values", "what the seed says"]
    assert set(rows) == set(RuleSet.option_names())
    toml_values = dict(line.split(" = ", 1) for line in RuleSet().to_toml().splitlines())
    for name, row in rows.items():
        assert row["default"].startswith(f"`{toml_values[name]}`"), name
        assert OPTION_DOCS[name][2] in row["what the seed says"], name


def test_rules_page_sections_follow_rules_md():
    text = RULES_PAGE.read_text(encoding="utf-8")
    numbers = [int(n) for n in re.findall(r"^## (\d+)\. ", text, flags=re.M)]
    assert numbers == list(range(1, 12))
    titles = dict(re.findall(r"^## (\d+)\. (.*)$", text, flags=re.M))
    for number, topic in [("1", "Cards"), ("2", "Groups"), ("3", "Patterns"), ("4", "Counting hu"),
                          ("5", "Deal and play"), ("6", "Winning"), ("7", "Restrictions"),
                          ("8", "options"), ("9", "Worked examples")]:
        assert topic.lower() in titles[number].lower(), (number, titles[number])

"""Card notation, count vectors and bitsets (docs/rules.md §1)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simkit import cards
from simkit.cards import (
    N_TYPES,
    bitset_to_counts,
    counts_to_bitset,
    format_counts,
    ids_to_bitset,
    ids_to_counts,
    parse_counts,
    parse_type,
    parse_types,
    type_name,
)
from simkit.errors import CardError

counts_strategy = st.lists(st.integers(0, 4), min_size=N_TYPES, max_size=N_TYPES)


def test_type_index_layout():
    assert cards.TYPE_NAMES[0] == "YJ"
    assert cards.TYPE_NAMES[1 * 7 + 3] == "RC"
    assert cards.TYPE_NAMES[3 * 7 + 6] == "GZ"
    assert parse_type("红将") == 7 and parse_type("绿卒") == 27 and parse_type("白相") == 16
    assert [cards.is_fat(parse_type(n)) for n in ("YJ", "YS", "YX", "YC", "YM", "YP", "YZ")] == [
        True, False, False, True, False, False, True,
    ]


def test_notation_both_ways():
    c = parse_counts("RJ*3 RS 红将 YZ, GZ")
    assert c[7] == 4 and c[8] == 1 and c[6] == 1 and c[27] == 1 and c.sum() == 7
    assert format_counts(c) == "YZ RJ*4 RS GZ"
    assert format_counts(c, chinese=True) == "黄卒 红将*4 红士 绿卒"
    assert np.array_equal(parse_counts(format_counts(c, chinese=True)), c)
    assert type_name(27, chinese=True) == "绿卒"


@pytest.mark.parametrize(
    "text, message",
    [
        ("RQ", "unknown card 'RQ'"),
        ("RJ*5", "5 copies of RJ"),
        ("RJ*3 RJ*2", "5 copies of RJ"),
        ("RJ*0", "count below 1"),
        ("RJ**2", "malformed card token"),
        ("红王", "unknown card"),
    ],
)
def test_bad_cards_raise_one_clear_line(text, message):
    with pytest.raises(CardError, match=message.replace("*", r"\*")) as info:
        parse_counts(text)
    assert "\n" not in str(info.value)


@settings(max_examples=300, deadline=None)
@given(counts_strategy)
def test_counts_bitset_roundtrip(counts):
    low, high = counts_to_bitset(counts)
    assert 0 <= low < 2**64 and 0 <= high < 2**48
    assert bin(low).count("1") + bin(high).count("1") == sum(counts)
    assert bitset_to_counts(low, high).tolist() == list(counts)
    assert parse_counts(format_counts(counts)).tolist() == list(counts)


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(0, 111), max_size=40))
def test_ids_bitset_counts_agree(ids):
    low, high = ids_to_bitset(ids)
    assert bitset_to_counts(low, high).tolist() == ids_to_counts(ids).tolist()


def test_bad_ids_and_vectors():
    with pytest.raises(CardError, match="out of range"):
        ids_to_counts([112])
    with pytest.raises(CardError, match="28 entries"):
        cards.check_counts([1, 2, 3])
    with pytest.raises(CardError, match="negative"):
        cards.check_counts([-1] + [0] * 27)
    assert parse_types("RJ*2") == [7, 7]

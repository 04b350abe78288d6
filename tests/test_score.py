"""``simkit score --jsonl``: the batched path (simkit.evaluator.score.score_records) gives, byte
for byte, the lines of the one-record-at-a-time reference (score_record, through evaluate())
and of the code before the batched path existed; invalid input fails the same way."""

from __future__ import annotations

import hashlib
import json

import pytest

from simkit.errors import SimkitError
from simkit.evaluator.score import score_record, score_records
from simkit.generate import random_score_records
from simkit.rules import RuleSet

# sha256 of the score lines (each without its "rules" object, which grows with every new rule
# option) of random_score_records(2000 | 20000, seed=11), as written by `simkit score --jsonl`
# before the batched path (commit 8a9ee6d).  To regenerate after a deliberate change of the
# evaluator's output: run _digest(random_score_records(n, 11)) through score_record.
COMMITTED_DIGESTS = {
    2_000: "71fb925ed0ecee279d2c1738f393779543d87238a92276b375bc77043e32083a",
    20_000: "58c4bcb9745ee56fbaf1687206036f022f045c21461b772015a4e8b875b9d859",
}


def _lines(records) -> list[tuple[int, dict]]:
    """Records as ``simkit score --jsonl`` reads them: (line number, decoded JSON object)."""
    return [(k + 1, json.loads(json.dumps(r, ensure_ascii=False))) for k, r in enumerate(records)]


def _reference(lines, base: RuleSet) -> str:
    return "".join(json.dumps(score_record(record, base), ensure_ascii=False) + "\n" for _, record in lines)


def _digest(text: str) -> str:
    h = hashlib.sha256()
    for line in text.splitlines():
        fields = json.loads(line)
        fields.pop("rules")
        h.update((json.dumps(fields, ensure_ascii=False) + "\n").encode())
    return h.hexdigest()


@pytest.mark.parametrize("grouped", [0.0, 0.5, 1.0])
def test_batched_equals_reference(grouped):
    lines = _lines(random_score_records(600, seed=5, grouped=grouped))
    base = RuleSet()
    assert score_records(lines, base, "x.jsonl") == _reference(lines, base)


def test_batched_equals_reference_under_base_rules():
    """--rule options under the records' own rules."""
    lines = _lines(random_score_records(400, seed=6))
    base = RuleSet.from_strings(["zhan_in_chariot=on", "single_jiang_cap=2", "hu_tolerance=0", "lou_doubles=off"])
    assert score_records(lines, base, "x.jsonl") == _reference(lines, base)


def test_same_bytes_as_before_the_batched_path():
    text = score_records(_lines(random_score_records(2_000, seed=11)), RuleSet(), "x.jsonl")
    assert _digest(text) == COMMITTED_DIGESTS[2_000]


@pytest.mark.slow
def test_same_bytes_as_before_on_20000_lines():
    lines = _lines(random_score_records(20_000, seed=11))
    text = score_records(lines, RuleSet(), "x.jsonl")
    assert _digest(text) == COMMITTED_DIGESTS[20_000]
    assert text == _reference(lines, RuleSet())


def test_empty_input():
    assert score_records([], RuleSet(), "x.jsonl") == ""


BAD_RECORDS = [
    {"hand": "RJ", "rules": [1]},
    {"hand": "RJ", "rules": "lou_doubles=off"},
    {"hand": "RJ", "rules": {"no_such_option": 1}},
    {"hand": "RJ", "rules": {"hu_tolerance": 99}},
    {"hand": "RJ", "rules": {"hu_tolerance": True}},
    {"hand": "RJ", "rules": {"lou_doubles": "maybe"}},
    {"hand": "RJ", "rules": {"single_jiang_cap": 17}},
    {"hand": "RJ", "rules": {"next_dealer": "loser"}},
    {"rules": {"tianhu": False}},
    {"hand": ["RJ"]},
    {"hand": "RJ", "exposed": ["peng:RC"]},
    {"hand": "XX"},
    {"hand": "RJ*0"},
    {"hand": "RJ*5"},
    {"hand": "RJ*3 红将*2"},
    {"hand": "RJ**2"},
    {"hand": "RJ", "exposed": "foo:RC"},
    {"hand": "RJ", "exposed": "RC"},
    {"hand": "RJ", "exposed": "peng:"},
    {"hand": "RJ", "exposed": "chow:RJ,RS,RM"},
    {"hand": "RJ", "exposed": "table:RS"},
    {"hand": "RJ", "exposed": "peng:RC,RM"},
    {"hand": "RC*3", "exposed": "peng:RC"},
    {"hand": "", "exposed": "kong:RC kong:RC"},
    {"hand": "RZ", "exposed": "chow:YZ,RZ,WZ chow:RZ,WZ,GZ zhan:RZ"},
    {"hand": "YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4 RJ*4"},
    {"hand": "YJ*4 YS*4 YX*4 YC*4 YM*4 YP*4 YZ*4", "exposed": "peng:RJ kong:RS"},
]


@pytest.mark.parametrize("bad", BAD_RECORDS, ids=[json.dumps(b, ensure_ascii=False) for b in BAD_RECORDS])
def test_errors_match_the_reference(bad):
    """The first invalid line fails with the reference's one line, whatever came before it."""
    good = random_score_records(3, seed=2)
    lines = _lines(good + [bad] + good)
    with pytest.raises(SimkitError) as fast:
        score_records(lines, RuleSet(), "hands.jsonl")
    with pytest.raises(SimkitError) as reference:
        score_record(bad, RuleSet())
    assert str(fast.value) == f"hands.jsonl line 4: {reference.value}"


def test_valid_edge_records_match_the_reference():
    records = [
        {"hand": ""},
        {"hand": "  ", "exposed": None, "rules": None},
        {"hand": "RJ", "exposed": "", "rules": {}},
        {"hand": "rj,红将 RJ", "exposed": "  table:GJ   zhan:GM ", "rules": {"single_jiang_cap": "1"}},
        {"hand": "YZ RZ WZ", "exposed": "吃:YJ,YS,YX 碰:RC 楼:WC 占:GM 将:GJ", "extra": [1, 2]},
        {"hand": "YJ*4 RJ*4 WJ*4 GJ*4 YZ*4 RZ*4 WZ*4 GZ*3"},
    ]
    lines = _lines(records)
    assert score_records(lines, RuleSet(), "x.jsonl") == _reference(lines, RuleSet())

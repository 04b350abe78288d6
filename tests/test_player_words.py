"""The player's language where a player reads (issue 40): every pinyin or English code of an
action, an ending, a pattern or a measure appears in reports, ``analyze`` and ``review`` only
beside its Chinese name, ``中文 (code)``.

Each scan catches a table or text that prints a bare code (``steps5_qing3``, ``peng``,
``tianhu``, ``lou``): the report of a dataset, the analysis table and the review table."""

from __future__ import annotations

import re

import pytest

from simkit.cli import main
from simkit.evaluator.patterns import PATTERN_CHINESE, PATTERN_NAMES
from simkit.glossary import ACTION_CHINESE, DECISION_CHINESE, MEASURE_CHINESE, WIN_KIND_CHINESE, action_words, display_width, in_words, pad
from simkit.replay import log_decisions, replay_jsonl
from simkit.specs.analyze import AnalyzeSpec
from simkit.specs.review import ReviewSpec
from simkit.studies.analyze import analyze_position
from simkit.studies.review import parse_decision_log, review_decisions, review_table


def _bare(text: str, code: str, *names: str) -> list[str]:
    """Lines where ``code`` stands as a word other than in ``(code)`` after one of its Chinese
    ``names``."""
    word = re.compile(rf"(?<![A-Za-z_(]){re.escape(code)}(?![A-Za-z_])|\({re.escape(code)}\)")
    beside = re.compile(rf"(?:{'|'.join(map(re.escape, names))})[^|()]*\({re.escape(code)}\)")
    return [line for line in text.splitlines()
            if any(m.group(0) != f"({code})" for m in word.finditer(line))
            or len(word.findall(line)) > len(beside.findall(line))]


def test_every_code_has_a_chinese_name():
    assert set(PATTERN_CHINESE) == set(PATTERN_NAMES)
    assert set(WIN_KIND_CHINESE) == {"discard", "draw", "table", "tianhu", "none"}
    assert all(re.fullmatch(r"[\u4e00-\u9fff]+", name) for name in
               [*ACTION_CHINESE.values(), *WIN_KIND_CHINESE.values(), *MEASURE_CHINESE.values()])


def test_words_keep_the_code_beside_the_name():
    assert in_words("steps5_qing3", PATTERN_CHINESE) == "三清五步 (steps5_qing3)"
    assert action_words("kong") == "发子 (kong)" and action_words("discard YJ") == "打 YJ (discard)"
    # a code with no Chinese name stays as it is (not "None (code)"), and an action word the
    # engine does not use is not translated
    assert in_words("no_such_code", PATTERN_CHINESE) == "no_such_code"
    assert action_words("shout YJ") == "shout YJ"


@pytest.mark.parametrize("text, columns", [
    ("", 0), ("peng", 4), ("碰", 2), ("碰 (peng)", 9),
    ("ＡＢ", 4),          # full-width Latin letters (east-asian width "F") take two columns each
    ("ｱ", 1),            # a half-width katakana ("H") takes one
    ("é", 1),            # an ambiguous-width letter ("A") counts as one, as terminals draw it
])
def test_display_width_counts_wide_and_full_width_characters_as_two_columns(text, columns):
    assert display_width(text) == columns
    assert pad(text, 12) == text + " " * (12 - columns)
    assert pad(text, 0) == text


def test_a_datasets_report_names_endings_patterns_and_measures_in_chinese(tmp_path):
    assert main(["demo", "--out", str(tmp_path), "--deals", "3000"]) == 0
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    tables = "\n".join(line for line in report.splitlines() if line.startswith("|"))
    for kind, name in WIN_KIND_CHINESE.items():
        assert f"| {name} ({kind}) |" in tables
    for code, name in PATTERN_CHINESE.items():
        assert not _bare(tables, code, name), code
    assert any(f"| {name} (" in tables for name in PATTERN_CHINESE.values())  # some pattern was won
    for code in ("lou", "steps", "hu", "units"):
        assert f"| {MEASURE_CHINESE[code]} ({code}) |" in tables
    assert "patient:2,6,1" not in report and "expert:" not in report  # plain policy labels


@pytest.fixture(scope="module")
def logged():
    lines = replay_jsonl(5, 3, "expert,expert,expert").splitlines()
    return lines, log_decisions(lines)


def test_analyze_and_review_tables_name_actions_in_chinese(logged):
    lines, decisions = logged
    claim = next(d for d in decisions if d.position.decision == "claim")
    text = analyze_position(claim.position, AnalyzeSpec(rollouts=64)).table()
    rows = text.splitlines()[4:]
    assert rows and all(re.match(r"[\u4e00-\u9fff]", row) for row in rows), text
    for code, name in ACTION_CHINESE.items():
        assert not _bare("\n".join(rows), code, name), code
    review = review_decisions(parse_decision_log(lines)[:4], ReviewSpec(seat=1, rollouts=16, seed=1))
    table = review_table(review, min_loss=-1e9)
    body = table.splitlines()[table.splitlines().index(next(l for l in table.splitlines() if l.strip().startswith("#"))) + 1:]
    assert body
    for code in {*ACTION_CHINESE, *DECISION_CHINESE}:
        names = [n for n in (ACTION_CHINESE.get(code), DECISION_CHINESE.get(code)) if n]
        assert not _bare("\n".join(body), code, *names), (code, table)


PARAMETER_VECTOR = re.compile(r"\b[a-z]+:-?\d+(?:\.\d+)?(?:,-?\d+(?:\.\d+)?)+")  # expert:57.6,13.4,...


@pytest.mark.parametrize("command", [
    ["tournament", "random", "greedy", "expert", "--deals", "8", "--seed", "3"],
    ["compare", "expert", "greedy", "--deals", "10", "--seed", "3"],
])
def test_tournament_and_compare_outputs_speak_the_players_words(command, tmp_path, capsys):
    """Catches a parameter vector (``expert:57.6,13.4,...``) or a bare pinyin / English code of an
    action, an ending, a pattern or a measure in what ``tournament`` and ``compare`` print and
    write with default policies."""
    assert main([*command, "--out", str(tmp_path / "out")]) == 0
    texts = {"stdout": capsys.readouterr().out}
    texts.update({path.name: path.read_text(encoding="utf-8") for path in (tmp_path / "out").glob("*.md")})
    assert "report.md" in texts
    names = {**ACTION_CHINESE, **WIN_KIND_CHINESE, **PATTERN_CHINESE, **MEASURE_CHINESE}
    for where, text in texts.items():
        assert not PARAMETER_VECTOR.search(text), (where, PARAMETER_VECTOR.search(text).group(0))
        for code, name in names.items():
            if code in ("discard", "draw", "table", "none", "units", "turns", "draws"):
                continue  # English words of the prose ("per seat per deal", "a draw"), not codes
            assert not _bare(text, code, name), (where, code, _bare(text, code, name))

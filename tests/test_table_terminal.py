"""``simkit play``'s terminal (issue 52, item 6, and the hint's story of item 1).

* Every line printed fits 80 terminal columns (a Chinese character takes two): a scripted game
  with hints, odd answers, a session and rules that differ, each line measured.  Before, the
  hint's table was 120 columns and the board lines up to 131.
* The moves between two decisions one a line (before: one wrapping line joined by "; ").
* An answer over 80 characters is refused in one line stating the limit, never echoed; '²'
  (a digit ``int`` does not read) gets one line and play goes on.
* The hint names as the best the action with the highest payoff among those it shows; an action
  whose interval against it reaches 0 is "as good as the best", never "separated" (before: "5
  (打 红士) has the best expected payoff, +3.938" under 打 WX +4.291, and "separated" on an
  interval covering 0).  :func:`hint_verdict` is the rule, a pure function of the shown rows, and
  it is the review's (:func:`simkit.studies.analyze.shown_verdict`): one story everywhere.
* The actions in the player's words (打 碰 吃 占 发子 过 胡), the English only in the legend.
"""

from __future__ import annotations

import io
import json
import math
import re
from types import SimpleNamespace

import pytest
from helpers import PLAY_PROMPT

from simkit.cards import TYPE_NAMES
from simkit.engine import layout as L
from simkit.glossary import display_width
from simkit.replay import log_decisions, replay_jsonl
from simkit.rules import RuleSet
from simkit.studies.analyze import shown_verdict
from simkit.studies.table import (
    ACTION_LEGEND,
    MAX_ACTION_TEXT,
    WIDTH,
    HintRow,
    TerminalPerson,
    action_words,
    hint_lines,
    hint_verdict,
    play_table,
    read_answer,
    table_setup,
    wrap_line,
)

PROMPT = PLAY_PROMPT
MOVE = re.compile(r"^  (you|seat \d \([^)]*\)) \S")


class Reader:
    """Answers at the prompts: ``script`` first (one per prompt), then action 1, and a hint at
    each of the first ``hints`` decisions; "" at the next-deal prompt."""

    def __init__(self, script: list[str], hints: int) -> None:
        self.script, self.hints, self.prompts = list(script), hints, 0
        self.hinted: set[str] = set()

    def __call__(self, prompt: str) -> str:
        if not PROMPT.fullmatch(prompt):
            return ""
        self.prompts += 1
        if self.script:
            return self.script.pop(0)
        if self.hints and prompt not in self.hinted:
            self.hints -= 1
            self.hinted.add(prompt)
            return "h"
        self.hinted.clear()
        return "1"


def scripted_game(tmp_path, seed: int, script: list[str], hints: int, deals: int = 1, **setup) -> tuple[str, list]:
    out = io.StringIO()
    table = table_setup(seat=0, seed=seed, deals=deals, log=tmp_path / f"g{seed}.jsonl", hint_rollouts=16, **setup)
    result = play_table(table, TerminalPerson(read=Reader(script, hints), out=out))
    assert len(result.outcomes) == deals and not result.quit
    return out.getvalue(), [p.read_text(encoding="utf-8").splitlines() for p in table.logs]


@pytest.mark.parametrize("seed, deals, setup", [
    (3, 1, {"bots": ["expert", "greedy"]}),
    (52, 2, {"bots": ["greedy", "patient"], "rules": RuleSet.from_strings(["drawn_card_chow_by=drawer_then_next"])}),
])
def test_every_line_of_a_game_with_hints_fits_80_columns(tmp_path, seed, deals, setup):
    odd = ["²", "y" * 100_000, "x" * (MAX_ACTION_TEXT + 1), "打 " + "红将" * 30, "discard XX", "0", "\x1b[2J"]
    text, logs = scripted_game(tmp_path, seed, odd, hints=3, deals=deals, **setup)
    lines = text.splitlines()
    wide = [(display_width(line), line) for line in lines if display_width(line) > WIDTH]
    assert not wide, wide[:3]
    assert text.count("hint: ") >= 3 and "against the best" in text and "exposed: " in text
    assert max(display_width(line) for line in lines) >= 70  # long lines there were, wrapped at 80
    # the odd answers: each refused in one line, the long ones never echoed, and play went on
    refusals = [line for line in lines if "is not a choice here" in line or line.startswith("too long: ")]
    assert len(refusals) == len(odd), refusals
    assert "'²' is not a choice here" in text
    assert sum(line.startswith(f"too long: at most {MAX_ACTION_TEXT} characters") for line in lines) == 2
    assert "that had 100,000" in text and "y" * 30 not in text and "x" * 30 not in text and "红将" * 6 not in text
    assert "\x1b" not in text  # a control character comes back escaped, never raw
    # the moves one a line: every moves block's lines are one seat's one move each, and all the
    # moves a person sees are there (every seat's discards, draws and claims; the person's passes)
    shown = 0
    for block in text.split("moves:\n")[1:]:
        for line in block.splitlines():
            if line.startswith("      "):  # a long move's next line
                continue
            if not line.startswith("  "):
                break
            assert MOVE.match(line) and len(re.findall(r"\bseat \d \(|\byou\b", line)) == 1, line
            shown += 1
    seen = 0
    for log in logs:
        for entry in map(json.loads, log):
            event, me = entry["event"], entry.get("player") == 0
            seen += event in ("discard", "draw", "claim", "table", "xianggong") or (event in ("pass", "nowin") and me)
    assert shown == seen > 20


def test_the_menu_and_the_hint_speak_the_players_words(tmp_path):
    """Every action of every decision of a deal, in the menu's words: the Chinese word first, the
    cards in Chinese with their codes, no English word (the English is in the legend only)."""
    decisions = log_decisions(replay_jsonl(52, 2, "expert,greedy,expert", seating="fixed").splitlines())
    words_seen = set()
    for d in decisions:
        for a in d.position.legal_actions():
            words = action_words(a, d.position)
            words_seen.add(words.split()[0])
            assert not re.search(r"[A-Za-z]", re.sub(r"\([A-Z]{2}\)", "", words)), words
            short = action_words(a, d.position, codes=False)
            assert not re.search(r"[A-Za-z]", short) and display_width(short) <= 22, short
    assert {"打", "过"} <= words_seen <= {"打", "碰", "吃", "占", "发子", "过", "胡"}
    for word in ("打", "碰", "吃", "占", "发子", "过", "胡"):
        assert word in ACTION_LEGEND


# ---------------------------------------------------------------------------- the hint's rule


def test_the_best_is_the_highest_payoff_shown():
    """The issue's case: the race picked 红士 (+3.938), the fresh estimates show 打 WX at +4.291
    and 打 WS at +4.257: the best named is WX, and the others whose paired interval against it
    reaches 0 are as good as it (simkit.studies.analyze.shown_verdict, the review's rule)."""
    rows = [HintRow(5, 3.938, -0.80, 0.10), HintRow(2, 4.291, 0.0, 0.0), HintRow(3, 4.257, -0.40, 0.33),
            HintRow(1, 1.0, -4.3, -2.0)]
    v = hint_verdict(rows)
    assert v.best == 1 and v.order == (1, 2, 0, 3)
    assert v.against[0] == pytest.approx((-0.80, 0.10)) and v.against[2] == pytest.approx((-0.40, 0.33))
    assert v.as_good == (2, 0) and 3 not in v.as_good
    assert v.against[3] == pytest.approx((-4.3, -2.0))  # below 0: worse
    review = shown_verdict([("5", 3.938, -0.80, 0.10), ("2", 4.291, 0.0, 0.0), ("3", 4.257, -0.40, 0.33),
                            ("1", 1.0, -4.3, -2.0)])
    assert review.best == "2" and review.as_good == ("2", "5", "3")  # the hint and the review agree


@pytest.mark.parametrize("lo, hi, as_good", [(-0.502, 0.123, True), (-0.9, -0.001, False), (-0.9, 0.0, True),
                                             (math.nan, math.nan, True), (0.1, 0.5, True)])
def test_an_action_is_worse_only_where_its_interval_lies_below_0(lo, hi, as_good):
    v = hint_verdict([HintRow(1, 2.0, 0.0, 0.0), HintRow(2, 1.5, lo, hi)])
    assert v.best == 0 and (v.as_good == (1,)) == as_good


def test_equal_payoffs_keep_the_order_listed_and_one_action_is_the_best():
    assert hint_verdict([HintRow(1, 1.0, 0, 0), HintRow(2, 1.0, -0.1, 0.1)]).best == 0
    assert hint_verdict([HintRow(3, math.nan, 0, 0), HintRow(4, -1.0, -0.1, 0.1)]).best == 1
    one = hint_verdict([HintRow(1, 0.5, 0, 0)])
    assert one.order == (0,) and one.as_good == ()


def _analysis(position, rows):
    """A stand-in for an analysis: (action, payoff, vs_top_lo, vs_top_hi) rows, the interval of
    each action's payoff minus the shown best's, paired."""
    actions = [SimpleNamespace(action=a, payoff=p, vs_top_lo=lo, vs_top_hi=hi, rollouts=200)
               for a, p, lo, hi in rows]
    return SimpleNamespace(actions=actions, confidence=0.95, policy="expert", determinisations=200)


def test_the_hint_names_the_highest_shown_and_says_as_good_as_the_best():
    decisions = log_decisions(replay_jsonl(52, 2, "expert,greedy,expert", seating="fixed").splitlines())
    d = next(d for d in decisions if d.position.decision == "discard" and len(d.position.legal_actions()) >= 4)
    legal = d.position.legal_actions()
    a, b, c, e = legal[:4]
    analysis = _analysis(d.position, [(a, 3.938, -0.80, 0.10), (b, 4.291, 0.0, 0.0), (c, 2.0, -2.79, 0.123),
                                      (e, 0.5, -4.8, -2.5)])
    lines = hint_lines(analysis, legal, d.position)
    assert all(display_width(line) <= WIDTH for line in lines), lines
    text = "\n".join(lines)
    rows = [line for line in lines if re.match(r"^ *\d+  ", line)]
    assert [int(r.split()[0]) for r in rows] == [legal.index(x) + 1 for x in (b, a, c, e)]  # by payoff shown
    assert rows[0].endswith("the best") and rows[1].endswith("as good as the best")
    assert rows[2].endswith("as good as the best") and rows[3].endswith("worse")
    assert "separated" not in text.replace("does not separate", "")
    sentence = text.split("hint: ", 1)[1].replace("\n", " ")
    assert sentence.startswith(f"{legal.index(b) + 1} ({action_words(b, d.position)}) has the highest expected "
                               "payoff, +4.291 牌")
    numbers = f"{legal.index(a) + 1} and {legal.index(c) + 1}"
    assert f"{numbers} are as good as the best" in re.sub(r"\s+", " ", sentence)
    # every other action separated: said so, naming none
    analysis = _analysis(d.position, [(a, 3.9, 0.0, 0.0), (b, 1.0, -3.9, -1.9)])
    text = " ".join(" ".join(hint_lines(analysis, [a, b], d.position)).split())
    assert "every other action is worse" in text and "as good as" not in text


# ---------------------------------------------------------------------------- answers and lines


def test_answers_are_read_or_refused_in_one_short_line():
    decisions = log_decisions(replay_jsonl(52, 2, "expert,greedy,expert", seating="fixed").splitlines())
    d = next(d for d in decisions if d.position.decision == "discard" and len(d.position.legal_actions()) >= 3)
    legal, position = d.position.legal_actions(), d.position
    assert read_answer("2", legal, position) == (legal[1], "")
    assert read_answer(" 1 ", legal, position) == (legal[0], "")
    card = next(a for a in legal[1:] if 0 <= a < 28)
    assert read_answer(f"打 {TYPE_NAMES[card]}", legal, position) == (card, "")  # the words, in Chinese too
    assert read_answer(f"discard {TYPE_NAMES[card]}", legal, position) == (card, "")
    assert read_answer("discard XX", legal, position)[0] is None
    for answer in ("²", "٣", "0", str(len(legal) + 1), "y" * 10_000_000, "z" * (MAX_ACTION_TEXT + 1), "q" * 30):
        action, line = read_answer(answer, legal, position)
        assert action is None and "\n" not in line and display_width(line) <= WIDTH, line
        assert answer[:25] not in line or len(answer) <= 3
    assert read_answer("y" * 10_000_000, legal, position)[1] == (
        f"too long: at most {MAX_ACTION_TEXT} characters (that had 10,000,000); type 1-{len(legal)}, h or q")
    assert read_answer("x" * MAX_ACTION_TEXT, legal, position)[1].startswith("that answer is not a choice here")


def test_wrapping_keeps_the_columns_and_the_words():
    line = "  seat 1 (expert)      payoff +4 牌; hand at the end: " + " ".join(["黄马(YM)×3"] * 12)
    parts = wrap_line(line, 80, "      ")
    assert all(display_width(p) <= 80 for p in parts) and len(parts) > 1
    assert parts[0].startswith("  seat 1 (expert)      payoff")  # the padding within a line kept
    assert " ".join(p.strip() for p in parts).split() == line.split()
    groups = ["吃 黄将(YJ) 黄士(YS) 黄相(YX)"] * 5
    parts = wrap_line("exposed: " + ", ".join(groups), 60, "  ", sep=", ")
    assert all(display_width(p) <= 60 for p in parts)
    assert all(p.strip().rstrip(",").removeprefix("exposed: ") == groups[0] for p in parts)  # groups whole
    long_word = "a" * 200
    assert all(display_width(p) <= 80 for p in wrap_line(f"log: {long_word}", 80)) and \
        "".join(p.strip() for p in wrap_line(f"log: {long_word}", 80)).endswith(long_word)


def test_a_claim_decision_lists_its_actions_in_chinese():
    decisions = log_decisions(replay_jsonl(52, 2, "expert,greedy,expert", seating="fixed").splitlines())
    claims = [d for d in decisions if d.position.decision == "claim" and len(d.position.legal_actions()) >= 2]
    assert claims
    for d in claims:
        words = [action_words(a, d.position) for a in d.position.legal_actions()]
        assert "过" in words
        for a, w in zip(d.position.legal_actions(), words):
            if a == L.A_PENG:
                assert w.startswith("碰 ")
            if a >= L.A_CHOW_TRIAD:
                assert w.startswith("吃 ")

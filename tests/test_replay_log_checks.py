"""A log is checked whole (issue 52, item 7): a replay or play log is the deal line, the
events, and the end line, and every one of them must be the line the deal gives.

Before, the end line was read back only for its result and winner, so a log whose payoffs,
hu, units or patterns were edited was reviewed as true (the page showed "payoffs seat 0 100");
a string seed and unknown fields in the deal line were taken.  Each tampered case below is
refused in one line (a :class:`~simkit.replay.LogError`) naming the line and the field, by
:func:`~simkit.replay.log_decisions`, by the review's reader and by ``simkit review``; a log
of ``simkit replay`` and one of ``simkit play`` (a session's too) pass.
"""

from __future__ import annotations

import json

import pytest

from simkit.cli import main
from simkit.replay import LogError, log_decisions, replay_jsonl
from simkit.studies import review as review_module
from simkit.studies.reference import LogPolicyError, NotBuiltinPolicyError
from simkit.studies.review import parse_decision_log, read_decision_log
from simkit.studies.table import ScriptedPerson, play_table, table_setup

SEED, DEAL, TABLE = 52, 2, "expert,greedy,expert"  # a deal won with patterns (checked below)


@pytest.fixture(scope="module")
def won() -> list[str]:
    lines = replay_jsonl(SEED, DEAL, TABLE, seating="fixed").splitlines()
    end = json.loads(lines[-1])
    assert end["result"] == "win" and end["patterns"] and end["hu"] > 0, end  # the cases below need all of it
    return lines


def _edited(lines: list[str], index: int, **changes) -> list[str]:
    entry = json.loads(lines[index])
    entry.update(changes)
    out = list(lines)
    out[index] = json.dumps(entry, ensure_ascii=False)
    return out


def refused(lines: list[str], pattern: str) -> str:
    """The one-line refusal of ``lines`` by log_decisions, matching ``pattern``; the review's
    reader refuses them too, naming the log first."""
    with pytest.raises(LogError, match=pattern) as info:
        log_decisions(lines)
    text = str(info.value)
    assert "\n" not in text and len(text) < 400, text
    with pytest.raises(LogError, match="^game.jsonl: " + pattern.lstrip("^")):
        parse_decision_log(lines, "game.jsonl")
    return text


# ---------------------------------------------------------------------------- good logs pass


def test_a_replay_log_and_a_play_log_pass(won, tmp_path):
    assert len(log_decisions(won)) > 10
    setup = table_setup(seat=1, bots=["expert", "greedy"], seed=SEED, deals=2, log=tmp_path / "play.jsonl")
    result = play_table(setup, ScriptedPerson(lambda turn: turn.legal[-1]))
    assert len(result.outcomes) == 2
    for path in setup.logs:  # a session's logs: the deal lines carry session_length, session, deal_in_session
        lines = path.read_text(encoding="utf-8").splitlines()
        assert "session_length" in json.loads(lines[0])
        assert [d.line for d in read_decision_log(path)] == [d.line for d in log_decisions(lines)]
    one = table_setup(seat=0, bots=["greedy", "expert"], seed=SEED, log=tmp_path / "one.jsonl")
    play_table(one, ScriptedPerson())
    lines = one.logs[0].read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["policies"][0] == "human" and log_decisions(lines)
    # blank lines are no lines of the deal, but they count in the line numbers
    assert log_decisions(["", *won, ""])[0].line == log_decisions(won)[0].line + 1


# ---------------------------------------------------------------------------- the end line


@pytest.mark.parametrize("field, value", [("payoffs", [100, -50, -50]), ("hu", 99), ("units", 7),
                                          ("patterns", ["two_lou"]), ("patterns", []), ("lou", 9),
                                          ("how", "draw"), ("concealed", "YJ")])
def test_an_edited_end_line_is_refused(won, field, value):
    end = json.loads(won[-1])
    assert end[field] != value
    text = refused(_edited(won, len(won) - 1, **{field: value}),
                   rf"^line {len(won)}: the end line is not the replay's of the logged moves: ")
    assert f"{field} {json.dumps(value)} (the replay gives {json.dumps(end[field])})" in text, text


def test_an_end_line_with_a_field_more_or_less_is_refused(won):
    refused(_edited(won, len(won) - 1, note="edited"), rf'^line {len(won)}: .*an unknown field "note"')
    end = json.loads(won[-1])
    other = (end["winner"] + 1) % 3  # the winner is who declares the win: another's is no move of the deal's
    refused(_edited(won, len(won) - 1, winner=other), rf"^line {len(won)}: seat {end['winner']} is to discard, but "
                                                      "the log says")
    end = json.loads(won[-1])
    del end["units"]
    refused([*won[:-1], json.dumps(end)], rf"^line {len(won)}: the end line .*: no units")
    # a 穿牌 end line with a win's fields
    lines = replay_jsonl(SEED, 0, TABLE, seating="fixed").splitlines()
    assert json.loads(lines[-1])["result"] == "exhausted"
    refused(_edited(lines, len(lines) - 1, hu=10), rf'^line {len(lines)}: .*an unknown field "hu"')
    refused(_edited(lines, len(lines) - 1, payoffs=[2, -1, -1]), rf"^line {len(lines)}: .*payoffs \[2, -1, -1\]")


def test_an_integer_is_not_true_nor_a_float(won):
    """JSON's ``true`` and ``2.0`` are not the integers the deal gives (Python's == says they are)."""
    end = json.loads(won[-1])
    payoffs = [float(x) for x in end["payoffs"]]
    refused(_edited(won, len(won) - 1, payoffs=payoffs), rf"^line {len(won)}: .*payoffs")
    k = next(i for i, line in enumerate(won) if json.loads(line).get("player") == 1)
    refused(_edited(won, k, player=True), rf"^line {k + 1}: the log says")


# ---------------------------------------------------------------------------- after the end


@pytest.mark.parametrize("extra", ["copy of a move", "second end", "deal line", "empty object line"])
def test_anything_after_the_end_line_is_refused(won, extra):
    line = {"copy of a move": won[1], "second end": won[-1], "deal line": won[0],
            "empty object line": json.dumps({"event": "note"})}[extra]
    refused([*won, line], rf"^line {len(won) + 1}: the deal has ended, but the log goes on with ")
    refused([*won, "", line], rf"^line {len(won) + 2}: the deal has ended")


# ---------------------------------------------------------------------------- the deal line


@pytest.mark.parametrize("seed, shown", [("52", '"52"'), (52.0, "52.0"), (True, "true"), (-1, "-1"),
                                         (None, "null"), ([52], r"\[52\]")])
def test_a_seed_that_is_no_integer_is_refused(won, seed, shown):
    refused(_edited(won, 0, seed=seed), rf"^line 1: the deal line's seed must be an integer >= 0, got {shown}$")


def test_the_deal_lines_fields_are_checked(won):
    refused(_edited(won, 0, note="mine"), r'^line 1: the deal line has an unknown field "note" ')
    refused(_edited(won, 0, deal="2"), r"^line 1: the deal line's deal must be an integer")
    refused(_edited(won, 0, dealer=3), r"^line 1: the deal line's dealer must be 0, 1 or 2, got 3")
    refused(_edited(won, 0, policies=["expert", "greedy"]), r"^line 1: the deal line's policies must be three")
    refused(_edited(won, 0, policies=["expert", 7, "expert"]), r"^line 1: the deal line's policies")
    refused(_edited(won, 0, session_length=2), r"^line 1: the deal line has no session")
    refused(_edited(won, 0, session_length=2, session=0, deal_in_session=0),
            r"^line 1: the deal line's session is 0, but deal 2 of sessions of 2 is session 1")
    header = json.loads(won[0])
    del header["stock"]
    refused([json.dumps(header), *won[1:]], r"^line 1: the deal line has no stock$")
    refused(["", _edited(won, 0, note=1)[0], *won[1:]], r"^line 2: the deal line has an unknown field")  # its number


def test_an_event_line_with_a_field_more_is_refused(won):
    k = next(i for i, line in enumerate(won) if json.loads(line)["event"] == "draw")
    refused(_edited(won, k, note="x"), rf'^line {k + 1}: the "draw" line is not the deal\'s draw line: an unknown '
                                       'field "note"$')


# ---------------------------------------------------------------------------- on the command line


def test_review_refuses_a_tampered_log_in_one_line_before_any_rollout(won, tmp_path, capsys):
    log = tmp_path / "tampered.jsonl"
    log.write_text("\n".join(_edited(won, len(won) - 1, payoffs=[100, -50, -50])) + "\n", encoding="utf-8")
    code = main(["review", str(log), "--seat", "0", "--quiet"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"simkit: error: {log}: line {len(won)}: the end line"), err
    assert "payoffs [100, -50, -50]" in err


def test_review_notes_a_logs_bot_by_the_errors_type_not_its_text(won, tmp_path, capsys, monkeypatch):
    """The review goes on without the reference loss exactly when the log names a bot the
    rollouts cannot seat (a :class:`LogPolicyError`), whatever its message says; another
    :class:`NotBuiltinPolicyError` is an error even when its text names the log's deal line
    (the command once decided by matching "the log's deal line" in the message)."""
    log = tmp_path / "deal.jsonl"
    log.write_text("\n".join(won) + "\n", encoding="utf-8")
    seat = 1
    argv = ["review", str(log), "--seat", str(seat), "--rollouts", "8", "--sharpen", "0", "--quiet"]

    def raises(error):
        def review_log_against_reference(*args, **kwargs):
            raise error
        return review_log_against_reference

    monkeypatch.setattr(review_module, "review_log_against_reference", raises(LogPolicyError("policy 'x' of seat 0")))
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "simkit: note: no loss against expert: policy 'x' of seat 0" in captured.err
    assert "total loss against its picks" in captured.out  # the review went on without a reference
    monkeypatch.setattr(review_module, "review_log_against_reference",
                        raises(NotBuiltinPolicyError("the log's deal line: policy 'x'")))
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == "simkit: error: the log's deal line: policy 'x'" and "note" not in captured.err

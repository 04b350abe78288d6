"""``simkit play`` (:mod:`simkit.studies.table`): a person at the table against two bots.

The command is driven through a pseudo-terminal (the standard ``pty`` module: ``pty.fork`` gives
the child a terminal of its own, so it reads the typed answers, echoes them and gets Ctrl-C as a
terminal's SIGINT) to the end of a deal, for three seeds and two rule sets, always taking
action 1; then ``simkit review`` reviews the person's seat in the log it wrote, with its default
settings but for small rollout counts.  Also: the log is ``simkit replay``'s format (replay's
reader follows it; with three bots it is replay's log byte for byte) and the moves in it are the
ones typed; Ctrl-C mid-game leaves a valid log of the moves played; ``q`` stops; a bad policy or
seat is one line before any play.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

import pytest
from helpers import PLAY_PROMPT

from simkit.cli import main
from simkit.errors import SimkitError
from simkit.evaluator.explain import explained_total
from simkit.replay import LogError, log_decisions, replay_jsonl
from simkit.rules import RuleSet
from simkit.studies.table import (
    HUMAN,
    ScriptedPerson,
    TerminalPerson,
    bots_deal,
    card_text,
    hand_lines,
    log_paths,
    play_table,
    table_setup,
    warm_table,
)

PROMPT = PLAY_PROMPT
NEXT_DEAL = re.compile(r"Enter: next deal, q: stop $")
CTRL_C = "\x03"
FIRST_OUTPUT_S = 900  # the first child may compile what the warm-up did not (a loaded machine: minutes)
RULE_SETS = {"default": [], "drawer_then_next": ["drawn_card_chow_by=drawer_then_next"]}
SEEDS = (3, 41, 2026)
SMALL_REVIEW = ["--rollouts", "8", "--samples", "2", "--sharpen", "0"]


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """The table's kernels compiled (or loaded) once here: the children load them from numba's
    cache (keyed by the sources, the same for them)."""
    warm_table()


def drive(argv: list[str], cwd: Path, answer, timeout: float = FIRST_OUTPUT_S) -> tuple[int, str, list[str]]:
    """Run ``simkit ARGV`` on a pseudo-terminal in ``cwd``; at each prompt send ``answer(kind,
    text)`` (kind ``choose`` or ``next``, text: the output since the last answer) followed by
    Enter, or Ctrl-C for :data:`CTRL_C`.  (exit status, the whole output, the answers sent)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its own session, the pty its controlling terminal
        try:
            # a terminal's Ctrl-C interrupts, as in a shell's foreground (a test run started in
            # the background inherits SIGINT ignored, which Python then leaves ignored)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.chdir(cwd)
            env = dict(os.environ, PYTHONIOENCODING="utf-8")
            env.pop("SIMKIT_DEBUG", None)
            os.execve(sys.executable, [sys.executable, "-m", "simkit", *argv], env)
        finally:
            os._exit(127)
    raw = b""
    seen = 0
    sent: list[str] = []
    deadline = time.monotonic() + timeout
    last, resent = time.monotonic(), False  # when the last answer went
    ended = False
    try:
        while True:
            if time.monotonic() > deadline:
                pytest.fail(f"simkit {' '.join(argv)}: no end within {timeout} s; output so far:\n"
                            f"{raw.decode('utf-8', 'replace')[-3000:]}")
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                if sent and sent[-1] == CTRL_C and time.monotonic() - last > 10 and not resent:
                    os.write(fd, b"\x03")  # the first one was lost to the race above: press it again
                    resent = True
                continue
            try:
                data = os.read(fd, 1 << 16)
            except OSError:  # EIO: the child closed the terminal
                data = b""
            if not data:
                ended = True
                break
            raw += data
            text = raw.decode("utf-8", "replace").replace("\r\n", "\n")
            tail = text[seen:]
            kind = "choose" if PROMPT.search(tail) else "next" if NEXT_DEAL.search(tail) else None
            if kind is None:
                continue
            reply = answer(kind, tail)
            sent.append(reply)
            if reply == CTRL_C:  # as a person would: once the child waits at its prompt (a signal that lands
                time.sleep(1.0)  # just before readline's select() waits unseen until the next key)
            os.write(fd, b"\x03" if reply == CTRL_C else (reply + "\n").encode("utf-8"))
            seen = len(text)
            last = time.monotonic()
            deadline = last + 120  # compiled by now: each next prompt comes in seconds
    finally:  # the child closed its terminal: it ends now; on a failure, it never outlives the test
        wait_until = time.monotonic() + (60 if ended else 1)
        done, status = os.waitpid(pid, os.WNOHANG)
        while not done and time.monotonic() < wait_until:
            time.sleep(0.1)
            done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
        os.close(fd)
    return os.waitstatus_to_exitcode(status), raw.decode("utf-8", "replace").replace("\r\n", "\n"), sent


def shown_decisions(output: str) -> list[int]:
    return [int(x) for x in re.findall(r"decision #(\d+):", output)]


def run_cli(argv, capsys) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------------------- through a terminal, then review


@pytest.mark.parametrize("rules", list(RULE_SETS), ids=list(RULE_SETS))
@pytest.mark.parametrize("seed", SEEDS)
def test_a_game_on_a_terminal_is_logged_and_reviewed(tmp_path, capsys, seed, rules):
    rule_args = [a for r in RULE_SETS[rules] for a in ("--rule", r)]
    bad = iter(["x", "0", "99"])  # at the first prompt: three bad answers, each re-prompted in one line

    def answer(kind, text):
        return next(bad, "1") if kind == "choose" else ""

    code, out, sent = drive(["play", "--seed", str(seed), "--log", "game.jsonl", *rule_args], tmp_path, answer)
    assert code == 0, out[-3000:]
    assert f"seed {seed}" in out and "review your play: simkit review game.jsonl --seat 0" in out
    assert "'x' is not a choice here" in out and "'99' is not a choice here" in out
    assert "Traceback" not in out
    assert "=== " in out and ("穿牌" in out or "decomposition:" in out)
    typed = [a for a in sent if a == "1"]

    log = tmp_path / "game.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["event"] == "deal" and header["seed"] == seed and header["deal"] == 0 and header["dealer"] == 0
    assert header["policies"] == [HUMAN, "expert", "expert"]
    assert header["rules"] == RuleSet.from_strings(RULE_SETS[rules]).to_dict()
    assert json.loads(lines[-1])["event"] == "end"
    # simkit replay's reader follows the log move by move; the person's moves are the ones typed
    decisions = log_decisions(lines)
    mine = [d for d in decisions if d.seat == 0]
    assert len(mine) == len(typed) >= 1
    assert all(d.action == d.position.legal_actions()[0] for d in mine)  # "1": the first action listed
    assert shown_decisions(out) == [d.index for d in mine]  # the "#" the review prints
    # the end as the terminal showed it: the winner's decomposition adds up to the logged hu
    end = json.loads(lines[-1])
    if end["result"] == "win":
        shown = out.split("decomposition:\n", 1)[1].split(" payoff ", 1)[0].splitlines()[:-1]
        assert explained_total([x.strip() for x in shown]) == end["hu"]

    # simkit review on the log: the person's seat, its defaults but for small counts
    code, stdout, err = run_cli(["review", log, "--seat", "0", *SMALL_REVIEW, "--json", "--quiet"], capsys)
    assert code == 0, err
    review = json.loads(stdout)
    choices = [d for d in mine if len(d.position.legal_actions()) >= 2]
    assert [r["index"] for r in review["decisions"]] == [d.index for d in choices]
    reference = review["reference"]  # the loss against expert: the person's seat played by expert in the rollouts
    assert reference["table"] == ["expert", "expert", "expert"]
    assert len(reference["decisions"]) == len(choices)


def test_ctrl_c_mid_game_keeps_the_moves_played(tmp_path):
    answers = iter(["1", "1", "1", CTRL_C])
    code, out, sent = drive(["play", "--seed", "5", "--log", "cut.jsonl"], tmp_path,
                            lambda kind, text: next(answers))
    assert sent[-1] == CTRL_C
    assert code == 128 + signal.SIGINT, out[-2000:]
    assert "interrupted; the log cut.jsonl holds the deal and its" in out and "simkit: interrupted" in out
    lines = (tmp_path / "cut.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(isinstance(json.loads(line), dict) for line in lines)  # valid JSON lines, each whole
    assert json.loads(lines[0])["event"] == "deal" and json.loads(lines[-1])["event"] != "end"
    pending = shown_decisions(out)[-1]  # the decision Ctrl-C interrupted
    # every move up to the pending decision is there, in order, and nothing after it
    with pytest.raises(LogError, match=rf"the log ends at seat 0's decision \(decision {pending}\)"):
        log_decisions(lines)


def test_q_stops_and_a_session_deals_in_turn(tmp_path):
    """q at a decision stops the sitting (exit 0); a session of two deals writes one log per deal,
    the second dealt by the seat rule option next_dealer names; other seats and bots, and a hint."""
    hinted = []

    def answer(kind, text):
        if kind == "choose" and not hinted:
            hinted.append(True)
            return "h"
        return "1" if kind == "choose" else ""

    code, out, _ = drive(["play", "--seed", "8", "--seat", "2", "--bots", "greedy", "patient", "--deals", "2",
                          "--hint-rollouts", "8"], tmp_path, answer)
    assert code == 0, out[-3000:]
    assert "hint: " in out and "rollouts: expert at every seat" in out
    first, second = (tmp_path / "play-8-deal0.jsonl"), (tmp_path / "play-8-deal1.jsonl")
    headers, ends = [], []
    for path in (first, second):
        lines = path.read_text(encoding="utf-8").splitlines()
        log_decisions(lines)
        headers.append(json.loads(lines[0]))
        ends.append(json.loads(lines[-1]))
    assert headers[0]["policies"] == ["greedy", "patient", HUMAN] and headers[0]["session_length"] == 2
    winner = ends[0].get("winner", -1)
    assert headers[1]["dealer"] == (winner if winner >= 0 else 1) and headers[1]["deal"] == 1
    code, out, sent = drive(["play", "--seed", "8", "--log", "q.jsonl"], tmp_path,
                            lambda kind, text: "q")
    assert code == 0 and sent == ["q"] and "stopped; the log q.jsonl holds the deal" in out


# ---------------------------------------------------------------------------- in-process


def test_three_bots_at_the_table_log_what_replay_logs(tmp_path):
    for seed, deal, policies, rules in ((1, 0, "expert,expert,expert", RuleSet()),
                                        (5, 3, "greedy,expert,random", RuleSet(tianhu=False))):
        path = tmp_path / f"{seed}.jsonl"
        bots_deal(seed, deal, policies.split(","), rules, log=path)
        assert path.read_text(encoding="utf-8") == replay_jsonl(seed, deal, policies, rules, seating="fixed")


def test_turns_are_the_logs_decisions_and_sessions_follow_next_dealer(tmp_path):
    setup = table_setup(seat=1, bots=["greedy", "expert"], seed=77, deals=3, log=tmp_path / "s.jsonl",
                        rules=RuleSet.from_strings(["next_dealer=winner_else_same"]))
    person = ScriptedPerson(lambda turn: turn.legal[-1])
    result = play_table(setup, person)
    assert not result.quit and len(result.outcomes) == 3
    assert [p.name for p in setup.logs] == ["s-deal0.jsonl", "s-deal1.jsonl", "s-deal2.jsonl"]
    turns = iter(person.turns)
    dealer = 0
    for k, (path, outcome) in enumerate(zip(setup.logs, result.outcomes)):
        lines = path.read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0])
        assert header["policies"] == ["greedy", HUMAN, "expert"] and header["dealer"] == dealer
        assert (header["session"], header["deal_in_session"]) == (0, k)
        for d in (d for d in log_decisions(lines) if d.seat == 1):
            turn = next(turns)
            assert (turn.index, turn.position, turn.legal[-1]) == (d.index, d.position, d.action)
            assert list(turn.legal) == d.position.legal_actions()
        if outcome.end["result"] == "win":
            assert explained_total(outcome.best) == outcome.end["hu"]
        winner = outcome.end.get("winner", -1)
        dealer = winner if winner >= 0 else dealer  # winner_else_same
    assert next(turns, None) is None
    assert list(result.totals) == [sum(o.end["payoffs"][q] for o in result.outcomes) for q in range(3)]


class Answers:
    """The answers of a person on a terminal (:class:`TerminalPerson`'s ``read``): action 1 at
    every decision, ``next_deal[i]`` at the i-th "next deal" prompt (Enter, or q to stop)."""

    def __init__(self, next_deal: list[str]) -> None:
        self.next_deal = list(next_deal)
        self.asked = 0  # "next deal" prompts

    def __call__(self, prompt: str) -> str:
        if NEXT_DEAL.fullmatch(prompt):
            self.asked += 1
            return self.next_deal.pop(0)
        assert PROMPT.fullmatch(prompt), prompt
        return "1"


@pytest.mark.parametrize("deals, next_deal, played", [(1, [], 1), (3, ["", ""], 3), (3, ["", "q"], 2),
                                                       (3, ["q"], 1), (4, ["", "", ""], 4)])
def test_the_next_deal_prompt_plays_exactly_the_deals_asked(tmp_path, deals, next_deal, played):
    """``--deals K``: the "next deal" prompt comes after each deal but the last (K - 1 times,
    each answered), and the sitting plays K deals, or stops after the deal a q answers (an off
    by one in the loop asks once more, or plays one deal fewer or more)."""
    read = Answers(next_deal)
    out = io.StringIO()
    setup = table_setup(seat=0, bots=["greedy", "greedy"], seed=11, deals=deals, log=tmp_path / "p.jsonl")
    result = play_table(setup, TerminalPerson(read=read, out=out))
    assert read.asked == len(next_deal) and read.next_deal == []
    assert len(result.outcomes) == played and result.quit == (played < deals)
    shown = re.findall(r"=== deal (\d+) of (\d+) ", out.getvalue())
    assert shown == [(str(k), str(deals)) for k in range(1, played + 1)]
    assert [p.name for p in setup.logs if p.exists()] == [p.name for p in setup.logs[:played]]


class StopsAfterEachDeal(ScriptedPerson):
    def end_deal(self, outcome, totals, more) -> bool:
        super().end_deal(outcome, totals, more)
        return False


@pytest.mark.parametrize("deals, played, quit", [(1, 1, False), (2, 1, True)])
def test_stopping_after_the_last_deal_is_no_quit(deals, played, quit):
    """A person who answers "stop" after every deal: after the last one the sitting has simply
    ended (not quit, which a check of the answer without ``more`` reported); before it, it stops."""
    result = play_table(table_setup(seat=0, bots=["greedy", "greedy"], seed=11, deals=deals, log=None),
                        StopsAfterEachDeal())
    assert (len(result.outcomes), result.quit) == (played, quit)


def test_the_terminals_card_and_hand_forms():
    assert card_text(7) == "红将(RJ)" and card_text(27, 2) == "绿卒(GZ)×2"
    counts = [0] * 28
    counts[0], counts[3], counts[13], counts[27] = 2, 1, 1, 3
    assert hand_lines(counts) == ["黄  黄将(YJ)×2 | 黄车(YC)", "红  红卒(RZ)", "绿  绿卒(GZ)×3"]


@pytest.mark.parametrize(("argv", "needle"), [
    (["--bots", "nosuch", "expert"], "unknown policy 'nosuch'"),
    (["--seat", "3"], "--seat must be 0, 1 or 2"),
    (["--bots", "expert"], "--bots: expected 2 arguments"),
    (["--log", "taken.jsonl"], "exists already"),
    (["--deals", "0"], "--deals"),
])
def test_bad_settings_are_one_line_before_any_play(tmp_path, capsys, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken.jsonl").write_text("a game\n", encoding="utf-8")
    code, out, err = run_cli(["play", "--seed", "4", *argv], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("simkit: error: ") and needle in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken.jsonl"]
    assert (tmp_path / "taken.jsonl").read_text(encoding="utf-8") == "a game\n"


def test_the_library_checks_its_settings():
    with pytest.raises(SimkitError, match="not a bot"):
        table_setup(bots=[HUMAN, "expert"], log=None)
    with pytest.raises(SimkitError, match="bots must be 2 policies"):
        table_setup(bots=["expert"], log=None)
    with pytest.raises(SimkitError, match="seat must be"):
        table_setup(seat=True, log=None)
    setup = table_setup(log=None)
    assert setup.seed >= 0 and setup.logs is None and setup.policy_texts() == [HUMAN, "expert", "expert"]
    assert [p.name for p in log_paths("x/play-3.jsonl", 1)] == ["play-3.jsonl"]


def test_odd_answers_are_refused_in_one_line_and_a_long_one_unread(tmp_path):
    """At the first prompt: '²' (``str.isdigit`` is true, ``int`` fails: the game ended with status
    2) and a 100,000-character line (echoed whole before, then cut short): each is refused in one
    short line, the long one with the limit and never echoed, and asked again; the game goes on
    to its end."""
    answers = iter(["²", "y" * 100_000])

    def read(prompt: str) -> str:
        return next(answers, "1") if PROMPT.fullmatch(prompt) else ""

    out = io.StringIO()
    setup = table_setup(seat=0, bots=["greedy", "greedy"], seed=11, log=tmp_path / "p.jsonl")
    result = play_table(setup, TerminalPerson(read=read, out=out))
    text = out.getvalue()
    assert len(result.outcomes) == 1 and not result.quit
    assert "'²' is not a choice here" in text
    assert "too long: at most 80 characters (that had 100,000)" in text and "y" * 20 not in text
    assert max(len(line) for line in text.splitlines()) <= 80

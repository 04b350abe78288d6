"""``simkit play``: a person takes a seat at the table against two bots, for one deal or a
session, and every move goes to a log that ``simkit review`` and ``simkit replay``'s readers take.

:func:`table_setup` checks the settings (the person's seat, the two bots, the rule set, the
seed, the number of deals, the log) before anything is played; :func:`play_table` plays the
deals.  The deals are the run's: deal ``k`` of seed ``S`` is dealt from the cards of deal ``k``
of any batch simulation with that seed, and the bots play with their seats' own random streams,
through the same decision loop as a run with a Python policy (:func:`simkit.runner.python_play.play_one`):
the person is that Python policy.  Seat 0 deals the first deal; with ``deals`` K > 1 the deals
form a session, each next dealer following from the last deal by the rule option ``next_dealer``
(as ``simkit simulate --session-length K`` with the seats fixed).

The log is ``simkit replay``'s JSON lines (:mod:`simkit.replay`), one file per deal (with K > 1:
the log's name with ``-dealN`` before its suffix), written line by line as the deal goes and
flushed after each: an interrupted game leaves every move made so far, a valid prefix of the
deal's log.  The deal line records the person's seat as the policy ``human`` (:data:`HUMAN`):
``simkit review LOG --seat N`` takes that seat's logged actions as given (the review against a
reference continues with the reference in the reviewed seat, :func:`simkit.studies.reference.table_from_log`).
With every seat a bot (``seat`` None) the log is byte for byte ``simkit replay``'s of the same
deal, seating fixed (tests/test_play.py).

What the person sees and answers is a :class:`Person`; :class:`TerminalPerson` is the one of
the command line, every line at most :data:`WIDTH` (80) terminal columns (:func:`wrap_line`):
at each decision the moves since the last one in words, one a line, every seat's exposed
groups, 出 and discards, the stock, the person's hand grouped by colour in Chinese card names
with the codes beside them (``红将(RJ)``), and the legal actions numbered in the player's words
(打 碰 吃 占 发子 过 胡, :func:`action_words`; the English in a legend, :data:`ACTION_LEGEND`);
an answer is read by :func:`read_answer` (a line over :data:`MAX_ACTION_TEXT` characters is
refused unread).  ``h`` prints the hint (:func:`hint_lines`): the analysis of the position
(:func:`simkit.studies.analyze.analyze_position`, up to a thousand rollouts per action), its
best the action with the highest payoff shown and the others "as good as the best" or worse by
their interval against it (:func:`hint_verdict`); ``q`` stops.  At the end of a deal: the
payoffs and the winner's decomposition (:func:`simkit.evaluator.evaluate`'s ``best``).
"""

from __future__ import annotations

import dataclasses
import math
import os
import secrets
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TextIO

import numpy as np

from simkit.cards import (
    CHE,
    COLOUR_CHINESE,
    JIANG,
    MA,
    N_CARDS,
    N_COLOURS,
    N_RANKS,
    N_SEATS,
    N_TYPES,
    PAO,
    SHI,
    TYPE_NAMES,
    XIANG,
    ZU,
    parse_type,
    type_name,
)
from simkit.deck import deal_deck
from simkit.defaults import DEFAULT_BOTS, DEFAULT_HINT_ROLLOUTS, DEFAULT_POLICY
from simkit.engine import layout as L
from simkit.engine.env import DealError, deal_error_text
from simkit.engine.position import Position, PositionError, action_text, parse_action, position_from_state
from simkit.errors import SimkitError
from simkit.evaluator import evaluate
from simkit.exposed import ExposedGroup, parse_exposed
from simkit.evaluator.patterns import PATTERN_CHINESE
from simkit.glossary import ACTION_CHINESE, GROUP_CHINESE, NOWIN_CHINESE, TERMINAL_WIDTH, display_width, pad, wrap_line
from simkit.jit import compile_note, end_note
from simkit.policies.registry import PolicyError, PolicySpec, parse_policy, policy_label, warn_model_rules
from simkit.replay import deal_line, end_line, event_dict, log_line, state_melds
from simkit.rng import root_key
from simkit.rules import RuleSet
from simkit.runner.play import N_RESULT, R_ERROR, SEATING_FIXED, check_rows, new_scratch, next_dealer
from simkit.runner.python_play import Actor, actors_for
from simkit.runner.python_play import play_one as play_deal_python
from simkit.runner.rollout import rollout_policy_arrays
from simkit.storage.paths import check_out_file
from simkit.specs.analyze import AnalyzeSpec
from simkit.studies.analyze import ShownRow, analyze_position, shown_verdict

HUMAN = "human"  # the policy a log records for the person's seat
MAX_DEALS = 10_000  # deals of one sitting
EVENT_CAPACITY = 8192  # event rows of one deal (as simkit replay's)
MAX_ACTION_TEXT = 80  # characters of an answer read at all: a longer line is refused unread, never echoed
MAX_ECHO = 24  # terminal columns of a refused answer echoed back (a longer one is "that answer")
WIDTH = TERMINAL_WIDTH  # terminal columns of every line the table prints
_DECISION_EVENTS = (L.E_DISCARD, L.E_CLAIM, L.E_PASS, L.E_WIN)  # one per decision (and a win is declared)


class QuitTable(BaseException):
    """The person stopped (``q``, or the end of the input): raised from a decision, through the
    deal loop (which turns only :class:`Exception` into a :class:`DealError`), to :func:`play_table`."""


# ---------------------------------------------------------------------------- the settings


@dataclasses.dataclass(frozen=True)
class TableSetup:
    """Checked settings of a sitting (:func:`table_setup`): ``seat`` the person's (None: every
    seat a bot, for tests and warming up), ``bots`` the other two seats' policies in seat order,
    ``logs`` one file per deal (None: no log)."""

    seat: int | None
    bots: tuple[PolicySpec, ...]
    rules: RuleSet
    seed: int
    deals: int
    logs: tuple[Path, ...] | None
    hint_rollouts: int = DEFAULT_HINT_ROLLOUTS
    hint_policy: PolicySpec = PolicySpec(DEFAULT_POLICY)  # the rollout policy of a hint's analysis

    def policies(self) -> tuple[PolicySpec | None, ...]:
        """The policy of each seat (None: the person's)."""
        bots = iter(self.bots)
        return tuple(None if q == self.seat else next(bots) for q in range(N_SEATS))

    def policy_texts(self) -> list[str]:
        """The policies by seat as the log's deal line records them (:data:`HUMAN` for the person)."""
        return [HUMAN if spec is None else spec.text() for spec in self.policies()]


def log_paths(log: str | os.PathLike, deals: int) -> tuple[Path, ...]:
    """The log file of each deal: ``log`` itself for one deal, else ``log`` with ``-dealN``
    before its suffix (``play-7.jsonl`` -> ``play-7-deal0.jsonl``, ``play-7-deal1.jsonl``, ...).

    >>> [p.name for p in log_paths("games/play-7.jsonl", 2)]
    ['play-7-deal0.jsonl', 'play-7-deal1.jsonl']
    """
    path = Path(log)
    if deals == 1:
        return (path,)
    return tuple(path.with_name(f"{path.stem}-deal{k}{path.suffix}") for k in range(deals))


def _whole(value: Any, name: str, least: int, most: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not least <= int(value) <= most:
        raise SimkitError(f"{name} must be a whole number in {least}..{most}, got {value!r}", parameters=(name,))
    return int(value)


def table_setup(
    seat: int | None = 0,
    bots: Sequence[str | PolicySpec] = DEFAULT_BOTS,
    rules: RuleSet | None = None,
    seed: int | None = None,
    deals: int = 1,
    log: str | os.PathLike | None = "",
    hint_rollouts: int = DEFAULT_HINT_ROLLOUTS,
    hint_policy: str | PolicySpec = DEFAULT_POLICY,
) -> TableSetup:
    """The settings of a sitting, each checked before anything is played (a one-line
    :class:`SimkitError` naming the setting): ``seat`` 0..2 (None: three bots, ``bots`` then
    names three); ``bots`` two policies (any the registry takes: ``expert``, ``greedy:...``, an
    import path), in seat order; ``seed`` (None: a random one, which the person is told, so the
    game can be replayed); ``deals`` 1..:data:`MAX_DEALS`; ``log`` the log file (``""``: the
    default ``play-SEED.jsonl`` in the current folder; None: no log), which must not exist yet
    (nor, for a session, any deal's file: :func:`log_paths`); ``hint_policy`` the rollout policy
    at every seat of a hint's analysis (any policy the rollouts play: a built-in name with or
    without parameters, ``search`` included, or ``learned:PATH``)."""
    if seat is not None:
        seat = _whole(seat, "seat", 0, N_SEATS - 1)
    count = N_SEATS if seat is None else N_SEATS - 1
    if isinstance(bots, (str, PolicySpec)) or not isinstance(bots, Sequence) or len(bots) != count:
        raise SimkitError(f"bots must be {count} policies (one per other seat), got {bots!r}", parameters=("bots",))
    specs = []
    for bot in bots:
        if (bot.name if isinstance(bot, PolicySpec) else str(bot).partition(":")[0].strip()) == HUMAN:
            raise SimkitError(f"{HUMAN!r} is the person's own seat, not a bot: name two bots (e.g. expert expert)",
                              parameters=("bots",))
        spec = parse_policy(bot) if isinstance(bot, str) else bot
        if not isinstance(spec, PolicySpec):
            raise SimkitError(f"bots must be policy names or PolicySpec values, got {bot!r}", parameters=("bots",))
        specs.append(spec)
    rules = RuleSet() if rules is None else rules
    if not isinstance(rules, RuleSet):
        raise SimkitError(f"rules must be a RuleSet, got {type(rules).__name__}", parameters=("rules",))
    seed = secrets.randbelow(1_000_000_000) if seed is None else _whole(seed, "seed", 0, 2**63 - 1)
    deals = _whole(deals, "deals", 1, MAX_DEALS)
    hint_rollouts = _whole(hint_rollouts, "hint_rollouts", 1, 1_000_000)
    hint_spec = check_hint_policy(hint_policy)
    logs = None
    if log is not None:
        logs = log_paths(log if os.fspath(log) else f"play-{seed}.jsonl", deals)
        for path in logs:
            check_out_file(path, "log")
            if os.path.lexists(path):
                raise SimkitError(f"log {path} exists already (a game is never written over): name another log file, "
                                  "or move it away", parameters=("log",))
    return TableSetup(seat=seat, bots=tuple(specs), rules=rules, seed=seed, deals=deals, logs=logs,
                      hint_rollouts=hint_rollouts, hint_policy=hint_spec)


def check_hint_policy(policy: str | PolicySpec) -> PolicySpec:
    """The hint's rollout policy, checked (one line: it must be one the rollouts play)."""
    spec = parse_policy(policy) if isinstance(policy, str) else policy
    if not isinstance(spec, PolicySpec):
        raise SimkitError(f"hint_policy must be a policy name or a PolicySpec value, got {policy!r}",
                          parameters=("hint_policy",))
    try:
        rollout_policy_arrays(spec)
    except PolicyError as exc:
        raise PolicyError(f"the hint's policy: {exc}", parameters=("hint_policy",)) from None
    return spec


# ---------------------------------------------------------------------------- what the person sees and answers


@dataclasses.dataclass(frozen=True)
class DealStart:
    """A deal about to be played: its number ``deal`` (0-based, of the seed), ``number`` (1..
    of the sitting), the ``dealer`` and the policies by seat."""

    setup: TableSetup
    deal: int
    number: int
    dealer: int
    policies: tuple[str, ...]
    log: Path | None


@dataclasses.dataclass(frozen=True)
class Turn:
    """One of the person's decisions: ``index`` its number among every seat's decisions of the
    deal (the ``#`` of ``simkit review``), the ``position`` as the person sees it, the ``legal``
    actions in the order they are offered, the log lines since the person's last decision
    (``moves``: every seat's; a person sees others' passes and flags only through the table),
    and each seat's discards so far (type, taken by a claim)."""

    start: DealStart
    index: int
    position: Position
    legal: tuple[int, ...]
    moves: tuple[dict[str, Any], ...]
    discards: tuple[tuple[tuple[int, bool], ...], ...]


@dataclasses.dataclass(frozen=True)
class DealOutcome:
    """A finished deal: its ``end`` log line, the winner's decomposition (``best``: one line
    per scoring item, empty on 穿牌), every seat's concealed cards at the end, the log lines
    since the person's last decision and the log file."""

    start: DealStart
    end: dict[str, Any]
    best: tuple[str, ...]
    hands: tuple[str, ...]
    moves: tuple[dict[str, Any], ...]
    discards: tuple[tuple[tuple[int, bool], ...], ...]
    log: Path | None


@dataclasses.dataclass(frozen=True)
class TableResult:
    """The deals played (finished ones), each seat's total payoff, and whether the person
    stopped (``quit``) before the sitting's end."""

    setup: TableSetup
    outcomes: tuple[DealOutcome, ...]
    totals: tuple[int, ...]
    quit: bool = False


class Person(Protocol):
    """What a person at the table sees and answers (:class:`TerminalPerson` on a terminal)."""

    def sit(self, setup: TableSetup) -> None: ...

    def begin_deal(self, start: DealStart) -> None: ...

    def decide(self, turn: Turn) -> int:
        """The action taken (one of ``turn.legal``); raise :class:`QuitTable` to stop."""

    def end_deal(self, outcome: DealOutcome, totals: Sequence[int], more: bool) -> bool:
        """After a deal (``more``: another follows): False stops the sitting."""

    def stopped(self, why: str, log: Path | None, lines: int) -> None:
        """The sitting stops before its end (``why``: ``quit`` or ``interrupted``) with
        ``lines`` lines in the open deal's log (0: no deal open)."""


# ---------------------------------------------------------------------------- one deal


class _LogFile:
    """A deal's log: each line written and flushed as it comes (None: no file)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.lines = 0
        self._fh: TextIO | None = open(path, "x", encoding="utf-8", newline="\n") if path is not None else None

    def write(self, event: dict[str, Any]) -> None:
        if self._fh is not None:
            self._fh.write(log_line(event))
            self._fh.flush()
        self.lines += 1

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class _PersonSeat:
    """The person as the Python policy of their seat in the deal loop."""

    def __init__(self, deal: "_Deal") -> None:
        self._deal = deal

    def act(self, observation: Any, legal: Sequence[int]) -> int:
        return self._deal.person_turn([int(a) for a in legal])


class _Deal:
    """One deal at the table: the loop of :func:`simkit.runner.python_play.play_one` with the
    person in their seat, the log written as the engine's events come."""

    def __init__(self, setup: TableSetup, start: DealStart, person: Person | None, log: _LogFile) -> None:
        self.setup, self.start, self.person, self.log = setup, start, person, log
        s, deck, rngs, mask, obs, work, pwork, _, _, ids, seat_of = new_scratch()
        self.events = np.zeros((EVENT_CAPACITY, L.EVENT_WIDTH), dtype=np.int64)
        self.n_events = np.zeros(1, dtype=np.int64)
        self.scratch = (s, deck, rngs, mask, obs, work, pwork, self.events, self.n_events, ids, seat_of)
        self.state = s
        self.written = 0  # event rows written to the log
        self.moves: list[dict[str, Any]] = []  # log lines since the person's last decision
        self.decisions = 0  # decisions of every seat so far
        self.discards: list[list[tuple[int, bool]]] = [[] for _ in range(N_SEATS)]
        self.last_discard: tuple[int, int] | None = None  # (seat, index in its pile) of the last discard

    def play(self) -> tuple["DealOutcome", np.ndarray]:
        """Play the deal to its end: (its outcome, the result row)."""
        setup, start = self.setup, self.start
        deck = np.zeros(N_CARDS, dtype=np.int64)
        deal_deck(root_key(setup.seed), start.deal, np.zeros(4, dtype=np.uint64), deck)
        header = deal_line(setup.seed, start.deal, start.dealer, start.policies, setup.rules, deck,
                           setup.deals if setup.deals > 1 else 1)
        self.log.write(header)
        specs = [PolicySpec("random") if spec is None else spec for spec in setup.policies()]
        actors = actors_for(specs)
        if setup.seat is not None:
            actors[setup.seat] = Actor(python=_PersonSeat(self), blind=True)  # reads the state: no observation made
        result = np.zeros(N_RESULT, dtype=np.int64)
        play_deal_python(setup.seed, root_key(setup.seed), start.deal, start.dealer, actors, setup.rules.to_array(),
                         self.scratch, result, list(start.policies))
        check_rows(result[None, :], setup.seed, list(start.policies), start.deal, SEATING_FIXED)
        if int(result[R_ERROR]) != 0 or self.state[L.S_PHASE] != L.PH_OVER:  # check_rows raises first
            raise DealError(deal_error_text(setup.seed, start.deal, start.policies, "the deal stopped early"))
        if not np.array_equal(self.scratch[1], deck):
            raise RuntimeError("the deal loop dealt other cards than the log's deal line")
        self.flush()
        end = end_line(self.state)
        self.log.write(end)
        return self._outcome(end), result

    def flush(self) -> None:
        """Write the engine's new events to the log (the win and 穿牌 rows: by the end line)."""
        n = int(self.n_events[0])
        if n >= EVENT_CAPACITY:
            raise RuntimeError(f"a deal logged more than {EVENT_CAPACITY} events")
        melds = [state_melds(self.state, p) for p in range(N_SEATS)]
        for row in self.events[self.written : n]:
            if int(row[0]) in _DECISION_EVENTS:
                self.decisions += 1
            line = event_dict(row, melds)
            if line is None:
                continue
            if line["event"] == "discard":
                pile = self.discards[line["player"]]
                pile.append((parse_type(line["card"]), False))
                self.last_discard = (line["player"], len(pile) - 1)
            elif line["event"] == "claim" and line["source"] == "discard" and self.last_discard is not None:
                q, i = self.last_discard  # a claimed discard is the last one made
                self.discards[q][i] = (self.discards[q][i][0], True)
            self.log.write(line)
            self.moves.append(line)
        self.written = n

    def person_turn(self, legal: list[int]) -> int:
        """The person's decision now (the deal loop calls it through :class:`_PersonSeat`)."""
        self.flush()
        assert self.person is not None
        position = position_from_state(self.state, self.setup.rules)
        turn = Turn(start=self.start, index=self.decisions, position=position, legal=tuple(legal),
                    moves=tuple(self.moves), discards=tuple(tuple(pile) for pile in self.discards))
        self.moves = []
        action = self.person.decide(turn)
        if action not in legal:  # a Person's bug, never the engine's: said in one line by the deal loop
            raise ValueError(f"the person's action {action!r} is not one of the legal actions {legal}")
        return int(action)

    def _outcome(self, end: dict[str, Any]) -> DealOutcome:
        s = self.state
        hands = tuple(_counts_text(s[L.S_CONC + N_TYPES * q : L.S_CONC + N_TYPES * (q + 1)]) for q in range(N_SEATS))
        best: tuple[str, ...] = ()
        if end["result"] == "win":
            w = int(end["winner"])
            evaluation = evaluate(s[L.S_CONC + N_TYPES * w : L.S_CONC + N_TYPES * (w + 1)].copy(),
                                  _groups(s, w), self.setup.rules)
            best = tuple(evaluation.best or ())
        return DealOutcome(start=self.start, end=end, best=best, hands=hands, moves=tuple(self.moves),
                           discards=tuple(tuple(pile) for pile in self.discards), log=self.log.path)


def _groups(s: np.ndarray, player: int) -> list[ExposedGroup]:
    """A seat's exposed groups in the engine state, in the order they were laid."""
    return [ExposedGroup(L.MELD_KIND_NAMES[kind], types[:1] if L.MELD_KIND_NAMES[kind] != "chow" else types)
            for kind, types in L.state_melds(s, player)]


# ---------------------------------------------------------------------------- the sitting


def play_table(setup: TableSetup, person: Person | None) -> TableResult:
    """Play the deals of ``setup`` (:func:`table_setup`) with ``person`` in its seat (None only
    with every seat a bot).  Each deal's log is written as it goes (module docstring).  The
    person stopping (:class:`QuitTable`) ends the sitting with the deals finished so far; an
    interrupt (Ctrl-C) is re-raised once the open log is closed and the person told where it is."""
    if not isinstance(setup, TableSetup):
        raise SimkitError(f"setup must be a TableSetup (table_setup), got {type(setup).__name__}")
    if (setup.seat is None) != (person is None):
        raise SimkitError("a person sits at the table exactly when the setup has a seat for one")
    warn_model_rules(setup.bots, setup.rules.to_dict())
    if person is not None:
        person.sit(setup)
    rules_array = setup.rules.to_array()
    texts = tuple(setup.policy_texts())
    totals = [0] * N_SEATS
    outcomes: list[DealOutcome] = []
    dealer = 0
    log: _LogFile | None = None  # the open deal's
    try:
        for k in range(setup.deals):
            start = DealStart(setup=setup, deal=k, number=k + 1, dealer=dealer, policies=texts,
                              log=setup.logs[k] if setup.logs is not None else None)
            if person is not None:
                person.begin_deal(start)
            log = _LogFile(start.log)
            try:
                outcome, result = _Deal(setup, start, person, log).play()
            finally:
                log.close()
            log = None
            outcomes.append(outcome)
            totals = [t + int(x) for t, x in zip(totals, outcome.end["payoffs"])]
            dealer = int(next_dealer(result, dealer, rules_array))
            more = k + 1 < setup.deals
            if person is not None and not person.end_deal(outcome, totals, more) and more:
                raise QuitTable()
    except QuitTable:
        if person is not None:
            person.stopped("quit", log.path if log is not None else None, log.lines if log is not None else 0)
        return TableResult(setup=setup, outcomes=tuple(outcomes), totals=tuple(totals), quit=True)
    except KeyboardInterrupt:
        if person is not None:
            person.stopped("interrupted", log.path if log is not None else None, log.lines if log is not None else 0)
        raise
    return TableResult(setup=setup, outcomes=tuple(outcomes), totals=tuple(totals))


def bots_deal(seed: int, deal: int, policies: Sequence[str | PolicySpec], rules: RuleSet | None = None,
              log: str | os.PathLike | None = None) -> DealOutcome:
    """Deal number ``deal`` of ``seed`` (dealt by seat 0) played at the table by three bots, no
    person: the table's loop and log with nobody to ask.  Its log (``log``, a new file) is
    ``simkit replay``'s of the deal with the seats fixed, byte for byte."""
    setup = table_setup(seat=None, bots=policies, rules=rules, seed=seed, deals=1, log=log)
    start = DealStart(setup=setup, deal=_whole(deal, "deal", 0, 2**63 - 2), number=1, dealer=0,
                      policies=tuple(setup.policy_texts()), log=setup.logs[0] if setup.logs is not None else None)
    file = _LogFile(start.log)
    try:
        return _Deal(setup, start, None, file).play()[0]
    finally:
        file.close()


class ScriptedPerson:
    """A person who answers by rule, silently: ``choose(turn)`` gives the action (default: the
    first legal one); every turn and outcome is kept (``turns``, ``outcomes``).  For tests and
    for :func:`warm_table`."""

    def __init__(self, choose: Callable[[Turn], int] | None = None) -> None:
        self.choose = choose if choose is not None else (lambda turn: turn.legal[0])
        self.turns: list[Turn] = []
        self.outcomes: list[DealOutcome] = []

    def sit(self, setup: TableSetup) -> None:
        pass

    def begin_deal(self, start: DealStart) -> None:
        pass

    def decide(self, turn: Turn) -> int:
        self.turns.append(turn)
        return self.choose(turn)

    def end_deal(self, outcome: DealOutcome, totals: Sequence[int], more: bool) -> bool:
        self.outcomes.append(outcome)
        return True

    def stopped(self, why: str, log: Path | None, lines: int) -> None:
        pass


def warm_table(bots: Sequence[str | PolicySpec] = DEFAULT_BOTS, rules: RuleSet | None = None) -> None:
    """Compile (or load from numba's cache) the kernels a sitting with these bots plays with
    (a hint's excepted): two deals at the table, a :class:`ScriptedPerson` in seat 0, no log."""
    play_table(table_setup(seat=0, bots=bots, rules=rules, seed=0, deals=2, log=None), ScriptedPerson())


class _StopAtFirst(ScriptedPerson):
    """A person who stops at their first decision, keeping it (``turns``)."""

    def decide(self, turn: Turn) -> int:
        self.turns.append(turn)
        raise QuitTable()


def warm_first_decision(setup: TableSetup) -> Position | None:
    """Compile (or load) the kernels the sitting ``setup`` runs up to the person's first decision,
    and no more: its first deal, no log, played until the person is asked (with seat 0, the
    dealer: the deal's start alone; the bots' moves and the hint compile later, in
    :func:`warm_rest_in_background`).  The position of that decision (None without a person)."""
    probe = dataclasses.replace(setup, deals=1, logs=None)
    person = _StopAtFirst() if setup.seat is not None else None
    start = DealStart(setup=probe, deal=0, number=1, dealer=0, policies=tuple(probe.policy_texts()), log=None)
    try:
        _Deal(probe, start, person, _LogFile(None)).play()
    except QuitTable:
        pass
    return person.turns[0].position if person is not None and person.turns else None


def warm_hint(setup: TableSetup, position: Position) -> None:
    """Compile (or load) the kernels of a hint at the table ``setup`` (:meth:`TerminalPerson.hint`'s
    analysis, on ``position``, with one rollout)."""
    analyze_position(position, AnalyzeSpec(policy=setup.hint_policy, rollouts=1, seed=0, batch=1))


def warm_rest_in_background(setup: TableSetup, position: Position | None) -> threading.Thread:
    """Compile (or load) the rest of the sitting's kernels on a background thread (a daemon: it
    never holds up the end of the process), while the person reads their first position: the
    bots' moves (:func:`warm_table`), then a hint's (:func:`warm_hint`, on ``position``).
    numba compiles one kernel at a time, so a kernel the table needs meanwhile waits at most for
    the one being compiled, and is then loaded, not compiled again.  Best effort: an error is
    left to the table to meet and report."""

    def work() -> None:
        try:
            warm_table(setup.bots, setup.rules)
            if position is not None:
                warm_hint(setup, position)
        except Exception:  # noqa: BLE001 - the table reports its own errors where it meets them
            pass

    thread = threading.Thread(target=work, name="simkit-warm-table", daemon=True)
    thread.start()
    return thread


# ---------------------------------------------------------------------------- the terminal


_RANK_BLOCKS = ((JIANG, SHI, XIANG), (CHE, MA, PAO), (ZU,))
_ACTION_CODE = {L.A_WIN: "win", L.A_PASS: "pass", L.A_PENG: "peng", L.A_KONG: "kong", L.A_ZHAN: "zhan"}
_NOWIN_WHY = {"unkonged_zi": "a declined 发子", "chariot_not_out": "a declined 碰 of a chariot"}
_HOW_WORD = {"discard": "on a discard", "draw": "on a drawn card", "table": "with a 将 on the table",
             "tianhu": "天胡, on the dealt hand"}
# the legend of the action words (the English in the legend only; an answer may use either)
ACTION_LEGEND = "打 discard, 碰 peng, 吃 chow, 占 zhan, 发子 kong, 过 pass, 胡 win"


def card_text(t: int, count: int = 1) -> str:
    """A card in Chinese with its code beside it, ``红将(RJ)``, ``红将(RJ)×3`` for copies.

    >>> card_text(7), card_text(7, 3)
    ('红将(RJ)', '红将(RJ)×3')
    """
    return f"{type_name(t, chinese=True)}({TYPE_NAMES[t]})" + (f"×{count}" if count > 1 else "")


def _counts_text(counts: Sequence[int] | np.ndarray) -> str:
    return " ".join(card_text(t, int(n)) for t, n in enumerate(np.asarray(counts).tolist()) if n > 0)


def hand_lines(counts: Sequence[int] | np.ndarray) -> list[str]:
    """A hand grouped by colour, each colour's cards in its 将士相 | 车马炮 | 卒 blocks.

    >>> hand_lines([2, 1, 0, 0, 0, 0, 1] + [0] * 21)
    ['黄  黄将(YJ)×2 黄士(YS) | 黄卒(YZ)']
    """
    counts = np.asarray(counts, dtype=np.int64)
    lines = []
    for c in range(N_COLOURS):
        blocks = []
        for ranks in _RANK_BLOCKS:
            items = [card_text(c * N_RANKS + r, int(counts[c * N_RANKS + r])) for r in ranks
                     if counts[c * N_RANKS + r] > 0]
            if items:
                blocks.append(" ".join(items))
        if blocks:
            lines.append(f"{COLOUR_CHINESE[c]}  " + " | ".join(blocks))
    return lines


def group_text(group: ExposedGroup) -> str:
    """An exposed group in Chinese, its cards with their codes: ``碰 红车(RC)×3``."""
    if group.kind == "chow":
        cards = " ".join(card_text(t) for t in group.types)
    else:
        cards = card_text(group.types[0], group.n_cards)
    return f"{GROUP_CHINESE[group.kind]}{'(table)' if group.kind == 'table' else ''} {cards}"


def action_words(action: int, position: Position, codes: bool = True) -> str:
    """An action in the player's words (:data:`ACTION_LEGEND`), its cards in Chinese with their
    codes (``codes`` False: the Chinese names alone, as the hint's table shows them): ``打 红士(RS)``,
    ``碰 红车(RC)``, ``发子 红车(RC)``, ``吃 黄卒(YZ) 红卒(RZ) 绿卒(GZ)``, ``过``, ``胡``."""

    def card(t: int) -> str:
        return card_text(t) if codes else type_name(t, chinese=True)

    if 0 <= action < N_TYPES:
        return f"{ACTION_CHINESE['discard']} {card(action)}"
    if L.A_CHOW_TRIAD <= action:
        words = action_text(action, position)
        return f"{ACTION_CHINESE['chow']} " + " ".join(card(parse_type(x)) for x in words.split(None, 1)[1].split(","))
    word = ACTION_CHINESE[_ACTION_CODE[action]]
    return f"{word} {card(position.card)}" if action in (L.A_PENG, L.A_KONG, L.A_ZHAN) else word


def _outs(counts: np.ndarray, groups: Sequence[ExposedGroup]) -> tuple[int, int]:
    """出 (components of 3 or 4 identical cards) of a seat: (exposed 碰 / 楼, concealed 子 / 闹)."""
    exposed = sum(1 for g in groups if g.kind in ("peng", "kong"))
    return exposed, int((np.asarray(counts) >= 3).sum())


# ---------------------------------------------------------------------------- the hint


@dataclasses.dataclass(frozen=True)
class HintRow:
    """One action of a hint as its table shows it: ``number`` in the menu, the expected
    ``payoff`` and the interval (``lo``, ``hi``) of its difference to the shown best (the action
    of the highest payoff shown), paired over the determinisations both saw (the analysis's
    ``vs_top``; [0, 0] for the best itself, NaN where not measured)."""

    number: int
    payoff: float
    lo: float
    hi: float


@dataclasses.dataclass(frozen=True)
class HintVerdict:
    """:func:`hint_verdict`: ``order`` the rows' indices by payoff, the best first (``order[0]``);
    ``against[i]`` row i's interval against the best ((0, 0) for the best itself); ``as_good``
    the rows the evidence does not separate from the best (their interval against it reaches 0
    or is unknown), in ``order``."""

    order: tuple[int, ...]
    against: tuple[tuple[float, float], ...]
    as_good: tuple[int, ...]

    @property
    def best(self) -> int:
        return self.order[0]


def hint_verdict(rows: Sequence[HintRow]) -> HintVerdict:
    """The hint's story, by the one rule simkit names a best with everywhere
    (:func:`simkit.studies.analyze.shown_verdict`, as the review and its page do): the best is
    the action with the highest payoff shown (the first listed among equals); another action is
    worse only where its paired interval against the best lies below 0, else it is "as good as
    the best".

    >>> v = hint_verdict([HintRow(1, 3.938, -0.8, 0.1), HintRow(2, 4.291, 0.0, 0.0),
    ...                   HintRow(3, 1.0, -3.8, -1.9)])
    >>> v.best, v.as_good, v.against[0], v.against[2]
    (1, (0,), (-0.8, 0.1), (-3.8, -1.9))
    """
    rows = list(rows)
    if not rows:
        raise SimkitError("a hint needs at least one action")
    verdict = shown_verdict([ShownRow(str(i), r.payoff, r.lo, r.hi) for i, r in enumerate(rows)])
    best = int(verdict.best)

    def key(i: int) -> tuple[int, float, int]:
        payoff = rows[i].payoff
        return (i != best, -payoff if math.isfinite(payoff) else math.inf, i)

    order = tuple(sorted(range(len(rows)), key=key))
    against = tuple((0.0, 0.0) if i == best else (r.lo, r.hi) for i, r in enumerate(rows))
    good = {int(name) for name in verdict.as_good}
    return HintVerdict(order=order, against=against, as_good=tuple(i for i in order[1:] if i in good))


def _signed(x: float) -> str:
    return f"{x:+.3f}" if math.isfinite(x) else "?"


def hint_lines(analysis: Any, legal: Sequence[int], position: Position) -> list[str]:
    """The hint as the terminal shows it (each line at most :data:`WIDTH` columns): every legal
    action by its menu number, best first, with its expected payoff, its interval against the
    best and whether it is "as good as the best" or worse (:func:`hint_verdict`), then one
    sentence naming the best."""
    estimates = {a.action: a for a in analysis.actions}
    actions = [a for a in legal if a in estimates]
    rows = [HintRow(legal.index(a) + 1, estimates[a].payoff, estimates[a].vs_top_lo, estimates[a].vs_top_hi)
            for a in actions]
    verdict = hint_verdict(rows)
    level = f"{round(100 * analysis.confidence, 6):g}%"
    lines = wrap_line(f"hint (rollouts: {analysis.policy} at every seat, up to {analysis.determinisations} per "
                      f"action; payoffs in 牌, {level} intervals):", indent="      ")
    lines.append(f"{'#':>3}  {pad('action', 22)}{'n':>5} {'payoff':>7}  {pad('against the best', 18)} verdict")
    for i in verdict.order:
        row, estimate = rows[i], estimates[actions[i]]
        lo, hi = verdict.against[i]
        if i == verdict.best:
            against, word = "", "the best"
        else:
            against = f"[{_signed(lo)}, {_signed(hi)}]"
            word = "as good as the best" if i in verdict.as_good else "worse"
        lines.append(f"{row.number:>3}  {pad(action_words(actions[i], position, codes=False), 22)}"
                     f"{estimate.rollouts:>5} {_signed(row.payoff):>7}  {against:<18} {word}")
    best = rows[verdict.best]
    words = action_words(actions[verdict.best], position)
    if len(rows) == 1:
        sentence = f"hint: {best.number} ({words}) is the only action here."
    else:
        sentence = f"hint: {best.number} ({words}) has the highest expected payoff, {_signed(best.payoff)} 牌; "
        if len(verdict.as_good) == len(rows) - 1:
            sentence += "the evidence separates no other action from it: all are as good as the best."
        elif verdict.as_good:
            numbers = [str(rows[i].number) for i in verdict.as_good]
            sentence += (f"{_and(numbers)} {'is' if len(numbers) == 1 else 'are'} as good as the best (the "
                         "evidence does not separate them from it).")
        else:
            sentence += "every other action is worse (its interval against it lies below 0)."
    return lines + wrap_line(sentence, indent="      ")


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class TerminalPerson:
    """The person on a terminal (``simkit play``): reads answers with ``read`` (the built-in
    ``input``), writes with ``write`` (standard output); every line it writes is at most
    :data:`WIDTH` terminal columns (:func:`wrap_line`)."""

    def __init__(self, read: Callable[[str], str] = input, out: TextIO | None = None, hint_seed: int = 0) -> None:
        self.read = read
        self.out = out
        self.hint_seed = hint_seed
        self.setup: TableSetup | None = None

    # -- output
    def say(self, text: str = "", indent: str | None = None, sep: str = " ") -> None:
        out = self.out if self.out is not None else sys.stdout
        for line in text.split("\n"):
            for part in wrap_line(line, WIDTH, indent, sep):
                out.write(part + "\n")
        out.flush()

    def _name(self, seat: int, policies: Sequence[str]) -> str:
        return "you" if self.setup is not None and seat == self.setup.seat else f"seat {seat} ({policies[seat]})"

    def sit(self, setup: TableSetup) -> None:
        self.setup = setup
        bots = iter(setup.bots)
        seats = ", ".join(f"seat {q}: {'you' if q == setup.seat else next(bots).text()}" for q in range(N_SEATS))
        default = RuleSet().to_dict()
        changed = {k: v for k, v in setup.rules.to_dict().items() if default[k] != v}
        self.say(f"四色牌 at the table: {seats}")
        self.say(f"seed {setup.seed} (play this game again with --seed {setup.seed})")
        self.say("rules: " + (", ".join(f"{k}={v}" for k, v in changed.items()) if changed else "the default rule set")
                 + f"; {setup.deals} deal{'s' if setup.deals > 1 else ''}"
                 + (", the dealer following the rule option next_dealer" if setup.deals > 1 else ""))
        if setup.logs is not None:
            self.say(f"log: {setup.logs[0]}" + (f" .. {setup.logs[-1].name}" if len(setup.logs) > 1 else "")
                     + " (written as you play)")
        self.say(f"actions: {ACTION_LEGEND}")
        self.say("At each decision type the number of an action (or its words: 打 RC, discard RC, 碰, pass), "
                 "h for a hint, q to stop.")

    def begin_deal(self, start: DealStart) -> None:
        self.say("")
        self.say(f"=== deal {start.number} of {start.setup.deals} (deal {start.deal} of seed {start.setup.seed}): "
                 f"{self._name(start.dealer, start.policies)} deal{'' if start.dealer == start.setup.seat else 's'} ===")

    def _move(self, line: dict[str, Any], policies: Sequence[str]) -> str | None:
        """A log line in words, None for what the person does not see (others' passes and flags)."""
        event = line["event"]
        me = self.setup.seat if self.setup is not None else None
        who = self._name(int(line.get("player", -1)), policies) if "player" in line else ""
        if event == "discard":
            return f"{who} 打 {card_text(parse_type(line['card']))}"
        if event == "draw":
            return f"{who} draw{'s' if line['player'] != me else ''} {card_text(parse_type(line['card']))}"
        if event == "claim":
            cards = " ".join(card_text(parse_type(c)) for c in line["cards"]) if line["kind"] == "chow" else \
                card_text(parse_type(line["card"]), len(line["cards"]))
            return f"{who} {ACTION_CHINESE[line['kind']]} {cards} (from a {line['source']})"
        if event == "pass":
            return f"{who} 过 on {card_text(parse_type(line['card']))}" if line["player"] == me else None
        if event == "nowin":
            reason = line["reason"]
            return (f"{who} may no longer win this deal ({NOWIN_CHINESE[reason]}: {_NOWIN_WHY[reason]})"
                    if line["player"] == me else None)
        if event == "table":
            return f"{who} put{'s' if line['player'] != me else ''} {card_text(parse_type(line['card']))} on the table"
        if event == "xianggong":
            return f"{who} {'are' if line['player'] == me else 'is'} 相公: no more claims or wins this deal"
        return None

    def _moves(self, moves: Sequence[dict[str, Any]], policies: Sequence[str]) -> None:
        """The moves since the person's last decision, one a line."""
        words = [w for w in (self._move(m, policies) for m in moves) if w]
        if words:
            self.say("moves:")
            for w in words:
                self.say(f"  {w}", indent="      ")

    def _table(self, position: Position, discards, policies: Sequence[str]) -> None:
        under = " " * 21  # the column each seat's lines go on in
        for q in range(N_SEATS):
            groups = position.exposed[q]
            exposed_out, hidden_out = _outs(position.hand if q == position.seat else np.zeros(N_TYPES), groups)
            outs = f"出 {exposed_out}" + (f" (+{hidden_out} in hand)" if q == position.seat and hidden_out else "")
            flags = [w for w, on in (("dealer", q == position.dealer), ("相公", position.xianggong[q])) if on]
            self.say(f"{pad(self._name(q, policies), 20)} {'[' + ', '.join(flags) + '] ' if flags else ''}"
                     f"{position.concealed_sizes[q]} concealed, {outs}", indent=under)
            self.say(f"{under}exposed: " + (", ".join(group_text(g) for g in groups) or "-"), indent=under + "  ",
                     sep=", ")
            pile = " ".join(card_text(t) + ("*" if taken else "") for t, taken in discards[q])
            self.say(f"{under}discards: {pile or '-'}", indent=under + "  ")
        dead = _counts_text(position.dead)
        self.say(f"stock: {position.stock} cards; dead: {dead or '-'}   (* a discard taken by a claim)",
                 indent="    ")

    def decide(self, turn: Turn) -> int:
        position, policies = turn.position, turn.start.policies
        self.say("")
        self._moves(turn.moves, policies)
        self._table(position, turn.discards, policies)
        self.say(f"your hand ({sum(position.hand)} concealed):")
        for line in hand_lines(position.hand):
            self.say("  " + line, indent="      ")
        if position.decision == "claim":
            how = "打" if position.source == "discard" else "drew"
            self.say(f"decision #{turn.index}: {self._name(position.source_player, policies)} {how} "
                     f"{card_text(position.card)}: claim it?")
        else:
            self.say(f"decision #{turn.index}: your discard phase: 胡, or 打 a card (将 stay in hand)")
        notes = []
        if position.nowin:
            notes.append("you may no longer win this deal")
        if any(position.locks):
            notes.append("passed (no more claims on): " + _counts_text(position.locks))
        if notes:
            self.say("(" + "; ".join(notes) + ")")
        for k, a in enumerate(turn.legal, 1):
            self.say(f"  {k:>2}  {action_words(a, position)}")
        prompt = f"choose 1-{len(turn.legal)} (h hint, q quit): "
        while True:
            try:
                answer = self.read(prompt)
            except EOFError:
                self.say("")
                raise QuitTable() from None
            word = answer.strip()
            if len(answer) <= MAX_ACTION_TEXT and word.lower() in ("q", "quit"):
                raise QuitTable()
            if len(answer) <= MAX_ACTION_TEXT and word.lower() in ("h", "hint", "?"):
                self.hint(turn)
                continue
            action, refusal = read_answer(answer, turn.legal, position)
            if action is not None:
                return action
            self.say(refusal)

    def hint(self, turn: Turn) -> None:
        """The analysis of the position (:func:`analyze_position`, ``hint_rollouts`` per action at
        most), as :func:`hint_lines`."""
        rollouts = self.setup.hint_rollouts if self.setup is not None else DEFAULT_HINT_ROLLOUTS
        policy = self.setup.hint_policy if self.setup is not None else PolicySpec(DEFAULT_POLICY)
        self.say(f"(analysing: up to {rollouts} rollouts per action, {policy_label(policy)} at every seat ...)")
        with compile_note() as timer:
            try:
                analysis = analyze_position(turn.position, AnalyzeSpec(policy=policy, rollouts=rollouts,
                                                                       seed=self.hint_seed, batch=min(64, rollouts)))
            finally:
                end_note(timer)
        for line in hint_lines(analysis, turn.legal, turn.position):
            self.say(line)

    def end_deal(self, outcome: DealOutcome, totals: Sequence[int], more: bool) -> bool:
        start, end = outcome.start, outcome.end
        policies = start.policies
        self.say("")
        self._moves(outcome.moves, policies)
        if end["result"] == "win":
            w = int(end["winner"])
            patterns = ", ".join(f"{PATTERN_CHINESE.get(p, p)}" for p in end["patterns"])
            self.say(f"=== {self._name(w, policies)} 胡 {_HOW_WORD.get(end['how'], end['how'])}: hu {end['hu']}, "
                     f"楼 {end['lou']}, 步 {end['steps']}, {end['units']} 牌 each from the other two"
                     + (f"; patterns: {patterns}" if patterns else "") + " ===")
            groups = ", ".join(group_text(g) for g in parse_exposed(end["exposed"]))
            self.say(f"winning hand: {outcome.hands[w]}", indent="  ")
            if groups:
                self.say(f"exposed: {groups}", indent="  ", sep=", ")
            self.say("decomposition:")
            for line in outcome.best:
                self.say(f"  {line}")
        else:
            self.say("=== 穿牌: the stock ran out, nobody wins ===")
        for q in range(N_SEATS):
            self.say(f"  {pad(self._name(q, policies), 20)} payoff {end['payoffs'][q]:+d} 牌; hand at the end: "
                     f"{outcome.hands[q] or '-'}", indent=" " * 6)
        if start.setup.deals > 1:
            self.say("totals so far: " + ", ".join(f"{self._name(q, policies)} {totals[q]:+d}" for q in range(N_SEATS)))
        if outcome.log is not None:
            seat = start.setup.seat
            self.say(f"log: {outcome.log}")
            self.say(f"review your play: simkit review {outcome.log} --seat {seat}")
        if not more:
            return True
        try:
            answer = self.read("Enter: next deal, q: stop ")
        except EOFError:
            return False
        return len(answer) > MAX_ACTION_TEXT or answer.strip().lower() not in ("q", "quit")

    def stopped(self, why: str, log: Path | None, lines: int) -> None:
        where = (f"; the log {log} holds the deal and its {lines - 1} move lines so far (valid JSON lines; "
                 "simkit review needs a finished deal)" if log is not None and lines else "")
        finished = ""
        if self.setup is not None and self.setup.logs is not None:
            finished = "; the finished deals' logs are complete"
        self.say(f"{'stopped' if why == 'quit' else 'interrupted'}{where}{finished}")


def read_answer(answer: str, legal: Sequence[int], position: Position) -> tuple[int | None, str]:
    """An answer at a decision: (the action it names, "") or (None, the one line, at most
    :data:`WIDTH` columns, that refuses it).  A number 1..len(legal) picks from the menu (ASCII
    digits only: ``'²'`` is refused, not a crash); other text of at most :data:`MAX_ACTION_TEXT`
    characters is read as an action in words (:func:`~simkit.engine.position.parse_action`:
    ``打 RC``, ``discard RC``, ``碰``, ``pass``); a longer line is refused unread and never echoed.
    The answer is echoed back (as ``repr``) only when short (:data:`MAX_ECHO` columns).

    >>> read_answer("x" * 81, [1, 2], None)[1]
    'too long: at most 80 characters (that had 81); type 1-2, h or q'
    """
    choices = f"type 1-{len(legal)}, h or q"
    if len(answer) > MAX_ACTION_TEXT:
        return None, f"too long: at most {MAX_ACTION_TEXT} characters (that had {len(answer):,}); {choices}"
    answer = answer.strip()
    number = answer.isascii() and answer.isdigit()  # not '²' or '٣': digits int() does not read
    if number and 1 <= int(answer) <= len(legal):
        return legal[int(answer) - 1], ""
    why = ""
    if answer and not number:
        try:
            action = parse_action(answer, position)  # an action in words
            if action in legal:
                return action, ""
        except PositionError as exc:
            why = f" ({' '.join(str(exc).split())})"
    shown = repr(answer)
    if display_width(shown) > MAX_ECHO:
        shown = "that answer"
    line = f"{shown} is not a choice here{why}: {choices}"
    if display_width(line) > WIDTH:
        line = f"{shown} is not a choice here: {choices}"
    return None, line

"""``simkit replay``: one deal as JSON lines, one event per line.

Schema (every line has ``"event"``; cards in ``simkit score`` notation):

* ``deal`` — ``seed``, ``deal``, ``dealer``, ``policies``, ``rules``, ``hands`` (three
  concealed hands as dealt), ``stock`` (the 21 stock cards, top first); for a run in sessions
  (``session_length`` K > 1) also ``session_length``, ``session`` and ``deal_in_session``;
* ``discard`` — ``player``, ``card``;
* ``draw`` — ``player``, ``card`` (shown to all);
* ``claim`` — ``player``, ``kind`` (peng / kong / chow / zhan), ``card`` (the claimed card),
  ``cards`` (all cards of the new exposed group), ``source`` (discard / draw);
* ``pass`` — ``player``, ``card``, ``stage`` (peng / chow / chow_next): a legal claim declined;
* ``nowin`` — ``player``, ``card``, ``reason`` (unkonged_zi / chariot_not_out): may no longer win;
* ``table`` — ``player``, ``card``: an unclaimed drawn 将 laid on the drawer's table;
* ``xianggong`` — ``player``: became 相公;
* ``end`` — ``result`` ``"win"`` with ``winner``, ``how`` (discard / draw / table / tianhu),
  ``concealed``, ``exposed``, ``hu``, ``lou``, ``steps``, ``units``, ``patterns``, ``payoffs``;
  or ``result`` ``"exhausted"`` (穿牌) with zero ``payoffs``.

The same (seed, deal, policies, rules, session length, seating) always gives the same bytes,
and the same deal as deal number ``deal`` of a batch simulation with that seed (and session
length and seating).  ``seating`` is the run's (as ``simkit simulate``: by default ``rotate``
when the policies differ, ``fixed`` when they are the same); the deal is played with the
policies seated as in that run (``policies`` in the ``deal`` line: by seat, as played), which
is the same as replaying those seated policies with fixed seats (the random streams belong to
the seats, :mod:`simkit.runner.play`).  With seating ``all``, ``seating_index`` (0..5, the
row's ``seating`` column) picks the row.
With sessions, deal N's dealer is found by playing the earlier deals of its session (without
event logs) and applying the rule option ``next_dealer``; the cards of deal N do not depend on
the session length, only who deals them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from simkit.cards import (
    N_COLOURS,
    N_COPIES,
    N_SEATS,
    N_TYPES,
    TYPE_NAMES,
    ZU,
    colour_of,
    format_counts,
    ids_to_counts,
    parse_counts,
    parse_type,
    rank_of,
)
from simkit.deck import DEALER_CARDS, PLAYER_CARDS
from simkit.engine import layout as L
from simkit.engine.kernel import apply as engine_apply
from simkit.engine.kernel import new_engine_workspace
from simkit.engine.kernel import start as engine_start
from simkit.engine.position import Position, position_from_state
from simkit.errors import RuleError, SimkitError, loads_json
from simkit.evaluator import pattern_names
from simkit.policies.registry import (
    PolicySpec,
    parse_policies,
    policy_arrays,
    warn_model_rules,
)
from simkit.rules import RuleSet
from simkit.runner.play import (
    PERMUTATIONS,
    SEATING_CODES,
    SEATING_FIXED,
    Lineup,
    check_rows,
    deal_kernels_cached,
    play_one,
    session_dealer,
)
from simkit.runner.play import seating_index as row_seating
from simkit.specs.simulate import default_seating

_STAGES = ("peng", "chow", "chow_next")
_NOWIN = ("unkonged_zi", "chariot_not_out")


def meld_text(kind: int, types: Sequence[int]) -> str:
    """One meld in ``--exposed`` notation."""
    return f"{L.MELD_KIND_NAMES[kind]}:{','.join(TYPE_NAMES[t] for t in types if t >= 0)}"


def state_melds(state: np.ndarray, player: int) -> list[tuple[int, list[int]]]:
    """(kind, types) of a player's melds in the order they were laid."""
    return [(kind, list(types)) for kind, types in L.state_melds(state, player)]


def event_dict(row: np.ndarray, melds: Sequence[Sequence[tuple[int, list[int]]]]) -> dict[str, Any] | None:
    """One engine event row as its log line (the module docstring's schema); ``melds``: each
    seat's melds so far (:func:`state_melds`).  None for the win and 穿牌 rows: the ``end`` line
    is written from the final state."""
    kind, p, t, a, b, c = (int(x) for x in row)
    card = TYPE_NAMES[t] if t >= 0 else None
    if kind == L.E_DISCARD:
        return {"event": "discard", "player": p, "card": card}
    if kind == L.E_DRAW:
        return {"event": "draw", "player": p, "card": card}
    if kind == L.E_CLAIM:
        meld_kind, types = melds[p][b]
        return {
            "event": "claim",
            "player": p,
            "kind": L.MELD_KIND_NAMES[meld_kind],
            "card": card,
            "cards": [TYPE_NAMES[x] for x in types] if meld_kind == L.M_CHOW else [card] * {
                L.M_PENG: 3, L.M_KONG: 4, L.M_ZHAN: 2}[meld_kind],
            "source": "discard" if c == L.SRC_DISCARD else "draw",
        }
    if kind == L.E_PASS:
        return {"event": "pass", "player": p, "card": card, "stage": _STAGES[a]}
    if kind == L.E_NOWIN:
        return {"event": "nowin", "player": p, "card": card, "reason": _NOWIN[a]}
    if kind == L.E_TABLE:
        return {"event": "table", "player": p, "card": card}
    if kind == L.E_XIANGGONG:
        return {"event": "xianggong", "player": p}
    return None


def replay_events(
    seed: int,
    deal: int,
    policies: str | Sequence[str | PolicySpec],
    rules: RuleSet | None = None,
    dealer: int = 0,
    session_length: int = 1,
    seating: str | None = None,
    seating_index: int = 0,
) -> Iterator[dict[str, Any]]:
    """Events of one deal as dicts (see the module docstring).

    ``session_length`` K > 1: the deal belongs to a run in sessions of K; ``dealer`` (0 by
    default) is then the dealer of each session's first deal and the deal's own dealer follows
    from the session's earlier deals.  ``seating`` (None: simulate's default for these
    policies) and, for ``all``, ``seating_index`` (0..5) seat the policies as in that run."""
    rules = rules if rules is not None else RuleSet()
    specs = parse_policies(policies)
    session_length = int(session_length)
    if session_length < 1:
        raise ValueError(f"session_length must be >= 1, got {session_length}")
    seating = default_seating(specs) if seating is None else seating
    if seating not in SEATING_CODES:
        raise ValueError(f"seating must be one of {', '.join(SEATING_CODES)}, got {seating!r}")
    if not 0 <= seating_index <= 5 or (seating != "all" and seating_index != 0):
        raise ValueError(f"the seating index is 0..5 with seating all (0 otherwise), got {seating_index}")
    j = int(row_seating(SEATING_CODES[seating], int(deal), int(seating_index), session_length))
    specs = tuple(specs[int(k)] for k in PERMUTATIONS[j])  # by seat, as seated in deal N
    ids, params, user = policy_arrays(specs)
    warn_model_rules(specs, rules.to_dict())
    texts = [s.text() for s in specs]
    if session_length > 1:
        dealer = session_dealer(seed, deal, Lineup(ids, params, rules.to_array()), session_length, user,
                                first_dealer=dealer, policies=texts)
    state, deck, events, result = play_one(seed, deal, ids, params, rules.to_array(), dealer, user)
    # a deal that stopped early (an illegal action, MAX_DECISIONS) is an error, never a 穿牌
    check_rows(result[None, :], seed, texts, int(deal), SEATING_FIXED)
    yield deal_line(seed, deal, dealer, texts, rules, deck, session_length)
    melds = [state_melds(state, p) for p in range(N_SEATS)]
    for row in events:
        line = event_dict(row, melds)
        if line is not None:
            yield line
    yield end_line(state)


def deal_line(seed: int, deal: int, dealer: int, policies: Sequence[str], rules: RuleSet, deck: np.ndarray,
              session_length: int = 1) -> dict[str, Any]:
    """The ``deal`` line of deal number ``deal`` of run ``seed`` (the module docstring's schema):
    ``policies`` by seat as played, ``deck`` the deal's shuffled card ids (the dealer's cards
    first, then the next seats', then the stock, top first)."""
    order = [(dealer + k) % N_SEATS for k in range(N_SEATS)]
    hands = [""] * N_SEATS
    pos = 0
    for k, seat in enumerate(order):
        size = DEALER_CARDS if k == 0 else PLAYER_CARDS
        hands[seat] = format_counts(ids_to_counts(deck[pos : pos + size]))
        pos += size
    header = {
        "event": "deal",
        "seed": int(seed),
        "deal": int(deal),
        "dealer": int(dealer),
    }
    if session_length > 1:
        header.update({"session_length": int(session_length), "session": int(deal) // session_length,
                       "deal_in_session": int(deal) % session_length})
    header.update({
        "policies": [str(p) for p in policies],
        "rules": rules.to_dict(),
        "hands": hands,
        "stock": [TYPE_NAMES[int(c) // N_COPIES] for c in deck[pos:]],
    })
    return header


def end_line(state: np.ndarray) -> dict[str, Any]:
    """The ``end`` line of a finished deal, from its final engine state."""
    payoffs = [int(x) for x in state[L.S_PAYOFF : L.S_PAYOFF + N_SEATS]]
    winner = int(state[L.S_WINNER])
    if winner < 0:
        return {"event": "end", "result": "exhausted", "payoffs": payoffs}
    conc = state[L.S_CONC + N_TYPES * winner : L.S_CONC + N_TYPES * (winner + 1)]
    return {
        "event": "end",
        "result": "win",
        "winner": winner,
        "how": L.WIN_KIND_NAMES[int(state[L.S_WIN_KIND])],
        "concealed": format_counts(conc),
        "exposed": " ".join(meld_text(k, ts) for k, ts in state_melds(state, winner)),
        "hu": int(state[L.S_HU]),
        "lou": int(state[L.S_LOU]),
        "steps": int(state[L.S_STEPS]),
        "units": int(state[L.S_UNITS]),
        "patterns": list(pattern_names(int(state[L.S_PATTERNS]))),
        "payoffs": payoffs,
    }


def log_line(event: dict[str, Any]) -> str:
    """One event as its line of the log (JSON, UTF-8 characters as they are, newline-ended)."""
    return json.dumps(event, ensure_ascii=False, sort_keys=False) + "\n"


def replay_is_cached(deal: int, policies: str | Sequence[str | PolicySpec], session_length: int = 1) -> bool:
    """Whether replaying deal ``deal`` compiled would load every kernel it needs from numba's
    cache (:func:`simkit.runner.play.deal_kernels_cached`).  ``simkit replay`` interprets the
    deal when it would not (``--engine auto``): the kernels' Python source gives the same
    bytes (tests/test_replay_engine.py) in about a second, where compiling them takes a minute."""
    ids, _, user = policy_arrays(parse_policies(policies))
    return deal_kernels_cached(int(deal), ids, int(session_length), user)


def replay_jsonl(seed: int, deal: int, policies, rules: RuleSet | None = None, dealer: int = 0,
                 session_length: int = 1, seating: str | None = None, seating_index: int = 0) -> str:
    """The JSON-lines text of :func:`replay_events`."""
    return "".join(log_line(e) for e in replay_events(seed, deal, policies, rules, dealer, session_length, seating,
                                                      seating_index))


# ---------------------------------------------------------------------------- decisions of a log


class LogError(SimkitError):
    """A replay log that cannot be followed: malformed, or an event the deal does not give."""


@dataclasses.dataclass(frozen=True)
class LoggedDecision:
    """Decision ``index`` (0-based, every seat's decisions in order) of a replayed deal: the
    ``position`` its player saw, the ``action`` it took and the log ``line`` (1-based) that
    shows the action; ``state``: the whole engine state before the action (every hand and the
    stock as the log records them: what a review against a reference rolls out from)."""

    index: int
    seat: int
    position: Position
    action: int
    line: int
    state: np.ndarray = dataclasses.field(default=None, compare=False, repr=False)


_CLAIM_ACTIONS = {"peng": L.A_PENG, "kong": L.A_KONG, "zhan": L.A_ZHAN}


def _claim_action(entry: dict[str, Any]) -> int:
    kind = entry.get("kind")
    if kind in _CLAIM_ACTIONS:
        return _CLAIM_ACTIONS[kind]
    if kind != "chow":
        raise ValueError(f"unknown claim kind {kind!r}")
    types = [parse_type(str(x)) for x in entry.get("cards", [])]
    zu = [t for t in types if rank_of(t) == ZU]
    if len(zu) == N_COLOURS:
        return L.A_CHOW_ZU4
    if len(zu) == N_COLOURS - 1:
        missing = set(range(N_COLOURS)) - {colour_of(t) for t in zu}
        return L.A_CHOW_ZU + missing.pop()
    return L.A_CHOW_TRIAD


def _action_of(entry: dict[str, Any], phase: int, player: int) -> int | None:
    """The action the log line ``entry`` shows for ``player`` (None: it shows none)."""
    event = entry.get("event")
    if entry.get("player", entry.get("winner")) != player:
        return None
    if phase == L.PH_DISCARD:
        if event == "discard":
            return parse_type(str(entry["card"]))
        if event == "end" and entry.get("result") == "win":
            return L.A_WIN
        return None
    if event == "pass":
        return L.A_PASS
    if event == "claim":
        return _claim_action(entry)
    return None


DEAL_FIELDS = ("event", "seed", "deal", "dealer", "policies", "rules", "hands", "stock")  # a deal line's own
SESSION_FIELDS = ("session_length", "session", "deal_in_session")  # and, in a run in sessions, these three
MAX_SHOWN = 200  # characters of a value from a log shown in a message


def _shown(value: Any) -> str:
    """A value from a log, in a message: as JSON (:data:`MAX_SHOWN` characters at most)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def _whole_number(header: dict[str, Any], name: str, number: int, least: int = 0) -> int:
    value = header.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise LogError(f"line {number}: the deal line's {name} must be an integer >= {least}, got {_shown(value)}")
    return value


def check_deal_line(header: dict[str, Any], number: int = 1) -> None:
    """The deal line (log line ``number``) checked field by field, a one-line :class:`LogError`
    naming the line and the field: exactly :data:`DEAL_FIELDS` (and :data:`SESSION_FIELDS`
    together, or none of them), ``seed``, ``deal`` and ``dealer`` integers (a dealer 0..2),
    ``policies`` three strings.  The hands, the stock and the rules are checked when the deal
    is rebuilt from them (:func:`log_decisions`)."""
    fields = set(DEAL_FIELDS) | (set(SESSION_FIELDS) if any(k in header for k in SESSION_FIELDS) else set())
    unknown = [k for k in header if k not in fields]
    if unknown:
        raise LogError(f"line {number}: the deal line has an unknown field {_shown(unknown[0])} (a deal line has "
                       f"{', '.join(DEAL_FIELDS[1:])}, and in a session {', '.join(SESSION_FIELDS)})")
    missing = [k for k in DEAL_FIELDS + SESSION_FIELDS if k in fields and k not in header]
    if missing:
        raise LogError(f"line {number}: the deal line has no {missing[0]}")
    _whole_number(header, "seed", number)
    deal = _whole_number(header, "deal", number)
    dealer = _whole_number(header, "dealer", number)
    if dealer >= N_SEATS:
        raise LogError(f"line {number}: the deal line's dealer must be 0, 1 or 2, got {dealer}")
    if "session_length" in header:
        length = _whole_number(header, "session_length", number, 2)
        for name, want in (("session", deal // length), ("deal_in_session", deal % length)):
            if _whole_number(header, name, number) != want:
                raise LogError(f"line {number}: the deal line's {name} is {header[name]}, but deal {deal} of "
                               f"sessions of {length} is {name} {want}")
    policies = header["policies"]
    if not isinstance(policies, list) or len(policies) != N_SEATS or not all(isinstance(p, str) for p in policies):
        raise LogError(f"line {number}: the deal line's policies must be three names (by seat), got "
                       f"{_shown(policies)}")


def _deal_deck(header: dict[str, Any], number: int = 1) -> tuple[np.ndarray, int, RuleSet]:
    check_deal_line(header, number)
    dealer = int(header["dealer"])
    try:
        rules = RuleSet.from_dict(header["rules"])
        if not isinstance(header["hands"], list) or not isinstance(header["stock"], list):
            raise TypeError("the hands and the stock are lists")
        hands = [parse_counts(str(h)) for h in header["hands"]]
        stock = [parse_type(str(c)) for c in header["stock"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise LogError(f"line {number}: the deal line is incomplete or malformed ({' '.join(str(exc).split())})") \
            from None
    if len(hands) != N_SEATS:
        raise LogError(f"line {number}: the deal line needs three hands")
    order = [(dealer + k) % N_SEATS for k in range(N_SEATS)]
    sizes = [DEALER_CARDS, PLAYER_CARDS, PLAYER_CARDS]
    types: list[int] = []
    for k, seat in enumerate(order):
        if int(hands[seat].sum()) != sizes[k]:
            raise LogError(f"line {number}: seat {seat} is dealt {int(hands[seat].sum())} cards, not {sizes[k]}")
        types += [t for t in range(N_TYPES) for _ in range(int(hands[seat][t]))]
    types += stock
    counts = np.bincount(np.array(types, dtype=np.int64), minlength=N_TYPES)
    if len(types) != N_COPIES * N_TYPES or (counts != N_COPIES).any():
        raise LogError(f"line {number}: the hands and the stock are not the 112 cards, four of each")
    copy = np.zeros(N_TYPES, dtype=np.int64)
    deck = np.zeros(len(types), dtype=np.int64)
    for i, t in enumerate(types):
        deck[i] = t * N_COPIES + copy[t]
        copy[t] += 1
    return deck, dealer, rules


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: ``1`` is not ``true`` nor ``1.0``, whatever Python's ``==`` says."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _differences(entry: dict[str, Any], want: dict[str, Any]) -> str:
    """How a log line differs from the one the deal gives, field by field (one line)."""
    parts = [f"an unknown field {_shown(k)}" for k in entry if k not in want]
    parts += [f"no {k}" for k in want if k not in entry]
    parts += [f"{k} {_shown(entry[k])} (the replay gives {_shown(want[k])})" for k in want
              if k in entry and not _same(entry[k], want[k])]
    return "; ".join(parts)


def log_decisions(lines: Sequence[str | dict[str, Any]]) -> list[LoggedDecision]:
    """Every decision of the deal a replay log (``simkit replay``'s lines, text or dicts)
    records: the deal is rebuilt from its first line (:func:`check_deal_line`) and followed
    move by move; each line must be the very line the deal gives (no field more or less), the
    end line too (the winner, how, the hand, hu, 楼, 步, units, patterns and payoffs of the
    replay of the logged moves), and none may follow the end line; else a one-line
    :class:`LogError` naming the line."""
    entries: list[dict[str, Any]] = []
    numbers: list[int] = []  # each entry's line in the log (1-based, blank lines counted)
    for number, line in enumerate(lines, 1):
        if isinstance(line, str):
            if not line.strip():
                continue
            try:
                line = loads_json(line)
            except json.JSONDecodeError as exc:
                raise LogError(f"line {number}: not JSON ({exc.msg})") from None
        if not isinstance(line, dict) or "event" not in line:
            raise LogError(f"line {number}: not a replay event (an object with an \"event\")")
        entries.append(dict(line))
        numbers.append(number)
    if not entries or entries[0]["event"] != "deal":
        raise LogError(f"line {numbers[0] if numbers else 1}: a replay log starts with its deal line")
    try:
        deck, dealer, rules = _deal_deck(entries[0], numbers[0])
    except RuleError as exc:
        raise LogError(f"line {numbers[0]}: {exc}") from None
    rules_array = rules.to_array()
    s = np.zeros(L.N_STATE, dtype=np.int64)
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    work = new_engine_workspace()
    ev = np.zeros((4096, L.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    engine_start(s, deck, dealer, rules_array, mask, work, ev, ev_n)
    cursor = 1
    seen = 0

    def follow(upto: int) -> None:
        nonlocal cursor, seen
        melds = [state_melds(s, p) for p in range(N_SEATS)]
        for row in ev[seen:upto]:
            kind = int(row[0])
            if kind in (L.E_WIN, L.E_EXHAUSTED):
                want = end_line(s)  # the deal is over: the end line is the final state's
            else:
                want = event_dict(row, melds)
                if want is None:
                    continue
            if cursor >= len(entries):
                raise LogError(f"the log ends before the deal does (the deal goes on with {_shown(want)})")
            got = entries[cursor]
            if not _same(got, want):
                if want["event"] == "end" and got.get("event") == "end":
                    raise LogError(f"line {numbers[cursor]}: the end line is not the replay's of the logged moves: "
                                   + _differences(got, want))
                if got.keys() == want.keys():
                    raise LogError(f"line {numbers[cursor]}: the log says {_shown(got)}, the deal gives "
                                   f"{_shown(want)}")
                raise LogError(f"line {numbers[cursor]}: the {_shown(got.get('event'))} line is not the deal's "
                               f"{want['event']} line: {_differences(got, want)}")
            cursor += 1
        seen = upto

    follow(int(ev_n[0]))
    decisions: list[LoggedDecision] = []
    while s[L.S_PHASE] != L.PH_OVER:
        player = int(s[L.S_PLAYER])
        phase = int(s[L.S_PHASE])
        position = position_from_state(s, rules)
        before = s.copy()
        look = cursor
        while look < len(entries) and entries[look]["event"] == "nowin" and entries[look].get("player") == player:
            look += 1  # a flag the decision itself raises comes before its line
        if look >= len(entries):
            raise LogError(f"the log ends at seat {player}'s decision (decision {len(decisions)})")
        entry = entries[look]
        try:
            action = _action_of(entry, phase, player)
        except (ValueError, KeyError, TypeError) as exc:
            raise LogError(f"line {numbers[look]}: {' '.join(str(exc).split())[:MAX_SHOWN]}") from None
        if action is None:
            to = "discard" if phase == L.PH_DISCARD else "claim"
            raise LogError(f"line {numbers[look]}: seat {player} is to {to}, but the log says {_shown(entry)}")
        if not engine_apply(s, action, rules_array, mask, work, ev, ev_n):
            raise LogError(f"line {numbers[look]}: {_shown(entry)} is not legal here")
        decisions.append(LoggedDecision(len(decisions), player, position, action, numbers[look], before))
        follow(int(ev_n[0]))
    if cursor < len(entries):  # the end line is the last: a deal has nothing after its end
        raise LogError(f"line {numbers[cursor]}: the deal has ended, but the log goes on with "
                       f"{_shown(entries[cursor])}")
    return decisions


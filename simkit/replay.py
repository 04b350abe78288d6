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

import json
from typing import Any, Iterator, Sequence

import numpy as np

from simkit.cards import N_COPIES, N_SEATS, N_TYPES, TYPE_NAMES, format_counts, ids_to_counts
from simkit.deck import DEALER_CARDS, PLAYER_CARDS
from simkit.engine import layout as L
from simkit.evaluator import pattern_names
from simkit.policies.registry import PolicySpec, parse_policies, policy_arrays, warn_model_rules
from simkit.rules import RuleSet
from simkit.runner.play import (
    PERMUTATIONS,
    SEATING_CODES,
    SEATING_FIXED,
    check_rows,
    deal_kernels_cached,
    play_one,
    session_dealer,
)
from simkit.runner.play import seating_index as row_seating
from simkit.runner.simulate import default_seating

_STAGES = ("peng", "chow", "chow_next")
_NOWIN = ("unkonged_zi", "chariot_not_out")


def meld_text(kind: int, types: Sequence[int]) -> str:
    """One meld in ``--exposed`` notation."""
    return f"{L.MELD_KIND_NAMES[kind]}:{','.join(TYPE_NAMES[t] for t in types if t >= 0)}"


def state_melds(state: np.ndarray, player: int) -> list[tuple[int, list[int]]]:
    """(kind, types) of a player's melds in the order they were laid."""
    out = []
    for k in range(int(state[L.S_NMELDS + player])):
        base = L.S_MELDS + (player * L.MAX_MELDS + k) * L.MELD_WIDTH
        out.append((int(state[base]), [int(x) for x in state[base + 1 : base + L.MELD_WIDTH] if x >= 0]))
    return out


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
        dealer = session_dealer(seed, deal, ids, params, rules.to_array(), session_length, user, first_dealer=dealer,
                                policies=texts)
    state, deck, events, result = play_one(seed, deal, ids, params, rules.to_array(), dealer, user)
    # a deal that stopped early (an illegal action, MAX_DECISIONS) is an error, never a 穿牌
    check_rows(result[None, :], seed, texts, int(deal), SEATING_FIXED)
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
        header.update({"session_length": session_length, "session": int(deal) // session_length,
                       "deal_in_session": int(deal) % session_length})
    header.update({
        "policies": texts,
        "rules": rules.to_dict(),
        "hands": hands,
        "stock": [TYPE_NAMES[int(c) // N_COPIES] for c in deck[pos:]],
    })
    yield header
    melds = [state_melds(state, p) for p in range(N_SEATS)]
    for row in events:
        kind, p, t, a, b, c = (int(x) for x in row)
        card = TYPE_NAMES[t] if t >= 0 else None
        if kind == L.E_DISCARD:
            yield {"event": "discard", "player": p, "card": card}
        elif kind == L.E_DRAW:
            yield {"event": "draw", "player": p, "card": card}
        elif kind == L.E_CLAIM:
            meld_kind, types = melds[p][b]
            yield {
                "event": "claim",
                "player": p,
                "kind": L.MELD_KIND_NAMES[meld_kind],
                "card": card,
                "cards": [TYPE_NAMES[x] for x in types] if meld_kind == L.M_CHOW else [card] * {
                    L.M_PENG: 3, L.M_KONG: 4, L.M_ZHAN: 2}[meld_kind],
                "source": "discard" if c == L.SRC_DISCARD else "draw",
            }
        elif kind == L.E_PASS:
            yield {"event": "pass", "player": p, "card": card, "stage": _STAGES[a]}
        elif kind == L.E_NOWIN:
            yield {"event": "nowin", "player": p, "card": card, "reason": _NOWIN[a]}
        elif kind == L.E_TABLE:
            yield {"event": "table", "player": p, "card": card}
        elif kind == L.E_XIANGGONG:
            yield {"event": "xianggong", "player": p}
    payoffs = [int(x) for x in state[L.S_PAYOFF : L.S_PAYOFF + N_SEATS]]
    winner = int(state[L.S_WINNER])
    if winner >= 0:
        conc = state[L.S_CONC + N_TYPES * winner : L.S_CONC + N_TYPES * (winner + 1)]
        yield {
            "event": "end",
            "result": "win",
            "winner": winner,
            "how": L.WIN_KIND_NAMES[int(state[L.S_WIN_KIND])],
            "concealed": format_counts(conc),
            "exposed": " ".join(meld_text(k, ts) for k, ts in melds[winner]),
            "hu": int(state[L.S_HU]),
            "lou": int(state[L.S_LOU]),
            "steps": int(state[L.S_STEPS]),
            "units": int(state[L.S_UNITS]),
            "patterns": list(pattern_names(int(state[L.S_PATTERNS]))),
            "payoffs": payoffs,
        }
    else:
        yield {"event": "end", "result": "exhausted", "payoffs": payoffs}


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
    return "".join(json.dumps(e, ensure_ascii=False, sort_keys=False) + "\n"
                   for e in replay_events(seed, deal, policies, rules, dealer, session_length, seating,
                                          seating_index))

"""Deals played in Python, for runs with a Python-tier policy (``act(observation, legal_actions)``).

A Python policy cannot run inside a compiled batch kernel, so a run that has one plays its deals
here, decision by decision, with the same engine kernels, the same decks, random streams,
seatings, sessions and result rows as :func:`simkit.runner.play.play_deals`: with only
compiled policies the two give identical rows (``tests/test_python_policies.py``), so a
Python policy's dataset is an ordinary dataset.  The batch runner calls it batch by batch, in
worker processes when ``workers`` > 1 (each worker imports the policy itself), so a Python
policy scales over cores like any other; it is slower (see docs/engine.md for the rate).

A Python policy is an object with ``act(observation, legal_actions) -> action``
(:class:`simkit.engine.env.PythonPolicy`; ``observation`` is a
:class:`~simkit.engine.env.Observation`).  If it also has ``new_deal(rng)``, that is called
before each deal with a :class:`numpy.random.Generator` keyed by (seed, deal, seat): a policy
that draws its random numbers from it makes runs a pure function of the seed, whatever the
workers.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np

from simkit.cards import N_SEATS
from simkit.deck import deal_deck
from simkit.engine import kernel as E
from simkit.engine.env import MAX_DECISIONS, DealError, Observation, deal_error_text
from simkit.engine.layout import N_ACTIONS, O_NHIST, O_NHIST_UNKNOWN, PH_DRAW, PH_OVER, S_PHASE, S_PLAYER
from simkit.engine.loop import ERR_ILLEGAL_ACTION, ERR_MAX_DECISIONS, ERR_SEAT, ERR_UNKNOWN_POLICY, NO_SUCH_POLICY
from simkit.policies.dispatch import BUILTIN_POLICIES, act_state_for
from simkit.policies.registry import (
    USER_SLOT_BASE,
    PolicySpec,
    builtin_policy_name,
    is_python_policy,
    policy_arrays,
    python_policy_object,
)
from simkit.rng import root_key, seat_stream, stream_state
from simkit.runner.play import (
    DECK_RNG,
    N_RESULT,
    PERMUTATIONS,
    R_ERROR,
    SEATING_ALL,
    SEATING_FIXED,
    check_rows,
    new_scratch,
    next_dealer,
    record_result,
    rows_per_deal,
    seating_index,
)

__all__ = ["Actor", "actor_label", "actors_for", "has_python_policy", "play_deals_python", "play_one"]


@dataclasses.dataclass(frozen=True)
class Actor:
    """One of a run's policies as the Python loop calls it: a built-in (``builtin_id`` >= 0),
    a compiled user function (``function``), or a Python object (``python``); ``params`` is
    the float64 parameter array of the compiled kinds.  ``blind``: a Python object that reads
    no observation (its ``act`` gets None: ``simkit play``'s person, whose table reads the
    state), so that none is made for it."""

    builtin_id: int = -1
    function: Any = None
    python: Any = None
    params: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    blind: bool = False

    def __post_init__(self) -> None:
        kinds = (self.builtin_id >= 0) + (self.function is not None) + (self.python is not None)
        if kinds != 1:
            raise ValueError("an Actor is exactly one of a built-in id, a compiled function or a Python object")
        if self.builtin_id >= 0 and self.builtin_id not in BUILTIN_POLICIES:
            raise ValueError(f"unknown built-in policy id {self.builtin_id} (built-in ids {list(BUILTIN_POLICIES)})")
        if self.python is not None and not callable(getattr(self.python, "act", None)):
            raise ValueError(f"{self.python!r} has no act(observation, legal_actions) method")
        if self.blind and self.python is None:
            raise ValueError("only a Python object's Actor may be blind")


def has_python_policy(specs: Sequence[PolicySpec]) -> bool:
    """Whether a run's policies include a Python-tier one (then its deals are played here)."""
    return any(is_python_policy(spec) for spec in specs)


def actors_for(specs: Sequence[PolicySpec]) -> list[Actor]:
    """The actors of a run's three policies: Python-tier ones made from their specs
    (:func:`simkit.policies.registry.python_policy_object`), the others as the batch kernels
    would call them."""
    compiled = [spec if not is_python_policy(spec) else PolicySpec("random") for spec in specs]
    ids, params, user = policy_arrays(compiled)
    actors = []
    for k, spec in enumerate(specs):
        if is_python_policy(spec):
            actors.append(Actor(python=python_policy_object(spec)))
        elif ids[k] >= USER_SLOT_BASE:
            actors.append(Actor(function=user[int(ids[k]) - USER_SLOT_BASE], params=params[k].copy()))
        else:
            actors.append(Actor(builtin_id=int(ids[k]), params=params[k].copy()))
    return actors


def _python_rng(seed: int, deal: int, seat: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), int(deal), int(seat), 0x5E])


def _policy_raised(seed: int, deal: int, seated: Sequence[str], p: int, method: str, exc: Exception) -> DealError:
    """The one-line error of a Python policy (seat ``p``) whose ``act`` or ``new_deal`` raised ``exc``."""
    why = f"seat {p} ({seated[p]}) raised {type(exc).__name__}: {exc} in {method}"
    return DealError(deal_error_text(seed, deal, seated, why))


def play_one(seed: int, root: np.ndarray, deal: int, dealer: int, seat_actors: Sequence[Actor],
             rules: np.ndarray, scratch: tuple, result: np.ndarray, seated: Sequence[str],
             on_draw: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None] | None = None) -> None:
    """Play one deal on ``scratch`` (:func:`simkit.runner.play.new_scratch`, reused from deal to
    deal).  An exception of a Python policy is a one-line :class:`DealError` naming the deal,
    the policies by seat (``seated``) and the exception, which it chains (``--debug``).
    ``on_draw(s, rules, mask, work)``, if given, is called before each stock draw with the
    engine paused there (:data:`simkit.engine.kernel.CHANCE_PAUSE`; it must leave ``s`` as it
    found it): the luck of the draws (:func:`simkit.runner.luck.luck_rows`) for runs the batch
    kernels cannot play."""
    s, deck, rngs, mask, obs, work, pwork, ev, ev_n, _, _ = scratch
    obs[O_NHIST] = O_NHIST_UNKNOWN  # a new deal in the reused observation array
    deal_deck(root, deal, rngs[DECK_RNG], deck)
    for p in range(N_SEATS):
        stream_state(root, deal, seat_stream(p), rngs[p])
        actor = seat_actors[p]
        if actor.python is not None and callable(getattr(actor.python, "new_deal", None)):
            try:
                actor.python.new_deal(_python_rng(seed, deal, p))
            except Exception as exc:  # noqa: BLE001 - the user's code: any exception, said in one line
                raise _policy_raised(seed, deal, seated, p, "new_deal", exc) from exc
    act_state = act_state_for([a.builtin_id for a in seat_actors if a.builtin_id >= 0])  # compiles only these
    work[E.EW_CHANCE] = E.CHANCE_OFF if on_draw is None else E.CHANCE_PAUSE
    E.start(s, deck, dealer, rules, mask, work, ev, ev_n)
    error = 0
    decisions = 0
    while s[S_PHASE] != PH_OVER:
        if s[S_PHASE] == PH_DRAW and on_draw is not None:  # paused before a draw
            on_draw(s, rules, mask, work)
            E.advance(s, rules, mask, work, ev, ev_n)
            continue
        if decisions == MAX_DECISIONS:
            break
        decisions += 1
        p = int(s[S_PLAYER])
        actor = seat_actors[p]
        if actor.builtin_id >= 0:
            action = int(act_state(actor.builtin_id, s, obs, mask, actor.params, rngs[p], rules, pwork))
            if action == NO_SUCH_POLICY:
                error = ERR_UNKNOWN_POLICY + ERR_SEAT * p
                break
        elif actor.blind:  # no observation (E.observe builds on any earlier one of the deal: none is missed)
            legal = [int(a) for a in np.flatnonzero(mask)]
            try:
                action = actor.python.act(None, legal)
            except Exception as exc:  # noqa: BLE001 - as below
                raise _policy_raised(seed, deal, seated, p, "act", exc) from exc
            action = int(action) if isinstance(action, (int, np.integer)) else -1
        else:
            E.observe(s, p, obs)
            if actor.function is not None:
                action = int(actor.function(obs, mask, actor.params, rngs[p], rules, pwork))
            else:
                legal = [int(a) for a in np.flatnonzero(mask)]
                try:
                    action = actor.python.act(Observation.from_array(obs), legal)
                except Exception as exc:  # noqa: BLE001 - the user's code: any exception, said in one line
                    raise _policy_raised(seed, deal, seated, p, "act", exc) from exc
                action = int(action) if isinstance(action, (int, np.integer)) else -1
        if action < 0 or action >= N_ACTIONS or not mask[action]:
            error = ERR_ILLEGAL_ACTION + ERR_SEAT * p
            break
        E.apply_legal(s, action, rules, mask, work, ev, ev_n)
    work[E.EW_CHANCE] = E.CHANCE_OFF
    if error == 0 and s[S_PHASE] != PH_OVER:
        error = ERR_MAX_DECISIONS + ERR_SEAT * int(s[S_PLAYER])
    record_result(s, deck, result)
    result[R_ERROR] = error


def actor_label(actor: Actor) -> str:
    """A name of an actor for messages: its built-in policy, function or class."""
    if actor.builtin_id >= 0:
        return builtin_policy_name(actor.builtin_id) or f"id {actor.builtin_id}"
    if actor.function is not None:
        return getattr(getattr(actor.function, "py_func", actor.function), "__name__", "user policy")
    return type(actor.python).__name__


def play_deals_python(n_deals: int, seed: int, actors: Sequence[Actor], rules_array: np.ndarray, first_deal: int = 0,
                      dealer: int = 0, session_length: int = 1, seating: int = SEATING_FIXED, check: bool = True,
                      policies: Sequence[str] | None = None) -> np.ndarray:
    """Result rows of deals ``first_deal`` .. ``first_deal + n_deals - 1``, as
    :func:`simkit.runner.play.play_deals` gives them, with ``actors`` P0, P1, P2 (seat s plays
    P[PERMUTATIONS[j, s]] under seating j).  A deal that stops before its end is a one-line
    :class:`~simkit.engine.env.DealError` (``check``, ``policies``: as ``play_deals``), and so is
    an exception raised by a Python policy's ``act`` or ``new_deal`` (whatever ``check``; the
    policy's exception is its ``__cause__``)."""
    if len(actors) != N_SEATS:
        raise ValueError(f"a run needs three actors, got {len(actors)}")
    session_length = int(session_length)
    if session_length < 1 or first_deal % session_length:
        raise ValueError(f"first_deal {first_deal} does not start a session of {session_length} deals")
    per_deal = rows_per_deal(int(seating))
    results = np.zeros((n_deals * per_deal, N_RESULT), dtype=np.int64)
    root = root_key(seed)
    rules = np.asarray(rules_array, dtype=np.int64)
    scratch = new_scratch()
    labels = [actor_label(a) for a in actors] if policies is None else [str(p) for p in policies]
    for j in range(per_deal):
        current = dealer
        for i in range(n_deals):
            deal = first_deal + i
            if session_length > 1:
                current = dealer if i % session_length == 0 else int(
                    next_dealer(results[(i - 1) * per_deal + j], current, rules))
            index = int(seating_index(int(seating), deal, j if int(seating) == SEATING_ALL else 0, session_length))
            seat_actors = [actors[int(PERMUTATIONS[index, q])] for q in range(N_SEATS)]
            seated = [labels[int(PERMUTATIONS[index, q])] for q in range(N_SEATS)]
            play_one(seed, root, deal, current, seat_actors, rules, scratch, results[i * per_deal + j], seated)
    if check:
        check_rows(results, seed, labels, first_deal, int(seating), session_length)
    return results

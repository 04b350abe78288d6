"""The decision loop: ask a policy dispatcher for the player to act, apply its action, until the
deal ends, pauses before a draw, or reaches a turn — the one compiled "play this state on" of
every deal, play-out, rollout and search in simkit.

The engine never sees a policy: the loop is given one, a jitted dispatcher ``act`` passed as an
argument (:class:`~simkit.jit.static_function`), called as
``act(policy_id, s, obs, mask, params, rng, rules, pwork)`` for the player to act in state ``s``
(``s[S_PLAYER]``, which the dispatcher reads).
So the runner's deal kernels (:mod:`simkit.runner.play`), its play-outs and rollouts, self-play
(:mod:`simkit.learn.selfplay`) and the ``mc`` policy's own rollouts (:mod:`simkit.policies.mc`)
all play through :func:`decide_until`, each with the dispatcher of the policies it plays.

Arguments come grouped (two named tuples, one kernel argument each): :class:`Table` (who plays,
by which rules) and :class:`InPlay` (the state in play and its scratch).  A stop is a code
``ERR_* + ERR_SEAT * seat`` (the seat to act), the ``R_ERROR`` of a deal's result row.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from simkit.engine import kernel as E
from simkit.engine.env import MAX_DECISIONS
from simkit.engine.layout import N_ACTIONS, PH_DRAW, PH_OVER, S_PHASE, S_PLAYER, S_TURNS

NO_SUCH_POLICY = -2  # what a dispatcher returns for a policy id it does not know (the loop flags it)

# ---- why a loop stopped before the deal's end (a deal's R_ERROR: code + ERR_SEAT * seat; never a
# recorded result: the runner's check_rows raises DealError for it)
ERR_ILLEGAL_ACTION = 1  # a policy returned an illegal action (seat 0: R_ERROR 1, as before codes)
ERR_MAX_DECISIONS = 2  # the deal did not end within MAX_DECISIONS decisions
ERR_UNKNOWN_POLICY = 3  # a seat's policy id is none the dispatcher knows
ERR_SEAT = 4  # R_ERROR = code + ERR_SEAT * seat


class Table(NamedTuple):
    """Who plays a deal, and by which rules (one kernel argument): seat p plays policy
    ``policy_ids[p]`` with the parameter row ``params[seat_of[p]]``; ``rules`` the rule array."""

    policy_ids: np.ndarray
    params: np.ndarray
    seat_of: np.ndarray
    rules: np.ndarray


class InPlay(NamedTuple):
    """A deal in play (one kernel argument): its state, the random streams (``rngs[p]`` drives
    seat p's policy), the legal mask, the acting player's observation, the engine's and the
    policies' workspaces, and the event log with its count."""

    s: np.ndarray
    rngs: np.ndarray
    mask: np.ndarray
    obs: np.ndarray
    work: np.ndarray
    pwork: np.ndarray
    ev: np.ndarray
    ev_n: np.ndarray


@njit(nogil=True, inline="always")
def checked(action, legal, p):
    """A dispatcher's answer ``action`` for player p (``legal``: whether the engine allows it),
    checked: the action (>= 0), or ``-1 - code`` with the code (``ERR_* + ERR_SEAT * p``) that
    stops the deal.  Scalars only: the loops read :class:`Table` and :class:`InPlay` once, not at
    every decision (each read of a named tuple's field, or an array handed to a helper, takes a
    reference to it, which costs the cheapest policies a fifth of their speed when done per
    decision)."""
    if action == NO_SUCH_POLICY:
        return -1 - (ERR_UNKNOWN_POLICY + ERR_SEAT * p)
    if not legal:
        return -1 - (ERR_ILLEGAL_ACTION + ERR_SEAT * p)
    return action


@njit(nogil=True, inline="always")
def choose(act, table, play):
    """The action of the player to act in ``play.s``, asked of the dispatcher ``act`` and
    checked (nothing applied): the action (>= 0), or ``-1 - code`` with the code
    (``ERR_* + ERR_SEAT * seat``) that stops the deal.  The engine left the decision's legal
    mask in ``play.mask``; the dispatcher fills ``play.obs`` for the policies that read it."""
    policy_ids, params, seat_of, rules = table
    s, rngs, mask, obs, _, pwork, _, _ = play
    p = s[S_PLAYER]
    action = act(policy_ids[p], s, obs, mask, params[seat_of[p]], rngs[p], rules, pwork)
    return checked(action, 0 <= action < N_ACTIONS and mask[action], p)


def turn_reached(s, last_turn):
    """Whether state ``s`` has reached turn ``last_turn`` (``s[S_TURNS]``); never when
    ``last_turn`` is None, a test compiled away (the unlimited loop of every deal pays nothing
    for the limit a rollout may have)."""
    return last_turn is not None and s[S_TURNS] >= last_turn


@overload(turn_reached, inline="always")
def _turn_reached_overload(s, last_turn):
    if isinstance(last_turn, (types.NoneType, types.Omitted)):
        return lambda s, last_turn: False
    return lambda s, last_turn: s[S_TURNS] >= last_turn


@njit(nogil=True, inline="always")
def decide_until(act, table, play, decisions, last_turn):
    """Ask for decisions (:func:`choose`'s, each applied) until the deal ends, the engine pauses before a draw
    (phase PH_DRAW, ``work[EW_CHANCE]`` CHANCE_PAUSE) or the state reaches turn ``last_turn``
    (``s[S_TURNS]``; None: no limit), :data:`MAX_DECISIONS` in all with the
    ``decisions`` already made; ``(error, decisions)``: 0 or the code that stopped the deal
    (``ERR_MAX_DECISIONS`` at the cap), and the decisions made so far."""
    error = 0
    policy_ids, params, seat_of, rules = table  # once: see checked
    s, rngs, mask, obs, work, pwork, ev, ev_n = play
    while s[S_PHASE] != PH_OVER and s[S_PHASE] != PH_DRAW and not turn_reached(s, last_turn):
        if decisions == MAX_DECISIONS:
            error = ERR_MAX_DECISIONS + ERR_SEAT * s[S_PLAYER]
            break
        decisions += 1
        p = s[S_PLAYER]  # as choose, on the arrays read once
        action = act(policy_ids[p], s, obs, mask, params[seat_of[p]], rngs[p], rules, pwork)
        action = checked(action, 0 <= action < N_ACTIONS and mask[action], p)
        if action < 0:
            error = -1 - action
            break
        E.apply_legal(s, action, rules, mask, work, ev, ev_n)
    return error, decisions


@njit(nogil=True, inline="always")
def decide_until_chance(act, table, play, decisions):
    """:func:`decide_until` with no last turn: until the deal ends or pauses before a draw."""
    return decide_until(act, table, play, decisions, None)

"""Dispatch to a built-in policy by id (the cached policy switches of the batch kernels).

:func:`builtin_act_state` reaches every built-in policy; :func:`basic_act_state` only
:data:`BASIC_POLICIES` (random, greedy, patient), so that the deal kernels of a run without
mc or expert (the README's demo, most simulations) need not compile those two, about half of
the compile time of a cold ``simkit demo``.  Both call the same policy functions: a deal gives
the same bytes whichever switch plays it (tests/test_compile.py)."""

from __future__ import annotations

from numba import njit

from simkit.engine import kernel as E
from simkit.engine.layout import S_PLAYER
from simkit.engine.loop import NO_SUCH_POLICY
from simkit.policies.builtin import (
    P_EXPERT,
    P_GREEDY,
    P_LEARNED,
    P_MC,
    P_PATIENT,
    P_RANDOM,
    greedy_like,
    greedy_state,
    random_act,
)
from simkit.policies.expert import expert_act, expert_state
from simkit.policies.learned import learned_act
from simkit.policies.mc import mc_act


BUILTIN_POLICIES = (P_RANDOM, P_GREEDY, P_PATIENT, P_MC, P_EXPERT, P_LEARNED)  # the ids builtin_act_state plays


@njit(cache=True, nogil=True, inline="always")
def builtin_act(policy_id, obs, mask, params, rng, rules, work):
    """Run built-in policy ``policy_id`` (``P_*`` of :mod:`simkit.policies.builtin`)."""
    if policy_id == P_RANDOM:
        return random_act(mask, rng)
    if policy_id == P_PATIENT:
        return greedy_like(obs, mask, params, rules, work, True)
    if policy_id == P_MC:
        return mc_act(obs, mask, params, rng, rules, work)
    if policy_id == P_EXPERT:
        return expert_act(obs, mask, params, rules, work)
    if policy_id == P_GREEDY:
        return greedy_like(obs, mask, params, rules, work, False)
    if policy_id == P_LEARNED:
        return learned_act(obs, mask, params, rules, work)
    return NO_SUCH_POLICY


@njit(cache=True, nogil=True, inline="always")
def builtin_act_state(policy_id, s, obs, mask, params, rng, rules, work):
    """:func:`builtin_act` for the player p to act in state ``s`` (``s[S_PLAYER]``), the same
    choices: ``random`` needs no observation, ``greedy`` / ``patient`` / ``expert`` read p's own
    view from the state, and ``mc`` and ``learned`` get the observation, filled into ``obs`` here.
    An unknown id returns :data:`NO_SUCH_POLICY` (never a policy's choice: the deal loops stop
    the deal and flag it)."""
    p = s[S_PLAYER]
    if policy_id == P_RANDOM:
        return random_act(mask, rng)
    if policy_id == P_PATIENT:
        return greedy_state(s, p, mask, params, rules, work, True)
    if policy_id == P_MC:
        E.observe(s, p, obs)
        return mc_act(obs, mask, params, rng, rules, work)
    if policy_id == P_EXPERT:
        return expert_state(s, p, mask, params, rules, work)
    if policy_id == P_GREEDY:
        return greedy_state(s, p, mask, params, rules, work, False)
    if policy_id == P_LEARNED:
        E.observe(s, p, obs)
        return learned_act(obs, mask, params, rules, work)
    return NO_SUCH_POLICY


BASIC_POLICIES = (P_RANDOM, P_GREEDY, P_PATIENT)


@njit(cache=True, nogil=True, inline="always")
def basic_act_state(policy_id, s, obs, mask, params, rng, rules, work):
    """:func:`builtin_act_state` for the :data:`BASIC_POLICIES` only (any other id returns
    :data:`NO_SUCH_POLICY`): the same choices, without compiling mc and expert."""
    p = s[S_PLAYER]
    if policy_id == P_RANDOM:
        return random_act(mask, rng)
    if policy_id == P_PATIENT:
        return greedy_state(s, p, mask, params, rules, work, True)
    if policy_id == P_GREEDY:
        return greedy_state(s, p, mask, params, rules, work, False)
    return NO_SUCH_POLICY


@njit(cache=True, nogil=True, inline="always")
def expert_act_state(policy_id, s, obs, mask, params, rng, rules, work):
    """:func:`builtin_act_state` for ``expert`` only (any other id returns :data:`NO_SUCH_POLICY`):
    the same choices, compiling expert alone (``simkit play``'s default bots, the default policy
    of a hint, ``analyze`` and ``review``)."""
    p = s[S_PLAYER]
    if policy_id == P_EXPERT:
        return expert_state(s, p, mask, params, rules, work)
    return NO_SUCH_POLICY


FAST_POLICIES = BASIC_POLICIES + (P_EXPERT,)  # the fast bots: a rollout policy's usual choice


@njit(cache=True, nogil=True, inline="always")
def fast_act_state(policy_id, s, obs, mask, params, rng, rules, work):
    """:func:`builtin_act_state` for the :data:`FAST_POLICIES` only (any other id returns
    :data:`NO_SUCH_POLICY`): the same choices, without compiling mc and learned."""
    p = s[S_PLAYER]
    if policy_id == P_EXPERT:
        return expert_state(s, p, mask, params, rules, work)
    return basic_act_state(policy_id, s, obs, mask, params, rng, rules, work)


def uses_fast_policies(policy_ids) -> bool:
    """Whether every id is one of :data:`FAST_POLICIES` (then :func:`fast_act_state` serves)."""
    return all(int(i) in FAST_POLICIES for i in policy_ids)


def uses_basic_policies(policy_ids) -> bool:
    """Whether every id is one of :data:`BASIC_POLICIES` (then :func:`basic_act_state` serves)."""
    return all(int(i) in BASIC_POLICIES for i in policy_ids)


def uses_expert_only(policy_ids) -> bool:
    """Whether every id is ``expert``'s (then :func:`expert_act_state` serves)."""
    return all(int(i) == P_EXPERT for i in policy_ids)


def act_state_for(policy_ids):
    """The narrowest switch that plays every id of ``policy_ids`` (:func:`basic_act_state`,
    :func:`expert_act_state`, :func:`fast_act_state`, else :func:`builtin_act_state`): the one
    to call from Python, which compiles only the policies it reaches (``simkit play`` with
    expert bots: expert alone, where mc and learned were three quarters of
    :func:`builtin_act_state`'s compile time).  The same choices whichever serves."""
    if uses_basic_policies(policy_ids):
        return basic_act_state
    if uses_expert_only(policy_ids):
        return expert_act_state
    if uses_fast_policies(policy_ids):
        return fast_act_state
    return builtin_act_state

"""Dispatch to a built-in policy by id (the cached policy switch of the batch kernels)."""

from __future__ import annotations

from numba import njit

from simkit.engine import kernel as E
from simkit.policies.builtin import P_EXPERT, P_MC, P_PATIENT, P_RANDOM, greedy_like, greedy_state, random_act
from simkit.policies.expert import expert_act, expert_state
from simkit.policies.mc import mc_act


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
    return greedy_like(obs, mask, params, rules, work, False)


@njit(cache=True, nogil=True, inline="always")
def builtin_act_state(policy_id, s, p, obs, mask, params, rng, rules, work):
    """:func:`builtin_act` for player p of state ``s``, the same choices: ``random`` needs no
    observation, ``greedy`` / ``patient`` / ``expert`` read p's own view from the state, and only ``mc``
    gets the observation, filled into ``obs`` here."""
    if policy_id == P_RANDOM:
        return random_act(mask, rng)
    if policy_id == P_PATIENT:
        return greedy_state(s, p, mask, params, rules, work, True)
    if policy_id == P_MC:
        E.observe(s, p, obs)
        return mc_act(obs, mask, params, rng, rules, work)
    if policy_id == P_EXPERT:
        return expert_state(s, p, mask, params, rules, work)
    return greedy_state(s, p, mask, params, rules, work, False)

"""simkit.jit.hot_kernel: kernels compiled without numba's reference counting, and the
plain-njit fallback where numba does not take the option."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import simkit.jit as jit
from simkit.engine import kernel as E
from simkit.engine.layout import N_ACTIONS, N_OBS, N_STATE, PH_OVER, S_PHASE, S_PLAYER
from simkit.evaluator import kernel as K
from simkit.policies import builtin as B
from simkit.rules import RuleSet


def _sum_parts(a, n):
    total = 0
    for i in range(n):
        part = a[i : i + 2]  # a view: reference counted unless compiled without it
        total += part[0] * part[-1]
    return total


def test_hot_kernel_has_no_reference_counting():
    kernel = jit.hot_kernel(_sum_parts)
    a = np.arange(10, dtype=np.int64)
    assert kernel(a, 5) == _sum_parts(a, 5)
    if not jit.NRT_OPTION_SUPPORTED:
        pytest.skip("this numba does not take _nrt")
    assert kernel.targetoptions["_nrt"] is False
    ir = "\n".join(kernel.inspect_llvm().values())
    assert "NRT_incref" not in ir and "NRT_decref" not in ir


def test_options_are_kept():
    kernel = jit.hot_kernel(nogil=True, boundscheck=False)(_sum_parts)
    assert kernel.targetoptions["nogil"] is True
    assert kernel(np.arange(4, dtype=np.int64), 2) == _sum_parts(np.arange(4, dtype=np.int64), 2)


def test_probe_agrees_with_numba():
    assert jit._nrt_option_supported() == jit.NRT_OPTION_SUPPORTED


def test_probe_falls_back_when_numba_rejects_the_option(monkeypatch):
    """A numba without ``_nrt`` rejects it when it first compiles (KeyError: Unrecognized
    options); the probe sees that up front and hot_kernel is then a plain njit."""
    from numba.core.registry import cpu_target

    def reject(flags, options):
        raise KeyError(f"Unrecognized options: {set(options)}. Known options are ...")

    monkeypatch.setattr(cpu_target.options, "parse_as_flags", reject)
    assert jit._nrt_option_supported() is False
    monkeypatch.undo()

    monkeypatch.setattr(jit, "NRT_OPTION_SUPPORTED", False)
    kernel = jit.hot_kernel(cache=False, nogil=True)(_sum_parts)
    assert "_nrt" not in kernel.targetoptions and kernel.targetoptions["nogil"] is True
    a = np.arange(10, dtype=np.int64)
    assert kernel(a, 5) == _sum_parts(a, 5)
    bare = jit.hot_kernel(_sum_parts)
    assert "_nrt" not in bare.targetoptions and bare(a, 3) == _sum_parts(a, 3)


@pytest.mark.skipif(not jit.NRT_OPTION_SUPPORTED, reason="this numba does not take _nrt")
def test_numba_refuses_a_broken_contract():
    """Allocating, or returning an array that is not an argument (also through a counted
    kernel it calls), is a typing error under hot_kernel, not a leak."""
    from numba import njit
    from numba.core.errors import TypingError

    @njit
    def counted_view(a):
        return a[1:]

    @njit
    def counted_new(n):
        return np.zeros(n)

    def allocates(n):
        return np.zeros(n)[0]

    def returns_view(a):
        return a[1:]

    def calls_view(a):
        return counted_view(a)[0]

    def calls_new(n):
        return counted_new(n)[0]

    a = np.arange(4, dtype=np.int64)
    for function, arg in ((allocates, 3), (returns_view, a), (calls_view, a), (calls_new, 3)):
        with pytest.raises(TypingError):
            jit.hot_kernel(function)(arg)
    assert jit.hot_kernel(lambda x: x)(a) is not None  # an argument may be returned


def test_simkit_hot_kernels_use_it():
    for kernel in (K.evaluate_kernel, K.part_idle, B._greedy_core, B.best_discard, E.apply_legal, E.legal_mask,
                   E.observe):
        assert kernel.targetoptions.get("_nrt", True) is (not jit.NRT_OPTION_SUPPORTED)


def test_engine_and_policy_kernels_keep_no_reference():
    """Called from Python on arrays Python owns (non-null ``meminfo``, unlike the borrowed
    views of the batch kernels), a kernel that took a reference and never released it would
    leave the array's reference count higher after every call: a deal played decision by
    decision (engine, observation, greedy and patient) leaves them as they were."""
    from simkit.deck import deal_deck
    from simkit.rng import root_key

    rules = RuleSet().to_array()
    s = np.zeros(N_STATE, dtype=np.int64)
    deck = np.zeros(112, dtype=np.int64)
    rng = np.zeros(4, dtype=np.uint64)
    mask = np.zeros(N_ACTIONS, dtype=np.bool_)
    obs = np.zeros(N_OBS, dtype=np.int64)
    work = E.new_engine_workspace()
    pwork = np.zeros(B.POLICY_WORK_SIZE, dtype=np.int64)
    params = np.zeros(3, dtype=np.float64)
    ev = np.zeros((0, 6), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    arrays = (s, deck, rng, mask, obs, work, pwork, params, rules, ev, ev_n)
    deal_deck(root_key(5), 3, rng, deck)
    before = [sys.getrefcount(a) for a in arrays]
    E.start(s, deck, 0, rules, mask, work, ev, ev_n)
    decisions = 0
    while s[S_PHASE] != PH_OVER and decisions < 2000:
        p = s[S_PLAYER]
        E.observe(s, p, obs)
        action = B.greedy_state(s, p, mask, params, rules, pwork, decisions % 2 == 1)
        assert E.legal_mask(s, rules, mask, work) > 0 and mask[action]
        E.apply_legal(s, action, rules, mask, work, ev, ev_n)
        decisions += 1
    assert decisions > 10
    assert [sys.getrefcount(a) for a in arrays] == before

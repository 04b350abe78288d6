"""The duplicate comparison's specs: :class:`DuplicateSpec` (the deals a comparison folder holds,
:func:`simkit.runner.duplicate.run_duplicate`) and :class:`CompareSpec` (a comparison of two
policies, :func:`simkit.studies.compare.compare`: those deals, and how they are tested and
adjusted).

A comparison folder's identity (``comparison.json``, kind ``simkit.duplicate``) is the
duplicate deals' only: the two policies with every parameter, the seed, the deals, the batch
size, the rules, the six seatings and the design.  How the deals are read — a sequential test
(``sprt``, ``burn_in``: it reads a prefix of them), a value model's luck (kept in a file of its
own per model), the adjustment, the confidence level — is not part of it.

>>> spec = CompareSpec("greedy", "random", deals=200, seed=1, batch_size=100)
>>> identity = spec.identity()
>>> identity["kind"], identity["seed"], identity["deals"], identity["seatings"], identity["design"]
('simkit.duplicate', 1, 200, ['ABB', 'BAB', 'BBA', 'AAB', 'ABA', 'BAA'], 'six')
>>> CompareSpec("greedy", "random", luck="m.npz").variance_reduction
'luck'
>>> CompareSpec("greedy", "random", variance_reduction="luck").luck
True
>>> CompareSpec("greedy", "random", design="pairs", luck=True)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.errors.SimkitError: design 'pairs' plays each pair of seatings on deals of its own, and a value model (luck) ...
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any

from simkit.defaults import (DEFAULT_COMPARE_DEALS, DEFAULT_DUPLICATE_DESIGN, DEFAULT_VARIANCE_REDUCTION,
                             DUPLICATE_DESIGNS, VARIANCE_REDUCTION_METHODS)
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec
from simkit.rules import RuleSet
from simkit.specs.base import RunSpec, as_policy, as_rules, check_choice, check_float, check_int, field, \
    check_positive_int, to_json_value

SEATINGS: tuple[str, ...] = ("ABB", "BAB", "BBA", "AAB", "ABA", "BAA")  # the six seatings with A and B present
DUPLICATE_KIND = "simkit.duplicate"  # a comparison folder's identity's "kind"
DEFAULT_COMPARE_BATCH_SIZE = 2_000


@dataclasses.dataclass(frozen=True)
class DuplicateSpec(RunSpec):
    """The duplicate deals of A and B: deals 0 .. ``deals`` - 1 of ``seed`` under the six
    seatings (``design`` ``pairs``: each complementary pair of seatings on deals of its own
    seed), played under ``rules`` in batches of ``batch_size`` (each seating a resumable
    dataset).  Its identity is what ``comparison.json`` holds (:meth:`identity`)."""

    KIND = "comparison"

    policy_a: str | PolicySpec
    policy_b: str | PolicySpec
    deals: int = DEFAULT_COMPARE_DEALS
    seed: int = 0
    rules: RuleSet | dict | None = None
    batch_size: int = DEFAULT_COMPARE_BATCH_SIZE
    design: str = DEFAULT_DUPLICATE_DESIGN

    def check(self) -> None:
        self._set("policy_a", as_policy(self.policy_a, "policy_a"))
        self._set("policy_b", as_policy(self.policy_b, "policy_b"))
        self._set("rules", as_rules(self.rules))
        check_positive_int(self, "deals")
        check_int(self, "seed", 0)
        check_positive_int(self, "batch_size")
        check_choice(self, "design", DUPLICATE_DESIGNS)

    def identity(self) -> dict[str, Any]:
        """``comparison.json``'s identity, the fields in the order (and forms) every version
        wrote them; a folder written before designs holds no ``design`` (it implies ``six``:
        :data:`simkit.runner.duplicate.IMPLIED`)."""
        return {"kind": DUPLICATE_KIND, "policy_a": to_json_value(self.policy_a),
                "policy_b": to_json_value(self.policy_b), "seed": self.seed, "deals": self.deals,
                "batch_size": self.batch_size, "rules": to_json_value(self.rules), "seatings": list(SEATINGS),
                "design": self.design}


@dataclasses.dataclass(frozen=True)
class CompareSpec(DuplicateSpec):
    """A duplicate comparison of A with B (:func:`simkit.studies.compare.compare`): its deals
    (:class:`DuplicateSpec`, 2 or more) and how they are read.

    ``sprt=(delta, alpha, beta)``: sequentially, batch by batch, until the test decides or
    ``deals`` are used up (no decision before ``burn_in`` deals; None:
    :func:`simkit.analysis.sequential.default_burn_in` of delta).  ``luck``: a value model for
    the luck-adjusted estimate (True: the shipped one; a model file, ``playouts:K`` or a
    :class:`~simkit.runner.value_model.ValueModel`).  ``variance_reduction``: the adjusted
    estimate beside plain duplicate's, one of :data:`~simkit.defaults.VARIANCE_REDUCTION_METHODS`
    (None: ``luck`` when ``luck`` is given, else ``none``; normalised here, with ``luck`` True
    for ``luck`` without a model).  ``confidence``: the level of every interval.  None of these
    is in the folder's identity."""

    sprt: tuple[float, float, float] | None = field(None, identity=False)
    confidence: float = field(0.95, identity=False)
    luck: Any = field(None, identity=False)  # bool | str | os.PathLike | ValueModel | None
    burn_in: int | None = field(None, identity=False)
    variance_reduction: str | None = field(None, identity=False)

    def check(self) -> None:
        super().check()
        check_int(self, "deals", 2)
        check_sprt(self)
        check_float(self, "confidence", 0.0, 1.0, open_lo=True, open_hi=True)
        check_int(self, "burn_in", 2, allow_none=True)
        check_luck(self)
        self._check_variance_reduction()

    def _check_variance_reduction(self) -> None:
        """Normalise ``variance_reduction`` (and ``luck`` with it) and refuse what does not go
        together: a value model with another method, ``regression`` with an SPRT, an adjustment
        with design ``pairs`` (one line each)."""
        with_luck = self.luck is not None
        method = self.variance_reduction
        if method is None:
            method = "luck" if with_luck else DEFAULT_VARIANCE_REDUCTION
            self._set("variance_reduction", method)
        check_choice(self, "variance_reduction", VARIANCE_REDUCTION_METHODS)
        check_design_adjustment(self.design, with_luck, method)
        if method == "luck":
            if not with_luck:
                self._set("luck", True)
            return
        if with_luck:
            raise SimkitError(f"a value model (luck) goes with variance_reduction 'luck', got {method!r}",
                              parameters=("luck", "variance_reduction"))
        if method == "regression" and self.sprt is not None:
            raise SimkitError("variance_reduction 'regression' fits on every deal of the comparison, so not with a "
                              "sequential test (sprt): use 'none' or 'luck'", parameters=("variance_reduction", "sprt"))

    @property
    def regression(self) -> bool:
        """Whether the regression-adjusted figures are given."""
        return self.variance_reduction == "regression"


def check_sprt(spec: RunSpec, name: str = "sprt") -> None:
    """Field ``name`` is None or ``(delta, alpha, beta)``: a finite nonzero delta (the effect
    of H1) and error rates 0 < alpha, beta < 1 with alpha + beta < 1 (Wald's bounds); kept as a
    tuple of floats."""
    value = getattr(spec, name)
    if value is None:
        return
    numbers = (isinstance(value, (tuple, list)) and len(value) == 3
               and all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in value))
    if numbers:
        delta, alpha, beta = (float(x) for x in value)
        numbers = delta != 0.0 and alpha > 0.0 and beta > 0.0 and alpha + beta < 1.0  # so each is < 1 too
    if not numbers:
        raise SimkitError(f"{name} must be (delta, alpha, beta): a finite nonzero delta and 0 < alpha, beta < 1 with "
                          f"alpha + beta < 1, got {value!r}", parameters=(name,))
    spec._set(name, (delta, alpha, beta))


def check_luck(spec: RunSpec, name: str = "luck") -> None:
    """Field ``name`` is a value model's source: None or False (none: kept as None), True (the
    shipped one), a model file's path or ``playouts:K`` (read when the run starts), or a loaded
    model."""
    value = getattr(spec, name)
    if value is False:
        spec._set(name, None)
        return
    if value is None or value is True or isinstance(value, os.PathLike) or (isinstance(value, str) and value):
        return
    if hasattr(value, "block") and hasattr(value, "digest"):  # a loaded ValueModel (simkit.runner.value_model)
        return
    raise SimkitError(f"{name} must be true, false, a value-model file's path or 'playouts:K', got {value!r}",
                      parameters=(name,))


def check_design_adjustment(design: str, with_luck: bool, method: str = "none") -> None:
    """No adjustment (a value model, or ``method`` other than ``none``) with design ``pairs``:
    it adjusts the six seatings of one deal."""
    if design == "pairs" and (with_luck or method != "none"):
        raise SimkitError(f"design 'pairs' plays each pair of seatings on deals of its own, and "
                          f"{'a value model (luck)' if with_luck else repr(method)} adjusts the six seatings "
                          "of one deal: use design 'six' for an adjusted comparison",
                          parameters=("design", "variance_reduction"))

"""The round-robin tournament's spec (:func:`simkit.studies.tournament.run_tournament`).

A tournament's folder identity (``tournament.json``, kind ``simkit.tournament``) holds the
policies with every parameter, the deals, the seed, the rules, the batch size, the sequential
test and the design; how the pairings are rated (confidence level, bootstrap resamples, the
Davidson ratings' virtual draws), a value model's luck and the burn-in are not part of it.

>>> spec = TournamentSpec(["greedy", "random"], deals=40, seed=1)
>>> identity = spec.identity()
>>> identity["kind"], identity["deals"], identity["sprt"], identity["design"]
('simkit.tournament', 40, None, 'six')
>>> spec.pairing(0, 1).policy_b.name, spec.pairing(0, 1).batch_size
('random', 1000)
>>> TournamentSpec(["greedy", "greedy"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.errors.SimkitError: a tournament's policies must differ, got greedy..., greedy...
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from simkit.defaults import DEFAULT_DUPLICATE_DESIGN, DUPLICATE_DESIGNS
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec
from simkit.rules import RuleSet
from simkit.specs.base import RunSpec, as_policy, as_rules, check_choice, check_float, check_int, field, \
    check_positive_int, policy_text
from simkit.specs.compare import CompareSpec, check_design_adjustment, check_luck, check_sprt

TOURNAMENT_KIND = "simkit.tournament"  # a tournament folder's identity's "kind"


@dataclasses.dataclass(frozen=True)
class TournamentSpec(RunSpec):
    """Every pairing of ``policies`` (2 or more, all different) on duplicate deals 0 ..
    ``deals`` - 1 of ``seed`` (each pairing a comparison, :meth:`pairing`), rated:
    ``prior_draws`` virtual ties per pairing of the Davidson ratings, ``resamples`` bootstrap
    draws of every rating, intervals at ``confidence``.  ``sprt``, ``burn_in``, ``luck`` and
    ``design``: every pairing's, as :class:`~simkit.specs.compare.CompareSpec`'s (the payoff
    ratings use the luck-adjusted differences with ``luck``; ``pairs`` plays each pair of
    seatings on deals of its own seed, the same seeds in every pairing; not with ``luck``)."""

    KIND = "tournament"

    policies: Sequence[str | PolicySpec]
    deals: int = 2_000
    seed: int = 0
    rules: RuleSet | dict | None = None
    batch_size: int = 1_000
    sprt: tuple[float, float, float] | None = None
    design: str = DEFAULT_DUPLICATE_DESIGN
    confidence: float = field(0.95, identity=False)
    resamples: int = field(2_000, identity=False)
    prior_draws: float = field(1.0, identity=False)
    luck: Any = field(None, identity=False)  # as CompareSpec.luck
    burn_in: int | None = field(None, identity=False)

    def check(self) -> None:
        if isinstance(self.policies, (str, PolicySpec)) or not isinstance(self.policies, Sequence):
            raise SimkitError(f"policies must be a list of policies, got {self.policies!r}", parameters=("policies",))
        self._set("policies", tuple(as_policy(p, "policies") for p in self.policies))
        if len(self.policies) < 2:
            raise SimkitError(f"a tournament needs 2 or more policies, got {len(self.policies)}")
        texts = [policy_text(p) for p in self.policies]
        if len(set(texts)) != len(texts):
            # (no parameters: the command line's policies are its arguments, not a --policies flag)
            raise SimkitError(f"a tournament's policies must differ, got {', '.join(texts)}")
        check_int(self, "deals", 2)
        check_int(self, "seed", 0)
        self._set("rules", as_rules(self.rules))
        check_positive_int(self, "batch_size")
        check_sprt(self)
        check_choice(self, "design", DUPLICATE_DESIGNS)
        check_float(self, "confidence", 0.0, 1.0, open_lo=True, open_hi=True)
        check_positive_int(self, "resamples")
        check_float(self, "prior_draws", 0.0)
        check_luck(self)
        check_int(self, "burn_in", 2, allow_none=True)
        check_design_adjustment(self.design, self.luck is not None)

    def identity(self) -> dict[str, Any]:
        """``tournament.json``'s identity: its kind, then the identity fields (the policies with
        every parameter, the SPRT as a list), as every version wrote them."""
        return {"kind": TOURNAMENT_KIND, **super().identity()}

    def pairing(self, i: int, j: int) -> CompareSpec:
        """The comparison of policies ``i`` and ``j`` (its folder: ``pair-I-J``)."""
        return CompareSpec(self.policies[i], self.policies[j], deals=self.deals, seed=self.seed, rules=self.rules,
                           batch_size=self.batch_size, design=self.design, sprt=self.sprt,
                           confidence=self.confidence, luck=self.luck, burn_in=self.burn_in)

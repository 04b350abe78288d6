"""The spec of a value model's training (``simkit luck-model``,
:func:`simkit.learn.value.train_value_model`): the seed, the deals it fits on and those that
choose the corrections' weight, the policy pairs and the network, each default declared here
(the deal counts in :mod:`simkit.defaults`, which the command line reads without numba).

Its identity (:meth:`LuckModelSpec.identity`) is what a value-model file has recorded of its
settings since the file's metadata began (``training``: ``seeds``, ``deals``, ``check_deals``,
``pairs`` by :func:`policy_identity`, ``hidden``, ``epochs``; and the file's ``rules``), so
the same spec writes the same bytes as an earlier version did.

>>> spec = LuckModelSpec(seed=11, deals=60, pairs=[("greedy", "random")], hidden=4)
>>> spec.identity()["pairs"], spec.identity()["seeds"]
([['greedy', 'random']], [11])
"""

from __future__ import annotations

import dataclasses
from typing import Any

from simkit.defaults import DEFAULT_LUCK_MODEL_CHECK_DEALS, DEFAULT_LUCK_MODEL_DEALS, MAX_HIDDEN_WIDTH
from simkit.errors import SimkitError
from simkit.policies.registry import LEARNED, PolicySpec, learned_model
from simkit.rules import RuleSet
from simkit.specs.base import RunSpec, as_policy, as_rules, check_int

DEFAULT_PAIRS: tuple[tuple[str, str], ...] = (("expert", "greedy"), ("greedy", "random"))


def policy_identity(spec: PolicySpec) -> str:
    """A policy as a value model records it: its text, except that a ``learned:PATH`` policy
    is named by its model file's SHA-256, not by where the file lies.

    >>> policy_identity(PolicySpec("patient", (3.0, 6.0)))
    'patient:3,6'
    """
    if not spec.name.startswith(LEARNED + ":"):
        return spec.text()
    model = learned_model(spec.name)
    params = spec.text()[len(spec.name) :]
    return f"{LEARNED}{params} (model sha256:{model.digest})"


def _pairs(pairs: Any) -> tuple[tuple[PolicySpec, PolicySpec], ...]:
    if isinstance(pairs, str) or not isinstance(pairs, (tuple, list)):
        raise SimkitError(f"pairs must be a sequence of policy pairs (A, B), got {pairs!r}", parameters=("pairs",))
    out = []
    for pair in pairs:
        if isinstance(pair, str) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise SimkitError(f"pairs: each pair must be two policies (A, B), got {pair!r}", parameters=("pairs",))
        out.append((as_policy(pair[0], "pairs"), as_policy(pair[1], "pairs")))
    if not out:
        raise SimkitError("a value model needs at least one policy pair", parameters=("pairs",))
    return tuple(out)


@dataclasses.dataclass(frozen=True)
class LuckModelSpec(RunSpec):
    """Fit a value model (one hidden layer of ``hidden`` units, ``epochs`` epochs) on ``deals``
    duplicate deals of ``seed`` for each policy pair of ``pairs``, and choose its weight on the
    next ``check_deals`` deals of that seed."""

    KIND = "luck-model"

    seed: int = 0
    deals: int = DEFAULT_LUCK_MODEL_DEALS
    check_deals: int = DEFAULT_LUCK_MODEL_CHECK_DEALS
    pairs: Any = DEFAULT_PAIRS
    hidden: int = 64
    epochs: int = 20
    rules: RuleSet | None = None

    def check(self) -> None:
        check_int(self, "seed", 0)
        check_int(self, "deals", 10)
        check_int(self, "check_deals", 10)
        check_int(self, "epochs", 1)
        check_int(self, "hidden", 1)
        if self.hidden > MAX_HIDDEN_WIDTH:  # before any deal: a wider network is no model file
            raise SimkitError(f"hidden must be at most {MAX_HIDDEN_WIDTH} (the widest layer a model file holds), "
                              f"got {self.hidden!r}", parameters=("hidden",))
        self._set("pairs", _pairs(self.pairs))
        self._set("rules", as_rules(self.rules))

    def identity(self) -> dict[str, Any]:
        """The settings a value-model file records: its ``training`` entries that the spec
        decides, and its ``rules``."""
        return {"seeds": [self.seed], "deals": self.deals, "check_deals": self.check_deals,
                "pairs": [[policy_identity(a), policy_identity(b)] for a, b in self.pairs], "hidden": self.hidden,
                "epochs": self.epochs, "rules": self.rules.to_dict()}

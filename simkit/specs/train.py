"""The spec of a training run (``simkit train``, :func:`simkit.learn.train.train`): the seed,
the generations, each generation's self-play, the network's fit and the strength check, each
default declared here.

Its identity (:meth:`TrainSpec.identity`) is what ``OUT/train.json`` has held since training
began (``kind`` ``simkit.train``, the seed, the rules, the generation's settings and the
feature count), so a training folder written by an earlier version resumes; the number of
generations is not in it (asked for more, a run continues).

>>> spec = TrainSpec(seed=3, deals=400, hidden=(8, 4))
>>> spec.identity()["settings"]["hidden"], spec.settings()["check_deals"]
([8, 4], 300)
>>> TrainSpec(hidden=(64, 16, 8))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.errors.SimkitError: hidden must be two layer widths in 1..256 (the widest layer a model file holds), ...
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from simkit.defaults import MAX_HIDDEN_WIDTH
from simkit.errors import SimkitError
from simkit.policies.learned import N_FEATURES
from simkit.rules import RuleSet
from simkit.specs.base import RunSpec, as_rules, check_float, check_int, field

VALIDATION_EVERY = 5  # deals whose number is a multiple of this are the validation set


@dataclasses.dataclass(frozen=True)
class TrainSpec(RunSpec):
    """Train ``generations`` generations on ``seed``: each self-plays ``deals`` new deals with
    rollouts at a share ``rate`` of the decisions, fits a network of ``hidden`` widths for
    ``epochs`` epochs (L2 penalty ``alpha``, minibatch ``batch_size``, step ``learning_rate``)
    and checks it against expert on ``check_deals`` duplicate deals."""

    KIND = "train"

    seed: int = 0
    generations: int = field(3, identity=False)
    deals: int = 20_000
    rate: float = 0.1
    hidden: tuple[int, int] = (64, 16)
    epochs: int = 3
    alpha: float = 1e-2
    batch_size: int = 1024
    learning_rate: float = 1e-3
    check_deals: int = 300
    rules: RuleSet | None = None

    def check(self) -> None:
        check_int(self, "seed", 0)
        check_int(self, "generations", 1)
        if not isinstance(self.deals, (int, np.integer)) or isinstance(self.deals, bool) \
                or self.deals < VALIDATION_EVERY:
            raise SimkitError(f"deals must be >= {VALIDATION_EVERY} per generation, got {self.deals}",
                              parameters=("deals",))
        self._set("deals", int(self.deals))
        check_float(self, "rate", 0.0, 1.0, open_lo=True)
        hidden = self.hidden
        if (not isinstance(hidden, (tuple, list)) or len(hidden) != 2
                or not all(isinstance(h, (int, np.integer)) and not isinstance(h, bool) for h in hidden)
                or not all(1 <= h <= MAX_HIDDEN_WIDTH for h in hidden)):
            raise SimkitError(f"hidden must be two layer widths in 1..{MAX_HIDDEN_WIDTH} (the widest layer a model "
                              f"file holds), got {hidden!r}", parameters=("hidden",))
        self._set("hidden", tuple(int(h) for h in hidden))
        check_int(self, "epochs", 1)
        check_float(self, "alpha", 0.0)
        check_int(self, "batch_size", 1)
        check_float(self, "learning_rate", 0.0, open_lo=True)
        check_int(self, "check_deals", 2)
        self._set("rules", as_rules(self.rules))

    def settings(self) -> dict[str, Any]:
        """A generation's settings as the identity and every model file record them."""
        return {"deals": self.deals, "rate": self.rate, "hidden": list(self.hidden), "epochs": self.epochs,
                "alpha": self.alpha, "batch_size": self.batch_size, "learning_rate": self.learning_rate,
                "check_deals": self.check_deals}

    def identity(self) -> dict[str, Any]:
        """What ``train.json`` holds."""
        return {"kind": "simkit.train", "seed": self.seed, "rules": self.rules.to_dict(), "settings": self.settings(),
                "features": N_FEATURES}

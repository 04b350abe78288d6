"""The spec of an analysis of a position (``simkit analyze``,
:func:`simkit.studies.analyze.analyze_position`): how every legal action is rolled out and
raced.  An analysis writes no folder; each field decides its result (the same for any number of
threads, :class:`~simkit.specs.base.Execution`).  A review analyses each decision with one
(:meth:`simkit.specs.review.ReviewSpec.analysis`), a hint at the table too.

>>> spec = AnalyzeSpec(rollouts=256, seed=3)
>>> spec.policy.name, spec.rollouts, spec.race, spec.confirm
('expert', 256, True, True)
>>> AnalyzeSpec(belief_noise=2)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
simkit.errors.SimkitError: belief_noise must be a finite number with 0.0 <= belief_noise <= 1.0, got 2
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from simkit.defaults import (
    DEFAULT_BATCH,
    DEFAULT_BELIEF_NOISE,
    DEFAULT_POLICY,
    DEFAULT_ROLLOUTS,
    DEFAULT_SHARPEN,
    DEFAULT_TOLERANCE,
)
from simkit.errors import SimkitError
from simkit.policies.registry import PolicySpec
from simkit.specs.base import RunSpec, as_policy, check_bool, check_float, check_int, check_positive_int


@dataclasses.dataclass(frozen=True, kw_only=True)
class RolloutSettings(RunSpec):
    """How a position's actions are rolled out, an analysis's and each of a review's decisions'
    (:mod:`simkit.studies.analyze`'s docstring says what each does):

    * ``policy``: the rollout policy at every seat; ``rollouts``: the most determinisations an
      action gets; ``seed``: what the determinisations are drawn from;
    * ``luck``: None / False (off), True (the shipped value model), a value-model file's path or a
      loaded :class:`~simkit.runner.value_model.ValueModel`;
    * ``batch``: determinisations per racing round; ``confidence``: the level of the intervals
      and of the race;
    * ``sharpen``: the opponent model's hill-climbing steps (0: uniform determinisations);
      ``belief``: 0, or that many draws of the hidden cards given the public history
      (``belief_noise``: the chance a seat plays any legal action instead of ``policy``'s)."""

    policy: str | PolicySpec = DEFAULT_POLICY
    rollouts: int = DEFAULT_ROLLOUTS
    seed: int = 0
    luck: Any = None
    batch: int = DEFAULT_BATCH
    confidence: float = 0.95
    sharpen: int = DEFAULT_SHARPEN
    belief: int = 0
    belief_noise: float = DEFAULT_BELIEF_NOISE

    def check(self) -> None:
        self._set("policy", as_policy(self.policy))
        check_positive_int(self, "rollouts")
        check_int(self, "seed", 0)
        check_luck(self)
        check_positive_int(self, "batch")
        check_confidence(self)
        check_int(self, "sharpen", 0)
        check_int(self, "belief", 0)
        check_float(self, "belief_noise", 0.0, 1.0)

    def rollout_settings(self) -> dict[str, Any]:
        """These settings by name (a review's, for each decision's analysis)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(RolloutSettings)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class AnalyzeSpec(RolloutSettings):
    """An analysis's settings: :class:`RolloutSettings`' and

    * ``race`` False: every action gets all ``rollouts``; ``tolerance`` (牌): an action surely
      within it of the best stops as equal;
    * ``actions``: the action ids analysed (None: every legal one);
    * ``first``: the analysis uses determinisations ``first .. first + rollouts - 1`` of
      ``seed`` (another range of the same seed is independent of it);
    * ``confirm``: every estimate measured again on fresh determinisations (no winner's curse).

    Its fields are given by name."""

    KIND = "analysis"

    race: bool = True
    actions: tuple[int, ...] | None = None
    tolerance: float = DEFAULT_TOLERANCE
    first: int = 0
    confirm: bool = True

    def check(self) -> None:
        super().check()
        check_bool(self, "race")
        self._set("actions", _action_ids(self.actions))
        check_float(self, "tolerance", 0.0)
        check_int(self, "first", 0)
        check_bool(self, "confirm")


def check_luck(spec: RunSpec) -> None:
    """Field ``luck``: None or False (off), True (the shipped value model), a value-model file's
    path (or ``playouts:K``), or a loaded value model (anything with ``block`` and ``describe``:
    this layer does not import the runner's :class:`~simkit.runner.value_model.ValueModel`)."""
    value = spec.luck
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, (str, os.PathLike)) and os.fspath(value) != "":
        return
    if hasattr(value, "block") and callable(getattr(value, "describe", None)):
        return
    raise SimkitError(f"luck must be true, false, a value-model file's path or a loaded value model, got {value!r}",
                      parameters=("luck",))


def check_confidence(spec: RunSpec) -> None:
    """Field ``confidence``: a level strictly between 0 and 1."""
    check_float(spec, "confidence", 0.0, 1.0, open_lo=True, open_hi=True)


def _action_ids(actions: Any) -> tuple[int, ...] | None:
    """``actions`` as a tuple of action ids (None: every legal action); whether each is legal in
    the position is the analysis's check."""
    if actions is None:
        return None
    if isinstance(actions, (str, bytes)) or not hasattr(actions, "__iter__"):
        raise SimkitError(f"actions must be a sequence of action ids, got {actions!r}", parameters=("actions",))
    ids = []
    for a in actions:
        if isinstance(a, bool) or not hasattr(a, "__index__"):
            raise SimkitError(f"actions must be a sequence of action ids, got {a!r} among them",
                              parameters=("actions",))
        ids.append(int(a.__index__()))
    return tuple(ids)
